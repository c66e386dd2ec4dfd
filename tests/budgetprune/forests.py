"""Random forests as plain arrays (for solver tests)."""

from __future__ import annotations

import numpy as np

from budget_extras.budgetprune._problem import PruneProblem, build_problem


def random_tree(rng: np.random.Generator, n_leaves: int, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Pre-order random binary tree: (parent, feature) with -1 feature for leaves."""
    parent = [-1]
    feature = [-1]
    leaves = [0]
    while len(leaves) < n_leaves:
        u = leaves.pop(int(rng.integers(len(leaves))))
        feature[u] = int(rng.integers(n_features))
        for _ in range(2):
            parent.append(u)
            feature.append(-1)
            leaves.append(len(parent) - 1)
    # renumber to pre-order
    children: dict[int, list[int]] = {}
    for h, p in enumerate(parent):
        children.setdefault(p, []).append(h)
    order: list[int] = []
    stack = [0]
    while stack:
        h = stack.pop()
        order.append(h)
        stack.extend(reversed(children.get(h, [])))
    new = {h: i for i, h in enumerate(order)}
    par = np.array([-1 if parent[h] < 0 else new[parent[h]] for h in order])
    feat = np.array([feature[h] for h in order])
    return par, feat


def random_problem(
    rng: np.random.Generator,
    *,
    n_trees: int = 4,
    n_leaves: int = 6,
    n_features: int = 4,
    n_rows: int = 30,
    eval_cost: bool = False,
) -> tuple[PruneProblem, np.ndarray]:
    parents, feats, offsets = [], [], [0]
    for _ in range(n_trees):
        par, feat = random_tree(rng, int(rng.integers(1, n_leaves + 1)), n_features)
        parents.append(np.where(par >= 0, par + offsets[-1], -1))
        feats.append(feat)
        offsets.append(offsets[-1] + par.size)
    parent = np.concatenate(parents)
    feature = np.concatenate(feats)
    n = parent.size
    # errors: integer counts whose children sum to at most the parent's
    err = np.zeros(n)
    for h in range(n):
        err[h] = rng.integers(0, 20) if parent[h] < 0 else 0
    for h in range(n):
        if parent[h] >= 0:
            err[h] = rng.integers(0, int(err[parent[h]]) + 1) // 2
    leaf = feature < 0
    leaf_nodes = np.empty((n_rows, n_trees), dtype=np.int64)
    for t in range(n_trees):
        cand = np.flatnonzero(leaf[offsets[t] : offsets[t + 1]]) + offsets[t]
        leaf_nodes[:, t] = rng.choice(cand, size=n_rows)
    costs = rng.uniform(0.5, 3.0, size=n_features)
    node_eval = rng.uniform(0, 0.05, size=n) if eval_cost else None
    prob = build_problem(
        tree_offset=np.array(offsets),
        parent=parent,
        node_group=feature,
        node_error=err / (100.0 * n_trees),
        leaf_nodes=leaf_nodes,
        group_cost=costs,
        node_eval=node_eval,
    )
    return prob, feature
