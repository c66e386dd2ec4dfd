"""Leaves of a (pruned) forest: where LightGBM routes rows, where a collapse moves them, their scores."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core._ensemble import TreeEnsemble

__all__ = ["leaf_nodes", "pruned_leaf_map", "raw_from_leaves"]


def raw_from_leaves(forest: TreeEnsemble, leaves: np.ndarray) -> np.ndarray:
    """Raw scores from the (pruned) leaf of every row in every tree.

    As ``Booster.predict(raw_score=True)``: the sum of the trees' outputs per class, also for
    random forests (LightGBM averages a forest's outputs only when it transforms them).
    """
    vals = forest.value[leaves]
    k = forest.num_tree_per_iteration
    if k == 1:
        return vals.sum(axis=1)
    return np.stack([vals[:, forest.tree_class == c].sum(axis=1) for c in range(k)], axis=1)


def leaf_nodes(forest: TreeEnsemble, booster: Any, X: Any) -> np.ndarray:
    """Global leaf node reached by every row in every tree, routed by LightGBM itself.

    ``booster.predict(X, pred_leaf=True)`` gives LightGBM's leaf id per tree; the core's
    ``leaf_index`` maps it to the global node id, so missing values and categorical splits
    follow LightGBM's semantics by construction.

    Parameters
    ----------
    forest : TreeEnsemble
        The model ``booster`` holds.
    booster : lightgbm.Booster
    X : array-like of shape (n_rows, n_features)

    Returns
    -------
    ndarray of int64, shape (n_rows, n_trees)
    """
    X = forest.check_X(X)
    leaf = np.asarray(booster.predict(X, pred_leaf=True), dtype=np.int64)
    if leaf.ndim == 1:
        leaf = leaf[:, None]
    leaves = np.flatnonzero(forest.is_leaf)
    tree = forest.node_tree[leaves]
    width = int(np.bincount(tree, minlength=forest.n_trees).max(initial=1))
    table = np.full((forest.n_trees, width), -1, dtype=np.int64)
    table[tree, forest.leaf_index[leaves]] = leaves
    return table[np.arange(forest.n_trees)[None, :], leaf]


def pruned_leaf_map(forest: TreeEnsemble, collapsed: np.ndarray) -> np.ndarray:
    """Map every node to the node that is its leaf after collapsing ``collapsed`` (itself if none).

    A node inside the subtree of a collapsed node maps to its top-most collapsed ancestor.
    """
    target = np.arange(forest.n_nodes, dtype=np.int64)
    # deepest first, so that an enclosing collapsed subtree (smaller pre-order index) wins
    for c in np.unique(np.asarray(collapsed, dtype=np.int64))[::-1]:
        target[c : forest.subtree_end[c]] = c
    return target
