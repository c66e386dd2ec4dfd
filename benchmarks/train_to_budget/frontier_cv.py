"""train_to_budget's default choice on the frontier harness: cross-validation on small tables.

Every frontier table is small (3,000 training and 1,500 validation rows), so ``train_to_budget`` with
its default ``choose="auto"`` chooses by 5-fold cross-validation of the pooled rows and refits the
pick. This script runs, on the frontier's splits and budgets (``frontier.py``), the adapters
``train_to_budget_cv`` (the default call: the search's own pick at each budget, its cross-validated
mean as the validation score), ``train_to_budget_fast`` and ``train_to_budget_lean`` (both choose on
the validation rows), resuming from the frontier's checkpoints, and compares per cell (pair x
budget, 84 cells), on the test rows:

* the cross-validated default against the search choosing on the validation rows (the stored
  ``train_to_budget`` of ``frontier.json``): mean difference over the seeds, one standard error
  (the two methods' standard errors combined, as the frontier's target 1), cells lower by more;
* the fast and the lean search against the cross-validated default: cells not lower by more than
  one standard error;
* each method's CPU seconds per search (the process's CPU time; the stored search's wall seconds)
  and as a multiple of one plain training of the same run;
* the chosen models' test cost as a share of the plain model's, against the budget share.

    python -m benchmarks.train_to_budget.frontier_cv --data-dir ../shared/data            # runs, then reports
    python -m benchmarks.train_to_budget.frontier_cv --report                            # from the checkpoints
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._runner import RESULTS, parse, script_parser, write_results
from benchmarks.train_to_budget import _data as fdata
from benchmarks.train_to_budget import frontier as fr

METHODS = ("lightgbm", "train_to_budget_cv", "train_to_budget_fast", "train_to_budget_lean")
CV, FAST, LEAN, VALID = "train_to_budget_cv", "train_to_budget_fast", "train_to_budget_lean", "train_to_budget"
#: a chosen model whose mean test cost share exceeds its budget share by more than this is reported
OVER = 0.1


def cv_pick(rec: dict[str, Any], fraction: float, budget: float) -> dict[str, Any] | None:
    """The cross-validated search's own pick at ``fraction`` of the plain validation cost (``budget``).

    Where ``result.best_at`` picked a candidate without a refit (``booster_at`` refuses it), the
    best refit model within the budget by mean fold score, as the search picked it (none fits: the
    cheapest refit), read off the refit models the checkpoint records (``budget_fraction`` None).
    """
    cands = rec.get("candidates") or []
    own = next((c for c in cands if c["knobs"]["budget_fraction"] == fraction), None)
    if own is None or own["knobs"].get("pick") == "best_at":
        return own
    refits = [c for c in cands if c["knobs"].get("pick") == "refit"]
    best = fr.choose_at_budget(refits, budget) or min(refits, key=lambda c: (c["val_cost"], -c["val_score"]))
    return dict(best, knobs=dict(best["knobs"], pick="best_refit" if best["val_cost"] <= budget else "cheapest"))


def own_pick(cands: list[dict[str, Any]], fraction: float, budget: float) -> dict[str, Any] | None:
    """The search's own model at ``fraction`` where its candidates carry one (``knobs["budget_fraction"]``: the
    fast search's picks refit on the pooled rows), else the harness rule on the validation rows."""
    own = [c for c in cands if c["knobs"].get("budget_fraction") == fraction]
    return own[0] if own else fr.choose_at_budget(cands, budget)


def compare(a: list[float] | None, b: list[float] | None) -> dict[str, Any] | None:
    """``a`` minus ``b`` (each ``[mean, se, n]``): difference, combined SE, and whether ``a`` is lower by more."""
    if not a or not b:
        return None
    diff, se = a[0] - b[0], math.hypot(a[1], b[1])
    return {"diff": diff, "se": se, "below": diff < -se, "above": diff > se}


def paired(a: dict[int, float], b: dict[int, float]) -> dict[str, Any] | None:
    """``a`` minus ``b`` (test scores per seed) on the seeds both have, by :func:`compare`."""
    common = sorted(set(a) & set(b))
    if not common:
        return None
    return compare(fr.mean_se([a[s] for s in common]), fr.mean_se([b[s] for s in common]))


def cell(per: dict[str, dict[int, dict[str, Any]]], seeds: list[int], b: float,
         stored: dict[str, Any]) -> dict[str, Any]:
    """One pair x budget: every method's test score (mean, SE, seeds) and the comparisons.

    The new methods are compared on the seeds both have; the stored validation choice is the
    mean over its three seeds (``frontier.json`` keeps no per-seed scores).
    """
    ref = {s: per["lightgbm"][s]["candidates"][0] for s in seeds}
    row: dict[str, Any] = {"budget": b}
    have = {m: [s for s in seeds if (per.get(m, {}).get(s) or {}).get("candidates")] for m in METHODS}
    scores: dict[str, dict[int, float]] = {}
    picks = {s: cv_pick(per[CV][s], b, b * ref[s]["val_cost"]) for s in have[CV]}
    ok = {s: p for s, p in picks.items() if p is not None}
    scores[CV] = {s: p["test_score"] for s, p in ok.items()}
    share = [p["test_cost"] / max(ref[s]["test_cost"], 1e-12) for s, p in ok.items()]
    row["cv_test_cost_share"] = fr.mean_se(share) if share else None
    row["cv_over_budget_seeds"] = int(sum(x > b * (1 + OVER) for x in share))
    row["cv_no_refit_seeds"] = int(sum(p["knobs"].get("pick") != "best_at" for p in ok.values()))
    row["cv_family"] = [p["knobs"]["family"] for p in ok.values()]
    for m in (FAST, LEAN):
        chosen = {s: own_pick(per[m][s]["candidates"], b, b * ref[s]["val_cost"]) for s in have[m]}
        scores[m] = {s: p["test_score"] for s, p in chosen.items() if p is not None}
    for m, sc in scores.items():
        row[m] = fr.mean_se(list(sc.values())) if sc else None
    v = (stored.get("budgets", {}).get(str(b)) or {}).get(VALID)
    row[VALID] = v["test_score"] if v else None
    vf = (stored.get("budgets", {}).get(str(b)) or {}).get(FAST)
    row["train_to_budget_fast_stored"] = vf["test_score"] if vf else None
    row["seeds"] = {m: len(have[m]) for m in METHODS}
    row["cv_vs_valid"] = compare(row[CV], row[VALID])
    row["fast_vs_cv"] = paired(scores[FAST], scores[CV])
    row["lean_vs_cv"] = paired(scores[LEAN], scores[CV])
    row["fast_stored_vs_cv"] = compare(row["train_to_budget_fast_stored"], row[CV])
    return row


#: What a cell holds of each method, for :func:`carry`.
CELL_KEYS = {CV: (CV, "cv_test_cost_share", "cv_over_budget_seeds", "cv_no_refit_seeds", "cv_family", "cv_vs_valid"),
             LEAN: (LEAN, "lean_vs_cv"), FAST: (FAST, "fast_vs_cv")}


def carry(res: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """Fill the methods without checkpoints from an earlier results file ``old`` of this script.

    Per cell, a method with no seed here takes its columns from ``old``'s cell; a comparison with a
    carried method is made on the cell means (as :func:`paired` on every seed). Per pair, its seconds.
    """
    old_cells = {(c["pair"], c["budget"]): c for c in old["cells"]}
    for c in res["cells"]:
        o = old_cells.get((c["pair"], c["budget"]))
        if o is None:
            continue
        moved = [m for m in CELL_KEYS if not c["seeds"].get(m) and o["seeds"].get(m)]
        for m in moved:
            c.update({k: o.get(k) for k in CELL_KEYS[m]})
            c["seeds"][m] = o["seeds"][m]
        if moved:
            c["fast_vs_cv"] = compare(c.get(FAST), c.get(CV))
            c["lean_vs_cv"] = compare(c.get(LEAN), c.get(CV))
            c["fast_stored_vs_cv"] = compare(c.get("train_to_budget_fast_stored"), c.get(CV))
    for pair, p in res["pairs"].items():
        for m, v in old["pairs"].get(pair, {}).get("seconds", {}).items():
            p["seconds"].setdefault(m, v)
    return {**res, "counts": counts(res["cells"]), "totals": totals(res["pairs"])}


def seconds(per: dict[str, dict[int, dict[str, Any]]], stored: dict[str, Any]) -> dict[str, Any]:
    """Mean seconds per search of each method: CPU seconds of this run, and the stored wall seconds."""
    out: dict[str, Any] = {}
    for m in METHODS:
        recs = [r for r in per.get(m, {}).values() if r.get("candidates") and "cpu_seconds" in r]
        if recs:
            out[m] = {"cpu": float(np.mean([r["cpu_seconds"] for r in recs])),
                      "wall": float(np.mean([r["seconds"] for r in recs])), "n": len(recs)}
    plain = out.get("lightgbm", {}).get("cpu")
    for v in out.values():
        v["x_plain"] = v["cpu"] / plain if plain else None
    st = stored.get("seconds", {})
    for m in (VALID, FAST):
        if m in st:
            out[f"{m}_stored"] = {"wall": st[m], "x_plain": st[m] / st["lightgbm"] if st.get("lightgbm") else None}
    return out


def summarize(recs: list[dict[str, Any]], stored: dict[str, Any]) -> dict[str, Any]:
    """Every cell and pair of the checkpoints that have the plain reference."""
    by_pair: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
    for r in recs:
        by_pair.setdefault(f"{r['dataset']}/{r['scheme']}", {}).setdefault(r["method"], {})[r["seed"]] = r
    cells, pairs = [], {}
    for pair, per in sorted(by_pair.items()):
        seeds = sorted(s for s, r in per.get("lightgbm", {}).items() if r.get("candidates"))
        if not seeds:
            continue
        st = stored.get(pair, {})
        cells += [dict(cell(per, seeds, b, st), pair=pair) for b in fr.BUDGETS]
        pairs[pair] = {"seconds": seconds(per, st), "errors": {m: {s: r["error"] for s, r in per[m].items()
                                                                   if "error" in r} for m in per}}
    return {"cells": cells, "pairs": pairs, "counts": counts(cells), "totals": totals(pairs)}


def counts(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """The three counts over the cells (cells without both methods are left out of each)."""
    out: dict[str, Any] = {"cells": len(cells)}
    for key, label in (("cv_vs_valid", "cv lower than valid"),
                       ("fast_vs_cv", "fast lower than cv"),
                       ("lean_vs_cv", "lean lower than cv"), ("fast_stored_vs_cv", "stored fast lower than cv")):
        rows = [c[key] for c in cells if c.get(key)]
        out[key] = {"what": label, "n": len(rows), "below": sum(r["below"] for r in rows),
                    "within": sum(not r["below"] for r in rows), "above": sum(r["above"] for r in rows),
                    "mean_diff": float(np.mean([r["diff"] for r in rows])) if rows else None}
    out["cv_over_budget_seed_picks"] = sum(c.get("cv_over_budget_seeds", 0) for c in cells)
    out["cv_no_refit_seed_picks"] = sum(c.get("cv_no_refit_seeds", 0) for c in cells)
    out["cv_seed_picks"] = sum(c["seeds"][CV] for c in cells)
    return out


def totals(pairs: dict[str, Any]) -> dict[str, Any]:
    """Seconds summed over every search (pairs x seeds) per method."""
    out: dict[str, Any] = {}
    for m in (*METHODS, "train_to_budget_stored", "train_to_budget_fast_stored"):
        rows = [p["seconds"][m] for p in pairs.values() if m in p["seconds"]]
        if rows:
            n = [r.get("n", 3) for r in rows]
            out[m] = {"cpu": sum(r["cpu"] * k for r, k in zip(rows, n, strict=True)) if "cpu" in rows[0] else None,
                      "wall": sum(r["wall"] * k for r, k in zip(rows, n, strict=True)), "searches": sum(n)}
    return out


def fmt(v: list[float] | None) -> str:
    return "-" if not v else f"{v[0]:.4f} ± {v[1]:.4f}"


def fmt_cmp(c: dict[str, Any] | None) -> str:
    if not c:
        return "-"
    return f"{c['diff']:+.4f} ({c['se']:.4f}){' **lower**' if c['below'] else ''}"


def markdown(res: dict[str, Any]) -> str:
    """The per-cell table, the per-budget summary, the seconds per pair and the counts."""
    lines = ["| pair | budget | cv default | valid (stored) | cv - valid (one SE) | fast | fast - cv | lean | "
             "lean - cv | cv test cost share |", "|---|---|---|---|---|---|---|---|---|---|"]
    for c in res["cells"]:
        lines.append(f"| {c['pair']} | {c['budget']:.0%} | {fmt(c.get(CV))} | {fmt(c.get(VALID))} | "
                     f"{fmt_cmp(c['cv_vs_valid'])} | {fmt(c.get(FAST))} | {fmt_cmp(c['fast_vs_cv'])} | "
                     f"{fmt(c.get(LEAN))} | {fmt_cmp(c['lean_vs_cv'])} | "
                     f"{fmt(c.get('cv_test_cost_share'))} |")
    lines += ["", by_pair(res["cells"]), "", by_budget(res["cells"]), "",
              "| pair | plain CPU s | cv CPU s (x plain) | fast | lean | valid, stored wall s (x plain) "
              "| fast, stored wall s |", "|---|---|---|---|---|---|---|"]
    for pair, p in res["pairs"].items():
        s = p["seconds"]

        def one(m: str, s: dict[str, Any] = s) -> str:
            v = s.get(m)
            if not v:
                return "-"
            x = f" ({v['x_plain']:.0f}x)" if v.get("x_plain") else ""
            return f"{v.get('cpu', v['wall']):.1f}{x}"
        lines.append(f"| {pair} | {s.get('lightgbm', {}).get('cpu', float('nan')):.2f} | {one(CV)} | {one(FAST)} "
                     f"| {one(LEAN)} | {one('train_to_budget_stored')} | {one('train_to_budget_fast_stored')} |")
    k = res["counts"]
    lines.append("")
    for key in ("cv_vs_valid", "fast_vs_cv", "lean_vs_cv", "fast_stored_vs_cv"):
        v = k[key]
        if v["n"]:
            lines.append(f"* {v['what']} by more than one SE: {v['below']} of {v['n']} cells (within or above: "
                         f"{v['within']}; above by more: {v['above']}; mean difference {v['mean_diff']:+.4f})")
    lines.append(f"* cv picks whose test cost share exceeds the budget share by more than {OVER:.0%}: "
                 f"{k['cv_over_budget_seed_picks']} of {k['cv_seed_picks']} seed picks; picks where `best_at` chose a "
                 f"candidate without a refit (`booster_at` refuses it): {k['cv_no_refit_seed_picks']}")
    lines.append("* seconds over every search: " + "; ".join(
        f"{m} {v['cpu'] if v['cpu'] is not None else v['wall']:.0f} s ({v['searches']} searches)"
        for m, v in res["totals"].items()))
    return "\n".join(lines) + "\n"


def by_pair(cells: list[dict[str, Any]]) -> str:
    """Per pair: the cross-validated default's test score minus the validation choice's at each budget."""
    lines = ["| pair | seeds | " + " | ".join(f"{b:.0%}" for b in fr.BUDGETS) + " |",
             "|---|---|" + "---|" * len(fr.BUDGETS)]
    for pair in dict.fromkeys(c["pair"] for c in cells):
        row = {c["budget"]: c for c in cells if c["pair"] == pair}
        parts = []
        for b in fr.BUDGETS:
            k = row[b].get("cv_vs_valid")
            parts.append("-" if not k else f"{k['diff']:+.4f} ({k['se']:.4f})" + (" *" if k["below"] else ""))
        lines.append(f"| {pair} | {row[fr.BUDGETS[0]]['seeds'][CV]} | " + " | ".join(parts) + " |")
    return "\n".join(lines)


def by_budget(cells: list[dict[str, Any]]) -> str:
    """Per budget: the mean differences and the cells lower by more than one SE."""
    lines = ["| budget | cv - valid (mean) | cv lower by > 1 SE | fast - cv (mean) | fast within 1 SE | "
             "lean - cv (mean) | lean within 1 SE |", "|---|---|---|---|---|---|---|"]
    for b in fr.BUDGETS:
        row = [c for c in cells if c["budget"] == b]
        parts = []
        for key in ("cv_vs_valid", "fast_vs_cv", "lean_vs_cv"):
            rs = [c[key] for c in row if c.get(key)]
            mean = f"{np.mean([r['diff'] for r in rs]):+.4f}" if rs else "-"
            n_ok = sum(r["below"] for r in rs) if key == "cv_vs_valid" else sum(not r["below"] for r in rs)
            parts += [mean, f"{n_ok} / {len(rs)}"]
        lines.append(f"| {b:.0%} | " + " | ".join(parts) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__.splitlines()[0], result_name="frontier_cv",
                           quick={"cap": 1200, "out_dir": RESULTS / "quick" / "frontier"})
    parser.add_argument("--datasets", nargs="+", default=list(fdata.LOADERS), choices=list(fdata.LOADERS))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS),
                        help="the adapters to run (lightgbm, the reference, is always run)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--cap", type=int, default=6000)
    parser.add_argument("--report", action="store_true", help="only read the checkpoints")
    parser.add_argument("--out-dir", type=Path, default=RESULTS / "frontier", help="the frontier's checkpoints")
    parser.add_argument("--stored", type=Path, default=RESULTS / "frontier.json",
                        help="the frontier's results (the validation choice's test scores)")
    parser.add_argument("--carry", type=Path, default=None,
                        help="an earlier results file of this script: the methods without checkpoints in --out-dir "
                             "take their cells and seconds from it")
    args = parse(parser, argv)
    if not args.report:
        if not args.data_dir.is_dir():
            parser.error(f"--data-dir must be the shared data folder, got {args.data_dir}")
        fr.run(argparse.Namespace(methods=sorted({"lightgbm", *args.methods}), data_dir=args.data_dir,
                                  datasets=args.datasets, quick=args.quick, seeds=args.seeds, pair_major=False,
                                  out_dir=args.out_dir, cap=args.cap, threads=1, force=False))
    recs = [r for r in fr.load_records(args.out_dir, quick=args.quick)
            if r["method"] in METHODS and r["dataset"] in args.datasets]
    if not recs:
        raise SystemExit(f"no checkpoints in {args.out_dir}: run without --report first")
    stored = json.loads(args.stored.read_text())["summary"] if args.stored.is_file() else {}
    res = summarize(recs, stored)
    if args.carry is not None:
        res = carry(res, json.loads(args.carry.read_text()))
    write_results(args.out, json.loads(json.dumps(res, default=float)), "lightgbm")
    print(markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
