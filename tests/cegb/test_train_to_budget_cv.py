"""train_to_budget's cross-validated choice: fold scores recomputed independently, the refit, the rules."""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import RepeatedStratifiedKFold

import budget_extras.cegb._cv as cv
from budget_extras import FeatureCosts, Status, TreeEnsemble, cost_report
from budget_extras.cegb import train_to_budget
from budget_extras.cegb._result import Candidate, pick

PARAMS = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 10, "learning_rate": 0.2, "num_threads": 1}
COSTS = [1.0, 2.0, 1.0, 3.0, 1.0, 1.0]
ROUNDS = 15


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6))
    y = (X[:, 0] + 0.6 * X[:, 1] + 0.4 * X[:, 3] + 0.5 * rng.normal(size=600) > 0).astype(int)
    return X[:400], y[:400], X[400:], y[400:]


def run(data, budget=3.0, train=None, **kw):
    Xt, yt, Xv, yv = data
    kw.setdefault("greedy", False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train_to_budget(PARAMS, train if train is not None else lgb.Dataset(Xt, yt), budget=budget,
                               valid_set=(Xv, yv), costs=COSTS, num_boost_round=ROUNDS, progress=False, **kw)


@pytest.fixture(scope="module")
def chosen_by_cv(data):
    return run(data, 3.0, budgets=[1.5], keep_boosters=True)


def _oracle_fold_fit(data, extra):
    """The candidate's configuration trained on 5 stratified folds of the pooled rows, with plain LightGBM."""
    Xt, yt, Xv, yv = data
    X, y = np.vstack([Xt, Xv]), np.concatenate([yt, yv]).astype(float)
    params = {**PARAMS, "verbosity": -1, "seed": 0, **extra}
    root = lgb.Dataset(Xt, yt.astype(float), params={**PARAMS, "verbosity": -1, "seed": 0}).construct()
    scores, costs = [], []
    # 600 pooled rows: below cv.REPEATS_BELOW, the 5 folds are drawn 3 times
    for fit, hold in RepeatedStratifiedKFold(n_splits=5, n_repeats=3, random_state=0).split(X, y):
        ds = lgb.Dataset(X[np.sort(fit)], y[np.sort(fit)], reference=root)
        b = lgb.train(params, ds, num_boost_round=ROUNDS)
        hold = np.sort(hold)
        scores.append(roc_auc_score(y[hold], b.predict(X[hold])))
        costs.append(cost_report(TreeEnsemble.from_booster(b), X[hold], FeatureCosts(COSTS)).total_cost)
    return np.array(scores), np.concatenate(costs)


def test_default_chooses_by_cross_validation_on_few_rows(chosen_by_cv):
    r = chosen_by_cv
    assert r.status == Status.SUCCESS and "5-fold cross-validation repeated 3 times over 600" in r.message
    assert r.chosen.folds == 15 and r.chosen.rows == 600 and math.isfinite(r.chosen.score_se)
    searched = [c for c in r.frontier if c.folds == 0]
    assert searched and all(c.proxy for c in searched)  # the search's own candidates only rank
    assert r.chosen == r.best_at(3.0)


def test_fold_scores_equal_independent_fold_fits(data, chosen_by_cv):
    for c in [x for x in chosen_by_cv.frontier if x.folds > 0][:3]:
        scores, costs = _oracle_fold_fit(data, c.params)
        np.testing.assert_allclose(c.fold_scores, scores, rtol=0, atol=1e-12)
        assert c.score == pytest.approx(scores.mean(), abs=1e-12)
        assert c.score_se == pytest.approx(scores.std(ddof=1) / math.sqrt(15), abs=1e-12)
        assert c.cost >= costs.mean() - 1e-9  # the mean held-out cost (or a refit's, if larger)


def test_returned_model_is_the_pick_refit_on_every_pooled_row(data, chosen_by_cv):
    Xt, yt, Xv, yv = data
    r = chosen_by_cv
    root = lgb.Dataset(Xt, yt.astype(float), params={**PARAMS, "verbosity": -1, "seed": 0}).construct()
    pooled = lgb.Dataset(np.vstack([Xt, Xv]), np.concatenate([yt, yv]).astype(float), reference=root)
    b = lgb.train({**PARAMS, "verbosity": -1, "seed": 0, **r.chosen.params}, pooled, num_boost_round=ROUNDS)
    np.testing.assert_array_equal(b.predict(Xv), r.booster.predict(Xv))
    for budget in (1.5, 3.0):  # every budget's pick is refit and fits
        bst = r.booster_at(budget)
        pooled_cost = cost_report(TreeEnsemble.from_booster(bst), np.vstack([Xt, Xv]), FeatureCosts(COSTS))
        assert pooled_cost.total_cost.mean() <= budget + 1e-9


def test_one_se_rule_takes_the_cheapest_within_one_standard_error(data):
    r = run(data, 3.0, rule="1se")
    cands = [c for c in r.frontier if c.folds > 0]
    fits = [c for c in cands if c.cost <= 3.0 + 1e-9]
    best = max(fits, key=lambda c: c.score)
    within = [c for c in fits if c.score >= best.score - best.score_se]
    assert r.chosen.cost == min(c.cost for c in within)
    assert r.rule == "1se" and r.best_at(3.0) == r.chosen


def _cand(score, se, cost, folds=(), family="lazy", constant=False, k=None):
    return Candidate(family=family, params={"x": score}, k=k, tradeoff=None, score=score, cost=cost, coupled_cost=0.0,
                     constant=constant, folds=5, score_se=se, fold_scores=tuple(folds))


def test_pick_rules_on_known_candidates():
    cands = [_cand(0.80, 0.02, 5.0), _cand(0.79, 0.01, 2.0), _cand(0.75, 0.01, 1.0), _cand(0.9, 0.01, 9.0)]
    assert pick(cands, 6.0, "best") == 0
    assert pick(cands, 6.0, "1se") == 1  # 0.79 >= 0.80 - 0.02, and cheaper
    assert pick(cands, 0.5, "best") is None


def test_shortlist_holds_the_four_best_by_validation_score_each_orders_best_and_the_cheapest():
    """At a budget the fifth best candidate by validation score is not cross-validated; the top-k bests and the
    cheapest are, whatever their rank; a candidate over 10% of the budget is not."""
    lazies = [replace(_cand(s, None, 5.0), params={"cegb_tradeoff": s}, folds=0)
              for s in (0.90, 0.89, 0.88, 0.87, 0.86)]
    gain = replace(_cand(0.80, None, 4.0, family="topk_gain", k=2), folds=0)
    per_cost = replace(_cand(0.79, None, 3.0, family="topk_gain_cost", k=1), folds=0)
    const = replace(_cand(0.50, None, 0.0, constant=True), params={"cegb_tradeoff": 1e9}, folds=0)
    over = replace(_cand(0.95, None, 11.5), params={"cegb_tradeoff": 0.01}, folds=0)
    short = cv.shortlist([over, *lazies, gain, per_cost, const], [10.0])
    assert [c.score for c in short] == [0.80, 0.79, 0.90, 0.89, 0.88, 0.87, 0.50]
    assert lazies[4] not in short and over not in short


def test_noise_note_says_when_the_win_is_within_one_standard_error():
    topk = _cand(0.70, 0.01, 2.0, folds=[0.70, 0.72, 0.68, 0.71, 0.69], family="topk_gain", k=2)
    const = _cand(0.5, 0.0, 0.0, folds=[0.5] * 5, family="lazy", constant=True)
    close = _cand(0.701, 0.01, 3.0, folds=[0.69, 0.73, 0.67, 0.72, 0.695])
    clear = _cand(0.75, 0.01, 3.0, folds=[0.75, 0.77, 0.73, 0.76, 0.74])
    assert "best top-k subset (k=2" in cv.noise_note([topk, const, close], 2, 5.0, "roc_auc")
    assert cv.noise_note([topk, const, clear], 2, 5.0, "roc_auc") is None
    flat = _cand(0.52, 0.05, 3.0, folds=[0.40, 0.62, 0.45, 0.60, 0.53])
    assert "a constant model" in cv.noise_note([const, flat], 1, 5.0, "roc_auc")


def test_noise_warning_reaches_the_user(data, monkeypatch):
    monkeypatch.setattr(cv, "noise_note", lambda *a: "the chosen model's score is within noise")
    with pytest.warns(UserWarning, match="within noise"):
        train_to_budget(PARAMS, lgb.Dataset(data[0], data[1]), budget=3.0, valid_set=(data[2], data[3]), costs=COSTS,
                        num_boost_round=ROUNDS, progress=False, greedy=False)


def test_auto_chooses_on_validation_above_the_row_limit_and_valid_keeps_the_split(data, monkeypatch):
    r = run(data, 3.0, choose="valid")
    assert all(c.folds == 0 and not c.proxy for c in r.frontier) and "cross-validation" not in r.message
    monkeypatch.setattr(cv, "CV_ROWS", 500)
    a = run(data, 3.0)
    assert [(c.family, c.score, c.cost) for c in a.frontier] == [(c.family, c.score, c.cost) for c in r.frontier]
    assert (a.chosen.family, a.chosen.params, a.chosen.score) == (r.chosen.family, r.chosen.params, r.chosen.score)


@pytest.mark.parametrize(("n_train", "n_valid", "pooled"), [(15_000, 5_000, True), (15_000, 5_001, False)])
def test_auto_cross_validates_up_to_twenty_thousand_pooled_rows(n_train, n_valid, pooled):
    """Measured (docs/train_to_budget.md): cross-validation beats the validation choice up to 20,000 rows."""
    y = np.arange(n_train) % 2
    reason = cv.pool_problem(lgb.Dataset(np.zeros((n_train, 1)), y), np.zeros((n_train, 1)), "binary",
                             np.arange(n_valid) % 2, n_train)
    assert (reason is None) == pooled
    if not pooled:
        assert reason == "more than 20,000 training and validation rows"


def test_cv_falls_back_or_refuses_where_rows_cannot_be_pooled(data, tmp_path):
    Xt, yt, _, _ = data
    weighted = lgb.Dataset(Xt, yt, weight=np.linspace(0.5, 1.5, len(yt)))
    auto = run(data, 3.0, train=weighted)
    assert all(c.folds == 0 for c in auto.frontier)
    with pytest.raises(ValueError, match=r"'choose' argument 'cv' cannot cross-validate.*weight"):
        run(data, 3.0, train=lgb.Dataset(Xt, yt, weight=np.linspace(0.5, 1.5, len(yt))), choose="cv")
    lgb.Dataset(Xt, yt, params={**PARAMS, "verbosity": -1}).save_binary(tmp_path / "train.bin")
    with pytest.raises(ValueError, match="no raw rows"):  # a file holds bins, not rows
        run(data, 3.0, train=lgb.Dataset(str(tmp_path / "train.bin")), choose="cv")


@pytest.mark.parametrize(("kw", "match"), [
    ({"choose": "folds"}, r"'choose' argument of train_to_budget must be one of \('auto', 'cv', 'valid'\)"),
    ({"rule": "2se"}, r"'rule' argument of train_to_budget must be one of \('best', '1se'\)"),
    ({"choose": "cv", "search": "fast"}, "'choose' argument 'cv' needs search='full'"),
])
def test_choice_arguments_are_checked(data, kw, match):
    with pytest.raises(ValueError, match=match):
        run(data, 3.0, **kw)


def test_frame_reports_mean_and_standard_error(chosen_by_cv):
    df = chosen_by_cv.to_frame()
    row = df[df["chosen"]].iloc[0]
    assert row["folds"] == 15 and row["score_se"] == pytest.approx(chosen_by_cv.chosen.score_se)
    assert df.loc[df["folds"] == 0, "score_se"].isna().all()


def test_booster_at_an_unrefit_pick_says_which_budgets_are_refit(chosen_by_cv):
    r = chosen_by_cv
    refit = {id(c) for c, b in zip(r.frontier, r.boosters, strict=True) if c.folds > 0 and b is not None}
    for budget in np.linspace(0.5, 8.0, 31):
        c = r.best_at(budget)
        if c is not None and id(c) not in refit:
            with pytest.raises(ValueError, match="not refit"):
                r.booster_at(budget)
            return
    pytest.skip("every pick on this grid was refit")


# search="lean": proxies rank, a short shortlist is cross-validated at every round


@pytest.fixture(scope="module")
def lean_by_cv(data):
    return run(data, 3.0, budgets=[1.5], keep_boosters=True, search="lean", choose="cv")


def test_lean_chooses_by_cross_validation_among_its_proxies(data, lean_by_cv):
    """The lean search's choice is cross-validated (folds, score_se) and its proxies only rank."""
    r = lean_by_cv
    assert r.status == Status.SUCCESS and "5-fold cross-validation repeated 3 times over 600" in r.message
    assert r.chosen.folds == 15 and r.chosen.rows == 600 and math.isfinite(r.chosen.score_se)
    assert r.chosen == r.best_at(3.0)
    searched = [c for c in r.frontier if c.folds == 0]
    assert all(c.proxy for c in searched)
    assert any(c.rows == len(data[0]) and c.family != "all" for c in searched)  # the lean proxies are reported
    crossed = [c for c in r.frontier if c.folds > 0]
    assert 2 <= len(crossed) <= 2 * (3 + 1) + 1  # per budget at most `refits` + one top-k subset; the constant


def test_lean_fold_scores_are_full_rounds_at_the_users_learning_rate(data, lean_by_cv):
    """A shortlisted proxy (a quarter of the rounds, four times the learning rate) is cross-validated as configured."""
    for c in [x for x in lean_by_cv.frontier if x.folds > 0][:3]:
        scores, costs = _oracle_fold_fit(data, c.params)
        np.testing.assert_allclose(c.fold_scores, scores, rtol=0, atol=1e-12)
        assert c.cost >= costs.mean() - 1e-9


def test_lean_returns_the_pick_refit_on_the_pooled_rows_within_every_budget(data, lean_by_cv):
    """The returned model is the pick trained on every pooled row; each budget's pick costs within it there."""
    Xt, yt, Xv, yv = data
    r = lean_by_cv
    root = lgb.Dataset(Xt, yt.astype(float), params={**PARAMS, "verbosity": -1, "seed": 0}).construct()
    pooled = lgb.Dataset(np.vstack([Xt, Xv]), np.concatenate([yt, yv]).astype(float), reference=root)
    b = lgb.train({**PARAMS, "verbosity": -1, "seed": 0, **r.chosen.params}, pooled, num_boost_round=ROUNDS)
    np.testing.assert_array_equal(b.predict(Xv), r.booster.predict(Xv))
    for budget in (1.5, 3.0):
        bst = r.booster_at(budget)
        assert bst.current_iteration() <= ROUNDS
        pooled_cost = cost_report(TreeEnsemble.from_booster(bst), np.vstack([Xt, Xv]), FeatureCosts(COSTS))
        assert pooled_cost.total_cost.mean() <= budget + 1e-9


def test_lean_shortlist_size_is_its_option(data):
    """options={'shortlist': 1, 'refits': 1}: one configuration a budget, its best top-k subset, the constant."""
    r = run(data, 3.0, search="lean", choose="cv", options={"shortlist": 1, "refits": 1})
    crossed = [c for c in r.frontier if c.folds > 0]
    assert 1 <= len(crossed) <= 3
    assert r.chosen in crossed


def test_auto_cross_validates_the_lean_search_on_few_rows(data):
    """choose='auto' cross-validates the lean search's shortlist on a small table, as for the full search."""
    r = run(data, 3.0, search="lean")
    assert r.chosen.folds == 15 and "cross-validation" in r.message


def test_cross_validated_constancy_is_that_of_the_fold_models(data):
    """A configuration marked constant on its proxy but splitting on the folds is not constant once cross-validated."""
    from budget_extras.cegb._search import Clock, Search

    Xt, yt, Xv, yv = data
    params = {**PARAMS, "verbosity": -1, "seed": 0}
    root = lgb.Dataset(Xt, yt.astype(float), params=params, free_raw_data=False).construct()
    pool = cv.make_pool(root, Xt, Xv, yv, "binary", params)
    clock = Clock(3.0, len(yt), None, None, 1, False, None)
    s = Search(params, root, None, Xv, yv, FeatureCosts(COSTS), lambda b, X, y, **_: roc_auc_score(y, b.predict(X)),
               ROUNDS, clock)
    marked = Candidate(family="lazy", params={}, k=None, tradeoff=None, score=0.5, cost=0.0, coupled_cost=0.0,
                       constant=True)
    assert not cv.cross_validate(s, pool, [marked])[0].constant
    assert cv.cross_validate(s, pool, [replace(marked, params={"min_gain_to_split": 1e30}, constant=False)])[0].constant


def test_folds_are_constructed_once_for_every_configuration(data, monkeypatch):
    """Every cross-validated configuration trains on the same fold Datasets (binned once)."""
    from budget_extras.cegb._search import Search

    seen = []
    train = Search.train_booster

    def record(self, extra, data_, decay=None, transient=False):
        if transient and data_ is not self.train:  # a fold's fit (the search's own fits train on its rows)
            seen.append(id(data_))
        return train(self, extra, data_, decay, transient)

    monkeypatch.setattr(Search, "train_booster", record)
    r = run(data, 3.0)
    n_cv = len([c for c in r.frontier if c.folds > 0])
    assert n_cv >= 2 and len(seen) == 15 * n_cv
    assert len(set(seen)) == 15  # one Dataset per fold


def test_the_budget_returns_its_own_refit_pick_when_a_refit_makes_a_tied_twin_cheaper(data, monkeypatch):
    """A refit that costs more than its folds must not hand the budget to an equal, never-refit candidate.

    The shortlist holds a twin of each candidate (the same configuration under another ``k``:
    equal fold scores and costs); each refit costs 1% more than its folds (or than its pooled rows,
    if more). The pick is refit; by
    the final costs its unrefit twin is cheaper at the same score, and ``best_at``/``booster_at``
    must still return the refit pick (they raised "not refit" before).
    """
    shortlist, refit = cv.shortlist, cv.refit

    def with_twin(frontier, targets):
        cands = shortlist(frontier, targets)
        return [*cands, replace(cands[0], k=-1)] + [replace(c, k=-2 - i) for i, c in enumerate(cands[1:])]

    def dearer(s, pool, c):
        booster, cost = refit(s, pool, c)
        return booster, max(cost, c.cost) * 1.01 + 1e-9

    monkeypatch.setattr(cv, "shortlist", with_twin)
    monkeypatch.setattr(cv, "refit", dearer)
    r = run(data, 100.0, keep_boosters=True)
    c = r.best_at(100.0)
    assert c is r.chosen is r.frontier[r.picks[100.0]]
    assert r.booster_at(100.0) is r.booster
    twins = [x for x in r.frontier if not x.proxy and x is not c and x.params == c.params and x.score == c.score]
    assert twins and all(x.cost < c.cost for x in twins)  # a re-pick by the final costs would take the twin


def test_a_cegb_configuration_that_misses_the_budget_on_the_folds_is_retuned_within_it(data, monkeypatch):
    """A lazy-CEGB configuration tuned to the budget on the training rows but dearer on the folds is brought back.

    The shortlist holds the one-feature subset and a lazy configuration whose validation cost
    fits the budget but whose tradeoff is a step too low (as when the fold rows tip a purchase
    the training rows did not make): its held-out cost misses the budget. The choice must be a
    cheaper twin (a larger tradeoff) within the budget, which beats the one-feature subset, not
    the subset.
    """
    budget = 2.5
    picked = {}

    def doctored(frontier, targets):
        own = [c for c in frontier if not c.proxy and "num_leaves" not in c.params]
        one = next(c for c in own if c.family == "topk_gain" and c.k == 1)
        lazy = max((c for c in own if c.family == "lazy" and 1.2 < c.cost <= 2.0), key=lambda c: c.cost)
        t = lazy.tradeoff / cv.RETUNE_STEP
        picked["t"] = t
        return [one, replace(lazy, params={**lazy.params, "cegb_tradeoff": t}, tradeoff=t)]

    monkeypatch.setattr(cv, "shortlist", doctored)
    r = run(data, budget, keep_boosters=True)
    crossed = [c for c in r.frontier if c.folds > 0]
    low = next(c for c in crossed if c.tradeoff == picked["t"])
    one = next(c for c in crossed if c.family == "topk_gain")
    assert low.cost > budget and low.score > one.score  # the overshoot: better, but dearer on the folds
    assert r.status == Status.SUCCESS and r.chosen.family == "lazy" and r.chosen.tradeoff > picked["t"]
    assert r.chosen.cost <= budget and r.chosen.score > one.score
    pooled = np.vstack([data[0], data[2]])
    assert cost_report(TreeEnsemble.from_booster(r.booster), pooled, FeatureCosts(COSTS)).total_cost.mean() <= budget


def test_retune_trains_nothing_when_every_configuration_that_misses_scores_below_one_that_fits():
    """No twin is cross-validated when a candidate within the budget already scores above every CEGB one missing it."""
    fits = _cand(0.90, 0.01, 1.0, family="topk_gain", k=1)
    over = replace(_cand(0.85, 0.01, 3.0), params={"cegb_tradeoff": 0.1}, tradeoff=0.1)
    assert cv.retune(None, None, [fits, over], [1.0, 1.0], [2.0]) == [fits, over]  # no Search needed: nothing trains
