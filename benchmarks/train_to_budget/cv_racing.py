"""Racing the cross-validated choice over folds: how many fold fits a race would save, and whether picks change.

``train_to_budget``'s cross-validated choice trains every shortlisted configuration on every fold.
A race would train all of them on the first ``r`` folds, drop those that cannot be picked, and
train the rest on the remaining folds. Fold fits are independent of each other, so the race is
simulated exactly on one full cross-validation: a configuration's first ``r`` fold scores are
those it would have had in the race. For every table and seed of ``small_data.py`` (the default
call, ``choose="cv"``, at 20 / 40 / 60% of the plain model's cost), and each race:

* ``dominance``: drop a configuration if another one costs no more and its mean over the first
  ``r`` folds is higher by more than ``z`` standard errors of a difference of two ``r``-fold
  means (the fold variance pooled over the configurations); such a configuration is picked at
  no budget by either rule;
* ``budget``: drop it if at every budget it misses by more than 10%, or it is dominated among
  the configurations within the budget, or its partial mean is below the best one's within the
  budget by more than ``z`` such standard errors (plus one final standard error for ``rule="1se"``);

it counts the picks at every budget (rules ``best`` and ``1se``, costs as cross-validated) that
differ from the full cross-validation's, and the fold fits and fold seconds saved, also as a
share of the search's CPU time. The costs the race reads are those of every fold (a race knows
only the first ``r`` folds' costs): the counts of changed picks are a lower bound.

    python -m benchmarks.train_to_budget.cv_racing --data-dir ../shared/data
"""

from __future__ import annotations

import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.train_to_budget import _data as fdata
from benchmarks.train_to_budget import small_data as sd

RACES = [(kind, r, z) for kind in ("dominance", "budget") for r in (2, 3) for z in (1.0, 2.0, 3.0)]


def search(data_dir: Path, table: str, seed: int) -> dict[str, Any]:
    """One default search (``choose="cv"``, three budgets): its cross-validated configurations and CPU time."""
    import lightgbm as lgb

    from budget_extras import TreeEnsemble, cost_report, train_to_budget

    ds, cap = sd.load_table(data_dir, table)
    sp = fdata.split(ds, seed, cap)
    costs, groups = fdata.cost_schemes(ds).get("real") or fdata.cost_schemes(ds)["tiered"]
    fc = fdata.feature_costs(ds.names, costs, groups)
    params = sd.params_for(ds)
    plain, plain_cpu = sd._plain(ds, sp, params)
    full = float(cost_report(TreeEnsemble.from_booster(plain), sp.X_valid, fc).total_cost.mean())
    budgets = [f * full for f in sd.FRACTIONS]
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = train_to_budget(params, lgb.Dataset(sp.X_train, sp.y_train, feature_name=ds.names), budget=budgets[1],
                            budgets=budgets, valid_set=(sp.X_valid, sp.y_valid), costs=fc, num_boost_round=sd.ROUNDS,
                            progress=False, choose="cv")
    cpu = time.process_time() - t0
    cands = [c for c in r.frontier if c.folds > 0]
    return {"table": table, "seed": seed, "budgets": budgets, "search_cpu": cpu, "plain_cpu": plain_cpu,
            "search_seconds": r.seconds["total"], "cands": cands}


def survivors(cands: list[Any], budgets: list[float], kind: str, r: int, z: float, rule: str) -> list[bool]:
    """Which configurations a race over the first ``r`` folds keeps (see the module docstring)."""
    part = np.array([np.mean(c.fold_scores[:r]) for c in cands])
    k = len(cands[0].fold_scores)
    var = float(np.mean([np.var(c.fold_scores[:r], ddof=1) for c in cands]))
    se, final = math.sqrt(2.0 * var / r), (math.sqrt(var / k) if rule == "1se" else 0.0)
    cost = np.array([c.cost for c in cands])

    def dominated(j: int, among: np.ndarray) -> bool:
        return bool(np.any((cost[among] <= cost[j]) & (part[among] - part[j] > z * se) & (among != j)))

    everyone = np.arange(len(cands))
    if kind == "dominance":
        return [not dominated(j, everyone) for j in everyone]
    keep = []
    for j in everyone:
        alive = False
        for b in budgets:
            within = everyone[cost <= b]
            if cost[j] > 1.1 * b or (within.size and dominated(j, within)):
                continue
            alive = alive or not within.size or part[within].max() - part[j] <= final + z * se
        keep.append(alive)
    return keep


def simulate(row: dict[str, Any]) -> dict[str, Any]:
    """Every race of :data:`RACES` on one search: changed picks, fold fits and seconds saved."""
    from budget_extras.cegb._result import pick

    cands, budgets = row["cands"], row["budgets"]
    k = len(cands[0].fold_scores)
    fold_seconds = sum(c.seconds for c in cands)
    out = {}
    for kind, r, z in RACES:
        for rule in ("best", "1se"):
            keep = survivors(cands, budgets, kind, r, z, rule)
            kept = [c for c, ok in zip(cands, keep, strict=True) if ok]
            changed = 0
            for b in budgets:
                full, raced = pick(cands, b, rule), pick(kept, b, rule)
                changed += (full is None) != (raced is None) or (full is not None and cands[full] is not kept[raced])
            dropped = [c for c, ok in zip(cands, keep, strict=True) if not ok]
            out[f"{kind} r={r} z={z:g} {rule}"] = {
                "picks": len(budgets), "changed": int(changed), "fits": k * len(cands),
                "fits_saved": (k - r) * len(dropped), "fold_seconds": fold_seconds,
                "seconds_saved": sum(c.seconds * (k - r) / k for c in dropped)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__.splitlines()[0], result_name="cv_racing", quick={"tables": "heart", "seeds": 1})
    parser.add_argument("--tables", default="heart,thyroid,adult_rare1500,magic1500")
    parser.add_argument("--seeds", type=int, default=3)
    args = parse(parser, argv)
    rows = []
    for table in args.tables.split(","):
        for seed in range(args.seeds):
            row = search(args.data_dir, table, seed)
            rows.append({**{k: v for k, v in row.items() if k != "cands"}, "n_cv": len(row["cands"]),
                         "races": simulate(row)})
            print(f"done {table} seed {seed}: {len(row['cands'])} configurations", flush=True)
    total: dict[str, dict[str, float]] = {}
    for row in rows:
        for name, v in row["races"].items():
            acc = total.setdefault(name, dict.fromkeys(v, 0.0))
            for key, x in v.items():
                acc[key] += x
    search_seconds = sum(r["search_seconds"] for r in rows)
    print("| race | rule | picks changed | fold fits saved | fold seconds saved | share of the search's seconds |")
    print("|---|---|---|---|---|---|")
    for name, v in total.items():
        race, rule = name.rsplit(" ", 1)
        print(f"| {race} | {rule} | {v['changed']:.0f} / {v['picks']:.0f} | {v['fits_saved']:.0f} / {v['fits']:.0f} "
              f"({v['fits_saved'] / v['fits']:.0%}) | {v['seconds_saved'] / v['fold_seconds']:.0%} | "
              f"{v['seconds_saved'] / search_seconds:.1%} |")
    write_results(args.out, {"rows": rows, "total": total, "search_seconds": search_seconds}, "lightgbm")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
