"""QWYC(rival="pred_early_stop"): LightGBM's own early stopping competes with the fitted plan."""

from __future__ import annotations

import math

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.datasets import make_classification

from budget_extras.qwyc import _rival
from budget_extras.qwyc._estimator import QWYC
from budget_extras.qwyc._format import QWYCPlan
from budget_extras.qwyc._solver import shifted

N_ITER = 100


@pytest.fixture(scope="module")
def case():
    """A 100-tree model (learning rate 0.1): its training order is a strong early-exit order."""
    X, y = make_classification(n_samples=6000, n_features=10, n_informative=6, flip_y=0.05, random_state=0)
    params = dict(objective="binary", num_leaves=15, learning_rate=0.1, verbose=-1, num_threads=1, seed=0)
    b = lgb.train(params, lgb.Dataset(X[:2000], y[:2000]), N_ITER)
    return b, X[2000:4000], X[4000:]


def test_the_fit_returns_pred_early_stops_plan_where_that_rule_is_better(case):
    """The last trees first: the plan exits late and ranks worse, so the fit returns LightGBM's rule, bit for bit."""
    b, Xc, Xt = case
    reverse = np.arange(N_ITER)[::-1].copy()
    own = QWYC(b, alpha=0.1, order=reverse, scores="partial", rival=None).fit(Xc)
    q = QWYC(b, alpha=0.1, order=reverse, scores="partial").fit(Xc)
    win, first = q.rival_["winner"], q.rival_["candidates"][0]
    assert win["kind"] == "pred_early_stop" and first["kind"] == "qwyc"
    assert win["mean_cost"] < first["mean_cost"] and win["expected_auc"] >= first["expected_auc"]
    assert win["wrong"] <= first["wrong"]  # no more changed answers than the conformal shift allows
    np.testing.assert_array_equal(q.plan_.order, np.arange(N_ITER))
    res = q.predict(Xt)
    native = b.predict(Xt, raw_score=True, pred_early_stop=True, pred_early_stop_freq=win["freq"],
                       pred_early_stop_margin=win["margin"])
    np.testing.assert_array_equal(res.scores, native)  # LightGBM's pred_early_stop, bit for bit
    assert res.trees_evaluated.mean() < 0.5 * own.predict(Xt).trees_evaluated.mean()
    # the winner is a shifted base plan: recalibrating on the same rows keeps the training order
    again = QWYC(b, alpha=0.1, order=reverse, scores="partial").fit(Xc).recalibrate(Xc)
    assert math.isfinite(again.lambda_) and again.plan_.order.tolist() == list(range(N_ITER))


def test_without_a_rival_the_plan_is_the_held_out_correction(case):
    b, Xc, _ = case
    q = QWYC(b, alpha=0.01, rival=None).fit(Xc)
    assert q.rival_ is None
    ref = shifted(q.base_plan_, q.shift_scale_, q.lambda_, q.alpha_)
    for name in ("order", "eps_neg", "eps_pos"):
        np.testing.assert_array_equal(getattr(q.plan_, name), getattr(ref, name))


def test_the_contest_never_changes_more_held_out_answers_than_the_shift_of_alpha(case):
    b, Xc, _ = case
    base = QWYC(b, alpha=0.01, rival=None).fit(Xc)
    q = QWYC(b, alpha=0.01).fit(Xc)
    assert q.rival_["candidates"][0]["kind"] == "qwyc"
    assert q.rival_["candidates"][0]["lambda"] == base.lambda_
    assert q.holdout_disagreement_ <= base.holdout_disagreement_ + 1e-12
    assert q.rival_["winner"]["wrong"] <= q.rival_["candidates"][0]["wrong"]
    if q.rival_["winner"]["kind"] == "qwyc":
        assert q.lambda_ >= base.lambda_


def test_the_rival_is_refused_by_name():
    with pytest.raises(ValueError, match="rival"):
        QWYC(None, rival="early_stop").fit(np.zeros((10, 2)))


def _plan(n: int = 4) -> QWYCPlan:
    inf = np.full(n, np.inf)
    return QWYCPlan(np.arange(n), -inf, inf, None, 0.0, "binary_two_sided", 0.01)


class _FakeRule:
    """pred_early_stop references: 30 trees plus one per answer fewer than 10 changed."""

    def __init__(self, F, costs):
        del F, costs

    def reference(self, max_wrong):
        return _rival.Candidate(_plan(), 1.0, 30.0 + (10 - max_wrong), max_wrong, "pred_early_stop", 10)


def test_a_plan_that_ranks_worse_than_the_rule_gets_a_larger_shift(monkeypatch):
    """QWYC ranks below pred_early_stop at its shift: the shift grows until it ranks as well, with fewer trees."""
    monkeypatch.setattr(_rival, "PredEarlyStop", _FakeRule)

    def qwyc_at(lam):
        return _rival.Candidate(_plan(), lam, 10.0 + 100.0 * lam, max(0, 10 - int(100 * lam)), "qwyc")

    def auc_of(c):
        auc = 0.9 if c.kind == "pred_early_stop" else 0.85 + c.lambda_
        return _rival.Candidate(c.plan, c.lambda_, c.mean_cost, c.wrong, c.kind, c.freq, auc, {"partial": auc},
                                "partial")

    win, measured = _rival.contest(qwyc_at, 0.0, np.zeros((3, 4)), np.ones(4), auc_of)
    assert win.kind == "qwyc" and win.lambda_ > 0.0 and win.expected_auc >= 0.9
    assert measured[0].lambda_ == 0.0 and measured[0].expected_auc < 0.9
    assert win.mean_cost < 30.0 + (10 - win.wrong)  # still fewer trees than the rule at its changed answers


def test_a_plan_that_never_ranks_as_well_loses_to_the_rule(monkeypatch):
    monkeypatch.setattr(_rival, "PredEarlyStop", _FakeRule)

    def qwyc_at(lam):
        return _rival.Candidate(_plan(), lam, 10.0 + 10.0 * lam, 10, "qwyc")

    def auc_of(c):
        auc = 0.9 if c.kind == "pred_early_stop" else 0.5
        return _rival.Candidate(c.plan, c.lambda_, c.mean_cost, c.wrong, c.kind, c.freq, auc, {"partial": auc},
                                "partial")

    win, measured = _rival.contest(qwyc_at, 0.0, np.zeros((3, 4)), np.ones(4), auc_of)
    assert win.kind == "pred_early_stop" and win.wrong == 10
    assert len([c for c in measured if c.kind == "qwyc"]) == _rival.MAX_STEPS + 1


def test_the_rules_critical_shifts_are_those_of_the_plan_kernel():
    """All settings of pred_early_stop in one pass: the same doubles as conformal_critical on each rule."""
    from budget_extras.qwyc import _kernels as core
    from budget_extras.qwyc._baselines import pred_early_stop_plan

    rng = np.random.default_rng(0)
    F = rng.normal(0.0, 0.3, (400, 57))
    F[7] = 0.0  # partial sums exactly at the threshold never stop
    freqs = np.array([1, 2, 5, 10, 20])
    crit = _rival._critical_all(F, freqs)
    for j, f in enumerate(freqs.tolist()):
        p = pred_early_stop_plan(57, freq=f, margin=0.0)
        expected = core.conformal_critical(F, p.order, p.eps_neg, p.eps_pos, np.ones(57))
        np.testing.assert_array_equal(crit[:, j], expected)
    assert np.isfinite(crit).any() and np.isinf(crit[7]).all()


def test_the_cross_fitted_base_budget_defaults_to_three_quarters_of_alpha(case):
    """With the cross-fitted shift the base plans spend 0.75 alpha; with explicit held-out rows all of alpha."""
    b, Xc, Xt = case
    default = QWYC(b, alpha=0.02, rival=None).fit(Xc)
    three_quarters = QWYC(b, alpha=0.02, alpha_fit=0.015, rival=None).fit(Xc)
    whole = QWYC(b, alpha=0.02, alpha_fit=0.02, rival=None).fit(Xc)
    for name in ("order", "eps_neg", "eps_pos"):
        np.testing.assert_array_equal(getattr(default.base_plan_, name), getattr(three_quarters.base_plan_, name))
    assert not np.array_equal(default.base_plan_.eps_pos, whole.base_plan_.eps_pos)
    held_out = QWYC(b, alpha=0.02, rival=None).fit(Xc, X_valid=Xt)
    explicit = QWYC(b, alpha=0.02, alpha_fit=0.02, rival=None).fit(Xc, X_valid=Xt)
    np.testing.assert_array_equal(held_out.base_plan_.eps_pos, explicit.base_plan_.eps_pos)


def test_the_rule_is_taken_at_the_fewer_changed_answers_of_the_all_rows_plan(monkeypatch):
    """QWYC's candidate changes 10 held-out answers but its all-rows plan 4: the rule must change at most 4."""
    asked = []

    class Rule(_FakeRule):
        def reference(self, max_wrong):
            asked.append(max_wrong)
            return super().reference(max_wrong)

    monkeypatch.setattr(_rival, "PredEarlyStop", Rule)

    def qwyc_at(lam):
        return _rival.Candidate(_plan(), lam, 10.0, 10, "qwyc", level=4)

    def auc_of(c):
        return _rival.Candidate(c.plan, c.lambda_, c.mean_cost, c.wrong, c.kind, c.freq, 0.9, {"partial": 0.9},
                                "partial", c.level)

    win, _ = _rival.contest(qwyc_at, 0.0, np.zeros((3, 4)), np.ones(4), auc_of)
    assert asked == [4] and win.kind == "qwyc"
