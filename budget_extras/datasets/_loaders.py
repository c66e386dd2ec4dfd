"""Loaders of the embedded datasets (gzip files under ``datasets/data``)."""

from __future__ import annotations

import gzip
import io
from importlib import resources
from typing import Literal

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ..core._costs import FeatureCosts

__all__ = ["load_heart", "load_thyroid"]

THYROID_FEATURES = (
    "age",
    "sex",
    "on_thyroxine",
    "query_on_thyroxine",
    "on_antithyroid_medication",
    "sick",
    "pregnant",
    "thyroid_surgery",
    "I131_treatment",
    "query_hypothyroid",
    "query_hyperthyroid",
    "lithium",
    "goitre",
    "tumor",
    "hypopituitary",
    "psych",
    "TSH",
    "T3",
    "TT4",
    "T4U",
    "FTI",
)
THYROID_CLASSES = ("hyperthyroid", "hypothyroid", "normal")
HEART_CATEGORICAL = ("cp", "restecg", "slope", "thal")
HEART_EXERCISE_TEST = ("exang", "oldpeak", "slope")


def _read(name: str) -> str:
    data = resources.files("budget_extras.datasets").joinpath("data").joinpath(name).read_bytes()
    return gzip.decompress(data).decode("utf-8")


def _thyroid_split(name: str) -> tuple[np.ndarray, np.ndarray]:
    arr = np.loadtxt(io.StringIO(_read(name)), dtype=np.float64)
    return arr[:, :21].copy(), arr[:, 21].astype(np.int64) - 1


def _thyroid_costs_raw() -> dict[str, float]:
    out: dict[str, float] = {}
    for line in _read("thyroid-ann-thyroid.cost.gz").replace(":", " ").split("\n"):
        parts = line.split()
        # the file's last line lacks a newline before EOF; split on whitespace handles both
        for k in range(0, len(parts) - 1, 2):
            out[parts[k]] = float(parts[k + 1])
    return out


def load_thyroid(*, fti: Literal["group", "sum"] = "group") -> Bunch:
    """UCI thyroid disease ("ann" version) with Peter Turney's test costs.

    3772 training and 3428 test rows, 21 features (16 questionnaire answers, pre-scaled age
    included, and 5 blood tests TSH, T3, TT4, T4U, FTI), 3 classes.

    Parameters
    ----------
    fti : {"group", "sum"}, default "group"
        How to cost FTI, which Turney's cost file omits because FTI is computed from TT4 and
        T4U. ``"group"``: TT4, T4U and FTI form one acquisition group costing
        14.51 + 11.41 = 25.92 (FTI is free once both tests are paid; a row that uses only
        TT4 or only T4U is charged the whole group, an upper bound). ``"sum"``: no group,
        FTI costs 25.92 on its own (a row using FTI and TT4 pays TT4 twice, an upper bound).

    Returns
    -------
    sklearn.utils.Bunch
        ``X_train`` (3772, 21) and ``X_test`` (3428, 21) float64, ``y_train`` / ``y_test``
        int64 in {0: hyperthyroid, 1: hypothyroid, 2: normal}, ``feature_names``,
        ``target_names``, ``costs`` (:class:`~budget_extras.FeatureCosts`), ``raw_costs``
        (dict: Turney's 20 costs as in the file) and ``DESCR``.
    """
    if fti not in ("group", "sum"):
        raise ValueError(f"The 'fti' parameter must be 'group' or 'sum'. Got {fti!r}.")
    X_train, y_train = _thyroid_split("thyroid-ann-train.data.gz")
    X_test, y_test = _thyroid_split("thyroid-ann-test.data.gz")
    raw = _thyroid_costs_raw()
    panel = raw["TT4"] + raw["T4U"]
    lazy = {name: raw.get(name, 0.0) for name in THYROID_FEATURES}
    if fti == "group":
        group_label = "TT4+T4U+FTI"
        costs = FeatureCosts(
            lazy,
            groups={"TT4": group_label, "T4U": group_label, "FTI": group_label},
            group_cost={group_label: panel},
            feature_names=THYROID_FEATURES,
        )
    else:
        lazy["FTI"] = panel
        costs = FeatureCosts(lazy, feature_names=THYROID_FEATURES)
    return Bunch(
        X_train=X_train,
        y_train=y_train,
        X_test=X_test,
        y_test=y_test,
        feature_names=list(THYROID_FEATURES),
        target_names=list(THYROID_CLASSES),
        costs=costs,
        raw_costs=raw,
        DESCR=load_thyroid.__doc__,
    )


def load_heart(*, as_frame: bool = True, exercise_group: bool = True) -> Bunch:
    """UCI heart disease (Cleveland, 303 patients) with Peter Turney's test costs (USD).

    Parameters
    ----------
    as_frame : bool, default True
        ``X`` as a pandas DataFrame whose columns cp, restecg, slope and thal are pandas
        categoricals (LightGBM uses them as categorical features). ``False``: a float64
        array with those columns replaced by their category codes (categories sorted).
    exercise_group : bool, default True
        exang, oldpeak and slope all come from one exercise test: model them as one
        acquisition group costing 87.30 (the max of their costs, Turney's base cost of the
        test). ``False``: each is paid separately.

    Returns
    -------
    sklearn.utils.Bunch
        ``X`` (303, 13), ``y`` int64 (1 = heart disease), ``feature_names``,
        ``categorical_features``, ``costs`` (:class:`~budget_extras.FeatureCosts`),
        ``raw_costs`` (dict) and ``DESCR``.
    """
    df = pd.read_csv(io.StringIO(_read("heartdisease.csv.gz")))
    y = df.pop("diagnosis").to_numpy(dtype=np.int64)
    for col in HEART_CATEGORICAL:
        df[col] = pd.Categorical(df[col], categories=sorted(df[col].unique()))
    raw_df = pd.read_csv(io.StringIO(_read("heart_cost.csv.gz")))
    raw = dict(zip(raw_df["feature"], raw_df["cost_usd"].astype(float), strict=True))
    names = list(df.columns)
    groups = dict.fromkeys(HEART_EXERCISE_TEST, "exercise_test") if exercise_group else None
    costs = FeatureCosts(raw, groups=groups, feature_names=names)
    X: pd.DataFrame | np.ndarray = df
    if not as_frame:
        X = np.column_stack(
            [
                df[c].cat.codes.to_numpy(np.float64) if c in HEART_CATEGORICAL else df[c].to_numpy(np.float64)
                for c in names
            ]
        )
    return Bunch(
        X=X,
        y=y,
        feature_names=names,
        categorical_features=list(HEART_CATEGORICAL),
        costs=costs,
        raw_costs=raw,
        DESCR=load_heart.__doc__,
    )
