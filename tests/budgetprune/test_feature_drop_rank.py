"""FeatureDropRefit's ranking: how many training rows it measures the loss rise on, and what it measures.

Oracles: each feature dropped alone and routed from scratch (``route``), the loss and the cost
accounting (``usage_cost``) computed on the routed leaves.
"""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest

import budget_extras.budgetprune._feature_drop as fd
import budget_extras.budgetprune._rank as rk
from budget_extras.budgetprune import FeatureDropRefit
from budget_extras.budgetprune._drop_refit import drop_forcing, leaf_sum, prepare_rows, route
from budget_extras.budgetprune._error_terms import mean_loss
from budget_extras.budgetprune._usage import path_tables, usage_cost
from budget_extras.core import FeatureCosts, TreeEnsemble


@pytest.fixture
def rng():
    return np.random.default_rng(35)


def _model(rng, n, d, rounds=20, num_leaves=8):
    X = rng.normal(size=(n, d))
    y = ((X @ rng.uniform(0.5, 1.0, size=d) + rng.normal(size=n)) > 0).astype(float)
    params = {"objective": "binary", "verbose": -1, "num_leaves": num_leaves, "learning_rate": 0.1,
              "num_threads": 1, "seed": 0}
    return lgb.train(params, lgb.Dataset(X, y), num_boost_round=rounds), X, y


def _ranking_rows(seen, booster, X, y, n_train):
    est = FeatureDropRefit(booster, budget=0.5 * X.shape[1] + 0.5, scoring="roc_auc").fit(
        X[:n_train], y[:n_train], X_valid=X[n_train:n_train + 600], y_valid=y[n_train:n_train + 600])
    return seen[-1], est


def test_the_ranking_measures_more_rows_where_its_work_is_a_small_share_of_a_training(rng, monkeypatch, ranking_rows):
    """Few features per tree and many training rows: the loss rise is measured on more than
    ``PROXY_ROWS`` rows, up to every search row; many features per tree: ``PROXY_ROWS``."""
    monkeypatch.setattr(fd, "PROXY_ROWS", 300)
    few, X, y = _model(rng, 3600, 2)
    rows, _ = _ranking_rows(ranking_rows, few, X, y, 3000)
    assert rows.size == 3000  # every training row: two features, at most two splits' features per tree
    many, X, y = _model(rng, 3600, 40, num_leaves=31)
    ens = TreeEnsemble.from_booster(many)
    internal = ~ens.is_leaf
    pairs = np.unique(np.asarray(ens.node_tree)[internal] * ens.n_features + ens.feature[internal]).size
    assert rk.RANK_SHARE * 1500 * ens.n_trees / pairs < 300  # more work per row than the share allows
    rows, _ = _ranking_rows(ranking_rows, many, X, y, 1500)
    assert rows.size == 300
    assert rk.rank_rows(ens, 10**6, 5000, 300) == 5000  # never more than the search's rows


def test_the_ranking_rows_and_the_fit_are_the_same_on_every_run(rng, monkeypatch, ranking_rows):
    booster, X, y = _model(rng, 3600, 6)
    monkeypatch.setattr(fd, "PROXY_ROWS", 200)
    monkeypatch.setattr(rk, "RANK_SHARE", 1)  # a sample of the training rows, not all of them
    first, a = _ranking_rows(ranking_rows, booster, X, y, 3000)
    again, b = _ranking_rows(ranking_rows, booster, X, y, 3000)
    assert 200 < first.size < 3000
    np.testing.assert_array_equal(first, again)
    assert a.path_ == b.path_ and a.dropped_features_ == b.dropped_features_


@pytest.mark.parametrize("split", [0.0, 0.5])
def test_drop_alone_equals_each_feature_routed_from_scratch(rng, monkeypatch, split):
    """The loss on every row and the cost on the first rows of each feature dropped alone, with an
    acquisition group: without split costs from the trees that split on the feature (per-row feature
    counts), with them from every tree."""
    d = 12
    booster, X, y = _model(rng, 1500, d, rounds=30, num_leaves=4)
    ens = TreeEnsemble.from_booster(booster)
    costs = FeatureCosts(lazy=rng.uniform(1.0, 10.0, size=d), groups=[0, 0, 0] + [-1] * (d - 3), group_cost={0: 7.0},
                         split=split)
    split_cost = np.broadcast_to(np.asarray(costs.split, dtype=np.float64), (d,)).copy()
    counted = []
    real = rk.usage_cost_delta
    monkeypatch.setattr(rk, "usage_cost_delta", lambda *a: counted.append(1) or real(*a))
    Xr = prepare_rows(ens, X)
    none = drop_forcing(ens, ())
    leaves = route(ens, Xr, none)[0]
    raw = leaf_sum(np.asarray(ens.value), leaves, np.asarray(ens.tree_class, dtype=np.int64), 1)
    features = np.unique(ens.feature[~ens.is_leaf])
    loss, cost, cost_full = rk.drop_alone(ens, Xr, y, leaves, raw, features, costs, split_cost, 400, counted=True)
    assert len(counted) == (features.size if split == 0.0 else 0)

    def cost_of(forced, lv):
        bits, pcost = path_tables(ens, forced, split_cost)
        return usage_cost(np.ascontiguousarray(lv[:, :400]), bits, pcost, costs.unit, costs.unit_cost, d)[0].mean()

    assert cost_full == pytest.approx(cost_of(none, leaves), rel=1e-12)
    for j, f in enumerate(features):
        forced = drop_forcing(ens, (int(f),))
        lv = route(ens, Xr, forced)[0]
        moved = leaf_sum(np.asarray(ens.value), lv, np.asarray(ens.tree_class, dtype=np.int64), 1)
        assert loss[j] == pytest.approx(mean_loss(ens, y, moved[:, 0]), rel=1e-12)
        assert cost[j] == pytest.approx(cost_of(forced, lv), rel=1e-12)
