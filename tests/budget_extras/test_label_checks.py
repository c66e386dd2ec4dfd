"""Every fit that takes labels refuses NaN or infinite ones, naming the argument and the count."""

from __future__ import annotations

from typing import Any

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras import CSTC, AdaptGBRT, BudgetPrune
from budget_extras.budgetprune import FeatureDropRefit
from budget_extras.core._validation import check_finite_labels


@pytest.fixture(scope="module")
def problem() -> dict[str, Any]:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(float)
    params = {"objective": "binary", "num_leaves": 5, "min_data_in_leaf": 5, "verbose": -1, "num_threads": 1}
    nan = y.copy()
    nan[[3, 50, 90]] = np.nan
    return {"X": X, "y": y, "nan": nan, "booster": lgb.train(params, lgb.Dataset(X, y), num_boost_round=4)}


FITS = {
    "BudgetPrune": lambda b, X, y, yv: BudgetPrune(b, lam=0.01).fit(X, y, X_valid=X, y_valid=yv),
    "FeatureDropRefit": lambda b, X, y, yv: FeatureDropRefit(b, budget=1.0).fit(X, y, X_valid=X, y_valid=yv),
    "AdaptGBRT": lambda b, X, y, yv: AdaptGBRT(b, n_trees=2, max_em_iter=1, budget=3.0).fit(
        X, y, X_valid=X, y_valid=yv),
    "CSTC": lambda b, X, y, yv: CSTC(b, depth=1, n_cycles=0, n_alternations=1, max_iter=3, task="binary").fit(
        X, y, X_valid=X, y_valid=yv),
}


@pytest.mark.parametrize("fit", sorted(FITS))
@pytest.mark.parametrize("where", ["y", "y_valid"])
def test_nan_labels_are_refused_naming_the_argument_and_the_count(problem, fit, where):
    y, yv = (problem["nan"], problem["y"]) if where == "y" else (problem["y"], problem["nan"])
    with pytest.raises(ValueError, match=rf"'{where}' argument.* must hold finite labels\. Got 3 NaN and 0 infinite "
                                         r"of 200 labels \(the first at position 3\)"):
        FITS[fit](problem["booster"], problem["X"], y, yv)


def test_check_finite_labels_counts_nan_and_inf_and_leaves_class_names_alone():
    with pytest.raises(ValueError, match=r"'y' argument of f must hold finite labels\. Got 1 NaN and 2 infinite of 5 "
                                         r"labels \(the first at position 1\)"):
        check_finite_labels([0.0, np.inf, np.nan, -np.inf, 1.0], name="y", owner="f")
    for ok in (np.array(["a", "b"]), np.array(["a", None], dtype=object), [0, 1, 2], [True, False]):
        np.testing.assert_array_equal(check_finite_labels(ok, name="y"), np.asarray(ok))
