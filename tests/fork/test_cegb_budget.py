"""cegb_budget: the learner keeps the mean per-row lazy acquisition cost on the training rows at
or below a budget (a split whose new purchases would exceed it is not made).

Oracle: an independent cost walk of the saved model (``dump_model``) over the training rows:
a row pays a feature's (group's) lazy cost once if any of its paths through any tree tests it.
Without bagging that mean is <= the budget exactly; the parameter unset (0) leaves models
byte-identical; a continued model counts what its first trees already bought.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from .scenarios import BASE

LAZY = [4.0, 1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 1.5]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(2500, len(LAZY)))
    logit = 1.5 * X[:, 0] + X[:, 1] * X[:, 2] + np.sin(2 * X[:, 3]) + 0.5 * X[:, 4] - 0.7 * X[:, 6] ** 2
    y = (logit + 0.5 * rng.normal(size=len(X)) > 0).astype(float)
    return X, y


def _train(lgb, data, rounds=40, init_model=None, **params):
    X, y = data
    full = dict(BASE, objective="binary", num_leaves=15, learning_rate=0.1, **params)
    return lgb.train(full, lgb.Dataset(X, y), num_boost_round=rounds, init_model=init_model)


def _paid(booster, X):
    """Boolean (rows, features): row i's paths through the trees test feature f (numerical splits)."""
    paid = np.zeros(X.shape, dtype=bool)

    def walk(node, rows):
        if "split_feature" not in node or rows.size == 0:
            return
        f = node["split_feature"]
        paid[rows, f] = True
        assert node["decision_type"] == "<="
        left = X[rows, f] <= node["threshold"]
        walk(node["left_child"], rows[left])
        walk(node["right_child"], rows[~left])

    for tree in booster.dump_model()["tree_info"]:
        walk(tree["tree_structure"], np.arange(X.shape[0]))
    return paid


def _walk_cost(booster, X, lazy=LAZY, groups=None):
    """Mean per-row lazy cost: each group (a feature alone when ``groups`` is None) paid once per row."""
    paid = _paid(booster, X)
    if groups is None:
        return float((paid * np.asarray(lazy)).sum(axis=1).mean())
    groups = np.asarray(groups)
    total = np.zeros(X.shape[0])
    for g in np.unique(groups):
        members = np.flatnonzero(groups == g)
        total += paid[:, members].any(axis=1) * max(lazy[m] for m in members)
    return float(total.mean())


@pytest.mark.parametrize(("tradeoff", "scale"), [(0.0, "none"), (0.05, "first_gain"), (1e-4, "none")])
@pytest.mark.parametrize("fraction", [0.1, 0.3, 0.6])
def test_training_cost_within_budget(lgb, data, tradeoff, scale, fraction):
    X, _ = data
    full = _walk_cost(_train(lgb, data, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=tradeoff,
                             cegb_tradeoff_scale=scale), X)
    budget = fraction * _walk_cost(_train(lgb, data), X)
    model = _train(lgb, data, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=tradeoff, cegb_tradeoff_scale=scale,
                   cegb_budget=budget)
    cost = _walk_cost(model, X)
    assert cost <= budget * (1 + 1e-9)
    assert model.num_trees() == 40 and sum(model.feature_importance("split")) > 0
    if tradeoff == 0.0:  # purchases are free below the budget: it is spent almost to the last row
        assert cost >= 0.8 * budget
    else:
        assert cost <= full + 1e-9  # the cap only removes purchases


def test_unset_is_byte_identical(lgb, data):
    a = _train(lgb, data, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.01)
    b = _train(lgb, data, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.01, cegb_budget=0.0)
    assert a.model_to_string() == b.model_to_string()
    assert "cegb_budget" not in a.model_to_string()
    # without any penalty, cegb_budget=0 keeps CEGB off: the plain model
    assert _train(lgb, data, cegb_budget=0.0).model_to_string() == _train(lgb, data).model_to_string()


def test_groups_are_paid_once(lgb, data):
    X, _ = data
    groups = [0, 0, 1, 1, 2, 3, 4, 4]
    budget = 3.0
    model = _train(lgb, data, cegb_penalty_feature_lazy=LAZY, cegb_feature_group=groups, cegb_tradeoff=0.0,
                   cegb_budget=budget)
    cost = _walk_cost(model, X, groups=groups)
    assert cost <= budget * (1 + 1e-9)
    assert cost >= 0.8 * budget


def test_multiclass_counts_every_class_tree(lgb, data):
    X, y = data
    y3 = y + (X[:, 5] > 0.5)
    full = dict(BASE, objective="multiclass", num_class=3, num_leaves=7, cegb_penalty_feature_lazy=LAZY,
                cegb_tradeoff=0.0, cegb_budget=2.5)
    model = lgb.train(full, lgb.Dataset(X, y3), num_boost_round=15)
    assert _walk_cost(model, X) <= 2.5 * (1 + 1e-9)


def test_continued_training_counts_the_first_trees(lgb, data):
    X, _ = data
    first = _train(lgb, data, rounds=10)
    c0 = _walk_cost(first, X)
    # a budget below what the first trees bought: the new trees buy nothing more
    low = _train(lgb, data, rounds=10, init_model=first, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.0,
                 cegb_budget=0.5 * c0)
    assert _walk_cost(low, X) == pytest.approx(c0)
    high = _train(lgb, data, rounds=10, init_model=first, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.0,
                  cegb_budget=1.2 * c0)
    assert c0 < _walk_cost(high, X) <= 1.2 * c0 * (1 + 1e-9)


def test_bagging_is_close(lgb, data):
    """In-bag purchases are scaled to all rows; out-of-bag rows pay after each tree (documented slack)."""
    X, _ = data
    budget = 4.0
    model = _train(lgb, data, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.0, cegb_budget=budget,
                   bagging_fraction=0.5, bagging_freq=1)
    assert _walk_cost(model, X) <= 1.05 * budget


def test_goss_is_close(lgb, data):
    """GOSS samples the rows as bagging does (docs/cegb.md: worst 1.0184x the budget over 640 models);
    this configuration measured 1.0057x."""
    X, y = data
    budget = 6.0
    params = dict(BASE, objective="binary", num_leaves=15, learning_rate=0.3, seed=19, data_sample_strategy="goss",
                  cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=1e-4, cegb_budget=budget)
    model = lgb.train(params, lgb.Dataset(X, y), num_boost_round=40)
    assert budget < _walk_cost(model, X) <= 1.05 * budget


def _trees(booster):
    return [t["tree_structure"] for t in booster.dump_model()["tree_info"]]


def test_lazy_costs_near_the_largest_double_keep_the_budget(lgb, data):
    """Costs and budget scaled by 2**1016 (about 7e305): budget x rows would overflow a double; the
    cap is kept per row, so the model is the one of the unscaled costs (a power of two scales exactly)."""
    X, _ = data
    scale = 2.0 ** 1016
    huge = [c * scale for c in LAZY]
    model = _train(lgb, data, cegb_penalty_feature_lazy=huge, cegb_tradeoff=0.0, cegb_budget=3.0 * scale)
    assert _walk_cost(model, X) <= 3.0 * (1 + 1e-9)  # in units of `scale` (a sum over rows in it overflows)
    assert _trees(model) == _trees(_train(lgb, data, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.0,
                                          cegb_budget=3.0))


def test_lazy_costs_whose_sum_overflows_are_refused(lgb, data):
    with pytest.raises(lgb.basic.LightGBMError,
                       match=r"^cegb_penalty_feature_lazy: with cegb_budget=1e\+308 the lazy costs must sum to at "
                             r"most .*, got a sum that overflows a double \(largest cost 1e\+308\)"):
        _train(lgb, data, rounds=2, cegb_penalty_feature_lazy=[1e308] * len(LAZY), cegb_tradeoff=0.0,
               cegb_budget=1e308)


@pytest.mark.parametrize(("params", "name"), [
    ({"cegb_penalty_feature_lazy": [1e306] * len(LAZY)}, "cegb_penalty_feature_lazy"),
    ({"cegb_penalty_feature_coupled": [1e300] * len(LAZY), "cegb_tradeoff": 1e10}, "cegb_penalty_feature_coupled"),
    ({"cegb_penalty_split": 1e306}, r"cegb_penalty_split \+ cegb_penalty_feature_split"),
], ids=["lazy", "coupled", "split"])
def test_penalties_that_overflow_are_refused(lgb, data, params, name):
    """tradeoff x cost x rows beyond the largest double: an infinite penalty gives NaN gains (inf - inf)."""
    with pytest.raises(lgb.basic.LightGBMError, match=rf"^{name}: cegb_tradeoff \(.*\) x the largest cost .* overflows "
                                                      r"a double"):
        _train(lgb, data, rounds=2, **params)


def _forced(tmp_path, tree):
    path = tmp_path / "forced.json"
    path.write_text(json.dumps(tree))
    return str(path)


def test_forced_splits_respect_the_budget(lgb, data, tmp_path, capsys):
    """A forced split the budget cannot pay for is not applied (a warning, once per model)."""
    X, _ = data
    one = _forced(tmp_path, {"feature": 0, "threshold": 0.0})  # lazy cost 4
    two = _forced(tmp_path, {"feature": 0, "threshold": 0.0, "left": {"feature": 3, "threshold": 0.5}})
    for forced in (one, two):
        model = _train(lgb, data, rounds=20, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.0, cegb_budget=1.0,
                       forcedsplits_filename=forced)
        assert _walk_cost(model, X) <= 1.0 * (1 + 1e-9)
        assert model.num_trees() == 20 and sum(model.feature_importance("split")) > 0
    capsys.readouterr()
    _train(lgb, data, rounds=20, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.0, cegb_budget=1.0,
           forcedsplits_filename=one, verbose=0)
    assert capsys.readouterr().out.count("would take the mean per-row lazy cost over cegb_budget=1") == 1
    # a budget that pays for the forced splits: they are made, at the root of the first tree
    model = _train(lgb, data, rounds=20, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.0, cegb_budget=8.0,
                   forcedsplits_filename=two)
    root = _trees(model)[0]
    assert root["split_feature"] == 0 and root["left_child"]["split_feature"] == 3
    assert _walk_cost(model, X) <= 8.0 * (1 + 1e-9)


@pytest.mark.parametrize(("params", "message"), [
    ({"cegb_budget": -1.0, "cegb_penalty_feature_lazy": LAZY}, "cegb_budget must be a finite number >= 0"),
    ({"cegb_budget": float("nan"), "cegb_penalty_feature_lazy": LAZY}, "cegb_budget"),
    ({"cegb_budget": 2.0, "cegb_penalty_split": 1.0}, "cegb_budget=2 needs lazy feature costs"),
    ({"cegb_budget": 2.0, "cegb_penalty_feature_lazy": LAZY, "cegb_independent_branches": True},
     "cegb_budget is not supported with cegb_independent_branches"),
])
def test_refused(lgb, data, params, message):
    with pytest.raises(lgb.basic.LightGBMError, match=message):
        _train(lgb, data, rounds=2, **params)
