"""train_to_budget(..., client=): a table searched on a Dask LocalCluster of two worker processes."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from budget_extras import TreeEnsemble, cost_report, train_to_budget
from budget_extras.core import Status

pytestmark = pytest.mark.fork  # the full-size model goes through lightgbm.dask with the fork's CEGB parameters

COSTS = {"f0": 5.0, "f1": 3.0, "f2": 1.0, "f3": 1.0, "f4": 1.0, "f5": 1.0}
PARAMS = {"objective": "binary", "num_leaves": 7, "num_threads": 1, "deterministic": True, "force_col_wise": True}
#: A small search: a few families, few rounds (the cluster's fixed costs dominate anyway).
SEARCH = {"num_boost_round": 40, "greedy": False, "n_tradeoffs": 3, "n_bisect": 2, "choose": "valid",
          "progress": False}


def _table(n: int, seed: int) -> tuple[pd.DataFrame, pd.Series]:
    """Six continuous features; the label depends on f0-f3 (f0 and f1 are the dear ones)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"f{i}": rng.normal(size=n) for i in range(6)})
    logit = 1.2 * X["f0"] - 1.0 * X["f1"] + 0.6 * X["f2"] - 0.3 * X["f3"] + rng.normal(size=n)
    return X, (logit > 0).astype(int)


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A LocalCluster of 2 worker processes (1 thread each), skipped where it cannot start, always closed."""
    distributed = pytest.importorskip("distributed", reason="distributed is not installed")
    pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")
    try:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=50)
    except Exception as exc:  # pragma: no cover - environment without working process spawning
        pytest.skip(f"dask LocalCluster cannot start here: {exc!r}")
    try:
        with distributed.Client(cluster, timeout="30s") as c:
            yield c
    finally:
        cluster.close()


def test_cluster_search_fits_the_budget_and_matches_the_serial_score(client: Any) -> None:
    """Same data, same budget: the model trained on every row on the cluster fits the budget on the
    validation rows (cost_report agrees) and scores within 0.01 of the serial search's choice."""
    X, y = _table(4000, 0)
    Xv, yv = _table(2000, 1)
    kw = {**SEARCH, "budget": 6.0, "valid_set": (Xv, yv), "costs": COSTS}
    serial = train_to_budget(PARAMS, lgb.Dataset(X, y), **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # lightgbm.dask's notes on ports and parameters
        result = train_to_budget(PARAMS, lgb.Dataset(X, y), client=client, **kw)
    assert result.status == Status.SUCCESS, result.message
    assert result.cost <= 6.0
    assert abs(result.score - serial.score) <= 0.01, (result.score, serial.score)
    assert result.chosen.rows == 4000 and not result.chosen.proxy
    measured = cost_report(TreeEnsemble.from_booster(result.booster), Xv, COSTS).total_cost.mean()
    assert measured == pytest.approx(result.cost, rel=1e-9)
    assert "on the cluster" in result.message


def test_a_feature_subset_choice_trains_on_the_cluster(client: Any) -> None:
    """A budget only feature subsets reach (the cheap features): the chosen subset candidate is trained
    on every row on the cluster although distributed LightGBM cannot run its interaction constraint,
    and the model splits only on the subset's features."""
    X, y = _table(3000, 2)
    Xv, yv = _table(1500, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = train_to_budget(PARAMS, lgb.Dataset(X, y), client=client, budget=4.0, valid_set=(Xv, yv),
                                 costs=COSTS, **{**SEARCH, "n_tradeoffs": 0})
    assert result.status == Status.SUCCESS, result.message
    subset = result.chosen.params["interaction_constraints"][0]
    used = np.flatnonzero(result.booster.feature_importance("split"))
    assert set(used.tolist()) <= {int(j) for j in subset}
    assert result.cost <= 4.0


@pytest.mark.parametrize("train_kind", ["array", "dataframe"])
def test_dask_array_and_dataframe_inputs_search_a_sample(client: Any, train_kind: str) -> None:
    """Dask arrays or DataFrames for training, the other kind for validation: the search runs on a
    1,000-row sample (proxy_rows), the chosen model on all 4,000 rows, measured on every validation row."""
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    X, y = _table(4000, 4)
    Xv, yv = _table(2000, 5)
    arrays = (da.from_array(X.to_numpy(), chunks=(1500, 6)), da.from_array(y.to_numpy(), chunks=1500))
    frames = (dd.from_pandas(Xv, npartitions=3), dd.from_pandas(yv, npartitions=3))
    if train_kind == "dataframe":
        arrays = (da.from_array(Xv.to_numpy(), chunks=(700, 6)), da.from_array(yv.to_numpy(), chunks=700))
        frames = (dd.from_pandas(X, npartitions=3), dd.from_pandas(y, npartitions=3))
    train, valid = (arrays, frames) if train_kind == "array" else (frames, arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = train_to_budget(PARAMS, train, client=client, budget=6.0, valid_set=valid,
                                 costs=list(COSTS.values()), proxy_rows=1000, **SEARCH)
    assert result.status == Status.SUCCESS, result.message
    assert {c.rows for c in result.frontier if c.proxy} == {1000}
    assert result.chosen.rows == 4000 and result.cost <= 6.0
    assert result.seconds["cluster_fit"] > 0 and "1,000 sampled rows" in result.message


def test_weighted_rows_and_several_budgets_twice_on_the_same_data(client: Any) -> None:
    """A weighted Dataset with budgets= and keep_boosters: a full-size model per budget, each within
    it; the same call again on the same rows makes the same choice (the shipped rows are not shared
    between calls, so the first call's release cannot lose the second's)."""
    X, y = _table(2000, 8)
    Xv, yv = _table(1000, 9)
    weight = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    runs = []
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            runs.append(train_to_budget(PARAMS, lgb.Dataset(X, y, weight=weight), client=client, budget=6.0,
                                        budgets=[3.0, 9.0], keep_boosters=True, valid_set=(Xv, yv), costs=COSTS,
                                        **SEARCH))
    for b in (3.0, 6.0, 9.0):
        c = runs[0].best_at(b)
        assert c is not None and c.cost <= b and c.rows == 2000 and not c.proxy
        assert isinstance(runs[0].booster_at(b), lgb.Booster)
    # the sample search is deterministic; the full-size trees depend on where lightgbm.dask puts the
    # partitions (each worker bins its own continuous features), so only the choice repeats exactly
    assert runs[0].chosen.params == runs[1].chosen.params
    assert abs(runs[0].score - runs[1].score) <= 0.01


@pytest.mark.parametrize("bad", ["tcp://127.0.0.1:8786", 3, object()])
def test_a_client_that_is_not_a_distributed_client_is_refused(bad: Any) -> None:
    X, y = _table(200, 6)
    with pytest.raises(TypeError, match=r"'client' argument must be a distributed\.Client"):
        train_to_budget(PARAMS, lgb.Dataset(X, y), budget=1.0, valid_set=(X, y), costs=COSTS, client=bad)


def test_a_closed_client_is_refused(client: Any) -> None:
    """A client whose connection is closed is an error naming 'client', not a hang or a loop error."""
    import distributed

    closed = distributed.Client(client.cluster, timeout="30s", set_as_default=False)
    closed.close()
    X, y = _table(200, 10)
    with pytest.raises(ValueError, match="'client' argument must be connected"):
        train_to_budget(PARAMS, lgb.Dataset(X, y), budget=1.0, valid_set=(X, y), costs=COSTS, client=closed)


def test_options_the_cluster_search_does_not_run_are_refused(client: Any) -> None:
    X, y = _table(200, 7)
    with pytest.raises(ValueError, match="'search' argument must be 'full' with 'client'"):
        train_to_budget(PARAMS, lgb.Dataset(X, y), budget=1.0, valid_set=(X, y), costs=COSTS, client=client,
                        search="fast")
    with pytest.raises(ValueError, match="'choose' argument 'cv' is not available with 'client'"):
        train_to_budget(PARAMS, lgb.Dataset(X, y), budget=1.0, valid_set=(X, y), costs=COSTS, client=client,
                        choose="cv")
    dX = pytest.importorskip("dask.array").from_array(X.to_numpy(), chunks=(100, 6))
    with pytest.raises(ValueError, match="'train_set' argument's X and y must both be Dask"):
        train_to_budget(PARAMS, (dX, y), budget=1.0, valid_set=(X, y), costs=COSTS, client=client)
