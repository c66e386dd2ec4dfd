"""FeatureDropRefit: drop features from a GBDT, refit its leaves, meet a budget.

Oracles: a brute-force per-row walk with the dropped features' splits forced; LightGBM itself
(the exported model, ``Booster.refit``); a direct numpy computation of ``-G / (H + lambda_l2)``
per leaf in tree order; the core's ``cost_report``.
"""

from __future__ import annotations

import pickle

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from budget_extras.budgetprune import BudgetPrune, FeatureDropRefit
from budget_extras.budgetprune._drop_refit import (
    RefitSpec,
    drop_forcing,
    forced_ensemble,
    initial_score,
    nan_forcing,
    prepare_rows,
    refit_values,
    route,
)
from budget_extras.budgetprune._usage import path_tables, row_usage, usage_cost
from budget_extras.core import FeatureCosts, Status, TreeEnsemble, cost_report


@pytest.fixture
def rng():
    return np.random.default_rng(26)


def _train(X, y, objective="binary", rounds=25, **extra):
    params = {"objective": objective, "verbose": -1, "num_leaves": 8, "learning_rate": 0.1, "num_threads": 1, "seed": 0}
    params.update(extra)
    if objective == "multiclass":
        params["num_class"] = 3
    return lgb.train(params, lgb.Dataset(X, y), num_boost_round=rounds)


def _data(rng, n=1500, d=5, objective="binary"):
    X = rng.normal(size=(n, d))
    z = X[:, 0] + 0.7 * X[:, 1] * X[:, 2] + 0.5 * X[:, 3] + 0.5 * rng.normal(size=n)
    if objective == "binary":
        y = (z > 0).astype(float)
    elif objective == "multiclass":
        y = np.digitize(z, [-0.6, 0.6]).astype(float)
    else:
        y = z
    return X, y


def _brute_leaf(ens: TreeEnsemble, x: np.ndarray, tree: int, dropped: set[int]) -> int:
    """Walk one row down one tree; splits on ``dropped`` go to the child with more training rows."""
    node = int(ens.tree_offset[tree])
    while ens.left_child[node] >= 0:
        left, right = int(ens.left_child[node]), int(ens.right_child[node])
        f = int(ens.feature[node])
        if f in dropped:
            node = left if ens.count[left] >= ens.count[right] else right
        else:  # numerical data without NaN or zero: LightGBM's rule is x <= threshold
            node = left if x[f] <= ens.threshold[node] else right
    return node


@pytest.mark.parametrize("objective", ["binary", "multiclass", "regression"])
def test_dropped_model_predicts_like_a_brute_force_walk_and_like_lightgbm(rng, objective):
    X, y = _data(rng, objective=objective)
    ens = TreeEnsemble.from_booster(_train(X, y, objective))
    dropped = {1, 3}
    forced = drop_forcing(ens, sorted(dropped))
    leaves, _ = route(ens, prepare_rows(ens, X[:200]), forced)
    brute = np.array([[_brute_leaf(ens, x, t, dropped) for t in range(ens.n_trees)] for x in X[:200]])
    np.testing.assert_array_equal(leaves.T, brute)
    small = forced_ensemble(ens, forced)
    assert not np.isin(small.feature, list(dropped)).any()
    expect = np.zeros((200, ens.num_tree_per_iteration))
    for t in range(ens.n_trees):
        expect[:, ens.tree_class[t]] += ens.value[brute[:, t]]
    expect = expect[:, 0] if ens.num_tree_per_iteration == 1 else expect
    np.testing.assert_allclose(small.predict_raw(X[:200]), expect, rtol=0, atol=1e-12)
    booster = lgb.Booster(model_str=small.to_model_string())
    np.testing.assert_allclose(booster.predict(X[:200], raw_score=True), expect, rtol=0, atol=1e-9)


def test_routing_with_nan_and_categorical_splits_matches_lightgbm_on_the_exported_model(rng):
    n = 2000
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 6, n), "c": rng.normal(size=n)})
    X.loc[rng.random(n) < 0.1, "a"] = np.nan
    X.loc[rng.random(n) < 0.2, "c"] = 0.0
    X["b"] = X["b"].astype("category")
    y = ((X["a"].fillna(0) + (X["b"].cat.codes % 2) + X["c"]) > 0.5).astype(float).to_numpy()
    booster = _train(X, y)
    ens = TreeEnsemble.from_booster(booster)
    for dropped in ([], [0], [1], [0, 2]):
        forced = drop_forcing(ens, dropped)
        leaves, _ = route(ens, prepare_rows(ens, X), forced)
        raw = ens.value[leaves].sum(axis=0)
        exported = lgb.Booster(model_str=forced_ensemble(ens, forced).to_model_string())
        np.testing.assert_allclose(exported.predict(X, raw_score=True), raw, rtol=0, atol=1e-9)


@pytest.mark.parametrize("objective", ["binary", "multiclass", "regression"])
def test_refit_of_the_full_model_equals_lightgbm_refit(rng, objective):
    X, y = _data(rng, objective=objective)
    booster = _train(X, y, objective, boost_from_average=False, lambda_l2=0.5)
    ens = TreeEnsemble.from_booster(booster)
    spec = RefitSpec(ens)
    none = drop_forcing(ens, [])
    leaves, _ = route(ens, prepare_rows(ens, X), none)
    value, _, _ = refit_values(ens, spec, leaves, y, np.zeros(spec.n_class))
    theirs = TreeEnsemble.from_booster(booster.refit(X, y, decay_rate=0.0))
    np.testing.assert_allclose(value[ens.is_leaf], theirs.value[ens.is_leaf], rtol=1e-6, atol=1e-7)


def _direct_refit(ens, leaves, y, bias, l2, lr):
    """-G / (H + l2) * lr per leaf in tree order (binary logloss), starting from ``bias``."""
    value = np.array(ens.value, dtype=float)
    score = np.full(y.size, bias)
    for t in range(ens.n_trees):
        p = 1 / (1 + np.exp(-score))
        g, h = p - y, p * (1 - p)
        for leaf in np.unique(leaves[t]):
            rows = leaves[t] == leaf
            value[leaf] = -g[rows].sum() / (h[rows].sum() + l2) * lr + (bias if t == 0 else 0.0)
        score = score + value[leaves[t]] - (bias if t == 0 else 0.0)
    return value


def test_refit_of_a_dropped_model_is_the_direct_newton_step_and_keeps_the_initial_score(rng):
    X, y = _data(rng)
    ens = TreeEnsemble.from_booster(_train(X, y, lambda_l2=2.0))
    spec = RefitSpec(ens)
    bias = initial_score(spec, y)
    np.testing.assert_allclose(bias, [np.log(y.mean() / (1 - y.mean()))])
    forced = drop_forcing(ens, [0])
    leaves, _ = route(ens, prepare_rows(ens, X), forced)
    value, count, _ = refit_values(ens, spec, leaves, y, bias)
    reached = np.unique(leaves)
    expect = _direct_refit(ens, leaves, y, bias[0], 2.0, 0.1)
    np.testing.assert_allclose(value[reached], expect[reached], rtol=1e-9, atol=1e-12)
    assert count[reached].sum() == y.size * ens.n_trees
    # refitting from a later tree keeps the earlier trees' values and gives the same model
    part, _, _ = refit_values(ens, spec, leaves, y, bias, value=value, start=ens.n_trees // 2)
    np.testing.assert_allclose(part, value, rtol=0, atol=1e-12)
    # the full model refit on its own training rows (initial score kept) is the model itself
    full, _ = route(ens, prepare_rows(ens, X), drop_forcing(ens, []))
    same, _, _ = refit_values(ens, spec, full, y, bias)
    np.testing.assert_allclose(same[ens.is_leaf], np.asarray(ens.value)[ens.is_leaf], atol=1e-6)


@pytest.fixture
def costly_noise(rng):
    """Two cheap informative features and an expensive pure-noise feature the model uses."""
    n = 3000
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "noise": rng.normal(size=n)})
    y = ((X["a"] + X["b"] + 0.3 * rng.normal(size=n)) > 0).astype(int).to_numpy()
    booster = _train(X[:1500], y[:1500], rounds=30, num_leaves=16)
    assert "noise" in {booster.feature_name()[f] for f in TreeEnsemble.from_booster(booster).feature[
        ~TreeEnsemble.from_booster(booster).is_leaf]}
    return booster, X, y, {"a": 1.0, "b": 1.0, "noise": 50.0}


def test_expensive_noise_is_dropped_and_the_budget_holds(costly_noise):
    booster, X, y, costs = costly_noise
    text = booster.model_to_string()
    est = FeatureDropRefit(booster, budget=10.0, costs=costs, scoring="roc_auc")
    est.fit(X[:1500], y[:1500], X_valid=X[1500:2250], y_valid=y[1500:2250])
    assert booster.model_to_string() == text  # the input model is not modified
    assert est.dropped_features_ == ("noise",)
    assert est.result_.status == Status.SUCCESS and est.result_.success
    report = cost_report(est.ensemble_, X[1500:2250], costs)
    assert report.total_cost.mean() <= 10.0
    assert est.cost_ == pytest.approx(report.total_cost.mean())
    assert est.score_ >= est.score_full_ - 0.01
    np.testing.assert_allclose(est.predict_raw(X[2250:]), est.booster_.predict(X[2250:], raw_score=True), atol=1e-9)
    clone = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(clone.predict(X[2250:]), est.predict(X[2250:]))
    assert clone.result_ == est.result_


def test_budget_checks_are_fast_and_name_budget(costly_noise):
    booster, X, y, costs = costly_noise
    args = (X[:1500], y[:1500])
    kw = dict(X_valid=X[1500:2250], y_valid=y[1500:2250])
    with pytest.raises(ValueError, match="budget"):
        FeatureDropRefit(booster, budget=-1.0, costs=costs).fit(*args, **kw)
    with pytest.raises(ValueError, match=r"budget=0\.5.*only the constant model"):
        FeatureDropRefit(booster, budget=0.5, costs=costs).fit(*args, **kw)
    with pytest.raises(ValueError, match=r"budget=1 .*tree cost"):
        FeatureDropRefit(booster, budget=1.0, costs=FeatureCosts(costs, tree=1.0, feature_names=list(X.columns))).fit(
            *args, **kw
        )
    with pytest.raises(ValueError, match="X_valid"):
        FeatureDropRefit(booster, budget=10.0, costs=costs).fit(*args)


def test_a_budget_the_model_meets_returns_the_model_unchanged(costly_noise):
    booster, X, y, costs = costly_noise
    est = FeatureDropRefit(booster, budget=1e6, costs=costs).fit(X[:1500], y[:1500], X_valid=X[1500:], y_valid=y[1500:])
    assert est.dropped_features_ == ()
    np.testing.assert_allclose(est.predict_raw(X[:50]), booster.predict(X[:50], raw_score=True), atol=1e-12)


def test_budgetprune_uses_drop_refit_for_boosted_models(costly_noise):
    booster, X, y, costs = costly_noise
    bp = BudgetPrune(booster, budget=10.0, costs=costs, scoring="roc_auc")
    bp.fit(X[:1500], y[:1500], X_valid=X[1500:2250], y_valid=y[1500:2250])
    assert bp.method_ == "drop_refit"
    assert bp.drop_refit_.dropped_features_ == ("noise",)
    assert bp.cost_report(X[1500:2250]).total_cost.mean() <= 10.0
    np.testing.assert_allclose(bp.predict_raw(X[2250:]), bp.drop_refit_.predict_raw(X[2250:]))


def test_incremental_routing_from_any_other_forcing_equals_routing_from_scratch(rng):
    X, y = _data(rng, objective="multiclass")
    ens = TreeEnsemble.from_booster(_train(X, y, "multiclass"))
    Xp = prepare_rows(ens, X)
    value = np.asarray(ens.value)
    for a, b in (([], [1]), ([1], [1, 3]), ([1, 3], [3]), ([0, 2], [1]), ([4], [])):
        fa, fb = drop_forcing(ens, a), drop_forcing(ens, b)
        base, _ = route(ens, Xp, fa)
        raw_a = np.stack([value[base[ens.tree_class == c]].sum(axis=0) for c in range(3)], axis=1)
        leaves, raw = route(ens, Xp, fb, base=base, base_forced=fa, value=value, raw=raw_a)
        scratch, _ = route(ens, Xp, fb)
        np.testing.assert_array_equal(leaves, scratch)
        expect = np.stack([value[scratch[ens.tree_class == c]].sum(axis=0) for c in range(3)], axis=1)
        np.testing.assert_allclose(raw, expect, atol=1e-12)


def test_returned_model_scores_at_least_every_candidate_within_the_budget(rng):
    X, y = _data(rng, n=3000, d=6)
    booster = _train(X[:1500], y[:1500], rounds=30)
    costs = [10.0, 5.0, 5.0, 1.0, 1.0, 1.0]
    est = FeatureDropRefit(booster, budget=12.0, costs=costs, scoring="roc_auc")
    est.fit(X[:1500], y[:1500], X_valid=X[1500:2250], y_valid=y[1500:2250])
    within = [p for p in est.path_ if p["cost"] <= 12.0 + 1e-9]
    assert within and any(p.get("seed") == "importance" for p in est.path_)
    assert est.score_ >= max(p["score"] for p in within) - 1e-12
    assert est.cost_ <= 12.0 + 1e-9
    assert est.result_.n_refits == len(est.path_)


def test_search_on_a_sample_of_training_rows_returns_a_model_refit_on_all_rows(costly_noise, monkeypatch):
    from sklearn.metrics import roc_auc_score

    import budget_extras.budgetprune._feature_drop as fd

    booster, X, y, costs = costly_noise
    monkeypatch.setattr(fd, "SEARCH_ROWS", 600)
    est = FeatureDropRefit(booster, budget=10.0, costs=costs, scoring="roc_auc")
    est.fit(X[:1500], y[:1500], X_valid=X[1500:2250], y_valid=y[1500:2250])
    assert est.dropped_features_ == ("noise",)
    assert est.path_[-1]["all_rows"] and est.result_.n_refits == len(est.path_)
    assert est.path_[-1]["seed"] == est.candidate_
    if est.candidate_ == "recipe":  # the hand recipe on all rows: Booster.refit of the masked rows
        masked = X.assign(noise=np.nan)
        theirs = booster.refit(masked[:1500], y[:1500], decay_rate=0.0)
        expect = theirs.predict(masked[2250:], raw_score=True)
        np.testing.assert_allclose(est.predict_raw(X[2250:]), expect, atol=1e-5)
    else:
        ens = TreeEnsemble.from_booster(booster)
        spec = RefitSpec(ens)
        forced = drop_forcing(ens, [list(X.columns).index("noise")])
        leaves, _ = route(ens, prepare_rows(ens, X[:1500]), forced)
        value, _, _ = refit_values(ens, spec, leaves, y[:1500], initial_score(spec, y[:1500]))
        expect = forced_ensemble(ens, forced, value).predict_raw(X[2250:])
        np.testing.assert_allclose(est.predict_raw(X[2250:]), expect, atol=1e-9)
    assert est.score_ == pytest.approx(roc_auc_score(y[1500:2250], est.predict_raw(X[1500:2250])))


#: Models whose leaves a refit reproduces: (objective, training parameters, weighted).
REFITTABLE = {
    "binary": ("binary", {}, False),
    "binary, boost_from_average=false": ("binary", {"boost_from_average": False}, False),
    "binary, weights": ("binary", {}, True),
    "binary, sigmoid, l1, l2, max_delta_step": (
        "binary", {"sigmoid": 2.0, "lambda_l1": 0.5, "lambda_l2": 2.0, "max_delta_step": 0.3}, False),
    "regression": ("regression", {}, False),
    "regression, boost_from_average=false": ("regression", {"boost_from_average": False}, False),
    "regression, weights": ("regression", {}, True),
    "multiclass": ("multiclass", {}, False),
    "multiclass, boost_from_average=false, weights": ("multiclass", {"boost_from_average": False}, True),
    "quantized gradients with renewed leaves": (
        "binary", {"use_quantized_grad": True, "quant_train_renew_leaf": True}, False),
}


@pytest.mark.parametrize("kind", list(REFITTABLE))
def test_refit_of_the_unpruned_model_on_its_own_rows_gives_it_back(rng, kind):
    """Every accepted kind of model: the refit with nothing dropped returns its leaves to 1e-8
    (LightGBM sums gradients in float32), with the model's training weights passed as sample_weight."""
    objective, extra, weighted = REFITTABLE[kind]
    X, y = _data(rng, n=1200, objective=objective)
    w = rng.uniform(0.2, 3.0, size=y.size) if weighted else None
    params = {"objective": objective, "verbose": -1, "num_leaves": 8, "learning_rate": 0.1, "num_threads": 1,
              "seed": 0, **extra, **({"num_class": 3} if objective == "multiclass" else {})}
    ens = TreeEnsemble.from_booster(lgb.train(params, lgb.Dataset(X, y, weight=w), num_boost_round=25))
    spec = RefitSpec(ens)
    leaves, _ = route(ens, prepare_rows(ens, X), drop_forcing(ens, []))
    value, _, _ = refit_values(ens, spec, leaves, y, initial_score(spec, y, w), weight=w)
    np.testing.assert_allclose(value[ens.is_leaf], np.asarray(ens.value)[ens.is_leaf], rtol=0, atol=1e-8)


@pytest.mark.parametrize("objective", ["binary", "regression"])
def test_a_weighted_fit_refits_with_the_weights_and_predicts_as_its_saved_model(rng, objective):
    """fit(sample_weight=w): the returned leaves are the weighted refit of the chosen forcing, and
    predict / predict_raw equal LightGBM's predictions from the saved model."""
    X, y = _data(rng, n=2000, objective=objective)
    w = rng.uniform(0.2, 3.0, size=2000)
    booster = lgb.train({"objective": objective, "verbose": -1, "num_leaves": 8, "num_threads": 1, "seed": 0},
                        lgb.Dataset(X[:1200], y[:1200], weight=w[:1200]), num_boost_round=25)
    costs = [1.0, 2.0, 2.0, 3.0, 1.0]
    budget = 0.7 * cost_report(TreeEnsemble.from_booster(booster), X[1200:1600], costs).total_cost.mean()
    est = FeatureDropRefit(booster, budget=budget, costs=costs).fit(
        X[:1200], y[:1200], X_valid=X[1200:1600], y_valid=y[1200:1600], sample_weight=w[:1200])
    assert est.dropped_features_
    ens = TreeEnsemble.from_booster(booster)
    spec = RefitSpec(ens)
    dropped = [int(f.split("_")[1]) for f in est.dropped_features_]
    recipe = est.candidate_ == "recipe"  # the hand recipe: masked (NaN) features, refit as Booster.refit
    forced = (nan_forcing if recipe else drop_forcing)(ens, dropped)
    leaves, _ = route(ens, prepare_rows(ens, X[:1200]), forced)
    bias = np.zeros(1) if recipe else initial_score(spec, y[:1200], w[:1200])
    value, _, _ = refit_values(ens, spec, leaves, y[:1200], bias, weight=w[:1200], lightgbm=recipe)
    Xt = X[1600:]
    np.testing.assert_allclose(est.predict_raw(Xt), forced_ensemble(ens, forced, value).predict_raw(Xt), atol=1e-9)
    if recipe:
        masked = X.copy()
        masked[:, dropped] = np.nan
        theirs = booster.refit(masked[:1200], y[:1200], decay_rate=0.0, weight=w[:1200])
        np.testing.assert_allclose(est.predict_raw(Xt), theirs.predict(masked[1600:], raw_score=True), atol=1e-5)
    saved = lgb.Booster(model_str=est.model_string_)
    np.testing.assert_allclose(est.predict_raw(Xt), saved.predict(Xt, raw_score=True), rtol=0, atol=1e-9)
    if objective == "regression":
        np.testing.assert_allclose(est.predict(Xt), saved.predict(Xt), rtol=0, atol=1e-9)
    else:
        np.testing.assert_allclose(est.predict_proba(Xt)[:, 1], saved.predict(Xt), rtol=0, atol=1e-12)
    plain, _, _ = refit_values(ens, spec, leaves, y[:1200], bias * 0 if recipe else initial_score(spec, y[:1200]),
                               lightgbm=recipe)  # the weights matter
    assert np.abs(forced_ensemble(ens, forced, plain).predict_raw(Xt) - est.predict_raw(Xt)).max() > 1e-3


#: Models whose leaves a refit cannot reproduce: (objective, training parameters, what the error names).
UNREFITTABLE = {
    "reg_sqrt": ("regression", {"reg_sqrt": True}, r"reg_sqrt=true \(objective 'regression sqrt'\)"),
    "path_smooth": ("regression", {"path_smooth": 0.5}, r"path_smooth=0\.5"),
    "dart": ("binary", {"boosting": "dart"}, "boosting=dart"),
    "monotone": ("regression", {"monotone_constraints": [1, 0, 0, 0, 0]}, r"monotone_constraints=1,0,0,0,0"),
    "quantized": ("binary", {"use_quantized_grad": True}, "use_quantized_grad=true"),
    "linear trees": ("regression", {"linear_tree": True}, "linear tree"),
}


@pytest.mark.parametrize("kind", list(UNREFITTABLE))
def test_models_whose_leaves_a_refit_cannot_reproduce_are_refused_naming_the_option(rng, kind):
    objective, extra, match = UNREFITTABLE[kind]
    X, y = _data(rng, n=800, objective=objective)
    booster = _train(X, y, objective, rounds=10, **extra)
    with pytest.raises(ValueError, match=match):
        FeatureDropRefit(booster, budget=1.0).fit(X[:400], y[:400], X_valid=X[400:], y_valid=y[400:])


@pytest.mark.parametrize(
    "weight, exc, match",
    [
        ("abc", TypeError, "'sample_weight' argument must be an array of 400 numbers"),
        (np.ones(399), ValueError, r"shape \(400,\) like y. Got \(399,\)"),
        (np.r_[np.ones(399), np.nan], ValueError, "1 non-finite"),
        (np.r_[np.ones(399), -1.0], ValueError, "1 negative"),
        (np.zeros(400), ValueError, "positive sum"),
    ],
)
def test_bad_sample_weights_are_refused(rng, weight, exc, match):
    X, y = _data(rng, n=800)
    booster = _train(X, y, rounds=5)
    with pytest.raises(exc, match=match):
        FeatureDropRefit(booster, budget=1.0).fit(X[:400], y[:400], X_valid=X[400:], y_valid=y[400:],
                                                  sample_weight=weight)


def test_masked_routing_is_lightgbm_on_rows_whose_dropped_features_are_missing(rng):
    """nan_forcing sends every split on a dropped feature where LightGBM sends a missing value
    (numerical NaN rules, zero-as-missing, categorical), so the forced model predicts as the
    original model on rows whose dropped features are NaN."""
    n = 2000
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 6, n), "c": rng.normal(size=n),
                      "d": rng.normal(size=n)})
    X.loc[rng.random(n) < 0.1, "a"] = np.nan
    X.loc[rng.random(n) < 0.2, "c"] = 0.0
    X["b"] = X["b"].astype("category")
    y = ((X["a"].fillna(0) + (X["b"].cat.codes % 2) + X["c"] + X["d"]) > 0.5).astype(float).to_numpy()
    booster = _train(X, y)
    ens = TreeEnsemble.from_booster(booster)
    for dropped in ([0], [1], [2], [3], [0, 2], [1, 3]):
        leaves, _ = route(ens, prepare_rows(ens, X), nan_forcing(ens, dropped))
        masked = X.copy()
        for f in dropped:
            col = X.columns[f]
            masked[col] = pd.Categorical([None] * n, categories=X[col].cat.categories) if col == "b" else np.nan
        np.testing.assert_allclose(ens.value[leaves].sum(axis=0), booster.predict(masked, raw_score=True),
                                   rtol=0, atol=1e-9)


@pytest.mark.parametrize("objective", ["binary", "regression", "multiclass"])
def test_refit_as_lightgbm_equals_booster_refit_of_a_model_boosted_from_the_average(rng, objective):
    """refit_values(lightgbm=True) from a raw score of 0 is Booster.refit(decay_rate=0), first tree included."""
    X, y = _data(rng, objective=objective)
    booster = _train(X, y, objective, lambda_l2=0.5)
    ens = TreeEnsemble.from_booster(booster)
    spec = RefitSpec(ens)
    leaves, _ = route(ens, prepare_rows(ens, X), drop_forcing(ens, []))
    value, _, _ = refit_values(ens, spec, leaves, y, np.zeros(spec.n_class), lightgbm=True)
    theirs = TreeEnsemble.from_booster(booster.refit(X, y, decay_rate=0.0))
    np.testing.assert_allclose(value[ens.is_leaf], theirs.value[ens.is_leaf], rtol=1e-5, atol=1e-6)


def test_row_costs_in_one_pass_equal_the_core_accounting_with_groups_and_split_costs(rng):
    X, y = _data(rng, d=6)
    ens = TreeEnsemble.from_booster(_train(X, y))
    costs = FeatureCosts([3.0, 1.0, 2.0, 5.0, 1.0, 4.0], groups=["g", None, "g", None, "h", "h"],
                         group_cost={"g": 4.0, "h": 2.5}, split=[0.1, 0.0, 0.2, 0.0, 0.3, 0.0])
    split = np.asarray(costs.split, dtype=np.float64)
    Xp = prepare_rows(ens, X[:300])
    for dropped in ([], [0], [1, 3]):
        forced = drop_forcing(ens, dropped)
        leaves, _ = route(ens, Xp, forced)
        bits, pcost = path_tables(ens, forced, split)
        total, used_any = usage_cost(leaves, bits, pcost, costs.unit, costs.unit_cost, ens.n_features)
        used, path_cost = row_usage(leaves, bits, pcost, ens.n_features)
        np.testing.assert_allclose(total, costs.row_cost(used) + path_cost, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(used_any, used.any(axis=0))
        report = cost_report(forced_ensemble(ens, forced), X[:300], costs)
        np.testing.assert_allclose(total, report.total_cost, rtol=0, atol=1e-9)


def _missing_tells(rng, n=4000):
    """The expensive feature 0 is missing for a fifth of the rows, and only among those does the cheap
    feature 1 tell the label: the model's splits on feature 1 sit below the missing-value branches."""
    X = rng.normal(size=(n, 3))
    missing = rng.random(n) < 0.2
    X[missing, 0] = np.nan
    y = (missing & (X[:, 1] > 0)).astype(float)
    return X, y, _train(X[:2000], y[:2000], num_leaves=4, rounds=20)


def test_the_hand_recipe_is_returned_where_masking_beats_forcing_to_the_larger_child(rng):
    """Forcing feature 0's splits to their larger child cuts off feature 1's splits; masking it (the
    recipe) keeps them. The recipe's model is returned, and it is Booster.refit of the masked rows."""
    X, y, booster = _missing_tells(rng)
    est = FeatureDropRefit(booster, budget=2.0, costs=[50.0, 1.0, 1.0], scoring="roc_auc")
    est.fit(X[:2000], y[:2000], X_valid=X[2000:3000], y_valid=y[2000:3000])
    assert est.candidate_ == "recipe" and est.dropped_features_[-1] == "Column_0"
    assert est.cost_ <= 2.0
    forced = [p["score"] for p in est.path_ if p["seed"] != "recipe"]
    assert est.score_ > 0.7 and all(s < est.score_ - 0.1 for s in forced)
    masked = X.copy()
    masked[:, [int(f.split("_")[1]) for f in est.dropped_features_]] = np.nan
    theirs = booster.refit(masked[:2000], y[:2000], decay_rate=0.0)
    np.testing.assert_allclose(est.predict_raw(X[3000:]), theirs.predict(masked[3000:], raw_score=True), atol=1e-5)


def test_the_search_is_returned_only_when_it_beats_the_recipe_by_two_standard_errors(costly_noise, monkeypatch):
    import budget_extras.budgetprune._feature_drop as fd

    booster, X, y, costs = costly_noise
    kw = dict(X_valid=X[1500:2250], y_valid=y[1500:2250])
    monkeypatch.setattr(fd, "RECIPE_MARGIN", -np.inf)  # any lead wins
    lead = FeatureDropRefit(booster, budget=10.0, costs=costs, scoring="roc_auc").fit(X[:1500], y[:1500], **kw)
    monkeypatch.setattr(fd, "RECIPE_MARGIN", np.inf)  # no lead is enough
    never = FeatureDropRefit(booster, budget=10.0, costs=costs, scoring="roc_auc").fit(X[:1500], y[:1500], **kw)
    assert never.candidate_ == "recipe"
    recipe = next(p for p in never.path_ if p["seed"] == "recipe")
    best = max((p for p in lead.path_ if p["seed"] != "recipe"), key=lambda p: p["score"])
    assert lead.candidate_ == ("recipe" if recipe["score"] >= best["score"] else best["seed"])


@pytest.mark.parametrize("d", [8, 32])
def test_refits_and_evaluations_do_not_grow_with_features_times_steps(rng, monkeypatch, d):
    """A budget that forces most of d features out: the refits stay 3 (two fills and the recipe), the
    evaluated feature sets about four per feature (ranking, three fills), the routings as many."""
    import budget_extras.budgetprune._feature_drop as fd

    n = 3000
    X = rng.normal(size=(n, d))
    y = ((X @ rng.uniform(0.5, 1.0, size=d) + rng.normal(size=n)) > 0).astype(float)
    booster = _train(X[:1500], y[:1500], rounds=30, num_leaves=16)
    calls = {"route": 0, "refit_values": 0}
    for name in calls:
        real = getattr(fd, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(fd, name, counted)
    costs = rng.uniform(1.0, 10.0, size=d)
    full = cost_report(TreeEnsemble.from_booster(booster), X[1500:2250], costs).total_cost.mean()
    est = FeatureDropRefit(booster, budget=0.3 * full, costs=costs, scoring="roc_auc")
    est.fit(X[:1500], y[:1500], X_valid=X[1500:2250], y_valid=y[1500:2250])
    assert len(est.dropped_features_) >= d // 3
    assert calls["refit_values"] == est.result_.n_refits <= 3
    assert est.result_.n_steps <= 4 * d + 8
    assert calls["route"] <= 4 * d + 16


def test_the_ranking_rows_are_a_random_sample_of_training_rows_sorted_by_label(costly_noise, monkeypatch, ranking_rows):
    import budget_extras.budgetprune._feature_drop as fd
    import budget_extras.budgetprune._rank as rk

    booster, X, y, costs = costly_noise
    order = np.argsort(y[:1500], kind="stable")  # the training rows sorted by label
    monkeypatch.setattr(fd, "PROXY_ROWS", 300)
    seen = ranking_rows
    monkeypatch.setattr(rk, "RANK_SHARE", 0)  # the fewest rows: a sample of them
    FeatureDropRefit(booster, budget=10.0, costs=costs).fit(
        X.iloc[order], y[order], X_valid=X[1500:2250], y_valid=y[1500:2250])
    assert seen[0].size == 300 and 0.3 < seen[0].mean() < 0.7
    monkeypatch.setattr(rk, "RANK_SHARE", 3)  # every row, shuffled: the first ones (the cost's) are a sample
    FeatureDropRefit(booster, budget=10.0, costs=costs).fit(
        X.iloc[order], y[order], X_valid=X[1500:2250], y_valid=y[1500:2250])
    assert seen[1].size == 1500 and 0.3 < seen[1][:300].mean() < 0.7


def test_counted_fill_makes_the_choices_of_evaluating_every_proposal(rng, monkeypatch):
    """The fills' bookkeeping (changed pairs re-routed in a buffer, per-row feature counts over the
    changed trees) returns the model, path and evaluation count of re-evaluating every proposal, with
    acquisition groups; both of its cost roads are taken."""
    import budget_extras.budgetprune._feature_drop as fd

    d = 10
    X = rng.normal(size=(3000, d))
    y = ((X @ rng.uniform(0.3, 1.0, size=d) + rng.normal(size=3000)) > 0).astype(float)
    booster = _train(X[:1500], y[:1500], rounds=40, num_leaves=8)
    costs = FeatureCosts(lazy=rng.uniform(1.0, 10.0, size=d), groups=[0, -1, -1, 0, -1, 1, 1, 1, -1, -1],
                         group_cost={0: 6.0, 1: 9.0})
    full = cost_report(TreeEnsemble.from_booster(booster), X[1500:2250], costs).total_cost.mean()
    calls = {"delta": 0}
    real = fd.usage_cost_delta

    def delta(*args):
        calls["delta"] += 1
        return real(*args)

    def fit(walk_pairs):
        monkeypatch.setattr(fd, "WALK_PAIRS", walk_pairs)
        return FeatureDropRefit(booster, budget=0.4 * full, costs=costs, scoring="roc_auc").fit(
            X[:1500], y[:1500], X_valid=X[1500:2250], y_valid=y[1500:2250])

    plain = fit(10**12)
    monkeypatch.setattr(fd, "usage_cost_delta", delta)
    counted = fit(0)
    assert calls["delta"] > 0 and counted.result_.n_steps > calls["delta"]
    assert counted.dropped_features_ == plain.dropped_features_ and counted.candidate_ == plain.candidate_
    assert counted.path_ == plain.path_ and counted.result_.n_steps == plain.result_.n_steps
    np.testing.assert_array_equal(counted.ensemble_.value, plain.ensemble_.value)


def test_usage_cost_of_changed_trees_equals_the_full_accounting(rng):
    """usage_cost_delta from a base forcing's counts equals usage_cost of the new forcing, groups included."""
    from budget_extras.budgetprune._usage import feature_counts, usage_cost_delta

    X, y = _data(rng, n=600, d=6)
    ens = TreeEnsemble.from_booster(_train(X, y, rounds=20))
    fc = FeatureCosts(lazy=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], groups=[-1, 0, -1, -1, 0, -1], group_cost={0: 3.5})
    Xp = prepare_rows(ens, X)
    split = np.zeros(ens.n_features)
    for base_drop, drop in (([0, 2], [2]), ([], [1, 4]), ([3, 5], [0, 5])):
        f0, f1 = drop_forcing(ens, base_drop), drop_forcing(ens, drop)
        l0, l1 = route(ens, Xp, f0)[0], route(ens, Xp, f1)[0]
        b0, b1 = path_tables(ens, f0, split), path_tables(ens, f1, split)
        trees = np.unique(np.asarray(ens.node_tree)[np.flatnonzero(f0 != f1)])
        counts = feature_counts(l0, b0[0], ens.n_features)
        row, used, delta = usage_cost_delta(l0, l1, trees, b0[0], b1[0], counts, fc.unit, fc.unit_cost)
        want_row, want_used = usage_cost(l1, b1[0], b1[1], fc.unit, fc.unit_cost, ens.n_features)
        np.testing.assert_array_equal(row, want_row)
        np.testing.assert_array_equal(used, want_used)
        np.testing.assert_array_equal(counts + delta, feature_counts(l1, b1[0], ens.n_features))
