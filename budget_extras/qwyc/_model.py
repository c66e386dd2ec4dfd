"""The model a QWYC plan is fit for: its checks, per-iteration outputs, iteration costs and the tree walk."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from ..core._costs import FeatureCosts, as_feature_costs
from ..core._ensemble import TreeEnsemble
from ..core._predict import apply_prepared, prepare_values
from ..core._validation import check_model_text
from ._format import QWYCPlan, lf_lines, original_model_text, read_qwyc_plan

__all__: list[str] = []

F64 = npt.NDArray[np.float64]

CLASSIFICATION_OBJECTIVES = ("binary", "cross_entropy", "xentropy", "multiclass", "multiclassova")


def _header_value(text: str, key: str) -> str | None:
    """Value of ``key=`` in the header of LightGBM model text (None when absent)."""
    for line in text.split("Tree=", 1)[0].split("\n"):
        if line.startswith(key + "="):
            return line[len(key) + 1 :].strip()
    return None


def model_text(model: Any) -> str:
    """LightGBM model text of ``model`` (without a QWYC plan), refused unless QWYC can reorder it.

    Parameters
    ----------
    model : lightgbm.Booster, LGBMModel, TreeEnsemble, path or model text
        An additive binary or multiclass classifier without linear trees.

    Returns
    -------
    str
    """
    text = lf_lines(check_model_text(model))
    if read_qwyc_plan(text) is not None:
        text = original_model_text(text)
    if "average_output" in text.split("Tree=", 1)[0].split("\n"):
        raise ValueError("QWYC needs an additive ensemble; random-forest models (average_output) are not supported.")
    if "is_linear=1" in text:
        raise ValueError("QWYC does not support linear trees (linear_tree=true).")
    objective = _header_value(text, "objective")
    if objective is not None and objective.split(" ")[0] not in CLASSIFICATION_OBJECTIVES:
        raise ValueError(
            "The 'model' argument of QWYC must be a binary or multiclass classifier "
            f"(objective one of {CLASSIFICATION_OBJECTIVES}): early exit decides a label. "
            f"Got objective {objective.split(' ')[0]!r}."
        )
    return text


def per_leaf(ens: TreeEnsemble, values: npt.NDArray[Any]) -> F64:
    """``(n_trees, max_leaves)`` table: ``values`` of the leaf with LightGBM leaf id ``j`` of tree ``t``.

    Parameters
    ----------
    ens : TreeEnsemble
        The model.
    values : ndarray, shape (n_nodes,)
        A value per node of ``ens``.

    Returns
    -------
    ndarray of float64
    """
    leaf = np.flatnonzero(ens.leaf_index >= 0)
    table = np.zeros((ens.n_trees, int(ens.leaf_index.max()) + 1))
    table[ens.node_tree[leaf], ens.leaf_index[leaf]] = values[leaf]
    return table


def outputs(booster: Any, leaf_table: F64, k: int, X: F64) -> F64:
    """Per-iteration raw outputs of ``X``, shape ``(n_rows, n_iterations, k)``, from LightGBM's leaves.

    Parameters
    ----------
    booster : lightgbm.Booster
        The model (its ``pred_leaf`` runs in C++).
    leaf_table : ndarray of float64
        Leaf values by tree and LightGBM leaf id (:func:`per_leaf`).
    k : int
        Trees per iteration.
    X : ndarray of float64, shape (n_rows, n_features)
        Rows.

    Returns
    -------
    ndarray of float64
    """
    leaves = np.asarray(booster.predict(X, pred_leaf=True))
    leaves = leaves.reshape(leaves.shape[0], -1)
    F = _leaf_values(np.ascontiguousarray(leaves), np.ascontiguousarray(leaf_table, dtype=np.float64))
    return F.reshape(F.shape[0], -1, k)


@njit(cache=True)
def _leaf_values(leaves: npt.NDArray[np.integer[Any]], leaf_table: F64) -> F64:  # pragma: no cover - compiled
    """``out[i, t] = leaf_table[t, leaves[i, t]]``: the value of each row's leaf in every tree."""
    n, t = leaves.shape
    out = np.empty((n, t))
    for i in range(n):
        for j in range(t):
            out[i, j] = leaf_table[j, leaves[i, j]]
    return out


def is_feature_costs_form(costs: Any) -> bool:
    """Return True for the forms that give costs per feature (not per iteration)."""
    import pandas as pd

    return isinstance(costs, FeatureCosts | dict | pd.Series | os.PathLike) or (
        isinstance(costs, str) and costs != "splits"
    )


def feature_costs(ens: TreeEnsemble, costs: Any) -> FeatureCosts:
    """Feature costs in any accepted form as the core's FeatureCosts for ``ens``."""
    return as_feature_costs(costs, n_features=ens.n_features, feature_names=ens.feature_names, owner="QWYC")


def iteration_costs(costs: Any, ens: TreeEnsemble, booster: Any, X: F64) -> F64:
    """Cost of each iteration under the estimator's ``costs`` on calibration rows ``X``.

    Parameters
    ----------
    costs : None, array-like, "splits" or feature costs
        The estimator's ``costs``.
    ens : TreeEnsemble
        The model.
    booster : lightgbm.Booster
        The same model, for LightGBM's leaf assignment.
    X : ndarray of float64, shape (n_rows, n_features)
        Calibration rows.

    Returns
    -------
    ndarray of float64, shape (n_iterations,)
    """
    k = ens.num_tree_per_iteration
    n_iter = ens.n_trees // k
    if costs is None:
        return np.ones(n_iter)
    if isinstance(costs, str) and costs == "splits":
        leaves = np.asarray(booster.predict(X, pred_leaf=True), dtype=np.int64).reshape(len(X), -1)
        depth = per_leaf(ens, ens.depth)
        per_tree = depth[np.arange(leaves.shape[1])[None, :], leaves].mean(axis=0)
        return np.maximum(per_tree.reshape(n_iter, -1).sum(axis=1), 1e-12)
    if is_feature_costs_form(costs):  # the core's exact cost accounting
        from ..core._report import cost_report

        fc = feature_costs(ens, costs)
        out = np.empty(n_iter)
        for it in range(n_iter):
            rep = cost_report(ens, X, fc, tree_order=np.arange(it * k, it * k + k), n_trees=k, feature_counts=False)
            out[it] = float(np.mean(rep.total_cost)) + float(rep.coupled_cost)
        return np.maximum(out, 1e-12)
    c = np.asarray(costs, dtype=np.float64)
    if c.shape != (n_iter,) or not np.all(np.isfinite(c)) or np.any(c <= 0):
        raise ValueError(
            f"The 'costs' parameter of QWYC must hold {n_iter} positive finite per-iteration "
            f"costs. Got an array of shape {c.shape} instead."
        )
    return c


def walk(ens: TreeEnsemble, X: F64, plan: QWYCPlan) -> tuple[F64, npt.NDArray[np.int64]]:
    """Walk the trees of ``plan``'s positions for the rows still active, position by position.

    Parameters
    ----------
    ens : TreeEnsemble
        The model.
    X : ndarray of float64, shape (n_rows, n_features)
        Rows (checked).
    plan : QWYCPlan
        The plan.

    Returns
    -------
    scores : ndarray of float64, shape (n_rows, n_classes)
        Partial raw scores at each row's exit.
    done : ndarray of int64, shape (n_rows,)
        Positions evaluated per row.
    """
    k = ens.num_tree_per_iteration
    Xp = prepare_values(X)
    n = X.shape[0]
    s = np.zeros((n, k))
    done = np.zeros(n, np.int64)
    active = np.arange(n)
    last = plan.n_positions - 1
    for r, it in enumerate(plan.order.tolist()):
        Xa = Xp[active]
        for c in range(k):  # the core's walker, one tree, active rows only
            s[active, c] += ens.value[apply_prepared(ens, Xa, trees=np.array([it * k + c]))[:, 0]]
        if r == last:
            done[active] = r + 1
            break
        sa = s[active]
        if k == 1:
            stop = (sa[:, 0] > plan.eps_pos[r]) | (sa[:, 0] < plan.eps_neg[r])
        else:
            assert plan.eps_margin is not None
            part = np.partition(sa, -2, axis=1)
            stop = (part[:, -1] - part[:, -2]) > plan.eps_margin[r]
        done[active[stop]] = r + 1
        active = active[~stop]
        if active.size == 0:
            break
    return s, done
