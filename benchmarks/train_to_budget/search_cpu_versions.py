"""CPU time of ``train_to_budget``'s default call, this checkout against another checkout, side by side.

On seed 0 of seven frontier pairs (3,000 training and 1,500 validation rows each; the frontier's
parameters, rounds, ``k_grid`` and six budgets at 10-100% of the plain model's validation cost,
``budgets=``), each code runs the default call (no ``choose=``, no ``search=``: whatever that
code's defaults are) in its own interpreter, after one plain training of the same parameters in
the same process. Per pair and code: CPU seconds of the search and of the plain training (one
thread), their ratio and the trainings made (``nfev``). The codes alternate, ``--repeats`` times.

Compare the default of a past commit with this checkout's:

    git worktree add --detach ../old-search 1c5a277^
    python -m benchmarks.train_to_budget.search_cpu_versions --data-dir ../shared/data --other ../old-search
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._runner import ROOT, parse, script_parser, write_results
from benchmarks.train_to_budget import _adapters as fa
from benchmarks.train_to_budget import _data as fdata
from benchmarks.train_to_budget.frontier import make_context

PAIRS = [("adult", "tiered"), ("heart", "real"), ("magic", "tiered"), ("higgs", "tiered"), ("letter", "tiered"),
         ("covertype", "tiered"), ("thyroid", "real")]

CHILD = r"""
import json, pickle, sys, time, warnings
import lightgbm as lgb
from budget_extras import FeatureCosts, train_to_budget
for c in pickle.load(open(sys.argv[1], "rb")):
    g = None if c["groups"] is None else [int(v) if v >= 0 else None for v in c["groups"]]
    fc = FeatureCosts(lazy=c["costs"], groups=g, feature_names=c["names"])
    def sets():
        train = lgb.Dataset(c["X_train"], c["y_train"], feature_name=c["names"], free_raw_data=False,
                            params={"verbose": -1, "max_bin": 255})
        return train, lgb.Dataset(c["X_valid"], c["y_valid"], reference=train, free_raw_data=False)
    t0 = time.process_time()
    lgb.train(c["params"], sets()[0], c["rounds"])
    plain = time.process_time() - t0
    train, valid = sets()
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = train_to_budget(c["params"], train, budget=c["full"], valid_set=valid, costs=fc,
                              num_boost_round=c["rounds"], random_state=0, progress=False, k_grid=c["k_grid"],
                              budgets=c["budgets"])
    print(json.dumps({"pair": c["pair"], "plain_cpu": plain,
                      "search_cpu": time.process_time() - t0, "nfev": res.nfev}), flush=True)
"""


def contexts(data_dir: Path) -> list[dict[str, Any]]:
    """The frontier's seed-0 split of every pair, with its plain model's validation cost."""
    out = []
    for name, scheme in PAIRS:
        ctx = make_context(fdata.LOADERS[name](data_dir), scheme, 0, 6000, False, 1)
        full = fa.lgb_cost(ctx, ctx.plain(), ctx.X_valid)
        out.append({"pair": f"{name}/{scheme}", "X_train": ctx.X_train, "y_train": ctx.y_train,
                    "X_valid": ctx.X_valid, "y_valid": ctx.y_valid, "costs": np.asarray(ctx.costs, float),
                    "groups": ctx.groups, "names": list(ctx.names), "params": ctx.lgb_params(), "rounds": ctx.rounds,
                    "k_grid": [k for k in ctx.k_grid() if k < ctx.d],
                    "budgets": [f * full for f in fa.BUDGET_FRACTIONS], "full": full})
    return out


def run_code(code: Path, ctx_file: Path) -> list[dict[str, Any]]:
    """Run every pair's default call with the ``budget_extras`` of checkout ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(ctx_file)], capture_output=True, text=True, check=True,
                         env=env, cwd=str(code))
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def main(argv: list[str] | None = None) -> None:
    p = script_parser(__doc__, result_name="search_cpu_versions")
    p.add_argument("--other", type=Path, required=True, help="a checkout of another commit (its budget_extras)")
    p.add_argument("--repeats", type=int, default=2)
    args = parse(p, argv)
    codes = {"this": ROOT, "other": args.other.resolve()}
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        ctx_file = Path(tmp) / "ctx.pkl"
        ctx_file.write_bytes(pickle.dumps(contexts(args.data_dir)))
        for r in range(args.repeats):
            for label in (("other", "this") if r % 2 == 0 else ("this", "other")):
                for row in run_code(codes[label], ctx_file):
                    runs.append({"code": label, "repeat": r, **row})
                    print(json.dumps(runs[-1]), flush=True)
    summary = {}
    for pair in dict.fromkeys(r["pair"] for r in runs):
        s = {}
        for label in codes:
            rows = [r for r in runs if r["pair"] == pair and r["code"] == label]
            s[label] = {"search_cpu": float(np.mean([r["search_cpu"] for r in rows])),
                        "multiple": float(np.mean([r["search_cpu"] / r["plain_cpu"] for r in rows])),
                        "nfev": rows[0]["nfev"]}
        s["ratio"] = s["this"]["search_cpu"] / s["other"]["search_cpu"]
        summary[pair] = s
        print(f"{pair}: this {s['this']['search_cpu']:.1f} s ({s['this']['multiple']:.0f}x), "
              f"other {s['other']['search_cpu']:.1f} s ({s['other']['multiple']:.0f}x), ratio {s['ratio']:.2f}")
    write_results(args.out, {"other": args.other.name, "runs": runs, "summary": summary}, "lightgbm")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
