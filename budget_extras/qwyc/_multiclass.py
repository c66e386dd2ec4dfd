"""Fixed orders and the multiclass margin extension of QWYC.

Model outputs are arrays ``F3`` of shape ``(n_rows, n_iterations, n_classes)``
(``n_classes == 1`` for binary). A multiclass position evaluates one whole iteration
(one tree per class) and stops when the partial margin, top-1 minus top-2 partial raw
score, exceeds ``eps_margin[r]``; the label is the partial argmax. The disagreement is
the argmax differing from the full ensemble's.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ._kernels import ExitTrace, budget_count, carry_and_floor, conformal_lambda, envelope_critical, settle_lambda

__all__: list[str] = []

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


def fixed_order(F3: F64, kind: str, *, rng: np.random.Generator) -> I64:
    """Order of iterations: ``training``, ``random``, ``individual_mse`` or ``greedy_mse``.

    ``individual_mse`` ranks iteration ``t`` by ``mean((F3[:, t] - f)**2)``, the squared
    error of stopping after that single iteration (smallest first); ``greedy_mse``
    appends, step by step, the iteration that most reduces the squared distance of
    the partial scores to the full scores ``f``.
    """
    n, t_iter, k = F3.shape
    if kind == "training":
        return np.arange(t_iter, dtype=np.int64)
    if kind == "random":
        return rng.permutation(t_iter).astype(np.int64)
    f = F3.sum(axis=1)
    M = F3.transpose(1, 0, 2).reshape(t_iter, n * k)
    if kind == "individual_mse":
        err = ((M - f.reshape(1, -1)) ** 2).sum(axis=1)
        return np.argsort(err, kind="stable").astype(np.int64)
    if kind == "greedy_mse":
        gram = M @ M.T
        sq = np.diag(gram).copy()
        inner = M @ f.reshape(-1)  # <R, F_t> with R = f - partial
        remaining = np.ones(t_iter, bool)
        order = []
        for _ in range(t_iter):
            gain = np.where(remaining, 2 * inner - sq, -np.inf)
            j = int(np.argmax(gain))
            order.append(j)
            remaining[j] = False
            inner -= gram[j]
        return np.asarray(order, dtype=np.int64)
    raise ValueError(f"Unknown order kind {kind!r}.")


def _margins(S: F64) -> tuple[F64, I64]:
    part = np.partition(S, -2, axis=-1)
    return part[..., -1] - part[..., -2], np.argmax(S, axis=-1)


def _best_margin(margin: F64, wrong: npt.NDArray[np.bool_], budget: int) -> tuple[float, int, int]:
    wm = np.sort(margin[wrong])[::-1]
    e = min(budget, wm.size)
    eps = max(float(wm[e]), 0.0) if e < wm.size else 0.0
    stop = margin > eps
    return eps, int(stop.sum()), int((stop & wrong).sum())


def greedy_plan_multiclass(F3: F64, *, alpha: float, costs: F64, order: I64 | None = None) -> tuple[I64, F64]:
    """Greedy (or fixed ``order``) iteration order and margin thresholds for multiclass."""
    n, t_iter, _ = F3.shape
    yfull = np.argmax(F3.sum(axis=1), axis=1)
    budget = budget_count(alpha, n)
    eps = np.full(t_iter, math.inf)
    chosen: list[int] = []
    remaining = np.arange(t_iter) if order is None else np.asarray(order, dtype=np.int64)
    active = np.arange(n)
    g = np.zeros((n, F3.shape[2]))
    for r in range(t_iter):
        if active.size == 0 or remaining.size == 1:
            chosen.extend(int(k) for k in remaining)
            break
        cand = remaining if order is None else remaining[:1]
        S = g[:, None, :] + F3[active][:, cand, :]
        margin, arg = _margins(S)
        wrong = arg != yfull[active][:, None]
        res = [_best_margin(margin[:, j], wrong[:, j], budget) for j in range(cand.size)]
        stopped = np.array([x[1] for x in res], dtype=np.float64)
        if stopped.max() > 0:
            ratio = np.where(stopped > 0, costs[cand] / np.maximum(stopped, 1), np.inf)
            j = int(np.argmin(ratio))
        else:
            j = 0
        e, _, errs = res[j]
        k = int(cand[j])
        chosen.append(k)
        eps[r] = e
        budget -= errs
        keep = ~(margin[:, j] > e)
        active, g = active[keep], S[keep, j, :]
        remaining = remaining[remaining != k]
    return np.asarray(chosen, dtype=np.int64), eps


def early_exit_multiclass(F3: F64, order: I64, eps_margin: F64) -> ExitTrace:
    """Apply a multiclass margin plan; ``scores`` are the partial raw scores (n_rows, n_classes)."""
    n, t_iter, _ = F3.shape
    C = np.cumsum(F3[:, order, :], axis=1)
    margin, _ = _margins(C)
    stop = margin[:, :-1] > eps_margin[None, :-1]
    any_stop = stop.any(axis=1)
    first = np.where(any_stop, np.argmax(stop, axis=1), t_iter - 1)
    scores = C[np.arange(n), first, :]
    return ExitTrace(scores, np.argmax(scores, axis=1), (first + 1).astype(np.int64))


def shift_margins(eps_margin: F64, lam: float, scale: F64) -> F64:
    """Shifted margin thresholds ``max(eps_margin + lam * scale, 0)``; infinite ones stay, ``lam = inf`` never stops."""
    if math.isinf(lam) and lam > 0:
        return np.full(eps_margin.shape, np.inf)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(eps_margin), np.maximum(eps_margin + lam * scale, 0.0), eps_margin)


def critical_values_multiclass(C: F64, eps_margin: F64, scale: F64) -> tuple[F64, npt.NDArray[np.bool_]]:
    """Critical shifts of the margin rule (positions ``0 .. T-2``) and the wrong-argmax mask.

    A row stops at ``r`` iff its partial margin ``m_r > max(eps_margin[r] + lambda *
    scale[r], 0)``, i.e. iff ``m_r > 0`` and ``lambda < c_r = (m_r - eps_margin[r]) /
    scale[r]`` (``c_r = -inf`` when ``m_r == 0`` or the threshold is infinite). ``C``:
    cumulative partial scores in plan order, shape ``(n, T, n_classes)``.
    """
    margin, arg = _margins(C)
    wrong = arg[:, :-1] != arg[:, -1:]
    with np.errstate(invalid="ignore"):
        c = np.where(
            np.isfinite(eps_margin[None, :-1]) & (margin[:, :-1] > 0),
            (margin[:, :-1] - eps_margin[None, :-1]) / scale[None, :-1],
            -np.inf,
        )
    return c, wrong


def conformal_critical_multiclass(F3: F64, order: I64, eps_margin: F64, scale: F64) -> F64:
    """Critical shift ``crit_i`` of each row under the margins ``eps_margin + lambda * scale``.

    The multiclass form of ``_kernels.conformal_critical``: the loss ``1{lambda < crit_i}``
    is the monotone envelope of the wrong-argmax indicator. Returns shape ``(n_rows,)``.
    """
    c, wrong = critical_values_multiclass(np.cumsum(F3[:, order, :], axis=1), eps_margin, scale)
    return envelope_critical(c, wrong)


def widen_conformal_multiclass(F3: F64, order: I64, eps_margin: F64, scale: F64, *, alpha: float) -> float:
    """Conformal shift for margins, ``eps_margin + lambda * scale`` (see ``_qwyc_core.widen_conformal``).

    The loss is the same monotone envelope ``1{lambda < crit_i}`` of the wrong-argmax
    indicator (:func:`_qwyc_core.envelope_critical`).
    """
    crit = conformal_critical_multiclass(F3, order, eps_margin, scale)
    lam = conformal_lambda(crit, alpha)
    if not math.isfinite(lam):
        return lam
    yfull = np.argmax(np.cumsum(F3[:, order, :], axis=1)[:, -1, :], axis=1)
    return settle_lambda(  # agree with the floating-point thresholds the predictor uses
        lam, crit <= lam, yfull, lambda m: early_exit_multiclass(F3, order, shift_margins(eps_margin, m, scale)).labels
    )


def active_residual_scale_multiclass(F3: F64, order: I64, eps_margin: F64) -> F64:
    """Root-mean-square of the remaining score over the rows still active at each position."""
    C = np.cumsum(F3[:, order, :], axis=1)
    rem = C[:, -1:, :] - C
    t = C.shape[1]
    margin, _ = _margins(C)
    stop = margin[:, :-1] > eps_margin[None, :-1]
    first = np.where(stop.any(axis=1), np.argmax(stop, axis=1), t - 1)
    active = np.arange(t)[None, :] <= first[:, None]
    cnt = active.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.sqrt(np.where(active[:, :, None], rem**2, 0.0).sum(axis=(0, 2)) / (cnt * C.shape[2]))
    scale[cnt < 2] = np.nan
    return carry_and_floor(scale)


def residual_scale_multiclass(F3: F64, order: I64) -> F64:
    """Root-mean-square over rows and classes of the remaining score after each position."""
    C = np.cumsum(F3[:, order, :], axis=1)
    rem = C[:, -1:, :] - C
    scale = np.sqrt((rem**2).mean(axis=(0, 2)))
    positive = scale[scale > 0]
    return np.maximum(scale, positive.min() * 1e-3 if positive.size else 1.0)


def extreme_spacing_multiclass(F3: F64, order: I64, eps_margin: F64, *, k: int = 30) -> F64:
    """Largest minus ``(k+1)``-th largest partial margin of the wrong-argmax rows still active at each position.

    The multiclass analogue of :func:`_qwyc_core.extreme_spacing`: those rows set the
    base margin threshold.
    """
    C = np.cumsum(F3[:, order, :], axis=1)
    t = C.shape[1]
    margin, arg = _margins(C)
    wrong = arg != arg[:, -1:]
    stop = margin[:, :-1] > eps_margin[None, :-1]
    first = np.where(stop.any(axis=1), np.argmax(stop, axis=1), t - 1)
    out = np.full(t, np.nan)
    for r in range(t):
        act = first >= r
        m = margin[act & wrong[:, r], r]
        if m.size > k:
            top = np.partition(m, m.size - k - 1)[m.size - k - 1 :]
            out[r] = top.max() - top.min()
        if act.sum() <= k:
            break
    return carry_and_floor(out)
