"""CostReport.from_usage applies the cost rules once: it agrees with cost_report and refuses bad arguments."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
import scipy.sparse as sp

from budget_extras import CostReport, FeatureCosts, TreeEnsemble, cost_report
from budget_extras.core._report import model_coupled_cost

COSTS = FeatureCosts(
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    coupled=[10.0, 0.0, 20.0, 0.5, 0.0, 7.0],
    groups=["a", "a", None, "b", "b", None],
    split=[0.1, 0.0, 0.2, 0.0, 0.3, 0.05],
    tree=0.25,
)


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 6))
    y = X[:, 0] + (X[:, 2] > 0) * X[:, 4] + 0.3 * X[:, 5] + 0.1 * rng.normal(size=400)
    params = {"objective": "regression", "num_leaves": 5, "verbose": -1, "num_threads": 1, "seed": 0}
    ens = TreeEnsemble.from_booster(lgb.train(params, lgb.Dataset(X, y), num_boost_round=20))
    return ens, X[:150]


def _from_oracle(ens, oracle, **kw):
    """from_usage given only what each row used and evaluated: the acquisition and coupled rules are its own."""
    return CostReport.from_usage(
        ens,
        COSTS,
        oracle.used,
        eval_cost=oracle.eval_cost,
        splits_evaluated=oracle.splits_evaluated,
        trees_evaluated=oracle.trees_evaluated,
        tree_order=oracle.tree_order,
        **kw,
    )


@pytest.mark.parametrize("early_exit", [False, True])
def test_from_usage_agrees_with_cost_report(model, early_exit):
    ens, X = model
    # the trees that split on feature 5 (coupled cost 7) last; with early exit no row reaches them
    on_5 = np.array([5 in ens.feature[(ens.node_tree == t) & ~ens.is_leaf] for t in range(ens.n_trees)])
    assert 0 < on_5.sum() < ens.n_trees
    order = np.concatenate([np.flatnonzero(~on_5), np.flatnonzero(on_5)])
    n_trees = np.random.default_rng(1).integers(0, (~on_5).sum() + 1, size=X.shape[0]) if early_exit else None
    oracle = cost_report(ens, X, COSTS, tree_order=order, n_trees=n_trees)
    reached = order[: int(oracle.trees_evaluated.max())]
    got = _from_oracle(ens, oracle, coupled_trees=reached)
    np.testing.assert_array_equal(got.acquisition_cost, oracle.acquisition_cost)
    np.testing.assert_array_equal(got.total_cost, oracle.total_cost)
    assert (got.acquired != oracle.acquired).nnz == 0
    assert got.coupled_cost == oracle.coupled_cost
    np.testing.assert_array_equal(got.coupled_features, oracle.coupled_features)
    np.testing.assert_array_equal(got.tree_order, oracle.tree_order)
    assert got.feature_names == oracle.feature_names
    if early_exit:  # the coupled rule follows the trees evaluated, not the whole order
        assert not got.coupled_features[5]
        assert _from_oracle(ens, oracle).coupled_cost == got.coupled_cost + COSTS.coupled[5]


def test_model_coupled_cost_pays_each_feature_of_the_model_once(model):
    ens, X = model
    features, cost = model_coupled_cost(ens, COSTS)
    split_on = np.unique(ens.feature[~ens.is_leaf])
    np.testing.assert_array_equal(np.flatnonzero(features), split_on)
    assert cost == float(COSTS.coupled[split_on].sum()) == cost_report(ens, X, COSTS).coupled_cost
    no_costs = model_coupled_cost(ens, None)
    np.testing.assert_array_equal(no_costs[0], features)
    assert no_costs[1] == 0.0


def test_without_feature_costs_the_caller_prices_acquisition(model):
    ens, X = model
    oracle = cost_report(ens, X, COSTS)
    acq = np.full(X.shape[0], 3.0)
    got = CostReport.from_usage(
        ens, None, oracle.used, eval_cost=oracle.eval_cost, splits_evaluated=oracle.splits_evaluated,
        trees_evaluated=oracle.trees_evaluated, acquisition_cost=acq,
    )
    np.testing.assert_array_equal(got.total_cost, acq + oracle.eval_cost)
    assert got.coupled_cost == 0.0 and (got.acquired != oracle.used).nnz == 0


def _bad_arguments(ens, rep):
    n, d = rep.used.shape
    ok = {
        "ensemble": ens,
        "costs": COSTS,
        "used": rep.used,
        "eval_cost": rep.eval_cost,
        "splits_evaluated": rep.splits_evaluated,
        "trees_evaluated": rep.trees_evaluated,
    }
    cases = [
        ("ensemble", {"ensemble": "model.txt"}, TypeError),
        ("costs", {"costs": FeatureCosts([1.0] * (d + 1))}, TypeError),
        ("costs", {"costs": [1.0] * d}, TypeError),
        ("used", {"used": rep.used[:, :-1]}, ValueError),
        ("used", {"used": rep.used.astype(np.float64)}, TypeError),
        ("used", {"used": [[True] * d] * n}, TypeError),
        ("eval_cost", {"eval_cost": rep.eval_cost[:-1]}, ValueError),
        ("eval_cost", {"eval_cost": np.full(n, np.nan)}, ValueError),
        ("eval_cost", {"eval_cost": np.array(["1"] * n)}, TypeError),
        ("splits_evaluated", {"splits_evaluated": -rep.splits_evaluated - 1}, ValueError),
        ("trees_evaluated", {"trees_evaluated": rep.trees_evaluated.astype(np.float64)}, TypeError),
        ("trees_evaluated", {"trees_evaluated": rep.trees_evaluated.astype(bool)}, TypeError),
        ("tree_order", {"tree_order": [0, ens.n_trees]}, ValueError),
        ("tree_order", {"tree_order": [1, 1]}, ValueError),
        ("coupled_trees", {"coupled_trees": [-1]}, ValueError),
        ("acquisition_cost", {"costs": None}, ValueError),
        ("acquisition_cost", {"acquisition_cost": -np.ones(n)}, ValueError),
        ("acquired", {"acquired": sp.csr_matrix((n + 1, d), dtype=bool)}, ValueError),
        ("feature_counts", {"feature_counts": rep.used}, TypeError),
        ("feature_names", {"feature_names": ["a"]}, ValueError),
    ]
    return [(name, {**ok, **change}, err) for name, change, err in cases]


def test_from_usage_refuses_bad_arguments_naming_them(model):
    ens, X = model
    rep = cost_report(ens, X, COSTS)
    for name, kwargs, err in _bad_arguments(ens, rep):
        args = (kwargs.pop("ensemble"), kwargs.pop("costs"), kwargs.pop("used"))
        with pytest.raises(err, match=f"'{name}'"):
            CostReport.from_usage(*args, **kwargs)
