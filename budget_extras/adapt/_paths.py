"""Per-row feature usage of tree models, the acquisition-cost rule and the system's cost report, for Adapt-GBRT.

Adapt-GBRT needs, for every row, the set of features on its paths through the gate ``g``,
the cheap model ``f1`` and the expensive model ``f0``. This module computes those boolean
matrices for LightGBM boosters (through ``dump_model()``) and scikit-learn tree ensembles
(through ``decision_path``) and prices them.

Notes
-----
LightGBM models go through the core: ``TreeEnsemble.from_booster`` and ``features_used``; prices
through ``FeatureCosts.row_cost`` (:func:`as_feature_costs` turns plain per-feature costs into a
``FeatureCosts``). scikit-learn trees and the per-leaf feature sets used while growing the gate
and f1 are computed here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..core._costs import FeatureCosts
from ..core._costs import as_feature_costs as _as_feature_costs
from ..core._ensemble import TreeEnsemble
from ..core._report import CostReport, cost_report, features_used

__all__ = [
    "booster_features_used",
    "booster_leaf_features",
    "routed_features_used",
    "row_cost",
    "sklearn_tree_features_used",
    "system_cost_report",
]


def _tree_leaf_features(node: dict[str, Any], n_features: int) -> np.ndarray:
    """Features on the path to each leaf of one dumped LightGBM tree.

    Returns bool ``(n_leaves, n_features)``; row ``k`` marks the features split on between the
    root and the leaf whose ``leaf_index`` is ``k``. A single-leaf tree has one all-False row.
    """
    if "split_feature" not in node:
        return np.zeros((1, n_features), dtype=bool)
    rows: dict[int, np.ndarray] = {}
    stack: list[tuple[dict[str, Any], np.ndarray]] = [(node, np.zeros(n_features, dtype=bool))]
    while stack:
        cur, path = stack.pop()
        if "split_feature" in cur:
            nxt = path.copy()
            nxt[int(cur["split_feature"])] = True
            stack.append((cur["left_child"], nxt))
            stack.append((cur["right_child"], nxt))
        else:
            rows[int(cur.get("leaf_index", 0))] = path
    out = np.zeros((max(rows) + 1, n_features), dtype=bool)
    for k, path in rows.items():
        out[k] = path
    return out


def booster_leaf_features(booster: Any, *, start_iteration: int = 0) -> list[np.ndarray]:
    """Per tree, the features on the path to each leaf of a LightGBM booster.

    Parameters
    ----------
    booster : lightgbm.Booster
        A trained booster.
    start_iteration : int, default 0
        Skip the trees of the first ``start_iteration`` iterations.

    Returns
    -------
    list of ndarray
        One bool array ``(n_leaves_t, n_features)`` per tree, indexed by LightGBM leaf id.
    """
    dump = booster.dump_model(start_iteration=start_iteration)
    n_features = int(dump["max_feature_idx"]) + 1
    return [_tree_leaf_features(t["tree_structure"], n_features) for t in dump["tree_info"]]


def booster_features_used(booster: Any, X: Any, *, ensemble: TreeEnsemble | None = None) -> np.ndarray:
    """Boolean ``(n_rows, n_features)``: features on each row's paths through all trees.

    Parameters
    ----------
    booster : lightgbm.Booster
        A trained booster.
    X : array-like of shape (n_rows, n_features)
        Rows to route.
    ensemble : TreeEnsemble, optional
        ``TreeEnsemble.from_booster(booster)``, when already built.

    Returns
    -------
    ndarray of bool, shape (n_rows, n_features)
    """
    n_rows = np.shape(X)[0]
    if booster.num_trees() == 0 or n_rows == 0:
        return np.zeros((n_rows, booster.num_feature()), dtype=bool)
    ens = TreeEnsemble.from_booster(booster) if ensemble is None else ensemble
    return np.asarray(features_used(ens, X).toarray(), dtype=bool)


def routed_features_used(
    g_model: Any,
    f1_model: Any,
    X: np.ndarray,
    to_f0: np.ndarray,
    f0_used: Callable[[np.ndarray], np.ndarray],
    *,
    g_ensemble: TreeEnsemble | None = None,
    f1_ensemble: TreeEnsemble | None = None,
) -> np.ndarray:
    """Features an Adapt-GBRT system acquires per row (the unified rule).

    A row answered by f1 pays the features on its paths through the gate and f1; a row sent to
    f0 pays those on its gate paths and the ones f0 reads for it.

    Parameters
    ----------
    g_model, f1_model : lightgbm.Booster
        The gate and f1.
    X : ndarray of shape (n_rows, n_features)
        Rows to account.
    to_f0 : ndarray of bool, shape (n_rows,)
        The rows the gate sends to f0.
    f0_used : callable
        ``f0_used(to_f0)``: the features f0 reads on the rows ``X[to_f0]``, bool ``(k, n_features)``.
    g_ensemble, f1_ensemble : TreeEnsemble, optional
        The boosters as ensembles, when already built.

    Returns
    -------
    ndarray of bool, shape (n_rows, n_features)
    """
    gu = booster_features_used(g_model, X, ensemble=g_ensemble)
    other = np.zeros_like(gu)
    if (~to_f0).any():
        other[~to_f0] = booster_features_used(f1_model, X[~to_f0], ensemble=f1_ensemble)
    if to_f0.any():
        other[to_f0] = f0_used(to_f0)
    return gu | other


def as_feature_costs(costs: Any, n_features: int, feature_names: Any = None) -> FeatureCosts:
    """Return ``costs`` as a :class:`FeatureCosts` (default: 1 per feature).

    The core's one cost input (:func:`budget_extras.core.as_feature_costs`) with AdaptGBRT's
    name in the messages.

    Parameters
    ----------
    costs : FeatureCosts, array-like, dict, pandas.Series, CSV path or None
    n_features : int
        Number of features of the data.
    feature_names : sequence of str, optional
        The data's (or f0's) feature names.

    Returns
    -------
    FeatureCosts
    """
    return _as_feature_costs(costs, n_features=n_features, feature_names=feature_names, owner="AdaptGBRT")


def sklearn_tree_features_used(estimator: Any, X: Any, *, as_input: Any = None) -> np.ndarray:
    """Boolean ``(n_rows, n_features)`` for a fitted scikit-learn tree or tree ensemble.

    Works with ``DecisionTreeClassifier`` and ensembles exposing ``estimators_`` of trees
    (random forests, extra trees, gradient boosting).

    Parameters
    ----------
    estimator : fitted scikit-learn tree model
        Must have ``tree_`` or ``estimators_``.
    X : array-like of shape (n_rows, n_features)
        Rows to route.
    as_input : callable, optional
        ``as_input(X, tree) -> X`` in the form ``tree`` was fitted on (a DataFrame for a tree
        fitted on one, so that scikit-learn does not warn about missing feature names).

    Returns
    -------
    ndarray of bool, shape (n_rows, n_features)
    """
    Xa = np.asarray(X, dtype=np.float32)
    trees = [estimator] if hasattr(estimator, "tree_") else list(np.ravel(estimator.estimators_))
    n_features = Xa.shape[1]
    used = np.zeros((Xa.shape[0], n_features), dtype=bool)
    for tree in trees:
        feat = tree.tree_.feature
        internal = np.flatnonzero(feat >= 0)
        if internal.size == 0:
            continue
        node_to_feat = sp.csr_matrix(
            (np.ones(internal.size), (internal, feat[internal])), shape=(feat.size, n_features)
        )
        path = tree.decision_path(Xa if as_input is None else as_input(Xa, tree))
        used |= (path @ node_to_feat).toarray() > 0
    return used


def row_cost(costs: Any, used: np.ndarray) -> np.ndarray:
    """Acquisition cost of each row of a boolean feature-usage matrix.

    Parameters
    ----------
    costs : FeatureCosts or array-like of shape (n_features,)
        An object with a ``row_cost(used)`` method (the core's ``FeatureCosts``: groups and all)
        or plain per-feature acquisition costs, paid once per row for each used feature.
    used : ndarray of bool, shape (n_rows, n_features)

    Returns
    -------
    ndarray of float64, shape (n_rows,)
    """
    if hasattr(costs, "row_cost"):
        return np.asarray(costs.row_cost(used), dtype=np.float64)
    return np.asarray(used, dtype=np.float64) @ np.asarray(costs, dtype=np.float64)


def _positional(costs: FeatureCosts) -> FeatureCosts:
    """Return ``costs`` without feature names, to charge models trained on arrays by column position."""
    if costs.feature_names is None:
        return costs
    return FeatureCosts(
        costs.lazy,
        coupled=costs.coupled,
        groups=[costs.group_labels[g] if g >= 0 else None for g in costs.group],
        group_cost={lab: float(c) for lab, c in zip(costs.group_labels, costs.group_cost, strict=True)},
        split=costs.split,
        tree=costs.tree,
    )


def system_cost_report(
    X: np.ndarray,
    to_f0: np.ndarray,
    g_ensemble: TreeEnsemble,
    f1_ensemble: TreeEnsemble,
    f0: Any,
    costs: FeatureCosts,
    feature_names: tuple[str, ...],
) -> CostReport:
    """Return the core's cost accounting of an Adapt-GBRT system (gate, f1 and f0) on the rows ``X``.

    Every row evaluates the gate's trees, then f1's trees or f0's. The acquisition follows the
    unified rule (:func:`routed_features_used`); split and tree evaluation costs are counted for
    the LightGBM models (for an ``f0`` that is not a LightGBM model, its evaluation is not
    counted). ``tree_order`` numbers the gate's trees first, then f1's, then f0's.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
        Rows to account.
    to_f0 : ndarray of bool, shape (n_rows,)
        The rows the gate sends to f0.
    g_ensemble, f1_ensemble : TreeEnsemble
        The gate and f1.
    f0 : F0Model or None
        The expensive model; None only when no row goes to it.
    costs : FeatureCosts
        The costs.
    feature_names : tuple of str
        The names in the report.

    Returns
    -------
    CostReport
    """
    pc = _positional(costs)
    reports = [
        cost_report(g_ensemble, X, pc, feature_counts=False),
        cost_report(f1_ensemble, X, pc, n_trees=np.where(to_f0, 0, f1_ensemble.n_trees), feature_counts=False),
    ]
    used = reports[0].used.toarray() | reports[1].used.toarray()
    n_f0_trees = 0
    if f0 is not None and f0._booster is not None:
        f0_ens = f0._tree_ensemble()
        n_f0_trees = f0_ens.n_trees
        reports.append(cost_report(f0_ens, X, pc, n_trees=np.where(to_f0, f0_ens.n_trees, 0), feature_counts=False))
        used |= reports[2].used.toarray()
    elif f0 is not None:
        used[to_f0] |= f0.features_used(X[to_f0])
    used_sp = sp.csr_matrix(used)
    acq = np.asarray(costs.row_cost(used_sp), dtype=np.float64)
    eval_cost = np.sum([r.eval_cost for r in reports], axis=0)
    coupled_features = np.logical_or.reduce([r.coupled_features for r in reports])
    return CostReport(
        used=used_sp,
        acquired=sp.csr_matrix(costs.acquired_features(used_sp)),
        feature_counts=None,
        acquisition_cost=acq,
        splits_evaluated=np.sum([r.splits_evaluated for r in reports], axis=0),
        trees_evaluated=np.sum([r.trees_evaluated for r in reports], axis=0),
        eval_cost=eval_cost,
        total_cost=acq + eval_cost,
        coupled_cost=float(np.asarray(costs.coupled)[coupled_features].sum()),
        coupled_features=coupled_features,
        tree_order=np.arange(g_ensemble.n_trees + f1_ensemble.n_trees + n_f0_trees, dtype=np.int64),
        feature_names=tuple(feature_names),
        costs=costs,
    )
