"""Fitted state in one step: every estimator's ``fit`` works on a fresh instance and swaps the result in.

scikit-learn's estimators validate, compute into locals and assign the fitted attributes at the
end, so that a ``fit`` that raises leaves the earlier fit usable. The methods' searches here
are long and keep their working state on the estimator (candidate models, scorers, progress
bars); rather than thread that state through every helper, :func:`fit_in_one_step` runs the
whole fit on a fresh instance with the same parameters (the private search object) and, only
when it returns, replaces the estimator's fitted state by the new instance's, all at once. The
search's working state (private attributes not declared as fitted) is dropped with it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

from ._params import check_params

__all__ = ["fit_in_one_step", "fitted_state"]

E = TypeVar("E")


def fitted_state(est: Any) -> dict[str, Any]:
    """Return the fitted state of ``est``: its attributes ending in ``_`` and the declared private ones.

    The private attributes a fitted estimator needs (caches, input specs) are named by the class
    attribute ``_fitted_private`` (a tuple of names; empty by default).

    Parameters
    ----------
    est : BaseEstimator
        A budget_extras estimator.

    Returns
    -------
    dict
        Attribute name to value.
    """
    private = set(getattr(type(est), "_fitted_private", ()))
    return {
        k: v
        for k, v in vars(est).items()
        if (k.endswith("_") and not k.startswith("__")) or k in private
    }


def fit_in_one_step(est: E, fit: Callable[[E], object], *, from_fitted: bool = False) -> E:
    """Run ``fit`` on a private copy of ``est``; on success replace ``est``'s fitted state by the copy's.

    The parameters of ``est`` are checked first against its class's ``_parameter_constraints``
    (:func:`~budget_extras.core._params.check_params`). If that or ``fit`` raises, ``est`` is
    untouched: an earlier fit stays usable, an unfitted estimator stays unfitted.

    Parameters
    ----------
    est : BaseEstimator
        The estimator whose ``fit`` (or refit step) this is.
    fit : callable
        ``fit(work)`` computes on ``work`` and may set any attribute of it.
    from_fitted : bool, default False
        False: ``work`` is a fresh instance with ``est``'s parameters (a full fit). True:
        ``work`` starts as a shallow copy of ``est`` with its fitted state (a step that updates
        an existing fit, such as a recalibration).

    Returns
    -------
    est
        The same object, with the new fitted state.
    """
    check_params(est)
    if from_fitted:
        work = copy.copy(est)
    else:
        work = type(est)(**est.get_params(deep=False))  # type: ignore[attr-defined]
    fit(work)
    new = fitted_state(work)
    for name in fitted_state(est):
        delattr(est, name)
    for name, value in new.items():
        setattr(est, name, value)
    return est
