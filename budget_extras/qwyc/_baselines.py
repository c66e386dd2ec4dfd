"""Baselines for QWYC: LightGBM's ``pred_early_stop`` as a plan, and Fan et al. (2002).

LightGBM's binary ``pred_early_stop`` (``GBDT::PredictRaw`` + ``CreateBinary`` in
``src/boosting/prediction_early_stop.cpp``) evaluates the trees in training order and,
after every ``freq``-th iteration, stops when ``2 * |score| > margin``. Because doubling
and halving are exact in floating point this is the QWYC plan with the training order,
``eps_pos = margin / 2`` and ``eps_neg = -margin / 2`` at positions ``freq - 1,
2 * freq - 1, ...`` and no stop elsewhere; the multiclass rule (top-1 minus top-2 >
margin) is the multiclass margin plan with ``eps_margin = margin`` at those positions.

Fan, Chu, Wang and Yu (2002), "Pruning and dynamic scheduling of cost-sensitive
ensembles": after ``r`` models the partial score is binned (here: quantile bins per
position on the calibration rows); per bin the mean ``mu`` and standard deviation
``sigma`` of the remaining score ``f - s_r`` are recorded; a row stops when the interval
``s_r + mu +- t * sigma`` lies entirely on one side of the decision threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._format import QWYCPlan
from ._kernels import ExitTrace

__all__: list[str] = []

F64 = npt.NDArray[np.float64]


def pred_early_stop_plan(n_iterations: int, *, freq: int, margin: float, num_class: int = 1) -> QWYCPlan:
    """Return the QWYC plan equivalent to LightGBM's ``pred_early_stop`` (freq, margin)."""
    if freq < 1 or not margin >= 0:
        raise ValueError(
            f"pred_early_stop needs freq >= 1 and margin >= 0. Got freq={freq}, margin={margin}."
        )
    checks = (np.arange(n_iterations) + 1) % freq == 0
    order = np.arange(n_iterations, dtype=np.int64)
    if num_class > 1:
        eps = np.where(checks, float(margin), np.inf)
        return QWYCPlan(
            order,
            np.full(n_iterations, -np.inf),
            np.full(n_iterations, np.inf),
            eps,
            0.0,
            "multiclass_margin",
            float("nan"),
        )
    half = float(margin) / 2.0
    return QWYCPlan(
        order,
        np.where(checks, -half, -np.inf),
        np.where(checks, half, np.inf),
        None,
        0.0,
        "binary_two_sided",
        float("nan"),
    )


@dataclass(frozen=True)
class FanSchedule:
    """Per-position bin edges (n_positions, n_bins - 1) and per-bin mu, sigma, count."""

    edges: F64
    mu: F64
    sigma: F64
    count: npt.NDArray[np.int64]


def fan_fit(F: F64, *, n_bins: int = 20) -> FanSchedule:
    """Fit Fan et al.'s binned statistics on calibration outputs ``F`` (training order)."""
    t_models = F.shape[1]
    C = np.cumsum(F, axis=1)
    rem = C[:, -1:] - C
    qs = np.linspace(0, 1, n_bins + 1)[1:-1]
    edges = np.quantile(C, qs, axis=0).T  # (T, n_bins - 1)
    mu = np.zeros((t_models, n_bins))
    sigma = np.full((t_models, n_bins), np.inf)
    count = np.zeros((t_models, n_bins), np.int64)
    for r in range(t_models):
        b = np.searchsorted(edges[r], C[:, r], side="right")
        cnt = np.bincount(b, minlength=n_bins)
        s1 = np.bincount(b, rem[:, r], minlength=n_bins)
        s2 = np.bincount(b, rem[:, r] ** 2, minlength=n_bins)
        ok = cnt >= 2
        mu[r, ok] = s1[ok] / cnt[ok]
        sigma[r, ok] = np.sqrt(np.maximum(s2[ok] / cnt[ok] - mu[r, ok] ** 2, 0.0))
        count[r] = cnt
    return FanSchedule(edges, mu, sigma, count)


def fan_exit(F: F64, schedule: FanSchedule, *, t: float, threshold: float = 0.0) -> ExitTrace:
    """Apply Fan et al.'s dynamic scheduling with confidence factor ``t``.

    ``scores`` are the estimated full scores ``s_r + mu`` at the stop.
    """
    n, t_models = F.shape
    C = np.cumsum(F, axis=1)
    rows = np.arange(n)
    b = np.stack([np.searchsorted(schedule.edges[r], C[:, r], side="right") for r in range(t_models)], axis=1)
    cols = np.arange(t_models)[None, :]
    mu = schedule.mu[cols, b]
    sig = schedule.sigma[cols, b]
    est = C + mu
    with np.errstate(invalid="ignore"):
        stop = ((est - t * sig > threshold) | (est + t * sig < threshold))[:, :-1]
    any_stop = stop.any(axis=1)
    first = np.where(any_stop, np.argmax(stop, axis=1), t_models - 1)
    scores = np.where(any_stop, est[rows, first], C[:, -1])
    return ExitTrace(scores, scores > threshold, (first + 1).astype(np.int64))
