"""Options shared by the subcommands: one definition and one help text each.

Every subcommand adds ``--train``, ``--valid``, ``--test``, ``--data``, ``--label``,
``--costs``, ``--model``, ``--scoring``, ``--seed``, ``--quiet`` and ``-o/--output`` through
these functions. The help text is the option's own; ``note`` adds what the option does in
one subcommand (when it is required, what it defaults to) in parentheses. A subcommand whose
fit writes a model file adds its ``predict`` and ``evaluate`` actions with :func:`add_actions`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "add_actions",
    "add_costs",
    "add_data",
    "add_label",
    "add_model",
    "add_output",
    "add_quiet",
    "add_scoring",
    "add_seed",
    "add_test",
    "add_train",
    "add_valid",
]

TRAIN_HELP = "training CSV with a header row and the label column"
VALID_HELP = "validation CSV with a header row"
TEST_HELP = "CSV with a header row to report on"
DATA_HELP = "CSV with a header row and the model's feature columns"
LABEL_HELP = "name of the label column"
COSTS_HELP = (
    "costs CSV read by FeatureCosts.from_csv: columns feature,cost and optional "
    "group,group_cost,coupled,split,tree"
)
MODEL_HELP = "LightGBM model text file"
SCORING_HELP = (
    "validation metric: a scikit-learn scorer name such as accuracy, roc_auc, neg_log_loss, r2, auc, log_loss"
)
SEED_HELP = "random seed"
QUIET_HELP = "no progress output"


def _help(text: str, note: str | None) -> str:
    return text if note is None else f"{text} ({note})"


def add_train(p: Any, *, required: bool = True, note: str | None = None) -> None:
    """Add ``--train``: the training CSV.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    required : bool, default True
        Whether the option must be given.
    note : str, optional
        Added to the help text in parentheses.
    """
    p.add_argument("--train", required=required, help=_help(TRAIN_HELP, note))


def add_valid(p: Any, *, required: bool = False, note: str | None = None) -> None:
    """Add ``--valid``: the validation CSV.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    required : bool, default False
        Whether the option must be given.
    note : str, optional
        Added to the help text in parentheses.
    """
    p.add_argument("--valid", required=required, help=_help(VALID_HELP, note))


def add_test(p: Any, *, note: str | None = None) -> None:
    """Add ``--test``: the CSV a subcommand reports on.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    note : str, optional
        Added to the help text in parentheses.
    """
    p.add_argument("--test", help=_help(TEST_HELP, note))


def add_data(p: Any, *, note: str | None = None) -> None:
    """Add the required ``--data``: the rows to predict or report on.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    note : str, optional
        Added to the help text in parentheses.
    """
    p.add_argument("--data", required=True, help=_help(DATA_HELP, note))


def add_label(p: Any, *, required: bool = True, default: str | None = None, note: str | None = None) -> None:
    """Add ``--label``: the label column's name.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    required : bool, default True
        Whether the option must be given.
    default : str, optional
        The label column used when the option is missing (shown in the help).
    note : str, optional
        Added to the help text in parentheses.
    """
    if default is not None:
        note = f"default: {default}" if note is None else f"{note}; default: {default}"
    p.add_argument("--label", required=required, default=default, help=_help(LABEL_HELP, note))


def add_costs(p: Any, *, required: bool = False, default: str = "every feature costs 1") -> None:
    """Add ``--costs``: the costs CSV; ``default`` says what a missing ``--costs`` means.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    required : bool, default False
        Whether the option must be given.
    default : str, default "every feature costs 1"
        What a missing ``--costs`` means (shown in the help).
    """
    text = COSTS_HELP if required else _help(COSTS_HELP, f"default: {default}")
    p.add_argument("--costs", required=required, help=text)


def add_model(p: Any, *, required: bool = True, what: str = MODEL_HELP, note: str | None = None) -> None:
    """Add ``--model``: the model file read (``what`` for a file that is not LightGBM model text).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    required : bool, default True
        Whether the option must be given.
    what : str, default MODEL_HELP
        The help text (for a file that is not LightGBM model text).
    note : str, optional
        Added to the help text in parentheses.
    """
    p.add_argument("--model", required=required, help=_help(what, note))


def add_output(p: Any, what: str, *, required: bool = True, short: bool = True) -> None:
    """Add ``-o/--output`` (``--output`` alone with ``short=False``): the file written.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    what : str
        The help text: what the file holds.
    required : bool, default True
        Whether the option must be given.
    short : bool, default True
        Also accept ``-o``.
    """
    names = ("-o", "--output") if short else ("--output",)
    p.add_argument(*names, required=required, help=what)


def add_scoring(p: Any, *, default: str) -> None:
    """Add ``--scoring``: the validation metric of a budget search (``default``: what None means).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    default : str
        What a missing ``--scoring`` means (shown in the help).
    """
    p.add_argument("--scoring", default=None, help=_help(SCORING_HELP, f"default: {default}"))


def add_seed(p: Any) -> None:
    """Add ``--seed`` (an integer, default 0).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    """
    p.add_argument("--seed", type=int, default=0, help=_help(SEED_HELP, "default: 0"))


def add_quiet(p: Any, *, short: bool = False) -> None:
    """Add ``--quiet`` (also ``-q`` with ``short=True``): no progress bars.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    short : bool, default False
        Also accept ``-q``.
    """
    names = ("-q", "--quiet") if short else ("--quiet",)
    p.add_argument(*names, action="store_true", help=QUIET_HELP)


def add_actions(
    p: Any,
    dest: str,
    *,
    predict: tuple[str, Callable[..., int]],
    evaluate: tuple[str, Callable[..., int]],
    add_model_options: Callable[[Any], None],
    evaluate_json: bool = False,
) -> None:
    """Add the ``predict`` and ``evaluate`` actions of a subcommand whose fit writes a model file.

    Each action reads the saved model (the options ``add_model_options`` adds), ``--data`` and
    ``--costs`` (default: the costs saved with the model); ``predict`` takes an optional
    ``--label`` (dropped from the data) and ``-o/--output`` (default: standard output),
    ``evaluate`` a required ``--label``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    dest : str
        The attribute of the parsed arguments that names the action (None: fit).
    predict, evaluate : tuple of (str, callable)
        Each action's help text and the function that runs it.
    add_model_options : callable
        Adds the options that name the saved model to an action's parser.
    evaluate_json : bool, default False
        Give ``evaluate`` a ``--json`` flag (print JSON instead of a table).
    """
    sub = p.add_subparsers(dest=dest, metavar="ACTION")
    for action, (text, func) in (("predict", predict), ("evaluate", evaluate)):
        q = sub.add_parser(action, help=text, description=text)
        add_model_options(q)
        add_data(q)
        add_costs(q, default="the costs saved with the model")
        if action == "predict":
            add_label(q, required=False, note="dropped from --data if present")
            add_output(q, "predictions CSV (default: standard output)", required=False)
        else:
            add_label(q)
            if evaluate_json:
                q.add_argument("--json", action="store_true", help="print JSON instead of a table")
        q.set_defaults(func=func)
