import lightgbm as lgb
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.neighbors import KNeighborsClassifier

from budget_extras import Status
from budget_extras.adapt import AdaptGBRT, AdaptLin, L1GateBaseline
from budget_extras.adapt._paths import booster_features_used, row_cost, sklearn_tree_features_used
from budget_extras.adapt._qstep import q_step
from budget_extras.adapt._sweep import pareto_mask

# ----------------------------------------------------------------------------- q-step


@pytest.mark.parametrize("p_full", [0.02, 0.3, 0.5, 0.8, 0.98])
def test_q_step_meets_p_full(rng, p_full):
    A, B = rng.normal(size=500) * 3, rng.normal(size=500) * 3
    res = q_step(A, B, p_full)
    assert res.success
    assert abs(res.q.mean() - p_full) < 1e-6
    np.testing.assert_allclose(res.q, expit(A - B - res.beta))


@pytest.mark.parametrize("p_full", [0.2, 0.6])
def test_q_step_is_the_i_projection(rng, p_full):
    """Oracle: minimize sum_i KL(q_i || sigma(A_i - B_i)) s.t. mean(q) = p_full with SLSQP."""
    A, B = rng.normal(size=6), rng.normal(size=6)
    post = expit(A - B)

    def kl(q):
        q = np.clip(q, 1e-12, 1 - 1e-12)
        return np.sum(q * np.log(q / post) + (1 - q) * np.log((1 - q) / (1 - post)))

    cons = {"type": "eq", "fun": lambda q: q.mean() - p_full}
    ref = minimize(kl, np.full(6, p_full), bounds=[(1e-9, 1 - 1e-9)] * 6, constraints=cons, tol=1e-12)
    np.testing.assert_allclose(q_step(A, B, p_full).q, ref.x, atol=1e-4)


def test_q_step_inequality_mode_inactive(rng):
    A, B = rng.normal(size=200) - 3, rng.normal(size=200)  # posterior mean well below 0.5
    res = q_step(A, B, 0.5, equality=False)
    assert res.status == 2 and res.beta == 0.0 and res.q.mean() <= 0.5


@pytest.mark.parametrize("p_full", [0.0, 1.0])
def test_q_step_extremes(rng, p_full):
    res = q_step(rng.normal(size=10), rng.normal(size=10), p_full)
    np.testing.assert_array_equal(res.q, np.full(10, p_full))


# ------------------------------------------------------------------ alternating minimization


@pytest.mark.parametrize(
    "problem, p_full, n_trees, max_em_iter",
    [
        ("binary_problem", 0.2, 15, 4),
        ("binary_problem", 0.6, 15, 4),
        ("multiclass_problem", 0.2, 10, 3),
        ("multiclass_problem", 0.5, 10, 3),
    ],
)
def test_every_q_step_meets_p_full(request, problem, p_full, n_trees, max_em_iter):
    X, y, _, _, f0 = request.getfixturevalue(problem)
    m = AdaptGBRT(f0, p_full=p_full, gamma=0.005, n_trees=n_trees, max_em_iter=max_em_iter).fit(X, y)
    assert len(m.train_result_.history) >= 2
    for rec in m.train_result_.history:
        assert abs(rec["mean_q"] - p_full) < 1e-5


def test_p_full_zero_is_a_cost_penalized_booster(binary_problem):
    """P_full = 0: every row goes to f1, and f1 equals LightGBM's binary booster with the same
    coupled CEGB penalty (GreedyMiser-style), the special case noted in the paper."""
    X, y, Xt, _, f0 = binary_problem
    gamma, n_trees = 0.01, 20
    m = AdaptGBRT(f0, p_full=0.0, gamma=gamma, n_trees=n_trees, max_em_iter=2).fit(X, y)
    assert m.route(Xt).sum() == 0
    from budget_extras.adapt._train import default_lgb_params

    params = default_lgb_params()
    params.update(objective="binary", cegb_tradeoff=1.0, cegb_penalty_feature_coupled=[2 * len(y) * gamma] * X.shape[1])
    ref = lgb.train(params, lgb.Dataset(X, label=y), num_boost_round=n_trees)
    ours = m.f1_model_.predict(Xt, raw_score=True) + m.f1_bias_
    np.testing.assert_allclose(ours, ref.predict(Xt, raw_score=True), atol=1e-6)
    np.testing.assert_array_equal(m.predict(Xt), (ref.predict(Xt) > 0.5).astype(int))


def test_penalty_limits_features(binary_problem):
    X, y, _, _, f0 = binary_problem
    cheap = AdaptGBRT(f0, p_full=0.3, gamma=0.0, n_trees=15, max_em_iter=2).fit(X, y)
    dear = AdaptGBRT(f0, p_full=0.3, gamma=0.05, n_trees=15, max_em_iter=2).fit(X, y)
    assert dear.train_result_.history[-1]["n_features"] < cheap.train_result_.history[-1]["n_features"]


def test_convergence_status(binary_problem):
    X, y, _, _, f0 = binary_problem
    m = AdaptGBRT(f0, p_full=0.3, gamma=0.01, n_trees=10, max_em_iter=1).fit(X, y)
    assert m.train_result_.status == Status.LIMIT and not m.train_result_.success
    assert "max_em_iter=1" in m.train_result_.message


# ------------------------------------------------------------------------ Synthetic-2


def test_synthetic2_adapt_reaches_1_5_and_l1_does_not(synthetic2):
    X, y, Xt, yt, f0 = synthetic2
    acc0 = np.mean(f0.predict(Xt) == yt)
    m = AdaptGBRT(f0, p_full=0.5, gamma=0.05, n_trees=30, f0_features="all").fit(X, y)
    ev = m.evaluate(Xt, yt)
    assert ev["accuracy"] >= acc0 - 0.005
    assert ev["cost"] <= 1.5 + 0.04  # the hard half is 50% +- sampling
    l1 = L1GateBaseline(f0_features="all").fit(X, y, f0).evaluate(Xt, yt)
    assert l1[l1["accuracy"] >= acc0 - 0.005]["cost"].min() >= 1.7


# ------------------------------------------------------------------------ cost accounting


def _walk_features(tree, x):
    used = set()
    node = tree
    while "split_feature" in node:
        f = node["split_feature"]
        used.add(f)
        node = node["left_child"] if x[f] <= node["threshold"] else node["right_child"]
    return used


def test_unified_cost_rule_against_slow_walk(synthetic2):
    X, y, Xt, _, f0 = synthetic2
    Xt = Xt[:300]
    costs = np.array([1.0, 2.5])
    m = AdaptGBRT(f0, p_full=0.5, gamma=0.02, n_trees=10, max_em_iter=3, costs=costs).fit(X, y)
    f0_used = sklearn_tree_features_used(f0, Xt)
    gdump = m.g_model_.dump_model()["tree_info"]
    fdump = m.f1_model_.dump_model()["tree_info"]
    route = m.route(Xt)
    expected = np.zeros(len(Xt))
    for i, x in enumerate(Xt):
        used = set().union(*(_walk_features(t["tree_structure"], x) for t in gdump))
        if route[i]:
            used |= set(np.flatnonzero(f0_used[i]))
        else:
            used |= set().union(*(_walk_features(t["tree_structure"], x) for t in fdump))
        expected[i] = sum(costs[list(used)])
    np.testing.assert_allclose(m.row_cost(Xt), expected)
    assert 0 < route.mean() < 1


def test_sklearn_forest_features_against_slow_walk(binary_problem):
    _, _, Xt, _, f0 = binary_problem
    used = sklearn_tree_features_used(f0, Xt[:50])
    for i, x in enumerate(Xt[:50]):
        ref = set()
        for est in f0.estimators_:
            t, node = est.tree_, 0
            while t.children_left[node] != -1:
                ref.add(t.feature[node])
                node = t.children_left[node] if x[t.feature[node]] <= t.threshold[node] else t.children_right[node]
        assert set(np.flatnonzero(used[i])) == ref


def test_booster_features_used_single_leaf_tree(rng):
    X = rng.normal(size=(50, 3))
    b = lgb.train({"objective": "regression", "verbose": -1}, lgb.Dataset(X, label=np.ones(50)), 2)
    assert not booster_features_used(b, X).any()
    np.testing.assert_array_equal(row_cost([1, 2, 3], np.array([[True, False, True]])), [4.0])


def test_non_tree_f0_pays_all_features(rng):
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + 0.2 * X[:, 1] > 0).astype(int)
    f0 = KNeighborsClassifier(5).fit(X, y)
    m = AdaptGBRT(f0, p_full=0.5, gamma=0.0, n_trees=5, max_em_iter=1).fit(X, y)
    to_f0 = m.route(X).astype(bool)
    assert to_f0.any()
    np.testing.assert_array_equal(m.row_cost(X)[to_f0], 3.0)


# ---------------------------------------------------------------------- API and budget


def test_save_load_roundtrip(synthetic2, tmp_path):
    X, y, Xt, _, f0 = synthetic2
    Xt = Xt[:300]
    m = AdaptGBRT(f0, p_full=0.5, gamma=0.02, n_trees=10, max_em_iter=2).fit(X, y)
    assert 0 < m.route(Xt).mean() < 1
    path = tmp_path / "adapt.json"
    m.save(str(path))
    m2 = AdaptGBRT.load(str(path), f0=f0)
    np.testing.assert_array_equal(m2.route(Xt), m.route(Xt))
    np.testing.assert_allclose(m2.predict_proba(Xt), m.predict_proba(Xt))
    np.testing.assert_allclose(m2.row_cost(Xt), m.row_cost(Xt))
    m3 = AdaptGBRT.load(str(path))
    np.testing.assert_array_equal(m3.route(Xt), m.route(Xt))
    with pytest.raises(ValueError, match=r"Pass f0= to AdaptGBRT\.load"):
        m3.predict(Xt)


def test_budget_sweep_picks_most_accurate_within_budget(binary_problem):
    X, y, Xt, yt, f0 = binary_problem
    m = AdaptGBRT(f0, budget=4.0, p_full_grid=[0.2, 0.6], gamma_grid=[0.002, 0.02], n_trees=10, max_em_iter=2).fit(
        X, y, X_valid=Xt, y_valid=yt
    )
    res = m.sweep_result_
    df = res.results
    assert df.groupby(["p_full", "gamma"]).ngroups == 4  # x the initializations (column init)
    within = df[df["cost"] <= 4.0]
    if res.success:
        assert df.loc[res.best_index, "accuracy"] == within["accuracy"].max()
        assert m.evaluate(Xt, yt)["accuracy"] == pytest.approx(df.loc[res.best_index, "accuracy"])
    np.testing.assert_array_equal(df["on_frontier"], pareto_mask(df["cost"], df["accuracy"]))
    fr = res.frontier
    assert np.all(np.diff(fr["accuracy"].to_numpy()) > 0)


def test_pareto_mask_brute_force(rng):
    cost, acc = rng.integers(0, 5, 40).astype(float), rng.integers(0, 5, 40).astype(float)
    mask = pareto_mask(cost, acc)
    for i in range(40):
        dom = any(cost[j] <= cost[i] and acc[j] >= acc[i] and (cost[j] < cost[i] or acc[j] > acc[i]) for j in range(40))
        assert mask[i] == (not dom)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"p_full": 1.5}, "'p_full' parameter of AdaptGBRT must be a number in \\[0, 1\\]"),
        ({"gamma": -1.0}, "'gamma' parameter of AdaptGBRT must be a finite number >= 0"),
        ({"budget": -3}, "'budget' parameter of AdaptGBRT must be a positive finite number"),
        ({"n_trees": 0}, "'n_trees' parameter of AdaptGBRT must be an integer >= 1"),
    ],
)
def test_invalid_parameters(binary_problem, kwargs, match):
    X, y, _, _, f0 = binary_problem
    with pytest.raises(ValueError, match=match):
        AdaptGBRT(f0, **kwargs).fit(X, y)


def test_invalid_inputs(binary_problem):
    X, y, _, _, f0 = binary_problem
    with pytest.raises(ValueError, match=r"needs at least 2 classes in 'y'\. Got 1 instead"):
        AdaptGBRT(f0).fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="needs validation data"):
        AdaptGBRT(f0, budget=2.0).fit(X, y)
    with pytest.raises(TypeError, match="'f0' argument of AdaptGBRT"):
        AdaptGBRT(object()).fit(X, y)
    with pytest.raises(ValueError, match="not fitted yet"):
        AdaptGBRT().route(X)


def test_adapt_lin_q_and_candidates(binary_problem):
    X, y, Xt, yt, f0 = binary_problem
    m = AdaptLin(p_full=0.3, lam=0.01, max_em_iter=3, max_iter=100).fit(X, y, f0)
    np.testing.assert_allclose(m.history_, 0.3, atol=1e-5)
    df = m.evaluate(Xt, yt)
    assert df["n_support"].is_monotonic_decreasing
    assert df["n_support"].iloc[-1] == 0


@pytest.mark.parametrize(
    ("est", "exc", "match"),
    [
        (AdaptLin(p_full=True), TypeError, r"'p_full' parameter of AdaptLin must be .*Got True"),
        (AdaptLin(lam=float("nan")), ValueError, r"'lam' parameter of AdaptLin must be .*Got nan"),
        (AdaptLin(max_em_iter=2.5), TypeError, r"'max_em_iter' parameter of AdaptLin must be an integer"),
        (AdaptLin(max_iter=-1), ValueError, r"'max_iter' parameter of AdaptLin must be an integer >= 0"),
        (L1GateBaseline(n_gate_weights=True), TypeError, r"'n_gate_weights' parameter of L1GateBaseline"),
        (L1GateBaseline(n_gate_weights=0), ValueError, r"'n_gate_weights' parameter of L1GateBaseline"),
        (L1GateBaseline(C_grid=0.1), TypeError, r"'C_grid' parameter of L1GateBaseline"),
    ],
)
def test_linear_baselines_refuse_bad_parameters_by_the_table_rule(binary_problem, est, exc, match):
    """A bool is no number and a count is an integer in range, for the baselines as for AdaptGBRT."""
    X, y, _, _, f0 = binary_problem
    with pytest.raises(exc, match=match):
        est.fit(X, y, f0)


def test_linear_baselines_accept_numpy_scalars(binary_problem):
    X, y, _, _, f0 = binary_problem
    m = AdaptLin(p_full=np.float32(0.3), lam=np.float64(0.01), max_em_iter=np.int64(2), max_iter=np.int32(20))
    assert len(m.fit(X, y, f0).history_) == 2
    assert L1GateBaseline(C_grid=[0.1], n_gate_weights=np.int64(2)).fit(X, y, f0).candidates_


# ------------------------------------------------------------------ the gate follows q


@pytest.mark.parametrize("p_full", [0.3, 0.7])
def test_gate_routes_the_share_q_asks_for(two_groups, p_full):
    """The gate's routed share (train and held-out) tracks mean(q) = p_full. Before the
    fix the gate, fit to soft targets q and routed at g > 0, sent 6% (p_full 0.3) or 66-100%
    (p_full 0.7) of the rows. (init="greedy": from the A-only start the gate splits on A alone
    and can route only half or all of the rows, the nearest achievable share.)"""
    X, y, Xv, _, f0 = two_groups
    m = AdaptGBRT(
        f0, p_full=p_full, gamma=0.003, costs=[1.2, 0.8], n_trees=20, max_em_iter=5, f0_features="all", init="greedy"
    ).fit(X, y)
    last = m.train_result_.history[-1]
    assert abs(last["frac_f0"] - last["mean_q"]) < 0.05
    assert abs(m.route(X).mean() - p_full) < 0.05
    assert abs(m.route(Xv).mean() - p_full) < 0.05


# ------------------------------------------------------ a way out of the all-features f1


def test_cheap_init_finds_the_adaptive_system(two_groups):
    """At a small gamma the greedy initial f1 uses both features, q then sees no cost and
    the fit stayed at cost 2.0 (everything priced as f0). With the cheap initializations
    (init="auto") the A-only f1 start leads to the 1.6 system at full accuracy."""
    X, y, Xv, yv, f0 = two_groups
    kw = dict(p_full=0.7, gamma=0.003, costs=[1.2, 0.8], n_trees=20, max_em_iter=5, f0_features="all")
    ev = AdaptGBRT(f0, **kw).fit(X, y).evaluate(Xv, yv)
    assert ev["accuracy"] >= 0.99 and ev["cost"] <= 1.65
    old = AdaptGBRT(f0, init="greedy", **kw).fit(X, y).evaluate(Xv, yv)
    assert old["cost"] >= 1.95  # the trap the cheap initializations get out of


def test_budget_sweep_warns_when_no_better_than_trivial(two_groups):
    """budget=1.7 with only a chance-level model within budget warns and says so in
    result_ (Status.TRIVIAL); before, it was returned silently with status SUCCESS."""
    X, y, Xv, yv, f0 = two_groups
    m = AdaptGBRT(
        f0,
        budget=1.7,
        costs=[1.2, 0.8],
        n_trees=10,
        max_em_iter=2,
        f0_features="all",
        p_full_grid=[0.3, 0.5],
        gamma_grid=[1.0],
    )
    with pytest.warns(UserWarning, match="no better than a constant"):
        m.fit(X, y, X_valid=Xv, y_valid=yv)
    assert m.result_.status == Status.TRIVIAL and not m.result_.success
    assert "no useful adaptive system" in m.result_.message


def test_budget_sweep_finds_the_adaptive_system(two_groups):
    """budget=1.7 returns the 1.6 system at full accuracy, without a warning."""
    import warnings

    X, y, Xv, yv, f0 = two_groups
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = AdaptGBRT(
            f0,
            budget=1.7,
            costs=[1.2, 0.8],
            n_trees=20,
            max_em_iter=5,
            f0_features="all",
            p_full_grid=[0.5, 0.7],
            gamma_grid=[0.003],
        ).fit(X, y, X_valid=Xv, y_valid=yv)
    assert m.result_.status == Status.SUCCESS
    ev = m.evaluate(Xv, yv)
    assert ev["accuracy"] >= 0.99 and ev["cost"] <= 1.65
    assert set(m.result_.results["init"]) >= {"greedy", "f1 on Column_0"}


# ------------------------------------------------------------------------ scoring=


@pytest.mark.slow  # more than 20 s on 2 cores
def test_budget_sweep_scoring_auc_picks_differently(imbalanced):
    """On imbalanced data the sweep selects by scoring=; accuracy and AUC pick different
    configurations, each the best within budget by its own measure, and the score column is the
    system's validation AUC."""
    from sklearn.metrics import make_scorer, roc_auc_score

    X, y, Xv, yv, f0 = imbalanced
    kw = dict(budget=3.0, p_full_grid=[0.1, 0.3], gamma_grid=[0.03], n_trees=15, max_em_iter=3)
    by_acc = AdaptGBRT(f0, **kw).fit(X, y, X_valid=Xv, y_valid=yv)
    by_auc = AdaptGBRT(f0, scoring="roc_auc", **kw).fit(X, y, X_valid=Xv, y_valid=yv)
    for m in (by_acc, by_auc):
        df = m.result_.results
        assert m.result_.status == Status.SUCCESS
        assert df.loc[m.result_.best_index, "score"] == df[df["cost"] <= 3.0]["score"].max()
    np.testing.assert_array_equal(by_acc.result_.results["score"], by_acc.result_.results["accuracy"])
    auc = roc_auc_score(yv, by_auc.predict_proba(Xv)[:, 1])
    assert by_auc.result_.results.loc[by_auc.result_.best_index, "score"] == pytest.approx(auc)
    assert by_acc.result_.best_index != by_auc.result_.best_index
    assert roc_auc_score(yv, by_acc.predict_proba(Xv)[:, 1]) < auc - 0.005
    # a callable scorer gives the same choice as the name
    m = AdaptGBRT(f0, scoring=make_scorer(roc_auc_score, response_method="predict_proba"), **kw)
    assert m.fit(X, y, X_valid=Xv, y_valid=yv).result_.best_index == by_auc.result_.best_index
    with pytest.raises(ValueError, match=r"'scoring' parameter of AdaptGBRT must be None.*Got 'no_such_scorer'"):
        AdaptGBRT(f0, scoring="no_such_scorer", **kw).fit(X, y, X_valid=Xv, y_valid=yv)


# ------------------------------------------------------ f0 gets what it was fitted on


@pytest.mark.parametrize("kind", ["forest", "tree", "knn"])
def test_f0_fitted_on_dataframe_gets_dataframes(binary_problem, kind, tmp_path):
    """A scikit-learn f0 fitted on a DataFrame is called with DataFrames (no "X does not
    have valid feature names" warning; run with warnings as errors), also in the budget sweep,
    cost_report and after save/load. Before, f0 received numpy arrays and warned."""
    import warnings

    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    X, y, Xt, yt, _ = binary_problem
    cols = [f"f{i}" for i in range(X.shape[1])]
    df, dft = pd.DataFrame(X, columns=cols), pd.DataFrame(Xt, columns=cols)
    f0 = {
        "forest": RandomForestClassifier(10, random_state=0),
        "tree": DecisionTreeClassifier(max_depth=5),
        "knn": KNeighborsClassifier(5),
    }[kind].fit(df, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = AdaptGBRT(f0, p_full=0.5, gamma=0.005, n_trees=5, max_em_iter=2).fit(df, y)
        assert 0 < m.route(dft).mean()
        m.predict(dft), m.evaluate(dft, yt), m.cost_report(dft), m.predict(Xt)
        m.save(str(tmp_path / "m.json"))
        AdaptGBRT.load(str(tmp_path / "m.json"), f0=f0).predict(dft)
        AdaptGBRT(f0, budget=4.0, p_full_grid=[0.5], gamma_grid=[0.005], n_trees=5, max_em_iter=1).fit(
            df, y, X_valid=dft, y_valid=yt
        )


def test_single_fit_warns_when_chance_level(two_groups):
    """A single fit whose system is no more accurate than the majority class on its
    training rows (gamma too high for any feature) warns and sets Status.TRIVIAL."""
    X, y, _, _, f0 = two_groups
    m = AdaptGBRT(f0, p_full=0.3, gamma=1.0, costs=[1.2, 0.8], n_trees=5, max_em_iter=2, f0_features="all")
    with pytest.warns(UserWarning, match="no better than predicting the majority class"):
        m.fit(X, y)
    assert m.result_.status == Status.TRIVIAL and not m.result_.success
