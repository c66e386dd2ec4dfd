"""Random and hostile inputs of ``train_to_budget`` give a named error or an honest result.

Each draw takes a valid call on tiny data (200 training rows, 100 validation rows, five
features, three rounds) and either keeps it or replaces one argument by junk: forbidden or
misspelt params, budgets that are negative, NaN, inf, bool, text or huge, junk ``budgets``,
validation sets with shuffled, missing or extra columns, NaN, text, one-class or misaligned
labels, costs of the wrong length, negative, NaN, keyed by unknown names or read from a bad
CSV, and junk grids, limits, scorers and search modes. Properties: the call raises ValueError or
TypeError whose message names the junk argument, or returns a result whose ``status`` is a
``Status``, whose ``cost`` equals an independent ``cost_report`` of the returned booster on the
validation rows (or, after a cross-validated choice, bounds its cost on the pooled rows), and
which fits the budget when the status is SUCCESS or CONSTANT; the inputs
are not mutated.
"""

from __future__ import annotations

import collections
import copy
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

lgb = pytest.importorskip("lightgbm")

from budget_extras import FeatureCosts, Status, TreeEnsemble, cost_report, train_to_budget  # noqa: E402
from budget_extras.core import fits_budget  # noqa: E402

SETTINGS = settings(deadline=None, max_examples=100, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow])

STATS: collections.Counter = collections.Counter()  # outcomes of the draws, for the report
NAMES = ["f0", "f1", "f2", "f3", "f4"]
_rng = np.random.default_rng(27)
X_TRAIN = _rng.normal(size=(200, 5))
X_VALID = _rng.normal(size=(100, 5))
_SIGNAL = lambda X: X[:, 0] + 0.6 * X[:, 1] - 0.4 * X[:, 2]  # noqa: E731
Y_REG = (_SIGNAL(X_TRAIN), _SIGNAL(X_VALID))
Y_BIN = ((Y_REG[0] > 0).astype(float), (Y_REG[1] > 0).astype(float))
LAZY = [1.0, 2.0, 0.5, 3.0, 0.0]

ARGS = ["params", "budget", "budgets", "valid_set", "costs", "k_grid", "n_tradeoffs", "num_leaves_grid",
        "proxy_rows", "n_jobs", "max_fits", "time_limit", "scoring", "search"]

JUNK = {
    "params": st.sampled_from([
        [("objective", "regression")], "regression", None, {"cegb_tradeoff": 0.1},
        {"cegb_penalty_feature_lazy": [1.0] * 5}, {"interaction_constraints": [[0, 1]]},
        {"interaction_constraint": [[0]]}, {"CEGB_TRADEOFF": 1.0},
    ]),
    "budget": st.sampled_from([-1.0, -1e-12, math.nan, math.inf, -math.inf, True, False, "1", None, [1.0],
                               np.float64(math.nan), 0, 0.0, 1e300, 10**400, np.int64(2), complex(1, 0)]),
    "budgets": st.sampled_from([[10**400], [-1.0], [math.nan], [math.inf], ["a"], "abc", 5, [None], [[1.0]], [],
                                (0.5, 1e9), np.array([0.2, 0.4]), {1.0: 2}]),
    "valid_set": st.sampled_from(["list", "triple", "nan_label", "str_label", "short_label", "empty",
                                  "one_class", "df_missing", "df_extra", "df_shuffled", "ds_raw", "ds_path",
                                  "ds_nolabel", "inf_label", "none"]),
    "costs": st.sampled_from(["short", "long", "negative", "nan", "inf", "unknown_dict", "dict_str",
                              "series", "fc", "fc_wrong_n", "bad_csv", "missing_csv", "none", "int",
                              "dict_partial", "str_list", "object"]),
    "k_grid": st.sampled_from([[0], [-1], [], 3, "3", [1.5], ["a"], [None], [100], [1, 1, 2], (2,), [True]]),
    "n_tradeoffs": st.sampled_from([-1, 1.5, "2", None, True, 0, 1, np.int64(1)]),
    "num_leaves_grid": st.sampled_from(["auto", "AUTO", None, [], [1], [0], [-3], [2.5], ["7"], 7, [100000],
                                        [3, 3], "x"]),
    "proxy_rows": st.sampled_from([0, 99, 100, 150, 10**9, -1, 1.5, "100", True, None, "auto", "Auto"]),
    "n_jobs": st.sampled_from([0, -1, 1, 2, 1.0, "1", None, True]),
    "max_fits": st.sampled_from([0, -1, 1, 2, 1.5, "3", True, None]),
    "time_limit": st.sampled_from([10**400, 0, -1.0, math.nan, math.inf, 1e-9, "1", True, None, 30.0]),
    "scoring": st.sampled_from(["accuracy", "r2", "no_such_scorer", 3, lambda est, X, y: 0.0,
                                lambda est, X, y: math.nan, "neg_mean_squared_error", None]),
    "search": st.sampled_from(["full", "fast", "FAST", "", None, 1, ["full"], "fast "]),
}


def _valid_set(form: str, objective: str, pandas_ok: bool, tmp_path) -> object:
    y = Y_BIN[1] if objective == "binary" else Y_REG[1]
    df = pd.DataFrame(X_VALID, columns=NAMES)
    if form == "tuple":
        return (df if pandas_ok else X_VALID.copy(), y.copy())
    if form == "list":
        return [X_VALID, y]
    if form == "triple":
        return (X_VALID, y, None)
    if form == "nan_label":
        return (X_VALID, np.where(np.arange(100) == 3, np.nan, y))
    if form == "inf_label":
        return (X_VALID, np.where(np.arange(100) == 3, np.inf, y))
    if form == "str_label":
        return (X_VALID, y.astype(str))
    if form == "short_label":
        return (X_VALID, y[:-1])
    if form == "empty":
        return (X_VALID[:0], y[:0])
    if form == "one_class":
        return (X_VALID, np.ones(100))
    if form == "df_missing":
        return (df.drop(columns=["f2"]), y)
    if form == "df_extra":
        return (df.assign(extra=1.0), y)
    if form == "df_shuffled":
        return (df[["f3", "f0", "f4", "f2", "f1"]], y)
    if form == "ds_raw":
        return lgb.Dataset(X_VALID.copy(), y.copy(), feature_name=NAMES)
    if form == "ds_path":
        return lgb.Dataset(str(tmp_path / "nothing.bin"), y)
    if form == "ds_nolabel":
        return lgb.Dataset(X_VALID.copy(), feature_name=NAMES)
    return None


def _costs(form: str, tmp_path) -> object:
    if form == "list":
        return list(LAZY)
    if form == "array":
        return np.array(LAZY)
    if form == "dict":
        return dict(zip(NAMES, LAZY, strict=True))
    if form == "series":
        return pd.Series(LAZY, index=NAMES)
    if form == "fc":
        return FeatureCosts(LAZY, feature_names=NAMES)
    if form == "csv":
        path = tmp_path / "costs.csv"
        path.write_text("feature,lazy\n" + "".join(f"{n},{c}\n" for n, c in zip(NAMES, LAZY, strict=True)))
        return str(path)
    bad = {"short": LAZY[:3], "long": [*LAZY, 1.0], "negative": [-1.0, *LAZY[1:]], "nan": [math.nan, *LAZY[1:]],
           "inf": [math.inf, *LAZY[1:]], "unknown_dict": {"zz": 1.0, "f0": 2.0}, "dict_str": {"f0": "a"},
           "fc_wrong_n": FeatureCosts([1.0, 2.0]), "none": None, "int": 3, "dict_partial": {"f1": 2.0},
           "str_list": ["1"] * 5, "object": object()}
    if form in bad:
        return bad[form]
    if form == "bad_csv":
        path = tmp_path / "bad.csv"
        path.write_text("feature,lazy\nf0,abc\n")
        return str(path)
    if form == "missing_csv":
        return str(tmp_path / "missing.csv")
    return pd.Series(LAZY, index=NAMES[::-1])  # "series" keyed in another order


@st.composite
def calls(draw: st.DrawFn) -> tuple[str | None, dict, str]:
    objective = draw(st.sampled_from(["regression", "binary"]))
    params = {"objective": objective, "num_threads": 1, "verbose": -1, "min_data_in_leaf": 5,
              draw(st.sampled_from(["num_leaves", "num_leaf", "max_leaves"])): draw(st.sampled_from([4, 7, 15]))}
    if draw(st.booleans()):
        params[draw(st.sampled_from(["learning_rate", "eta", "shrinkage_rate"]))] = 0.3
    kw = {
        "params": params,
        "budget": draw(st.sampled_from([0.0, 0.5, 1.0, 2.5, 6.0, 100.0])),
        "valid_set": draw(st.sampled_from(["tuple", "ds_raw", "df_shuffled"])),
        "costs": draw(st.sampled_from(["list", "array", "dict", "series", "fc", "csv", "dict_partial"])),
        "k_grid": draw(st.sampled_from([None, [1, 3], [2]])),
        "n_tradeoffs": draw(st.sampled_from([0, 1, 2])),
        "n_bisect": draw(st.sampled_from([0, 1])),
        "num_leaves_grid": draw(st.sampled_from(["auto", None, [3]])),
        "proxy_rows": draw(st.sampled_from(["auto", None, 100])),
        "n_jobs": 1,
        "max_fits": draw(st.sampled_from([None, 3, 12])),
        "time_limit": draw(st.sampled_from([None, 60.0])),
        "scoring": None,
        "search": draw(st.sampled_from(["full", "fast"])),
    }
    target = draw(st.sampled_from([None, None, *ARGS]))
    if target is not None:
        kw[target] = draw(JUNK[target])
    return target, kw, objective


def _cost_of(costs_form: object, original: object) -> FeatureCosts:
    """The FeatureCosts a valid costs argument stands for, built without the library's converters."""
    if isinstance(original, dict) and set(original) == {"f1"}:
        return FeatureCosts([0.0, 2.0, 0.0, 0.0, 0.0], feature_names=NAMES)
    return FeatureCosts(LAZY, feature_names=NAMES)


def _frozen(v: object) -> object:
    if isinstance(v, lgb.Dataset):
        return ("ds", None if v.data is None else np.array(v.data, dtype=object).copy(),
                None if v.label is None else np.array(v.label, dtype=object).copy())
    if isinstance(v, (tuple, list)) and not (isinstance(v, list) and v and isinstance(v[0], (int, float))):
        return type(v)(_frozen(x) for x in v)
    if isinstance(v, (pd.DataFrame, pd.Series)):
        return v.copy(deep=True)
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, FeatureCosts):
        return repr(v)
    if type(v).__eq__ is object.__eq__:  # compared by identity
        return v
    try:
        return copy.deepcopy(v)
    except Exception:
        return v


def _same(a: object, b: object) -> bool:
    if isinstance(a, (pd.DataFrame, pd.Series)):
        return isinstance(b, type(a)) and a.equals(b)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and bool(np.all((a == b) | ((a != a) & (b != b))))
    if isinstance(a, (tuple, list)):
        return isinstance(b, type(a)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:
        return a is b


def run_call(target: str | None, kw: dict, objective: str, tmp_path) -> None:
    y_train = Y_BIN[0] if objective == "binary" else Y_REG[0]
    train = lgb.Dataset(X_TRAIN, y_train, feature_name=NAMES, free_raw_data=False)
    kw = dict(kw)
    if isinstance(kw["valid_set"], str):
        kw["valid_set"] = _valid_set(kw["valid_set"], objective, True, tmp_path)
    if isinstance(kw["costs"], str):
        kw["costs"] = _costs(kw["costs"], tmp_path)
    before = {k: _frozen(v) for k, v in kw.items() if k in ("params", "valid_set", "costs", "budgets", "k_grid",
                                                          "num_leaves_grid")}
    x_before = X_TRAIN.copy()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = train_to_budget(kw["params"], train, num_boost_round=3, greedy=False, progress=False,
                                  **{k: v for k, v in kw.items() if k != "params"})
    except (ValueError, TypeError) as e:
        STATS["error"] += 1
        # a limit that stops the search among its proxies: no model it may return (the documented error)
        cut = "cut before its first model trained on every row" in str(e) and kw["max_fits"] is not None
        assert cut or target is not None, f"a valid call failed: {e!r}"
        # a bad costs CSV is named by its path ("The costs CSV '...' ..."), as FeatureCosts.from_csv names it
        named = f"'{target}'" in str(e) or (target == "costs" and "costs CSV" in str(e))
        assert cut or named, (target, repr(e))
        res = None
    for k, v in before.items():
        assert _same(v, _frozen(kw[k])), f"train_to_budget mutated {k!r}"
    assert np.array_equal(X_TRAIN, x_before)
    if res is None:
        return
    STATS[str(res.status)] += 1
    assert isinstance(res.status, Status)
    vs = kw["valid_set"]
    X_v = vs.data if isinstance(vs, lgb.Dataset) else vs[0]
    fc = _cost_of(kw["costs"], kw["costs"]) if target != "costs" else None
    # cross-validated, or the fast search's validation pick, refit on every pooled row
    pooled = res.chosen.folds > 0 or res.chosen.rows == len(X_TRAIN) + len(X_v)
    if fc is not None and not pooled:  # trained on the training rows, chosen on the validation rows: its cost there
        got = cost_report(TreeEnsemble.from_booster(res.booster), X_v, fc).total_cost.mean()
        assert math.isclose(got, res.cost, rel_tol=1e-9, abs_tol=1e-12), (got, res.cost)
    elif fc is not None:  # refit on every pooled row: its cost there is at most res.cost
        X_pool = (pd.concat([pd.DataFrame(X_TRAIN, columns=NAMES), X_v[NAMES]]) if isinstance(X_v, pd.DataFrame)
                  else np.vstack([X_TRAIN, X_v]))
        got = cost_report(TreeEnsemble.from_booster(res.booster), X_pool, fc).total_cost.mean()
        assert got <= res.cost + 1e-9 * max(1.0, res.cost), (got, res.cost)
    if res.status in (Status.SUCCESS, Status.CONSTANT):
        assert fits_budget(res.cost, float(kw["budget"]))


_BASE = {"params": {"objective": "binary", "num_threads": 1, "verbose": -1, "min_data_in_leaf": 5, "num_leaves": 15},
         "budget": 100.0, "valid_set": "df_shuffled", "costs": "array", "k_grid": None, "n_tradeoffs": 1,
         "n_bisect": 1, "num_leaves_grid": [3], "proxy_rows": 100, "n_jobs": 1, "max_fits": None,
         "time_limit": 60.0, "scoring": None, "search": "fast"}


@SETTINGS
@given(call=calls())
# k_grid=[None] raised int()'s TypeError without naming 'k_grid'; [1.5] was silently truncated to 1
@example(call=("k_grid", {**_BASE, "k_grid": [None]}, "binary"))
@example(call=("k_grid", {**_BASE, "k_grid": [1.5], "search": "full"}, "binary"))
@example(call=("k_grid", {**_BASE, "k_grid": 3, "search": "full"}, "regression"))
# an int beyond float range raised OverflowError (budget, budgets, time_limit)
@example(call=("budget", {**_BASE, "budget": 10**400}, "binary"))
@example(call=("budgets", {**_BASE, "budgets": [10**400]}, "binary"))
@example(call=("time_limit", {**_BASE, "time_limit": 10**400}, "binary"))
# scoring="accuracy" on a regression raised sklearn's "continuous is not supported", not naming 'scoring'
@example(call=("scoring", {**_BASE, "params": {**_BASE["params"], "objective": "regression"},
                           "scoring": "accuracy", "valid_set": "ds_raw"}, "regression"))
@pytest.mark.fork  # draws search="fast" (the fork's cegb_budget) and groups
def test_train_to_budget_names_its_errors_or_returns_an_honest_result(call, tmp_path_factory) -> None:
    target, kw, objective = call
    run_call(target, kw, objective, tmp_path_factory.mktemp("ttb"))
