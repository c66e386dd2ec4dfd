"""How AdaptGBRT chooses its system: among the initializations, or by the budget sweep.

Without ``budget`` (:func:`fit_best_init`) every initialization of f1 is trained at the given
``(p_full, gamma)`` and the one with the lowest training objective is kept. With ``budget``
(:func:`sweep`) every ``(p_full, gamma, init, q_step)`` is trained, each is evaluated on the
validation rows at its own gate offset and at shifted ones (:func:`gate_shifts`), and the
best-scoring system within the budget is kept; :func:`judge_sweep` says when it is no better than
a trivial system.

The functions read the estimator's settings and never change it; the estimator takes over the
:class:`Candidate` they return.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..core._costs import FeatureCosts
from ..core._status import MethodResult, Status, fits_budget
from ._f0 import F0Model
from ._heads import F1Head
from ._paths import booster_features_used, routed_features_used, row_cost
from ._scoring import Score, resolve_scoring
from ._train import AdaptTrainResult, default_lgb_params, initial_f1_scores, make_dataset, train_adapt_gbrt

__all__ = [
    "AdaptSweepResult",
    "Candidate",
    "FitContext",
    "check_train_trivial",
    "fit_best_init",
    "gate_shifts",
    "judge_sweep",
    "make_context",
    "pareto_mask",
    "sweep",
    "train_objective",
]


@dataclass(frozen=True)
class AdaptSweepResult(MethodResult):
    """Result of the budget sweep of :class:`AdaptGBRT` (scipy-style).

    Attributes
    ----------
    status : Status
        ``SUCCESS``: a configuration within the budget was found; ``INFEASIBLE``: none was, the
        cheapest is kept; ``TRIVIAL``: the best one within the budget is no better than a constant,
        or scores more than ``trivial_tol`` below the best trivial system (``f0`` alone if within
        the budget); a UserWarning says so.
    success : bool
        ``status is Status.SUCCESS``.
    message : str
    results : pandas.DataFrame
        One row per ``(p_full, gamma, init, q_step, gate_shift)`` (``q_step``: ``"soft"``, the
        paper's, or ``"hard"``; ``gate_shift``: the gate offset subtracted, 0 for the fitted one,
        see :func:`gate_shifts`): validation ``score`` (``scoring``; accuracy by
        default), ``accuracy``, ``cost`` (mean per row), ``frac_f0``, ``nit`` and ``on_frontier``
        (validation Pareto frontier in score and cost: no other configuration scores at least as
        well at most the cost, one strictly).
    best_index : int
        Row of ``results`` chosen.
    """

    results: pd.DataFrame
    best_index: int

    @property
    def frontier(self) -> pd.DataFrame:
        """The validation Pareto frontier, sorted by cost."""
        return self.results[self.results["on_frontier"]].sort_values("cost")


def pareto_mask(cost: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """Return True where no other point has cost <= and accuracy >= (one strictly).

    Parameters
    ----------
    cost, acc : array-like of shape (n_points,)
        Cost (lower is better) and accuracy or score (higher is better) of each point.

    Returns
    -------
    ndarray of bool, shape (n_points,)
    """
    cost = np.asarray(cost, dtype=float)
    acc = np.asarray(acc, dtype=float)
    dominated = (
        (cost[None, :] <= cost[:, None])
        & (acc[None, :] >= acc[:, None])
        & ((cost[None, :] < cost[:, None]) | (acc[None, :] > acc[:, None]))
    )
    return np.asarray(~dominated.any(axis=1))


@dataclass
class FitContext:
    """The training rows of one fit and what every candidate system shares.

    ``f0_used`` (the features f0 reads on the training rows) is filled in when first needed;
    ``init_cache`` holds the initial f1s per ``gamma``.
    """

    X: np.ndarray
    y_idx: np.ndarray
    p0_true: np.ndarray
    f0_correct: np.ndarray
    ds: Any
    params: dict[str, Any]
    head: F1Head
    f0: F0Model
    costs: FeatureCosts
    cost_vec: np.ndarray
    classes: np.ndarray
    feature_names: tuple[str, ...] | None
    f0_used: np.ndarray | None = None
    init_cache: dict[float, list[tuple[str, np.ndarray]]] = field(default_factory=dict)


def make_context(
    X: np.ndarray,
    y: np.ndarray,
    classes: np.ndarray,
    f0_proba_train: Any,
    *,
    f0: F0Model,
    costs: FeatureCosts,
    cost_vec: np.ndarray,
    lgb_params: dict[str, Any] | None,
    head: F1Head,
    feature_names: tuple[str, ...] | None,
) -> FitContext:
    """Return the training rows of one fit with f0's answers on them and the LightGBM dataset.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
        The training rows (checked).
    y : ndarray of shape (n_rows,)
        Their labels, values of ``classes``.
    classes : ndarray of shape (n_classes,)
        The sorted class labels.
    f0_proba_train : array-like of shape (n_rows, n_classes) or None
        f0's probabilities on ``X`` (None: asked of ``f0``).
    f0 : F0Model
        The expensive model.
    costs : FeatureCosts
        The costs.
    cost_vec : ndarray of shape (n_features,)
        The acquisition cost per feature.
    lgb_params : dict or None
        Overrides of :func:`~budget_extras.adapt._train.default_lgb_params`.
    head : F1Head
        f1's output layer.
    feature_names : tuple of str or None
        The input's feature names.

    Returns
    -------
    FitContext
    """
    k = classes.size
    y_idx = np.searchsorted(classes, y).astype(np.float64)
    p0 = f0.proba(X) if f0_proba_train is None else np.asarray(f0_proba_train, dtype=np.float64)
    if p0.shape != (X.shape[0], k):
        raise ValueError(
            f"The 'f0_proba_train' argument must have shape ({X.shape[0]}, {k}). Got {p0.shape} instead."
        )
    p0_true = p0[np.arange(y.size), y_idx.astype(np.int64)]
    f0_correct = np.argmax(p0, axis=1) == y_idx
    params = default_lgb_params()
    params.update(lgb_params or {})
    ds = make_dataset(X, params)
    return FitContext(X, y_idx, p0_true, f0_correct, ds, params, head, f0, costs, cost_vec, classes, feature_names)


@dataclass(frozen=True)
class Candidate:
    """One fitted system: the gate and f1 of ``result``, the gate's offset and where they came from."""

    result: AdaptTrainResult
    p_full: float
    gamma: float
    init: str
    g_bias: float

    def gate(self, X: np.ndarray) -> np.ndarray:
        """Raw gate score ``g(x)`` of the rows ``X``."""
        return np.asarray(self.result.g_model.predict(X, raw_score=True)) + self.g_bias

    def f1_proba(self, X: np.ndarray, head: F1Head) -> np.ndarray:
        """f1's class probabilities on the rows ``X``."""
        return head.proba(np.asarray(self.result.f1_model.predict(X, raw_score=True)) + self.result.f1_bias)


# ----------------------------------------------------------------------------- training


def _inits(est: Any, ctx: FitContext, gamma: float) -> list[tuple[str, np.ndarray]]:
    """Return the initial f1s' raw training scores for ``gamma`` (trained once per ``gamma``)."""
    if gamma not in ctx.init_cache:
        ctx.init_cache[gamma] = initial_f1_scores(
            ctx.ds, ctx.X, ctx.y_idx, ctx.cost_vec, gamma=gamma, n_trees=est.n_trees, lgb_params=ctx.params,
            head=ctx.head, init=est.init, feature_names=ctx.feature_names,
        )
    return ctx.init_cache[gamma]


def _print_iteration(rec: dict[str, float]) -> None:
    print(
        f"AdaptGBRT iter {int(rec['iteration'])}: mean_q={rec['mean_q']:.4f} "
        f"frac_f0={rec['frac_f0']:.4f} train_acc={rec['train_accuracy']:.4f} "
        f"q_change={rec['q_change']:.2e} features={int(rec['n_features'])}"
    )


def _fit_candidate(
    est: Any, ctx: FitContext, p_full: float, gamma: float, init: tuple[str, np.ndarray], hard_q: bool = False
) -> Candidate:
    """Train the gate and f1 at ``(p_full, gamma)`` from the initial f1 ``init = (name, raw)``."""
    res: AdaptTrainResult = train_adapt_gbrt(
        ctx.ds, ctx.X, ctx.y_idx, ctx.p0_true, ctx.f0_correct, ctx.cost_vec,
        p_full=p_full, gamma=gamma, n_trees=est.n_trees, lgb_params=ctx.params, init_f1_raw=init[1],
        max_em_iter=est.max_em_iter, q_tol=est.q_tol, accu_tol=est.accu_tol, equality=est.q_equality,
        callback=_print_iteration if est.progress and est.budget is None else None, head=ctx.head, hard_q=hard_q,
    )
    return Candidate(res, p_full, gamma, init[0], res.g_bias)


def train_objective(ctx: FitContext, cand: Candidate, gate_threshold: float) -> float:
    """System log-loss on the training rows + ``gamma`` x their mean cost.

    Parameters
    ----------
    ctx : FitContext
        The training rows.
    cand : Candidate
        The system.
    gate_threshold : float
        Rows with ``g(x) > gate_threshold`` go to f0.

    Returns
    -------
    float
    """
    if ctx.f0_used is None:
        ctx.f0_used = ctx.f0.features_used(ctx.X)
    f0_used = ctx.f0_used
    to_f0 = cand.gate(ctx.X) > gate_threshold
    p1 = cand.f1_proba(ctx.X, ctx.head)
    p_true = np.where(to_f0, ctx.p0_true, p1[np.arange(ctx.X.shape[0]), ctx.y_idx.astype(np.int64)])
    loss = float(-np.log(np.clip(p_true, 1e-15, 1.0)).mean())
    used = routed_features_used(
        cand.result.g_model, cand.result.f1_model, ctx.X, to_f0, lambda rows: np.asarray(f0_used)[rows]
    )
    return loss + cand.gamma * float(row_cost(ctx.costs, used).mean())


def fit_best_init(est: Any, ctx: FitContext) -> Candidate:
    """Train from every initialization at the estimator's ``(p_full, gamma)``; keep the lowest training objective.

    Parameters
    ----------
    est : AdaptGBRT
        Its settings (read only).
    ctx : FitContext
        The training rows.

    Returns
    -------
    Candidate
    """
    p_full, gamma = float(est.p_full), float(est.gamma)
    best: tuple[float, Candidate] | None = None
    for init in _inits(est, ctx, gamma):
        cand = _fit_candidate(est, ctx, p_full, gamma, init)
        obj = train_objective(ctx, cand, est.gate_threshold)
        if best is None or obj < best[0] - 1e-12:
            best = (obj, cand)
    assert best is not None
    return best[1]


def check_train_trivial(res: AdaptTrainResult, ctx: FitContext) -> AdaptTrainResult:
    """Return ``res`` marked TRIVIAL when the system is no more accurate on its training rows than a constant.

    The constant predicts the majority class: a chance-level model, e.g. ``gamma`` too high for
    any feature. It counts only when f0 does better than the constant.

    Parameters
    ----------
    res : AdaptTrainResult
        The training of the system.
    ctx : FitContext
        The training rows.

    Returns
    -------
    AdaptTrainResult
        ``res`` itself when the system is not trivial.
    """
    acc = res.history[-1]["train_accuracy"] if res.history else 0.0
    major = float(np.bincount(ctx.y_idx.astype(np.int64)).max() / ctx.y_idx.size)
    if acc < major + 1e-9 and ctx.f0_correct.mean() > major + 0.01:
        return replace(
            res,
            status=Status.TRIVIAL,
            message=(
                f"The fitted system is no better than predicting the majority class on the training rows "
                f"(accuracy {acc:.4f} vs {major:.4f}; f0 alone {ctx.f0_correct.mean():.4f}). "
                f"Lower gamma or raise p_full. " + res.message
            ),
        )
    return res


# ----------------------------------------------------------------------------- the budget sweep


def gate_shifts(
    ctx: FitContext,
    cand: Candidate,
    valid: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    scorer: Score,
    gate_threshold: float,
    n_max: int = 24,
) -> list[tuple[float, dict[str, float]]]:
    """Evaluate a system on validation at its own gate offset and at shifted ones.

    The gate's ranking of the rows is what the alternating minimization learns; the share
    it routes to ``f0`` is a trade-off of cost against accuracy that the budget decides.
    A shift ``s`` routes the rows with ``g(x) - s > gate_threshold``. Besides ``s = 0`` the
    shifts put the threshold between consecutive distinct validation gate scores (at most
    ``n_max``, spread over the quantiles), never sending every row or none to ``f0``
    (the fitted offset routes ``p_full`` of the rows, which can cut through a
    region of rows that needs ``f0``).

    Parameters
    ----------
    ctx : FitContext
        The fit (costs, classes, f1's head).
    cand : Candidate
        The system.
    valid : tuple of ndarray
        ``(Xv, yv, p0v, f0_used_v)``: the validation rows, labels, f0's probabilities and the
        features f0 reads on them.
    scorer : callable
        ``scorer(proba, y, classes)``, greater is better.
    gate_threshold : float
        Rows with ``g(x) > gate_threshold`` go to f0.
    n_max : int, default 24
        Most shifts besides 0.

    Returns
    -------
    list of (shift, dict)
        ``score``, ``accuracy``, ``cost`` and ``frac_f0`` per shift; shift 0 first, then
        the shifts whose (score, cost) differ from all earlier ones.
    """
    Xv, yv, p0v, f0_used_v = valid
    gv = cand.gate(Xv) - gate_threshold
    gu = booster_features_used(cand.result.g_model, Xv)
    fu = booster_features_used(cand.result.f1_model, Xv)
    c1, c0 = row_cost(ctx.costs, gu | fu), row_cost(ctx.costs, gu | np.asarray(f0_used_v, dtype=bool))
    p1 = cand.f1_proba(Xv, ctx.head)
    vals = np.unique(gv)
    mids = 0.5 * (vals[:-1] + vals[1:])
    if mids.size > n_max:
        mids = mids[np.unique(np.linspace(0, mids.size - 1, n_max).round().astype(np.int64))]
    out: list[tuple[float, dict[str, float]]] = []
    seen: set[tuple[float, float]] = set()
    for shift in [0.0, *(float(m) for m in mids)]:
        to_f0 = gv - shift > 0
        proba = np.where(to_f0[:, None], p0v, p1)
        ev = {
            "score": float(scorer(proba, yv, ctx.classes)),
            "accuracy": float(np.mean(ctx.classes[np.argmax(proba, axis=1)] == yv)),
            "cost": float(np.where(to_f0, c0, c1).mean()),
            "frac_f0": float(to_f0.mean()),
        }
        key = (round(ev["score"], 12), round(ev["cost"], 12))
        if key not in seen:
            seen.add(key)
            out.append((shift, ev))
    return out


def _configs(est: Any) -> list[tuple[float, float]]:
    """Return the ``(p_full, gamma)`` grid of the sweep."""
    pgrid = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    if est.p_full_grid is not None:
        pgrid = list(est.p_full_grid)
    ggrid = [1e-3, 3e-3, 1e-2, 3e-2, 1e-1] if est.gamma_grid is None else est.gamma_grid
    return [(float(p), float(g)) for g in ggrid for p in pgrid]


def _evaluate_grid(
    est: Any, ctx: FitContext, valid: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], scorer: Score
) -> tuple[pd.DataFrame, list[Candidate]]:
    """Train every configuration and evaluate it at every gate shift: one row and one candidate each."""
    rows, cands = [], []
    it: Any = _configs(est)
    if est.progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc="AdaptGBRT sweep")
    for p, g in it:
        for init, hard in itertools.product(_inits(est, ctx, g), (False, True)):
            cand = _fit_candidate(est, ctx, p, g, init, hard_q=hard)
            base = {"p_full": p, "gamma": g, "init": init[0], "q_step": "hard" if hard else "soft"}
            for shift, ev in gate_shifts(ctx, cand, valid, scorer, est.gate_threshold):
                rows.append({**base, **ev, "gate_shift": shift, "nit": cand.result.nit})
                cands.append(replace(cand, g_bias=float(cand.g_bias) - shift))
    df = pd.DataFrame(rows)
    df["on_frontier"] = pareto_mask(df["cost"].to_numpy(), df["score"].to_numpy())
    return df, cands


def sweep(
    est: Any, ctx: FitContext, Xv: np.ndarray, yv: np.ndarray
) -> tuple[Candidate, AdaptSweepResult, dict[str, dict[str, float]]]:
    """Sweep ``p_full_grid x gamma_grid`` (x initializations x q-steps x gate shifts) to the budget.

    Parameters
    ----------
    est : AdaptGBRT
        Its settings (read only).
    ctx : FitContext
        The training rows.
    Xv, yv : ndarray
        The validation rows and labels.

    Returns
    -------
    chosen : Candidate
    result : AdaptSweepResult
    trivial : dict
        The trivial systems' validation ``score`` and ``cost`` by name.
    """
    budget = float(est.budget)
    f0_used_v = ctx.f0.features_used(Xv)
    p0v = ctx.f0.proba(Xv)
    score_name, scorer = resolve_scoring(est.scoring)
    df, cands = _evaluate_grid(est, ctx, (Xv, yv, p0v, f0_used_v), scorer)
    ok = pd.Series(fits_budget(df["cost"].to_numpy(), budget), index=df.index)
    what = "Most accurate" if est.scoring is None else f"Best-scoring (scoring={score_name!r})"
    if ok.any():
        best = int(df[ok].sort_values(["score", "cost"], ascending=[False, True], kind="stable").index[0])
        status, msg = Status.SUCCESS, f"{what} validation configuration within budget {est.budget}."
    else:
        best = int(df["cost"].idxmin())
        status, msg = Status.INFEASIBLE, f"No configuration within budget {est.budget}; kept the cheapest."
    # the best trivial systems on the validation rows: a constant (the training class shares,
    # cost 0) and f0 alone (when within the budget)
    prior = np.bincount(ctx.y_idx.astype(np.int64), minlength=len(ctx.classes)) / ctx.y_idx.size
    trivial = {"constant (class shares)": (scorer(np.tile(prior, (len(yv), 1)), yv, ctx.classes), 0.0)}
    f0_cost = float(row_cost(ctx.costs, f0_used_v).mean())
    if fits_budget(f0_cost, budget):
        trivial["f0 alone"] = (scorer(p0v, yv, ctx.classes), f0_cost)
    if status == Status.SUCCESS:
        status, msg = judge_sweep(est, df, best, trivial, f0_cost, score_name, msg)
    result = AdaptSweepResult(status=status, message=msg, results=df, best_index=best)
    return cands[best], result, {k: {"score": v[0], "cost": v[1]} for k, v in trivial.items()}


def judge_sweep(
    est: Any,
    df: pd.DataFrame,
    best: int,
    trivial: dict[str, tuple[float, float]],
    f0_cost: float,
    score_name: str,
    msg: str,
) -> tuple[Status, str]:
    """Return ``(TRIVIAL, why)`` when the chosen system is no better than a trivial one, else ``(SUCCESS, msg)``.

    Parameters
    ----------
    est : AdaptGBRT
        Its settings (read only: ``budget``, ``trivial_tol``).
    df : pandas.DataFrame
        The sweep's results.
    best : int
        The chosen row.
    trivial : dict
        ``name -> (score, cost)`` of the trivial systems on the validation rows.
    f0_cost : float
        f0's mean cost on the validation rows.
    score_name : str
        What ``score`` is.
    msg : str
        The message of a successful sweep.

    Returns
    -------
    tuple of (Status, str)
    """
    tname, (tscore, tcost) = max(trivial.items(), key=lambda kv: kv[1][0])
    chosen = float(df.loc[best, "score"])
    tol = est.trivial_tol
    const = trivial["constant (class shares)"][0]
    if chosen <= const + tol and tscore == const:
        return Status.TRIVIAL, (
            f"The best configuration within budget {est.budget} (validation {score_name} "
            f"{chosen:.4f}, cost {df.loc[best, 'cost']:.3g}) is no better than a constant predicting the "
            f"training class shares ({const:.4f} at cost 0; f0 alone costs {f0_cost:.3g}): the search found "
            "no useful adaptive system within the budget (try other p_full_grid / gamma_grid, a larger "
            "budget, or larger n_trees)."
        )
    if chosen < tscore - tol:
        return Status.TRIVIAL, (
            f"The best configuration within budget {est.budget} (validation {score_name} "
            f"{chosen:.4f}, cost {df.loc[best, 'cost']:.3g}) is worse than the trivial system "
            f"'{tname}' ({tscore:.4f} at cost {tcost:.3g}) by more than {tol}: the search found no useful "
            "adaptive system within the budget (try other p_full_grid / gamma_grid, larger n_trees, "
            "or use the trivial system)."
        )
    return Status.SUCCESS, msg
