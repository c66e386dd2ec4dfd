"""The BudgetPrune integer program on plain arrays (no dependency on TreeEnsemble).

The problem of Nan, Wang and Saligrama (NeurIPS 2016), written for every tree ``t`` of a
forest, every node ``h`` (``z_h = 1``: ``h`` is a leaf of the pruned tree), every feature
group ``g`` and validation row ``i``::

    min  sum_h node_error[h] z_h
         + lam * ( sum_{g,i} pair_cost[(g,i)] w_{g,i} + sum_h node_eval[h] z_h )
    s.t. sum_{h on the path root..u} z_h = 1                 for every original leaf u
         w^t_{g,i} + sum_{h on the path root..f} z_h = 1     f = first node of tree t on row i's
                                                             path that splits on group g
         w^t_{g,i} <= w_{g,i},   0 <= z, w^t, w <= 1

One *pair* is a ``(g, i)`` with at least one tree whose path for row ``i`` meets ``g``; one
*triple* is such a pair together with one of those trees, stored as the node ``f``. Triples
are grouped by pair (CSR: ``pair_ptr``), which is all the solvers need. Pairs of one group whose
first nodes are the same in every tree are merged into one pair carrying their summed cost
(``pair_count`` rows each; exact, see :func:`build_problem`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["PruneProblem", "build_problem", "first_group_nodes", "kept_from_leaves"]


@dataclass(frozen=True)
class PruneProblem:
    """BudgetPrune's program for one forest, one validation set and one cost vector.

    Attributes
    ----------
    tree_offset : ndarray of int64, shape (n_trees + 1,)
        Tree ``t`` owns nodes ``tree_offset[t]:tree_offset[t+1]``; its root comes first.
    parent : ndarray of int64, shape (n_nodes,)
        Global index of each node's parent, -1 for roots; ``parent[h] < h``.
    node_error : ndarray of float64, shape (n_nodes,)
        Coefficient of ``z_h`` that does not scale with lambda (the error term).
    node_eval : ndarray of float64, shape (n_nodes,)
        Coefficient of ``z_h`` multiplied by lambda (average evaluation cost of rows ending
        in ``h``); zeros when only acquisition cost counts.
    pair_ptr : ndarray of int64, shape (n_pairs + 1,)
        Triples of pair ``p`` are ``pair_node[pair_ptr[p]:pair_ptr[p+1]]``.
    pair_node : ndarray of int32, shape (n_triples,)
        First node of the pair's group on the row's path in one tree.
    pair_cost : ndarray of float64, shape (n_pairs,)
        Cost of the pair if acquired (group cost divided by the number of validation rows).
    pair_group, pair_row : ndarray of int32, shape (n_pairs,)
        Group and (first) validation row of each pair (for reports).
    n_rows : int
        Number of validation rows.
    pair_count : ndarray of int32, shape (n_pairs,), optional
        Number of (group, row) pairs merged into each pair (rows of one group whose first
        nodes are identical in every tree, see :func:`build_problem`); ``None`` means 1.
    """

    tree_offset: np.ndarray
    parent: np.ndarray
    node_error: np.ndarray
    node_eval: np.ndarray
    pair_ptr: np.ndarray
    pair_node: np.ndarray
    pair_cost: np.ndarray
    pair_group: np.ndarray
    pair_row: np.ndarray
    n_rows: int
    pair_count: np.ndarray | None = None
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_nodes(self) -> int:
        """Number of nodes of all trees."""
        return int(self.parent.shape[0])

    @property
    def n_trees(self) -> int:
        """Number of trees."""
        return int(self.tree_offset.shape[0] - 1)

    @property
    def n_pairs(self) -> int:
        """Number of (group, row) pairs."""
        return int(self.pair_cost.shape[0])

    @property
    def n_triples(self) -> int:
        """Number of (group, row, tree) triples."""
        return int(self.pair_node.shape[0])

    @property
    def is_leaf(self) -> np.ndarray:
        """Bool (n_nodes,): node is a leaf of the original forest."""
        if "is_leaf" not in self._cache:
            has_child = np.zeros(self.n_nodes, dtype=bool)
            has_child[self.parent[self.parent >= 0]] = True
            self._cache["is_leaf"] = ~has_child
        return self._cache["is_leaf"]

    @property
    def depth(self) -> np.ndarray:
        """Int64 (n_nodes,): depth of each node (roots 0)."""
        if "depth" not in self._cache:
            depth = np.zeros(self.n_nodes, dtype=np.int64)
            for h in range(self.n_nodes):  # parent[h] < h
                p = self.parent[h]
                if p >= 0:
                    depth[h] = depth[p] + 1
            self._cache["depth"] = depth
        return self._cache["depth"]

    def levels(self) -> list[np.ndarray]:
        """Node indices grouped by depth (level 0 holds the roots)."""
        depth = self.depth
        order = np.argsort(depth, kind="stable")
        bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
        return [order[bounds[d] : bounds[d + 1]] for d in range(len(bounds) - 1)]

    def primal_terms(self, leaf_mask: np.ndarray) -> tuple[float, float, float]:
        """Error, acquisition-cost and evaluation-cost terms of a pruning.

        Parameters
        ----------
        leaf_mask : ndarray of bool, shape (n_nodes,)
            ``z``: nodes that are leaves of the pruned forest.

        Returns
        -------
        error, acquisition, evaluation : float
            ``sum node_error z``, ``sum pair_cost w`` and ``sum node_eval z``.
        """
        kept = kept_from_leaves(self, leaf_mask)
        used = np.maximum.reduceat(kept[self.pair_node], self.pair_ptr[:-1]) if self.n_pairs else kept[:0]
        return (
            float(self.node_error @ leaf_mask),
            float(self.pair_cost @ used),
            float(self.node_eval @ leaf_mask),
        )


def kept_from_leaves(problem: PruneProblem, leaf_mask: np.ndarray) -> np.ndarray:
    """Return the internal nodes that still split, given the leaves ``z`` of the pruned forest."""
    kept = np.zeros(problem.n_nodes, dtype=bool)
    reached = problem.parent < 0
    for nodes in problem.levels():
        par = problem.parent[nodes]
        reach = np.where(par >= 0, kept[np.maximum(par, 0)], True)
        reached[nodes] = reach
        kept[nodes] = reach & ~problem.is_leaf[nodes] & ~leaf_mask[nodes]
    return kept


def first_group_nodes(parent: np.ndarray, node_group: np.ndarray, n_groups: int) -> np.ndarray:
    """For every node, the first node above it (itself included) that splits on each group.

    Parameters
    ----------
    parent : ndarray of int, shape (n_nodes,)
        Parent index (-1 for roots), ``parent[h] < h``.
    node_group : ndarray of int, shape (n_nodes,)
        Group of the feature a node splits on, -1 for leaves.
    n_groups : int
        Number of groups.

    Returns
    -------
    ndarray of int32, shape (n_nodes, n_groups)
        Entry ``[h, g]``: the first node on the path root..h (h included when it splits on
        ``g``) that splits on group ``g``; -1 when none does.
    """
    n = parent.shape[0]
    first = np.full((n, n_groups), -1, dtype=np.int32)
    for h in range(n):
        p = parent[h]
        if p >= 0:
            first[h] = first[p]
        g = node_group[h]
        if g >= 0 and first[h, g] < 0:
            first[h, g] = h
    return first


def _merge_entries(
    e_h1: np.ndarray, e_h2: np.ndarray, e_cnt: np.ndarray, e_group: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pair of every (group, row) entry when entries with equal hashes, count and group merge.

    Returns ``pair_of_entry`` (int64, one per entry: its pair, pairs numbered in the order of
    their first entry) and ``rep`` (int64, one per pair: the entry that represents it).
    """
    n_entries = e_h1.shape[0]
    mixed = e_h1 + e_h2 * np.uint64(0x9E3779B97F4A7C15) + e_group.astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
    order = np.argsort(mixed, kind="stable")
    same = np.ones(n_entries - 1, dtype=bool)  # sorted neighbours with equal keys
    for key in (mixed, e_h1, e_h2, e_cnt, e_group):
        ks = key[order]
        same &= ks[1:] == ks[:-1]
    new = np.concatenate([[True], ~same])  # first member of a run
    del mixed, same
    run_first = order[new]  # entry index of each run's first member
    perm = np.argsort(run_first, kind="stable")
    rank = np.empty(perm.shape[0], dtype=np.int64)
    rank[perm] = np.arange(perm.shape[0])
    pair_of_entry = np.empty(n_entries, dtype=np.int64)
    pair_of_entry[order] = rank[np.cumsum(new) - 1]
    return pair_of_entry, run_first[perm]


def build_problem(
    *,
    tree_offset: np.ndarray,
    parent: np.ndarray,
    node_group: np.ndarray,
    node_error: np.ndarray,
    leaf_nodes: np.ndarray,
    group_cost: np.ndarray,
    node_eval: np.ndarray | None = None,
    merge: bool = True,
) -> PruneProblem:
    """Assemble a :class:`PruneProblem` from per-node arrays and the validation leaves.

    The first-use structure depends only on the leaf a row reaches in each tree: for every leaf
    the groups on its path and their first nodes are tabulated once, then every (row, tree)
    expands its leaf's list (compiled, parallel over rows) straight into the pair layout (a
    counting sort, no sorting of triples).

    Parameters
    ----------
    tree_offset : ndarray of int, shape (n_trees + 1,)
        Node ranges of the trees.
    parent : ndarray of int, shape (n_nodes,)
        Global parent index, -1 for roots, ``parent[h] < h``.
    node_group : ndarray of int, shape (n_nodes,)
        Feature group each internal node splits on; -1 for leaves.
    node_error : ndarray of float, shape (n_nodes,)
        Error term of each node as a leaf (already normalized).
    leaf_nodes : ndarray of int, shape (n_rows, n_trees)
        Global index of the leaf each validation row reaches in each tree.
    group_cost : ndarray of float, shape (n_groups,)
        Acquisition cost of each group (paid once per row).
    node_eval : ndarray of float, shape (n_nodes,), optional
        Lambda-scaled coefficient of ``z_h`` (evaluation cost); zeros by default.
    merge : bool, default True
        Merge (group, row) pairs of one group whose first nodes are the same in every tree into
        one pair whose cost is the sum of theirs. This is exact: such pairs have the same
        ``w`` in every feasible point that matters (``w = max_t w^t``), so the optimum, the
        optimal prunings and the objective of every pruning are unchanged; the program gets
        smaller (about 2x on a 500-tree forest with 100,000 rows). Pairs are matched by two
        64-bit hashes of their node sets and then compared node by node; should two differ
        (a hash collision), the program is built without merging.

    Returns
    -------
    PruneProblem
    """
    from . import _kernels as kern

    parent = np.asarray(parent, dtype=np.int64)
    tree_offset = np.asarray(tree_offset, dtype=np.int64)
    node_group = np.asarray(node_group, dtype=np.int64)
    group_cost = np.asarray(group_cost, dtype=np.float64)
    leaf_nodes = np.asarray(leaf_nodes)
    if leaf_nodes.dtype not in (np.int32, np.int64):
        leaf_nodes = leaf_nodes.astype(np.int64)
    n_nodes = int(parent.shape[0])
    n_rows = int(leaf_nodes.shape[0])
    n_groups = int(group_cost.shape[0])
    # per node (used as a leaf): the positive-cost groups on its path and their first nodes
    first = first_group_nodes(parent, node_group, n_groups)
    nz_node, nz_group = np.nonzero((first >= 0) & (group_cost > 0)[None, :])
    lptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(nz_node, minlength=n_nodes), out=lptr[1:])
    lgrp = nz_group.astype(np.int32)
    lfirst = first[nz_node, nz_group].astype(np.int32)
    rng = np.random.default_rng(0x5EED)
    r1 = rng.integers(1, 2**63, size=n_nodes, dtype=np.uint64)
    r2 = rng.integers(1, 2**63, size=n_nodes, dtype=np.uint64)
    cnt, h1, h2 = kern.count_pairs(leaf_nodes, lptr, lgrp, lfirst, r1, r2, n_groups)
    # entries (group, row) with at least one triple, group-major
    entry = np.flatnonzero(cnt.T.ravel() > 0)
    e_group = (entry // max(n_rows, 1)).astype(np.int64)
    e_row = (entry % max(n_rows, 1)).astype(np.int64)
    e_cnt = cnt[e_row, e_group]
    del cnt
    e_h1, e_h2 = h1[e_row, e_group], h2[e_row, e_group]
    del h1, h2
    for attempt_merge in (merge, False) if merge else (False,):
        n_entries = entry.shape[0]
        if attempt_merge and n_entries:
            pair_of_entry, rep = _merge_entries(e_h1, e_h2, e_cnt, e_group)
        else:
            pair_of_entry = np.arange(n_entries, dtype=np.int64)
            rep = pair_of_entry
        n_pairs = int(rep.shape[0])
        pair_of = np.full((n_rows, n_groups), -1, dtype=np.int32)
        pair_of[e_row, e_group] = pair_of_entry
        is_rep = np.zeros((n_rows, n_groups), dtype=bool)
        is_rep[e_row[rep], e_group[rep]] = True
        pair_ptr = np.zeros(n_pairs + 1, dtype=np.int64)
        np.cumsum(e_cnt[rep], out=pair_ptr[1:])
        pair_node = np.empty(int(pair_ptr[-1]), dtype=np.int32)
        kern.fill_pairs(leaf_nodes, lptr, lgrp, lfirst, pair_of, is_rep, pair_ptr, pair_node)
        if n_pairs == n_entries or kern.verify_pairs(leaf_nodes, lptr, lgrp, lfirst, pair_of, pair_ptr, pair_node) == 0:
            break
    pair_count = np.bincount(pair_of_entry, minlength=n_pairs).astype(np.int32)
    pair_group = e_group[rep].astype(np.int32)
    pair_cost = pair_count * group_cost[pair_group] / max(n_rows, 1)
    return PruneProblem(
        tree_offset=tree_offset,
        parent=parent,
        node_error=np.asarray(node_error, dtype=np.float64),
        node_eval=(np.zeros(n_nodes) if node_eval is None else np.asarray(node_eval, dtype=np.float64)),
        pair_ptr=pair_ptr,
        pair_node=pair_node,
        pair_cost=pair_cost,
        pair_group=pair_group,
        pair_row=e_row[rep].astype(np.int32),
        n_rows=n_rows,
        pair_count=pair_count,
    )
