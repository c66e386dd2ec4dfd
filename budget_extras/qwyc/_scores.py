"""Calibrated exit scores for binary QWYC plans (``QWYC(scores="calibrated")``).

A row that exits at position ``r`` has the partial score ``s_r``, which misses the remaining
trees' sum ``f - s_r``; given an extreme ``s_r`` that sum is far from 0 on average, so partial
scores of rows exiting at different positions are on different scales and rank badly against
each other. Per position we fit a monotone map ``m_r`` from the partial score to the expected
full score, on calibration rows that reach position ``r`` under the plan (their ``(s_r, f)``
pairs), and an exited row returns ``m_r(s_r)``:

* isotonic regression (pool adjacent violators, sklearn) of ``f`` on ``s_r``; each pooled block
  becomes one knot ``(mean s_r, mean f)`` of the block, so the knots increase strictly in both
  coordinates;
* ``m_r`` interpolates the knots linearly and extrapolates with slope 1 beyond the first and
  last knot (partial score + mean remainder of the end block): strictly increasing, so the
  order of rows exiting at one position is kept, without ties. It is evaluated by the
  expression of docs/qwyc_model_format.md (section 3), which the fork's native predictor
  evaluates too, so both return the same doubles;
* positions where no row can exit (both thresholds infinite, and the last one) get no map;
* a position reached by fewer than ``min_rows`` calibration rows pools the pairs of the
  preceding positions ``r - 1, r - 2, ...`` (each with its own partial score) until it has
  ``min_rows`` pairs or reaches position 0.

The exit label is not changed: a calibrated score on the wrong side of the decision threshold
is clipped to it (``threshold`` for a negative exit, the next float above for a positive one).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from sklearn.isotonic import isotonic_regression

from ._format import ScoreMaps
from ._kernels import early_exit

__all__: list[str] = []

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


def _knots(s: F64, f: F64) -> tuple[F64, F64]:
    """Isotonic fit of ``f`` on ``s``, one knot (block mean of s, block mean of f) per block."""
    xs, inv = np.unique(s, return_inverse=True)
    w = np.bincount(inv).astype(np.float64)
    ym = np.bincount(inv, weights=f) / w
    fit = isotonic_regression(ym, sample_weight=w, increasing=True)
    start = np.flatnonzero(np.r_[True, fit[1:] != fit[:-1]])
    wb = np.add.reduceat(w, start)
    kx, ky = np.add.reduceat(xs * w, start) / wb, np.add.reduceat(ym * w, start) / wb
    # strictly increasing in both coordinates (a model file refuses anything else); rounding of the
    # block means could tie two neighbours, so keep a knot only above the last one kept
    if np.all(np.diff(kx) > 0) and np.all(np.diff(ky) > 0):
        return kx, ky
    keep = np.ones(kx.size, bool)
    last = 0
    for i in range(1, kx.size):
        keep[i] = kx[i] > kx[last] and ky[i] > ky[last]
        last = i if keep[i] else last
    return kx[keep], ky[keep]


def fit_score_maps(
    F: F64,
    order: I64,
    eps_neg: F64,
    eps_pos: F64,
    *,
    threshold: float = 0.0,
    min_rows: int = 100,
) -> ScoreMaps:
    """Fit the per-position maps on calibration outputs ``F`` (n_rows, n_iterations)."""
    n_pos = order.size
    C = np.cumsum(F[:, order], axis=1)
    full = C[:, -1]
    reached = early_exit(F, order, eps_neg, eps_pos, threshold=threshold).n_evaluated  # positions reached
    # rows reaching position r, sorted by the position they stop at (descending): reach(r) is a prefix
    by_stop = np.argsort(-reached, kind="stable")
    reach_count = np.searchsorted(-reached[by_stop], -(np.arange(n_pos) + 1), side="right")
    xs: list[F64] = []
    ys: list[F64] = []
    used = np.zeros(n_pos, np.int64)
    can_exit = np.isfinite(eps_neg) | np.isfinite(eps_pos)
    can_exit[-1] = False  # rows reaching the last position return the full score
    for r in range(n_pos):
        lo, total = r, int(reach_count[r])
        if not can_exit[r]:  # no row exits here: no map
            xs.append(np.zeros(0))
            ys.append(np.zeros(0))
            continue
        while total < min_rows and lo > 0:
            lo -= 1
            total += int(reach_count[lo])
        if total == 0:
            xs.append(np.zeros(0))
            ys.append(np.zeros(0))
            continue
        s = np.concatenate([C[by_stop[: reach_count[q]], q] for q in range(lo, r + 1)])
        f = np.concatenate([full[by_stop[: reach_count[q]]] for q in range(lo, r + 1)])
        kx, ky = _knots(s, f)
        xs.append(kx)
        ys.append(ky)
        used[r] = total
    offsets = np.zeros(n_pos + 1, np.int64)
    offsets[1:] = np.cumsum([a.size for a in xs])
    x = np.concatenate(xs) if offsets[-1] else np.zeros(0)
    y = np.concatenate(ys) if offsets[-1] else np.zeros(0)
    return ScoreMaps(offsets, x, y, used)


def _apply_one(kx: F64, ky: F64, s: F64) -> F64:
    """``m_r(s)``: linear between knots, slope 1 beyond the end knots (the model format's expression)."""
    if kx.size == 0:
        return s.copy()
    if kx.size == 1:
        return ky[0] + (s - kx[0])
    j = np.clip(np.searchsorted(kx, s, side="right") - 1, 0, kx.size - 2)
    out = ky[j] + (ky[j + 1] - ky[j]) / (kx[j + 1] - kx[j]) * (s - kx[j])
    lo, hi = s < kx[0], s > kx[-1]
    out[lo] = ky[0] + (s[lo] - kx[0])
    out[hi] = ky[-1] + (s[hi] - kx[-1])
    return out


def calibrate_exits(
    maps: ScoreMaps,
    scores: F64,
    labels: npt.NDArray[np.bool_],
    n_evaluated: I64,
    threshold: float,
) -> F64:
    """Map the partial scores of rows that exited before the last position; other rows unchanged."""
    out = np.array(scores, dtype=np.float64, copy=True)
    n_pos = maps.offsets.size - 1
    pos = n_evaluated - 1
    exited = np.flatnonzero(n_evaluated < n_pos)
    if exited.size == 0:
        return out
    for r in np.unique(pos[exited]).tolist():
        rows = exited[pos[exited] == r]
        kx, ky = maps.knots(r)
        out[rows] = _apply_one(kx, ky, scores[rows])
    lab = labels[exited]
    v = out[exited]
    above = np.nextafter(threshold, np.inf)
    out[exited] = np.where(lab, np.maximum(v, above), np.minimum(v, threshold))
    return out
