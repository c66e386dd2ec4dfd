"""Child links that do not form a tree (cycles, shared children, unreachable nodes) are refused fast.

Before the fix a root whose left_child pointed to itself made the loader walk forever (3.4 GB in
15 s); each case runs in a subprocess with a short timeout so a regression fails instead of hanging.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras import ModelParseError, TreeEnsemble


@pytest.fixture(scope="module")
def model_text() -> str:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.1, size=300)
    booster = lgb.train({"verbose": -1, "num_leaves": 4, "min_data_in_leaf": 5}, lgb.Dataset(X, y), 2)
    return booster.model_to_string()


def _set(text: str, key: str, values: str) -> str:
    """Replace the first tree's ``key=`` line."""
    return re.sub(rf"^{key}=.*$", f"{key}={values}", text, count=1, flags=re.M)


def _first(text: str, key: str) -> list[int]:
    m = re.search(rf"^{key}=(.*)$", text, flags=re.M)
    assert m is not None
    return [int(v) for v in m.group(1).split()]


CASES = {
    "root's left child is the root": lambda lc, r: ([0, *lc[1:]], r),
    "node 1's child is node 1": lambda lc, r: (lc, [r[0], 1, r[2]]) if 1 in lc or 1 in r else (lc, r),
    "two parents share a leaf": lambda lc, r: (lc, [r[0], r[1], lc[-1]]),
    "a leaf nobody reaches (cycle 1 -> 2 -> 1)": lambda lc, r: ([lc[0], 2, 1], [r[0], r[1], r[2]]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_child_links_are_refused_without_hanging(model_text: str, case: str) -> None:
    left, right = _first(model_text, "left_child"), _first(model_text, "right_child")
    assert len(left) == 3  # 4 leaves, 3 internal nodes
    new_left, new_right = CASES[case](left, right)
    assert (new_left, new_right) != (left, right), "the case must change the links"
    bad = _set(_set(model_text, "left_child", " ".join(map(str, new_left))), "right_child",
               " ".join(map(str, new_right)))
    code = textwrap.dedent(
        """
        import sys
        from budget_extras import ModelParseError, TreeEnsemble
        try:
            TreeEnsemble.from_model_string(sys.stdin.read())
        except ModelParseError as exc:
            print("refused:", exc)
            sys.exit(0)
        sys.exit(3)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], input=bad, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tree 0" in proc.stdout


def test_self_referencing_dump_is_refused(model_text: str) -> None:
    dump = lgb.Booster(model_str=model_text).dump_model()
    node = dump["tree_info"][0]["tree_structure"]
    node["left_child"] = node  # a dict that contains itself: the walk would never end
    with pytest.raises(ModelParseError, match="tree 0: child links reach more than 7 nodes"):
        TreeEnsemble.from_dump(dump)
    del dump["tree_info"][0]["num_leaves"]  # no count to check against: the dump's own size bounds the walk
    with pytest.raises(ModelParseError, match=r"tree 0: child links reach more than (\d+) nodes") as info:
        TreeEnsemble.from_dump(dump)
    bound = int(re.search(r"more than (\d+) nodes", str(info.value)).group(1))  # type: ignore[union-attr]
    assert bound <= 7  # the tree's distinct nodes, not a fixed limit of millions


def test_valid_links_still_load_exactly(model_text: str) -> None:
    ens = TreeEnsemble.from_model_string(model_text)
    X = np.random.default_rng(1).normal(size=(50, 3))
    np.testing.assert_array_equal(ens.predict_raw(X), lgb.Booster(model_str=model_text).predict(X, raw_score=True))
