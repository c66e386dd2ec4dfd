"""Validation scores of an Adapt-GBRT system from its probabilities: the reading of ``scoring=``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ..core._scoring import resolve_scoring as resolve_scoring_core

__all__ = ["resolve_scoring"]

#: ``score(proba, y, classes) -> float``, greater is better.
Score = Callable[[np.ndarray, np.ndarray, np.ndarray], float]


class _FixedProba(ClassifierMixin, BaseEstimator):
    """A classifier that returns fixed probabilities.

    It passes a system's validation output to a scikit-learn scorer.
    """

    def __init__(self, proba: Any = None, classes: Any = None) -> None:
        self.proba = proba
        self.classes = classes

    def fit(self, X: Any, y: Any) -> _FixedProba:  # pragma: no cover - never fitted
        return self

    @property
    def classes_(self) -> np.ndarray:
        return np.asarray(self.classes)

    def predict_proba(self, X: Any) -> np.ndarray:
        return np.asarray(self.proba)

    def predict(self, X: Any) -> np.ndarray:
        return np.asarray(self.classes)[np.argmax(self.proba, axis=1)]

    def decision_function(self, X: Any) -> np.ndarray:
        p = np.asarray(self.proba)
        return p[:, 1] if p.shape[1] == 2 else p


def _accuracy(view: _FixedProba, X: Any, y: np.ndarray) -> float:
    return float(np.mean(view.predict(X) == y))


def resolve_scoring(scoring: Any) -> tuple[str, Score]:
    """Return ``(name, score(proba, y, classes) -> float)`` for ``scoring`` (None: accuracy).

    Parameters
    ----------
    scoring : None, str or callable
        AdaptGBRT's ``scoring`` (see :func:`budget_extras.core._scoring.resolve_scoring`).

    Returns
    -------
    name : str
    score : callable
        Greater is better.
    """
    name, score_view = resolve_scoring_core(
        scoring, owner="AdaptGBRT", default=("accuracy", _accuracy), view=lambda pc: _FixedProba(*pc)
    )

    def score(proba: np.ndarray, y: np.ndarray, classes: np.ndarray) -> float:
        return score_view((proba, classes), np.zeros((len(y), 1)), y)

    return name, score
