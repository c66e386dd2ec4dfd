"""One result vocabulary for every method: :class:`Status`, :class:`MethodResult` and :func:`fits_budget`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

__all__ = ["MethodResult", "Status", "fits_budget"]


class Status(IntEnum):
    """Outcome of a fit or search, with the same meaning in every method (scipy ``OptimizeResult`` style).

    Only :attr:`SUCCESS` counts as success; every other status comes with a message that says why.
    """

    #: A useful (non-constant) model fits the budget, or the solver converged.
    SUCCESS = 0
    #: Only a constant model (one prediction for every row) fits the budget.
    CONSTANT = 1
    #: Nothing fits the budget; the cheapest model found is returned.
    INFEASIBLE = 2
    #: The model found is no better than the trivial (constant or cheapest) one.
    TRIVIAL = 3
    #: Stopped at an iteration, fit or time limit; the best model found so far is returned.
    LIMIT = 4


@dataclass(frozen=True)
class MethodResult:
    """Base of every result object: ``status``, ``message`` and ``success`` defined once.

    Attributes
    ----------
    status : Status
        What happened (see :class:`Status`).
    message : str
        One line saying what happened and, for a status other than ``SUCCESS``, why.
    """

    status: Status
    message: str

    @property
    def success(self) -> bool:
        """True if and only if ``status`` is :attr:`Status.SUCCESS`."""
        return self.status == Status.SUCCESS


def fits_budget(cost: float | np.ndarray, budget: float) -> bool | np.ndarray:
    """Return whether ``cost`` fits ``budget``: the one rule every method uses.

    A cost fits when ``cost <= budget + 1e-9 * max(1, budget)``: the relative slack absorbs the
    float noise of summing per-row costs, and nothing else.

    Parameters
    ----------
    cost : float or numpy.ndarray
        Mean per-row cost(s).
    budget : float
        The budget.

    Returns
    -------
    bool or numpy.ndarray of bool
        Elementwise for an array ``cost``.
    """
    slack = 1e-9 * max(1.0, float(budget))
    out = np.asarray(cost, dtype=np.float64) <= float(budget) + slack
    return bool(out) if out.ndim == 0 else out
