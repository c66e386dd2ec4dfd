"""Baselines (CCP, GreedyPrune, BudgetRF threshold) on plain-array forests."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from forests import random_problem

from budget_extras.budgetprune._baselines import ccp_prune, gini, greedy_prune_path, threshold_prune
from budget_extras.budgetprune._solver import solve_primal_dual


def _setup(seed):
    rng = np.random.default_rng(seed)
    prob, feature = random_problem(rng, n_trees=4, n_leaves=8, n_rows=50)
    return prob, feature, rng


def _roots(prob):
    roots = np.zeros(prob.n_nodes, dtype=bool)
    roots[prob.tree_offset[:-1]] = True
    return roots


@pytest.mark.parametrize("seed", range(6))
def test_ccp_alpha_zero_is_lambda_zero_and_huge_alpha_is_roots(seed):
    prob, _, _ = _setup(seed)
    np.testing.assert_array_equal(ccp_prune(prob, 0.0), solve_primal_dual(prob, 0.0).leaf_mask)
    np.testing.assert_array_equal(ccp_prune(prob, 1e9), _roots(prob))


@pytest.mark.parametrize("seed", range(6))
def test_ccp_leaf_count_is_non_increasing_in_alpha(seed):
    prob, _, _ = _setup(seed)
    counts = [int(ccp_prune(prob, a).sum()) for a in np.geomspace(1e-5, 1.0, 20)]
    assert all(b <= a for a, b in itertools.pairwise(counts))


@pytest.mark.parametrize("seed", range(6))
def test_threshold_extremes_and_monotonicity(seed):
    prob, _, rng = _setup(seed)
    counts = rng.integers(0, 30, size=(prob.n_nodes, 2)).astype(float)
    imp = gini(counts)
    np.testing.assert_array_equal(threshold_prune(prob, imp, -1.0), prob.is_leaf)
    np.testing.assert_array_equal(threshold_prune(prob, imp, 1.0), _roots(prob))
    sizes = [int(threshold_prune(prob, imp, tau).sum()) for tau in np.linspace(0, 0.5, 11)]
    assert all(b <= a for a, b in itertools.pairwise(sizes))


def test_gini_values():
    np.testing.assert_allclose(gini(np.array([[5.0, 5.0], [10.0, 0.0], [0.0, 0.0]])), [0.5, 0.0, 1.0])


@pytest.mark.parametrize("seed", range(6))
def test_greedy_path_removes_each_feature_once_and_cost_reaches_zero(seed):
    prob, feature, _ = _setup(seed)
    path = greedy_prune_path(prob, feature)
    removed = [g for g, _ in path[1:]]
    assert sorted(removed) == sorted(set(feature[feature >= 0].tolist()))
    costs = [prob.primal_terms(z)[1] for _, z in path]
    assert all(b <= a + 1e-15 for a, b in itertools.pairwise(costs))
    assert costs[-1] == 0.0
    np.testing.assert_array_equal(path[0][1], prob.is_leaf)
