"""predict_acquiring: lazy acquisition fetches exactly what the paths need."""

from __future__ import annotations

import numpy as np
import pytest

from budget_extras import FeatureCosts, TreeEnsemble, cost_report, predict_acquiring

from .conftest import get_booster, hard_rows


class RecordingFetch:
    def __init__(self, X: np.ndarray) -> None:
        self.X = X
        self.calls: list[tuple[int, np.ndarray]] = []

    def __call__(self, rows: np.ndarray, feature: int) -> np.ndarray:
        self.calls.append((feature, np.array(rows)))
        return self.X[rows, feature].tolist()


@pytest.fixture
def costs():
    return FeatureCosts([3.0, 1.0, 2.0, 5.0, 4.0], groups=[None, "g", "g", None, None], split=0.5, tree=0.25)


@pytest.mark.parametrize(
    "kind", ["regression", "categorical", "multiclass", "rf", "deep_leafwise", "single_leaf"]
)
def test_fetches_only_needed_and_matches_full_prediction(kind, costs, rng):
    ens = TreeEnsemble.from_booster(get_booster(kind))
    X = hard_rows(rng, 120)
    fetch = RecordingFetch(X)
    res = predict_acquiring(ens, fetch, X.shape[0], costs)
    rep = cost_report(ens, X, costs)
    np.testing.assert_array_equal(res.predictions, ens.predict_raw(X))
    # exactly the features the paths use, each (row, feature) fetched once
    asked = np.zeros(X.shape, dtype=int)
    for f, rows in fetch.calls:
        assert np.unique(rows).size == rows.size
        asked[rows, f] += 1
    assert asked.max(initial=0) <= 1
    np.testing.assert_array_equal(asked.astype(bool), rep.used.toarray())
    np.testing.assert_array_equal(res.acquired.toarray(), rep.used.toarray())
    np.testing.assert_allclose(res.total_cost, rep.total_cost, rtol=1e-12)
    np.testing.assert_allclose(res.acquisition_cost, rep.acquisition_cost, rtol=1e-12)
    # batched per feature: at most one call per feature and depth level
    assert res.n_fetch_calls == len(fetch.calls) <= ens.n_features * (int(ens.depth.max()) + 1)
    assert res.n_values_fetched == int(rep.used.sum())


def test_tree_order_and_early_exit(costs, rng):
    ens = TreeEnsemble.from_booster(get_booster("categorical"))
    X = hard_rows(rng, 80)
    order = rng.permutation(ens.n_trees)
    n_trees = rng.integers(0, ens.n_trees + 1, size=80)
    res = predict_acquiring(ens, RecordingFetch(X), 80, costs, tree_order=order, n_trees=n_trees)
    rep = cost_report(ens, X, costs, tree_order=order, n_trees=n_trees)
    np.testing.assert_array_equal(res.acquired.toarray(), rep.used.toarray())
    np.testing.assert_allclose(res.total_cost, rep.total_cost, rtol=1e-12)
    outputs = ens.tree_outputs(X)[:, order]
    expected = np.where(np.arange(order.size)[None, :] < n_trees[:, None], outputs, 0.0).sum(axis=1)
    np.testing.assert_allclose(res.predictions, expected, rtol=1e-12, atol=1e-12)


def test_rf_average(costs, rng):
    ens = TreeEnsemble.from_booster(get_booster("rf"))
    X = hard_rows(rng, 20)
    res = predict_acquiring(ens, RecordingFetch(X), 20, costs, average=True)
    np.testing.assert_array_equal(res.predictions, ens.predict_raw(X, average=True))


def test_fetch_errors(costs):
    ens = TreeEnsemble.from_booster(get_booster("regression"))
    with pytest.raises(ValueError, match="one value per requested row"):
        predict_acquiring(ens, lambda rows, f: [1.0], 5, costs)
    with pytest.raises(TypeError, match="must return numbers"):
        predict_acquiring(ens, lambda rows, f: ["x"] * len(rows), 5, costs)
    with pytest.raises(TypeError, match="must be callable"):
        predict_acquiring(ens, None, 5, costs)
    with pytest.raises(ValueError, match="'n_rows' argument must be an int >= 0"):
        predict_acquiring(ens, lambda rows, f: rows * 0.0, -1, costs)
