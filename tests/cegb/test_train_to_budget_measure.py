"""A search candidate's validation measurement: equal to cost_report's, without parsing the whole model."""

from __future__ import annotations

import dataclasses
import re
import warnings

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

import budget_extras._compat as compat_mod
import budget_extras.cegb._cv as cv_mod
import budget_extras.cegb._measure as measure_mod
import budget_extras.cegb._search as search_mod
from budget_extras import FeatureCosts, TreeEnsemble, cost_report
from budget_extras._compat import tree_arrays
from budget_extras.cegb import train_to_budget
from budget_extras.cegb._measure import leaf_paths, measure_rows, model_row_costs
from budget_extras.cegb._scoring import resolve_scoring
from budget_extras.cegb._search import Clock, Search, Spec
from budget_extras.core import ModelParseError
from budget_extras.core._leaf_cost import row_costs_from_leaves
from budget_extras.core._report import model_coupled_cost

N_FEATURES = 6
NAMES = [f"f{i}" for i in range(N_FEATURES)]


def _old_row_costs(booster, X, fc):
    """The measurement through the full parse: per-row costs and the coupled cost."""
    ens = TreeEnsemble.from_booster(booster)
    return row_costs_from_leaves(ens, booster.predict(X, pred_leaf=True), fc), model_coupled_cost(ens, fc)[1]


def _data(kind, seed=0, n=900):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES))
    X[rng.random(n) < 0.1, 1] = np.nan
    X[:, 5] = rng.integers(0, 4, size=n)  # a categorical column
    z = X[:, 0] + 0.7 * np.nan_to_num(X[:, 1]) + 0.5 * X[:, 2] * X[:, 3] + 0.4 * (X[:, 5] == 2)
    if kind == "regression":
        y = z + 0.3 * rng.normal(size=n)
        params = {"objective": "regression"}
    elif kind == "binary":
        y = (z + 0.5 * rng.normal(size=n) > 0).astype(int)
        params = {"objective": "binary"}
    else:
        y = np.digitize(z + 0.5 * rng.normal(size=n), [-0.7, 0.7])
        params = {"objective": "multiclass", "num_class": 3}
    return X, y, {**params, "verbosity": -1, "seed": 0, "num_leaves": 7, "num_threads": 1}


COSTS = {
    "lazy": FeatureCosts([1.0, 2.0, 3.0, 5.0, 8.0, 0.5], feature_names=NAMES),
    "groups_coupled": FeatureCosts([1.0, 2.0, 3.0, 5.0, 8.0, 0.5], coupled=[0.0, 4.0, 0.0, 2.5, 0.0, 1.0],
                                   groups={"f2": "g", "f3": "g"}, group_cost={"g": 6.0}, feature_names=NAMES),
    "split_tree": FeatureCosts([1.0, 2.0, 3.0, 5.0, 8.0, 0.5], split=[0.1, 0.3, 0.0, 0.7, 0.2, 0.05], tree=0.01,
                               feature_names=NAMES),
}


def _booster(X, y, params, extra=None, rounds=15):
    train = lgb.Dataset(X, y, feature_name=NAMES, categorical_feature=[5])
    return lgb.train({**params, **(extra or {})}, train, num_boost_round=rounds)


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression"])
@pytest.mark.parametrize("costs", sorted(COSTS))
def test_row_costs_equal_the_full_parse_and_cost_report(kind, costs):
    """Per-row costs and the coupled cost equal the full parse's to the last bit, and cost_report's."""
    X, y, params = _data(kind)
    fc = COSTS[costs]
    Xv = _data(kind, seed=1, n=300)[0]
    for extra in ({}, {"interaction_constraints": [[0, 2, 3]]}, {"min_gain_to_split": 1e300}):
        b = _booster(X, y, params, extra)
        new, coupled = model_row_costs(b, Xv, fc)
        old, old_coupled = _old_row_costs(b, Xv, fc)
        np.testing.assert_array_equal(new, old)
        assert coupled == old_coupled
        rep = cost_report(TreeEnsemble.from_booster(b), Xv, fc)
        np.testing.assert_allclose(new, rep.total_cost, rtol=1e-12, atol=0)
        assert coupled == pytest.approx(rep.coupled_cost, rel=1e-12, abs=0)


def test_a_constant_model_costs_only_its_trees():
    X, y, params = _data("binary")
    fc = COSTS["split_tree"]
    b = _booster(X, y, params, {"min_gain_to_split": 1e300}, rounds=4)
    costs, coupled = model_row_costs(b, X[:50], fc)
    np.testing.assert_array_equal(costs, np.full(50, b.num_trees() * 0.01))
    assert coupled == 0.0
    np.testing.assert_array_equal(costs, _old_row_costs(b, X[:50], fc)[0])


def test_measure_does_not_parse_the_whole_model(monkeypatch):
    """A candidate is measured from its leaf paths alone: the full model parse is not run."""
    X, y, params = _data("binary")
    fc = COSTS["groups_coupled"]
    s = _search(X, y, params, fc)
    b = s.train_booster({}, s.train)
    expected = _old_candidate(s, Spec("all", {}), b)

    def refuse(*args, **kwargs):
        raise AssertionError("the full model parse ran")

    monkeypatch.setattr(TreeEnsemble, "from_model_string", classmethod(refuse))
    got = s.measure(Spec("all", {}), b, 0.0)
    assert dataclasses.replace(got, seconds=0.0) == expected


def _search(X, y, params, fc, init=None):
    train = lgb.Dataset(X, y, feature_name=NAMES, categorical_feature=[5], params={"verbosity": -1}).construct()
    Xv, yv = _data(params["objective"], seed=1, n=300)[:2]
    score = resolve_scoring(None, params)[1]
    if init is not None:
        score = (lambda f, i: lambda b, X, y, **kw: f(b, X, y, init_score=i, **kw))(score, init)
    clock = Clock(1.0, len(y), None, None, 1, False, None)
    return Search(params, train, None, Xv, yv, fc, score, 15, clock)


def _old_candidate(s, spec, b):
    """The candidate as the full parse measures it."""
    row_cost, coupled = _old_row_costs(b, s.Xv, s.fc)
    return dataclasses.replace(
        s.measure(spec, b, 0.0), seconds=0.0, cost=float(np.mean(row_cost)), cost_sd=float(np.std(row_cost)),
        coupled_cost=coupled, score=float(s.score_fn(b, s.Xv, s.yv)),
    )


def test_a_text_the_reader_does_not_expect_goes_through_the_full_parse():
    """Linear trees and broken child links are left to the full parse (which refuses them)."""
    X, y, params = _data("regression")
    fc = COSTS["lazy"]
    linear = _booster(np.nan_to_num(X), y, params, {"linear_tree": True}, rounds=3)
    assert leaf_paths(linear.model_to_string(), fc) is None
    with pytest.raises(ModelParseError, match="linear tree"):
        model_row_costs(linear, X[:5], fc)
    text = _booster(X, y, {**params, "num_leaves": 4}, rounds=1).model_to_string()
    assert "\nnum_leaves=4\n" in text and leaf_paths(text, fc) is not None
    # nodes 1 and 2 point at each other: every node has one parent, but no path reaches the root
    cycle = re.sub(r"\nleft_child=[^\n]*", "\nleft_child=-1 2 1", text, count=1)
    cycle = re.sub(r"\nright_child=[^\n]*", "\nright_child=-2 -3 -4", cycle, count=1)
    assert leaf_paths(cycle, fc) is None
    two_parents = re.sub(r"\nleft_child=[^\n]*", "\nleft_child=1 2 -1", text, count=1)
    two_parents = re.sub(r"\nright_child=[^\n]*", "\nright_child=2 -2 -3", two_parents, count=1)
    assert leaf_paths(two_parents, fc) is None
    assert leaf_paths(text.replace("max_feature_idx=5", "max_feature_idx=6"), fc) is None


def _old_measure_rows(booster, X, fc, text=None):
    """The measurement before: the full parse for the costs, no raw scores (the score predicts again)."""
    return (*_old_row_costs(booster, X, fc), None)


@pytest.mark.parametrize(("kind", "halving"), [("binary", False), ("multiclass", False), ("regression", False),
                                               ("binary", True)])
def test_the_search_finds_the_candidates_and_choice_of_the_full_parse(kind, halving, monkeypatch):
    """Every candidate's score, cost, spread and coupled cost, and the chosen model, as measured before
    (the full parse for the costs, a second prediction for the scores; with init_scores).

    With successive halving, the rung measurements (and so the candidates stopped early) too.
    """
    X, y, params = _data(kind, n=700)
    Xv, yv = _data(kind, seed=1, n=300)[:2]
    fc = COSTS["groups_coupled"]
    init_v = np.full((300, 3) if kind == "multiclass" else 300, 0.1)
    init_t = np.full(700 * 3 if kind == "multiclass" else 700, 0.1)

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return train_to_budget(
                params, lgb.Dataset(X, y, feature_name=NAMES, init_score=init_t), budget=6.0,
                valid_set=lgb.Dataset(pd.DataFrame(Xv, columns=NAMES), yv, init_score=init_v), costs=fc,
                num_boost_round=12, progress=False, budgets=[3.0, 12.0], n_tradeoffs=3, n_bisect=1,
                keep_boosters=True, choose="valid", options={"halving": halving, "rungs": (0.5,)},
            )

    new = run()
    monkeypatch.setattr(search_mod, "measure_rows", _old_measure_rows)
    old = run()
    strip = [dataclasses.replace(c, seconds=0.0) for c in new.frontier]
    assert strip == [dataclasses.replace(c, seconds=0.0) for c in old.frontier]
    assert new.booster.model_to_string() == old.booster.model_to_string()
    assert new.status == old.status
    assert not halving or any(c.rounds is not None for c in new.frontier)  # some candidate stopped at a rung


def _lean_cv_search(kind):
    """A lean search of two budgets on 700 + 300 rows with its cross-validated choice (the rows stack)."""
    X, y, params = _data(kind, n=700)
    Xv, yv = _data(kind, seed=1, n=300)[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train_to_budget(
            params, lgb.Dataset(X, y, feature_name=NAMES), budget=6.0,
            valid_set=lgb.Dataset(Xv, yv, feature_name=NAMES), costs=COSTS["groups_coupled"],
            num_boost_round=8, progress=False, budgets=[3.0, 12.0], n_tradeoffs=2, keep_boosters=True,
            search="lean", choose="cv",
        )


def _assert_same_cv_search(a, b):
    """``a`` cross-validated some candidates, and ``a`` and ``b`` have the same frontier (but the seconds)
    and the same chosen model."""
    assert any(c.folds > 0 for c in a.frontier)
    assert [dataclasses.replace(c, seconds=0.0) for c in a.frontier] == [
        dataclasses.replace(c, seconds=0.0) for c in b.frontier]
    assert a.booster.model_to_string() == b.booster.model_to_string()


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression"])
def test_fold_fits_find_the_scores_costs_and_choice_of_two_routings(kind, monkeypatch):
    """Each fold fit's held-out score and costs from one routing of its rows (the leaves give the raw
    scores) equal those of the full parse and a second prediction, and so the chosen model."""
    new = _lean_cv_search(kind)
    monkeypatch.setattr(cv_mod, "measure_rows", _old_measure_rows)
    _assert_same_cv_search(new, _lean_cv_search(kind))


#: Models of both measuring paths: the extra parameters and rounds (early stopping: a best iteration).
TWO_PATHS = {
    "binary": ("binary", {}), "multiclass": ("multiclass", {}), "regression": ("regression", {}),
    "dart": ("binary", {"boosting": "dart", "drop_rate": 0.5, "skip_drop": 0.0}),
    "constant": ("regression", {"min_gain_to_split": 1e300}),
    "random forest": ("regression", {"boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1}),
    "linear": ("regression", {"linear_tree": True}),
    "early stopped": ("regression", {"learning_rate": 0.9}),
}


def _measure_both(b, X, fc, monkeypatch):
    """``measure_rows`` of ``b``: from the tree arrays (where the library has them), then from the model text."""
    try:
        arrays = measure_rows(b, X, fc)
    except ModelParseError as exc:
        arrays = exc
    with monkeypatch.context() as m:
        m.setattr(measure_mod, "tree_arrays", lambda booster: None)
        try:
            text = measure_rows(b, X, fc)
        except ModelParseError as exc:
            text = exc
    return arrays, text


@pytest.mark.parametrize("name", sorted(TWO_PATHS))
def test_the_tree_arrays_and_the_model_text_measure_a_model_alike(name, tmp_path, monkeypatch):
    """Costs, coupled cost and raw scores (with the objective) are equal from the fork's tree arrays and the text.

    Also for a model loaded from its file; linear trees go through the full parse on both paths.
    """
    kind, extra = TWO_PATHS[name]
    X, y, params = _data(kind)
    Xv, yv = _data(kind, seed=1, n=300)[:2]
    if name == "linear":
        X, Xv = np.nan_to_num(X), np.nan_to_num(Xv)
    kwargs = {}
    if name == "early stopped":
        kwargs = {"valid_sets": [lgb.Dataset(Xv, yv, feature_name=NAMES, categorical_feature=[5])],
                  "callbacks": [lgb.early_stopping(2, verbose=False)], "keep_training_booster": True}
    b = lgb.train({**params, **extra}, lgb.Dataset(X, y, feature_name=NAMES, categorical_feature=[5]), 40, **kwargs)
    assert name != "early stopped" or 0 < b.best_iteration < b.current_iteration()
    b.save_model(str(tmp_path / "model.txt"))
    for booster in (b, lgb.Booster(model_file=str(tmp_path / "model.txt"))):
        if hasattr(lgb.basic._LIB, "LGBM_BoosterGetTreeArrays"):  # the fork: the arrays path runs
            assert tree_arrays(booster) is not None
        arrays, text = _measure_both(booster, Xv, COSTS["split_tree"], monkeypatch)
        if name == "linear":
            assert isinstance(arrays, ModelParseError) and isinstance(text, ModelParseError)
            continue
        np.testing.assert_array_equal(arrays[0], text[0])
        assert arrays[1] == text[1]
        if name == "random forest":
            assert arrays[2] is None and text[2] is None
            continue
        assert arrays[2] is not None and text[2] is not None
        assert arrays[2].raw.tobytes() == text[2].raw.tobytes() and arrays[2].objective == text[2].objective
        assert np.array_equal(arrays[2].raw, booster.predict(Xv, raw_score=True))


def test_a_library_without_the_tree_arrays_measures_from_the_model_text(monkeypatch):
    """Upstream LightGBM has no LGBM_BoosterGetTreeArrays: the model text is read, with the same measurement."""
    X, y, params = _data("multiclass")
    b = _booster(X, y, params)
    want = measure_rows(b, X, COSTS["lazy"])
    monkeypatch.setattr(compat_mod, "_has_tree_arrays", lambda: False)
    written = []
    original = lgb.Booster.model_to_string
    monkeypatch.setattr(lgb.Booster, "model_to_string",
                        lambda self, *a, **k: written.append(1) or original(self, *a, **k))
    assert tree_arrays(b) is None
    got = measure_rows(b, X, COSTS["lazy"])
    assert written == [1]
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1] and got[2] is not None and want[2] is not None
    assert np.array_equal(got[2].raw, want[2].raw) and got[2].objective == want[2].objective


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_fold_fits_choose_alike_from_the_tree_arrays_and_the_model_text(kind, monkeypatch):
    """The cross-validated choice of a lean search: the same frontier and chosen model on both measuring paths."""
    arrays = _lean_cv_search(kind)
    monkeypatch.setattr(measure_mod, "tree_arrays", lambda booster: None)
    _assert_same_cv_search(arrays, _lean_cv_search(kind))


@pytest.mark.parametrize("alias", ["num_threads", "nthread", "n_jobs"])
def test_measuring_predicts_on_the_threads_the_candidate_was_trained_with(alias, monkeypatch):
    """LightGBM's predict ignores the booster's num_threads: the score and the costs pass it (any alias)."""
    X, y, _ = _data("binary")
    b = lgb.train({"objective": "binary", "verbosity": -1, alias: 1}, lgb.Dataset(X, y), 5)
    calls = []
    predict = lgb.Booster.predict

    def record(self, data, *args, **kwargs):
        calls.append(kwargs.get("num_threads"))
        return predict(self, data, *args, **kwargs)

    monkeypatch.setattr(lgb.Booster, "predict", record)
    model_row_costs(b, X, FeatureCosts([1.0] * N_FEATURES))
    _, score = resolve_scoring(None, {"objective": "binary"})
    score(b, X, y)
    assert len(calls) == 2 and calls == [1, 1]



def test_the_binary_score_is_roc_auc_score_to_the_last_bit():
    """The search's AUC equals scikit-learn's exactly: ties, saturated scores, other labels, few rows."""
    from sklearn.metrics import roc_auc_score

    from budget_extras.cegb._scoring import roc_auc

    rng = np.random.default_rng(3)
    for i in range(300):
        n = int(rng.integers(2, 3000))
        y = rng.integers(0, 2, n)
        y[:2] = [0, 1]
        scores = [rng.random(n), rng.integers(0, 7, n) / 7.0, 1 / (1 + np.exp(-40 * rng.normal(size=n))),
                  np.round(rng.random(n), 2) + 0.1 * y][i % 4]
        labels = np.where(y == 1, 7, 3) if i % 3 == 0 else y
        assert roc_auc(labels, scores) == roc_auc_score(labels, scores)


def test_the_binary_score_leaves_what_it_cannot_score_to_roc_auc_score():
    """Non-finite scores raise as scikit-learn raises; one class gives scikit-learn's answer."""
    from sklearn.metrics import roc_auc_score

    from budget_extras.cegb._scoring import roc_auc

    with pytest.raises(ValueError, match=r"NaN|infinity"):
        roc_auc(np.array([0, 1, 1]), np.array([0.1, np.nan, 0.3]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = roc_auc_score(np.ones(4), np.arange(4.0))
        except ValueError as exc:
            with pytest.raises(ValueError, match=re.escape(str(exc)[:30])):
                roc_auc(np.ones(4), np.arange(4.0))
        else:
            assert np.isnan(expected) and np.isnan(roc_auc(np.ones(4), np.arange(4.0)))


def test_a_fitted_candidate_writes_its_model_text_once(monkeypatch):
    """Training and measuring a candidate share one model text: the copy into a prediction booster and the reader."""
    X, y, params = _data("binary")
    s = _search(X, y, params, COSTS["groups_coupled"])
    expected = _old_candidate(s, Spec("all", {}), s.train_booster({}, s.train))
    written = []
    original = lgb.Booster.model_to_string

    def counted(self, *args, **kwargs):
        written.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(lgb.Booster, "model_to_string", counted)
    got = s.fit(Spec("all", {}))
    assert len(written) == 1
    assert dataclasses.replace(got, seconds=0.0) == expected
    assert s.boosters[-1].model_to_string() == s.train_booster({}, s.train).model_to_string()


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression"])
@pytest.mark.parametrize("transient", [False, True])
def test_raw_scores_from_the_leaves_are_lightgbms_to_the_last_bit(kind, transient):
    """The raw scores summed from the leaves, and the output transform, equal LightGBM's predict exactly."""
    X, y, params = _data(kind, n=2000)
    b = lgb.train({**params, "num_leaves": 15}, lgb.Dataset(X, y), 60, keep_training_booster=transient)
    Xv = _data(kind, seed=1, n=3000)[0]
    _, _, known = measure_rows(b, Xv, COSTS["lazy"])
    assert known is not None and known.X is Xv
    assert np.array_equal(known.raw, b.predict(Xv, raw_score=True))
    assert np.array_equal(known.output(), b.predict(Xv))


def test_an_output_transform_not_repeated_exactly_is_left_to_lightgbm():
    """Poisson's exp and a binary sigmoid other than 1 are not repeated: the score predicts (same number)."""
    X, y, params = _data("binary")
    for extra in ({"objective": "poisson"}, {"sigmoid": 0.7}):
        b = lgb.train({**params, **extra}, lgb.Dataset(X, np.abs(y)), 10)
        _, _, known = measure_rows(b, X, COSTS["lazy"])
        assert known is not None and known.output() is None
        assert np.array_equal(known.raw, b.predict(X, raw_score=True))


@pytest.mark.parametrize("scoring", [None, "neg_log_loss", "accuracy", "custom"])
def test_a_candidate_is_measured_with_one_prediction_on_the_validation_rows(scoring, monkeypatch):
    """Costs and score come from one LightGBM pass over the validation rows (pred_leaf), scores as before.

    The score of every built-in, scikit-learn and user scorer is the one a second prediction gives.
    """
    X, y, params = _data("binary")
    fc = COSTS["groups_coupled"]
    s = _search(X, y, params, fc)
    if scoring is not None:
        name = (lambda est, X_, y_: float(np.mean(est.predict_proba(X_)[:, 1]))) if scoring == "custom" else scoring
        s.score_fn = resolve_scoring(name, params)[1]
    b = s.train_booster({}, s.train)
    expected = _old_candidate(s, Spec("all", {}), b)
    calls = []
    predict = lgb.Booster.predict

    def record(self, data, *args, **kwargs):
        calls.append(bool(kwargs.get("pred_leaf")))
        return predict(self, data, *args, **kwargs)

    monkeypatch.setattr(lgb.Booster, "predict", record)
    got = s.measure(Spec("all", {}), b, 0.0)
    assert calls == [True]
    assert dataclasses.replace(got, seconds=0.0) == expected


def test_a_random_forest_is_scored_as_lightgbm_predicts_it():
    """``boosting="rf"`` averages its trees in ``predict``: the score is LightGBM's, not the leaves' sum."""
    X, y, params = _data("regression")
    rf = {**params, "boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1, "verbose": -1}
    s = _search(X, y, rf, COSTS["lazy"])
    b = s.train_booster({}, s.train)
    _, _, known = measure_rows(b, s.Xv, s.fc)
    assert known is None
    rmse = float(np.sqrt(np.mean((b.predict(s.Xv) - s.yv) ** 2)))
    assert s.measure(Spec("all", {}), b, 0.0).score == pytest.approx(-rmse**2, rel=1e-12)
