"""Array kernels of QWYC for binary additive ensembles (Wang, Gupta and You, 2018).

Everything here works on a matrix of base-model outputs ``F`` (float64, shape
``(n_rows, n_models)``; ``F[i, t]`` is the raw-score contribution of model ``t`` to
row ``i``) and never sees a tree. The full score of row ``i`` is ``F[i].sum()`` and its
full label is ``score > threshold``.

The early-exit rule of a plan (``order``, ``eps_pos``, ``eps_neg``): evaluate the
models in ``order``; after position ``r`` (0-based) the partial sum ``s_r`` is compared
with the thresholds: ``s_r > eps_pos[r]`` stops with a positive label, otherwise
``s_r < eps_neg[r]`` stops with a negative label, otherwise the next model is evaluated.
After the last position the full score decides. Thresholds are always clipped so that
``eps_neg[r] <= threshold <= eps_pos[r]``: the partial score returned for a stopped row
then implies the label it was stopped with.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

__all__: list[str] = []

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class _Split(NamedTuple):
    eps_neg: float
    eps_pos: float
    stopped: int
    errors: int


class ExitTrace(NamedTuple):
    """Outcome of the early-exit rule on a set of rows (all arrays of length n_rows)."""

    scores: FloatArray  # partial raw score when the row stopped
    labels: BoolArray  # decided label
    n_evaluated: IntArray  # number of positions evaluated (1..n_positions)


def budget_count(alpha: float, n_rows: int) -> int:
    """Return the number of disagreements allowed on ``n_rows`` calibration rows: floor(alpha * n)."""
    return math.floor(alpha * n_rows + 1e-9)


def _best_split(
    pos_sorted: FloatArray,
    neg_sorted: FloatArray,
    budget: int,
    threshold: float,
    negative_only: bool,
    margin: float = 0.0,
) -> _Split:
    """Thresholds for one position that stop the most rows with at most ``budget`` errors.

    ``pos_sorted`` / ``neg_sorted``: ascending partial scores of the active rows whose
    full label is positive / negative. A negative stop (``s < eps_neg``) is wrong for a
    positive row and a positive stop (``s > eps_pos``) is wrong for a negative row. For
    ``e`` errors on the negative side the loosest threshold is the e-th smallest
    positive score (then clipped at ``threshold``); the split of the budget between the
    two sides is enumerated exactly, which is what the paper's binary search
    approximates.
    """
    n_pos, n_neg = pos_sorted.size, neg_sorted.size
    b = min(budget, max(n_pos, n_neg))
    e = np.arange(b + 1)
    tn = np.full(b + 1, threshold)
    m = e < n_pos
    tn[m] = np.minimum(pos_sorted[e[m]] - margin, threshold)
    err_n = np.searchsorted(pos_sorted, tn, "left")
    stop_n = err_n + np.searchsorted(neg_sorted, tn, "left")
    if negative_only:
        j = int(np.flatnonzero(stop_n == stop_n.max())[0])
        return _Split(float(tn[j]), math.inf, int(stop_n[j]), int(err_n[j]))
    tp = np.full(b + 1, threshold)
    m = e < n_neg
    tp[m] = np.maximum(neg_sorted[n_neg - 1 - e[m]] + margin, threshold)
    err_p = n_neg - np.searchsorted(neg_sorted, tp, "right")
    stop_p = err_p + (n_pos - np.searchsorted(pos_sorted, tp, "right"))
    total = stop_n + stop_p[::-1]
    errors = err_n + err_p[::-1]
    j = int(np.lexsort((errors, -total))[0])
    return _Split(float(tn[j]), float(tp[b - j]), int(total[j]), int(errors[j]))


@njit(cache=True)
def _keep_smallest(buf: FloatArray, cnt: int, v: float) -> int:  # pragma: no cover - compiled
    """Insert ``v`` into ``buf[:cnt]`` (ascending, the ``buf.size`` smallest so far); return the new count."""
    k = buf.size
    if cnt == k:
        if not v < buf[k - 1]:
            return cnt
        cnt -= 1
    i = cnt
    while i > 0 and buf[i - 1] > v:
        buf[i] = buf[i - 1]
        i -= 1
    buf[i] = v
    return cnt + 1


@njit(cache=True)
def _rank(thresholds: FloatArray, v: float) -> int:  # pragma: no cover - compiled
    """``#{e: thresholds[e] <= v}`` for ascending ``thresholds`` (non-empty): a branch-free binary search."""
    base, n = 0, thresholds.size
    while n > 1:
        half = n >> 1
        base = base + half if thresholds[base + half - 1] <= v else base
        n -= half
    return base + (1 if thresholds[base] <= v else 0)


@njit(cache=True)
def _count_below(values: FloatArray, thresholds: FloatArray) -> IntArray:  # pragma: no cover - compiled
    """``out[e] = #{v in values: v < thresholds[e]}`` for nondecreasing ``thresholds`` (one pass)."""
    m = thresholds.size
    hist = np.zeros(m + 1, np.int64)
    lo, hi = thresholds[0], thresholds[m - 1]
    below = 0
    for v in values:
        below += v < lo  # branch-free: values fall on either side of lo at random
        if lo <= v < hi:  # rare: inside the thresholds' range
            hist[_rank(thresholds, v)] += 1
    hist[0] += below
    return np.cumsum(hist)[:m]


@njit(cache=True)
def _split_selected(
    sp: FloatArray,
    neg_f: FloatArray,
    rows_neg: IntArray,
    g_neg: FloatArray,
    lo: FloatArray,
    neg_hi: FloatArray,
    budget: int,
    threshold: float,
    negative_only: bool,
    margin: float,
) -> tuple[float, float, int, int]:  # pragma: no cover - compiled; the same rule as _best_split
    """:func:`_best_split` of one candidate, compiled, from ``sp`` (partial scores of the positive rows).

    Only the ``b + 1`` smallest positive scores ``lo`` and largest negative ones set thresholds,
    so they are selected, not sorted. The negative rows' scores ``g_neg + neg_f[rows_neg]`` are
    computed in the pass that selects their largest (into ``neg_hi``, negated) and counts them
    below each negative threshold; the positive rows above each positive threshold take one more
    pass (:func:`_count_below`). Same thresholds, counts and tie rule as :func:`_best_split`.
    """
    n_pos, n_neg = sp.size, rows_neg.size
    b = min(budget, max(n_pos, n_neg))
    tn = np.empty(b + 1)
    for e in range(b + 1):
        tn[e] = min(lo[e] - margin, threshold) if e < n_pos else threshold
    err_n = np.searchsorted(lo, tn, side="left")  # positives below tn[e] are all among the smallest
    hist = np.zeros(b + 2, np.int64)
    t_lo, t_hi = tn[0], tn[b]
    cnt, below = 0, 0
    for i in range(n_neg):
        v = g_neg[i] + neg_f[rows_neg[i]]
        below += v < t_lo  # branch-free: values fall on either side of t_lo at random
        if t_lo <= v < t_hi:  # rare: inside the thresholds' range
            hist[_rank(tn, v)] += 1
        if not negative_only:
            cnt = _keep_smallest(neg_hi, cnt, -v)
    hist[0] += below
    stop_n = err_n + np.cumsum(hist)[: b + 1]
    if negative_only:
        j = int(np.argmax(stop_n))
        return tn[j], math.inf, int(stop_n[j]), int(err_n[j])
    hi = -neg_hi  # the largest negative scores, descending
    tp = np.empty(b + 1)
    err_p = np.empty(b + 1, np.int64)
    for e in range(b + 1):
        tp[e] = max(hi[e] + margin, threshold) if e < n_neg else threshold
        err_p[e] = np.sum(hi > tp[e])  # negatives above tp[e] are all among the largest
    # positives above tp[e]: n_pos minus those below the next double up (tp is nonincreasing)
    stop_p = err_p + n_pos - _count_below(sp, np.nextafter(tp[::-1], np.inf))[::-1]
    best, best_total, best_err = 0, -1, 0
    for j in range(b + 1):  # most rows stopped, then fewest errors, then the first
        total = stop_n[j] + stop_p[b - j]
        err = err_n[j] + err_p[b - j]
        if total > best_total or (total == best_total and err < best_err):
            best, best_total, best_err = j, total, err
    return tn[best], tp[b - best], best_total, best_err


@njit(cache=True)
def _stop_bound(
    sp: FloatArray, neg_f: FloatArray, rows_neg: IntArray, g_neg: FloatArray, lo: FloatArray, neg_hi: FloatArray,
    b: int, threshold: float, negative_only: bool, margin: float,
) -> int:  # pragma: no cover - compiled
    """Upper bound of the rows one candidate stops: both sides at their loosest threshold at once.

    ``stop_n[e] + stop_p[b - e] <= stop_n[b] + stop_p[b]`` (both counts grow with the errors
    allowed), and these two counts need only comparisons, no search.
    """
    n_pos, n_neg = sp.size, rows_neg.size
    tn = min(lo[b] - margin, threshold) if b < n_pos else threshold
    bound = int(np.searchsorted(lo, tn, side="left"))
    cnt = 0
    for i in range(n_neg):
        v = g_neg[i] + neg_f[rows_neg[i]]
        bound += v < tn
        if not negative_only:
            cnt = _keep_smallest(neg_hi, cnt, -v)
    if negative_only:
        return bound
    tp = max(margin - neg_hi[b], threshold) if b < n_neg else threshold
    for v in neg_hi:
        bound += v < -tp  # negatives above tp are all among the largest
    for v in sp:
        bound += v > tp
    return bound


@njit(cache=True)
def _position_splits(
    FT: FloatArray,
    candidates: IntArray,
    rows_pos: IntArray,
    rows_neg: IntArray,
    g_pos: FloatArray,
    g_neg: FloatArray,
    budget: int,
    threshold: float,
    negative_only: bool,
    margin: float,
    costs: FloatArray,
) -> tuple[FloatArray, FloatArray, IntArray, IntArray]:  # pragma: no cover - compiled
    """Best split of the candidate models that can win one position of the greedy search.

    ``FT`` is ``F.T`` (one contiguous row per model); ``rows_pos`` / ``rows_neg`` are the active
    rows of each full label and ``g_pos`` / ``g_neg`` their partial scores so far. Every
    candidate gets an upper bound of the rows it stops (:func:`_stop_bound`); candidates are then
    split exactly (:func:`_split_selected`) in increasing order of ``cost / bound`` until that
    ratio exceeds the best exact ``cost / stopped``: a candidate left out has a ratio strictly
    above the minimum, so the greedy's choice is the one of splitting every candidate. Returns
    ``eps_neg``, ``eps_pos``, rows stopped and errors per candidate (0 stopped where left out).
    """
    m, n_pos, n_neg = candidates.size, rows_pos.size, rows_neg.size
    b = min(budget, max(n_pos, n_neg))
    eps_neg, eps_pos = np.full(m, -np.inf), np.full(m, np.inf)
    stopped, errors = np.zeros(m, np.int64), np.zeros(m, np.int64)
    sp = np.empty(n_pos)
    lo, neg_hi = np.empty(min(b + 1, n_pos)), np.empty(min(b + 1, n_neg))
    ratio = np.empty(m)
    for c in range(m):
        f = FT[candidates[c]]
        cnt = 0
        for i in range(n_pos):
            sp[i] = g_pos[i] + f[rows_pos[i]]
            cnt = _keep_smallest(lo, cnt, sp[i])
        bound = _stop_bound(sp, f, rows_neg, g_neg, lo, neg_hi, b, threshold, negative_only, margin)
        ratio[c] = costs[candidates[c]] / bound if bound > 0 else np.inf
    best = np.inf
    for c in np.argsort(ratio, kind="mergesort"):
        if ratio[c] > best or ratio[c] == np.inf:
            break
        f = FT[candidates[c]]
        cnt = 0
        for i in range(n_pos):
            sp[i] = g_pos[i] + f[rows_pos[i]]
            cnt = _keep_smallest(lo, cnt, sp[i])
        eps_neg[c], eps_pos[c], stopped[c], errors[c] = _split_selected(
            sp, f, rows_neg, g_neg, lo, neg_hi, budget, threshold, negative_only, margin
        )
        if stopped[c] > 0:
            best = min(best, costs[candidates[c]] / stopped[c])
    return eps_neg, eps_pos, stopped, errors


def _stop_mask(s: FloatArray, eps_neg: float, eps_pos: float) -> BoolArray:
    return (s > eps_pos) | (s < eps_neg)


def greedy_plan(
    F: FloatArray,
    *,
    alpha: float,
    costs: FloatArray,
    threshold: float = 0.0,
    negative_only: bool = False,
    full_scores: FloatArray | None = None,
    progress: bool = False,
    margin: float = 0.0,
) -> tuple[IntArray, FloatArray, FloatArray]:
    """Greedy joint order and thresholds (the paper's Algorithm 1).

    At each position every remaining model ``k`` is tried: its thresholds are the
    optimal ones for this position under the remaining disagreement budget
    (:func:`_best_split`), giving ``n_k`` newly decided rows; the model minimising
    ``costs[k] / n_k`` is appended. When no candidate decides a row, the model that
    most reduces the squared distance of the partial scores to the full scores is
    taken. Once every calibration row is decided the remaining models follow in
    training order with thresholds that never stop (``-inf``/``+inf``).

    Returns ``order`` (int64), ``eps_neg``, ``eps_pos`` (float64), one per position.
    """
    n, t_models = F.shape
    f = F.sum(axis=1) if full_scores is None else full_scores
    y = f > threshold
    budget = budget_count(alpha, n)
    order: list[int] = []
    eps_neg = np.full(t_models, -np.inf)
    eps_pos = np.full(t_models, np.inf)
    remaining = np.arange(t_models)
    active = np.arange(n)
    g = np.zeros(n)
    FT = np.ascontiguousarray(F.T, dtype=np.float64)  # columns: the rows in ``cols``
    cols = np.arange(n)
    costs = np.ascontiguousarray(costs, dtype=np.float64)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=t_models, desc="QWYC greedy", leave=False)
    for r in range(t_models):
        if active.size == 0 or remaining.size == 1:
            if active.size and remaining.size == 1:
                order.append(int(remaining[0]))
            else:
                order.extend(int(k) for k in remaining)
            break
        ya = y[active]
        if 2 * active.size < cols.size:  # keep the active rows dense in memory: one copy per halving
            FT, cols = np.ascontiguousarray(FT[:, np.searchsorted(cols, active)]), active
        local = np.searchsorted(cols, active)
        en_c, ep_c, stopped_c, errors_c = _position_splits(
            FT, remaining, local[ya], local[~ya], g[ya], g[~ya], budget, threshold, negative_only, margin, costs
        )
        stopped = stopped_c.astype(np.float64)
        if stopped.max() > 0:
            with np.errstate(divide="ignore"):
                ratio = np.where(stopped > 0, costs[remaining] / np.maximum(stopped, 1), np.inf)
            best = np.flatnonzero(ratio == ratio.min())
            j = int(best[np.argmax(stopped[best])])
        else:  # no candidate stops a row (so none was split): the closest partial scores, and its split
            resid = (f[active] - g)[:, None] - F[np.ix_(active, remaining)]
            j = int(np.argmin(np.einsum("ij,ij->j", resid, resid)))
            s = g + F[active, remaining[j]]
            sp = _best_split(np.sort(s[ya]), np.sort(s[~ya]), budget, threshold, negative_only, margin)
            en_c[j], ep_c[j], errors_c[j] = sp.eps_neg, sp.eps_pos, sp.errors
        k = int(remaining[j])
        order.append(k)
        eps_neg[r], eps_pos[r] = en_c[j], ep_c[j]
        budget -= int(errors_c[j])
        s = g + FT[k, local]  # F[active, k], from the contiguous copy
        keep = ~_stop_mask(s, en_c[j], ep_c[j])
        active, g = active[keep], s[keep]
        remaining = np.delete(remaining, j)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return np.asarray(order, dtype=np.int64), eps_neg, eps_pos


def fixed_order_thresholds(
    F: FloatArray,
    order: IntArray,
    *,
    alpha: float,
    threshold: float = 0.0,
    negative_only: bool = False,
    full_scores: FloatArray | None = None,
    margin: float = 0.0,
) -> tuple[FloatArray, FloatArray]:
    """Thresholds for a fixed order (the paper's Algorithm 2), one position at a time."""
    n, t_models = F.shape
    f = F.sum(axis=1) if full_scores is None else full_scores
    y = f > threshold
    budget = budget_count(alpha, n)
    eps_neg = np.full(t_models, -np.inf)
    eps_pos = np.full(t_models, np.inf)
    active = np.arange(n)
    g = np.zeros(n)
    for r in range(t_models - 1):
        if active.size == 0:
            break
        s = g + F[active, order[r]]
        ya = y[active]
        sp = _best_split(np.sort(s[ya]), np.sort(s[~ya]), budget, threshold, negative_only, margin)
        eps_neg[r], eps_pos[r] = sp.eps_neg, sp.eps_pos
        budget -= sp.errors
        keep = ~_stop_mask(s, sp.eps_neg, sp.eps_pos)
        active, g = active[keep], s[keep]
    return eps_neg, eps_pos


@njit(cache=True)
def _exit_rows(
    F: FloatArray, order: IntArray, eps_neg: FloatArray, eps_pos: FloatArray, threshold: float
) -> tuple[FloatArray, BoolArray, IntArray]:  # pragma: no cover - compiled
    """Row by row: add the models in ``order`` until a threshold stops the row (or the last position)."""
    n, n_pos = F.shape[0], order.size
    scores, labels, done = np.empty(n), np.empty(n, np.bool_), np.empty(n, np.int64)
    for i in range(n):
        s = 0.0
        for r in range(n_pos):
            s += F[i, order[r]]
            if r == n_pos - 1:
                scores[i], labels[i], done[i] = s, s > threshold, n_pos
            elif s > eps_pos[r] or s < eps_neg[r]:
                scores[i], labels[i], done[i] = s, s > eps_pos[r], r + 1
                break
    return scores, labels, done


def early_exit(
    F: FloatArray, order: IntArray, eps_neg: FloatArray, eps_pos: FloatArray, *, threshold: float = 0.0
) -> ExitTrace:
    """Apply a plan to precomputed model outputs (compiled, row by row).

    Partial sums are accumulated left to right in ``order`` (the same floating-point
    operations as a sequential predictor), so stops are reproducible bit for bit; a row costs
    the positions it reaches, not all of them.
    """
    scores, labels, done = _exit_rows(
        F, np.ascontiguousarray(order, dtype=np.int64), np.ascontiguousarray(eps_neg, dtype=np.float64),
        np.ascontiguousarray(eps_pos, dtype=np.float64), float(threshold),
    )
    return ExitTrace(scores, labels, done)


def residual_scale(F: FloatArray, order: IntArray) -> FloatArray:
    """Return the standard deviation over rows of the remaining score ``f - s_r`` after each position."""
    C = np.cumsum(F[:, order], axis=1)
    rem = C[:, -1:] - C
    return _floor_scale(rem.std(axis=0))


def _floor_scale(scale: FloatArray) -> FloatArray:
    """Replace zero (or non-finite) entries by 1e-3 times the smallest positive one."""
    scale = np.where(np.isfinite(scale), scale, 0.0)
    positive = scale[scale > 0]
    floor = positive.min() * 1e-3 if positive.size else 1.0
    return np.maximum(scale, floor)


def carry_and_floor(scale: FloatArray) -> FloatArray:
    """Fill NaN positions with the nearest earlier position's value (in place), then :func:`_floor_scale`.

    The per-position scales leave NaN where too few calibration rows reach a position.
    """
    for r in range(1, scale.shape[0]):
        if np.isnan(scale[r]):
            scale[r] = scale[r - 1]
    return _floor_scale(scale)


def active_residual_scale(
    F: FloatArray, order: IntArray, eps_neg: FloatArray, eps_pos: FloatArray, *, threshold: float = 0.0
) -> FloatArray:
    """Return the standard deviation of the remaining score ``f - s_r`` over the rows still active at position ``r``.

    "Active at ``r``" means the plan (``order``, ``eps_neg``, ``eps_pos``) has not
    stopped the row before ``r``; these are the rows whose stop at ``r`` can go
    wrong. Positions reached by fewer than 2 rows take the nearest earlier
    position's value.
    """
    C = np.cumsum(F[:, order], axis=1)
    rem = C[:, -1:] - C
    t = C.shape[1]
    stop = (C[:, :-1] > eps_pos[None, :-1]) | (C[:, :-1] < eps_neg[None, :-1])
    first = np.where(stop.any(axis=1), np.argmax(stop, axis=1), t - 1)
    active = np.arange(t)[None, :] <= first[:, None]
    cnt = active.sum(axis=0)
    s1 = np.where(active, rem, 0.0).sum(axis=0)
    s2 = np.where(active, rem**2, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s1 / cnt
        scale = np.sqrt(np.maximum(s2 / cnt - mean**2, 0.0))
    scale[cnt < 2] = np.nan
    return carry_and_floor(scale)


def extreme_spacing(
    F: FloatArray,
    order: IntArray,
    eps_neg: FloatArray,
    eps_pos: FloatArray,
    *,
    k: int = 30,
    threshold: float = 0.0,
) -> FloatArray:
    """Per-side spread of the extreme calibration rows that set each base threshold.

    At position ``r``, among the rows of ``F`` the plan has not stopped before ``r``,
    the positive threshold is set by the largest partial scores of the rows whose full
    label is negative (and symmetrically). Returns ``scale`` of shape ``(2,
    n_positions)``: ``scale[1, r]`` = largest minus ``(k+1)``-th largest of those
    negative-label partial scores, ``scale[0, r]`` = ``(k+1)``-th smallest minus
    smallest of the positive-label ones. A threshold set by one isolated row (a wide
    gap, likely to be crossed by new rows) moves faster with ``lambda`` than one
    inside a dense cloud. Positions with ``k`` or fewer such rows take the nearest
    earlier position's value; zeros are floored (:func:`carry_and_floor`).
    """
    C = np.cumsum(F[:, order], axis=1)
    y = C[:, -1] > threshold
    t = C.shape[1]
    stop = (C[:, :-1] > eps_pos[None, :-1]) | (C[:, :-1] < eps_neg[None, :-1])
    first = np.where(stop.any(axis=1), np.argmax(stop, axis=1), t - 1)
    out = np.full((2, t), np.nan)
    for r in range(t):
        act = first >= r
        neg_scores, pos_scores = C[act & ~y, r], C[act & y, r]
        if neg_scores.size > k:
            top = np.partition(neg_scores, neg_scores.size - k - 1)[neg_scores.size - k - 1 :]
            out[1, r] = top.max() - top.min()
        if pos_scores.size > k:
            low = np.partition(pos_scores, k)[: k + 1]
            out[0, r] = low.max() - low.min()
        if act.sum() <= 2 * k:
            break
    return np.stack([carry_and_floor(out[0]), carry_and_floor(out[1])])


def _sides(scale: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(scale_neg, scale_pos)`` of a shape of shape ``(T,)`` (both sides) or ``(2, T)``."""
    return (scale[0], scale[1]) if scale.ndim == 2 else (scale, scale)


def critical_values(
    C: FloatArray, eps_neg: FloatArray, eps_pos: FloatArray, scale: FloatArray, *, threshold: float = 0.0
) -> tuple[FloatArray, BoolArray]:
    """Per-row, per-position critical shifts of the shifted rule (positions ``0 .. T-2``).

    With shifted, clipped thresholds ``ep_r(lambda) = max(eps_pos[r] + lambda *
    scale[r], threshold)`` and ``en_r(lambda) = min(eps_neg[r] - lambda * scale[r],
    threshold)``, a row with partial score ``s_r = C[i, r]`` stops at ``r`` iff
    ``lambda < c_r`` where

    * ``c_r = (s_r - eps_pos[r]) / scale[r]`` if ``s_r > threshold`` (a positive stop),
    * ``c_r = (eps_neg[r] - s_r) / scale[r]`` if ``s_r < threshold`` (a negative stop),
    * ``c_r = -inf`` if ``s_r == threshold`` or the relevant threshold is infinite
      (never stops there).

    (``s_r > max(e + lambda sigma, threshold)`` is ``s_r > threshold and lambda <
    (s_r - e) / sigma``; the clipping only removes stops on the wrong side of
    ``threshold``.) The last position is not included: there the full score decides.

    Returns ``c`` (float64, shape ``(n, T - 1)``) and ``positive`` (bool, same shape):
    the label a stop at ``r`` would give.
    """
    sn, sp = _sides(scale)
    Cp, en, ep = C[:, :-1], eps_neg[None, :-1], eps_pos[None, :-1]
    with np.errstate(invalid="ignore"):
        c_pos = np.where(np.isfinite(ep) & (Cp > threshold), (Cp - ep) / sp[None, :-1], -np.inf)
        c_neg = np.where(np.isfinite(en) & (Cp < threshold), (en - Cp) / sn[None, :-1], -np.inf)
    return np.where(Cp > threshold, c_pos, c_neg), Cp > threshold


def exit_records(c: FloatArray) -> tuple[FloatArray, BoolArray]:
    """``(prev, record)`` of critical values ``c`` (shape ``(n, T - 1)``, :func:`critical_values`).

    ``prev[i, r] = max_{r' < r} c[i, r']`` (``-inf`` at ``r = 0``) and ``record = c > prev``:
    the row exits at position ``r`` exactly for ``lambda`` in ``[prev[i, r], c[i, r])``,
    an interval that is empty unless ``r`` is a strict prefix-maximum record.
    """
    prev = np.empty_like(c)
    prev[:, :1] = -np.inf
    if c.shape[1] > 1:
        prev[:, 1:] = np.maximum.accumulate(c, axis=1)[:, :-1]
    return prev, c > prev


def envelope_critical(c: FloatArray, wrong: BoolArray) -> FloatArray:
    """Critical shift of each row: its shifted-plan label is wrong at some ``lambda' >= lambda`` iff ``lambda < crit``.

    ``c[i, r]``: the row stops at position ``r`` iff ``lambda < c[i, r]``
    (:func:`critical_values`); ``wrong[i, r]``: a stop at ``r`` has the wrong label.
    At ``lambda`` the row exits at the first ``r`` with ``c[i, r] > lambda``, so it
    exits at ``r`` exactly for ``lambda`` in ``[M_r, c_r)`` with ``M_r = max_{r' < r}
    c_r'`` (empty unless ``r`` is a strict prefix-maximum record ``c_r > M_r``); its
    label is wrong on the union of those intervals over wrong records. The supremum
    of that set is ``crit = max(c_r : r a wrong strict record)`` (``-inf`` if none) and
    ``L(lambda) = 1{lambda < crit}`` is the smallest non-increasing function above
    the true disagreement indicator (its running maximum from the right).
    """
    n = c.shape[0]
    _, record = exit_records(c)
    return np.max(np.where(record & wrong, c, -np.inf), axis=1, initial=-np.inf) if n else np.zeros(0)


def conformal_index(alpha: float, n: int) -> int:
    """``m = floor(alpha (n + 1) - 1)``: held-out rows allowed above the conformal shift."""
    return math.floor(alpha * (n + 1) - 1 + 1e-9)


def conformal_lambda(crit: FloatArray, alpha: float) -> float:
    """Smallest ``lambda`` with ``(#{i: crit_i > lambda} + 1) / (n + 1) <= alpha``.

    That is the ``(m+1)``-th largest critical value (:func:`conformal_index`); ``inf``
    if ``m < 0`` (never exit early), ``-inf`` if ``m >= n``.
    """
    n = crit.size
    m = conformal_index(alpha, n)
    if m < 0:
        return math.inf
    if m >= n:
        return -math.inf
    return float(np.sort(crit)[::-1][m])


def settle_lambda(
    lam: float, good: BoolArray, y: npt.NDArray[Any], labels_at: Callable[[float], npt.NDArray[Any]]
) -> float:
    """Raise ``lam`` until every ``good`` row gets its label ``y`` from the predictor's thresholds.

    In exact arithmetic every row with ``crit <= lam`` is right at ``lam``; the predictor
    compares with floating-point thresholds, so ``lam`` moves up in doubling steps from
    ``1e-12 * max(1, |lam|)`` (more conservative, so the guarantee still holds), at most 64 times.

    Parameters
    ----------
    lam : float
        The conformal ``lambda`` (finite).
    good : ndarray of bool, shape (n_rows,)
        The rows right at ``lam`` in exact arithmetic.
    y : ndarray, shape (n_rows,)
        The full ensemble's labels.
    labels_at : callable
        The early-exit labels of the rows under the thresholds shifted by a ``lambda``.
    """
    step = 1e-12 * max(1.0, abs(lam))
    for _ in range(64):
        if not np.any(good & (labels_at(lam) != y)):
            break
        lam += step
        step *= 2.0
    return lam


def conformal_critical(
    F: FloatArray,
    order: IntArray,
    eps_neg: FloatArray,
    eps_pos: FloatArray,
    scale: FloatArray,
    *,
    threshold: float = 0.0,
) -> FloatArray:
    """Critical shift ``crit_i`` of each row of ``F`` under the plan shifted by ``lambda * scale``.

    The row's loss is ``L_i(lambda) = 1{lambda < crit_i}`` (:func:`envelope_critical`): its
    early-exit label is wrong at ``lambda`` or at some larger shift. Returns float64, shape
    ``(n_rows,)`` (``-inf`` for a row that is never wrong).
    """
    sn, sp = _sides(np.asarray(scale, dtype=np.float64))
    return _critical_rows(
        F, np.ascontiguousarray(order, dtype=np.int64), np.ascontiguousarray(eps_neg, dtype=np.float64),
        np.ascontiguousarray(eps_pos, dtype=np.float64), np.ascontiguousarray(sn), np.ascontiguousarray(sp),
        float(threshold),
    )


@njit(cache=True)
def _critical_rows(
    F: FloatArray, order: IntArray, eps_neg: FloatArray, eps_pos: FloatArray, sn: FloatArray, sp: FloatArray,
    threshold: float,
) -> FloatArray:  # pragma: no cover - compiled
    """:func:`conformal_critical` row by row: :func:`critical_values` and :func:`envelope_critical` in one pass.

    The partial sums are the cumulative sum's (left to right in ``order``), so the critical
    values are the same doubles; only the last position's sum is needed beyond the row's records.
    """
    n, t = F.shape[0], order.size
    crit = np.full(n, -np.inf)
    for i in range(n):
        full = F[i, order[0]]
        for r in range(1, t):
            full += F[i, order[r]]
        y = full > threshold
        s, prev, best = 0.0, -np.inf, -np.inf
        for r in range(t - 1):
            s = F[i, order[0]] if r == 0 else s + F[i, order[r]]
            positive = s > threshold
            c = -np.inf
            if positive and np.isfinite(eps_pos[r]):
                c = (s - eps_pos[r]) / sp[r]
            elif not positive and s < threshold and np.isfinite(eps_neg[r]):
                c = (eps_neg[r] - s) / sn[r]
            if c > prev and positive != y and c > best:  # a wrong strict prefix-maximum record
                best = c
            prev = max(prev, c)
        crit[i] = best
    return crit


def widen_conformal(
    F: FloatArray,
    order: IntArray,
    eps_neg: FloatArray,
    eps_pos: FloatArray,
    scale: FloatArray,
    *,
    alpha: float,
    threshold: float = 0.0,
) -> float:
    """Conformal-risk-control shift ``lambda`` fit on held-out rows ``F``.

    The thresholds become ``max(eps_pos + lambda * scale, threshold)`` and
    ``min(eps_neg - lambda * scale, threshold)`` (:func:`shift_thresholds`; ``lambda``
    may be negative: more aggressive than the base thresholds). The loss of row ``i``
    is ``L_i(lambda) = 1{lambda < crit_i}`` (:func:`envelope_critical`): 1 iff the
    row's early-exit label is wrong at ``lambda`` or at some larger shift. It is
    non-increasing and right-continuous in ``lambda`` and bounds the real disagreement
    indicator, so the smallest ``lambda`` with ``(sum_i L_i(lambda) + 1) / (n + 1) <=
    alpha`` gives ``E[disagreement of a new row] <= alpha`` for rows exchangeable with
    these held-out rows (Angelopoulos et al., 2022, conformal risk control).
    ``scale`` must be positive and must not depend on these rows. Returns ``inf`` when
    no ``lambda`` qualifies (then the plan never exits early).
    """
    y = np.cumsum(F[:, order], axis=1)[:, -1] > threshold
    crit = conformal_critical(F, order, eps_neg, eps_pos, scale, threshold=threshold)
    lam = conformal_lambda(crit, alpha)
    if not math.isfinite(lam):
        return lam

    def labels_at(m: float) -> npt.NDArray[Any]:  # the predictor's floating-point thresholds at lambda m
        en2, ep2 = shift_thresholds(eps_neg, eps_pos, m, scale, threshold)
        return early_exit(F, order, en2, ep2, threshold=threshold).labels

    return settle_lambda(lam, crit <= lam, y, labels_at)


def shift_thresholds(
    eps_neg: FloatArray, eps_pos: FloatArray, lam: float, scale: FloatArray, threshold: float = 0.0
) -> tuple[FloatArray, FloatArray]:
    """Shift finite thresholds outward by ``lam * scale`` (inward if negative), clipped at ``threshold``.

    ``scale``: shape ``(T,)`` for both sides or ``(2, T)`` (row 0: negative side,
    row 1: positive side).

    Infinite thresholds (positions that never stop) stay infinite; ``lam = inf`` never stops.
    """
    if math.isinf(lam) and lam > 0:
        return np.full(eps_neg.shape, -np.inf), np.full(eps_pos.shape, np.inf)
    sn, sp = _sides(scale)
    with np.errstate(invalid="ignore"):
        en = np.where(np.isfinite(eps_neg), np.minimum(eps_neg - lam * sn, threshold), eps_neg)
        ep = np.where(np.isfinite(eps_pos), np.maximum(eps_pos + lam * sp, threshold), eps_pos)
    return en, ep


def lgbm_margin_exit(F: FloatArray, *, freq: int, margin: float) -> ExitTrace:
    """Emulate LightGBM's binary ``pred_early_stop`` on model outputs in training order.

    LightGBM (``GBDT::PredictRaw`` with ``CreateBinary``) adds the trees of each
    iteration, and every ``freq`` iterations stops when ``2 * |score| > margin``.
    """
    n, t_models = F.shape
    C = np.cumsum(F, axis=1)
    checks = np.arange(freq - 1, t_models, freq)
    if checks.size == 0:
        return ExitTrace(C[:, -1], C[:, -1] > 0, np.full(n, t_models, dtype=np.int64))
    stop = 2.0 * np.abs(C[:, checks]) > margin
    any_stop = stop.any(axis=1)
    pos = np.where(any_stop, checks[np.argmax(stop, axis=1)], t_models - 1)
    scores = C[np.arange(n), pos]
    return ExitTrace(scores, scores > 0, (pos + 1).astype(np.int64))
