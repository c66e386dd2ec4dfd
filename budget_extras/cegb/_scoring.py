"""Validation scores for :func:`train_to_budget`: defaults per objective, sklearn scorers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import accuracy_score, mean_squared_error, roc_auc_score

from ..core._scoring import Scorer
from ..core._scoring import resolve_scoring as resolve_scoring_core

__all__ = ["objective_kind", "resolve_scoring"]

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


def resolve_scoring(scoring: Any, params: Mapping[str, Any]) -> tuple[str, Scorer]:
    """Return ``(name, score(booster, X, y))`` for the ``scoring`` argument.

    ``None`` gives AUC for ``binary``, accuracy for multiclass objectives and minus the mean
    squared error (``"neg_l2"``) otherwise; other values are resolved by
    :func:`budget_extras.core._scoring.resolve_scoring`. A scorer receives an estimator that
    wraps the booster (``predict``; for classification also ``predict_proba``,
    ``decision_function`` and ``classes_ = 0..n_classes-1``).

    Raises
    ------
    ValueError
        If ``scoring`` is an unknown scorer name; when scoring, if the scorer fails on the
        predictions or returns NaN.
    TypeError
        If ``scoring`` is neither None, a string nor callable.
    """
    kind = objective_kind(params)
    n_classes = int(params.get("num_class", params.get("num_classes", 2))) if kind == "multiclass" else 2

    def view(booster: Any) -> _BoosterModel:
        if kind == "regression":
            return _Regressor(booster, kind)
        return _Classifier(booster, kind, n_classes)

    name, score = resolve_scoring_core(scoring, owner="train_to_budget", default=_DEFAULTS[kind], view=view)

    def named(booster: Any, X: Any, y: Any) -> float:
        try:
            value = score(booster, X, y)
        except (ValueError, TypeError) as exc:  # e.g. "accuracy" of a regression: name the argument
            if scoring is None:
                raise
            raise ValueError(
                f"The 'scoring' argument {name!r} of train_to_budget failed on a {kind} model's "
                f"validation predictions: {exc}"
            ) from exc
        if math.isnan(value):  # NaN compares false with every score: the choice would be arbitrary
            raise ValueError(
                f"The 'scoring' argument {name!r} of train_to_budget must return a number. Got NaN on a "
                f"{kind} model's validation predictions."
            )
        return value

    return name, named
