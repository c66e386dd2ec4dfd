"""BudgetPrune on LightGBM models: export against LightGBM, error terms, budget targeting, CLI."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from budget_extras import BudgetPrune, FeatureCosts, TreeEnsemble, cost_report
from budget_extras.budgetprune._error_terms import inbag_counts, train_counts
from budget_extras.budgetprune._leaves import leaf_nodes
from budget_extras.cli._main import main


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def _data(rng, n, n_class=2):
    X = rng.normal(size=(n, 6))
    X[:, 5] = rng.integers(0, 6, n)
    X[rng.random((n, 6)) < 0.05] = np.nan
    s = X[:, 0] + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2]) + (X[:, 5] == 3) + 0.5 * rng.normal(size=n)
    y = (s > 0).astype(int) if n_class == 2 else np.digitize(s, [-0.7, 0.7])
    return X, y


def _model(rng, boosting="rf", n_class=2, n_rounds=8, **extra):
    X, y = _data(rng, 1500, n_class)
    params = dict(
        objective="binary" if n_class == 2 else "multiclass",
        num_class=1 if n_class == 2 else n_class,
        boosting=boosting,
        bagging_fraction=0.6,
        bagging_freq=1,
        feature_fraction=0.8,
        num_leaves=12,
        min_data_in_leaf=5,
        verbose=-1,
        seed=int(rng.integers(1000)),
        num_threads=1,
    )
    params.update(extra)
    booster = lgb.train(params, lgb.Dataset(X, y, categorical_feature=[5]), num_boost_round=n_rounds)
    Xv, _ = _data(rng, 600, n_class)
    return booster, X, y, Xv


@pytest.mark.parametrize(("boosting", "n_class"), [("rf", 2), ("rf", 3), ("gbdt", 2), ("gbdt", 3)])
@pytest.mark.parametrize("lam", [0.0, 0.01, 1e9])
def test_exported_model_loads_in_lightgbm_and_predicts_like_our_predictor(rng, boosting, n_class, lam):
    booster, X, y, Xv = _model(rng, boosting, n_class)
    bp = BudgetPrune(booster, lam=lam, max_iter=50).fit(X, y, X_valid=Xv)
    loaded = lgb.Booster(model_str=bp.model_string_)
    np.testing.assert_allclose(loaded.predict(Xv, raw_score=True), bp.predict_raw(Xv), rtol=0, atol=1e-12)
    # the core's TreeEnsemble.collapse of the same nodes is the same model
    np.testing.assert_allclose(bp.ensemble_.predict_raw(Xv), loaded.predict(Xv, raw_score=True), atol=1e-9)
    # pruning only removes nodes: every pruned tree has at most the original number of leaves
    original = booster.dump_model()["tree_info"]
    pruned = loaded.dump_model()["tree_info"]
    assert all(p["num_leaves"] <= o["num_leaves"] for p, o in zip(pruned, original, strict=True))
    if lam == 1e9:
        assert all(p["num_leaves"] == 1 for p in pruned)


def test_unpruned_export_is_the_original_model(rng):
    booster, X, y, Xv = _model(rng)
    bp = BudgetPrune(booster, lam=0.0, error_source="train").fit(X, y, X_valid=Xv)
    ensemble = bp.setup_.ensemble
    loaded = lgb.Booster(model_str=ensemble.collapse(np.zeros(0, dtype=np.int64)).to_model_string())
    np.testing.assert_array_equal(loaded.predict(Xv, raw_score=True), booster.predict(Xv, raw_score=True))


def test_inbag_counts_equal_train_counts_without_bagging(rng):
    # feature_fraction < 1 makes rf legal without bagging: every training row is in-bag
    booster, X, y, _ = _model(rng, bagging_fraction=1.0, bagging_freq=0, feature_fraction=0.7)
    forest = TreeEnsemble.from_booster(booster)
    np.testing.assert_array_equal(
        inbag_counts(forest, y), train_counts(forest, leaf_nodes(forest, booster, X), y)
    )


def test_inbag_counts_agree_with_the_models_internal_nodes_and_oob_is_the_rest(rng):
    booster, X, y, Xv = _model(rng)
    forest = TreeEnsemble.from_booster(booster)
    inbag = inbag_counts(forest, y)
    np.testing.assert_array_equal(inbag.sum(axis=1), forest.count)  # LightGBM's own in-bag node counts
    train = train_counts(forest, leaf_nodes(forest, booster, X), y)
    assert np.all(train - inbag >= 0)  # the bag is a subset of the training rows, per node and class
    for source in ("inbag", "oob"):
        assert BudgetPrune(booster, lam=0.01, error_source=source).fit(X, y, X_valid=Xv).result_.success


def test_inbag_counts_read_l2_regularization_from_the_core_parameters(rng):
    # lambda_l2 and cat_l2 (categorical feature 5) change leaf outputs; the recovery reads them
    # from TreeEnsemble.parameters (the model text's parameters section)
    booster, X, y, _ = _model(rng, lambda_l2=3.0, cat_l2=4.0)
    forest = TreeEnsemble.from_booster(booster)
    assert (forest.parameters["lambda_l2"], forest.parameters["cat_l2"]) == ("3", "4")
    assert forest.is_categorical.any()
    inbag = inbag_counts(forest, y)
    np.testing.assert_array_equal(inbag.sum(axis=1), forest.count)
    assert np.all(train_counts(forest, leaf_nodes(forest, booster, X), y) - inbag >= 0)
    unregularized = forest.replace(parameters={})
    with pytest.raises(ValueError, match="Could not recover"):
        inbag_counts(unregularized, y)


def test_inbag_refuses_what_it_cannot_recover(rng):
    booster, X, y, Xv = _model(rng, lambda_l1=1.0)
    with pytest.raises(ValueError, match="lambda_l1"):
        BudgetPrune(booster, lam=0.01, error_source="inbag").fit(X, y, X_valid=Xv)
    booster, X, y, Xv = _model(rng, n_class=3)
    with pytest.raises(ValueError, match="binary LightGBM random forest"):
        BudgetPrune(booster, lam=0.01, error_source="inbag").fit(X, y, X_valid=Xv)


@pytest.mark.parametrize("budget", [0.5, 1.5, 3.0])
def test_budget_is_met_by_the_best_scoring_pruning_found(rng, budget):
    booster, X, y, Xv = _model(rng)
    bp = BudgetPrune(booster, budget=budget, bisect_steps=12, min_score=None).fit(X, y, X_valid=Xv)
    cost = bp.result_.acquisition_term
    assert cost <= budget
    feasible = [c for c in bp.search_ if c["cost"] <= budget]
    assert bp.score_ == max(c["score"] for c in feasible)
    over = [lam for lam, c, _, _ in bp.path_ if c > budget]
    if over:  # bisection brackets the smallest feasible lambda
        assert max(over) >= min(c["lam"] for c in feasible) / 1.001


def test_budget_below_the_floor_is_refused_naming_metric_and_floor(rng):
    booster, X, y, Xv = _model(rng)
    with pytest.raises(ValueError, match=r"accuracy=.*below the floor min_score=.*constant model"):
        BudgetPrune(booster, budget=0.5, bisect_steps=12).fit(X, y, X_valid=Xv)


def test_feature_groups_and_costs_mapping(rng):
    booster, X, y, Xv = _model(rng)
    names = booster.feature_name()

    lazy = np.array([1.0, 2.0, 2.0, 1.0, 1.0, 3.0])
    grouped_costs = FeatureCosts(lazy, groups=[-1, "panel", "panel", -1, -1, -1])  # 1 and 2 bought together
    grouped = BudgetPrune(booster, lam=0.0, costs=grouped_costs).fit(X, y, X_valid=Xv)
    single = BudgetPrune(booster, lam=0.0, costs=dict(zip(names, lazy, strict=True))).fit(X, y, X_valid=Xv)
    assert grouped.result_.acquisition_term < single.result_.acquisition_term
    # the pruned forest's cost under the core's single accounting rule equals the solver's term
    report = cost_report(grouped.ensemble_, Xv, grouped_costs)
    assert report.acquisition_cost.mean() == pytest.approx(grouped.result_.acquisition_term)


def test_predict_proba_is_the_average_leaf_class_distribution(rng):
    booster, X, y, Xv = _model(rng, n_class=3)
    bp = BudgetPrune(booster, lam=0.005, max_iter=50).fit(X, y, X_valid=Xv)
    proba = bp.predict_proba(Xv)
    assert proba.shape == (600, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "exactly one of 'lam' and 'budget'"),
        ({"lam": 1.0, "budget": 1.0}, "exactly one of 'lam' and 'budget'"),
        ({"budget": -3}, "'budget' parameter of BudgetPrune must be a finite number >= 0 or None. Got -3"),
        ({"lam": -1}, "'lam' parameter of BudgetPrune"),
        ({"lam": 1.0, "error_source": "bag"}, "'error_source' parameter"),
    ],
)
def test_estimator_input_errors(rng, kwargs, match):
    booster, X, y, Xv = _model(rng, n_rounds=2)
    with pytest.raises(ValueError, match=match):
        BudgetPrune(booster, **kwargs).fit(X, y, X_valid=Xv)


def test_model_argument_type_error(rng):
    _, X, y, Xv = _model(rng, n_rounds=2)
    with pytest.raises(TypeError, match=r"'model' argument of BudgetPrune\.fit"):
        BudgetPrune([42], lam=1.0).fit(X, y, X_valid=Xv)
    with pytest.raises(ValueError, match=r"BudgetPrune needs the LightGBM model to prune"):
        BudgetPrune(lam=1.0).fit(X, y, X_valid=Xv)


def test_sklearn_params_roundtrip():
    bp = BudgetPrune(lam=0.1)
    assert bp.set_params(budget=2.0, lam=None).get_params()["budget"] == 2.0
    with pytest.raises(ValueError, match="Invalid parameter 'foo'"):
        bp.set_params(foo=1)


def test_cli_output_equals_library(rng, tmp_path):
    booster, X, y, Xv = _model(rng)
    names = booster.feature_name()
    model = tmp_path / "rf.txt"
    booster.save_model(model)
    pd.DataFrame(X, columns=names).assign(label=y).to_csv(tmp_path / "train.csv", index=False)
    pd.DataFrame(Xv, columns=names).to_csv(tmp_path / "valid.csv", index=False)
    costs = np.array([1.0, 2.0, 1.0, 1.0, 0.5, 1.5])
    pd.DataFrame({"feature": names, "cost": costs}).to_csv(tmp_path / "costs.csv", index=False)
    out = tmp_path / "pruned.txt"
    argv = ["prune", "--model", str(model), "--train", str(tmp_path / "train.csv"),
            "--valid", str(tmp_path / "valid.csv"), "--costs", str(tmp_path / "costs.csv"),
            "--budget", "1.2", "-q", "-o", str(out), "--json", str(tmp_path / "r.json")]
    assert main(argv) == 0
    lib = BudgetPrune(lgb.Booster(model_file=str(model)), budget=1.2, costs=costs).fit(X, y, X_valid=Xv)
    assert out.read_text() == lib.model_string_


def test_tree_ensemble_input_and_evaluation_cost_match_the_core_accounting(rng):
    booster, X, y, Xv = _model(rng)
    costs = FeatureCosts(np.array([1.0, 2.0, 1.0, 1.0, 0.5, 1.5]), split=0.25)
    from_booster = BudgetPrune(booster, lam=0.01, eval_cost=True, max_iter=50, costs=costs).fit(X, y, X_valid=Xv)
    from_ensemble = BudgetPrune(
        TreeEnsemble.from_booster(booster), lam=0.01, eval_cost=True, max_iter=50, costs=costs
    ).fit(X, y, X_valid=Xv)
    np.testing.assert_array_equal(from_booster.collapsed_, from_ensemble.collapsed_)
    report = cost_report(from_booster.ensemble_, Xv, costs)
    assert report.eval_cost.mean() == pytest.approx(from_booster.result_.evaluation_term)
    assert report.acquisition_cost.mean() == pytest.approx(from_booster.result_.acquisition_term)


def test_loss_error_of_a_forest_is_the_loss_of_its_averaged_output(rng):
    booster, X, y, Xv = _model(rng)
    bp = BudgetPrune(booster, lam=0.0, error="loss").fit(X, y, X_valid=Xv)
    # unpruned at lambda = 0 (every split lowers the training loss): the error term is
    # n_trees x the forest's training logloss, since each tree's term is the full model's loss
    p = booster.predict(X)
    logloss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    leaves_only = bp.setup_.ensemble.is_leaf
    err = float(bp.setup_.problem.node_error @ leaves_only)
    assert err == pytest.approx(bp.setup_.ensemble.n_trees * logloss, rel=1e-9)
    with pytest.raises(ValueError, match=r"'error' parameter of BudgetPrune must be one of \('misclassification'"):
        BudgetPrune(booster, lam=0.0, error="hinge").fit(X, y, X_valid=Xv)


@pytest.mark.parametrize("n_class", [2, 3])
def test_gbdt_surrogate_error_of_the_full_model_is_its_training_loss(rng, n_class):
    booster, X, y, Xv = _model(rng, "gbdt", n_class)
    bp = BudgetPrune(booster, lam=0.0, max_iter=5).fit(X, y, X_valid=Xv)
    p = booster.predict(X)
    if n_class == 2:
        loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    else:
        loss = -np.mean(np.log(p[np.arange(len(y)), y]))
    err = float(bp.setup_.problem.node_error @ bp.setup_.ensemble.is_leaf)
    assert err == pytest.approx(bp.setup_.ensemble.n_trees * loss, rel=1e-9)
