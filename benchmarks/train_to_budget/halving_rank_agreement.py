"""Do early validation scores rank train_to_budget's candidates as their final scores do?

For each table (budget_search_cost.py's split, tiered costs 1 / 5 / 10, 200 rounds, 31 leaves,
learning rate 0.05, budgets at 20 / 40 / 60% of the plain model's validation cost) the full
search runs once with every candidate trained to all rounds (``options={"halving": False}``).
Each candidate is then measured at 10%, 25% and 50% of its rounds (validation AUC and mean
per-row validation cost of its first trees), and the script prints

* the Spearman rank correlation of early against final validation AUC over the candidates,
  and of early against final cost;
* what successive halving at those rungs would do offline: a candidate is dropped at the first
  rung where an earlier candidate of the search has no higher cost and an AUC higher by more
  than ``margin`` times the spread of the AUCs at that rung; whether the choice at each budget
  stays the same, and the share of the candidates' rounds saved.

    python -m benchmarks.train_to_budget.halving_rank_agreement --data-dir ../shared/data

``--quick``: MAGIC only, written under ``benchmarks/results/quick/``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.train_to_budget import _data as fdata
from benchmarks.train_to_budget import budget_search_cost as bsc

RUNGS = (0.1, 0.25, 0.5)


def measure_table(name: str, data_dir: Path, threads: int) -> dict[str, Any]:
    import lightgbm as lgb
    from scipy.stats import spearmanr
    from sklearn.metrics import roc_auc_score

    from budget_extras import FeatureCosts, TreeEnsemble, cost_report, train_to_budget

    ds = bsc.LOADERS[name](data_dir)
    Xt, yt, Xv, yv, _, _ = bsc.split(ds)
    costs = FeatureCosts(fdata.tiered_costs(len(ds.names)), feature_names=list(ds.names))
    params = {**bsc.PARAMS, "num_threads": threads}
    plain = lgb.train(params, lgb.Dataset(Xt, yt, feature_name=list(ds.names)), num_boost_round=bsc.ROUNDS)
    full_cost = float(cost_report(TreeEnsemble.from_booster(plain), Xv, costs).total_cost.mean())
    budgets = [f * full_cost for f in (0.2, 0.4, 0.6)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = train_to_budget(params, lgb.Dataset(Xt, yt, feature_name=list(ds.names)), budget=budgets[0],
                            valid_set=(Xv, yv), costs=costs, num_boost_round=bsc.ROUNDS, progress=False,
                            budgets=budgets[1:], keep_boosters=True, choose="valid", options={"halving": False})
    rows = []
    for c, b in zip(r.frontier, r.boosters, strict=True):
        if c.proxy or b is None:
            continue
        at = {}
        for q in RUNGS:
            n = max(1, round(q * bsc.ROUNDS))
            early = lgb.Booster(model_str=b.model_to_string(num_iteration=n))
            cost = float(cost_report(TreeEnsemble.from_booster(early), Xv, costs).total_cost.mean())
            at[q] = (float(roc_auc_score(yv, early.predict(Xv))), cost)
        rows.append({"family": c.family, "score": c.score, "cost": c.cost, "at": at})
    out: dict[str, Any] = {"dataset": name, "n_candidates": len(rows), "budgets": budgets, "spearman": {}}
    final = np.array([x["score"] for x in rows])
    fcost = np.array([x["cost"] for x in rows])
    for q in RUNGS:
        early = np.array([x["at"][q][0] for x in rows])
        ecost = np.array([x["at"][q][1] for x in rows])
        out["spearman"][q] = {"score": float(spearmanr(early, final).statistic),
                              "cost": float(spearmanr(ecost, fcost).statistic)}
    out["simulated"] = {str(m): simulate(rows, budgets, m) for m in (0.0, 0.02, 0.05)}
    return out


def simulate(rows: list[dict[str, Any]], budgets: list[float], margin: float) -> dict[str, Any]:
    """Drop candidates offline as halving would (earlier candidates only); compare the choices."""
    from budget_extras.core import fits_budget

    kept = []
    used = 0.0
    for i, x in enumerate(rows):
        dropped = None
        for q in RUNGS:
            scores = [y["at"][q][0] for y in rows[: i + 1]]
            gap = margin * (max(scores) - min(scores))
            s, c = x["at"][q]
            if any(rows[j]["at"][q][1] <= c and rows[j]["at"][q][0] > s + gap for j in kept):
                dropped = q
                break
        used += 1.0 if dropped is None else dropped
        if dropped is None:
            kept.append(i)

    def choice(idx: list[int], b: float) -> int | None:
        fit = [i for i in idx if fits_budget(rows[i]["cost"], b)]
        return max(fit, key=lambda i: (rows[i]["score"], -rows[i]["cost"])) if fit else None

    same = [choice(list(range(len(rows))), b) == choice(kept, b) for b in budgets]
    return {"kept": len(kept), "rounds_share": used / max(1, len(rows)), "same_choice": same}


def main(argv: list[str] | None = None) -> None:
    p = script_parser(__doc__, result_name="halving_rank_agreement", quick={"datasets": ["magic"]})
    p.add_argument("--datasets", nargs="+", default=["magic", "higgs", "adult"])
    p.add_argument("--threads", type=int, default=1)
    args = parse(p, argv)
    res = []
    for name in args.datasets:
        r = measure_table(name, args.data_dir, args.threads)
        res.append(r)
        sp = ", ".join(f"{q:.0%}: score {v['score']:.3f} cost {v['cost']:.3f}" for q, v in r["spearman"].items())
        sim = "; ".join(f"margin {m}: kept {v['kept']}/{r['n_candidates']}, rounds {v['rounds_share']:.2f}, "
                        f"same choice {v['same_choice']}" for m, v in r["simulated"].items())
        print(f"{name}: {r['n_candidates']} candidates; Spearman {sp}; {sim}", flush=True)
        write_results(args.out, {"rows": res}, "lightgbm", "numpy")


if __name__ == "__main__":
    main()
