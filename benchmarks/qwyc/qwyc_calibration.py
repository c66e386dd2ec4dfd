"""QWYC held-out calibration: trees evaluated and test disagreement of candidate calibrations.

Usage: python -m benchmarks.qwyc.qwyc_calibration --data-dir DATA [--datasets adult magic higgs]
       [--seeds 0 1 2] [--alphas 0.005] [--candidates holdout0.5 ...]
       [--out benchmarks/results/qwyc_calibration.json] [--quick]

Every candidate fits a greedy QWYC plan (the paper's Algorithm 1, base budget ``alpha_fit``)
and one conformal shift ``lambda`` of all its thresholds (constant shape) on unlabeled
calibration rows, and is measured on test rows that neither the model nor the plan saw:
mean trees evaluated per row and disagreement with the full model's label.

* ``holdoutH``: the order and base thresholds on a share ``1 - H`` of the calibration rows,
  ``lambda`` on the other share ``H`` (split as ``QWYC(holdout=H, random_state=seed)``).
  ``holdoutH_fitA``: the same with ``alpha_fit = A * alpha``.
* ``crossfitK``: K folds; each fold's rows are scored (their critical shifts) by the plan fit
  on the other K - 1 folds, ``lambda`` is the conformal shift of the pooled out-of-fold
  critical shifts, and the final plan is fit on all calibration rows and shifted by ``lambda``
  (no row chooses ``lambda`` for a plan it fit, but the final plan is not the one scored).
  ``crossfitK_fitA``: the same with ``alpha_fit = A * alpha``. ``crossfit5_fit0.75`` is
  ``QWYC``'s default (``holdout="crossfit"``, ``n_folds=5``, base budget ``0.75 * alpha``: the
  same folds and plans for the same seed); ``crossfit5`` spends all of ``alpha`` in the base plans.
* ``insample``: everything on all rows, no shift (the paper's setting, ``holdout=None``).

Data (``--data-dir``, loaders of ``benchmarks/train_to_budget/_data.py``):

* ``adult``: the published split; the model (500 trees of depth 5, learning rate 0.05) is
  trained on ``adult.data``, the plan fit on the same 32,561 training rows, measured on the
  16,281 rows of ``adult.test``; the seed draws the calibration split / folds.
* ``magic``, ``higgs``: all rows pooled, split 50% train / 25% calibration / 25% test by seed
  (stratified); 400 trees, 31 leaves, learning rate 0.05, trained on the train rows.

Prints one line per run and a table of the means over seeds (per dataset and alpha), and writes
every run to the JSON results. ``--quick``: Adult, seed 0, candidates ``holdout0.5`` and
``insample``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.qwyc.qwyc import CATS, load_adult
from benchmarks.train_to_budget._data import LOADERS, split
from budget_extras.qwyc import _kernels as core
from budget_extras.qwyc._estimator import QWYC

CANDIDATES = ("holdout0.5", "holdout0.3", "holdout0.2", "holdout0.5_fit0.5", "holdout0.3_fit0.5", "crossfit2",
              "crossfit5", "crossfit5_fit0.5", "crossfit5_fit0.75", "insample")


def _data(name: str, data_dir: Path, seed: int) -> tuple[Any, np.ndarray, np.ndarray]:
    """Model, calibration rows and test rows of one dataset and seed."""
    if name == "adult":
        Xtr, ytr, Xte, _, names = load_adult(str(data_dir))
        params = dict(objective="binary", learning_rate=0.05, max_depth=5, num_leaves=32, verbose=-1,
                      num_threads=1, seed=0)
        ds = lgb.Dataset(Xtr, ytr, feature_name=names, categorical_feature=[names.index(c) for c in CATS])
        return lgb.train(params, ds, 500), Xtr, Xte
    sp = split(LOADERS[name](data_dir), seed, cap=10**9)
    params = dict(objective="binary", num_leaves=31, learning_rate=0.05, verbose=-1, num_threads=1, seed=seed)
    return lgb.train(params, lgb.Dataset(sp.X_train, sp.y_train), 400), sp.X_valid, sp.X_test


def _plan(F: np.ndarray, alpha_fit: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return core.greedy_plan(F, alpha=alpha_fit, costs=np.ones(F.shape[1]))


def _crit(F: np.ndarray, plan: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """Critical shift of each row of ``F`` under ``plan`` (constant shape)."""
    order, en, ep = plan
    C = np.cumsum(F[:, order], axis=1)
    c, positive = core.critical_values(C, en, ep, np.ones(order.size))
    return core.envelope_critical(c, positive != (C[:, -1] > 0)[:, None])


def _shifted(plan: tuple[np.ndarray, np.ndarray, np.ndarray], lam: float) -> tuple[np.ndarray, ...]:
    order, en, ep = plan
    return (order, *core.shift_thresholds(en, ep, lam, np.ones(order.size)))


def _settled(F: np.ndarray, plan: tuple[np.ndarray, ...], lam: float, crit: np.ndarray) -> float:
    """``lam`` moved onto the predictor's floating-point thresholds for the rows ``F`` of ``plan``."""
    if not math.isfinite(lam):
        return lam
    y = np.cumsum(F[:, plan[0]], axis=1)[:, -1] > 0

    def labels_at(m: float) -> np.ndarray:
        order, en, ep = _shifted(plan, m)  # type: ignore[arg-type]
        return core.early_exit(F, order, en, ep).labels

    return core.settle_lambda(lam, crit <= lam, y, labels_at)


def candidate(kind: str, F: np.ndarray, alpha: float, seed: int, full_plans: dict[float, Any]) -> dict[str, Any]:
    """Fit one calibration ``kind`` on calibration outputs ``F``; the shifted plan and held-out facts.

    ``full_plans``: cache of the plans fit on all rows, by base budget.
    """
    n = F.shape[0]
    rng = np.random.default_rng(seed)
    kind, _, fit = kind.partition("_fit")
    alpha_fit = alpha * (float(fit) if fit else 1.0)
    if kind.startswith(("insample", "crossfit")) and alpha_fit not in full_plans:
        full_plans[alpha_fit] = _plan(F, alpha_fit)
    if kind == "insample":
        return {"plan": full_plans[alpha_fit], "lambda": 0.0, "n_lambda_rows": 0, "oof_disagreement": math.nan}
    if kind.startswith("holdout"):
        perm = rng.permutation(n)
        n_b = round(float(kind[len("holdout"):]) * n)
        a, b = np.sort(perm[n_b:]), np.sort(perm[:n_b])
        base = _plan(F[a], alpha_fit)
        crit = _crit(F[b], base)
        lam = _settled(F[b], base, core.conformal_lambda(crit, alpha), crit)
        return {"plan": _shifted(base, lam), "lambda": lam, "n_lambda_rows": int(n_b),
                "oof_disagreement": float(np.mean(crit > lam))}
    k = int(kind[len("crossfit"):])
    fold = rng.permutation(n) % k
    crits, lams = np.empty(n), []
    plans = []
    for j in range(k):
        plans.append(_plan(F[fold != j], alpha_fit))
        crits[fold == j] = _crit(F[fold == j], plans[-1])
    lam = core.conformal_lambda(crits, alpha)
    for j in range(k):  # the largest of the per-fold floating-point settlements
        lams.append(_settled(F[fold == j], plans[j], lam, crits[fold == j]))
    lam = max(lams)
    return {"plan": _shifted(full_plans[alpha_fit], lam), "lambda": lam, "n_lambda_rows": n,
            "oof_disagreement": float(np.mean(crits > lam))}


def run(name: str, data_dir: Path, seed: int, alphas: list[float], kinds: list[str]) -> list[dict[str, Any]]:
    booster, Xc, Xt = _data(name, data_dir, seed)
    probe = QWYC(booster)
    probe._load(booster)  # per-iteration outputs through the estimator's one path
    F, FT = probe._outputs(Xc)[:, :, 0], probe._outputs(Xt)[:, :, 0]
    full_t = FT.sum(axis=1) > 0
    rows = []
    for alpha in alphas:
        full_plans: dict[float, Any] = {}
        for kind in kinds:
            t0 = time.perf_counter()
            c = candidate(kind, F, alpha, seed, full_plans)
            secs = time.perf_counter() - t0
            tr = core.early_exit(FT, *c["plan"])
            row = {"dataset": name, "seed": seed, "alpha": alpha, "candidate": kind,
                   "mean_trees": float(tr.n_evaluated.mean()),
                   "test_disagreement": float(np.mean(tr.labels != full_t)),
                   "lambda": c["lambda"], "n_lambda_rows": c["n_lambda_rows"],
                   "lambda_rows_disagreement": c["oof_disagreement"],
                   "n_calibration": int(F.shape[0]), "n_test": int(FT.shape[0]), "fit_seconds": secs}
            rows.append(row)
            print(f"{name} seed {seed} alpha {alpha:g} {kind:>18}: {row['mean_trees']:6.1f} trees, "
                  f"test {row['test_disagreement']:.3%}, lambda {row['lambda']:.4g}, {secs:.0f} s", flush=True)
    return rows


def table(rows: list[dict[str, Any]], kinds: list[str]) -> str:
    """Markdown table: per dataset and alpha, mean trees / mean test disagreement over seeds, per candidate."""
    out = ["| data | alpha | seeds | " + " | ".join(kinds) + " |", "|---|---|---|" + "---|" * len(kinds)]
    keys = sorted({(r["dataset"], r["alpha"]) for r in rows}, key=lambda t: (t[0], t[1]))
    for ds, alpha in keys:
        cells, seeds = [], set()
        for k in kinds:
            sel = [r for r in rows if r["dataset"] == ds and r["alpha"] == alpha and r["candidate"] == k]
            seeds |= {r["seed"] for r in sel}
            cells.append(f"{np.mean([r['mean_trees'] for r in sel]):.1f} / "
                         f"{np.mean([r['test_disagreement'] for r in sel]):.2%}" if sel else "")
        out.append(f"| {ds} | {alpha:g} | {len(seeds)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = script_parser(__doc__, result_name="qwyc_calibration",
                       quick={"datasets": ["adult"], "seeds": [0], "candidates": ["holdout0.5", "insample"]})
    ap.add_argument("--datasets", nargs="+", default=["adult", "magic", "higgs"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.005])
    ap.add_argument("--candidates", nargs="+", default=list(CANDIDATES))
    args = parse(ap, argv)
    rows: list[dict[str, Any]] = []
    for name in args.datasets:
        for seed in args.seeds:
            rows += run(name, args.data_dir, seed, args.alphas, args.candidates)
    print("\nmean trees / mean test disagreement over seeds\n")
    print(table(rows, args.candidates))
    write_results(args.out, {"rows": rows}, "numpy", "lightgbm")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
