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
from ._measure import RawScores, header, objective_line
from ._measure import predict as booster_predict

__all__ = ["OffsetError", "objective_kind", "readable", "resolve_scoring"]

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


def _output(objective: str, raw: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """LightGBM's output transform (``ObjectiveFunction::ConvertOutput``) of raw scores.

    ``objective`` is the model's objective line (``"binary sigmoid:1"``, ``"regression sqrt"``).
    """
    tokens = objective.split()
    name = tokens[0] if tokens else ""
    opts = dict(t.split(":", 1) for t in tokens[1:] if ":" in t)
    if name in ("binary", "multiclassova"):
        return np.asarray(1.0 / (1.0 + np.exp(-float(opts.get("sigmoid", 1.0)) * raw)))
    if name == "cross_entropy":
        return np.asarray(1.0 / (1.0 + np.exp(-raw)))
    if name == "cross_entropy_lambda":
        return np.asarray(np.log1p(np.exp(raw)))
    if name == "multiclass":
        e = np.exp(raw - raw.max(axis=1, keepdims=True))
        return np.asarray(e / e.sum(axis=1, keepdims=True))
    if name in ("poisson", "gamma", "tweedie"):
        return np.asarray(np.exp(raw))
    if name == "regression" and "sqrt" in tokens:
        return np.asarray(np.sign(raw) * raw * raw)
    return raw


def _objective_line(booster: Any) -> str:
    """Return the ``objective=`` line of a booster's model text (empty without one)."""
    return objective_line(header(booster.model_to_string(num_iteration=1)))


class OffsetError(ValueError):
    """A validation init_score that cannot be added to a model's raw scores (names ``valid_set``)."""


def _predicted(booster: Any, X: Any, known: RawScores | None, raw_score: bool = False) -> npt.NDArray[np.float64]:
    """Return ``predict(X)`` (``raw_score``: the raw scores): from ``known`` where it holds them for ``X``.

    ``known``: the raw scores measured from the leaves the rows reached (:func:`._measure.measure_rows`),
    equal to LightGBM's to the last bit; otherwise (other rows, an output transform not repeated
    exactly) LightGBM predicts.
    """
    if known is not None and X is known.X:
        out = known.raw if raw_score else known.output()
        if out is not None:
            return np.asarray(out, dtype=np.float64)
    kwargs = {"raw_score": True} if raw_score else {}
    return np.asarray(booster_predict(booster, X, **kwargs), dtype=np.float64)


def _offset_output(booster: Any, X: Any, init_score: npt.NDArray[np.float64],
                   known: RawScores | None = None) -> npt.NDArray[np.float64]:
    """Return what LightGBM's ``predict`` gives for ``X`` when the raw scores start at ``init_score``.

    The output transform is checked against LightGBM's own ``predict`` without the offset, so an
    objective whose transform is not known here is refused instead of scored wrong.
    """
    raw = _predicted(booster, X, known, raw_score=True)
    if init_score.shape != raw.shape:
        raise OffsetError(
            f"The 'valid_set' argument's init_score must have the shape of the model's raw scores {raw.shape}. "
            f"Got {init_score.shape}."
        )
    objective = known.objective if known is not None and X is known.X else _objective_line(booster)
    plain = _predicted(booster, X, known)
    if plain.shape != raw.shape or not np.allclose(_output(objective, raw), plain, rtol=1e-7, atol=1e-12):
        raise OffsetError(
            f"The 'valid_set' argument's init_score cannot be added for objective {objective!r}: its output "
            "transform is not known to train_to_budget. Train without init_score or with a built-in objective."
        )
    return _output(objective, raw + init_score)


class _BoosterModel(BaseEstimator):
    """A trained Booster seen as a fitted scikit-learn estimator (for sklearn scorers).

    With ``init_score``, the raw scores start at it, as LightGBM's validation scores do.
    ``known``: the booster's raw scores on the rows being scored (:class:`._measure.RawScores`),
    used instead of a prediction on those rows.
    """

    def __init__(self, booster: Any = None, kind: str = "regression", init_score: Any = None,
                 known: Any = None) -> None:
        self.booster = booster
        self.kind = kind
        self.init_score = init_score
        self.known = known

    def _raw(self, X: Any) -> npt.NDArray[np.float64]:
        if self.init_score is None:
            return _predicted(self.booster, X, self.known)
        return _offset_output(self.booster, X, self.init_score, self.known)


class _Regressor(RegressorMixin, _BoosterModel):
    def predict(self, X: Any) -> npt.NDArray[np.float64]:
        return self._raw(X)


class _Classifier(ClassifierMixin, _BoosterModel):
    def __init__(self, booster: Any = None, kind: str = "binary", n_classes: int = 2, init_score: Any = None,
                 known: Any = None) -> None:
        super().__init__(booster, kind, init_score, known)
        self.n_classes = n_classes
        self.classes_ = np.arange(n_classes)

    def predict_proba(self, X: Any) -> npt.NDArray[np.float64]:
        p = self._raw(X)
        if p.ndim == 1:
            return np.column_stack([1.0 - p, p])
        return p

    def decision_function(self, X: Any) -> npt.NDArray[np.float64]:
        raw = _predicted(self.booster, X, self.known, raw_score=True)
        return raw if self.init_score is None else raw + self.init_score

    def predict(self, X: Any) -> npt.NDArray[np.int64]:
        return np.asarray(self.predict_proba(X).argmax(axis=1), dtype=np.int64)


def _neg_l2(est: Any, X: Any, y: npt.NDArray[Any]) -> float:
    return -float(mean_squared_error(y, est.predict(X)))


def _auc(est: Any, X: Any, y: npt.NDArray[Any]) -> float:
    return roc_auc(y, est.predict_proba(X)[:, 1])


def roc_auc(y: npt.NDArray[Any], p: npt.NDArray[Any]) -> float:
    """Return ``roc_auc_score(y, p)`` of two classes (the larger label positive), by its own arithmetic.

    scikit-learn's ROC curve (thresholds at the distinct scores, collinear points dropped,
    the trapezoid area) in numpy without its input checks, which cost several times the
    arithmetic on the few thousand validation rows a search measures each candidate on: the
    counts at the thresholds are integers, so the curve and its area are scikit-learn's to the
    last bit. Labels that are not two classes, or scores that are not finite, go to
    ``roc_auc_score`` itself (which warns or raises as it does).
    """
    yy, s = np.asarray(y).ravel(), np.asarray(p, dtype=np.float64).ravel()
    labels = np.unique(yy)
    if labels.size != 2 or yy.size != s.size or not np.isfinite(s).all():
        return float(roc_auc_score(y, p))
    order = np.argsort(s, kind="stable")[::-1]
    s = s[order]
    idx = np.concatenate([np.flatnonzero(np.diff(s)), [s.size - 1]])
    tps = np.cumsum((yy[order] == labels[1]).astype(np.float64))[idx]
    fps = 1 + idx.astype(np.float64) - tps
    if fps.size > 2:
        keep = np.flatnonzero(np.concatenate([[True], np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), [True]]))
        fps, tps = fps[keep], tps[keep]
    fps, tps = np.concatenate([[0.0], fps]), np.concatenate([[0.0], tps])
    return float(np.trapezoid(tps / tps[-1], fps / fps[-1]))


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
    """Return ``(name, score(booster, X, y, init_score=None, known=None))`` for the ``scoring`` argument.

    ``None`` gives AUC for ``binary``, accuracy for multiclass objectives and, otherwise, the
    error ``params['metric']`` names (LightGBM's ``l1``, ``l2``, ``mape`` or their aliases, as
    the negative scikit-learn scorer) or minus the mean squared error (``"neg_l2"``, read as
    RMSE, see :func:`readable`); other values are resolved by
    :func:`budget_extras.core._scoring.resolve_scoring`. A scorer receives an estimator that
    wraps the booster (``predict``; for classification also ``predict_proba``,
    ``decision_function`` and ``classes_ = 0..n_classes-1``). With ``init_score`` (shaped as
    the raw scores), the booster's raw scores start at it before the objective's output
    transform, as in LightGBM's validation scores. ``known``: the booster's raw scores on ``X``
    (:class:`._measure.RawScores`), which then serve its predictions on ``X`` (the same numbers).

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

    def view(scored: tuple[Any, Any, Any]) -> _BoosterModel:
        booster, init_score, known = scored
        if kind == "regression":
            return _Regressor(booster, kind, init_score, known)
        return _Classifier(booster, kind, n_classes, init_score, known)

    default: str | tuple[str, Scorer] = _DEFAULTS[kind]
    if kind == "regression":
        default = _REGRESSION_METRICS.get(_params_metric(params) or "rmse") or default
    name, score = resolve_scoring_core(scoring, owner="train_to_budget", default=default, view=view)

    def named(booster: Any, X: Any, y: Any, init_score: Any = None, known: Any = None) -> float:
        try:
            value = score((booster, init_score, known), X, y)
        except OffsetError:
            raise
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
