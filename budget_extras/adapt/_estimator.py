"""AdaptGBRT: a cheap gate and a cheap model that approximate an expensive model where they can.

Nan & Saligrama, "Adaptive Classification for Prediction Under a Budget", NeurIPS 2017.
"""

from __future__ import annotations

import itertools
import json
import numbers
import warnings
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import lightgbm as lgb
import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..core._costs import FeatureCosts
from ..core._ensemble import TreeEnsemble
from ..core._fit_state import fit_in_one_step
from ..core._params import Interval, Options
from ..core._report import CostReport, cost_report
from ..core._scoring import resolve_scoring
from ..core._status import MethodResult, Status, fits_budget
from ..core._validation import check_array_2d, check_finite_labels, column_names, pandas_categories
from ._f0 import F0Model
from ._heads import F1Head, make_head
from ._paths import as_feature_costs, booster_features_used, row_cost
from ._train import (
    AdaptTrainResult,
    _per_feature_cost,
    default_lgb_params,
    make_dataset,
    train_adapt_gbrt,
    train_init_f1,
)

__all__ = ["AdaptGBRT", "AdaptSweepResult"]

_FORMAT = "budget_extras.AdaptGBRT/1"


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
        see :meth:`AdaptGBRT._gate_shifts`): validation ``score`` (``scoring``; accuracy by
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
    """Return True where no other point has cost <= and accuracy >= (one strictly)."""
    cost = np.asarray(cost, dtype=float)
    acc = np.asarray(acc, dtype=float)
    dominated = (
        (cost[None, :] <= cost[:, None])
        & (acc[None, :] >= acc[:, None])
        & ((cost[None, :] < cost[:, None]) | (acc[None, :] > acc[:, None]))
    )
    return np.asarray(~dominated.any(axis=1))


class AdaptGBRT(ClassifierMixin, BaseEstimator):
    """Adapt-GBRT: low-cost gate ``g`` and low-cost model ``f1`` in front of an expensive ``f0``.

    A row goes to ``f0`` when ``g(x) > gate_threshold`` (default 0) and is otherwise answered by
    ``f1``. Both ``g`` and ``f1`` are LightGBM tree ensembles trained jointly by alternating
    minimization (closed-form q-step, then one ``g`` tree and one ``f1`` tree per round against
    the gradients of the paper's loss) with the feature-acquisition penalty ``gamma * c_a`` on
    each feature that neither model uses yet. Binary classification as in the paper; with more
    than two classes (an extension) the gate is unchanged and ``f1`` is a multinomial LightGBM
    booster, the q-step using ``f0``'s and ``f1``'s probabilities of the true class.

    Cost accounting (per row, the unified rule): a row answered by ``f1`` pays the union of the
    features on its ``g`` and ``f1`` paths; a row sent to ``f0`` pays the union of the features
    on its ``g`` path and those ``f0`` reads for that row.

    Parameters
    ----------
    f0 : fitted model
        The expensive model: a LightGBM Booster or estimator, a scikit-learn classifier with
        ``predict_proba``, or a callable returning ``(n_rows, n_classes)`` probabilities
        (columns in the order of the sorted class labels). Not modified.
    p_full : float in [0, 1], default 0.5
        Fraction of training rows the q-step routes to ``f0``.
    gamma : float >= 0, default 0.01
        Feature-acquisition penalty per unit cost (in units of the mean per-row log-loss).
    costs : FeatureCosts, list, dict, pandas.Series or CSV path, optional
        Feature costs (the core's one cost input; default: 1 per feature).
    budget : float, optional
        Target mean cost per row. When given, ``fit`` sweeps ``p_full_grid x gamma_grid`` (x the
        initializations x a soft and a hard q-step), evaluates every fitted system on the
        validation data at its own gate offset and at shifted ones, and keeps the best-scoring
        system whose mean cost fits the budget (:func:`budget_extras.fits_budget`).
    p_full_grid, gamma_grid : sequence of float, optional
        Sweep grids (defaults: ``0.1 ... 0.9`` and ``1e-3 ... 1e-1``).
    n_trees : int, default 100
        Trees per model per g/f1-step (also for the initial f1).
    max_em_iter : int, default 10
        Cap on alternating-minimization iterations.
    q_tol : float, default 1e-4
        Convergence: ``||q - q_old||_1 < q_tol * n_rows``.
    accu_tol : float, default 1e-5
        Convergence: change of training accuracy below ``accu_tol``.
    q_equality : bool, default True
        True: ``mean(q) = p_full`` (reference code); False: ``mean(q) <= p_full`` (paper).
    lgb_params : dict, optional
        Overrides of :func:`~budget_extras._adapt_train.default_lgb_params`.
    f0_features : {"auto", "all"}, bool mask or callable, default "auto"
        Features ``f0`` reads per row (see :class:`~budget_extras._adapt_f0.F0Model`).
    gate_threshold : float, default 0.0
        Rows with ``g(x) > gate_threshold`` go to ``f0`` (0 is the paper's rule; raising it trades
        accuracy for cost without refitting).
    progress : bool, default False
        Progress bar (tqdm) over sweeps and per-iteration messages.
    init : {"auto", "greedy"}, default "auto"
        Initial ``f1`` of the alternating minimization. ``"greedy"``: the reference's
        cost-penalized booster on all rows alone. ``"auto"``: also ``f1`` restricted to each of
        the two features the greedy ``f1`` gains most from and to the cheapest half of the
        features (initializations that use the same features as an earlier one are dropped).
        When the greedy ``f1`` already uses every feature, the coupled penalty no longer pushes
        anything and ``q`` sees no difference between rows; a cheap initial ``f1`` lets the
        q-step see where ``f1`` is not enough. Without ``budget`` the run with the
        lowest training objective (system log-loss + ``gamma`` x mean cost) is kept; with
        ``budget`` every initialization is a candidate of the sweep (column ``init``).
    scoring : None, str or callable, default None
        What the budget sweep maximizes on the validation data: None is accuracy; a scikit-learn
        scorer name (``"roc_auc"``, ``"neg_log_loss"``, ``"balanced_accuracy"``, ...) or a
        callable ``scorer(estimator, X, y)``. The system's validation probabilities are scored
        (f0's on the rows routed to it).
    trivial_tol : float, default 0.01
        With ``budget``: when the chosen system scores more than ``trivial_tol`` below the best
        trivial system on the validation data (a constant predicting the training class shares,
        at cost 0, or ``f0`` alone when it is within the budget), ``fit`` warns (UserWarning) and
        ``result_.status`` is 3.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    g_model_, f1_model_ : lightgbm.Booster
    g_bias_ : float
    f1_bias_ : float, or ndarray of shape (n_classes,) for more than two classes
    result_ : AdaptTrainResult or AdaptSweepResult
        ``sweep_result_`` with ``budget``, else ``train_result_`` (both have ``status``,
        ``success`` and ``message``).
    train_result_ : AdaptTrainResult
        History (``mean_q`` after each q-step, accuracy, ...), status, message.
    sweep_result_ : AdaptSweepResult or None
        With ``budget``: the validation results and Pareto frontier.
    p_full_, gamma_ : float
        The configuration of the final model.
    init_ : str
        The initialization of the final model (``"greedy"`` or ``"f1 on ..."``).
    """

    #: Private attributes that are part of the fitted state (see ``core._fit_state``).
    _fitted_private = ("_leaf_cache", "_feature_names", "_pandas_categorical")
    #: The parameter table (``core._params``), checked before every fit.
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "f0": ["no_validation"],
        "p_full": [Interval(numbers.Real, 0, 1, closed="both")],
        "gamma": [Interval(numbers.Real, 0, None, closed="left")],
        "costs": ["no_validation"],
        "budget": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "p_full_grid": ["array-like", None],
        "gamma_grid": ["array-like", None],
        "n_trees": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_em_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "q_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "accu_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "q_equality": ["boolean"],
        "lgb_params": [dict, None],
        "f0_features": [Options(("auto", "all")), "array-like", "callable"],
        "gate_threshold": [Interval(numbers.Real, None, None, closed="neither")],
        "progress": ["boolean"],
        "init": [Options(("auto", "greedy"))],
        "scoring": ["no_validation"],
        "trivial_tol": [Interval(numbers.Real, 0, None, closed="left")],
    }
    train_result_: AdaptTrainResult

    def __init__(
        self,
        f0: Any = None,
        *,
        p_full: float = 0.5,
        gamma: float = 0.01,
        costs: Any = None,
        budget: float | None = None,
        p_full_grid: Any = None,
        gamma_grid: Any = None,
        n_trees: int = 100,
        max_em_iter: int = 10,
        q_tol: float = 1e-4,
        accu_tol: float = 1e-5,
        q_equality: bool = True,
        lgb_params: dict[str, Any] | None = None,
        f0_features: Any = "auto",
        gate_threshold: float = 0.0,
        progress: bool = False,
        init: str = "auto",
        scoring: Any = None,
        trivial_tol: float = 0.01,
    ) -> None:
        self.f0 = f0
        self.p_full = p_full
        self.gamma = gamma
        self.costs = costs
        self.budget = budget
        self.p_full_grid = p_full_grid
        self.gamma_grid = gamma_grid
        self.n_trees = n_trees
        self.max_em_iter = max_em_iter
        self.q_tol = q_tol
        self.accu_tol = accu_tol
        self.q_equality = q_equality
        self.lgb_params = lgb_params
        self.f0_features = f0_features
        self.gate_threshold = gate_threshold
        self.progress = progress
        self.init = init
        self.scoring = scoring
        self.trivial_tol = trivial_tol

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        X: Any,
        y: Any,
        *,
        X_valid: Any = None,
        y_valid: Any = None,
        f0_proba_train: Any = None,
    ) -> AdaptGBRT:
        """Fit the gate and f1 around the constructor's fitted expensive model ``f0``.

        The fit runs on a private copy; its fitted attributes replace this estimator's only when
        it succeeds, so a refused fit leaves an earlier fit untouched.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Training rows.
        y : array-like of shape (n_rows,)
            Training labels, two or more classes.
        X_valid, y_valid : array-like, optional
            Validation data; required with ``budget``.
        f0_proba_train : array-like of shape (n_rows, n_classes), optional
            f0's probabilities on the training rows to use in the q-step instead of
            ``f0.predict_proba(X)`` (e.g. out-of-fold predictions when f0 was fit on ``X``
            and memorizes it, as random forests do).

        Returns
        -------
        self : AdaptGBRT
        """
        return fit_in_one_step(self, lambda work: work._fit(X, y, X_valid, y_valid, f0_proba_train))

    def _fit(self, X: Any, y: Any, X_valid: Any, y_valid: Any, f0_proba_train: Any) -> None:
        """Fit this private copy (the body of :meth:`fit`)."""
        if self.f0 is None:
            raise ValueError("AdaptGBRT needs the fitted expensive model: AdaptGBRT(f0, ...).")
        if self.budget is not None and (X_valid is None or y_valid is None):
            raise ValueError("AdaptGBRT with 'budget' needs validation data: pass X_valid and y_valid to fit.")
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"The 'y' argument of AdaptGBRT.fit must be 1-D. Got shape {y.shape} instead.")
        check_finite_labels(y, name="y", owner="AdaptGBRT.fit")
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(f"AdaptGBRT needs at least 2 classes in 'y'. Got {classes.size} instead.")
        k = classes.size
        self.f0_ = F0Model(self.f0, features=self.f0_features, n_classes=k)
        self._set_input_spec(X)
        self.f0_.feature_names = self._feature_names
        X = self._validate(X, "X")
        if y.shape != (X.shape[0],):
            raise ValueError(
                f"The 'y' argument of AdaptGBRT.fit must have shape ({X.shape[0]},). Got {y.shape} instead."
            )
        self.classes_ = classes
        self.costs_ = as_feature_costs(self.costs, X.shape[1], self._feature_names)
        self.cost_vec_ = _per_feature_cost(self.costs_, X.shape[1])
        y_idx = np.searchsorted(classes, y).astype(np.float64)
        p0 = self.f0_.proba(X) if f0_proba_train is None else np.asarray(f0_proba_train, dtype=np.float64)
        if p0.shape != (X.shape[0], k):
            raise ValueError(
                f"The 'f0_proba_train' argument must have shape ({X.shape[0]}, {k}). Got {p0.shape} instead."
            )
        p0_true = p0[np.arange(y.size), y_idx.astype(np.int64)]
        f0_correct = np.argmax(p0, axis=1) == y_idx
        params = default_lgb_params()
        params.update(self.lgb_params or {})
        ctx = _FitContext(X, y_idx, p0_true, f0_correct, make_dataset(X, params), params)
        if self.budget is None:
            self._fit_best_init(ctx, float(self.p_full), float(self.gamma), {})
            self.sweep_result_: AdaptSweepResult | None = None
            self._check_train_trivial(ctx)
            self.result_: AdaptTrainResult | AdaptSweepResult = self.train_result_
            return
        Xv = self._validate(X_valid, "X_valid")
        yv = check_finite_labels(y_valid, name="y_valid", owner="AdaptGBRT.fit")
        if yv.shape != (Xv.shape[0],):
            raise ValueError(
                f"The 'y_valid' argument of AdaptGBRT.fit must have shape ({Xv.shape[0]},). Got {yv.shape} instead."
            )
        self._sweep(ctx, Xv, yv)
        assert self.sweep_result_ is not None
        self.result_ = self.sweep_result_

    def _set_input_spec(self, X: Any) -> None:
        """Record the columns, names and pandas categories that later data must match.

        They are f0's when it is a LightGBM model, else those of the training data (as
        LightGBM records them when training).
        """
        booster = self.f0_._booster
        if booster is not None:
            ens = self.f0_._tree_ensemble()
            n: int | None = ens.n_features
            names: tuple[str, ...] | None = ens.feature_names
            cats = ens.pandas_categorical
            if all(f == f"Column_{i}" for i, f in enumerate(ens.feature_names)):  # f0 has no names
                names = column_names(X)
        else:
            n, names, cats = None, column_names(X), pandas_categories(X)
        self._pandas_categorical = cats
        self._feature_names = names
        if names is not None and not all(f == f"Column_{i}" for i, f in enumerate(names)):
            self.feature_names_in_ = np.asarray(names, dtype=object)
        self.n_features_in_ = n if n is not None else check_array_2d(X, name="X").shape[1]

    def _validate(self, X: Any, name: str) -> np.ndarray:
        """``X`` through the core's one input path (docs/representation.md, "Input data")."""
        return check_array_2d(
            X,
            name=name,
            n_features=self.n_features_in_,
            pandas_categorical=getattr(self, "_pandas_categorical", None),
            feature_names=getattr(self, "_feature_names", None),
        )

    def _inits(self, ctx: _FitContext, gamma: float, init_cache: dict[float, Any]) -> list[tuple[str, np.ndarray]]:
        """Return the initial f1's raw training scores for ``gamma``: ``[(name, raw), ...]`` (cached)."""
        if gamma in init_cache:
            return init_cache[gamma]
        kw: dict[str, Any] = {"gamma": gamma, "n_trees": self.n_trees, "lgb_params": ctx.params, "head": self._head()}
        greedy = train_init_f1(ctx.ds, ctx.y_idx, self.cost_vec_, **kw)
        out = [("greedy", np.asarray(greedy.predict(ctx.X, raw_score=True)))]
        if self.init == "auto":
            d = ctx.X.shape[1]
            names = self._feature_names or tuple(f"Column_{i}" for i in range(d))
            gain = np.asarray(greedy.feature_importance(importance_type="gain"), dtype=np.float64)
            subsets = [np.arange(d) == a for a in np.argsort(-gain, kind="stable")[: min(2, d) if d > 1 else 0]]
            if d > 2:
                subsets.append(np.isin(np.arange(d), np.argsort(self.cost_vec_, kind="stable")[: (d + 1) // 2]))
            seen = [tuple(np.flatnonzero(greedy.feature_importance(importance_type="split") > 0))]
            for mask in subsets:
                b = train_init_f1(ctx.ds, ctx.y_idx, self.cost_vec_, allowed=mask, **kw)
                used = tuple(np.flatnonzero(b.feature_importance(importance_type="split") > 0))
                if used in seen:
                    continue
                seen.append(used)
                label = "f1 on " + ", ".join(names[i] for i in np.flatnonzero(mask))
                out.append((label, np.asarray(b.predict(ctx.X, raw_score=True))))
        init_cache[gamma] = out
        return out

    def _fit_best_init(self, ctx: _FitContext, p_full: float, gamma: float, init_cache: dict[float, Any]) -> None:
        """Fit from every initialization and keep the lowest training objective."""
        best: tuple[float, dict[str, Any]] | None = None
        for name, raw in self._inits(ctx, gamma, init_cache):
            self._fit_one(ctx, p_full, gamma, raw, name)
            obj = self._train_objective(ctx, gamma)
            if best is None or obj < best[0] - 1e-12:
                best = (obj, self._state())
        assert best is not None
        self._set_state(best[1])

    def _train_objective(self, ctx: _FitContext, gamma: float) -> float:
        """System log-loss on the training rows + ``gamma`` x their mean cost."""
        if ctx.f0_used is None:
            ctx.f0_used = self.f0_.features_used(ctx.X)
        to_f0 = self.route(ctx.X).astype(bool)
        p1 = self._head().proba(np.asarray(self.f1_model_.predict(ctx.X, raw_score=True)) + self.f1_bias_)
        p_true = np.where(to_f0, ctx.p0_true, p1[np.arange(ctx.X.shape[0]), ctx.y_idx.astype(np.int64)])
        loss = float(-np.log(np.clip(p_true, 1e-15, 1.0)).mean())
        return loss + gamma * float(self.row_cost(ctx.X, f0_used=ctx.f0_used).mean())

    def _check_train_trivial(self, ctx: _FitContext) -> None:
        """Warn when the fitted system is no more accurate on its training rows than a constant.

        The constant predicts the majority class: a chance-level model, e.g. ``gamma`` too high
        for any feature.
        """
        res = self.train_result_
        acc = res.history[-1]["train_accuracy"] if res.history else 0.0
        major = float(np.bincount(ctx.y_idx.astype(np.int64)).max() / ctx.y_idx.size)
        if acc < major + 1e-9 and ctx.f0_correct.mean() > major + 0.01:
            res = replace(
                res,
                status=Status.TRIVIAL,
                message=(
                    f"The fitted system is no better than predicting the majority class on the training rows "
                    f"(accuracy {acc:.4f} vs {major:.4f}; f0 alone {ctx.f0_correct.mean():.4f}). "
                    f"Lower gamma or raise p_full. " + res.message
                ),
            )
            self.train_result_ = res
            warnings.warn(f"AdaptGBRT: {res.message}", UserWarning, stacklevel=6)

    def _fit_one(
        self,
        ctx: _FitContext,
        p_full: float,
        gamma: float,
        init_raw: np.ndarray,
        init_name: str = "greedy",
        hard_q: bool = False,
    ) -> None:
        cb = None
        if self.progress and self.budget is None:

            def cb(rec: dict[str, float]) -> None:
                print(
                    f"AdaptGBRT iter {int(rec['iteration'])}: mean_q={rec['mean_q']:.4f} "
                    f"frac_f0={rec['frac_f0']:.4f} train_acc={rec['train_accuracy']:.4f} "
                    f"q_change={rec['q_change']:.2e} features={int(rec['n_features'])}"
                )

        res: AdaptTrainResult = train_adapt_gbrt(
            ctx.ds,
            ctx.X,
            ctx.y_idx,
            ctx.p0_true,
            ctx.f0_correct,
            self.cost_vec_,
            p_full=p_full,
            gamma=gamma,
            n_trees=self.n_trees,
            lgb_params=ctx.params,
            init_f1_raw=init_raw,
            max_em_iter=self.max_em_iter,
            q_tol=self.q_tol,
            accu_tol=self.accu_tol,
            equality=self.q_equality,
            callback=cb,
            head=self._head(),
            hard_q=hard_q,
        )
        self.train_result_ = res
        self.g_model_, self.f1_model_ = res.g_model, res.f1_model
        self.g_bias_, self.f1_bias_ = res.g_bias, res.f1_bias
        self.p_full_, self.gamma_, self.init_ = p_full, gamma, init_name
        self._leaf_cache: dict[str, TreeEnsemble] = {}

    def _sweep(self, ctx: _FitContext, Xv: np.ndarray, yv: np.ndarray) -> None:
        pgrid = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
        if self.p_full_grid is not None:
            pgrid = list(self.p_full_grid)
        ggrid = [1e-3, 3e-3, 1e-2, 3e-2, 1e-1] if self.gamma_grid is None else self.gamma_grid
        configs = [(float(p), float(g)) for g in ggrid for p in pgrid]
        f0_used_v = self.f0_.features_used(Xv)
        p0v = self.f0_.proba(Xv)
        rows, states = [], []
        init_cache: dict[float, Any] = {}
        it: Any = configs
        if self.progress:
            from tqdm.auto import tqdm

            it = tqdm(configs, desc="AdaptGBRT sweep")
        score_name, scorer = _make_scorer(self.scoring)
        for p, g in it:
            for (name, raw), hard in itertools.product(self._inits(ctx, g, init_cache), (False, True)):
                self._fit_one(ctx, p, g, raw, name, hard_q=hard)
                base = {"p_full": p, "gamma": g, "init": name, "q_step": "hard" if hard else "soft"}
                for shift, ev in self._gate_shifts(Xv, yv, p0v, f0_used_v, scorer):
                    rows.append({**base, **ev, "gate_shift": shift, "nit": self.train_result_.nit})
                    state = self._state()
                    state["gb"] = float(self.g_bias_) - shift
                    states.append(state)
        df = pd.DataFrame(rows)
        df["on_frontier"] = pareto_mask(df["cost"].to_numpy(), df["score"].to_numpy())
        ok = pd.Series(fits_budget(df["cost"].to_numpy(), float(self.budget)), index=df.index)  # type: ignore[arg-type]
        what = "Most accurate" if self.scoring is None else f"Best-scoring (scoring={score_name!r})"
        if ok.any():
            best = int(df[ok].sort_values(["score", "cost"], ascending=[False, True], kind="stable").index[0])
            status, msg = Status.SUCCESS, f"{what} validation configuration within budget {self.budget}."
        else:
            best = int(df["cost"].idxmin())
            status, msg = Status.INFEASIBLE, f"No configuration within budget {self.budget}; kept the cheapest."
        self._set_state(states[best])
        # the best trivial systems on the validation rows: a constant (the training class shares,
        # cost 0) and f0 alone (when within the budget)
        prior = np.bincount(ctx.y_idx.astype(np.int64), minlength=len(self.classes_)) / ctx.y_idx.size
        trivial = {"constant (class shares)": (scorer(np.tile(prior, (len(yv), 1)), yv, self.classes_), 0.0)}
        f0_cost = float(row_cost(self.costs_, f0_used_v).mean())
        if fits_budget(f0_cost, float(self.budget)):  # type: ignore[arg-type]
            trivial["f0 alone"] = (scorer(p0v, yv, self.classes_), f0_cost)
        tname, (tscore, tcost) = max(trivial.items(), key=lambda kv: kv[1][0])
        chosen = float(df.loc[best, "score"])
        tol = self.trivial_tol
        const = trivial["constant (class shares)"][0]
        if status == Status.SUCCESS and chosen <= const + tol and tscore == const:
            status = Status.TRIVIAL
            msg = (
                f"The best configuration within budget {self.budget} (validation {score_name} "
                f"{chosen:.4f}, cost {df.loc[best, 'cost']:.3g}) is no better than a constant predicting the "
                f"training class shares ({const:.4f} at cost 0; f0 alone costs {f0_cost:.3g}): the search found "
                "no useful adaptive system within the budget (try other p_full_grid / gamma_grid, a larger "
                "budget, or larger n_trees)."
            )
            warnings.warn(f"AdaptGBRT: {msg}", UserWarning, stacklevel=6)
        elif status == Status.SUCCESS and chosen < tscore - tol:
            status = Status.TRIVIAL
            msg = (
                f"The best configuration within budget {self.budget} (validation {score_name} "
                f"{chosen:.4f}, cost {df.loc[best, 'cost']:.3g}) is worse than the trivial system "
                f"'{tname}' ({tscore:.4f} at cost {tcost:.3g}) by more than {tol}: the search found no useful "
                "adaptive system within the budget (try other p_full_grid / gamma_grid, larger n_trees, "
                "or use the trivial system)."
            )
            warnings.warn(f"AdaptGBRT: {msg}", UserWarning, stacklevel=6)
        self.sweep_result_ = AdaptSweepResult(status=status, message=msg, results=df, best_index=best)
        self.trivial_ = {k: {"score": v[0], "cost": v[1]} for k, v in trivial.items()}

    def _gate_shifts(
        self, Xv: np.ndarray, yv: np.ndarray, p0v: np.ndarray, f0_used_v: np.ndarray, scorer: Any, n_max: int = 24
    ) -> list[tuple[float, dict[str, float]]]:
        """Evaluate the fitted system on validation at its own gate offset and at shifted ones.

        The gate's ranking of the rows is what the alternating minimization learns; the share
        it routes to ``f0`` is a trade-off of cost against accuracy that the budget decides.
        A shift ``s`` routes the rows with ``g(x) - s > gate_threshold``. Besides ``s = 0`` the
        shifts put the threshold between consecutive distinct validation gate scores (at most
        ``n_max``, spread over the quantiles), never sending every row or none to ``f0``
        (the fitted offset routes ``p_full`` of the rows, which can cut through a
        region of rows that needs ``f0``).

        Returns
        -------
        list of (shift, dict)
            ``score``, ``accuracy``, ``cost`` and ``frac_f0`` per shift; shift 0 first, then
            the shifts whose (score, cost) differ from all earlier ones.
        """
        gv = self.decision_function_gate(Xv) - self.gate_threshold
        gu = booster_features_used(self.g_model_, Xv, ensemble=self._ensemble("g"))
        fu = booster_features_used(self.f1_model_, Xv, ensemble=self._ensemble("f1"))
        c1, c0 = row_cost(self.costs_, gu | fu), row_cost(self.costs_, gu | np.asarray(f0_used_v, dtype=bool))
        p1 = self._head().proba(np.asarray(self.f1_model_.predict(Xv, raw_score=True)) + self.f1_bias_)
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
                "score": float(scorer(proba, yv, self.classes_)),
                "accuracy": float(np.mean(self.classes_[np.argmax(proba, axis=1)] == yv)),
                "cost": float(np.where(to_f0, c0, c1).mean()),
                "frac_f0": float(to_f0.mean()),
            }
            key = (round(ev["score"], 12), round(ev["cost"], 12))
            if key not in seen:
                seen.add(key)
                out.append((shift, ev))
        return out

    def _state(self) -> dict[str, Any]:
        return {
            "g": self.g_model_,
            "f1": self.f1_model_,
            "gb": self.g_bias_,
            "fb": self.f1_bias_,
            "res": self.train_result_,
            "p": self.p_full_,
            "gm": self.gamma_,
            "init": self.init_,
        }

    def _set_state(self, s: dict[str, Any]) -> None:
        self.g_model_, self.f1_model_ = s["g"], s["f1"]
        self.g_bias_, self.f1_bias_ = s["gb"], s["fb"]
        self.train_result_, self.p_full_, self.gamma_ = s["res"], s["p"], s["gm"]
        self.init_ = s["init"]
        self._leaf_cache = {}

    # -------------------------------------------------------------- predict
    def _check(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "g_model_")
        return self._validate(X, "X")

    def decision_function_gate(self, X: Any) -> np.ndarray:
        """Raw gate score ``g(x)``; rows with ``g(x) > gate_threshold`` go to ``f0``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of float64, shape (n_rows,)
        """
        X = self._check(X)
        return np.asarray(self.g_model_.predict(X, raw_score=True)) + self.g_bias_

    def route(self, X: Any) -> np.ndarray:
        """Which model answers each row: 1 for ``f0``, 0 for ``f1``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of int8, shape (n_rows,)
        """
        return (self.decision_function_gate(X) > self.gate_threshold).astype(np.int8)

    def _head(self) -> F1Head:
        return make_head(len(self.classes_))

    def _require_f0(self) -> F0Model:
        if getattr(self, "f0_", None) is None:
            raise ValueError("This AdaptGBRT has no f0 (loaded without one). Pass f0= to AdaptGBRT.load.")
        return self.f0_

    def predict_proba(self, X: Any, *, p0: np.ndarray | None = None) -> np.ndarray:
        """Class probabilities: ``f0``'s on rows routed to it, ``f1``'s (sigmoid or softmax) elsewhere.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.
        p0 : ndarray of float64, shape (n_rows, n_classes), optional
            ``f0``'s probabilities for the rows, precomputed (default: asked of ``f0`` for the
            rows routed to it).

        Returns
        -------
        ndarray of float64, shape (n_rows, n_classes)
        """
        X = self._check(X)
        to_f0 = self.route(X).astype(bool)
        out = self._head().proba(np.asarray(self.f1_model_.predict(X, raw_score=True)) + self.f1_bias_)
        if to_f0.any():
            if p0 is None:
                out[to_f0] = self._require_f0().proba(X[to_f0])
            else:
                out[to_f0] = np.asarray(p0)[to_f0]
        return out

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class labels.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of shape (n_rows,)
            Labels from ``classes_``.
        """
        proba = self.predict_proba(X)
        return np.asarray(self.classes_[np.argmax(proba, axis=1)])

    # ----------------------------------------------------------------- cost
    def _ensemble(self, which: str) -> TreeEnsemble:
        if which not in self._leaf_cache:
            model = self.g_model_ if which == "g" else self.f1_model_
            self._leaf_cache[which] = TreeEnsemble.from_booster(model)
        return self._leaf_cache[which]

    def features_used(self, X: Any, *, f0_used: np.ndarray | None = None) -> np.ndarray:
        """Features acquired per row under the unified rule.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to account.
        f0_used : ndarray of bool, shape (n_rows, n_features), optional
            Features ``f0`` reads for each row, precomputed (default: asked of ``f0``).

        Returns
        -------
        ndarray of bool, shape (n_rows, n_features)
        """
        X = self._check(X)
        gu = booster_features_used(self.g_model_, X, ensemble=self._ensemble("g"))
        to_f0 = self.route(X).astype(bool)
        other = np.zeros_like(gu)
        if (~to_f0).any():
            other[~to_f0] = booster_features_used(self.f1_model_, X[~to_f0], ensemble=self._ensemble("f1"))
        if to_f0.any():
            if f0_used is not None:
                other[to_f0] = np.asarray(f0_used)[to_f0]
            else:
                other[to_f0] = self._require_f0().features_used(X[to_f0])
        return gu | other

    def row_cost(self, X: Any, *, f0_used: np.ndarray | None = None) -> np.ndarray:
        """Acquisition cost of each row.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to account.
        f0_used : ndarray of bool, shape (n_rows, n_features), optional
            Features ``f0`` reads for each row, precomputed (default: asked of ``f0``).

        Returns
        -------
        ndarray of float64, shape (n_rows,)
        """
        used = self.features_used(X, f0_used=f0_used)
        return row_cost(self.costs_, used)

    def cost_report(self, X: Any) -> CostReport:
        """Return the core's cost accounting of the whole system (gate, f1 and f0) on the rows ``X``.

        Every row evaluates the gate's trees, then f1's trees or f0's (by :meth:`route`). The
        acquisition follows the unified rule (the same as :meth:`row_cost`); split and tree
        evaluation costs are counted for the LightGBM models (for an ``f0`` that is not a
        LightGBM model, its evaluation is not counted). ``tree_order`` numbers the gate's trees
        first, then f1's, then f0's.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to account.

        Returns
        -------
        CostReport
        """
        X = self._check(X)
        pc = _positional(self.costs_)
        to_f0 = self.route(X).astype(bool)
        g_ens, f1_ens = self._ensemble("g"), self._ensemble("f1")
        reports = [
            cost_report(g_ens, X, pc, feature_counts=False),
            cost_report(f1_ens, X, pc, n_trees=np.where(to_f0, 0, f1_ens.n_trees), feature_counts=False),
        ]
        f0 = self._require_f0() if to_f0.any() else None
        used = reports[0].used.toarray() | reports[1].used.toarray()
        n_f0_trees = 0
        if f0 is not None and f0._booster is not None:
            f0_ens = f0._tree_ensemble()
            n_f0_trees = f0_ens.n_trees
            reports.append(cost_report(f0_ens, X, pc, n_trees=np.where(to_f0, f0_ens.n_trees, 0), feature_counts=False))
            used |= reports[2].used.toarray()
        elif f0 is not None:
            used[to_f0] |= f0.features_used(X[to_f0])
        used_sp = sp.csr_matrix(used)
        acq = np.asarray(self.costs_.row_cost(used_sp), dtype=np.float64)
        eval_cost = np.sum([r.eval_cost for r in reports], axis=0)
        coupled_features = np.logical_or.reduce([r.coupled_features for r in reports])
        names = self._feature_names or tuple(f"Column_{i}" for i in range(self.n_features_in_))
        return CostReport(
            used=used_sp,
            acquired=sp.csr_matrix(self.costs_.acquired_features(used_sp)),
            feature_counts=None,
            acquisition_cost=acq,
            splits_evaluated=np.sum([r.splits_evaluated for r in reports], axis=0),
            trees_evaluated=np.sum([r.trees_evaluated for r in reports], axis=0),
            eval_cost=eval_cost,
            total_cost=acq + eval_cost,
            coupled_cost=float(np.asarray(self.costs_.coupled)[coupled_features].sum()),
            coupled_features=coupled_features,
            tree_order=np.arange(g_ens.n_trees + f1_ens.n_trees + n_f0_trees, dtype=np.int64),
            feature_names=tuple(names),
            costs=self.costs_,
        )

    def _evaluate(
        self, X: np.ndarray, y: np.ndarray, *, p0: np.ndarray | None = None, f0_used: np.ndarray | None = None
    ) -> dict[str, float]:
        pred = self.classes_[np.argmax(self.predict_proba(X, p0=p0), axis=1)]
        return {
            "accuracy": float(np.mean(pred == y)),
            "cost": float(self.row_cost(X, f0_used=f0_used).mean()),
            "frac_f0": float(self.route(X).mean()),
        }

    def evaluate(self, X: Any, y: Any) -> dict[str, float]:
        """Accuracy, mean cost per row and share of rows sent to ``f0`` on ``(X, y)``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to evaluate on.
        y : array-like of shape (n_rows,)
            Their labels.

        Returns
        -------
        dict
            ``accuracy``, ``cost`` and ``frac_f0``.
        """
        return self._evaluate(self._check(X), np.asarray(y))

    # ------------------------------------------------------------ save/load
    def save(self, path: str) -> None:
        """Write the gate, f1, classes, costs and parameters as JSON (f0 is not saved).

        Parameters
        ----------
        path : str
            File to write.
        """
        check_is_fitted(self, "g_model_")
        doc = {
            "format": _FORMAT,
            "params": {k: v for k, v in self.get_params(deep=False).items() if k != "f0" and _jsonable(v)},
            "classes": self.classes_.tolist(),
            "n_features": int(self.n_features_in_),
            "feature_names": None if self._feature_names is None else list(self._feature_names),
            "pandas_categorical": self._pandas_categorical,
            "cost_vec": self.cost_vec_.tolist(),
            "p_full": self.p_full_,
            "gamma": self.gamma_,
            "init": getattr(self, "init_", "greedy"),
            "g_bias": self.g_bias_,
            "f1_bias": np.asarray(self.f1_bias_).tolist(),
            "g_model": self.g_model_.model_to_string(),
            "f1_model": self.f1_model_.model_to_string(),
        }
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)

    @classmethod
    def load(cls, path: str, *, f0: Any = None, costs: Any = None, f0_features: Any = "auto") -> AdaptGBRT:
        """Read a model written by :meth:`save`; pass ``f0`` to predict rows routed to it.

        Parameters
        ----------
        path : str
            File written by :meth:`save`.
        f0 : fitted classifier or LightGBM model, optional
            The expensive model (not saved with the file); needed for rows routed to it.
        costs : FeatureCosts, list, dict, pandas.Series or CSV path, optional
            Feature costs (default: those saved with the model).
        f0_features : {"auto", "all"}, bool mask or callable, default "auto"
            Which features ``f0`` reads (see :class:`AdaptGBRT`).

        Returns
        -------
        AdaptGBRT
        """
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        if doc.get("format") != _FORMAT:
            raise ValueError(f"'{path}' is not an AdaptGBRT file: format is {doc.get('format')!r}.")
        est = cls(**doc["params"])
        est.classes_ = np.asarray(doc["classes"])
        est.n_features_in_ = int(doc["n_features"])
        names = doc.get("feature_names")
        est._feature_names = None if names is None else tuple(names)
        est._pandas_categorical = doc.get("pandas_categorical")
        if names is not None and not all(f == f"Column_{i}" for i, f in enumerate(names)):
            est.feature_names_in_ = np.asarray(names, dtype=object)
        est.cost_vec_ = np.asarray(doc["cost_vec"], dtype=np.float64)
        est._price(costs)
        est.p_full_, est.gamma_ = doc["p_full"], doc["gamma"]
        fb = doc["f1_bias"]
        est.g_bias_, est.f1_bias_ = doc["g_bias"], (np.asarray(fb, dtype=np.float64) if isinstance(fb, list) else fb)
        est.g_model_ = lgb.Booster(model_str=doc["g_model"])
        est.f1_model_ = lgb.Booster(model_str=doc["f1_model"])
        est.f0_ = F0Model(f0, features=f0_features, n_classes=est.classes_.size) if f0 is not None else None  # type: ignore[assignment]
        if est.f0_ is not None:
            est.f0_.feature_names = est._feature_names
        est.init_ = doc.get("init", "greedy")
        est._leaf_cache = {}
        est.sweep_result_ = None
        return est

    def _price(self, costs: Any) -> None:
        """Charge a loaded model's features ``costs`` (None: the costs saved with the model)."""
        self.costs_ = as_feature_costs(
            costs if costs is not None else self.cost_vec_, self.n_features_in_, self._feature_names
        )


class _FixedProba(ClassifierMixin, BaseEstimator):
    """A classifier that returns fixed probabilities.

    It passes a system's validation output to a scikit-learn scorer.
    """

    def __init__(self, proba: Any = None, classes: Any = None) -> None:
        self.proba = proba
        self.classes = classes

    def fit(self, X: Any, y: Any) -> _FixedProba:  # pragma: no cover - never fitted
        return self

    @property
    def classes_(self) -> np.ndarray:
        return np.asarray(self.classes)

    def predict_proba(self, X: Any) -> np.ndarray:
        return np.asarray(self.proba)

    def predict(self, X: Any) -> np.ndarray:
        return np.asarray(self.classes)[np.argmax(self.proba, axis=1)]

    def decision_function(self, X: Any) -> np.ndarray:
        p = np.asarray(self.proba)
        return p[:, 1] if p.shape[1] == 2 else p


def _accuracy(view: _FixedProba, X: Any, y: np.ndarray) -> float:
    return float(np.mean(view.predict(X) == y))


def _make_scorer(scoring: Any) -> tuple[str, Any]:
    """``(name, score(proba, y, classes) -> float)`` (greater is better) for ``scoring`` (None: accuracy)."""
    name, score_view = resolve_scoring(
        scoring, owner="AdaptGBRT", default=("accuracy", _accuracy), view=lambda pc: _FixedProba(*pc)
    )

    def score(proba: np.ndarray, y: np.ndarray, classes: np.ndarray) -> float:
        return score_view((proba, classes), np.zeros((len(y), 1)), y)

    return name, score


def _positional(costs: FeatureCosts) -> FeatureCosts:
    """Return ``costs`` without feature names, to charge models trained on arrays by column position."""
    if costs.feature_names is None:
        return costs
    return FeatureCosts(
        costs.lazy,
        coupled=costs.coupled,
        groups=[costs.group_labels[g] if g >= 0 else None for g in costs.group],
        group_cost={lab: float(c) for lab, c in zip(costs.group_labels, costs.group_cost, strict=True)},
        split=costs.split,
        tree=costs.tree,
    )


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v)
    except TypeError:
        return False
    return True


@dataclass
class _FitContext:
    X: np.ndarray
    y_idx: np.ndarray
    p0_true: np.ndarray
    f0_correct: np.ndarray
    ds: Any
    params: dict[str, Any]
    f0_used: np.ndarray | None = None
