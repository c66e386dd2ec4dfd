"""Development run: choose the shape of QWYC's held-out shift without touching adult.test.

Usage: python -m benchmarks.qwyc.qwyc_shape --data-dir DATA [--out benchmarks/results/qwyc_shape.json] [--quick]

Same model as benchmarks/qwyc/qwyc.py (UCI Adult, 500 trees of depth 5). The order and base
thresholds are fit on the same 15,000 training rows; the other 17,561 training rows are
the development set: the conformal shift is fit on one half and measured on the other
(and vice versa). For each shift shape, margin and base budget ``alpha_fit`` the run
reports mean positions evaluated and development disagreement with the full ensemble at
target alphas. Only training rows are used, so picking the default shape here does not
select on the test file. ``--quick``: one margin, base budget and target alpha.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import lightgbm as lgb
import numpy as np

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.qwyc.qwyc import CATS, load_adult
from budget_extras.qwyc import _kernels as core
from budget_extras.qwyc._baselines import pred_early_stop_plan
from budget_extras.qwyc._estimator import QWYC

SHAPES = ("constant", "residual_std", "active_residual_std", "extreme_spacing10", "extreme_spacing30",
          "extreme_spacing100")


def shape_of(kind: str, FA: np.ndarray, order: np.ndarray, en: np.ndarray, ep: np.ndarray) -> np.ndarray:
    if kind == "constant":
        return np.ones(order.size)
    if kind == "residual_std":
        return core.residual_scale(FA, order)
    if kind.startswith("extreme_spacing"):
        return core.extreme_spacing(FA, order, en, ep, k=int(kind.removeprefix("extreme_spacing")))
    return core.active_residual_scale(FA, order, en, ep)


def main(argv: list[str] | None = None) -> int:
    ap = script_parser(__doc__, result_name="qwyc_shape",
                       quick={"margins": [0.0], "alpha_fits": [0.0], "alphas": [0.005]})
    ap.add_argument("--margins", type=float, nargs="+", default=[0.0, 0.1])
    ap.add_argument("--alpha-fits", type=float, nargs="+", default=[0.0, 0.005])
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.001, 0.005])
    args = parse(ap, argv)

    Xtr, ytr, _, _, names = load_adult(args.data_dir)
    params = dict(
        objective="binary", learning_rate=0.05, max_depth=5, num_leaves=32, verbose=-1, num_threads=1, seed=0
    )
    booster = lgb.train(
        params,
        lgb.Dataset(Xtr, ytr, feature_name=names, categorical_feature=[names.index(c) for c in CATS]),
        num_boost_round=500,
    )
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(Xtr))  # same first draw as benchmarks/qwyc/qwyc.py: the order rows
    idx_a, idx_dev = perm[:15000], perm[15000:]
    helper = QWYC.from_plan(booster, pred_early_stop_plan(500, freq=1, margin=0.0))
    F = helper._outputs(Xtr)[:, :, 0]
    FA, FD = F[idx_a], F[idx_dev]
    half = len(idx_dev) // 2
    dev_folds = [np.arange(half), np.arange(half, len(idx_dev))]
    fullD = FD.sum(axis=1) > 0
    rows: list[dict[str, Any]] = []
    for margin, alpha_fit in itertools.product(args.margins, args.alpha_fits):
        t0 = time.perf_counter()
        order, en, ep = core.greedy_plan(FA, alpha=alpha_fit, costs=np.ones(500), margin=margin)
        fit_s = time.perf_counter() - t0
        for kind in SHAPES:
            sc = shape_of(kind, FA, order, en, ep)
            for alpha in args.alphas:
                ev = np.zeros(len(idx_dev))
                lab = np.zeros(len(idx_dev), bool)
                for i, fold in enumerate(dev_folds):
                    lam = core.widen_conformal(FD[dev_folds[1 - i]], order, en, ep, sc, alpha=alpha)
                    tr = core.early_exit(FD[fold], order, *core.shift_thresholds(en, ep, lam, sc))
                    ev[fold], lab[fold] = tr.n_evaluated, tr.labels
                row = dict(
                    margin=margin,
                    alpha_fit=alpha_fit,
                    shape=kind,
                    alpha=alpha,
                    mean_trees=float(ev.mean()),
                    dev_disagreement=float(np.mean(lab != fullD)),
                    greedy_seconds=fit_s,
                )
                rows.append(row)
                print(
                    f"margin {margin:4.2f} alpha_fit {alpha_fit:6.4f} {kind:20s} alpha {alpha:6.4f} "
                    f"trees {row['mean_trees']:7.2f} dev dis {row['dev_disagreement']:.4%}",
                    flush=True,
                )
    summary = {}
    for alpha in args.alphas:
        for kind in SHAPES:
            sel = [r for r in rows if r["shape"] == kind and r["alpha"] == alpha]
            best = min(sel, key=lambda r: r["mean_trees"])
            summary[f"{kind} alpha={alpha}"] = {
                "best_mean_trees": best["mean_trees"],
                "at": {k: best[k] for k in ("margin", "alpha_fit", "dev_disagreement")},
                "median_mean_trees": float(np.median([r["mean_trees"] for r in sel])),
            }
    print(json.dumps(summary, indent=1))
    write_results(args.out, {"rows": rows, "summary": summary, "lightgbm": lgb.__version__}, "lightgbm", "numpy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
