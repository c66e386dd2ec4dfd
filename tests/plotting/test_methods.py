"""QWYC plots and the sweep tables of AdaptGBRT, CSTC and BudgetPrune: the numbers are the estimators'."""

from __future__ import annotations

import copy

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from budget_extras import CSTC, QWYC, AdaptGBRT, BudgetPrune
from budget_extras.plotting import (
    adapt_frame,
    budgetprune_frame,
    cstc_frame,
    plot_qwyc,
    plot_qwyc_trees,
    qwyc_alpha_frame,
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(900, 5))
    y = (X[:, 0] + 0.8 * X[:, 1] - 0.6 * X[:, 2] + 0.3 * rng.normal(size=900) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def booster(data):
    X, y = data
    params = {"objective": "binary", "verbose": -1, "num_leaves": 7, "min_data_in_leaf": 10}
    return lgb.train(params, lgb.Dataset(X[:400], y[:400]), num_boost_round=20)


@pytest.fixture(scope="module")
def qwyc(data, booster):
    X, _ = data
    return QWYC(booster, alpha=0.05, random_state=0).fit(X[400:650])


def test_qwyc_trees_histogram_is_predict(qwyc, data):
    X = data[0][650:]
    ax = plot_qwyc_trees(qwyc, X)
    t = qwyc.predict(X).trees_evaluated
    values, counts = np.unique(t, return_counts=True)
    bars = [p for p in ax.patches if p.get_gid() == "trees_evaluated"]
    np.testing.assert_array_equal([p.get_height() for p in bars], counts)
    np.testing.assert_allclose([p.get_x() + p.get_width() / 2 for p in bars], values)
    lines = {ln.get_gid(): ln.get_xdata()[0] for ln in ax.lines}
    assert lines["mean"] == pytest.approx(t.mean())
    assert lines["full"] == 20


def test_qwyc_alpha_frame_does_not_modify_and_matches_recalibrate(qwyc, data):
    X = data[0]
    before = (copy.deepcopy(qwyc.plan_), qwyc.alpha_, qwyc.lambda_)
    df = qwyc_alpha_frame(qwyc, X[650:], X[400:650], [0.01, 0.1])
    assert (qwyc.plan_.order == before[0].order).all() and qwyc.alpha_ == before[1] and qwyc.lambda_ == before[2]
    q = copy.deepcopy(qwyc).recalibrate(X[400:650], alpha=0.1)
    res = q.predict(X[650:])
    full = qwyc.booster_.predict(X[650:], raw_score=True) > 0
    assert df["disagreement"].iloc[1] == pytest.approx(np.mean(res.labels != full))
    assert df["mean_trees"].iloc[1] == pytest.approx(res.trees_evaluated.mean())
    assert df["mean_trees"].iloc[0] >= df["mean_trees"].iloc[1]  # a smaller alpha exits later


def test_plot_qwyc_two_panels(qwyc, data):
    X = data[0]
    axes = plot_qwyc(qwyc, X[650:], X_holdout=X[400:650], alphas=[0.02, 0.2])
    df = qwyc_alpha_frame(qwyc, X[650:], X[400:650], [0.02, 0.2])
    (dis,) = [ln for ln in axes[1].lines if ln.get_gid() == "disagreement"]
    np.testing.assert_allclose(dis.get_xdata(), df["alpha"])
    np.testing.assert_allclose(dis.get_ydata(), df["disagreement"])
    with pytest.raises(ValueError, match="'X_holdout' argument of plot_qwyc"):
        plot_qwyc(qwyc, X[650:], alphas=[0.1])


def test_adapt_frame(data):
    X, y = data
    f0 = lgb.LGBMClassifier(n_estimators=10, num_leaves=7, verbose=-1).fit(X[:400], y[:400])
    m = AdaptGBRT(
        f0, costs=[1.0, 1.0, 5.0, 5.0, 5.0], budget=8.0, p_full_grid=[0.3, 0.6], gamma_grid=[0.01],
        n_trees=5, max_em_iter=2,
    )
    m.fit(X[:400], y[:400], X_valid=X[400:650], y_valid=y[400:650])
    df = adapt_frame(m)
    r = m.sweep_result_
    pd.testing.assert_frame_equal(df.drop(columns="chosen"), r.results)
    assert df["chosen"].sum() == 1 and bool(df["chosen"].iloc[r.best_index])
    pd.testing.assert_frame_equal(adapt_frame(r), df)


def test_cstc_frame(data):
    X, y = data
    m = CSTC(costs=[1.0, 2.0, 3.0, 1.0, 1.0], task="binary", budget=10.0, lams=[0.01, 0.1], depth=2, n_weak=20,
             weak_max_depth=1, random_state=0)
    m.fit(X[:400], y[:400], X_valid=X[400:650], y_valid=y[400:650])
    df = cstc_frame(m)
    path = m.result_.path
    assert len(df) == len(path)
    np.testing.assert_array_equal(df["lam"], [p["lam"] for p in path])
    np.testing.assert_array_equal(df["cost"], [p["cost"] for p in path])
    np.testing.assert_array_equal(df["score"], [p["score"] for p in path])
    assert df["chosen"].sum() == 1 and df.loc[df["chosen"], "lam"].item() == m.result_.lam


@pytest.mark.filterwarnings("ignore:BudgetPrune. the solve at lam:UserWarning")
def test_budgetprune_frame(data):
    X, y = data
    forest = lgb.train(
        {"objective": "binary", "boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1, "num_leaves": 7,
         "verbose": -1},
        lgb.Dataset(X[:400], y[:400]),
        num_boost_round=5,
    )
    full = BudgetPrune(forest, lam=0.0, costs=[1.0] * 5).fit(X[:400], y[:400])
    budget = 0.6 * full.result_.acquisition_term
    m = BudgetPrune(forest, budget=budget, costs=[1.0] * 5).fit(X[:400], y[:400], X_valid=X[400:650],
                                                                 y_valid=y[400:650])
    df = budgetprune_frame(m)
    assert len(df) == len(m.search_)
    np.testing.assert_array_equal(df["cost"], [c["cost"] for c in m.search_])
    chosen = df[df["chosen"]]
    assert len(chosen) >= 1
    assert (chosen["lam"] == m.lam_).all() and (chosen["score"] == m.score_).all()
    assert (chosen["cost"] <= budget + 1e-9).all()
    fixed = budgetprune_frame(full)
    assert list(fixed.columns) == ["lam", "cost", "error_term", "status", "chosen"] and fixed["chosen"].all()


@pytest.mark.parametrize("fn", [adapt_frame, cstc_frame, budgetprune_frame])
def test_frames_refuse_unfitted(fn):
    with pytest.raises(TypeError, match="must be"):
        fn(object())
