r"""``budget-extras adapt``: fit Adapt-GBRT in front of a LightGBM model file from the command line.

Example::

    budget-extras adapt --train train.csv --label y --f0 big.txt --p-full 0.3 --output a.json
    budget-extras adapt --train train.csv --valid valid.csv --label y --f0 big.txt --budget 5 \
        --costs costs.csv --output a.json
    budget-extras adapt predict --model a.json --f0 big.txt --data new.csv -o preds.csv
    budget-extras adapt evaluate --model a.json --f0 big.txt --data test.csv --label y

``predict`` writes one row per input row: ``prediction``, ``proba_<class>`` per class, ``to_f0``
(1: answered by f0) and ``cost`` (the row's acquisition cost); ``evaluate`` prints accuracy,
mean cost per row and the share sent to f0 as JSON.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np
import pandas as pd

from ._args import add_actions, add_costs, add_label, add_model, add_output, add_quiet, add_train, add_valid
from ._io import AtomicOutputs, check_paths, load_booster, model_categories, read_costs, read_rows, write_table

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``adapt`` subcommand to an ``argparse`` subparsers object.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.
    """
    p = subparsers.add_parser(
        "adapt",
        help="fit a cheap gate and cheap model (Adapt-GBRT) in front of an expensive LightGBM model",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_train(p, required=False, note="required to fit")
    add_valid(p, note="required with --budget")
    add_label(p, required=False, note="two or more classes; required to fit")
    p.add_argument("--f0", help="LightGBM model file of the expensive model (binary or multiclass; required to fit)")
    add_costs(p)
    p.add_argument("--p-full", type=float, default=0.5, help="fraction routed to f0 (default 0.5)")
    p.add_argument("--gamma", type=float, default=0.01, help="feature-cost penalty (default 0.01)")
    p.add_argument("--budget", type=float, help="target mean cost per row: sweep (p_full, gamma)")
    p.add_argument("--n-trees", type=int, default=100)
    p.add_argument("--max-em-iter", type=int, default=10)
    add_output(p, "where to write the fitted model (JSON; required to fit)", required=False, short=False)
    add_quiet(p)
    p.set_defaults(func=run)
    add_actions(
        p,
        "adapt_action",
        predict=("predict with a fitted model: prediction, probabilities, route and cost per row", run_predict),
        evaluate=("print accuracy, mean cost per row and the share sent to f0 on labelled data", run_evaluate),
        add_model_options=_add_model_options,
    )


def _add_model_options(q: Any) -> None:
    add_model(q, what="model file written by 'budget-extras adapt'")
    q.add_argument("--f0", required=True, help="LightGBM model file of the expensive model used to fit")


def _load(args: argparse.Namespace) -> tuple[Any, pd.DataFrame]:
    """Return the fitted model (with its f0) and the data's feature columns, in the model's order."""
    from ..adapt._estimator import AdaptGBRT

    f0 = load_booster(args.f0, "--f0")
    model = AdaptGBRT.load(args.model, f0=f0)
    names = model._feature_names
    named = names is not None and not all(f == f"Column_{i}" for i, f in enumerate(names))
    data, _ = read_rows(args.data, "--data", list(names) if named and names is not None else None, label=args.label,
                        categories=model_categories(f0))
    if not named and data.shape[1] != model.n_features_in_:
        raise ValueError(
            f"'{args.data}' has {data.shape[1]} feature columns; the model expects {model.n_features_in_}."
        )
    if args.costs is not None:  # the costs CSV is read against the data's columns, known only now
        model._price(read_costs(args.costs, [str(c) for c in data.columns]))
    return model, data


def run_predict(args: argparse.Namespace) -> int:
    """``budget-extras adapt predict``: write predictions, probabilities, route and cost per row.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    """
    inputs = {"--model": args.model, "--f0": args.f0, "--data": args.data, "--costs": args.costs}
    check_paths(inputs, {} if args.output is None else {"-o/--output": args.output})
    model, X = _load(args)
    proba = model.predict_proba(X)
    out = pd.DataFrame({"prediction": model.classes_[np.argmax(proba, axis=1)]})
    for k, c in enumerate(model.classes_):
        out[f"proba_{c}"] = proba[:, k]
    out["to_f0"] = model.route(X)
    out["cost"] = model.row_cost(X)
    write_table(out, args.output, index=False)
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    """``budget-extras adapt evaluate``: print accuracy, mean cost and share to f0 as JSON.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    """
    check_paths({"--model": args.model, "--f0": args.f0, "--data": args.data, "--costs": args.costs}, {})
    _, y = read_rows(args.data, "--data", [], label=args.label, label_required=True)
    model, data = _load(args)
    res = model.evaluate(data, y)
    print(json.dumps({"n_rows": len(y), **res, "mean_cost": res["cost"]}, indent=1))
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the process exit status.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    """
    missing = [f"--{k}" for k in ("train", "label", "f0", "output") if getattr(args, k) is None]
    if missing:
        raise ValueError(f"fitting needs {', '.join(missing)} (or an action: 'adapt predict', 'adapt evaluate').")

    from ..adapt._estimator import AdaptGBRT

    check_paths(
        {"--train": args.train, "--valid": args.valid, "--f0": args.f0, "--costs": args.costs},
        {"--output": args.output},
    )
    f0 = load_booster(args.f0, "--f0")
    cats = model_categories(f0)
    train, y = read_rows(args.train, "--train", label=args.label, label_required=True, categories=cats)
    names = [str(c) for c in train.columns]
    costs = read_costs(args.costs, names)
    kw: dict[str, Any] = {}
    if args.valid is not None:
        X_valid, y_valid = read_rows(args.valid, "--valid", names, label=args.label, label_required=True,
                                     categories=cats)
        kw = {"y_valid": y_valid, "X_valid": X_valid}
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
    model.fit(train, y, **kw)  # a DataFrame: the model keeps the column names
    with AtomicOutputs() as out:
        model.save(out.path(args.output))
    summary: dict[str, Any] = {
        "p_full": model.p_full_,
        "gamma": model.gamma_,
        "status": int(model.train_result_.status),
        "success": model.train_result_.success,
        "message": model.train_result_.message,
        "nit": model.train_result_.nit,
    }
    if "X_valid" in kw:
        summary["valid"] = model.evaluate(kw["X_valid"], kw["y_valid"])
    if model.sweep_result_ is not None:
        summary["sweep_status"] = int(model.sweep_result_.status)
        summary["sweep_success"] = model.sweep_result_.success
        summary["sweep_message"] = model.sweep_result_.message
        summary["frontier"] = model.sweep_result_.frontier[["p_full", "gamma", "accuracy", "cost"]].to_dict(
            orient="records"
        )
    print(json.dumps(summary, indent=1))
    return 0
