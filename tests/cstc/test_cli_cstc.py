"""The ``budget-extras cstc`` subcommand gives the library's answer."""

from __future__ import annotations

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
    np.testing.assert_allclose(pred["total_cost"].mean(), out["cost"]["mean_total_cost"])
    np.testing.assert_array_equal(pred["prediction"], m.predict(te[cols]))


def test_cli_reports_a_missing_label(csvs, capsys):
    d, _ = csvs
    assert main(["cstc", "--train", str(d / "train.csv"), "--label", "nope"]) == 2
    assert "no label column 'nope'" in capsys.readouterr().err
