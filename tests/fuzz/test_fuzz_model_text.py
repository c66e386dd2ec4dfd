"""Mutated model texts through every loader: TreeEnsemble.from_model_string, read_qwyc_plan and the fork's
Booster(model_str=) (in a worker process). Neither reader hangs or crashes; budget_extras loads a mutant exactly when
LightGBM loads it (then with LightGBM's raw predictions), apart from the strict cases of docs/hardening.md
("One verdict on a model text"), each named here; a plan is accepted by budget_extras exactly when the
fork accepts it."""

from __future__ import annotations

import difflib
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from budget_extras import TreeEnsemble
from budget_extras.core import ModelParseError
from budget_extras.qwyc._estimator import QWYC
from budget_extras.qwyc._format import read_qwyc_plan

from .conftest import time_limit

# every verdict here is compared with the fork's model reader (upstream's hangs on a cyclic tree)
pytestmark = pytest.mark.fork

SETTINGS = settings(deadline=None, max_examples=60, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure prints its draws
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

NUMBERS = ["0", "-1", "1", "2", "3", "7", "-7", "nan", "inf", "-inf", "1e308", "-2147483649", "4294967296",
           "0.5", "abc", ""]

X = np.random.default_rng(1).normal(size=(30, 4))
X[:, 3] = np.arange(30) % 8
X[::7, 0] = np.nan


def _mutate(text: str, data: st.DataObject) -> str:
    """One to three mutations: delete / duplicate / swap lines, replace a value token, cut, flip a byte."""
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(1, 3))):
        kind = data.draw(st.sampled_from(["delete", "dup", "swap", "token", "token", "token", "cut", "byte",
                                          "cycle"]))
        if not lines:
            break
        i = data.draw(st.integers(0, len(lines) - 1))
        if kind == "delete":
            del lines[i]
        elif kind == "dup":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = data.draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "token" and "=" in lines[i]:
            key, _, value = lines[i].partition("=")
            toks = value.split(" ")
            k = data.draw(st.integers(0, len(toks) - 1))
            toks[k] = data.draw(st.sampled_from(NUMBERS))
            lines[i] = key + "=" + " ".join(toks)
        elif kind == "cut":
            lines = lines[:i]
        elif kind == "byte" and lines[i]:
            k = data.draw(st.integers(0, len(lines[i]) - 1))
            new = data.draw(st.sampled_from(["=", " ", "\t", "-", "9", "x", "\0"]))
            lines[i] = lines[i][:k] + new + lines[i][k + 1 :]
        elif kind == "cycle":
            child = [j for j, line in enumerate(lines) if line.startswith(("left_child=", "right_child="))]
            if child:
                j = data.draw(st.sampled_from(child))
                key, _, value = lines[j].partition("=")
                toks = value.split(" ")
                toks[data.draw(st.integers(0, len(toks) - 1))] = data.draw(st.sampled_from(["0", "1", "2"]))
                lines[j] = key + "=" + " ".join(toks)
    return "\n".join(lines)


#: The texts LightGBM loads and budget_extras refuses on purpose (docs/hardening.md, "One verdict on a
#: model text"): each case by name, with the pattern of budget_extras' message for it.
STRICT_CASES = {
    "a number not written as LightGBM writes numbers (LightGBM reads a prefix, garbage as 0, "
    "missing list entries as 0, wraps 32-bit overflow)": (
        r"must (be an integer|be a number|be a 32-bit integer|hold integers|hold numbers|hold (unsigned )?32-bit "
        r"integers)|must have \d+ values"
    ),
    "a 'Tree=' line that is not Tree=<its position>": r"is labelled",
    "a key LightGBM does not write in a tree block": r"unknown key",
    "a line out of place in a tree block (LightGBM skips it)": r"does not end with its key lines",
    "a first line other than 'tree'": r"the first line must be 'tree'",
    "a linear tree (not represented)": r"is a linear tree",
    "a split on a feature or category set that does not exist (LightGBM reads outside its arrays)": (
        r"is not a feature|is not a category-set index|'cat_boundaries' must start at 0"
    ),
    "a NUL byte (the C API reads the text only up to it)": r"a NUL byte",
    "num_class other than num_tree_per_iteration (LightGBM predicts num_class columns from fewer trees)": (
        r"differs from 'num_tree_per_iteration'"
    ),
    "a parameters line that is not '[key: value]'": r"is not a '\[key: value\]' line",
    "an objective alias (LightGBM writes the canonical names)": r"is not an objective LightGBM writes",
}


def _diff(before: str, after: str) -> str:
    return "\n".join(list(difflib.unified_diff(before.split("\n"), after.split("\n"), lineterm="", n=0))[:24])


def _check_one_verdict(model_text: str, text: str, worker) -> None:
    """budget_extras and the fork's Booster(model_str=) give one verdict on ``text``, except the strict cases."""
    with time_limit(20):
        try:
            ens, ours = TreeEnsemble.from_model_string(text), ""
        except ModelParseError as exc:
            ens, ours = None, str(exc)
    theirs = worker.load(text, X.tolist(), timeout=15)
    assert "crash" not in theirs and "hang" not in theirs, (
        f"LightGBM {theirs}, budget_extras {ours or 'loads'}\n{_diff(model_text, text)}"
    )
    if ens is None:
        if "ok" in theirs or "predict_error" in theirs:
            strict = [name for name, pattern in STRICT_CASES.items() if re.search(pattern, ours)]
            assert strict, f"budget_extras refuses a text LightGBM loads: {ours}\n{_diff(model_text, text)}"
        return
    assert "ok" in theirs, f"budget_extras loads a text LightGBM refuses: {theirs}\n{_diff(model_text, text)}"
    np.testing.assert_array_equal(ens.predict_raw(X), np.asarray(theirs["ok"]))


@SETTINGS
@given(data=st.data())
def test_mutated_model_text_loads_exactly_or_is_refused(model_text, worker, data):
    """A mutant loads in budget_extras exactly when LightGBM loads it (then with LightGBM's predictions),
    apart from the documented strict cases."""
    _check_one_verdict(model_text, _mutate(model_text, data), worker)


@pytest.mark.slow
@settings(SETTINGS, max_examples=2000)
@given(data=st.data())
def test_many_mutated_model_texts_load_exactly_or_are_refused(model_text, worker, data):
    """The same check on 2,000 mutants."""
    _check_one_verdict(model_text, _mutate(model_text, data), worker)


@SETTINGS
@given(data=st.data())
def test_mutated_qwyc_plan_both_readers_agree(model_text, worker, data):
    plan_text = _qwyc_text(model_text)
    header, sep, rest = plan_text.partition("\nTree=0\n")
    lines = header.split("\n")
    plan_lines = [i for i, line in enumerate(lines) if line.startswith("qwyc_")]
    for _ in range(data.draw(st.integers(1, 2))):
        i = data.draw(st.sampled_from(plan_lines))
        key, _, value = lines[i].partition("=")
        toks = value.split(" ")
        kind = data.draw(st.sampled_from(["token", "token", "drop", "delete", "dup"]))
        if kind == "token":
            toks[data.draw(st.integers(0, len(toks) - 1))] = data.draw(
                st.sampled_from([*NUMBERS, "0x1p-2", "INF", "+3", "binary_two_sided", "multiclass_margin",
                                 "binary_negative_only", "-0.5", "0.25"]))
        elif kind == "drop" and len(toks) > 1:
            del toks[data.draw(st.integers(0, len(toks) - 1))]
        elif kind == "delete":
            key = "not_" + key
        elif kind == "dup":
            lines.append(lines[i])
        lines[i] = key + "=" + " ".join(toks)
    text = "\n".join(lines) + sep + rest
    try:
        ours = read_qwyc_plan(text) is not None
    except ModelParseError:
        ours = False
    theirs = worker.load(text, X.tolist(), early_stop=True, timeout=15)
    assert "crash" not in theirs and "hang" not in theirs, theirs
    has_plan = any(line.startswith("qwyc_") for line in lines)
    if has_plan:
        assert ours == ("ok" in theirs), (ours, theirs)


#: Lines LightGBM cannot load a model without (the first line of each kind is mangled or deleted).
REQUIRED_LINES = ["num_class=", "label_index=", "max_feature_idx=", "feature_names=", "feature_infos=",
                  "Tree=1", "num_leaves=", "num_cat=", "leaf_value=", "left_child=",
                  "split_feature=", "threshold=", "cat_boundaries=", "cat_threshold=", "end of trees"]


@pytest.mark.parametrize("how", ["delete", "mangle"])
@pytest.mark.parametrize("start", REQUIRED_LINES)
def test_a_text_without_a_required_line_is_refused_by_both(model_text, worker, start, how):
    """Deleting or mangling (first character dropped) a line LightGBM needs: both readers refuse the text."""
    lines = model_text.split("\n")
    i = next(i for i, line in enumerate(lines) if line.startswith(start))
    lines[i : i + 1] = [] if how == "delete" else [lines[i][1:]]
    text = "\n".join(lines)
    with pytest.raises(ModelParseError):
        TreeEnsemble.from_model_string(text)
    assert "error" in worker.load(text, X.tolist(), timeout=15)


@pytest.mark.parametrize("delta", [-1, 1])
def test_tree_sizes_that_miss_a_tree_by_one_byte_are_refused_by_both(model_text, worker, delta):
    sizes = re.search(r"(?m)^tree_sizes=(\d+)", model_text)
    assert sizes is not None
    text = model_text.replace(sizes.group(0), f"tree_sizes={int(sizes.group(1)) + delta}", 1)
    with pytest.raises(ModelParseError, match="tree_sizes"):
        TreeEnsemble.from_model_string(text)
    assert "error" in worker.load(text, X.tolist(), timeout=15)


_CACHE: dict[str, str] = {}


def _qwyc_text(model_text: str) -> str:
    if "t" not in _CACHE:
        import lightgbm as lgb

        rng = np.random.default_rng(2)
        Xc = rng.normal(size=(200, 4))
        Xc[:, 3] = rng.integers(0, 6, 200)
        _CACHE["t"] = QWYC(lgb.Booster(model_str=model_text), alpha=0.05, random_state=0).fit(Xc).to_model_string()
    return _CACHE["t"]



def test_lightgbm_refuses_a_cycle(model_text, worker):
    """Upstream loads a root whose left_child is itself and predicts forever; the fork refuses it (patch 0016)."""
    text = model_text.replace("left_child=1 ", "left_child=0 ", 1)
    assert "left_child=0 " in text
    theirs = worker.load(text, X.tolist(), timeout=15)
    assert "hang" not in theirs and "crash" not in theirs, theirs


def test_unknown_objective_is_refused(model_text):
    with pytest.raises(ModelParseError, match="'objective'='nan' is not an objective LightGBM writes"):
        TreeEnsemble.from_model_string(model_text.replace("objective=binary sigmoid:1", "objective=nan", 1))
