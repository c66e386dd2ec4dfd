"""Wall time of ``train_to_budget`` on one machine against ``train_to_budget(..., client=)`` on 1 and 2 Dask workers.

A synthetic binary table (``--rows`` training rows, default 5,000,000; ``--valid-rows``
validation rows; ``--cols`` Gaussian float32 features, the label a noisy function of the first
eight), tiered costs 1 / 5 / 10 and a budget of 30% of the sum of the costs (a plain model buys
about every feature). The same in-memory arrays go to a plain training (one thread, every row: ``plain_training``) and
three searches, one after the other:

* ``serial``: ``train_to_budget(params, lgb.Dataset(X, y), ...)`` in this process, one thread
  (the proxies on ``max(10000, n // 40)`` rows, then the refit on every row);
* ``dask_1``, ``dask_2``: a ``LocalCluster`` of 1 or 2 worker processes with one thread each, the
  same call with ``client=``: the search in one task on the same sample size, the chosen model
  on every row through ``lightgbm.dask``. The cluster's start is timed apart (``cluster_start``).

Each run records its wall seconds, the chosen family, the validation score (AUC) and cost and
the status; ``seconds`` is the result's own split (``sample_search``, ``cluster_fit``). JSON to
``benchmarks/results/train_to_budget_dask.json`` (``--quick``: 60,000 rows, 20,000 validation rows,
30 rounds, to ``benchmarks/results/quick/train_to_budget_dask.json``; the recorded quick run is
``benchmarks/results/train_to_budget_dask_quick.json``).

    python -m benchmarks.train_to_budget.train_to_budget_dask --quick
    python -m benchmarks.train_to_budget.train_to_budget_dask            # 5,000,000 rows: a large machine
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from typing import Any

import lightgbm as lgb
import numpy as np

from benchmarks._runner import parse, script_parser, write_results
from budget_extras import train_to_budget


def table(rows: int, cols: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian float32 features; the label a noisy nonlinear function of the first eight."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, cols)).astype(np.float32)
    logit = X[:, 0] - 0.8 * X[:, 1] + X[:, 2] * X[:, 3] + 0.5 * np.sin(X[:, 4]) + 0.3 * X[:, 5:8].sum(axis=1)
    return X, (logit + rng.normal(size=rows) > 0).astype(np.float64)


def costs_for(cols: int) -> list[float]:
    """Tiered costs 1 / 5 / 10, the dear ones first (the informative features are the dear ones)."""
    return [10.0 if j % 3 == 0 else 5.0 if j % 3 == 1 else 1.0 for j in range(cols)]


PARAMS = {"objective": "binary", "num_leaves": 31, "learning_rate": 0.1, "num_threads": 1,
          "force_col_wise": True, "seed": 1}


def plain(args: argparse.Namespace, data: dict[str, Any]) -> dict[str, Any]:
    """One plain training on every row, one thread: the unit the searches' wall times are read in."""
    t0 = time.perf_counter()
    lgb.train({**PARAMS, "verbose": -1}, lgb.Dataset(data["X"], data["y"]), num_boost_round=args.rounds)
    out = {"run": "plain_training", "wall_s": round(time.perf_counter() - t0, 2)}
    print(json.dumps(out), flush=True)
    return out


def run(label: str, args: argparse.Namespace, data: dict[str, Any], client: Any = None) -> dict[str, Any]:
    """One search; its wall time and what it chose."""
    params = dict(PARAMS)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # lightgbm.dask's notes on ports and parameters
        r = train_to_budget(params, lgb.Dataset(data["X"], data["y"]), budget=data["budget"],
                            valid_set=(data["Xv"], data["yv"]), costs=data["costs"], num_boost_round=args.rounds,
                            choose="valid", progress=False, client=client)
    wall = time.perf_counter() - t0
    out = {"run": label, "wall_s": round(wall, 2), "family": r.chosen.family, "auc": round(r.score, 5),
           "cost": round(r.cost, 4), "status": r.status.name, "nfev": r.nfev,
           "seconds": {k: round(v, 2) for k, v in r.seconds.items() if not k.startswith(("sample:", "proxy:"))}}
    print(json.dumps(out), flush=True)
    return out


def on_cluster(workers: int, args: argparse.Namespace, data: dict[str, Any]) -> dict[str, Any]:
    """Start a LocalCluster of ``workers`` processes (one thread each), run the search on it, close it."""
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=50) as cluster, Client(cluster) as client:
        start = time.perf_counter() - t0
        return {**run(f"dask_{workers}", args, data, client), "cluster_start_s": round(start, 2)}


def main(argv: list[str] | None = None) -> None:
    p = script_parser(__doc__, result_name="train_to_budget_dask", data=False,
                      quick={"rows": 60_000, "valid_rows": 20_000, "rounds": 30})
    p.add_argument("--rows", type=int, default=5_000_000)
    p.add_argument("--valid-rows", type=int, default=200_000)
    p.add_argument("--cols", type=int, default=20)
    p.add_argument("--rounds", type=int, default=100)
    args = parse(p, argv)
    X, y = table(args.rows, args.cols, 0)
    Xv, yv = table(args.valid_rows, args.cols, 1)
    costs = costs_for(args.cols)
    data = {"X": X, "y": y, "Xv": Xv, "yv": yv, "costs": costs, "budget": 0.3 * sum(costs)}
    runs = [plain(args, data), run("serial", args, data), on_cluster(1, args, data), on_cluster(2, args, data)]
    write_results(args.out, {
        "rows": args.rows, "valid_rows": args.valid_rows, "cols": args.cols, "rounds": args.rounds,
        "budget": data["budget"], "quick": args.quick, "runs": runs,
    }, "lightgbm", "dask", "distributed")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
