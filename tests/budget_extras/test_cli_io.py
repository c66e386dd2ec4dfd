"""The CLI never destroys input, writes atomically and reports unreadable files in one line.

docs/cli.md, "Inputs and outputs". Every subcommand is run on the same small files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from budget_extras.cli._io import AtomicOutputs, CLIError, check_paths
from budget_extras.cli._main import SUBCOMMANDS, main

ROOT = Path(__file__).resolve().parents[2]
FEATURES = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_io")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    df = pd.DataFrame(X, columns=FEATURES)
    df["y"] = y
    df.to_csv(d / "data.csv", index=False)
    booster = lgb.train(
        {"objective": "binary", "num_leaves": 4, "min_data_in_leaf": 10, "verbose": -1},
        lgb.Dataset(df[FEATURES], y),
        num_boost_round=4,
    )
    booster.save_model(str(d / "model.txt"))
    (d / "costs.csv").write_text("feature,cost\na,3\nb,1\nc,2\nd,1\n")
    (d / "train.conf").write_text(
        "data=data.csv\nheader=true\nlabel_column=name:y\nobjective=binary\nnum_leaves=4\n"
        "min_data_in_leaf=10\nverbose=-1\n"
    )
    return d


# every subcommand: its arguments with {name} placeholders for files, its input options and
# its output options (option -> default file name).
COMMANDS: dict[str, dict] = {
    "report": {
        "argv": ["report", "--model", "{model}", "--data", "{data}", "--costs", "{costs}",
                 "--per-row", "{out}"],
        "inputs": {"--model": "model", "--data": "data", "--costs": "costs"},
        "outputs": {"--per-row": "out"},
    },
    "prune": {
        "argv": ["prune", "--model", "{model}", "--train", "{data}", "--valid", "{data}",
                 "--costs", "{costs}", "--label", "y", "--lambda", "0.1", "--max-iter", "20", "-q",
                 "-o", "{out}", "--json", "{json}"],
        "inputs": {"--model": "model", "--train": "data", "--costs": "costs"},
        "outputs": {"-o": "out", "--json": "json"},
    },
    "qwyc": {
        "argv": ["qwyc", "--model", "{model}", "--calib", "{data}", "-o", "{out}"],
        "inputs": {"--model": "model", "--calib": "data"},
        "outputs": {"-o": "out"},
    },
    "adapt": {
        "argv": ["adapt", "--train", "{data}", "--label", "y", "--f0", "{model}", "--costs", "{costs}",
                 "--n-trees", "3", "--max-em-iter", "1", "--quiet", "--output", "{out}"],
        "inputs": {"--train": "data", "--f0": "model", "--costs": "costs"},
        "outputs": {"--output": "out"},
    },
    "cstc": {
        "argv": ["cstc", "--train", "{data}", "--label", "y", "--model", "{model}", "--costs", "{costs}",
                 "--depth", "1", "--predictions", "{out}", "--output", "{json}"],
        "inputs": {"--train": "data", "--model": "model", "--costs": "costs"},
        "outputs": {"--predictions": "out", "--output": "json"},
    },
    "train": {
        "argv": ["train", "--config", "{conf}", "--budget", "10", "--valid", "{data}", "--costs", "{costs}",
                 "--num-boost-round", "3", "--quiet", "-o", "{out}", "--json", "{json}"],
        "inputs": {"--config": "conf", "data=": "data", "--valid": "data", "--costs": "costs"},
        "outputs": {"-o": "out", "--json": "json"},
    },
}
FILES = {"model": "model.txt", "data": "data.csv", "costs": "costs.csv", "conf": "train.conf"}


def argv_for(cmd: str, d: Path, **paths: str | Path) -> list[str]:
    names = {k: str(d / v) for k, v in FILES.items()}
    names.update(out=str(d / f"{cmd}.out"), json=str(d / f"{cmd}.json"))
    names.update({k: str(v) for k, v in paths.items()})
    return [a.format(**names) for a in COMMANDS[cmd]["argv"]]


def snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def one_line_error(capsys, cmd: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith(f"budget-extras {cmd}: error: "), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_every_subcommand_is_covered():
    assert set(COMMANDS) == set(SUBCOMMANDS)


@pytest.mark.parametrize(
    ("cmd", "out_opt", "in_name"),
    [
        (cmd, out_opt, in_name)
        for cmd, spec in COMMANDS.items()
        for out_opt, out_key in spec["outputs"].items()
        for in_name in sorted(set(spec["inputs"].values()))
    ],
)
def test_output_equal_to_input_is_refused(workdir, capsys, cmd, out_opt, in_name):
    out_key = COMMANDS[cmd]["outputs"][out_opt]
    before = snapshot(workdir)
    argv = argv_for(cmd, workdir, **{out_key: workdir / FILES[in_name]})
    assert main(argv) == 2
    err = one_line_error(capsys, cmd)
    assert "same file as the input" in err and "refusing to overwrite" in err
    assert snapshot(workdir) == before  # the input is unchanged byte for byte, nothing written


@pytest.mark.parametrize("link", ["symlink", "hardlink", "relative"])
@pytest.mark.parametrize("cmd", ["report", "prune", "qwyc"])
def test_output_linked_to_input_is_refused(workdir, tmp_path, capsys, link, cmd):
    # e.g. report --per-row data.csv --data data.csv, prune/qwyc -o model --model model
    target = workdir / (FILES["data"] if cmd == "report" else FILES["model"])
    if link == "symlink":
        alias = tmp_path / "alias"
        alias.symlink_to(target)
    elif link == "hardlink":
        alias = tmp_path / "alias"
        os.link(target, alias)
    else:
        alias = Path(os.path.relpath(target))
    before = target.read_bytes()
    assert main(argv_for(cmd, workdir, out=alias)) == 2
    assert "same file as the input" in one_line_error(capsys, cmd)
    assert target.read_bytes() == before


@pytest.mark.parametrize("cmd", ["prune", "train"])
def test_two_outputs_may_not_be_the_same_file(workdir, tmp_path, capsys, cmd):
    out = tmp_path / "same.txt"
    assert main(argv_for(cmd, workdir, out=out, json=out)) == 2
    assert "are the same file" in one_line_error(capsys, cmd)
    assert not out.exists()


@pytest.mark.parametrize(
    ("cmd", "out_opt"),
    [(cmd, opt) for cmd, spec in COMMANDS.items() for opt in spec["outputs"]],
)
@pytest.mark.parametrize("problem", ["no such directory", "is a directory"])
def test_unwritable_output_fails_before_any_work(workdir, tmp_path, capsys, cmd, out_opt, problem):
    # today `prune ... --json nodir/r.json` wrote -o, then failed: now nothing is written
    key = COMMANDS[cmd]["outputs"][out_opt]
    bad = tmp_path / "nodir" / "x" if problem == "no such directory" else tmp_path
    good = {k: tmp_path / f"{k}.ok" for k in ("out", "json")}
    good[key] = bad
    assert main(argv_for(cmd, workdir, **good)) == 2
    err = one_line_error(capsys, cmd)
    assert ("does not exist" if problem == "no such directory" else "is a directory") in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("cmd", list(COMMANDS))
def test_success_writes_every_output_and_no_temporary_file(workdir, tmp_path, capsys, cmd):
    outs = {"out": tmp_path / "result", "json": tmp_path / "result.json"}
    rc = main(argv_for(cmd, workdir, **outs))
    assert rc in (0, 1), capsys.readouterr()  # train exits 1 when no candidate meets the budget
    written = sorted(p.name for p in tmp_path.iterdir())
    expected = sorted(outs[k].name for k in COMMANDS[cmd]["outputs"].values())
    assert written == expected


@pytest.mark.parametrize("cmd", ["prune", "train"])
def test_failure_while_writing_leaves_no_output(workdir, tmp_path, capsys, monkeypatch, cmd):
    """The model is written, then the JSON write fails: neither file appears, an earlier one stays."""
    out, js = tmp_path / "model.out", tmp_path / "r.json"
    js.write_text("earlier run")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(json, "dump" if cmd == "prune" else "dumps", boom)
    assert main(argv_for(cmd, workdir, out=out, json=js)) == 2
    assert "disk full" in one_line_error(capsys, cmd)
    assert not out.exists()
    assert js.read_text() == "earlier run"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.mark.parametrize("cmd", list(COMMANDS))
def test_failing_run_leaves_no_output(workdir, tmp_path, capsys, cmd):
    """A run that fails after reading its inputs (costs naming an unknown feature, a bad calib CSV)."""
    outdir = tmp_path / "outs"
    outdir.mkdir()
    bad = tmp_path / "bad.csv"
    if "{costs}" in COMMANDS[cmd]["argv"]:
        bad.write_text("feature,cost\nnot_a_feature,1\n")
        argv = argv_for(cmd, workdir, costs=bad, out=outdir / "o", json=outdir / "j")
    else:
        bad.write_text("not_a_feature,y\n1,2\n")
        argv = argv_for(cmd, workdir, data=bad, out=outdir / "o", json=outdir / "j")
    assert main(argv) == 2
    assert "not_a_feature" in one_line_error(capsys, cmd)
    assert list(outdir.iterdir()) == []


BAD_FILES = {
    "binary garbage": bytes(range(256)) * 8,
    "directory": None,
    "empty": b"",
    "bad model text": b"tree\nversion=v4\nnum_class=1\nmax_feature_idx=3\n\nTree=0\nnum_leaves=x\n",
    "ragged CSV": b"a,b,c,d,y\n1,2,3,4,0\n1,2,3,4,0,5,6,7\n\"unterminated\n",
}


@pytest.mark.parametrize("bad", list(BAD_FILES))
@pytest.mark.parametrize(
    ("cmd", "in_key"),
    [(cmd, key) for cmd, spec in COMMANDS.items() for key in sorted(set(spec["inputs"].values()))],
)
def test_unreadable_input_is_one_line(workdir, tmp_path, capsys, cmd, in_key, bad):
    path = tmp_path / "bad"
    if BAD_FILES[bad] is None:
        path.mkdir()
    else:
        path.write_bytes(BAD_FILES[bad])
    if in_key == "data" and cmd == "train":  # the training CSV comes from the config's data=
        conf = tmp_path / "train.conf"
        conf.write_text((workdir / "train.conf").read_text().replace("data=data.csv", f"data={path}"))
        argv = argv_for(cmd, workdir, conf=conf, out=tmp_path / "o", json=tmp_path / "j")
    else:
        argv = argv_for(cmd, workdir, **{in_key: path}, out=tmp_path / "o", json=tmp_path / "j")
    assert main(argv) == 2
    err = one_line_error(capsys, cmd)
    if bad == "directory":
        assert "is a directory" in err
    assert str(path) in err or in_key == "conf", err  # names the file
    assert not (tmp_path / "o").exists() and not (tmp_path / "j").exists()


@pytest.mark.slow  # more than 20 s on 2 cores
def test_console_script_prints_no_traceback(workdir, tmp_path):
    garbage = tmp_path / "garbage.txt"
    garbage.write_bytes(BAD_FILES["binary garbage"])
    for argv in (
        ["prune", "--model", str(garbage), "--train", str(workdir / "data.csv"), "--valid",
         str(workdir / "data.csv"), "--label", "y", "--lambda", "1", "-o", str(tmp_path / "o")],
        ["qwyc", "--model", str(workdir / "model.txt"), "--calib", str(workdir / "model.txt"),
         "-o", str(workdir / "model.txt")],
    ):
        proc = subprocess.run(
            [sys.executable, "-c", "import sys; from budget_extras.cli import main; sys.exit(main())", *argv],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
        assert proc.returncode == 2
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr


def test_atomic_outputs_unit(tmp_path):
    final = tmp_path / "f.txt"
    final.write_text("old")
    with pytest.raises(RuntimeError), AtomicOutputs() as out:
        Path(out.path(final)).write_text("new")
        raise RuntimeError
    assert final.read_text() == "old" and sorted(tmp_path.iterdir()) == [final]
    with AtomicOutputs() as out:
        Path(out.path(final)).write_text("new")
    assert final.read_text() == "new" and sorted(tmp_path.iterdir()) == [final]
    umask = os.umask(0)
    os.umask(umask)
    assert final.stat().st_mode & 0o777 == 0o666 & ~umask
    with pytest.raises(CLIError, match="same file"):
        check_paths({"--in": [None, final]}, {"--out": tmp_path / "." / "f.txt"})


@pytest.mark.parametrize("cmd", ["prune", "qwyc"])
def test_feature_columns_matched_by_name_not_position(workdir, tmp_path, capsys, cmd):
    """A CSV with as many columns as the model has features but other names is refused."""
    df = pd.read_csv(workdir / "data.csv")
    wrong = df.drop(columns=["d"]).rename(columns={"y": "label"})[["label", "a", "b", "c"]]
    wrong["y"] = df["y"]
    wrong.to_csv(tmp_path / "wrong.csv", index=False)
    out = tmp_path / "o.txt"
    assert main(argv_for(cmd, workdir, data=tmp_path / "wrong.csv", out=out, json=tmp_path / "j")) == 2
    err = one_line_error(capsys, cmd)
    assert "missing ['d']" in err and "wrong.csv" in err
    assert not out.exists()


@pytest.fixture(scope="module")
def categorical_model(tmp_path_factory):
    """A model trained on a pandas categorical column (text in the CSV) that decides most rows."""
    d = tmp_path_factory.mktemp("cli_categorical")
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.normal(size=400),
                       "color": pd.Categorical(rng.choice(["red", "green", "blue"], size=400)),
                       "b": rng.normal(size=400)})
    y = ((df["color"] == "red").to_numpy() ^ (df["a"] > 1.0).to_numpy()).astype(int)
    booster = lgb.train({"objective": "binary", "num_leaves": 4, "min_data_in_leaf": 10, "verbose": -1,
                         "min_data_per_group": 5, "cat_smooth": 1.0}, lgb.Dataset(df, y), num_boost_round=6)
    booster.save_model(str(d / "model.txt"))
    df.assign(y=y).to_csv(d / "data.csv", index=False)
    return d, df, y, booster


def test_row_reader_keeps_a_models_categorical_column(categorical_model):
    from budget_extras.cli._io import model_categories, read_rows

    d, df, y, booster = categorical_model
    loaded = lgb.Booster(model_file=str(d / "model.txt"))
    assert model_categories(loaded) == {"color": ["blue", "green", "red"]}
    X, labels = read_rows(d / "data.csv", "--data", loaded.feature_name(), label="y",
                          categories=model_categories(loaded))
    assert isinstance(X["color"].dtype, pd.CategoricalDtype)
    np.testing.assert_array_equal(labels, y)
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(df))


def test_prune_and_qwyc_read_a_categorical_column_as_the_model_does(categorical_model, tmp_path, capsys):
    """The CLI's rows equal the library's on the DataFrame (the column was dropped or read as missing)."""
    from budget_extras import QWYC, BudgetPrune

    d, df, y, _ = categorical_model
    model, data = str(d / "model.txt"), str(d / "data.csv")
    assert main(["qwyc", "--model", model, "--calib", data, "-o", str(tmp_path / "q.txt")]) == 0, capsys.readouterr()
    lib = QWYC(model, alpha=0.005, random_state=0).fit(df)
    assert (tmp_path / "q.txt").read_text() == lib.to_model_string()
    argv = ["prune", "--model", model, "--train", data, "--valid", data, "--label", "y", "--lambda", "0.01",
            "--max-iter", "20", "-q", "-o", str(tmp_path / "p.txt")]
    assert main(argv) == 0, capsys.readouterr()
    est = BudgetPrune(model, lam=0.01, max_iter=20, progress=False).fit(df, y, X_valid=df, y_valid=y)
    assert (tmp_path / "p.txt").read_text() == est.model_string_
