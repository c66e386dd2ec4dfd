"""QWYC(scores="calibrated"): exit scores mapped to the expected full score, exits and labels unchanged."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.metrics import log_loss, roc_auc_score

from budget_extras.qwyc import _scores
from budget_extras.qwyc._estimator import QWYC
from budget_extras.qwyc._format import read_qwyc_plan

N_ITER = 200


@pytest.fixture(scope="module")
def case():
    """Noisy binary task, 200 trees: partial exit scores lose AUC against the full model."""
    X, y = make_classification(
        n_samples=7000, n_features=10, n_informative=6, flip_y=0.1, random_state=0
    )
    params = dict(objective="binary", num_leaves=15, learning_rate=0.05, verbose=-1, num_threads=1, seed=0)
    b = lgb.train(params, lgb.Dataset(X[:3000], y[:3000]), N_ITER)
    Xc, Xt, yt = X[3000:5000], X[5000:], y[5000:]
    qp = QWYC(b, alpha=0.01, scores="partial").fit(Xc)
    qc = QWYC(b, alpha=0.01, scores="calibrated").fit(Xc)
    return b, Xc, Xt, yt, qp, qc


def test_calibrated_scores_close_the_auc_gap(case):
    b, _, Xt, yt, qp, qc = case
    full = b.predict(Xt, raw_score=True)
    auc_full = roc_auc_score(yt, full)
    rp, rc = qp.predict(Xt), qc.predict(Xt)
    auc_p, auc_c = roc_auc_score(yt, rp.scores), roc_auc_score(yt, rc.scores)
    assert rc.trees_evaluated.mean() < 0.4 * N_ITER  # a real early exit
    assert auc_full - auc_p > 0.02  # partial scores lose ranking quality
    assert auc_full - auc_c < 0.2 * (auc_full - auc_p)  # calibrated scores close >= 80% of the gap
    ll = [log_loss(yt, r.probabilities) for r in (rp, rc)]
    assert ll[1] < ll[0]
    assert ll[1] < log_loss(yt, 1 / (1 + np.exp(-full))) + 0.01
    # closer to the full score on average
    assert np.mean((rc.scores - full) ** 2) < 0.5 * np.mean((rp.scores - full) ** 2)
    np.testing.assert_array_equal(qc.decision_function(Xt), rc.scores)
    np.testing.assert_array_equal(qc.predict_proba(Xt)[:, 1], rc.probabilities)


def test_exits_and_labels_unchanged_by_the_option(case):
    _, Xc, Xt, _, qp, qc = case
    for name in ("order", "eps_neg", "eps_pos"):
        np.testing.assert_array_equal(getattr(qp.plan_, name), getattr(qc.plan_, name))
    assert qp.score_maps_ is None and qc.score_maps_ is not None
    for X in (Xc, Xt):
        rp, rc = qp.predict(X), qc.predict(X)
        np.testing.assert_array_equal(rp.labels, rc.labels)
        np.testing.assert_array_equal(rp.trees_evaluated, rc.trees_evaluated)
        np.testing.assert_array_equal(rc.labels, rc.scores > 0)  # the score still implies the label
        outs = qc.predict_outputs(qc._outputs(X))
        np.testing.assert_array_equal(outs.scores, rc.scores)
        np.testing.assert_array_equal(outs.labels, rc.labels)
    assert qc.result_ == qp.result_


def test_full_length_rows_are_the_full_raw_score_summed_in_plan_order(case):
    b, _, Xt, _, _, qc = case
    raw = b.predict(Xt, raw_score=True)
    res = qc.predict(Xt)
    end = res.positions_evaluated == N_ITER
    assert 0 < end.sum() < len(Xt)
    outputs = qc._outputs(Xt)
    in_plan_order = np.cumsum(outputs[:, qc.plan_.order, 0], axis=1)[:, -1]
    np.testing.assert_array_equal(res.scores[end], in_plan_order[end])
    np.testing.assert_array_equal(qc.predict_outputs(outputs).scores[end], in_plan_order[end])
    np.testing.assert_allclose(res.scores[end], raw[end], rtol=0, atol=1e-12)  # LightGBM's, up to reassociation
    # an estimator whose plan never exits returns the full scores for every row
    never = QWYC(b, alpha=0.0, holdout=None, scores="calibrated").fit(Xt[:5])
    never.plan_ = never.plan_.__class__(
        never.plan_.order,
        np.full(N_ITER, -np.inf),
        np.full(N_ITER, np.inf),
        None,
        0.0,
        never.plan_.mode,
        never.plan_.alpha,
    )
    np.testing.assert_allclose(never.predict(Xt).scores, raw, rtol=0, atol=1e-12)


def test_calibrated_scores_are_monotone_within_each_exit_position(case):
    _, _, Xt, _, qp, qc = case
    rp, rc = qp.predict(Xt), qc.predict(Xt)
    exited = rc.positions_evaluated < N_ITER
    checked = 0
    for r in np.unique(rc.positions_evaluated[exited]):
        rows = np.flatnonzero(rc.positions_evaluated == r)
        for lab in (False, True):
            sub = rows[rc.labels[rows] == lab]
            if sub.size < 2:
                continue
            o = np.argsort(rp.scores[sub], kind="stable")
            sp, sc = rp.scores[sub][o], rc.scores[sub][o]
            assert np.all(np.diff(sc) >= 0)
            strict = np.diff(sp) > 0
            # strictly increasing maps: ties only where the label clip binds
            clipped = (sc[1:] == 0) | (sc[1:] == np.nextafter(0, 1))
            assert np.all((np.diff(sc) > 0) | ~strict | clipped)
            checked += 1
    assert checked >= 5
    # every fitted map is strictly increasing, with slope 1 beyond its end knots
    maps = qc.score_maps_
    grid = np.linspace(-15, 15, 2001)
    for r in range(N_ITER - 1):
        kx, ky = maps.knots(r)
        if kx.size:
            v = _scores._apply_one(kx, ky, grid)
            assert np.all(np.diff(v) > 0)
            assert np.all(np.diff(kx) > 0) and np.all(np.diff(ky) > 0)


def test_knots_are_isotonic_block_means():
    s = np.array([0.0, 1.0, 2.0, 3.0, 3.0, 4.0])
    f = np.array([1.0, 0.0, 2.0, 5.0, 3.0, 6.0])
    kx, ky = _scores._knots(s, f)
    # blocks {0, 1} (violator pooled: mean 0.5), {2}, {3, 3} (tie averaged: 4), {4}
    np.testing.assert_allclose(kx, [0.5, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(ky, [0.5, 2.0, 4.0, 6.0])
    np.testing.assert_allclose(_scores._apply_one(kx, ky, np.array([-1.0, 1.25, 10.0])), [-1.0, 1.25, 12.0])


def test_recalibrate_refits_maps_and_keeps_labels(case):
    b, Xc, Xt, _, _, _ = case
    qp = QWYC(b, alpha=0.01, scores="partial").fit(Xc[:1000])
    qc = QWYC(b, alpha=0.01, scores="calibrated").fit(Xc[:1000])
    before = qc.score_maps_
    qp.recalibrate(Xc[1000:], alpha=0.02)
    qc.recalibrate(Xc[1000:], alpha=0.02)
    assert qc.score_maps_ is not before
    rp, rc = qp.predict(Xt), qc.predict(Xt)
    np.testing.assert_array_equal(rp.labels, rc.labels)
    np.testing.assert_array_equal(rp.trees_evaluated, rc.trees_evaluated)


@pytest.mark.fork  # the fork's predict reads the plan and its score maps
def test_model_file_carries_the_maps(case, tmp_path):
    _, _, Xt, _, qp, qc = case
    path = tmp_path / "m.txt"
    qc.save_model(path)
    assert "qwyc_version=2\n" in path.read_text()
    loaded = QWYC.from_model_file(path)
    assert loaded.scores_ == "calibrated"
    np.testing.assert_array_equal(loaded.predict(Xt).scores, qc.predict(Xt).scores)
    # the fork's native early exit returns the calibrated scores, bit for bit
    native = lgb.Booster(model_file=str(path)).predict(Xt, raw_score=True, pred_early_stop=True)
    np.testing.assert_array_equal(native, qc.predict(Xt).scores)
    # a plan read from the file applies its maps to the model it was made for
    from_plan = QWYC.from_plan(qc.booster_, read_qwyc_plan(path.read_text()))
    assert from_plan.scores_ == "calibrated"
    np.testing.assert_array_equal(from_plan.predict(Xt).scores, qc.predict(Xt).scores)
    # partial scores keep the version-1 plan
    qp.save_model(tmp_path / "p.txt")
    assert "qwyc_version=1\n" in (tmp_path / "p.txt").read_text()
    assert QWYC.from_model_file(tmp_path / "p.txt").scores_ == "partial"


def test_scores_parameter_validation():
    X, y = make_classification(n_samples=600, n_features=5, n_informative=3, n_classes=3, random_state=0)
    params = dict(objective="multiclass", num_class=3, num_leaves=7, verbose=-1, num_threads=1)
    mc = lgb.train(params, lgb.Dataset(X, y), 10)
    with pytest.raises(ValueError, match=r"binary models only.*scores='partial'"):
        QWYC(mc, scores="calibrated").fit(X)
    assert QWYC(mc, scores="partial").fit(X).score_maps_ is None
    auto = QWYC(mc).fit(X)  # the default: chosen on the calibration rows for binary models, partial for multiclass
    assert auto.get_params()["scores"] == "auto" and auto.scores_ == "partial" and auto.score_maps_ is None
    with pytest.raises(ValueError, match="'scores' parameter of QWYC must be one of"):
        QWYC(mc, scores="isotonic").fit(X)
    yb = (y > 0).astype(float)
    binary = lgb.train({**params, "objective": "binary", "num_class": 1}, lgb.Dataset(X, yb), 10)
    chosen = QWYC(binary).fit(X)
    assert chosen.scores_ == max(chosen.score_choice_, key=chosen.score_choice_.get)
    assert (chosen.score_maps_ is None) == (chosen.scores_ == "partial")
    fixed = QWYC(binary, scores="calibrated").fit(X)
    assert fixed.scores_ == "calibrated" and fixed.score_choice_ == {}


def test_expected_auc_is_the_pairwise_auc_under_the_full_models_probabilities():
    r = np.random.default_rng(3)
    full = r.normal(scale=2, size=40)
    s = np.round(full + r.normal(size=40))  # ties on purpose
    p = 1 / (1 + np.exp(-full))
    num = den = 0.0
    for i in range(40):
        for j in range(40):
            if i != j:
                w = p[i] * (1 - p[j])
                num += w * ((s[i] > s[j]) + 0.5 * (s[i] == s[j]))
                den += w
    assert _scores.expected_auc(s, full) == pytest.approx(num / den, rel=1e-12)
    assert _scores.expected_auc(full, full) > _scores.expected_auc(s, full)


def test_auto_keeps_partial_scores_where_maps_fit_on_other_rows_rank_worse():
    """Rows exit with their full score already summed: the maps, fit on the other folds, only add noise."""
    r = np.random.default_rng(0)
    n, t = 600, 6
    F = r.normal(scale=0.3, size=(n, t))
    early = np.abs(F[:, 0]) > 0.2
    F[early, 1:] = 0.0  # a row that exits at the first position has nothing left to add
    order = np.arange(t)
    en, ep = np.r_[-0.2, np.full(t - 1, -np.inf)], np.r_[0.2, np.full(t - 1, np.inf)]
    choice, crit = _scores.choose_scores(F, order, en, ep, threshold=0.0, n_folds=5, rng=np.random.default_rng(1))
    assert choice == "partial" and crit["partial"] > crit["calibrated"]


def test_auto_calibrates_where_partial_scores_lose_the_ranking(case):
    b, Xc, Xt, yt, qp, qc = case
    auto = QWYC(b, alpha=0.01).fit(Xc)
    assert auto.scores_ == "calibrated" and auto.score_choice_["calibrated"] > auto.score_choice_["partial"] + 0.01
    np.testing.assert_array_equal(auto.predict(Xt).scores, qc.predict(Xt).scores)
    assert roc_auc_score(yt, qc.predict(Xt).scores) > roc_auc_score(yt, qp.predict(Xt).scores) + 0.01


def test_too_few_calibration_rows_for_alpha_warn_and_say_the_guarantee_is_an_expectation(case):
    b, Xc, _, _, _, _ = case
    with pytest.warns(UserWarning, match=r"500 held-out rows are few for alpha=0\.01 \(fewer than 10 / alpha = 1000\)"):
        few = QWYC(b, alpha=0.01, scores="partial").fit(Xc[:500])
    assert "in expectation over the calibration draw" in few.result_.message
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enough = QWYC(b, alpha=0.01, scores="partial").fit(Xc)  # 2,000 rows: 20 disagreements allowed
    assert "in expectation" in enough.result_.message and "few" not in enough.result_.message
    assert "no held-out guarantee" in QWYC(b, alpha=0.01, holdout=None).fit(Xc[:500]).result_.message
