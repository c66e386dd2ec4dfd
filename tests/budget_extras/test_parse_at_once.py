"""The model-text reader's fast road (whole tree blocks, every key of every tree at once) gives the
reference reader's answer: the same arrays for a text it reads, the same error for one it refuses,
on real models and on mutants of them; and it is the road a regular text takes."""

from __future__ import annotations

import re
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras.core import _parse
from budget_extras.core._builder import ModelParseError

TOKENS = ["0", "-0", "1", "-1", "2", "7", "1.", ".5", "1e5", "+3", "nan", "-inf", "Infinity", "abc", "", "0x1",
          "2147483648", "-2147483649", "4294967296", "1.5", "30", "-31"]


def _models() -> list[str]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    X[:, 3] = rng.integers(0, 12, 300)
    X[::9, 0] = np.nan
    y = (X[:, 1] + (X[:, 3] % 3 == 0) > 0.3).astype(int)
    base = {"verbose": -1, "num_threads": 1, "min_data_in_leaf": 5}
    texts = []
    for params, label, rounds in (
        ({"objective": "binary", "num_leaves": 7}, y, 8),
        ({"objective": "multiclass", "num_class": 3, "num_leaves": 5}, (X[:, 1] > 0) + (X[:, 2] > 0), 4),
        ({"objective": "regression", "num_leaves": 4, "min_gain_to_split": 5.0}, y * 0.01, 6),  # one-leaf trees
    ):
        ds = lgb.Dataset(X, label, categorical_feature=[3], free_raw_data=False)
        texts.append(lgb.train({**base, **params}, ds, num_boost_round=rounds).model_to_string())
    return texts


def _sizes_fixed(text: str) -> str:
    """``text`` with tree_sizes rewritten for the blocks between its 'Tree=' lines (as a writer would)."""
    starts = [m.start() for m in re.finditer(r"^Tree=", text, flags=re.M)]
    end = text.find("end of trees")
    if not starts or end < starts[-1] or "tree_sizes=" not in text:
        return text
    sizes = [len(text[a:b].encode()) for a, b in zip(starts, [*starts[1:], end], strict=True)]
    return re.sub(r"^tree_sizes=.*$", "tree_sizes=" + " ".join(map(str, sizes)), text, count=1, flags=re.M)


def _with_one_leaf_tree(text: str) -> str:
    """``text`` with its last tree replaced by a one-leaf tree as LightGBM writes one (empty node keys)."""
    starts = [m.start() for m in re.finditer(r"^Tree=", text, flags=re.M)]
    end = text.find("end of trees")
    block = (f"Tree={len(starts) - 1}\nnum_leaves=1\nnum_cat=0\nsplit_feature=\nsplit_gain=\nthreshold=\n"
             "decision_type=\nleft_child=\nright_child=\nleaf_value=0.25\nleaf_weight=\nleaf_count=300\n"
             "internal_value=\ninternal_weight=\ninternal_count=\nis_linear=0\nshrinkage=1\n\n\n")
    return _sizes_fixed(text[: starts[-1]] + block + text[end:])


FIXTURES = Path(__file__).parent / "fixtures"
MODELS = [*_models(), *(FIXTURES.joinpath(f"{n}.txt").read_text() for n in ("categorical", "multiclass", "rf"))]
MODELS.append(_with_one_leaf_tree(MODELS[0]))


def _mutate(text: str, rng: np.random.Generator) -> str:
    lines = text.split("\n")
    tree_lines = [i for i, line in enumerate(lines) if "=" in line and not line.startswith(("Tree=", "tree_"))]
    for _ in range(rng.integers(1, 3)):
        i = int(rng.choice(tree_lines))
        kind = rng.integers(0, 6)
        if kind <= 2:  # a value token
            key, _, value = lines[i].partition("=")
            toks = value.split(" ")
            toks[rng.integers(0, len(toks))] = str(rng.choice(TOKENS))
            lines[i] = key + "=" + " ".join(toks)
        elif kind == 3:
            lines.insert(i, lines[i] if rng.random() < 0.5 else "")
        elif kind == 4:
            del lines[i]
        else:
            k = int(rng.integers(0, max(len(lines[i]), 1)))
            lines[i] = lines[i][:k] + str(rng.choice(["\r", "\u00e9", "=", "  ", "\t"])) + lines[i][k + 1 :]
    out = "\n".join(lines)
    return _sizes_fixed(out) if rng.random() < 0.7 else out


def _read(text: str) -> tuple[str, object]:
    try:
        return "ok", _parse.parse_model_string(text)
    except (ModelParseError, ValueError, OverflowError) as exc:
        return type(exc).__name__, str(exc)


def _reference(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, object]:
    with monkeypatch.context() as m:
        m.setattr(_parse, "read_trees_at_once", lambda *a: None)
        m.setattr(_parse, "_tree_block", lambda *a: None)
        return _read(text)


def _same(a: tuple[str, object], b: tuple[str, object]) -> bool:
    if a[0] != b[0] or a[0] != "ok":
        return a == b
    (arr_a, meta_a), (arr_b, meta_b) = a[1], b[1]  # type: ignore[misc]
    return meta_a == meta_b and arr_a.keys() == arr_b.keys() and all(
        arr_a[k].dtype == arr_b[k].dtype and np.array_equal(arr_a[k], arr_b[k], equal_nan=True) for k in arr_a
    )


@pytest.mark.parametrize("which", range(len(MODELS)))
def test_fast_reader_reads_the_models_as_the_reference_reader(which, monkeypatch):
    """Binary with categorical splits and NaN, multiclass, a constant model, a random forest, a one-leaf tree
    among others: equal arrays and metadata."""
    assert _same(_read(MODELS[which]), _reference(MODELS[which], monkeypatch))


@pytest.mark.parametrize("which", range(len(MODELS)))
def test_fast_reader_gives_the_reference_verdict_on_mutants(which, monkeypatch):
    """Mutated values, lines, line ends and bytes: the same arrays, or the same error and message."""
    rng = np.random.default_rng(which)
    ok = 0
    for _ in range(250):
        text = _mutate(MODELS[which], rng)
        fast, ref = _read(text), _reference(text, monkeypatch)
        assert _same(fast, ref), (fast[0], ref[0], str(fast[1])[:200], str(ref[1])[:200])
        ok += fast[0] == "ok"
    assert ok >= 10  # some mutants are read, not only refused


def test_a_regular_text_takes_the_fast_road(monkeypatch):
    """model_to_string's text is read by the fast road: it is never handed to the tree-by-tree reader."""
    def refuse(*args):
        raise AssertionError("read tree by tree")

    monkeypatch.setattr(_parse, "_add_text_tree", refuse)
    monkeypatch.setattr(_parse, "_tree_keys", refuse)
    for text in MODELS:
        assert _read(text)[0] == "ok"
