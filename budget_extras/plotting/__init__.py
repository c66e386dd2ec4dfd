"""Plots and tables of the score-cost trade-off (matplotlib: ``pip install budget-extras[plot]``).

Importing this package does not import matplotlib; a plot function does, and raises an
ImportError naming the extra when it is missing. Every plot takes ``ax=None`` (a new figure)
and returns what it drew on. The ``*_frame`` functions need only pandas.
"""

from ._cost import plot_cost_report, plot_feature_share, plot_row_costs
from ._frames import adapt_frame, budgetprune_frame, cstc_frame, frontier_frame, pareto_front
from ._frontier import plot_frontier
from ._qwyc import plot_qwyc, plot_qwyc_alpha, plot_qwyc_trees, qwyc_alpha_frame

__all__ = [
    "adapt_frame",
    "budgetprune_frame",
    "cstc_frame",
    "frontier_frame",
    "pareto_front",
    "plot_cost_report",
    "plot_feature_share",
    "plot_frontier",
    "plot_qwyc",
    "plot_qwyc_alpha",
    "plot_qwyc_trees",
    "plot_row_costs",
    "qwyc_alpha_frame",
]
