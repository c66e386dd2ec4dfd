"""One input path for every method: the same rows in every form give the same answer.

Every method's ``fit`` / ``predict`` / ``route`` / ``path`` / ``cost_report`` goes through
``core._validation.check_array_2d`` (docs/representation.md, "Input data"). The oracle for an
input is LightGBM's own conversion of it (``lightgbm.basic._data_from_pandas`` for a DataFrame,
float64 for an array), and where a method's output is a LightGBM model's, ``Booster.predict``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from lightgbm.basic import _data_from_pandas

from budget_extras import CSTC, QWYC, AdaptGBRT, BudgetPrune, FeatureCosts, TreeEnsemble, cost_report

COLUMNS = ["a", "b", "cat", "d", "e"]
CATEGORIES = ["red", "green", "blue", "grey", "pink"]
N = 300


def _frame(rng: np.random.Generator, n: int) -> pd.DataFrame:
    df = pd.DataFrame(rng.normal(size=(n, 5)), columns=COLUMNS)
    df.loc[rng.random(n) < 0.1, "a"] = np.nan
    df["cat"] = pd.Categorical(rng.choice(CATEGORIES, n), categories=CATEGORIES)
    return df


def _label(df: pd.DataFrame) -> np.ndarray:
    return ((df["a"].fillna(0) + df["b"] + df["cat"].isin(["red", "blue"]) * 1.5) > 0.7).astype(int).to_numpy()


def _lightgbm_array(df: pd.DataFrame, booster: lgb.Booster) -> np.ndarray:
    """LightGBM's own conversion of a DataFrame (the oracle of the categorical mapping)."""
    arr = _data_from_pandas(df, "auto", "auto", booster.pandas_categorical)[0]
    return np.asarray(arr, dtype=np.float64)


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    rng = np.random.default_rng(20261124)
    df = _frame(rng, N)
    y = _label(df)
    params = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 5, "min_data_per_group": 5,
              "max_cat_to_onehot": 2, "verbose": -1, "seed": 0, "deterministic": True, "num_threads": 1}
    booster = lgb.train(params, lgb.Dataset(df, y), num_boost_round=8)
    test = _frame(np.random.default_rng(7), 120)
    return {"df": df, "y": y, "booster": booster, "test": test, "ref": _lightgbm_array(test, booster)}


# ------------------------------------------------------------------ input kinds
def _unseen(test: pd.DataFrame) -> pd.DataFrame:
    out = test.copy()
    cat = out["cat"].cat.add_categories(["never-seen"])
    cat.iloc[::4] = "never-seen"
    out["cat"] = cat
    return out


def _kinds(d: dict[str, Any]) -> dict[str, tuple[Any, np.ndarray]]:
    """Input kind -> (the input, LightGBM's float64 array of the same rows in model order)."""
    test, ref, booster = d["test"], d["ref"], d["booster"]
    ints = np.nan_to_num(ref).round().astype(np.int64)
    dense = np.nan_to_num(ref)
    unseen = _unseen(test)
    return {
        "numpy_float64": (ref, ref),
        "numpy_float32": (ref.astype(np.float32), ref.astype(np.float32).astype(np.float64)),
        "numpy_int": (ints, ints.astype(np.float64)),
        "scipy_csr": (sp.csr_matrix(dense), dense),
        "pandas_string_categories": (test, ref),
        "pandas_unseen_category": (unseen, _lightgbm_array(unseen, booster)),
        "pandas_columns_reordered": (test[COLUMNS[::-1]], ref),
    }


KINDS = [
    "numpy_float64",
    "numpy_float32",
    "numpy_int",
    "scipy_csr",
    "pandas_string_categories",
    "pandas_unseen_category",
    "pandas_columns_reordered",
]


def _bad(d: dict[str, Any]) -> dict[str, tuple[Any, type[Exception], str]]:
    """Input kind -> (input, error, message pattern)."""
    test, ref = d["test"], d["ref"]
    obj = test.assign(cat=test["cat"].astype(str))
    return {
        "numpy_3_of_5_columns": (ref[:, :3], ValueError, "must have 5 columns"),
        "numpy_6_columns": (np.hstack([ref, ref[:, :1]]), ValueError, "must have 5 columns"),
        "one_dimensional": (ref[0], ValueError, "must be 2-D"),
        "pandas_missing_column": (test.drop(columns="b"), ValueError, r"missing model features \['b'\]"),
        "pandas_extra_column": (test.assign(label=0), ValueError, r"columns not in the model \['label'\]"),
        "pandas_strings_not_categorical": (obj, TypeError, "numeric, bool or categorical"),
    }


BAD = [
    "numpy_3_of_5_columns",
    "numpy_6_columns",
    "one_dimensional",
    "pandas_missing_column",
    "pandas_extra_column",
    "pandas_strings_not_categorical",
]


# ------------------------------------------------------------------ fitted methods
@pytest.fixture(scope="module")
def fitted(data: dict[str, Any]) -> dict[str, Any]:
    booster, df, y = data["booster"], data["df"], data["y"]
    X = _lightgbm_array(df, booster)
    ens = TreeEnsemble.from_booster(booster)
    costs = FeatureCosts([1.0, 2.0, 3.0, 4.0, 5.0])
    qwyc = QWYC(booster, alpha=0.0, holdout=None).fit(X)
    bp = BudgetPrune(booster, lam=0.01, costs=costs).fit(X, y, X_valid=X)
    adapt = AdaptGBRT(booster, p_full=0.5, gamma=0.01, n_trees=3, max_em_iter=1, costs=costs).fit(X, y)
    cstc = CSTC(booster, costs=costs, depth=2, task="binary", n_cycles=1, n_alternations=1, max_iter=5).fit(X, y)
    return {"ens": ens, "costs": costs, "qwyc": qwyc, "bp": bp, "adapt": adapt, "cstc": cstc, "X": X, "y": y}


Method = Callable[[dict[str, Any], Any], Any]

METHODS: dict[str, Method] = {
    "TreeEnsemble.predict_raw": lambda f, X: f["ens"].predict_raw(X),
    "TreeEnsemble.decision_path": lambda f, X: f["ens"].decision_path(X).toarray(),
    "cost_report": lambda f, X: cost_report(f["ens"], X, f["costs"]).total_cost,
    "QWYC.predict": lambda f, X: f["qwyc"].predict(X).scores,
    "QWYC.cost_report": lambda f, X: f["qwyc"].cost_report(X, f["costs"]).total_cost,
    "BudgetPrune.predict_raw": lambda f, X: f["bp"].predict_raw(X),
    "AdaptGBRT.predict_proba": lambda f, X: f["adapt"].predict_proba(X),
    "AdaptGBRT.route": lambda f, X: f["adapt"].route(X),
    "AdaptGBRT.row_cost": lambda f, X: f["adapt"].row_cost(X),
    "CSTC.decision_function": lambda f, X: f["cstc"].decision_function(X),
    "CSTC.path": lambda f, X: f["cstc"].path(X).toarray(),
    "CSTC.cost_report": lambda f, X: f["cstc"].cost_report(X).total_cost,
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", list(METHODS))
def test_every_input_kind_gives_lightgbms_answer(
    data: dict[str, Any], fitted: dict[str, Any], method: str, kind: str
) -> None:
    X, ref = _kinds(data)[kind]
    got = METHODS[method](fitted, X)
    np.testing.assert_array_equal(got, METHODS[method](fitted, ref))


@pytest.mark.parametrize("kind", BAD)
@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_refuses_the_same_bad_inputs(
    data: dict[str, Any], fitted: dict[str, Any], method: str, kind: str
) -> None:
    X, error, match = _bad(data)[kind]
    with pytest.raises(error, match=match):
        METHODS[method](fitted, X)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "pandas_columns_reordered"])
def test_reference_array_is_lightgbms_reading(data: dict[str, Any], kind: str) -> None:
    """The oracle array is what LightGBM itself reads from the input (Booster.predict agrees)."""
    X, ref = _kinds(data)[kind]
    booster = data["booster"]
    np.testing.assert_array_equal(booster.predict(X, raw_score=True), booster.predict(ref, raw_score=True))


@pytest.mark.parametrize("kind", KINDS)
def test_lightgbm_outputs_equal_booster_predict(data: dict[str, Any], fitted: dict[str, Any], kind: str) -> None:
    """Where a method's output is a LightGBM model's, Booster.predict on the rows is the oracle."""
    X, ref = _kinds(data)[kind]
    np.testing.assert_allclose(
        fitted["ens"].predict_raw(X), data["booster"].predict(ref, raw_score=True), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        fitted["bp"].predict_raw(X), fitted["bp"].booster_.predict(ref, raw_score=True), rtol=1e-12, atol=1e-12
    )
    full = fitted["qwyc"].predict(X)
    at_end = full.positions_evaluated == fitted["qwyc"].plan_.n_positions
    np.testing.assert_allclose(
        full.scores[at_end], data["booster"].predict(ref, raw_score=True)[at_end], rtol=1e-9, atol=1e-9
    )


# ------------------------------------------------------------------ fit takes the same inputs
FITS: dict[str, Callable[[dict[str, Any], Any, np.ndarray], Any]] = {
    "QWYC.fit": lambda d, X, y: QWYC(d["booster"], alpha=0.0, holdout=None).fit(X).plan_.eps_pos,
    "BudgetPrune.fit": lambda d, X, y: BudgetPrune(d["booster"], lam=0.01).fit(X, y, X_valid=X).collapsed_,
    "AdaptGBRT.fit": lambda d, X, y: AdaptGBRT(d["booster"], n_trees=2, max_em_iter=1)
    .fit(X, y)
    .g_model_.model_to_string()
    .split("feature_names=")[1],
    "CSTC.fit": lambda d, X, y: CSTC(d["booster"], depth=1, n_cycles=0, n_alternations=1, max_iter=3)
    .fit(X, y.astype(float))
    .coef_,
}


@pytest.mark.parametrize("kind", ["numpy_float32", "pandas_string_categories", "pandas_columns_reordered"])
@pytest.mark.parametrize("fit", list(FITS))
def test_fit_reads_inputs_like_predict(data: dict[str, Any], fit: str, kind: str) -> None:
    test_y = _label(data["test"])
    X, ref = _kinds(data)[kind]
    np.testing.assert_array_equal(FITS[fit](data, X, test_y), FITS[fit](data, ref, test_y))


@pytest.mark.parametrize("kind", ["numpy_3_of_5_columns", "pandas_extra_column", "pandas_missing_column"])
@pytest.mark.parametrize("fit", list(FITS))
def test_fit_refuses_bad_inputs(data: dict[str, Any], fit: str, kind: str) -> None:
    X, error, match = _bad(data)[kind]
    with pytest.raises(error, match=match):
        FITS[fit](data, X, _label(data["test"]))


def test_adapt_save_load_keeps_names_and_categories(
    data: dict[str, Any], fitted: dict[str, Any], tmp_path: Any
) -> None:
    path = tmp_path / "adapt.json"
    fitted["adapt"].save(str(path))
    loaded = AdaptGBRT.load(str(path), f0=data["booster"])
    X = data["test"][COLUMNS[::-1]]  # reordered, string categories
    np.testing.assert_array_equal(loaded.predict_proba(X), fitted["adapt"].predict_proba(data["ref"]))
    with pytest.raises(ValueError, match=r"columns not in the model \['label'\]"):
        loaded.predict(data["test"].assign(label=0))


# ------------------------------------------------------------------ property: any numeric array, any column order
_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint16, np.bool_]


@settings(max_examples=60, deadline=None)
@given(
    arr=st.sampled_from(_DTYPES).flatmap(
        lambda dt: hnp.arrays(
            dt,
            hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=6).filter(lambda s: s[1] >= 1),
            elements=hnp.from_dtype(np.dtype(dt), allow_nan=True, allow_infinity=True)
            if np.dtype(dt).kind == "f"
            else None,
        )
    ),
    data=st.data(),
)
def test_input_path_reads_any_numeric_array_and_any_column_order(arr: np.ndarray, data: Any) -> None:
    from budget_extras.core._validation import check_array_2d

    n = arr.shape[1]
    expected = np.asarray(arr, dtype=np.float64)
    got = check_array_2d(arr, n_features=n)
    assert got.dtype == np.float64 and got.flags.c_contiguous
    np.testing.assert_array_equal(got, expected)
    names = [f"f{j}" for j in range(n)]
    perm = data.draw(st.permutations(range(n)))
    df = pd.DataFrame(expected, columns=names).iloc[:, list(perm)]
    np.testing.assert_array_equal(check_array_2d(df, n_features=n, feature_names=names), expected)
    with pytest.raises(ValueError, match="must have"):
        check_array_2d(arr, n_features=n + 1)
