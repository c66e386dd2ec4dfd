"""Calibrated exit scores for binary QWYC plans (``QWYC(scores="calibrated")``).

A row that exits at position ``r`` has the partial score ``s_r``, which misses the remaining
trees' sum ``f - s_r``; given an extreme ``s_r`` that sum is far from 0 on average, so partial
scores of rows exiting at different positions are on different scales and rank badly against
each other. Per position we fit a monotone map ``m_r`` from the partial score to the expected
full score, on calibration rows that reach position ``r`` under the plan (their ``(s_r, f)``
pairs), and an exited row returns ``m_r(s_r)``:

* isotonic regression (pool adjacent violators, scipy's arithmetic compiled: :func:`_pava`) of
  ``f`` on ``s_r``; each pooled block
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
from numba import njit

from ._format import ScoreMaps
from ._kernels import early_exit

__all__: list[str] = []

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


@njit(cache=True)
def _pava(x: F64, w: F64) -> F64:  # pragma: no cover - compiled
    """Increasing isotonic fit of ``x`` with weights ``w``, in place (both are overwritten).

    The pool-adjacent-violators pass of Busing (2022, Algorithm 1) as scipy's
    ``optimize.isotonic_regression`` runs it (which scikit-learn's ``isotonic_regression``
    calls): the same pools and floating-point operations, so the same doubles, without the
    per-call argument validation that dominated the time of fitting the maps.
    """
    n = x.shape[0]
    r = np.zeros(n + 1, np.int64)
    r[1] = 1
    b = 0
    xb_prev, wb_prev = x[0], w[0]
    i = 1
    while i < n:
        b += 1
        xb, wb = x[i], w[i]
        if xb_prev >= xb:
            b -= 1
            sb = wb_prev * xb_prev + wb * xb
            wb += wb_prev
            xb = sb / wb
            while i < n - 1 and xb >= x[i + 1]:
                i += 1
                sb += w[i] * x[i]
                wb += w[i]
                xb = sb / wb
            while b > 0 and x[b - 1] >= xb:
                b -= 1
                sb += w[b] * x[b]
                wb += w[b]
                xb = sb / wb
        x[b] = xb_prev = xb
        w[b] = wb_prev = wb
        r[b + 1] = i + 1
        i += 1
    f = n - 1
    for k in range(b, -1, -1):
        t = r[k]
        xk = x[k]
        for j in range(f, t - 1, -1):
            x[j] = xk
        f = t - 1
    return x


def _knots(s: F64, f: F64) -> tuple[F64, F64]:
    """Isotonic fit of ``f`` on ``s``, one knot (block mean of s, block mean of f) per block."""
    xs, inv = np.unique(s, return_inverse=True)
    w = np.bincount(inv).astype(np.float64)
    ym = np.bincount(inv, weights=f) / w
    fit = _pava(ym.copy(), w.copy())
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
    order = np.ascontiguousarray(order, dtype=np.int64)
    reached = early_exit(F, order, eps_neg, eps_pos, threshold=threshold).n_evaluated  # positions reached
    can_exit = np.isfinite(eps_neg) | np.isfinite(eps_pos)
    can_exit[-1] = False  # rows reaching the last position return the full score
    return _maps(F, order, _plan_sums(F, order), reached, can_exit, min_rows)


@njit(cache=True)
def _plan_sums(F: F64, order: I64) -> F64:  # pragma: no cover - compiled
    """Full score of every row, summed left to right in ``order`` (the cumulative sum's last column)."""
    n, t = F.shape[0], order.size
    out = np.empty(n)
    for i in range(n):
        s = F[i, order[0]]
        for r in range(1, t):
            s += F[i, order[r]]
        out[i] = s
    return out


@njit(cache=True)
def _reached_sums(F: F64, order: I64, by_stop: I64, reach_count: I64) -> tuple[F64, I64]:  # pragma: no cover
    """Partial sums in plan order of the rows ``by_stop[:reach_count[q]]`` at every position ``q``, one after the other.

    The sums run left to right in ``order`` (the cumulative sum's columns); returns them and the
    offsets of each position's block.
    """
    offsets = np.zeros(reach_count.size + 1, np.int64)
    offsets[1:] = np.cumsum(reach_count)
    out = np.empty(offsets[-1])
    for k in range(by_stop.size):
        row = by_stop[k]
        s = 0.0
        for q in range(reach_count.size):
            if k >= reach_count[q]:  # rows are sorted by the positions they reach, descending
                break
            s = F[row, order[0]] if q == 0 else s + F[row, order[q]]
            out[offsets[q] + k] = s
    return out, offsets


def _maps(
    F: F64, order: I64, full: F64, reached: I64, can_exit: npt.NDArray[np.bool_], min_rows: int,
    rows: I64 | None = None,
) -> ScoreMaps:
    """:func:`fit_score_maps` from the outputs, the plan's order, the full scores and the positions reached.

    ``rows`` (increasing) restricts the fit to those rows of ``F`` and ``full`` (``reached`` is
    then per row of ``rows``).
    """
    n_pos = order.size
    # rows reaching position r, sorted by the position they stop at (descending): reach(r) is a prefix
    by_stop = np.argsort(-reached, kind="stable")
    reach_count = np.searchsorted(-reached[by_stop], -(np.arange(n_pos) + 1), side="right")
    last = int(np.flatnonzero(reach_count)[-1]) + 1 if reach_count[0] else 0
    if rows is not None:
        by_stop = rows[by_stop]
    flat, start = _reached_sums(F, order, by_stop, reach_count[:last])  # rows reaching q: flat[start[q]:start[q + 1]]
    full = full[by_stop]
    xs: list[F64] = []
    ys: list[F64] = []
    used = np.zeros(n_pos, np.int64)
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
        reach = range(lo, min(r + 1, last))  # positions from ``last`` on are reached by no row
        s = np.concatenate([flat[start[q] : start[q + 1]] for q in reach])
        f = np.concatenate([full[: reach_count[q]] for q in reach])
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


def expected_auc(scores: F64, full: F64) -> float:
    """AUC of ``scores`` expected when each row's label is drawn from the full model's probability.

    Row ``i`` is positive with probability ``p_i = sigmoid(full_i)``; the expected AUC is the
    share of (positive, negative) pairs of distinct rows that ``scores`` orders right, ties
    counting one half, weighted by ``p_i (1 - p_j)``. It needs no labels, so calibration rows
    can choose between exit scores with it; it equals the test AUC when the full model's
    probabilities are right.

    Parameters
    ----------
    scores : ndarray of float64, shape (n_rows,)
        Exit scores.
    full : ndarray of float64, shape (n_rows,)
        Full raw scores of the same rows.

    Returns
    -------
    float
        NaN when fewer than two rows.
    """
    p = 1.0 / (1.0 + np.exp(-full))
    q = 1.0 - p
    _, inv = np.unique(scores, return_inverse=True)  # tie groups in increasing score
    pg, qg = np.bincount(inv, weights=p), np.bincount(inv, weights=q)
    below = np.cumsum(qg) - qg  # negative weight strictly below each group
    wins = float(np.sum(pg * below) + 0.5 * (np.sum(pg * qg) - np.sum(p * q)))
    pairs = float(p.sum() * q.sum() - np.sum(p * q))
    return wins / pairs if pairs > 0 else float("nan")


def fold_maps(
    F: F64, order: I64, eps_neg: F64, eps_pos: F64, *, threshold: float, n_folds: int, rng: np.random.Generator
) -> tuple[npt.NDArray[np.int64], list[ScoreMaps]]:
    """Return folds of the calibration rows and, for each, the maps of the plan fit on the other folds.

    Parameters
    ----------
    F : ndarray of float64, shape (n_rows, n_iterations)
        Per-iteration outputs of the calibration rows.
    order, eps_neg, eps_pos : ndarray
        The plan.
    threshold : float
        Decision threshold of the labels.
    n_folds : int
        Folds of the maps.
    rng : numpy.random.Generator
        Source of the folds.

    Returns
    -------
    fold : ndarray of int64, shape (n_rows,)
    maps : list of ScoreMaps
        ``maps[j]`` is fit on the rows outside fold ``j``.
    """
    n = F.shape[0]
    order = np.ascontiguousarray(order, dtype=np.int64)
    tr = early_exit(F, order, eps_neg, eps_pos, threshold=threshold)
    full = _plan_sums(F, order)
    can_exit = np.isfinite(eps_neg) | np.isfinite(eps_pos)
    can_exit[-1] = False
    fold = rng.permutation(n) % n_folds
    maps = [_maps(F, order, full, tr.n_evaluated[fold != j], can_exit, 100, rows=np.flatnonzero(fold != j))
            for j in range(n_folds)]
    return fold, maps


def criteria(
    F: F64, order: I64, eps_neg: F64, eps_pos: F64, *, threshold: float, fold: npt.NDArray[np.int64],
    maps: list[ScoreMaps],
) -> dict[str, float]:
    """Return the expected AUC of the partial and calibrated exit scores of a plan, fold j mapped by ``maps[j]``.

    Parameters
    ----------
    F : ndarray of float64, shape (n_rows, n_iterations)
        Per-iteration outputs of the calibration rows.
    order, eps_neg, eps_pos : ndarray
        The plan.
    threshold : float
        Decision threshold of the labels.
    fold, maps
        :func:`fold_maps` (of this plan, or of another with the same order and positions).

    Returns
    -------
    dict
        ``{"partial": ..., "calibrated": ...}``, :func:`expected_auc` of each kind.
    """
    order = np.ascontiguousarray(order, dtype=np.int64)
    tr = early_exit(F, order, eps_neg, eps_pos, threshold=threshold)
    full = _plan_sums(F, order)
    cal = np.empty(F.shape[0])
    for j, m in enumerate(maps):
        out = fold == j
        cal[out] = calibrate_exits(m, tr.scores[out], tr.labels[out], tr.n_evaluated[out], threshold)
    return {"partial": expected_auc(tr.scores, full), "calibrated": expected_auc(cal, full)}


def choose_scores(
    F: F64, order: I64, eps_neg: F64, eps_pos: F64, *, threshold: float, n_folds: int, rng: np.random.Generator
) -> tuple[str, dict[str, float]]:
    """``"calibrated"`` or ``"partial"``: the exit scores with the higher cross-fitted expected AUC.

    The plan's exits are fixed; the calibration rows are split into ``n_folds`` folds, each
    fold's exited rows are mapped by the maps fit on the other folds, and both kinds of exit
    scores of all rows are compared by :func:`expected_auc` against the full scores. Partial
    scores are chosen only when strictly better (few or imbalanced calibration rows, where the
    maps of the exit positions are fit on few rows).

    Parameters
    ----------
    F : ndarray of float64, shape (n_rows, n_iterations)
        Per-iteration outputs of the calibration rows.
    order, eps_neg, eps_pos : ndarray
        The plan.
    threshold : float
        Decision threshold of the labels.
    n_folds : int
        Folds of the maps (>= 2; fewer rows than folds: calibrated, not compared).
    rng : numpy.random.Generator
        Source of the folds.

    Returns
    -------
    choice : {"calibrated", "partial"}
    criteria : dict
        The expected AUC of each kind.
    """
    if F.shape[0] < 2 * n_folds:
        return "calibrated", {}
    fold, maps = fold_maps(F, order, eps_neg, eps_pos, threshold=threshold, n_folds=n_folds, rng=rng)
    crit = criteria(F, order, eps_neg, eps_pos, threshold=threshold, fold=fold, maps=maps)
    return ("partial" if crit["partial"] > crit["calibrated"] else "calibrated"), crit
