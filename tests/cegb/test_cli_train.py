"""``budget-extras train``: the CLI saves train_to_budget's model (same knobs, same cost)."""

from __future__ import annotations

import json

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from budget_extras import FeatureCosts, TreeEnsemble, cost_report, train_to_budget
from budget_extras.cli._main import SUBCOMMANDS, main


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] + 0.5 * X[:, 2] + 0.5 * rng.normal(size=500) > 0).astype(int)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df.insert(2, "y", y)
    df.iloc[:350].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[350:].to_csv(tmp_path / "valid.csv", index=False)
    (tmp_path / "costs.csv").write_text("feature,cost\na,3\nb,1\nc,2\nd,1\n")
    (tmp_path / "train.conf").write_text(
        "# a LightGBM CLI config\ntask=train\ndata=train.csv\nheader=true\nlabel_column=name:y\n"
        "objective=binary\nnum_leaves=5\nmin_data_in_leaf=10\nnum_iterations=8\nnum_threads=1\n"
    )
    return tmp_path, df


def test_cli_equals_library(files, capsys):
    d, df = files
    rc = main(
        [
            "train",
            "--config",
            str(d / "train.conf"),
            "--budget",
            "4",
            "--valid",
            str(d / "valid.csv"),
            "--costs",
            str(d / "costs.csv"),
            "-o",
            str(d / "model.txt"),
            "--json",
            str(d / "r.json"),
            "--quiet",
        ]
    )
    assert rc == 0, capsys.readouterr()
    feats = ["a", "b", "c", "d"]
    ens = TreeEnsemble.from_model_file(d / "model.txt")
    costs = FeatureCosts({"a": 3, "b": 1, "c": 2, "d": 1}, feature_names=feats)
    cost = cost_report(ens, df.iloc[350:][feats], costs).total_cost.mean()
    assert cost <= 4
    rep = json.loads((d / "r.json").read_text())
    assert rep["cost"] == pytest.approx(cost)
    tr, va = df.iloc[:350], df.iloc[350:]
    b = train_to_budget(
        {"objective": "binary", "num_leaves": "5", "min_data_in_leaf": "10", "num_threads": "1"},
        lgb.Dataset(tr[feats], tr["y"].to_numpy()),
        budget=4.0,
        valid_set=(va[feats], va["y"].to_numpy()),
        costs=costs,
        num_boost_round=8,
        progress=False,
    )
    assert b.cost == pytest.approx(cost)
    assert b.score == pytest.approx(rep["score"])


@pytest.mark.parametrize(
    "conf, match",
    [
        ("objective=binary\n", "no data= line"),
        ("data=train.csv\nlabel_column=name:zz\n", "label_column='name:zz'"),
        ("data=nope.csv\n", "data= (training CSV)"),
        ("data=train.csv\nheader=false\n", "header row"),
        ("data train.csv\n", "expected key=value"),
        ("data=train.csv\nlabel_column=name:y\nnum_iterations=abc\n", "num_iterations='abc': expected a positive"),
        ("data=train.csv\nlabel_column=name:y\nnum_trees=0\n", "num_trees='0'"),
        ("data=train.csv\nlabel_column=name:y\nweight_column=name:zz\n", "weight_column='name:zz' names no column"),
        ("data=train.csv\nlabel_column=name:y\nignore_column=9\n", "ignore_column='9' names no column"),
        ("data=train.csv\nlabel_column=name:y\nquery=name:a\n", "query groups (ranking) are not supported"),
    ],
)
def test_cli_errors(files, capsys, conf, match):
    d, _ = files
    (d / "bad.conf").write_text(conf)
    rc = main(
        [
            "train",
            "--config",
            str(d / "bad.conf"),
            "--budget",
            "2",
            "--valid",
            str(d / "valid.csv"),
            "--costs",
            str(d / "costs.csv"),
            "-o",
            str(d / "m.txt"),
            "--quiet",
        ]
    )
    assert rc == 2
    assert match in capsys.readouterr().err


def test_registered():
    assert "train" in SUBCOMMANDS


def test_cli_weight_and_ignore_columns_as_lightgbm_cli(files, capsys):
    """weight_column is the rows' weight and ignore_column is dropped: neither is a feature."""
    d, df = files
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=len(df))
    df = df.assign(w=w)
    df.iloc[:350].to_csv(d / "train.csv", index=False)
    df.iloc[350:].to_csv(d / "valid.csv", index=False)
    (d / "costs.csv").write_text("feature,cost\na,3\nb,1\nc,2\n")
    (d / "w.conf").write_text(
        "data=train.csv\nheader=true\nlabel_column=name:y\nweight_column=name:w\nignore_column=3\n"
        "objective=binary\nnum_leaves=5\nmin_data_in_leaf=10\nnum_iterations=8\nnum_threads=1\n"
    )
    args = ["train", "--config", str(d / "w.conf"), "--budget", "4", "--valid", str(d / "valid.csv"),
            "--costs", str(d / "costs.csv"), "-o", str(d / "m.txt"), "--json", str(d / "r.json"), "--quiet"]
    assert main(args) == 0, capsys.readouterr()
    ens = TreeEnsemble.from_model_file(d / "m.txt")
    assert list(ens.feature_names) == ["a", "b", "c"]  # 'd' (index 3 without the label) ignored, 'w' a weight
    tr, va = df.iloc[:350], df.iloc[350:]
    r = train_to_budget(
        {"objective": "binary", "num_leaves": "5", "min_data_in_leaf": "10", "num_threads": "1"},
        lgb.Dataset(tr[["a", "b", "c"]], tr["y"].to_numpy(), weight=tr["w"].to_numpy()),
        budget=4.0, valid_set=(va[["a", "b", "c"]], va["y"].to_numpy()),
        costs=FeatureCosts({"a": 3, "b": 1, "c": 2}, feature_names=["a", "b", "c"]), num_boost_round=8,
        progress=False,
    )
    rep = json.loads((d / "r.json").read_text())
    assert rep["score"] == pytest.approx(r.score) and rep["cost"] == pytest.approx(r.cost)


def test_exit_status_is_0_with_a_warning_when_a_constant_model_meets_the_budget(files, capsys):
    """A constant model within the budget is saved with exit 0 and a warning; 1 is for a model over the budget."""
    d, _ = files
    argv = ["train", "--config", str(d / "train.conf"), "--valid", str(d / "valid.csv"), "--costs",
            str(d / "costs.csv"), "-o", str(d / "m.txt"), "--json", str(d / "r.json"), "--quiet"]
    assert main([*argv, "--budget", "0"]) == 0
    out = capsys.readouterr().out
    assert "warning: the saved model is constant" in out
    rep = json.loads((d / "r.json").read_text())
    assert rep["status"] == 1 and rep["cost"] <= 0  # CONSTANT, within the budget
    assert (d / "m.txt").exists()
    (d / "costs.csv").write_text("feature,cost,tree\na,3,1\nb,1,1\nc,2,1\nd,1,1\n")  # every model costs >= 1
    assert main([*argv, "--budget", "0.5"]) == 1
    assert json.loads((d / "r.json").read_text())["status"] == 2  # INFEASIBLE: the cheapest model is saved


def test_cli_regression_reports_rmse(files, capsys):
    d, df = files
    feats = ["a", "b", "c", "d"]
    df = df.assign(y=1000 * df["a"] + 500 * df["c"])  # a price-like target: mean squared errors in the 1e4-1e5
    df.iloc[:350].to_csv(d / "train.csv", index=False)
    df.iloc[350:].to_csv(d / "valid.csv", index=False)
    conf = (d / "train.conf").read_text().replace("objective=binary", "objective=regression")
    (d / "train.conf").write_text(conf)
    rc = main(["train", "--config", str(d / "train.conf"), "--budget", "4", "--valid", str(d / "valid.csv"),
               "--costs", str(d / "costs.csv"), "-o", str(d / "model.txt"), "--json", str(d / "r.json"), "--quiet",
               "--choose", "valid"])
    out = capsys.readouterr().out
    assert rc == 0, out
    va = df.iloc[350:]
    pred = lgb.Booster(model_file=str(d / "model.txt")).predict(va[feats])
    rmse = float(np.sqrt(np.mean((pred - va["y"].to_numpy()) ** 2)))
    assert f"rmse {rmse:.6g}" in out and "neg_l2" not in out
    rep = json.loads((d / "r.json").read_text())
    assert (rep["metric"], rep["scoring"]) == ("rmse", "neg_l2")
    assert rep["metric_value"] == pytest.approx(rmse) and rep["score"] == pytest.approx(-(rmse**2))
    assert all(c["metric_value"] == pytest.approx(np.sqrt(-c["score"])) for c in rep["frontier"])


@pytest.mark.parametrize(
    ("csv", "named", "words"),
    [
        ("feature,cost\na,1\nb,2\na,3\n", pd.Series([1.0, 2.0, 3.0], index=["a", "b", "a"]),
         "gives feature 'a' twice; give each feature once."),
        ("feature,cost\na,1\nzz,2\n", {"a": 1.0, "zz": 2.0}, "names unknown features ['zz']; known features are"),
    ],
)
def test_cost_name_errors_are_checked_once_in_the_same_words_from_python_and_the_cli(
    files, capsys, monkeypatch, csv, named, words
):
    """A feature named twice or unknown: one check, the same message from a dict, a Series, a CSV and the CLI."""
    from budget_extras.core import _costs

    d, df = files
    calls = []
    check = _costs._feature_positions
    monkeypatch.setattr(_costs, "_feature_positions", lambda *a: calls.append(a) or check(*a))
    (d / "bad_costs.csv").write_text(csv)
    feats = ["a", "b", "c", "d"]
    tr, va = df.iloc[:350], df.iloc[350:]
    kw = dict(budget=4.0, valid_set=(va[feats], va["y"].to_numpy()), num_boost_round=8, progress=False)
    with pytest.raises(ValueError) as from_csv:
        train_to_budget({"objective": "binary"}, lgb.Dataset(tr[feats], tr["y"].to_numpy()),
                        costs=str(d / "bad_costs.csv"), **kw)
    assert len(calls) == 1 and words in str(from_csv.value)
    rc = main(["train", "--config", str(d / "train.conf"), "--budget", "4", "--valid", str(d / "valid.csv"),
               "--costs", str(d / "bad_costs.csv"), "-o", str(d / "m.txt"), "--quiet"])
    assert rc == 2 and len(calls) == 2
    assert capsys.readouterr().err == f"budget-extras train: error: {from_csv.value}\n"
    with pytest.raises(ValueError) as from_python:
        train_to_budget({"objective": "binary"}, lgb.Dataset(tr[feats], tr["y"].to_numpy()), costs=named, **kw)
    assert len(calls) == 3
    where = f"The costs CSV {str(d / 'bad_costs.csv')!r}"
    assert str(from_python.value) == str(from_csv.value).replace(where, "The 'costs' argument of train_to_budget")


def _train_argv(d, *extra):
    return ["train", "--config", str(d / "train.conf"), "--budget", "4", "--valid", str(d / "valid.csv"),
            "--costs", str(d / "costs.csv"), "-o", str(d / "m.txt"), "--quiet", *extra]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ((), {"search": "full", "budgets": None, "n_jobs": 1, "time_limit": None, "max_fits": None, "client": None}),
        (("--search", "fast"), {"search": "fast"}),
        (("--search", "lean"), {"search": "lean"}),
        (("--budgets", "2,5.5, 10"), {"budgets": [2.0, 5.5, 10.0]}),
        (("--n-jobs", "2"), {"n_jobs": 2}),
        (("--time-limit", "30"), {"time_limit": 30.0}),
        (("--max-fits", "12"), {"max_fits": 12}),
    ],
)
def test_search_options_reach_train_to_budget(files, capsys, monkeypatch, extra, expected):
    from budget_extras.cli import _train

    d, _ = files
    seen = {}

    def spy(params, train_set, **kw):
        seen.update(kw)
        raise ValueError("stopped by the test")

    monkeypatch.setattr(_train, "train_to_budget", spy)
    assert main(_train_argv(d, *extra)) == 2
    assert "stopped by the test" in capsys.readouterr().err
    assert {k: seen[k] for k in expected} == expected


def test_client_connects_to_the_scheduler_it_names_and_reaches_train_to_budget(files, capsys, monkeypatch):
    """--client ADDRESS opens a distributed.Client on that address, passes it as client= and closes it."""
    distributed = pytest.importorskip("distributed")
    from budget_extras.cli import _train

    d, _ = files
    opened, seen = [], {}

    class FakeClient:
        def __init__(self, address, timeout):
            opened.append([address, timeout, "open"])

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            opened[-1][2] = "closed"

    def spy(params, train_set, **kw):
        seen.update(kw)
        raise ValueError("stopped by the test")

    monkeypatch.setattr(distributed, "Client", FakeClient)
    monkeypatch.setattr(_train, "train_to_budget", spy)
    assert main(_train_argv(d, "--client", "tcp://scheduler:8786")) == 2
    assert "stopped by the test" in capsys.readouterr().err
    assert isinstance(seen["client"], FakeClient)
    assert opened == [["tcp://scheduler:8786", _train.CLIENT_TIMEOUT, "closed"]]


def test_a_client_address_without_a_scheduler_is_refused_naming_the_option(files, capsys, monkeypatch):
    """An address where no scheduler answers is a one-line error naming --client, within the timeout."""
    pytest.importorskip("distributed")
    from budget_extras.cli import _train

    d, _ = files
    monkeypatch.setattr(_train, "CLIENT_TIMEOUT", 2)
    assert main(_train_argv(d, "--client", "tcp://127.0.0.1:9")) == 2
    err = capsys.readouterr().err
    assert "budget-extras train: error: --client 'tcp://127.0.0.1:9': no Dask scheduler answered within 2 s" in err


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (("--search", "quick"), "argument --search: invalid choice: 'quick'"),
        (("--budgets", "2,,3"), "argument --budgets: expected comma-separated numbers >= 0"),
        (("--budgets", "2,-1"), "argument --budgets: expected comma-separated finite numbers >= 0"),
        (("--budgets", "nan"), "argument --budgets: expected comma-separated finite numbers >= 0"),
        (("--n-jobs", "0"), "argument --n-jobs: expected an integer >= 1, got '0'"),
        (("--n-jobs", "1.5"), "argument --n-jobs: expected an integer >= 1, got '1.5'"),
        (("--time-limit", "0"), "argument --time-limit: expected a number > 0, got '0'"),
        (("--time-limit", "inf"), "argument --time-limit: expected a number > 0, got 'inf'"),
        (("--max-fits", "x"), "argument --max-fits: expected an integer >= 1, got 'x'"),
    ],
)
def test_search_options_are_refused_naming_the_option(files, capsys, extra, words):
    d, _ = files
    with pytest.raises(SystemExit) as exit_:
        main(_train_argv(d, *extra))
    assert exit_.value.code == 2
    assert words in capsys.readouterr().err
    assert not (d / "m.txt").exists()


def test_cli_search_with_several_budgets_and_limits(files, capsys):
    d, _ = files
    rc = main(_train_argv(d, "--budgets", "2,6", "--n-jobs", "2", "--time-limit", "600", "--max-fits", "40",
                          "--json", str(d / "r.json")))
    assert rc == 0, capsys.readouterr()
    rep = json.loads((d / "r.json").read_text())
    assert rep["budgets"] == [2.0, 4.0, 6.0] and 0 < rep["nfev"] <= 40
    for b, best in rep["best_at"].items():
        assert best is None or best["cost"] <= float(b) + 1e-9
    assert rep["best_at"]["4"]["cost"] == pytest.approx(rep["cost"])
