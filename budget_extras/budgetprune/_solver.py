"""Exact solvers for :class:`PruneProblem`: the primal-dual method and a HiGHS LP oracle.

Primal-dual (paper, Algorithm 1). Relaxing ``w^t_{g,i} <= w_{g,i}`` with multipliers
``beta >= 0`` (one per triple) splits the problem into

* one problem per tree, ``min sum_h (c_h - S_h) z_h`` over prunings, where ``S_h`` is the sum of
  ``beta`` over triples whose first node lies in the subtree of ``h``; solved exactly by a
  bottom-up dynamic program (``best_h = min(c_h - S_h, sum_children best)``), the shortest path
  of the paper;
* ``w`` in closed form: ``w_{g,i} = 1`` iff ``mu_{g,i} = lam c_g / N - sum_t beta^t_{g,i} < 0``.

The value of the relaxation is a lower bound (weak duality) for *any* ``beta >= 0``; the pruning
it returns, with ``w_{g,i} = max_t w^t_{g,i}``, is feasible and gives an upper bound. Every tree
is also re-pruned as an exact best response to the others (Gauss-Seidel sweeps, "polishing"),
which makes the upper bound reach the optimum quickly.

Dual steps. By complementary slackness some optimal ``beta`` lies on the *face* of an optimal
pruning: a pair the pruning pays for spends exactly its cost, on its kept first nodes only; an
unpaid pair spends at most its cost. The solver moves ``beta`` onto the face of the best
(polished) pruning and takes exponentiated-gradient steps on each pair's simplex (multipliers
plus a slack): multipliers at nodes the trees' current minimizers keep grow by ``exp(eta)``,
``eta`` a Polyak step towards the best upper bound in the multipliers' own metric. This needs
a handful of iterations where plain subgradient steps need hundreds. When the face is exhausted
(the step factor has been halved six times, or the gradient on the face vanishes) the solver
continues with projected subgradient steps along ``w^t - w`` (Polyak's step, the factor halved
when the bound stalls; Held, Wolfe and Crowder, 1974), which converge from anywhere. Because the
LP is integral (the paper's theorem) the Lagrangian dual has no gap, and the solver stops when
``upper - lower <= gap_tol * (upper - E)``, ``E`` the smallest error term of any pruning (a
constant that is most of the objective, so a gap relative to the whole objective would be far
coarser than the cost term): the pruning is then optimal to that tolerance on the part of the
objective that depends on the pruning.

The passes over the triples are compiled (``_budgetprune_kernels``, numba).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from ..core._status import MethodResult, Status
from ._problem import PruneProblem

__all__ = ["PruneResult", "lp_highs", "solve_primal_dual"]

_TIE = 1e-12
_BIG = 50_000_000  # above this many triples: float32 multipliers
_FACE_MIN_THETA = 1.5 / 2**6  # leave the face when the step factor has been halved this often
_FACE_MAX_ETA = 2.0  # largest exponentiated-gradient step
_FACE_POLISH = 3  # polishing sweeps at most before (re)starting on a face
_FACE_PATIENCE = 3  # on a face, halve the step factor after this many iterations without progress
_FACE_KEEP = 0.9  # weight of warm-start multipliers moved onto the face (the rest: even split)


@dataclass(frozen=True)
class PruneResult(MethodResult):
    """Outcome of a BudgetPrune solve (in the style of ``scipy.optimize.OptimizeResult``).

    Attributes
    ----------
    status : Status
        ``SUCCESS``: the duality gap is within tolerance (optimal); ``LIMIT``: the iteration
        limit (``max_iter``) or the time limit stopped the solver (the pruning is feasible but
        not proven optimal); ``INFEASIBLE``: HiGHS (:func:`lp_highs` only) found no solution.
    success : bool
        ``status is Status.SUCCESS``.
    message : str
        Human-readable status.
    fun : float
        Objective of the returned pruning (upper bound).
    dual_bound : float
        Best lower bound on the optimum.
    gap : float
        ``fun - dual_bound`` (>= 0 up to rounding).
    rel_gap : float
        ``gap / gap_scale``: the gap relative to the part of the objective that depends on the
        pruning (what ``gap_tol`` bounds); a gap within rounding (``1e-12 |fun|``) counts as 0.
    gap_scale : float
        ``fun`` minus the smallest error term of any pruning (the objective's constant
        part); ``>= lam * cost``. The solver stops when ``gap <= gap_tol * gap_scale``.
    nit : int
        Dual iterations done (HiGHS: its iterations).
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

    fun: float
    dual_bound: float
    gap: float
    rel_gap: float
    nit: int
    lam: float
    leaf_mask: np.ndarray
    collapsed: np.ndarray
    error_term: float
    acquisition_term: float
    evaluation_term: float
    elapsed: float
    beta: np.ndarray | None = field(default=None, repr=False)
    gap_scale: float = float("nan")

    @property
    def cost(self) -> float:
        """Average validation cost of the pruning: ``acquisition_term + evaluation_term``."""
        return self.acquisition_term + self.evaluation_term


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
    face_steps: bool = True,
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
        Stop when ``upper - lower <= gap_tol * (upper - E)``, ``E`` the smallest error term of
        any pruning (the objective's constant part; ``PruneResult.gap_scale`` is ``upper - E``).
    max_iter : int, default 500
        Dual iterations at most.
    time_limit : float, optional
        Seconds at most (checked once per iteration).
    beta0 : ndarray of float, shape (n_triples,), optional
        Starting multipliers (for example ``result.beta`` of a nearby lambda); by default each
        pair's cost ``lam * pair_cost`` is split evenly over its trees.
    polish_every : int, default 10
        Every this many iterations (and at the end) re-prune each tree as the exact best
        response to the other trees; 0 disables. It needs the triples sorted by tree (8 bytes
        per triple, computed once per problem and cached). Problems with more than ``5e7``
        triples keep the multipliers in float32 (sums are accumulated in float64).
    patience : int, default 10
        Halve the step factor after this many iterations without a better lower bound (3 while
        stepping on a face).
    face_steps : bool, default True
        Step on the complementary-slackness face of the best pruning first (see the module
        docstring); needs ``polish_every > 0``. ``False``: projected subgradient steps only.
    progress : callable, optional
        Called as ``progress(iteration, upper, lower)`` after each iteration.

    Returns
    -------
    PruneResult
    """
    from . import _kernels as kern

    _solve_iv(lam, gap_tol, max_iter, time_limit)
    t0 = time.perf_counter()
    lam = float(lam)
    parent, is_leaf = problem.parent, problem.is_leaf
    n_nodes = problem.n_nodes
    c = problem.node_error + lam * problem.node_eval
    b = lam * problem.pair_cost
    ptr = problem.pair_ptr
    counts = np.diff(ptr)
    node = problem.pair_node
    dtype = np.float32 if problem.n_triples > _BIG else np.float64
    if beta0 is None:
        beta = np.repeat((b / np.maximum(counts, 1)).astype(dtype), counts)
    else:
        beta = np.maximum(np.asarray(beta0, dtype=dtype), 0.0)  # a new array: beta0 is not modified
        if beta.shape != (problem.n_triples,):
            raise ValueError(
                f"The 'beta0' parameter must have shape ({problem.n_triples},). Got {beta.shape} instead."
            )
    weight = problem.pair_count if problem.pair_count is not None else np.ones(problem.n_pairs, dtype=np.int32)
    has_pairs = problem.n_pairs > 0
    n_blocks = max(1, min(problem.n_pairs, 4 * _threads()))
    order = _tree_order(problem) if polish_every and has_pairs else None

    def leaves_of(kept: np.ndarray) -> np.ndarray:
        reach = np.ones(n_nodes, dtype=bool)
        has_parent = parent >= 0
        reach[has_parent] = kept[parent[has_parent]]
        return reach & ~kept

    last_polish: list[np.ndarray] = []  # [kept, usage] of the last polished pruning

    def polish(kept: np.ndarray) -> tuple[np.ndarray, float]:
        if order is None:
            kept, _ = kern.best_pruning(parent, is_leaf, c)
            usage = np.zeros(0, dtype=np.int32)
        else:
            # the usage counts of the last polished pruning are kept up to date by the sweep
            usage = last_polish[1] if last_polish and last_polish[0] is kept else kern.pair_usage(ptr, node, kept)
            kept = kept.copy()
            kern.polish_sweep(parent, is_leaf, problem.tree_offset, c, b, kept, *order, usage)
            last_polish[:] = [kept, usage]
        return kept, float(c @ leaves_of(kept)) + float(b @ (usage > 0))

    best_upper, best_leaves = np.inf, np.zeros(n_nodes, dtype=bool)
    best_kept = np.zeros(n_nodes, dtype=bool)
    lower = -np.inf
    theta, stall = 1.5, 0
    status, it, timed_out = Status.LIMIT, 0, False
    # face mode: multipliers restricted to the complementary-slackness face of the best pruning
    face = face_steps and order is not None
    slack = np.zeros(problem.n_pairs)
    mass = np.zeros(problem.n_pairs) if face else slack
    total = np.zeros(problem.n_pairs) if face else slack
    face_upper = np.inf
    # the part of the objective that depends on the pruning: objective minus the smallest error
    # term of any pruning (a constant, often most of the objective), >= lam * cost >= 0
    _, err_floor = kern.best_pruning(parent, is_leaf, problem.node_error)
    err_floor = float(err_floor)

    def converged(upper: float, low: float) -> bool:
        scale = max(upper - err_floor, 0.0)
        return upper - low <= gap_tol * scale + 1e-12 * abs(upper)

    reward, beta_sum = kern.sums(ptr, node, beta, n_nodes, n_blocks)
    for it in range(1, max_iter + 1):
        kept, tree_value = kern.best_pruning(parent, is_leaf, c - kern.subtree_sums(parent, reward))
        w = beta_sum > b  # w_p = 1 iff its reduced cost b_p - sum_t beta^t_p is negative
        dual = tree_value + float(np.minimum(beta_sum, b).sum())
        if not np.isfinite(lower) or dual > lower + _TIE * max(abs(lower), 1.0):
            lower, stall = max(lower, dual), 0
        else:
            stall += 1
            if stall >= (min(patience, _FACE_PATIENCE) if face else patience):
                theta, stall = max(theta / 2, 1e-8), 0
        if face and it > 1:
            norm2, acq = kern.face_stats(ptr, node, beta, slack, kept, b, mass, total)
        else:
            norm2, acq = kern.subgradient_stats(ptr, node, weight, kept, w, b)
        leaves = leaves_of(kept)
        upper = float(c @ leaves) + float(acq)
        if upper < best_upper:
            best_upper, best_leaves, best_kept = upper, leaves, kept
        if polish_every and it % polish_every == 1 % polish_every:
            best_kept, upper = polish(best_kept)
            if upper < best_upper:
                best_upper, best_leaves = upper, leaves_of(best_kept)
        if progress is not None:
            progress(it, best_upper, lower)
        if converged(best_upper, lower):
            status = Status.SUCCESS
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            status, timed_out = Status.LIMIT, True
            break
        if not has_pairs:
            continue
        if face and (theta < _FACE_MIN_THETA or (it > 1 and norm2 <= 0.0)):
            face, theta, stall = False, 1.5, 0  # the face is exhausted: unrestricted steps from here
            norm2, _ = kern.subgradient_stats(ptr, node, weight, kept, w, b)
        if face and best_upper < face_upper * (1 - 1e-12):
            # (re)start on the face of the best pruning (first iteration or a better pruning found),
            # after polishing it until a sweep no longer improves it
            for _ in range(_FACE_POLISH):
                cand, upper = polish(best_kept)
                if upper >= best_upper * (1 - 1e-12):
                    break
                best_kept, best_upper, best_leaves = cand, upper, leaves_of(cand)
            face_upper = best_upper
            kern.face_start(ptr, node, best_kept, b, beta, slack, 0.0 if beta0 is None else _FACE_KEEP)
            reward, beta_sum = kern.sums(ptr, node, beta, n_nodes, n_blocks)
            continue
        if face:
            eta = min(theta * (best_upper - dual) / norm2, _FACE_MAX_ETA)
            reward, beta_sum = kern.face_step_and_sums(
                ptr, node, beta, slack, kept, mass, total, eta, n_nodes, n_blocks
            )
            continue
        if norm2 == 0:  # beta is dual optimal and the relaxed pruning is feasible
            lower = max(lower, upper)
            continue
        step = theta * (best_upper - dual) / norm2
        reward, beta_sum = kern.step_and_sums(ptr, node, weight, beta, kept, w, step, n_nodes, n_blocks)
    if polish_every and status != Status.SUCCESS:
        best_kept, upper = polish(best_kept)
        if upper < best_upper:
            best_upper, best_leaves = upper, leaves_of(best_kept)
        if converged(best_upper, lower):
            status = Status.SUCCESS
    gap = max(best_upper - lower, 0.0)
    scale = max(best_upper - err_floor, 0.0)
    compared = (
        f"duality gap {gap:.3g} vs gap_tol {gap_tol:g} x {scale:.3g} (the objective {best_upper:.6g} "
        f"minus its constant part {err_floor:.6g}, the smallest error term of any pruning)"
    )
    if status == Status.SUCCESS:
        message = f"Optimal at lam={lam:.6g}: {compared}."
    elif timed_out:
        message = f"Time limit ({time_limit:g} s) reached at lam={lam:.6g}: {compared}."
    else:
        message = f"Iteration limit ({max_iter}) reached at lam={lam:.6g}: {compared}."

    return _finish(
        problem,
        lam,
        best_leaves,
        status=status,
        message=message,
        fun=best_upper,
        dual_bound=lower,
        gap=gap,
        # gaps within floating-point rounding of the objective (1e-12 of it) count as zero
        rel_gap=max(gap - 1e-12 * abs(best_upper), 0.0) / max(scale, 1e-300),
        gap_scale=scale,
        nit=it,
        elapsed=time.perf_counter() - t0,
        beta=beta,
    )


def _threads() -> int:
    import numba

    return int(numba.get_num_threads())


def _tree_order(problem: PruneProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Triples sorted by tree (bounds, nodes, pairs), computed once per problem."""
    from . import _kernels as kern

    if "tree_bounds" not in problem._cache:
        node_tree = (np.searchsorted(problem.tree_offset, np.arange(problem.n_nodes), side="right") - 1).astype(
            np.int32
        )
        bounds, tri_node, tri_pair = kern.tree_order(problem.pair_ptr, problem.pair_node, node_tree, problem.n_trees)
        problem._cache.update(tree_bounds=bounds, tree_node=tri_node, tree_pair=tri_pair)
    return problem._cache["tree_bounds"], problem._cache["tree_node"], problem._cache["tree_pair"]


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
    # scipy's HiGHS status: 0 optimal, 1 iteration or time limit, 2 infeasible, 3 unbounded,
    # 4 numerical difficulties (the program is always feasible: every tree cut to its root)
    status = {0: Status.SUCCESS, 1: Status.LIMIT}.get(int(res.status), Status.INFEASIBLE)
    return (
        _finish(
            problem,
            float(lam),
            leaf_mask,
            status=status,
            message=f"HiGHS: {res.message}",
            fun=obj,
            dual_bound=obj,
            gap=0.0 if status == Status.SUCCESS else np.nan,
            rel_gap=0.0 if status == Status.SUCCESS else np.nan,
            nit=int(getattr(res, "nit", 0)),
            elapsed=elapsed,
        ),
        x,
    )
