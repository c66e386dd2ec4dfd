"""Training time of the lightgbm-cegb fork vs the upstream LightGBM 4.7.0 wheel, side by side.

Each competitor runs in its own interpreter (the fork in the current one, upstream in the venv
given by --upstream-python), on the same data file and parameters; runs are interleaved
(fork, upstream, fork, upstream, ...) so machine noise hits both alike. Every configuration
is also a correctness gate: both must save the same model (CEGB off, split-only and lazy
without bagging are parity configurations).

    python -m benchmarks.cegb.fork_overhead [--rows 200000] [--cols 50] [--rounds 50] [--repeats 5] [--quick]

Prints min / median seconds per configuration and the ratio fork / upstream, and writes JSON
to benchmarks/results/fork_overhead.json.
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
    parser = common_parser(__doc__, result_name="fork_overhead", repeats=5)
    args = parse(parser, argv)

    X, y, base, lazy = synthetic_regression(args.rows, args.cols, leaves=63, threads=args.threads)
    configs = {
        "cegb_off": base,
        "cegb_split": dict(base, cegb_penalty_split=0.001),
        "cegb_lazy": dict(base, cegb_tradeoff=0.01, cegb_penalty_feature_lazy=lazy),
    }
    pythons = {"fork": sys.executable, "upstream": args.upstream_python}
    results: dict = {"rows": args.rows, "cols": args.cols, "rounds": args.rounds, "threads": args.threads,
                     "machine": platform.platform(), "processor": platform.processor(), "configs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.npz"
        np.savez(data, X=X, y=y)
        for name, params in configs.items():
            runs = [(who, python, params) for who, python in pythons.items()]
            times, shas, versions = run_interleaved(runs, data, args.rounds, args.repeats)
            same_model = shas["fork"] == shas["upstream"] and len(shas["fork"]) == 1
            row = {c: {"min": min(t), "median": statistics.median(t), "all": t} for c, t in times.items()}
            row["ratio_min"] = row["fork"]["min"] / row["upstream"]["min"]
            row["ratio_median"] = row["fork"]["median"] / row["upstream"]["median"]
            row["same_model"] = same_model
            row["versions"] = versions
            results["configs"][name] = row
            print(f"{name:12s} fork {row['fork']['min']:.3f}s (median {row['fork']['median']:.3f})  "
                  f"upstream {row['upstream']['min']:.3f}s (median {row['upstream']['median']:.3f})  "
                  f"ratio min {row['ratio_min']:.3f} median {row['ratio_median']:.3f}  same model: {same_model}",
                  flush=True)
            if not same_model:
                print(f"  correctness gate FAILED: {name} models differ", file=sys.stderr)
    write_results(args.out, results, "lightgbm", indent=2)
    return 0 if all(r["same_model"] for r in results["configs"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
