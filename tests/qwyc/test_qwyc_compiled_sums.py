"""The compiled row-by-row loops of the fit return the same doubles as the array code they replace."""

from __future__ import annotations

import numpy as np
import pytest

from budget_extras.qwyc import _kernels as core
from budget_extras.qwyc import _scores


def _plan(rng: np.random.Generator, t: int, thr: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    order = rng.permutation(t)
    en = np.minimum(rng.normal(size=t) - 0.5, thr)
    ep = np.maximum(rng.normal(size=t) + 0.5, thr)
    en[rng.random(t) < 0.2] = -np.inf
    ep[rng.random(t) < 0.2] = np.inf
    return order, en, ep


@pytest.mark.parametrize("seed", range(40))
def test_conformal_critical_equals_the_critical_value_matrices(seed):
    """Critical shifts row by row equal critical_values + envelope_critical on the cumulative sums, bit for bit."""
    rng = np.random.default_rng(seed)
    n, t = int(rng.integers(0, 50)), int(rng.integers(1, 12))
    F = rng.normal(size=(n, t, 1))[:, :, 0] * (0.1 if seed % 2 else 1.0)
    if seed % 3 == 0:
        F = np.round(F, 1)  # ties with the thresholds and the decision threshold
    thr = 0.0 if seed % 4 else 0.3
    order, en, ep = _plan(rng, t, thr)
    scale = rng.random(t) + 0.1 if seed % 2 else rng.random((2, t)) + 0.1
    C = np.cumsum(F[:, order], axis=1)
    c, positive = core.critical_values(C, en, ep, scale, threshold=thr)
    want = core.envelope_critical(c, positive != (C[:, -1] > thr)[:, None])
    got = core.conformal_critical(F, order, en, ep, scale, threshold=thr)
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("seed", range(10))
def test_partial_sums_of_the_score_maps_equal_the_cumulative_sum(seed):
    """Full scores and the partial sums of the rows reaching each position are the cumulative sum's doubles."""
    rng = np.random.default_rng(seed)
    n, t = 200, 30
    F = rng.normal(size=(n, t))
    order, en, ep = _plan(rng, t, 0.0)
    C = np.cumsum(F[:, order], axis=1)
    assert _scores._plan_sums(F, order).tobytes() == C[:, -1].tobytes()
    reached = core.early_exit(F, order, en, ep).n_evaluated
    by_stop = np.argsort(-reached, kind="stable")
    reach_count = np.searchsorted(-reached[by_stop], -(np.arange(t) + 1), side="right")
    flat, start = _scores._reached_sums(F, order, by_stop, reach_count)
    for q in range(t):
        want = C[by_stop[: reach_count[q]], q]
        assert flat[start[q] : start[q + 1]].tobytes() == want.tobytes()
