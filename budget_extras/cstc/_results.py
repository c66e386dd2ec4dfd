"""What a fitted CSTC returns: its result object, its cost report and its scikit-learn views for scorers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from ..core._costs import FeatureCosts
from ..core._report import CostReport, features_used
from ..core._scoring import resolve_scoring
from ..core._status import MethodResult
from ._features import _CostModel, _leaf_rows, _WeakLearners
from ._objective import _Structure

__all__ = ["CSTCCostReport", "CSTCResult"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class CSTCResult(MethodResult):
    """Outcome of the CSTC optimization (scipy-style result object).

    Attributes
    ----------
    status : Status
        Without ``budget``: ``SUCCESS`` when the relative decrease of the objective fell below
        ``tol``, ``LIMIT`` when ``n_cycles`` was reached. With ``budget``, that of the search:
        ``SUCCESS`` (the best validation score within the budget, a tree that uses weak
        learners), ``INFEASIBLE`` (no ``lam`` tried is within the budget: the cheapest tree is
        returned), ``CONSTANT`` (only a constant tree, one that uses no weak learner, is within
        the budget) or ``TRIVIAL`` (the best validation score within the budget is a constant
        tree's, though non-constant trees are within it); all but ``SUCCESS`` also warn.
    success : bool
        ``status is Status.SUCCESS``.
    message : str
        Human-readable description of ``status``.
    fun : float
        Final value of the relaxed objective (before pruning and fine-tuning).
    nit : int
        Optimization cycles over all nodes (after the top-down initialization).
    history : tuple of float
        Relaxed objective after the initialization and after every cycle.
    n_pruned : int
        Nodes removed by validation pruning.
    lam : float or None
        The ``lam`` of the returned tree (``budget=`` mode: the one selected; else ``lam``).
    path : tuple of dict
        ``budget=`` mode: every ``lam`` tried, in increasing order, with its mean validation
        cost (``"cost"``), validation score (``"score"``) and whether it uses no weak learner
        (``"constant"``, 1.0 or 0.0). Empty otherwise.
    scoring : str or None
        ``budget=`` mode: the name of the validation score.
    """

    fun: float
    nit: int
    history: tuple[float, ...]
    n_pruned: int
    lam: float | None = None
    path: tuple[dict[str, float], ...] = ()
    scoring: str | None = None


@dataclass(frozen=True, eq=False)
class CSTCCostReport(CostReport):
    """The core's :class:`~budget_extras.CostReport` of a fitted CSTC tree.

    Every field is the core's (``used``: features on the row's paths through the weak
    learners with nonzero weight on the CSTC nodes it visits; ``acquired``: those plus the
    other members of the groups bought).
    """


def tree_cost_report(
    wl: _WeakLearners, cm: _CostModel, leaf_eval: FloatArray, coef: FloatArray, active: npt.NDArray[np.bool_],
    depth: int, Xa: FloatArray, leaf: npt.NDArray[np.int64], feature_names: tuple[str, ...],
) -> CSTCCostReport:
    """Per-row cost of the rows ``Xa`` that reach the CSTC leaves ``leaf``.

    A row evaluates every weak learner with nonzero weight on a node of its path, acquires the
    features tested on its own path through each such tree and pays each tree's evaluation
    cost (``leaf_eval`` of the tree's leaf it reaches). The acquisition and coupled-cost rules
    are the core's (:meth:`CostReport.from_usage`).
    """
    n = Xa.shape[0]
    leaf_rows = _leaf_rows(wl, Xa)
    nz = coef != 0
    st = _Structure(depth, active)
    used = sp.lil_matrix((n, wl.n_features), dtype=bool)
    eval_cost = np.zeros(n)
    n_trees = np.zeros(n, dtype=np.int64)
    splits = np.zeros(n, dtype=np.int64)
    tree_depth = wl.ensemble.depth
    for r, l_node in enumerate(st.leaves):
        rows = np.flatnonzero(leaf == l_node)
        order = np.flatnonzero(nz[st.path[r]].any(axis=0))
        if rows.size == 0 or order.size == 0:
            continue
        # the core's path rule: features on each row's paths through the trees it evaluates
        used[rows] = features_used(wl.ensemble, Xa[rows], tree_order=order)
        reached = leaf_rows[np.ix_(rows, order)]
        eval_cost[rows] = leaf_eval[reached].sum(axis=1)
        splits[rows] = tree_depth[reached].sum(axis=1)
        n_trees[rows] = order.size
    used_csr = sp.csr_matrix(used.tocsr(), dtype=bool)
    source = cm.source if isinstance(cm.source, FeatureCosts) else None
    return CSTCCostReport.from_usage(  # type: ignore[return-value]
        wl.ensemble,
        source,
        used_csr,
        eval_cost=eval_cost,
        splits_evaluated=splits,
        trees_evaluated=n_trees,
        tree_order=np.flatnonzero(nz[active].any(axis=0)),  # the weak learners some node uses
        acquisition_cost=cm.acquisition_cost(used_csr) if source is None else None,  # a custom row_cost
        feature_names=feature_names,
    )


class _CSTCClassifierView(ClassifierMixin, BaseEstimator):
    """A fitted binary CSTC seen as a scikit-learn classifier (for scorers)."""

    def __init__(self, model: Any = None) -> None:
        self.model = model

    @property
    def classes_(self) -> Any:
        return self.model.classes_

    def predict(self, X: Any) -> Any:
        return self.model.predict(X)

    def predict_proba(self, X: Any) -> FloatArray:
        return self.model.predict_proba(X)

    def decision_function(self, X: Any) -> FloatArray:
        return self.model.decision_function(X)


class _CSTCRegressorView(RegressorMixin, BaseEstimator):
    """A fitted regression CSTC seen as a scikit-learn regressor (for scorers)."""

    def __init__(self, model: Any = None) -> None:
        self.model = model

    def predict(self, X: Any) -> Any:
        return self.model.predict(X)


def _accuracy(view: Any, X: Any, y: Any) -> float:
    return float(np.mean(view.predict(X) == y))


def _neg_mse(view: Any, X: Any, y: Any) -> float:
    return -float(np.mean((view.predict(X) - np.asarray(y, dtype=np.float64)) ** 2))


def _resolve_scoring(scoring: Any, task: str) -> tuple[str, Any]:
    """``(name, score(cstc, X, y))`` of CSTC's ``scoring`` (higher is better)."""
    if task == "binary":
        default, view = ("accuracy", _accuracy), _CSTCClassifierView
    else:
        default, view = ("neg_mean_squared_error", _neg_mse), _CSTCRegressorView
    name, score = resolve_scoring(scoring, owner="CSTC", default=default, view=view)
    return name, lambda m, X, y: score(m, X, np.asarray(y).reshape(-1))
