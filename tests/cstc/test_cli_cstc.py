"""The ``budget-extras cstc`` subcommand gives the library's answer."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from budget_extras import CSTC, FeatureCosts
from budget_extras.cli._cstc import result_dict
from budget_extras.cli._main import main


@pytest.fixture
def csvs(tmp_path):
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["cheap", "mid", "dear"])
    y = np.where(X["cheap"] + 0.5 * X["dear"] + 0.3 * rng.normal(size=300) > 0, 1, 0)
    df = X.assign(label=y)
    df.iloc[:200].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[200:250].to_csv(tmp_path / "valid.csv", index=False)
    df.iloc[250:].to_csv(tmp_path / "test.csv", index=False)
    pd.DataFrame({"feature": ["cheap", "mid", "dear"], "cost": [1.0, 3.0, 9.0]}).to_csv(
        tmp_path / "costs.csv", index=False)
    return tmp_path, df


def test_cli_equals_library(csvs, capsys):
    d, df = csvs
    argv = ["cstc", "--train", str(d / "train.csv"), "--valid", str(d / "valid.csv"), "--test",
            str(d / "test.csv"), "--label", "label", "--costs", str(d / "costs.csv"), "--task", "binary",
            "--depth", "2", "--lam", "0.01", "--n-weak", "20", "--weak-max-depth", "2", "--json",
            "--predictions", str(d / "pred.csv")]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    cols = ["cheap", "mid", "dear"]
    costs = FeatureCosts({"cheap": 1.0, "mid": 3.0, "dear": 9.0}, feature_names=cols)
    m = CSTC(costs=costs, depth=2, lam=0.01, task="binary", n_weak=20, weak_max_depth=2, random_state=0)
    tr, va, te = df.iloc[:200], df.iloc[200:250], df.iloc[250:]
    m.fit(tr[cols], tr["label"].to_numpy(), X_valid=va[cols], y_valid=va["label"].to_numpy())
    expected = result_dict(m, te[cols], te["label"].to_numpy())
    assert out == json.loads(json.dumps(expected))
    pred = pd.read_csv(d / "pred.csv")
    np.testing.assert_allclose(pred["total_cost"].mean(), out["cost"]["total_cost"]["mean"])
    np.testing.assert_array_equal(pred["prediction"], m.predict(te[cols]))


def test_cli_reports_a_missing_label(csvs, capsys):
    d, _ = csvs
    assert main(["cstc", "--train", str(d / "train.csv"), "--label", "nope"]) == 2
    assert "no label column 'nope'" in capsys.readouterr().err


def _train_argv(d, *extra):
    return ["cstc", "--train", str(d / "train.csv"), "--valid", str(d / "valid.csv"), "--label", "label",
            "--costs", str(d / "costs.csv"), "--task", "binary", "--depth", "2", "--n-weak", "20",
            "--weak-max-depth", "2", *extra]


@pytest.fixture
def saved_model(csvs, capsys):
    d, df = csvs
    assert main(_train_argv(d, "--output", str(d / "cstc.json"))) == 0
    capsys.readouterr()
    return d, df, d / "cstc.json"


def test_output_is_the_library_model(saved_model):
    _, df, path = saved_model
    cols = ["cheap", "mid", "dear"]
    costs = FeatureCosts({"cheap": 1.0, "mid": 3.0, "dear": 9.0}, feature_names=cols)
    m = CSTC(costs=costs, depth=2, lam=0.01, task="binary", n_weak=20, weak_max_depth=2, random_state=0)
    tr, va = df.iloc[:200], df.iloc[200:250]
    m.fit(tr[cols], tr["label"].to_numpy(), X_valid=va[cols], y_valid=va["label"].to_numpy())
    loaded = CSTC.load(path)
    np.testing.assert_array_equal(loaded.decision_function(df[cols]), m.decision_function(df[cols]))
    np.testing.assert_array_equal(loaded.cost_report(df[cols]).total_cost, m.cost_report(df[cols]).total_cost)


def test_predict_equals_library(saved_model, capsys):
    d, df, path = saved_model
    assert main(["cstc", "predict", "--model-file", str(path), "--data", str(d / "test.csv"),
                 "-o", str(d / "preds.csv")]) == 0
    pred = pd.read_csv(d / "preds.csv")
    m = CSTC.load(path)
    X = df.iloc[250:][["cheap", "mid", "dear"]]
    rep = m.cost_report(X)
    assert list(pred.columns) == ["row", "prediction", "proba_0", "proba_1", "leaf", "acquisition_cost",
                                  "eval_cost", "total_cost"]
    np.testing.assert_array_equal(pred["prediction"], m.predict(X))
    np.testing.assert_allclose(pred[["proba_0", "proba_1"]].to_numpy(), m.predict_proba(X), rtol=1e-15)
    np.testing.assert_array_equal(pred["leaf"], m.apply(X))
    np.testing.assert_allclose(pred["total_cost"], rep.total_cost, rtol=1e-15)
    np.testing.assert_allclose(pred["acquisition_cost"], rep.acquisition_cost, rtol=1e-15)
    # without -o: the same table on standard output; the label column is not needed
    X.to_csv(d / "unlabelled.csv", index=False)
    capsys.readouterr()
    assert main(["cstc", "predict", "--model-file", str(path), "--data", str(d / "unlabelled.csv")]) == 0
    assert capsys.readouterr().out == (d / "preds.csv").read_text()


def test_evaluate_prints_what_training_prints(saved_model, capsys):
    d, _, path = saved_model
    for fmt in ([], ["--json"]):
        assert main(_train_argv(d, "--test", str(d / "test.csv"), *fmt)) == 0
        trained = capsys.readouterr().out
        assert main(["cstc", "evaluate", "--model-file", str(path), "--data", str(d / "test.csv"),
                     "--label", "label", *fmt]) == 0
        assert capsys.readouterr().out == trained
    out = json.loads(trained)
    assert set(out) >= {"accuracy", "cost", "n_nodes", "rows_per_leaf", "optimization"}


def test_predict_with_other_costs(saved_model, capsys):
    d, _, path = saved_model
    (d / "dear.csv").write_text("feature,cost\ncheap,10\nmid,30\ndear,90\n")
    assert main(["cstc", "predict", "--model-file", str(path), "--data", str(d / "test.csv"),
                 "--costs", str(d / "dear.csv"), "-o", str(d / "p10.csv")]) == 0
    assert main(["cstc", "predict", "--model-file", str(path), "--data", str(d / "test.csv"),
                 "-o", str(d / "p1.csv")]) == 0
    p10, p1 = pd.read_csv(d / "p10.csv"), pd.read_csv(d / "p1.csv")
    np.testing.assert_allclose(p10["acquisition_cost"], 10 * p1["acquisition_cost"])
    np.testing.assert_array_equal(p10["prediction"], p1["prediction"])


def test_with_a_lightgbm_model_file(csvs, capsys, tmp_path):
    d, df = csvs
    cols = ["cheap", "mid", "dear"]
    import lightgbm as lgb

    lgb.train({"objective": "regression", "max_depth": 1, "num_leaves": 2, "verbose": -1},
              lgb.Dataset(df[cols].iloc[:200], df["label"].iloc[:200]), 15).save_model(str(tmp_path / "phi.txt"))
    assert main(_train_argv(d, "--model", str(tmp_path / "phi.txt"), "--output", str(tmp_path / "m.json"),
                            "--predictions", str(tmp_path / "train_preds.csv"))) == 0
    assert main(["cstc", "predict", "--model-file", str(tmp_path / "m.json"), "--data", str(d / "train.csv"),
                 "--label", "label", "-o", str(tmp_path / "preds.csv")]) == 0
    assert (tmp_path / "preds.csv").read_text() == (tmp_path / "train_preds.csv").read_text()


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("budget-extras cstc: error: ") and err.count("\n") == 1, err
    return err


def test_refusals_are_one_line_and_write_nothing(saved_model, capsys):
    d, _, path = saved_model
    before = path.read_bytes()
    predict = ["cstc", "predict", "--model-file", str(path), "--data", str(d / "test.csv")]
    # the output may not be an input
    for out in (path, d / "test.csv"):
        assert main([*predict, "-o", str(out)]) == 2
        assert "refusing to overwrite an input" in _one_line(capsys)
    assert path.read_bytes() == before
    # an unwritable output is refused before any work
    assert main([*predict, "-o", str(d / "nodir" / "p.csv")]) == 2
    assert "does not exist" in _one_line(capsys)
    # an unreadable, truncated or foreign model file names --model-file
    (d / "half.json").write_bytes(before[: len(before) // 2])
    (d / "other.json").write_text(json.dumps({"format": "budget_extras.AdaptGBRT/1"}))
    for bad, text in (("missing.json", "cannot read the model file"), ("half.json", "invalid JSON"),
                      ("other.json", "not a CSTC model file")):
        assert main(["cstc", "predict", "--model-file", str(d / bad), "--data", str(d / "test.csv"),
                     "-o", str(d / "p.csv")]) == 2
        err = _one_line(capsys)
        assert f"--model-file {str(d / bad)!r}" in err and text in err, err
    assert not (d / "p.csv").exists()
    # data without the model's columns, evaluate without the label
    pd.read_csv(d / "test.csv").drop(columns=["mid"]).to_csv(d / "nomid.csv", index=False)
    assert main(["cstc", "predict", "--model-file", str(path), "--data", str(d / "nomid.csv")]) == 2
    assert "lacks feature columns ['mid']" in _one_line(capsys)
    assert main(["cstc", "evaluate", "--model-file", str(path), "--data", str(d / "test.csv"),
                 "--label", "nope"]) == 2
    assert "no label column 'nope'" in _one_line(capsys)


def test_training_without_train_names_the_actions(csvs, capsys):
    assert main(["cstc", "--label", "label"]) == 2
    err = _one_line(capsys)
    assert "training needs --train" in err and "cstc predict" in err


def test_training_output_may_not_be_an_input(csvs, capsys):
    d, _ = csvs
    before = (d / "valid.csv").read_bytes()
    assert main(_train_argv(d, "--output", str(d / "valid.csv"))) == 2
    assert "refusing to overwrite an input" in _one_line(capsys)
    assert (d / "valid.csv").read_bytes() == before


def test_predict_with_a_model_fitted_on_arrays(csvs, capsys, tmp_path):
    """A model without feature names reads the data's columns by position (the label dropped)."""
    d, df = csvs
    cols = ["cheap", "mid", "dear"]
    X, y = df[cols].to_numpy(), df["label"].to_numpy()
    m = CSTC(depth=2, task="binary", n_weak=10, random_state=0).fit(X[:200], y[:200])
    m.save(tmp_path / "arr.json")
    assert main(["cstc", "predict", "--model-file", str(tmp_path / "arr.json"), "--data", str(d / "test.csv"),
                 "--label", "label"]) == 0
    pred = pd.read_csv(io.StringIO(capsys.readouterr().out))
    np.testing.assert_array_equal(pred["prediction"], m.predict(X[250:]))
    # without --label the label column is one feature too many
    assert main(["cstc", "predict", "--model-file", str(tmp_path / "arr.json"), "--data", str(d / "test.csv")]) == 2
    assert "has 4 feature columns; the model expects 3" in _one_line(capsys)
