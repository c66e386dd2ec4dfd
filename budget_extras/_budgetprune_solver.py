"""Exact solvers for :class:`PruneProblem`: the primal-dual method and a HiGHS LP oracle.

Primal-dual (paper, Algorithm 1). Relaxing ``w^t_{g,i} <= w_{g,i}`` with multipliers
``beta >= 0`` (one per triple) splits the problem into

* one problem per tree, ``min sum_h (c_h - S_h) z_h`` over prunings, where ``S_h`` is the sum of
  ``beta`` over triples whose first node lies in the subtree of ``h``; solved exactly by a
  bottom-up dynamic program (``best_h = min(c_h - S_h, sum_children best)``), the shortest path
  of the paper;
* ``w`` in closed form: ``w_{g,i} = 1`` iff ``mu_{g,i} = lam c_g / N - sum_t beta^t_{g,i} < 0``.

The value of the relaxation is a lower bound (weak duality); the pruning it returns, with
``w_{g,i} = max_t w^t_{g,i}``, is feasible and gives an upper bound. ``beta`` moves along the
projected subgradient ``w^t - w`` with Polyak's step towards the best upper bound, the step
factor halved when the bound stalls (Held, Wolfe and Crowder, 1974). Every tree is then
re-pruned as an exact best response to the others (coordinate descent on the primal), which
makes the upper bound reach the optimum quickly. Because the LP is integral (the paper's
theorem) the Lagrangian dual has no gap, and the solver stops when
``(upper - lower) <= gap_tol * |upper|``: the pruning is then optimal to that tolerance.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from ._budgetprune_problem import PruneProblem

__all__ = ["PruneResult", "lp_highs", "solve_primal_dual"]

_TIE = 1e-12
_CHUNK = 1 << 22  # triples per pass chunk (bounds temporary memory)
_BIG = 50_000_000  # above this many triples: float32 multipliers, no polishing


@dataclass
class PruneResult:
    """Outcome of a BudgetPrune solve (in the style of ``scipy.optimize.OptimizeResult``).

    Attributes
    ----------
    status : int
        0: the duality gap is within tolerance (optimal); 1: iteration limit; 2: time limit;
        3: the LP solver failed (HiGHS only).
    success : bool
        ``status == 0``.
    message : str
        Human-readable status.
    objective : float
        Objective of the returned pruning (upper bound).
    dual_bound : float
        Best lower bound on the optimum.
    gap : float
        ``objective - dual_bound`` (>= 0 up to rounding).
    rel_gap : float
        ``gap / max(|objective|, 1e-300)``.
    iterations : int
        Dual iterations done.
    lam : float
        The trade-off parameter solved for.
    leaf_mask : ndarray of bool, shape (n_nodes,)
        ``z``: nodes that are leaves of the pruned forest.
    collapsed : ndarray of int64
        Internal nodes of the original forest that became leaves (feed to ``collapse``).
    error_term, acquisition_term, evaluation_term : float
        The three parts of the objective (acquisition = average validation feature cost).
    elapsed : float
        Wall time in seconds.
    beta : ndarray of float64, shape (n_triples,) or None
        Final multipliers (warm start for a nearby lambda).
    """

    status: int
    message: str
    objective: float
    dual_bound: float
    gap: float
    rel_gap: float
    iterations: int
    lam: float
    leaf_mask: np.ndarray
    collapsed: np.ndarray
    error_term: float
    acquisition_term: float
    evaluation_term: float
    elapsed: float
    beta: np.ndarray | None = field(default=None, repr=False)

    @property
    def success(self) -> bool:
        """Whether the solve proved optimality within tolerance."""
        return self.status == 0


def _finish(problem: PruneProblem, lam: float, leaf_mask: np.ndarray, **kw: object) -> PruneResult:
    err, acq, ev = problem.primal_terms(leaf_mask)
    internal_reached = leaf_mask & ~problem.is_leaf
    return PruneResult(
        lam=lam,
        leaf_mask=leaf_mask,
        collapsed=np.flatnonzero(internal_reached),
        error_term=err,
        acquisition_term=acq,
        evaluation_term=ev,
        **kw,  # type: ignore[arg-type]
    )


class _Forest:
    """Level structure of the forest for vectorized bottom-up and top-down passes."""

    def __init__(self, problem: PruneProblem) -> None:
        self.n = problem.n_nodes
        self.parent = problem.parent
        self.is_leaf = problem.is_leaf
        self.levels = problem.levels()
        self.level_parent = [problem.parent[nodes] for nodes in self.levels]
        self.roots = self.levels[0]

    def subtree_sums(self, values: np.ndarray) -> np.ndarray:
        out = values.astype(np.float64, copy=True)
        for nodes, par in zip(self.levels[:0:-1], self.level_parent[:0:-1], strict=True):
            np.add.at(out, par, out[nodes])
        return out

    def best_pruning(self, adj: np.ndarray) -> tuple[np.ndarray, float]:
        """Exact per-tree minimum of ``sum adj_h z_h``; returns (kept internal nodes, value)."""
        child_sum = np.zeros(self.n)
        best = adj.copy()
        collapse = self.is_leaf.copy()
        for nodes, par in zip(self.levels[::-1], self.level_parent[::-1], strict=True):
            internal = ~self.is_leaf[nodes]
            cs = child_sum[nodes]
            own = adj[nodes]
            col = own <= cs + _TIE * (np.abs(own) + np.abs(cs))
            col |= ~internal
            collapse[nodes] = col
            best[nodes] = np.where(col, own, cs)
            if par.size and par[0] >= 0:
                np.add.at(child_sum, par, best[nodes])
        kept = self.top_down(collapse)
        return kept, float(best[self.roots].sum())

    def top_down(self, collapse: np.ndarray) -> np.ndarray:
        kept = np.zeros(self.n, dtype=bool)
        for nodes, par in zip(self.levels, self.level_parent, strict=True):
            reach = kept[par] if par.size and par[0] >= 0 else np.ones(nodes.size, dtype=bool)
            kept[nodes] = reach & ~collapse[nodes]
        return kept

    def leaves_of(self, kept: np.ndarray) -> np.ndarray:
        reach = np.ones(self.n, dtype=bool)
        has_parent = self.parent >= 0
        reach[has_parent] = kept[self.parent[has_parent]]
        return reach & ~kept


def _solve_iv(lam: float, gap_tol: float, max_iter: int, time_limit: float | None) -> None:
    if not (isinstance(lam, int | float | np.floating | np.integer) and np.isfinite(lam) and lam >= 0):
        raise ValueError(f"The 'lam' parameter must be a finite number >= 0. Got {lam!r} instead.")
    if not (np.isfinite(gap_tol) and gap_tol >= 0):
        raise ValueError(f"The 'gap_tol' parameter must be a finite number >= 0. Got {gap_tol!r} instead.")
    if not (isinstance(max_iter, int | np.integer) and max_iter >= 1):
        raise ValueError(f"The 'max_iter' parameter must be an integer >= 1. Got {max_iter!r} instead.")
    if time_limit is not None and not (np.isfinite(time_limit) and time_limit > 0):
        raise ValueError(
            f"The 'time_limit' parameter must be a positive number or None. Got {time_limit!r} instead."
        )


def solve_primal_dual(
    problem: PruneProblem,
    lam: float,
    *,
    gap_tol: float = 1e-4,
    max_iter: int = 500,
    time_limit: float | None = None,
    beta0: np.ndarray | None = None,
    polish_every: int = 10,
    patience: int = 10,
    progress: Callable[[int, float, float], None] | None = None,
) -> PruneResult:
    """Solve BudgetPrune's program by the primal-dual (Lagrangian) method.

    Parameters
    ----------
    problem : PruneProblem
        The program.
    lam : float
        Weight of the cost terms (>= 0).
    gap_tol : float, default 1e-4
        Stop when ``upper - lower <= gap_tol * |upper|``.
    max_iter : int, default 500
        Dual iterations at most.
    time_limit : float, optional
        Seconds at most (checked once per iteration).
    beta0 : ndarray of float, shape (n_triples,), optional
        Starting multipliers (for example ``result.beta`` of a nearby lambda); by default each
        pair's cost ``lam * pair_cost`` is split evenly over its trees.
    polish_every : int, default 10
        Every this many iterations (and at the end) re-prune each tree as the exact best
        response to the other trees; 0 disables. Problems with more than ``5e7`` triples skip
        it (it needs the triples sorted by tree) and keep the multipliers in float32 (sums are
        accumulated in float64), to stay within memory.
    patience : int, default 10
        Halve the step factor after this many iterations without a better lower bound.
    progress : callable, optional
        Called as ``progress(iteration, upper, lower)`` after each iteration.

    Returns
    -------
    PruneResult
    """
    _solve_iv(lam, gap_tol, max_iter, time_limit)
    t0 = time.perf_counter()
    lam = float(lam)
    forest = _Forest(problem)
    c = problem.node_error + lam * problem.node_eval
    b = lam * problem.pair_cost
    ptr = problem.pair_ptr
    counts = np.diff(ptr)
    node = problem.pair_node
    big = problem.n_triples > _BIG
    dtype = np.float32 if big else np.float64
    if beta0 is None:
        beta = np.repeat((b / np.maximum(counts, 1)).astype(dtype), counts)
    else:
        beta = np.maximum(np.asarray(beta0, dtype=dtype), 0.0)
        if beta.shape != (problem.n_triples,):
            raise ValueError(
                f"The 'beta0' parameter must have shape ({problem.n_triples},). Got {beta.shape} instead."
            )
    has_pairs = problem.n_pairs > 0
    if big:
        polish_every = 0
    chunks = _pair_chunks(ptr, _CHUNK)

    def upper_of(kept: np.ndarray) -> tuple[float, np.ndarray]:
        leaves = forest.leaves_of(kept)
        acq = 0.0
        for p0, p1, lo, hi in chunks:
            acq += float(b[p0:p1] @ np.maximum.reduceat(kept[node[lo:hi]], ptr[p0:p1] - lo))
        return float(c @ leaves) + acq, leaves

    best_upper, best_leaves = np.inf, np.zeros(problem.n_nodes, dtype=bool)
    best_kept = np.zeros(problem.n_nodes, dtype=bool)
    lower = -np.inf
    theta, stall = 1.5, 0
    status, it = 1, 0
    beta_sum = np.zeros(problem.n_pairs)
    for it in range(1, max_iter + 1):
        # pass 1 over the triples: rewards per node and multiplier sums per pair
        reward = np.zeros(problem.n_nodes)
        for p0, p1, lo, hi in chunks:
            part = beta[lo:hi]
            reward += np.bincount(node[lo:hi], weights=part, minlength=problem.n_nodes)
            beta_sum[p0:p1] = np.add.reduceat(part, ptr[p0:p1] - lo, dtype=np.float64)
        kept, tree_value = forest.best_pruning(c - forest.subtree_sums(reward))
        slack = b - beta_sum
        w = slack < 0
        dual = tree_value + float(beta_sum.sum()) + float(np.minimum(slack, 0.0).sum())
        if not np.isfinite(lower) or dual > lower + _TIE * max(abs(lower), 1.0):
            lower, stall = max(lower, dual), 0
        else:
            stall += 1
            if stall >= patience:
                theta, stall = max(theta / 2, 1e-8), 0
        upper, leaves = upper_of(kept)
        if upper < best_upper:
            best_upper, best_leaves, best_kept = upper, leaves, kept
        if polish_every and it % polish_every == 1 % polish_every:
            best_kept = _polish(problem, forest, c, b, best_kept)
            upper, leaves = upper_of(best_kept)
            if upper < best_upper:
                best_upper, best_leaves = upper, leaves
        if progress is not None:
            progress(it, best_upper, lower)
        if best_upper - lower <= gap_tol * abs(best_upper):
            status = 0
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            status = 2
            break
        if not has_pairs:
            continue
        # pass 2: squared norm of the subgradient w^t - w (entries in {-1, 0, 1})
        norm2 = 0.0
        for p0, p1, lo, hi in chunks:
            norm2 += np.count_nonzero(kept[node[lo:hi]] != np.repeat(w[p0:p1], counts[p0:p1]))
        if norm2 == 0.0:  # beta is dual optimal and the relaxed pruning is feasible
            lower = max(lower, upper)
            continue
        step = dtype(theta * (best_upper - dual) / norm2)
        # pass 3: projected step
        for p0, p1, lo, hi in chunks:
            used = kept[node[lo:hi]]
            w_t = np.repeat(w[p0:p1], counts[p0:p1])
            part = beta[lo:hi]
            np.add(part, step, out=part, where=used & ~w_t)
            down = w_t & ~used
            np.subtract(part, step, out=part, where=down)
            np.maximum(part, 0.0, out=part, where=down)
    if polish_every and status != 0:
        best_kept = _polish(problem, forest, c, b, best_kept)
        upper, leaves = upper_of(best_kept)
        if upper < best_upper:
            best_upper, best_leaves = upper, leaves
        if best_upper - lower <= gap_tol * abs(best_upper):
            status = 0
    gap = max(best_upper - lower, 0.0)
    messages = {
        0: f"Optimal: duality gap {gap:.3g} within tolerance.",
        1: f"Iteration limit reached; duality gap {gap:.3g} remains.",
        2: f"Time limit reached; duality gap {gap:.3g} remains.",
    }
    return _finish(
        problem,
        lam,
        best_leaves,
        status=status,
        message=messages[status],
        objective=best_upper,
        dual_bound=lower,
        gap=gap,
        rel_gap=gap / max(abs(best_upper), 1e-300),
        iterations=it,
        elapsed=time.perf_counter() - t0,
        beta=beta,
    )


def _pair_chunks(ptr: np.ndarray, size: int) -> list[tuple[int, int, int, int]]:
    """Split the pairs into runs of about ``size`` triples: ``(p0, p1, t0, t1)``."""
    n_pairs = ptr.shape[0] - 1
    if n_pairs == 0:
        return []
    cuts = np.searchsorted(ptr, np.arange(0, int(ptr[-1]), size), side="right") - 1
    bounds = np.unique(np.concatenate([cuts, [n_pairs]]))
    return [(int(p0), int(p1), int(ptr[p0]), int(ptr[p1])) for p0, p1 in itertools.pairwise(bounds)]


def _polish(
    problem: PruneProblem,
    forest: _Forest,
    c: np.ndarray,
    b: np.ndarray,
    kept: np.ndarray,
) -> np.ndarray:
    """One sweep of exact per-tree best responses (never increases the objective)."""
    if problem.n_pairs == 0:
        kept, _ = forest.best_pruning(c)
        return kept
    kept = kept.copy()
    node = problem.pair_node
    pair_of = np.repeat(np.arange(problem.n_pairs, dtype=np.int32), np.diff(problem.pair_ptr))
    if "tree_bounds" not in problem._cache:  # triples sorted by tree, computed once per problem
        tree_of = np.searchsorted(problem.tree_offset, node, side="right") - 1
        order = np.argsort(tree_of, kind="stable")
        problem._cache["tree_bounds"] = np.searchsorted(tree_of[order], np.arange(problem.n_trees + 1))
        problem._cache["tree_node"] = node[order]
        problem._cache["tree_pair"] = pair_of[order]
        del order, tree_of
    bounds = problem._cache["tree_bounds"]
    node_t, pair_t = problem._cache["tree_node"], problem._cache["tree_pair"]
    usage = np.bincount(pair_of, weights=kept[node], minlength=problem.n_pairs)
    for t in range(problem.n_trees):
        tri_node = node_t[bounds[t] : bounds[t + 1]]
        tri_pair = pair_t[bounds[t] : bounds[t + 1]]
        lo, hi = problem.tree_offset[t], problem.tree_offset[t + 1]
        own = kept[tri_node]
        paid = usage[tri_pair] - own < 0.5  # no other tree uses the pair: this tree pays for it
        marginal = np.bincount(tri_node[paid] - lo, weights=b[tri_pair[paid]], minlength=hi - lo)
        new = _best_tree(problem.parent[lo:hi] - lo, forest.is_leaf[lo:hi], c[lo:hi], marginal)
        kept[lo:hi] = new
        changed = new[tri_node - lo] != own
        if np.any(changed):
            delta = np.where(own[changed], -1.0, 1.0)
            usage += np.bincount(tri_pair[changed], weights=delta, minlength=problem.n_pairs)
    return kept


def _subtree_sum_tree(parent: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = values.astype(np.float64, copy=True)
    for h in range(parent.shape[0] - 1, 0, -1):
        out[parent[h]] += out[h]
    return out


def _best_tree(parent: np.ndarray, is_leaf: np.ndarray, c: np.ndarray, marginal: np.ndarray) -> np.ndarray:
    """Exact best pruning of one tree whose kept internal node ``f`` costs ``marginal[f]``.

    ``sum_f marginal_f x_f = sum_f marginal_f - sum_h z_h S_h`` (``S``: subtree sums), so the
    tree problem is the dynamic program on ``c_h - S_h``; the constant does not matter.
    """
    n = parent.shape[0]
    s = _subtree_sum_tree(parent, marginal)
    cost = c - s
    child_sum = np.zeros(n)
    collapse = np.ones(n, dtype=bool)
    best = cost.copy()
    for h in range(n - 1, -1, -1):
        if not is_leaf[h]:
            cs = child_sum[h]
            col = cost[h] <= cs + _TIE * (abs(cost[h]) + abs(cs))
            collapse[h] = col
            best[h] = cost[h] if col else cs
        if parent[h] >= 0:
            child_sum[parent[h]] += best[h]
    kept = np.zeros(n, dtype=bool)
    for h in range(n):
        reach = True if parent[h] < 0 else kept[parent[h]]
        kept[h] = reach and not collapse[h]
    return kept


def _ancestors(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR lists of ancestors-or-self of every node (``parent[h] < h``)."""
    n = parent.shape[0]
    length = np.ones(n, dtype=np.int64)
    for h in range(n):
        if parent[h] >= 0:
            length[h] = length[parent[h]] + 1
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(length, out=ptr[1:])
    idx = np.empty(ptr[-1], dtype=np.int64)
    for h in range(n):
        idx[ptr[h]] = h
        p = parent[h]
        if p >= 0:
            idx[ptr[h] + 1 : ptr[h + 1]] = idx[ptr[p] : ptr[p + 1]]
    return ptr, idx


def lp_highs(
    problem: PruneProblem, lam: float, *, time_limit: float | None = None
) -> tuple[PruneResult, np.ndarray]:
    """Solve the LP relaxation of BudgetPrune's program, as written in the paper, with HiGHS.

    Variables ``z`` (nodes), ``w^t`` (triples) and ``w`` (pairs); path equalities for every
    original leaf, ``w^t + sum_{path to f} z = 1`` per triple and ``w^t <= w``. This is an
    independent oracle for :func:`solve_primal_dual`. The objective is rescaled for HiGHS so
    that its smallest nonzero coefficient is 1 (HiGHS's tolerances are absolute).

    Parameters
    ----------
    problem : PruneProblem
        The program.
    lam : float
        Weight of the cost terms (>= 0).
    time_limit : float, optional
        HiGHS time limit in seconds.

    Returns
    -------
    result : PruneResult
        ``leaf_mask`` is the rounded ``z`` (meaningful when the LP optimum is integral).
    x : ndarray of float64
        The raw LP solution ``[z, w^t, w]``; check its integrality with
        ``np.abs(x - np.round(x)).max()``.
    """
    _solve_iv(lam, 0.0, 1, time_limit)
    t0 = time.perf_counter()
    n, m, q = problem.n_nodes, problem.n_triples, problem.n_pairs
    anc_ptr, anc = _ancestors(problem.parent)
    leaves = np.flatnonzero(problem.is_leaf)
    targets = np.concatenate([leaves, problem.pair_node.astype(np.int64)])
    lens = anc_ptr[targets + 1] - anc_ptr[targets]
    rows = np.repeat(np.arange(targets.size), lens)
    starts = np.repeat(anc_ptr[targets] - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
    cols = anc[np.arange(rows.size) + starts]
    eq_rows = np.concatenate([rows, leaves.size + np.arange(m)])
    eq_cols = np.concatenate([cols, n + np.arange(m)])
    a_eq = sp.csr_matrix((np.ones(eq_rows.size), (eq_rows, eq_cols)), shape=(targets.size, n + m + q))
    pair_of = np.repeat(np.arange(q), np.diff(problem.pair_ptr))
    ub_rows = np.concatenate([np.arange(m), np.arange(m)])
    ub_cols = np.concatenate([n + np.arange(m), n + m + pair_of])
    ub_vals = np.concatenate([np.ones(m), -np.ones(m)])
    a_ub = sp.csr_matrix((ub_vals, (ub_rows, ub_cols)), shape=(m, n + m + q))
    cost = np.concatenate(
        [problem.node_error + lam * problem.node_eval, np.zeros(m), lam * problem.pair_cost]
    )
    # HiGHS's optimality tolerances are absolute (1e-7): scale the objective so that its smallest
    # nonzero coefficient is 1 (costs lam * c / N are often far below 1e-7), then scale back
    nonzero = np.abs(cost[cost != 0])
    scale = float(min(1.0 / nonzero.min(), 1e9)) if nonzero.size else 1.0
    options: dict[str, object] = {}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    res = linprog(
        cost * scale,
        A_ub=a_ub if m else None,
        b_ub=np.zeros(m) if m else None,
        A_eq=a_eq,
        b_eq=np.ones(targets.size),
        bounds=(0.0, 1.0),
        method="highs",
        options=options,
    )
    elapsed = time.perf_counter() - t0
    if res.x is None:
        x = np.full(n + m + q, np.nan)
        leaf_mask = np.zeros(n, dtype=bool)
        obj = np.nan
    else:
        x = res.x
        leaf_mask = x[:n] > 0.5
        obj = float(cost @ x)
    status = 0 if res.status == 0 else 3
    return (
        _finish(
            problem,
            float(lam),
            leaf_mask,
            status=status,
            message=f"HiGHS: {res.message}",
            objective=obj,
            dual_bound=obj,
            gap=0.0 if status == 0 else np.nan,
            rel_gap=0.0 if status == 0 else np.nan,
            iterations=int(getattr(res, "nit", 0)),
            elapsed=elapsed,
        ),
        x,
    )
