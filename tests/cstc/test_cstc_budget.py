"""CSTC defaults that give a frontier, the budget= search and its scoring=."""

from __future__ import annotations

import warnings

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from budget_extras import CSTC, Status

COSTS = [1.0, 10.0, 10.0, 10.0]  # one cheap feature, three expensive ones: full cost 31


def mixed_data(n: int = 700, seed: int = 0):
    """Every feature carries signal: depth-3 weak learners mix the cheap and expensive ones."""
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, 4))
    z = 1.0 * X[:, 0] + 0.6 * (X[:, 1] + X[:, 2] + X[:, 3])
    y = (z + r.normal(scale=0.7, size=n) > 0).astype(int)
    return X[:400], y[:400], X[400:550], y[400:550], X[550:], y[550:]


def test_default_lambda_path_has_intermediate_cost():
    # With the old default (weak_max_depth=3) every lam gave either the full cost 31 or a
    # constant tree (31, 31, 0 on these lams); stumps give a tree that pays the cheap feature only.
    Xt, yt, Xv, yv, Xs, ys = mixed_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m = CSTC(costs=COSTS, task="binary", budget=12.0, lams=[0.03, 0.1, 0.3], random_state=0)
        m.fit(Xt, yt, X_valid=Xv, y_valid=yv)
    path_costs = [p["cost"] for p in m.result_.path]
    assert any(0.5 < c < 31.0 - 5 for c in path_costs), path_costs
    assert m.result_.status == Status.SUCCESS, m.result_.message
    test_cost = m.cost_report(Xs).total_cost.mean()
    assert 0.5 < test_cost <= 12.0
    assert (m.predict(Xs) == ys).mean() > 0.6  # better than chance, not a constant


@pytest.fixture(scope="module")
def small():
    Xt, yt, Xv, yv, Xs, ys = mixed_data(seed=1)
    b = lgb.train(
        dict(objective="regression", max_depth=1, num_leaves=2, learning_rate=0.1, verbose=-1, num_threads=1,
             min_data_in_leaf=5, seed=0),
        lgb.Dataset(Xt, yt.astype(float)),
        num_boost_round=30,
    )
    return b, Xt, yt, Xv, yv, Xs, ys


@pytest.mark.slow  # more than 20 s on 2 cores
def test_budget_selection_is_monotone_and_flags_infeasible(small):
    b, Xt, yt, Xv, yv, _, _ = small
    lams = [0.003, 0.1, 1.0]
    prev = -np.inf
    for budget in (0.0, 1.0, 12.0, 40.0):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m = CSTC(b, costs=COSTS, task="binary", budget=budget, lams=lams).fit(Xt, yt, X_valid=Xv, y_valid=yv)
        r = m.result_
        chosen = next(p for p in r.path if p["lam"] == r.lam)
        assert chosen["cost"] == pytest.approx(m.cost_report(Xv).total_cost.mean())
        feasible = [p for p in r.path if p["cost"] <= budget]
        if feasible:
            assert chosen["cost"] <= budget
            assert chosen["score"] == max(p["score"] for p in feasible)
            assert chosen["score"] >= prev  # a larger budget never scores lower
            prev = chosen["score"]
            assert (r.status in (Status.CONSTANT, Status.TRIVIAL)) == bool(chosen["constant"])
            if chosen["constant"]:  # CONSTANT: nothing else fits; TRIVIAL: the constant scores best
                assert (r.status == Status.CONSTANT) == all(p["constant"] for p in feasible)
        else:
            assert r.status == Status.INFEASIBLE and not r.success
            assert chosen["cost"] == min(p["cost"] for p in r.path)
        assert (r.status != Status.SUCCESS) == any("CSTC:" in str(x.message) for x in w)
    assert r.status == Status.SUCCESS and r.lam == 0.003  # the largest budget keeps the most accurate tree


def test_budget_needs_validation_and_checks_arguments(small):
    b, Xt, yt, *_ = small
    with pytest.raises(ValueError, match="needs validation data"):
        CSTC(b, costs=COSTS, task="binary", budget=5.0).fit(Xt, yt)
    with pytest.raises(ValueError, match="'budget' parameter of CSTC"):
        CSTC(b, budget=-1.0).fit(Xt, yt)
    with pytest.raises(ValueError, match="'lams' parameter of CSTC"):
        CSTC(b, budget=1.0, lams=[]).fit(Xt, yt, X_valid=Xt, y_valid=yt)
    with pytest.raises(ValueError, match=r"'scoring' parameter of CSTC must be None.*Got 'no_such_scorer'"):
        CSTC(b, task="binary", budget=1.0, scoring="no_such_scorer").fit(Xt, yt, X_valid=Xt, y_valid=yt)


def test_scoring_changes_the_selection_on_imbalanced_data():
    # 4% positives: the constant tree ties the best accuracy (0.957 on validation), so
    # accuracy returns it (status 3, with a warning); AUC keeps the tree that ranks (0.91).
    r = np.random.default_rng(2)
    X = r.normal(size=(1200, 3))
    y = (1.2 * X[:, 1] + 0.3 * X[:, 0] + 1.5 * r.normal(size=1200) > 3.5).astype(int)
    b = lgb.train(
        dict(objective="regression", max_depth=1, num_leaves=2, learning_rate=0.1, verbose=-1, num_threads=1,
             min_data_in_leaf=5, seed=0),
        lgb.Dataset(X[:600], y[:600].astype(float)),
        num_boost_round=30,
    )
    fits = {}
    for sc in (None, "roc_auc", lambda est, X, y: roc_auc_score(y, est.predict_proba(X)[:, 1])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            m = CSTC(b, costs=[1.0, 10.0, 10.0], task="binary", budget=100.0, scoring=sc, lams=[0.01, 0.1, 1.0])
            fits[sc if sc is None or isinstance(sc, str) else "callable"] = m.fit(X[:600], y[:600], X_valid=X[600:],
                                                                                     y_valid=y[600:])
    acc, auc, call = fits[None], fits["roc_auc"], fits["callable"]
    assert acc.result_.scoring == "accuracy" and auc.result_.scoring == "roc_auc"
    assert acc.result_.lam != auc.result_.lam
    assert acc.result_.status == Status.TRIVIAL and "constant" in acc.result_.message
    assert auc.result_.status == Status.SUCCESS
    assert call.result_.lam == auc.result_.lam
    Xv, yv = X[600:], y[600:]
    assert roc_auc_score(yv, auc.decision_function(Xv)) > roc_auc_score(yv, acc.decision_function(Xv)) + 0.2
