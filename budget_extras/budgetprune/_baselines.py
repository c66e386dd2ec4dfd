"""Baselines of BudgetPrune's paper (section 5), on the same program and the same accounting.

None of them has public code; these follow the paper's one-line descriptions:

* cost-complexity pruning (Breiman et al.), per tree, ignoring feature costs: each tree is cut
  to the subtree minimizing ``error + alpha * n_leaves`` (exact, by dynamic programming);
* GreedyPrune: repeatedly remove every node of the one feature (group) whose removal costs the
  least training error per unit of validation cost saved;
* BudgetRF-style early stopping: collapse every node whose Gini impurity (training class counts)
  is at most a threshold (the top-most such node on each path becomes a leaf).

Each returns ``z``, the leaves of the pruned forest (a bool mask over the nodes), that
:meth:`PruneProblem.primal_terms` scores exactly as it scores BudgetPrune.
"""

from __future__ import annotations

import numpy as np

from ._problem import PruneProblem
from ._solver import _Forest

__all__ = ["ccp_prune", "gini", "greedy_prune_path", "threshold_prune"]


def ccp_prune(problem: PruneProblem, alpha: float) -> np.ndarray:
    """Cost-complexity pruning of every tree at penalty ``alpha`` per leaf (error units).

    Parameters
    ----------
    problem : PruneProblem
        Supplies the trees and the error terms.
    alpha : float
        Penalty per leaf, >= 0.

    Returns
    -------
    ndarray of bool, shape (n_nodes,)
        Leaves of the pruned forest.
    """
    if not (np.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"The 'alpha' parameter must be a finite number >= 0. Got {alpha!r} instead.")
    forest = _Forest(problem)
    kept, _ = forest.best_pruning(problem.node_error + alpha)
    return forest.leaves_of(kept)


def gini(counts: np.ndarray) -> np.ndarray:
    """Gini impurity of per-node class counts ``(n_nodes, n_classes)``."""
    total = counts.sum(axis=1, keepdims=True)
    share = counts / np.maximum(total, 1e-300)
    return 1.0 - (share**2).sum(axis=1)


def threshold_prune(problem: PruneProblem, impurity: np.ndarray, tau: float) -> np.ndarray:
    """Collapse every node whose impurity is at most ``tau`` (BudgetRF-style stopping).

    Parameters
    ----------
    problem : PruneProblem
    impurity : ndarray of float, shape (n_nodes,)
        Impurity of each node (for example :func:`gini` of the training class counts).
    tau : float
        Threshold.

    Returns
    -------
    ndarray of bool, shape (n_nodes,)
        Leaves of the pruned forest.
    """
    forest = _Forest(problem)
    collapse = problem.is_leaf | (np.asarray(impurity) <= tau)
    return forest.leaves_of(forest.top_down(collapse))


def greedy_prune_path(
    problem: PruneProblem, node_group: np.ndarray, *, max_steps: int | None = None
) -> list[tuple[int, np.ndarray]]:
    """GreedyPrune: remove one feature group at a time, cheapest error per cost saved first.

    Parameters
    ----------
    problem : PruneProblem
    node_group : ndarray of int, shape (n_nodes,)
        Feature group of each internal node's split (-1 for leaves).
    max_steps : int, optional
        Stop after this many removals.

    Returns
    -------
    list of (group, leaf_mask)
        The pruned forest after each removal, starting with ``(-1, unpruned)``.
    """
    forest = _Forest(problem)
    node_group = np.asarray(node_group)
    collapse = problem.is_leaf.copy()
    leaves = forest.leaves_of(forest.top_down(collapse))
    err, acq, ev = problem.primal_terms(leaves)
    path = [(-1, leaves)]
    remaining = {int(g) for g in np.unique(node_group[node_group >= 0])}
    steps = 0
    while remaining and (max_steps is None or steps < max_steps):
        best = None
        for g in sorted(remaining):
            cand = collapse | (node_group == g)
            cand_leaves = forest.leaves_of(forest.top_down(cand))
            e2, a2, v2 = problem.primal_terms(cand_leaves)
            saved = (acq + ev) - (a2 + v2)
            ratio = (e2 - err) / saved if saved > 0 else np.inf
            key = (ratio, e2 - err)
            if best is None or key < best[0]:
                best = (key, g, cand, cand_leaves, e2, a2, v2)
        assert best is not None
        _, g, collapse, leaves, err, acq, ev = best
        remaining.discard(g)
        path.append((g, leaves))
        steps += 1
    return path
