"""Training time of lazy CEGB vs plain LightGBM, side by side in one run.

Competitors (each in its own interpreter, interleaved, min and median over repeats):
  plain            the fork, no CEGB                     (the baseline)
  lazy             the fork, lazy penalties, incremental per-leaf counts (default)
  lazy_scan        the fork, lazy penalties, cegb_lazy_reference_scan=true (scans every row
                   of the leaf for every feature at every split search, as upstream does)
  upstream_plain   upstream LightGBM 4.7.0 wheel, no CEGB           (with --upstream-python)
  upstream_lazy    upstream LightGBM 4.7.0 wheel, lazy penalties    (with --upstream-python)
Correctness gate: `lazy` and `lazy_scan` must save the same model.

    python benchmarks/cegb_lazy_speed.py [--rows 200000] [--cols 50] [--leaves 63] [--rounds 50]

Writes benchmarks/results/cegb_lazy_speed.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _runner import Competitor, synthetic_regression

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--cols", type=int, default=50)
    parser.add_argument("--leaves", type=int, default=63)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--upstream-python", default=str(ROOT / ".venv-upstream" / "bin" / "python"),
                        help="interpreter with the upstream wheel; '' to skip upstream")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "cegb_lazy_speed.json"))
    args = parser.parse_args(argv)

    X, y, base, costs = synthetic_regression(args.rows, args.cols, leaves=args.leaves, threads=args.threads)
    lazy = dict(base, cegb_tradeoff=0.01, cegb_penalty_feature_lazy=costs)
    fork = sys.executable
    runs = [("plain", fork, base), ("lazy", fork, lazy), ("lazy_scan", fork, dict(lazy, cegb_lazy_reference_scan=True))]
    if args.upstream_python:
        runs += [("upstream_plain", args.upstream_python, base), ("upstream_lazy", args.upstream_python, lazy)]
    times: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    shas: dict[str, set[str]] = {name: set() for name, _, _ in runs}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.npz"
        np.savez(data, X=X, y=y)
        for rep in range(args.repeats):
            for name, python, params in runs:
                r = Competitor(name, python).run(data, params, args.rounds)
                times[name].append(r["seconds"])
                shas[name].add(r["model_sha"])
                print(f"repeat {rep + 1}/{args.repeats} {name:15s} {r['seconds']:.3f}s", flush=True)
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
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2))
    return 0 if gate else 1


if __name__ == "__main__":
    sys.exit(main())
