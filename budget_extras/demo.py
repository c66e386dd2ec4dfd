"""The main job: plain LightGBM vs CEGB on thyroid patients with real test costs.

Run ``python -m budget_extras.demo`` (``bash run.sh demo`` installs everything first).

On the UCI thyroid data embedded in this package, with P. Turney's per-test costs, it trains a
plain LightGBM model and cost-efficient (CEGB) models, and prints for each the test accuracy and
the average test cost actually paid per patient: the features on the patient's paths through
all trees, each paid once, with TT4, T4U and FTI bought together (FTI is computed from them).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["main", "run_demo"]


def _fit(lgb: Any, params: dict[str, Any], X: np.ndarray, y: np.ndarray, names: list[str], rounds: int) -> Any:
    base = {"objective": "multiclass", "num_class": 3, "num_leaves": 15, "learning_rate": 0.1,
            "min_data_in_leaf": 5, "verbose": -1, "seed": 1, "num_threads": 2}
    return lgb.train({**base, **params}, lgb.Dataset(X, y, feature_name=names), num_boost_round=rounds)


def run_demo(*, rounds: int = 150, tradeoffs: Sequence[float] = (0.001, 0.005, 0.02), out: Any = None) -> list[dict]:
    """Train the models and print the accuracy / cost table; return its rows.

    Parameters
    ----------
    rounds : int, default=150
        Boosting rounds of every model.
    tradeoffs : sequence of float
        ``cegb_tradeoff`` values of the CEGB models.
    out : file-like, optional
        Where to print (default: standard output).

    Returns
    -------
    list of dict
        One row per model: ``model``, ``accuracy``, ``mean_cost``, ``features_used``.
    """
    import lightgbm as lgb

    from .core._ensemble import TreeEnsemble
    from .core._report import cost_report
    from .datasets import load_thyroid

    out = out or sys.stdout
    data = load_thyroid()
    names = list(data.feature_names)
    costs = data.costs
    is_fork = "+cegb" in getattr(lgb, "__version__", "")
    print(f"lightgbm {lgb.__version__}{' (lightgbm-cegb fork)' if is_fork else ''}", file=out)
    print(f"thyroid: {data.X_train.shape[0]} training and {data.X_test.shape[0]} test patients, "
          f"{len(names)} features; full test panel costs {costs.row_cost(np.ones((1, len(names)), bool))[0]:.2f}",
          file=out)
    # Per-feature costs (what upstream LightGBM's CEGB takes): a grouped feature bought alone
    # costs its whole group (FTI needs TT4 and T4U). With the fork's groups, the group's price
    # is charged once for all its features.
    group = np.asarray(costs.group, dtype=int)
    group_price = np.asarray(costs.group_cost, dtype=float)
    lazy = np.where(group >= 0, group_price[np.maximum(group, 0)], np.asarray(costs.lazy, dtype=float))
    models: list[tuple[str, dict[str, Any]]] = [("LightGBM (no cost penalty)", {})]
    for t in tradeoffs:
        models.append((f"CEGB tradeoff={t:g}", {"cegb_tradeoff": t, "cegb_penalty_feature_lazy": lazy.tolist()}))
        if is_fork:
            models.append((f"CEGB+groups tradeoff={t:g}", {"cegb_tradeoff": t, "cegb_penalty_feature_lazy":
                                                           lazy.tolist(), "cegb_feature_group": group.tolist()}))
    rows = []
    print(f"\n{'model':32s} {'accuracy':>9s} {'mean cost':>10s} {'features':>9s} {'seconds':>8s}", file=out)
    for label, params in models:
        start = time.perf_counter()
        booster = _fit(lgb, params, data.X_train, data.y_train, names, rounds)
        seconds = time.perf_counter() - start
        accuracy = float((booster.predict(data.X_test).argmax(axis=1) == data.y_test).mean())
        report = cost_report(TreeEnsemble.from_booster(booster), data.X_test, costs)
        used = int(np.asarray(report.acquired.sum(axis=0)).ravel().astype(bool).sum())
        row = {"model": label, "accuracy": accuracy, "mean_cost": float(report.acquisition_cost.mean()),
               "features_used": used}
        rows.append(row)
        print(f"{label:32s} {accuracy:9.4f} {row['mean_cost']:10.2f} {used:9d} {seconds:8.2f}", file=out, flush=True)
    print("\nmean cost = average over test patients of the tests on their paths, each paid once "
          "(TT4, T4U and FTI are one purchase).", file=out)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of ``python -m budget_extras.demo``."""
    parser = argparse.ArgumentParser(prog="python -m budget_extras.demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=150, help="boosting rounds per model (default 150)")
    parser.add_argument("--tradeoffs", type=float, nargs="+", default=[0.001, 0.005, 0.02],
                        help="cegb_tradeoff values to try")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be a positive integer, got {args.rounds}")
    if any(not np.isfinite(t) or t < 0 for t in args.tradeoffs):
        parser.error(f"--tradeoffs must be finite numbers >= 0, got {args.tradeoffs}")
    run_demo(rounds=args.rounds, tradeoffs=args.tradeoffs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
