"""cost_report streams rows in chunks: any chunk size gives exactly the
report of one chunk holding every row, for every input kind and cost model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from budget_extras import FeatureCosts, TreeEnsemble, cost_report
from budget_extras.core import _report
from budget_extras.core._report import features_used

from .conftest import get_booster, hard_rows

FIELDS = ("acquisition_cost", "splits_evaluated", "trees_evaluated", "eval_cost", "total_cost",
          "coupled_features", "tree_order")


def _same(a, b) -> None:
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.coupled_cost == b.coupled_cost
    for name in ("used", "acquired", "feature_counts"):
        x, y = getattr(a, name), getattr(b, name)
        if x is None:
            assert y is None
            continue
        assert x.shape == y.shape and x.dtype == y.dtype, name
        assert (x != y).nnz == 0, name
        np.testing.assert_array_equal(x.indptr, y.indptr)
        np.testing.assert_array_equal(x.indices, y.indices)


def _report_with_chunk(monkeypatch, chunk, *args, **kw):
    monkeypatch.setattr(_report, "_ROW_CHUNK", chunk)
    return cost_report(*args, **kw)


COSTS = {
    "plain": FeatureCosts([1.0, 2.0, 3.0, 4.0, 5.0], split=[0.1, 0.0, 0.2, 0.0, 0.3], tree=0.5),
    "groups": FeatureCosts([1.0, 2.0, 3.0, 4.0, 5.0], groups=["a", "a", None, "b", "b"],
                           group_cost={"b": 10.0}, coupled=[0, 1.0, 0, 0, 2.0]),
}


@pytest.mark.parametrize("kind", ["regression", "categorical", "multiclass"])
@pytest.mark.parametrize("costs", list(COSTS))
@pytest.mark.parametrize("feature_counts", [True, False])
def test_any_chunk_size_equals_one_chunk(monkeypatch, kind, costs, feature_counts):
    booster = get_booster(kind)
    ens = TreeEnsemble.from_booster(booster)
    X = hard_rows(np.random.default_rng(4), 97)
    rng = np.random.default_rng(5)
    n_trees = rng.integers(0, ens.n_trees + 1, X.shape[0])
    order = rng.permutation(ens.n_trees)
    kw = {"tree_order": order, "n_trees": n_trees, "feature_counts": feature_counts}
    whole = _report_with_chunk(monkeypatch, X.shape[0], ens, X, COSTS[costs], **kw)
    for chunk in (1, 7, 64):
        _same(_report_with_chunk(monkeypatch, chunk, ens, X, COSTS[costs], **kw), whole)
    _same(_report_with_chunk(monkeypatch, None, ens, X, COSTS[costs], **kw), whole)


def test_input_kinds_chunked(monkeypatch):
    booster = get_booster("regression")
    ens = TreeEnsemble.from_booster(booster)
    X = hard_rows(np.random.default_rng(6), 50)
    costs = COSTS["groups"]
    whole = _report_with_chunk(monkeypatch, 50, ens, X, costs)
    frame = pd.DataFrame(X, columns=list(ens.feature_names))
    for data in (np.asfortranarray(X), frame, X.tolist(),
                 sp.csr_matrix(np.nan_to_num(X)), sp.coo_matrix(np.nan_to_num(X))):
        ref = _report_with_chunk(monkeypatch, 50, ens, data, costs)
        _same(_report_with_chunk(monkeypatch, 3, ens, data, costs), ref)
    _same(_report_with_chunk(monkeypatch, 3, ens, frame, costs), whole)
    monkeypatch.setattr(_report, "_ROW_CHUNK", 4)
    assert (features_used(ens, X) != whole.used).nnz == 0


def test_empty_and_bad_inputs_keep_their_errors(monkeypatch):
    ens = TreeEnsemble.from_booster(get_booster("regression"))
    monkeypatch.setattr(_report, "_ROW_CHUNK", 2)
    rep = cost_report(ens, np.zeros((0, ens.n_features)), COSTS["plain"])
    assert rep.n_rows == 0 and rep.used.shape == (0, ens.n_features)
    with pytest.raises(ValueError, match="columns"):
        cost_report(ens, np.zeros((5, ens.n_features + 1)), COSTS["plain"])
    with pytest.raises(ValueError, match="n_trees"):
        cost_report(ens, np.zeros((5, ens.n_features)), COSTS["plain"], n_trees=np.ones(4, int))
