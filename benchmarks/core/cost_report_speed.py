"""Speed of budget_extras' exact cost accounting: 100,000 rows x 500 trees of depth 6.

Target: ``cost_report`` in under 10 s. Competitors, interleaved in one run:
budget_extras ``cost_report`` (with and without per-feature split counts), budget_extras
``apply`` (routing only) and LightGBM's own ``predict(pred_leaf=True)`` (C++, 1 thread and all
threads) as the routing reference. Wall time (``perf_counter_ns``) and process CPU time are
recorded (the CPU time is less sensitive to other load on a shared machine), min and median
over repeats. A correctness gate checks every configuration against LightGBM / brute force
before timing.

Usage::

    python -m benchmarks.core.cost_report_speed [--rows 100000] [--trees 500] [--depth 6]
        [--repeats 3] [--out benchmarks/results/cost_report_speed.json]
        [--plot docs/img/cost_report_speed.png] [--quick]

The data are synthetic (Gaussian features). ``--quick``: 10,000 rows, 50 trees, one repeat.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np

from benchmarks._runner import parse, script_parser, write_results
from budget_extras import FeatureCosts, TreeEnsemble, cost_report


class Adapter:
    name = ""

    def setup(self, booster: lgb.Booster, ens: TreeEnsemble, X: np.ndarray, costs: FeatureCosts) -> None:
        self.booster, self.ens, self.X, self.costs = booster, ens, X, costs

    def run(self) -> Any:
        raise NotImplementedError


class CostReportCounts(Adapter):
    name = "budget_extras.cost_report"

    def run(self) -> Any:
        return cost_report(self.ens, self.X, self.costs)


class CostReportNoCounts(Adapter):
    name = "budget_extras.cost_report(feature_counts=False)"

    def run(self) -> Any:
        return cost_report(self.ens, self.X, self.costs, feature_counts=False)


class EnsembleApply(Adapter):
    name = "budget_extras.TreeEnsemble.apply"

    def run(self) -> Any:
        return self.ens.apply(self.X)


class LightGBMPredLeaf1(Adapter):
    name = "lightgbm.predict(pred_leaf=True, num_threads=1)"

    def run(self) -> Any:
        return self.booster.predict(self.X, pred_leaf=True, num_threads=1)


class LightGBMPredLeafAll(Adapter):
    name = "lightgbm.predict(pred_leaf=True, all threads)"

    def run(self) -> Any:
        return self.booster.predict(self.X, pred_leaf=True)


ADAPTERS = (CostReportCounts, CostReportNoCounts, EnsembleApply, LightGBMPredLeaf1, LightGBMPredLeafAll)


def make_model(
    n_trees: int, depth: int, n_features: int, seed: int
) -> tuple[lgb.Booster, np.random.Generator]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(20_000, n_features))
    y = X[:, :10] @ rng.normal(size=10) + np.sin(X[:, 10]) + 0.5 * rng.normal(size=X.shape[0])
    params = {
        "verbose": -1,
        "max_depth": depth,
        "num_leaves": 2**depth,
        "min_data_in_leaf": 5,
        "learning_rate": 0.05,
        "seed": seed,
        "num_threads": os.cpu_count() or 1,
    }
    return lgb.train(params, lgb.Dataset(X, y), num_boost_round=n_trees), rng


def correctness_gate(booster: lgb.Booster, ens: TreeEnsemble, X: np.ndarray, costs: FeatureCosts) -> None:
    sub = X[:2000]
    assert np.array_equal(ens.apply_leaf_index(sub), booster.predict(sub, pred_leaf=True))
    assert np.allclose(ens.predict_raw(sub), booster.predict(sub, raw_score=True), rtol=1e-12, atol=0)
    rep = cost_report(ens, sub[:200], costs)
    path = ens.decision_path(sub[:200]).toarray() & ~ens.is_leaf[None, :]
    for i in range(200):
        expected = np.zeros(ens.n_features, dtype=bool)
        expected[ens.feature[path[i]]] = True
        assert np.array_equal(rep.used[i].toarray().ravel(), expected)
    fast = cost_report(ens, sub[:200], costs, feature_counts=False)
    assert np.array_equal(fast.total_cost, rep.total_cost)


def main(argv: list[str] | None = None) -> int:
    ap = script_parser(__doc__, result_name="cost_report_speed", data=False,
                       quick={"rows": 10_000, "trees": 50, "repeats": 1})
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", type=Path, default=None)
    args = parse(ap, argv)

    booster, rng = make_model(args.trees, args.depth, args.features, args.seed)
    ens = TreeEnsemble.from_booster(booster)
    X = rng.normal(size=(args.rows, args.features))
    X[rng.random(X.shape) < 0.02] = np.nan
    costs = FeatureCosts(rng.uniform(1, 10, size=args.features), split=0.01, tree=0.1)
    correctness_gate(booster, ens, X, costs)
    print(f"{ens}; rows={args.rows}; max depth={int(ens.depth.max())}", file=sys.stderr)

    adapters = [cls() for cls in ADAPTERS]
    for a in adapters:
        a.setup(booster, ens, X, costs)
    wall: dict[str, list[float]] = {a.name: [] for a in adapters}
    cpu: dict[str, list[float]] = {a.name: [] for a in adapters}
    for rep in range(args.repeats):
        for a in adapters:  # interleaved: machine noise hits all alike
            t0, c0 = time.perf_counter_ns(), time.process_time_ns()
            a.run()
            wall[a.name].append((time.perf_counter_ns() - t0) / 1e9)
            cpu[a.name].append((time.process_time_ns() - c0) / 1e9)
            print(
                f"repeat {rep}: {a.name}: wall {wall[a.name][-1]:.2f} s, cpu {cpu[a.name][-1]:.2f} s",
                file=sys.stderr,
            )
    results = {
        name: {
            "wall_min_s": min(wall[name]),
            "wall_median_s": statistics.median(wall[name]),
            "cpu_min_s": min(cpu[name]),
            "cpu_median_s": statistics.median(cpu[name]),
            "wall_s": wall[name],
            "cpu_s": cpu[name],
        }
        for name in wall
    }
    payload = {
        "benchmark": "cost_report_speed",
        "config": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
        },
        "model": {"n_trees": ens.n_trees, "n_nodes": ens.n_nodes, "max_depth": int(ens.depth.max())},
        "target_s": 10.0,
        "results": results,
    }
    write_results(args.out, payload, "numpy", "scipy", "lightgbm", "budget_extras", indent=2)
    for name, r in results.items():
        print(
            f"{name:55s} wall min {r['wall_min_s']:7.2f} s  median {r['wall_median_s']:7.2f} s   "
            f"cpu min {r['cpu_min_s']:7.2f} s"
        )
    if args.plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = list(results)
        fig, ax = plt.subplots(figsize=(8, 3.5))
        y = np.arange(len(names))
        ax.barh(y - 0.2, [results[n]["wall_median_s"] for n in names], height=0.4, label="wall (median)")
        ax.barh(
            y + 0.2, [results[n]["cpu_median_s"] for n in names], height=0.4, label="process CPU (median)"
        )
        ax.axvline(10.0, color="red", linestyle="--", label="target 10 s")
        ax.set_yticks(y, names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("seconds")
        ax.set_title(f"{args.rows:,} rows x {ens.n_trees} trees, depth {int(ens.depth.max())}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.plot, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
