"""``budget-extras prune``: BudgetPrune from the command line (a thin shell over :class:`BudgetPrune`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np
import pandas as pd

from ..budgetprune._estimator import BudgetPrune
from ..core._costs import FeatureCosts

__all__ = ["register", "run"]


def _features(table: pd.DataFrame, names: list[str], label: str) -> pd.DataFrame:
    if all(n in table.columns for n in names):
        return table[names]
    rest = table.drop(columns=[label], errors="ignore")
    if rest.shape[1] != len(names):
        raise ValueError(
            f"The data has {rest.shape[1]} feature columns but the model has {len(names)} features "
            "and the column names do not match the model's feature names."
        )
    return rest


def register(subparsers: Any) -> None:
    """Add the ``prune`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "prune",
        help="prune a LightGBM forest to a feature-cost budget (BudgetPrune)",
        description="Prune a LightGBM random forest (or GBDT) with BudgetPrune (Nan, Wang, Saligrama 2016).",
    )
    p.add_argument("--model", required=True, help="LightGBM model file")
    p.add_argument("--train", required=True, help="training CSV with a label column")
    p.add_argument("--valid", required=True, help="validation CSV (features; a label column is ignored)")
    p.add_argument("--costs", default=None, help="costs CSV read by FeatureCosts.from_csv (default: uniform)")
    p.add_argument("--label", default="label", help="name of the label column (default: label)")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--lambda", dest="lam", type=float, help="error/cost trade-off")
    target.add_argument("--budget", type=float, help="average validation cost to meet")
    p.add_argument("--error-source", choices=("train", "inbag", "oob"), default="train")
    p.add_argument("--eval-cost", action="store_true", help="count split evaluation costs too")
    p.add_argument("--gap-tol", type=float, default=1e-4)
    p.add_argument("--max-iter", type=int, default=500)
    p.add_argument("--json", default=None, help="write the solver result summary here")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.add_argument("-o", "--output", required=True, help="pruned model file to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``prune`` with parsed arguments; returns the exit status."""
    import lightgbm as lgb

    from ..core._validation import check_model_text

    check_model_text(args.model, parse=True)  # a broken file: one-line error before LightGBM loads it
    booster = lgb.Booster(model_file=args.model)
    names = list(booster.feature_name())
    train = pd.read_csv(args.train)
    if args.label not in train.columns:
        print(f"error: the training file has no label column {args.label!r}.", file=sys.stderr)
        return 2
    valid = pd.read_csv(args.valid)
    X_train = _features(train, names, args.label).to_numpy(dtype=np.float64)
    X_valid = _features(valid, names, args.label).to_numpy(dtype=np.float64)
    costs = FeatureCosts.from_csv(args.costs, feature_names=names) if args.costs else None
    est = BudgetPrune(
        booster,
        costs=costs,
        lam=args.lam,
        budget=args.budget,
        error_source=args.error_source,
        eval_cost=args.eval_cost,
        gap_tol=args.gap_tol,
        max_iter=args.max_iter,
        progress=False if args.quiet else None,
    ).fit(X_train, train[args.label].to_numpy(), X_valid=X_valid)
    with open(args.output, "w") as fh:
        fh.write(est.model_string_)
    r = est.result_
    summary = {
        "lambda": r.lam,
        "status": r.status,
        "message": r.message,
        "objective": r.objective,
        "dual_bound": r.dual_bound,
        "rel_gap": r.rel_gap,
        "iterations": r.iterations,
        "error_term": r.error_term,
        "average_cost": r.acquisition_term + r.evaluation_term,
        "collapsed_nodes": int(r.collapsed.size),
    }
    print(
        f"lambda={r.lam:.6g} status={r.status} ({r.message}) average cost={summary['average_cost']:.6g} "
        f"error term={r.error_term:.6g} collapsed nodes={r.collapsed.size} -> {args.output}"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(summary, fh, indent=2)
    return 0
