"""What metric=cegb_cost adds to a training evaluated on a large validation set, side by side in one run.

One process, interleaved repeats (min and median): lgb.train on the training rows with a validation
set evaluated every iteration, metric ``l2`` alone and ``l2`` plus ``cegb_cost``; the difference per
iteration is the metric's overhead. For comparison, the cost of measuring one model the other way:
``budget_extras.cost_report`` of the final model on the validation rows (the model saved, parsed and
every row re-predicted), once. Gate: the metric's last value equals that report's.

    python benchmarks/cegb_cost_metric_speed.py [--rows 20000] [--valid-rows 100000] [--cols 50]
        [--leaves 31] [--rounds 100] [--repeats 3] [--threads 1]

Prints only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import lightgbm as lgb

from budget_extras import TreeEnsemble, cost_report

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _runner import synthetic_regression


def _train(X, y, Xv, yv, params, rounds):
    evals: dict = {}
    train = lgb.Dataset(X, y, free_raw_data=False)
    valid = lgb.Dataset(Xv, yv, reference=train)
    train.construct()
    valid.construct()  # binning outside the timed part
    start = time.perf_counter()
    booster = lgb.train(params, train, rounds, valid_sets=[valid], callbacks=[lgb.record_evaluation(evals)])
    return time.perf_counter() - start, booster, evals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--valid-rows", type=int, default=100_000)
    parser.add_argument("--cols", type=int, default=50)
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)

    X, y, base, lazy = synthetic_regression(args.rows + args.valid_rows, args.cols, leaves=args.leaves,
                                            threads=args.threads)
    X, Xv, y, yv = X[: args.rows], X[args.rows :], y[: args.rows], y[args.rows :]
    params = dict(base, cegb_tradeoff=1e-4, cegb_penalty_feature_lazy=lazy)
    runs = {"l2": dict(params, metric="l2"), "l2+cegb_cost": dict(params, metric=["l2", "cegb_cost"])}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, p in runs.items():
            seconds, booster, evals = _train(X, y, Xv, yv, p, args.rounds)
            times[name].append(seconds)
    start = time.perf_counter()
    report = cost_report(TreeEnsemble.from_booster(booster), Xv, lazy, feature_counts=False)
    report_seconds = time.perf_counter() - start
    expected = float(report.total_cost.mean()) + report.coupled_cost
    got = evals["valid_0"]["cegb_cost"][-1]
    gate = abs(got - expected) <= 1e-9 * max(1.0, expected)

    print(f"{args.rows} training rows, {args.valid_rows} validation rows, {args.cols} features, "
          f"{args.leaves} leaves, {args.rounds} rounds, {args.threads} thread(s)")
    print(f"{'metric':14s} {'min s':>8s} {'median s':>9s}")
    for name, t in times.items():
        print(f"{name:14s} {min(t):8.3f} {statistics.median(t):9.3f}")
    per_iter = {k: (f(times["l2+cegb_cost"]) - f(times["l2"])) / args.rounds * 1e3
                for k, f in (("min", min), ("median", statistics.median))}
    print(f"cegb_cost overhead per iteration: {per_iter['min']:.2f} ms (min), {per_iter['median']:.2f} ms (median)")
    print(f"one cost_report of the final model on the validation rows: {report_seconds:.3f} s")
    print(f"gate (last cegb_cost == cost_report, {got:.6f} vs {expected:.6f}): {'OK' if gate else 'FAILED'}")
    return 0 if gate else 1


if __name__ == "__main__":
    sys.exit(main())
