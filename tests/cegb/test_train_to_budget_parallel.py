"""Candidates trained side by side (``n_jobs``): no thread waits for a slower one's batch to end."""

from __future__ import annotations

import threading

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras import FeatureCosts
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
