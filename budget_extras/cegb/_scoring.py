"""Validation scores for :func:`train_to_budget`: defaults per objective, sklearn scorers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import accuracy_score, get_scorer, mean_squared_error, roc_auc_score

__all__ = ["objective_kind", "resolve_scoring"]

_OBJECTIVE_KEYS = ("objective", "objective_type", "app", "application", "loss")
_MULTICLASS = {"multiclass", "softmax", "multiclassova", "multiclass_ova", "ova", "ovr"}

Scorer = Callable[[Any, Any, npt.NDArray[Any]], float]


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


def _default(kind: str) -> tuple[str, Scorer]:
    if kind == "binary":
        return "roc_auc", lambda b, X, y: float(roc_auc_score(y, b.predict(X)))
    if kind == "multiclass":
        return "accuracy", lambda b, X, y: float(
            accuracy_score(y, np.asarray(b.predict(X)).reshape(len(y), -1).argmax(axis=1))
        )
    return "neg_l2", lambda b, X, y: -float(mean_squared_error(y, b.predict(X)))


def resolve_scoring(scoring: Any, params: Mapping[str, Any]) -> tuple[str, Scorer]:
    """Return ``(name, score(booster, X, y))`` for the ``scoring`` argument.

    ``None`` gives AUC for ``binary``, accuracy for multiclass objectives and minus the mean
    squared error otherwise. A string is an sklearn scorer name (``sklearn.metrics.get_scorer``);
    a callable is called as ``scoring(estimator, X, y)`` like an sklearn scorer, where
    ``estimator`` wraps the booster (``predict``; for classification also ``predict_proba``,
    ``decision_function`` and ``classes_ = 0..n_classes-1``).

    Raises
    ------
    ValueError
        If ``scoring`` is an unknown scorer name.
    TypeError
        If ``scoring`` is neither None, a string nor callable.
    """
    kind = objective_kind(params)
    if scoring is None:
        return _default(kind)
    if isinstance(scoring, str):
        try:
            sk = get_scorer(scoring)
        except ValueError as exc:
            raise ValueError(
                f"The 'scoring' argument must be None, a callable or an sklearn scorer name. Got {scoring!r}."
            ) from exc
        name = scoring
    elif callable(scoring):
        sk = scoring
        name = getattr(scoring, "__name__", type(scoring).__name__)
    else:
        raise TypeError(
            f"The 'scoring' argument must be None, a callable or an sklearn scorer name. Got {type(scoring).__name__}."
        )
    n_classes = int(params.get("num_class", params.get("num_classes", 2))) if kind == "multiclass" else 2

    def score(booster: Any, X: Any, y: npt.NDArray[Any]) -> float:
        est: _BoosterModel
        if kind == "regression":
            est = _Regressor(booster, kind)
        else:
            est = _Classifier(booster, kind, n_classes)
        return float(sk(est, X, y))

    return name, score
