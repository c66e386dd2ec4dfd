"""The CLI is a thin shell: its output equals the library's."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from budget_extras import FeatureCosts, TreeEnsemble, cost_report
from budget_extras.cli._main import SUBCOMMANDS, build_parser, main
from budget_extras.cli._report import report_dict

from .conftest import get_booster, hard_rows


@pytest.fixture
def files(tmp_path, rng):
    booster = get_booster("regression")
    model = tmp_path / "model.txt"
    booster.save_model(str(model))
    ens = TreeEnsemble.from_model_file(model)
    X = hard_rows(rng, 60)
    X[~np.isfinite(X)] = np.nan  # CSV round trip of inf is fine, keep it simple
    df = pd.DataFrame(X, columns=ens.feature_names)
    df.insert(0, "label", 1.0)  # extra columns are ignored
    data = tmp_path / "data.csv"
    df[list(reversed(df.columns))].to_csv(data, index=False)  # column order does not matter
    costs = tmp_path / "costs.csv"
    costs.write_text("feature,cost,group\nColumn_0,2,\nColumn_1,3,lab\nColumn_2,1.5,lab\nColumn_4,7,\n")
    return ens, X, model, data, costs


def test_json_equals_library(files, capsys):
    ens, X, model, data, costs = files
    assert main(["report", "--model", str(model), "--data", str(data), "--costs", str(costs), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rep = cost_report(ens, X, FeatureCosts.from_csv(costs, feature_names=ens.feature_names))
    assert out == json.loads(json.dumps(report_dict(rep, f"--costs {str(costs)!r}")))
    assert out["summary"]["acquisition_cost"]["mean"] == pytest.approx(rep.acquisition_cost.mean())


def test_text_output_and_per_row(files, capsys, tmp_path):
    ens, X, model, data, costs = files
    per_row = tmp_path / "rows.csv"
    code = main(
        [
            "report",
            "--model",
            str(model),
            "--data",
            str(data),
            "--costs",
            str(costs),
            "--per-row",
            str(per_row),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "feature usage" in text and "acquisition_cost" in text and "Column_3" in text
    rows = pd.read_csv(per_row)
    rep = cost_report(ens, X, FeatureCosts.from_csv(costs, feature_names=ens.feature_names))
    np.testing.assert_allclose(rows["total_cost"], rep.total_cost)
    np.testing.assert_array_equal(rows["splits_evaluated"], rep.splits_evaluated)


def test_uniform_costs_and_n_trees(files, capsys):
    ens, X, model, data, _ = files
    assert main(["report", "--model", str(model), "--data", str(data), "--json", "--n-trees", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    rep = cost_report(ens, X, FeatureCosts.uniform(ens.n_features), n_trees=3)
    assert out["summary"]["total_cost"]["mean"] == pytest.approx(rep.total_cost.mean())
    assert out["summary"]["trees_evaluated"]["max"] == 3
    assert out["costs"].startswith("every feature costs 1")  # the model records no costs: the note says so


def test_report_defaults_to_the_costs_recorded_in_the_model(tmp_path, capsys):
    """Without --costs, a model trained with CEGB costs is charged its recorded costs, and the output says so."""
    import lightgbm as lgb

    rng = np.random.default_rng(4)
    names = ["a", "b", "c", "d"]
    df = pd.DataFrame(rng.normal(size=(400, 4)), columns=names)
    y = (df.a + df.b + df.c > 0).astype(int)
    costs = FeatureCosts({"a": 5, "b": 1, "c": 2, "d": 3}, groups={"b": "lab", "c": "lab"}, coupled={"d": 4},
                         split={"a": 0.5, "b": 0.25, "c": 0.25, "d": 0.5}, feature_names=names)
    params = {"objective": "binary", "verbose": -1, "num_leaves": 7, "cegb_cost_file": costs,
              "cegb_tradeoff": 0.001, "cegb_penalty_split": 0.125}
    lgb.train(params, lgb.Dataset(df, y), 6).save_model(str(tmp_path / "m.txt"))
    df.to_csv(tmp_path / "d.csv", index=False)
    ens = TreeEnsemble.from_model_file(tmp_path / "m.txt")
    charged = FeatureCosts({"a": 5, "b": 1, "c": 2, "d": 3}, groups={"b": "lab", "c": "lab"}, coupled={"d": 4},
                           split={"a": 0.625, "b": 0.375, "c": 0.375, "d": 0.625}, feature_names=names)
    want = cost_report(ens, df, charged)
    assert want.total_cost.mean() != pytest.approx(cost_report(ens, df, None).total_cost.mean())
    argv = ["report", "--model", str(tmp_path / "m.txt"), "--data", str(tmp_path / "d.csv")]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["costs"].startswith("the costs recorded in the model file")
    assert out["summary"]["total_cost"]["mean"] == pytest.approx(want.total_cost.mean())
    assert out["summary"]["coupled_cost"] == pytest.approx(want.summary()["coupled_cost"])
    assert main(argv) == 0
    assert "costs: the costs recorded in the model file" in capsys.readouterr().out
    (tmp_path / "c.csv").write_text("feature,cost\na,1\n")  # --costs overrides the recorded costs
    assert main([*argv, "--costs", str(tmp_path / "c.csv"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["costs"].startswith("--costs")
    assert out["summary"]["total_cost"]["mean"] == pytest.approx(
        cost_report(ens, df, FeatureCosts({"a": 1}, feature_names=names)).total_cost.mean()
    )


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"--model": "missing.txt"}, r"--model .*missing.txt.*no such file"),
        ({"--data": "missing.csv"}, r"--data .*missing.csv.*no such file"),
        ({"--costs": "missing.csv"}, "readable CSV file"),
        ({"drop_column": "Column_3"}, r"lacks feature columns \['Column_3'\]"),
        ({"bad_costs": "feature,cost\nColumn_0,-1\n"}, "finite number >= 0"),
        ({"--n-trees": "9999"}, "--n-trees must be in"),
    ],
)
def test_errors_are_clear(files, tmp_path, capsys, change, match):
    _, _, model, data, costs = files
    args = {"--model": str(model), "--data": str(data), "--costs": str(costs)}
    if "drop_column" in change:
        pd.read_csv(data).drop(columns=[change["drop_column"]]).to_csv(data, index=False)
    elif "bad_costs" in change:
        costs.write_text(change["bad_costs"])
    else:
        args.update({k: (str(tmp_path / v) if "missing" in v else v) for k, v in change.items()})
    argv = ["report"] + [x for kv in args.items() for x in kv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("budget-extras report: error:")
    assert re.search(match, err), err


def test_registry_and_help(capsys):
    assert "report" in SUBCOMMANDS
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["report", "--help"])
    assert "--costs" in capsys.readouterr().out


def _subparsers(parser, prefix=""):
    """Every (command path, parser) below ``parser``."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix}{name}", sub
                yield from _subparsers(sub, f"{prefix}{name} ")


def test_shared_options_have_one_help_text():
    from budget_extras.cli import _args

    shared = {
        "--train": _args.TRAIN_HELP,
        "--valid": _args.VALID_HELP,
        "--test": _args.TEST_HELP,
        "--data": _args.DATA_HELP,
        "--label": _args.LABEL_HELP,
        "--costs": _args.COSTS_HELP,
        "--scoring": _args.SCORING_HELP,
        "--seed": _args.SEED_HELP,
        "--quiet": _args.QUIET_HELP,
    }
    seen = set()
    for command, sub in _subparsers(build_parser()):
        for action in sub._actions:
            for opt in action.option_strings:
                if opt in shared:
                    assert action.help.startswith(shared[opt]), (command, opt, action.help)
                    seen.add(opt)
                if opt == "--model" and not command.startswith("adapt "):
                    assert action.help.startswith(_args.MODEL_HELP), (command, action.help)
    assert seen == set(shared)
