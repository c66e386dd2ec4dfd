"""The budget sweep finds the adaptive system of four-cluster constructions whose optimum is known.

Two features ``x1, x2`` with costs ``c1, c2``; clusters A, B (easy: ``x1`` separates them) and C,
D (hard: two parallel stripes that need both features), :func:`make_four_clusters`. The cheapest
fully accurate system gates on ``x1``, answers A and B with an ``x1``-only ``f1`` and sends C and
D to ``f0``: mean cost ``c1 + (w_C + w_D) * c2``; ``f0`` alone costs ``c1 + c2``. Before the fix
every variant below came back INFEASIBLE at about ``f0``'s cost (the q-step's soft ``q`` kept
weight on the hard rows, ``f1`` bought ``x2`` to fit them, and the gate routed exactly
``p_full`` of the rows).
"""

import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from budget_extras import AdaptGBRT, Status
from budget_extras.adapt._synthetic import make_four_clusters

_KW = dict(f0_features="all", n_trees=20, max_em_iter=4, p_full_grid=[0.5, 0.7], gamma_grid=[0.01])


def _problem(weights, seed=1):
    r = np.random.default_rng(seed)
    X, y = make_four_clusters(1500, rng=r, weights=weights)
    Xv, yv = make_four_clusters(1000, rng=r, weights=weights)
    Xt, yt = make_four_clusters(2000, rng=r, weights=weights)
    f0 = RandomForestClassifier(50, random_state=0).fit(X, y)
    return X, y, Xv, yv, Xt, yt, f0


@pytest.mark.parametrize(
    ("weights", "costs", "budget"),
    [
        ((0.2, 0.2, 0.3, 0.3), (1.0, 1.0), 1.7),  # optimum 1.6, f0 2
        ((0.3, 0.3, 0.2, 0.2), (1.0, 1.0), 1.5),  # optimum 1.4
        ((0.25, 0.25, 0.25, 0.25), (0.5, 2.0), 1.7),  # optimum 1.5, f0 2.5
        ((0.1, 0.3, 0.3, 0.3), (1.0, 2.0), 2.6),  # unequal easy clusters; optimum 2.2, f0 3
    ],
)
def test_budget_sweep_finds_the_known_optimum(weights, costs, budget):
    X, y, Xv, yv, Xt, yt, f0 = _problem(weights)
    opt_cost = costs[0] + (weights[2] + weights[3]) / sum(weights) * costs[1]
    f0_acc = float(np.mean(f0.predict(Xt) == yt))  # the optimum's accuracy (0.997-0.999)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = AdaptGBRT(f0, budget=budget, costs=list(costs), **_KW).fit(X, y, X_valid=Xv, y_valid=yv)
    assert m.result_.status == Status.SUCCESS, m.result_.message
    best = m.result_.results.loc[m.result_.best_index]
    assert best["cost"] <= budget
    ev = m.evaluate(Xt, yt)
    assert ev["accuracy"] >= f0_acc - 0.005
    assert ev["cost"] <= min(budget, opt_cost + 0.2) + 0.02
    # the cheapest candidate at full validation accuracy is the optimum (within sampling)
    df = m.result_.results
    assert df[df["accuracy"] >= best["accuracy"] - 0.002]["cost"].min() <= opt_cost + 0.03


def test_budget_below_the_cheapest_useful_system_is_honest():
    """x1 alone costs 1: with budget 0.8 no useful system exists, and the result says so."""
    X, y, Xv, yv, *_, f0 = _problem((0.2, 0.2, 0.3, 0.3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = AdaptGBRT(f0, budget=0.8, costs=[1.0, 1.0], **_KW).fit(X, y, X_valid=Xv, y_valid=yv)
    assert m.result_.status in (Status.TRIVIAL, Status.INFEASIBLE)
    assert not m.result_.success
