"""train_to_budget: budget respected on validation, monotone, dominates top-k, errors, upstream path."""

from __future__ import annotations

import itertools
import warnings

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

import budget_extras.cegb._train_to_budget as ttb
from budget_extras import FeatureCosts, Status, TreeEnsemble, cost_report
from budget_extras.cegb import BudgetTrainResult, train_to_budget

PARAMS = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 10, "learning_rate": 0.2, "num_threads": 1}
COSTS = [1.0, 2.0, 1.0, 3.0, 1.0, 1.0]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6))
    y = (X[:, 0] + 0.6 * X[:, 1] + 0.4 * X[:, 3] + 0.5 * rng.normal(size=600) > 0).astype(int)
    return X[:400], y[:400], X[400:], y[400:]


def run(data, budget, **kw):
    Xt, yt, Xv, yv = data
    kw.setdefault("costs", COSTS)
    kw.setdefault("num_boost_round", 15)
    kw.setdefault("greedy", False)  # the greedy family has its own tests below (it costs ~20 proxy fits)
    kw.setdefault("choose", "valid")  # the candidates and their validation choice (CV: test_train_to_budget_cv)
    return train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=budget, valid_set=(Xv, yv), progress=False, **kw)


@pytest.mark.parametrize("budget", [1.5, 3.0, 5.0])
def test_budget_respected_on_validation(data, budget):
    r = run(data, budget)
    assert isinstance(r, BudgetTrainResult) and r.status == 0 and r.success
    # oracle: an independent cost_report of the returned booster
    cost = cost_report(TreeEnsemble.from_booster(r.booster), data[2], FeatureCosts(COSTS)).total_cost.mean()
    assert cost <= budget + 1e-9
    assert cost == pytest.approx(r.cost)
    assert r.booster.num_trees() == 15
    assert r.best_at(budget) is not None and r.score == pytest.approx(r.best_at(budget).score)


def test_monotone_in_budget_same_candidates(data):
    # no bisection and a fixed k grid: the candidate set does not depend on the budget
    budgets = [1.0, 2.0, 3.0, 4.5, 8.0]
    scores = [run(data, B, n_bisect=0, k_grid=[1, 2, 3], num_leaves_grid=None).score for B in budgets]
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(scores)), scores


def test_dominates_topk_at_same_budget(data):
    Xt, yt, Xv, yv = data
    b0 = lgb.train({**PARAMS, "verbosity": -1, "seed": 0}, lgb.Dataset(Xt, yt), num_boost_round=15)
    top2 = sorted(np.argsort(-b0.feature_importance("gain"))[:2].tolist())
    p2 = {**PARAMS, "verbosity": -1, "seed": 0, "interaction_constraints": [top2]}
    bk = lgb.train(p2, lgb.Dataset(Xt, yt), num_boost_round=15)
    from sklearn.metrics import roc_auc_score

    cost_k = cost_report(TreeEnsemble.from_booster(bk), Xv, FeatureCosts(COSTS)).total_cost.mean()
    assert set(np.flatnonzero(bk.feature_importance("split"))) <= set(top2)  # the restriction works
    r = run(data, cost_k)
    assert r.score >= roc_auc_score(yv, bk.predict(Xv)) - 1e-12


@pytest.mark.slow  # more than 20 s on 2 cores
def test_costs_forms_agree(data):
    names = [f"f{i}" for i in range(6)]
    Xt, yt, Xv, yv = data
    dft, dfv = pd.DataFrame(Xt, columns=names), pd.DataFrame(Xv, columns=names)
    out = []
    forms = (
        COSTS,
        dict(zip(names, COSTS, strict=True)),
        pd.Series(COSTS, index=names),
        FeatureCosts(COSTS, feature_names=names),
    )
    for c in forms:
        b = train_to_budget(
            PARAMS,
            lgb.Dataset(dft, yt),
            budget=3.0,
            valid_set=(dfv, yv),
            costs=c,
            num_boost_round=10,
            progress=False,
            n_bisect=0,
            choose="valid",
        )
        out.append((b.score, b.cost))
    assert len(set(out)) == 1, out


def test_constant_model_warns(data):
    with pytest.warns(UserWarning, match="constant model"):
        b = run(data, 0.5)
    assert b.status == Status.CONSTANT and b.chosen.constant and not b.success
    assert b.cost == 0.0


def test_infeasible_returns_cheapest_with_warning(data):
    costs = FeatureCosts(COSTS, tree=1.0)  # every model evaluates >= 1 tree: pays >= 1 per row
    with pytest.warns(UserWarning, match="infeasible"):
        b = run(data, 0.5, costs=costs)
    r = b
    assert r.status == 2 and not r.success
    assert r.cost == min(c.cost for c in r.frontier)
    assert f"{r.cost:.6g}" in r.message


def test_scoring_names_and_callables(data):
    r1 = run(data, 3.0, scoring="roc_auc", n_bisect=0)
    r0 = run(data, 3.0, n_bisect=0)
    assert r1.score == pytest.approx(r0.score)
    r2 = run(data, 3.0, scoring="neg_log_loss", n_bisect=0)
    assert r2.score < 0 and r2.scoring == "neg_log_loss"


def test_a_scorer_that_returns_nan_is_refused(data):
    """NaN compares false with every score: the choice among candidates would be arbitrary."""
    def nan_for_constant(est, X, y):
        return float("nan") if np.ptp(est.predict(X)) == 0 else 0.5

    for scorer in (lambda est, X, y: float("nan"), nan_for_constant):
        with pytest.raises(ValueError, match=r"'scoring' argument .* must return a number\. Got NaN"):
            run(data, 1.5, scoring=scorer, n_bisect=0)


def test_upstream_knobs_only(data, monkeypatch):
    monkeypatch.setattr(ttb, "is_fork", lambda: False)
    seen = []
    real = lgb.train

    def spy(params, *a, **k):
        seen.append(dict(params))
        return real(params, *a, **k)

    monkeypatch.setattr(ttb.lgb, "train", spy)
    costs = FeatureCosts(COSTS, groups=[0, 0, -1, -1, -1, -1])
    b = run(data, 3.0, costs=costs)
    assert not b.fork
    assert all("cegb_feature_group" not in p for p in seen)
    assert any("cegb_penalty_feature_lazy" in p for p in seen)


def test_fork_trains_with_groups(data, monkeypatch):
    if not ttb.is_fork():
        pytest.skip("needs the lightgbm-cegb fork")
    seen = []
    real = lgb.train
    monkeypatch.setattr(ttb.lgb, "train", lambda p, *a, **k: (seen.append(dict(p)), real(p, *a, **k))[1])
    run(data, 3.0, costs=FeatureCosts(COSTS, groups=[0, 0, -1, -1, -1, -1]), n_bisect=0)
    assert any(p.get("cegb_feature_group") == [0, 0, -1, -1, -1, -1] for p in seen)


@pytest.mark.parametrize(
    "change, exc, match",
    [
        ({"budget": -1.0}, ValueError, "'budget'.*>= 0.*-1.0"),
        ({"budget": float("nan")}, ValueError, "'budget'"),
        ({"costs": [1.0, 2.0]}, ValueError, "'costs'.*one cost per feature \\(6\\). Got shape \\(2,\\)"),
        ({"costs": "x"}, ValueError, "'costs'.*path of a costs CSV. Got 'x', which is not a file"),
        ({"costs": object()}, TypeError, "'costs'.*Got object"),
        ({"valid_set": [1, 2, 3]}, TypeError, "'valid_set'.*Got list"),
        ({"num_boost_round": 0}, ValueError, "'num_boost_round'"),
        ({"scoring": "no_such_scorer"}, ValueError, "'scoring' parameter of train_to_budget.*Got 'no_such_scorer'"),
        ({"scoring": 3}, TypeError, "'scoring' parameter of train_to_budget.*Got 3 \\(type int\\)"),
        ({"params": {"objective": "binary", "cegb_tradeoff": 1.0}}, ValueError, "'params'.*cegb_tradeoff"),
        ({"params": {"objective": "binary", "cegb_penalty_split": 1e3}}, ValueError, "'params'.*cegb_penalty_split"),
        ({"params": {"objective": "binary", "interaction_constraints": [[0]]}}, ValueError, "'params'.*interaction"),
        ({"valid_set": (np.zeros((4, 6)), np.ones(4))}, ValueError, "'valid_set'.*two classes.*label 1"),
        ({"valid_set": (np.zeros((4, 6)), np.array([0, 1, np.nan, 1]))}, ValueError, "'valid_set'.*finite"),
        ({"valid_set": lgb.Dataset("valid.csv")}, ValueError, "'valid_set'.*raw rows.*valid.csv"),
        ({"valid_set": (np.zeros((4, 5)), np.array([0, 1, 0, 1]))}, ValueError, "'valid_set'.*6 columns.*Got 5"),
        ({"n_jobs": 0}, ValueError, "'n_jobs'.*>= 1"),
        ({"max_fits": 0}, ValueError, "'max_fits'.*>= 1 or None"),
        ({"time_limit": -1}, ValueError, "'time_limit'.*positive number or None"),
        ({"proxy_rows": 5}, ValueError, "'proxy_rows'.*>= 100"),
        ({"train_set": "train.csv"}, TypeError, "'train_set'.*Got str"),
    ],
)
def test_errors_name_the_argument(data, change, exc, match):
    Xt, yt, Xv, yv = data
    kw = dict(
        params=PARAMS,
        train_set=lgb.Dataset(Xt, yt),
        budget=2.0,
        valid_set=(Xv, yv),
        costs=COSTS,
        num_boost_round=5,
        progress=False,
    )
    kw.update(change)
    params, train_set = kw.pop("params"), kw.pop("train_set")
    with pytest.raises(exc, match=match):
        train_to_budget(params, train_set, **kw)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_training_labels_are_refused_with_their_count(data, bad):
    Xt, yt, Xv, yv = data
    y = yt.astype(float)
    y[::10] = bad  # 40 of 400
    kind = "NaN and 0 infinite" if np.isnan(bad) else "NaN and 40 infinite"
    with pytest.raises(ValueError, match=rf"'train_set' argument of train_to_budget must hold finite labels\. "
                                         rf"Got {0 if np.isinf(bad) else 40} {kind} of 400 labels"):
        train_to_budget(PARAMS, lgb.Dataset(Xt, y), budget=3.0, valid_set=(Xv, yv), costs=COSTS, progress=False)


def _offset_data(data):
    """Regression rows whose targets carry an offset of about 100 that the init_score holds."""
    Xt, _, Xv, _ = data
    rng = np.random.default_rng(1)
    off_t, off_v = 100 + 5 * rng.normal(size=len(Xt)), 100 + 5 * rng.normal(size=len(Xv))
    yt = off_t + Xt[:, 0] + 0.5 * Xt[:, 1] + 0.1 * rng.normal(size=len(Xt))
    yv = off_v + Xv[:, 0] + 0.5 * Xv[:, 1] + 0.1 * rng.normal(size=len(Xv))
    return Xt, yt, off_t, Xv, yv, off_v


def test_init_score_offsets_every_validation_score(data):
    """As lgb.train(valid_sets=...) does: the validation init_score is added to the raw scores."""
    Xt, yt, off_t, Xv, yv, off_v = _offset_data(data)
    params = {"objective": "regression", "num_leaves": 7, "num_threads": 1}
    r = train_to_budget(params, lgb.Dataset(Xt, yt, init_score=off_t), budget=2.0,
                        valid_set=lgb.Dataset(Xv, yv, init_score=off_v), costs=COSTS, num_boost_round=10,
                        progress=False, greedy=False, n_bisect=0, proxy_rows=150, keep_boosters=True)
    assert r.score == pytest.approx(-np.mean((yv - off_v - r.booster.predict(Xv)) ** 2), rel=1e-12)
    assert r.score > -1.0  # the model's own score, not the offset's (about -1e4)
    sample = ttb._rows(len(yv), 150, 0)  # proxies are scored on as many validation rows as they train on
    for c, b in zip(r.frontier, r.boosters, strict=True):
        rows = sample if c.proxy else np.arange(len(yv))
        real = -np.mean((yv[rows] - off_v[rows] - b.predict(Xv[rows])) ** 2)
        assert c.score == pytest.approx(real, rel=1e-12)


def test_a_training_init_score_needs_one_on_the_validation_rows(data):
    Xt, yt, off_t, Xv, yv, _ = _offset_data(data)
    with pytest.raises(ValueError, match="'valid_set' argument has no init_score but the training set has one"):
        train_to_budget({"objective": "regression"}, lgb.Dataset(Xt, yt, init_score=off_t), budget=2.0,
                        valid_set=(Xv, yv), costs=COSTS, num_boost_round=3, progress=False)
    with pytest.raises(ValueError, match=r"'valid_set' argument's init_score must have one entry per row \(200\)"
                                         r".*Got shape \(150,\)"):
        train_to_budget({"objective": "regression"}, lgb.Dataset(Xt, yt, init_score=off_t), budget=2.0,
                        valid_set=lgb.Dataset(Xv, yv, init_score=off_t[:150]), costs=COSTS, num_boost_round=3,
                        progress=False)
    with pytest.raises(ValueError, match=r"'valid_set' argument's init_score must have one entry per row"):
        train_to_budget({"objective": "regression"}, lgb.Dataset(Xt, yt), budget=2.0, costs=COSTS,
                        valid_set=lgb.Dataset(Xv, yv, init_score=np.float64(100.0)), progress=False)


def test_does_not_modify_inputs(data):
    p = dict(PARAMS)
    c = list(COSTS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(data, 2.0, costs=c)
    assert p == PARAMS and c == COSTS


# ---------------------------------------------------------------- greedy family, budgets=, kept boosters
@pytest.fixture(scope="module")
def multi(data):
    """One search refined at several budgets, every booster kept."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run(data, 5.0, budgets=[0.5, 1.5, 3.0], keep_boosters=True, k_grid=[5], greedy=True)


def test_greedy_candidates_use_their_subset_only(multi):
    greedy = [(c, b) for c, b in zip(multi.frontier, multi.boosters, strict=True) if c.family == "greedy"]
    assert greedy, [c.family for c in multi.frontier]
    for c, b in greedy:
        sub = c.params["interaction_constraints"][0]
        assert len(sub) == c.k
        assert set(np.flatnonzero(b.feature_importance("split"))) <= set(sub)
    # prefixes: each greedy subset extends the previous one
    subs = [set(c.params["interaction_constraints"][0]) for c, _ in greedy if "num_leaves" not in c.params]
    assert all(a < b for a, b in itertools.pairwise(subs))


def test_budgets_path_respects_each_budget_on_validation(data, multi):
    Xv = data[2]
    for B in (0.5, 1.5, 3.0, 5.0):
        c, b = multi.best_at(B), multi.booster_at(B)
        assert c is not None and c.cost <= B + 1e-9
        cost = cost_report(TreeEnsemble.from_booster(b), Xv, FeatureCosts(COSTS)).total_cost.mean()
        assert cost == pytest.approx(c.cost)


def test_best_at_monotone_in_budget_for_a_fixed_candidate_set(multi):
    grid = np.linspace(0.0, 8.0, 33)
    scores = [multi.best_at(B).score if multi.best_at(B) is not None else -np.inf for B in grid]
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(scores)), scores


def test_lazy_inside_a_subset_uses_that_subset(multi):
    fams = {c.family for c in multi.frontier}
    assert {"lazy_topk", "lazy_greedy"} & fams, fams
    for c, b in zip(multi.frontier, multi.boosters, strict=True):
        if c.family in ("lazy_topk", "lazy_greedy"):
            assert c.tradeoff is not None and "cegb_penalty_feature_lazy" in c.params
            assert set(np.flatnonzero(b.feature_importance("split"))) <= set(c.params["interaction_constraints"][0])


def test_greedy_off_and_boosters_not_kept(data):
    r = run(data, 3.0, n_bisect=0)
    assert "greedy" not in {c.family for c in r.frontier} and r.boosters == []
    with pytest.raises(ValueError, match="keep_boosters=True"):
        r.booster_at(3.0)


def test_upstream_fallback_keeps_greedy(data, monkeypatch):
    monkeypatch.setattr(ttb, "is_fork", lambda: False)
    r = run(data, 3.0, n_bisect=0, k_grid=[5], greedy=True)
    assert not r.fork and "greedy" in {c.family for c in r.frontier}
    assert r.cost <= 3.0 + 1e-9


@pytest.mark.parametrize("bad", [[-1.0], [float("inf")], ["x"], 3.0])
def test_budgets_errors(data, bad):
    with pytest.raises(ValueError, match="'budgets'"):
        run(data, 3.0, budgets=bad)


@pytest.mark.parametrize(("arg", "text"), [("budgets", "13"), ("budgets", b"13"), ("num_leaves_grid", b"13"),
                                           ("k_grid", "13"), ("k_grid", b"13")])
def test_a_string_is_not_a_sequence_argument(data, arg, text):
    """A string would be read character by character ('13': the budgets 1 and 3)."""
    with pytest.raises((ValueError, TypeError), match=f"'{arg}'"):
        run(data, 3.0, **{arg: text})


# ---------------------------------------------------------------- smaller-trees refits
def test_smaller_trees_refit_the_best_candidate_at_each_budget(data, multi):
    refits = [(c, b) for c, b in zip(multi.frontier, multi.boosters, strict=True) if "num_leaves" in c.params]
    # PARAMS has num_leaves=7: "auto" gives 7 // 2 = 3 (7 // 4 = 1 is dropped); one refit per budget at most
    assert refits and all(c.params["num_leaves"] == 3 for c, _ in refits)
    assert len(refits) <= 4
    for c, b in refits:
        leaves = [t["num_leaves"] for t in b.dump_model()["tree_info"]]
        assert max(leaves) <= 3
        # the refit keeps its origin's family and knobs: some candidate has the same params without the size
        origin = {k: v for k, v in c.params.items() if k != "num_leaves"}
        assert any(o.params == origin and o.family == c.family for o in multi.frontier if o is not c)


def test_num_leaves_grid_under_an_alias_and_off(data):
    Xt, yt, Xv, yv = data
    params = {k: v for k, v in PARAMS.items() if k != "num_leaves"} | {"num_leaf": 12}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # LightGBM warns when an alias and the main name disagree
        r = train_to_budget(
            params,
            lgb.Dataset(Xt, yt),
            budget=3.0,
            valid_set=(Xv, yv),
            costs=COSTS,
            num_boost_round=10,
            progress=False,
            greedy=False,
            n_bisect=0,
            keep_boosters=True,
            choose="valid",
        )
    sizes = {c.params.get("num_leaves") for c in r.frontier} - {None}
    assert sizes == {6, 3}
    for c, b in zip(r.frontier, r.boosters, strict=True):
        cap = c.params.get("num_leaves", 12)
        assert max(t["num_leaves"] for t in b.dump_model()["tree_info"]) <= cap
    off = run(data, 3.0, n_bisect=0, num_leaves_grid=None)
    assert all("num_leaves" not in c.params for c in off.frontier)
    grid = run(data, 3.0, n_bisect=0, num_leaves_grid=[4, 2])
    assert {c.params.get("num_leaves") for c in grid.frontier} - {None} == {4, 2}


@pytest.mark.parametrize("bad", ["small", [1], [2.5], 5, [True]])
def test_num_leaves_grid_errors(data, bad):
    with pytest.raises(ValueError, match="'num_leaves_grid'"):
        run(data, 3.0, num_leaves_grid=bad)


# ---------------------------------------------------------------- result shape, limits, proxies, parallel fits
def test_result_carries_the_booster_and_survives_copies(data):
    import copy
    import pickle

    r = run(data, 3.0, n_bisect=0)
    assert isinstance(r.booster, lgb.Booster)
    for other in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
        assert other.chosen == r.chosen and other.status == r.status
        np.testing.assert_array_equal(other.booster.predict(data[2]), r.booster.predict(data[2]))
    assert r.nfev >= len(r.frontier) and r.seconds["total"] > 0
    assert set(r.seconds) - {"total", "greedy_select"} <= {c.family for c in r.frontier}


def test_dataframe_valid_columns_matched_by_name(data):
    Xt, yt, Xv, yv = data
    names = [f"f{i}" for i in range(6)]
    tr = pd.DataFrame(Xt, columns=names)
    va = pd.DataFrame(Xv, columns=names)
    kw = dict(budget=3.0, costs=dict(zip(names, COSTS, strict=True)), num_boost_round=10, progress=False,
              greedy=False, n_bisect=0)
    a = train_to_budget(PARAMS, lgb.Dataset(tr, yt), valid_set=(va, yv), **kw)
    b = train_to_budget(PARAMS, lgb.Dataset(tr, yt), valid_set=(va[names[::-1]], yv), **kw)
    assert [(c.score, c.cost) for c in a.frontier] == [(c.score, c.cost) for c in b.frontier]
    with pytest.raises(ValueError, match=r"'valid_set'.*missing model features \['f0'\]"):
        train_to_budget(PARAMS, lgb.Dataset(tr, yt), valid_set=(va.rename(columns={"f0": "x"}), yv), **kw)
    # names as LightGBM stores them: a space in a column name is an underscore in the model
    spaced = {n: n.replace("f", "f ") for n in names}
    c = train_to_budget(PARAMS, lgb.Dataset(tr.rename(columns=spaced), yt),
                        valid_set=(va.rename(columns=spaced)[[spaced[n] for n in names[::-1]]], yv),
                        **{**kw, "costs": {spaced[n].replace(" ", "_"): v for n, v in zip(names, COSTS, strict=True)}})
    assert [(x.score, x.cost) for x in c.frontier] == [(x.score, x.cost) for x in a.frontier]


def test_a_named_training_set_with_an_unnamed_valid_set_warns(data):
    """Columns without names are read by position: a shuffled array would score silently wrong."""
    Xt, yt, Xv, yv = data
    names = [f"f{i}" for i in range(6)]
    kw = dict(budget=3.0, costs=COSTS, num_boost_round=5, progress=False, greedy=False, n_bisect=0)
    for unnamed in (Xv[:, ::-1], pd.DataFrame(Xv)):
        with pytest.warns(UserWarning, match="'valid_set' argument has no column names.*by position"):
            train_to_budget(PARAMS, lgb.Dataset(pd.DataFrame(Xt, columns=names), yt), valid_set=(unnamed, yv), **kw)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*no column names")  # names on both sides, or on neither
        train_to_budget(PARAMS, lgb.Dataset(pd.DataFrame(Xt, columns=names), yt),
                        valid_set=(pd.DataFrame(Xv, columns=names), yv), **kw)
        train_to_budget(PARAMS, lgb.Dataset(Xt, yt), valid_set=(Xv, yv), **kw)


def test_n_jobs_gives_the_serial_candidates(data):
    kw = dict(n_bisect=1, k_grid=[1, 2, 3], greedy=True)
    serial, par = run(data, 3.0, **kw), run(data, 3.0, n_jobs=3, **kw)
    assert [(c.family, c.params, c.score, c.cost) for c in serial.frontier] == [
        (c.family, c.params, c.score, c.cost) for c in par.frontier
    ]


def test_max_fits_and_time_limit_cut_with_a_status(data):
    with pytest.warns(UserWarning, match="search cut \\(max_fits=4"):
        r = run(data, 3.0, max_fits=4)
    assert r.status == Status.LIMIT and not r.success and r.nfev == 4 and len(r.frontier) == 4
    assert r.chosen == r.best_at(3.0)
    with pytest.warns(UserWarning, match="time_limit"):
        t = run(data, 3.0, time_limit=1e-9)
    assert t.status == Status.LIMIT and len(t.frontier) == 1  # a fit is never cut half-way


def test_a_search_cut_among_its_proxies_returns_no_proxy(data):
    with pytest.raises(ValueError, match="cut before its first model trained on every row"):
        run(data, 3.0, proxy_rows=150, max_fits=3)


def test_proxies_rank_and_only_full_size_models_are_returned(data):
    r = run(data, 3.0, proxy_rows=150, budgets=[1.5], k_grid=[1, 2, 3])
    proxies = [c for c in r.frontier if c.proxy]
    full = [c for c in r.frontier if not c.proxy]
    assert proxies and all(c.rows == 150 for c in proxies)
    assert 1 <= len(full) <= 6 and all(c.rows == 400 for c in full)  # one refit a budget (+ retries on a miss)
    assert not r.chosen.proxy and r.chosen == r.best_at(3.0)
    assert r.cost == pytest.approx(
        cost_report(TreeEnsemble.from_booster(r.booster), data[2], FeatureCosts(COSTS)).total_cost.mean()
    )
    # every refit repeats a proxy's knobs
    assert all(any(p.family == c.family and p.params == c.params for p in proxies) for c in full)


def test_greedy_selection_never_scores_on_validation_rows(data, monkeypatch):
    import budget_extras.cegb._search as search

    calls = []
    real = search.Search._train_one

    def spy(self, spec):
        calls.append(spec.family)
        return real(self, spec)

    monkeypatch.setattr(search.Search, "_train_one", spy)
    r = run(data, 3.0, greedy=True, n_bisect=0)
    # the validation rows score exactly the candidates: greedy's selection fits are not among them
    assert len(calls) == len(r.frontier) < r.nfev


@pytest.mark.parametrize("boosting", ["gbdt", "dart"])
def test_greedy_selection_evaluates_each_fit_once_with_the_scores_of_per_round_evaluation(data, monkeypatch, boosting):
    """A gbdt selection fit runs LightGBM's metric once, on the held-out rows added after training; same values."""
    import budget_extras.cegb._families as fam

    Xt, yt, Xv, yv = data
    evals, scores, fits = [], [], []
    real_eval, real_score = lgb.Booster.eval_valid, fam._greedy_score

    def counted_eval(self, *a, **k):
        evals.append(1)
        return real_eval(self, *a, **k)

    def spy(s, fit_rows, hold, sub, rounds, constant=False):
        fits.append((fit_rows, hold, sub, rounds, constant, s.params_for({})))
        out = real_score(s, fit_rows, hold, sub, rounds, constant)
        scores.append(out[0])
        return out

    monkeypatch.setattr(lgb.Booster, "eval_valid", counted_eval)
    monkeypatch.setattr(fam, "_greedy_score", spy)
    train_to_budget({**PARAMS, "boosting": boosting}, lgb.Dataset(Xt, yt), budget=3.0, valid_set=(Xv, yv),
                    costs=COSTS, num_boost_round=15, greedy=True, n_bisect=0, n_tradeoffs=0, k_grid=[2],
                    num_leaves_grid=None, choose="valid", progress=False)
    assert fits
    if boosting == "gbdt":
        assert len(evals) == len(fits)
    else:
        assert len(evals) > len(fits)  # dart: every round, as lgb.train evaluates
    monkeypatch.setattr(lgb.Booster, "eval_valid", real_eval)
    for (fit_rows, hold, sub, rounds, constant, base), got in zip(fits[:4], scores, strict=False):
        p = {**base, "learning_rate": 0.2, "num_leaves": 15, "interaction_constraints": [sub], "metric": "auc"}
        if constant:
            p["min_gain_to_split"] = 1e300
        b = lgb.train(p, fit_rows, num_boost_round=rounds, valid_sets=[hold], valid_names=["hold"],
                      keep_training_booster=True)
        assert got == b.eval_valid()[0][2]


def test_to_frame_and_plot_show_the_frontier(data):
    import matplotlib

    matplotlib.use("Agg")
    r = run(data, 3.0, n_bisect=0)
    df = r.to_frame()
    assert len(df) == len(r.frontier) and df["chosen"].sum() == 1
    row = df[df["chosen"]].iloc[0]
    assert (row["score"], row["cost"], row["family"]) == (r.score, r.cost, r.chosen.family)
    ax = r.plot()
    points = np.vstack([c.get_offsets() for c in ax.collections if len(c.get_offsets())])
    assert {(float(x), float(y)) for x, y in points} >= {(c.cost, c.score) for c in r.frontier}


def test_greedy_first_step_weighs_gain_by_cost():
    """The first step is compared with the constant model, so a cheap useful feature beats a dear better one."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    y = (X[:, 0] + 0.6 * X[:, 1] + 0.4 * X[:, 3] + 0.5 * rng.normal(size=3000) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = train_to_budget(PARAMS, lgb.Dataset(X[:2000], y[:2000]), budget=3.0, valid_set=(X[2000:], y[2000:]),
                            costs=[10, 1, 1, 3, 1, 1], num_boost_round=15, progress=False, k_grid=[5], choose="valid")
    greedy = [c.params["interaction_constraints"][0] for c in r.frontier if c.family == "greedy"]
    # feature 0 scores best alone but costs 10x feature 1: every prefix starts from feature 1 (the prefix [1]
    # itself may be a packed top-k subset already, then it is not refit as greedy)
    assert greedy and all(1 in g for g in greedy)
    assert [1] in [c.params.get("interaction_constraints", [None])[0] for c in r.frontier]


def test_an_init_score_on_an_objective_of_unknown_output_is_refused(data, monkeypatch):
    """The output transform is checked against LightGBM's predict: one it does not match is refused."""
    import budget_extras.cegb._scoring as scoring

    monkeypatch.setattr(scoring, "_output", lambda objective, raw: raw)  # as if 'binary' were not known
    Xt, yt, Xv, yv = data
    with pytest.raises(ValueError, match="'valid_set' argument's init_score cannot be added for objective 'binary"):
        train_to_budget(PARAMS, lgb.Dataset(Xt, yt, init_score=np.zeros(len(yt))), budget=2.0,
                        valid_set=lgb.Dataset(Xv, yv, init_score=np.zeros(len(yv))), costs=COSTS,
                        num_boost_round=3, progress=False)


@pytest.fixture(scope="module")
def prices():
    """A regression target on the scale of prices (mean squared errors in the 1e5)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 6))
    y = 3000 + 900 * X[:, 0] + 400 * X[:, 1] + 200 * X[:, 3] + 300 * rng.normal(size=600)
    return X[:400], y[:400], X[400:], y[400:]


def _regress(data, budget, params=None, **kw):
    Xt, yt, Xv, yv = data
    p = {**PARAMS, "objective": "regression", **(params or {})}
    kw.setdefault("choose", "valid")  # the score read on the validation rows (CV: test_train_to_budget_cv)
    return train_to_budget(p, lgb.Dataset(Xt, yt), budget=budget, valid_set=(Xv, yv), costs=COSTS,
                           num_boost_round=15, greedy=False, progress=False, **kw)


def test_regression_is_read_as_rmse_and_chosen_by_minus_the_mse(prices):
    import matplotlib

    matplotlib.use("Agg")
    r = _regress(prices, 3.0, n_bisect=0)
    Xv, yv = prices[2], prices[3]
    rmse = float(np.sqrt(np.mean((r.booster.predict(Xv) - yv) ** 2)))
    assert r.scoring == "neg_l2" and r.score == pytest.approx(-(rmse**2))  # chosen by: higher is better
    assert r.metric == "rmse" and r.metric_value() == pytest.approx(rmse) and rmse > 100
    assert f"rmse {rmse:.6g}" in r.message and "neg_l2" not in r.message
    assert f"rmse={rmse:.6g}" in repr(r)
    df = r.to_frame()
    assert list(df.columns[df.columns.get_loc("score"):][:2]) == ["score", "rmse"]
    assert df.loc[df["chosen"], "rmse"].item() == pytest.approx(rmse)
    np.testing.assert_allclose(df["rmse"], np.sqrt(-df["score"]))
    ax = r.plot()
    assert ax.get_ylabel() == "validation rmse"
    chosen = next(c for c in ax.collections if c.get_gid() == "chosen")
    assert tuple(chosen.get_offsets()[0]) == pytest.approx((r.cost, rmse))


@pytest.mark.parametrize(("how", "metric", "error"), [
    ({"params": {"metric": "l1"}}, "mean_absolute_error", lambda e: np.mean(np.abs(e))),
    ({"params": {"metrics": ["mse", "l1"]}}, "mean_squared_error", lambda e: np.mean(e**2)),
    ({"params": {"metric": "rmse"}}, "rmse", lambda e: np.sqrt(np.mean(e**2))),
    ({"scoring": "neg_mean_absolute_error"}, "mean_absolute_error", lambda e: np.mean(np.abs(e))),
])
def test_regression_shows_the_metric_the_user_names(prices, how, metric, error):
    r = _regress(prices, 3.0, n_bisect=0, **how)
    value = float(error(r.booster.predict(prices[2]) - prices[3]))
    assert r.metric == metric and r.metric_value() == pytest.approx(value)
    assert r.score == pytest.approx(-(value**2) if metric == "rmse" else -value)  # chosen by: higher is better
    assert f"{metric} {value:.6g}" in r.message
    assert r.to_frame().loc[lambda d: d["chosen"], metric].item() == pytest.approx(value)


def test_a_score_users_read_as_is_gets_no_second_column(data):
    r = run(data, 3.0, n_bisect=0)
    assert r.metric == r.scoring == "roc_auc" and r.metric_value() == r.score
    assert list(r.to_frame().columns) == ["family", "k", "tradeoff", "num_leaves", "score", "score_se", "folds",
                                          "cost", "coupled_cost", "constant", "chosen", "pareto", "proxy"]
