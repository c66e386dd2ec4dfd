"""The fork's cost file reader (cegb_cost_file): the example of docs/cegb.md works as documented,
empty cells are 0 / no group, ``cost`` is a synonym of ``lazy``, a UTF-8 byte order mark is
ignored, a repeated column and a directory are errors that say so.

Before: the reader dropped empty cells (``TSH,22.78,0,,0``, the docs' own example, failed with
"4 cells, the header has 5"), a BOM made the header's first column unknown, and a directory
failed as "is empty".
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["TSH", "TT4", "T4U", "FTI", "age"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(800, 5))
    return X, X[:, 0] + X[:, 1] - X[:, 4] + 0.1 * rng.normal(size=800)


def _train(lgb, data, **params):
    X, y = data
    full = {"objective": "l2", "verbose": -1, "num_leaves": 7, "cegb_tradeoff": 0.05, "num_threads": 1,
            "deterministic": True, "force_row_wise": True, **params}
    booster = lgb.train(full, lgb.Dataset(X, y, feature_name=NAMES), num_boost_round=8)
    return booster.model_to_string().split("\nparameters:")[0]


def _doc_example() -> str:
    text = (ROOT / "docs" / "cegb.md").read_text()
    block = re.search(r"\*\*Cost file\*\*.*?```\n(.*?)```", text, re.S)
    assert block, "docs/cegb.md lost its cost file example"
    return block.group(1)


def test_the_docs_example_works_as_documented(lgb, data, tmp_path):
    example = _doc_example()
    assert "TSH,22.78,0,,0" in example
    path = tmp_path / "costs.csv"
    path.write_text(example)
    from_file = _train(lgb, data, cegb_cost_file=str(path))
    # the documented meaning: empty group cell = no group, the three thyroid tests one group,
    # unlisted features (age) cost 0
    positional = _train(lgb, data, cegb_penalty_feature_lazy=[22.78, 25.92, 25.92, 25.92, 0.0],
                        cegb_penalty_feature_coupled=[0.0] * 5, cegb_penalty_feature_split=[0.0] * 5,
                        cegb_feature_group=[-1, 1, 1, 1, -1])
    assert from_file == positional


def test_empty_cells_cost_zero_and_mean_no_group(lgb, data, tmp_path):
    path = tmp_path / "costs.csv"
    path.write_text("feature,lazy,coupled,group\nTSH,,3,\nTT4,2,,0\nT4U,2,,0\n")
    assert _train(lgb, data, cegb_cost_file=str(path)) == _train(
        lgb, data, cegb_penalty_feature_lazy=[0, 2, 2, 0, 0], cegb_penalty_feature_coupled=[3, 0, 0, 0, 0],
        cegb_feature_group=[-1, 0, 0, -1, -1])


def test_cost_is_a_synonym_of_lazy_and_a_bom_is_ignored(lgb, data, tmp_path):
    lazy = tmp_path / "lazy.csv"
    lazy.write_text("feature,lazy\nTSH,5\nFTI,1\n")
    cost = tmp_path / "cost.csv"
    cost.write_bytes(b"\xef\xbb\xbffeature,cost\r\nTSH,5\r\nFTI,1\r\n")
    assert _train(lgb, data, cegb_cost_file=str(cost)) == _train(lgb, data, cegb_cost_file=str(lazy))


@pytest.mark.parametrize(
    "header, pattern",
    [("feature,lazy,cost",
      r"column 'lazy' appears twice in the header \(as 'lazy' and 'cost'; cost is a synonym of lazy\)"),
     ("feature,group,group", r"column 'group' appears twice in the header"),
     ("feature,feature,lazy", r"column 'feature' appears twice in the header")],
)
def test_a_repeated_column_is_refused(lgb, data, tmp_path, header, pattern):
    path = tmp_path / "costs.csv"
    path.write_text(header + "\n" + "TSH" + ",1" * (header.count(",")) + "\n")
    with pytest.raises(lgb.basic.LightGBMError, match=pattern):
        _train(lgb, data, cegb_cost_file=str(path))


def test_a_directory_is_refused_as_a_directory(lgb, data, tmp_path):
    with pytest.raises(lgb.basic.LightGBMError, match=rf"cegb_cost_file: '{re.escape(str(tmp_path))}' is a directory"):
        _train(lgb, data, cegb_cost_file=str(tmp_path))
