"""The cheap model's output layer ("head") of Adapt-GBRT: binary logistic or multinomial softmax.

The alternating minimization only needs, from ``f1``, the log-probability of each row's true
class (for the q-step), the gradient and hessian of its weighted log-loss (for the f1 trees),
the constant offset its trees start from, and its class probabilities. :class:`BinaryHead` is
the paper's binary ``f1`` (one raw score, ``P(class 1) = sigma(f1)``); :class:`SoftmaxHead` is
the multiclass extension (one raw score per class, ``P(k) = softmax(f1)_k``), trained as one
LightGBM multiclass booster (K trees per round) against the same weighted loss
``sum_i (1 - q_i) * (-log p1(y_i | x_i))``. The gate ``g`` and the q-step do not change.

Labels are class indices ``0 .. K-1`` (float64 array).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit, log_expit, log_softmax, logit, softmax

from ._qstep import f1_loss_grad_hess

__all__ = ["BinaryHead", "F1Head", "SoftmaxHead", "make_head"]

_LGB_EPS = 1e-15  # LightGBM's kEpsilon in MulticlassSoftmax::BoostFromScore


@dataclass(frozen=True)
class BinaryHead:
    """Binary ``f1``: one raw score per row, ``P(class 1 | x) = sigma(f1(x))``."""

    n_classes: int = 2

    @property
    def n_outputs(self) -> int:
        """Raw scores per row (LightGBM ``num_class``)."""
        return 1

    def lgb_params(self) -> dict[str, Any]:
        """Objective parameters of the cost-penalized initial ``f1`` (LightGBM built-in)."""
        return {"objective": "binary"}

    def bias(self, y: np.ndarray, w: np.ndarray | None = None) -> float:
        """Offset the trees start from: logit of the (weighted) share of class 1, as LightGBM."""
        m = float(np.average(y, weights=w)) if w is None or w.sum() > 0 else 0.5
        return float(logit(np.clip(m, 1e-6, 1.0 - 1e-6)))

    def log_p_true(self, raw: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``log p1(y_i | x_i)`` for raw scores of shape ``(n_rows,)``."""
        return np.asarray(log_expit((2.0 * y - 1.0) * raw))

    def loss_grad_hess(self, raw: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Weighted log-loss, its gradient and hessian in the raw score."""
        return f1_loss_grad_hess(raw, y, w)

    def proba(self, raw: np.ndarray) -> np.ndarray:
        """Class probabilities ``(n_rows, 2)``."""
        p1 = expit(np.asarray(raw, dtype=np.float64).reshape(-1))
        return np.column_stack([1.0 - p1, p1])


@dataclass(frozen=True)
class SoftmaxHead:
    """Multinomial ``f1``: K raw scores per row, ``P(k | x) = softmax(f1(x))_k``.

    Gradient and hessian are LightGBM's ``multiclass`` ones (``p_k - [y = k]`` and
    ``K / (K - 1) * p_k (1 - p_k)``), scaled by the row weight ``1 - q_i``; the offset is
    LightGBM's ``log(max(1e-15, weighted share of class k))``. With every weight 1 the f1 trees
    are therefore LightGBM's own multiclass trees.
    """

    n_classes: int

    @property
    def n_outputs(self) -> int:
        """Raw scores per row (LightGBM ``num_class``)."""
        return self.n_classes

    def lgb_params(self) -> dict[str, Any]:
        """Objective parameters of the cost-penalized initial ``f1`` (LightGBM built-in)."""
        return {"objective": "multiclass", "num_class": self.n_classes}

    def _onehot(self, y: np.ndarray) -> np.ndarray:
        return np.asarray(np.arange(self.n_classes)[None, :] == np.asarray(y, dtype=np.int64)[:, None])

    def bias(self, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """Per-class offsets ``log(max(1e-15, weighted share of class k))``, shape ``(K,)``."""
        ww = np.ones(y.size) if w is None else np.asarray(w, dtype=np.float64)
        tot = ww.sum()
        share = self._onehot(y).T @ ww / tot if tot > 0 else np.full(self.n_classes, 1.0 / self.n_classes)
        return np.asarray(np.log(np.maximum(_LGB_EPS, share)))

    def log_p_true(self, raw: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``log p1(y_i | x_i)`` for raw scores of shape ``(n_rows, K)``."""
        lp = log_softmax(raw, axis=1)
        return np.asarray(lp[np.arange(y.size), np.asarray(y, dtype=np.int64)])

    def loss_grad_hess(self, raw: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Weighted multinomial log-loss, gradient and hessian (shapes ``(n_rows, K)``)."""
        p = softmax(raw, axis=1)
        wc = np.asarray(w, dtype=np.float64)[:, None]
        loss = float(-(np.asarray(w) * self.log_p_true(raw, y)).sum())
        factor = self.n_classes / (self.n_classes - 1.0)
        grad = wc * (p - self._onehot(y))
        hess = np.maximum(wc * factor * p * (1.0 - p), 1e-12)
        return loss, grad, hess

    def proba(self, raw: np.ndarray) -> np.ndarray:
        """Class probabilities ``(n_rows, K)``."""
        return np.asarray(softmax(np.asarray(raw, dtype=np.float64), axis=1))


F1Head = BinaryHead | SoftmaxHead


def make_head(n_classes: int) -> F1Head:
    """Return the head for ``n_classes`` classes: binary for 2, softmax above."""
    return BinaryHead() if n_classes == 2 else SoftmaxHead(n_classes)
