"""The accuracy-cost frontier: every method on the same splits, sizes and cost accounting.

For each dataset x cost scheme x seed (train / validation / test drawn from the pooled rows, capped
by subsampling) every adapter of ``_adapters`` fits its knob grid and records, per
candidate, the validation and test score and mean per-row cost (each feature or group paid once
per row, on the row's paths: ``budget_extras.cost_report`` for LightGBM, JSON walks checked against
raw predictions for CatBoost and XGBoost). Every (dataset, scheme, seed, method) result is
checkpointed to ``benchmarks/results/frontier/`` as it finishes; a rerun skips what is there.
The checkpoints are a local cache (git ignores them); the committed result is the summary.

The report (``--report``, also run at the end) chooses every operating point ON VALIDATION:
at a budget B (a fraction of the unconstrained model's validation cost), among a method's
candidates with validation cost <= B, the best validation score; its TEST score is reported as
mean +- standard error over seeds. Also: the lowest cost within 0.005 of the unconstrained
validation score, three targets for train_to_budget (docs/frontier.md, "Targets"), and the cliff check along each
CEGB tradeoff grid. Writes ``benchmarks/results/frontier.json`` and ``docs/img/frontier/*.png``.

    python -m benchmarks.train_to_budget.frontier --data-dir ../shared/data            # full run (resumes)
    python -m benchmarks.train_to_budget.frontier --quick --datasets heart magic       # tiny sizes, 1 seed
    python -m benchmarks.train_to_budget.frontier --report                             # tables from checkpoints
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._runner import RESULTS, parse, script_parser, write_results
from benchmarks.train_to_budget import _adapters as fa
from benchmarks.train_to_budget import _data as fdata

ROOT = Path(__file__).resolve().parents[2]
BUDGETS = [0.1, 0.2, 0.3, 0.5, 0.75, 1.0]
TOLERANCE = 0.005
CLIFF_SHARE = 0.3
FAMILIES = {a.name: a.family for a in fa.all_adapters()}


# ---------------------------------------------------------------- running
def make_context(ds: fdata.Dataset, scheme: str, seed: int, cap: int, quick: bool, threads: int) -> fa.Context:
    s = fdata.split(ds, seed, cap)
    costs, groups = fdata.cost_schemes(ds)[scheme]
    return fa.Context(ds.name, scheme, seed, list(ds.names), ds.task, ds.n_classes, s.X_train, s.y_train,
                      s.X_valid, s.y_valid, s.X_test, s.y_test, costs, groups,
                      rounds=20 if quick else fa.ROUNDS, threads=threads, quick=quick)


def checkpoint_path(out_dir: Path, ctx: fa.Context, method: str) -> Path:
    return out_dir / f"{ctx.dataset}__{ctx.scheme}__s{ctx.seed}__{method}.json"


def run(args: argparse.Namespace) -> None:
    from tqdm.auto import tqdm

    adapters = [a for a in fa.all_adapters() if not args.methods or a.name in args.methods]
    missing = [a.name for a in adapters if not a.available()]
    if missing:
        print(f"not available here (skipped): {', '.join(missing)}", flush=True)
    adapters = [a for a in adapters if a.available()]
    datasets = {n: fdata.LOADERS[n](args.data_dir) for n in args.datasets}
    seeds = range(1 if args.quick else args.seeds)
    jobs = [(seed, name, scheme) for seed in seeds for name in args.datasets
            for scheme in fdata.cost_schemes(datasets[name])]
    if args.pair_major:  # every seed of one pair before the next pair: complete pairs first
        jobs.sort(key=lambda j: (args.datasets.index(j[1]), j[2], j[0]))
    args.out_dir.mkdir(parents=True, exist_ok=True)
    bar = tqdm(total=len(jobs) * len(adapters), desc="frontier", mininterval=5)
    for seed, name, scheme in jobs:
        ctx = make_context(datasets[name], scheme, seed, args.cap, args.quick, args.threads)
        for adapter in adapters:
            path = checkpoint_path(args.out_dir, ctx, adapter.name)
            bar.set_postfix_str(f"{name}/{scheme}/s{seed}/{adapter.name}")
            if (path.exists() and not args.force) or not adapter.applies(ctx):
                bar.update(1)
                continue
            t0, c0 = time.perf_counter(), time.process_time()
            record: dict[str, Any] = {"dataset": name, "scheme": scheme, "seed": seed, "method": adapter.name,
                                      "family": adapter.family, "quick": args.quick,
                                      "sizes": [len(ctx.y_train), len(ctx.y_valid), len(ctx.y_test)]}
            try:
                record["candidates"] = adapter.candidates(ctx)
            except Exception as exc:  # recorded, not fatal: one failing adapter must not stop the run
                record["error"] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
            record["seconds"] = time.perf_counter() - t0
            record["cpu_seconds"] = time.process_time() - c0  # the process's CPU time: robust to a shared machine
            path.write_text(json.dumps(record, default=float))
            bar.update(1)
    bar.close()


# ---------------------------------------------------------------- choosing on validation
#: train_to_budget's greedy-selection families, left out by the ``train_to_budget_nogreedy`` ablation
GREEDY_FAMILIES = ("greedy", "lazy_greedy")


def load_records(out_dir: Path, quick: bool | None = None) -> list[dict[str, Any]]:
    """Checkpoints; a train_to_budget record also gives ``train_to_budget_nogreedy`` (its candidates
    outside GREEDY_FAMILIES: the search without the greedy and lazy-in-greedy families)."""
    recs = []
    for p in sorted(out_dir.glob("*.json")):
        r = json.loads(p.read_text())
        if quick is None or r.get("quick") == quick:
            recs.append(r)
            if r["method"] == "train_to_budget" and r.get("candidates"):
                cands = [c for c in r["candidates"] if c.get("knobs", {}).get("family") not in GREEDY_FAMILIES]
                if cands:
                    recs.append(dict(r, method="train_to_budget_nogreedy", candidates=cands))
    return recs


def fitted(cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in cands if not c.get("skipped")]


def choose_at_budget(cands: list[dict[str, Any]], budget: float) -> dict[str, Any] | None:
    """Among candidates with validation cost <= budget, the best validation score (then the cheaper).

    Reads validation values only.
    """
    ok = [c for c in fitted(cands) if c["val_cost"] <= budget * (1 + 1e-12) + 1e-12]
    if not ok:
        return None
    return min(ok, key=lambda c: (-c["val_score"], c["val_cost"]))


def choose_cheapest_within(cands: list[dict[str, Any]], target: float, tol: float = TOLERANCE) -> dict[str, Any] | None:
    """Lowest validation cost among candidates whose validation score is >= target - tol (validation only)."""
    ok = [c for c in fitted(cands) if c["val_score"] >= target - tol]
    if not ok:
        return None
    return min(ok, key=lambda c: (c["val_cost"], -c["val_score"]))


def mean_se(values: list[float]) -> tuple[float, float, int]:
    v = np.asarray([x for x in values if x is not None and not math.isnan(x)], float)
    if v.size == 0:
        return float("nan"), float("nan"), 0
    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0
    return float(v.mean()), se, int(v.size)


def summarize(recs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per (dataset, scheme): budget table, cheapest-within-0.005, cliffs, frontier points."""
    by_key: dict[tuple[str, str], dict[str, dict[int, dict[str, Any]]]] = {}
    for r in recs:
        by_key.setdefault((r["dataset"], r["scheme"]), {}).setdefault(r["method"], {})[r["seed"]] = r
    out: dict[str, Any] = {}
    for (ds, scheme), methods in sorted(by_key.items()):
        plain = methods.get("lightgbm", {})
        seeds = sorted(s for s, r in plain.items() if r.get("candidates"))
        if not seeds:
            continue
        ref = {s: plain[s]["candidates"][0] for s in seeds}
        entry: dict[str, Any] = {"seeds": seeds, "sizes": plain[seeds[0]]["sizes"],
                                 "unconstrained": {"test_score": mean_se([ref[s]["test_score"] for s in seeds]),
                                                   "test_cost": mean_se([ref[s]["test_cost"] for s in seeds])},
                                 "budgets": {}, "cheapest_within": {}, "cliffs": {}, "families": {}, "errors": {},
                                 "seconds": {}}
        for m, per_seed in methods.items():
            entry["families"][m] = FAMILIES.get(m, next(iter(per_seed.values()))["family"])
            entry["seconds"][m] = float(np.mean([r.get("seconds", 0.0) for r in per_seed.values()]))
            errs = {s: r["error"] for s, r in per_seed.items() if "error" in r}
            if errs:
                entry["errors"][m] = errs
            usable = [s for s in seeds if s in per_seed and per_seed[s].get("candidates")]
            if len(usable) < len(seeds):
                continue  # compare methods on the same seeds only
            for b in BUDGETS:
                picks = {s: choose_at_budget(per_seed[s]["candidates"], b * ref[s]["val_cost"]) for s in seeds}
                if any(p is None for p in picks.values()):
                    entry["budgets"].setdefault(str(b), {})[m] = None
                    continue
                entry["budgets"].setdefault(str(b), {})[m] = {
                    "test_score": mean_se([picks[s]["test_score"] for s in seeds]),  # type: ignore[index]
                    "test_cost_share": mean_se([picks[s]["test_cost"] / max(ref[s]["test_cost"], 1e-12)  # type: ignore[index]
                                                for s in seeds]),
                    "knobs": [picks[s]["knobs"] for s in seeds]}  # type: ignore[index]
            picks = {s: choose_cheapest_within(per_seed[s]["candidates"], ref[s]["val_score"]) for s in seeds}
            if all(p is not None for p in picks.values()):
                entry["cheapest_within"][m] = {
                    "test_cost": mean_se([picks[s]["test_cost"] for s in seeds]),  # type: ignore[index]
                    "test_score": mean_se([picks[s]["test_score"] for s in seeds])}  # type: ignore[index]
            else:
                entry["cheapest_within"][m] = None
            if m.startswith("cegb_"):
                entry["cliffs"][m] = cliffs(per_seed, ref, seeds)
        entry["points"] = {m: {str(s): [[c["test_cost"], c["test_score"], c["val_cost"], c["val_score"]]
                                        for c in fitted(r.get("candidates") or [])]
                               for s, r in per_seed.items()} for m, per_seed in methods.items()}
        out[f"{ds}/{scheme}"] = entry
    return out


def cliffs(per_seed: dict[int, dict[str, Any]], ref: dict[int, dict[str, Any]],
           seeds: list[int]) -> list[dict[str, Any]]:
    """Adjacent tradeoffs jumping from > 30% of the unconstrained test cost to a constant model."""
    found = []
    for s in seeds:
        cands = fitted(per_seed[s]["candidates"])
        for a, b in itertools.pairwise(cands):
            if a["test_cost"] > CLIFF_SHARE * ref[s]["test_cost"] and b["constant"]:
                found.append({"seed": s, "from_tradeoff": a["knobs"]["tradeoff"], "to_tradeoff": b["knobs"]["tradeoff"],
                              "from_cost_share": a["test_cost"] / ref[s]["test_cost"]})
    return found


def best_peer(entry: dict[str, Any], key: str, b: str | None = None) -> tuple[str, Any] | None:
    peers = [m for m, f in entry["families"].items() if f == "peer"]
    if key == "budget":
        rows = {m: entry["budgets"].get(b, {}).get(m) for m in peers}
        rows = {m: v for m, v in rows.items() if v}
        return max(rows.items(), key=lambda kv: kv[1]["test_score"][0]) if rows else None
    rows = {m: entry["cheapest_within"].get(m) for m in peers}
    rows = {m: v for m, v in rows.items() if v}
    return min(rows.items(), key=lambda kv: kv[1]["test_cost"][0]) if rows else None


def targets(summary: dict[str, Any], ours: str = "train_to_budget") -> dict[str, Any]:
    """The three targets of docs/frontier.md ("Targets"), computed mechanically."""
    t1_rows, t2_rows = [], []
    for key, e in summary.items():
        for b in ("0.2", "0.3", "0.5", "0.75", "1.0"):
            mine = e["budgets"].get(b, {}).get(ours)
            peer = best_peer(e, "budget", b)
            if mine is None or peer is None:
                continue
            (ms, mse, _), (ps, pse, _) = mine["test_score"], peer[1]["test_score"]
            t1_rows.append({"pair": key, "budget": float(b), "ours": ms, "peer": peer[0], "peer_score": ps,
                            "diff": ms - ps, "se": math.hypot(mse, pse), "ok": ms >= ps - math.hypot(mse, pse)})
        mine_c = e["cheapest_within"].get(ours)
        peer_c = best_peer(e, "cheapest")
        if mine_c and peer_c:
            t2_rows.append({"pair": key, "ours": mine_c["test_cost"][0], "peer": peer_c[0],
                            "peer_cost": peer_c[1]["test_cost"][0],
                            "ok": mine_c["test_cost"][0] <= peer_c[1]["test_cost"][0]})
    all_cliffs = [dict(c, pair=k, method=m) for k, e in summary.items() for m, cs in e["cliffs"].items() for c in cs]
    res: dict[str, Any] = {"target1": {"rows": t1_rows}, "target2": {"rows": t2_rows},
                           "target3": {"cliffs": all_cliffs, "met": not all_cliffs,
                                       "grids": sorted({m for e in summary.values() for m in e["cliffs"]})}}
    if t1_rows:
        mean_diff = float(np.mean([r["diff"] for r in t1_rows]))
        res["target1"].update(met=all(r["ok"] for r in t1_rows) and mean_diff > 0, mean_diff=mean_diff,
                              failures=sum(not r["ok"] for r in t1_rows), n=len(t1_rows))
    else:
        res["target1"]["met"] = None
    if t2_rows:
        share = float(np.mean([r["ok"] for r in t2_rows]))
        res["target2"].update(met=share >= 0.8, share=share, n=len(t2_rows))
    else:
        res["target2"]["met"] = None
    return res


# ---------------------------------------------------------------- output
def fmt(v: Any, digits: int = 3) -> str:
    if not v:
        return "-"
    m, se, _ = v
    return f"{m:.{digits}f} ± {se:.{digits}f}"


def winners(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Per (dataset, scheme): the best method at 20% and 50% budgets and the cheapest within 0.005."""
    rows = []
    for key, e in summary.items():
        row: dict[str, Any] = {"pair": key}
        for b in ("0.2", "0.5"):
            col = {m: v for m, v in e["budgets"].get(b, {}).items() if v}
            if col:
                m, v = max(col.items(), key=lambda kv: kv[1]["test_score"][0])
                peer = best_peer(e, "budget", b)
                row[b] = {"method": m, "score": v["test_score"],
                          "best_peer": peer[0] if peer else None,
                          "best_peer_score": peer[1]["test_score"] if peer else None}
        cw = {m: v for m, v in e["cheapest_within"].items() if v}
        if cw:
            m, v = min(cw.items(), key=lambda kv: kv[1]["test_cost"][0])
            row["cheapest"] = {"method": m, "cost": v["test_cost"],
                               "share": v["test_cost"][0] / max(e["unconstrained"]["test_cost"][0], 1e-12)}
        rows.append(row)
    return rows


def markdown_winners(summary: dict[str, Any]) -> str:
    lines = ["| data / costs | best at 20% (test score) | best peer at 20% | best at 50% | best peer at 50% "
             "| cheapest within 0.005 (share of unconstrained cost) |", "|---|---|---|---|---|---|"]
    for r in winners(summary):
        cells = []
        for b in ("0.2", "0.5"):
            v = r.get(b)
            cells.append(f"{v['method']} {fmt(v['score'])}" if v else "-")
            cells.append(f"{v['best_peer']} {fmt(v['best_peer_score'])}" if v and v["best_peer"] else "-")
        c = r.get("cheapest")
        cells.append(f"{c['method']} {c['cost'][0]:.2f} ({c['share']:.0%})" if c else "-")
        lines.append(f"| {r['pair']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def ours_vs_peers(summary: dict[str, Any]) -> str:
    """Per budget: the best of ours minus the best peer (test score of the validation choices), over the pairs."""
    lines = ["| budget | best ours - best peer (mean over pairs) | pairs where ours >= peer | "
             "best method most often |", "|---|---|---|---|"]
    for b in map(str, BUDGETS):
        diffs, best = [], []
        for e in summary.values():
            col = {m: v["test_score"][0] for m, v in e["budgets"].get(b, {}).items() if v}
            ours = [v for m, v in col.items() if e["families"].get(m) == "ours"]
            peers = [v for m, v in col.items() if e["families"].get(m) == "peer"]
            if ours and peers:
                diffs.append(max(ours) - max(peers))
            if col:
                best.append(max(col, key=lambda m, col=col: col[m]))
        if not diffs:
            continue
        top = max(sorted(set(best)), key=best.count)
        lines.append(f"| {float(b):.0%} | {np.mean(diffs):+.4f} | {sum(d >= 0 for d in diffs)} / {len(diffs)} "
                     f"| {top} ({best.count(top)}) |")
    return "\n".join(lines) + "\n"


def markdown(summary: dict[str, Any], tg: dict[str, Any]) -> str:
    lines = [markdown_winners(summary), ours_vs_peers(summary)]
    for key, e in summary.items():
        methods = [m for m in e["families"] if m in e["cheapest_within"] or any(m in r for r in e["budgets"].values())]
        lines.append(f"### {key} (train/valid/test {'/'.join(map(str, e['sizes']))}, seeds {len(e['seeds'])}; "
                     f"unconstrained test score {fmt(e['unconstrained']['test_score'])}, "
                     f"cost {fmt(e['unconstrained']['test_cost'], 2)})\n")
        lines.append(f"![{key}](img/frontier/{key.replace('/', '_')}.png)\n")
        lines.append("| method | " + " | ".join(f"{int(float(b) * 100)}%" for b in map(str, BUDGETS))
                     + " | cost within 0.005 |")
        lines.append("|---|" + "---|" * (len(BUDGETS) + 1))
        for m in methods:
            cells = []
            for b in map(str, BUDGETS):
                v = e["budgets"].get(b, {}).get(m)
                col = {k: (vv["test_score"][0] if vv else -1) for k, vv in e["budgets"].get(b, {}).items()}
                best = bool(v) and v["test_score"][0] >= max(col.values()) - 1e-12
                cell = fmt(v["test_score"]) if v else "-"
                cells.append(f"**{cell}**" if best else cell)
            cw = e["cheapest_within"].get(m)
            cells.append(fmt(cw["test_cost"], 2) if cw else "-")
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        lines.append("")
    t1, t2, t3 = tg["target1"], tg["target2"], tg["target3"]
    lines.append("### Targets\n")
    if t1.get("met") is None:
        lines.append("1. train_to_budget vs best peer at 20-100%: not measured (no train_to_budget results).")
    else:
        lines.append(f"1. train_to_budget vs best peer at 20-100%: {'MET' if t1['met'] else 'MISSED'} "
                     f"({t1['n'] - t1['failures']}/{t1['n']} within one SE; mean difference {t1['mean_diff']:+.4f}).")
    for r in t1["rows"]:
        if not r["ok"]:
            lines.append(f"   - {r['pair']} at {r['budget']:.0%}: {r['ours']:.3f} vs {r['peer']} {r['peer_score']:.3f} "
                         f"({r['diff']:+.4f}, one SE {r['se']:.4f})")
    if t2.get("met") is None:
        lines.append("2. lowest cost within 0.005: not measured (no train_to_budget results).")
    else:
        lines.append(f"2. lowest cost within 0.005 at most the best peer's: {'MET' if t2['met'] else 'MISSED'} "
                     f"({t2['share']:.0%} of {t2['n']} pairs; target 80%).")
        for r in t2["rows"]:
            if not r["ok"]:
                lines.append(f"   - {r['pair']}: {r['ours']:.2f} vs {r['peer']} {r['peer_cost']:.2f}")
    abl = targets(summary, "train_to_budget_nogreedy")
    a1, a2 = abl["target1"], abl["target2"]
    if a1.get("met") is not None and a2.get("met") is not None:
        lines.append(f"   (ablation, the same run without the greedy families: target 1 "
                     f"{a1['n'] - a1['failures']}/{a1['n']} within one SE, mean difference {a1['mean_diff']:+.4f}; "
                     f"target 2 {a2['share']:.0%} of {a2['n']} pairs.)")
    per_grid = {m: sum(c["method"] == m for c in t3["cliffs"]) for m in t3["grids"]}
    lines.append(f"3. no cliff along the CEGB tradeoff grids ({', '.join(t3['grids'])}): "
                 f"{'MET' if t3['met'] else 'MISSED'} ({len(t3['cliffs'])} cliffs: "
                 + ", ".join(f"{m} {n}" for m, n in per_grid.items()) + ").")
    seen: dict[tuple[str, str], list[str]] = {}
    for c in t3["cliffs"]:
        seen.setdefault((c["pair"], c["method"]), []).append(
            f"{c['from_tradeoff']:.3g} -> {c['to_tradeoff']:.3g} from {c['from_cost_share']:.0%}")
    for (pair, m), items in sorted(seen.items()):
        lines.append(f"   - {pair} {m}: " + "; ".join(items))
    return "\n".join(lines) + "\n"


def pareto(cost: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats (cheaper or equal and better), by increasing cost."""
    order = np.lexsort((-score, cost))
    keep, best = [], -np.inf
    for i in order:
        if score[i] > best:
            keep.append(i)
            best = score[i]
    return np.asarray(keep, dtype=np.int64)


def plot(summary: dict[str, Any], img_dir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    img_dir.mkdir(parents=True, exist_ok=True)
    for key, e in summary.items():
        fig, ax = plt.subplots(figsize=(8, 5))
        seeds = [str(s) for s in e["seeds"]]
        for i, (m, per_seed) in enumerate(sorted(e["points"].items())):
            if not all(per_seed.get(s) for s in seeds):
                continue
            # the seed-averaged curve: candidates share their knob order across seeds
            n = min(len(per_seed[s]) for s in seeds)
            pts = np.mean([np.asarray(per_seed[s][:n]) for s in seeds], axis=0)
            front = pareto(pts[:, 0], pts[:, 1])
            style = "-" if e["families"].get(m) == "ours" else "--"
            color = plt.get_cmap("tab20")(i % 20)
            ax.scatter(pts[:, 0], pts[:, 1], s=6, color=color, alpha=0.4)
            line = ax.plot(pts[front, 0], pts[front, 1], style, lw=1.2, label=m, color=color)[0]
            chosen = [e["budgets"].get(str(b), {}).get(m) for b in BUDGETS]
            xs = [c["test_cost_share"][0] * e["unconstrained"]["test_cost"][0] for c in chosen if c]
            ys = [c["test_score"][0] for c in chosen if c]
            ax.scatter(xs, ys, marker="o", facecolors="none", edgecolors=line.get_color(), s=60)
        ax.set_xscale("symlog", linthresh=max(e["unconstrained"]["test_cost"][0] / 100, 1e-3))
        ax.set_xlabel("mean per-row test cost")
        ax.set_ylabel("test score (AUC; accuracy for multiclass)")
        lo = e["unconstrained"]["test_score"][0]
        ax.set_ylim(max(0.5, lo - 0.25), min(1.0, lo + 0.05) + 0.005)
        ax.set_title(f"{key}: seed means; lines = each method's upper envelope; circles = chosen on validation",
                     fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="lower right")
        fig.tight_layout()
        fig.savefig(img_dir / f"{key.replace('/', '_')}.png", dpi=90)
        plt.close(fig)


BEGIN = "<!-- frontier:begin (generated by benchmarks/train_to_budget/frontier.py --report --doc) -->"
END = "<!-- frontier:end -->"


def write_doc(path: Path, text: str) -> None:
    """Replace the generated part of ``path`` (between the BEGIN and END markers) with ``text``."""
    doc = path.read_text()
    if BEGIN not in doc or END not in doc:
        raise ValueError(f"--doc {path}: the markers {BEGIN!r} and {END!r} are missing")
    head, rest = doc.split(BEGIN, 1)
    path.write_text(head + BEGIN + "\n\n" + text + "\n" + END + rest.split(END, 1)[1])


def report(args: argparse.Namespace) -> str:
    recs = load_records(args.out_dir, quick=args.quick)
    if not recs:
        # the checkpoints are a local cache (not committed): never overwrite the committed summary with nothing
        raise SystemExit(f"no checkpoints in {args.out_dir}: run the benchmark first (without --report); "
                         "it rebuilds the cache and resumes from it when interrupted")
    if args.datasets:
        recs = [r for r in recs if r["dataset"] in args.datasets]
    summary = summarize(recs)
    tg = targets(summary)
    text = markdown(summary, tg)
    lean = {k: {kk: vv for kk, vv in e.items() if kk != "points"} for k, e in summary.items()}
    payload = {"summary": lean, "targets": tg, "winners": winners(summary), "budgets": BUDGETS, "tolerance": TOLERANCE}
    write_results(args.out, json.loads(json.dumps(payload, default=float)), "lightgbm")
    if not args.quick:
        plot(summary, args.img_dir)
        if args.doc is not None:
            write_doc(args.doc, text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__, result_name="frontier",
                           quick={"cap": 1200, "out_dir": RESULTS / "quick" / "frontier"})
    parser.add_argument("--datasets", nargs="+", default=list(fdata.LOADERS), choices=list(fdata.LOADERS))
    parser.add_argument("--methods", nargs="+", default=None, help="adapter names (default: all available)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--cap", type=int, default=6000, help="rows pooled per dataset before the 50/25/25 split")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--pair-major", action="store_true",
                        help="run all seeds of a dataset x scheme before the next (default: seed by seed)")
    parser.add_argument("--force", action="store_true", help="refit results that already have a checkpoint")
    parser.add_argument("--report", action="store_true", help="only summarize the checkpoints")
    parser.add_argument("--out-dir", type=Path, default=RESULTS / "frontier", help="the per-cell checkpoints")
    parser.add_argument("--doc", type=Path, default=None, help="markdown file whose generated part to rewrite")
    parser.add_argument("--img-dir", type=Path, default=ROOT / "docs" / "img" / "frontier")
    args = parse(parser, argv)
    if not args.report:
        if not args.data_dir.is_dir():
            parser.error(f"--data-dir must be the shared data folder, got {args.data_dir}")
        run(args)
    print(report(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
