"""Labels and models a method cannot use are refused with a ValueError naming the argument."""

from __future__ import annotations

from typing import Any

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras import CSTC, QWYC, AdaptGBRT, BudgetPrune


@pytest.fixture(scope="module")
def problem() -> dict[str, Any]:
    rng = np.random.default_rng(14)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    params = {"num_leaves": 5, "min_data_in_leaf": 5, "verbose": -1, "seed": 0, "num_threads": 1}
    binary = lgb.train({**params, "objective": "binary"}, lgb.Dataset(X, y), num_boost_round=4)
    regression = lgb.train({**params, "objective": "regression"}, lgb.Dataset(X, X[:, 0] * 3), num_boost_round=4)
    rf = lgb.train(
        {**params, "objective": "binary", "boosting": "rf", "bagging_fraction": 0.8, "bagging_freq": 1},
        lgb.Dataset(X, y),
        num_boost_round=4,
    )
    return {"X": X, "y": y, "binary": binary, "regression": regression, "rf": rf}


@pytest.mark.parametrize("model", ["binary", "rf"])
@pytest.mark.parametrize(
    ("labels", "match"),
    [
        (lambda y: y + 1, r"'y' argument must hold the model's classes 0\.\.1 .*Got 2\.0"),
        (
            lambda y: np.where(np.arange(y.size) == 3, np.nan, y),
            r"'y' argument must hold finite labels\. Got 1 NaN and 0 infinite of 200 labels \(the first at position 3",
        ),
        (lambda y: np.where(y == 1, "yes", "no"), r"'y' argument must hold numeric labels"),
        (lambda y: y[:-1], r"'y' argument must have one label per row of X \(200\)\. Got 199"),
        (lambda y: y.astype(float) * 0.5, r"'y' argument must hold the model's classes"),
    ],
    ids=["outside_classes", "nan", "strings", "wrong_length", "fractional"],
)
def test_budgetprune_refuses_labels_the_model_cannot_have(
    problem: dict[str, Any], model: str, labels: Any, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        BudgetPrune(problem[model], lam=0.1).fit(problem["X"], labels(problem["y"]), X_valid=problem["X"])


def test_budgetprune_still_takes_regression_targets(problem: dict[str, Any]) -> None:
    bp = BudgetPrune(problem["regression"], lam=0.1).fit(problem["X"], problem["X"][:, 0] * 3, X_valid=problem["X"])
    assert bp.result_.status in (0, 1)


def test_qwyc_refuses_a_regression_model(problem: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"'model' argument of QWYC must be a binary or multiclass .*'regression'"):
        QWYC(problem["regression"], alpha=0.01).fit(problem["X"])


@pytest.mark.parametrize("scale", [3.0, -1.0, np.nan])
def test_adapt_refuses_f0_values_that_are_not_probabilities(problem: dict[str, Any], scale: float) -> None:
    def f0(X: Any) -> np.ndarray:
        p = np.full((np.shape(X)[0], 2), 0.5)
        p[5] = scale
        return p

    with pytest.raises(ValueError, match=r"'f0' argument of AdaptGBRT must return class probabilities in \[0, 1\]"):
        AdaptGBRT(f0, n_trees=2, max_em_iter=1).fit(problem["X"], problem["y"])


def test_adapt_refuses_probabilities_that_do_not_sum_to_one(problem: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"sum to 1 per row\. Got a sum of 0\.4"):
        AdaptGBRT(lambda X: np.full((np.shape(X)[0], 2), 0.2), n_trees=2, max_em_iter=1).fit(problem["X"], problem["y"])


def test_adapt_refuses_a_regression_lightgbm_f0(problem: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"'f0' argument of AdaptGBRT must be a classifier .*'regression'"):
        AdaptGBRT(problem["regression"], n_trees=2, max_em_iter=1).fit(problem["X"], problem["y"])


@pytest.mark.parametrize(
    ("est", "call"),
    [
        ("adapt", lambda X, y, m: AdaptGBRT(m, n_trees=2, max_em_iter=1).fit(X, y[:-1])),
        ("adapt_nan", lambda X, y, m: AdaptGBRT(m, n_trees=2, max_em_iter=1).fit(X, np.where(y == 1, np.nan, 0.0))),
        ("cstc", lambda X, y, m: CSTC(depth=1).fit(X, y[:-1])),
    ],
)
def test_wrong_labels_name_y(problem: dict[str, Any], est: str, call: Any) -> None:
    with pytest.raises(ValueError, match="'y' argument"):
        call(problem["X"], problem["y"], problem["binary"])


def test_object_columns_name_the_value_and_column_not_a_chunk_shape():
    """A 9,043 x 15 object table read 'Got an array of shape (1, 15)': the message names the cell."""
    import lightgbm as lgb
    import pandas as pd

    from budget_extras import FeatureCosts, TreeEnsemble, cost_report

    Xn = np.random.default_rng(0).normal(size=(60, 2))
    ens = TreeEnsemble.from_booster(lgb.train({"verbose": -1}, lgb.Dataset(Xn, Xn[:, 0]), num_boost_round=2))
    table = pd.DataFrame({"a": np.arange(60.0), "b": ["yes"] * 60}).values
    with pytest.raises(TypeError, match=r"'X'.*numbers\. Got 'yes' \(type str\) in column 1 instead"):
        cost_report(ens, table, FeatureCosts([1.0, 1.0]))
