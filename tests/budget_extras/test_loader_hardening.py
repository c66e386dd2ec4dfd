"""Hostile model texts: the core loader never walks forever and
refuses every truncation that drops information with ModelParseError; a cut it accepts
predicts exactly like LightGBM loading the same text."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras import TreeEnsemble
from budget_extras.core import ModelParseError


@pytest.fixture(scope="module")
def small_text() -> str:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4))
    X[:, 3] = rng.integers(0, 6, 300)
    y = (X[:, 0] + (X[:, 3] % 2) > 0.3).astype(float)
    booster = lgb.train({"objective": "binary", "num_leaves": 4, "verbose": -1, "min_data_in_leaf": 5,
                         "min_data_per_group": 5, "cat_smooth": 1.0, "num_threads": 1},
                        lgb.Dataset(X, y, categorical_feature=[3]), num_boost_round=3)
    return booster.model_to_string()


def _no_tree_sizes(text: str) -> str:
    """Drop the ``tree_sizes`` line: LightGBM then reads the trees one after another, whatever their sizes."""
    return "\n".join(line for line in text.split("\n") if not line.startswith("tree_sizes="))


def _set_tree0(text: str, key: str, value: str) -> str:
    """Replace tree 0's ``key=`` line (without ``tree_sizes``, as the sizes change)."""
    text = _no_tree_sizes(text)
    head, sep, rest = text.partition("Tree=0\n")
    lines = rest.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(key + "="):
            lines[i] = f"{key}={value}"
            break
    return head + sep + "\n".join(lines)


# num_leaves=4 in tree 0: internal nodes 0..2, leaves -1..-4
LINKS = {
    "root left child is the root": ("0 2 -2", "1 -3 -4", "root"),
    "two-node cycle": ("1 0 -2", "2 -3 -4", "root"),
    "cycle away from the root": ("-1 2 1", "-2 -3 -4", "do not form a tree"),
    "node with two parents": ("1 1 -2", "2 -3 -4", "child of 2"),
    "leaf with two parents": ("1 -1 -1", "2 -3 -4", "child of 2"),
    "out of range": ("1 7 -2", "2 -3 -4", "out of range"),
    "leaf out of range": ("1 2 -9", "2 -3 -4", "out of range"),
    "not an integer": ("1 2.5 -2", "2 -3 -4", "integers"),
    "NaN link": ("1 nan -2", "2 -3 -4", "integers"),
}


def test_cyclic_and_broken_child_links_are_refused_without_hanging(small_text):
    """Each case runs in a subprocess with a 60 s limit: a walk that loops is a failure, not a hang."""
    cases = {name: _set_tree0(_set_tree0(small_text, "left_child", lc), "right_child", rc)
             for name, (lc, rc, _) in LINKS.items()}
    script = textwrap.dedent("""
        import json, sys
        from budget_extras import TreeEnsemble
        from budget_extras.core import ModelParseError
        out = {}
        for name, text in json.load(sys.stdin).items():
            try:
                TreeEnsemble.from_model_string(text)
                out[name] = "loaded"
            except ModelParseError as exc:
                out[name] = str(exc)
        print(json.dumps(out))
    """)
    res = subprocess.run([sys.executable, "-c", script], input=json.dumps(cases), capture_output=True,
                         text=True, timeout=60, check=True)
    got = json.loads(res.stdout)
    for name, (_, _, match) in LINKS.items():
        assert "tree 0" in got[name], (name, got[name])
        assert any(m in got[name] for m in match.split("|")), (name, got[name])


def _lightgbm_predictions(texts: list[str], X: np.ndarray) -> list[list[float] | None]:
    """LightGBM's raw predictions for each text, in a subprocess (upstream segfaults on some cuts)."""
    script = textwrap.dedent("""
        import json, sys
        import numpy as np
        import lightgbm as lgb
        data = json.load(sys.stdin)
        X = np.array(data["X"])
        out = []
        for text in data["texts"]:
            try:
                out.append(lgb.Booster(model_str=text).predict(X, raw_score=True).tolist())
            except Exception:
                out.append(None)
        print(json.dumps(out))
    """)
    res = subprocess.run([sys.executable, "-c", script], input=json.dumps({"texts": texts, "X": X.tolist()}),
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(res.stdout)


def test_every_truncation_is_refused_or_loads_exactly(small_text):
    """Cut at every line boundary and at every 7th byte: ModelParseError, or (only for cuts after
    'end of trees' that keep every section they start) the same predictions as LightGBM on that text."""
    ends = [i + 1 for i, ch in enumerate(small_text) if ch == "\n"]
    cuts = sorted(set(ends) | set(range(0, len(small_text), 7)) - {len(small_text)})
    end_trees = small_text.index("end of trees")
    accepted = []
    for cut in cuts:
        text = small_text[:cut]
        try:
            TreeEnsemble.from_model_string(text)
        except ModelParseError:
            continue
        accepted.append(text)
        assert cut > end_trees, f"a cut at byte {cut} (before 'end of trees') was accepted"
        params = text.find("parameters:")
        assert params < 0 or "end of parameters" in text[params:], f"a cut inside parameters: at {cut}"
    assert accepted, "cuts after the complete sections load"
    X = np.random.default_rng(0).normal(size=(50, 4))
    X[:, 3] = np.arange(50) % 7
    for text, expected in zip(accepted, _lightgbm_predictions(accepted, X), strict=True):
        assert expected is not None, "LightGBM refuses a cut budget_extras accepts"
        np.testing.assert_array_equal(TreeEnsemble.from_model_string(text).predict_raw(X), expected)


def test_file_cut_in_parameters_is_refused(small_text, tmp_path):
    at = small_text.index("[boosting: ")
    path = tmp_path / "cut.txt"
    path.write_text(small_text[: at + 5])
    with pytest.raises(ModelParseError, match="end of parameters"):
        TreeEnsemble.from_model_file(path)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda s: _no_tree_sizes(s).replace("num_leaves=4", "num_leaves=abc", 1),
         "tree 0: 'num_leaves' must be an integer"),
        (lambda s: s.replace("max_feature_idx=3", "max_feature_idx=99999999999", 1), "max_feature_idx"),
        (lambda s: s.replace("num_class=1", "num_class=x", 1), "num_class"),
        (lambda s: s.replace("pandas_categorical:null", "pandas_categorical:[[1,", 1), "pandas_categorical"),
        (lambda s: s.replace("feature_infos=", "feature_infos=none ", 1), "feature_infos"),
    ],
)
def test_bad_header_and_tree_numbers_name_the_key(small_text, mutate, match):
    with pytest.raises(ModelParseError, match=match):
        TreeEnsemble.from_model_string(mutate(small_text))


@pytest.mark.parametrize("command", ["report", "prune", "qwyc", "adapt"])
def test_cli_refuses_a_truncated_model_in_one_line(small_text, tmp_path, command):
    """Every subcommand that reads a model parses it with the core loader first: exit 2, one line."""
    model = tmp_path / "cut.txt"
    model.write_text(small_text[: small_text.index("Tree=1") + 40])
    data = tmp_path / "d.csv"
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4))
    X[:, 3] = rng.integers(0, 6, 40)
    import pandas as pd

    frame = pd.DataFrame(X, columns=[f"Column_{i}" for i in range(4)])
    frame["y"] = (X[:, 0] > 0).astype(float)
    frame.to_csv(data, index=False)
    args = {
        "report": ["report", "--model", str(model), "--data", str(data)],
        "prune": ["prune", "--model", str(model), "--train", str(data), "--valid", str(data), "--label", "y",
                  "--lambda", "0.1", "-o", str(tmp_path / "o.txt")],
        "qwyc": ["qwyc", "--model", str(model), "--calib", str(data), "-o", str(tmp_path / "o.txt")],
        "adapt": ["adapt", "--f0", str(model), "--train", str(data), "--label", "y",
                  "--output", str(tmp_path / "o.json")],
    }[command]
    main = "import sys; from budget_extras.cli._main import main; sys.exit(main())"
    res = subprocess.run([sys.executable, "-c", main, *args], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "is the file truncated?" in lines[0] and "cut.txt" in lines[0], res.stderr
