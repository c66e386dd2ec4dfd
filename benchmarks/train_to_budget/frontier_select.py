"""Selection rules for train_to_budget's candidates, read off the frontier checkpoints.

At a budget B (a fraction of the unconstrained validation cost) two rules pick among a
train_to_budget run's candidates with validation cost <= B:

* ``best``: the best validation score (ties: the cheaper), the harness's rule;
* ``one_se``: the cheapest candidate whose validation score is within one standard error of that
  best (AUC: Hanley and McNeil's standard error from the validation class counts; accuracy: the
  binomial one), the classic one-standard-error rule.

Evidence used to choose a rule must not be the test rows, so the report first gives what each
rule does on VALIDATION-side evidence (the chosen cost), then the test score of both choices for
the record.

    python -m benchmarks.train_to_budget.frontier_select --data-dir ../shared/data
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from benchmarks._runner import RESULTS, parse, script_parser, write_results
from benchmarks.train_to_budget import _data as fdata
from benchmarks.train_to_budget import frontier as fr


def auc_se(a: float, n1: int, n0: int) -> float:
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    v = (a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a)) / max(1, n1 * n0)
    return math.sqrt(max(v, 0.0))


def main(argv: list[str] | None = None) -> None:
    ap = script_parser(__doc__.splitlines()[0], result_name="frontier_select",
                       quick={"out_dir": RESULTS / "quick" / "frontier"})
    ap.add_argument("--out-dir", type=Path, default=RESULTS / "frontier",
                    help="the frontier's checkpoints (--quick: those of its --quick run)")
    args = parse(ap, argv)
    recs = [r for r in fr.load_records(args.out_dir, quick=args.quick)
            if r["method"] in ("train_to_budget", "lightgbm")]
    if not recs:
        raise SystemExit(f"no checkpoints in {args.out_dir}: run python -m benchmarks.train_to_budget.frontier first "
                         "(they are a local cache)")
    counts: dict[tuple[str, int], tuple[str, np.ndarray]] = {}
    rows = []
    for r in recs:
        if r["method"] != "train_to_budget" or not r.get("candidates"):
            continue
        key = (r["dataset"], r["seed"])
        if key not in counts:
            ds = fdata.LOADERS[r["dataset"]](args.data_dir)
            s = fdata.split(ds, r["seed"], 6000)
            counts[key] = (ds.task, np.bincount(s.y_valid.astype(int)))
        task, cnt = counts[key]
        plain = next(p for p in recs if p["method"] == "lightgbm" and p["dataset"] == r["dataset"]
                     and p["scheme"] == r["scheme"] and p["seed"] == r["seed"])["candidates"][0]
        n = int(cnt.sum())
        for b in fr.BUDGETS:
            ok = [c for c in r["candidates"] if c["val_cost"] <= b * plain["val_cost"] * (1 + 1e-12) + 1e-12]
            if not ok:
                continue
            best = min(ok, key=lambda c: (-c["val_score"], c["val_cost"]))
            a = best["val_score"]
            se = auc_se(a, int(cnt[1]), int(cnt[0])) if task == "binary" else math.sqrt(a * (1 - a) / n)
            near = [c for c in ok if c["val_score"] >= a - se]
            one = min(near, key=lambda c: (c["val_cost"], -c["val_score"]))
            rows.append({"pair": f"{r['dataset']}/{r['scheme']}", "seed": r["seed"], "budget": b,
                         "best_test": best["test_score"], "one_test": one["test_score"],
                         "best_val_cost": best["val_cost"] / plain["val_cost"],
                         "one_val_cost": one["val_cost"] / plain["val_cost"]})
    print(f"{len(rows)} seed x pair x budget choices")
    for b in fr.BUDGETS:
        sel = [x for x in rows if x["budget"] == b]
        if not sel:
            continue
        d = np.array([x["one_test"] - x["best_test"] for x in sel])
        print(f"budget {b:.0%}: validation cost share best {np.mean([x['best_val_cost'] for x in sel]):.3f}, "
              f"one-SE {np.mean([x['one_val_cost'] for x in sel]):.3f}; test one-SE - best {d.mean():+.4f} "
              f"(se {d.std(ddof=1) / math.sqrt(d.size):.4f}, n {d.size}, one-SE worse on {int((d < 0).sum())})")
    write_results(args.out, {"choices": rows}, indent=0)


if __name__ == "__main__":
    main()
