"""Reproducible CEGB scenarios, run in-process on the fork and in a subprocess on upstream LightGBM.

Each scenario is a function ``scenario_<name>(lgb) -> dict`` that only needs numpy and the
``lightgbm`` module it is given, and returns JSON-serialisable measurements. The tests in this
folder assert that the fork's measurements are correct AND that upstream LightGBM 4.7.0 shows the
defect (so every regression test is known to fail on upstream).

Run one scenario under any interpreter: ``python scenarios.py <name>`` prints its JSON.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

BASE = {"verbose": -1, "num_threads": 1, "deterministic": True, "seed": 7, "force_row_wise": True}


def _regression_data(n: int = 4000, d: int = 12, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] + 0.8 * X[:, 1] * X[:, 2] + 0.5 * np.sin(3 * X[:, 3]) + 0.3 * X[:, 4] ** 2
    y = y + 0.2 * X[:, 5:].sum(axis=1) + 0.1 * rng.normal(size=n)
    return X, y


def _nodes(tree: dict[str, Any]) -> list[dict[str, Any]]:
    out, stack = [], [tree["tree_structure"]]
    while stack:
        node = stack.pop()
        out.append(node)
        if "left_child" in node:
            stack.extend([node["left_child"], node["right_child"]])
    return out


def _node_grad(node: dict[str, Any], lr: float) -> tuple[float, float]:
    """(G, H) of a node of an L2 model with lambda=0: value = -G/H * lr and H = count."""
    value = node.get("leaf_value", node.get("internal_value"))
    h = node.get("leaf_weight", node.get("internal_weight"))
    return -value / lr * h, h


def _raw_gain(node: dict[str, Any], lr: float) -> float:
    """Unpenalized split gain of an internal node of an L2 model (lambda = 0), from its children."""
    gl, hl = _node_grad(node["left_child"], lr)
    gr, hr = _node_grad(node["right_child"], lr)
    return gl * gl / hl + gr * gr / hr - (gl + gr) ** 2 / (hl + hr)


def _first_diff(a: list[Any], b: list[Any]) -> int:
    """Index of the first differing tree signature, -1 if none."""
    return next((i for i, (p, q) in enumerate(zip(a, b, strict=True)) if p != q), -1)


def scenario_coupled_refund(lgb: Any) -> dict[str, Any]:
    """Defect a: stored split gains vs gains recomputed from node statistics (coupled=200)."""
    X, y = _regression_data()
    lr, penalty = 0.1, 50.0
    params = dict(BASE, objective="l2", learning_rate=lr, num_leaves=15, boost_from_average=False,
                  cegb_penalty_feature_coupled=[penalty] * X.shape[1])
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=10)
    excess = []
    for tree in booster.dump_model()["tree_info"]:
        for node in _nodes(tree):
            if "split_gain" not in node:
                continue
            excess.append(node["split_gain"] - _raw_gain(node, lr))
    excess_arr = np.array(excess)
    return {"n_splits": int(excess_arr.size),
            "n_exceeding": int((excess_arr > 1e-3 * penalty).sum()),
            "max_excess": float(excess_arr.max())}


def scenario_interaction_refund(lgb: Any) -> dict[str, Any]:
    """Defect b: leaf paths violating overlapping interaction constraints under a coupled penalty.

    Built so that feature 0 (expensive, in group 1 only) is first used below the root while
    leaves whose paths already hold feature 6 (group 2 only) would gain a lot from it.
    """
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 10))
    y = 3 * (X[:, 5] > 0) + 2 * X[:, 0] + 2.5 * X[:, 6] * (X[:, 5] <= 0) + 0.1 * rng.normal(size=3000)
    constraints = [[0, 1, 2, 3, 4, 5], [5, 6, 7, 8, 9]]
    params = dict(BASE, objective="l2", num_leaves=63, interaction_constraints=constraints,
                  cegb_penalty_feature_coupled=[2000.0] + [1.0] * 9)
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=50)
    allowed = [set(c) for c in constraints]
    violations = paths = 0
    for tree in booster.dump_model()["tree_info"]:
        stack = [(tree["tree_structure"], frozenset())]
        while stack:
            node, feats = stack.pop()
            if "split_feature" in node:
                f = feats | {node["split_feature"]}
                stack.extend([(node["left_child"], f), (node["right_child"], f)])
            else:
                paths += 1
                violations += not any(feats <= a for a in allowed)
    return {"paths": paths, "violations": violations}


def _tree_signatures(booster: Any, start: int = 0) -> list[list[Any]]:
    sigs = []
    for tree in booster.dump_model()["tree_info"][start:]:
        sig = []
        for node in _nodes(tree):
            if "split_feature" in node:
                sig.append(("s", node["split_feature"], repr(node["threshold"])))
            else:
                sig.append(("l", round(node["leaf_value"], 9)))
        sigs.append(sig)
    return sigs


def scenario_bagging_modes(lgb: Any) -> dict[str, Any]:
    """Defect c: bagging subset mode (few feature groups) vs index mode (>= 100 groups).

    The index-mode dataset has the same 8 informative columns plus 100 noise columns that a
    prohibitive coupled penalty keeps out of every tree, so both runs see the same bags and the
    same candidate splits: with a correct lazy penalty the trees are identical.
    """
    rng = np.random.default_rng(3)
    X, y = _regression_data(n=3000, d=8, seed=3)
    X_wide = np.hstack([X, rng.normal(size=(X.shape[0], 100))])
    params = dict(BASE, objective="l2", num_leaves=15, bagging_fraction=0.5, bagging_freq=1,
                  bagging_seed=11, enable_bundle=False)
    lazy = [3.0, 1.0, 1.0, 2.0, 0.5, 0.5, 1.0, 1.0]
    subset = lgb.train(dict(params, cegb_penalty_feature_lazy=lazy, cegb_tradeoff=0.05),
                       lgb.Dataset(X, y), num_boost_round=12)
    index = lgb.train(dict(params, cegb_penalty_feature_lazy=lazy + [0.0] * 100,
                           cegb_penalty_feature_coupled=[0.0] * 8 + [1e12] * 100, cegb_tradeoff=0.05),
                      lgb.Dataset(X_wide, y), num_boost_round=12)
    a, b = _tree_signatures(subset), _tree_signatures(index)
    return {"identical": a == b, "first_diff_tree": _first_diff(a, b)}


def scenario_oob_marking(lgb: Any) -> dict[str, Any]:
    """Defect c: out-of-bag rows pay for the features on their paths too.

    Feature 0 dominates and carries a lazy cost, so every tree's root splits on it. From an L2
    model (lambda = 0, hessian = 1) the unpenalized root gain is recomputed from the children's
    values and counts; gain - stored gain = lazy * (bagged rows at the root that never paid).
    Once some earlier tree split on feature 0 at its root, every training row has paid it, so
    the charge must be 0, although each tree sees a different bag.
    """
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 6))
    y = 4 * X[:, 0] + X[:, 1] + 0.5 * X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=3000)
    lr, lazy = 0.1, 2.0
    params = dict(BASE, objective="l2", learning_rate=lr, num_leaves=7, boost_from_average=False,
                  bagging_fraction=0.5, bagging_freq=1, bagging_seed=3,
                  cegb_penalty_feature_lazy=[lazy] + [0.0] * 5)
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=6)
    roots = []
    for tree in booster.dump_model()["tree_info"]:
        root = tree["tree_structure"]
        raw = _raw_gain(root, lr)
        roots.append({"feature": root["split_feature"], "count": root["internal_count"],
                      "unpaid_rows": round((raw - root["split_gain"]) / lazy, 3)})
    return {"roots": roots}


def _continued(lgb: Any, cegb: dict[str, Any]) -> dict[str, Any]:
    X, y = _regression_data(n=3000, d=8, seed=5)
    params = dict(BASE, objective="l2", num_leaves=15, **cegb)
    full = lgb.train(params, lgb.Dataset(X, y), num_boost_round=20)
    first = lgb.train(params, lgb.Dataset(X, y), num_boost_round=10)
    cont = lgb.train(params, lgb.Dataset(X, y), num_boost_round=10, init_model=first)
    a, b = _tree_signatures(full, 10), _tree_signatures(cont, 10)
    return {"identical": a == b, "first_diff_tree": _first_diff(a, b)}


def scenario_continued_coupled(lgb: Any) -> dict[str, Any]:
    """Defect e: 10 + 10 rounds through init_model equals 20 rounds (coupled penalty)."""
    return _continued(lgb, {"cegb_penalty_feature_coupled": [40.0, 5.0, 5.0, 30.0, 1.0, 1.0, 3.0, 3.0]})


def scenario_continued_lazy(lgb: Any) -> dict[str, Any]:
    """Defect e: 10 + 10 rounds through init_model equals 20 rounds (lazy penalty)."""
    return _continued(lgb, {"cegb_penalty_feature_lazy": [3.0, 1.0, 1.0, 2.0, 0.5, 0.5, 1.0, 1.0],
                            "cegb_tradeoff": 0.05})


def scenario_rollback(lgb: Any) -> dict[str, Any]:
    """Defect e: after rollback_one_iter the next tree equals the tree trained at that position."""
    X, y = _regression_data(n=3000, d=8, seed=6)
    params = dict(BASE, objective="l2", num_leaves=15,
                  cegb_penalty_feature_lazy=[3.0, 1.0, 1.0, 2.0, 0.5, 0.5, 1.0, 1.0], cegb_tradeoff=0.05,
                  cegb_penalty_feature_coupled=[20.0, 5.0, 5.0, 10.0, 1.0, 1.0, 3.0, 3.0])
    booster = lgb.Booster(params, lgb.Dataset(X, y))
    for _ in range(6):
        booster.update()
    before = _tree_signatures(booster, 5)
    booster.rollback_one_iter()
    booster.update()
    after = _tree_signatures(booster, 5)
    return {"identical": before == after}


def scenario_reset_add_lazy(lgb: Any) -> dict[str, Any]:
    """Defect d: add a lazy penalty with reset_parameter after coupled-only training."""
    X, y = _regression_data(n=3000, d=8, seed=7)
    coupled = {"cegb_penalty_feature_coupled": [20.0, 5.0, 5.0, 10.0, 1.0, 1.0, 3.0, 3.0]}
    lazy = {"cegb_penalty_feature_lazy": [3.0, 1.0, 1.0, 2.0, 0.5, 0.5, 1.0, 1.0], "cegb_tradeoff": 0.05}
    params = dict(BASE, objective="l2", num_leaves=15, **coupled)
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=5, keep_training_booster=True)
    first = booster.model_to_string()
    booster.reset_parameter(lazy)
    for _ in range(5):
        booster.update()
    # Oracle: the same continuation through init_model (state rebuilt from the trees).
    cont = lgb.train(dict(params, **lazy), lgb.Dataset(X, y), num_boost_round=5,
                     init_model=lgb.Booster(model_str=first))
    a, b = _tree_signatures(booster, 5), _tree_signatures(cont, 5)
    return {"identical": a == b}


def scenario_reset_num_leaves(lgb: Any) -> dict[str, Any]:
    """Defect d: raise num_leaves from 4 to 255 with CEGB on."""
    X, y = _regression_data(n=6000, d=8, seed=8)
    params = dict(BASE, objective="l2", num_leaves=4, min_data_in_leaf=5,
                  cegb_penalty_feature_coupled=[20.0, 5.0, 5.0, 10.0, 1.0, 1.0, 3.0, 3.0],
                  cegb_penalty_split=0.001)
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=3, keep_training_booster=True)
    first = booster.model_to_string()
    booster.reset_parameter({"num_leaves": 255})
    for _ in range(3):
        booster.update()
    cont = lgb.train(dict(params, num_leaves=255), lgb.Dataset(X, y), num_boost_round=3,
                     init_model=lgb.Booster(model_str=first))
    leaves = [t["num_leaves"] for t in booster.dump_model()["tree_info"]]
    a, b = _tree_signatures(booster, 3), _tree_signatures(cont, 3)
    return {"leaves": leaves, "identical": a == b}


def scenario_bad_penalties(lgb: Any) -> dict[str, Any]:
    """Defect f: negative / NaN / inf penalty entries."""
    X, y = _regression_data(n=500, d=6, seed=9)
    out = {}
    for name in ("cegb_penalty_feature_lazy", "cegb_penalty_feature_coupled"):
        for bad in (-1.0, float("nan"), float("inf")):
            try:
                lgb.train(dict(BASE, objective="l2", **{name: [1.0, bad, 1.0, 1.0, 1.0, 1.0]}),
                          lgb.Dataset(X, y), 2)
                out[f"{name}={bad}"] = "accepted"
            except lgb.basic.LightGBMError as err:
                out[f"{name}={bad}"] = str(err)
    return out


def scenario_big_lazy(lgb: Any) -> dict[str, Any]:
    """Defect h: rows x features >= 2^31 (33.6 million rows x 64 features, sparse input).

    Feature 63 decides y; it has a lazy cost. Tree 0's root pays for every row; once paid, the
    root of tree 1 (same feature) must pay nothing, also for the rows whose upstream bit index
    (feature * n_rows + row, in 32 bits) overflows.
    """
    import scipy.sparse as sp

    n, d = 2**25 + 4096, 64
    rng = np.random.default_rng(13)
    x63 = rng.normal(size=n)
    x0 = rng.normal(size=n)
    rows = np.repeat(np.arange(n, dtype=np.int64), 2)
    cols = np.tile(np.array([0, 63], dtype=np.int32), n)
    vals = np.column_stack([x0, x63]).ravel()
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d))
    y = 3.0 * (x63 > 0) + 0.1 * x0
    lazy = [0.0] * 63 + [1.0]
    params = dict(BASE, objective="l2", num_leaves=2, boost_from_average=False, learning_rate=0.1,
                  cegb_tradeoff=0.2, cegb_penalty_feature_lazy=lazy, min_data_in_leaf=100)
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=2)
    out = []
    for tree in booster.dump_model()["tree_info"]:
        root = tree["tree_structure"]
        raw = _raw_gain(root, 0.1)
        out.append({"feature": root["split_feature"], "count": root["internal_count"],
                    "unpaid_rows": (raw - root["split_gain"]) / 0.2, "gain": raw})
    return {"n_rows": n, "n_features": d, "roots": out}


SCENARIOS = {name[len("scenario_"):]: fn for name, fn in globals().items() if name.startswith("scenario_")}


if __name__ == "__main__":
    import lightgbm

    print(json.dumps(SCENARIOS[sys.argv[1]](lightgbm)))
