"""Routing tables of the vectorized predictor, derived from an ensemble's public arrays.

The tables are built once per ensemble and kept in a weak cache keyed by the ensemble, so
the representation (``_representation``) stores nothing on their behalf and knows nothing of
them; the predictor (``_predict``) and the lazy acquisition (``_acquire``) read them through
:func:`routing_tables`.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._representation import EnsembleArrays

__all__ = ["RoutingTables", "routing_tables"]


@dataclass(frozen=True)
class RoutingTables:
    """Per-node routing tables (leaves loop onto themselves), all read-only.

    A leaf has ``threshold`` NaN, ``right`` = itself and ``feature`` 0, so one routing step
    leaves it in place; the next node of an internal node is ``node + 1`` (pre-order left
    child) if the row goes left, else ``right[node]``.

    Attributes
    ----------
    feature, right : ndarray of intp, shape (n_nodes,)
        Split feature (0 for leaves) and right child (the node itself for leaves).
    threshold : ndarray of float64, shape (n_nodes,)
        Numerical threshold; NaN for leaves and categorical nodes.
    nan_left, zero_left : ndarray of bool, shape (n_nodes,)
        Whether a NaN / an exact zero goes left at each numerical node (LightGBM's rules).
    zero_differs : bool
        Whether some numerical node sends 0 elsewhere than ``0 <= threshold`` does.
    has_cat : bool
        Whether any node is categorical.
    is_cat, is_leaf : ndarray of bool, shape (n_nodes,)
        The ensemble's ``is_categorical`` and ``is_leaf``.
    max_depth, min_leaf_depth : ndarray of int64, shape (n_trees,)
        Deepest node and shallowest leaf of each tree.
    cat_word_offset, cat_n_words : ndarray of int64, shape (n_nodes,)
        Where node ``i``'s left-category bitset starts in ``cat_bits`` and how many words it has.
    cat_bits : ndarray of uint32, shape (n_words,)
        The left-category bitsets of all categorical nodes, concatenated.
    """

    feature: npt.NDArray[np.intp]
    threshold: npt.NDArray[np.float64]
    right: npt.NDArray[np.intp]
    nan_left: npt.NDArray[np.bool_]
    zero_left: npt.NDArray[np.bool_]
    zero_differs: bool
    has_cat: bool
    is_cat: npt.NDArray[np.bool_]
    is_leaf: npt.NDArray[np.bool_]
    max_depth: npt.NDArray[np.int64]
    min_leaf_depth: npt.NDArray[np.int64]
    cat_word_offset: npt.NDArray[np.int64]
    cat_n_words: npt.NDArray[np.int64]
    cat_bits: npt.NDArray[np.uint32]


def _category_bitsets(ens: EnsembleArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(word offset per node, number of words per node, uint32 words) of the left sets."""
    n = ens.n_nodes
    nwords = np.zeros(n, dtype=np.int64)
    cat_nodes = np.flatnonzero(ens.is_categorical)
    lens = np.diff(ens.cat_offsets)
    for i in cat_nodes:
        if lens[i]:
            nwords[i] = int(ens.cat_values[ens.cat_offsets[i + 1] - 1]) // 32 + 1
    woff = np.zeros(n, dtype=np.int64)
    np.cumsum(nwords[:-1], out=woff[1:])
    bits = np.zeros(int(nwords.sum()), dtype=np.uint32)
    for i in cat_nodes:
        cats = ens.cat_values[ens.cat_offsets[i] : ens.cat_offsets[i + 1]].astype(np.int64)
        np.bitwise_or.at(bits, woff[i] + (cats >> 5), (np.uint32(1) << (cats & 31).astype(np.uint32)))
    return woff, nwords, bits


def _build(ens: EnsembleArrays) -> RoutingTables:
    n = ens.n_nodes
    idx = np.arange(n, dtype=np.intp)
    leaf = ens.is_leaf
    threshold = np.where(leaf | ens.is_categorical, np.nan, ens.threshold)
    mt = ens.missing_type
    numerical = ~leaf & ~ens.is_categorical
    # where a NaN / an exact zero goes at each numerical node (LightGBM's rules)
    zero_left = np.where(mt == 1, ens.default_left, 0.0 <= ens.threshold)
    depth = ens.depth.astype(np.int64)
    t = ens.node_tree
    max_depth = np.zeros(ens.n_trees, dtype=np.int64)
    min_leaf_depth = np.full(ens.n_trees, np.iinfo(np.int64).max, dtype=np.int64)
    np.maximum.at(max_depth, t, depth)
    np.minimum.at(min_leaf_depth, t[leaf], depth[leaf])
    woff, nwords, bits = _category_bitsets(ens)
    tables = RoutingTables(
        feature=np.where(leaf, 0, ens.feature).astype(np.intp),
        threshold=threshold,
        right=np.where(leaf, idx, ens.right_child).astype(np.intp),
        nan_left=numerical & np.where(mt == 2, ens.default_left, zero_left),
        zero_left=numerical & zero_left,
        zero_differs=bool(((numerical & zero_left) != (0.0 <= threshold))[numerical].any()),
        has_cat=bool(ens.is_categorical.any()),
        is_cat=ens.is_categorical,
        is_leaf=leaf,
        max_depth=max_depth,
        min_leaf_depth=min_leaf_depth,
        cat_word_offset=woff,
        cat_n_words=nwords,
        cat_bits=bits,
    )
    for value in vars(tables).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return tables


_CACHE: weakref.WeakKeyDictionary[EnsembleArrays, RoutingTables] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def routing_tables(ens: EnsembleArrays) -> RoutingTables:
    """Return the routing tables of ``ens`` (built on first use, then cached while ``ens`` lives).

    Parameters
    ----------
    ens : EnsembleArrays
        The ensemble (a :class:`~budget_extras.core.TreeEnsemble`).

    Returns
    -------
    RoutingTables
    """
    with _LOCK:
        tables = _CACHE.get(ens)
    if tables is None:
        tables = _build(ens)
        with _LOCK:
            tables = _CACHE.setdefault(ens, tables)
    return tables
