"""The ``budget`` search of CSTC: one tree per ``lam`` on shared weak learners, then the choice.

:func:`fit_budget` fits one tree per ``lam`` (increasing; the scan stops at the first constant
tree), measures each on the validation rows and keeps, through :func:`pick_lam`, the best
validation score among the trees whose mean validation cost fits the budget.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.base import clone

from ..core._status import Status, fits_budget
from ._results import CSTCResult

__all__: list[str] = []

FloatArray = npt.NDArray[np.float64]


def fit_budget(est: Any, X: Any, y: Any, X_valid: Any, y_valid: Any, scoring: tuple[str, Any]) -> Any:
    """Fit ``est`` (a CSTC with ``budget``) as the tree of the best ``lam`` within the budget; return it.

    ``scoring``: the validation score's ``(name, score(cstc, X, y))``, higher is better.
    """
    score_name, score_fn = scoring
    lams = np.sort(np.unique(np.asarray(
        np.geomspace(1e-4, 1.0, 12) if est.lams is None else est.lams, dtype=np.float64
    ).reshape(-1)))
    budget = float(est.budget)
    costs, booster = est.costs, est.booster
    path: list[dict[str, float]] = []
    fits: list[Any] = []
    for lam in lams:
        m = clone(est).set_params(budget=None, lam=float(lam))
        m._fit_one(X, y, costs, booster, X_valid, y_valid)
        booster = m.booster_  # the weak learners are trained once
        constant = not bool((m.coef_[m.active_] != 0).any())
        cost = float(m.cost_report(X_valid).total_cost.mean())
        path.append({"lam": float(lam), "cost": cost, "score": score_fn(m, X_valid, y_valid),
                     "constant": float(constant)})
        fits.append(m)
        if constant:  # a larger lam only gives the same constant tree
            break
    i, status, msg = pick_lam(path, lams, budget, score_name)
    if status != Status.SUCCESS:
        warnings.warn(f"CSTC: {msg}.", UserWarning, stacklevel=5)
    chosen = fits[i]
    for k, v in vars(chosen).items():
        if k.endswith("_") or k.startswith("_"):
            setattr(est, k, v)
    r = chosen.result_
    est.result_ = CSTCResult(status=status, message=msg, fun=r.fun, nit=r.nit, history=r.history,
                             n_pruned=r.n_pruned, lam=float(lams[i]), path=tuple(path), scoring=score_name)
    return est


def pick_lam(
    path: list[dict[str, float]], lams: FloatArray, budget: float, score_name: str
) -> tuple[int, Status, str]:
    """Choose among the ``budget`` search's trees of ``path``: return (index, status, message).

    The best validation score among the trees whose mean validation cost fits the budget (ties:
    the cheaper); the cheapest tree when none fits (``INFEASIBLE``); ``CONSTANT`` / ``TRIVIAL``
    when the choice is a tree that uses no weak learner.
    """
    costs_v = np.array([p["cost"] for p in path])
    scores = np.array([p["score"] for p in path])
    ok = np.asarray(fits_budget(costs_v, budget), dtype=bool)
    if not ok.any():
        i = int(np.argmin(costs_v))
        return i, Status.INFEASIBLE, (
            f"no lam tried is within budget {budget:g}; kept the cheapest tree (lam={lams[i]:.4g}, mean "
            f"validation cost {costs_v[i]:.4g}, validation {score_name} {scores[i]:.4g})"
        )
    cand = np.flatnonzero(ok)
    best = scores[cand].max()
    top = cand[scores[cand] >= best]
    i = int(top[np.argmin(costs_v[top])])
    nonconst = [j for j in cand if not path[j]["constant"]]
    if path[i]["constant"] and not nonconst:
        cheapest = min((p["cost"] for p in path if not p["constant"]), default=float("nan"))
        return i, Status.CONSTANT, (
            f"only a constant tree (no weak learner, validation {score_name} {scores[i]:.4g}) is within "
            f"budget {budget:g}; the cheapest non-constant tree tried costs {cheapest:.4g}"
        )
    if path[i]["constant"]:
        j = max(nonconst, key=lambda j: scores[j])
        return i, Status.TRIVIAL, (
            f"the best validation {score_name} within budget {budget:g} ({scores[i]:.4g}) is a constant "
            f"tree (no weak learner); the best non-constant one scores {scores[j]:.4g} at cost "
            f"{costs_v[j]:.4g} (lam={lams[j]:.4g}); a ranking score such as scoring='roc_auc' "
            "may prefer it"
        )
    return i, Status.SUCCESS, (
        f"best validation {score_name} {scores[i]:.4g} within budget {budget:g}: lam={lams[i]:.4g}, "
        f"mean validation cost {costs_v[i]:.4g}"
    )
