"""The one door to matplotlib: imported when a plot is drawn, never when budget_extras is imported."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

__all__ = ["INSTALL_HINT", "matplotlib", "new_axes", "pyplot", "two_axes"]

#: What to install when matplotlib is missing.
INSTALL_HINT = "pip install budget-extras[plot]"


def _missing(exc: ImportError) -> ImportError:
    return ImportError(f"budget_extras' plots need matplotlib, which is not installed: {INSTALL_HINT}")


def _import(name: str) -> Any:
    """Import ``name`` (matplotlib or one of its modules); a missing matplotlib names the extra."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise _missing(exc) from exc


def matplotlib() -> Any:
    """Return the ``matplotlib`` module.

    Raises
    ------
    ImportError
        If matplotlib is not installed; the message names the extra to install.
    """
    return _import("matplotlib")


def pyplot() -> Any:
    """Return ``matplotlib.pyplot`` (only needed to make a new figure).

    Raises
    ------
    ImportError
        If matplotlib is not installed; the message names the extra to install.
    """
    return _import("matplotlib.pyplot")


def new_axes(ax: Any = None) -> Any:
    """Return ``ax``, or the Axes of a new pyplot figure when ``ax`` is None (matplotlib checked either way)."""
    if ax is not None:
        matplotlib()
        return ax
    _, ax = pyplot().subplots()
    return ax


def two_axes(ax: Any, *, owner: str, need: str) -> Any:
    """Return the two Axes of a two-panel plot: ``ax``'s, or those of a new 1x2 pyplot figure when ``ax`` is None.

    Parameters
    ----------
    ax : sequence of two matplotlib.axes.Axes, or None
        Where to draw.
    owner : str
        The plotting function, named in the error message.
    need : str
        What ``ax`` must be, in the error message ("None or two Axes").

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes, shape (2,)

    Raises
    ------
    ValueError
        If ``ax`` does not hold exactly two Axes.
    """
    if ax is None:
        _, ax = pyplot().subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    axes = np.asarray(ax, dtype=object).ravel()
    if axes.size != 2:
        raise ValueError(f"The 'ax' argument of {owner} must be {need}. Got {axes.size} instead.")
    return axes
