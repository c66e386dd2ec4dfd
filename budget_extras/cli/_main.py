"""``budget-extras`` command line: a thin shell over the public functions.

Each subcommand lives in ``budget_extras/cli/_<name>.py`` and exposes
``register(subparsers) -> None``, which adds its parser and sets ``func=run`` with
``run(args) -> int``. Methods register themselves by adding their name to ``SUBCOMMANDS``.
Every subcommand reads and writes files through ``_io`` (refuses output = input, writes
atomically, one-line errors naming the file).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .. import __version__
from ._io import CLIError

__all__ = ["SUBCOMMANDS", "CLIError", "build_parser", "main"]

SUBCOMMANDS: tuple[str, ...] = ("report", "prune", "qwyc", "adapt", "cstc", "train")


def build_parser() -> argparse.ArgumentParser:
    """Return the ``budget-extras`` argument parser with every registered subcommand.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(
        prog="budget-extras",
        description=(
            "Prediction-cost tools for any LightGBM model (upstream or the lightgbm-cegb fork): "
            "exact feature-acquisition and evaluation cost, budgeted pruning and early exit."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"budget_extras.cli._{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 on success, 2 on a usage / input error.
    """
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    from lightgbm.basic import LightGBMError

    try:
        return int(args.func(args))
    except (CLIError, ValueError, TypeError, OSError, LightGBMError) as exc:
        # ValueError covers ModelParseError, UnicodeDecodeError and pandas' parser errors
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"budget-extras {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
