"""The one door to matplotlib: imported when a plot is drawn, never when budget_extras is imported."""

from __future__ import annotations

from typing import Any

__all__ = ["INSTALL_HINT", "new_axes", "pyplot"]

#: What to install when matplotlib is missing.
INSTALL_HINT = "pip install budget-extras[plot]"


def pyplot() -> Any:
    """Return ``matplotlib.pyplot``.

    Raises
    ------
    ImportError
        If matplotlib is not installed; the message names the extra to install.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"budget_extras' plots need matplotlib, which is not installed: {INSTALL_HINT}"
        ) from exc
    return plt


def new_axes(ax: Any = None) -> Any:
    """Return ``ax``, or the Axes of a new figure when ``ax`` is None (matplotlib checked either way)."""
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots()
    return ax
