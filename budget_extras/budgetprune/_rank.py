"""FeatureDropRefit's ranking: each used feature dropped alone from the unpruned model, no refit.

The ranking's key is the loss rise per unit of cost saved. Its loss rise is an average over
training rows and is noisy on a small sample (the order of features with close keys changes
with the sample, and with it the fills' models), so it is measured on as many rows as the
fit-time plan allows (:func:`rank_rows`); the cost saved varies much less from row to row and
is measured on the first ``cost_rows`` of them.
"""

from __future__ import annotations

import numpy as np

from ..core._costs import FeatureCosts
from ..core._ensemble import TreeEnsemble
from ._drop_refit import copy_rows, drop_forcing, route
from ._error_terms import mean_loss
from ._usage import feature_counts, path_tables, usage_cost, usage_cost_delta

__all__ = ["RANK_SHARE", "drop_alone", "rank_rows"]

#: The ranking re-routes at most this many (row, tree) pairs per (training row, tree) of the model
#: (:func:`rank_rows`): measured, 0.2 to 0.4 of a training on adult, letter, thyroid and adult one-hot.
RANK_SHARE = 3


def rank_rows(ensemble: TreeEnsemble, n_train: int, n_search: int, least: int) -> int:
    """Return how many training rows the ranking measures the loss rise on.

    Dropping a feature re-routes each ranking row through every tree that splits on it, so the
    ranking's work is its rows times the model's (tree, feature) pairs with a split; training the
    model took about its training rows times its trees. The ranking takes as many rows as keep its
    work within ``RANK_SHARE`` times that: more where the model has few features per tree or many
    training rows, at least ``least``, at most every search row. It depends on the model and the
    row counts only (the same rows on every machine).

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model.
    n_train : int
        Its training rows (all of them, the refit's).
    n_search : int
        The search's training rows (``n_train``, or a sample of them).
    least : int
        The fewest rows (when the search has as many).

    Returns
    -------
    int
    """
    internal = ~ensemble.is_leaf
    keys = np.asarray(ensemble.node_tree)[internal].astype(np.int64) * max(ensemble.n_features, 1)
    pairs = max(int(np.unique(keys + ensemble.feature[internal]).size), 1)
    return int(min(n_search, max(least, RANK_SHARE * n_train * ensemble.n_trees // pairs)))


def drop_alone(
    ensemble: TreeEnsemble, Xr: np.ndarray, yr: np.ndarray, leaves: np.ndarray, raw: np.ndarray,
    features: np.ndarray, costs: FeatureCosts, split: np.ndarray, cost_rows: int, *, counted: bool = False,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Drop each of ``features`` alone from the unforced model: the mean loss on the rows, the cost on the first ones.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model (its leaf values).
    Xr : ndarray of float64, shape (n_features, n_rows)
        Prepared rows (:func:`~budget_extras.budgetprune._drop_refit.prepare_rows`).
    yr : ndarray of shape (n_rows,)
        Their labels.
    leaves : ndarray of int32, shape (n_trees, n_rows)
        Their leaves in the unforced model.
    raw : ndarray of float64, shape (n_rows, n_class)
        Their raw scores.
    features : ndarray of int
        The features to drop, one at a time.
    costs : FeatureCosts
        The costs.
    split : ndarray of float64, shape (n_features,)
        Split cost of each feature.
    cost_rows : int
        The cost is the mean over the first ``cost_rows`` rows.
    counted : bool, default False
        Read the cost of a feature that splits in at most half of the trees from those trees only
        (per-row feature counts, :func:`usage_cost_delta`; without split costs only): less work
        on many rows x trees, more on few.

    Returns
    -------
    loss : ndarray of float64, shape (len(features),)
        The mean loss with each feature dropped (:func:`~budget_extras.budgetprune._error_terms.mean_loss`).
    cost : ndarray of float64, shape (len(features),)
        The mean cost on the first rows with each feature dropped.
    cost_full : float
        The unforced model's mean cost on them.
    """
    ens = ensemble
    none = drop_forcing(ens, ())
    first = np.ascontiguousarray(leaves[:, :cost_rows])
    bits, pcost = path_tables(ens, none, split)
    row, _ = usage_cost(first, bits, pcost, costs.unit, costs.unit_cost, ens.n_features)
    tree_cost = costs.tree * ens.n_trees
    counts = feature_counts(first, bits, ens.n_features) if counted and not split.any() else None
    node_tree = np.asarray(ens.node_tree)
    scratch = leaves.copy()  # equal to ``leaves`` between features
    loss, cost = np.empty(len(features)), np.empty(len(features))
    for j, f in enumerate(features):
        forced = drop_forcing(ens, (int(f),))
        trees = np.unique(node_tree[np.flatnonzero(forced >= 0)])
        _, moved = route(ens, Xr, forced, base=leaves, base_forced=none, value=np.asarray(ens.value), raw=raw,
                         out=scratch)
        assert moved is not None
        loss[j] = mean_loss(ens, yr, moved[:, 0] if moved.shape[1] == 1 else moved)
        new = np.ascontiguousarray(scratch[:, :cost_rows])
        bits_new, pcost_new = path_tables(ens, forced, split)
        if counts is not None and 2 * trees.size <= ens.n_trees:
            row_f = usage_cost_delta(first, new, trees, bits, bits_new, counts, costs.unit, costs.unit_cost)[0]
        else:
            row_f = usage_cost(new, bits_new, pcost_new, costs.unit, costs.unit_cost, ens.n_features)[0]
        cost[j] = float(row_f.mean()) + tree_cost
        copy_rows(scratch, leaves, trees)
    return loss, cost, float(row.mean()) + tree_cost
