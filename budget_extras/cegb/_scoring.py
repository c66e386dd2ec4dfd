"""Validation scores for :func:`train_to_budget`: defaults per objective, sklearn scorers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import accuracy_score, mean_squared_error, roc_auc_score

from .._compat import param_aliases
from ..core._scoring import Scorer
from ..core._scoring import resolve_scoring as resolve_scoring_core

__all__ = ["objective_kind", "readable", "resolve_scoring"]

_OBJECTIVE_KEYS = ("objective", "objective_type", "app", "application", "loss")
_MULTICLASS = {"multiclass", "softmax", "multiclassova", "multiclass_ova", "ova", "ovr"}

def objective_kind(params: Mapping[str, Any]) -> str:
    """``"binary"``, ``"multiclass"`` or ``"regression"`` from LightGBM parameters."""
    obj: Any = "regression"
    for key in _OBJECTIVE_KEYS:
        if key in params:
            obj = params[key]
            break
    if not isinstance(obj, str):
        return "regression"
    obj = obj.strip().lower()
    if obj == "binary":
        return "binary"
    if obj in _MULTICLASS:
        return "multiclass"
    return "regression"


class _BoosterModel(BaseEstimator):
    """A trained Booster seen as a fitted scikit-learn estimator (for sklearn scorers)."""

    def __init__(self, booster: Any = None, kind: str = "regression") -> None:
        self.booster = booster
        self.kind = kind

    def _raw(self, X: Any) -> npt.NDArray[np.float64]:
        return np.asarray(self.booster.predict(X), dtype=np.float64)


class _Regressor(RegressorMixin, _BoosterModel):
    def predict(self, X: Any) -> npt.NDArray[np.float64]:
        return self._raw(X)


class _Classifier(ClassifierMixin, _BoosterModel):
    def __init__(self, booster: Any = None, kind: str = "binary", n_classes: int = 2) -> None:
        super().__init__(booster, kind)
        self.n_classes = n_classes
        self.classes_ = np.arange(n_classes)

    def predict_proba(self, X: Any) -> npt.NDArray[np.float64]:
        p = self._raw(X)
        if p.ndim == 1:
            return np.column_stack([1.0 - p, p])
        return p

    def decision_function(self, X: Any) -> npt.NDArray[np.float64]:
        raw = np.asarray(self.booster.predict(X, raw_score=True), dtype=np.float64)
        return raw

    def predict(self, X: Any) -> npt.NDArray[np.int64]:
        return np.asarray(self.predict_proba(X).argmax(axis=1), dtype=np.int64)


def _neg_l2(est: Any, X: Any, y: npt.NDArray[Any]) -> float:
    return -float(mean_squared_error(y, est.predict(X)))


def _auc(est: Any, X: Any, y: npt.NDArray[Any]) -> float:
    return float(roc_auc_score(y, est.predict_proba(X)[:, 1]))


def _accuracy(est: Any, X: Any, y: npt.NDArray[Any]) -> float:
    return float(accuracy_score(y, est.predict(X)))


_DEFAULTS: dict[str, tuple[str, Scorer]] = {
    "binary": ("roc_auc", _auc),
    "multiclass": ("accuracy", _accuracy),
    "regression": ("neg_l2", _neg_l2),
}

#: LightGBM regression metrics (every alias) in ``params['metric']`` and the scikit-learn scorer
#: a regression is then chosen by (None: the default, minus the mean squared error, shown as RMSE).
_REGRESSION_METRICS: dict[str, str | None] = {
    **dict.fromkeys(("rmse", "root_mean_squared_error", "l2_root"), None),
    **dict.fromkeys(("l2", "mean_squared_error", "mse", "regression_l2", "regression"), "neg_mean_squared_error"),
    **dict.fromkeys(("l1", "mean_absolute_error", "mae", "regression_l1"), "neg_mean_absolute_error"),
    **dict.fromkeys(("mape", "mean_absolute_percentage_error"), "neg_mean_absolute_percentage_error"),
}


def _params_metric(params: Mapping[str, Any]) -> str | None:
    """Return the first metric ``params`` names (any alias of ``metric``), lower case, or None."""
    for key in sorted(param_aliases("metric")):
        value = params.get(key)
        names = value.split(",") if isinstance(value, str) else value if isinstance(value, (list, tuple)) else []
        for name in names:
            if isinstance(name, str) and name.strip():
                return name.strip().lower()
    return None


def readable(name: str, score: float) -> tuple[str, float]:
    """Return the metric a user reads for an internal (higher-is-better) score: ``(name, value)``.

    The default regression score, minus the mean squared error (``"neg_l2"``), reads as the
    root mean squared error (``"rmse"``); a scikit-learn error scorer ``"neg_<error>"`` as the
    positive ``"<error>"`` (lower is better); any other score (AUC, accuracy, a callable's) as
    itself.

    Parameters
    ----------
    name : str
        The score's name (``BudgetTrainResult.scoring``).
    score : float
        The score, higher is better.

    Returns
    -------
    name : str
    value : float
    """
    if name == "neg_l2":
        return "rmse", math.sqrt(max(0.0, -float(score)))
    if name.startswith("neg_"):
        return name[4:], -float(score)
    return name, float(score)


def resolve_scoring(scoring: Any, params: Mapping[str, Any]) -> tuple[str, Scorer]:
    """Return ``(name, score(booster, X, y))`` for the ``scoring`` argument.

    ``None`` gives AUC for ``binary``, accuracy for multiclass objectives and, otherwise, the
    error ``params['metric']`` names (LightGBM's ``l1``, ``l2``, ``mape`` or their aliases, as
    the negative scikit-learn scorer) or minus the mean squared error (``"neg_l2"``, read as
    RMSE, see :func:`readable`); other values are resolved by
    :func:`budget_extras.core._scoring.resolve_scoring`. A scorer receives an estimator that
    wraps the booster (``predict``; for classification also ``predict_proba``,
    ``decision_function`` and ``classes_ = 0..n_classes-1``).

    Raises
    ------
    ValueError
        If ``scoring`` is an unknown scorer name.
    TypeError
        If ``scoring`` is neither None, a string nor callable.
    """
    kind = objective_kind(params)
    n_classes = int(params.get("num_class", params.get("num_classes", 2))) if kind == "multiclass" else 2

    def view(booster: Any) -> _BoosterModel:
        if kind == "regression":
            return _Regressor(booster, kind)
        return _Classifier(booster, kind, n_classes)

    default: str | tuple[str, Scorer] = _DEFAULTS[kind]
    if kind == "regression":
        default = _REGRESSION_METRICS.get(_params_metric(params) or "rmse") or default
    name, score = resolve_scoring_core(scoring, owner="train_to_budget", default=default, view=view)
    if scoring is None:
        return name, score

    def named(booster: Any, X: Any, y: Any) -> float:
        try:
            return score(booster, X, y)
        except (ValueError, TypeError) as exc:  # e.g. "accuracy" of a regression: name the argument
            raise ValueError(
                f"The 'scoring' argument {name!r} of train_to_budget failed on a {kind} model's "
                f"validation predictions: {exc}"
            ) from exc

    return name, named
