"""The held-out loss of QWYC's conformal shift: the monotone envelope of the true disagreement.

Brute force: simulate the shifted plan on a grid of shifts and compare, row by row, the
real disagreement indicator with ``L_i(lambda) = 1{lambda < crit_i}``.
"""

from __future__ import annotations

import numpy as np
import pytest

from budget_extras.qwyc import _kernels as core
from budget_extras.qwyc import _multiclass as multi


def tied_outputs(seed: int, n: int, t: int) -> np.ndarray:
    """Boosting-like outputs on a grid of 1/4 (exact in binary): ties and partial sums exactly 0."""
    r = np.random.default_rng(seed)
    latent = r.normal(size=n)
    w = r.gamma(1.0, size=t)
    F = latent[:, None] * w[None, :] / w.sum() * 3 + r.normal(scale=0.3, size=(n, t))
    return np.round(F * 4) / 4


def grid_of(c: np.ndarray) -> np.ndarray:
    """Midpoints between the distinct finite critical values, plus both ends."""
    v = np.unique(c[np.isfinite(c)])
    return np.concatenate([[v[0] - 1.0], (v[:-1] + v[1:]) / 2, [v[-1] + 1.0]])


def running_max_from_right(W: np.ndarray) -> np.ndarray:
    """W: (n_rows, n_grid) indicators on an increasing grid; max over grid points >= each point."""
    return np.maximum.accumulate(W[:, ::-1], axis=1)[:, ::-1]


def binary_case(seed: int, negative_only: bool, margin: float, shape: str):
    F = tied_outputs(seed, 700, 9)
    A, B = F[:400], F[400:]
    order, en, ep = core.greedy_plan(A, alpha=0.01, costs=np.ones(9), negative_only=negative_only, margin=margin)
    if shape == "constant":
        sc = np.ones(9)
    elif shape == "residual_std":
        sc = core.residual_scale(A, order)
    elif shape == "extreme_spacing":
        sc = core.extreme_spacing(A, order, en, ep, k=5)  # one scale per side
    else:
        sc = core.active_residual_scale(A, order, en, ep)
    return B, order, en, ep, sc


def binary_wrong(B, order, en, ep, sc, lam):
    tr = core.early_exit(B, order, *core.shift_thresholds(en, ep, lam, sc))
    return tr.labels != (np.cumsum(B[:, order], axis=1)[:, -1] > 0)


@pytest.mark.parametrize("shape", ["constant", "residual_std", "active_residual_std", "extreme_spacing"])
@pytest.mark.parametrize("margin", [0.0, 0.25])
@pytest.mark.parametrize("negative_only", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_envelope_is_running_max_of_true_disagreement(seed, negative_only, margin, shape):
    B, order, en, ep, sc = binary_case(seed, negative_only, margin, shape)
    C = np.cumsum(B[:, order], axis=1)
    y = C[:, -1] > 0
    c, positive = core.critical_values(C, en, ep, sc)
    crit = core.envelope_critical(c, positive != y[:, None])
    mids = grid_of(c)
    W = np.stack([binary_wrong(B, order, en, ep, sc, lam) for lam in mids], axis=1)
    L = mids[None, :] < crit[:, None]
    assert np.all(L >= W)  # an upper bound of the real disagreement
    np.testing.assert_array_equal(L, running_max_from_right(W))  # and the smallest monotone one
    assert np.all(np.diff(L.astype(int), axis=1) <= 0)  # non-increasing in lambda
    # Exactly at a critical value the floating-point thresholds may round either way;
    # widen_conformal checks the lambda it returns (test_conformal_lambda_...).
    # rows that can never stop, e.g. partial scores exactly on the threshold, have crit = -inf
    never = np.all(np.isneginf(c), axis=1)
    assert np.all(np.isneginf(crit[never]))
    assert W.any()  # the grid reaches wrong exits at all


@pytest.mark.parametrize("seed", [0, 1])
def test_envelope_tighter_than_any_wrong_crossing(seed):
    B, order, en, ep, sc = binary_case(seed, False, 0.0, "constant")
    C = np.cumsum(B[:, order], axis=1)
    y = C[:, -1] > 0
    c, positive = core.critical_values(C, en, ep, sc)
    crit = core.envelope_critical(c, positive != y[:, None])
    any_wrong = np.max(np.where(positive != y[:, None], c, -np.inf), axis=1)
    assert np.all(crit <= any_wrong)
    assert np.any(crit < any_wrong)


def test_envelope_hand_example():
    """c = [1, 3, 2, 5]: records at 0, 1, 3; position 2 (c=2 < 3) is never the first exit."""
    c = np.array([[1.0, 3.0, 2.0, 5.0]])
    wrong = np.array([[True, False, True, False]])
    assert core.envelope_critical(c, wrong)[0] == 1.0  # wrong on [-inf, 1) only
    wrong = np.array([[False, False, True, False]])
    assert core.envelope_critical(c, wrong)[0] == -np.inf  # never the first exit
    c2 = np.array([[2.0, 2.0, -np.inf]])
    assert core.envelope_critical(c2, np.array([[False, True, True]]))[0] == -np.inf  # tie: not a record
    assert core.envelope_critical(np.zeros((0, 3)), np.zeros((0, 3), bool)).shape == (0,)


@pytest.mark.parametrize("alpha", [0.005, 0.02, 0.1])
@pytest.mark.parametrize("seed", [0, 3])
def test_conformal_lambda_is_smallest_with_at_most_m_bad_rows(seed, alpha):
    B, order, en, ep, sc = binary_case(seed, False, 0.0, "active_residual_std")
    n = B.shape[0]
    lam = core.widen_conformal(B, order, en, ep, sc, alpha=alpha)
    m = core.conformal_index(alpha, n)
    C = np.cumsum(B[:, order], axis=1)
    c, positive = core.critical_values(C, en, ep, sc)
    crit = core.envelope_critical(c, positive != (C[:, -1:] > 0))
    assert int((crit > lam).sum()) <= m
    assert int(binary_wrong(B, order, en, ep, sc, lam).sum()) <= m
    if np.isfinite(lam):
        assert int((crit > lam - 1e-9 * max(1.0, abs(lam))).sum()) > m


def multiclass_case(seed: int, shape: str):
    r = np.random.default_rng(seed)
    n, t, k = 600, 8, 3
    latent = r.normal(size=(n, k))
    F3 = np.round((latent[:, None, :] / t * 2 + r.normal(scale=0.25, size=(n, t, k))) * 4) / 4
    A, B = F3[:300], F3[300:]
    order, eps = multi.greedy_plan_multiclass(A, alpha=0.02, costs=np.ones(t))
    if shape == "extreme_spacing":
        sc = multi.extreme_spacing_multiclass(A, order, eps, k=5)
    else:
        sc = multi.active_residual_scale_multiclass(A, order, eps)
    return B, order, eps, sc


@pytest.mark.parametrize("shape", ["active_residual_std", "extreme_spacing"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiclass_envelope_is_running_max_of_true_disagreement(seed, shape):
    B, order, eps, sc = multiclass_case(seed, shape)
    C = np.cumsum(B[:, order, :], axis=1)
    yfull = np.argmax(C[:, -1, :], axis=1)
    c, wrong = multi.critical_values_multiclass(C, eps, sc)
    crit = core.envelope_critical(c, wrong)
    mids = grid_of(c)

    def wrong_at(lam):
        return multi.early_exit_multiclass(B, order, multi.shift_margins(eps, lam, sc)).labels != yfull

    W = np.stack([wrong_at(lam) for lam in mids], axis=1)
    L = mids[None, :] < crit[:, None]
    assert np.all(L >= W)
    np.testing.assert_array_equal(L, running_max_from_right(W))
    assert W.any()
    lam = multi.widen_conformal_multiclass(B, order, eps, sc, alpha=0.02)
    assert int(wrong_at(lam).sum()) <= int((crit > lam).sum()) <= core.conformal_index(0.02, B.shape[0])


def test_extreme_spacing_is_the_gap_of_the_k_extreme_rows():
    """Position 0, no stops before it: gaps of the k+1 most extreme opposite-label rows."""
    f0 = np.array([-3.0, -2.0, -1.5, -1.0, 1.0, 1.5, 2.5, 4.0])
    F = np.stack([f0, np.zeros(8)], axis=1)
    en, ep = np.array([-np.inf, -np.inf]), np.array([np.inf, np.inf])
    sc = core.extreme_spacing(F, np.array([0, 1]), en, ep, k=2)
    assert sc.shape == (2, 2)
    assert sc[1, 0] == -1.0 - (-2.0)  # negatives -3, -2, -1.5, -1: largest minus 3rd largest
    assert sc[0, 0] == 2.5 - 1.0  # positives 1, 1.5, 2.5, 4: 3rd smallest minus smallest
