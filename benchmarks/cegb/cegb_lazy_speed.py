"""Training time of lazy CEGB vs plain LightGBM, side by side in one run.

Competitors (each in its own interpreter, interleaved, min and median over repeats):
  plain            the fork, no CEGB                     (the baseline)
  lazy             the fork, lazy penalties, incremental per-leaf counts (default)
  lazy_scan        the fork, lazy penalties, cegb_lazy_reference_scan=true (scans every row
                   of the leaf for every feature at every split search, as upstream does)
  upstream_plain   upstream LightGBM 4.7.0 wheel, no CEGB           (with --upstream-python)
  upstream_lazy    upstream LightGBM 4.7.0 wheel, lazy penalties    (with --upstream-python)
Correctness gate: `lazy` and `lazy_scan` must save the same model.

    python -m benchmarks.cegb.cegb_lazy_speed [--rows 200000] [--cols 50] [--leaves 63] [--rounds 50] [--quick]

Writes benchmarks/results/cegb_lazy_speed.json.
"""

from __future__ import annotations

import platform
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks._runner import common_parser, parse, run_interleaved, synthetic_regression, write_results


def main(argv: list[str] | None = None) -> int:
    parser = common_parser(__doc__, result_name="cegb_lazy_speed", repeats=3)
    parser.add_argument("--leaves", type=int, default=63)
    args = parse(parser, argv)

    X, y, base, costs = synthetic_regression(args.rows, args.cols, leaves=args.leaves, threads=args.threads)
    lazy = dict(base, cegb_tradeoff=0.01, cegb_penalty_feature_lazy=costs)
    fork = sys.executable
    runs = [("plain", fork, base), ("lazy", fork, lazy), ("lazy_scan", fork, dict(lazy, cegb_lazy_reference_scan=True))]
    if args.upstream_python:
        runs += [("upstream_plain", args.upstream_python, base), ("upstream_lazy", args.upstream_python, lazy)]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.npz"
        np.savez(data, X=X, y=y)
        times, shas, _ = run_interleaved(runs, data, args.rounds, args.repeats)
    summary = {name: {"min": min(t), "median": statistics.median(t), "all": t} for name, t in times.items()}
    for name in summary:
        summary[name]["ratio_to_plain_min"] = summary[name]["min"] / summary["plain"]["min"]
        summary[name]["ratio_to_plain_median"] = summary[name]["median"] / summary["plain"]["median"]
    gate = shas["lazy"] == shas["lazy_scan"] and len(shas["lazy"]) == 1
    print(f"\n{'competitor':15s} {'min s':>8s} {'median s':>9s} {'x plain (min)':>14s} {'x plain (median)':>17s}")
    for name, s in summary.items():
        print(f"{name:15s} {s['min']:8.3f} {s['median']:9.3f} {s['ratio_to_plain_min']:14.3f} "
              f"{s['ratio_to_plain_median']:17.3f}")
    print(f"correctness gate (lazy == lazy_scan model): {'OK' if gate else 'FAILED'}")
    result = {"rows": args.rows, "cols": args.cols, "leaves": args.leaves, "rounds": args.rounds,
              "threads": args.threads, "machine": platform.platform(), "summary": summary, "gate_ok": gate}
    write_results(args.out, result, "lightgbm", indent=2)
    return 0 if gate else 1


if __name__ == "__main__":
    sys.exit(main())
