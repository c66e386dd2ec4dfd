"""The AdaptGBRT model file: one JSON document, format ``budget_extras.AdaptGBRT/1``.

:func:`dump_model` turns a fitted AdaptGBRT into the document's text: the hyperparameters
(those JSON can hold; ``f0`` never), the classes, the input columns (count, names, pandas
categories), the acquisition cost per feature, the chosen configuration, the biases and the
gate and f1 as LightGBM model text. :func:`load_model` builds a fitted AdaptGBRT from such a
file; the expensive model ``f0`` is not in the file and is passed to it.
"""

from __future__ import annotations

import json
import os
from typing import Any

import lightgbm as lgb
import numpy as np

from ._f0 import F0Model

__all__ = ["FORMAT", "dump_model", "load_model"]

FORMAT = "budget_extras.AdaptGBRT/1"


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v)
    except TypeError:
        return False
    return True


def dump_model(est: Any) -> str:
    """Return the model file text of a fitted AdaptGBRT ``est``.

    Parameters
    ----------
    est : AdaptGBRT
        A fitted model.

    Returns
    -------
    str
        One JSON document.
    """
    doc = {
        "format": FORMAT,
        "params": {k: v for k, v in est.get_params(deep=False).items() if k != "f0" and _jsonable(v)},
        "classes": est.classes_.tolist(),
        "n_features": int(est.n_features_in_),
        "feature_names": None if est._feature_names is None else list(est._feature_names),
        "pandas_categorical": est._pandas_categorical,
        "cost_vec": est.cost_vec_.tolist(),
        "p_full": est.p_full_,
        "gamma": est.gamma_,
        "init": getattr(est, "init_", "greedy"),
        "g_bias": est.g_bias_,
        "f1_bias": np.asarray(est.f1_bias_).tolist(),
        "g_model": est.g_model_.model_to_string(),
        "f1_model": est.f1_model_.model_to_string(),
    }
    return json.dumps(doc)


def load_model(cls: type, path: str | os.PathLike[str], *, f0: Any, costs: Any, f0_features: Any) -> Any:
    """Build a fitted ``cls`` (AdaptGBRT) from a file written by :func:`dump_model`.

    Parameters
    ----------
    cls : type
        The estimator class.
    path : str or os.PathLike
        The file.
    f0 : fitted classifier or LightGBM model, optional
        The expensive model, for rows routed to it.
    costs : FeatureCosts, list, dict, pandas.Series, CSV path or None
        Feature costs (None: those saved with the model).
    f0_features : {"auto", "all"}, bool mask or callable
        Which features ``f0`` reads.

    Returns
    -------
    AdaptGBRT

    Raises
    ------
    ValueError
        If the file is not an AdaptGBRT file.
    """
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    if doc.get("format") != FORMAT:
        raise ValueError(f"'{path}' is not an AdaptGBRT file: format is {doc.get('format')!r}.")
    est = cls(**doc["params"])
    est.classes_ = np.asarray(doc["classes"])
    est.n_features_in_ = int(doc["n_features"])
    names = doc.get("feature_names")
    est._feature_names = None if names is None else tuple(names)
    est._pandas_categorical = doc.get("pandas_categorical")
    if names is not None and not all(f == f"Column_{i}" for i, f in enumerate(names)):
        est.feature_names_in_ = np.asarray(names, dtype=object)
    est.cost_vec_ = np.asarray(doc["cost_vec"], dtype=np.float64)
    est._price(costs)
    est.p_full_, est.gamma_ = doc["p_full"], doc["gamma"]
    fb = doc["f1_bias"]
    est.g_bias_, est.f1_bias_ = doc["g_bias"], (np.asarray(fb, dtype=np.float64) if isinstance(fb, list) else fb)
    est.g_model_ = lgb.Booster(model_str=doc["g_model"])
    est.f1_model_ = lgb.Booster(model_str=doc["f1_model"])
    est.f0_ = F0Model(f0, features=f0_features, n_classes=est.classes_.size) if f0 is not None else None
    if est.f0_ is not None:
        est.f0_.feature_names = est._feature_names
    est.init_ = doc.get("init", "greedy")
    est._leaf_cache = {}
    est.sweep_result_ = None
    return est
