"""Peak memory and wall time of ``cost_report`` on 1,000,000 x 20 rows with a 100-tree model.

Each variant runs in its own subprocess, which builds the data and the model, runs
``cost_report`` once on a small slice (imports, caches), records ``ru_maxrss``, runs the
report on all rows and reports the increase of the peak resident set over the input's size.

Variants: ``before`` = budget_extras as of ``--before`` (default: the commit before streaming,
extracted with ``git archive`` into a temporary folder and put first on PYTHONPATH),
``after`` = the working tree. Both read the same data and model (same seeds), and the
script checks that their total costs are equal. Each subprocess runs in the folder of its
budget_extras (the ``-m`` form puts that folder first on ``sys.path``). The table is printed and
written to benchmarks/results/cost_report_memory.json (not committed: the numbers are in the doc).

Usage::

    python -m benchmarks.core.cost_report_memory [--rows 1000000] [--trees 100] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._runner import parse, script_parser, write_results

ROOT = Path(__file__).resolve().parents[2]
BEFORE = "0885654"  # a commit before streaming (cost_report walked row chunks but stacked whole outputs)


def _child(variant: str, rows: int, trees: int, feature_counts: bool) -> dict[str, float]:
    import lightgbm as lgb
    import numpy as np

    from budget_extras import FeatureCosts, TreeEnsemble, cost_report

    rng = np.random.default_rng(0)
    n_feat = 20
    Xt = rng.standard_normal((20_000, n_feat))
    yt = Xt[:, :5].sum(axis=1) + 0.1 * rng.standard_normal(20_000)
    booster = lgb.train({"num_leaves": 31, "verbose": -1, "num_threads": 1, "seed": 0},
                        lgb.Dataset(Xt, yt), num_boost_round=trees)
    ens = TreeEnsemble.from_booster(booster)
    costs = FeatureCosts(list(rng.uniform(1, 10, n_feat)), split=[0.01] * n_feat, tree=0.1)
    X = rng.standard_normal((rows, n_feat))
    cost_report(ens, X[:1000], costs, feature_counts=feature_counts)  # warm up
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0 = time.perf_counter()
    rep = cost_report(ens, X, costs, feature_counts=feature_counts)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    arrays = {id(a): a.nbytes for m in (rep.used, rep.acquired, rep.feature_counts) if m is not None
              for a in (m.data, m.indices, m.indptr)}  # arrays shared between matrices counted once
    out_bytes = sum(arrays.values())
    return {"variant": variant, "feature_counts": feature_counts, "input_mb": X.nbytes / 2**20,
            "peak_increase_mb": (peak - base) / 2**20, "ratio": (peak - base) / X.nbytes,
            "output_matrices_mb": out_bytes / 2**20, "wall_s": wall,
            "total_cost_sum": float(rep.total_cost.sum())}


def main(argv: list[str] | None = None) -> None:
    ap = script_parser(__doc__.splitlines()[0], result_name="cost_report_memory", data=False,
                       quick={"rows": 100_000, "trees": 20})
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--before", default=BEFORE, help="git revision of the 'before' variant")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--no-counts", action="store_true", help=argparse.SUPPRESS)
    args = parse(ap, argv)
    if args.child:
        print(json.dumps(_child(args.child, args.rows, args.trees, not args.no_counts)))
        return
    results = []
    with tempfile.TemporaryDirectory() as old:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "budget_extras"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", old], input=archive, check=True)
        for counts in (True, False):
            for variant in ("before", "after"):
                env = dict(os.environ)
                first = old if variant == "before" else str(ROOT)
                env["PYTHONPATH"] = os.pathsep.join([first, str(ROOT), env.get("PYTHONPATH", "")])
                cmd = [sys.executable, "-m", __spec__.name, "--child", variant, "--rows", str(args.rows),
                       "--trees", str(args.trees), *([] if counts else ["--no-counts"])]
                results.append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True,
                                                         env=env, cwd=first).stdout))
    print(f"{'variant':8} {'feature_counts':>14} {'input MB':>9} {'peak +MB':>9} {'peak/input':>10} "
          f"{'outputs MB':>10} {'wall s':>7}")
    for r in results:
        print(f"{r['variant']:8} {r['feature_counts']!s:>14} {r['input_mb']:9.1f} {r['peak_increase_mb']:9.1f} "
              f"{r['ratio']:10.2f} {r['output_matrices_mb']:10.1f} {r['wall_s']:7.2f}")
    sums = {(r["feature_counts"], r["variant"]): r["total_cost_sum"] for r in results}
    assert sums[(True, "before")] == sums[(True, "after")], "before and after total costs differ"
    assert sums[(False, "before")] == sums[(False, "after")], "before and after total costs differ"
    write_results(args.out, {"rows": args.rows, "trees": args.trees, "before": args.before, "variants": results},
                  "numpy", "lightgbm")


if __name__ == "__main__":
    main()
