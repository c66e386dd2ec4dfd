"""QWYC's cross-fitted held-out correction (``holdout="crossfit"``, the default)."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras.qwyc import _calibration as cal
from budget_extras.qwyc import _kernels as core
from budget_extras.qwyc._estimator import QWYC


@pytest.fixture(scope="module")
def model():
    r = np.random.default_rng(7)
    X = r.normal(size=(26000, 5))
    z = X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * np.sin(3 * X[:, 3])
    y = (z + r.normal(scale=0.6, size=len(z)) > 0.3).astype(int)
    params = dict(objective="binary", num_leaves=8, learning_rate=0.1, verbose=-1, num_threads=1)
    b = lgb.train(params, lgb.Dataset(X[:3000], y[:3000]), 60)
    return b, X[3000:6000], X[6000:]


def test_crossfit_scores_every_row_with_a_plan_fit_without_it(model, monkeypatch):
    """Each calibration row's critical shift comes from a plan whose fitting rows exclude it."""
    b, Xc, _ = model
    probe = QWYC(b, holdout=None).fit(Xc[:10])
    _, first = np.unique(probe._outputs(Xc[:1000]).reshape(1000, -1), axis=0, return_index=True)
    X = Xc[np.sort(first)[:800]]  # rows with distinct per-tree outputs: a row is known by its outputs
    fitted_on: list[tuple[object, set[bytes]]] = []  # (plan, its fitting rows); keeps the plans alive
    scored: list[tuple[object, list[bytes]]] = []
    family, critical = cal.fit_family, cal.critical

    def spy_family(settings, rows, costs, rng):
        base, scale = family(settings, rows, costs, rng)
        fitted_on.append((base, {row.tobytes() for row in rows}))
        return base, scale

    def spy_critical(plan, scale, rows):
        scored.append((plan, [row.tobytes() for row in rows]))
        return critical(plan, scale, rows)

    monkeypatch.setattr(cal, "fit_family", spy_family)
    monkeypatch.setattr(cal, "critical", spy_critical)
    q = QWYC(b, alpha=0.02, n_folds=4).fit(X)
    assert len(scored) == 4 and len(fitted_on) == 5  # four fold plans, then the plan on all rows
    all_rows = {row.tobytes() for row in q._outputs(X)}
    assert len(all_rows) == len(X)
    seen: list[bytes] = []
    for plan, rows in scored:
        (fit_rows,) = [r for p, r in fitted_on if p is plan]
        assert fit_rows.isdisjoint(rows)  # never scored by a plan that fit them
        assert fit_rows | set(rows) == all_rows
        seen += rows
    assert sorted(seen) == sorted(all_rows)  # every row scored exactly once


def test_crossfit_lambda_is_the_conformal_shift_of_the_out_of_fold_rows(model):
    """lambda_ is recomputed from folds fit independently; the plan is the all-rows plan shifted by it."""
    b, Xc, _ = model
    X = Xc[:900]
    alpha, k = 0.02, 3
    q = QWYC(b, alpha=alpha, n_folds=k, random_state=3, rival=None).fit(X)
    F = q._outputs(X)[:, :, 0]
    fold = np.random.default_rng(3).permutation(len(X)) % k
    crit = np.empty(len(X))
    for j in range(k):
        plan = QWYC(b, alpha=alpha, alpha_fit=0.75 * alpha, holdout=None).fit(X[fold != j]).plan_  # the default budget
        crit[fold == j] = core.conformal_critical(F[fold == j], plan.order, plan.eps_neg, plan.eps_pos, np.ones(60))
    lam = core.conformal_lambda(crit, alpha)
    assert lam <= q.lambda_ <= lam + 1e-9 * max(1.0, abs(lam))
    assert q.n_holdout_ == len(X)
    assert q.holdout_disagreement_ <= alpha
    full = QWYC(b, alpha=alpha, alpha_fit=0.75 * alpha, holdout=None).fit(X).plan_
    np.testing.assert_array_equal(q.base_plan_.order, full.order)
    en, ep = core.shift_thresholds(full.eps_neg, full.eps_pos, q.lambda_, np.ones(60))
    np.testing.assert_array_equal(q.plan_.eps_neg, en)
    np.testing.assert_array_equal(q.plan_.eps_pos, ep)


def test_crossfit_keeps_test_disagreement_near_alpha(model):
    """Over calibration draws the cross-fitted plan disagrees on new rows about alpha; in-sample does not."""
    b, Xc, Xt = model
    alpha = 0.02
    full = b.predict(Xt, raw_score=True) > 0
    cross, insample = [], []
    for seed in range(3):
        X = Xc[np.random.default_rng(seed).permutation(len(Xc))[:2000]]
        cross.append(np.mean(QWYC(b, alpha=alpha, random_state=seed).fit(X).predict(Xt).labels != full))
        insample.append(np.mean(QWYC(b, alpha=alpha, holdout=None).fit(X).predict(Xt).labels != full))
    assert np.mean(cross) <= 1.1 * alpha  # 0.0194 here; scoring in-sample rows instead gives 0.0243
    assert np.mean(insample) > 1.25 * alpha


def test_crossfit_multiclass_and_errors(model):
    r = np.random.default_rng(1)
    X = r.normal(size=(1500, 4))
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2], [-0.5, 0.5])
    params = dict(objective="multiclass", num_class=3, num_leaves=8, learning_rate=0.2, verbose=-1, num_threads=1)
    mb = lgb.train(params, lgb.Dataset(X[:700], y[:700]), 15)
    q = QWYC(mb, alpha=0.05, n_folds=3).fit(X[700:1200])
    assert q.result_.success and q.holdout_disagreement_ <= 0.05
    b, Xc, _ = model
    with pytest.raises(ValueError, match=r"'n_folds' parameter of QWYC must be an integer >= 2 with holdout=.*Got 1"):
        QWYC(b, n_folds=1).fit(Xc[:100])
    with pytest.raises(ValueError, match=r"needs at least n_folds=5 rows\. Got 3"):
        QWYC(b).fit(Xc[:3])


@pytest.mark.parametrize("n_folds", [0, 1, -3, 2.5, True, None])
def test_n_folds_is_checked_only_where_the_crossfit_uses_it(model, n_folds):
    """A holdout fraction or no holdout ignores n_folds (it is accepted); the cross-fit refuses a bad one."""
    b, Xc, _ = model
    ref = QWYC(b, alpha=0.02, holdout=0.3).fit(Xc[:400])
    q = QWYC(b, alpha=0.02, holdout=0.3, n_folds=n_folds).fit(Xc[:400])
    np.testing.assert_array_equal(q.plan_.order, ref.plan_.order)
    assert q.lambda_ == ref.lambda_
    QWYC(b, holdout=None, n_folds=n_folds).fit(Xc[:100])
    with pytest.raises(ValueError, match=r"'n_folds' parameter of QWYC must be an integer >= 2 with holdout="):
        QWYC(b, holdout="crossfit", n_folds=n_folds).fit(Xc[:100])
