"""``--plot FILE``: a figure of a command's result, written like every other output (atomically).

matplotlib is optional (``pip install budget-extras[plot]``): it is checked before any work, so
a missing matplotlib or an unknown image format stops the command with one line and no output.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._io import AtomicOutputs, CLIError

__all__ = ["add_plot", "check_plot", "new_figure", "save_figure"]


def add_plot(p: argparse.ArgumentParser, what: str) -> None:
    """Add ``--plot FILE`` (the format from the suffix: .png, .pdf, .svg, ...)."""
    p.add_argument(
        "--plot",
        type=Path,
        default=None,
        metavar="FILE",
        help=f"also draw {what} to FILE (.png, .pdf, .svg, ...; needs matplotlib: pip install budget-extras[plot])",
    )


def check_plot(path: Path | None) -> None:
    """Refuse ``--plot`` before any work if matplotlib is missing or the suffix is no image format.

    Raises
    ------
    CLIError
        Naming the option and what to do.
    """
    if path is None:
        return
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise CLIError(
            "--plot needs matplotlib, which is not installed: pip install budget-extras[plot]"
        ) from exc
    formats = Figure().canvas.get_supported_filetypes()
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in formats:
        raise CLIError(
            f"--plot {str(path)!r}: the file suffix must name an image format ({', '.join(sorted(formats))}); "
            f"got {path.suffix or 'no suffix'!r}"
        )


def new_figure(n_axes: int = 1, *, figsize: tuple[float, float] = (7.0, 4.5)) -> tuple[Any, Any]:
    """Return a figure made outside pyplot (no GUI backend, no global state) and its axes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(1, n_axes)
    return fig, axes


def save_figure(fig: Any, path: Path, out: AtomicOutputs) -> None:
    """Write ``fig`` to ``path`` through ``out`` (renamed into place with the command's other outputs).

    Raises
    ------
    CLIError
        Naming ``--plot`` and ``path`` (never the temporary file) if the image cannot be written.
    """
    tmp = out.path(path, "--plot")
    try:
        fig.savefig(tmp, format=path.suffix.lstrip(".").lower(), dpi=120)
    except OSError as exc:
        raise CLIError(f"--plot {str(path)!r}: cannot write the image: {exc.strerror or type(exc).__name__}") from exc
