"""``budget-extras prune``: BudgetPrune from the command line (a thin shell over :class:`BudgetPrune`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..budgetprune._estimator import BudgetPrune
from ._args import add_costs, add_label, add_model, add_output, add_quiet, add_scoring, add_train, add_valid
from ._io import AtomicOutputs, check_paths, load_booster, model_categories, read_costs, read_rows

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``prune`` subcommand to an ``argparse`` subparsers object.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.
    """
    p = subparsers.add_parser(
        "prune",
        help="prune a LightGBM forest to a feature-cost budget (BudgetPrune)",
        description="Prune a LightGBM random forest (or GBDT) with BudgetPrune (Nan, Wang, Saligrama 2016).",
    )
    add_model(p)
    add_train(p)
    add_valid(p, required=True, note="features; its label column, if any, scores the budget search")
    add_costs(p)
    add_label(p, required=False, default="label")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--lambda", dest="lam", type=float, help="error/cost trade-off")
    target.add_argument("--budget", type=float, help="average validation cost to meet")
    p.add_argument("--error-source", choices=("train", "inbag", "oob"), default="train")
    p.add_argument("--eval-cost", action="store_true", help="count split evaluation costs too")
    p.add_argument("--gap-tol", type=float, default=1e-4)
    p.add_argument("--max-iter", type=int, default=500)
    add_scoring(p, default="accuracy for classifiers, r2 otherwise")
    p.add_argument(
        "--min-score",
        default="auto",
        help="floor on the validation score: a number, 'auto' (halfway from a constant model to the "
        "unpruned one) or 'none'",
    )
    p.add_argument("--json", default=None, help="write the solver result summary here")
    add_quiet(p, short=True)
    add_output(p, "pruned model file to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``prune`` with parsed arguments; returns the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    """
    check_paths(
        {"--model": args.model, "--train": args.train, "--valid": args.valid, "--costs": args.costs},
        {"-o/--output": args.output, "--json": args.json},
    )
    booster = load_booster(args.model, "--model")
    names = list(booster.feature_name())
    cats = model_categories(booster)
    X_train, y_train = read_rows(args.train, "--train", names, label=args.label, label_required=True, categories=cats)
    X_valid, y_valid = read_rows(args.valid, "--valid", names, label=args.label, categories=cats)
    costs = read_costs(args.costs, names) if args.costs else None
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
        scoring=args.scoring,
        min_score=None if str(args.min_score).lower() == "none" else (
            "auto" if args.min_score == "auto" else float(args.min_score)
        ),
    )
    est.fit(X_train, y_train, X_valid=X_valid, y_valid=y_valid)  # _main reports errors
    r = est.result_
    summary = {
        "lambda": r.lam,
        "status": int(r.status),
        "success": r.success,
        "message": r.message,
        "fun": r.fun,
        "dual_bound": r.dual_bound,
        "rel_gap": r.rel_gap,
        "nit": r.nit,
        "error_term": r.error_term,
        "average_cost": r.cost,
        "collapsed_nodes": int(r.collapsed.size),
    }
    with AtomicOutputs() as out:
        with open(out.path(args.output), "w", encoding="utf-8") as fh:
            fh.write(est.model_string_)
        if args.json:
            with open(out.path(args.json), "w", encoding="utf-8") as fh:
                json.dump(summary, fh, indent=2)
    print(
        f"lambda={r.lam:.6g} status={int(r.status)} {r.status.name} ({r.message}) "
        f"average cost={summary['average_cost']:.6g} "
        f"error term={r.error_term:.6g} collapsed nodes={r.collapsed.size} -> {args.output}"
    )
    return 0
