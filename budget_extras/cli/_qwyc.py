"""``budget-extras qwyc``: write a QWYC early-exit plan into a LightGBM model file.

Example: ``budget-extras qwyc --model model.txt --calib calib.csv --alpha 0.005 -o fast_model.txt``
"""

from __future__ import annotations

import argparse
from typing import Any

from ._args import add_model, add_output, add_seed
from ._io import AtomicOutputs, check_paths, load_booster, model_categories, read_rows

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``qwyc`` subcommand to an argparse subparsers object.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.
    """
    p = subparsers.add_parser(
        "qwyc",
        help="optimize evaluation order and early-exit thresholds (QWYC)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_model(p, note="binary or multiclass")
    p.add_argument(
        "--calib",
        required=True,
        help="CSV of calibration rows with a header row naming every model feature (other columns, "
        "such as a label, are ignored)",
    )
    p.add_argument("--alpha", type=float, default=0.005, help="target disagreement with the full ensemble")
    p.add_argument(
        "--order", default="greedy", choices=["greedy", "training", "random", "individual_mse", "greedy_mse"]
    )
    p.add_argument("--mode", default="two_sided", choices=["two_sided", "negative_only"])
    p.add_argument(
        "--holdout",
        type=_holdout,
        default="crossfit",
        help="held-out threshold correction: 'crossfit' (cross-fitted over --folds folds, the default), "
        "or the fraction of calibration rows held out (0 = in-sample)",
    )
    p.add_argument("--folds", type=int, default=5, help="folds of --holdout crossfit (at least 2)")
    p.add_argument(
        "--shift",
        default="constant",
        choices=["constant", "residual_std", "active_residual_std", "extreme_spacing"],
        help="shape of the held-out threshold shift per position (see docs/qwyc_design.md)",
    )
    p.add_argument("--margin", type=float, default=0.0, help="robustness margin while fitting (raw-score units)")
    p.add_argument(
        "--alpha-fit", type=float, default=None, help="budget of the base thresholds on the order rows (default: alpha)"
    )
    p.add_argument(
        "--decision-threshold",
        type=float,
        default=0.0,
        help="binary raw-score threshold of the label (0 = probability 0.5; log(p/(1-p)) for probability p)",
    )
    p.add_argument(
        "--scores",
        default="auto",
        choices=["auto", "partial", "calibrated"],
        help="score of a row that exits early: partial raw score, or calibrated to the expected full score "
        "(stored in the model file; auto = the one ranking the calibration rows better, binary models)",
    )
    add_seed(p)
    add_output(p, "output model file (loads in upstream LightGBM)")
    p.set_defaults(func=run)


def _holdout(text: str) -> str | float:
    """``--holdout``: ``crossfit`` or a fraction of the calibration rows."""
    if text == "crossfit":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'crossfit' or a number in [0, 1), got {text!r}") from None


def run(args: argparse.Namespace) -> int:
    """Fit QWYC and write the model file; prints a one-line summary.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    """
    from ..qwyc._estimator import QWYC

    check_paths({"--model": args.model, "--calib": args.calib}, {"-o/--output": args.output})
    booster = load_booster(args.model, "--model")
    X, _ = read_rows(args.calib, "--calib", list(booster.feature_name()), categories=model_categories(booster))
    q = QWYC(
        booster,
        alpha=args.alpha,
        order=args.order,
        mode=args.mode,
        holdout=args.holdout or None,
        n_folds=args.folds,
        random_state=args.seed,
        shift=args.shift,
        margin=args.margin,
        alpha_fit=args.alpha_fit,
        decision_threshold=args.decision_threshold,
        scores=args.scores,
    ).fit(X)
    with AtomicOutputs() as out:
        q.save_model(out.path(args.output))
    n_trees = q.ensemble_.n_trees
    print(
        f"QWYC: {q.mean_trees_evaluated_:.2f} of {n_trees} trees on average on the calibration rows, "
        f"calibration disagreement {q.calibration_disagreement_:.4%} (alpha {args.alpha}); "
        f"wrote {args.output}"
    )
    return 0
