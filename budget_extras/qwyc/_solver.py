"""The plan QWYC fits on calibration rows: order, base thresholds, shift shape, as functions over arrays.

``rows`` are per-iteration outputs of shape ``(n_rows, n_iterations, n_classes)`` (one class for
binary models). :class:`PlanSettings` carries the estimator's parameters that shape a plan, so
that the cross-fitting (``_calibration``) fits the fold plans and the final plan the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _kernels as core
from . import _multiclass as multi
from ._format import QWYCPlan

__all__: list[str] = []

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

SHIFTS = ("constant", "residual_std", "active_residual_std", "extreme_spacing")


@dataclass(frozen=True)
class PlanSettings:
    """The parameters that shape a plan (the estimator's, resolved).

    Attributes
    ----------
    order : str or array-like
        ``"greedy"``, a fixed-order kind or an explicit permutation of the iterations.
    mode : {"two_sided", "negative_only"}
    alpha : float
        The disagreement target of the held-out correction (stored in the plan).
    alpha_fit : float
        The disagreement budget of the base thresholds.
    threshold : float
        Binary raw-score threshold of the label.
    margin : float
        Robustness margin of the base thresholds.
    shift : str or array-like
        Shape of the held-out shift.
    progress : bool
        Show a progress bar during the greedy search.
    """

    order: Any
    mode: str
    alpha: float
    alpha_fit: float
    threshold: float
    margin: float
    shift: Any
    progress: bool = False


def fixed_order(settings: PlanSettings, rows: F64, rng: np.random.Generator) -> I64 | None:
    """Return the order ``settings.order`` fixes (None: the greedy search chooses it).

    Parameters
    ----------
    settings : PlanSettings
        The plan's parameters.
    rows : ndarray of float64, shape (n_rows, n_iterations, n_classes)
        Per-iteration outputs of the order rows.
    rng : numpy.random.Generator
        Source of the ``"random"`` order.

    Returns
    -------
    ndarray of int64 or None
    """
    n_iter = rows.shape[1]
    if isinstance(settings.order, str):
        return None if settings.order == "greedy" else multi.fixed_order(rows, settings.order, rng=rng)
    fixed = np.asarray(settings.order, dtype=np.int64)
    if sorted(fixed.tolist()) != list(range(n_iter)):
        raise ValueError(
            f"The 'order' parameter of QWYC must be a permutation of range({n_iter}). "
            f"Got an array of {fixed.size} values that is not."
        )
    return fixed


def base_plan(settings: PlanSettings, rows: F64, costs: F64, fixed: I64 | None) -> QWYCPlan:
    """Order and base thresholds fit on the order rows (before the held-out correction).

    Parameters
    ----------
    settings : PlanSettings
        The plan's parameters.
    rows : ndarray of float64, shape (n_rows, n_iterations, n_classes)
        Per-iteration outputs of the order rows.
    costs : ndarray of float64, shape (n_iterations,)
        Cost of each iteration.
    fixed : ndarray of int64 or None
        A fixed order (:func:`fixed_order`), or None for the greedy search.

    Returns
    -------
    QWYCPlan
    """
    n_iter = rows.shape[1]
    alpha = float(settings.alpha)
    if rows.shape[2] > 1:
        order, eps = multi.greedy_plan_multiclass(rows, alpha=settings.alpha_fit, costs=costs, order=fixed)
        inf = np.full(n_iter, np.inf)
        return QWYCPlan(order, -inf, inf, eps, 0.0, "multiclass_margin", alpha)
    F2 = rows[:, :, 0]
    neg_only = settings.mode == "negative_only"
    thr, margin = float(settings.threshold), float(settings.margin)
    if fixed is None:
        order, en, ep = core.greedy_plan(
            F2, alpha=settings.alpha_fit, costs=costs, threshold=thr, negative_only=neg_only,
            progress=settings.progress, margin=margin,
        )
    else:
        order = fixed
        en, ep = core.fixed_order_thresholds(
            F2, order, alpha=settings.alpha_fit, threshold=thr, negative_only=neg_only, margin=margin
        )
    mode = "binary_negative_only" if neg_only else "binary_two_sided"
    return QWYCPlan(order, en, ep, None, thr, mode, alpha)


def shift_scale(settings: PlanSettings, base: QWYCPlan, rows: F64) -> F64:
    """Per-position shape ``sigma_r`` of the held-out shift of ``base``, from its order rows only.

    Parameters
    ----------
    settings : PlanSettings
        The plan's parameters (``shift``).
    base : QWYCPlan
        The base plan.
    rows : ndarray of float64, shape (n_rows, n_iterations, n_classes)
        Per-iteration outputs of the rows ``base`` was fit on.

    Returns
    -------
    ndarray of float64, shape (n_positions,) or (2, n_positions)
    """
    n_iter = base.n_positions
    kind = settings.shift
    if not isinstance(kind, str):
        sc = np.asarray(kind, dtype=np.float64)
        if sc.shape != (n_iter,) or not np.all(np.isfinite(sc)) or np.any(sc <= 0):
            raise ValueError(
                f"The 'shift' parameter of QWYC must be one of {SHIFTS} or {n_iter} positive finite "
                f"per-iteration scales. Got an array of shape {sc.shape} instead."
            )
        return sc[base.order]  # given per iteration, used per position
    if kind == "constant" or rows.shape[0] < 2:
        return np.ones(n_iter)
    if base.eps_margin is None:
        F2, thr = rows[:, :, 0], base.decision_threshold
        if kind == "residual_std":
            return core.residual_scale(F2, base.order)
        if kind == "extreme_spacing":
            return core.extreme_spacing(F2, base.order, base.eps_neg, base.eps_pos, threshold=thr)
        return core.active_residual_scale(F2, base.order, base.eps_neg, base.eps_pos, threshold=thr)
    if kind == "residual_std":
        return multi.residual_scale_multiclass(rows, base.order)
    if kind == "extreme_spacing":
        return multi.extreme_spacing_multiclass(rows, base.order, base.eps_margin)
    return multi.active_residual_scale_multiclass(rows, base.order, base.eps_margin)


def fit_family(settings: PlanSettings, rows: F64, costs: F64, rng: np.random.Generator) -> tuple[QWYCPlan, F64]:
    """Order, base thresholds and shift shape fit on ``rows`` alone: the plans one ``lambda`` moves.

    Parameters
    ----------
    settings : PlanSettings
        The plan's parameters.
    rows : ndarray of float64, shape (n_rows, n_iterations, n_classes)
        Per-iteration outputs of the order rows.
    costs : ndarray of float64, shape (n_iterations,)
        Cost of each iteration.
    rng : numpy.random.Generator
        Source of the ``"random"`` order.

    Returns
    -------
    base : QWYCPlan
    scale : ndarray of float64
    """
    base = base_plan(settings, rows, costs, fixed_order(settings, rows, rng))
    return base, shift_scale(settings, base, rows)


def shifted(base: QWYCPlan, scale: F64, lam: float, alpha: float) -> QWYCPlan:
    """Return ``base`` with every finite threshold moved outward by ``lam * scale`` (clipped).

    Parameters
    ----------
    base : QWYCPlan
        The base plan.
    scale : ndarray of float64
        The shift shape (:func:`shift_scale`).
    lam : float
        The shift.
    alpha : float
        The disagreement target the shifted plan records.

    Returns
    -------
    QWYCPlan
    """
    if base.eps_margin is None:
        thr = base.decision_threshold
        en, ep = core.shift_thresholds(base.eps_neg, base.eps_pos, lam, scale, thr)
        return QWYCPlan(base.order, en, ep, None, thr, base.mode, float(alpha))
    eps = multi.shift_margins(base.eps_margin, lam, scale)
    return QWYCPlan(base.order, base.eps_neg, base.eps_pos, eps, 0.0, base.mode, float(alpha))
