"""Random ``cegb_budget`` configurations: the training rows' mean lazy cost never passes the budget.

Each draw combines an objective, tree size, tradeoff (zero included) and its scale, lazy costs,
feature groups, a categorical feature, missing values and a budget between 1% and 100% of the
unconstrained model's cost. The oracle is independent of the learner: ``budget_extras.cost_report``
of the saved model on the training rows (a Python walk of every row's paths; a group paid once per
row at its dearest member's cost). Without bagging or GOSS (whose slack docs/cegb.md measures) the
mean must be at most the budget.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from budget_extras import FeatureCosts, TreeEnsemble, cost_report

lgb = pytest.importorskip("lightgbm")
pytestmark = pytest.mark.fork  # cegb_budget and cegb_feature_group are the fork's

N_FEATURES = 6
CAT = 5
SETTINGS = settings(deadline=None, max_examples=40, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate], suppress_health_check=[HealthCheck.too_slow])

_rng = np.random.default_rng(11)
X = _rng.normal(size=(500, N_FEATURES))
X[:, CAT] = _rng.integers(0, 5, size=500)
X[_rng.random(500) < 0.05, 1] = np.nan
SIGNAL = X[:, 0] + 0.7 * np.nan_to_num(X[:, 1]) * X[:, 2] + 0.5 * (X[:, CAT] == 2) + 0.3 * _rng.normal(size=500)
costs = st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 5.0, 40.0]), min_size=N_FEATURES, max_size=N_FEATURES)


@st.composite
def configs(draw: st.DrawFn) -> tuple[dict, float]:
    p: dict = {
        "verbose": -1, "num_threads": 1, "deterministic": True, "seed": 2, "force_row_wise": True,
        "num_leaves": draw(st.integers(2, 15)), "min_data_in_leaf": draw(st.integers(1, 20)),
        "learning_rate": 0.2, "cegb_penalty_feature_lazy": draw(costs),
        "cegb_tradeoff": draw(st.sampled_from([0.0, 1e-4, 1e-2, 0.3])),
        "cegb_tradeoff_scale": draw(st.sampled_from(["none", "first_gain"])),
        "objective": draw(st.sampled_from(["regression", "binary", "multiclass"])),
    }
    if p["objective"] == "multiclass":
        p["num_class"] = 3
    if draw(st.booleans()):
        p["cegb_feature_group"] = draw(st.lists(st.integers(-1, 2), min_size=N_FEATURES, max_size=N_FEATURES))
    return p, draw(st.sampled_from([0.01, 0.1, 0.3, 0.6, 1.0]))


def _labels(objective: str) -> np.ndarray:
    if objective == "binary":
        return (SIGNAL > np.median(SIGNAL)).astype(float)
    if objective == "multiclass":
        return np.digitize(SIGNAL, np.quantile(SIGNAL, [0.33, 0.66])).astype(float)
    return SIGNAL


def _cost(booster: lgb.Booster, params: dict) -> float:
    groups = params.get("cegb_feature_group")
    fc = FeatureCosts(lazy=params["cegb_penalty_feature_lazy"],
                      groups=None if groups is None else [g if g >= 0 else None for g in groups])
    return float(cost_report(TreeEnsemble.from_booster(booster), X, fc).acquisition_cost.mean())


@SETTINGS
@given(draw=configs())
def test_training_rows_never_pay_more_than_the_budget(draw: tuple[dict, float]) -> None:
    params, fraction = draw
    y = _labels(params["objective"])
    train = lambda p: lgb.train(p, lgb.Dataset(X, y, categorical_feature=[CAT]), num_boost_round=6)  # noqa: E731
    free = {k: v for k, v in params.items() if k not in ("cegb_tradeoff", "cegb_tradeoff_scale")}
    budget = fraction * _cost(train(dict(free, cegb_tradeoff=0.0)), params)
    if budget <= 0:
        return
    capped = train(dict(params, cegb_budget=budget))
    assert _cost(capped, params) <= budget * (1 + 1e-9), (params, budget)
    assert np.all(np.isfinite(capped.predict(X)))
