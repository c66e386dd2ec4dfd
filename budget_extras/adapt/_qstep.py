"""The closed-form q-step of Adapt-GBRT and the losses of its g/f1 step.

Notation (Nan & Saligrama 2017, sections 3-4; reference code ``em_adaptive_gbrt.m``):
``g(x)`` is the gate's raw score, ``sigma(g)`` the probability of sending a row to the expensive
model ``f0`` (``z = 1``); ``f1(x)`` is the cheap model's raw score. For a row with label ``y``

* ``A = log p0(y | x) + log sigma(g)``     (log-weight of ``z = 1``, f0 predicts),
* ``B = log p1(y | x) + log sigma(-g)``    (log-weight of ``z = 0``, f1 predicts),

and the q-step is the I-projection of the posterior ``q(z = 1) = sigma(A - B)`` onto
``{q : mean(q) = P_full}``: ``q_i = 1 / (1 + exp(B_i - A_i + beta))`` with the scalar ``beta``
found by bisection (mean(q) is strictly decreasing in beta).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit

__all__ = ["QStepResult", "f1_loss_grad_hess", "gate_loss_grad_hess", "log_weights", "q_step"]


@dataclass(frozen=True)
class QStepResult:
    """Result of :func:`q_step`.

    Attributes
    ----------
    q : ndarray of float64, shape (n_rows,)
        Probability of routing each row to f0 (``q(z = 1 | x_i)``).
    beta : float
        The multiplier; ``+inf`` when ``p_full == 0``, ``-inf`` when ``p_full == 1``.
    mean_q : float
        ``q.mean()``.
    status : int
        0: the constraint holds within ``tol``; 1: bisection stopped at ``max_iter``;
        2: inequality mode and the constraint is inactive (``beta = 0``).
    success : bool
        ``status in (0, 2)``.
    iterations : int
        Bisection steps taken.
    """

    q: np.ndarray
    beta: float
    mean_q: float
    status: int
    success: bool
    iterations: int


def log_weights(
    p0_true: np.ndarray, g_raw: np.ndarray, f1_raw: np.ndarray, y01: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(A, B)``, the log-weights of routing each row to f0 and to f1.

    Parameters
    ----------
    p0_true : ndarray, shape (n_rows,)
        f0's probability of each row's true label.
    g_raw, f1_raw : ndarray, shape (n_rows,)
        Raw scores of the gate and of f1.
    y01 : ndarray of {0, 1}, shape (n_rows,)
        Labels.
    """
    ysign = 2.0 * y01 - 1.0
    A = np.log(np.clip(p0_true, 1e-300, 1.0)) + log_expit(g_raw)
    B = log_expit(ysign * f1_raw) + log_expit(-g_raw)
    return A, B


def q_step(
    A: np.ndarray,
    B: np.ndarray,
    p_full: float,
    *,
    equality: bool = True,
    tol: float = 1e-6,
    max_iter: int = 200,
) -> QStepResult:
    """I-projection: ``q = sigma(A - B - beta)`` with ``mean(q) = p_full``.

    Parameters
    ----------
    A, B : ndarray, shape (n_rows,)
        Log-weights from :func:`log_weights`.
    p_full : float in [0, 1]
        Target mean fraction of rows routed to f0.
    equality : bool, default True
        True: ``mean(q) = p_full`` (the reference code; beta of either sign). False: the
        paper's inequality ``mean(q) <= p_full`` (beta >= 0, 0 when the constraint is inactive).
    tol : float, default 1e-6
        Tolerance on ``|mean(q) - p_full|``.
    max_iter : int, default 200
        Bisection steps.

    Returns
    -------
    QStepResult
    """
    d = np.asarray(A, dtype=np.float64) - np.asarray(B, dtype=np.float64)
    n = d.size
    if p_full <= 0.0:
        q = np.zeros(n)
        return QStepResult(q, np.inf, 0.0, 0, True, 0)
    if p_full >= 1.0:
        q = np.ones(n)
        return QStepResult(q, -np.inf, 1.0, 0, True, 0)

    def mean_q(beta: float) -> float:
        return float(expit(d - beta).mean())

    if not equality and mean_q(0.0) <= p_full:
        q = expit(d)
        return QStepResult(q, 0.0, float(q.mean()), 2, True, 0)
    # bracket: mean_q(lo) >= p_full >= mean_q(hi)
    lo, hi = float(np.min(d)) - 50.0, float(np.max(d)) + 50.0
    if not equality:
        lo = 0.0
    it = 0
    beta = 0.5 * (lo + hi)
    m = mean_q(beta)
    while it < max_iter and abs(m - p_full) > tol:
        if m > p_full:
            lo = beta
        else:
            hi = beta
        beta = 0.5 * (lo + hi)
        m = mean_q(beta)
        it += 1
    q = expit(d - beta)
    status = 0 if abs(m - p_full) <= tol else 1
    return QStepResult(q, beta, float(q.mean()), status, status == 0, it)


def gate_loss_grad_hess(g_raw: np.ndarray, q: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Loss, gradient and hessian of the gate's part of the loss.

    ``sum_i q_i log(1 + e^{-g_i}) + (1 - q_i) log(1 + e^{g_i})`` (cross-entropy with soft label
    ``q``): gradient ``sigma(g) - q``, hessian ``sigma(g) (1 - sigma(g))``.
    """
    p = expit(g_raw)
    loss = float(-(q * log_expit(g_raw) + (1.0 - q) * log_expit(-g_raw)).sum())
    return loss, p - q, np.maximum(p * (1.0 - p), 1e-12)


def f1_loss_grad_hess(f1_raw: np.ndarray, y01: np.ndarray, weight: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Loss, gradient and hessian of f1's part: ``sum_i (1 - q_i) log(1 + e^{-y_i f1_i})``."""
    p = expit(f1_raw)
    ysign = 2.0 * y01 - 1.0
    loss = float(-(weight * log_expit(ysign * f1_raw)).sum())
    return loss, weight * (p - y01), np.maximum(weight * p * (1.0 - p), 1e-12)
