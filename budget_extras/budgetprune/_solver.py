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

import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from ..core._params import Interval, check_scalar
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
    nonneg = [Interval(numbers.Real, 0, None, closed="left")]
    check_scalar(lam, "lam", nonneg)
    check_scalar(gap_tol, "gap_tol", nonneg)
    check_scalar(max_iter, "max_iter", [Interval(numbers.Integral, 1, None, closed="left")])
    check_scalar(time_limit, "time_limit", [Interval(numbers.Real, 0, None, closed="neither"), None])


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
    order = _tree_order(problem) if polish_every and problem.n_pairs > 0 else None
    primal = _Primal(problem, lam, order, kern)
    dual = _Dual(problem, primal, beta0, patience=patience, face=face_steps and order is not None, kern=kern)
    status, it, timed_out = Status.LIMIT, 0, False
    for it in range(1, max_iter + 1):
        kept, w, value = dual.bound()
        norm2, acq = dual.stats(it, kept, w)
        upper = primal.offer(kept, acq)
        if polish_every and it % polish_every == 1 % polish_every:
            upper = primal.polish_best()
        if progress is not None:
            progress(it, primal.best_upper, dual.lower)
        if primal.converged(dual.lower, gap_tol):
            status = Status.SUCCESS
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            status, timed_out = Status.LIMIT, True
            break
        if problem.n_pairs > 0:
            dual.step(it, kept, w, value, norm2, upper)
    if polish_every and status != Status.SUCCESS:
        primal.polish_best()
        if primal.converged(dual.lower, gap_tol):
            status = Status.SUCCESS
    gap = max(primal.best_upper - dual.lower, 0.0)
    scale = max(primal.best_upper - primal.err_floor, 0.0)
    compared = (
        f"duality gap {gap:.3g} vs gap_tol {gap_tol:g} x {scale:.3g} (the objective {primal.best_upper:.6g} "
        f"minus its constant part {primal.err_floor:.6g}, the smallest error term of any pruning)"
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
        primal.best_leaves,
        status=status,
        message=message,
        fun=primal.best_upper,
        dual_bound=dual.lower,
        gap=gap,
        # gaps within floating-point rounding of the objective (1e-12 of it) count as zero
        rel_gap=max(gap - 1e-12 * abs(primal.best_upper), 0.0) / max(scale, 1e-300),
        gap_scale=scale,
        nit=it,
        elapsed=time.perf_counter() - t0,
        beta=dual.beta,
    )


class _Primal:
    """The primal side of :func:`solve_primal_dual`: the best pruning found and its polishing.

    ``c`` and ``b`` are the node and pair coefficients of the objective at ``lam``; the best
    pruning is ``best_kept`` (internal nodes kept), ``best_leaves`` (its leaves) and
    ``best_upper`` (its objective, the upper bound).
    """

    def __init__(
        self, problem: PruneProblem, lam: float, order: tuple[np.ndarray, ...] | None, kern: Any
    ) -> None:
        self.problem, self.order, self.kern = problem, order, kern
        self.parent, self.is_leaf = problem.parent, problem.is_leaf
        self.c = problem.node_error + lam * problem.node_eval
        self.b = lam * problem.pair_cost
        n = problem.n_nodes
        self.best_upper, self.best_leaves, self.best_kept = np.inf, np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        self._last_polish: list[np.ndarray] = []  # [kept, usage] of the last polished pruning
        # the part of the objective that depends on the pruning: objective minus the smallest error
        # term of any pruning (a constant, often most of the objective), >= lam * cost >= 0
        self.err_floor = float(kern.best_pruning(self.parent, self.is_leaf, problem.node_error)[1])

    def leaves_of(self, kept: np.ndarray) -> np.ndarray:
        """Leaves of the pruning that keeps the internal nodes ``kept``."""
        reach = np.ones(self.parent.shape[0], dtype=bool)
        has_parent = self.parent >= 0
        reach[has_parent] = kept[self.parent[has_parent]]
        return reach & ~kept

    def polish(self, kept: np.ndarray) -> tuple[np.ndarray, float]:
        """Re-prune every tree as the exact best response to the others; the pruning and its objective."""
        kern = self.kern
        if self.order is None:
            kept, _ = kern.best_pruning(self.parent, self.is_leaf, self.c)
            usage = np.zeros(0, dtype=np.int32)
        else:
            ptr, node = self.problem.pair_ptr, self.problem.pair_node
            last = self._last_polish
            # the usage counts of the last polished pruning are kept up to date by the sweep
            usage = last[1] if last and last[0] is kept else kern.pair_usage(ptr, node, kept)
            kept = kept.copy()
            kern.polish_sweep(self.parent, self.is_leaf, self.problem.tree_offset, self.c, self.b, kept,
                              *self.order, usage)
            self._last_polish[:] = [kept, usage]
        return kept, float(self.c @ self.leaves_of(kept)) + float(self.b @ (usage > 0))

    def offer(self, kept: np.ndarray, acq: float) -> float:
        """Keep the pruning ``kept`` (pair cost ``acq``) if it beats the best; return its objective."""
        leaves = self.leaves_of(kept)
        upper = float(self.c @ leaves) + float(acq)
        if upper < self.best_upper:
            self.best_upper, self.best_leaves, self.best_kept = upper, leaves, kept
        return upper

    def polish_best(self) -> float:
        """Polish the best pruning (never worse); return the polished objective."""
        self.best_kept, upper = self.polish(self.best_kept)
        if upper < self.best_upper:
            self.best_upper, self.best_leaves = upper, self.leaves_of(self.best_kept)
        return upper

    def polish_until_stable(self) -> None:
        """Polish the best pruning until a sweep no longer improves it (at most ``_FACE_POLISH`` sweeps)."""
        for _ in range(_FACE_POLISH):
            cand, upper = self.polish(self.best_kept)
            if upper >= self.best_upper * (1 - 1e-12):
                break
            self.best_kept, self.best_upper, self.best_leaves = cand, upper, self.leaves_of(cand)

    def converged(self, lower: float, gap_tol: float) -> bool:
        """Whether the gap to ``lower`` is within ``gap_tol`` of the pruning-dependent objective."""
        scale = max(self.best_upper - self.err_floor, 0.0)
        return self.best_upper - lower <= gap_tol * scale + 1e-12 * abs(self.best_upper)


class _Dual:
    """The dual side of :func:`solve_primal_dual`: the multipliers, the lower bound and the steps.

    ``beta`` holds one multiplier per triple; ``reward``/``beta_sum`` are its sums per node and
    per pair. In face mode the multipliers stay on the complementary-slackness face of the best
    pruning (``slack``, ``mass``, ``total`` per pair); ``theta`` is the step factor, halved after
    ``patience`` iterations without a better bound (``stall``).
    """

    def __init__(
        self,
        problem: PruneProblem,
        primal: _Primal,
        beta0: np.ndarray | None,
        *,
        patience: int,
        face: bool,
        kern: Any,
    ) -> None:
        self.primal, self.kern, self.patience, self.face = primal, kern, patience, face
        self.ptr, self.node, self.b = problem.pair_ptr, problem.pair_node, primal.b
        self.n_nodes = problem.n_nodes
        counts = np.diff(self.ptr)
        dtype = np.float32 if problem.n_triples > _BIG else np.float64
        if beta0 is None:
            self.beta = np.repeat((self.b / np.maximum(counts, 1)).astype(dtype), counts)
        else:
            self.beta = np.maximum(np.asarray(beta0, dtype=dtype), 0.0)  # a new array: beta0 is not modified
            if self.beta.shape != (problem.n_triples,):
                raise ValueError(
                    f"The 'beta0' parameter must have shape ({problem.n_triples},). Got {self.beta.shape} instead."
                )
        self.keep = 0.0 if beta0 is None else _FACE_KEEP
        self.weight = (
            problem.pair_count if problem.pair_count is not None else np.ones(problem.n_pairs, dtype=np.int32)
        )
        self.n_blocks = max(1, min(problem.n_pairs, 4 * _threads()))
        self.slack = np.zeros(problem.n_pairs)
        self.mass = np.zeros(problem.n_pairs) if face else self.slack
        self.total = np.zeros(problem.n_pairs) if face else self.slack
        self.face_upper = np.inf
        self.lower, self.theta, self.stall = -np.inf, 1.5, 0
        self.reward, self.beta_sum = kern.sums(self.ptr, self.node, self.beta, self.n_nodes, self.n_blocks)

    def bound(self) -> tuple[np.ndarray, np.ndarray, float]:
        """Solve the relaxation at ``beta``: each tree's minimizer, ``w`` and the dual value (a lower bound)."""
        p, kern = self.primal, self.kern
        kept, tree_value = kern.best_pruning(p.parent, p.is_leaf, p.c - kern.subtree_sums(p.parent, self.reward))
        w = self.beta_sum > self.b  # w_p = 1 iff its reduced cost b_p - sum_t beta^t_p is negative
        value = tree_value + float(np.minimum(self.beta_sum, self.b).sum())
        lower = self.lower
        if not np.isfinite(lower) or value > lower + _TIE * max(abs(lower), 1.0):
            self.lower, self.stall = max(lower, value), 0
        else:
            self.stall += 1
            if self.stall >= (min(self.patience, _FACE_PATIENCE) if self.face else self.patience):
                self.theta, self.stall = max(self.theta / 2, 1e-8), 0
        return kept, w, value

    def stats(self, it: int, kept: np.ndarray, w: np.ndarray) -> tuple[float, float]:
        """Squared norm of the step direction and the pair cost of the pruning ``kept``."""
        if self.face and it > 1:
            return self.kern.face_stats(self.ptr, self.node, self.beta, self.slack, kept, self.b, self.mass,
                                        self.total)
        return self.kern.subgradient_stats(self.ptr, self.node, self.weight, kept, w, self.b)

    def step(self, it: int, kept: np.ndarray, w: np.ndarray, value: float, norm2: float, upper: float) -> None:
        """Move ``beta``: onto (or along) the face of the best pruning, or a projected subgradient step."""
        kern, p = self.kern, self.primal
        ptr, node, n_nodes, n_blocks = self.ptr, self.node, self.n_nodes, self.n_blocks
        if self.face and (self.theta < _FACE_MIN_THETA or (it > 1 and norm2 <= 0.0)):
            self.face, self.theta, self.stall = False, 1.5, 0  # the face is exhausted: unrestricted steps
            norm2, _ = kern.subgradient_stats(ptr, node, self.weight, kept, w, self.b)
        if self.face and p.best_upper < self.face_upper * (1 - 1e-12):
            # (re)start on the face of the best pruning (first iteration or a better pruning found),
            # after polishing it until a sweep no longer improves it
            p.polish_until_stable()
            self.face_upper = p.best_upper
            kern.face_start(ptr, node, p.best_kept, self.b, self.beta, self.slack, self.keep)
            self.reward, self.beta_sum = kern.sums(ptr, node, self.beta, n_nodes, n_blocks)
        elif self.face:
            eta = min(self.theta * (p.best_upper - value) / norm2, _FACE_MAX_ETA)
            self.reward, self.beta_sum = kern.face_step_and_sums(
                ptr, node, self.beta, self.slack, kept, self.mass, self.total, eta, n_nodes, n_blocks
            )
        elif norm2 == 0:  # beta is dual optimal and the relaxed pruning is feasible
            self.lower = max(self.lower, upper)
        else:
            step = self.theta * (p.best_upper - value) / norm2
            self.reward, self.beta_sum = kern.step_and_sums(
                ptr, node, self.weight, self.beta, kept, w, step, n_nodes, n_blocks
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
