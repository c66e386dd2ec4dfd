"""Construction of the program (compiled, per leaf, merged pairs) and the validity of every dual bound."""

from __future__ import annotations

import numpy as np
import pytest
from forests import random_problem, random_tree

from budget_extras.budgetprune import build_problem, lp_highs, solve_primal_dual

SEEDS = list(range(12))


def _forest(rng: np.random.Generator, n_trees: int, n_groups: int, n_rows: int):
    parents, groups, offsets = [], [], [0]
    for _ in range(n_trees):
        par, feat = random_tree(rng, int(rng.integers(1, 9)), n_groups)
        parents.append(np.where(par >= 0, par + offsets[-1], -1))
        groups.append(feat)
        offsets.append(offsets[-1] + par.size)
    parent, group = np.concatenate(parents), np.concatenate(groups)
    leaf_nodes = np.empty((n_rows, n_trees), dtype=np.int64)
    for t in range(n_trees):
        cand = np.flatnonzero(group[offsets[t] : offsets[t + 1]] < 0) + offsets[t]
        leaf_nodes[:, t] = rng.choice(cand, size=n_rows)
    cost = rng.uniform(0.5, 2.0, size=n_groups)
    cost[rng.integers(n_groups)] = 0.0  # a free group never enters the program
    return np.array(offsets), parent, group, leaf_nodes, cost


def _walk(parent, group, leaf_nodes, cost):
    """Reference: per (group, row), the first node of each tree on the row's path (walking up)."""
    out: dict[tuple[int, int], list[int]] = {}
    n_rows, n_trees = leaf_nodes.shape
    for i in range(n_rows):
        for t in range(n_trees):
            first: dict[int, int] = {}
            h = int(parent[leaf_nodes[i, t]])
            while h >= 0:  # the last write is the node closest to the root
                first[int(group[h])] = h
                h = int(parent[h])
            for g, f in first.items():
                if cost[g] > 0:
                    out.setdefault((g, i), []).append(f)
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("merge", [True, False])
def test_build_equals_a_path_walk(seed, merge):
    rng = np.random.default_rng(seed)
    offsets, parent, group, leaf_nodes, cost = _forest(rng, int(rng.integers(1, 6)), 4, int(rng.integers(1, 60)))
    prob = build_problem(
        tree_offset=offsets,
        parent=parent,
        node_group=group,
        node_error=np.zeros(parent.size),
        leaf_nodes=leaf_nodes,
        group_cost=cost,
        merge=merge,
    )
    ref = _walk(parent, group, leaf_nodes, cost)
    # every (group, row) of the reference is in exactly one pair, with the same nodes in tree order
    expected: dict[tuple[int, tuple[int, ...]], int] = {}
    for (g, _), nodes in ref.items():
        key = (g, tuple(nodes))
        expected[key] = expected.get(key, 0) + 1
    got: dict[tuple[int, tuple[int, ...]], int] = {}
    count = np.ones(prob.n_pairs, dtype=np.int64) if prob.pair_count is None else prob.pair_count
    for p in range(prob.n_pairs):
        key = (int(prob.pair_group[p]), tuple(int(f) for f in prob.pair_node[prob.pair_ptr[p] : prob.pair_ptr[p + 1]]))
        assert key not in got or not merge  # merged: one pair per distinct node set of a group
        got[key] = got.get(key, 0) + int(count[p])
        assert ref[(key[0], int(prob.pair_row[p]))] == list(key[1])
    assert got == expected
    assert prob.n_triples == sum(len(v) for v in ref.values()) or merge
    np.testing.assert_allclose(prob.pair_cost, count * cost[prob.pair_group] / leaf_nodes.shape[0])
    if not merge:
        assert prob.n_pairs == len(ref) and np.all(count == 1)


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_merging_changes_neither_objectives_nor_the_optimum(seed):
    rng = np.random.default_rng(seed)
    offsets, parent, group, leaf_nodes, cost = _forest(rng, 4, 3, 80)
    kw = dict(
        tree_offset=offsets,
        parent=parent,
        node_group=group,
        node_error=rng.uniform(0, 0.01, parent.size),
        leaf_nodes=leaf_nodes,
        group_cost=cost,
    )
    merged, plain = build_problem(**kw), build_problem(**kw, merge=False)
    assert merged.n_triples <= plain.n_triples
    for _ in range(20):  # random prunings: z marks a random cut of every tree
        leaf_mask = plain.is_leaf.copy()
        cut = rng.random(parent.size) < 0.3
        leaf_mask |= cut
        # keep only the topmost marked node on each path
        for h in range(parent.size):
            p = parent[h]
            while p >= 0:
                if leaf_mask[p]:
                    leaf_mask[h] = False
                    break
                p = parent[p]
        np.testing.assert_allclose(merged.primal_terms(leaf_mask), plain.primal_terms(leaf_mask), rtol=1e-12)
    for lam in (0.001, 0.01, 0.1):
        a = solve_primal_dual(merged, lam, gap_tol=1e-7, max_iter=5000)
        b = solve_primal_dual(plain, lam, gap_tol=1e-7, max_iter=5000)
        assert a.success and b.success
        assert a.fun == pytest.approx(b.fun, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS[:8])
@pytest.mark.parametrize("face_steps", [True, False])
@pytest.mark.parametrize("lam", [0.003, 0.03])
def test_every_reported_lower_bound_is_valid(seed, face_steps, lam):
    rng = np.random.default_rng(seed)
    prob = random_problem(rng, n_trees=6, n_leaves=10, n_rows=120, n_features=5)[0]
    opt, opt_warm = lp_highs(prob, lam)[0].fun, lp_highs(prob, 1.5 * lam)[0].fun
    tol = 1e-9 * max(abs(opt), 1.0)
    lows: list[float] = []
    warm_lows: list[float] = []
    cold = solve_primal_dual(
        prob, lam, gap_tol=0.0, max_iter=60, face_steps=face_steps, progress=lambda i, u, lo: lows.append(lo)
    )
    warm = solve_primal_dual(
        prob,
        1.5 * lam,
        gap_tol=0.0,
        max_iter=60,
        beta0=1.5 * cold.beta,
        face_steps=face_steps,
        progress=lambda i, u, lo: warm_lows.append(lo),
    )
    assert max(lows) <= opt + tol and cold.dual_bound <= opt + tol <= cold.fun + 2 * tol
    assert max(warm_lows) <= opt_warm + tol and warm.dual_bound <= opt_warm + tol <= warm.fun + 2 * tol
