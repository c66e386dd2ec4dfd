import argparse

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from budget_extras import AdaptGBRT
from budget_extras.cli._adapt import register
from budget_extras.cli._main import main as cli_main


def _main(argv):
    """Our parser alone (errors propagate as exceptions, unlike budget-extras' main)."""
    parser = argparse.ArgumentParser(prog="budget-extras")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_registered_in_main_cli(files, capsys):
    tmp, *_ = files
    argv = [
        "adapt",
        "--train",
        str(tmp / "train.csv"),
        "--label",
        "y",
        "--f0",
        str(tmp / "f0.txt"),
        "--n-trees",
        "3",
        "--max-em-iter",
        "1",
        "--output",
        str(tmp / "m.json"),
        "--quiet",
    ]
    assert cli_main(argv) == 0
    assert '"nit": 1' in capsys.readouterr().out
    assert cli_main([*argv[:-3], "--label", "nope", "--output", str(tmp / "m.json")]) == 2


@pytest.fixture
def files(tmp_path, rng):
    X = rng.normal(size=(600, 4))
    y = ((X[:, 0] > 0) ^ (X[:, 1] * X[:, 2] > 0.5)).astype(int)
    f0 = lgb.train({"objective": "binary", "verbose": -1}, lgb.Dataset(X[:300], label=y[:300]), 30)
    f0.save_model(str(tmp_path / "f0.txt"))
    cols = ["a", "b", "c", "d"]
    df = pd.DataFrame(X[300:], columns=cols).assign(y=y[300:])
    df.to_csv(tmp_path / "train.csv", index=False)
    pd.DataFrame({"feature": cols, "cost": [1.0, 2.0, 1.0, 3.0]}).to_csv(tmp_path / "costs.csv", index=False)
    return tmp_path, X[300:], y[300:], f0


def test_cli_equals_library(files, capsys):
    tmp, X, y, f0 = files
    rc = _main(
        [
            "adapt",
            "--train",
            str(tmp / "train.csv"),
            "--label",
            "y",
            "--f0",
            str(tmp / "f0.txt"),
            "--costs",
            str(tmp / "costs.csv"),
            "--p-full",
            "0.3",
            "--gamma",
            "0.005",
            "--n-trees",
            "10",
            "--max-em-iter",
            "3",
            "--output",
            str(tmp / "adapt.json"),
            "--quiet",
        ]
    )
    assert rc == 0
    assert '"p_full": 0.3' in capsys.readouterr().out
    cli = AdaptGBRT.load(str(tmp / "adapt.json"), f0=f0)
    lib = AdaptGBRT(f0, p_full=0.3, gamma=0.005, n_trees=10, max_em_iter=3, costs=[1.0, 2.0, 1.0, 3.0]).fit(X, y)
    np.testing.assert_array_equal(cli.route(X), lib.route(X))
    np.testing.assert_allclose(cli.predict_proba(X), lib.predict_proba(X))
    np.testing.assert_allclose(cli.row_cost(X), lib.row_cost(X))


def test_cli_rejects_bad_costs(files):
    tmp, *_ = files
    pd.DataFrame({"feature": ["a"], "price": [1.0]}).to_csv(tmp / "bad.csv", index=False)
    with pytest.raises(ValueError, match="cost"):
        _main(
            [
                "adapt",
                "--train",
                str(tmp / "train.csv"),
                "--label",
                "y",
                "--f0",
                str(tmp / "f0.txt"),
                "--costs",
                str(tmp / "bad.csv"),
                "--output",
                str(tmp / "o.json"),
                "--quiet",
            ]
        )


def _fit_cli(tmp):
    assert (
        cli_main(
            [
                "adapt",
                "--train",
                str(tmp / "train.csv"),
                "--label",
                "y",
                "--f0",
                str(tmp / "f0.txt"),
                "--costs",
                str(tmp / "costs.csv"),
                "--p-full",
                "0.3",
                "--n-trees",
                "5",
                "--max-em-iter",
                "2",
                "--output",
                str(tmp / "m.json"),
                "--quiet",
            ]
        )
        == 0
    )


def test_cli_predict_and_evaluate(files, capsys):
    """The models the CLI writes can be used from the CLI: predict writes the
    library's predictions, probabilities, route and cost per row; evaluate prints its accuracy
    and mean cost."""
    import json

    tmp, X, y, f0 = files
    _fit_cli(tmp)
    capsys.readouterr()
    lib = AdaptGBRT.load(str(tmp / "m.json"), f0=f0)
    base = ["--model", str(tmp / "m.json"), "--f0", str(tmp / "f0.txt"), "--data", str(tmp / "train.csv")]
    assert cli_main(["adapt", "predict", *base, "--label", "y", "-o", str(tmp / "p.csv")]) == 0
    pred = pd.read_csv(tmp / "p.csv")
    assert list(pred.columns) == ["prediction", "proba_0", "proba_1", "to_f0", "cost"]
    np.testing.assert_array_equal(pred["prediction"], lib.predict(X))
    np.testing.assert_allclose(pred[["proba_0", "proba_1"]], lib.predict_proba(X))
    np.testing.assert_array_equal(pred["to_f0"], lib.route(X))
    np.testing.assert_allclose(pred["cost"], lib.row_cost(X))
    assert cli_main(["adapt", "evaluate", *base, "--label", "y"]) == 0
    out = json.loads(capsys.readouterr().out)
    ev = lib.evaluate(X, y)
    assert out["accuracy"] == pytest.approx(ev["accuracy"]) and out["mean_cost"] == pytest.approx(ev["cost"])
    assert out["n_rows"] == len(y)
    # stdout when no -o; refusing to overwrite the data; a missing column is a one-line error
    assert cli_main(["adapt", "predict", *base]) == 0
    assert capsys.readouterr().out.startswith("prediction,proba_0,proba_1,to_f0,cost")
    assert cli_main(["adapt", "predict", *base, "-o", str(tmp / "train.csv")]) == 2
    assert "refusing to overwrite an input" in capsys.readouterr().err
    pd.read_csv(tmp / "train.csv").drop(columns=["c"]).to_csv(tmp / "bad.csv", index=False)
    assert cli_main(["adapt", "evaluate", *base[:4], "--data", str(tmp / "bad.csv"), "--label", "y"]) == 2
    assert "lacks feature columns ['c']" in capsys.readouterr().err
    assert cli_main(["adapt", "--train", str(tmp / "train.csv")]) == 2
    assert "fitting needs --label, --f0, --output" in capsys.readouterr().err


@pytest.mark.parametrize("action", ["predict", "evaluate"])
def test_cli_costs_option_reads_the_model_once(files, capsys, monkeypatch, action):
    """``--costs`` prices the loaded model: one read of the model file, the CSV's costs per row."""
    import json

    from budget_extras import FeatureCosts

    tmp, X, _, f0 = files
    _fit_cli(tmp)
    capsys.readouterr()
    pd.DataFrame({"feature": ["d", "c", "b", "a"], "cost": [0.5, 4.0, 0.25, 2.0]}).to_csv(
        tmp / "other.csv", index=False
    )
    lib = AdaptGBRT.load(
        str(tmp / "m.json"), f0=f0, costs=FeatureCosts.from_csv(tmp / "other.csv", feature_names=list("abcd"))
    )
    loads = []
    real = AdaptGBRT.load.__func__

    def counting(cls, *a, **k):
        loads.append(a)
        return real(cls, *a, **k)

    monkeypatch.setattr(AdaptGBRT, "load", classmethod(counting))
    base = ["--model", str(tmp / "m.json"), "--f0", str(tmp / "f0.txt"), "--data", str(tmp / "train.csv")]
    argv = ["adapt", action, *base, "--label", "y", "--costs", str(tmp / "other.csv")]
    if action == "predict":
        argv += ["-o", str(tmp / "p.csv")]
    assert cli_main(argv) == 0
    assert len(loads) == 1
    if action == "predict":
        np.testing.assert_allclose(pd.read_csv(tmp / "p.csv")["cost"], lib.row_cost(X))
    else:
        assert json.loads(capsys.readouterr().out)["mean_cost"] == pytest.approx(lib.row_cost(X).mean())
    assert not np.allclose(lib.row_cost(X), AdaptGBRT.load(str(tmp / "m.json"), f0=f0).row_cost(X))
