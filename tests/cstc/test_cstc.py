"""Tests of CSTC (Xu et al., 2013): gradients, the paper's synthetic data, cost accounting."""

from __future__ import annotations

import itertools

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from budget_extras import CSTC, FeatureCosts
from budget_extras.cstc._features import _costs_iv, _read_weak_learners, _tree_outputs
from budget_extras.cstc._objective import (
    _aux_update,
    _evaluate,
    _full_gradient,
    _Problem,
    _Structure,
)
from budget_extras.cstc._synthetic import QUADRANT_COSTS, make_quadrants

# ----------------------------------------------------------------------------- fixtures


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20130617)




@pytest.fixture(scope="module")
def quadrant_fit() -> dict[str, object]:
    rng = np.random.default_rng(5)
    X, y, q = make_quadrants(2000, rng)
    Xv, yv, _ = make_quadrants(800, rng)
    Xt, yt, qt = make_quadrants(3000, rng)
    model = CSTC(costs=QUADRANT_COSTS, depth=3, lam=0.05, rho=1e-3, n_weak=150, weak_max_depth=1, random_state=0)
    model.fit(X, y, X_valid=Xv, y_valid=yv)
    return {"model": model, "X": X, "y": y, "q": q, "Xt": Xt, "yt": yt, "qt": qt}


def small_problem(rng: np.random.Generator, task: str, risk_at_leaves: bool, groups: bool) -> _Problem:
    n, T = 40, 6
    Phi = rng.normal(size=(n, T))
    y = rng.normal(size=n) if task == "regression" else np.where(rng.random(n) < 0.5, -1.0, 1.0)
    n_groups = 3
    G = (rng.random((n_groups, T)) < 0.6).astype(float) if groups else np.zeros((n_groups, T))
    return _Problem(Phi, y, task, rng.uniform(0.1, 1.0, T), G, rng.uniform(0.5, 2.0, n_groups),
                    lam=0.3, rho=0.05, sharpness=1.7, risk_at_leaves=risk_at_leaves)


# ----------------------------------------------------------------- gradients of the objective


@pytest.mark.parametrize("task", ["regression", "binary"])
@pytest.mark.parametrize("risk_at_leaves", [False, True])
@pytest.mark.parametrize("surrogate", [False, True])
@pytest.mark.parametrize("pruned", [False, True])
def test_gradient_matches_finite_differences(rng, task, risk_at_leaves, surrogate, pruned):
    pb = small_problem(rng, task, risk_at_leaves, groups=True)
    depth = 3
    active = np.ones(7, dtype=bool)
    if pruned:
        active[[5, 6]] = False  # node 2 becomes a leaf
    st = _Structure(depth, active)
    K, T = 7, pb.Phi.shape[1]
    B = rng.normal(scale=0.7, size=(K, T))
    b, theta = rng.normal(size=K), rng.normal(scale=0.5, size=K)
    aux = _aux_update(st, pb, rng.normal(size=(K, T)), 1e-3) if surrogate else None

    def J(B, b, theta):
        return _full_gradient(st, pb, B, b, theta, aux)[0]

    _, gB, gb, gth = _full_gradient(st, pb, B, b, theta, aux)
    h = 1e-6
    num_B = np.zeros_like(B)
    for k in range(K):
        for t in range(T):
            E = np.zeros_like(B)
            E[k, t] = h
            num_B[k, t] = (J(B + E, b, theta) - J(B - E, b, theta)) / (2 * h)
    num_b = np.array([(J(B, b + h * np.eye(K)[k], theta) - J(B, b - h * np.eye(K)[k], theta)) / (2 * h)
                      for k in range(K)])
    num_th = np.array([(J(B, b, theta + h * np.eye(K)[k]) - J(B, b, theta - h * np.eye(K)[k])) / (2 * h)
                       for k in range(K)])
    np.testing.assert_allclose(gB, num_B, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gb, num_b, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gth, num_th, rtol=1e-5, atol=1e-7)
    if pruned:  # descendants of a leaf take no part in the objective
        assert np.all(gB[[5, 6]] == 0) and np.all(gth[[2, 5, 6]] == 0)


def test_lemma1_surrogate_bounds_the_mixed_norm_and_is_tight(rng):
    pb = small_problem(rng, "regression", False, groups=True)
    st = _Structure(3, np.ones(7, dtype=bool))
    B = rng.normal(size=(7, pb.Phi.shape[1]))
    F = pb.Phi @ B.T
    theta = np.zeros(7)
    exact = _evaluate(st, pb, F, B, theta).value
    tight = _evaluate(st, pb, F, B, theta, _aux_update(st, pb, B, 1e-12)).value
    loose = _evaluate(st, pb, F, B, theta, _aux_update(st, pb, 2.0 * B, 1e-12)).value
    assert tight == pytest.approx(exact, rel=1e-12)
    assert loose > exact


def test_traversal_probabilities_sum_to_one_over_leaves(rng):
    pb = small_problem(rng, "binary", False, groups=False)
    active = np.ones(15, dtype=bool)
    active[[9, 10]] = False
    st = _Structure(4, active)
    B = rng.normal(size=(15, pb.Phi.shape[1]))
    theta = rng.normal(size=15)
    F = pb.Phi @ B.T
    P = _evaluate(st, pb, F, B, theta).P
    np.testing.assert_allclose(P[:, list(st.leaves)].sum(axis=1), 1.0)
    # oracle for one node: the product of the sigmoids along its path 0 -> 2 -> 5 -> 11
    s = expit(pb.sharpness * (F - theta))
    np.testing.assert_allclose(P[:, 11], s[:, 0] * (1 - s[:, 2]) * (1 - s[:, 5]))
    assert np.all(P[:, [9, 10]] == 0)


# --------------------------------------------------------------------- feature map and costs


def test_tree_outputs_sum_to_lightgbm_raw_score(rng):
    X = rng.normal(size=(300, 5))
    y = X[:, 0] - 2 * X[:, 1] * (X[:, 2] > 0) + rng.normal(scale=0.1, size=300)
    params = {"objective": "regression", "max_depth": 3, "num_leaves": 8, "verbose": -1, "num_threads": 1}
    bst = lgb.train(params, lgb.Dataset(X, y), num_boost_round=20)
    wl = _read_weak_learners(bst)
    phi = _tree_outputs(wl, X)
    np.testing.assert_allclose(phi.sum(axis=1), bst.predict(X, raw_score=True), rtol=1e-12, atol=1e-12)
    dump = bst.dump_model()["tree_info"]
    for t in (0, 7, 19):
        feats = set()
        stack = [dump[t]["tree_structure"]]
        while stack:
            node = stack.pop()
            if "split_feature" in node:
                feats.add(node["split_feature"])
                stack += [node["left_child"], node["right_child"]]
        assert set(np.flatnonzero(wl.tree_features[:, t])) == feats


class GroupCosts:
    """A FeatureCosts-like object: features 1 and 3 are one test of cost 5."""

    tree = 0.5
    split = 0.0

    def row_cost(self, used):
        used = np.asarray(used, dtype=bool)
        solo = np.array([1.0, 0.0, 2.0, 0.0, 4.0])
        return used.astype(float) @ solo + 5.0 * (used[:, 1] | used[:, 3])


def test_core_feature_costs_units_and_probing_agree():
    fc = FeatureCosts([1.0, 2.0, 2.0, 3.0, 4.0], groups=[None, "g", "g", None, "h"], tree=0.25,
                      split=0.1)
    direct = _costs_iv(fc, 5, None)

    class Opaque:  # the same rule behind row_cost only
        def row_cost(self, used):
            return fc.row_cost(used)

    probed = _costs_iv(Opaque(), 5, None)
    used = np.random.default_rng(0).random((50, 5)) < 0.4
    np.testing.assert_allclose(direct.acquisition_cost(used), fc.row_cost(used))
    np.testing.assert_allclose(probed.acquisition_cost(used), fc.row_cost(used))
    assert direct.group[1] == direct.group[2] and probed.group[1] == probed.group[2]
    assert len(set(direct.group.tolist())) == len(set(probed.group.tolist())) == 4
    assert direct.tree == 0.25 and np.all(direct.split == 0.1)


def test_core_feature_costs_are_aligned_by_name():
    fc = FeatureCosts({"a": 1.0, "b": 5.0, "c": 2.0}, feature_names=["c", "b", "a"])
    cm = _costs_iv(fc, 3, ["a", "b", "c"])
    np.testing.assert_allclose(cm.acquisition_cost(np.eye(3, dtype=bool)), [1.0, 5.0, 2.0])


def test_costs_from_feature_costs_object_recover_groups():
    cm = _costs_iv(GroupCosts(), 5, None)
    assert cm.group[1] == cm.group[3]
    assert len(set(cm.group.tolist())) == 4
    assert cm.group_cost[cm.group[1]] == 5.0 and cm.group_cost[cm.group[4]] == 4.0
    assert cm.tree == 0.5


@pytest.mark.parametrize(
    "costs",
    [[3.0, 1.0, 2.0], (3.0, 1.0, 2.0), np.array([3.0, 1.0, 2.0]), {"c": 2.0, "a": 3.0, "b": 1.0},
     pd.Series({"b": 1.0, "c": 2.0, "a": 3.0})],
)
def test_costs_forms_agree(costs):
    cm = _costs_iv(costs, 3, ["a", "b", "c"])
    np.testing.assert_array_equal(cm.group_cost[cm.group], [3.0, 1.0, 2.0])
    used = np.array([[True, False, True], [False, True, False]])
    np.testing.assert_allclose(cm.acquisition_cost(used), [5.0, 1.0])


@pytest.mark.parametrize(
    ("costs", "match"),
    [(np.ones(3), r"'costs' argument of CSTC must hold one cost per feature \(5\)"),
     (np.array([1, -1, 1, 1, 1.0]), "finite numbers >= 0"),
     ({"a": 1.0}, "keyed by feature name, but the data have no feature names")],
)
def test_costs_errors(costs, match):
    with pytest.raises(ValueError, match=match):
        _costs_iv(costs, 5, None)


# ------------------------------------------------------------ the paper's synthetic data (5.1)


def test_quadrants_cost_close_to_twelve(quadrant_fit):
    model, Xt = quadrant_fit["model"], quadrant_fit["Xt"]
    rep = model.cost_report(Xt)
    mean_cost = rep.acquisition_cost.mean()
    assert abs(mean_cost - 12.0) <= 1.0
    assert mean_cost < 42.0 / 3
    # every row buys both cheap features
    assert np.asarray(rep.acquired[:, :2].todense()).mean() > 0.95


def test_quadrants_mse_near_the_floor(quadrant_fit):
    model, X, y, q = quadrant_fit["model"], quadrant_fit["X"], quadrant_fit["y"], quadrant_fit["q"]
    Xt, yt, qt = quadrant_fit["Xt"], quadrant_fit["yt"], quadrant_fit["qt"]
    mse = np.mean((model.predict(Xt) - yt) ** 2)
    # oracle floor: the perfect tree (true quadrant) with per-quadrant least squares on the
    # weak learners of the cheap features and of that quadrant's expert (cost 12)
    wl = model._wl
    phi, phi_t = _tree_outputs(wl, X), _tree_outputs(wl, Xt)
    pred = np.zeros_like(yt)
    for k in range(4):
        cols = np.flatnonzero(wl.tree_features[[0, 1, 2 + k]].any(axis=0))
        A = np.column_stack([np.ones((q == k).sum()), phi[q == k][:, cols]])
        w = np.linalg.lstsq(A, y[q == k], rcond=None)[0]
        pred[qt == k] = np.column_stack([np.ones((qt == k).sum()), phi_t[qt == k][:, cols]]) @ w
    floor = np.mean((pred - yt) ** 2)
    cheap_only = np.mean([np.var(yt[qt == k]) for k in range(4)])  # ~1: the label noise
    assert mse <= 1.5 * floor + 0.05
    assert mse < 0.25 * cheap_only


def test_quadrants_route_each_quadrant_to_its_own_leaf(quadrant_fit):
    model, Xt, qt = quadrant_fit["model"], quadrant_fit["Xt"], quadrant_fit["qt"]
    leaf = model.apply(Xt)
    purity = [np.bincount(qt[leaf == v]).max() / (leaf == v).sum() for v in np.unique(leaf)]
    assert len(np.unique(leaf)) == 4
    assert min(purity) > 0.95


# ----------------------------------------------------------- cost accounting and traversal


def slow_row_cost(model: CSTC, X: np.ndarray, row_cost) -> tuple[np.ndarray, np.ndarray]:
    """Walk each row down the CSTC tree and through every used tree by hand."""
    dump = model.booster_.dump_model()["tree_info"]
    acq, ev = np.zeros(X.shape[0]), np.zeros(X.shape[0])
    for i, x in enumerate(X):
        node, trees = 0, set()
        phi = np.array([_leaf_value_and_path(d["tree_structure"], x)[0] for d in dump])
        while True:
            trees |= set(np.flatnonzero(model.coef_[node]).tolist())
            lo = 2 * node + 1
            if lo + 1 >= model.coef_.shape[0] or not (model.active_[lo] and model.active_[lo + 1]):
                break
            f = phi @ model.coef_[node] + model.intercept_[node]
            node = lo + 1 if f > model.threshold_[node] else lo
        used = np.zeros(X.shape[1], dtype=bool)
        for t in trees:
            path = _leaf_value_and_path(dump[t]["tree_structure"], x)[1]
            used[path] = True
            ev[i] += model._cm.tree + sum(model._cm.split[f] for f in path)
        acq[i] = row_cost(used[None, :])[0]
    return acq, ev


def _leaf_value_and_path(node, x):
    path = []
    while "split_feature" in node:
        f = node["split_feature"]
        path.append(f)
        node = node["left_child"] if x[f] <= node["threshold"] else node["right_child"]
    return node["leaf_value"], path


def _grouped_data():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(500, 5))
    y = np.where(X[:, 0] + X[:, 1] * X[:, 3] + 0.5 * X[:, 4] + 0.3 * rng.normal(size=500) > 0, "yes", "no")
    return X, y


def _fit_grouped(costs):
    X, y = _grouped_data()
    model = CSTC(costs=costs, depth=2, lam=0.005, task="binary", n_weak=30, weak_max_depth=2, random_state=1,
                 n_cycles=2)
    return model.fit(X[:350], y[:350], X_valid=X[350:], y_valid=y[350:])


@pytest.fixture(scope="module")
def grouped_fit():
    X, y = _grouped_data()
    return _fit_grouped(GroupCosts()), X, y


CORE_COSTS = FeatureCosts([1.0, 0.0, 2.0, 0.0, 4.0], groups=[None, "g", None, "g", None],
                          group_cost={"g": 5.0}, split=[0.1, 0.2, 0.0, 0.3, 0.05], tree=0.25)


@pytest.mark.parametrize("kind", ["duck", "core"])
def test_cost_report_matches_a_slow_walk(grouped_fit, kind):
    if kind == "duck":
        model, X, _ = grouped_fit
        rule = GroupCosts().row_cost
    else:
        model, (X, _) = _fit_grouped(CORE_COSTS), _grouped_data()
        rule = CORE_COSTS.row_cost
    rep = model.cost_report(X[:60])
    acq, ev = slow_row_cost(model, X[:60], rule)
    assert rep.trees_evaluated.min() > 0 and ev.max() > 0  # the oracle has something to check
    np.testing.assert_allclose(rep.acquisition_cost, acq)
    np.testing.assert_allclose(rep.eval_cost, ev)
    np.testing.assert_allclose(rep.total_cost, acq + ev)


def test_path_is_a_root_to_leaf_chain(grouped_fit):
    model, X, _ = grouped_fit
    P = model.path(X).toarray()
    leaf = model.apply(X)
    assert np.all(P[:, 0])
    assert np.all(P[np.arange(X.shape[0]), leaf])
    assert np.all(model.is_leaf_[leaf])
    for i in range(0, X.shape[0], 25):
        nodes = np.flatnonzero(P[i])
        assert all((c - 1) // 2 == p for p, c in itertools.pairwise(nodes))


def test_binary_predictions(grouped_fit):
    model, X, y = grouped_fit
    proba = model.predict_proba(X[350:])
    pred = model.predict(X[350:])
    assert proba.shape == (150, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(pred, np.where(proba[:, 1] > 0.5, "yes", "no"))
    assert np.mean(pred == y[350:]) > 0.75


@pytest.mark.parametrize("depth", [2, 3])
def test_pruning_does_not_hurt_validation_and_fine_tuning_keeps_support(rng, depth):
    X = rng.normal(size=(400, 4))
    y = X[:, 0] * (X[:, 1] > 0) + X[:, 2] + 0.5 * rng.normal(size=400)
    kw = {"depth": depth, "lam": 0.01, "n_weak": 30, "weak_max_depth": 2, "random_state": 3, "n_cycles": 2}
    Xtr, ytr, Xv, yv = X[:250], y[:250], X[250:], y[250:]
    plain = CSTC(prune=False, fine_tune=False, **kw).fit(Xtr, ytr, X_valid=Xv, y_valid=yv)
    pruned = CSTC(prune=True, fine_tune=False, **kw).fit(Xtr, ytr, X_valid=Xv, y_valid=yv)
    tuned = CSTC(prune=True, fine_tune=True, **kw).fit(Xtr, ytr, X_valid=Xv, y_valid=yv)
    np.testing.assert_array_equal(pruned.active_, tuned.active_)
    assert np.sum((pruned.predict(Xv) - yv) ** 2) <= np.sum((plain.predict(Xv) - yv) ** 2) + 1e-9
    assert pruned.active_.sum() + pruned.result_.n_pruned == plain.active_.sum()
    for leaf in np.flatnonzero(tuned.is_leaf_):
        path = [leaf]
        while path[-1] > 0:
            path.append((path[-1] - 1) // 2)
        paid = (pruned.coef_[path] != 0).any(axis=0)
        assert not np.any((tuned.coef_[leaf] != 0) & ~paid)
        # a fine-tuned leaf is kept only if it does not lose on validation rows
        rows = tuned.apply(Xv) == leaf
        assert np.sum((tuned.predict(Xv)[rows] - yv[rows]) ** 2) <= np.sum(
            (pruned.predict(Xv)[rows] - yv[rows]) ** 2) + 1e-9


# ------------------------------------------------------------------------ API and errors


def test_sklearn_clone_and_params():
    from sklearn.base import clone

    m = CSTC(depth=2, lam=0.5)
    c = clone(m)
    assert c.get_params() == m.get_params()
    assert c.set_params(rho=0.1).rho == 0.1


@pytest.mark.parametrize(
    ("params", "match"),
    [({"depth": 0}, "'depth' parameter"), ({"lam": -1.0}, "'lam' parameter"),
     ({"task": "multiclass"}, "'task' parameter"), ({"risk": "root"}, "'risk' parameter"),
     ({"sharpness": 0.0}, "'sharpness' parameter")],
)
def test_parameter_errors(rng, params, match):
    X = rng.normal(size=(30, 3))
    with pytest.raises(ValueError, match=match):
        CSTC(**params).fit(X, X[:, 0])


def test_dataframe_input_and_named_costs(rng):
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["p", "q", "r"])
    y = X["p"].to_numpy() + 0.1 * rng.normal(size=200)
    m = CSTC(costs=pd.Series({"r": 5.0, "q": 2.0, "p": 1.0}), depth=2, lam=0.01, n_weak=15, n_cycles=1, random_state=0)
    m.fit(X, y)
    assert m.feature_names_in_ == ["p", "q", "r"]
    np.testing.assert_allclose(m.predict(X), m.predict(X.to_numpy()))
    assert np.mean((m.predict(X) - y) ** 2) < 0.5 * np.var(y)


def test_input_errors(rng, grouped_fit):
    model, X, _ = grouped_fit
    with pytest.raises(ValueError, match="must have 5 columns"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="not fitted"):
        CSTC().predict(X)
    with pytest.raises(ValueError, match="exactly two classes"):
        CSTC(task="binary").fit(X[:30], np.arange(30) % 3)
    with pytest.raises(ValueError, match="one entry per row"):
        CSTC().fit(X[:30], np.arange(20))


def test_pickle_round_trip(grouped_fit):
    import pickle

    model, X, _ = grouped_fit
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.predict(X), model.predict(X))
    np.testing.assert_allclose(copy.cost_report(X).total_cost, model.cost_report(X).total_cost)
