"""Smaller cross-validated shortlists, replayed exactly: fold fits saved and picks changed.

``train_to_budget``'s default call on a small table (``choose="auto"``) cross-validates a
shortlist of its candidates (``budget_extras.cegb._cv.shortlist``: per budget the best top-k
subset of each order and the ``TOP_PER_BUDGET`` best by validation score, and the cheapest
candidate), retunes CEGB configurations that miss a budget on the folds, and refits each
budget's pick on the pooled rows. A configuration's fold fits do not depend on which other
configurations are shortlisted (the same folds, the same seed), so one default call gives every
fold fit and refit a smaller shortlist needs; the choice under the smaller shortlist is replayed
by running the search's own choice code (``_choose_by_cv``: shortlist, cross-validation, retune,
pick and refit) again with the fold fits and refits memoized. The retune is replayed, not
approximated: a twin the default call did not train is trained then (``new_fits``).

On the frontier's splits of seven pairs (``frontier.py``'s ``make_context``; the call of
``search_cpu_versions.py``, six budgets at 10-100% of the plain model's validation cost), for each
rule of :data:`RULES` (per budget the ``k`` best by validation score within 10% of the budget,
with or without the best top-k subset of each order; the cheapest candidate always): the fold fits
(and their seconds) against the default's, the (pair, seed, budget) picks that change, and their
test score difference (the pick as ``frontier_cv.py``'s ``train_to_budget_cv`` reads it: the
search's pick at the budget, or where it misses, the best refit candidate within it). Per call also
the CPU seconds of the candidate phase, the shortlist's cross-validation, the retune and the refits.

    python -m benchmarks.train_to_budget.cv_shortlist --data-dir ../shared/data
"""

from __future__ import annotations

import functools
import json
import math
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.train_to_budget import _adapters as fa
from benchmarks.train_to_budget import _data as fdata
from benchmarks.train_to_budget.frontier import make_context
from benchmarks.train_to_budget.search_cpu_versions import PAIRS

#: (name, k best by validation score per budget, the best top-k subset of each order too)
RULES = [(f"top{k}{'+orders' if orders else ''}", k, orders) for k in (5, 4, 3, 2, 1, 0) for orders in (True, False)
         if k > 0 or orders]


def rule_shortlist(shortlist: Callable[..., list[Any]], k: int,
                   orders: bool) -> Callable[[Sequence[Any], Sequence[float]], list[Any]]:
    """The search's ``shortlist`` (``_cv.shortlist``, unpatched) with ``k`` candidates per budget by
    validation score, the top-k orders' bests if ``orders``."""
    return functools.partial(shortlist, per_budget=k, orders=orders)


def _key(c: Any) -> str:
    return repr((sorted(c.params.items()), c.decay))


class Recorder:
    """Patches the search's cross-validation with memoized fold fits and refits, and times its phases."""

    def __init__(self) -> None:
        from budget_extras.cegb import _cv as cv
        from budget_extras.cegb import _train_to_budget as ttb

        self.cv, self.ttb = cv, ttb
        self.orig = {"fit": cv._fit_fold, "refit": cv.refit, "choose": ttb._choose_by_cv, "cross": cv.cross_validate,
                     "retune": cv.retune, "shortlist": cv.shortlist}
        self.fits: dict[tuple[str, int], Any] = {}
        self.refits: dict[str, Any] = {}
        self.used: set[tuple[str, int]] = set()
        self.new_fits = 0
        self.args: tuple[Any, ...] | None = None
        self.cpu: dict[str, float] = {}
        self.short: list[Any] = []
        self.first: Any = None

    def _timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*a: Any, **kw: Any) -> Any:
            t0 = time.process_time()
            try:
                return fn(*a, **kw)
            finally:
                self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - t0
        return run

    def _fit(self, s: Any, pool: Any, c: Any, fold: int) -> Any:
        key = (_key(c), fold)
        self.used.add(key)
        if key not in self.fits:
            self.new_fits += 1
            self.fits[key] = self.orig["fit"](s, pool, c, fold)
        return self.fits[key]

    def _refit(self, s: Any, pool: Any, c: Any) -> Any:
        if _key(c) not in self.refits:
            self.refits[_key(c)] = self.orig["refit"](s, pool, c)
        return self.refits[_key(c)]

    def _choose(self, *args: Any) -> Any:
        self.args = args
        self.first = self.orig["choose"](*args)
        return self.first

    def _shortlist(self, frontier: Any, targets: Any) -> list[Any]:
        self.short = self.orig["shortlist"](frontier, targets)
        return self.short

    def __enter__(self) -> Recorder:
        cv, ttb = self.cv, self.ttb
        cv._fit_fold, cv.refit = self._fit, self._timed("refit", self._refit)
        cv.retune = self._timed("retune", self.orig["retune"])
        cv.cross_validate = self._timed("cross_validate", self.orig["cross"])
        cv.shortlist = self._shortlist
        ttb._choose_by_cv = self._timed("choose", self._choose)
        return self

    def __exit__(self, *exc: Any) -> None:
        cv, ttb = self.cv, self.ttb
        cv._fit_fold, cv.refit, cv.retune = self.orig["fit"], self.orig["refit"], self.orig["retune"]
        cv.cross_validate, cv.shortlist = self.orig["cross"], self.orig["shortlist"]
        ttb._choose_by_cv = self.orig["choose"]

    def replay(self, short: Callable[..., list[Any]]) -> tuple[Any, int, int]:
        """The choice under shortlist ``short``: the ``_CVChoice``, fold fits used and fold fits trained anew."""
        assert self.args is not None
        self.used, self.new_fits = set(), 0
        self.cv.shortlist = short
        try:
            ch = self.orig["choose"](*self.args)
        finally:
            self.cv.shortlist = self._shortlist
        return ch, len(self.used), self.new_fits


def harness_pick(ch: Any, budget: float) -> int:
    """The pick at ``budget`` as ``frontier_cv.py`` reads it (``best_at``, else the best refit within it)."""
    from budget_extras.core import fits_budget

    i = ch.picks[budget]
    if fits_budget(ch.cands[i].cost, budget):
        return int(i)
    refit = list(ch.refits)
    fit = [j for j in refit if fits_budget(ch.cands[j].cost, budget)]
    return int(min(fit, key=lambda j: (-ch.cands[j].score, ch.cands[j].cost)) if fit else
               min(refit, key=lambda j: (ch.cands[j].cost, -ch.cands[j].score)))


def one(data_dir: Path, name: str, scheme: str, seed: int) -> dict[str, Any]:
    """The default call on one frontier split, then every rule of :data:`RULES` replayed."""
    import lightgbm as lgb

    from budget_extras import train_to_budget

    ctx = make_context(fdata.LOADERS[name](data_dir), scheme, seed, 6000, False, 1)
    full = fa.lgb_cost(ctx, ctx.plain(), ctx.X_valid)
    budgets = [f * full for f in fa.BUDGET_FRACTIONS]
    train = lgb.Dataset(ctx.X_train, ctx.y_train, feature_name=list(ctx.names), free_raw_data=False,
                        params={"verbose": -1, "max_bin": 255})
    valid = lgb.Dataset(ctx.X_valid, ctx.y_valid, reference=train, free_raw_data=False)
    with Recorder() as rec, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        res = train_to_budget(ctx.lgb_params(), train, budget=full, valid_set=valid, costs=ctx.fc,
                              num_boost_round=ctx.rounds, random_state=seed, progress=False,
                              k_grid=[k for k in ctx.k_grid() if k < ctx.d], budgets=budgets)
        total = time.process_time() - t0
        n_short = len(rec.short)
        n_cv = sum(c.folds > 0 for c in res.frontier)
        default_fits = set(rec.fits)
        cpu = {"total": total, "candidates": total - rec.cpu["choose"],
               "cv_shortlist": rec.cpu["cross_validate"] - rec.cpu.get("retune", 0.0),
               "retune": rec.cpu.get("retune", 0.0), "refit": rec.cpu.get("refit", 0.0)}
        cpu["other_choice"] = rec.cpu["choose"] - cpu["cv_shortlist"] - cpu["retune"] - cpu["refit"]
        tests: dict[str, tuple[float, float]] = {}

        def test_score(ch: Any, i: int) -> tuple[float, float]:
            key = _key(ch.cands[i])
            if key not in tests:
                b = rec.refits[key][0]
                tests[key] = (fa.score(ctx.task, ctx.y_test, b.predict(ctx.X_test)), fa.lgb_cost(ctx, b, ctx.X_test))
            return tests[key]

        base, _, _ = rec.replay(rec.orig["shortlist"])
        base_picks = [harness_pick(base, b) for b in budgets]
        rules = {}
        for rname, k, orders in RULES:
            ch, used, new = rec.replay(rule_shortlist(rec.orig["shortlist"], k, orders))
            changed = []
            for f, b, i0 in zip(fa.BUDGET_FRACTIONS, budgets, base_picks, strict=True):
                i = harness_pick(ch, b)
                if _key(ch.cands[i]) != _key(base.cands[i0]):
                    (s1, c1), s0 = test_score(ch, i), test_score(base, i0)[0]
                    changed.append({"fraction": f, "test_diff": s1 - s0, "test_cost_share": c1 / full,
                                    "family": ch.cands[i].family, "default_family": base.cands[i0].family})
            rules[rname] = {"fits": used, "new_fits": new, "configs": sum(c.folds > 0 for c in ch.cands),
                            "fold_seconds": sum(rec.fits[key][2] for key in rec.used),
                            "changed": changed}
    row = {"pair": f"{name}/{scheme}", "seed": seed, "cpu": cpu, "plain_cpu": None, "shortlist": n_short,
           "cross_validated": n_cv, "fits": len(default_fits),
           "fold_seconds": sum(rec.fits[key][2] for key in default_fits), "rules": rules,
           "base_replay_same": [_key(base.cands[i]) for i in base_picks] == [
               _key(rec.first.cands[harness_pick(rec.first, b)]) for b in budgets]}
    t0 = time.process_time()
    lgb.train(ctx.lgb_params(), lgb.Dataset(ctx.X_train, ctx.y_train, params={"verbose": -1, "max_bin": 255}),
              ctx.rounds)
    row["plain_cpu"] = time.process_time() - t0
    return row


def cells(rows: list[dict[str, Any]], rname: str) -> dict[str, dict[str, float]]:
    """Per (pair, budget fraction) cell: the rule's test score minus the default's, mean and paired SE over seeds."""
    out = {}
    for pair in dict.fromkeys(r["pair"] for r in rows):
        mine = [r for r in rows if r["pair"] == pair]
        for f in fa.BUDGET_FRACTIONS:
            d = np.array([sum(c["test_diff"] for c in r["rules"][rname]["changed"] if c["fraction"] == f)
                          for r in mine])
            se = float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 else 0.0
            out[f"{pair} {f:g}"] = {"mean": float(d.mean()), "se": se}
    return out


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per rule over every row: fits and fold seconds saved, picks changed, test differences (cells: pair x budget)."""
    out: dict[str, Any] = {}
    fits = sum(r["fits"] for r in rows)
    secs = sum(r["fold_seconds"] for r in rows)
    picks = len(rows) * len(fa.BUDGET_FRACTIONS)
    for rname, _, _ in RULES:
        rs = [r["rules"][rname] for r in rows]
        diffs = [c["test_diff"] for r in rs for c in r["changed"]]
        per_cell = cells(rows, rname)
        below = sorted(k for k, v in per_cell.items() if v["mean"] < -v["se"] - 1e-12)
        out[rname] = {"fits_saved": 1.0 - sum(r["fits"] for r in rs) / fits,
                      "fold_seconds_saved": 1.0 - sum(r["fold_seconds"] for r in rs) / secs,
                      "new_fits": sum(r["new_fits"] for r in rs), "picks": picks, "changed": len(diffs),
                      "changed_lower": sum(d < 0 for d in diffs),
                      "changed_mean_diff": float(np.mean(diffs)) if diffs else 0.0,
                      "mean_diff": float(np.sum(diffs)) / picks,
                      "worst": float(min(diffs)) if diffs else 0.0,
                      "cells_below": below, "worst_cell": min(per_cell.items(), key=lambda kv: kv[1]["mean"])}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__.splitlines()[0], result_name="cv_shortlist",
                           quick={"pairs": "heart/real", "seeds": 1})
    parser.add_argument("--pairs", default=",".join(f"{n}/{s}" for n, s in PAIRS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--merge", default=None, help="comma-separated results files: their rows summarized together")
    args = parse(parser, argv)
    rows: list[dict[str, Any]] = []
    if args.merge:
        rows = [r for f in args.merge.split(",") for r in json.loads(Path(f).read_text())["rows"]]
        write_results(args.out, {"rows": rows, "summary": summarize(rows)}, "lightgbm")
    for seed in [] if args.merge else range(args.first_seed, args.first_seed + args.seeds):
        for pair in args.pairs.split(","):
            name, scheme = pair.split("/")
            rows.append(one(args.data_dir, name, scheme, seed))
            r = rows[-1]
            print(f"{pair} seed {seed}: {r['cross_validated']} cross-validated ({r['shortlist']} shortlisted), cpu "
                  + ", ".join(f"{k} {v:.1f}" for k, v in r["cpu"].items()) + f"; plain {r['plain_cpu']:.2f}; "
                  + "; ".join(f"{k} fits {v['fits']} changed {len(v['changed'])}" for k, v in r["rules"].items()),
                  flush=True)
            write_results(args.out, {"rows": rows, "summary": summarize(rows)}, "lightgbm")
    for rname, v in summarize(rows).items():
        print(f"{rname}: fits saved {v['fits_saved']:.0%}, fold seconds saved {v['fold_seconds_saved']:.0%}, "
              f"changed {v['changed']} / {v['picks']}, mean diff of changed {v['changed_mean_diff']:+.4f}, "
              f"worst {v['worst']:+.4f}, mean over picks {v['mean_diff']:+.5f}, cells below {v['cells_below']}, "
              f"worst cell {v['worst_cell']}, new fits {v['new_fits']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
