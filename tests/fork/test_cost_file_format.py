"""One costs CSV format, two readers: the fork's ``cegb_cost_file`` and ``FeatureCosts.from_csv``.

For every file below both readers accept it, or both refuse it. For an accepted file the model
trained with ``cegb_cost_file=<path>`` is the model trained with the per-feature parameters
``FeatureCosts.from_csv(path).to_cegb_params(names)`` gives (the trees of the model text are
identical). ``cegb_cost_file`` also takes an ``os.PathLike`` and a ``FeatureCosts``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from budget_extras import FeatureCosts

NAMES = ["a", "b", "c", "d", "e"]

VALID: dict[str, str | bytes] = {
    "lazy": "feature,lazy\na,3\nb,1\n",
    "cost is lazy's synonym": "feature,cost\na,3\nb,1\n",
    "BOM and CRLF": b"\xef\xbb\xbffeature,cost,group\r\na,3,g\r\nb,1,g\r\nc,2,\r\n",
    "empty cells": "feature,lazy,coupled,split,group\na,,2,,\nb,1,,0.01,g\nc,1,,,g\n",
    "text groups": "feature,lazy,group\na,3,lab panel\nb,2,lab panel\nc,1,xray\nd,1,xray\ne,5,\n",
    "-1 is no group": "feature,lazy,group\na,3,-1\nb,2,x\nc,2,x\nd,1,-1\n",
    "labels are text": "feature,lazy,group\na,3,1\nb,2,1.0\nc,2,01\nd,2,1\n",
    "group_cost": "feature,lazy,group,group_cost\na,1,lab,10\nb,2,lab,\nc,1,,\n",
    "group_cost below the members": "feature,lazy,group,group_cost\na,4,lab,0.5\nb,6,lab,\n",
    "group_cost repeated": "feature,lazy,group,group_cost\na,1,lab,10\nb,2,lab,1e1\n",
    "group_cost without a group": "feature,lazy,group,group_cost\na,1,,7\nb,2,g,\nc,2,g,\n",
    "group_cost, no group column": "feature,lazy,group_cost\na,1,7\nb,3,\n",
    "group_cost, no lazy column": "feature,group,group_cost\na,g,4\nb,g,\n",
    "tree": "feature,lazy,tree\na,3,0.5\nb,1,\nc,1,0.5\n",
    "0-based index": "feature,lazy\n0,3\n4,1\n",
    "blanks and blank lines": " feature , lazy \n\n a , 3 \n   \nb,1e0\n",
    "column order": "split,group,lazy,feature,coupled\n0.01,g,3,a,1\n,g,1,b,\n",
    "header only": "feature,lazy,coupled\n",
    "feature column only": "feature\na\nb\n",
    "number forms": "feature,lazy,coupled\na,+3,.5\nb,1.,2E-1\nc,-0,0\n",
    "UTF-8 labels": "feature,lazy,group\na,1,caf\u00e9 \u2615\nb,2,caf\u00e9 \u2615\nc,1,\U0001f9ea\n",
}

INVALID: dict[str, str | bytes] = {
    "empty file": "",
    "no feature column": "name,lazy\na,1\n",
    "unknown column": "feature,lazy,price\na,1,2\n",
    "empty column name": "feature,,lazy\na,,1\n",
    "repeated column": "feature,lazy,lazy\na,1,2\n",
    "cost and lazy": "feature,cost,lazy\na,1,2\n",
    "feature twice in the header": "feature,feature,lazy\na,a,1\n",
    "not a number": "feature,lazy\na,abc\n",
    "NaN": "feature,lazy\na,NaN\n",
    "inf": "feature,coupled\na,inf\n",
    "overflow": "feature,split\na,1e999\n",
    "hexadecimal": "feature,lazy\na,0x10\n",
    "negative": "feature,lazy\na,-1\n",
    "negative group_cost without a group": "feature,lazy,group_cost\na,1,-2\n",
    "NaN group_cost": "feature,lazy,group,group_cost\na,1,g,nan\n",
    "group_cost conflict": "feature,lazy,group,group_cost\na,1,g,3\nb,1,g,4\n",
    "two tree values": "feature,lazy,tree\na,1,0.5\nb,1,0.7\n",
    "negative tree": "feature,lazy,tree\na,1,-1\n",
    "unknown feature": "feature,lazy\nzz,1\n",
    "unknown feature, feature column only": "feature\nzz\n",
    "unknown feature, group column only": "feature,group\na,g\nzz,g\n",
    "index out of range": "feature,lazy\n5,1\n",
    "duplicate feature": "feature,lazy\na,1\na,2\n",
    "duplicate by index": "feature,lazy\na,1\n0,2\n",
    "empty feature": "feature,lazy\n,1\n",
    "too many cells": "feature,lazy\na,1,2\n",
    "too few cells": "feature,lazy,coupled\na,1\n",
    "quoted name": 'feature,lazy\n"a",1\n',
    "not UTF-8 (a Latin-1 label)": b"feature,lazy,group\na,1,caf\xe9\n",
    "not UTF-8 (a surrogate)": b"feature,lazy,group\na,1,\xed\xa0\x80\n",
    "not UTF-8 (an overlong form)": b"feature,lazy,group\na,1,\xc0\xaf\n",
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(18)
    X = rng.normal(size=(600, len(NAMES)))
    y = X[:, 0] + 0.8 * X[:, 1] - 0.6 * X[:, 2] + 0.4 * X[:, 3] * X[:, 4] + 0.1 * rng.normal(size=600)
    return X, y


def _trees(lgb, data, **params) -> str:
    """The trees of the model text (the parameter list shows how the costs were given)."""
    X, y = data
    full = {"objective": "l2", "verbose": -1, "num_leaves": 7, "cegb_tradeoff": 0.02, "num_threads": 1,
            "deterministic": True, "force_row_wise": True, "seed": 3, **params}
    booster = lgb.train(full, lgb.Dataset(X, y, feature_name=NAMES), num_boost_round=5)
    return booster.model_to_string().split("\nparameters:")[0]


def _write(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "costs.csv"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode())  # no newline translation
    return path


@pytest.mark.parametrize("name", list(VALID))
def test_both_readers_accept_and_train_the_same_model(lgb, data, tmp_path, name):
    path = _write(tmp_path, VALID[name])
    costs = FeatureCosts.from_csv(path, feature_names=NAMES)
    explicit = costs.to_cegb_params(NAMES)
    assert _trees(lgb, data, cegb_cost_file=str(path)) == _trees(lgb, data, **explicit)


@pytest.mark.parametrize("name", list(INVALID))
def test_both_readers_refuse(lgb, data, tmp_path, name):
    path = _write(tmp_path, INVALID[name])
    with pytest.raises(ValueError, match=r"costs CSV|unknown feature"):
        FeatureCosts.from_csv(path, feature_names=NAMES)
    with pytest.raises(lgb.basic.LightGBMError, match="cegb_cost_file"):
        _trees(lgb, data, cegb_cost_file=str(path))


def test_group_labels_and_group_cost_mean_the_same(tmp_path):
    path = _write(tmp_path, "feature,lazy,group,group_cost,tree\na,1,lab,10,0.25\nb,2,lab,,\nc,3,-1,,\n"
                            "d,4,1.0,,\ne,5,1,,\n")
    costs = FeatureCosts.from_csv(path, feature_names=NAMES)
    assert costs.group_labels == ("lab", "1.0", "1")
    np.testing.assert_array_equal(costs.group, [0, 0, -1, 1, 2])
    np.testing.assert_array_equal(costs.group_cost, [10.0, 4.0, 5.0])
    assert costs.tree == 0.25
    params = costs.to_cegb_params(NAMES)
    assert params["cegb_penalty_feature_lazy"] == [10.0, 10.0, 3.0, 4.0, 5.0]
    assert params["cegb_feature_group"] == [0, 0, -1, 1, 2]


def test_group_cost_changes_the_model(lgb, data, tmp_path):
    """group_cost is the group's lazy cost: a cheap group_cost gives the model of cheap members."""
    cheap = _write(tmp_path, "feature,lazy,group,group_cost\na,50,g,0.01\nb,50,g,\nc,1,,\n")
    costly = tmp_path / "costly.csv"
    costly.write_text("feature,lazy,group\na,50,g\nb,50,g\nc,1,\n")
    members_cheap = tmp_path / "members_cheap.csv"
    members_cheap.write_text("feature,lazy,group\na,0.01,g\nb,0.01,g\nc,1,\n")
    with_group_cost = _trees(lgb, data, cegb_cost_file=str(cheap))
    assert with_group_cost != _trees(lgb, data, cegb_cost_file=str(costly))
    assert with_group_cost == _trees(lgb, data, cegb_cost_file=str(members_cheap))


class _PathLike:
    def __init__(self, path: Path) -> None:
        self._path = path

    def __fspath__(self) -> str:
        return str(self._path)


def test_cost_file_takes_a_path_like_and_a_feature_costs(lgb, data, tmp_path):
    path = _write(tmp_path, "feature,lazy,coupled,group,group_cost,split,tree\na,2,1,lab,6,0.001,0.1\n"
                            "b,3,,lab,,,\nc,1,0.5,,,0.002,\ne,4,,x,,,\n")
    costs = FeatureCosts.from_csv(path, feature_names=NAMES)
    explicit = {"cegb_penalty_feature_lazy": [6.0, 6.0, 1.0, 0.0, 4.0],
                "cegb_penalty_feature_coupled": [1.0, 0.0, 0.5, 0.0, 0.0],
                "cegb_penalty_feature_split": [0.001, 0.0, 0.002, 0.0, 0.0],
                "cegb_feature_group": [0, 0, -1, -1, 1]}
    assert costs.to_cegb_params(NAMES) == explicit
    reference = _trees(lgb, data, **explicit)
    assert _trees(lgb, data, cegb_cost_file=str(path)) == reference
    assert _trees(lgb, data, cegb_cost_file=path) == reference
    assert _trees(lgb, data, cegb_cost_file=_PathLike(path)) == reference
    assert _trees(lgb, data, cegb_cost_file=costs) == reference
    # costs by name, in another order than the data's columns: aligned by name
    shuffled = FeatureCosts.from_csv(path, feature_names=["e", "d", "c", "b", "a"])
    assert _trees(lgb, data, cegb_cost_file=shuffled) == reference
    # the scikit-learn interface passes it through too
    X, y = data
    est = lgb.LGBMRegressor(n_estimators=5, num_leaves=7, cegb_tradeoff=0.02, cegb_cost_file=costs, verbose=-1,
                            num_threads=1, deterministic=True, force_row_wise=True, random_state=3)
    est.fit(X, y, feature_name=NAMES)
    assert est.booster_.num_trees() == 5


@pytest.mark.parametrize("param", ["cegb_penalty_feature_lazy", "cegb_penalty_feature_coupled",
                                   "cegb_penalty_feature_split", "cegb_feature_group"])
def test_a_parameter_given_by_the_cost_object_and_on_its_own_is_an_error(lgb, data, param):
    costs = FeatureCosts([1.0, 2.0, 0.0, 0.0, 1.0], feature_names=NAMES)
    value = [0] * len(NAMES)
    with pytest.raises(ValueError, match=rf"^'{param}' is given more than once: by its own parameter and by "
                                         r"cegb_cost_file=FeatureCosts"):
        _trees(lgb, data, cegb_cost_file=costs, **{param: value})


def test_a_parameter_given_by_the_file_and_on_its_own_is_an_error(lgb, data, tmp_path):
    path = _write(tmp_path, "feature,lazy,group\na,1,g\nb,2,g\n")
    with pytest.raises(lgb.basic.LightGBMError, match="cegb_feature_group is given more than once"):
        _trees(lgb, data, cegb_cost_file=os.fspath(path), cegb_feature_group=[0, 0, 1, 1, -1])
    with pytest.raises(lgb.basic.LightGBMError, match="cegb_penalty_feature_lazy is given more than once"):
        _trees(lgb, data, cegb_cost_file=path, cegb_penalty_feature_lazy={"a": 1.0})


@pytest.mark.parametrize("value, pattern", [
    (3, r"must be the path of a costs CSV \(str or os\.PathLike\) or a cost object with a to_cegb_params\(\) "
        r"method \(budget_extras\.FeatureCosts\)\. Got int instead"),
    ({"a": 1.0}, r"Got dict instead"),
])
def test_cost_file_of_another_type_is_a_type_error(lgb, data, value, pattern):
    with pytest.raises(TypeError, match=pattern):
        _trees(lgb, data, cegb_cost_file=value)
