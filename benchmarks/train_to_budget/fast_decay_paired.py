"""The fast search's last tradeoff on the frontier harness: fixed at 0.003 against the convergence-scaled one.

On every split of the frontier harness (``benchmarks/train_to_budget/frontier.py``: 7 tables x their cost schemes x
3 seeds, 6,000 pooled rows, the harness's parameters) it runs the harness's
``train_to_budget_fast`` adapter twice on the same split, once with the capped candidates' last
tradeoff fixed at ``FAST_DECAY[1]`` (``old``) and once as shipped (``new``: times the ranking
model's convergence ratio, ``budget_extras.cegb._fast.decay_end``), chooses at each harness budget
(10-100% of plain LightGBM's validation cost) by the harness rule and records the test score.
One JSON line per split goes to ``benchmarks/results/fast_decay_paired.jsonl`` (a rerun skips
the splits there); the summary counts the cells (table x scheme x budget, mean over seeds) where
``new`` is below or above ``old`` by more than one standard error of the paired difference.

    python -m benchmarks.train_to_budget.fast_decay_paired --data-dir ../shared/data
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import numpy as np

import budget_extras.cegb._fast as fast
from benchmarks._runner import parse, script_parser
from benchmarks.train_to_budget import _adapters as fa
from benchmarks.train_to_budget import _data as fdata
from benchmarks.train_to_budget import frontier as fr


def one_split(ds: fdata.Dataset, scheme: str, seed: int) -> dict[str, Any]:
    """Both schedules on one split: the test score and cost chosen at every harness budget."""
    ctx = fr.make_context(ds, scheme, seed, 6000, False, 1)
    plain = fa.PlainLGBM().candidates(ctx)[0]
    rec: dict[str, Any] = {"ds": ds.name, "scheme": scheme, "seed": seed, "plain_val_cost": plain["val_cost"]}
    shipped = fast.decay_end
    for label, end in (("old", lambda booster: fast.FAST_DECAY[1]), ("new", shipped)):
        fast.decay_end = end
        t0 = time.time()
        try:
            cands = fa.TrainToBudgetFast().candidates(ctx)
        finally:
            fast.decay_end = shipped
        rec[label] = {}
        for f in fr.BUDGETS:
            c = fr.choose_at_budget(cands, f * plain["val_cost"])
            rec[label][str(f)] = None if c is None else [c["test_score"], c["test_cost"]]
        rec[label + "_s"] = time.time() - t0
    return rec


def summary(recs: list[dict[str, Any]]) -> str:
    """Mean paired difference (new - old) over cells and the cells beyond one standard error."""
    cells: dict[tuple[str, str, str], list[float]] = {}
    for r in recs:
        for f, old in r["old"].items():
            new = r["new"][f]
            if old is not None and new is not None:
                cells.setdefault((r["ds"], r["scheme"], f), []).append(new[0] - old[0])
    means, lower, higher, same = [], 0, 0, 0
    for d in cells.values():
        v = np.asarray(d)
        m, se = float(v.mean()), (float(v.std(ddof=1)) / math.sqrt(v.size) if v.size > 1 else 0.0)
        means.append(m)
        same += bool(np.all(v == 0))
        lower += m < -max(se, 1e-12)
        higher += m > max(se, 1e-12)
    return (f"{len(recs)} splits, {len(cells)} cells: mean test score difference new - old {np.mean(means):+.5f}; "
            f"identical on {same}, new lower by more than one SE on {lower}, higher on {higher}; "
            f"seconds old {sum(r['old_s'] for r in recs):.0f}, new {sum(r['new_s'] for r in recs):.0f}")


def main(argv: list[str] | None = None) -> None:
    p = script_parser(__doc__, result_name="fast_decay_paired", suffix=".jsonl",
                      quick={"datasets": ["heart"], "seeds": 1})
    p.add_argument("--datasets", nargs="+", default=list(fdata.LOADERS), choices=list(fdata.LOADERS))
    p.add_argument("--seeds", type=int, default=3)
    args = parse(p, argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    recs = [json.loads(line) for line in args.out.read_text().splitlines()] if args.out.exists() else []
    done = {(r["ds"], r["scheme"], r["seed"]) for r in recs}
    for seed in range(args.seeds):
        for name in args.datasets:
            ds = fdata.LOADERS[name](args.data_dir)
            for scheme in fdata.cost_schemes(ds):
                if (name, scheme, seed) in done:
                    continue
                rec = one_split(ds, scheme, seed)
                recs.append(rec)
                with args.out.open("a") as fh:
                    fh.write(json.dumps(rec) + "\n")
                print(name, scheme, seed, flush=True)
    print(summary(recs))


if __name__ == "__main__":
    main()
