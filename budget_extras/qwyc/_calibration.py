"""The held-out correction of a QWYC plan: one conformal shift ``lambda`` of all thresholds.

The base plan's thresholds sit at extreme values of the rows that fit it, so new rows cross
them; all thresholds move outward by ``lambda * scale``, with ``lambda`` chosen by conformal risk
control on rows that did not fit the plan being scored (docs/qwyc_design.md):

* ``holdout="crossfit"``: each of ``n_folds`` folds is scored by the plan fit on the other folds;
  ``lambda`` is chosen on all these out-of-fold rows and shifts the plan fit on all rows
  (:func:`crossfit_lambda`);
* a share or explicit held-out rows: the plan is fit on the other rows (:func:`split_rows`) and
  ``lambda`` on the held-out ones (:func:`correct`);
* no held-out rows: no shift (the paper's in-sample fit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _kernels as core
from . import _multiclass as multi
from ._format import QWYCPlan
from ._plans import critical, exit_labels, full_labels, trace
from ._solver import PlanSettings, fit_family, shifted

__all__: list[str] = []

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

CROSSFIT = "crossfit"


@dataclass(frozen=True)
class Calibrated:
    """A plan with its held-out correction.

    Attributes
    ----------
    base_plan : QWYCPlan
        Order and base thresholds.
    shift_scale : ndarray of float64
        ``sigma_r`` per position.
    plan : QWYCPlan
        ``base_plan`` shifted by ``lambda_ * shift_scale``.
    lambda_ : float
        The conformal shift (0 without held-out rows).
    n_holdout : int
        Rows the shift was chosen on.
    holdout_disagreement : float
        Their disagreement with the full model (NaN without held-out rows).
    fold : ndarray of int64 or None
        ``holdout="crossfit"``: the fold of each calibration row.
    fold_fits : tuple of (QWYCPlan, ndarray)
        ``holdout="crossfit"``: the base plan and shift shape fit without each fold.
    held_out : ndarray of int64 or None
        Otherwise: the rows of ``outputs`` that chose the shift.
    """

    base_plan: QWYCPlan
    shift_scale: F64
    plan: QWYCPlan
    lambda_: float
    n_holdout: int
    holdout_disagreement: float
    fold: npt.NDArray[np.int64] | None = None
    fold_fits: tuple[tuple[QWYCPlan, F64], ...] = ()
    held_out: I64 | None = None

    def _parts(self) -> list[I64]:
        """Rows of each fold (cross-fitting) or the held-out rows, in the order :meth:`at` returns them."""
        if self.fold is None:
            return [self.held_out if self.held_out is not None else np.arange(0)]
        return [np.flatnonzero(self.fold == j) for j in range(len(self.fold_fits))]

    def _fits(self) -> tuple[tuple[QWYCPlan, F64], ...]:
        return self.fold_fits if self.fold is not None else ((self.base_plan, self.shift_scale),)

    def held_out_blocks(self, outputs: F64) -> tuple[list[F64], npt.NDArray[Any]]:
        """Return the held-out rows' outputs, one block per plan that did not see them, and their full labels.

        Parameters
        ----------
        outputs : ndarray of float64, shape (n_rows, n_iterations, n_classes)
            The outputs the plan was calibrated on.

        Returns
        -------
        blocks : list of ndarray of float64
            With cross-fitting one block per fold, else the held-out rows.
        labels : ndarray
            The full model's labels of the rows of ``blocks`` in turn (summed in their plan's order).
        """
        blocks = [outputs[idx] for idx in self._parts()]
        labels = [full_labels(base, rows) for rows, (base, _) in zip(blocks, self._fits(), strict=True)]
        return blocks, np.concatenate(labels)

    def at(self, lam: float, blocks: list[F64]) -> tuple[QWYCPlan, npt.NDArray[np.int64], npt.NDArray[Any]]:
        """Return the plan shifted by ``lam`` and the exits of the held-out rows under it.

        With cross-fitting every calibration row is scored by its fold's plan shifted by ``lam``.

        Parameters
        ----------
        lam : float
            The shift.
        blocks : list of ndarray of float64
            The held-out rows' outputs (:meth:`held_out_blocks`).

        Returns
        -------
        plan : QWYCPlan
            ``base_plan`` shifted by ``lam``.
        n_evaluated : ndarray of int64
            Positions each held-out row evaluates (rows of ``blocks`` in turn).
        labels : ndarray
            Their early-exit labels.
        """
        alpha = self.plan.alpha
        done, labels = [], []
        for rows, (base, scale) in zip(blocks, self._fits(), strict=True):
            tr = trace(shifted(base, scale, lam, alpha), rows)
            done.append(tr.n_evaluated)
            labels.append(tr.labels)
        return shifted(self.base_plan, self.shift_scale, lam, alpha), np.concatenate(done), np.concatenate(labels)


def split_rows(holdout: Any, n: int, n_valid: int, rng: np.random.Generator) -> tuple[I64, I64]:
    """Rows that choose the order and base thresholds, and held-out rows of the correction.

    Parameters
    ----------
    holdout : float or None
        Share of the rows held out (ignored with explicit held-out rows).
    n : int
        All rows (calibration rows, then the ``n_valid`` explicit held-out rows).
    n_valid : int
        Explicit held-out rows at the end.
    rng : numpy.random.Generator
        Source of the split.

    Returns
    -------
    order_rows, held_out_rows : ndarray of int64
    """
    share = float(holdout or 0.0)
    if n_valid:
        return np.arange(n - n_valid), np.arange(n - n_valid, n)
    if share > 0:
        perm = rng.permutation(n)
        n_b = round(share * n)
        if n_b < 1 or n - n_b < 1:
            raise ValueError(f"The 'holdout' fraction {share} leaves an empty part of the {n} calibration rows.")
        return np.sort(perm[n_b:]), np.sort(perm[:n_b])
    return np.arange(n), np.arange(0)


def correct(base: QWYCPlan, scale: F64, holdout: F64 | None, alpha: float) -> tuple[QWYCPlan, float]:
    """Shift the base plan by conformal risk control on ``holdout``; return the plan and the shift.

    Parameters
    ----------
    base : QWYCPlan
        The base plan.
    scale : ndarray of float64
        Its shift shape.
    holdout : ndarray of float64, shape (n_rows, n_iterations, n_classes), or None
        Per-iteration outputs of held-out rows (None: no shift).
    alpha : float
        The disagreement target.

    Returns
    -------
    plan : QWYCPlan
    lambda_ : float
    """
    if holdout is None:
        return base, 0.0
    if base.eps_margin is None:
        lam = core.widen_conformal(
            holdout[:, :, 0], base.order, base.eps_neg, base.eps_pos, scale, alpha=alpha,
            threshold=base.decision_threshold,
        )
    else:
        lam = multi.widen_conformal_multiclass(holdout, base.order, base.eps_margin, scale, alpha=alpha)
    return shifted(base, scale, lam, alpha), lam


def crossfit_lambda(
    settings: PlanSettings, outputs: F64, costs: F64, fold: npt.NDArray[Any], order_seed: int
) -> tuple[float, float, tuple[tuple[QWYCPlan, F64], ...]]:
    """Cross-fitted conformal shift, the out-of-fold disagreement at it and the fold plans.

    The rows of fold ``j`` get their critical shifts from the plan fit on the other folds
    only; ``lambda`` is the conformal shift of all these out-of-fold critical shifts, then
    moved up until every fold's rows that are right in exact arithmetic are right under the
    predictor's floating-point thresholds of their fold plan (``settle_lambda``).

    Parameters
    ----------
    settings : PlanSettings
        The plan's parameters.
    outputs : ndarray of float64, shape (n_rows, n_iterations, n_classes)
        Per-iteration outputs of the calibration rows.
    costs : ndarray of float64, shape (n_iterations,)
        Cost of each iteration.
    fold : ndarray of int, shape (n_rows,)
        Fold of each row, ``0 .. n_folds - 1``.
    order_seed : int
        Seed of the ``"random"`` order of every fold plan.

    Returns
    -------
    lambda_ : float
    disagreement : float
        Share of rows whose label under their fold plan, shifted by ``lambda_``, differs.
    fits : tuple of (QWYCPlan, ndarray)
        Base plan and shift shape fit without each fold.
    """
    alpha = settings.alpha
    crit = np.empty(outputs.shape[0])
    fits = []
    for j in range(int(fold.max()) + 1):
        base, scale = fit_family(settings, outputs[fold != j], costs, np.random.default_rng(order_seed))
        crit[fold == j] = critical(base, scale, outputs[fold == j])
        fits.append((base, scale))
    lam = core.conformal_lambda(crit, alpha)
    for j, (base, scale) in enumerate(fits):
        if math.isfinite(lam):
            rows = outputs[fold == j]

            def labels_at(m: float, b: QWYCPlan = base, s: Any = scale, r: Any = rows) -> npt.NDArray[Any]:
                return exit_labels(shifted(b, s, m, alpha), r)

            lam = core.settle_lambda(lam, crit[fold == j] <= lam, full_labels(base, rows), labels_at)
    wrong = np.zeros(outputs.shape[0], dtype=bool)
    for j, (base, scale) in enumerate(fits):
        rows = outputs[fold == j]
        wrong[fold == j] = exit_labels(shifted(base, scale, lam, alpha), rows) != full_labels(base, rows)
    return lam, float(wrong.mean()), tuple(fits)


def calibrate(
    settings: PlanSettings,
    outputs: F64,
    costs: F64,
    *,
    holdout: Any,
    n_folds: int,
    n_valid: int,
    rng: np.random.Generator,
) -> Calibrated:
    """Fit the plan and its held-out correction on calibration rows (the body of ``QWYC.fit``).

    Parameters
    ----------
    settings : PlanSettings
        The plan's parameters.
    outputs : ndarray of float64, shape (n_rows, n_iterations, n_classes)
        Per-iteration outputs of the calibration rows, then of the ``n_valid`` explicit held-out rows.
    costs : ndarray of float64, shape (n_iterations,)
        Cost of each iteration.
    holdout : "crossfit", float or None
        The estimator's ``holdout``.
    n_folds : int
        Folds of the cross-fit.
    n_valid : int
        Explicit held-out rows at the end of ``outputs`` (then ``holdout`` is not used).
    rng : numpy.random.Generator
        Source of the folds, the split and the ``"random"`` order.

    Returns
    -------
    Calibrated
    """
    n = outputs.shape[0]
    if holdout == CROSSFIT and not n_valid:
        if n < n_folds:
            raise ValueError(f"QWYC's cross-fitted correction needs at least n_folds={n_folds} rows. Got {n}.")
        fold = rng.permutation(n) % n_folds
        order_seed = int(rng.integers(2**63 - 1))
        lam, dis, fits = crossfit_lambda(settings, outputs, costs, fold, order_seed)
        base, scale = fit_family(settings, outputs, costs, np.random.default_rng(order_seed))
        return Calibrated(base, scale, shifted(base, scale, lam, settings.alpha), lam, n, dis, fold, fits)
    idx_a, idx_b = split_rows(None if holdout == CROSSFIT else holdout, n, n_valid, rng)
    base, scale = fit_family(settings, outputs[idx_a], costs, rng)
    plan, lam = correct(base, scale, outputs[idx_b] if idx_b.size else None, settings.alpha)
    dis = math.nan
    if idx_b.size:
        dis = float(np.mean(exit_labels(plan, outputs[idx_b]) != full_labels(plan, outputs[idx_b])))
    return Calibrated(base, scale, plan, lam, int(idx_b.size), dis, held_out=idx_b)
