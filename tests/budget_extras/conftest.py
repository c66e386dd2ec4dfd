"""Shared fixtures: small LightGBM models covering every case the representation handles."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

N_TRAIN = 600
N_FEAT = 5
CAT_FEATURE = 2


def _train_data(rng: np.random.Generator, n: int = N_TRAIN) -> tuple[np.ndarray, np.ndarray]:
    X = rng.normal(size=(n, N_FEAT))
    X[:, CAT_FEATURE] = rng.integers(0, 12, n)
    X[rng.random(n) < 0.15, 0] = np.nan  # NaN in training: missing_type NaN
    X[rng.random(n) < 0.3, 1] = 0.0  # many zeros (zero_as_missing models)
    y = np.nan_to_num(X[:, 0]) + X[:, 1] * 0.5 + (X[:, CAT_FEATURE] % 3 == 1) + 0.1 * rng.normal(size=n)
    return X, y


def _params(**kw: Any) -> dict[str, Any]:
    base = {
        "verbose": -1,
        "num_leaves": 7,
        "min_data_in_leaf": 5,
        "min_data_per_group": 5,
        "cat_smooth": 1.0,
        "max_cat_to_onehot": 4,
        "seed": 0,
        "deterministic": True,
        "num_threads": 1,
    }
    base.update(kw)
    return base


def _make(kind: str) -> lgb.Booster:
    rng = np.random.default_rng(123)
    X, y = _train_data(rng)
    cat: Any = "auto"
    rounds = 12
    params = _params()
    label = y
    if kind == "regression":
        cat = []
    elif kind == "regression_no_average":
        cat = []
        params = _params(boost_from_average=False)
    elif kind == "zero_missing":
        cat = []
        params = _params(zero_as_missing=True)
    elif kind == "no_missing":
        cat = []
        params = _params(use_missing=False)
    elif kind == "binary":
        params = _params(objective="binary")
        label = (y > np.median(y)).astype(float)
        cat = [CAT_FEATURE]
    elif kind == "multiclass":
        params = _params(objective="multiclass", num_class=3)
        label = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])).astype(float)
        cat = [CAT_FEATURE]
    elif kind == "rf":
        params = _params(boosting="rf", bagging_freq=1, bagging_fraction=0.6, feature_fraction=0.8)
        cat = [CAT_FEATURE]
    elif kind == "categorical":
        params = _params(num_leaves=15, max_cat_threshold=8)
        cat = [CAT_FEATURE]
    elif kind == "single_leaf":
        params = _params(min_data_in_leaf=N_TRAIN)
        rounds = 3
    elif kind == "deep_leafwise":
        params = _params(num_leaves=40, min_data_in_leaf=2)
        rounds = 4
        cat = []
    elif kind == "pandas_categorical":
        df = pd.DataFrame(X, columns=[f"f{i}" for i in range(N_FEAT)])
        df["f2"] = pd.Categorical.from_codes(
            X[:, CAT_FEATURE].astype(int), categories=[f"c{i}" for i in range(12)]
        )
        ds = lgb.Dataset(df, y)
        return lgb.train(_params(), ds, num_boost_round=rounds)
    else:  # pragma: no cover - fixture misuse
        raise KeyError(kind)
    return lgb.train(params, lgb.Dataset(X, label, categorical_feature=cat), num_boost_round=rounds)


# TreeEnsemble arrays that two loaders of the same model must give identically (the float
# arrays value, weight and split_gain may differ in the last digits between text and JSON dumps)
STRUCTURE_ARRAYS = (
    "left_child", "right_child", "parent", "feature", "threshold", "is_categorical", "cat_offsets",
    "cat_values", "default_left", "missing_type", "count", "depth", "leaf_index", "tree_offset",
    "tree_class", "shrinkage",
)

MODEL_KINDS = (
    "regression",
    "regression_no_average",
    "zero_missing",
    "no_missing",
    "binary",
    "multiclass",
    "rf",
    "categorical",
    "single_leaf",
    "deep_leafwise",
)

_CACHE: dict[str, lgb.Booster] = {}


def get_booster(kind: str) -> lgb.Booster:
    """Train (once per session) and return the model of the given kind."""
    if kind not in _CACHE:
        _CACHE[kind] = _make(kind)
    return _CACHE[kind]


def hard_rows(rng: np.random.Generator, n: int, n_features: int = N_FEAT) -> np.ndarray:
    """Rows full of edge cases: NaN, +-inf, zeros, tiny values, unseen / negative / fractional categories."""
    X = rng.normal(size=(n, n_features)) * 2
    X[:, CAT_FEATURE] = rng.integers(-3, 20, n)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-36, 1e300, -0.5, 2.7, 1e10, -1.0])
    mask = rng.random(X.shape) < 0.25
    X[mask] = rng.choice(specials, size=int(mask.sum()))
    return X


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240601)


@pytest.fixture(scope="session")
def booster_factory() -> Callable[[str], lgb.Booster]:
    return get_booster
