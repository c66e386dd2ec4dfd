"""train_to_budget(search="fast"): the fork's learner budget, a few candidates per budget.

Oracles: an independent cost_report of every returned model on the validation rows (the budget)
and of every capped candidate on the training rows (its cap); the candidate set is what the
docs say (a ranking proxy, then per budget two capped models, with the user's and with small
trees, and at most three subsets: top-k by gain with both tree sizes, packed by gain per cost).
"""

from __future__ import annotations

import warnings

import lightgbm as lgb
import numpy as np
import pytest

import budget_extras.cegb._fast as fast
import budget_extras.cegb._train_to_budget as ttb
from budget_extras import FeatureCosts, Status, TreeEnsemble, cost_report
from budget_extras.cegb import train_to_budget

pytestmark = pytest.mark.fork  # search="fast" trains with the fork's cegb_budget

PARAMS = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 10, "learning_rate": 0.2, "num_threads": 1}
COSTS = [1.0, 2.0, 1.0, 3.0, 1.0, 1.0]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1500, 6))
    y = (X[:, 0] + 0.6 * X[:, 1] * X[:, 2] + 0.4 * X[:, 3] + 0.5 * rng.normal(size=1500) > 0).astype(int)
    return X[:1000], y[:1000], X[1000:], y[1000:]


def run(data, budget, **kw):
    """The fast search choosing on the validation rows (``choose="valid"``: its candidates are the models)."""
    Xt, yt, Xv, yv = data
    kw.setdefault("num_boost_round", 30)
    kw.setdefault("choose", "valid")
    return train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=budget, valid_set=(Xv, yv), costs=COSTS,
                           progress=False, search="fast", keep_boosters=True, **kw)


def _cost(booster, X):
    return float(cost_report(TreeEnsemble.from_booster(booster), X, FeatureCosts(COSTS)).total_cost.mean())


@pytest.mark.parametrize("budget", [1.2, 1.6, 3.0])
def test_fits_the_budget_on_validation(data, budget):
    r = run(data, budget)
    assert r.status == Status.SUCCESS and not r.chosen.proxy
    assert _cost(r.booster, data[2]) <= budget + 1e-9
    assert r.cost == pytest.approx(_cost(r.booster, data[2]))
    assert r.booster.num_trees() == 30


def test_candidates_are_the_documented_ones(data):
    budgets = [1.0, 2.0]
    r = run(data, budgets[0], budgets=budgets[1:])
    proxies = [c for c in r.frontier if c.proxy]
    assert [c.family for c in proxies] == ["all"]  # the ranking model, never returned
    full = [c for c in r.frontier if not c.proxy]
    assert {c.family for c in full} <= {"budget", "topk_gain", "topk_gain_cost", "all"}
    assert sum(c.family == "all" for c in full) <= 1  # plain LightGBM once, where the short plain model fits
    capped = [c for c in full if c.family == "budget"]
    # PARAMS has 7 leaves: the small capped trees would have 1 (none); the small top-k trees have 7 // 4 = 1 (none)
    assert all("num_leaves" not in c.params for c in full)
    assert 2 <= len(capped) <= 4  # one per budget, plus a retry where one missed its budget
    assert r.nfev == len(r.frontier) <= 2 + 3 * len(budgets) + len(budgets)  # at most two subsets per budget
    for b in budgets:
        best = r.best_at(b)
        assert best is not None and best.cost <= b + 1e-9
        assert _cost(r.booster_at(b), data[2]) == pytest.approx(best.cost)


def test_capped_candidates_keep_their_cap_on_the_training_rows(data):
    r = run(data, 1.5)
    last = fast.decay_end(r.boosters[0])  # the ranking model's convergence sets the last tradeoff
    assert 0 < last < fast.FAST_DECAY[1]
    for c, b in zip(r.frontier, r.boosters, strict=True):
        if c.family != "budget":
            continue
        assert c.decay == (fast.FAST_DECAY[0], last) and c.tradeoff == 0.3 == fast.FAST_DECAY[0]
        assert c.params["cegb_tradeoff_scale"] == "first_gain"
        assert 0 < c.params["cegb_budget"] <= 1.5
        assert _cost(b, data[0]) <= c.params["cegb_budget"] * (1 + 1e-9)


def test_a_miss_on_validation_is_retrained_with_a_lower_cap(data, monkeypatch):
    # a cap ABOVE the budget: the capped model misses it on validation and is trained once more
    monkeypatch.setattr(fast, "cap_margin", lambda *a: -0.5)
    monkeypatch.setattr(fast, "FAST_DECAY", (1e-6, 1e-6))  # purchases nearly free: the cap is spent
    r = run(data, 1.5)
    capped = [c for c in r.frontier if c.family == "budget"]
    assert len(capped) == 2
    assert capped[0].params["cegb_budget"] == pytest.approx(2.0) and capped[0].cost > 1.5
    assert capped[1].params["cegb_budget"] < 2.0
    assert r.cost <= 1.5 + 1e-9


def test_a_budget_the_plain_model_fits_offers_the_plain_model(data):
    r = run(data, 50.0)  # above the plain model's cost (at most 9 per row)
    assert r.chosen.family == "all" or r.score >= next(c.score for c in r.frontier if c.family == "all" and not c.proxy)
    assert any(c.family == "all" and not c.proxy for c in r.frontier)


def test_zero_budget_is_a_constant_model(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run(data, 0.0)
    assert r.status == Status.CONSTANT and r.cost == 0.0


@pytest.mark.parametrize(("search", "exc"), [("bogus", ValueError), (None, TypeError)])
def test_bad_search_is_refused(data, search, exc):
    match = r"'search' argument of train_to_budget must be one of \('full', 'fast', 'lean'\) or a callable strategy"
    with pytest.raises(exc, match=match):
        train_to_budget(PARAMS, lgb.Dataset(data[0], data[1]), budget=1.0, valid_set=(data[2], data[3]),
                        costs=COSTS, search=search)


def test_fast_needs_the_fork(data, monkeypatch):
    monkeypatch.setattr(ttb, "is_fork", lambda: False)
    with pytest.raises(ValueError, match="'search' argument 'fast' needs the lightgbm-cegb fork"):
        run(data, 1.0)


def test_proxies_rank_and_only_the_best_is_trained_on_every_row(data):
    budgets = [1.0, 2.0]
    r = run(data, budgets[0], budgets=budgets[1:], proxy_rows=400)
    proxies = [c for c in r.frontier if c.proxy]
    assert proxies[0].family == "all" and all(c.rows == 400 for c in proxies)
    assert {c.family for c in proxies[1:]} <= {"budget", "topk_gain", "topk_gain_cost", "all"}
    full = [c for c in r.frontier if not c.proxy]
    assert 1 <= len(full) <= 2 * len(budgets)  # one per budget, plus a retry where one missed
    for b in budgets:
        assert r.best_at(b) is not None and r.best_at(b).cost <= b + 1e-9
    assert not r.chosen.proxy and r.chosen.rows == 1000


def test_options_of_the_full_search_warn_that_fast_ignores_them(data):
    with pytest.warns(UserWarning, match="does not use 'k_grid', 'greedy', 'num_leaves_grid'"):
        run(data, 1.6, k_grid=[1, 2], greedy=False, num_leaves_grid=None)
    with pytest.warns(UserWarning, match="does not use 'n_tradeoffs', 'n_bisect'"):
        run(data, 1.6, n_tradeoffs=2, n_bisect=0)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*does not use")  # the defaults, given or not, are silent
        run(data, 1.6, n_tradeoffs=6, n_bisect=3, greedy=True, num_leaves_grid="auto", k_grid=None)


@pytest.mark.parametrize("limit", [{"max_fits": 1}, {"time_limit": 1e-9}])
def test_a_search_cut_before_a_full_model_returns_no_ranking_model(data, limit):
    """The ranking model (40 rounds, scored on a validation sample) only ranks: never returned."""
    with pytest.raises(ValueError, match=r"cut before its first model trained on every row .*'max_fits' or"):
        run(data, 1.5, num_boost_round=60, **limit)


def test_a_cut_search_returns_a_full_model_scored_on_every_validation_row(data):
    from sklearn.metrics import roc_auc_score

    with pytest.warns(UserWarning, match="search cut"):
        r = run(data, 1.5, num_boost_round=60, max_fits=2)
    assert r.status == Status.LIMIT and not r.chosen.proxy and r.booster.num_trees() == 60
    assert r.score == roc_auc_score(data[3], r.booster.predict(data[2]))
    assert "subsample" not in r.message


def test_proxies_that_fit_no_budget_still_return_a_full_model(data):
    costs = FeatureCosts(COSTS, tree=1.0)  # every model pays >= 1 per row
    with pytest.warns(UserWarning, match="infeasible"):
        r = train_to_budget(PARAMS, lgb.Dataset(data[0], data[1]), budget=0.5, valid_set=(data[2], data[3]),
                            costs=costs, progress=False, search="fast", proxy_rows=400, num_boost_round=30)
    assert r.status == Status.INFEASIBLE and not r.chosen.proxy and r.chosen.rows == 1000
    assert r.cost == min(c.cost for c in r.frontier if not c.proxy)


def test_init_score_offsets_the_validation_scores(data):
    from sklearn.metrics import roc_auc_score

    Xt, yt, Xv, yv = data
    rng = np.random.default_rng(2)
    off_t, off_v = 2 * rng.normal(size=len(Xt)), 2 * rng.normal(size=len(Xv))
    r = train_to_budget(PARAMS, lgb.Dataset(Xt, yt, init_score=off_t), budget=1.6,
                        valid_set=lgb.Dataset(Xv, yv, init_score=off_v), costs=COSTS, progress=False, search="fast",
                        num_boost_round=30, keep_boosters=True)
    for c, b in zip(r.frontier, r.boosters, strict=True):  # AUC of the offset raw scores: the offset reorders rows
        assert c.score == pytest.approx(roc_auc_score(yv, b.predict(Xv, raw_score=True) + off_v), rel=1e-12)
    assert r.score == pytest.approx(roc_auc_score(yv, r.booster.predict(Xv, raw_score=True) + off_v), rel=1e-12)
    with pytest.raises(ValueError, match="'valid_set' argument has no init_score"):
        train_to_budget(
            PARAMS, lgb.Dataset(Xt, yt, init_score=off_t), budget=1.6, valid_set=(Xv, yv), costs=COSTS,
            progress=False, search="fast")


def _gems(n, seed=0):
    """Diamond-like prices: a cheap size proxy explains most of the variance, dear grades the rest.

    ``size`` (cost 1) is a near-exact proxy of ``carat`` (cost 5); the grades (cost 5-10) multiply
    the price. After the first trees fit the size, the grades' gains are a thousandth of the first
    tree's, yet they halve the remaining error.
    """
    rng = np.random.default_rng(seed)
    carat = np.exp(rng.normal(-0.5, 0.55, n))
    cut, color, clarity = rng.integers(0, 5, n), rng.integers(0, 7, n), rng.integers(0, 8, n)
    depth = rng.normal(61.7, 1.4, n)
    size = 6.4 * carat ** (1 / 3) * np.exp(rng.normal(0, 0.01, n))
    price = np.exp(8.4 + 1.7 * np.log(carat) + 0.09 * clarity - 0.07 * color + 0.03 * cut + 0.08 * rng.normal(size=n))
    X = np.column_stack([carat, cut, color, clarity, depth, size, size * depth / 100])
    return X, price, [5.0, 10.0, 10.0, 5.0, 1.0, 1.0, 5.0]


@pytest.mark.fork
def test_regression_spends_a_budget_worth_spending():
    """On an L2 target whose later gains are tiny, the fast search spends the budget as the default does.

    With the last tradeoff fixed in units of the first tree's gain, the capped model stopped at
    three quarters of the budget and its RMSE was 13% above the default search's.
    """
    X, y, costs = _gems(4500)
    params = {"objective": "regression", "num_leaves": 15, "learning_rate": 0.1, "num_threads": 1}
    budget = 14.0  # the plain model costs about 36 per row
    out = {}
    for search in ("full", "fast"):
        r = train_to_budget(params, lgb.Dataset(X[:3000], y[:3000]), budget=budget, valid_set=(X[3000:], y[3000:]),
                            costs=costs, num_boost_round=50, progress=False, search=search,
                            choose="valid")  # both choose on the validation rows (the fast search has no CV)
        assert r.status == Status.SUCCESS and r.cost <= budget + 1e-9
        rmse = float(np.sqrt(np.mean((r.booster.predict(X[3000:]) - y[3000:]) ** 2)))
        out[search] = (r.cost, rmse)
    assert out["full"][0] >= 0.9 * budget  # the default search shows the budget is worth spending
    assert out["fast"][0] >= 0.9 * budget
    assert out["fast"][1] <= 1.1 * out["full"][1]


def test_last_tradeoff_follows_convergence_and_not_the_targets_scale():
    X, y, _ = _gems(1500)
    params = {"objective": "regression", "num_leaves": 15, "verbose": -1, "num_threads": 1}
    ends = [fast.decay_end(lgb.train(params, lgb.Dataset(X, y * s), 40)) for s in (1.0, 1e-3)]
    assert ends[0] == pytest.approx(ends[1], rel=1e-6)
    assert fast.FAST_DECAY[1] * fast.MIN_CONVERGENCE <= ends[0] < fast.FAST_DECAY[1] / 100  # L2 gains fall far
    one_tree = lgb.train(params, lgb.Dataset(X, y), 1)
    assert fast.decay_end(one_tree) == fast.FAST_DECAY[1]  # nothing to compare: the fixed end


@pytest.mark.parametrize(("params", "expected"), [
    ({}, (4, 7)),  # LightGBM's default 31 leaves
    ({"num_leaves": 63}, (8, 15)),
    ({"num_leaf": 15}, (2, 3)),  # an alias
    ({"num_leaves": 7}, (None, None)),  # a quarter is a single leaf: no small trees
    ({"num_leaves": "many"}, (None, None)),
])
def test_small_trees_are_a_quarter_of_the_leaves_and_half_of_that_for_the_capped_model(params, expected):
    assert fast.small_leaves(params) == expected


def _additive(n, seed=0):
    """Six main effects and no interaction: trees of a few leaves fit it, 31 leaves fit the noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = (X @ np.array([1.0, 0.8, 0.6, 0.5, 0.4, 0.3]) + rng.normal(size=n) > 0).astype(int)
    return X, y


def test_small_trees_are_trained_at_every_budget_and_win_where_the_target_is_additive():
    X, y = _additive(1500)
    params = {**PARAMS, "num_leaves": 31, "min_data_in_leaf": 5}
    budgets, costs = [3.0, 5.0], FeatureCosts([1.0] * 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = train_to_budget(params, lgb.Dataset(X[:700], y[:700]), budget=budgets[0], valid_set=(X[700:], y[700:]),
                            costs=costs, progress=False, search="fast", num_boost_round=60, budgets=budgets[1:],
                            keep_boosters=True, choose="valid")
    full = [(c, b) for c, b in zip(r.frontier, r.boosters, strict=True) if not c.proxy]
    small = [(c, b) for c, b in full if c.family == "budget" and c.params.get("num_leaves") == 4]
    assert len(small) >= len(budgets)  # one per budget (plus a retry where one missed)
    for c, b in small:  # small trees keep the cap too
        spent = float(cost_report(TreeEnsemble.from_booster(b), X[:700], costs).total_cost.mean())
        assert spent <= c.params["cegb_budget"] * (1 + 1e-9)
    assert sum(c.family == "topk_gain" and c.params.get("num_leaves") == 7 for c, _ in full) == len(budgets)
    big = max(c.score for c, _ in full if "num_leaves" not in c.params and c.cost <= budgets[0] + 1e-9)
    assert r.chosen.params.get("num_leaves") == 4 and r.score > big + 0.02  # small trees win on validation


def test_features_packed_by_gain_per_cost_buy_what_the_gain_order_cannot_afford():
    """The strongest feature costs 10: no top-k-by-gain prefix fits a budget of 2.5; the two cheap ones do."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1500, 4))
    y = (2.0 * X[:, 0] + X[:, 1] + X[:, 2] + 0.5 * rng.normal(size=1500) > 0).astype(int)
    costs = [10.0, 1.0, 1.0, 1.0]
    r = train_to_budget(PARAMS, lgb.Dataset(X[:1000], y[:1000]), budget=2.5, valid_set=(X[1000:], y[1000:]),
                        costs=costs, progress=False, search="fast", num_boost_round=30)
    packed = [c for c in r.frontier if c.family == "topk_gain_cost"]
    assert [c.params["interaction_constraints"] for c in packed] == [[[1, 2]]]
    assert packed[0].cost <= 2.5 and not [c for c in r.frontier if c.family == "topk_gain"]


def _rows_trained_on(booster):
    """Rows the booster's first split tree was trained on: its root's data count (no bagging)."""
    trees = booster.dump_model()["tree_info"]
    root = next(t["tree_structure"] for t in trees if "split_index" in t["tree_structure"])
    return root["internal_count"]


def test_auto_refits_each_budgets_validation_pick_on_the_pooled_rows(data):
    """choose="auto" on a small table: the validation pick of every budget, refit on training + validation rows."""
    budgets = [1.2, 2.0]
    Xt, yt, Xv, yv = data
    rv = run(data, budgets[0], budgets=budgets[1:])
    r = run(data, budgets[0], budgets=budgets[1:], choose="auto")
    assert r.status == Status.SUCCESS and "refit on the 1,500 training and validation rows" in r.message
    assert _rows_trained_on(rv.booster) == len(yt) and _rows_trained_on(r.booster) == len(yt) + len(yv)
    own = [c for c in r.frontier if c.proxy]
    assert len(own) == len(rv.frontier)  # the search's own candidates rank: marked proxy
    refits = [c for c in r.frontier if not c.proxy]
    assert r.nfev == rv.nfev + len(refits) and 1 <= len(refits) <= len(budgets)
    X_pool = np.vstack([Xt, Xv])
    for b in budgets:
        c, picked = r.best_at(b), rv.best_at(b)
        assert c.params == picked.params and c.score == picked.score  # the pick on the validation rows
        assert c.rows == len(yt) + len(yv) and c.cost >= picked.cost
        booster = r.booster_at(b)
        assert _rows_trained_on(booster) == len(yt) + len(yv)
        pooled = _cost(booster, X_pool)
        assert pooled <= b + 1e-9 and c.cost == pytest.approx(max(picked.cost, pooled))
        if "cegb_budget" in c.params:  # the cap binds on the pooled rows, margin kept
            assert pooled <= c.params["cegb_budget"] * (1 + 1e-9) < b


def test_auto_refit_is_lightgbm_trained_on_the_pooled_rows_with_the_picks_parameters(data):
    """Each budget's model: lightgbm.train on the pooled rows (binned as the training rows), the pick's parameters."""
    Xt, yt, Xv, yv = data
    budgets = [1.2, 3.0]
    r = run(data, budgets[0], budgets=budgets[1:], choose="auto")
    X = np.vstack([Xt, Xv])
    for b in budgets:
        c = r.best_at(b)
        params = {**r.params, **c.params}
        pooled = lgb.Dataset(X, np.concatenate([yt, yv]), reference=lgb.Dataset(Xt, yt, params=params).construct())
        first, last = c.decay or (None, None)
        callbacks = [] if c.decay is None else [
            lgb.reset_parameter(cegb_tradeoff=lambda i, f=first, v=last: f * (v / f) ** (i / 29))]
        direct = lgb.train(params, pooled, num_boost_round=30, callbacks=callbacks)
        np.testing.assert_allclose(r.booster_at(b).predict(X), direct.predict(X), rtol=1e-12)


def test_auto_keeps_the_training_rows_model_where_every_refit_misses(data, monkeypatch):
    import budget_extras.cegb._cv as cv

    real = cv.refit
    monkeypatch.setattr(cv, "refit", lambda s, pool, c: (real(s, pool, c)[0], 99.0))  # every refit costs too much
    r = run(data, 1.6, choose="auto")
    rv = run(data, 1.6)
    assert r.status == Status.SUCCESS and "miss the budget" in r.message
    assert r.chosen.params == rv.chosen.params and r.cost == rv.cost <= 1.6
    assert _rows_trained_on(r.booster) == len(data[1])  # the pick trained on the training rows
    fitting = sum(not c.proxy and c.cost <= 1.6 for c in rv.frontier)
    assert r.nfev == rv.nfev + min(fast.POOL_TRIES, fitting) >= rv.nfev + 2  # the pick and the next were refit
