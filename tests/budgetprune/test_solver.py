"""The primal-dual solver against HiGHS, brute force and the paper's properties (plain arrays)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from forests import random_problem

from budget_extras import Status
from budget_extras.budgetprune import PruneProblem, build_problem, lp_highs, solve_primal_dual
from budget_extras.budgetprune._problem import kept_from_leaves

SEEDS = list(range(16))
LAMS = [0.0, 0.01, 0.05, 0.3]


def _problem(seed: int, **kw) -> PruneProblem:
    rng = np.random.default_rng(seed)
    kw.setdefault("n_trees", int(rng.integers(1, 7)))
    return random_problem(rng, n_leaves=8, n_rows=40, eval_cost=seed % 2 == 0, **kw)[0]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("lam", LAMS)
def test_primal_dual_equals_highs_and_lp_is_integral(seed, lam):
    prob = _problem(seed)
    res = solve_primal_dual(prob, lam, gap_tol=1e-6, max_iter=3000)
    lp, x = lp_highs(prob, lam)
    assert lp.status == 0
    assert np.abs(x - np.round(x)).max() <= 1e-7  # the paper's theorem: the LP optimum is integral
    assert res.status == 0 and res.success
    assert res.fun == pytest.approx(lp.fun, rel=1e-6, abs=1e-12)
    assert res.dual_bound <= lp.fun + 1e-9 * max(1.0, abs(lp.fun))  # weak duality
    assert res.rel_gap <= 1e-6
    # the reported terms add up to the objective of the returned pruning
    assert res.error_term + lam * (res.acquisition_term + res.evaluation_term) == pytest.approx(res.fun)


def _enumerate_prunings(prob: PruneProblem):
    """Every pruning of every tree (as the set of internal nodes kept), by brute force."""
    per_tree = []
    for t in range(prob.n_trees):
        lo, hi = prob.tree_offset[t], prob.tree_offset[t + 1]
        internal = [h for h in range(lo, hi) if not prob.is_leaf[h]]
        options = []
        for bits in itertools.product([False, True], repeat=len(internal)):
            kept = set(h for h, b in zip(internal, bits, strict=True) if b)
            if all(prob.parent[h] < 0 or prob.parent[h] in kept for h in kept):
                options.append(kept)
        per_tree.append(options)
    for combo in itertools.product(*per_tree):
        kept = np.zeros(prob.n_nodes, dtype=bool)
        for s in combo:
            kept[list(s)] = True
        reach = np.ones(prob.n_nodes, dtype=bool)
        has_parent = prob.parent >= 0
        reach[has_parent] = kept[prob.parent[has_parent]]
        yield reach & ~kept


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("lam", [0.005, 0.05])
def test_primal_dual_equals_brute_force(seed, lam):
    prob = _problem(seed, n_trees=2, n_features=3)
    best = min(e + lam * (a + v) for e, a, v in (prob.primal_terms(z) for z in _enumerate_prunings(prob)))
    res = solve_primal_dual(prob, lam, gap_tol=1e-9, max_iter=3000)
    assert res.fun == pytest.approx(best, rel=1e-9, abs=1e-15)


def _best_subtree_error(prob: PruneProblem, h: int) -> float:
    if prob.is_leaf[h]:
        return float(prob.node_error[h])
    children = np.flatnonzero(prob.parent == h)
    return min(float(prob.node_error[h]), sum(_best_subtree_error(prob, c) for c in children))


@pytest.mark.parametrize("seed", SEEDS)
def test_lambda_zero_keeps_exactly_the_splits_that_lower_training_error(seed):
    prob = _problem(seed)
    res = solve_primal_dual(prob, 0.0)
    kept = kept_from_leaves(prob, res.leaf_mask)
    reached = res.leaf_mask | kept
    for h in np.flatnonzero(reached & ~prob.is_leaf):
        children = np.flatnonzero(prob.parent == h)
        lowers = sum(_best_subtree_error(prob, c) for c in children) < prob.node_error[h] - 1e-15
        assert kept[h] == lowers, h


@pytest.mark.parametrize("seed", SEEDS)
def test_huge_lambda_collapses_every_tree_to_its_root(seed):
    prob = _problem(seed)
    res = solve_primal_dual(prob, 1e9)
    roots = np.zeros(prob.n_nodes, dtype=bool)
    roots[prob.tree_offset[:-1]] = True
    np.testing.assert_array_equal(res.leaf_mask, roots)
    assert res.acquisition_term == 0.0


@pytest.mark.parametrize("seed", SEEDS[:8])
def test_cost_is_non_increasing_in_lambda(seed):
    prob = _problem(seed, n_trees=5)
    lams = np.concatenate([[0.0], np.geomspace(1e-4, 10, 25)])
    costs = [
        (r.acquisition_term + r.evaluation_term)
        for r in (solve_primal_dual(prob, lam, gap_tol=1e-9, max_iter=3000) for lam in lams)
    ]
    assert np.all(np.diff(costs) <= 1e-12), costs
    assert costs[0] > costs[-1] or costs[0] == 0


def test_warm_start_and_limits_are_statuses_not_errors():
    prob = random_problem(np.random.default_rng(0), n_trees=8, n_leaves=12, n_rows=200, n_features=5)[0]
    res = solve_primal_dual(prob, 0.01, gap_tol=0.0, max_iter=3)
    assert res.status == Status.LIMIT and not res.success and "Iteration limit" in res.message
    assert res.gap >= 0 and res.dual_bound <= res.fun
    warm = solve_primal_dual(prob, 0.01, beta0=res.beta, max_iter=2000)
    assert warm.success and warm.rel_gap <= 1e-4
    timed = solve_primal_dual(prob, 0.003, gap_tol=0.0, max_iter=10**6, time_limit=1e-9)
    assert timed.status == Status.LIMIT and "Time limit" in timed.message


def test_feature_groups_are_paid_once_per_row():
    # one tree: root splits on feature 0, its left child on feature 1; both features in group 0
    parent = np.array([-1, 0, 1, 1, 0])
    node_group = np.array([0, 0, -1, -1, -1])
    leaf_nodes = np.array([[2], [3], [4], [4]])
    prob = build_problem(
        tree_offset=np.array([0, 5]),
        parent=parent,
        node_group=node_group,
        node_error=np.zeros(5),
        leaf_nodes=leaf_nodes,
        group_cost=np.array([2.0]),
    )
    full = np.array([False, False, True, True, True])
    assert prob.primal_terms(full)[1] == pytest.approx(2.0)  # every row pays the group once


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"lam": -1.0}, "'lam' parameter must be a finite number >= 0. Got -1.0"),
        ({"lam": float("nan")}, "'lam' parameter"),
        ({"lam": 1.0, "gap_tol": -1.0}, "'gap_tol' parameter"),
        ({"lam": 1.0, "max_iter": 0}, "'max_iter' parameter must be an integer >= 1. Got 0"),
        ({"lam": 1.0, "time_limit": 0.0}, "'time_limit' parameter"),
        ({"lam": 1.0, "beta0": np.zeros(3)}, "'beta0' parameter must have shape"),
    ],
)
def test_solver_input_errors(kwargs, match):
    prob = _problem(1, n_trees=3)
    lam = kwargs.pop("lam")
    with pytest.raises(ValueError, match=match):
        solve_primal_dual(prob, lam, **kwargs)


def test_gap_is_measured_on_the_part_of_the_objective_that_depends_on_the_pruning():
    # a large error term common to every pruning: relative to the whole objective a 1e-4 gap
    # would be far coarser than the cost term; the solver must compare the gap with the
    # objective minus the smallest error term of any pruning, and say so in its message
    from dataclasses import replace

    from budget_extras.budgetprune import _kernels as kern

    prob, _ = random_problem(np.random.default_rng(3), n_trees=5, n_leaves=6, n_rows=40)
    # 1000 per original leaf below each node: every pruning covers each original leaf once, so this
    # adds the same constant (1000 x leaves) to every pruning's error term
    from budget_extras.budgetprune._error_terms import subtree_sum

    below = subtree_sum(prob.parent, prob.is_leaf.astype(float))
    prob = replace(prob, node_error=prob.node_error + 1000.0 * below)
    assert prob.node_error.sum() > 100 * abs(solve_primal_dual(prob, 0.02, gap_tol=0.5).acquisition_term)
    lam = 0.02
    res = solve_primal_dual(prob, lam, gap_tol=1e-4, max_iter=3000)
    _, floor = kern.best_pruning(prob.parent, prob.is_leaf, prob.node_error)
    assert res.success
    assert res.gap_scale == pytest.approx(res.fun - floor)
    assert res.gap <= 1e-4 * res.gap_scale + 1e-12 * abs(res.fun)
    assert res.rel_gap <= 1e-4
    lp, _ = lp_highs(prob, lam)
    assert res.fun - lp.fun <= 1e-4 * res.gap_scale + 1e-9
    for text in ("gap_tol 0.0001", f"{res.gap_scale:.3g}", "constant part", f"lam={lam:.6g}"):
        assert text in res.message
