"""Linear comparators of Adapt-GBRT: ADAPT-LIN and the paper's L1 baseline.

Both produce a list of candidate systems ``(g, f1)`` with linear gate and linear f1 on
standardized features (a row goes to f0 when ``w_g . x + b_g > 0``) and evaluate them with
the same unified cost rule as :class:`~budget_extras.AdaptGBRT`: a row answered by f1 pays the
union of the supports of ``w_g`` and ``w_f1``; a row sent to f0 pays ``supp(w_g)`` united with
the features f0 reads for that row.

* :class:`AdaptLin` (paper section 4, reference ``adaptive_sparse_helpers.py``): the same
  alternating minimization as Adapt-GBRT with linear ``g`` and ``f1`` and the group penalty
  ``lam * sum_a c_a * sqrt(g_a^2 + f1_a^2)``, solved by proximal gradient (FISTA, exact zeros);
  candidates are the support-size sweep of the reference (drop features by group magnitude).
* :class:`L1GateBaseline`: an L1-regularized logistic regression selects the top-k features,
  f1 is a logistic regression on them, and the gate a logistic regression on the same features
  trained to predict whether f1 is wrong, with class weights swept to trade accuracy for cost.
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import sklearn
from scipy.special import expit
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression

from ..core._params import Interval, Options, check_params
from ..core._validation import check_array_2d
from ._f0 import F0Model
from ._paths import as_feature_costs, row_cost
from ._qstep import log_weights, q_step
from ._train import _per_feature_cost

__all__ = ["AdaptLin", "L1GateBaseline"]


class _LinearCandidates(BaseEstimator):
    """Shared evaluation of linear (g, f1) candidate systems."""

    candidates_: list[tuple[np.ndarray, float, np.ndarray, float]]

    def _prepare(self, X: Any, y: Any, f0: Any, costs: Any, f0_features: Any) -> tuple[np.ndarray, np.ndarray]:
        X = check_array_2d(X, name="X")
        y = np.asarray(y)
        self.classes_ = np.unique(y)
        if self.classes_.size != 2:
            raise ValueError(
                f"{type(self).__name__} supports binary classification only: 'y' must have exactly 2 "
                f"classes. Got {self.classes_.size} instead."
            )
        self.n_features_in_ = X.shape[1]
        self.costs_ = as_feature_costs(costs, X.shape[1])
        self.cost_vec_ = _per_feature_cost(self.costs_, X.shape[1])
        self.f0_ = F0Model(f0, features=f0_features)
        self.mean_ = X.mean(axis=0)
        sd = X.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        return (X - self.mean_) / self.scale_, (y == self.classes_[1]).astype(np.float64)

    def evaluate(
        self, X: Any, y: Any, *, f0_proba: np.ndarray | None = None, f0_used: np.ndarray | None = None
    ) -> pd.DataFrame:
        """Return the accuracy, mean cost, share to f0 and support size of every candidate on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows to evaluate on.
        y : array-like of shape (n_rows,)
            Their labels.
        f0_proba : numpy.ndarray of shape (n_rows, 2), optional
            ``f0``'s probabilities on ``X`` when already computed.
        f0_used : numpy.ndarray of bool of shape (n_rows, n_features), optional
            The features ``f0`` reads on each row when already computed.

        Returns
        -------
        pandas.DataFrame
            One row per candidate.
        """
        X = check_array_2d(X, name="X", n_features=self.n_features_in_)
        Z = (X - self.mean_) / self.scale_
        y01 = np.asarray(y) == self.classes_[1]
        p0 = self.f0_.proba(X) if f0_proba is None else np.asarray(f0_proba)
        f0_pred = p0[:, 1] > 0.5
        used0 = self.f0_.features_used(X) if f0_used is None else np.asarray(f0_used, dtype=bool)
        rows = []
        for i, (gw, gb, hw, hb) in enumerate(self.candidates_):
            to_f0 = Z @ gw + gb > 0
            pred = np.where(to_f0, f0_pred, Z @ hw + hb > 0)
            sg, sh = gw != 0, hw != 0
            used = np.where(to_f0[:, None], used0 | sg, sg | sh)
            rows.append(
                {
                    "candidate": i,
                    "accuracy": float(np.mean(pred == y01)),
                    "cost": float(row_cost(self.costs_, used).mean()),
                    "frac_f0": float(to_f0.mean()),
                    "n_support": int((sg | sh).sum()),
                }
            )
        return pd.DataFrame(rows)

    def predict(self, X: Any, candidate: int) -> np.ndarray:
        """Return class labels from candidate ``candidate`` (f0 on rows its gate routes there).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows to predict.
        candidate : int
            Index of the candidate (a row of :meth:`evaluate`).

        Returns
        -------
        numpy.ndarray of shape (n_rows,)
        """
        X = check_array_2d(X, name="X", n_features=self.n_features_in_)
        Z = (X - self.mean_) / self.scale_
        gw, gb, hw, hb = self.candidates_[candidate]
        to_f0 = Z @ gw + gb > 0
        pred = Z @ hw + hb > 0
        if to_f0.any():
            pred[to_f0] = self.f0_.proba(X[to_f0])[:, 1] > 0.5
        return np.asarray(self.classes_[pred.astype(int)])


def _l1_logistic(C: float) -> LogisticRegression:
    """L1-penalized logistic regression (liblinear), spelled for the installed scikit-learn."""
    major, minor = (int(v) for v in sklearn.__version__.split(".")[:2])
    if (major, minor) >= (1, 8):
        return LogisticRegression(l1_ratio=1.0, solver="liblinear", C=C)
    return LogisticRegression(penalty="l1", solver="liblinear", C=C)


def _group_prox(g: np.ndarray, h: np.ndarray, thr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    norm = np.sqrt(g * g + h * h)
    shrink = np.where(norm > thr, 1.0 - thr / np.maximum(norm, 1e-300), 0.0)
    return g * shrink, h * shrink


class AdaptLin(_LinearCandidates):
    """ADAPT-LIN: linear gate and linear f1 with a cost-weighted group-sparsity penalty.

    Parameters
    ----------
    p_full : float in [0, 1], default 0.5
        Fraction of training rows the q-step routes to f0.
    lam : float >= 0, default 0.01
        Weight of the group penalty ``sum_a c_a sqrt(g_a^2 + f1_a^2)`` (standardized features).
    max_em_iter : int >= 0, default 20
        Alternating-minimization iterations.
    max_iter : int >= 0, default 300
        FISTA iterations per g/f1-step.
    f0_features : see :class:`~budget_extras.AdaptGBRT`
    """

    #: The parameter table (``core._params``), checked before every fit.
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "p_full": [Interval(numbers.Real, 0, 1, closed="both")],
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
        "max_em_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "f0_features": [Options(("auto", "all")), "array-like", "callable"],
    }

    def __init__(
        self,
        p_full: float = 0.5,
        lam: float = 0.01,
        *,
        max_em_iter: int = 20,
        max_iter: int = 300,
        f0_features: Any = "auto",
    ) -> None:
        self.p_full = p_full
        self.lam = lam
        self.max_em_iter = max_em_iter
        self.max_iter = max_iter
        self.f0_features = f0_features

    def fit(self, X: Any, y: Any, f0: Any, costs: Any = None, *, f0_proba_train: np.ndarray | None = None) -> AdaptLin:
        """Fit by alternating minimization, then build the support-size candidates.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Training rows.
        y : array-like of shape (n_rows,)
            Binary labels.
        f0 : fitted classifier or model file
            The expensive model the gate falls back to.
        costs : optional
            Per-feature costs (any form :func:`budget_extras.core.as_feature_costs` takes).
        f0_proba_train : numpy.ndarray of shape (n_rows, 2), optional
            ``f0``'s probabilities on ``X`` when already computed.

        Returns
        -------
        AdaptLin
            ``self``.
        """
        check_params(self)
        Z, y01 = self._prepare(X, y, f0, costs, self.f0_features)
        n, m = Z.shape
        p0 = self.f0_.proba(np.asarray(X, dtype=np.float64)) if f0_proba_train is None else f0_proba_train
        p0_true = np.where(y01 == 1, p0[:, 1], p0[:, 0])
        init = LogisticRegression(C=1.0, max_iter=500).fit(Z, y01)
        h, hb = init.coef_[0].copy(), float(init.intercept_[0])
        g, gb = np.zeros(m), 0.0
        Za = np.column_stack([Z, np.ones(n)])
        L = 0.25 * np.linalg.norm(Za, 2) ** 2 / n  # Lipschitz bound for either block
        thr = self.lam * self.cost_vec_ / L
        ys = 2.0 * y01 - 1.0
        self.history_: list[float] = []
        for _ in range(self.max_em_iter):
            A, B = log_weights(p0_true, Z @ g + gb, Z @ h + hb, y01)
            q = q_step(A, B, float(self.p_full)).q
            self.history_.append(float(q.mean()))
            x = np.concatenate([g, [gb], h, [hb]])
            yk, t = x.copy(), 1.0
            for _ in range(self.max_iter):
                gg, hh = yk[: m + 1], yk[m + 1 :]
                sg = expit(Za @ gg)
                sh = expit(ys * (Za @ hh))
                grad_g = Za.T @ (sg - q) / n
                grad_h = Za.T @ (-(1.0 - q) * ys * (1.0 - sh)) / n
                step = np.concatenate([gg - grad_g / L, hh - grad_h / L])
                ng, nh = _group_prox(step[:m], step[m + 1 : 2 * m + 1], thr)
                x_new = np.concatenate([ng, [step[m]], nh, [step[-1]]])
                t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
                yk = x_new + ((t - 1.0) / t_new) * (x_new - x)
                x, t = x_new, t_new
            g, gb, h, hb = x[:m], float(x[m]), x[m + 1 : 2 * m + 1], float(x[-1])
        self.coef_ = (g, gb, h, hb)
        mag = np.sqrt(g * g + h * h)
        order = np.argsort(-mag)
        self.candidates_ = []
        for k in range(int((mag > 0).sum()), -1, -1):
            keep = np.zeros(m, dtype=bool)
            keep[order[:k]] = True
            self.candidates_.append((np.where(keep, g, 0.0), gb, np.where(keep, h, 0.0), hb))
        return self


class L1GateBaseline(_LinearCandidates):
    """The paper's L1 baseline: L1 feature selection, f1 on the selected features, gate on f1's errors.

    Parameters
    ----------
    C_grid : sequence of float, optional
        Inverse L1 strengths of the selecting logistic regression (default ``logspace(-3, 1, 9)``).
    n_gate_weights : int >= 1, default 10
        Gate class weights ``linspace(0, 1, n)**2`` for the "f1 is right" class (as in the reference).
    f0_features : see :class:`~budget_extras.AdaptGBRT`
    """

    #: The parameter table (``core._params``), checked before every fit.
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "C_grid": ["array-like", None],
        "n_gate_weights": [Interval(numbers.Integral, 1, None, closed="left")],
        "f0_features": [Options(("auto", "all")), "array-like", "callable"],
    }

    def __init__(self, *, C_grid: Any = None, n_gate_weights: int = 10, f0_features: Any = "auto") -> None:
        self.C_grid = C_grid
        self.n_gate_weights = n_gate_weights
        self.f0_features = f0_features

    def fit(self, X: Any, y: Any, f0: Any, costs: Any = None) -> L1GateBaseline:
        """Build the candidates (every support size of every L1 path point, every gate weight).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Training rows.
        y : array-like of shape (n_rows,)
            Binary labels.
        f0 : fitted classifier or model file
            The expensive model the gate falls back to.
        costs : optional
            Per-feature costs (any form :func:`budget_extras.core.as_feature_costs` takes).

        Returns
        -------
        L1GateBaseline
            ``self``.
        """
        check_params(self)
        Z, y01 = self._prepare(X, y, f0, costs, self.f0_features)
        m = Z.shape[1]
        grid = np.logspace(-3, 1, 9) if self.C_grid is None else self.C_grid
        supports: dict[bytes, np.ndarray] = {}
        for C in grid:
            w = _l1_logistic(float(C)).fit(Z, y01).coef_[0]
            order = np.argsort(-np.abs(w), kind="stable")
            for k in range(1, m):
                s = np.zeros(m, dtype=bool)
                s[order[:k]] = True
                supports.setdefault(s.tobytes(), s)
        self.candidates_ = []
        for s in supports.values():
            f1 = LogisticRegression(C=1.0, max_iter=500).fit(Z[:, s], y01)
            hw = np.zeros(m)
            hw[s] = f1.coef_[0]
            hb = float(f1.intercept_[0])
            wrong = (f1.predict(Z[:, s]) != y01).astype(int)
            for lam in np.linspace(0.0, 1.0, self.n_gate_weights) ** 2:
                gw = np.zeros(m)
                if wrong.min() == wrong.max():
                    gb = 1.0 if wrong[0] else -1.0
                else:
                    gate = LogisticRegression(C=1.0, class_weight={0: max(lam, 1e-6), 1: 1.0}, max_iter=500)
                    gate.fit(Z[:, s], wrong)
                    gw[s] = gate.coef_[0]
                    gb = float(gate.intercept_[0])
                self.candidates_.append((gw, gb, hw, hb))
        return self
