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
    qwyc = QWYC(alpha=0.01, random_state=0).fit(booster, X[4000:5000])
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


def test_without_early_stop_the_file_predicts_the_full_ensemble(lgb, fitted, tmp_path):
    _, booster, qwyc, X = fitted
    path = tmp_path / "fast.txt"
    qwyc.save_model(path)
    full = lgb.Booster(model_file=str(path)).predict(X, raw_score=True)
    np.testing.assert_allclose(full, booster.predict(X, raw_score=True), rtol=1e-12, atol=1e-12)
    # a subset of iterations ignores the plan
    part = lgb.Booster(model_file=str(path)).predict(X, raw_score=True, num_iteration=10, pred_early_stop=True)
    assert not np.array_equal(part, qwyc.predict(X).scores)


def test_cli_predict_uses_the_plan(lgb, fitted, tmp_path):
    _, _, qwyc, X = fitted
    exe = shutil.which("lightgbm")
    assert exe, "the fork's lightgbm CLI must be on PATH"
    path = tmp_path / "fast.txt"
    qwyc.save_model(path)
    data = tmp_path / "x.csv"
    np.savetxt(data, np.column_stack([np.zeros(len(X)), X]), delimiter=",", fmt="%.17g")
    out = tmp_path / "pred.txt"
    subprocess.run([exe, "task=predict", f"data={data}", f"input_model={path}", f"output_result={out}",
                    "header=false", "label_column=0", "predict_raw_score=true", "pred_early_stop=true"],
                   check=True, capture_output=True, timeout=300)
    cli = np.loadtxt(out, delimiter="\t")
    np.testing.assert_allclose(cli, qwyc.predict(X).scores, rtol=1e-15, atol=0)


@pytest.mark.parametrize(
    "edit, pattern",
    [(("qwyc_version=1", "qwyc_version=2"), "qwyc_version"),
     (("qwyc_mode=", "qwyc_mode=bogus_"), "qwyc_mode"),
     (("qwyc_num_positions=", "qwyc_num_positions=1"), "qwyc_num_positions")],
)
def test_malformed_plans_are_refused(lgb, fitted, edit, pattern):
    _, _, qwyc, _ = fitted
    text = qwyc.to_model_string()
    assert edit[0] in text
    with pytest.raises(lgb.basic.LightGBMError, match=pattern):
        lgb.Booster(model_str=text.replace(edit[0], edit[1], 1))
