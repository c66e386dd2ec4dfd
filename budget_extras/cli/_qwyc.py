"""``budget-extras qwyc``: write a QWYC early-exit plan into a LightGBM model file.

Example: ``budget-extras qwyc --model model.txt --calib calib.csv --alpha 0.005 -o fast_model.txt``
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

__all__ = ["register", "run"]


def _read_calib(path: str, feature_names: list[str]) -> np.ndarray:
    import pandas as pd

    df = pd.read_csv(path)
    if set(feature_names) <= set(df.columns):
        df = df[feature_names]
    elif df.shape[1] != len(feature_names):
        raise ValueError(
            f"The calibration file {path!r} must have the model's {len(feature_names)} feature "
            f"columns (by name, or exactly that many columns). Got {df.shape[1]} columns."
        )
    for c in df.columns:
        if not np.issubdtype(df[c].dtype, np.number):
            df[c] = pd.to_numeric(df[c], errors="coerce")
    return df.to_numpy(dtype=np.float64)


def register(subparsers: Any) -> None:
    """Add the ``qwyc`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "qwyc",
        help="optimize evaluation order and early-exit thresholds (QWYC)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", required=True, help="LightGBM model text file (binary or multiclass)")
    p.add_argument(
        "--calib", required=True, help="CSV of unlabeled calibration rows (header row of feature names)"
    )
    p.add_argument("--alpha", type=float, default=0.005, help="target disagreement with the full ensemble")
    p.add_argument(
        "--order", default="greedy", choices=["greedy", "training", "random", "individual_mse", "greedy_mse"]
    )
    p.add_argument("--mode", default="two_sided", choices=["two_sided", "negative_only"])
    p.add_argument(
        "--holdout",
        type=float,
        default=0.5,
        help="fraction of calibration rows for the held-out threshold correction (0 = in-sample)",
    )
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
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--output", required=True, help="output model file (loads in upstream LightGBM)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Fit QWYC and write the model file; prints a one-line summary."""
    from ..core._validation import check_booster, check_model_text
    from ..qwyc._estimator import QWYC

    check_model_text(args.model, parse=True)  # a broken file: one-line error before LightGBM loads it
    booster = check_booster(args.model)
    X = _read_calib(args.calib, list(booster.feature_name()))
    q = QWYC(
        args.model,
        alpha=args.alpha,
        order=args.order,
        mode=args.mode,
        holdout=args.holdout or None,
        random_state=args.seed,
        shift=args.shift,
        margin=args.margin,
        alpha_fit=args.alpha_fit,
    ).fit(X)
    q.save_model(args.output)
    n_trees = q.ensemble_.n_trees
    print(
        f"QWYC: {q.mean_trees_evaluated_:.2f} of {n_trees} trees on average on the calibration rows, "
        f"calibration disagreement {q.calibration_disagreement_:.4%} (alpha {args.alpha}); "
        f"wrote {args.output}"
    )
    return 0
