r"""``budget-extras cstc``: train a Cost-Sensitive Tree of Classifiers, predict with it, evaluate it.

Train a CSTC tree (Xu et al., ICML 2013) on the outputs of a LightGBM ensemble (trained here
with squared loss, or read with --model), then report the test metric and the exact per-row
prediction cost: each row pays the features and trees used on its own path.

Example::

    budget-extras cstc --train train.csv --valid valid.csv --label y --task binary --output cstc.json
    budget-extras cstc predict --model-file cstc.json --data new.csv -o preds.csv
    budget-extras cstc evaluate --model-file cstc.json --data test.csv --label y

Training prints the metric and the per-row cost on ``--test`` (default: the training CSV) and
writes the model with ``--output`` (``CSTC.save``). ``predict`` writes one row per input row:
``row``, ``prediction``, ``proba_<class>`` per class (binary), ``leaf`` and the row's
``acquisition_cost``, ``eval_cost`` and ``total_cost``; ``evaluate`` prints what training prints
for its ``--test`` data.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..cstc._estimator import CSTC
from ._args import (
    add_actions,
    add_costs,
    add_label,
    add_model,
    add_seed,
    add_test,
    add_train,
    add_valid,
)
from ._io import (
    AtomicOutputs,
    CLIError,
    check_paths,
    model_categories,
    read_costs,
    read_ensemble,
    read_rows,
    write_table,
)

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``cstc`` subcommand and its ``predict`` and ``evaluate`` actions.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.
    """
    p = subparsers.add_parser(
        "cstc",
        help="train CSTC (cost-sensitive tree of classifiers) and report accuracy and per-row cost",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_train(p, required=False, note="required to train")
    add_label(p, required=False, note="required to train")
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
    p.add_argument("--output", type=Path, default=None, metavar="JSON",
                   help="where to write the fitted model (CSTC.save; read by 'cstc predict' and 'cstc evaluate')")
    p.add_argument("--predictions", type=Path, default=None, metavar="CSV",
                   help="write the per-row table of the report data (the table 'cstc predict' writes)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)
    add_actions(
        p,
        "cstc_action",
        predict=("predict with a saved model: prediction, probabilities, leaf and cost per row", run_predict),
        evaluate=("print the metric and the per-row cost of a saved model on labelled data", run_evaluate),
        add_model_options=_add_model_file,
        evaluate_json=True,
    )


def _add_model_file(q: Any) -> None:
    q.add_argument("--model-file", required=True, type=Path,
                   help="model file written by 'budget-extras cstc --output' (CSTC.save)")


def _read(path: Path, label: str, columns: list[str] | None, option: str = "CSV",
          categories: dict[str, list[Any]] | None = None) -> tuple[pd.DataFrame, np.ndarray]:
    X, y = read_rows(path, option, columns, label=label, label_required=True, categories=categories)
    return X, np.asarray(y)


def result_dict(model: CSTC, X: pd.DataFrame, y: np.ndarray) -> dict[str, Any]:
    """JSON-ready summary of a fitted CSTC on data ``(X, y)``: metric, tree and cost.

    Parameters
    ----------
    model : CSTC
        The fitted model.
    X : pandas.DataFrame
        The feature columns.
    y : ndarray
        The labels.
    """
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
        "optimization": {"status": int(model.result_.status), "success": model.result_.success,
                         "message": model.result_.message, "fun": model.result_.fun, "nit": model.result_.nit,
                         "n_pruned": model.result_.n_pruned},
    }


def prediction_table(model: CSTC, X: pd.DataFrame) -> pd.DataFrame:
    """Per-row prediction, class probabilities (binary), leaf and costs of ``model`` on ``X``.

    Parameters
    ----------
    model : CSTC
        The fitted model.
    X : pandas.DataFrame
        The feature columns.
    """
    rep = model.cost_report(X)
    table = pd.DataFrame({"prediction": model.predict(X)})
    if model.task == "binary":
        proba = model.predict_proba(X)
        for k, c in enumerate(model.classes_):
            table[f"proba_{c}"] = proba[:, k]
    table["leaf"] = model.apply(X)
    table["acquisition_cost"] = rep.acquisition_cost
    table["eval_cost"] = rep.eval_cost
    table["total_cost"] = rep.total_cost
    return table


def _print_result(out: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(out, indent=2))
        return
    metric = "mse" if "mse" in out else "accuracy"
    c = out["cost"]
    print(f"{metric}: {out[metric]:.6g}   nodes: {out['n_nodes']} ({out['n_leaves']} leaves)")
    total = c["total_cost"]
    print(f"cost per row: mean {total['mean']:.6g} (acquisition {c['acquisition_cost']['mean']:.6g}, "
          f"evaluation {c['eval_cost']['mean']:.6g}), p50 {total['p50']:.6g}, "
          f"p90 {total['p90']:.6g}, max {total['max']:.6g}")
    print(f"trees evaluated per row: {c['trees_evaluated']['mean']:.4g}   "
          f"rows per leaf: {out['rows_per_leaf']}")


def run(args: argparse.Namespace) -> int:
    """Execute ``cstc`` (training).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    """
    missing = [opt for opt, v in (("--train", args.train), ("--label", args.label)) if v is None]
    if missing:
        raise CLIError(
            f"training needs {', '.join(missing)} (or an action: 'cstc predict', 'cstc evaluate')"
        )
    check_paths(
        {"--train": args.train, "--valid": args.valid, "--test": args.test, "--costs": args.costs,
         "--model": args.model},
        {"--output": args.output, "--predictions": args.predictions},
    )
    booster = None
    columns = None
    cats: dict[str, list[Any]] = {}
    if args.model is not None:
        booster = read_ensemble(args.model, "--model")
        columns, cats = list(booster.feature_names), model_categories(booster)
    X, y = _read(args.train, args.label, columns, "--train", cats)
    columns = list(X.columns)
    Xv = yv = None
    if args.valid is not None:
        Xv, yv = _read(args.valid, args.label, columns, "--valid", cats)
    costs = read_costs(args.costs, columns)
    model = CSTC(booster, costs=costs, depth=args.depth, lam=args.lam, rho=args.rho, task=args.task, n_weak=args.n_weak,
                 weak_max_depth=args.weak_max_depth, random_state=args.seed)
    model.fit(X, y, X_valid=Xv, y_valid=yv)
    Xr, yr = (X, y) if args.test is None else _read(args.test, args.label, columns, "--test", cats)
    out = result_dict(model, Xr, yr)
    with AtomicOutputs() as outputs:
        if args.output is not None:
            model.save(outputs.path(args.output))
        if args.predictions is not None:
            prediction_table(model, Xr).to_csv(outputs.path(args.predictions), index_label="row")
    _print_result(out, args.json)
    return 0


def _categories(model: CSTC) -> dict[str, list[Any]]:
    """Return a loaded model's pandas categorical features (its weak learners' model records which)."""
    booster = getattr(model, "booster_", None)
    return {} if booster is None or not model._pandas_categorical else model_categories(booster)


def _load(args: argparse.Namespace) -> tuple[CSTC, pd.DataFrame, np.ndarray | None]:
    """Return the saved model (with ``--costs`` when given), the data's features in model order and the labels."""
    path = args.model_file
    try:
        model = CSTC.load(path)
    except OSError as exc:
        raise CLIError(f"--model-file {os.fspath(path)!r}: cannot read the model file: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise CLIError(f"--model-file {exc}") from exc
    names = model.feature_names_in_
    named = names is not None and not all(f == f"Column_{i}" for i, f in enumerate(names))
    cols = list(names) if named and names is not None else None
    X, y = read_rows(args.data, "--data", cols, label=args.label, label_required=args.cstc_action == "evaluate",
                     categories=_categories(model))
    if X.shape[1] != model.n_features_in_:
        raise CLIError(
            f"--data {os.fspath(args.data)!r} has {X.shape[1]} feature columns; the model expects "
            f"{model.n_features_in_}"
        )
    if args.costs is not None:
        model = CSTC.load(path, costs=read_costs(args.costs, [str(c) for c in X.columns]))
    return model, X, y


def run_predict(args: argparse.Namespace) -> int:
    """``budget-extras cstc predict``: write prediction, probabilities, leaf and cost per row.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    """
    check_paths({"--model-file": args.model_file, "--data": args.data, "--costs": args.costs},
                {"-o/--output": args.output})
    model, X, _ = _load(args)
    table = prediction_table(model, X)
    write_table(table, args.output, index_label="row")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    """``budget-extras cstc evaluate``: print the metric and the per-row cost on labelled data.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    """
    check_paths({"--model-file": args.model_file, "--data": args.data, "--costs": args.costs}, {})
    model, X, y = _load(args)
    _print_result(result_dict(model, X, np.asarray(y)), args.json)
    return 0
