r"""``budget-extras adapt``: fit Adapt-GBRT in front of a LightGBM model file from the command line.

Example::

    budget-extras adapt --train train.csv --label y --f0 big.txt --p-full 0.3 --output a.json
    budget-extras adapt --train train.csv --valid valid.csv --label y --f0 big.txt --budget 5 \
        --costs costs.csv --output a.json
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``adapt`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "adapt",
        help="fit a cheap gate and cheap model (Adapt-GBRT) in front of an expensive LightGBM model",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--train", required=True, help="training CSV with a header row")
    p.add_argument("--valid", help="validation CSV (required with --budget)")
    p.add_argument("--label", required=True, help="name of the label column (two or more classes)")
    p.add_argument("--f0", required=True, help="LightGBM model file of the expensive model (binary or multiclass)")
    p.add_argument(
        "--costs", help="costs CSV (FeatureCosts.from_csv: feature, cost[, group, ...]; default 1 each)"
    )
    p.add_argument("--p-full", type=float, default=0.5, help="fraction routed to f0 (default 0.5)")
    p.add_argument("--gamma", type=float, default=0.01, help="feature-cost penalty (default 0.01)")
    p.add_argument("--budget", type=float, help="target mean cost per row: sweep (p_full, gamma)")
    p.add_argument("--n-trees", type=int, default=100)
    p.add_argument("--max-em-iter", type=int, default=10)
    p.add_argument("--output", required=True, help="where to write the fitted model (JSON)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the process exit status."""
    import lightgbm as lgb

    from ..adapt._estimator import AdaptGBRT
    from ..core._costs import FeatureCosts
    from ..core._validation import check_model_text

    train = pd.read_csv(args.train)
    if args.label not in train.columns:
        raise ValueError(f"The label column '{args.label}' is not in '{args.train}'.")
    y = train.pop(args.label).to_numpy()
    names = [str(c) for c in train.columns]
    costs = (
        FeatureCosts.from_csv(args.costs, feature_names=names)
        if args.costs is not None
        else FeatureCosts.uniform(len(names), feature_names=names)
    )
    check_model_text(args.f0, parse=True)  # a broken file: one-line error before LightGBM loads it
    f0 = lgb.Booster(model_file=args.f0)
    kw: dict[str, Any] = {}
    if args.valid is not None:
        valid = pd.read_csv(args.valid)
        kw = {"y_valid": valid.pop(args.label).to_numpy(), "X_valid": valid[names].to_numpy(np.float64)}
    model = AdaptGBRT(
        f0,
        costs=costs,
        p_full=args.p_full,
        gamma=args.gamma,
        budget=args.budget,
        n_trees=args.n_trees,
        max_em_iter=args.max_em_iter,
        progress=not args.quiet,
    )
    model.fit(train.to_numpy(np.float64), y, **kw)
    model.save(args.output)
    summary: dict[str, Any] = {
        "p_full": model.p_full_,
        "gamma": model.gamma_,
        "status": model.train_result_.status,
        "message": model.train_result_.message,
        "em_iterations": model.train_result_.nit,
    }
    if "X_valid" in kw:
        summary["valid"] = model.evaluate(kw["X_valid"], kw["y_valid"])
    if model.sweep_result_ is not None:
        summary["sweep_status"] = model.sweep_result_.status
        summary["sweep_message"] = model.sweep_result_.message
        summary["frontier"] = model.sweep_result_.frontier[["p_full", "gamma", "accuracy", "cost"]].to_dict(
            orient="records"
        )
    print(json.dumps(summary, indent=1))
    return 0
