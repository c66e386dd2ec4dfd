"""Patch 0016: a model text whose child links do not form a tree is refused at load.

Upstream 4.7.0 loads a tree whose root's left_child is the root itself and then predicts
forever (found by tests/fuzz). Every case runs in a subprocess with a timeout.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest

PREDICT = textwrap.dedent(
    """
    import sys, numpy as np, lightgbm as lgb
    try:
        b = lgb.Booster(model_str=sys.stdin.read())
    except lgb.basic.LightGBMError as exc:
        print("refused:", exc)
        sys.exit(0)
    b.predict(np.vstack([np.full((5, 3), -100.0), np.full((5, 3), 100.0)]))  # both sides of the root
    print("predicted")
    sys.exit(3)
    """
)


@pytest.fixture(scope="module")
def model_text() -> str:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.1, size=300)
    return lgb.train({"verbose": -1, "num_leaves": 4, "min_data_in_leaf": 5}, lgb.Dataset(X, y), 2).model_to_string()


def _links(text: str, left: str, right: str | None = None) -> str:
    text = re.sub(r"^left_child=.*$", f"left_child={left}", text, count=1, flags=re.M)
    if right is not None:
        text = re.sub(r"^right_child=.*$", f"right_child={right}", text, count=1, flags=re.M)
    return text


def _first(text: str, key: str) -> list[int]:
    m = re.search(rf"^{key}=(.*)$", text, flags=re.M)
    assert m is not None
    return [int(v) for v in m.group(1).split()]


def _run(python: str | Path, text: str, timeout: float) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run([str(python), "-c", PREDICT], input=text, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


@pytest.mark.parametrize("case", ["root cycle", "shared leaf", "shared node", "out of range"])
def test_fork_refuses_links_that_are_not_a_tree(model_text: str, case: str) -> None:
    left, right = _first(model_text, "left_child"), _first(model_text, "right_child")
    assert len(left) == 3
    if case == "root cycle":
        bad = _links(model_text, " ".join(map(str, [0, *left[1:]])))
    elif case == "shared leaf":
        bad = _links(model_text, " ".join(map(str, left)), " ".join(map(str, [right[0], right[1], left[-1]])))
    elif case == "shared node":
        internal = next(c for c in left + right if c > 0)
        bad = _links(model_text, " ".join(map(str, [internal, *left[1:]])), " ".join(map(str, [internal, *right[1:]])))
    else:
        bad = _links(model_text, " ".join(map(str, [7, *left[1:]])))
    proc = _run(sys.executable, bad, timeout=60)
    assert proc is not None, "the fork hung"
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Tree model string format error" in proc.stdout


def test_fork_still_loads_valid_trees(model_text: str) -> None:
    booster = lgb.Booster(model_str=model_text)
    assert booster.num_trees() == 2
    assert booster.model_to_string() == model_text


@pytest.mark.upstream
def test_upstream_hangs_on_a_root_cycle(model_text: str, upstream_python: Path) -> None:
    left = _first(model_text, "left_child")
    bad = _links(model_text, " ".join(map(str, [0, *left[1:]])))
    proc = _run(upstream_python, bad, timeout=10)
    assert proc is None, f"upstream no longer hangs: {proc.stdout if proc else ''}"
