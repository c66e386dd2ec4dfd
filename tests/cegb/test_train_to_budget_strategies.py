"""train_to_budget's strategies: the table, a callable, options= and the progress plan that is never overshot."""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import ClassVar

import lightgbm as lgb
import numpy as np
import pytest
import tqdm.auto

import budget_extras.cegb._search as search_mod
from budget_extras.cegb import train_to_budget
from budget_extras.cegb._search import Spec
from budget_extras.cegb._strategies import STRATEGIES
from budget_extras.cegb._train_to_budget import is_fork

PARAMS = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 10, "learning_rate": 0.2, "num_threads": 1}
COSTS = [1.0, 2.0, 1.0, 3.0, 1.0, 1.0]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6))
    y = (X[:, 0] + 0.6 * X[:, 1] + 0.4 * X[:, 3] + 0.5 * rng.normal(size=600) > 0).astype(int)
    return X[:400], y[:400], X[400:], y[400:]


class CountingBar:
    """A tqdm stand-in that records its total and every position it reaches."""

    made: ClassVar[list[CountingBar]] = []

    def __init__(self, total=None, disable=False, **kw):
        self.total, self.n, self.totals, self.positions = total, 0.0, [total], []
        CountingBar.made.append(self)

    def __setattr__(self, name, value):
        if name == "total" and hasattr(self, "totals"):
            self.totals.append(value)
        object.__setattr__(self, name, value)

    def update(self, step):
        assert step >= 0
        self.n += step
        self.positions.append(self.n)

    def set_postfix(self, **kw):
        pass

    def close(self):
        pass


@pytest.fixture
def bars(monkeypatch):
    CountingBar.made = []
    monkeypatch.setattr(tqdm.auto, "tqdm", CountingBar)
    overruns = []
    close = search_mod.Clock.close

    def close_and_keep(self):
        overruns.append((self.overrun, self.spent, self.total))
        return close(self)

    monkeypatch.setattr(search_mod.Clock, "close", close_and_keep)
    return CountingBar.made, overruns


def run(data, **kw):
    Xt, yt, Xv, yv = data
    kw.setdefault("costs", COSTS)
    kw.setdefault("num_boost_round", 15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=kw.pop("budget", 3.0), valid_set=(Xv, yv),
                               progress=True, **kw)


def _check_bar(bars):
    made, overruns = bars
    assert len(made) == 1
    bar = made[0]
    assert bar.totals == [bar.total] and bar.total > 0  # known up front, never changed
    assert max(bar.positions) <= bar.total + 1e-9  # never overshot
    assert bar.n == pytest.approx(bar.total, abs=1e-9)  # ends exactly at the plan
    overrun, spent, total = overruns[0]
    assert overrun == 0.0 and 0 < spent <= total + 1e-9  # every stage stayed within its plan
    return bar, spent


@pytest.mark.parametrize("kw", [
    dict(choose="valid", greedy=True, budgets=[1.5, 5.0]),
    dict(choose="valid", greedy=False, proxy_rows=150),  # proxies and their refits
    dict(choose="cv", greedy=False),  # the cross-validated choice and its refit
    dict(choose="cv", greedy=False, budgets=[5.0], options={"halving": True}),
    dict(choose="valid", greedy=True, proxy_rows=150, options={"halving": True}),
])
def test_progress_ends_at_its_planned_total_and_never_passes_it(data, bars, kw):
    """The bar's total is the plan's; every stage's work stays within its plan; the count ends at the total."""
    run(data, **kw)
    _check_bar(bars)


@pytest.mark.skipif(not is_fork(), reason="search='fast' needs the fork")
@pytest.mark.parametrize(("proxy_rows", "rounds"), [(None, 15), (150, 15), (None, 60)])
def test_fast_search_progress_ends_at_its_planned_total(data, bars, proxy_rows, rounds):
    """The fast search's stages (ranking, candidates, refits, retries) stay within their plan.

    With more rounds than its ranking model's 40, that model counts its share of the rounds.
    """
    run(data, search="fast", proxy_rows=proxy_rows, budgets=[1.5, 5.0], num_boost_round=rounds)
    _check_bar(bars)


@pytest.mark.skipif(not is_fork(), reason="search='fast' needs the fork")
@pytest.mark.parametrize("proxy_rows", [None, 150])
def test_fast_search_with_small_trees_stays_within_its_plan(data, bars, monkeypatch, proxy_rows):
    """With 31 leaves the fast search also trains small trees: up to five candidates per budget, two capped."""
    import sys

    monkeypatch.setattr(sys.modules[__name__], "PARAMS", {**PARAMS, "num_leaves": 31})
    run(data, search="fast", proxy_rows=proxy_rows, budgets=[1.5, 5.0], keep_boosters=True)
    _check_bar(bars)


def test_cut_search_still_ends_at_its_total(data, bars):
    """A search cut by max_fits moves the bar to its total at the end instead of stopping short."""
    r = run(data, choose="valid", greedy=False, max_fits=4)
    assert r.nfev == 4
    _check_bar(bars)


def test_strategy_table_holds_the_search_names():
    """The names users pass to search= are the table's keys."""
    assert set(STRATEGIES) == {"full", "fast", "lean"}


def test_callable_strategy_trains_its_own_candidates_and_reads_its_options(data, bars):
    """A callable gets the search and its options; its plan gives the bar a total that holds."""
    seen = {}

    def plain_and_topk(search_run, k=2):
        seen["k"] = k
        s = search_run.search
        s.fit(Spec("all", {}))
        s.fit(Spec("topk_gain", {"interaction_constraints": [list(range(k))]}, k))

    plain_and_topk.plan = lambda plan_input, options: [("mine", 2.0)]

    def with_stage(search_run, k=2):
        with search_run.stage("mine"):
            plain_and_topk(search_run, k)

    with_stage.plan = plain_and_topk.plan
    r = run(data, search=with_stage, options={"k": 3}, choose="valid")
    assert seen["k"] == 3
    assert [c.family for c in r.frontier] == ["all", "topk_gain"]
    bar, spent = _check_bar(bars)
    assert bar.total == 2.0 and spent == pytest.approx(2.0)


def test_strategy_object_with_its_own_options_is_accepted(data, bars):
    """A Strategy (run, plan, option defaults) is a search= value; its defaults reach its run."""
    from budget_extras.cegb._strategies import Strategy

    def run_it(search_run):
        with search_run.stage("plain"):
            for leaves in search_run.options["leaves"]:
                search_run.search.fit(Spec("all", {"num_leaves": leaves}))

    mine = Strategy(run=run_it, plan=lambda p, options: [("plain", float(len(options["leaves"])))],
                    options={"leaves": (3, 7)})
    r = run(data, search=mine, choose="valid")
    assert [c.params["num_leaves"] for c in r.frontier] == [3, 7]
    _check_bar(bars)


def test_callable_without_plan_counts_without_a_total(data, bars):
    """Without a plan the bar has no total to pass: it counts the trainings."""
    r = run(data, search=lambda search_run: search_run.search.fit(Spec("all", {})), choose="valid")
    assert r.chosen.family == "all"
    assert bars[0][0].total is None and bars[0][0].n == pytest.approx(1.0)


def test_unknown_option_warns_naming_it(data):
    """An options= key the strategy does not use is named in a UserWarning and ignored."""
    Xt, yt, Xv, yv = data
    with pytest.warns(UserWarning, match="'nope'"):
        train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=3.0, valid_set=(Xv, yv), costs=COSTS,
                        num_boost_round=5, greedy=False, choose="valid", progress=False, options={"nope": 1})


@pytest.mark.parametrize(("search", "options", "err"), [
    ("slow", None, ValueError), (3, None, TypeError), ("full", [1], TypeError), ("full", {1: 2}, TypeError),
])
def test_bad_search_or_options_are_refused_naming_the_argument(data, search, options, err):
    """An unknown strategy name or non-dict options raise naming 'search' / 'options'."""
    Xt, yt, Xv, yv = data
    name = "options" if options is not None else "search"
    with pytest.raises(err, match=f"'{name}'"):
        train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=3.0, valid_set=(Xv, yv), costs=COSTS,
                        progress=False, search=search, options=options)


# successive halving (options={"halving": True})


def test_halving_progress_ends_at_its_planned_total(data, bars):
    """Candidates stopped early count their share of the rounds; the bar still ends at its plan."""
    r = run(data, choose="valid", greedy=False, num_boost_round=40, options={"halving": True})
    assert any(c.rounds is not None for c in r.frontier)
    bar, spent = _check_bar(bars)
    assert spent < bar.total


@pytest.fixture(scope="module")
def halved(data):
    kw = dict(choose="valid", greedy=False, num_boost_round=40, budgets=[1.5, 5.0], keep_boosters=True,
              progress=False)
    Xt, yt, Xv, yv = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=3.0, valid_set=(Xv, yv), costs=COSTS,
                                options={"halving": h}, **kw) for h in (False, True)]


def test_halving_stops_dominated_candidates_which_are_never_returned(halved):
    """Stopped candidates hold their first trees only, are marked proxy and never chosen."""
    _, r = halved
    stopped = [(c, b) for c, b in zip(r.frontier, r.boosters, strict=True) if c.rounds is not None]
    assert stopped
    for c, b in stopped:
        assert c.proxy and 0 < c.rounds < 40 and b.current_iteration() == c.rounds
    assert r.chosen.rounds is None and not r.chosen.proxy
    for b in (1.5, 3.0, 5.0):
        assert r.best_at(b).rounds is None


def test_halving_trains_finished_candidates_as_one_straight_training(halved, data):
    """A candidate trained on by Booster.update() between rungs equals lgb.train with its parameters."""
    full, r = halved
    straight = {repr(sorted(c.params.items())): c for c in full.frontier}
    same = 0
    for c in r.frontier:
        key = repr(sorted(c.params.items()))
        if c.rounds is None and key in straight:
            same += 1
            assert c.score == pytest.approx(straight[key].score, abs=1e-12)
            assert c.cost == pytest.approx(straight[key].cost, abs=1e-12)
    assert same >= 10
    Xt, yt, Xv, _ = data
    params = {**PARAMS, "seed": 0, "verbosity": -1, **r.chosen.params}
    ref = lgb.train(params, lgb.Dataset(Xt, yt), num_boost_round=40)
    np.testing.assert_allclose(r.booster.predict(Xv), ref.predict(Xv), rtol=0, atol=1e-12)


class _FakeSearch:
    def __init__(self, history):
        self.history = history


def test_a_candidate_is_stopped_only_when_another_is_no_dearer_and_better_by_the_margin():
    """The dominance rule: no higher cost AND a score higher by more than margin x the spread."""
    from budget_extras.cegb._halving import _drop_dominated, _Live

    def live(score, cost):
        return _Live(Spec("x", {}), None, at={10: (score, cost)})

    cheap_good, dear_better, dear_worse, tie = live(0.80, 1.0), live(0.85, 2.0), live(0.70, 2.0), live(0.80, 1.0)
    group = [cheap_good, dear_better, dear_worse, tie]
    _drop_dominated(_FakeSearch([{10: (0.5, 0.0)}]), group, 10, margin=0.0)
    assert [x.stopped for x in group] == [None, None, 10, None]
    # a finished candidate of an earlier batch dominates too; a margin of the spread protects close calls
    group = [live(0.79, 1.0), live(0.60, 1.0)]
    _drop_dominated(_FakeSearch([{10: (0.80, 0.5)}, {10: (0.50, 0.0)}]), group, 10, margin=0.1)
    assert [x.stopped for x in group] == [None, 10]


@pytest.mark.parametrize("options", [
    {"halving": "yes"}, {"halving": True, "rungs": [0.5, 1.0]}, {"halving": True, "rungs": "0.5"},
    {"halving": True, "margin": -1}, {"halving": True, "margin": float("nan")}, {"halving": True, "margin": True},
    {"halving": True, "rungs": [True]}, {"halving": 1},
])
def test_bad_halving_options_are_refused_naming_them(data, options):
    """Halving knobs out of range or of the wrong type (a bool is no number) raise naming the key."""
    Xt, yt, Xv, yv = data
    key = [k for k in options if k != "halving"] or ["halving"]
    with pytest.raises((ValueError, TypeError), match=rf"'{key[-1]}' option of train_to_budget\(options=...\)"):
        train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=3.0, valid_set=(Xv, yv), costs=COSTS,
                        num_boost_round=5, greedy=False, choose="valid", progress=False, options=options)


def test_rungs_are_whole_rounds_below_the_last():
    """Rungs are shares of the rounds, at least one round, strictly below the last, without repeats."""
    from budget_extras.cegb._halving import Halving

    assert Halving((0.125, 0.25, 0.5), 0.0).rounds_at(200) == [25, 50, 100]
    assert Halving((0.1, 0.2, 0.5), 0.0).rounds_at(4) == [1, 2]
    assert Halving((0.5,), 0.0).rounds_at(1) == []


def test_halving_with_threads_gives_the_serial_candidates(halved, data):
    """n_jobs=2 advances live candidates in threads; the candidates and choice are the serial run's."""
    Xt, yt, Xv, yv = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=3.0, valid_set=(Xv, yv), costs=COSTS,
                            choose="valid", greedy=False, num_boost_round=40, budgets=[1.5, 5.0], progress=False,
                            options={"halving": True}, n_jobs=2)
    serial = halved[1]
    assert [(c.family, c.rounds, c.score, c.cost) for c in r.frontier] == [
        (c.family, c.rounds, c.score, c.cost) for c in serial.frontier]
    assert replace(r.chosen, seconds=0.0) == replace(serial.chosen, seconds=0.0)


# search="lean": every family on short proxies, the best few refit on every row


@pytest.mark.parametrize("kw", [
    dict(budgets=[1.5, 5.0], choose="valid"),
    dict(budgets=[1.5, 5.0], choose="valid", options={"rows": 0.1, "greedy_steps": 2, "finalists": 2}),
    dict(proxy_rows=150, options={"boost": False, "bisect": 2}),  # lean proxies drawn from the proxy subsample
    dict(budgets=[1.5, 5.0], choose="cv"),  # the shortlist cross-validated, the picks refit on the pooled rows
    dict(choose="cv", options={"shortlist": 1, "refits": 1}),
    dict(budgets=[1.5, 5.0], choose="valid", options={"refine": 2, "finalists": 2}),  # tradeoff steps on every row
    pytest.param(dict(budgets=[1.5, 5.0], choose="valid", options={"capped": True}),  # capped models on every row
                 marks=pytest.mark.skipif(not is_fork(), reason="capped needs the fork")),
    pytest.param(dict(budgets=[2.0, 4.0], choose="cv", options={"capped": True}),
                 marks=pytest.mark.skipif(not is_fork(), reason="capped needs the fork")),
])
def test_lean_search_progress_ends_at_its_planned_total(data, bars, kw):
    """The lean search's stages (plain, the families on proxies, the refits or the cross-validation) stay within
    their plan."""
    run(data, search="lean", num_boost_round=40, **kw)
    _check_bar(bars)


def test_lean_proxies_count_their_share_of_rows_and_rounds(data, bars, monkeypatch):
    """A proxy on a quarter of the rounds and half the rows counts an eighth of a training on the bar."""
    import budget_extras.cegb._lean as lean_module

    monkeypatch.setattr(lean_module, "LEAN_MIN_ROWS", 100)  # the data's 400 rows may be halved
    r = run(data, search="lean", num_boost_round=40, budgets=[1.5, 5.0], options={"rows": 0.5}, choose="valid")
    proxies = [c for c in r.frontier if c.proxy]
    assert proxies and {c.rows for c in proxies} == {200}
    full = [c for c in r.frontier if not c.proxy]
    _, spent = _check_bar(bars)
    assert spent == pytest.approx(len(full) + len(proxies) * 0.5 * 0.25)


@pytest.fixture(scope="module")
def lean(data):
    Xt, yt, Xv, yv = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=3.0, budgets=[1.5, 5.0], valid_set=(Xv, yv),
                               costs=COSTS, num_boost_round=40, search="lean", keep_boosters=True, progress=False,
                               choose="valid")


def test_lean_search_returns_a_model_trained_on_every_row_within_each_budget(lean, data):
    """At every budget the model returned is a refit on every row (never a proxy) whose cost fits."""
    from budget_extras import FeatureCosts, TreeEnsemble, cost_report

    Xt, _, Xv, _ = data
    assert lean.status.name == "SUCCESS" and not lean.chosen.proxy
    for b in (1.5, 3.0, 5.0):
        c, booster = lean.best_at(b), lean.booster_at(b)
        assert not c.proxy and c.rows == len(Xt) and c.rounds is None and c.cost <= b
        assert booster.current_iteration() == 40
        measured = cost_report(TreeEnsemble.from_booster(booster), Xv, FeatureCosts(COSTS)).total_cost.mean()
        assert measured == pytest.approx(c.cost) and measured <= b
    proxies = [c for c in lean.frontier if c.proxy]
    assert len(proxies) > 5 and all(c.rows == len(Xt) for c in proxies)
    assert sum(not c.proxy for c in lean.frontier) <= 1 + 3 * 3  # the plain model and at most 3 refits a budget


def test_lean_proxies_train_fewer_rounds_at_a_larger_learning_rate(lean):
    """The proxies' boosters hold a quarter of the rounds; the learning rate is scaled to match."""
    proxies = [b for c, b in zip(lean.frontier, lean.boosters, strict=True) if c.proxy and not c.constant]
    assert proxies and {b.current_iteration() for b in proxies} == {10}
    assert [float(b.params["learning_rate"]) for b in proxies] == pytest.approx([0.8] * len(proxies))


class _FitCounter:
    """A full-row Search stand-in: each refit costs ``ratio`` times its proxy's cost (CEGB candidates)."""

    def __init__(self, ratio):
        self.ratio, self.fitted, self.fc = ratio, [], None

    def fit(self, spec):
        from budget_extras.cegb._result import Candidate

        self.fitted.append(spec.extra["name"])
        proxy_cost = spec.extra["cost"]
        return Candidate(family=spec.family, params=dict(spec.extra), k=None, tradeoff=spec.tradeoff, score=0.0,
                         cost=proxy_cost * self.ratio, coupled_cost=0.0, constant=False, rows=10, proxy=False,
                         seconds=0.0)


def _proxy(name, score, cost):
    from budget_extras.cegb._result import Candidate

    return Candidate(family="lazy", params={"name": name, "cost": cost, "cegb_tradeoff": 1.0}, k=None, tradeoff=1.0,
                     score=score, cost=cost, coupled_cost=0.0, constant=False, rows=10, proxy=True, seconds=0.0)


def test_lean_refits_read_proxy_costs_through_the_refits_seen():
    """After a refit costs twice its proxy, the next proxy refit is one whose doubled cost fits the budget.

    Ranking on the raw proxy costs would refit ``b`` (cost 9 -> 18) after ``a`` missed; read
    through the ratio seen, ``c`` (4.5 -> 9) is next and fits, and the search stops there.
    """
    from budget_extras.cegb._lean import refit_calibrated

    class P:
        frontier: ClassVar = [_proxy("a", 0.90, 9.5), _proxy("b", 0.88, 9.0), _proxy("c", 0.85, 4.5)]

    full = _FitCounter(ratio=2.0)
    refit_calibrated(P(), full, [10.0], tries=3)  # type: ignore[arg-type]
    assert full.fitted == ["a", "c"]


def test_lean_refits_stop_at_the_tries_allowed_per_budget():
    """Refits that keep missing stop after ``tries`` at each budget."""
    from budget_extras.cegb._lean import refit_calibrated

    class P:
        frontier: ClassVar = [_proxy(str(i), 0.9 - i / 100, 1.0) for i in range(6)]

    full = _FitCounter(ratio=100.0)
    refit_calibrated(P(), full, [10.0], tries=2)  # type: ignore[arg-type]
    assert full.fitted == ["0", "1"]


class _SweepSearch:
    """A full-row Search stand-in whose CEGB models cost ``40 / tradeoff`` (their score falls with the tradeoff)."""

    fc = None

    def __init__(self, frontier):
        self.frontier, self.fitted = list(frontier), []

    def fit(self, spec):
        from budget_extras.cegb._result import Candidate

        self.fitted.append(spec.tradeoff)
        c = Candidate(family=spec.family, params=dict(spec.extra), k=spec.k, tradeoff=spec.tradeoff,
                      score=0.9 - spec.tradeoff / 1000, cost=40.0 / spec.tradeoff, coupled_cost=0.0, constant=False,
                      rows=10, proxy=False, seconds=0.0)
        self.frontier.append(c)
        return c


def _model(family, tradeoff, score, cost, proxy):
    from budget_extras.cegb._result import Candidate

    params = {} if tradeoff is None else {"cegb_tradeoff": tradeoff}
    return Candidate(family=family, params=params, k=None, tradeoff=tradeoff, score=score, cost=cost,
                     coupled_cost=0.0, constant=False, rows=10, proxy=proxy, seconds=0.0)


def test_lean_refine_steps_the_best_cegb_model_that_misses_towards_the_budget():
    """A full-round CEGB model that misses the budget but outscores every model that fits is stepped to fit it.

    The full-round model at tradeoff 2 costs 20 > 10, twice its proxy's. The step reads the
    tradeoff where the cost would be 97% of the budget on the proxies' costs read through that
    ratio, (2, 20) and (10, 8), linearly in the log-tradeoff: about 7.96 (costs 40 / 7.96, fits).
    Read on the raw proxy costs it would be about 4.4.
    """
    from budget_extras.cegb._lean import refine_tradeoffs

    class P:
        frontier: ClassVar = [_model("lazy", 2.0, 0.85, 10.0, True), _model("lazy", 10.0, 0.8, 4.0, True),
                              _model("topk_gain", None, 0.84, 9.0, True)]

    full = _SweepSearch([_model("topk_gain", None, 0.80, 9.0, False), _model("lazy", 2.0, 0.89, 20.0, False)])
    refine_tradeoffs(P(), full, [10.0], steps=1)  # type: ignore[arg-type]
    assert len(full.fitted) == 1 and full.fitted[0] == pytest.approx(2 * 5 ** ((20 - 9.7) / 12))
    assert full.frontier[-1].cost <= 10.0


def test_lean_refine_leaves_a_budget_whose_best_model_fits_and_spends_it():
    """No step where the best full-round model fits and spends at least 93% of the budget, nor with steps=0."""
    from budget_extras.cegb._lean import refine_tradeoffs

    class P:
        frontier: ClassVar = [_model("lazy", 1.0, 0.85, 20.0, True), _model("lazy", 10.0, 0.8, 4.0, True)]

    full = _SweepSearch([_model("lazy", 4.2, 0.89, 9.5, False), _model("lazy", 2.0, 0.85, 20.0, False)])
    refine_tradeoffs(P(), full, [10.0], steps=2)  # type: ignore[arg-type]
    refine_tradeoffs(P(), _SweepSearch([_model("lazy", 2.0, 0.89, 20.0, False)]), [10.0], steps=0)  # type: ignore[arg-type]
    assert full.fitted == []


def test_lean_refine_trains_the_planned_steps_on_every_row(data):
    """With refine=1 the lean search trains a full-round CEGB model beyond its refits: its tradeoff is stepped."""
    Xt, yt, Xv, yv = data
    kw = dict(budget=3.0, budgets=[1.5, 5.0], valid_set=(Xv, yv), costs=COSTS, num_boost_round=40, search="lean",
              progress=False, choose="valid")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = train_to_budget(PARAMS, lgb.Dataset(Xt, yt), **kw)
        refined = train_to_budget(PARAMS, lgb.Dataset(Xt, yt), options={"refine": 1}, **kw)
    seen = {(c.family, c.tradeoff) for c in plain.frontier if not c.proxy}
    extra = [c for c in refined.frontier if not c.proxy and (c.family, c.tradeoff) not in seen]
    assert extra and all(c.tradeoff is not None and c.rows == len(Xt) for c in extra)


def test_lean_warns_on_n_bisect(data):
    """n_bisect is a knob of search='full' (lean's is the option 'bisect'): setting it warns."""
    Xt, yt, Xv, yv = data
    with pytest.warns(UserWarning, match="'n_bisect'"):
        train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=3.0, valid_set=(Xv, yv), costs=COSTS, search="lean",
                        n_bisect=1, num_boost_round=8, progress=False, choose="valid")


@pytest.mark.parametrize(("options", "key"), [
    ({"rounds": 0}, "rounds"), ({"rounds": 1.5}, "rounds"), ({"rounds": True}, "rounds"),
    ({"rows": 0.0}, "rows"), ({"rows": float("nan")}, "rows"), ({"boost": 1}, "boost"),
    ({"bisect": -1}, "bisect"), ({"greedy_steps": 1.5}, "greedy_steps"), ({"greedy_rounds": 0}, "greedy_rounds"),
    ({"refits": 0}, "refits"), ({"finalists": "2"}, "finalists"), ({"shortlist": 0}, "shortlist"),
    ({"shortlist": 1.0}, "shortlist"), ({"refine": -1}, "refine"), ({"refine": 0.5}, "refine"),
    ({"capped": 1}, "capped"), ({"capped": "yes"}, "capped"),
])
def test_bad_lean_options_are_refused_before_training(data, options, key, monkeypatch):
    """Lean knobs out of range or of the wrong type raise naming the key, before any model is trained."""
    Xt, yt, Xv, yv = data
    trained = []
    monkeypatch.setattr(lgb, "train", lambda *a, **k: trained.append(1))
    with pytest.raises((ValueError, TypeError), match=rf"'{key}' option of train_to_budget\(options=...\)"):
        train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=3.0, valid_set=(Xv, yv), costs=COSTS,
                        search="lean", progress=False, options=options)
    assert not trained


def _lean_capped(data, budgets, **kw):
    Xt, yt, Xv, yv = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=budgets[0], budgets=budgets, valid_set=(Xv, yv),
                               costs=COSTS, num_boost_round=40, search="lean", keep_boosters=True, progress=False,
                               choose="valid", **kw)


@pytest.mark.skipif(not is_fork(), reason="the capped model needs the fork's cegb_budget")
def test_lean_capped_model_is_trained_on_every_row_at_each_budget_and_chosen_where_best(data):
    """With capped=True each budget also gets the fast search's capped lazy-CEGB model on every row.

    Its cap is the budget less the margin, its tradeoff falls from 0.3 to the end read off the
    plain model's first 40 iterations; on the validation rows it competes with the refits, and at
    2.0 it outscores them (0.801 against the top-k subset's 0.798): it is the model returned.
    Without the option no such model is trained and the top-k subset is returned there.
    """
    from budget_extras.cegb import _fast as fast

    r = _lean_capped(data, [2.0, 4.0], options={"capped": True})
    without = _lean_capped(data, [2.0, 4.0])
    plain = next(b for c, b in zip(r.frontier, r.boosters, strict=True) if c.family == "all" and not c.proxy)
    last = fast.decay_end(plain, fast.RANK_ROUNDS)
    capped = [(c, b) for c, b in zip(r.frontier, r.boosters, strict=True) if c.family == "budget"]
    assert [c.params["cegb_budget"] < cap for (c, _), cap in zip(capped, (2.0, 4.0), strict=True)] == [True, True]
    for c, b in capped:
        assert not c.proxy and c.rows == len(data[0]) and b.current_iteration() == 40
        assert c.decay == (fast.FAST_DECAY[0], last) and c.params["cegb_tradeoff_scale"] == "first_gain"
    rivals = [c for c in r.frontier if not c.proxy and c.family != "budget" and c.cost <= 2.0]
    best = r.best_at(2.0)
    assert best.family == "budget" and best.cost <= 2.0 and best.score > max(c.score for c in rivals)
    assert r.chosen == best and r.booster is r.booster_at(2.0)
    assert not any(c.family == "budget" for c in without.frontier) and without.best_at(2.0).family != "budget"


@pytest.mark.skipif(not is_fork(), reason="the capped model needs the fork's cegb_budget")
def test_lean_capped_model_that_misses_is_retrained_only_where_it_outscores_what_fits(data, monkeypatch):
    """A capped model over its budget on the validation rows is trained again only if it beats every model that fits.

    At 5.0 the capped model costs 5.19 and scores below the lazy refit that fits (0.882 against
    0.893): it is not retrained, so one capped model a budget is trained.
    """
    import budget_extras.cegb._lean as lean_module

    passed = []
    retry = lean_module.retry_over_budget
    monkeypatch.setattr(lean_module, "retry_over_budget", lambda full, todo: (passed.extend(todo), retry(full, todo)))
    r = _lean_capped(data, [1.5, 5.0], options={"capped": True})
    capped = [c for c in r.frontier if c.family == "budget"]
    over = [c for c in capped if c.cost > 5.0]
    assert len(capped) == 2 and len(over) == 1
    fits = max(c.score for c in r.frontier if not c.proxy and c.cost <= 5.0)
    assert over[0].score < fits and all(c is not over[0] for c, _ in passed)


def test_lean_capped_is_refused_without_the_fork_before_training(data, monkeypatch):
    """Upstream LightGBM has no cegb_budget: capped=True raises naming the option before any model is trained."""
    import budget_extras.cegb._train_to_budget as ttb

    Xt, yt, Xv, yv = data
    monkeypatch.setattr(ttb, "is_fork", lambda: False)
    trained = []
    monkeypatch.setattr(lgb, "train", lambda *a, **k: trained.append(1))
    with pytest.raises(ValueError, match="option 'capped' of search='lean' needs the lightgbm-cegb fork"):
        train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=3.0, valid_set=(Xv, yv), costs=COSTS, search="lean",
                        progress=False, choose="valid", options={"capped": True})
    assert not trained
