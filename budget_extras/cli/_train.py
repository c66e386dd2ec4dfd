"""``budget-extras train``: train a LightGBM model to a prediction-cost budget."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lightgbm as lgb
import pandas as pd

from .._compat import param_aliases
from ..cegb import train_to_budget
from ..cegb._strategies import STRATEGIES
from ..core._status import Status, fits_budget
from ._args import add_costs, add_output, add_quiet, add_valid
from ._io import AtomicOutputs, check_paths, read_rows
from ._plot import add_plot, check_plot, new_figure, save_figure

__all__ = ["read_config", "register", "run"]

_DATA_KEYS = {"data", "train", "train_data", "train_data_file", "data_filename"}
_LABEL_KEYS = {"label_column", "label"}
_DROP_KEYS = {
    "task",
    "valid",
    "valid_data",
    "test_data",
    "output_model",
    "model_output",
    "model_out",
    "header",
    "has_header",
}


def register(subparsers: Any) -> None:
    """Add the ``train`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.
    """
    p = subparsers.add_parser(
        "train",
        help="train a LightGBM model whose mean per-row validation cost is <= a budget",
        description=(
            "Read a LightGBM CLI-style config (data=, label_column=, header=, other keys passed to "
            "LightGBM), search plain / top-k / CEGB candidates (budget_extras.train_to_budget) and "
            "save the best one on the validation CSV whose mean per-row validation cost is <= BUDGET."
        ),
    )
    p.add_argument("--config", required=True, type=Path, help="config file: key=value lines, # comments")
    p.add_argument("--budget", required=True, type=float, help="largest mean per-row validation cost")
    add_valid(p, required=True, note="and the label column")
    add_costs(p, required=True)
    add_output(p, "model text file to write")
    p.add_argument("--num-boost-round", type=int, default=None, help="rounds (default: the config's or 200)")
    p.add_argument("--choose", choices=("auto", "cv", "valid"), default="auto",
                   help="choose on 5-fold cross-validation over the training and validation rows ('cv'), on the "
                        "validation rows ('valid'), or 'cv' up to 20,000 rows ('auto', default)")
    p.add_argument("--rule", choices=("best", "1se"), default="best",
                   help="with cross-validation: the best mean score (default) or the cheapest within one SE of it")
    _add_search_options(p)
    p.add_argument("--json", type=Path, default=None, help="also write the search report as JSON")
    add_plot(p, "every candidate's validation cost and score, the Pareto front and the chosen model")
    add_quiet(p)
    p.set_defaults(func=run)


def _number(text: str, kind: type, low: float, *, strict: bool = False) -> Any:
    """Return ``text`` read as ``kind`` (int or float), finite and >= ``low`` (> ``low`` with ``strict``).

    Raises ``argparse.ArgumentTypeError``, which argparse reports naming the option.
    """
    what = ("an integer" if kind is int else "a number") + (" > " if strict else " >= ") + f"{low:g}"
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not (value > low if strict else value >= low) or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def _budgets(text: str) -> list[float]:
    """``--budgets``: comma-separated budgets (numbers >= 0)."""
    parts = [s.strip() for s in text.split(",")]
    if not text.strip() or any(not s for s in parts):
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers >= 0 such as 2,5.5,10, got {text!r}")
    try:
        return [_number(s, float, 0.0) for s in parts]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated finite numbers >= 0 such as 2,5.5,10, got {text!r}"
        ) from None


def _add_search_options(p: Any) -> None:
    """Add the search's options (``train_to_budget``'s arguments of the same names)."""
    p.add_argument("--search", choices=tuple(STRATEGIES), default="full",
                   help="'full' (default): every candidate family; 'fast' (the lightgbm-cegb fork only): the fork's "
                        "learner budget and top-k subsets within it, about four trainings per budget; "
                        "'lean': every family on proxies with a quarter of the rounds, the best refit at full size")
    p.add_argument("--budgets", type=_budgets, default=None, metavar="B1,B2,...",
                   help="further budgets the search also refines (comma-separated); the saved model is --budget's, "
                        "the --json report has the best candidate at each")
    p.add_argument("--n-jobs", type=lambda s: _number(s, int, 1), default=1, metavar="N",
                   help="candidates trained at once (threads; default 1)")
    p.add_argument("--time-limit", type=lambda s: _number(s, float, 0.0, strict=True),
                   default=None, metavar="SECONDS",
                   help="no training starts after this many seconds; the best model so far trained on every row "
                        "is saved (status LIMIT)")
    p.add_argument("--max-fits", type=lambda s: _number(s, int, 1), default=None, metavar="N",
                   help="most LightGBM trainings (proxies and selection fits included; status LIMIT when reached)")
    p.add_argument("--client", default=None, metavar="ADDRESS",
                   help="a Dask scheduler's address (e.g. tcp://host:8786): search on that cluster "
                        "(train_to_budget's client=; docs/train_to_budget.md, 'Searching a table on a Dask cluster')")


#: Seconds to wait for the scheduler --client names before refusing it.
CLIENT_TIMEOUT = 10


@contextlib.contextmanager
def _client(address: str | None) -> Iterator[Any]:
    """Yield a ``distributed.Client`` connected to ``address`` (None: no client), closed afterwards."""
    if address is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError as exc:
        raise ValueError(f"--client {address!r} needs the 'distributed' package (pip install distributed)") from exc
    try:
        client = Client(address, timeout=CLIENT_TIMEOUT)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise ValueError(
            f"--client {address!r}: no Dask scheduler answered within {CLIENT_TIMEOUT} s "
            f"(expected an address such as tcp://host:8786): {exc}"
        ) from exc
    with client:
        yield client


def read_config(path: Path) -> dict[str, str]:
    """Read ``key=value`` lines (``#`` starts a comment) like LightGBM's CLI.

    Parameters
    ----------
    path : pathlib.Path
        The configuration file.

    Raises
    ------
    ValueError
        If the file cannot be read or a line has no ``=``.
    """
    if path.is_dir():
        raise ValueError(f"cannot read config {str(path)!r}: is a directory")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ValueError(f"cannot read config {str(path)!r}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"cannot read config {str(path)!r}: not a text file ({exc.reason} at byte {exc.start})"
        ) from exc
    out: dict[str, str] = {}
    for i, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if "=" not in line:
            raise ValueError(f"config {str(path)!r} line {i}: expected key=value, got {line!r}")
        k, v = (s.strip() for s in line.split("=", 1))
        out[k] = v
    return out


def _read_csv(path: str | Path, what: str, like: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every column of a CSV (:func:`read_rows`); text columns become categoricals, with ``like``'s categories."""
    cats = {} if like is None else {c: like[c].cat.categories.tolist() for c in like.columns
                                    if isinstance(like[c].dtype, pd.CategoricalDtype)}
    frame: pd.DataFrame = read_rows(path, what, categories=cats, new_categories=True)[0]
    return frame


def _label_name(spec: str, columns: list[str], path: Path) -> str:
    s = spec[5:] if spec.startswith("name:") else spec
    if s in columns:
        return s
    if s.isdigit() and int(s) < len(columns):
        return columns[int(s)]
    raise ValueError(
        f"label_column={spec!r} names no column of the training CSV {str(path)!r} (it has {columns[:8]!r})"
    )


def _columns(key: str, spec: str, columns: list[str], label: str, path: Path) -> list[str]:
    """Columns named by a LightGBM CLI column key: ``name:a,b`` or indices not counting the label."""
    others = [c for c in columns if c != label]
    if spec.startswith("name:"):
        names = [s.strip() for s in spec[5:].split(",") if s.strip()]
        bad = [n for n in names if n not in others]
    else:
        parts = [s.strip() for s in spec.split(",") if s.strip()]
        bad = [p for p in parts if not p.isdigit() or int(p) >= len(others)]
        names = [others[int(p)] for p in parts if p not in bad]
    if bad or not names:
        raise ValueError(
            f"{key}={spec!r} names no column of the training CSV {str(path)!r} other than the label "
            f"(expected name:col[,col] or indices not counting the label; it has {others[:8]!r})"
        )
    return names


def _rounds(conf: dict[str, str], given: int | None) -> int:
    """Boosting rounds: ``--num-boost-round``, else the config's (any alias, a positive integer), else 200."""
    keys = sorted(k for k in conf if k in param_aliases("num_iterations"))
    for k in keys:
        v = conf[k]
        if not v.isdigit() or int(v) < 1:
            raise ValueError(f"config key {k}={v!r}: expected a positive integer number of rounds")
    if given is not None:
        return given
    return int(conf[keys[0]]) if keys else 200


def run(args: argparse.Namespace) -> int:
    """Run ``budget-extras train``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    """
    conf = read_config(args.config)
    data = next((conf[k] for k in _DATA_KEYS if k in conf), None)
    if data is None:
        raise ValueError(f"config {str(args.config)!r} has no data= line (the training CSV)")
    header = conf.get("header", conf.get("has_header", "true")).lower()
    if header not in ("true", "1", "yes"):
        raise ValueError(f"config {str(args.config)!r}: only CSV with a header row is supported (header=true)")
    data_path = Path(data)
    if not data_path.is_absolute():
        data_path = args.config.parent / data_path
    check_paths(
        {"--config": args.config, "data= (training CSV)": data_path, "--valid": args.valid, "--costs": args.costs},
        {"-o/--output": args.output, "--json": args.json, "--plot": args.plot},
    )
    check_plot(args.plot)
    train = _read_csv(data_path, "data= (training CSV)")
    label = _label_name(next((conf[k] for k in _LABEL_KEYS if k in conf), "0"), list(train.columns), data_path)
    valid = _read_csv(args.valid, "--valid", like=train)
    cols = list(train.columns)
    for key in sorted(k for k in conf if k in param_aliases("group_column")):
        raise ValueError(f"config key {key}=: query groups (ranking) are not supported by budget-extras train")
    weight = [w for k in sorted(conf) if k in param_aliases("weight_column")
              for w in _columns(k, conf[k], cols, label, data_path)]
    if len(weight) > 1:
        raise ValueError(f"config weight_column names {len(weight)} columns {weight!r}; expected one")
    ignored = {c for k in sorted(conf) if k in param_aliases("ignore_column")
               for c in _columns(k, conf[k], cols, label, data_path)}
    feats = [c for c in cols if c != label and c not in ignored and c not in weight]
    missing = [c for c in [*feats, label] if c not in valid.columns]
    if missing:
        raise ValueError(f"validation CSV {str(args.valid)!r} lacks columns {missing[:6]!r}")
    column_keys = param_aliases("weight_column") | param_aliases("ignore_column") | param_aliases("num_iterations")
    params: dict[str, Any] = {
        k: v for k, v in conf.items() if k not in _DATA_KEYS | _LABEL_KEYS | _DROP_KEYS | column_keys
    }
    rounds = _rounds(conf, args.num_boost_round)
    with warnings.catch_warnings(record=True) as caught, _client(args.client) as client:
        warnings.simplefilter("always")
        r = train_to_budget(
            params,
            lgb.Dataset(train[feats], train[label].to_numpy(), weight=train[weight[0]].to_numpy() if weight else None),
            budget=args.budget,
            valid_set=(valid[feats], valid[label].to_numpy()),
            costs=str(args.costs),  # read once, by train_to_budget (as_feature_costs)
            num_boost_round=rounds,
            progress=not args.quiet,
            choose=args.choose,
            rule=args.rule,
            search=args.search,
            budgets=args.budgets,
            n_jobs=args.n_jobs,
            time_limit=args.time_limit,
            max_fits=args.max_fits,
            client=client,
        )
    for w in caught:
        print(f"budget-extras train: warning: {w.message}")
    booster = r.booster
    rep: dict[str, Any] | None = None
    if args.json is not None:
        rep = {
            "status": r.status,
            "success": r.success,
            "message": r.message,
            "budget": r.budget,
            "budgets": list(r.budgets),
            "best_at": {f"{b:g}": _best_at(r, b) for b in r.budgets},
            "nfev": r.nfev,
            "score": r.score,
            "cost": r.cost,
            "scoring": r.scoring,
            "metric": r.metric,  # the score as users read it: "rmse" for "neg_l2"
            "metric_value": r.metric_value(),
            "chosen": {"family": r.chosen.family, "k": r.chosen.k, "tradeoff": r.chosen.tradeoff},
            "frontier": [
                {
                    "family": c.family,
                    "k": c.k,
                    "tradeoff": c.tradeoff,
                    "score": c.score,
                    "score_se": c.score_se,
                    "folds": c.folds,
                    "metric_value": r.metric_value(c.score),
                    "cost": c.cost,
                    "constant": c.constant,
                    "proxy": c.proxy,
                }
                for c in r.frontier
            ],
        }
    with AtomicOutputs() as out:
        booster.save_model(out.path(args.output, "-o/--output"))
        if rep is not None:
            Path(out.path(args.json, "--json")).write_text(json.dumps(rep, indent=1))
        if args.plot is not None:
            from ..plotting import plot_frontier

            fig, ax = new_figure()
            plot_frontier(r, ax)
            save_figure(fig, args.plot, out)
    print(r.message)
    print(f"family={r.chosen.family} k={r.chosen.k} tradeoff={r.chosen.tradeoff} status={r.status}")
    return _exit_status(r)


def _best_at(r: Any, budget: float) -> dict[str, Any] | None:
    """Return the candidate the result picks at ``budget`` (``best_at``; None: none fits)."""
    c = r.best_at(budget)
    return None if c is None else {"family": c.family, "k": c.k, "tradeoff": c.tradeoff, "score": c.score,
                                   "metric_value": r.metric_value(c.score), "cost": c.cost}


def _exit_status(r: Any) -> int:
    """0 when the saved model meets the budget (a warning for a constant model or a cut search), else 1."""
    meets = r.status != Status.INFEASIBLE and fits_budget(r.cost, r.budget)
    if meets and r.status == Status.CONSTANT:
        print("budget-extras train: warning: the saved model is constant (one prediction for every row): "
              "only a constant model fits the budget")
    elif meets and r.status != Status.SUCCESS:
        print(f"budget-extras train: warning: status {r.status.name}: {r.message}")
    return 0 if meets else 1
