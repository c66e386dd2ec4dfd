"""Operations of a plan on precomputed per-iteration outputs, binary or multiclass alike.

``outputs`` has shape ``(n_rows, n_iterations, n_classes)`` (one class for binary models).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from . import _kernels as core
from . import _multiclass as multi
from ._format import QWYCPlan, ScoreMaps
from ._results import QWYCPrediction
from ._scores import _plan_sums as plan_sums
from ._scores import calibrate_exits

__all__: list[str] = []


def trace(plan: QWYCPlan, outputs: npt.NDArray[np.float64]) -> core.ExitTrace:
    """Exit scores, labels and positions of ``plan`` on per-iteration outputs (binary scores 1-D)."""
    if plan.eps_margin is None:
        return core.early_exit(
            outputs[:, :, 0], plan.order, plan.eps_neg, plan.eps_pos, threshold=plan.decision_threshold
        )
    return multi.early_exit_multiclass(outputs, plan.order, plan.eps_margin)


def exit_labels(plan: QWYCPlan, outputs: npt.NDArray[np.float64]) -> npt.NDArray[Any]:
    """Early-exit labels of ``plan`` on per-iteration outputs (shape ``(n_rows, n_iterations, n_classes)``)."""
    return trace(plan, outputs).labels


def prediction(
    plan: QWYCPlan,
    scores: npt.NDArray[np.float64],
    labels: npt.NDArray[Any],
    done: npt.NDArray[np.int64],
    k: int,
    maps: ScoreMaps | None,
) -> QWYCPrediction:
    """Return the prediction of exits ``done`` (positions); exited rows' scores mapped when ``maps`` is set."""
    if maps is not None:
        scores = calibrate_exits(maps, scores, labels, done, plan.decision_threshold)
    return QWYCPrediction(scores, labels, done * k, done)


def full_labels(plan: QWYCPlan, outputs: npt.NDArray[np.float64]) -> npt.NDArray[Any]:
    """Labels of the full ensemble, summed in ``plan`` order."""
    if outputs.shape[2] == 1:  # compiled: the same left-to-right sums
        F = np.ascontiguousarray(outputs[:, :, 0], dtype=np.float64)
        return plan_sums(F, np.ascontiguousarray(plan.order, dtype=np.int64)) > plan.decision_threshold
    C = np.zeros((outputs.shape[0], outputs.shape[2]))
    for t in plan.order.tolist():  # left to right, as the cumulative sum's last column, without the n x T copy
        C += outputs[:, t, :]
    return C[:, 0] > plan.decision_threshold if outputs.shape[2] == 1 else np.argmax(C, axis=1)


def critical(
    plan: QWYCPlan, scale: npt.NDArray[np.float64], outputs: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Critical shift of each row under ``plan`` shifted by ``lambda * scale`` (loss ``1{lambda < crit}``)."""
    if plan.eps_margin is None:
        return core.conformal_critical(
            outputs[:, :, 0], plan.order, plan.eps_neg, plan.eps_pos, scale, threshold=plan.decision_threshold
        )
    return multi.conformal_critical_multiclass(outputs, plan.order, plan.eps_margin, scale)
