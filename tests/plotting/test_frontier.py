"""frontier_frame and plot_frontier read back: the plotted numbers are the result's."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from budget_extras.cegb import Candidate
from budget_extras.plotting import frontier_frame, pareto_front, plot_frontier


def _cand(family, cost, score, k=None, tradeoff=None, params=None, constant=False):
    return Candidate(
        family=family,
        params=params or {},
        k=k,
        tradeoff=tradeoff,
        score=score,
        cost=cost,
        coupled_cost=2 * cost,
        constant=constant,
    )


@pytest.fixture
def result():
    frontier = [
        _cand("all", 10.0, 0.90),
        _cand("topk_gain", 4.0, 0.85, k=3),
        _cand("topk_gain", 2.0, 0.70, k=1),
        _cand("lazy", 5.0, 0.84, tradeoff=0.1),  # dominated by topk_gain k=3
        _cand("lazy", 3.0, 0.80, tradeoff=1.0, params={"num_leaves": 7}),
        _cand("lazy", 0.0, 0.50, tradeoff=100.0, constant=True),
    ]
    chosen = frontier[1]
    return SimpleNamespace(
        frontier=frontier,
        chosen=chosen,
        budget=4.5,
        budgets=(4.5, 2.5),
        scoring="roc_auc",
        pareto=lambda: pareto_front(frontier),
    )


def test_frontier_frame_one_row_per_candidate(result):
    df = frontier_frame(result)
    assert list(df.columns) == [
        "family", "k", "tradeoff", "num_leaves", "score", "score_se", "folds", "cost", "coupled_cost", "constant",
        "chosen", "pareto", "proxy",
    ]
    assert len(df) == len(result.frontier)
    np.testing.assert_array_equal(df["cost"], [c.cost for c in result.frontier])
    np.testing.assert_array_equal(df["score"], [c.score for c in result.frontier])
    np.testing.assert_array_equal(df["coupled_cost"], [c.coupled_cost for c in result.frontier])
    assert df["chosen"].tolist() == [False, True, False, False, False, False]
    assert df["pareto"].tolist() == [True, True, True, False, True, True]
    assert df["num_leaves"].tolist() == [None, None, None, None, 7, None]
    assert df["k"].tolist() == [None, 3, 1, None, None, None]
    assert df["constant"].tolist() == [False, False, False, False, False, True]


def test_pareto_front_matches_budget_train_result():
    from dataclasses import replace

    from budget_extras.cegb import BudgetTrainResult
    from budget_extras.core import Status

    fr = [_cand("all", c, s) for c, s in [(3, 0.5), (1, 0.6), (2, 0.6), (4, 0.9), (0, 0.1)]]
    fr.append(replace(_cand("lazy", 0.5, 0.95), proxy=True))  # a proxy is never on the front
    r = BudgetTrainResult(Status.SUCCESS, "", None, 5.0, (5.0,), fr[3], 0.9, 4.0, {}, frontier=fr)
    assert r.success
    assert pareto_front(fr) == r.pareto()
    df = frontier_frame(r)
    assert df["pareto"].tolist() == [c in r.pareto() for c in fr]
    assert df["proxy"].tolist() == [False] * 5 + [True]
    ax = plot_frontier(r)
    (prox,) = _gid(ax, "proxies")
    np.testing.assert_array_equal(prox.get_offsets(), [[0.5, 0.95]])
    assert not _gid(ax, "candidates:lazy")


def _gid(ax, gid):
    return [a for a in [*ax.collections, *ax.lines] if a.get_gid() == gid]


def test_plot_frontier_data_are_the_results(result):
    ax = plot_frontier(result)
    for fam in ("all", "topk_gain", "lazy"):
        (coll,) = _gid(ax, f"candidates:{fam}")
        want = [[c.cost, c.score] for c in result.frontier if c.family == fam]
        np.testing.assert_array_equal(coll.get_offsets(), want)
    (front,) = _gid(ax, "pareto")
    p = pareto_front(result.frontier)
    np.testing.assert_array_equal(front.get_xdata(), [c.cost for c in p])
    np.testing.assert_array_equal(front.get_ydata(), [c.score for c in p])
    (chosen,) = _gid(ax, "chosen")
    np.testing.assert_array_equal(chosen.get_offsets(), [[4.0, 0.85]])
    budgets = sorted(line.get_xdata()[0] for line in _gid(ax, "budget"))
    assert budgets == [2.5, 4.5]
    assert ax.get_ylabel() == "validation roc_auc"


def test_plot_frontier_on_given_axes(result):
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    assert plot_frontier(result, ax=ax) is ax


def test_plot_frontier_several_results(result):
    other = SimpleNamespace(
        frontier=[_cand("all", 1.0, 0.6), _cand("all", 6.0, 0.95)],
        chosen=None,
        budget=4.5,
        scoring="roc_auc",
    )
    other.chosen = other.frontier[0]
    ax = plot_frontier({"cegb": result, "plain": other})
    (c1,) = _gid(ax, "chosen:cegb")
    (c2,) = _gid(ax, "chosen:plain")
    np.testing.assert_array_equal(c1.get_offsets(), [[4.0, 0.85]])
    np.testing.assert_array_equal(c2.get_offsets(), [[1.0, 0.6]])
    (f2,) = _gid(ax, "pareto:plain")
    np.testing.assert_array_equal(f2.get_xdata(), [1.0, 6.0])  # no pareto(): the same rule
    (cand,) = _gid(ax, "candidates:cegb")
    assert len(cand.get_offsets()) == len(result.frontier)
    assert sorted(line.get_xdata()[0] for line in _gid(ax, "budget")) == [2.5, 4.5]  # each budget once


def test_plot_frontier_list_labels(result):
    ax = plot_frontier([result, result], label=["a", "b"])
    assert _gid(ax, "chosen:a") and _gid(ax, "chosen:b")
    with pytest.raises(ValueError, match="one label per result"):
        plot_frontier([result, result], label=["a"])


@pytest.mark.parametrize("bad", [None, 3, {"x": 1}])
def test_plot_frontier_refuses_what_is_not_a_result(bad):
    with pytest.raises(TypeError, match="must be a BudgetTrainResult"):
        plot_frontier(bad)
    if not isinstance(bad, dict):
        with pytest.raises(TypeError, match="must be a BudgetTrainResult"):
            frontier_frame(bad)
