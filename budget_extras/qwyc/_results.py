"""What :class:`~budget_extras.qwyc.QWYC` returns: a prediction and the outcome of a fit."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core._status import MethodResult, Status

__all__ = ["QWYCPrediction", "QWYCResult"]


@dataclass(frozen=True)
class QWYCPrediction:
    """Result of :meth:`QWYC.predict`.

    Attributes
    ----------
    scores : ndarray of float64, shape (n_rows,) or (n_rows, n_classes)
        Partial raw score at the position where the row stopped (the full raw score, summed
        in plan order, for rows that went to the end); with calibrated scores (``scores_``)
        the stopped rows' partial scores mapped to the expected full raw score. The fork's
        native predictor (``pred_early_stop=True`` on the saved model) returns the same doubles.
    labels : ndarray, shape (n_rows,)
        Decided label: bool for binary (``True`` = positive), class index for multiclass.
    trees_evaluated : ndarray of int64, shape (n_rows,)
        Number of trees each row evaluated.
    positions_evaluated : ndarray of int64, shape (n_rows,)
        Number of plan positions (iterations) each row evaluated.
    """

    scores: npt.NDArray[np.float64]
    labels: npt.NDArray[Any]
    trees_evaluated: npt.NDArray[np.int64]
    positions_evaluated: npt.NDArray[np.int64]

    @property
    def probabilities(self) -> npt.NDArray[np.float64]:
        """Sigmoid (binary) or softmax (multiclass) of ``scores``, as LightGBM's predict."""
        if self.scores.ndim == 1:
            return 1.0 / (1.0 + np.exp(-self.scores))
        z = np.exp(self.scores - self.scores.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class QWYCResult(MethodResult):
    """Outcome of :meth:`QWYC.fit` (scipy-style result object).

    Attributes
    ----------
    status : Status
        ``SUCCESS``: a plan was found; ``TRIVIAL``: the held-out correction allows no early exit
        (``lambda_`` is infinite, every row evaluates every tree: the plan is the full model).
    success : bool
        ``status is Status.SUCCESS``.
    message : str
    alpha : float
        The disagreement target.
    lambda_ : float
        The conformal shift (0 without held-out rows).
    calibration_disagreement, holdout_disagreement : float
        Share of calibration (held-out) rows whose early-exit label differs from the full model's;
        with ``holdout="crossfit"`` the held-out share is that of all calibration rows, each under
        the shifted plan of the folds that did not contain it.
    mean_trees_evaluated : float
        Mean trees evaluated per calibration row.
    """

    alpha: float
    lambda_: float
    calibration_disagreement: float
    holdout_disagreement: float
    mean_trees_evaluated: float


def qwyc_result(
    alpha: float,
    lambda_: float,
    calibration_disagreement: float,
    holdout_disagreement: float,
    mean_trees: float,
    *,
    n_holdout: int = 0,
) -> QWYCResult:
    """Return the outcome of a QWYC fit, ``TRIVIAL`` when the held-out shift allows no early exit.

    The message of a plan says what its ``alpha`` bounds: with held-out rows, the expected
    disagreement on new exchangeable rows (over the draw of the calibration rows, not every
    draw), and whether there are too few held-out rows for ``alpha`` (``few_rows``).

    Parameters
    ----------
    alpha : float
        The disagreement target.
    lambda_ : float
        The conformal shift (``inf``: never exit early; ``-inf`` is a plan too).
    calibration_disagreement, holdout_disagreement, mean_trees : float
        The fit's measurements (NaN where not measured).
    n_holdout : int, default 0
        Rows the shift was chosen on (0: an in-sample plan, no shift).

    Returns
    -------
    QWYCResult
    """
    if lambda_ == math.inf:
        status, message = Status.TRIVIAL, (
            "no early exit: the held-out correction found no threshold shift that keeps the "
            f"disagreement within alpha={alpha:g}; every row evaluates every tree"
        )
    elif n_holdout == 0:
        status, message = Status.SUCCESS, (
            f"plan found for alpha={alpha:g} on the calibration rows (in-sample: no held-out guarantee)"
        )
    else:
        status, message = Status.SUCCESS, (
            f"plan found for alpha={alpha:g}: new rows exchangeable with the calibration rows disagree "
            "with the full model on at most alpha of them in expectation over the calibration draw"
        )
    if n_holdout and few_rows(alpha, n_holdout):
        message += (
            f"; {n_holdout} held-out rows are few for alpha={alpha:g} (fewer than 10 / alpha = "
            f"{math.ceil(10 / alpha - 1e-9)}): one draw's disagreement can exceed alpha by much"
        )
    return QWYCResult(
        status=status,
        message=message,
        alpha=alpha,
        lambda_=float(lambda_),
        calibration_disagreement=float(calibration_disagreement),
        holdout_disagreement=float(holdout_disagreement),
        mean_trees_evaluated=float(mean_trees),
    )


def few_rows(alpha: float, n_holdout: int) -> bool:
    """Return True when ``n_holdout`` held-out rows allow fewer than 10 disagreements at ``alpha``.

    The conformal shift bounds the expected disagreement; with ``n * alpha`` below 10 one draw's
    disagreement on new rows spreads by a third of alpha or more around it.

    Parameters
    ----------
    alpha : float
        The disagreement target.
    n_holdout : int
        Rows the shift was chosen on.

    Returns
    -------
    bool
    """
    return 0 < n_holdout and alpha > 0 and n_holdout * alpha < 10
