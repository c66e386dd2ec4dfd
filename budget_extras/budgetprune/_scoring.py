"""Validation scores of a pruning from its raw scores: ``scoring=`` and the trivial-model floor."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from ..core._ensemble import TreeEnsemble
from ..core._scoring import resolve_scoring as resolve_scoring_core
from ._error_terms import objective_name

__all__ = ["constant_raw", "resolve_scoring"]


def _kind(forest: TreeEnsemble) -> tuple[str, int]:
    obj = objective_name(forest)
    if obj in ("multiclass", "multiclassova", "softmax"):
        return "multiclass", forest.num_tree_per_iteration
    if obj in ("binary", "cross_entropy", "xentropy"):
        return "binary", 2
    return "regression", 0


class _FixedClassifier(ClassifierMixin, BaseEstimator):
    """Stand-in estimator whose predictions for the scored rows are precomputed from raw scores."""

    def __init__(self, raw: Any = None, kind: str = "binary", scale: float = 1.0) -> None:
        self.raw = raw
        self.kind = kind
        self.scale = scale

    @property
    def classes_(self) -> np.ndarray:
        return np.arange(2 if self.raw.ndim == 1 else self.raw.shape[1])

    def decision_function(self, X: Any) -> np.ndarray:
        return self.raw / self.scale

    def predict_proba(self, X: Any) -> np.ndarray:
        z = self.raw / self.scale
        if z.ndim == 1:
            p = 1.0 / (1.0 + np.exp(-z))
            return np.stack([1 - p, p], axis=1)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, X: Any) -> np.ndarray:
        return (self.raw > 0).astype(np.int64) if self.raw.ndim == 1 else np.argmax(self.raw, axis=1)


class _FixedRegressor(RegressorMixin, BaseEstimator):
    def __init__(self, raw: Any = None, scale: float = 1.0) -> None:
        self.raw = raw
        self.scale = scale

    def predict(self, X: Any) -> np.ndarray:
        return self.raw / self.scale


def resolve_scoring(scoring: Any, forest: TreeEnsemble) -> tuple[str, Any]:
    """Return ``(name, score(raw, X, y) -> float)`` (greater is better, scikit-learn's convention).

    ``scoring``: None (accuracy for classifiers, R^2 otherwise) or any value
    :func:`budget_extras.core._scoring.resolve_scoring` accepts. A scorer receives an estimator
    whose ``predict``, ``predict_proba`` and ``decision_function`` answer from the raw scores
    of the scored rows.
    """
    kind, _ = _kind(forest)
    scale = forest.n_trees // forest.num_tree_per_iteration if forest.average_output else 1

    def view(raw: np.ndarray) -> BaseEstimator:
        return _FixedRegressor(raw, scale) if kind == "regression" else _FixedClassifier(raw, kind, scale)

    default = "accuracy" if kind != "regression" else "r2"
    name, score_view = resolve_scoring_core(scoring, owner="BudgetPrune", default=default, view=view)

    def score(raw: np.ndarray, X: Any, y: np.ndarray) -> float:
        yy = np.asarray(y)
        if kind != "regression":
            yy = yy.astype(np.int64)
            fast = _fast(name, raw, yy) if scoring in ("roc_auc", "accuracy") or scoring is None else None
            if fast is not None:
                return fast
        return score_view(raw, X, yy)

    return name, score


def _fast(name: str, raw: np.ndarray, y: np.ndarray) -> float | None:
    """Accuracy, or binary ROC AUC (Mann-Whitney, ties counted 1/2), as scikit-learn computes them, without its checks.

    The searches score hundreds of candidate models; scikit-learn's scorer spends more time
    validating its input than scoring. None for anything else (multiclass AUC, one class only):
    scikit-learn scores it.
    """
    if name == "accuracy":
        pred = (raw > 0).astype(np.int64) if raw.ndim == 1 else np.argmax(raw, axis=1)
        return float(np.mean(pred == y))
    pos = y == 1
    n_pos = int(pos.sum())
    if name != "roc_auc" or raw.ndim != 1 or n_pos in (0, y.size) or not np.isin(y, (0, 1)).all():
        return None
    from scipy.stats import rankdata

    ranks = rankdata(raw)
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * (y.size - n_pos)))


def constant_raw(forest: TreeEnsemble, y_train: np.ndarray, n_rows: int) -> np.ndarray:
    """Raw scores of the best constant model (the training prior) for ``n_rows`` rows."""
    kind, k = _kind(forest)
    scale = forest.n_trees // forest.num_tree_per_iteration if forest.average_output else 1
    y = np.asarray(y_train, dtype=np.float64)
    if kind == "binary":
        p = float(np.clip(np.mean(y > 0.5), 1e-6, 1 - 1e-6))
        return np.full(n_rows, np.log(p / (1 - p)) * scale)
    if kind == "multiclass":
        prior = np.clip(np.bincount(y.astype(np.int64), minlength=k) / max(y.size, 1), 1e-6, None)
        return np.tile(np.log(prior) * scale, (n_rows, 1))
    return np.full(n_rows, float(np.mean(y)) * scale)
