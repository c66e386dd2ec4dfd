"""QWYC on real LightGBM models: LightGBM is the oracle (predictions, pred_early_stop, loading)."""

from __future__ import annotations

import argparse

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras.cli._qwyc import register
from budget_extras.qwyc._baselines import pred_early_stop_plan
from budget_extras.qwyc._estimator import QWYC
from budget_extras.qwyc._format import original_model_text, read_qwyc_plan, split_model_text


def make_data(seed: int, n: int, n_classes: int = 2):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, 6))
    X[:, 5] = r.integers(0, 6, size=n)  # categorical
    X[r.random(X.shape) < 0.05] = np.nan
    z = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1] * X[:, 2]) + (np.nan_to_num(X[:, 5]) % 3 == 1)
    if n_classes == 2:
        y = (z + r.normal(scale=0.5, size=n) > 0.6).astype(int)
    else:
        y = np.digitize(z + r.normal(scale=0.5, size=n), [-0.3, 0.8])
    return X, y


@pytest.fixture(scope="module")
def binary():
    X, y = make_data(0, 3000)
    params = dict(
        objective="binary",
        num_leaves=16,
        max_depth=4,
        learning_rate=0.1,
        verbose=-1,
        num_threads=1,
        min_data_in_leaf=5,
    )
    b = lgb.train(params, lgb.Dataset(X[:1500], y[:1500], categorical_feature=[5]), 60)
    return b, X[1500:2400], X[2400:]


@pytest.fixture(scope="module")
def multiclass():
    X, y = make_data(1, 2400, 3)
    params = dict(
        objective="multiclass", num_class=3, num_leaves=8, learning_rate=0.2, verbose=-1, num_threads=1
    )
    b = lgb.train(params, lgb.Dataset(X[:1200], y[:1200], categorical_feature=[5]), 25)
    return b, X[1200:1900], X[1900:]


@pytest.mark.parametrize("model", ["binary", "multiclass"])
def test_tree_outputs_and_full_walk_match_lightgbm(request, model):
    """Per-tree outputs (pred_leaf + the core's leaf values) and the core walker of QWYC.predict."""
    b, _, Xt = request.getfixturevalue(model)
    n_iter = b.num_trees() // b.num_model_per_iteration()
    k = b.num_model_per_iteration()
    q = QWYC.from_plan(b, pred_early_stop_plan(n_iter, freq=10**9, margin=0.0, num_class=k))
    raw = b.predict(Xt, raw_score=True).reshape(len(Xt), k)
    F3 = q._outputs(Xt)
    np.testing.assert_array_equal(np.cumsum(F3, axis=1)[:, -1, :], raw)
    res = q.predict(Xt)
    np.testing.assert_array_equal(res.scores.reshape(len(Xt), k), raw)
    assert np.all(res.trees_evaluated == n_iter * k)


@pytest.mark.parametrize(("freq", "margin"), [(1, 0.5), (1, 2.0), (3, 1.0), (7, 3.0), (100, 1.0)])
def test_pred_early_stop_reproduced_exactly(binary, freq, margin):
    b, _, Xt = binary
    q = QWYC.from_plan(b, pred_early_stop_plan(60, freq=freq, margin=margin))
    native = b.predict(
        Xt, raw_score=True, pred_early_stop=True, pred_early_stop_freq=freq, pred_early_stop_margin=margin
    )
    np.testing.assert_array_equal(q.predict(Xt).scores, native)
    np.testing.assert_array_equal(q.predict_outputs(q._outputs(Xt)).scores, native)


@pytest.mark.parametrize(("freq", "margin"), [(1, 0.5), (2, 2.0)])
def test_pred_early_stop_multiclass_reproduced_exactly(multiclass, freq, margin):
    b, _, Xt = multiclass
    q = QWYC.from_plan(b, pred_early_stop_plan(25, freq=freq, margin=margin, num_class=3))
    native = b.predict(
        Xt, raw_score=True, pred_early_stop=True, pred_early_stop_freq=freq, pred_early_stop_margin=margin
    )
    np.testing.assert_array_equal(q.predict(Xt).scores, native)


@pytest.mark.parametrize("alpha", [0.0, 0.01])
@pytest.mark.parametrize("order", ["greedy", "training", "greedy_mse"])
def test_in_sample_calibration_disagreement(binary, alpha, order):
    b, Xc, _ = binary
    q = QWYC(b, alpha=alpha, order=order, holdout=None).fit(Xc)
    full = b.predict(Xc, raw_score=True) > 0
    res = q.predict(Xc)
    assert np.mean(res.labels != full) <= alpha + 1e-12
    assert res.trees_evaluated.mean() < 60


@pytest.mark.parametrize("mode", ["two_sided", "negative_only"])
def test_predict_walk_equals_outputs_and_full_scores(binary, mode):
    b, Xc, Xt = binary
    q = QWYC(b, alpha=0.02, mode=mode, random_state=0).fit(Xc)
    walk = q.predict(Xt)
    outs = q.predict_outputs(q._outputs(Xt))
    np.testing.assert_array_equal(walk.scores, outs.scores)
    np.testing.assert_array_equal(walk.trees_evaluated, outs.trees_evaluated)
    went_to_end = walk.trees_evaluated == 60
    np.testing.assert_allclose(
        walk.scores[went_to_end], b.predict(Xt, raw_score=True)[went_to_end], rtol=0, atol=1e-12
    )
    np.testing.assert_array_equal(walk.labels, walk.scores > 0)
    if mode == "negative_only":
        assert not walk.labels[~went_to_end].any()


def test_alpha_zero_held_out_is_never_wrong(binary):
    b, Xc, Xt = binary
    q = QWYC(b, alpha=0.0, random_state=0).fit(Xc)  # conformal correction needs alpha >= 1/(n+1)
    assert q.lambda_ == np.inf and q.calibration_disagreement_ == 0.0
    assert np.all(q.predict(Xt).labels == (b.predict(Xt, raw_score=True) > 0))


def read_back(text, tmp_path):
    path = tmp_path / "fast_model.txt"
    path.write_text(text)
    return lgb.Booster(model_file=str(path)), lgb.Booster(model_str=text)


@pytest.mark.parametrize("drop_tree_sizes", [False, True])
def test_upstream_lightgbm_loads_plan_file_and_predicts_full_ensemble(binary, tmp_path, drop_tree_sizes):
    b, Xc, Xt = binary
    q = QWYC(b, alpha=0.01, random_state=0).fit(Xc)
    text = q.to_model_string()
    if drop_tree_sizes:
        text = "\n".join(line for line in text.split("\n") if not line.startswith("tree_sizes="))
    assert "qwyc_eps_pos=" in text.split("Tree=0", 1)[0]
    for booster in read_back(text, tmp_path):
        np.testing.assert_allclose(
            booster.predict(Xt, raw_score=True), b.predict(Xt, raw_score=True), rtol=0, atol=1e-12
        )
        np.testing.assert_array_equal(
            booster.predict(Xt, pred_leaf=True)[:, 0], b.predict(Xt, pred_leaf=True)[:, q.plan_.order[0]]
        )


def test_plan_round_trip(binary, tmp_path):
    b, Xc, Xt = binary
    q = QWYC(b, alpha=0.01, random_state=0).fit(Xc)
    path = tmp_path / "m.txt"
    q.save_model(path)
    plan = read_qwyc_plan(path.read_text())
    assert plan is not None
    np.testing.assert_array_equal(plan.order, q.plan_.order)
    np.testing.assert_array_equal(plan.eps_neg, q.plan_.eps_neg)
    np.testing.assert_array_equal(plan.eps_pos, q.plan_.eps_pos)
    q2 = QWYC.from_model_file(path)
    r1, r2 = q.predict(Xt), q2.predict(Xt)
    np.testing.assert_array_equal(r1.scores, r2.scores)
    np.testing.assert_array_equal(r1.trees_evaluated, r2.trees_evaluated)
    # the original model is recovered exactly (trees back in training order, no plan keys)
    _, blocks, _ = split_model_text(b.model_to_string())
    _, blocks2, _ = split_model_text(original_model_text(path.read_text()))
    assert blocks2 == blocks


def test_multiclass_plan_file(multiclass, tmp_path):
    b, Xc, Xt = multiclass
    q = QWYC(b, alpha=0.02, random_state=0).fit(Xc)
    res = q.predict(Xt)
    assert res.trees_evaluated.mean() < 75 and np.all(res.trees_evaluated % 3 == 0)
    for booster in read_back(q.to_model_string(), tmp_path):
        np.testing.assert_allclose(
            booster.predict(Xt, raw_score=True), b.predict(Xt, raw_score=True), atol=1e-12
        )
    q2 = QWYC.from_model_string(q.to_model_string())
    np.testing.assert_array_equal(q2.predict(Xt).scores, res.scores)
    qi = QWYC(b, alpha=0.0, holdout=None).fit(Xc)
    assert np.all(qi.predict(Xc).labels == np.argmax(b.predict(Xc, raw_score=True), axis=1))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(alpha=1.5), "'alpha' parameter of QWYC must be a number in \\[0, 1\\). Got 1.5"),
        (dict(order="best"), "'order' parameter of QWYC must be one of"),
        (dict(mode="positive"), "'mode' parameter of QWYC must be one of"),
        (dict(holdout=1.0), "'holdout' parameter of QWYC must be 'crossfit', None or a number in \\[0, 1\\)"),
        (dict(holdout="cv"), "'holdout' parameter of QWYC must be 'crossfit', None or a number"),
        (dict(costs=[1.0, 2.0]), "'costs' parameter of QWYC must hold 60 positive finite"),
        (dict(shift="wide"), "'shift' parameter of QWYC must be one of"),
        (dict(shift=[1.0, -1.0]), "'shift' parameter of QWYC must be one of .* 60 positive finite"),
    ],
)
def test_errors_name_the_argument(binary, kwargs, match):
    b, Xc, _ = binary
    with pytest.raises(ValueError, match=match):
        QWYC(b, **kwargs).fit(Xc)


def test_unfitted_and_bad_model_errors(tmp_path):
    with pytest.raises(ValueError, match="not fitted yet"):
        QWYC().predict(np.zeros((2, 2)))
    with pytest.raises(TypeError, match=r"'model' argument must be a lightgbm\.Booster"):
        QWYC(model=[3.0]).fit(np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"QWYC needs the LightGBM model to reorder"):
        QWYC().fit(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="has no QWYC plan"):
        QWYC.from_model_string("tree\nnum_class=1\n\nTree=0\nnum_leaves=1\n\nend of trees\n")


@pytest.mark.parametrize(
    ("extra", "kwargs"),
    [
        ([], {}),
        (
            ["--shift", "extreme_spacing", "--margin", "0.05", "--alpha-fit", "0"],
            {"shift": "extreme_spacing", "margin": 0.05, "alpha_fit": 0.0},
        ),
        (["--decision-threshold", "0.7"], {"decision_threshold": 0.7}),
        (["--scores", "partial"], {"scores": "partial"}),
        (["--holdout", "0.5"], {"holdout": 0.5}),
        (["--folds", "3"], {"n_folds": 3}),
    ],
)
def test_cli_equals_library(binary, tmp_path, extra, kwargs):
    b, Xc, _ = binary
    model = tmp_path / "model.txt"
    b.save_model(str(model))
    import pandas as pd

    pd.DataFrame(Xc, columns=b.feature_name()).to_csv(tmp_path / "calib.csv", index=False)
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(
        [
            "qwyc",
            "--model",
            str(model),
            "--calib",
            str(tmp_path / "calib.csv"),
            "--alpha",
            "0.01",
            "-o",
            str(tmp_path / "fast.txt"),
            *extra,
        ]
    )
    assert args.func(args) == 0
    lib = QWYC(str(model), alpha=0.01, random_state=0, **kwargs).fit(Xc)
    text = (tmp_path / "fast.txt").read_text()
    assert text == lib.to_model_string()
    assert ("qwyc_version=1\n" in text) == (kwargs.get("scores") == "partial")  # auto: maps, version 2


def test_cli_calib_is_read_by_name(binary, tmp_path, capsys):
    """A header that does not name the model's features is refused, not read by position."""
    import pandas as pd

    from budget_extras.cli._main import main

    b, Xc, _ = binary
    model = tmp_path / "model.txt"
    b.save_model(str(model))
    names = b.feature_name()
    df = pd.DataFrame(Xc, columns=names)
    # same number of columns, a label column first and one feature missing: was read by position
    wrong = df.drop(columns=[names[-1]])
    wrong.insert(0, "label", 1.0)
    wrong.to_csv(tmp_path / "wrong.csv", index=False)
    argv = ["qwyc", "--model", str(model), "--alpha", "0.01", "-o", str(tmp_path / "fast.txt"), "--calib"]
    assert main([*argv, str(tmp_path / "wrong.csv")]) == 2
    err = capsys.readouterr().err
    assert f"missing [{names[-1]!r}]" in err and "wrong.csv" in err
    assert not (tmp_path / "fast.txt").exists()
    # reordered columns and an extra label column are read by name
    right = df[list(reversed(names))]
    right.insert(1, "label", 1.0)
    right.to_csv(tmp_path / "right.csv", index=False)
    assert main([*argv, str(tmp_path / "right.csv")]) == 0
    lib = QWYC(str(model), alpha=0.01, random_state=0).fit(Xc)
    assert (tmp_path / "fast.txt").read_text() == lib.to_model_string()


def test_default_random_state_gives_the_same_plan(binary):
    # with the defaults (cross-fitting folds drawn from random_state), two fits
    # on the same rows must write the same plan (random_state=None drew a new split every run)
    b, Xc, _ = binary
    assert QWYC(b).get_params()["random_state"] == 0
    texts = {QWYC(b, alpha=0.01).fit(Xc).to_model_string() for _ in range(3)}
    assert len(texts) == 1


def test_cli_decision_threshold_changes_the_plan(binary, tmp_path):
    b, Xc, _ = binary
    model = tmp_path / "model.txt"
    b.save_model(str(model))
    import pandas as pd

    pd.DataFrame(Xc, columns=b.feature_name()).to_csv(tmp_path / "calib.csv", index=False)
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    common = ["qwyc", "--model", str(model), "--calib", str(tmp_path / "calib.csv"), "--alpha", "0.01"]
    args = parser.parse_args([*common, "-o", str(tmp_path / "a.txt"), "--decision-threshold", "0.7"])
    assert args.func(args) == 0
    plan = read_qwyc_plan((tmp_path / "a.txt").read_text())
    assert plan.decision_threshold == pytest.approx(0.7)
    q = QWYC.from_model_file(str(tmp_path / "a.txt"))
    full = b.predict(Xc, raw_score=True) > 0.7
    assert (q.predict(Xc).labels != full).mean() <= 0.05


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ("qwyc_version=", "qwyc_version=9", "Unsupported QWYC plan version 92"),
        ("qwyc_mode=binary_two_sided", "qwyc_mode=fast", "'qwyc_mode' must be one of"),
        ("qwyc_num_positions=60", "qwyc_num_positions=59", "qwyc_num_positions.*number of iterations, 60"),
    ],
)
def test_plan_reader_refuses_ill_formed(binary, old, new, match):
    b, Xc, _ = binary
    text = QWYC(b, alpha=0.01, random_state=0).fit(Xc).to_model_string()
    assert old in text
    with pytest.raises(ValueError, match=match):
        read_qwyc_plan(text.replace(old, new))


def test_plan_reader_refuses_nan(binary):
    b, Xc, _ = binary
    text = QWYC(b, alpha=0.01, random_state=0).fit(Xc).to_model_string()
    line = next(li for li in text.split("\n") if li.startswith("qwyc_eps_pos="))
    toks = line.split("=")[1].split()
    bad = "qwyc_eps_pos=" + " ".join(["nan", *toks[1:]])
    with pytest.raises(ValueError, match="'qwyc_eps_pos' contains NaN"):
        read_qwyc_plan(text.replace(line, bad))


def test_recalibrate_equals_fit_with_explicit_holdout(binary):
    b, Xc, Xt = binary
    a = QWYC(b, alpha=0.02, holdout=None, alpha_fit=0.0, margin=0.05).fit(Xc)
    a.recalibrate(Xt, alpha=0.02)
    c = QWYC(b, alpha=0.02, alpha_fit=0.0, margin=0.05).fit(Xc, X_valid=Xt)
    assert a.lambda_ == c.lambda_
    np.testing.assert_array_equal(a.plan_.eps_pos, c.plan_.eps_pos)
    np.testing.assert_array_equal(a.plan_.eps_neg, c.plan_.eps_neg)
    assert a.holdout_disagreement_ <= 0.02


def test_recalibrate_keeps_the_hyperparameter_alpha(binary):
    b, Xc, Xt = binary
    a = QWYC(b, alpha=0.02, holdout=None, alpha_fit=0.0, margin=0.05).fit(Xc)
    a.recalibrate(Xt, alpha=0.05)
    assert a.alpha == 0.02 and a.get_params()["alpha"] == 0.02
    assert a.alpha_ == a.plan_.alpha == a.result_.alpha == 0.05
    c = QWYC(b, alpha=0.05, alpha_fit=0.0, margin=0.05).fit(Xc, X_valid=Xt)
    assert a.lambda_ == c.lambda_


def test_refused_recalibrate_leaves_the_plan(binary):
    b, Xc, Xt = binary
    a = QWYC(b, alpha=0.02, holdout=None).fit(Xc)
    plan, result = a.plan_, a.result_
    with pytest.raises(ValueError, match="'alpha' parameter"):
        a.recalibrate(Xt, alpha=1.5)
    with pytest.raises(ValueError):
        a.recalibrate(Xt[:, :2])
    assert a.plan_ is plan and a.result_ is result and a.alpha_ == 0.02


def test_cost_report_counts_the_early_exit(binary):
    from budget_extras import FeatureCosts, TreeEnsemble

    b, Xc, Xt = binary
    q = QWYC(b, alpha=0.02, random_state=0).fit(Xc)
    rep = q.cost_report(Xt, FeatureCosts.uniform(6))
    res = q.predict(Xt)
    np.testing.assert_array_equal(rep.trees_evaluated, res.trees_evaluated)
    outs = TreeEnsemble.from_booster(b).tree_outputs(Xt)
    np.testing.assert_array_equal(outs, q._outputs(Xt)[:, :, 0])


def test_console_entry_point_runs_qwyc(binary, tmp_path):
    import pandas as pd

    from budget_extras.cli._main import main

    b, Xc, _ = binary
    b.save_model(str(tmp_path / "model.txt"))
    pd.DataFrame(Xc, columns=b.feature_name()).to_csv(tmp_path / "calib.csv", index=False)
    argv = [
        "qwyc",
        "--model",
        str(tmp_path / "model.txt"),
        "--calib",
        str(tmp_path / "calib.csv"),
        "--alpha",
        "0.01",
        "-o",
        str(tmp_path / "fast.txt"),
    ]
    assert main(argv) == 0
    assert read_qwyc_plan((tmp_path / "fast.txt").read_text()) is not None


def test_feature_costs_per_iteration(binary):
    from budget_extras import FeatureCosts, TreeEnsemble, cost_report

    b, Xc, _ = binary
    costs = FeatureCosts(np.arange(1.0, 7.0), split=0.1, tree=1.0)
    q = QWYC(b, alpha=0.02, costs=costs, random_state=0).fit(Xc[:300])
    ens = TreeEnsemble.from_booster(b)
    t = 7
    rep = cost_report(ens, Xc[:300], costs, tree_order=[t], n_trees=1)
    assert q.iteration_costs_[t] == pytest.approx(rep.total_cost.mean())
    assert q.iteration_costs_.shape == (60,) and np.all(q.iteration_costs_ > 1.0)


@pytest.mark.parametrize("shift", ["constant", "residual_std", "active_residual_std", "extreme_spacing", "array"])
@pytest.mark.parametrize("model", ["binary", "multiclass"])
def test_held_out_shift_shapes_respect_the_conformal_count(request, model, shift):
    """Every shape: sigma comes from the order rows; the held-out rows above the shift are at most m."""
    from budget_extras.qwyc import _kernels as core

    b, Xc, Xt = request.getfixturevalue(model)
    n_iter = b.num_trees() // b.num_model_per_iteration()
    sh = np.linspace(1.0, 0.1, n_iter) if shift == "array" else shift
    q = QWYC(b, alpha=0.05, shift=sh, alpha_fit=0.0, random_state=0).fit(Xc, X_valid=Xt)
    assert q.shift_scale_.shape[-1] == n_iter and np.all(q.shift_scale_ > 0)
    if shift == "array":
        np.testing.assert_array_equal(q.shift_scale_, sh[q.plan_.order])
    m = core.conformal_index(0.05, len(Xt))
    assert q.holdout_disagreement_ * len(Xt) <= m
    q2 = QWYC(b, alpha=0.05, shift=sh, alpha_fit=0.0, holdout=None).fit(Xc).recalibrate(Xt)
    assert q2.lambda_ == q.lambda_


def test_a_plan_that_stops_every_row_at_its_first_exit_is_a_success():
    """lambda_ = -inf (every threshold shifted to stop) is a plan, not 'no early exit'."""
    import numpy as np

    from budget_extras import QWYC, Status

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    b = lgb.train({"objective": "multiclass", "num_class": 3, "verbose": -1, "num_threads": 1},
                  lgb.Dataset(X[:2000], y[:2000]), num_boost_round=40)
    q = QWYC(b, alpha=0.05).fit(X[2000:])
    assert q.lambda_ == -np.inf
    assert q.result_.status == Status.SUCCESS and q.result_.success
    assert q.result_.mean_trees_evaluated < 120
