"""Adapter for the expensive model f0 of Adapt-GBRT: probabilities and per-row feature usage."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..core._ensemble import TreeEnsemble
from ..core._validation import column_names, pandas_categories
from ._paths import booster_features_used, sklearn_tree_features_used

__all__ = ["F0Model"]

_CLASSIFIERS = ("binary", "cross_entropy", "xentropy", "multiclass", "multiclassova")


def _is_booster(obj: Any) -> bool:
    return type(obj).__name__ == "Booster" and hasattr(obj, "dump_model")


class F0Model:
    """Wrap f0: a LightGBM Booster / LGBMClassifier, a scikit-learn classifier, or a callable.

    Parameters
    ----------
    f0 : object
        ``lightgbm.Booster`` (binary: ``predict`` gives P(class 1); multiclass: the
        ``(n_rows, n_classes)`` probabilities), any estimator with ``predict_proba`` (columns in
        the order of the sorted class labels), or a callable ``X -> (n_rows, n_classes)``
        probabilities (binary: P(class 1) alone is accepted too).
    features : {"auto", "all"}, array-like of bool (n_features,), or callable, default "auto"
        The features f0 reads on each row. ``"auto"``: the path features for LightGBM and
        scikit-learn tree models, all features otherwise (kernel SVM, neural net, callable).
        A bool mask: the same features on every row. A callable: ``X -> bool (n_rows, n_features)``.
    n_classes : int, default 2
        Number of classes (columns of the probabilities).
    """

    def __init__(self, f0: Any, *, features: Any = "auto", n_classes: int = 2) -> None:
        booster = getattr(f0, "booster_", None) if not _is_booster(f0) else f0
        if booster is not None and not _is_booster(booster):
            booster = None
        if booster is None and not hasattr(f0, "predict_proba") and not callable(f0):
            raise TypeError(
                "The 'f0' argument of AdaptGBRT must be a LightGBM Booster or estimator, an "
                f"estimator with predict_proba, or a callable. Got {type(f0).__name__} instead."
            )
        if booster is not None:
            header = booster.model_to_string(num_iteration=1).split("Tree=", 1)[0].split("\n")
            objective = next((h[10:].split(" ")[0] for h in header if h.startswith("objective=")), "")
            if objective and objective not in _CLASSIFIERS:
                raise ValueError(
                    "The 'f0' argument of AdaptGBRT must be a classifier returning class probabilities. "
                    f"Got a LightGBM model with objective {objective!r}."
                )
        self.model = f0
        self.n_classes = int(n_classes)
        self._booster = booster
        self._features = features
        self._ensemble: TreeEnsemble | None = None
        self.feature_names: tuple[str, ...] | None = None  # the data's columns (set by AdaptGBRT)

    def as_fitted_input(self, X: Any, model: Any = None) -> Any:
        """Return ``X`` in the form ``model`` (default f0) was fitted on.

        A pandas DataFrame with its ``feature_names_in_`` columns when it was fitted on one
        (scikit-learn), else ``X``.
        """
        model = self.model if model is None else model
        fitted = getattr(model, "feature_names_in_", None)
        if fitted is None or isinstance(X, pd.DataFrame):
            return X
        fitted = [str(c) for c in fitted]
        Xa = np.asarray(X)
        names = list(self.feature_names) if self.feature_names is not None else None
        if names is not None and len(names) == Xa.shape[1] and set(fitted) <= set(names):
            return pd.DataFrame(Xa, columns=names)[fitted]
        if len(fitted) == Xa.shape[1]:
            return pd.DataFrame(Xa, columns=fitted)
        return X

    def proba(self, X: Any) -> np.ndarray:
        """Probabilities ``(n_rows, n_classes)``, columns in the order of the sorted labels."""
        X = self.as_fitted_input(X)
        if self._booster is not None and not hasattr(self.model, "predict_proba"):
            p = np.asarray(self._booster.predict(X), dtype=np.float64)
        elif hasattr(self.model, "predict_proba"):
            p = np.asarray(self.model.predict_proba(X), dtype=np.float64)
        else:
            p = np.asarray(self.model(X), dtype=np.float64)
        if p.ndim == 1 and self.n_classes == 2:
            p = np.column_stack([1.0 - p, p])
        if p.ndim != 2 or p.shape[1] != self.n_classes:
            raise ValueError(
                f"f0 must return probabilities of shape (n_rows, {self.n_classes}) for the "
                f"{self.n_classes} classes of 'y'. Got shape {p.shape} instead."
            )
        bad = ~np.isfinite(p) | (p < 0.0) | (p > 1.0)
        if bad.any():
            i, j = (int(v[0]) for v in np.nonzero(bad))
            raise ValueError(
                "The 'f0' argument of AdaptGBRT must return class probabilities in [0, 1]. "
                f"Got {float(p[i, j])!r} at row {i}, column {j} (a regression model or raw scores?)."
            )
        sums = p.sum(axis=1)
        off = np.abs(sums - 1.0) > 1e-4
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise ValueError(
                "The 'f0' argument of AdaptGBRT must return class probabilities that sum to 1 per row. "
                f"Got a sum of {float(sums[i])!r} at row {i}."
            )
        return p

    def features_used(self, X: Any) -> np.ndarray:
        """Boolean ``(n_rows, n_features)``: the features f0 reads on each row."""
        n_rows, n_features = np.shape(X)
        spec = self._features
        if callable(spec):
            used = np.asarray(spec(X), dtype=bool)
            if used.shape != (n_rows, n_features):
                raise ValueError(
                    "The 'f0_features' callable must return a bool array of shape "
                    f"{(n_rows, n_features)}. Got shape {used.shape} instead."
                )
            return used
        if isinstance(spec, str):
            if spec == "all":
                return np.ones((n_rows, n_features), dtype=bool)
            if spec != "auto":
                raise ValueError(
                    "The 'f0_features' parameter must be 'auto', 'all', a bool mask or a callable. "
                    f"Got {spec!r} instead."
                )
            if self._booster is not None:
                return booster_features_used(self._booster, X, ensemble=self._tree_ensemble())
            if hasattr(self.model, "tree_") or (
                hasattr(self.model, "estimators_")
                and all(hasattr(e, "tree_") for e in np.ravel(self.model.estimators_))
            ):
                return sklearn_tree_features_used(self.model, X, as_input=self.as_fitted_input)
            return np.ones((n_rows, n_features), dtype=bool)
        mask = np.asarray(spec, dtype=bool).reshape(-1)
        if mask.size != n_features:
            raise ValueError(
                f"The 'f0_features' mask must have one entry per feature ({n_features}). Got {mask.size} instead."
            )
        return np.broadcast_to(mask, (n_rows, n_features)).copy()

    def input_spec(self, X: Any) -> tuple[int | None, tuple[str, ...] | None, list[list[Any]] | None]:
        """Return the column count, names and pandas categories that data for f0 must match.

        They are f0's when it is a LightGBM model (the names of ``X`` when f0 has none), else
        those of ``X`` (as LightGBM records them when training) with the count left to ``X``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            The training rows.

        Returns
        -------
        n_features : int or None
        feature_names : tuple of str or None
        pandas_categorical : list of list or None
        """
        if self._booster is None:
            return None, column_names(X), pandas_categories(X)
        ens = self._tree_ensemble()
        names: tuple[str, ...] | None = ens.feature_names
        if all(f == f"Column_{i}" for i, f in enumerate(ens.feature_names)):  # f0 has no names
            names = column_names(X)
        return ens.n_features, names, ens.pandas_categorical

    def _tree_ensemble(self) -> TreeEnsemble:
        if self._ensemble is None:
            self._ensemble = TreeEnsemble.from_booster(self._booster)
        return self._ensemble


ProbaFn = Callable[[Any], np.ndarray]
