"""The model file records the per-feature CEGB costs a model was trained with.

Costs given by feature name, in a cost file or as a FeatureCosts object are written to the
saved parameters as one value per feature (a grouped feature carries its group's cost) with the
group ids; the oracle: training again from the parameters read back from the file, positionally,
grows the same trees. Models without CEGB keep upstream's parameter lines.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .scenarios import BASE


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 4)), columns=["a", "b", "c", "d"])
    return X, X.a + X.b * X.c + 0.3 * X.d


def _trees(booster):
    return booster.model_to_string().split("parameters:")[0]


def _roundtrip(lgb, data, **costs):
    X, y = data
    params = dict(BASE, cegb_tradeoff=0.05, **costs)
    model = lgb.train(params, lgb.Dataset(X, y), 5)
    loaded = lgb.Booster(model_str=model.model_to_string()).params
    saved = {k: v for k, v in loaded.items() if k in ("cegb_penalty_feature_lazy", "cegb_penalty_feature_coupled",
                                                      "cegb_penalty_feature_split", "cegb_feature_group")}
    again = lgb.train(dict(BASE, cegb_tradeoff=0.05, **saved), lgb.Dataset(X, y), 5)
    assert _trees(again) == _trees(model)
    return saved


def test_named_costs_and_groups(lgb, data):
    saved = _roundtrip(lgb, data, cegb_penalty_feature_lazy={"a": 2.0, "c": 5.0},
                       cegb_feature_group={"a": 1, "b": 1})
    assert saved["cegb_penalty_feature_lazy"] == [2, 2, 5, 0]  # b carries its group's cost
    assert saved["cegb_feature_group"] == [0, 0, -1, -1]


def test_cost_file_with_group_cost(lgb, data, tmp_path):
    path = tmp_path / "costs.csv"
    path.write_text("feature,lazy,coupled,split,group,group_cost\n"
                    "a,1,0,0.5,panel,7\nb,2,0,0,panel,7\nc,3,1.5,0,,\nd,0.25,0,0,,\n")
    before = path.read_bytes()
    saved = _roundtrip(lgb, data, cegb_cost_file=str(path))
    assert saved["cegb_penalty_feature_lazy"] == [7, 7, 3, 0.25]
    assert saved["cegb_penalty_feature_coupled"] == [0, 0, 1.5, 0]
    assert saved["cegb_penalty_feature_split"] == [0.5, 0, 0, 0]
    assert saved["cegb_feature_group"] == [0, 0, -1, -1]
    assert path.read_bytes() == before


def test_feature_costs_object(lgb, data):
    from budget_extras import FeatureCosts

    fc = FeatureCosts({"a": 1.0, "b": 4.0, "c": 2.0}, feature_names=["a", "b", "c", "d"])
    saved = _roundtrip(lgb, data, cegb_cost_file=fc)
    assert saved["cegb_penalty_feature_lazy"] == [1, 4, 2, 0]


def test_positional_costs_are_written_as_given(lgb, data):
    X, y = data
    model = lgb.train(dict(BASE, cegb_tradeoff=0.05, cegb_penalty_feature_lazy=[0.5, 1.25, 3.0, 1e-3]),
                      lgb.Dataset(X, y), 3)
    assert "[cegb_penalty_feature_lazy: 0.5,1.25,3,0.001]" in model.model_to_string()
    assert "cegb_feature_group" not in model.model_to_string()


def test_models_without_cegb_keep_upstreams_lines(lgb, data):
    X, y = data
    text = lgb.train(dict(BASE), lgb.Dataset(X, y), 3).model_to_string()
    lines = [line for line in text.splitlines() if line.startswith("[cegb")]
    assert lines == ["[cegb_tradeoff: 1]", "[cegb_penalty_split: 0]", "[cegb_penalty_feature_lazy: ]",
                     "[cegb_penalty_feature_coupled: ]"]


def test_a_loaded_model_continues_with_a_cost_object(lgb, data):
    """A model read from a file carries its costs as parameters: continuing it with cegb_cost_file=FeatureCosts
    gives the costs once (this was refused as given twice) and grows the trees of continuing the in-memory model."""
    from budget_extras import FeatureCosts

    X, y = data
    params = dict(BASE, cegb_tradeoff=0.05, cegb_cost_file=FeatureCosts({"a": 1.0, "b": 4.0, "c": 2.0},
                                                                        feature_names=["a", "b", "c", "d"]))
    first = lgb.train(params, lgb.Dataset(X, y), 3)
    loaded = lgb.Booster(model_str=first.model_to_string())
    assert loaded.params["cegb_penalty_feature_lazy"] == [1, 4, 2, 0]
    more = lgb.train(params, lgb.Dataset(X, y), 3, init_model=loaded)
    assert _trees(more) == _trees(lgb.train(params, lgb.Dataset(X, y), 3, init_model=first))
    folds = lgb.cv(params, lgb.Dataset(X, y), 2, nfold=2, init_model=loaded, stratified=False, seed=1)
    assert len(folds["valid l2-mean"]) == 2
