"""The fast search against the default search on the frontier harness: the cells within one standard error.

On every split of the frontier harness (``benchmarks/train_to_budget/frontier.py``: 7 tables x their cost
schemes x 3 seeds, 6,000 pooled rows, the harness's parameters) it runs plain LightGBM and the
``train_to_budget_fast`` adapter into its own checkpoint folder (a rerun skips the splits there),
recording each fast search's CPU seconds (process time) beside its wall seconds. It chooses every
operating point on validation by the harness rule (``frontier.choose_at_budget``) and compares, per
cell (table x scheme x budget, mean over the seeds), the fast search's test score with the default
search's stored in ``benchmarks/results/frontier.json`` (``--against``: also a method's checkpoints in
another folder, e.g. ``train_to_budget_cv``): the fast search is within one standard error where its
mean is at least the default's less ``hypot`` of the two standard errors over the seeds.

    python -m benchmarks.train_to_budget.fast_frontier --data-dir ../shared/data
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from benchmarks._runner import RESULTS, parse, script_parser, write_results
from benchmarks.train_to_budget import _adapters as fa
from benchmarks.train_to_budget import _data as fdata
from benchmarks.train_to_budget import frontier as fr

FAST = "train_to_budget_fast"


def run_split(ds: fdata.Dataset, scheme: str, seed: int, out_dir: Path) -> None:
    """Plain LightGBM and the fast search on one split, each checkpointed in the harness's format."""
    ctx = fr.make_context(ds, scheme, seed, 6000, False, 1)
    for adapter in (fa.PlainLGBM(), fa.TrainToBudgetFast()):
        path = fr.checkpoint_path(out_dir, ctx, adapter.name)
        if path.exists():
            continue
        path.write_text(json.dumps(timed_record(ds, scheme, seed, ctx, adapter), default=float))


def timed_record(ds: fdata.Dataset, scheme: str, seed: int, ctx: fa.Context, adapter: Any) -> dict[str, Any]:
    """Run ``adapter`` on ``ctx``: its checkpoint record in the harness's format, wall and CPU seconds (``cpu``)."""
    t0, c0 = time.perf_counter(), time.process_time()
    cands = adapter.candidates(ctx)
    return {"dataset": ds.name, "scheme": scheme, "seed": seed, "method": adapter.name, "family": adapter.family,
            "quick": False, "sizes": [len(ctx.y_train), len(ctx.y_valid), len(ctx.y_test)], "candidates": cands,
            "seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0}


def compare(fast: dict[str, Any], ref: dict[str, Any], method: str) -> dict[str, Any]:
    """Per cell: the fast search's test score against ``method``'s, and the counts within / below / above one SE."""
    rows = []
    for pair, e in sorted(ref.items()):
        for b, col in e["budgets"].items():
            mine, theirs = fast.get(pair, {}).get("budgets", {}).get(b, {}).get(FAST), col.get(method)
            if mine is None or theirs is None:
                continue
            (m, ms, _), (t, ts, _) = mine["test_score"], theirs["test_score"]
            se = math.hypot(ms, ts)
            rows.append({"pair": pair, "budget": float(b), "fast": m, "default": t, "diff": m - t, "se": se,
                         "within": m >= t - se, "above": m > t + se,
                         "default_families": [k["family"] for k in theirs["knobs"]],
                         "fast_families": [k["family"] for k in mine["knobs"]]})
    return {"method": method, "cells": len(rows), "within": sum(r["within"] for r in rows),
            "below": sum(not r["within"] for r in rows), "above": sum(r["above"] for r in rows),
            "mean_diff": sum(r["diff"] for r in rows) / max(1, len(rows)), "rows": rows}


def main(argv: list[str] | None = None) -> None:
    p = script_parser(__doc__, result_name="fast_frontier")
    p.add_argument("--out-dir", type=Path, default=RESULTS / "fast_frontier", help="the per-split checkpoints")
    p.add_argument("--against", nargs=2, metavar=("DIR", "METHOD"), default=None,
                   help="also compare with METHOD's checkpoints in DIR (plain LightGBM's from --out-dir)")
    args = parse(p, argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for seed in range(3):
        for name in fdata.LOADERS:
            ds = fdata.LOADERS[name](args.data_dir)
            for scheme in fdata.cost_schemes(ds):
                run_split(ds, scheme, seed, args.out_dir)
    recs = fr.load_records(args.out_dir)
    mine = fr.summarize(recs)
    stored = json.loads((RESULTS / "frontier.json").read_text())["summary"]
    out = {"stored_default": compare(mine, stored, "train_to_budget")}
    if args.against:
        other = [r for r in fr.load_records(Path(args.against[0])) if r["method"] == args.against[1]]
        out["against"] = compare(mine, fr.summarize(other + [r for r in recs if r["method"] == "lightgbm"]),
                                 args.against[1])
    fast_recs = [r for r in recs if r["method"] == FAST]
    timed = [r for r in fast_recs if "cpu" in r or "cpu_seconds" in r]  # run_split's, or frontier.run's
    out["fast_seconds"] = sum(r["seconds"] for r in timed)
    out["fast_cpu_seconds"] = sum(r.get("cpu", r.get("cpu_seconds", 0.0)) for r in timed)
    out["timed_splits"] = len(timed)
    out["splits"] = len(fast_recs)
    out["candidates_per_split"] = sum(len(r["candidates"]) for r in fast_recs) / max(1, len(fast_recs))
    write_results(args.out, out, "lightgbm")
    for key in ("stored_default", "against"):
        if key in out:
            c = out[key]
            print(f"fast vs {c['method']}: within one SE on {c['within']} of {c['cells']} cells, below on "
                  f"{c['below']}, above on {c['above']}; mean difference {c['mean_diff']:+.4f}")
    print(f"fast search: {out['fast_cpu_seconds']:.0f} CPU s ({out['fast_seconds']:.0f} s wall) over the "
          f"{out['timed_splits']} of {out['splits']} splits it timed; {out['candidates_per_split']:.1f} candidates "
          "per split")


if __name__ == "__main__":
    main()
