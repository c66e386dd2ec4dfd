"""What a :class:`~budget_extras.CostReport` says, drawn: who pays for which feature, and how much rows pay."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._mpl import new_axes, two_axes

__all__ = ["plot_cost_report", "plot_feature_share", "plot_row_costs"]


def _check(report: Any, owner: str) -> None:
    if not (hasattr(report, "total_cost") and hasattr(report, "feature_frame")):
        raise TypeError(
            f"The 'report' argument of {owner} must be a budget_extras.CostReport (from cost_report(...) or "
            f"an estimator's cost_report(X)). Got {type(report).__name__} instead."
        )


def plot_feature_share(report: Any, ax: Any = None, *, top: int | None = 20) -> Any:
    """Bar chart of the share of rows paying for each feature.

    Parameters
    ----------
    report : CostReport
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    top : int or None, default 20
        Show the ``top`` features with the largest share (None: every feature). Features no row
        pays for are left out.

    Returns
    -------
    matplotlib.axes.Axes
        One bar per feature (gid ``"feature_share"``): height
        ``report.feature_frame()["share_paying"]``, by decreasing share; tick labels the
        feature names.
    """
    _check(report, "plot_feature_share")
    if top is not None:  # numpy's rule, as the parameter table's: a bool is not an integer, np.int64 is
        if np.ndim(top) != 0 or not np.issubdtype(np.asarray(top).dtype, np.integer):
            raise TypeError(f"The 'top' parameter of plot_feature_share must be an integer >= 1 or None. Got {top!r}.")
        if top < 1:
            raise ValueError(f"The 'top' parameter of plot_feature_share must be an integer >= 1 or None. Got {top!r}.")
    ax = new_axes(ax)
    ff = report.feature_frame()
    ff = ff[ff["share_paying"] > 0].sort_values("share_paying", ascending=False, kind="stable")
    if top is not None:
        ff = ff.iloc[:top]
    x = np.arange(len(ff))
    ax.bar(x, ff["share_paying"].to_numpy(), gid="feature_share")
    ax.set_xticks(x)
    ax.set_xticklabels([str(n) for n in ff.index], rotation=60, ha="right", fontsize="small")
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of rows paying")
    ax.set_title("feature acquisition")
    return ax


def plot_row_costs(report: Any, ax: Any = None, *, bins: Any = 30) -> Any:
    """Histogram of the per-row total cost with the mean and the 90th percentile marked.

    Parameters
    ----------
    report : CostReport
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    bins : int or sequence, default 30
        Passed to ``Axes.hist``.

    Returns
    -------
    matplotlib.axes.Axes
        The histogram of ``report.total_cost`` (gid ``"row_costs"``) and vertical lines at its
        mean (gid ``"mean"``) and 90th percentile (gid ``"p90"``).
    """
    _check(report, "plot_row_costs")
    ax = new_axes(ax)
    cost = np.asarray(report.total_cost, dtype=np.float64)
    ax.hist(cost, bins=bins, color="C0", alpha=0.8, gid="row_costs")
    if cost.size:
        mean, p90 = float(cost.mean()), float(np.percentile(cost, 90))
        ax.axvline(mean, color="black", lw=1.5, label=f"mean {mean:.4g}", gid="mean")
        ax.axvline(p90, color="red", ls="--", lw=1.5, label=f"90th percentile {p90:.4g}", gid="p90")
        ax.legend(fontsize="small")
    ax.set_xlabel("per-row cost (acquisition + evaluation)")
    ax.set_ylabel("rows")
    return ax


def plot_cost_report(report: Any, ax: Any = None, *, top: int | None = 20, bins: Any = 30) -> Any:
    """Two panels: the share of rows paying for each feature, and the per-row cost histogram.

    Parameters
    ----------
    report : CostReport
    ax : sequence of two matplotlib.axes.Axes, optional
        Where to draw the two panels; a new figure with two side-by-side axes when None.
    top : int or None, default 20
        See :func:`plot_feature_share`.
    bins : int or sequence, default 30
        See :func:`plot_row_costs`.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes, shape (2,)
        ``[feature share panel, row cost panel]``.
    """
    _check(report, "plot_cost_report")
    axes = two_axes(ax, owner="plot_cost_report", need="None or two Axes")
    plot_feature_share(report, axes[0], top=top)
    plot_row_costs(report, axes[1], bins=bins)
    return axes
