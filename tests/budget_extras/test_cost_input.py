"""One cost input: every entry point takes the same forms of costs and charges the same."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from budget_extras import CSTC, QWYC, AdaptGBRT, BudgetPrune, FeatureCosts, TreeEnsemble, cost_report, train_to_budget
from budget_extras.core import as_feature_costs

NAMES = ["a", "b", "c", "d", "e"]
LAZY = [1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    rng = np.random.default_rng(18)
    X = pd.DataFrame(rng.normal(size=(300, 5)), columns=NAMES)
    y = (X["a"] + X["b"] - X["e"] > 0).astype(int).to_numpy()
    params = {"objective": "binary", "num_leaves": 5, "min_data_in_leaf": 5, "verbose": -1, "seed": 0,
              "num_threads": 1}
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=5)
    csv = tmp_path_factory.mktemp("costs") / "costs.csv"
    # a different row order than the model's: the CSV is matched by name
    pd.DataFrame({"feature": NAMES[::-1], "cost": LAZY[::-1]}).to_csv(csv, index=False)
    return {"X": X, "y": y, "booster": booster, "csv": csv}


FORMS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "list": lambda s: list(LAZY),
    "numpy": lambda s: np.array(LAZY),
    "dict_by_name": lambda s: dict(zip(NAMES[::-1], LAZY[::-1], strict=True)),
    "series_by_name": lambda s: pd.Series(LAZY[::-1], index=NAMES[::-1]),
    "FeatureCosts_by_name": lambda s: FeatureCosts(dict(zip(NAMES, LAZY, strict=True)), feature_names=NAMES[::-1]),
    "FeatureCosts_positional": lambda s: FeatureCosts(LAZY),
    "csv_str": lambda s: str(s["csv"]),
    "csv_path": lambda s: Path(s["csv"]),
}

ENTRY_POINTS: dict[str, Callable[[dict[str, Any], Any], Any]] = {
    "cost_report": lambda s, c: cost_report(TreeEnsemble.from_booster(s["booster"]), s["X"], c).total_cost,
    "QWYC.cost_report": lambda s, c: QWYC(s["booster"], alpha=0.0, holdout=None)
    .fit(s["X"])
    .cost_report(s["X"], c)
    .total_cost,
    "BudgetPrune.fit": lambda s, c: BudgetPrune(s["booster"], lam=0.05, costs=c)
    .fit(s["X"], s["y"], X_valid=s["X"])
    .collapsed_,
    "AdaptGBRT.fit": lambda s, c: AdaptGBRT(s["booster"], n_trees=2, max_em_iter=1, costs=c)
    .fit(s["X"], s["y"])
    .cost_vec_,
    "CSTC.fit": lambda s, c: CSTC(s["booster"], costs=c, depth=1, n_cycles=0, n_alternations=1, max_iter=3)
    .fit(s["X"], s["y"].astype(float))
    .cost_report(s["X"])
    .total_cost,
    "train_to_budget": lambda s, c: np.array(
        [
            (cand.cost, cand.score)
            for cand in train_to_budget(
                {"objective": "binary", "num_leaves": 5, "min_data_in_leaf": 5, "num_threads": 1},
                lgb.Dataset(s["X"], s["y"]), budget=5.0, valid_set=(s["X"], s["y"]), costs=c, num_boost_round=5,
                progress=False, greedy=False, n_tradeoffs=2, n_bisect=0, k_grid=[2], num_leaves_grid=None,
            ).frontier
        ]
    ),
}


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_every_entry_point_takes_every_cost_form(setup: dict[str, Any], entry: str, form: str) -> None:
    reference = ENTRY_POINTS[entry](setup, FeatureCosts(LAZY, feature_names=NAMES))
    np.testing.assert_array_equal(ENTRY_POINTS[entry](setup, FORMS[form](setup)), reference)


@pytest.mark.parametrize(
    ("costs", "error", "match"),
    [
        ([1.0, 2.0], ValueError, r"'costs' argument of M must hold one cost per feature \(5\)\. Got shape \(2,\)"),
        ([1.0, -2.0, 1.0, 1.0, 1.0], ValueError, r"'costs' parameter must contain finite numbers >= 0"),
        ({"zz": 1.0}, ValueError, r"'costs' argument of M names unknown features \['zz'\]; known features are"),
        (pd.Series([1.0, 2.0], index=["a", "a"]), ValueError, r"'costs' argument of M gives feature 'a' twice"),
        ("no/such/file.csv", ValueError, r"path of a costs CSV\. Got 'no/such/file.csv', which is not a file"),
        (object(), TypeError, r"'costs' argument of M must be a FeatureCosts, a list or array"),
        (FeatureCosts([1.0, 2.0]), ValueError, r"describes 2 features; the model has 5"),
    ],
)
def test_one_set_of_cost_errors(costs: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        as_feature_costs(costs, n_features=5, feature_names=NAMES, owner="M")


def test_unlisted_features_cost_zero() -> None:
    fc = as_feature_costs({"b": 2.0}, n_features=5, feature_names=NAMES)
    np.testing.assert_array_equal(fc.lazy, [0.0, 2.0, 0.0, 0.0, 0.0])


def test_names_without_data_names_are_refused() -> None:
    with pytest.raises(ValueError, match="keyed by feature name, but the data have no feature names"):
        as_feature_costs({"b": 2.0}, n_features=5)
