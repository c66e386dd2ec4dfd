"""The CSTC solver: functions over arrays that fit, route, prune and fine-tune a tree of classifiers.

:func:`fit_tree` is the whole training of one tree at one ``lam`` on the weak learners' outputs:
the outputs and targets are standardized, :func:`optimize` minimizes the relaxed objective of
:mod:`._objective` node by node (top-down initialization, then cycles of closed-form Lemma 1
updates alternating with scipy's L-BFGS-B), small weights are zeroed, the tree is taken back
to raw units, pruned on validation rows (:func:`prune`) and its leaves are refit on the weak
learners already paid for (:func:`fine_tune`). :func:`route` is the hard test-time traversal
and :func:`pick_lam` the choice of the ``budget`` search. Nothing here knows the estimator:
the hyperparameters come as one :class:`Settings`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.optimize import minimize

from ..core._status import Status
from ._objective import _aux_update, _evaluate, _loss, _n_nodes, _Problem, _Structure

__all__: list[str] = []

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Settings:
    """The hyperparameters of one tree fit (the estimator's parameters of the same names)."""

    depth: int
    lam: float
    rho: float
    task: str
    sharpness: float
    risk: str
    n_cycles: int
    n_alternations: int
    max_iter: int
    tol: float
    eps: float
    prune: bool
    fine_tune: bool

    @classmethod
    def of(cls, est: Any) -> Settings:
        """Read the settings from an estimator's parameters."""
        return cls(
            int(est.depth), float(est.lam), float(est.rho), est.task, float(est.sharpness), est.risk,
            int(est.n_cycles), int(est.n_alternations), int(est.max_iter), float(est.tol), float(est.eps),
            bool(est.prune), bool(est.fine_tune),
        )


@dataclass(frozen=True)
class TreeFit:
    """A fitted tree in raw units (node ``k`` predicts ``phi @ coef[k] + intercept[k]``) and its history."""

    coef: FloatArray
    intercept: FloatArray
    threshold: FloatArray
    active: BoolArray
    is_leaf: BoolArray
    history: list[float]
    nit: int
    status: Status
    n_pruned: int


def single_thread_blas() -> Any:
    """Limit BLAS to one thread: the many small products of the node solves only lose to threading."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def weighted_median(v: FloatArray, w: FloatArray) -> float:
    """Weighted median of ``v``, halfway to the next distinct value so that ties do not sit on it."""
    if w.sum() <= 0:
        return float(np.median(v))
    order = np.argsort(v)
    vs = v[order]
    cw = np.cumsum(w[order])
    i = int(np.searchsorted(cw, 0.5 * cw[-1]))
    above = vs[i + 1 :][vs[i + 1 :] > vs[i]]
    return float(0.5 * (vs[i] + above[0])) if above.size else float(vs[i])


def solve_node(
    k: int, st: _Structure, pb: _Problem, B: FloatArray, b: FloatArray, theta: FloatArray, F: FloatArray,
    s: Settings,
) -> None:
    """Alternate Lemma 1 closed-form updates with L-BFGS-B on node k (in place on the solver's B, b, theta, F)."""
    T = B.shape[1]
    rho = pb.rho
    for _ in range(s.n_alternations):
        aux = _aux_update(st, pb, B, s.eps)

        def fun(x: FloatArray, aux: tuple[FloatArray, FloatArray] = aux) -> tuple[float, FloatArray]:
            beta = x[:T] - x[T:2 * T]
            B[k] = beta
            b[k] = x[2 * T]
            theta[k] = x[2 * T + 1]
            F[:, k] = pb.Phi @ beta + b[k]
            ev = _evaluate(st, pb, F, B, theta, aux)
            g = pb.Phi.T @ ev.dF[:, k] + ev.dB_cost[k]
            val = ev.value - rho * np.abs(beta).sum() + rho * x[:2 * T].sum()
            grad = np.concatenate([g + rho, -g + rho, [ev.dF[:, k].sum(), ev.dtheta[k]]])
            return val, grad

        x0 = np.concatenate([np.maximum(B[k], 0), np.maximum(-B[k], 0), [b[k], theta[k]]])
        bounds = [(0.0, None)] * (2 * T) + [(None, None)] * 2
        res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": s.max_iter})
        fun(res.x)


def init_node(k: int, pb: _Problem, w: FloatArray, B: FloatArray, b: FloatArray) -> None:
    """Weighted ridge fit of node k on rows weighted by their traversal probability (in place on B, b)."""
    sw = w.sum()
    if sw <= 0:
        return
    Phi = pb.Phi
    m = (w @ Phi) / sw
    ybar = float(w @ pb.y) / sw
    Xc = Phi - m
    A = Xc.T @ (Xc * w[:, None]) + 1e-2 * sw * np.eye(Phi.shape[1])
    beta = np.linalg.solve(A, Xc.T @ (w * (pb.y - ybar)))
    B[k] = beta
    b[k] = ybar - m @ beta


def optimize(pb: _Problem, s: Settings) -> tuple[FloatArray, FloatArray, FloatArray, list[float], int, Status]:
    """Minimize the relaxed objective: top-down initialization, then up to ``n_cycles`` cycles over the nodes.

    Returns
    -------
    B, b, theta : ndarray
        Weights (K, T), intercepts and thresholds (K,) in standardized units.
    history : list of float
        The objective after the initialization and after every cycle.
    nit : int
        Cycles run.
    status : Status
        ``SUCCESS`` when the relative decrease fell below ``tol``, else ``LIMIT``.
    """
    D = s.depth
    K = _n_nodes(D)
    n, T = pb.Phi.shape
    B = np.zeros((K, T))
    b = np.zeros(K)
    theta = np.zeros(K)
    F = np.zeros((n, K))
    # top-down initialization: level d is trained with its descendants cut off
    for d in range(D):
        active = np.zeros(K, dtype=bool)
        active[: 2 ** (d + 1) - 1] = True
        st = _Structure(D, active)
        for k in range(2**d - 1, 2 ** (d + 1) - 1):
            P = _evaluate(st, pb, F, B, theta).P
            init_node(k, pb, P[:, k], B, b)
            F[:, k] = pb.Phi @ B[k] + b[k]
            solve_node(k, st, pb, B, b, theta, F, s)
            P = _evaluate(st, pb, F, B, theta).P
            theta[k] = weighted_median(F[:, k], P[:, k])
    st = _Structure(D, np.ones(K, dtype=bool))
    hist = [_evaluate(st, pb, F, B, theta).value]
    status, nit = Status.LIMIT, 0
    for _ in range(s.n_cycles):
        for k in range(K):
            solve_node(k, st, pb, B, b, theta, F, s)
        nit += 1
        hist.append(_evaluate(st, pb, F, B, theta).value)
        if hist[-2] - hist[-1] <= s.tol * max(abs(hist[-2]), 1e-12):
            status = Status.SUCCESS
            break
    return B, b, theta, hist, nit, status


def node_outputs(Phi_raw: FloatArray, coef: FloatArray, intercept: FloatArray) -> FloatArray:
    """Output of every node on every row, (n_rows, K)."""
    return Phi_raw @ coef.T + intercept[None, :]


def route(Fr: FloatArray, threshold: FloatArray, active: BoolArray, depth: int) -> npt.NDArray[np.int64]:
    """Hard traversal: visited node at each level, -1 once the row has stopped (n x depth)."""
    n = Fr.shape[0]
    K = _n_nodes(depth)
    visited = -np.ones((n, depth), dtype=np.int64)
    node = np.zeros(n, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    for d in range(depth):
        visited[alive, d] = node[alive]
        lo = 2 * node + 1
        can = alive & (lo + 1 < K)
        can[can] = active[lo[can]] & active[lo[can] + 1]
        up = Fr[np.arange(n), node] > threshold[node]
        node = np.where(can, np.where(up, lo + 1, lo), node)
        alive = can
    return visited


def visited_matrix(visited: npt.NDArray[np.int64], n_nodes: int) -> sp.csr_matrix:
    """Return the nodes of :func:`route`'s ``visited`` as a bool matrix (n_rows, n_nodes)."""
    rows, cols = np.nonzero(visited >= 0)
    data = np.ones(rows.shape[0], dtype=bool)
    return sp.csr_matrix((data, (rows, visited[rows, cols])), shape=(visited.shape[0], n_nodes), dtype=bool)


def loss_raw(task: str, y_int: FloatArray, f: FloatArray) -> FloatArray:
    """Per-row loss of the outputs ``f`` (raw units)."""
    return _loss(task, y_int, f[:, None])[0][:, 0]


def prune(
    Phi_v: FloatArray, yv: FloatArray, coef: FloatArray, intercept: FloatArray, threshold: FloatArray,
    active: BoolArray, s: Settings,
) -> tuple[BoolArray, int]:
    """Collapse, bottom-up, every subtree whose validation loss is not below its root's alone.

    Returns the active nodes left (a new array) and the number of nodes removed.
    """
    Fr = node_outputs(Phi_v, coef, intercept)
    active = active.copy()
    K = active.shape[0]
    n_pruned = 0
    for k in reversed(range(K)):
        lo = 2 * k + 1
        if lo + 1 >= K or not (active[k] and active[lo] and active[lo + 1]):
            continue
        visited = route(Fr, threshold, active, s.depth)
        rows = (visited == k).any(axis=1)
        leaf = visited.max(axis=1)
        if rows.any():
            sub = loss_raw(s.task, yv[rows], Fr[rows, leaf[rows]]).sum()
            alone = loss_raw(s.task, yv[rows], Fr[rows, k]).sum()
            if sub < alone:
                continue
        stack = [lo, lo + 1]
        while stack:
            j = stack.pop()
            if j < K and active[j]:
                active[j] = False
                n_pruned += 1
                stack.extend([2 * j + 1, 2 * j + 2])
    return active, n_pruned


def _refit_leaf(Xs: FloatArray, ys: FloatArray, s: Settings) -> tuple[FloatArray, float]:
    """l1-regularized fit of one leaf on its rows and weak learners: (weights, intercept) in raw units."""
    mu, sd = Xs.mean(axis=0), Xs.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    Z = (Xs - mu) / sd
    y_mu = float(ys.mean()) if s.task == "regression" else 0.0
    y_sd = (float(ys.std()) or 1.0) if s.task == "regression" else 1.0
    yz = (ys - y_mu) / y_sd
    m = Xs.shape[1]

    def fun(x: FloatArray) -> tuple[float, FloatArray]:
        beta = x[:m] - x[m:2 * m]
        f = Z @ beta + x[2 * m]
        L, dL = _loss(s.task, yz, f[:, None])
        nr = f.shape[0]
        g = Z.T @ dL[:, 0] / nr
        val = float(L.sum() / nr + s.rho * x[: 2 * m].sum())
        return val, np.concatenate([g + s.rho, -g + s.rho, [dL[:, 0].sum() / nr]])

    res = minimize(fun, np.zeros(2 * m + 1), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, None)] * (2 * m) + [(None, None)], options={"maxiter": 500})
    bz = res.x[:m] - res.x[m : 2 * m]
    return bz / sd * y_sd, float((res.x[2 * m] - bz @ (mu / sd)) * y_sd + y_mu)


def fine_tune(
    Phi_raw: FloatArray, y_int: FloatArray, Phi_v: FloatArray | None, yv: FloatArray | None,
    coef: FloatArray, intercept: FloatArray, threshold: FloatArray, active: BoolArray, s: Settings,
) -> tuple[FloatArray, FloatArray]:
    """Refit every leaf on the training rows routed to it, only on weak learners already paid for.

    A refit leaf is kept unless it does worse on the validation rows routed to it. Returns new
    ``coef`` and ``intercept`` arrays.
    """
    coef, intercept = coef.copy(), intercept.copy()
    st = _Structure(s.depth, active)
    leaf_of = route(node_outputs(Phi_raw, coef, intercept), threshold, active, s.depth).max(axis=1)
    if Phi_v is not None and yv is not None:
        vis_v = route(node_outputs(Phi_v, coef, intercept), threshold, active, s.depth).max(axis=1)
    for r, leaf in enumerate(st.leaves):
        used = np.flatnonzero((coef[st.path[r]] != 0).any(axis=0))
        rows = leaf_of == leaf
        if used.size == 0 or rows.sum() < 2 * used.size + 2:
            continue
        w, inter = _refit_leaf(Phi_raw[rows][:, used], y_int[rows], s)
        new_coef = np.zeros_like(coef[leaf])
        new_coef[used] = w
        if Phi_v is not None and yv is not None:
            vr = vis_v == leaf
            if vr.any():
                old = loss_raw(s.task, yv[vr], Phi_v[vr] @ coef[leaf] + intercept[leaf]).sum()
                new = loss_raw(s.task, yv[vr], Phi_v[vr] @ new_coef + inter).sum()
                if new > old:
                    continue
        coef[leaf] = new_coef
        intercept[leaf] = inter
    return coef, intercept


def fit_tree(
    Phi_raw: FloatArray, y_int: FloatArray, tree_costs: FloatArray, group_usage: FloatArray,
    group_cost: FloatArray, s: Settings, Phi_v: FloatArray | None = None, yv: FloatArray | None = None,
) -> TreeFit:
    """Train one tree of classifiers on the weak learners' outputs ``Phi_raw`` (n_rows, n_trees).

    ``y_int``: the regression targets, or -1/+1 for ``task="binary"``; ``tree_costs``,
    ``group_usage`` and ``group_cost``: the relaxation's ``e``, ``G`` and ``c``; ``Phi_v, yv``:
    the validation rows' outputs and targets (pruning and the fine-tuning check).
    """
    mu = Phi_raw.mean(axis=0)
    sd = Phi_raw.std(axis=0)
    usable = sd > 1e-12 * (1.0 + np.abs(mu))
    scale = np.where(usable, sd, 1.0)
    Phi = np.where(usable[None, :], (Phi_raw - mu) / scale, 0.0)
    if s.task == "regression":
        y_mu, y_sd = float(y_int.mean()), float(y_int.std()) or 1.0
    else:
        y_mu, y_sd = 0.0, 1.0
    pb = _Problem(Phi, (y_int - y_mu) / y_sd, s.task, tree_costs, group_usage, group_cost, s.lam, s.rho,
                  s.sharpness, s.risk == "leaves")
    with single_thread_blas():
        B, b, theta, hist, nit, status = optimize(pb, s)
    B[np.abs(B) < s.eps] = 0.0
    B[:, ~usable] = 0.0
    # back to raw units: f_raw = Phi_raw @ coef + intercept; routing on f_raw vs threshold
    coef = B / scale[None, :] * y_sd
    intercept = (b - B @ (mu / scale)) * y_sd + y_mu
    threshold = theta * y_sd + y_mu
    active = np.ones(_n_nodes(s.depth), dtype=bool)
    n_pruned = 0
    if s.prune and Phi_v is not None and yv is not None:
        active, n_pruned = prune(Phi_v, yv, coef, intercept, threshold, active, s)
    if s.fine_tune:
        coef, intercept = fine_tune(Phi_raw, y_int, Phi_v, yv, coef, intercept, threshold, active, s)
    coef[~active] = 0.0
    return TreeFit(coef, intercept, threshold, active, _Structure(s.depth, active).is_leaf, hist, nit, status,
                   n_pruned)

