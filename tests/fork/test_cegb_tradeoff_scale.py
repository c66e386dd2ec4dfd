"""cegb_tradeoff_scale: ``none`` (default) is today's CEGB exactly; ``gain`` multiplies every
penalty of a tree by max_f (G_f / lazy[f]) / N, G_f the tree's best unpenalized root gain on f.

Oracles: the default gives the same trees as not passing the parameter; the penalties recovered
from the stored split gains (L2 loss, lambda = 0: the unpenalized gain from the children) equal
tradeoff * lazy[f] * unpaid rows * max_f (G_f / lazy[f]) / N, with each G_f of the first tree read
off an unpenalized one-round model allowed only feature f; within every later tree one scale
explains every charged split. Below tradeoff 1 the first tree always splits its root, at 1 and
above it cannot (a constructed cliff: the plain scale makes a constant model there).
"""

from __future__ import annotations

import numpy as np
import pytest

from .scenarios import BASE, _raw_gain, _tree_signatures

LAZY = [3.0, 1.0, 1.0, 2.0, 0.5, 0.5, 1.0, 1.0]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(3000, 8))
    y = X[:, 0] + 0.8 * X[:, 1] * X[:, 2] + 0.5 * np.sin(3 * X[:, 3]) + 0.3 * X[:, 4] ** 2 + 0.1 * rng.normal(size=3000)
    return X, y


def _train(lgb, data, rounds=6, **params):
    X, y = data
    full = dict(BASE, objective="l2", num_leaves=15, boost_from_average=False, learning_rate=0.1, **params)
    return lgb.train(full, lgb.Dataset(X, y), num_boost_round=rounds)


def _splits(booster, lr=0.1):
    """Per split: tree, feature, rows, rows that had not paid the feature, penalty, tolerance."""
    out = []
    for t, tree in enumerate(booster.dump_model()["tree_info"]):
        stack = [(tree["tree_structure"], ())]
        while stack:
            node, path = stack.pop()
            root = not path
            if "split_feature" not in node:
                continue
            raw = _raw_gain(node, lr)
            f = node["split_feature"]
            out.append({"tree": t, "feature": f, "count": node["internal_count"], "raw": raw,
                        "fresh": f not in path, "root": root, "penalty": raw - node["split_gain"],
                        "tol": 1e-3 + 2e-5 * abs(raw)})
            for child in (node["left_child"], node["right_child"]):
                stack.append((child, (*path, f)))
    return out


def test_default_none_is_identical(lgb, data):
    params = dict(cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.05)
    a = _train(lgb, data, **params)
    b = _train(lgb, data, cegb_tradeoff_scale="none", **params)
    assert _tree_signatures(a) == _tree_signatures(b)
    assert a.model_to_string() == b.model_to_string()
    assert "cegb_tradeoff_scale" not in a.model_to_string()  # [no-save]: model files unchanged


def _root_gain_per_cost(lgb, data):
    """max_f G_f / LAZY[f] of the first tree, each G_f from a one-round model allowed only f."""
    gains = []
    for f in range(len(LAZY)):
        root = _train(lgb, data, rounds=1, interaction_constraints=[[f]]).dump_model()["tree_info"][0]
        gains.append(root["tree_structure"].get("split_gain", 0.0))
    return max(g / c for g, c in zip(gains, LAZY, strict=True)), gains


def test_gain_mode_penalty_is_exact(lgb, data):
    t, n = 0.05, len(data[1])
    ratio, _ = _root_gain_per_cost(lgb, data)
    booster = _train(lgb, data, rounds=12, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=t, cegb_tradeoff_scale="gain")
    splits = _splits(booster)
    first = [s for s in splits if s["tree"] == 0]
    assert first
    for s in first:  # the first tree: every row is fresh for a feature not on its path
        want = t * LAZY[s["feature"]] * (s["count"] if s["fresh"] else 0) * ratio / n
        assert s["penalty"] == pytest.approx(want, abs=s["tol"]), s
    # later trees: on features no earlier tree used (no row has paid them), one scale per tree
    # explains every charged split, and it is at least the root split's gain per unit cost
    checked = 0
    for tree in range(1, booster.num_trees()):
        seen = {s["feature"] for s in splits if s["tree"] < tree}
        implied = [s["penalty"] * n / (t * LAZY[s["feature"]] * s["count"])
                   for s in splits if s["tree"] == tree and s["fresh"] and s["feature"] not in seen]
        if implied:
            checked += 1
            assert max(implied) == pytest.approx(min(implied), rel=1e-3), implied
            root = next(s for s in splits if s["tree"] == tree and s["root"])
            assert min(implied) >= root["raw"] / LAZY[root["feature"]] * (1 - 1e-3) - 1e-3
    assert checked >= 1


def test_gain_mode_same_meaning_when_gradients_scale(lgb, data):
    # scaling the label scales every gain: with scale=gain the same tradeoff gives the same trees
    X, y = data
    params = dict(BASE, objective="l2", num_leaves=15, boost_from_average=False,
                  cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.2, cegb_tradeoff_scale="gain")
    a = lgb.train(params, lgb.Dataset(X, y), 4)
    b = lgb.train(params, lgb.Dataset(X, 10.0 * y), 4)
    feats = [[n.get("split_feature") for n in _nodes(tr)] for tr in a.dump_model()["tree_info"]]
    feats_b = [[n.get("split_feature") for n in _nodes(tr)] for tr in b.dump_model()["tree_info"]]
    assert feats == feats_b
    # while the unscaled tradeoff means something else for the scaled label
    c = lgb.train(dict(params, cegb_tradeoff_scale="none", cegb_tradeoff=0.002), lgb.Dataset(X, y), 4)
    d = lgb.train(dict(params, cegb_tradeoff_scale="none", cegb_tradeoff=0.002), lgb.Dataset(X, 10.0 * y), 4)
    assert [[n.get("split_feature") for n in _nodes(tr)] for tr in c.dump_model()["tree_info"]] != \
        [[n.get("split_feature") for n in _nodes(tr)] for tr in d.dump_model()["tree_info"]]


def _nodes(tree):
    out, stack = [], [tree["tree_structure"]]
    while stack:
        node = stack.pop()
        out.append(node)
        for k in ("left_child", "right_child"):
            if k in node:
                stack.append(node[k])
    return out


@pytest.mark.parametrize("value", ["gains", "GAIN1", "root"])
def test_bad_values_error_clearly(lgb, data, value):
    with pytest.raises(lgb.basic.LightGBMError, match="cegb_tradeoff_scale must be 'none', 'gain' or 'first_gain'"):
        _train(lgb, data, rounds=1, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff_scale=value)


@pytest.mark.parametrize("mode", ["gain", "first_gain"])
def test_scaled_modes_refuse_quantized_gradients(lgb, data, mode):
    with pytest.raises(lgb.basic.LightGBMError, match=f"{mode} does not support use_quantized_grad"):
        _train(lgb, data, rounds=1, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff_scale=mode,
               use_quantized_grad=True)


def test_first_gain_keeps_the_first_trees_scale(lgb, data):
    # every split on a feature no earlier tree used is charged with the FIRST tree's scale
    t, n = 0.02, len(data[1])
    ratio, _ = _root_gain_per_cost(lgb, data)
    booster = _train(lgb, data, rounds=12, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=t,
                     cegb_tradeoff_scale="first_gain")
    splits = _splits(booster)
    checked = 0
    for s in splits:
        seen = {x["feature"] for x in splits if x["tree"] < s["tree"]}
        if s["feature"] in seen:
            continue
        want = t * LAZY[s["feature"]] * (s["count"] if s["fresh"] else 0) * ratio / n
        assert s["penalty"] == pytest.approx(want, abs=s["tol"]), s
        checked += s["tree"] > 0 and s["fresh"]
    assert checked >= 1
    # and it differs from rescaling every tree
    every = _train(lgb, data, rounds=12, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=t, cegb_tradeoff_scale="gain")
    assert _tree_signatures(every) != _tree_signatures(booster)


@pytest.mark.parametrize("mode", ["gain", "first_gain"])
def test_no_cliff_below_one_and_no_root_split_from_one(lgb, data, mode):
    # costs where the best feature by gain is the dearest: with the plain scale (best gain over
    # the MEAN cost) a tradeoff below 1 already leaves the root unsplit, with the per-cost scale
    # the best gain-per-cost feature always pays below 1 and never at 1 or above
    _, gains = _root_gain_per_cost(lgb, data)
    costs = [10.0 if g == max(gains) else 0.5 for g in gains]
    per_cost = [g / c for g, c in zip(gains, costs, strict=True)]
    best = int(np.argmax(per_cost))
    for t, splits in ((0.9, True), (0.999, True), (1.0, False), (2.0, False)):
        b = _train(lgb, data, rounds=1, cegb_penalty_feature_lazy=costs, cegb_tradeoff=t, cegb_tradeoff_scale=mode)
        root = b.dump_model()["tree_info"][0]["tree_structure"]
        assert ("split_feature" in root) == splits, (t, root)
        if splits and t > 0.99:
            assert root["split_feature"] == best
