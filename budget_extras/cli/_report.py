"""``budget-extras report``: the exact prediction cost of a model on a data file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pandas as pd

from ..core._ensemble import TreeEnsemble
from ..core._report import CostReport, cost_report
from ._args import add_costs, add_data, add_model
from ._io import AtomicOutputs, check_paths, costs_source, model_categories, read_costs, read_ensemble, read_rows
from ._plot import add_plot, check_plot, new_figure, save_figure

__all__ = ["load_data", "register", "report_dict", "run"]


def register(subparsers: Any) -> None:
    """Add the ``report`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.
    """
    p = subparsers.add_parser(
        "report",
        help="exact prediction cost of a LightGBM model on a data file",
        description=(
            "Route every row of DATA through the model and report, per row, the features its paths "
            "acquire (each group / feature paid once per row), the splits and trees evaluated, and the "
            "cost summary (mean, percentiles) and per-feature usage (share of rows using a feature "
            "0, 1-7 or more than 7 times)."
        ),
    )
    add_model(p, note="Booster.save_model")
    add_data(
        p,
        note="extra columns are ignored; text columns are used as pandas categoricals when the model was "
        "trained on a DataFrame",
    )
    add_costs(p, default="the costs recorded in a model trained with CEGB costs, else every feature costs 1")
    p.add_argument(
        "--json", action="store_true", help="print JSON (summary and feature usage) instead of tables"
    )
    p.add_argument(
        "--per-row", type=Path, default=None, metavar="CSV", help="also write per-row costs to CSV"
    )
    p.add_argument(
        "--n-trees", type=int, default=None, help="evaluate only the first N trees of the model (early exit)"
    )
    add_plot(p, "the share of rows paying for each feature and the per-row cost histogram")
    p.set_defaults(func=run)


def load_data(path: str | Path, ens: TreeEnsemble) -> pd.DataFrame:
    """Read the data CSV and return the model's feature columns, in model order (:func:`read_rows`).

    Parameters
    ----------
    path : str or pathlib.Path
        The data CSV.
    ens : TreeEnsemble
        The model whose feature columns are read.

    Raises
    ------
    CLIError
        If the file cannot be read or lacks some model feature.
    """
    X, _ = read_rows(path, "--data (data CSV)", list(ens.feature_names), categories=model_categories(ens))
    frame: pd.DataFrame = X
    return frame


def report_dict(rep: CostReport, costs: str | None = None) -> dict[str, Any]:
    """JSON-ready dict of a report: summary and per-feature usage (and where the costs came from).

    Parameters
    ----------
    rep : CostReport
        The report.
    costs : str, optional
        Where the costs came from (:func:`costs_source`); a ``"costs"`` entry when given.
    """
    usage = rep.feature_usage()
    return {
        **({} if costs is None else {"costs": costs}),
        "summary": rep.summary(),
        "feature_usage": {str(name): {k: float(v) for k, v in row.items()} for name, row in usage.iterrows()},
    }


def _text(rep: CostReport, ens: TreeEnsemble, model: str | Path, costs: str) -> str:
    s = rep.summary()
    rows = {k: v for k, v in s.items() if isinstance(v, dict)}
    table = pd.DataFrame(rows).T
    usage = rep.feature_usage()
    lines = [
        f"model: {Path(model).name} ({ens.n_trees} trees, {ens.n_features} features)   rows: {s['n_rows']}",
        f"costs: {costs}",
        f"coupled cost (one-time, per model): {s['coupled_cost']:.6g}",
        "",
        "per-row cost:",
        table.to_string(float_format=lambda v: f"{v:.6g}"),
        "",
        "feature usage (share of rows using the feature 0 / 1-7 / >7 times; a use = one evaluated split):",
        usage.to_string(float_format=lambda v: f"{v:.4g}"),
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Execute ``report``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    """
    check_paths(
        {"--model": args.model, "--data": args.data, "--costs": args.costs},
        {"--per-row": args.per_row, "--plot": args.plot},
    )
    check_plot(args.plot)
    ens = read_ensemble(args.model, "--model")
    costs = read_costs(args.costs, ens.feature_names, ensemble=ens)
    source = costs_source(args.costs, ens)
    X = load_data(args.data, ens)
    if args.n_trees is not None and not 0 <= args.n_trees <= ens.n_trees:
        raise ValueError(f"--n-trees must be in [0, {ens.n_trees}]; got {args.n_trees}")
    rep = cost_report(ens, X, costs, n_trees=args.n_trees)
    with AtomicOutputs() as out:
        if args.per_row is not None:
            rep.to_frame().to_csv(out.path(args.per_row, "--per-row"))
        if args.plot is not None:
            from ..plotting import plot_cost_report

            fig, axes = new_figure(2, figsize=(11.0, 4.0))
            plot_cost_report(rep, axes)
            save_figure(fig, args.plot, out)
    if args.json:
        print(json.dumps(report_dict(rep, source), indent=2))
    else:
        print(_text(rep, ens, args.model, source))
    return 0

