"""Alternating minimization of Adapt-GBRT (Nan & Saligrama 2017, Algorithm 2) with LightGBM trees.

One call of :func:`train_adapt_gbrt` runs, for a fixed ``(p_full, gamma)``:

1. initialization as in the reference code: ``g = 0`` and ``f1`` a cost-penalized boosted
   model on the labels (GreedyMiser-style: LightGBM ``binary`` with the coupled CEGB penalty);
2. repeat up to ``max_em_iter`` times:

   * q-step: the closed-form I-projection (:func:`~budget_extras.adapt._qstep.q_step`);
   * g/f1-step: ``g`` and ``f1`` are regrown from scratch (as in the reference), one ``g``
     tree then one ``f1`` tree per round, each a LightGBM tree fit (custom objective, Newton
     step) to the gradients of the paper's loss with ``q`` fixed; before every tree the
     per-feature penalty ``gamma * u_a * c_a`` is passed to upstream LightGBM's CEGB
     (``cegb_penalty_feature_coupled``, ``cegb_tradeoff = 1``), where ``u_a = 0`` once ``g``
     or ``f1`` has split on feature ``a``;
   * stop when the training accuracy of the system changes by less than ``accu_tol`` and
     ``||q - q_old||_1 < q_tol * n_rows`` (the reference's criteria).
   * the gate's offset is shifted so that it routes ``mean(q)`` of the training rows
     (:func:`route_shift`).

Penalty scale: the objective is ``mean_i loss_i + gamma * sum_a c_a u_a``. LightGBM's split gain
is twice the (second-order) reduction of the *summed* loss, so the penalty handed to LightGBM is
``2 * n_rows * gamma * c_a``; ``gamma`` therefore does not depend on the size of the data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import lightgbm as lgb
import numpy as np
from scipy.special import expit, log_expit, logit

from ..core._status import MethodResult, Status
from ._heads import BinaryHead, F1Head
from ._qstep import gate_loss_grad_hess, q_step

__all__ = [
    "AdaptTrainResult",
    "default_lgb_params",
    "initial_f1_scores",
    "make_dataset",
    "train_adapt_gbrt",
    "train_init_f1",
]


def default_lgb_params() -> dict[str, Any]:
    """LightGBM parameters for the gate and f1 trees (overridable through ``lgb_params``)."""
    return {
        "num_leaves": 8,
        "learning_rate": 0.2,
        "min_data_in_leaf": 20,
        "min_sum_hessian_in_leaf": 1e-3,
        "lambda_l2": 1.0,
        "max_bin": 255,
        "num_threads": 1,
        "verbose": -1,
        "deterministic": True,
        "seed": 0,
    }


@dataclass(frozen=True)
class AdaptTrainResult(MethodResult):
    """Result of one Adapt-GBRT fit (scipy-style).

    Attributes
    ----------
    status : Status
        ``SUCCESS``: converged; ``LIMIT``: the iteration cap ``max_em_iter`` was reached;
        ``TRIVIAL`` (set by :class:`AdaptGBRT`): the system is no better than a constant.
    success : bool
        ``status is Status.SUCCESS``.
    message : str
    g_model, f1_model : lightgbm.Booster
        The gate and cheap model (raw scores ``booster.predict(raw_score=True) + bias``).
    g_bias : float
        Constant offset of the gate's raw score.
    f1_bias : float or ndarray of shape (n_classes,)
        Constant offset(s) of f1's raw score(s) (one per class for the multinomial head).
    history : list of dict
        Per EM iteration: ``mean_q`` (after the q-step), ``beta``, ``q_change`` (L1 / n_rows),
        ``loss``, ``train_accuracy``, ``frac_f0`` (share of rows with g > 0), ``n_features``.
    nit : int
        EM iterations run.
    """

    g_model: Any
    f1_model: Any
    g_bias: float
    f1_bias: float | np.ndarray
    history: list[dict[str, float]] = field(default_factory=list)
    nit: int = 0


def _per_feature_cost(costs: Any, n_features: int) -> np.ndarray:
    if hasattr(costs, "row_cost"):
        return np.asarray(costs.row_cost(np.eye(n_features, dtype=bool)), dtype=np.float64)
    c = np.asarray(costs, dtype=np.float64).reshape(-1)
    if c.size != n_features:
        raise ValueError(f"The 'costs' argument must have one cost per feature ({n_features}). Got {c.size} instead.")
    return c


def _booster_split_features(booster: Any) -> np.ndarray:
    """Bool ``(n_features,)``: features split on anywhere in ``booster`` (all its trees)."""
    return np.asarray(booster.feature_importance(importance_type="split") > 0)


def make_dataset(X: Any, lgb_params: dict[str, Any]) -> lgb.Dataset:
    """Build the LightGBM Dataset shared by all g/f1 boosters of one training set."""
    keys = ("max_bin", "min_data_in_bin", "verbose", "min_data_in_leaf", "seed")
    ds_params = {k: lgb_params[k] for k in keys if k in lgb_params}
    ds = lgb.Dataset(X, label=np.zeros(np.shape(X)[0]), params=ds_params, free_raw_data=False)
    return ds.construct()


def train_init_f1(
    ds: lgb.Dataset,
    y01: np.ndarray,
    cost_vec: np.ndarray,
    *,
    gamma: float,
    n_trees: int,
    lgb_params: dict[str, Any],
    head: F1Head | None = None,
    allowed: np.ndarray | None = None,
) -> Any:
    """Fit the GreedyMiser-style initial f1 (coupled penalty ``gamma * c``).

    LightGBM ``binary``, or ``multiclass`` with a :class:`SoftmaxHead`; ``y01`` holds class indices.
    ``allowed`` (bool mask): restrict the initial f1 to these features (the others get a
    prohibitive penalty), one of the alternative initializations of :class:`AdaptGBRT`.
    """
    n = y01.size
    params = dict(lgb_params)
    params.update((head or BinaryHead()).lgb_params())
    pen = 2.0 * n * gamma * np.asarray(cost_vec, dtype=np.float64)
    if allowed is not None:
        pen = np.where(np.asarray(allowed, dtype=bool), pen, 1e30)
    params.update(
        cegb_tradeoff=1.0,
        cegb_penalty_feature_coupled=list(pen),
    )
    ds.set_label(y01.astype(np.float64))
    return lgb.train(params, ds, num_boost_round=n_trees)


def initial_f1_scores(
    ds: lgb.Dataset,
    X: np.ndarray,
    y_idx: np.ndarray,
    cost_vec: np.ndarray,
    *,
    gamma: float,
    n_trees: int,
    lgb_params: dict[str, Any],
    head: F1Head,
    init: str,
    feature_names: tuple[str, ...] | None,
) -> list[tuple[str, np.ndarray]]:
    """Return the initial f1s' raw training scores for ``gamma``: ``[(name, raw), ...]``.

    ``init="greedy"``: the cost-penalized f1 on all features alone. ``init="auto"``: also f1
    restricted to each of the two features the greedy f1 gains most from and to the cheapest
    half of the features, dropping those that use the same features as an earlier one.

    Parameters
    ----------
    ds : lightgbm.Dataset
        The training rows (:func:`make_dataset`).
    X : ndarray of shape (n_rows, n_features)
        The same rows, to score.
    y_idx : ndarray of shape (n_rows,)
        Class indices.
    cost_vec : ndarray of shape (n_features,)
        Acquisition cost per feature.
    gamma : float
        Feature-acquisition penalty per unit cost.
    n_trees : int
        Trees of each initial f1.
    lgb_params : dict
        LightGBM parameters.
    head : F1Head
        f1's output layer.
    init : {"auto", "greedy"}
        Which initializations.
    feature_names : tuple of str, optional
        Names in the labels (default ``Column_<i>``).

    Returns
    -------
    list of (str, ndarray)
        ``"greedy"`` first, then ``"f1 on <features>"``.
    """
    kw: dict[str, Any] = {"gamma": gamma, "n_trees": n_trees, "lgb_params": lgb_params, "head": head}
    greedy = train_init_f1(ds, y_idx, cost_vec, **kw)
    out = [("greedy", np.asarray(greedy.predict(X, raw_score=True)))]
    if init != "auto":
        return out
    d = X.shape[1]
    names = feature_names or tuple(f"Column_{i}" for i in range(d))
    gain = np.asarray(greedy.feature_importance(importance_type="gain"), dtype=np.float64)
    subsets = [np.arange(d) == a for a in np.argsort(-gain, kind="stable")[: min(2, d) if d > 1 else 0]]
    if d > 2:
        subsets.append(np.isin(np.arange(d), np.argsort(cost_vec, kind="stable")[: (d + 1) // 2]))
    seen = [tuple(np.flatnonzero(greedy.feature_importance(importance_type="split") > 0))]
    for mask in subsets:
        b = train_init_f1(ds, y_idx, cost_vec, allowed=mask, **kw)
        used = tuple(np.flatnonzero(b.feature_importance(importance_type="split") > 0))
        if used in seen:
            continue
        seen.append(used)
        label = "f1 on " + ", ".join(names[i] for i in np.flatnonzero(mask))
        out.append((label, np.asarray(b.predict(X, raw_score=True))))
    return out


def _logit_mean(v: np.ndarray, w: np.ndarray | None = None) -> float:
    m = float(np.average(v, weights=w)) if w is None or w.sum() > 0 else 0.5
    return float(logit(np.clip(m, 1e-6, 1.0 - 1e-6)))


def train_adapt_gbrt(
    ds: lgb.Dataset,
    X: Any,
    y01: np.ndarray,
    p0_true: np.ndarray,
    f0_correct: np.ndarray,
    cost_vec: np.ndarray,
    *,
    p_full: float,
    gamma: float,
    n_trees: int,
    lgb_params: dict[str, Any],
    init_f1_raw: np.ndarray,
    max_em_iter: int,
    q_tol: float,
    accu_tol: float,
    equality: bool = True,
    callback: Callable[[dict[str, float]], None] | None = None,
    head: F1Head | None = None,
    calibrate_gate: bool = True,
    hard_q: bool = False,
) -> AdaptTrainResult:
    """Run the alternating minimization for one ``(p_full, gamma)``; see the module docstring.

    Parameters
    ----------
    ds : lightgbm.Dataset
        Constructed dataset of ``X`` (from :func:`make_dataset`).
    X : array-like (n_rows, n_features)
        Training rows (for raw-score predictions).
    y01 : ndarray of float64
        Labels as class indices (``{0, 1}`` for binary).
    p0_true : ndarray
        f0's probability of each row's true label.
    f0_correct : ndarray of bool
        Whether f0 classifies each row correctly (for the system accuracy).
    cost_vec : ndarray (n_features,)
        Acquisition cost of each feature.
    p_full, gamma, n_trees, lgb_params, init_f1_raw, max_em_iter, q_tol, accu_tol, equality
        See :class:`~budget_extras.AdaptGBRT`.
    callback : callable, optional
        Called with each iteration's history record.
    head : BinaryHead or SoftmaxHead, optional
        The output layer of ``f1`` (default binary); :class:`~budget_extras.adapt._heads.SoftmaxHead`
        makes ``f1`` a multinomial LightGBM booster (K trees per round) behind the same gate.

    calibrate_gate : bool, default True
        Shift the final gate's offset so that the share of training rows it routes to ``f0``
        is ``mean(q)`` (see :func:`route_shift`); the q-step keeps the unshifted gate.
    hard_q : bool, default False
        Replace the soft ``q`` by the hard assignment of :func:`_harden` (the budget
        sweep of :class:`~budget_extras.AdaptGBRT` tries both).

    Returns
    -------
    AdaptTrainResult
    """
    n = np.shape(X)[0]
    g_raw = np.zeros(n)
    f1_raw = np.asarray(init_f1_raw, dtype=np.float64)
    q_old = np.zeros(n)
    acc_old = 0.0
    penalty = 2.0 * n * gamma * cost_vec
    hd: F1Head = head or BinaryHead()
    params = dict(lgb_params)
    params.update(objective="none", cegb_tradeoff=1.0, cegb_penalty_feature_coupled=list(penalty))
    history: list[dict[str, float]] = []
    status, nit = Status.LIMIT, 0
    g_b = f_b = None
    g_bias_out: float = 0.0
    f1_bias_out: Any = 0.0
    y = np.asarray(y01, dtype=np.float64)
    log_p0 = np.log(np.clip(p0_true, 1e-300, 1.0))
    for it in range(max_em_iter):
        A = log_p0 + log_expit(g_raw)
        B = hd.log_p_true(f1_raw, y) + log_expit(-g_raw)
        qs = q_step(A, B, p_full, equality=equality)
        q = _harden(qs.q, qs.mean_q, A - B) if hard_q else qs.q
        w1 = 1.0 - q
        g_bias = _logit_mean(q)
        f1_bias = hd.bias(y, w1)

        def g_obj(preds: np.ndarray, _data: Any, q: np.ndarray = q, b: float = g_bias) -> Any:
            return gate_loss_grad_hess(preds + b, q)[1:]

        def f_obj(preds: np.ndarray, _data: Any, w: np.ndarray = w1, b: Any = f1_bias) -> Any:
            return hd.loss_grad_hess(preds + b, y, w)[1:]

        g_b, f_b, used = _grow(params, ds, hd.n_outputs, n_trees, penalty, g_obj, f_obj)
        g_raw = np.asarray(g_b.predict(X, raw_score=True)) + g_bias
        f1_raw = np.asarray(f_b.predict(X, raw_score=True)) + f1_bias
        mean_q = float(q.mean()) if hard_q else qs.mean_q
        shift = route_shift(g_raw, mean_q) if calibrate_gate else 0.0
        to_f0 = g_raw + shift > 0
        f1_pred = np.argmax(hd.proba(f1_raw), axis=1)
        correct = np.where(to_f0, f0_correct, f1_pred == y)
        acc = float(correct.mean())
        loss = gate_loss_grad_hess(g_raw, q)[0] + hd.loss_grad_hess(f1_raw, y, w1)[0]
        q_change = float(np.abs(q - q_old).sum())
        rec = _record(it + 1, mean_q, float(qs.beta), q_change / n, loss / n, acc, float(to_f0.mean()), used)
        history.append(rec)
        if callback is not None:
            callback(rec)
        g_bias_out, f1_bias_out, nit = g_bias + shift, f1_bias, it + 1
        if it > 0 and abs(acc - acc_old) < accu_tol and q_change < q_tol * n:
            status = Status.SUCCESS
            break
        q_old, acc_old = q, acc
    message = "Converged: accuracy and q changes below tolerance."
    if status != Status.SUCCESS:
        message = f"Stopped at the iteration cap max_em_iter={max_em_iter}."
    return AdaptTrainResult(status, message, g_b, f_b, g_bias_out, f1_bias_out, history=history, nit=nit)


def _record(
    it: int, mean_q: float, beta: float, q_change: float, loss: float, acc: float, frac_f0: float, used: np.ndarray
) -> dict[str, float]:
    """One history record of :func:`train_adapt_gbrt` (see :class:`AdaptTrainResult`)."""
    return {
        "iteration": float(it),
        "mean_q": mean_q,
        "beta": beta,
        "q_change": q_change,
        "loss": loss,
        "train_accuracy": acc,
        "frac_f0": frac_f0,
        "n_features": float(used.sum()),
    }


def _grow(
    params: dict[str, Any],
    ds: Any,
    n_outputs: int,
    n_trees: int,
    penalty: np.ndarray,
    g_obj: Callable[..., Any],
    f_obj: Callable[..., Any],
) -> tuple[Any, Any, np.ndarray]:
    """Grow the gate and f1 one tree each per round, each feature penalized until either uses it.

    Returns the gate and f1 boosters and the features either splits on.
    """
    g_b = lgb.Booster(params, ds)
    f_b = lgb.Booster(dict(params, num_class=n_outputs), ds)
    used = np.zeros(penalty.size, dtype=bool)
    for _ in range(n_trees):
        for booster, fobj in ((g_b, g_obj), (f_b, f_obj)):
            pen = np.where(used, 0.0, penalty)
            booster.reset_parameter({"cegb_penalty_feature_coupled": list(pen)})
            booster.update(fobj=fobj)
            used |= _booster_split_features(booster)
    return g_b, f_b, used


def _harden(q: np.ndarray, share: float, d: np.ndarray, margin: float = 0.25) -> np.ndarray:
    """Hard assignment: 1 for at most ``round(share * n)`` rows, those with the largest ``q``, 0 elsewhere.

    With the soft ``q`` the rows f1 cannot answer keep weight ``1 - q`` in f1's loss, and f1
    buys the expensive features to fit them; with ``q`` in {0, 1} they weigh
    nothing. Only rows with ``d = A - B > margin`` (f0 explains the label better than f1,
    given the gate, by more than ``margin`` nats) are routed: the q-step sees no cost, so
    filling the share with rows that f1 answers as well as f0 would teach the gate to route
    them. Ties are broken by row order (stable sort).
    """
    k = min(round(float(share) * q.size), int(np.count_nonzero(d > margin)))
    out = np.zeros(q.size)
    if k > 0:
        out[np.argsort(-q, kind="stable")[:k]] = 1.0
    return out


def route_shift(g_raw: np.ndarray, share: float) -> float:
    """Offset ``s`` such that the share of rows with ``g_raw + s > 0`` is as close as possible to ``share``.

    The gate is fit to the soft targets ``q`` by cross-entropy, so ``sigma(g)`` estimates ``q``
    and ``g > 0`` routes the rows with ``q > 1/2``: when ``q`` is soft (f0 and f1 differ little
    on most rows, ``q`` near ``p_full`` everywhere) that is almost no row or every row, whatever
    ``mean(q)`` the q-step asked for. The gate's *ranking* of the rows is what it learned; the
    share routed is set here, by a threshold between two distinct scores (ties are kept together,
    so a gate with few distinct scores gets the nearest achievable share).
    """
    g = np.asarray(g_raw, dtype=np.float64)
    if g.size == 0:
        return 0.0
    vals, counts = np.unique(g, return_counts=True)  # ascending
    # candidate thresholds: below every score, between consecutive distinct scores, above every score
    thr = np.concatenate([[vals[0] - 1.0], 0.5 * (vals[:-1] + vals[1:]), [vals[-1] + 1.0]])
    shares = np.concatenate([[g.size], g.size - np.cumsum(counts)]) / g.size
    d = np.abs(shares - float(share))
    j = int(d.size - 1 - np.argmin(d[::-1]))  # on a tie, the smaller share (the cheaper system)
    return float(-thr[j])


def gate_proba(g_raw: np.ndarray) -> np.ndarray:
    """Probability of routing to f0."""
    return np.asarray(expit(g_raw))
