"""The relaxed CSTC objective and its gradients (Xu et al., ICML 2013, sections 3-4).

Nodes of a complete binary tree of ``depth`` levels are numbered in heap order: node ``k``
has the lower child ``2k+1`` and the upper child ``2k+2``; ``K = 2**depth - 1``. Node ``k``
predicts ``f^k(x) = phi(x)^T beta^k + b^k`` and sends ``x`` to its upper child when
``f^k(x) > theta^k``. During training the traversal is soft: with ``s = sigmoid(a (f^k -
theta^k))`` (``a`` the routing sharpness), ``p^{upper} = p^k s`` and ``p^{lower} = p^k (1 -
s)``, ``p^{root} = 1``. The relaxed objective is

    J = 1/n sum_k sum_i p_i^k loss(y_i, f^k(x_i))                     (expected tree risk)
        + rho sum_k |beta^k|_1                                          (l1 regularization)
        + lam sum_{leaves l} pbar^l [ sum_t e_t ||beta_t^{pi^l}||_2
                                      + sum_g c_g ||beta_{G_g}^{pi^l}||_2 ]  (expected cost)

where ``pbar^l = 1/n sum_i p_i^l``, ``pi^l`` is the set of nodes on the path from the root to
leaf ``l``, ``||beta_t^{pi^l}||_2 = sqrt(sum_{j in pi^l} (beta_t^j)^2)`` is the mixed-norm
relaxation of the l0 indicator "weak learner t is used on the path", and
``||beta_{G_g}^{pi^l}||_2 = sqrt(sum_{j in pi^l} sum_t G_gt (beta_t^j)^2)`` the one of
"a feature of group g is used on the path" (``G_gt = 1`` when tree ``t`` splits on a feature of
group ``g``). Lemma 1 of the paper, ``sqrt(x) = min_{eta > 0} (x / eta + eta) / 2``, turns each
norm into a quadratic with a closed-form auxiliary variable ``eta = sqrt(x)``
(:func:`_aux_update`); :func:`_evaluate` with ``aux`` evaluates that surrogate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy.special import expit

__all__: list[str] = []

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def _n_nodes(depth: int) -> int:
    return 2**depth - 1


@dataclass(frozen=True)
class _Structure:
    """Which nodes exist and which are leaves (private).

    Attributes
    ----------
    depth : int
        Levels of the complete tree.
    active : ndarray of bool, shape (K,)
        Nodes that exist (pruned or not yet grown nodes are inactive).
    """

    depth: int
    active: BoolArray
    is_leaf: BoolArray = field(init=False)
    internal: tuple[int, ...] = field(init=False)
    leaves: tuple[int, ...] = field(init=False)
    path: BoolArray = field(init=False)

    def __post_init__(self) -> None:
        K = _n_nodes(self.depth)
        act = np.asarray(self.active, dtype=bool)
        if act.shape != (K,) or not act[0]:
            raise ValueError("The root of a CSTC tree must be active.")
        has_kids = np.zeros(K, dtype=bool)
        for k in range(K):
            lo, up = 2 * k + 1, 2 * k + 2
            if up < K and act[lo] and act[up]:
                has_kids[k] = True
        is_leaf = act & ~has_kids
        internal = tuple(int(k) for k in np.flatnonzero(act & has_kids))
        leaves = tuple(int(k) for k in np.flatnonzero(is_leaf))
        path = np.zeros((len(leaves), K), dtype=bool)
        for r, leaf in enumerate(leaves):
            j = leaf
            while True:
                path[r, j] = True
                if j == 0:
                    break
                j = (j - 1) // 2
        object.__setattr__(self, "active", act)
        object.__setattr__(self, "is_leaf", is_leaf)
        object.__setattr__(self, "internal", internal)
        object.__setattr__(self, "leaves", leaves)
        object.__setattr__(self, "path", path)


@dataclass(frozen=True)
class _Problem:
    """Data and constants of a CSTC objective (private).

    Attributes
    ----------
    Phi : ndarray (n, T)
        Feature map (standardized weak-learner outputs).
    y : ndarray (n,)
        Targets (regression: standardized values; binary: -1 / +1).
    task : {"regression", "binary"}
    e : ndarray (T,)
        Evaluation cost of each weak learner.
    G : ndarray (n_groups, T)
        Group-usage matrix of the weak learners.
    c : ndarray (n_groups,)
        Acquisition cost of each group.
    lam, rho, sharpness : float
        Cost trade-off, l1 weight and routing sharpness ``a``.
    risk_at_leaves : bool
        Count the risk at the leaves only (True) instead of at every node (False).
    """

    Phi: FloatArray
    y: FloatArray
    task: str
    e: FloatArray
    G: FloatArray
    c: FloatArray
    lam: float
    rho: float
    sharpness: float
    risk_at_leaves: bool = False


def _loss(task: str, y: FloatArray, F: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Loss per (row, node) and its derivative in ``F``."""
    if task == "regression":
        r = F - y[:, None]
        return r * r, 2.0 * r
    z = y[:, None] * F
    return np.logaddexp(0.0, -z), -y[:, None] * expit(-z)


def _probabilities(st: _Structure, S: FloatArray) -> FloatArray:
    """Soft traversal probabilities ``p_i^k`` (n x K) from the routing sigmoids ``S``."""
    n, K = S.shape
    P = np.zeros((n, K))
    P[:, 0] = 1.0
    for k in st.internal:  # heap order is top-down
        P[:, 2 * k + 1] = P[:, k] * (1.0 - S[:, k])
        P[:, 2 * k + 2] = P[:, k] * S[:, k]
    return P


def _path_norms(st: _Structure, pb: _Problem, B: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Squared path norms: ``s[l, t]`` for weak learners and ``sg[l, g]`` for groups."""
    s = st.path.astype(np.float64) @ (B * B)
    return s, s @ pb.G.T


def _aux_update(st: _Structure, pb: _Problem, B: FloatArray, eps: float) -> tuple[FloatArray, FloatArray]:
    """Lemma 1 closed form: ``eta = max(sqrt(squared norm), eps)`` per (leaf, tree) and (leaf, group)."""
    s, sg = _path_norms(st, pb, B)
    return np.maximum(np.sqrt(s), eps), np.maximum(np.sqrt(sg), eps)


def _leaf_costs(
    st: _Structure, pb: _Problem, B: FloatArray, aux: tuple[FloatArray, FloatArray] | None
) -> tuple[FloatArray, FloatArray]:
    """Relaxed path cost per leaf and the per-(leaf, tree) weight ``W`` of ``beta^2 / 2``.

    The derivative of the cost of leaf ``l`` in ``beta_t^j`` (``j`` on its path) is
    ``W[l, t] * beta_t^j``.
    """
    s, sg = _path_norms(st, pb, B)
    tiny = 1e-300
    if aux is None:
        rs, rg = np.sqrt(s), np.sqrt(sg)
        cost = rs @ pb.e + rg @ pb.c
        W = pb.e[None, :] / np.maximum(rs, tiny) + (pb.c[None, :] / np.maximum(rg, tiny)) @ pb.G
    else:
        eta, zeta = aux
        cost = 0.5 * ((s / eta + eta) @ pb.e + (sg / zeta + zeta) @ pb.c)
        W = pb.e[None, :] / eta + (pb.c[None, :] / zeta) @ pb.G
    return cost, W


@dataclass
class _Eval:
    """Objective value and gradients of :func:`_evaluate` (private)."""

    value: float
    risk: float
    cost: float
    l1: float
    dF: FloatArray  # (n, K) derivative in the node outputs f^k(x_i)
    dB_cost: FloatArray  # (K, T) derivative of the cost term in beta
    dtheta: FloatArray  # (K,)
    P: FloatArray


def _evaluate(
    st: _Structure,
    pb: _Problem,
    F: FloatArray,
    B: FloatArray,
    theta: FloatArray,
    aux: tuple[FloatArray, FloatArray] | None = None,
) -> _Eval:
    """Relaxed objective (``aux=None``) or its Lemma-1 surrogate, with gradients.

    Parameters
    ----------
    st : _Structure
    pb : _Problem
    F : ndarray (n, K)
        Node outputs ``Phi @ B.T + b``.
    B : ndarray (K, T)
    theta : ndarray (K,)
    aux : tuple of ndarray or None
        Auxiliary variables ``(eta, zeta)`` of Lemma 1; None for the exact mixed norms.

    Returns
    -------
    _Eval
        ``dF`` chains to ``beta`` through ``Phi.T @ dF[:, k]`` and to ``b`` through
        ``dF[:, k].sum()``; ``dB_cost`` is the cost term's own derivative in ``B``.
        The l1 term's value is included; its (sub)gradient ``rho * sign(B)`` is not.
    """
    n, K = F.shape
    a = pb.sharpness
    S = expit(a * (F - theta[None, :]))
    P = _probabilities(st, S)
    L, dL = _loss(pb.task, pb.y, F)
    act = (st.is_leaf if pb.risk_at_leaves else st.active).astype(np.float64)
    risk = float((P * L * act[None, :]).sum() / n)
    leaf_cost, W = _leaf_costs(st, pb, B, aux)
    leaves = np.asarray(st.leaves, dtype=np.int64)
    pbar = P[:, leaves].mean(axis=0)
    cost = float(pb.lam * (pbar @ leaf_cost))
    l1 = float(pb.rho * np.abs(B[st.active]).sum())

    # adjoint of P: direct terms, then bottom-up through the routing
    adjP = (L * act[None, :]) / n
    adjP[:, leaves] += pb.lam * leaf_cost[None, :] / n
    dF = (P * dL * act[None, :]) / n
    dtheta = np.zeros(K)
    for k in reversed(st.internal):
        lo, up = 2 * k + 1, 2 * k + 2
        sk = S[:, k]
        dS = P[:, k] * (adjP[:, up] - adjP[:, lo])
        adjP[:, k] += adjP[:, lo] * (1.0 - sk) + adjP[:, up] * sk
        dM = dS * sk * (1.0 - sk) * a
        dF[:, k] += dM
        dtheta[k] = -dM.sum()
    dB_cost = B * (st.path.T.astype(np.float64) @ (pb.lam * pbar[:, None] * W))
    return _Eval(risk + cost + l1, risk, cost, l1, dF, dB_cost, dtheta, P)


def _full_gradient(
    st: _Structure, pb: _Problem, B: FloatArray, b: FloatArray, theta: FloatArray,
    aux: tuple[FloatArray, FloatArray] | None = None,
) -> tuple[float, FloatArray, FloatArray, FloatArray]:
    """Objective and gradient in every parameter (``B``, ``b``, ``theta``).

    The l1 term contributes ``rho * sign(B)``: exact wherever no weight is zero.
    """
    F = pb.Phi @ B.T + b[None, :]
    ev = _evaluate(st, pb, F, B, theta, aux)
    act = st.active.astype(np.float64)[:, None]
    gB = (pb.Phi.T @ ev.dF).T + ev.dB_cost + pb.rho * np.sign(B) * act
    gb = ev.dF.sum(axis=0)
    return ev.value, gB, gb, ev.dtheta
