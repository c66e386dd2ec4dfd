"""train_to_budget's strategies: the table, a callable, options= and the progress plan that is never overshot."""

from __future__ import annotations

import warnings
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
])
def test_progress_ends_at_its_planned_total_and_never_passes_it(data, bars, kw):
    """The bar's total is the plan's; every stage's work stays within its plan; the count ends at the total."""
    run(data, **kw)
    _check_bar(bars)


@pytest.mark.skipif(not is_fork(), reason="search='fast' needs the fork")
@pytest.mark.parametrize("proxy_rows", [None, 150])
def test_fast_search_progress_ends_at_its_planned_total(data, bars, proxy_rows):
    """The fast search's stages (ranking, candidates, refits, retries) stay within their plan."""
    run(data, search="fast", proxy_rows=proxy_rows, budgets=[1.5, 5.0])
    _check_bar(bars)


def test_cut_search_still_ends_at_its_total(data, bars):
    """A search cut by max_fits moves the bar to its total at the end instead of stopping short."""
    r = run(data, choose="valid", greedy=False, max_fits=4)
    assert r.nfev == 4
    _check_bar(bars)


def test_strategy_table_holds_the_search_names():
    """The names users pass to search= are the table's keys."""
    assert set(STRATEGIES) == {"full", "fast"}


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
    ("slow", None, ValueError), (3, None, ValueError), ("full", [1], TypeError), ("full", {1: 2}, TypeError),
])
def test_bad_search_or_options_are_refused_naming_the_argument(data, search, options, err):
    """An unknown strategy name or non-dict options raise naming 'search' / 'options'."""
    Xt, yt, Xv, yv = data
    name = "options" if options is not None else "search"
    with pytest.raises(err, match=f"'{name}'"):
        train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=3.0, valid_set=(Xv, yv), costs=COSTS,
                        progress=False, search=search, options=options)
