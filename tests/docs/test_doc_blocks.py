"""Every fenced block of README.md and docs/*.md that shows code, a file or a command runs here.

A block is found by its file and first line. By default

* a ``python`` block is executed (blocks of one file in order, in one namespace and one working
  directory) with small data bound to the names the docs use (``booster``, ``X_train``, ...);
* a block whose first line starts with ``feature,`` is a costs file: it is written to a file and
  read by ``FeatureCosts.from_csv`` (docs/cegb.md's also by the fork's ``cegb_cost_file``);
* a block of ``budget-extras ...`` / ``lightgbm ...`` lines is a command: optional parts
  ``[...]`` are included, alternatives ``(a | b)`` and ``x|y`` take the first, upper-case
  placeholders get a value, and it runs on small fixture files;
* a block of ``$ command`` lines followed by output lines is a transcript: the output must match.
* in ``OUTPUT_FILES``, a ``text`` block right after a ``python`` block is that block's output:
  what the block prints must match it (numbers of seconds excepted).

Anything else must be listed in ``NOT_RUN`` (with the reason) or ``CHECKED`` (with its own check),
so a new block fails this test until it runs or is listed.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from budget_extras import FeatureCosts
from budget_extras.cli._main import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
HAS_FORK = "+cegb" in lgb.__version__
PROGRAMS = ("budget-extras", "lightgbm")


@dataclass(frozen=True)
class Block:
    file: str
    line: int
    lang: str
    body: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.file, next(ln for ln in self.body.splitlines() if ln.strip()).strip())

    def listed(self, table: dict[tuple[str, str], Any]) -> tuple[str, str] | None:
        """The key of ``table`` naming this block (file and a prefix of its first line)."""
        return next((k for k in table if k[0] == self.file and self.key[1].startswith(k[1])), None)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def _blocks() -> list[Block]:
    out = []
    for path in DOCS:
        text = path.read_text()
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
            out.append(
                Block(str(path.relative_to(ROOT)), text[: m.start()].count("\n") + 1, m.group(1), m.group(2))
            )
    return out


BLOCKS = _blocks()

NOT_RUN: dict[tuple[str, str], str] = {
    ("README.md", "bash run.sh demo    # builds and installs everything, then r"): (
        "builds the fork and installs everything (many minutes); run by CI"
    ),
    ("README.md", "import lightgbm as lgb"): "the quick start: run by tests/demo/test_readme.py",
    ("README.md", 'python -m pytest tests -m "not slow and not fork" -q'): (
        "the test commands: this suite itself (tests/conftest.py applies the markers)"
    ),
    ("docs/architecture.md", "LightGBM model text (file, string, Booster)"): "a data-flow diagram",
    ("docs/architecture.md", "est = Method(model, *, costs=..., <hyperparameters>)   # not"): (
        "the protocol's shape with placeholders; tests/budget_extras/test_protocol.py checks every method"
    ),
    ("docs/cegb.md", "gain'(s) = gain(s) - cegb_tradeoff * ( (cegb_penalty_split + "): (
        "a formula; tests/fork checks the engine against the reference scan"
    ),
    ("docs/cegb.md", "cegb_cost = mean over the rows of ( acquisition(row) + evaluat"): (
        "a formula; tests/fork/test_cegb_cost_metric.py checks the metric against cost_report"
    ),
    ("docs/costs.md", "tree 0:  TSH <= 0.01 ? leaf -1.0 : (FTI <= 0.1 ? leaf 0.5 : l"): (
        "an illustration of two trees in prose, not a file"
    ),
    ("docs/cost_report_speed.md", "nice -n 10 python -m benchmarks.core.cost_report_speed --plo"): (
        "the full benchmark (minutes); tests/benchmarks runs the benchmarks' smoke versions"
    ),
    ("docs/qwyc_model_format.md", 'qwyc-line      = key "=" value'): "a grammar",
    ("docs/train_to_budget.md", "python -m benchmarks.train_to_budget.budget_search_cost --da"): (
        "a benchmark over ../shared/data (many minutes); its numbers are in the table below it"
    ),
    ("docs/train_to_budget.md", "python -m benchmarks.train_to_budget.search_measure --data-d"): (
        "a benchmark over ../shared/data (minutes); its numbers are in the tables below it"
    ),
    ("docs/train_to_budget.md", "python -m benchmarks.train_to_budget.halving_rank_agreement"): (
        "a benchmark over ../shared/data (minutes); its numbers are in the table above it"
    ),
    ("docs/train_to_budget.md", "python -m benchmarks.train_to_budget.small_data --data-dir ."): (
        "a benchmark over ../shared/data (an hour on 2 cores); its numbers are in the table below it"
    ),
    ("docs/train_to_budget.md", "git worktree add --detach ../old-search 1c5a277^"): (
        "a benchmark against a checkout of an older commit (minutes of CPU); it compares two checkouts"
    ),
    ("docs/train_to_budget.md", "python -m benchmarks.train_to_budget.frontier_cv --data-dir "): (
        "a benchmark over ../shared/data (two hours of CPU); its numbers are in the table below it"
    ),
    ("docs/train_to_budget.md", "python -m benchmarks.train_to_budget.cv_shortlist --data-dir"): (
        "a benchmark over ../shared/data (half an hour of CPU); its numbers are in the table below it"
    ),
    ("docs/train_to_budget_design.md", "python -m benchmarks.train_to_budget.small_cost_parts --data"): (
        "a benchmark over ../shared/data (minutes of CPU); its numbers are in the tables below it"
    ),
    ("docs/train_to_budget_design.md", "python -m benchmarks.train_to_budget.small_data --data-dir ."): (
        "a benchmark over ../shared/data (tens of minutes of CPU); its numbers are in the tables below it"
    ),
    ("docs/train_to_budget_design.md", "python -m benchmarks.train_to_budget.cv_racing --data-dir .."): (
        "a benchmark over ../shared/data (tens of minutes of CPU); its numbers are in the table below it"
    ),
    ("docs/train_to_budget.md", "python -m benchmarks.train_to_budget.fast_frontier --data-di"): (
        "a benchmark over ../shared/data (tens of minutes); its numbers are in the paragraph above it"
    ),
    ("docs/train_to_budget.md", "python -m benchmarks.train_to_budget.fast_pool --data-dir .."): (
        "a benchmark over ../shared/data (half an hour of CPU); its numbers are in the table above it"
    ),
    ("docs/train_to_budget.md", "python -m benchmarks.train_to_budget.fast_regression --data-"): (
        "a benchmark over ../shared/data (two minutes); its numbers are in the table above it"
    ),
    ("docs/cost_report_speed.md", "python -m benchmarks.core.cost_report_memory"): (
        "the memory benchmark (1,000,000 rows, minutes); its chunking is tested by test_cost_report_chunks.py"
    ),
    ("docs/distributed.md", "pip uninstall -y lightgbm"): (
        "replaces the installed lightgbm with the fork's wheel: what run.sh install already did here"
    ),
    ("docs/qwyc_design.md", 'booster = lgb.Booster(model_file="fast_model.txt")      # wr'): (
        "the fork's predict calls on a saved plan; tests/fork/test_qwyc_native.py runs each of them"
    ),
    ("docs/qwyc_model_format.md", "s = 0.0                                    (double)"): "pseudo-code",
    ("docs/qwyc_model_format.md", "s[0..K-1] = 0.0"): "pseudo-code",
    ("docs/qwyc_model_format.md", "if n == 0:                   v = s"): "pseudo-code",
    ("docs/plotting.md", "pip install budget-extras[plot]"): "installs a package (matplotlib is in the test env)",
    ("docs/plotting.md", "python docs/img/make_doc_images.py"): (
        "rewrites the committed images; it runs the same code as the python blocks of docs/plotting.md, which run here"
    ),
    ("docs/qwyc_model_format.md", "objective=binary sigmoid:1"): (
        "a header excerpt with '...' elisions; tests/qwyc round-trip complete plan headers"
    ),
}


def _check_tree(block: Block, tmp_path: Path) -> None:
    """A directory tree: every module it names exists."""
    names = re.findall(r"([\w.]+\.py|[\w]+/)\s", block.body)
    assert names
    files = {p.name for p in (ROOT / "budget_extras").rglob("*")} | {"budget_extras"}
    missing = [n for n in names if n.rstrip("/") not in files]
    assert not missing, f"{block} names {missing} which do not exist under budget_extras/"


def _signature_of(call: str) -> inspect.Signature:
    ns: dict[str, Any] = {}
    exec(f"def f({call}): pass", ns)
    return inspect.signature(ns["f"])


def _check_signature(obj: Any, pattern: str) -> Any:
    def check(block: Block, tmp_path: Path) -> None:
        m = re.search(pattern, block.body, re.S)
        assert m, block
        shown = _signature_of(" ".join(m.group(1).split()))
        real = inspect.signature(obj)
        params = [p for p in real.parameters.values() if p.name != "self"]
        assert [(p.name, p.kind) for p in shown.parameters.values()] == [(p.name, p.kind) for p in params]
        for p in shown.parameters.values():
            assert p.default == real.parameters[p.name].default, (block, p.name)

    return check


def _check_demo_table(block: Block) -> None:
    """The README's copy of the demo's table has the demo's columns and its four models.

    The numbers come from a run of ``python -m budget_extras.demo``; tests/demo runs the demo
    (on fewer rounds) and checks the properties the README states.
    """
    from budget_extras.demo import HEADER

    lines = block.body.splitlines()
    assert lines[0] == HEADER
    models = [ln[:28].strip().split(" (")[0] for ln in lines[1:]]
    assert models == ["LightGBM", "best top-k by gain", "train_to_budget", "train_to_budget, fast"]
    assert all(len(ln[28:].split()) == 7 for ln in lines[1:])


def _estimator(name: str) -> Any:
    import budget_extras

    return getattr(budget_extras, name)


def _make_budget_scorer() -> Any:
    from budget_extras.core import make_budget_scorer

    return make_budget_scorer


def _train_to_budget() -> Any:
    from budget_extras import train_to_budget

    return train_to_budget


CHECKED: dict[tuple[str, str], Any] = {
    ("README.md", "model                        valid acc valid cost  test acc"): lambda b, t: _check_demo_table(b),
    ("docs/architecture.md", "budget_extras/"): _check_tree,
    ("docs/costs.md", "FeatureCosts(lazy=None, *, coupled=None, groups=None, group_"): _check_signature(
        FeatureCosts.__init__, r"FeatureCosts\((.*)\)"
    ),
    # the user pages' constructor signatures against the estimators themselves
    ("docs/adapt.md", "AdaptGBRT(f0=None, *, p_full=0.5, gamma=0.01, costs=None, bud"): lambda b, t: _check_signature(
        _estimator("AdaptGBRT").__init__, r"AdaptGBRT\((.*?)\)\n"
    )(b, t),
    ("docs/budgetprune.md", "BudgetPrune(model=None, *, lam=None, budget=None, costs=None,"): (
        lambda b, t: _check_signature(_estimator("BudgetPrune").__init__, r"BudgetPrune\((.*?)\)\n")(b, t)
    ),
    ("docs/budgetprune.md", "FeatureDropRefit(model=None, *, budget=None, costs=None, scori"): (
        lambda b, t: _check_signature(_estimator("FeatureDropRefit").__init__, r"FeatureDropRefit\((.*?)\)\n")(b, t)
    ),
    ("docs/cstc.md", "CSTC(booster=None, *, costs=None, depth=3, lam=0.01, rho=1e-"): lambda b, t: _check_signature(
        _estimator("CSTC").__init__, r"CSTC\((.*?)\)\n"
    )(b, t),
    ("docs/qwyc.md", 'QWYC(model=None, *, alpha=0.005, order="greedy", mode="two_sid'): lambda b, t: _check_signature(
        _estimator("QWYC").__init__, r"QWYC\((.*?)\)\n"
    )(b, t),
    ("docs/budget_scorer.md", "from budget_extras.core import make_budget_scorer"): lambda b, t: _check_signature(
        _make_budget_scorer(), r"make_budget_scorer\((.*?)\)\n"
    )(b, t),
    ("docs/train_to_budget.md", "from budget_extras import train_to_budget"): lambda b, t: _check_signature(
        _train_to_budget(), r"train_to_budget\(\s*(.*?)\s*\)\nbooster"
    )(b, t),
}


# ----------------------------------------------------------------------------- fixtures


def _binary_data(n: int = 600, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 6)), columns=[f"f{i}" for i in range(6)])
    y = ((X["f0"] + 0.7 * X["f1"] - 0.5 * X["f3"] + 0.3 * rng.normal(size=n)) > 0).astype(int).to_numpy()
    return X, y


def _namespace(block: Block) -> dict[str, Any]:
    """Names the docs' python blocks use, bound to small data."""
    if "TSH" in block.body:  # thyroid examples
        from budget_extras.datasets import load_thyroid

        d = load_thyroid()
        rng = np.random.default_rng(0)
        tr = rng.choice(d.X_train.shape[0], 600, replace=False)
        va = rng.choice(d.X_test.shape[0], 400, replace=False)
        names = list(d.feature_names)
        return {
            "names": names,
            "X_train": pd.DataFrame(d.X_train[tr], columns=names),
            "y_train": d.y_train[tr],
            "X_valid": pd.DataFrame(d.X_test[va], columns=names),
            "y_valid": d.y_test[va],
        }
    X, y = _binary_data()
    X_train, y_train = X.iloc[:300], y[:300]
    X_valid, y_valid = X.iloc[300:450], y[300:450]
    X_test, y_test = X.iloc[450:], y[450:]
    params = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 10, "verbose": -1}
    booster = lgb.train(params, lgb.Dataset(X_train, y_train), num_boost_round=10)
    booster.save_model("model.txt")
    costs = FeatureCosts([1.0, 2.0, 3.0, 1.0, 5.0, 1.0], feature_names=list(X.columns))
    return {
        "lgb": lgb,
        "np": np,
        "pd": pd,
        "X": X_test,
        "y": y_test,
        "X_train": X_train,
        "y_train": y_train,
        "X_valid": X_valid,
        "y_valid": y_valid,
        "X_test": X_test,
        "X_calib": X_valid,
        "names": list(X.columns),
        "params": params,
        "train_set": lgb.Dataset(X_train, y_train),
        "booster": booster,
        "my_lightgbm_model": booster,
        "text": booster.model_to_string(),
        "f0": lgb.LGBMClassifier(n_estimators=20, num_leaves=7, verbose=-1).fit(X_train, y_train),
        "costs": costs,
    }


def _write_cli_fixtures(d: Path) -> None:
    """The files the docs' commands name, small: models, CSVs, a config, costs."""
    X, y = _binary_data()
    df = X.copy()
    df["y"] = y
    df["label"] = y
    df.iloc[:300].to_csv(d / "train.csv", index=False)
    df.iloc[300:450].to_csv(d / "valid.csv", index=False)
    df.iloc[450:].to_csv(d / "test.csv", index=False)
    df.to_csv(d / "data.csv", index=False)
    X.iloc[300:450].to_csv(d / "calib.csv", index=False)
    params = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 10, "verbose": -1}
    booster = lgb.train(params, lgb.Dataset(X.iloc[:300], y[:300]), num_boost_round=8)
    for name in ("model.txt", "m.txt", "booster.txt"):
        booster.save_model(str(d / name))
    rf = lgb.train(
        {**params, "boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1, "feature_fraction": 0.8},
        lgb.Dataset(X.iloc[:300], y[:300]),
        num_boost_round=6,
    )
    rf.save_model(str(d / "rf.txt"))
    (d / "costs.csv").write_text("feature,cost,group\nf0,1,\nf1,2,\nf2,3,lab\nf3,3,lab\nf4,5,\nf5,1,\n")
    (d / "train.conf").write_text(
        "data=train.csv\nheader=true\nlabel_column=name:y\nobjective=binary\nnum_leaves=7\n"
        "min_data_in_leaf=10\nnum_iterations=5\nverbose=-1\n"
    )
    (d / "garbage.bin").write_bytes(b"\xdd" + bytes(range(256)) * 4)


PLACEHOLDERS = {"N": "3", "L": "0.1", "B": "3", "COMMAND": "report"}


def _usage_to_argv(command: str) -> list[str]:
    """Turn a documented usage line into one concrete command line."""
    s = command
    while True:  # innermost optional / alternative groups first
        t = re.sub(r"\[([^\[\]()]*)\]", lambda m: m.group(1).split(" | ")[0], s)
        t = re.sub(r"\(([^\[\]()]*)\)", lambda m: m.group(1).split(" | ")[0], t)
        if t == s:
            break
        s = t
    argv = []
    for tok in shlex.split(s):
        if "|" in tok:
            tok = tok.split("|")[0]
        argv.append(PLACEHOLDERS.get(tok, tok))
    return argv


def _run(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    if argv[0] == "budget-extras":
        try:
            rc = main(argv[1:])
        except SystemExit as exc:  # --help / --version
            rc = int(exc.code or 0)
        out = capsys.readouterr()
        return rc, out.out, out.err
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def _commands(body: str) -> list[str]:
    """One string per command; a line not starting with a program name continues the previous one."""
    out: list[str] = []
    for line in body.replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line:
            continue
        if out and line.split()[0] not in PROGRAMS:
            out[-1] += " " + line
        else:
            out.append(line)
    return out


#: Docs whose ``text`` blocks right after a ``python`` block show what that block prints.
OUTPUT_FILES = ("docs/tutorial.md",)


def _is_output(block: Block) -> bool:
    i = BLOCKS.index(block)
    return (
        block.lang == "text"
        and block.file in OUTPUT_FILES
        and i > 0
        and BLOCKS[i - 1].file == block.file
        and BLOCKS[i - 1].lang == "python"
    )


def _printed(text: str) -> str:
    """Output as compared: lines stripped at the right, wall times (``12.3 s``) replaced."""
    lines = [re.sub(r"\b\d+\.\d+ s\b", "<seconds> s", ln).rstrip() for ln in text.strip().splitlines()]
    return "\n".join(lines)


def _kind(block: Block) -> str:
    if block.listed(NOT_RUN):
        return "not run"
    if block.listed(CHECKED):
        return "checked"
    first = block.key[1]
    if _is_output(block):
        return "output"
    if block.lang == "python":
        return "python"
    if first.startswith("feature,"):
        return "costs"
    if first.startswith("$ "):
        return "transcript"
    if all(c.split()[0] in PROGRAMS for c in _commands(block.body)):
        return "command"
    return "unknown"


def test_every_block_is_run_or_listed():
    unknown = [f"{b} {b.key[1][:60]!r}" for b in BLOCKS if _kind(b) == "unknown"]
    assert not unknown, f"run these blocks or list them in NOT_RUN with a reason: {unknown}"
    stale = set(NOT_RUN) | set(CHECKED)
    stale -= {b.listed(NOT_RUN) or b.listed(CHECKED) for b in BLOCKS}
    assert not stale, f"NOT_RUN / CHECKED name blocks that no longer exist: {stale}"
    assert (ROOT / "tests" / "demo" / "test_readme.py").exists()


def _ids(kind: str) -> list[Block]:
    return [b for b in BLOCKS if _kind(b) == kind]


@pytest.mark.parametrize("block", _ids("checked"), ids=str)
def test_checked_block(block, tmp_path):
    CHECKED[block.listed(CHECKED)](block, tmp_path)


def _fast_defaults() -> dict[str, list[tuple[Any, dict[str, Any]]]]:
    """Smaller defaults for the slow examples (the code runs as written, on fewer rounds)."""
    from budget_extras import AdaptGBRT, train_to_budget

    return {
        "docs/adapt.md": [(AdaptGBRT.__init__, {"n_trees": 10, "max_em_iter": 2})],
        "docs/train_to_budget.md": [(train_to_budget, {"num_boost_round": 15, "n_tradeoffs": 2, "n_bisect": 1})],
    }


PY_FILES = sorted({b.file for b in _ids("python")})
#: Docs whose examples use the fork's C++ features (cegb_cost_file=FeatureCosts, search="fast").
FORK_FILES = {"docs/cegb.md", "docs/train_to_budget.md", "docs/tutorial.md"}
#: Docs whose examples take more than about 20 s on 2 cores.
SLOW_FILES = {"docs/budget_scorer.md", "docs/budgetprune.md", "docs/cstc.md", "docs/plotting.md", "docs/qwyc.md",
              "docs/train_to_budget.md", "docs/tutorial.md"}


def _py_file(file: str) -> Any:
    marks = ([pytest.mark.fork] if file in FORK_FILES else []) + ([pytest.mark.slow] if file in SLOW_FILES else [])
    return pytest.param(file, marks=marks, id=file)


@pytest.mark.parametrize("file", [_py_file(f) for f in PY_FILES])
def test_python_blocks(file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for fn, defaults in _fast_defaults().get(file, []):
        kw = dict(fn.__kwdefaults__)
        kw.update({k: v for k, v in defaults.items() if k in kw})
        monkeypatch.setattr(fn, "__kwdefaults__", kw)
    ns: dict[str, Any] | None = None
    for block in _ids("python"):
        if block.file != file:
            continue
        if ns is None or "TSH" in block.body:
            ns = _namespace(block)
            if file == "docs/budgetprune.md":  # BudgetPrune's examples prune a random forest
                ns["booster"] = lgb.train(
                    {**ns["params"], "boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1},
                    lgb.Dataset(ns["X_train"], ns["y_train"]),
                    num_boost_round=6,
                )
        exec(compile(block.body, f"{block}", "exec"), ns)
        printed = capsys.readouterr().out
        shown = BLOCKS[BLOCKS.index(block) + 1] if BLOCKS.index(block) + 1 < len(BLOCKS) else None
        if shown is not None and _kind(shown) == "output":
            assert _printed(printed) == _printed(shown.body), f"{shown} is not what {block} prints"


@pytest.mark.parametrize("block", _ids("costs"), ids=str)
def test_costs_file_blocks(block, tmp_path):
    path = tmp_path / "costs.csv"
    path.write_text(block.body)
    feats = [ln.split(",")[0] for ln in block.body.splitlines()[1:]]
    names = ["x0", *feats, "x1"]
    costs = FeatureCosts.from_csv(path, feature_names=names)
    assert costs.n_features == len(names)
    assert costs.lazy[0] == 0 and costs.lazy[-1] == 0  # features not listed cost 0
    assert (costs.lazy[1:-1] > 0).all()
    if not HAS_FORK or block.file != "docs/cegb.md":
        return  # docs/cegb.md documents the fork's cegb_cost_file: the same file trains there
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, len(names)))
    y = (X[:, 1] > 0).astype(float)
    params = {"cegb_cost_file": str(path), "cegb_tradeoff": 0.01, "verbose": -1, "num_leaves": 4}
    lgb.train(params, lgb.Dataset(X, y, feature_name=names), num_boost_round=2)


@pytest.mark.parametrize("block", _ids("command"), ids=str)
def test_command_blocks(block, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _write_cli_fixtures(tmp_path)
    for command in _commands(block.body):
        argv = _usage_to_argv(command)
        rc, out, err = _run(argv, capsys)
        assert rc in (0, 1) if argv[1:2] == ["train"] else rc == 0, (argv, out, err)
        assert "Traceback" not in err


@pytest.mark.parametrize("block", _ids("transcript"), ids=str)
def test_transcript_blocks(block, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _write_cli_fixtures(tmp_path)
    lines = block.body.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith("$ ")]
    for i, j in zip(starts, [*starts[1:], len(lines)], strict=True):
        before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
        rc, out, err = _run(shlex.split(lines[i][2:]), capsys)
        assert (out + err).strip() == "\n".join(lines[i + 1 : j]).strip()
        if "error:" in err:
            assert rc == 2
            after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
            assert after == before  # a refused run changes no file


def test_console_script_is_this_checkout():
    """The command blocks run ``budget_extras.cli.main`` of this checkout (as the script does)."""
    proc = subprocess.run(
        [sys.executable, "-c", "import budget_extras; print(budget_extras.__file__)"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert Path(proc.stdout.strip()).resolve().is_relative_to(ROOT)
