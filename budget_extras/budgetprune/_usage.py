"""Which features and split costs each row's paths under a forcing evaluate, and what the row pays.

The path tables hold, per node of the original model, the bitset of features evaluated on the
way to it and their summed split cost under a forcing (``_drop_refit``): a forced split
evaluates nothing. From the leaves each row reaches (:func:`~budget_extras.budgetprune._drop_refit.route`),
:func:`row_usage` gives the (rows, features) usage and :func:`usage_cost` the per-row cost in
one pass, with the accounting of :meth:`FeatureCosts.row_cost`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core._ensemble import TreeEnsemble
from ..core._report import bits_to_bool

__all__ = ["feature_counts", "path_tables", "row_usage", "usage_cost", "usage_cost_delta"]

@njit(cache=True)
def _path_kernel(parent, feature, forced, split_cost, n_words):  # type: ignore[no-untyped-def]
    n_nodes = parent.size
    bits = np.zeros((n_nodes, n_words), dtype=np.uint64)
    cost = np.zeros(n_nodes)
    for i in range(n_nodes):  # pre-order: a parent before its children
        p = parent[i]
        if p < 0:
            continue
        for w in range(n_words):
            bits[i, w] = bits[p, w]
        cost[i] = cost[p]
        if forced[p] < 0:
            f = feature[p]
            bits[i, f >> 6] |= np.uint64(1) << np.uint64(f & 63)
            cost[i] += split_cost[f]
    return bits, cost


@njit(cache=True)
def _usage_kernel(leaves, bits, cost):  # type: ignore[no-untyped-def]
    n_trees, n = leaves.shape
    words = np.zeros((n, bits.shape[1]), dtype=np.uint64)
    total = np.zeros(n)
    for t in range(n_trees):
        for i in range(n):
            node = leaves[t, i]
            for w in range(bits.shape[1]):
                words[i, w] |= bits[node, w]
            total[i] += cost[node]
    return words, total


_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
#: Bit position of ``low`` (a single set bit) from ``(low * _DEBRUIJN) >> 58``.
_DEBRUIJN_INDEX = np.zeros(64, dtype=np.int64)
_DEBRUIJN_INDEX[[((1 << k) * 0x03F79D71B4CB0A89 % 2**64) >> 58 for k in range(64)]] = np.arange(64)


@njit(cache=True)
def _usage_cost_kernel(leaves, bits, cost, unit, unit_cost):  # type: ignore[no-untyped-def]
    """Per row: the cost of the acquisition units its paths need plus their split cost; features any row uses."""
    n_trees, n = leaves.shape
    n_words = bits.shape[1]
    words = np.zeros((n, n_words), dtype=np.uint64)
    any_words = np.zeros(n_words, dtype=np.uint64)
    stamp = np.full(unit_cost.size, -1, dtype=np.int64)
    total = np.zeros(n)
    for t in range(n_trees):  # tree-major, as ``leaves`` is stored
        for i in range(n):
            node = leaves[t, i]
            for w in range(n_words):
                words[i, w] |= bits[node, w]
            total[i] += cost[node]
    for i in range(n):
        for w in range(n_words):
            any_words[w] |= words[i, w]
            x = words[i, w]
            while x != 0:  # one step per set bit: the lowest, located by a de Bruijn multiplication
                low = x & (~x + np.uint64(1))
                b = _DEBRUIJN_INDEX[(low * _DEBRUIJN) >> np.uint64(58)]
                x ^= low
                u = unit[w * 64 + b]
                if stamp[u] != i:
                    stamp[u] = i
                    total[i] += unit_cost[u]
    return total, any_words


def path_tables(ensemble: TreeEnsemble, forced: np.ndarray, split_cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Features and split cost on the path to every node under a forcing (forced splits evaluate nothing).

    Parameters
    ----------
    ensemble : TreeEnsemble
        The original model.
    forced : ndarray of int8, shape (n_nodes,)
        The forcing.
    split_cost : ndarray of float64, shape (n_features,)
        Evaluation cost of one split on each feature.

    Returns
    -------
    bits : ndarray of uint64, shape (n_nodes, ceil(n_features / 64))
        Bitset of the features evaluated on the way to each node.
    cost : ndarray of float64, shape (n_nodes,)
        Their summed split cost.
    """
    return _path_kernel(
        np.asarray(ensemble.parent, dtype=np.int64), np.asarray(ensemble.feature, dtype=np.int64),
        np.ascontiguousarray(forced, dtype=np.int8), np.ascontiguousarray(split_cost, dtype=np.float64),
        max(1, (ensemble.n_features + 63) // 64),
    )


def row_usage(leaves: np.ndarray, bits: np.ndarray, cost: np.ndarray, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Features each row's paths evaluate and their split cost, from its leaves.

    Parameters
    ----------
    leaves : ndarray of int64, shape (n_trees, n_rows)
        From :func:`route`.
    bits, cost : ndarray
        From :func:`path_tables` for the same forcing.
    n_features : int
        The model's number of features.

    Returns
    -------
    used : ndarray of bool, shape (n_rows, n_features)
    path_cost : ndarray of float64, shape (n_rows,)
    """
    words, total = _usage_kernel(leaves, bits, cost)
    return bits_to_bool(words, n_features), total


def usage_cost(
    leaves: np.ndarray, bits: np.ndarray, cost: np.ndarray, unit: np.ndarray, unit_cost: np.ndarray, n_features: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's acquisition and split cost from its leaves, and the features any row's paths evaluate.

    The same accounting as :meth:`FeatureCosts.row_cost` of :func:`row_usage` (a row pays each
    acquisition unit, a group or a single feature, that its paths need, once) without building
    the (rows, features) usage matrix.

    Parameters
    ----------
    leaves : ndarray of int, shape (n_trees, n_rows)
        From :func:`route`.
    bits, cost : ndarray
        From :func:`path_tables` for the same forcing.
    unit : ndarray of int64, shape (n_features,)
        Acquisition unit of each feature (``FeatureCosts.unit``).
    unit_cost : ndarray of float64, shape (n_units,)
        Cost of each unit (``FeatureCosts.unit_cost``).
    n_features : int
        The model's number of features.

    Returns
    -------
    row_cost : ndarray of float64, shape (n_rows,)
        Units bought plus split cost on the row's paths (tree costs not included).
    used : ndarray of bool, shape (n_features,)
        Features some row's paths evaluate.
    """
    total, any_words = _usage_cost_kernel(
        np.ascontiguousarray(leaves), bits, cost, np.ascontiguousarray(unit, dtype=np.int64),
        np.ascontiguousarray(unit_cost, dtype=np.float64),
    )
    return total, bits_to_bool(any_words[None, :], n_features)[0]


@njit(cache=True)
def _count_bits(cnt, i, row_bits, sign):  # type: ignore[no-untyped-def]
    for w in range(row_bits.size):
        x = row_bits[w]
        while x != 0:
            low = x & (~x + np.uint64(1))
            cnt[i, w * 64 + _DEBRUIJN_INDEX[(low * _DEBRUIJN) >> np.uint64(58)]] += sign
            x ^= low


@njit(cache=True)
def _feature_counts_kernel(leaves, bits, n_features):  # type: ignore[no-untyped-def]
    n_trees, n = leaves.shape
    cnt = np.zeros((n, n_features), dtype=np.int32)
    for t in range(n_trees):
        for i in range(n):
            _count_bits(cnt, i, bits[leaves[t, i]], 1)
    return cnt


@njit(cache=True)
def _usage_delta_kernel(old, new, trees, bits_old, bits_new, cnt, unit, unit_cost):  # type: ignore[no-untyped-def]
    n, n_features = cnt.shape
    delta = np.zeros_like(cnt)
    n_words = bits_old.shape[1]
    gone = np.zeros(n_words, dtype=np.uint64)
    came = np.zeros(n_words, dtype=np.uint64)
    for t in trees:
        for i in range(n):
            a, b = old[t, i], new[t, i]
            changed = False
            for w in range(n_words):  # only the features the pair's path stops or starts evaluating
                x, y = bits_old[a, w], bits_new[b, w]
                gone[w] = x & ~y
                came[w] = y & ~x
                changed = changed or x != y
            if changed:
                _count_bits(delta, i, gone, -1)
                _count_bits(delta, i, came, 1)
    total = np.zeros(n)
    used = np.zeros(n_features, dtype=np.bool_)
    stamp = np.full(unit_cost.size, -1, dtype=np.int64)
    for i in range(n):  # the units in feature order, as ``_usage_cost_kernel`` adds them
        for f in range(n_features):
            if cnt[i, f] + delta[i, f] > 0:
                used[f] = True
                u = unit[f]
                if stamp[u] != i:
                    stamp[u] = i
                    total[i] += unit_cost[u]
    return total, used, delta


def feature_counts(leaves: np.ndarray, bits: np.ndarray, n_features: int) -> np.ndarray:
    """Per row and feature, the number of trees whose path to the row's leaf evaluates the feature.

    Parameters
    ----------
    leaves : ndarray of int, shape (n_trees, n_rows)
        From :func:`route`.
    bits : ndarray of uint64
        From :func:`path_tables` for the same forcing.
    n_features : int
        The model's number of features.

    Returns
    -------
    ndarray of int32, shape (n_rows, n_features)
    """
    return _feature_counts_kernel(np.ascontiguousarray(leaves), bits, int(n_features))


def usage_cost_delta(
    old: np.ndarray, new: np.ndarray, trees: np.ndarray, bits_old: np.ndarray, bits_new: np.ndarray,
    counts: np.ndarray, unit: np.ndarray, unit_cost: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`usage_cost` of a forcing that differs from a base forcing only in the trees ``trees``.

    Only those trees' (row, tree) pairs are read: the other trees' paths, and so the features
    they evaluate, are the base's (``counts``, :func:`feature_counts`). The same accounting as
    :func:`usage_cost` when no split has an evaluation cost (the units are added in the same order).

    Parameters
    ----------
    old, new : ndarray of int32, shape (n_trees, n_rows)
        Leaves under the base forcing and under the new one (equal outside ``trees``).
    trees : ndarray of int64
        The trees where the forcings differ.
    bits_old, bits_new : ndarray of uint64
        :func:`path_tables` of the two forcings.
    counts : ndarray of int32, shape (n_rows, n_features)
        :func:`feature_counts` of the base (not modified).
    unit, unit_cost : ndarray
        As in :func:`usage_cost`.

    Returns
    -------
    row_cost : ndarray of float64, shape (n_rows,)
    used : ndarray of bool, shape (n_features,)
    delta : ndarray of int32, shape (n_rows, n_features)
        ``feature_counts`` of the new forcing minus ``counts``.
    """
    return _usage_delta_kernel(
        old, new, np.ascontiguousarray(trees, dtype=np.int64), bits_old, bits_new, counts,
        np.ascontiguousarray(unit, dtype=np.int64), np.ascontiguousarray(unit_cost, dtype=np.float64),
    )
