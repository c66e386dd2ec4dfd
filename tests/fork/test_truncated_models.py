"""Truncated model files are refused or read whole, never past their end.

Upstream LightGBM 4.7.0 reads a model file into a buffer without a terminating NUL and trusts
``tree_sizes``: ``lgb.Booster(model_file=cut)`` reads past the end of the buffer and crashes the
process for cuts inside the trees (and divides by zero for a header cut right after
``num_tree_per_iteration=``). The fork (patch "model text loader: refuse truncated model
texts") loads a cut text only if the cut leaves every tree and the ``end of trees`` line intact
and no ``parameters:`` / ``parser:`` section open; then it loads the *complete* model. Every
other cut is a LightGBMError. Each engine runs in a subprocess, so a crash cannot kill pytest.
Damaged texts that upstream reads outside its arrays (a parameters line without ':', category-set
lists of the wrong lengths or beyond 32 bits) are a LightGBMError naming the line or key.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

# Writes the model file and the data; prints nothing.
MAKE_MODEL = textwrap.dedent("""
    import sys, numpy as np, pandas as pd, lightgbm as lgb
    out = sys.argv[1]
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"num_a": rng.normal(size=400), "num_b": rng.normal(size=400),
                      "cat": pd.Categorical(rng.choice(["x", "y", "z"], size=400))})
    y = (X["num_a"] + (X["cat"] == "y") > 0.3).astype(float)
    b = lgb.train({"objective": "binary", "num_leaves": 4, "verbose": -1, "seed": 1},
                  lgb.Dataset(X, y), num_boost_round=3)
    b.save_model(out + "/model.txt")
    np.save(out + "/X.npy", np.column_stack([X["num_a"], X["num_b"], X["cat"].cat.codes]).astype(float))
""")

# Loads model.txt cut at every offset in argv[2:] (or all offsets) and reports one outcome per cut.
LOAD_CUTS = textwrap.dedent("""
    import json, sys, numpy as np, lightgbm as lgb
    out = sys.argv[1]
    text = open(out + "/model.txt", "rb").read()
    X = np.load(out + "/X.npy")
    full = lgb.Booster(model_file=out + "/model.txt")
    want = full.predict(X, raw_score=True)
    cuts = [int(c) for c in sys.argv[2:]] or range(len(text))
    result = {}
    for cut in cuts:
        path = out + "/cut.txt"
        with open(path, "wb") as f:
            f.write(text[:cut])
        try:
            b = lgb.Booster(model_file=path)
        except lgb.basic.LightGBMError as e:
            result[cut] = "error: " + str(e)[:200]
            continue
        except Exception as e:
            result[cut] = "other: " + type(e).__name__ + " " + str(e)[:200]
            continue
        same = b.num_trees() == full.num_trees() and np.array_equal(b.predict(X, raw_score=True), want)
        result[cut] = "loaded complete model" if same else "loaded a different model"
    print(json.dumps(result))
""")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("truncated")
    subprocess.run([sys.executable, "-c", MAKE_MODEL, str(out)], check=True, timeout=300)
    return out


def _landmarks(text: bytes) -> dict[str, int]:
    return {
        "feature_infos": text.index(b"\nfeature_infos=") + len(b"\nfeature_infos=") + 3,
        "tree_sizes": text.index(b"\ntree_sizes=") + len(b"\ntree_sizes=") + 2,
        "tree0_split_feature": text.index(b"split_feature=") + len(b"split_feature="),
        "tree1_start": text.index(b"\nTree=1\n") + 1,
        "tree2_leaf_value": text.index(b"leaf_value=", text.index(b"\nTree=2\n")) + 13,
        "tree2_last_byte": text.index(b"end of trees") - 2,
        "end_of_trees_partial": text.index(b"end of trees") + 5,
        "parameters": text.index(b"\nparameters:\n") + len(b"\nparameters:\n") + 10,
        "pandas_categorical": text.index(b"pandas_categorical:") + len(b"pandas_categorical:") + 4,
        "num_tree_per_iteration_value": text.index(b"num_tree_per_iteration=") + len(b"num_tree_per_iteration="),
    }


def _expected_ok(text: bytes, cut: int) -> bool:
    """The documented rule: every tree and the 'end of trees' line present, no open section, and
    (Python) the pandas_categorical line not cut."""
    if cut < text.index(b"end of trees") + len(b"end of trees"):
        return False
    params = text.index(b"\nparameters:\n") + len(b"\nparameters:")
    if params <= cut < text.index(b"end of parameters") + len(b"end of parameters"):
        return False
    pandas = text.index(b"pandas_categorical:")
    return not (pandas + len(b"pandas_categorical:") <= cut < len(text.rstrip()))


def test_fork_refuses_every_cut_or_loads_the_complete_model(model_dir):
    text = (model_dir / "model.txt").read_bytes()
    assert b"tree_sizes=" in text and b"pandas_categorical:[[" in text
    proc = subprocess.run([sys.executable, "-c", LOAD_CUTS, str(model_dir)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]  # no cut crashed the process
    result = {int(k): v for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}
    assert sorted(result) == list(range(len(text)))
    wrong = {}
    for cut, outcome in result.items():
        ok = _expected_ok(text, cut)
        if (ok and outcome != "loaded complete model") or (not ok and not outcome.startswith("error: ")):
            wrong[cut] = outcome
    assert not wrong, dict(list(wrong.items())[:10])
    marks = _landmarks(text)
    for name in ("tree1_start", "tree2_leaf_value", "tree2_last_byte"):
        assert result[marks[name]].startswith("error: Model text is truncated: tree_sizes lists 3 trees"), name
    assert "expected an 'end of trees' line" in result[marks["end_of_trees_partial"]]
    assert "'parameters:' section has no 'end of parameters' line" in result[marks["parameters"]]
    assert "pandas_categorical line is not valid JSON" in result[marks["pandas_categorical"]]
    assert "num_tree_per_iteration must be integers >= 1" in result[marks["num_tree_per_iteration_value"]]


def test_upstream_crashes_on_cut_model_files(model_dir, upstream_python):
    """Each cut in its own upstream process: at least one kills the process with a signal."""
    text = (model_dir / "model.txt").read_bytes()
    marks = _landmarks(text)
    codes = {}
    for name in ("num_tree_per_iteration_value", "tree1_start", "tree2_leaf_value", "tree0_split_feature"):
        proc = subprocess.run([str(upstream_python), "-c", LOAD_CUTS, str(model_dir), str(marks[name])],
                              capture_output=True, timeout=300)  # bytes: upstream prints heap garbage
        codes[name] = proc.returncode
    assert any(rc < 0 for rc in codes.values()), codes  # killed by SIGSEGV / SIGFPE / SIGABRT


def test_cli_refuses_cut_model_files(model_dir, tmp_path):
    exe = shutil.which("lightgbm")
    assert exe, "the fork's lightgbm CLI must be on PATH"
    text = (model_dir / "model.txt").read_bytes()
    X = np.load(model_dir / "X.npy")
    data = tmp_path / "x.csv"
    np.savetxt(data, X, delimiter=",", fmt="%.17g")
    marks = _landmarks(text)
    for name, cut in marks.items():
        if name == "pandas_categorical":
            continue  # a Python-package line: the CLI ignores it
        model = tmp_path / "cut.txt"
        model.write_bytes(text[:cut])
        proc = subprocess.run([exe, "task=predict", f"data={data}", f"input_model={model}",
                               f"output_result={tmp_path / 'out.txt'}", "header=false"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode > 0, (name, proc.returncode, proc.stdout[-500:])  # an error, not a signal
        assert "[Fatal]" in proc.stdout + proc.stderr, (name, proc.stdout[-500:])
    # the complete file still predicts
    proc = subprocess.run([exe, "task=predict", f"data={data}", f"input_model={model_dir / 'model.txt'}",
                           f"output_result={tmp_path / 'out.txt'}", "header=false"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-1000:]


def test_model_without_trees_round_trips(lgb):
    """The 'end of trees' rule keeps a model with zero trees loadable."""
    X = np.random.default_rng(0).normal(size=(100, 3))
    booster = lgb.Booster({"objective": "regression", "verbose": -1}, lgb.Dataset(X, X[:, 0]))
    text = booster.model_to_string()
    assert "Tree=" not in text
    assert lgb.Booster(model_str=text).num_trees() == 0


def test_nul_byte_is_refused(lgb, tmp_path):
    X = np.random.default_rng(0).normal(size=(100, 3))
    text = lgb.train({"objective": "regression", "verbose": -1}, lgb.Dataset(X, X[:, 0]), 2).model_to_string()
    path = Path(tmp_path / "nul.txt")
    path.write_bytes(text.encode()[:200] + b"\0" + text.encode()[200:])
    with pytest.raises(lgb.basic.LightGBMError, match=r"byte 200 of \d+ is a NUL character"):
        lgb.Booster(model_file=str(path))


def test_windows_line_ends_are_read(lgb, tmp_path):
    """A model file with "\\r\\n" line ends (a Windows checkout) loads as the "\\n" file: same trees,
    same predictions, same parameters; by file, by string and through the CLI."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"num_a": rng.normal(size=400), "num_b": rng.normal(size=400),
                      "cat": pd.Categorical(rng.choice(["x", "y", "z"], size=400))})
    y = (X["num_a"] + (X["cat"] == "y") > 0.3).astype(float)
    booster = lgb.train({"objective": "binary", "num_leaves": 4, "verbose": -1, "seed": 1, "cegb_tradeoff": 0.1,
                         "cegb_penalty_feature_lazy": [1.0, 2.0, 3.0]}, lgb.Dataset(X, y), num_boost_round=20)
    text = booster.model_to_string()
    crlf = text.replace("\n", "\r\n")
    path = tmp_path / "crlf.txt"
    path.write_bytes(crlf.encode())
    want = booster.predict(X, raw_score=True)
    for loaded in (lgb.Booster(model_file=str(path)), lgb.Booster(model_str=crlf)):
        assert loaded.num_trees() == 20
        np.testing.assert_array_equal(loaded.predict(X, raw_score=True), want)
        assert loaded.model_to_string() == text
    exe = shutil.which("lightgbm")
    assert exe, "the fork's lightgbm CLI must be on PATH"
    codes = np.column_stack([X["num_a"], X["num_b"], X["cat"].cat.codes]).astype(float)
    np.savetxt(tmp_path / "X.csv", np.column_stack([np.zeros(len(X)), codes]), delimiter=",", fmt="%.17g")
    proc = subprocess.run([exe, "task=predict", f"data={tmp_path / 'X.csv'}", f"input_model={path}",
                           "predict_raw_score=true", f"output_result={tmp_path / 'out.txt'}", "verbose=-1"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-1000:]
    np.testing.assert_allclose(np.loadtxt(tmp_path / "out.txt"), want, rtol=1e-12, atol=1e-12)


# Loads the model text in argv[1] by string, predicts the rows of argv[2]; prints one outcome.
LOAD_TEXT = textwrap.dedent("""
    import sys, numpy as np, lightgbm as lgb
    text = open(sys.argv[1]).read()
    try:
        lgb.Booster(model_str=text).predict(np.load(sys.argv[2]), raw_score=True)
    except lgb.basic.LightGBMError as e:
        print("error: " + str(e)[:300])
    else:
        print("loaded")
""")


def _first_cat_tree(text: str) -> tuple[str, str, str]:
    """The text cut at the cat_boundaries line of its first tree with a category set: before, lines, after."""
    start = text.index("\ncat_boundaries=") + 1
    end = text.index("\n", text.index("\ncat_threshold=", start) + 1)
    return text[:start], text[start:end], text[end:]


def _mutate_category_sets(text: str, bounds=None, words: int = 0) -> str:
    """``text`` with its first tree's cat_boundaries turned into ``bounds(boundaries)`` and ``words``
    cat_threshold entries dropped; without ``tree_sizes``, so the trees are read one after the other."""
    before, lines, after = _first_cat_tree(re.sub(r"(?m)^tree_sizes=.*\n", "", text))
    b_line, t_line = lines.split("\n")
    if bounds is not None:
        b_line = "cat_boundaries=" + " ".join(bounds(b_line.partition("=")[2].split(" ")))
    if words:
        t_line = "cat_threshold=" + " ".join(t_line.partition("=")[2].split(" ")[:-words])
    return before + b_line + "\n" + t_line + after


MALFORMED_TEXTS = {
    "parameters line without ':'": (
        lambda text: text.replace("parameters:\n", "parameters:\n[abc]\n", 1),
        r"parameters section line '\[abc\]' is not a '\[key: value\]' line",
    ),
    "cat_boundaries beyond 32 bits": (
        lambda text: _mutate_category_sets(text, bounds=lambda b: [*b[:-1], str(2**32 + 2**31 - 1)]),
        r"'cat_boundaries' must hold integers 0\.\.2147483647, got '6442450943'",
    ),
    "cat_boundaries shorter than num_cat + 1": (
        lambda text: _mutate_category_sets(text, bounds=lambda b: b[:-1]),
        r"'cat_boundaries' must have \d+ values \(num_cat \+ 1\), got \d+",
    ),
    "cat_boundaries not starting at 0": (
        lambda text: _mutate_category_sets(text, bounds=lambda b: ["1", *b[1:]]),
        r"'cat_boundaries' must start at 0 and not decrease",
    ),
    "cat_threshold shorter than the last boundary": (
        lambda text: _mutate_category_sets(text, words=1),
        r"'cat_threshold' must have \d+ values \(the last cat_boundaries value\), got \d+",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED_TEXTS))
def test_malformed_model_text_is_refused_naming_the_problem(model_dir, tmp_path, case):
    """A parameters line the loader cannot split, or category-set lists of the wrong lengths or with
    values beyond 32 bits, are a LightGBMError naming the line or key (not a crash, a hang or reads
    outside the lists); run in a subprocess, as the unchecked reading crashes or allocates gigabytes."""
    mutate, message = MALFORMED_TEXTS[case]
    text = (model_dir / "model.txt").read_text()
    bad = mutate(text)
    assert bad != text
    path = tmp_path / "bad.txt"
    path.write_text(bad)
    proc = subprocess.run([sys.executable, "-c", LOAD_TEXT, str(path), str(model_dir / "X.npy")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"crash (rc {proc.returncode}): {proc.stderr[-500:]}"
    out = proc.stdout.strip().splitlines()[-1]
    assert out.startswith("error: "), out
    assert re.search(message, out), out
