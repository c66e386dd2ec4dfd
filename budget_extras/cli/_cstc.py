"""``budget-extras cstc``: train a Cost-Sensitive Tree of Classifiers and report its cost."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core._costs import FeatureCosts
from ..cstc._estimator import CSTC
from ._args import add_costs, add_label, add_model, add_seed, add_test, add_train, add_valid
from ._io import AtomicOutputs, check_paths, read_csv, read_ensemble

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``cstc`` subcommand."""
    p = subparsers.add_parser(
        "cstc",
        help="train CSTC (cost-sensitive tree of classifiers) and report accuracy and per-row cost",
        description=(
            "Train a CSTC tree (Xu et al., ICML 2013) on the outputs of a LightGBM ensemble (trained "
            "here with squared loss, or read with --model), then report the test metric and the exact "
            "per-row prediction cost: each row pays the features and trees used on its own path."
        ),
    )
    add_train(p)
    add_label(p)
    add_valid(p, note="pruning, fine-tuning checks")
    add_test(p, note="default: the training CSV")
    add_costs(p)
    add_model(p, required=False, note="its trees' outputs are phi; default: trained here")
    p.add_argument("--task", choices=("regression", "binary"), default="regression")
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--lam", type=float, default=0.01, help="weight of the expected cost")
    p.add_argument("--rho", type=float, default=1e-3, help="weight of the l1 regularization")
    p.add_argument("--n-weak", type=int, default=100, help="trees of the feature map (without --model)")
    p.add_argument("--weak-max-depth", type=int, default=1, help="their depth (without --model; default stumps)")
    add_seed(p)
    p.add_argument("--predictions", type=Path, default=None, metavar="CSV",
                   help="write per-row prediction, leaf and costs of the report data")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def _read(
    path: str | Path, label: str, columns: list[str] | None, option: str = "CSV"
) -> tuple[pd.DataFrame, np.ndarray]:
    df = read_csv(path, option)
    if label not in df.columns:
        raise ValueError(
            f"CSV {str(path)!r} has no label column {label!r} (it has {list(df.columns)[:6]!r}...)"
        )
    y = df.pop(label).to_numpy()
    cols = columns if columns is not None else list(df.columns)
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"CSV {str(path)!r} lacks feature columns {missing[:6]!r}")
    X = df[cols]
    text = [c for c in cols if not pd.api.types.is_numeric_dtype(X[c])]
    if text:
        raise ValueError(f"CSV {str(path)!r} has non-numeric feature columns {text[:6]!r}")
    return X.astype(np.float64), y


def result_dict(model: CSTC, X: pd.DataFrame, y: np.ndarray) -> dict[str, Any]:
    """JSON-ready summary of a fitted CSTC on data ``(X, y)``: metric, tree and cost."""
    rep = model.cost_report(X)
    pred = model.predict(X)
    metric = (
        {"mse": float(np.mean((pred - y.astype(np.float64)) ** 2))}
        if model.task == "regression"
        else {"accuracy": float(np.mean(pred == y))}
    )
    leaf_ids, leaf_rows = np.unique(model.apply(X), return_counts=True)
    return {
        **metric,
        "cost": rep.summary(),
        "n_nodes": int(model.active_.sum()),
        "n_leaves": int(model.is_leaf_.sum()),
        "rows_per_leaf": {str(k): int(v) for k, v in zip(leaf_ids, leaf_rows, strict=True)},
        "optimization": {"status": model.result_.status, "message": model.result_.message,
                         "fun": model.result_.fun, "cycles": model.result_.nit,
                         "n_pruned": model.result_.n_pruned},
    }


def run(args: argparse.Namespace) -> int:
    """Execute ``cstc``."""
    check_paths(
        {"--train": args.train, "--valid": args.valid, "--test": args.test, "--costs": args.costs,
         "--model": args.model},
        {"--predictions": args.predictions},
    )
    booster = None
    columns = None
    if args.model is not None:
        booster = read_ensemble(args.model, "--model")
        columns = list(booster.feature_names)
    X, y = _read(args.train, args.label, columns, "--train")
    columns = list(X.columns)
    Xv = yv = None
    if args.valid is not None:
        Xv, yv = _read(args.valid, args.label, columns, "--valid")
    costs = (
        FeatureCosts.from_csv(args.costs, feature_names=columns)
        if args.costs is not None
        else FeatureCosts.uniform(len(columns), feature_names=columns)
    )
    model = CSTC(booster, costs=costs, depth=args.depth, lam=args.lam, rho=args.rho, task=args.task, n_weak=args.n_weak,
                 weak_max_depth=args.weak_max_depth, random_state=args.seed)
    model.fit(X, y, X_valid=Xv, y_valid=yv)
    Xr, yr = (X, y) if args.test is None else _read(args.test, args.label, columns, "--test")
    out = result_dict(model, Xr, yr)
    if args.predictions is not None:
        rep = model.cost_report(Xr)
        table = pd.DataFrame({"prediction": model.predict(Xr), "leaf": model.apply(Xr),
                      "acquisition_cost": rep.acquisition_cost, "eval_cost": rep.eval_cost,
                      "total_cost": rep.total_cost})
        with AtomicOutputs() as outputs:
            table.to_csv(outputs.path(args.predictions), index_label="row")
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        metric = "mse" if "mse" in out else "accuracy"
        c = out["cost"]
        print(f"{metric}: {out[metric]:.6g}   nodes: {out['n_nodes']} ({out['n_leaves']} leaves)")
        print(f"cost per row: mean {c['mean_total_cost']:.6g} (acquisition {c['mean_acquisition_cost']:.6g}, "
              f"evaluation {c['mean_eval_cost']:.6g}), p50 {c['p50_total_cost']:.6g}, "
              f"p90 {c['p90_total_cost']:.6g}, max {c['max_total_cost']:.6g}")
        print(f"trees evaluated per row: {c['mean_trees_evaluated']:.4g}   "
              f"rows per leaf: {out['rows_per_leaf']}")
    return 0
