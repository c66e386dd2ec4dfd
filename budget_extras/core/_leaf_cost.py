"""Per-row cost from LightGBM's own leaf assignment (``Booster.predict(X, pred_leaf=True)``).

The same accounting as :func:`budget_extras.cost_report` when every row evaluates every tree,
for callers that already let LightGBM route the rows (its C++ predictor, multi-threaded): each
feature or group is paid once per row for the features on the row's paths, plus the split
evaluation costs on those paths and the per-tree cost.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._costs import FeatureCosts
from ._ensemble import TreeEnsemble
from ._report import bits_to_bool, path_feature_bits, path_feature_counts

__all__ = ["row_costs_from_leaves"]

_CHUNK = 8192


def _leaf_tables(ens: TreeEnsemble, split_cost: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (tree, LightGBM leaf index): node id; per node: path feature bits (one zero row more) and path split cost."""
    P = path_feature_counts(ens)
    bits = path_feature_bits(P)
    path_cost = np.asarray(P @ split_cost, dtype=np.float64).ravel()
    leaves = np.flatnonzero(ens.is_leaf)
    n_trees = int(ens.tree_offset.size - 1)
    lut = np.full((n_trees, int(ens.leaf_index[leaves].max()) + 1 if leaves.size else 1), -1, dtype=np.int64)
    lut[ens.node_tree[leaves], ens.leaf_index[leaves]] = leaves
    return lut, bits, path_cost


def row_costs_from_leaves(
    ensemble: TreeEnsemble, leaves: npt.ArrayLike, costs: FeatureCosts
) -> npt.NDArray[np.float64]:
    """Return each row's total prediction cost from its leaf in every tree.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model (``TreeEnsemble.from_booster(booster)``).
    leaves : array-like of int, shape (n_rows, n_trees)
        ``booster.predict(X, pred_leaf=True)`` for the same model: LightGBM's leaf index of
        each row in each tree.
    costs : FeatureCosts
        The cost model, aligned with the model's features.

    Returns
    -------
    numpy.ndarray of float64, shape (n_rows,)
        Equal to ``cost_report(ensemble, X, costs).total_cost`` (acquisition + evaluation cost).

    Raises
    ------
    ValueError
        If ``leaves`` does not have one column per tree or names a leaf the model lacks.
    """
    L = np.asarray(leaves)
    n_trees = int(ensemble.tree_offset.size - 1)
    if L.ndim != 2 or L.shape[1] != n_trees:
        raise ValueError(
            f"The 'leaves' argument must have shape (n_rows, {n_trees}) (pred_leaf=True). Got {L.shape}."
        )
    lut, bits, path_cost = _leaf_tables(ensemble, np.asarray(costs.split, dtype=np.float64))
    if L.size and (L.min() < 0 or L.max() >= lut.shape[1]):
        raise ValueError("The 'leaves' argument names a leaf the model does not have.")
    out = np.empty(L.shape[0], dtype=np.float64)
    cols = np.arange(n_trees)
    for a in range(0, L.shape[0], _CHUNK):
        nodes = lut[cols, L[a : a + _CHUNK]]
        if (nodes < 0).any():
            raise ValueError("The 'leaves' argument names a leaf the model does not have.")
        words = np.bitwise_or.reduce(bits[nodes], axis=1)
        used = bits_to_bool(words, ensemble.n_features)
        out[a : a + _CHUNK] = costs.row_cost(used) + path_cost[nodes].sum(axis=1) + costs.tree * n_trees
    return out
