"""make_budget_scorer: GridSearchCV picks the best model within the budget; the scorer pickles."""

from __future__ import annotations

import pickle
import warnings

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import get_scorer, make_scorer, roc_auc_score
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from budget_extras import TreeEnsemble, cost_report
from budget_extras.core import make_budget_scorer
from budget_extras.datasets import load_thyroid

GRID = {"cegb_tradeoff": [0.0, 1e-3, 3e-3, 1e-2]}
BUDGET = 28.0


@pytest.fixture(scope="module")
def thyroid():
    d = load_thyroid(fti="sum")  # no group: the costs CEGB's lazy penalty sees are the ones charged
    X = pd.DataFrame(d.X_train, columns=list(d.feature_names))
    y = (d.y_train != 2).astype(int)  # abnormal vs normal
    return X, y, d.costs


def _est(costs):
    return lgb.LGBMClassifier(n_estimators=30, num_leaves=7, verbose=-1, cegb_tradeoff=0.0,
                              cegb_penalty_feature_lazy=list(costs.lazy))


def _cost(model, X, costs):
    return float(cost_report(TreeEnsemble.from_booster(model), X, costs).total_cost.mean())


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_grid_search_picks_within_budget(thyroid):
    X, y, costs = thyroid
    plain = GridSearchCV(_est(costs), GRID, scoring="roc_auc", cv=3).fit(X, y)
    assert plain.best_params_ == {"cegb_tradeoff": 0.0}
    assert _cost(plain.best_estimator_, X, costs) > BUDGET  # plain AUC picks a model over the budget

    scorer = make_budget_scorer("roc_auc", costs, budget=BUDGET)
    with pytest.warns(UserWarning, match="non-finite"):  # GridSearchCV names the over-budget candidates
        gs = GridSearchCV(_est(costs), GRID, scoring=scorer, cv=3, n_jobs=2).fit(X, y)
    assert gs.best_params_["cegb_tradeoff"] > 0
    assert np.isfinite(gs.best_score_)
    assert _cost(gs.best_estimator_, X, costs) <= BUDGET
    scores = gs.cv_results_["mean_test_score"]
    assert scores[0] == -np.inf  # tradeoff 0 is over the budget in every fold
    # among the candidates within budget, the best AUC wins
    auc = plain.cv_results_["mean_test_score"]
    ok = np.isfinite(scores)
    np.testing.assert_allclose(scores[ok], auc[ok])
    assert gs.best_index_ == int(np.flatnonzero(ok)[np.argmax(auc[ok])])


def test_score_is_metric_within_budget_and_penalty_over(thyroid):
    X, y, costs = thyroid
    m = _est(costs).fit(X.iloc[:2000], y[:2000])
    Xt, yt = X.iloc[2000:], y[2000:]
    cost = _cost(m, Xt, costs)
    auc = get_scorer("roc_auc")(m, Xt, yt)
    inside = make_budget_scorer("roc_auc", costs, budget=cost)
    assert inside(m, Xt, yt) == pytest.approx(auc)
    assert inside.last_cost_ == pytest.approx(cost)
    assert make_budget_scorer("auc", costs, budget=cost * 0.99)(m, Xt, yt) == -np.inf
    assert make_budget_scorer("roc_auc", costs, budget=cost * 0.99, penalty=-1.0)(m, Xt, yt) == -1.0
    # X_cost: the cost is measured on other rows
    other = make_budget_scorer("roc_auc", costs, budget=cost, X_cost=X.iloc[:10])
    other(m, Xt, yt)
    assert other.last_cost_ == pytest.approx(_cost(m, X.iloc[:10], costs))
    # a Booster with a callable metric; a Pipeline ending in the model
    b = m.booster_
    on_booster = make_budget_scorer(lambda est, X, y: roc_auc_score(y, est.predict(X)), costs, budget=cost)
    assert on_booster(b, Xt, yt) == pytest.approx(roc_auc_score(yt, b.predict(Xt)))
    pipe = make_pipeline(FunctionTransformer(validate=False), _est(costs)).fit(X.iloc[:2000], y[:2000])
    assert make_budget_scorer("roc_auc", costs, budget=cost)(pipe, Xt, yt) == pytest.approx(auc)


@pytest.mark.parametrize("metric", ["roc_auc", make_scorer(roc_auc_score)])
def test_pickles(thyroid, metric):
    X, y, costs = thyroid
    s = make_budget_scorer(metric, costs, budget=25.0, penalty="worst")
    s2 = pickle.loads(pickle.dumps(s))
    m = _est(costs).fit(X.iloc[:1000], y[:1000])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert s2(m, X.iloc[1000:], y[1000:]) == s(m, X.iloc[1000:], y[1000:])


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"budget": -1.0}, ValueError, "'budget' parameter of make_budget_scorer must be a finite number >= 0"),
        ({"budget": float("nan")}, ValueError, "'budget' parameter"),
        ({"budget": True}, ValueError, "'budget' parameter"),
        ({"budget": 1.0, "penalty": "lowest"}, ValueError, "'penalty' parameter of make_budget_scorer"),
        ({"budget": 1.0, "penalty": float("inf")}, ValueError, "'penalty' parameter .* finite number"),
        ({"budget": 1.0, "penalty": float("nan")}, ValueError, "'penalty' parameter .* finite number"),
        ({"budget": 1.0, "penalty": -np.inf}, ValueError, "'penalty' parameter .* finite number"),
        ({"budget": 1.0, "metric": "no_such_metric"}, ValueError, "names no scikit-learn scorer"),
        ({"budget": 1.0, "metric": 3}, TypeError, "'metric' parameter of make_budget_scorer"),
    ],
)
def test_refuses_bad_arguments(kwargs, exc, match):
    kw = {"metric": "roc_auc", **kwargs}
    metric = kw.pop("metric")
    with pytest.raises(exc, match=match):
        make_budget_scorer(metric, [1.0, 2.0], **kw)


def test_named_metric_on_a_booster_says_a_booster_needs_a_callable(thyroid):
    """A scorer name on a Booster is a TypeError naming the fix, not scikit-learn's internal AttributeError."""
    X, y, costs = thyroid
    b = _est(costs).fit(X.iloc[:500], y[:500]).booster_
    scorer = make_budget_scorer("roc_auc", costs, budget=1e9)
    with pytest.raises(TypeError, match=r"called on a Booster.*needs a callable metric"):
        scorer(b, X.iloc[500:], y[500:])
    with pytest.raises(TypeError, match="needs a callable metric"):  # over budget too: the same answer
        make_budget_scorer("roc_auc", costs, budget=0.0)(b, X.iloc[500:], y[500:])
