"""row_costs_from_leaves equals cost_report's total cost (LightGBM routes the rows, our accounting)."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras import FeatureCosts, TreeEnsemble, cost_report
from budget_extras.core._leaf_cost import row_costs_from_leaves


@pytest.mark.parametrize(
    "costs",
    [
        FeatureCosts([1.0, 2.0, 3.0, 4.0, 5.0]),
        FeatureCosts([1.0, 2.0, 3.0, 4.0, 5.0], groups=[0, 0, -1, 1, 1], split=[0.1, 0, 0.2, 0, 0.3], tree=0.5),
    ],
)
@pytest.mark.parametrize("objective", ["binary", "multiclass"])
def test_equals_cost_report(costs, objective):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 5))
    X[rng.random(X.shape) < 0.1] = np.nan  # missing values take LightGBM's default directions
    X[:, 4] = rng.integers(0, 6, size=3000)  # a categorical feature
    y = (np.nan_to_num(X[:, 0]) + X[:, 4] % 2 > 0.5).astype(int) + (objective == "multiclass") * (X[:, 4] > 3)
    params = {"objective": objective, "num_leaves": 15, "verbosity": -1, "num_threads": 1}
    if objective == "multiclass":
        params["num_class"] = 3
    b = lgb.train(params, lgb.Dataset(X, y, categorical_feature=[4]), num_boost_round=12)
    ens = TreeEnsemble.from_booster(b)
    got = row_costs_from_leaves(ens, b.predict(X, pred_leaf=True), costs)
    np.testing.assert_allclose(got, cost_report(ens, X, costs).total_cost, rtol=0, atol=1e-9)


def test_refuses_leaves_of_another_shape():
    X = np.random.default_rng(0).normal(size=(200, 5))
    b = lgb.train({"objective": "regression", "verbosity": -1}, lgb.Dataset(X, X[:, 0]), num_boost_round=3)
    ens = TreeEnsemble.from_booster(b)
    with pytest.raises(ValueError, match=r"'leaves'.*\(n_rows, 3\).*Got \(200, 2\)"):
        row_costs_from_leaves(ens, b.predict(X, pred_leaf=True)[:, :2], FeatureCosts([1.0] * 5))
    with pytest.raises(ValueError, match=r"'leaves'.*leaf the model does not have"):
        row_costs_from_leaves(ens, np.full((2, 3), 999), FeatureCosts([1.0] * 5))
