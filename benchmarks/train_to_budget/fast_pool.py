"""How the fast search should use the validation rows on small tables: three choices side by side.

On the frontier harness's splits (``frontier.py``: 3,000 training and 1,500 validation rows, 100
rounds, one thread), ``train_to_budget(search="fast")`` with

* ``valid``: ``choose="valid"``, the candidates trained on the training rows and chosen on the
  validation rows (the harness rule, ``frontier.choose_at_budget``);
* ``pool``: the default ``choose="auto"``: each budget's validation pick refit on the training and
  validation rows pooled (the search's pick at each budget fraction);
* ``cv2``: the fast search's candidates cross-validated (5 folds of the pooled rows): at each budget
  the two best by validation score that fit it, each configuration once, picked by mean fold score
  and refit on the pooled rows (a ``Strategy`` passed as ``search=``: the fast run with a shortlist);

and plain LightGBM (the CPU reference), each split's searches in one process. Per cell (pair x
budget, mean over the seeds): each variant's test score against the default search choosing by
cross-validation (``train_to_budget_cv`` of ``frontier_cv.json``) and on the validation rows
(``train_to_budget`` of ``frontier.json``), within one standard error where its mean is at least
the reference's less ``hypot`` of the two standard errors; and each variant's CPU seconds (process
time of the search alone, not of measuring its models) as a multiple of the plain trainings' in
the same run (``lightgbm``: the plain training alone).

    python -m benchmarks.train_to_budget.fast_pool --data-dir ../shared/data
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
from benchmarks.train_to_budget.fast_frontier import timed_record

VARIANTS = ("valid", "pool", "cv2")


def _cv2_shortlist(r: Any, cross_validate: Any) -> list[Any]:
    """At each budget the two best candidates on the training rows by validation score that fit it, each once."""
    from budget_extras.core import fits_budget

    seen: dict[str, Any] = {}
    for b in r.opts.targets:
        fit = sorted((c for c in r.full.frontier if fits_budget(c.cost, b)), key=lambda c: (-c.score, c.cost))
        for c in fit[:2]:
            seen.setdefault(repr(sorted(c.params.items())), c)
    return [cross_validate(c) for c in seen.values()]


def cv2_strategy() -> Any:
    """The fast search with its candidates cross-validated (:func:`_cv2_shortlist`)."""
    from dataclasses import replace

    from budget_extras.cegb._strategies import STRATEGIES

    return replace(STRATEGIES["fast"], cross_validates=True, pool_refit=False, shortlist=_cv2_shortlist,
                   shortlist_most=lambda n, options: 2 * n)


class _Variant(fa.TrainToBudgetFast):
    """The fast adapter with one variant's arguments."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.extra = {"valid": {"search": "fast", "choose": "valid"}, "pool": {"search": "fast"},
                      "cv2": {"search": cv2_strategy()}}[name]
        self.search_cpu = 0.0

    def search(self, ctx: fa.Context) -> tuple[Any, float]:
        """The search alone, its CPU seconds kept (the plain model it reads is trained before)."""
        ctx.plain()
        c0 = time.process_time()
        out = super().search(ctx)
        self.search_cpu = time.process_time() - c0
        return out


def run_split(ds: fdata.Dataset, scheme: str, seed: int, out_dir: Path, variants: list[str]) -> None:
    """Plain LightGBM and each variant on one split, checkpointed in the harness's format."""
    ctx = fr.make_context(ds, scheme, seed, 6000, False, 1)
    c0 = time.process_time()
    ctx.plain()
    plain_cpu = time.process_time() - c0
    for adapter in (fa.PlainLGBM(), *(_Variant(v) for v in variants)):
        path = fr.checkpoint_path(out_dir, ctx, adapter.name)
        if path.exists():
            continue
        rec = timed_record(ds, scheme, seed, ctx, adapter)
        rec["cpu_seconds"] = rec.pop("cpu")
        rec["search_cpu_seconds"] = getattr(adapter, "search_cpu", plain_cpu)
        path.write_text(json.dumps(rec, default=float))


def pick(cands: list[dict[str, Any]], fraction: float, budget: float) -> dict[str, Any] | None:
    """The search's own pick at ``fraction`` where the candidates carry one, else the harness rule."""
    own = [c for c in cands if c["knobs"].get("budget_fraction") == fraction]
    return own[0] if own else fr.choose_at_budget(cands, budget)


def summarize(recs: list[dict[str, Any]], cv_cells: list[dict[str, Any]], stored: dict[str, Any],
              variants: list[str]) -> dict[str, Any]:
    """Per cell and variant: mean test score over the seeds and the two comparisons; counts; CPU."""
    by: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
    for r in recs:
        by.setdefault(f"{r['dataset']}/{r['scheme']}", {}).setdefault(r["method"], {})[r["seed"]] = r
    cells = []
    for c in cv_cells:
        per = by.get(c["pair"], {})
        seeds = sorted(s for s in per.get("lightgbm", {}) if all(s in per.get(v, {}) for v in variants))
        if len(seeds) < 3:
            continue
        row: dict[str, Any] = {"pair": c["pair"], "budget": c["budget"], "cv": c["train_to_budget_cv"],
                               "valid_default": stored[c["pair"]]["budgets"][str(c["budget"])]["train_to_budget"]
                               ["test_score"]}
        for v in variants:
            picks = [pick(per[v][s]["candidates"], c["budget"],
                          c["budget"] * per["lightgbm"][s]["candidates"][0]["val_cost"]) for s in seeds]
            m = fr.mean_se([p["test_score"] for p in picks if p is not None])
            row[v] = m
            for ref in ("cv", "valid_default"):
                diff, se = m[0] - row[ref][0], math.hypot(m[1], row[ref][1])
                row[f"{v}_vs_{ref}"] = {"diff": diff, "se": se, "within": diff >= -se, "above": diff > se}
        cells.append(row)
    counts = {f"{v}_vs_{ref}": {"cells": len(cells), "within": sum(r[f"{v}_vs_{ref}"]["within"] for r in cells),
                                "above": sum(r[f"{v}_vs_{ref}"]["above"] for r in cells),
                                "mean_diff": sum(r[f"{v}_vs_{ref}"]["diff"] for r in cells) / max(1, len(cells))}
              for v in variants for ref in ("cv", "valid_default")}
    pairs = {c["pair"] for c in cells}
    cpu = {m: sum(r["search_cpu_seconds"] for p in pairs for r in by[p].get(m, {}).values())
           for m in ("lightgbm", *variants)}
    return {"cells": cells, "counts": counts, "cpu_seconds": cpu, "pairs": sorted(pairs),
            "x_plain": {v: cpu[v] / cpu["lightgbm"] for v in variants if cpu["lightgbm"]}}


def main(argv: list[str] | None = None) -> None:
    p = script_parser(__doc__, result_name="fast_pool")
    p.add_argument("--out-dir", type=Path, default=RESULTS / "fast_pool", help="the per-split checkpoints")
    p.add_argument("--pairs", nargs="+", default=None, help="dataset/scheme pairs (default: every one)")
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    p.add_argument("--seeds", type=int, default=3)
    args = parse(p, argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    import budget_extras.cegb  # noqa: F401  (imported before the first search is timed)

    for seed in range(args.seeds):
        for name in fdata.LOADERS:
            ds = fdata.LOADERS[name](args.data_dir)
            for scheme in fdata.cost_schemes(ds):
                if args.pairs is None or f"{name}/{scheme}" in args.pairs:
                    run_split(ds, scheme, seed, args.out_dir, args.variants)
    cv_cells = json.loads((RESULTS / "frontier_cv.json").read_text())["cells"]
    stored = json.loads((RESULTS / "frontier.json").read_text())["summary"]
    out = summarize(fr.load_records(args.out_dir), cv_cells, stored, args.variants)
    write_results(args.out, out, "lightgbm")
    for key, c in out["counts"].items():
        print(f"{key}: within one SE on {c['within']} of {c['cells']} cells, above on {c['above']}; "
              f"mean difference {c['mean_diff']:+.4f}")
    print("CPU seconds:", {k: round(v, 1) for k, v in out["cpu_seconds"].items()},
          "x plain:", {k: round(v, 1) for k, v in out["x_plain"].items()})


if __name__ == "__main__":
    main()
