"""The fork's native QWYC early exit (issue "QWYC", execution): a model file carrying a QWYC
plan, predicted with pred_early_stop=true, stops every row exactly where budget_extras'
numpy predictor stops it (same scores, bit for bit), through Booster.predict and the CLI;
without pred_early_stop, and under upstream LightGBM, the file predicts the full ensemble."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from budget_extras import QWYC


@pytest.fixture(scope="module", params=["binary", "multiclass"])
def fitted(request, lgb):
    rng = np.random.default_rng(21)
    X = rng.normal(size=(6000, 8))
    score = X[:, 0] + 0.7 * X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=6000)
    if request.param == "binary":
        y = (score > 0).astype(float)
        params = {"objective": "binary"}
    else:
        y = np.digitize(score, [-0.6, 0.6]).astype(float)
        params = {"objective": "multiclass", "num_class": 3}
    booster = lgb.train({**params, "verbose": -1, "num_leaves": 15, "learning_rate": 0.1, "seed": 3},
                        lgb.Dataset(X[:4000], y[:4000]), num_boost_round=60)
    qwyc = QWYC(booster, alpha=0.01, random_state=0).fit(X[4000:5000])
    return request.param, booster, qwyc, X[5000:]


def _native(lgb, path, X):
    return lgb.Booster(model_file=str(path)).predict(X, raw_score=True, pred_early_stop=True)


def test_native_early_exit_equals_numpy(lgb, fitted, tmp_path):
    _, booster, qwyc, X = fitted
    path = tmp_path / "fast.txt"
    qwyc.save_model(path)
    expected = qwyc.predict(X)
    assert expected.trees_evaluated.mean() < booster.num_trees()  # rows do stop early
    np.testing.assert_array_equal(_native(lgb, path, X), expected.scores)
    # transformed output too: the objective's transform of the partial scores
    proba = lgb.Booster(model_file=str(path)).predict(X, pred_early_stop=True)
    np.testing.assert_allclose(proba, expected.probabilities, rtol=1e-12)


def test_plan_file_with_windows_line_ends(lgb, fitted, tmp_path):
    """A QWYC model file with "\\r\\n" line ends stops every row where the "\\n" file does."""
    _, booster, qwyc, X = fitted
    path = tmp_path / "fast.txt"
    qwyc.save_model(path)
    crlf = tmp_path / "fast_crlf.txt"
    crlf.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    np.testing.assert_array_equal(_native(lgb, crlf, X), _native(lgb, path, X))
    assert lgb.Booster(model_file=str(crlf)).num_trees() == booster.num_trees()


def test_without_early_stop_the_file_predicts_the_full_ensemble(lgb, fitted, tmp_path):
    _, booster, qwyc, X = fitted
    path = tmp_path / "fast.txt"
    qwyc.save_model(path)
    full = lgb.Booster(model_file=str(path)).predict(X, raw_score=True)
    np.testing.assert_allclose(full, booster.predict(X, raw_score=True), rtol=1e-12, atol=1e-12)
    # a subset of iterations ignores the plan
    part = lgb.Booster(model_file=str(path)).predict(X, raw_score=True, num_iteration=10, pred_early_stop=True)
    assert not np.array_equal(part, qwyc.predict(X).scores)


def _cli_predict(qwyc, X, tmp_path, *params):
    """The fork's CLI task=predict on X with qwyc's plan and extra parameters; the result file's array."""
    exe = shutil.which("lightgbm")
    assert exe, "the fork's lightgbm CLI must be on PATH"
    path = tmp_path / "fast.txt"
    qwyc.save_model(path)
    data = tmp_path / "x.csv"
    np.savetxt(data, np.column_stack([np.zeros(len(X)), X]), delimiter=",", fmt="%.17g")
    out = tmp_path / "pred.txt"
    subprocess.run([exe, "task=predict", f"data={data}", f"input_model={path}", f"output_result={out}",
                    "header=false", "label_column=0", "pred_early_stop=true", *params],
                   check=True, capture_output=True, timeout=300)
    return np.loadtxt(out, delimiter="\t")


def test_cli_predict_uses_the_plan(lgb, fitted, tmp_path):
    _, _, qwyc, X = fitted
    cli = _cli_predict(qwyc, X, tmp_path, "predict_raw_score=true")
    np.testing.assert_allclose(cli, qwyc.predict(X).scores, rtol=1e-15, atol=0)


@pytest.mark.parametrize(
    "edit, pattern",
    [(("qwyc_version=", "qwyc_version=9"), "qwyc_version"),
     (("qwyc_mode=", "qwyc_mode=bogus_"), "qwyc_mode"),
     (("qwyc_num_positions=", "qwyc_num_positions=1"), "qwyc_num_positions")],
)
def test_malformed_plans_are_refused(lgb, fitted, edit, pattern):
    _, _, qwyc, _ = fitted
    text = qwyc.to_model_string()
    assert edit[0] in text
    with pytest.raises(lgb.basic.LightGBMError, match=pattern):
        lgb.Booster(model_str=text.replace(edit[0], edit[1], 1))


def _trees_evaluated(lgb, path, X, **kwargs):
    return lgb.Booster(model_file=str(path)).predict(X, pred_early_stop=True, qwyc_trees_evaluated=True, **kwargs)


def test_native_trees_evaluated_per_row(lgb, fitted, tmp_path):
    kind, booster, qwyc, X = fitted
    path = tmp_path / "fast.txt"
    qwyc.save_model(path)
    expected = qwyc.predict(X).trees_evaluated
    assert len(np.unique(expected)) > 3  # rows stop at many different positions
    for raw_score in (False, True):
        got = _trees_evaluated(lgb, path, X, raw_score=raw_score)
        if kind == "multiclass":  # every class column of a row holds the row's count
            assert got.shape == (len(X), booster.num_model_per_iteration())
            np.testing.assert_array_equal(got, np.repeat(got[:, :1], got.shape[1], axis=1))
            got = got[:, 0]
        np.testing.assert_array_equal(got, expected)


def test_cli_trees_evaluated_per_row(lgb, fitted, tmp_path):
    kind, _, qwyc, X = fitted
    cli = _cli_predict(qwyc, X, tmp_path, "qwyc_trees_evaluated=true")
    if kind == "multiclass":
        cli = cli[:, 0]
    np.testing.assert_array_equal(cli, qwyc.predict(X).trees_evaluated)


def test_trees_evaluated_misuse_is_refused(lgb, fitted, tmp_path):
    _, booster, qwyc, X = fitted
    path = tmp_path / "fast.txt"
    qwyc.save_model(path)
    fast = lgb.Booster(model_file=str(path))
    err = lgb.basic.LightGBMError
    with pytest.raises(err, match=r"qwyc_trees_evaluated=true needs pred_early_stop=true"):
        fast.predict(X, qwyc_trees_evaluated=True)
    with pytest.raises(err, match=r"qwyc_trees_evaluated=true needs pred_early_stop=true.*pred_leaf=true"):
        fast.predict(X, pred_early_stop=True, qwyc_trees_evaluated=True, pred_leaf=True)
    with pytest.raises(err, match=r"qwyc_trees_evaluated=true needs the prediction to cover all"):
        fast.predict(X, pred_early_stop=True, qwyc_trees_evaluated=True, num_iteration=5)
    with pytest.raises(err, match=r"qwyc_trees_evaluated=true needs a model file carrying a QWYC plan"):
        booster.predict(X, pred_early_stop=True, qwyc_trees_evaluated=True)


def test_native_calibrated_scores_equal_python_for_any_valid_maps(lgb, tmp_path):
    """Version-2 plans: the native predictor applies the stored maps exactly as QWYC does, for the
    fitted maps and for valid maps chosen to hit every branch (one knot, extrapolation on both sides,
    interpolation, and the clip that keeps a score on its exit side)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(5000, 6))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.normal(size=5000) > 0).astype(float)
    booster = lgb.train({"objective": "binary", "verbose": -1, "num_leaves": 7, "seed": 1},
                        lgb.Dataset(X[:3000], y[:3000]), num_boost_round=40)
    qwyc = QWYC(booster, alpha=0.01, random_state=0).fit(X[3000:4000])
    assert qwyc.scores_ == "calibrated"
    fitted_text = qwyc.to_model_string()
    plan = qwyc.plan_
    counts = np.bincount(qwyc.predict(X[4000:]).positions_evaluated - 1, minlength=plan.n_positions)[:-1]
    exits = sorted(np.argsort(-counts)[:3].tolist())  # the three positions where most test rows exit
    assert counts[exits].min() > 0
    knots = {exits[0]: ([0.0], [0.5]), exits[1]: ([-1.0, 1.0], [-3.0, 4.0]),
             exits[2]: ([-2.0, -0.5, 0.0, 0.5], [3.0, 3.5, 4.0, 9.0])}  # 3.x: negatives clipped to 0
    offsets, xs, ys = [0], [], []
    for r in range(plan.n_positions):
        kx, ky = knots.get(r, ([], []))
        xs += kx
        ys += ky
        offsets.append(len(xs))
    lines = {"qwyc_score_offsets": " ".join(map(str, offsets)), "qwyc_score_x": " ".join(map(repr, xs)),
             "qwyc_score_y": " ".join(map(repr, ys))}
    hostile = "\n".join(f"{k}={lines[k]}" if k in lines else line
                        for line in fitted_text.split("\n") for k in [line.partition("=")[0]])
    X_test = X[4000:]
    for text in (fitted_text, hostile):
        python = QWYC.from_model_string(text).predict(X_test)
        native = lgb.Booster(model_str=text).predict(X_test, raw_score=True, pred_early_stop=True)
        np.testing.assert_array_equal(native, python.scores)
        np.testing.assert_array_equal(native > 0, python.labels)  # the exit label is kept
    exited = QWYC.from_model_string(hostile).predict(X_test).positions_evaluated - 1
    assert {exits[0], exits[1], exits[2]} <= set(exited.tolist())
