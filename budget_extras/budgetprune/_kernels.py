"""Compiled (numba) passes over BudgetPrune's triples: problem construction and dual iterations.

Every function here is a plain loop over flat arrays; the callers in ``_budgetprune_problem``
and ``_budgetprune_solver`` document the meaning of the arrays. Loops over rows (construction)
and over pairs (solver) run in parallel; each parallel loop writes only to its own rows/pairs,
and node sums are accumulated per block and added afterwards, so results do not depend on the
number of threads except for the order of floating-point additions.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = [
    "best_pruning",
    "count_pairs",
    "face_start",
    "face_stats",
    "face_step_and_sums",
    "fill_pairs",
    "pair_usage",
    "polish_sweep",
    "step_and_sums",
    "subgradient_stats",
    "subtree_sums",
    "sums",
    "tree_order",
    "verify_pairs",
]

_TIE = 1e-12


# ---------------------------------------------------------------------------- construction
@njit(parallel=True, cache=True)
def count_pairs(leaf_nodes, lptr, lgrp, lfirst, r1, r2, n_groups):  # type: ignore[no-untyped-def]
    """Per (row, group): number of trees whose path meets the group, and two hashes of the nodes.

    ``lptr/lgrp/lfirst`` list, for every node used as a leaf, the groups on its path with a
    positive cost and the first node of each (CSR over nodes). The hashes are sums of the
    random keys ``r1``/``r2`` of the first nodes (order-free, wrapping uint64).
    """
    n_rows, n_trees = leaf_nodes.shape
    cnt = np.zeros((n_rows, n_groups), dtype=np.int32)
    h1 = np.zeros((n_rows, n_groups), dtype=np.uint64)
    h2 = np.zeros((n_rows, n_groups), dtype=np.uint64)
    for i in prange(n_rows):
        for t in range(n_trees):
            leaf = leaf_nodes[i, t]
            for e in range(lptr[leaf], lptr[leaf + 1]):
                g = lgrp[e]
                f = lfirst[e]
                cnt[i, g] += 1
                h1[i, g] += r1[f]
                h2[i, g] += r2[f]
    return cnt, h1, h2


@njit(parallel=True, cache=True)
def fill_pairs(leaf_nodes, lptr, lgrp, lfirst, pair_of, is_rep, pair_ptr, pair_node):  # type: ignore[no-untyped-def]
    """Write the first nodes of every representative (row, group) into its slice of ``pair_node``.

    Trees are visited in order, so each pair's nodes are sorted by tree.
    """
    n_rows, n_trees = leaf_nodes.shape
    n_groups = pair_of.shape[1]
    for i in prange(n_rows):
        cursor = np.zeros(n_groups, dtype=np.int64)
        for g in range(n_groups):
            if is_rep[i, g]:
                cursor[g] = pair_ptr[pair_of[i, g]]
        for t in range(n_trees):
            leaf = leaf_nodes[i, t]
            for e in range(lptr[leaf], lptr[leaf + 1]):
                g = lgrp[e]
                if is_rep[i, g]:
                    pair_node[cursor[g]] = lfirst[e]
                    cursor[g] += 1


@njit(parallel=True, cache=True)
def verify_pairs(leaf_nodes, lptr, lgrp, lfirst, pair_of, pair_ptr, pair_node):  # type: ignore[no-untyped-def]
    """Count the (row, group) whose first nodes differ from their pair's (hash collisions)."""
    n_rows, n_trees = leaf_nodes.shape
    n_groups = pair_of.shape[1]
    bad = 0
    for i in prange(n_rows):
        cursor = np.zeros(n_groups, dtype=np.int64)
        ok = np.ones(n_groups, dtype=np.bool_)
        for g in range(n_groups):
            if pair_of[i, g] >= 0:
                cursor[g] = pair_ptr[pair_of[i, g]]
        for t in range(n_trees):
            leaf = leaf_nodes[i, t]
            for e in range(lptr[leaf], lptr[leaf + 1]):
                g = lgrp[e]
                p = pair_of[i, g]
                if cursor[g] >= pair_ptr[p + 1] or pair_node[cursor[g]] != lfirst[e]:
                    ok[g] = False
                else:
                    cursor[g] += 1
        row_bad = 0
        for g in range(n_groups):
            p = pair_of[i, g]
            if p >= 0 and (not ok[g] or cursor[g] != pair_ptr[p + 1]):
                row_bad += 1
        bad += row_bad
    return bad


# ---------------------------------------------------------------------------- dual passes
@njit(parallel=True, cache=True)
def sums(pair_ptr, pair_node, beta, n_nodes, n_blocks):  # type: ignore[no-untyped-def]
    """Multiplier sums per node (``reward``) and per pair (``beta_sum``)."""
    n_pairs = pair_ptr.shape[0] - 1
    part = np.zeros((n_blocks, n_nodes))
    beta_sum = np.zeros(n_pairs)
    for k in prange(n_blocks):
        p0 = n_pairs * k // n_blocks
        p1 = n_pairs * (k + 1) // n_blocks
        acc = part[k]
        for p in range(p0, p1):
            s = 0.0
            for j in range(pair_ptr[p], pair_ptr[p + 1]):
                v = np.float64(beta[j])
                acc[pair_node[j]] += v
                s += v
            beta_sum[p] = s
    return part.sum(axis=0), beta_sum


@njit(parallel=True, cache=True)
def subgradient_stats(pair_ptr, pair_node, pair_weight, kept, w, b):  # type: ignore[no-untyped-def]
    """Weighted squared norm of the subgradient ``w^t - w`` and the acquisition cost of ``kept``.

    ``w^t`` of a triple is ``kept[node]``; the acquisition cost is ``sum_p b_p max_t w^t``. Each
    pair's entries count ``pair_weight[p]`` times (the number of (group, row) pairs merged into it).
    """
    n_pairs = pair_ptr.shape[0] - 1
    norm2 = 0.0
    acq = 0.0
    for p in prange(n_pairs):
        used = False
        wp = w[p]
        mism = 0
        for j in range(pair_ptr[p], pair_ptr[p + 1]):
            k = kept[pair_node[j]]
            if k:
                used = True
            if k != wp:
                mism += 1
        norm2 += mism * np.float64(pair_weight[p])
        if used:
            acq += b[p]
    return norm2, acq


@njit(parallel=True, cache=True)
def step_and_sums(pair_ptr, pair_node, pair_weight, beta, kept, w, step, n_nodes, n_blocks):  # type: ignore[no-untyped-def]
    """Projected subgradient step on ``beta`` (in place), then :func:`sums` of the new ``beta``.

    Pair ``p`` moves ``pair_weight[p]`` times as far
    (exactly the step of the unmerged program, whose merged copies move together).
    """
    n_pairs = pair_ptr.shape[0] - 1
    part = np.zeros((n_blocks, n_nodes))
    beta_sum = np.zeros(n_pairs)
    for k in prange(n_blocks):
        p0 = n_pairs * k // n_blocks
        p1 = n_pairs * (k + 1) // n_blocks
        acc = part[k]
        for p in range(p0, p1):
            wp = w[p]
            up = step * np.float64(pair_weight[p])
            s = 0.0
            for j in range(pair_ptr[p], pair_ptr[p + 1]):
                f = pair_node[j]
                k_used = kept[f]
                if k_used and not wp:
                    beta[j] = np.float64(beta[j]) + up
                elif wp and not k_used:
                    beta[j] = max(np.float64(beta[j]) - up, 0.0)
                v64 = np.float64(beta[j])
                acc[f] += v64
                s += v64
            beta_sum[p] = s
    return part.sum(axis=0), beta_sum


# ---------------------------------------------------------------------------- tree programs
@njit(cache=True)
def best_pruning(parent, is_leaf, adj):  # type: ignore[no-untyped-def]
    """Exact minimum of ``sum adj_h z_h`` over prunings of every tree (pre-order, parent < child).

    Returns the kept internal nodes (the pruned trees' splits) and the minimum (summed over trees).
    """
    n = parent.shape[0]
    child_sum = np.zeros(n)
    collapse = np.ones(n, dtype=np.bool_)
    best = np.empty(n)
    total = 0.0
    for h in range(n - 1, -1, -1):
        own = adj[h]
        if is_leaf[h]:
            best[h] = own
        else:
            cs = child_sum[h]
            if own <= cs + _TIE * (abs(own) + abs(cs)):
                best[h] = own
            else:
                best[h] = cs
                collapse[h] = False
        if parent[h] >= 0:
            child_sum[parent[h]] += best[h]
        else:
            total += best[h]
    kept = np.zeros(n, dtype=np.bool_)
    for h in range(n):
        reach = True if parent[h] < 0 else kept[parent[h]]
        kept[h] = reach and not collapse[h]
    return kept, total


@njit(cache=True)
def subtree_sums(parent, values):  # type: ignore[no-untyped-def]
    """Sum of ``values`` over each node's subtree (pre-order, parent < child)."""
    out = values.astype(np.float64)
    for h in range(parent.shape[0] - 1, -1, -1):
        if parent[h] >= 0:
            out[parent[h]] += out[h]
    return out


@njit(cache=True)
def tree_order(pair_ptr, pair_node, node_tree, n_trees):  # type: ignore[no-untyped-def]
    """Triples sorted by tree (counting sort): per-tree bounds, nodes and pair ids."""
    n_pairs = pair_ptr.shape[0] - 1
    m = pair_node.shape[0]
    bounds = np.zeros(n_trees + 1, dtype=np.int64)
    for j in range(m):
        bounds[node_tree[pair_node[j]] + 1] += 1
    for t in range(n_trees):
        bounds[t + 1] += bounds[t]
    cursor = bounds[:-1].copy()
    tri_node = np.empty(m, dtype=np.int32)
    tri_pair = np.empty(m, dtype=np.int32)
    for p in range(n_pairs):
        for j in range(pair_ptr[p], pair_ptr[p + 1]):
            f = pair_node[j]
            t = node_tree[f]
            tri_node[cursor[t]] = f
            tri_pair[cursor[t]] = p
            cursor[t] += 1
    return bounds, tri_node, tri_pair


@njit(cache=True)
def polish_sweep(parent, is_leaf, tree_offset, c, b, kept, bounds, tri_node, tri_pair, usage):  # type: ignore[no-untyped-def]
    """One Gauss-Seidel sweep of exact per-tree best responses; ``kept`` and ``usage`` in place.

    ``usage[p]`` is the number of kept first nodes of pair ``p``. Tree ``t`` pays ``b_p`` for a
    kept node ``f`` of pair ``p`` only when no other tree keeps one of ``p``'s nodes; its exact
    best pruning under these marginal costs never increases the objective.
    """
    n_trees = tree_offset.shape[0] - 1
    for t in range(n_trees):
        lo = tree_offset[t]
        hi = tree_offset[t + 1]
        n = hi - lo
        marginal = np.zeros(n)
        for j in range(bounds[t], bounds[t + 1]):
            f = tri_node[j]
            p = tri_pair[j]
            others = usage[p] - (1 if kept[f] else 0)
            if others == 0:
                marginal[f - lo] += b[p]
        # kept node f costs marginal[f]: sum_f m_f x_f = sum_f m_f - sum_h z_h S_h
        s = marginal.copy()
        for h in range(n - 1, 0, -1):
            ph = parent[lo + h]
            s[ph - lo] += s[h]
        adj = np.empty(n)
        for h in range(n):
            adj[h] = c[lo + h] - s[h]
        # dynamic program on this tree
        child_sum = np.zeros(n)
        collapse = np.ones(n, dtype=np.bool_)
        for h in range(n - 1, -1, -1):
            own = adj[h]
            if is_leaf[lo + h]:
                best = own
            else:
                cs = child_sum[h]
                if own <= cs + _TIE * (abs(own) + abs(cs)):
                    best = own
                else:
                    best = cs
                    collapse[h] = False
            if h > 0:
                child_sum[parent[lo + h] - lo] += best
        new = np.zeros(n, dtype=np.bool_)
        for h in range(n):
            reach = True if h == 0 else new[parent[lo + h] - lo]
            new[h] = reach and not collapse[h]
        for j in range(bounds[t], bounds[t + 1]):
            f = tri_node[j]
            if new[f - lo] != kept[f]:
                usage[tri_pair[j]] += 1 if new[f - lo] else -1
        for h in range(n):
            kept[lo + h] = new[h]


@njit(parallel=True, cache=True)
def pair_usage(pair_ptr, pair_node, kept):  # type: ignore[no-untyped-def]
    """Count the kept first nodes of every pair."""
    n_pairs = pair_ptr.shape[0] - 1
    usage = np.zeros(n_pairs, dtype=np.int32)
    for p in prange(n_pairs):
        u = 0
        for j in range(pair_ptr[p], pair_ptr[p + 1]):
            if kept[pair_node[j]]:
                u += 1
        usage[p] = u
    return usage


# ------------------------------------------------------------- dual steps on the primal's face
@njit(parallel=True, cache=True)
def face_start(pair_ptr, pair_node, kept, b, beta, slack, keep):  # type: ignore[no-untyped-def]
    """Move the multipliers onto the face of a pruning ``kept`` (complementary slackness), in place.

    A pair that ``kept`` pays for (one of its first nodes is kept) spends exactly its cost, on
    its kept first nodes only; an unpaid pair spends at most its cost (the rest is its slack).
    The new multipliers are ``keep`` times the old ones moved onto the face (rescaled to the
    pair's cost where needed) plus ``1 - keep`` times the even split (over the kept first nodes
    of a paid pair; over the nodes and the slack of an unpaid pair), so none is zero.
    """
    n_pairs = pair_ptr.shape[0] - 1
    for p in prange(n_pairs):
        u = 0
        old_kept = 0.0
        old_all = 0.0
        for j in range(pair_ptr[p], pair_ptr[p + 1]):
            v = np.float64(beta[j])
            old_all += v
            if kept[pair_node[j]]:
                u += 1
                old_kept += v
        n = pair_ptr[p + 1] - pair_ptr[p]
        if u > 0:
            mix = keep if old_kept > 0.0 else 0.0
            scale = b[p] / old_kept if old_kept > 0.0 else 0.0
            slack[p] = 0.0
            for j in range(pair_ptr[p], pair_ptr[p + 1]):
                if kept[pair_node[j]]:
                    beta[j] = mix * np.float64(beta[j]) * scale + (1.0 - mix) * b[p] / u
                else:
                    beta[j] = 0.0
        else:
            mix = keep if old_all > 0.0 else 0.0
            scale = min(1.0, b[p] / old_all) if old_all > 0.0 else 0.0
            even = b[p] / (n + 1)
            slack[p] = mix * (b[p] - old_all * scale) + (1.0 - mix) * even
            for j in range(pair_ptr[p], pair_ptr[p + 1]):
                beta[j] = mix * np.float64(beta[j]) * scale + (1.0 - mix) * even


@njit(parallel=True, cache=True)
def face_stats(pair_ptr, pair_node, beta, slack, x, b, mass, total):  # type: ignore[no-untyped-def]
    """Squared norm of the gradient in the multipliers' own metric, and the acquisition cost of ``x``.

    On a pair's simplex (multipliers plus slack summing to ``b_p``) the gradient of the dual is
    ``x[node]`` per triple (0 for the slack); with ``A_p`` the multiplier mass on kept nodes its
    squared norm in the metric ``diag(beta)`` is ``A_p (1 - A_p / b_p)``. ``A_p`` and the pair's
    total are written to ``mass`` and ``total`` (for :func:`face_step_and_sums`).
    """
    n_pairs = pair_ptr.shape[0] - 1
    norm2 = 0.0
    acq = 0.0
    for p in prange(n_pairs):
        a = 0.0
        tot = slack[p]
        used = False
        for j in range(pair_ptr[p], pair_ptr[p + 1]):
            v = np.float64(beta[j])
            tot += v
            if x[pair_node[j]]:
                a += v
                used = True
        mass[p] = a
        total[p] = tot
        if tot > 0.0:
            norm2 += a * (1.0 - a / tot)
        if used:
            acq += b[p]
    return norm2, acq


@njit(parallel=True, cache=True)
def face_step_and_sums(pair_ptr, pair_node, beta, slack, x, mass, total, eta, n_nodes, n_blocks):  # type: ignore[no-untyped-def]
    """Exponentiated-gradient step on every pair's simplex (in place), then :func:`sums`.

    Multipliers at nodes kept by the trees' current minimizers ``x`` grow by ``exp(eta)``; each
    pair is then rescaled to its previous total (multipliers plus slack), which stays its cost.
    ``mass`` and ``total`` come from :func:`face_stats` with the same ``x``.
    """
    n_pairs = pair_ptr.shape[0] - 1
    part = np.zeros((n_blocks, n_nodes))
    beta_sum = np.zeros(n_pairs)
    grow = np.exp(eta)
    for k in prange(n_blocks):
        p0 = n_pairs * k // n_blocks
        p1 = n_pairs * (k + 1) // n_blocks
        acc = part[k]
        for p in range(p0, p1):
            z = total[p] + mass[p] * (grow - 1.0)
            scale = total[p] / z if z > 0.0 else 1.0
            slack[p] = slack[p] * scale
            s = 0.0
            for j in range(pair_ptr[p], pair_ptr[p + 1]):
                f = pair_node[j]
                v = np.float64(beta[j]) * scale
                if x[f]:
                    v *= grow
                beta[j] = v
                v = np.float64(beta[j])
                acc[f] += v
                s += v
            beta_sum[p] = s
    return part.sum(axis=0), beta_sum
