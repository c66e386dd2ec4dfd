"""Oracle for post-hoc pruning at half the cost: retrain a GBDT on every affordable feature subset.

Usage::

    python -m benchmarks.budgetprune.gbdt_prune_oracle --data-dir ../shared/data [--datasets magic heart]
        [--fraction 0.5] [--quick] [--out benchmarks/results/gbdt_prune_oracle.json]

Same data, costs, model and budget as ``benchmarks/budgetprune/gbdt_prune.py`` (a plain GBDT, 200 trees,
learning_rate 0.05, num_leaves 31; the budget is 50% of its mean per-row validation cost). Any
method that drops features ends with a model that reads some subset of them; the best such model
is bounded by retraining on the subset. For every feature subset whose retrained model's mean
validation cost (``cost_report``, lazy acquisition, the benchmark's accounting) fits the budget,
a GBDT with the same parameters is retrained on it and scored. Which subsets are trained:

* every subset whose summed feature cost fits the budget (its model's lazy cost cannot exceed
  the sum, so it fits for sure);
* walking up from those, every subset one feature larger that has an affordable subset one
  feature smaller, kept (and walked from) when its model's validation cost fits after all.

Reported: the subset with the best validation score and its test score (what an oracle that
chooses on validation gets), the best test score over all affordable subsets (an upper bound
that looks at the test labels), the unpruned model's test score, and the share of validation
rows whose paths in the unpruned model meet every feature the model uses (near 100%: lazy
per-row acquisition of that model saves almost nothing, so its cost is about the cost of the
features it reads). Results go to ``benchmarks/results/gbdt_prune_oracle.json`` (with the 25
affordable subsets best on validation). At one thread this takes about 10 minutes for MAGIC
(831 trainings on 11,412 rows) and 15 for heart (6767 small trainings) on a loaded 2-core
machine. ``--quick``: heart at 1% of the cost (167 trainings, about 35 s).
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.budgetprune.gbdt_prune import mean_cost, prepare, score, train
from budget_extras.core import TreeEnsemble, cost_report

ROOT = Path(__file__).resolve().parents[2]
TOP = 25  # affordable subsets kept in the JSON, best validation score first
QUICK_FRACTION = 0.01  # --quick's budget fraction: few affordable subsets


def _evaluate(cols: list[str], splits: list[Any], costs: Any, n_class: int) -> dict[str, Any]:
    (Xa, ya), (Xb, yb), (Xc, yc) = splits
    b, _ = train(Xa[cols], ya, n_class)
    return {
        "features": cols, "valid_cost": mean_cost(b, Xb[cols], costs),
        "valid_score": score(b.predict(Xb[cols], raw_score=True), yb, n_class),
        "test_score": score(b.predict(Xc[cols], raw_score=True), yc, n_class),
    }


def oracle(name: str, data_dir: Path, fraction: float) -> dict[str, Any]:
    """Retrain on every affordable subset of ``name``'s features; return the summary and every subset."""
    splits, costs, n_class, booster, _, _ = prepare(name, data_dir)
    _, (Xb, _), (Xc, yc) = splits
    feats = list(booster.feature_name())
    budget = fraction * mean_cost(booster, Xb, costs)
    ens = TreeEnsemble.from_booster(booster)
    rep = cost_report(ens, Xb, costs.reindex(list(ens.feature_names)).to_dict())
    used = np.asarray(rep.used.todense())
    model_feats = used.any(axis=0)
    t0 = time.perf_counter()
    seen: dict[frozenset[str], dict[str, Any]] = {}
    frontier = []
    for k in range(1, len(feats) + 1):
        for s in itertools.combinations(feats, k):
            if costs[list(s)].sum() <= budget * (1 + 1e-9):
                frontier.append(frozenset(s))
    n_sure = len(frontier)
    while frontier:
        nxt: set[frozenset[str]] = set()
        for s in frontier:
            if s in seen:
                continue
            r = _evaluate([f for f in feats if f in s], splits, costs, n_class)
            r["fits"] = r["valid_cost"] <= budget * (1 + 1e-9)
            seen[s] = r
            if r["fits"]:
                nxt.update(s | {f} for f in feats if f not in s and s | {f} not in seen)
        frontier = sorted(nxt, key=sorted)
    fit = [r for r in seen.values() if r["fits"]]
    best = max(fit, key=lambda r: (r["valid_score"], -r["valid_cost"]))
    return {
        "dataset": name, "n_features": len(feats), "budget": budget, "fraction": fraction,
        "unpruned": {"valid_cost": mean_cost(booster, Xb, costs), "features_used": int(model_feats.sum()),
                     "test_score": score(booster.predict(Xc, raw_score=True), yc, n_class),
                     "rows_meeting_all_used": float(used[:, model_feats].all(axis=1).mean())},
        "n_trained": len(seen), "n_sure": n_sure, "n_affordable": len(fit), "seconds": time.perf_counter() - t0,
        "best_by_valid": best, "best_test": max(fit, key=lambda r: r["test_score"]),
        "top_by_valid": sorted(fit, key=lambda r: -r["valid_score"])[:TOP],
    }


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| dataset | budget | unpruned test score | affordable subsets (trained) | best subset by validation: "
        "features, test score (- unpruned) | best test score over affordable subsets (- unpruned) | "
        "rows meeting every used feature |\n|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for r in results:
        u, b, t = r["unpruned"], r["best_by_valid"], r["best_test"]
        rows.append(
            f"| {r['dataset']} | {r['budget']:.3g} | {u['test_score']:.4f} | {r['n_affordable']} ({r['n_trained']}) | "
            f"{', '.join(b['features'])}: {b['test_score']:.4f} ({b['test_score'] - u['test_score']:+.4f}) | "
            f"{t['test_score']:.4f} ({t['test_score'] - u['test_score']:+.4f}) | "
            f"{100 * u['rows_meeting_all_used']:.0f}% |"
        )
    return head + "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    ap = script_parser(__doc__, result_name="gbdt_prune_oracle",
                       quick={"datasets": ["heart"], "fraction": QUICK_FRACTION})
    ap.add_argument("--datasets", nargs="+", default=["magic", "heart"])
    ap.add_argument("--fraction", type=float, default=0.5)
    args = parse(ap, argv)
    results = []
    for name in args.datasets:
        r = oracle(name, args.data_dir, args.fraction)
        results.append(r)
        print(f"{name}: {r['n_trained']} subsets trained, {r['n_affordable']} affordable, {r['seconds']:.0f} s",
              flush=True)
        write_results(args.out, {"lightgbm": lgb.__version__,
                                 "results": json.loads(json.dumps(results, default=float))}, "lightgbm", "numpy")
    print(table(results))


if __name__ == "__main__":
    main()
