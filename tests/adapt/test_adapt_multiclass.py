"""The multiclass extension of AdaptGBRT: one gate, a multinomial f1 (LightGBM multiclass)."""

import lightgbm as lgb
import numpy as np
import pytest
from scipy.special import softmax

from budget_extras import AdaptGBRT
from budget_extras.adapt._heads import SoftmaxHead
from budget_extras.adapt._paths import sklearn_tree_features_used
from budget_extras.adapt._train import default_lgb_params


def test_p_full_zero_is_a_cost_penalized_multinomial_booster(multiclass_problem):
    """P_full = 0: every row goes to f1, which equals LightGBM's multiclass booster with the
    same coupled CEGB penalty (GreedyMiser-style)."""
    X, y, Xt, _, f0 = multiclass_problem
    gamma, n_trees = 0.01, 15
    m = AdaptGBRT(f0, p_full=0.0, gamma=gamma, n_trees=n_trees, max_em_iter=2).fit(X, y)
    assert m.route(Xt).sum() == 0
    params = default_lgb_params()
    params.update(
        objective="multiclass",
        num_class=4,
        cegb_tradeoff=1.0,
        cegb_penalty_feature_coupled=[2 * len(y) * gamma] * X.shape[1],
    )
    y_idx = np.searchsorted(m.classes_, y)
    ref = lgb.train(params, lgb.Dataset(X, label=y_idx), num_boost_round=n_trees)
    ours = m.f1_model_.predict(Xt, raw_score=True) + m.f1_bias_
    np.testing.assert_allclose(ours, ref.predict(Xt, raw_score=True), atol=1e-5)
    np.testing.assert_array_equal(m.predict(Xt), m.classes_[np.argmax(ref.predict(Xt), axis=1)])


def test_softmax_head_gradient_matches_finite_differences(rng):
    head = SoftmaxHead(3)
    raw, y, w = rng.normal(size=(5, 3)), np.array([0.0, 2, 1, 1, 0]), rng.uniform(size=5)
    _, grad, _ = head.loss_grad_hess(raw, y, w)
    eps = 1e-6
    for i in range(5):
        for k in range(3):
            d = np.zeros_like(raw)
            d[i, k] = eps
            fd = (head.loss_grad_hess(raw + d, y, w)[0] - head.loss_grad_hess(raw - d, y, w)[0]) / (2 * eps)
            assert grad[i, k] == pytest.approx(fd, abs=1e-6)


def test_predictions_route_and_probabilities(multiclass_problem):
    X, y, Xt, yt, f0 = multiclass_problem
    m = AdaptGBRT(f0, p_full=0.4, gamma=0.005, n_trees=15, max_em_iter=3).fit(X, y)
    route = m.route(Xt).astype(bool)
    assert 0 < route.mean() < 1
    proba = m.predict_proba(Xt)
    assert proba.shape == (len(Xt), 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[route], f0.predict_proba(Xt[route]))
    f1_proba = softmax(m.f1_model_.predict(Xt[~route], raw_score=True) + m.f1_bias_, axis=1)
    np.testing.assert_allclose(proba[~route], f1_proba)
    pred = m.predict(Xt)
    np.testing.assert_array_equal(pred, m.classes_[np.argmax(proba, axis=1)])
    assert m.evaluate(Xt, yt)["accuracy"] == pytest.approx(np.mean(pred == yt))


def _walk_features(tree, x):
    used, node = set(), tree
    while "split_feature" in node:
        used.add(node["split_feature"])
        node = node["left_child"] if x[node["split_feature"]] <= node["threshold"] else node["right_child"]
    return used


def test_unified_cost_rule_against_slow_walk(multiclass_problem):
    """Every one of the K trees per round of f1 counts; f0 rows pay g's path and f0's."""
    X, y, Xt, _, f0 = multiclass_problem
    Xt = Xt[:200]
    costs = np.array([1.0, 2.0, 0.5, 3.0, 1.5])
    m = AdaptGBRT(f0, p_full=0.4, gamma=0.002, n_trees=8, max_em_iter=2, costs=costs).fit(X, y)
    m.set_params(gate_threshold=float(np.median(m.decision_function_gate(Xt))))  # both routes used
    f0_used = sklearn_tree_features_used(f0, Xt)
    gdump = m.g_model_.dump_model()["tree_info"]
    fdump = m.f1_model_.dump_model()["tree_info"]
    assert len(fdump) == 4 * m.f1_model_.current_iteration()
    route = m.route(Xt)
    assert 0 < route.mean() < 1
    expected = np.zeros(len(Xt))
    for i, x in enumerate(Xt):
        used = set().union(*(_walk_features(t["tree_structure"], x) for t in gdump))
        if route[i]:
            used |= set(np.flatnonzero(f0_used[i]))
        else:
            used |= set().union(*(_walk_features(t["tree_structure"], x) for t in fdump))
        expected[i] = sum(costs[list(used)])
    np.testing.assert_allclose(m.row_cost(Xt), expected)


def test_save_load_roundtrip(multiclass_problem, tmp_path):
    X, y, Xt, _, f0 = multiclass_problem
    m = AdaptGBRT(f0, p_full=0.4, gamma=0.005, n_trees=8, max_em_iter=2).fit(X, y)
    path = tmp_path / "adapt_multi.json"
    m.save(str(path))
    m2 = AdaptGBRT.load(str(path), f0=f0)
    np.testing.assert_array_equal(m2.classes_, m.classes_)
    np.testing.assert_array_equal(m2.route(Xt), m.route(Xt))
    np.testing.assert_allclose(m2.predict_proba(Xt), m.predict_proba(Xt))
    np.testing.assert_array_equal(m2.predict(Xt), m.predict(Xt))
    np.testing.assert_allclose(m2.row_cost(Xt), m.row_cost(Xt))


def test_lightgbm_multiclass_f0(multiclass_problem):
    X, y, Xt, _, _ = multiclass_problem
    y_idx = np.searchsorted(np.unique(y), y)
    f0 = lgb.train({"objective": "multiclass", "num_class": 4, "verbose": -1}, lgb.Dataset(X, label=y_idx), 20)
    m = AdaptGBRT(f0, p_full=0.5, gamma=0.005, n_trees=8, max_em_iter=2).fit(X, y)
    route = m.route(Xt).astype(bool)
    np.testing.assert_allclose(m.predict_proba(Xt)[route], f0.predict(Xt[route]))


def test_errors(multiclass_problem):
    X, y, _, _, f0 = multiclass_problem

    def two_columns(Z):
        return np.full((len(Z), 2), 0.5)

    with pytest.raises(ValueError, match=r"f0 must return probabilities of shape \(n_rows, 4\)"):
        AdaptGBRT(two_columns, n_trees=2, max_em_iter=1).fit(X, y)
    with pytest.raises(ValueError, match=r"'f0_proba_train' argument must have shape \(500, 4\)"):
        AdaptGBRT(f0, n_trees=2, max_em_iter=1).fit(X, y, f0_proba_train=np.full((500, 2), 0.5))


def test_budget_sweep(multiclass_problem):
    X, y, Xt, yt, f0 = multiclass_problem
    m = AdaptGBRT(f0, budget=4.0, p_full_grid=[0.2, 0.5], gamma_grid=[0.01], n_trees=5, max_em_iter=2)
    m.fit(X, y, X_valid=Xt, y_valid=yt)
    df = m.sweep_result_.results
    assert df.groupby(["p_full", "gamma"]).ngroups == 2
    best = df.loc[m.sweep_result_.best_index]
    assert m.evaluate(Xt, yt)["accuracy"] == pytest.approx(best["accuracy"])
    assert m.evaluate(Xt, yt)["cost"] == pytest.approx(best["cost"])
