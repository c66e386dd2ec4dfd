"""Candidates trained side by side (``n_jobs``): no thread waits for a slower one's batch to end."""

from __future__ import annotations

import threading
import warnings

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras import FeatureCosts
from budget_extras.cegb import train_to_budget
from budget_extras.cegb._search import Clock, Search, SearchCut


def _search(n_jobs, max_fits=None):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    train = lgb.Dataset(X, X[:, 0] > 0, params={"verbosity": -1}).construct()
    clock = Clock(1.0, 200, max_fits, None, n_jobs, False, None)
    return Search({"objective": "binary", "verbosity": -1}, train, None, X, X[:, 0] > 0,
                  FeatureCosts([1.0, 1.0, 1.0]), None, 2, clock)


def test_a_free_thread_takes_the_next_item_while_a_slow_one_runs():
    """With two threads, item 2 starts while item 0 still runs (no barrier after items 0 and 1)."""
    started = {i: threading.Event() for i in range(4)}

    def work(i):
        started[i].set()
        if i == 0:
            return started[2].wait(timeout=10)  # True only if item 2 started while this one ran
        return True

    s = _search(2)
    out = [r for batch in s.batches(work, range(4)) for r in batch]
    assert out == [True, True, True, True]
    assert s.clock.nfev == 4


def test_results_come_in_the_order_of_the_items():
    def work(i):
        threading.Event().wait(0.02 * (5 - i))  # later items finish first
        return i

    s = _search(3)
    assert [r for batch in s.batches(work, range(6)) for r in batch] == list(range(6))


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_max_fits_runs_exactly_that_many_items_then_cuts(n_jobs):
    """The items allowed finish and come out before the cut, whatever the number of threads."""
    s = _search(n_jobs, max_fits=5)
    s.clock.allow(1)  # one fit done before
    got = []
    with pytest.raises(SearchCut, match="max_fits=5"):
        for batch in s.batches(lambda i: i, range(10)):
            got += batch
    assert got == [0, 1, 2, 3] and s.clock.nfev == 5


# the search's independent fits are batches: a greedy step, a bisection step of every sweep and
# budget, the smaller trees of every budget, the cross-validation of the whole shortlist

PARAMS = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 10, "learning_rate": 0.2, "num_threads": 1}
COSTS = [1.0, 2.0, 1.0, 3.0, 1.0, 1.0]


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6))
    y = (X[:, 0] + 0.6 * X[:, 1] + 0.4 * X[:, 3] + 0.5 * rng.normal(size=600) > 0).astype(int)
    return X[:400], y[:400], X[400:], y[400:]


def _run(table, n_jobs=1, choose="valid", **kw):
    """Greedy selection, three budgets, two bisections a budget: every batched family runs."""
    Xt, yt, Xv, yv = table
    kw.setdefault("n_bisect", 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train_to_budget(PARAMS, lgb.Dataset(Xt, yt), budget=3.0, budgets=[1.5, 5.0], valid_set=(Xv, yv),
                               costs=COSTS, num_boost_round=15, greedy=True, choose=choose, n_jobs=n_jobs,
                               progress=False, **kw)


def _frontier(r):
    return [(c.family, c.params, c.k, c.tradeoff, c.score, c.cost, c.cost_sd, c.constant, c.folds, c.fold_scores)
            for c in r.frontier]


@pytest.mark.parametrize("choose", ["valid", "cv"])
def test_two_threads_give_the_serial_frontier_and_model(table, choose):
    """With greedy selection, several budgets and (``cv``) the cross-validated choice: the serial search."""
    serial, par = _run(table, 1, choose), _run(table, 2, choose)
    assert _frontier(par) == _frontier(serial)
    assert par.booster.model_to_string() == serial.booster.model_to_string()
    assert par.nfev == serial.nfev and par.chosen.family == serial.chosen.family


@pytest.mark.parametrize("max_fits", [20, 90])
def test_a_cut_batch_keeps_the_serial_fits_and_count(table, max_fits):
    """``max_fits`` inside a greedy step (20) or a bisection step (90): the same fits with one or two threads."""
    serial, par = _run(table, 1, max_fits=max_fits), _run(table, 2, max_fits=max_fits)
    assert serial.nfev == par.nfev == max_fits
    assert _frontier(par) == _frontier(serial)


def _batch_sizes(monkeypatch, kind):
    """Record the size of every ``Search.batches`` call whose items are of ``kind``."""
    sizes = []
    original = Search.batches

    def recording(self, work, items):
        items = list(items)
        if items and kind(items[0]):
            sizes.append(len(items))
        return original(self, work, items)

    monkeypatch.setattr(Search, "batches", recording)
    return sizes


def test_a_greedy_step_trains_every_feature_and_fold_in_one_batch(table, monkeypatch):
    """400 rows: 3 folds. The constant model's folds, then each step's features left times 3 folds."""
    sizes = _batch_sizes(monkeypatch, lambda item: isinstance(item, tuple) and isinstance(item[0], list))
    r = _run(table, keep_boosters=True)
    n_pool = int(np.sum(r.boosters[0].feature_importance("gain") > 0))  # the plain model's features
    assert sizes[:2] == [3, 3 * n_pool]
    assert sizes[1:] == [3 * (n_pool - i) for i in range(len(sizes) - 1)]


def test_the_sweeps_bisect_every_budget_in_lockstep(table, monkeypatch):
    """Every sweep's grid is one batch, then one batch per bisection step (not one per bisection)."""
    calls = []
    original = Search.fit_many

    def recording(self, specs):
        calls.append([(s.family, s.tradeoff, "num_leaves" in s.extra) for s in specs])
        return original(self, specs)

    monkeypatch.setattr(Search, "fit_many", recording)
    _run(table, n_bisect=3)
    sweeps = [c for c in calls if c and c[0][1] is not None and not c[0][2]]
    assert {f for f, _, _ in sweeps[0]} >= {"lazy", "lazy_topk"}  # the grids of several sweeps together
    assert len(sweeps) <= 1 + 3  # the grid, then at most three steps
    assert sum(len(c) for c in sweeps[1:]) > 3  # more bisections than steps: several in a step
    assert len([c for c in calls if c and c[0][2]]) == 1  # the smaller trees of every budget: one batch


def test_the_shortlist_is_cross_validated_in_one_batch(table, monkeypatch):
    """Every shortlisted candidate's 15 folds (600 pooled rows: 5 folds drawn 3 times) in one batch.

    A retuned twin (a CEGB configuration at a higher tradeoff, each step read off the one before)
    is a batch of its own 15 folds after it.
    """
    sizes = _batch_sizes(monkeypatch, lambda item: isinstance(item, tuple) and isinstance(item[1], int)
                         and not isinstance(item[0], list))
    r = _run(table, choose="cv")
    assert sizes[0] > 15 and all(n == 15 for n in sizes[1:])
    assert sum(sizes) == 15 * sum(c.folds > 0 for c in r.frontier)
