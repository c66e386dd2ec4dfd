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
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

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
        G = g[:, None] + F[np.ix_(active, remaining)]
        ya = y[active]
        pos_sorted = np.sort(G[ya], axis=0)
        neg_sorted = np.sort(G[~ya], axis=0)
        splits = [
            _best_split(pos_sorted[:, j], neg_sorted[:, j], budget, threshold, negative_only, margin)
            for j in range(remaining.size)
        ]
        stopped = np.array([s.stopped for s in splits], dtype=np.float64)
        if stopped.max() > 0:
            with np.errstate(divide="ignore"):
                ratio = np.where(stopped > 0, costs[remaining] / np.maximum(stopped, 1), np.inf)
            best = np.flatnonzero(ratio == ratio.min())
            j = int(best[np.argmax(stopped[best])])
        else:
            resid = (f[active] - g)[:, None] - F[np.ix_(active, remaining)]
            j = int(np.argmin(np.einsum("ij,ij->j", resid, resid)))
        sp = splits[j]
        k = int(remaining[j])
        order.append(k)
        eps_neg[r], eps_pos[r] = sp.eps_neg, sp.eps_pos
        budget -= sp.errors
        s = G[:, j]
        keep = ~_stop_mask(s, sp.eps_neg, sp.eps_pos)
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


def early_exit(
    F: FloatArray, order: IntArray, eps_neg: FloatArray, eps_pos: FloatArray, *, threshold: float = 0.0
) -> ExitTrace:
    """Apply a plan to precomputed model outputs (vectorized over rows).

    Partial sums are accumulated left to right in ``order`` (the same floating-point
    operations as a sequential predictor), so stops are reproducible bit for bit.
    """
    n = F.shape[0]
    n_pos = order.size
    C = np.cumsum(F[:, order], axis=1)
    stop = (C[:, :-1] > eps_pos[None, :-1]) | (C[:, :-1] < eps_neg[None, :-1])
    any_stop = stop.any(axis=1)
    first = np.where(any_stop, np.argmax(stop, axis=1), n_pos - 1)
    scores = C[np.arange(n), first]
    labels = np.where(any_stop, scores > eps_pos[np.minimum(first, n_pos - 1)], scores > threshold)
    return ExitTrace(scores, labels, (first + 1).astype(np.int64))


def residual_scale(F: FloatArray, order: IntArray) -> FloatArray:
    """Return the standard deviation over rows of the remaining score ``f - s_r`` after each position."""
    C = np.cumsum(F[:, order], axis=1)
    rem = C[:, -1:] - C
    scale = rem.std(axis=0)
    positive = scale[scale > 0]
    floor = positive.min() * 1e-3 if positive.size else 1.0
    return np.maximum(scale, floor)


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
    """Conformal-risk-control widening ``lambda`` fit on held-out rows ``F``.

    The thresholds become ``max(eps_pos + lambda * scale, threshold)`` and
    ``min(eps_neg - lambda * scale, threshold)`` (:func:`shift_thresholds`; ``lambda``
    may be negative: more aggressive than the base thresholds). For row ``i`` the loss
    ``L_i(lambda)`` is 1 when, at SOME position, its partial score crosses the shifted
    threshold on the wrong side of its full label. This upper-bounds the real
    disagreement indicator (which needs the wrong crossing to be the first stop) and is
    non-increasing in ``lambda``, so choosing the smallest ``lambda`` with
    ``(sum_i L_i(lambda) + 1) / (n + 1) <= alpha`` gives
    ``E[disagreement of a new row] <= alpha`` for rows exchangeable with these held-out
    rows (Angelopoulos et al., 2022, conformal risk control). Returns ``inf`` when no
    ``lambda`` qualifies (then the plan never exits early).
    """
    n = F.shape[0]
    C = np.cumsum(F[:, order], axis=1)
    y = C[:, -1] > threshold
    Cp, en, ep, sc = C[:, :-1], eps_neg[:-1], eps_pos[:-1], scale[:-1]
    with np.errstate(invalid="ignore"):
        wrong_pos = np.where(np.isfinite(ep) & (Cp > threshold), (Cp - ep) / sc, -np.inf)
        wrong_neg = np.where(np.isfinite(en) & (Cp < threshold), (en - Cp) / sc, -np.inf)
    crit = np.where(y, wrong_neg.max(axis=1, initial=-np.inf), wrong_pos.max(axis=1, initial=-np.inf))
    m = math.floor(alpha * (n + 1) - 1 + 1e-9)
    if m < 0:
        return math.inf
    if m >= n:
        return -math.inf
    lam = float(np.sort(crit)[::-1][m])  # (m+1)-th largest: at most m rows exceed it
    # Rows whose critical value equals lam are "good" in exact arithmetic; make sure the
    # floating-point thresholds actually used by the predictor agree (nudge lam up if not).
    step = 1e-12 * max(1.0, abs(lam)) if math.isfinite(lam) else 0.0
    for _ in range(64):
        en2, ep2 = shift_thresholds(eps_neg, eps_pos, lam, scale, threshold)
        bad = np.where(y, (Cp < en2[None, :-1]).any(axis=1), (Cp > ep2[None, :-1]).any(axis=1))
        if int(bad.sum()) <= m or not math.isfinite(lam):
            break
        lam += step
        step *= 2.0
    return lam


def shift_thresholds(
    eps_neg: FloatArray, eps_pos: FloatArray, lam: float, scale: FloatArray, threshold: float = 0.0
) -> tuple[FloatArray, FloatArray]:
    """Shift finite thresholds outward by ``lam * scale`` (inward if negative), clipped at ``threshold``.

    Infinite thresholds (positions that never stop) stay infinite; ``lam = inf`` never stops.
    """
    if math.isinf(lam) and lam > 0:
        return np.full(eps_neg.shape, -np.inf), np.full(eps_pos.shape, np.inf)
    with np.errstate(invalid="ignore"):
        en = np.where(np.isfinite(eps_neg), np.minimum(eps_neg - lam * scale, threshold), eps_neg)
        ep = np.where(np.isfinite(eps_pos), np.maximum(eps_pos + lam * scale, threshold), eps_pos)
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
