"""FeatureDropRefit: make a boosted model cheaper by dropping features and refitting its leaves.

The search is a backward elimination on validation rows. From the current model (some features
dropped, leaves refit), every feature still used is tried: dropping it (its splits forced, see
``_drop_refit``) without refitting gives a cheap proxy, the increase of the validation loss per
unit of mean validation cost saved. The ``n_refit`` best proposals are refit on the training
rows (with, as one more proposal, all drops that do not raise the loss, together) and the one
with the smallest loss increase per cost saved after refitting is taken. The search goes on
until the model it follows is within the budget; of every refit model within the budget met on
the way, the one with the best validation ``scoring`` is kept. A second start keeps the model's
most important features (total split gain) while they fit and refits; the better of the two
(validation ``scoring``) goes on to the add-back phase: the dropped features that would fit
the budget again are ranked by a refit-free proxy, the ``ADD_BACK_REFITS`` best are refit, and
the best of them is taken while it raises that score. Training rows (``X``, ``y``) are only used
to refit; choices are made on the validation rows (``X_valid``, ``y_valid``). With more than
``SEARCH_ROWS`` training rows the search refits on a fixed random sample of that many, and the
returned model is refit on all of them (its validation score is recomputed; it can differ a
little from the sample refit's that chose it).
"""

from __future__ import annotations

import numbers
import os
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..core._costs import FeatureCosts, as_feature_costs
from ..core._ensemble import TreeEnsemble
from ..core._fit_state import fit_in_one_step
from ..core._params import Interval
from ..core._report import CostReport, cost_report
from ..core._status import MethodResult, Status, fits_budget
from ..core._validation import check_booster
from ._drop_refit import (
    RefitSpec,
    drop_forcing,
    forced_ensemble,
    initial_score,
    leaf_sum,
    path_tables,
    prepare_rows,
    refit_values,
    route,
    row_usage,
)
from ._error_terms import mean_loss
from ._scoring import constant_raw, resolve_scoring
from ._setup import labels_iv

__all__ = ["ADD_BACK_REFITS", "SEARCH_ROWS", "FeatureDropRefit", "FeatureDropResult"]

#: Training rows the search refits on (a fixed random sample when there are more); the returned
#: model is refit on all of them.
SEARCH_ROWS = 5000
#: Add-back proposals refit per round (the best by the refit-free proxy).
ADD_BACK_REFITS = 2


@dataclass(frozen=True)
class FeatureDropResult(MethodResult):
    """Outcome of :meth:`FeatureDropRefit.fit`.

    Attributes
    ----------
    status : Status
        ``SUCCESS`` (a model that uses some feature fits the budget).
    message : str
        One line saying what was returned.
    budget : float
        The budget.
    cost : float
        Mean per-row validation cost of the returned model.
    score : float
        Its validation score (``scoring``).
    dropped : tuple of str
        Names of the dropped features, in the order they were dropped.
    n_steps : int
        Elimination steps taken.
    n_refits : int
        Refits computed (one refit costs about one pass of the training rows through the model).
    """

    budget: float = np.nan
    cost: float = np.nan
    score: float = np.nan
    dropped: tuple[str, ...] = ()
    n_steps: int = 0
    n_refits: int = 0


@dataclass
class _State:
    """One model of the search: a forcing of the original model and its leaf values."""

    dropped: tuple[int, ...]
    forced: np.ndarray
    value: np.ndarray
    cost: float
    loss: float
    used: np.ndarray  # features the validation rows' paths evaluate
    leaves_v: np.ndarray  # (n_trees, n_valid)
    raw_v: np.ndarray  # (n_valid, n_class) raw validation scores
    leaves_t: np.ndarray | None = None  # (n_trees, n_train), refit models only
    score: float = np.nan
    refit: bool = False  # leaf values refit on the training rows (else the original model's)
    count: np.ndarray | None = None
    hess: np.ndarray | None = None


def _raw(ens: TreeEnsemble, value: np.ndarray, leaves: np.ndarray) -> np.ndarray:
    """Raw scores (n_rows, n_class) from tree-major ``leaves`` (n_trees, n_rows) and leaf values ``value``."""
    return leaf_sum(value, leaves, np.asarray(ens.tree_class, dtype=np.int64), ens.num_tree_per_iteration)


def _flat(raw: np.ndarray) -> np.ndarray:
    """Raw scores as the model's output: one column for binary / regression."""
    return raw[:, 0] if raw.shape[1] == 1 else raw


def _weights_iv(sample_weight: Any, n_rows: int) -> np.ndarray | None:
    """Return ``sample_weight`` as float64 of ``n_rows`` finite weights >= 0 with a positive sum (None: unweighted)."""
    if sample_weight is None:
        return None
    if isinstance(sample_weight, str | bytes):
        raise TypeError(f"The 'sample_weight' argument must be an array of {n_rows} numbers. Got a string.")
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"The 'sample_weight' argument must be an array of {n_rows} numbers. Got {type(sample_weight).__name__}."
        ) from exc
    if w.shape != (n_rows,):
        raise ValueError(f"The 'sample_weight' argument must have shape ({n_rows},) like y. Got {w.shape}.")
    if not (np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
        raise ValueError(
            "The 'sample_weight' argument must hold finite weights >= 0 with a positive sum. Got "
            f"{int((~np.isfinite(w)).sum())} non-finite, {int((w < 0).sum())} negative, sum {float(np.nansum(w)):.6g}."
        )
    return w


class FeatureDropRefit(BaseEstimator):
    """Make a boosted LightGBM model cheaper: drop features, refit the leaf values, meet a budget.

    Dropping a feature forces each split on it to send every row to the child with more
    training rows (the split and its other subtree disappear); the leaf values are then refit
    in tree order with one Newton step per tree on the model's loss (LightGBM's
    ``Booster.refit(decay_rate=0)``, keeping the initial score). The features to drop are chosen
    by backward elimination on validation rows (see the module docstring and
    ``docs/budgetprune.md``, section on boosted models).

    Parameters
    ----------
    model : lightgbm.Booster, LGBMModel, TreeEnsemble, path or model text
        A boosted model (binary, multiclass or l2 regression). Not modified. A model whose
        leaves a refit cannot reproduce (``reg_sqrt``, ``path_smooth``, DART, monotone
        constraints, quantized gradients without renewed leaves) is refused at ``fit``.
    budget : float
        Mean per-row prediction cost allowed on the validation rows (the core's accounting:
        lazy acquisition of the features on each row's paths, plus split and tree costs).
    costs : FeatureCosts, list, dict, pandas.Series or CSV path, optional
        Feature costs (default: 1 per feature).
    scoring : None, str or callable, default None
        Validation metric (greater is better) that chooses among the refit models within the
        budget: ``None`` is accuracy for classifiers, R^2 otherwise; scikit-learn scorer names
        (``"roc_auc"``, ``"neg_log_loss"``, ...) or a callable ``scorer(estimator, X, y)``.
    n_refit : int, default 3
        Proposals refit per elimination step (the best by the refit-free proxy).

    Attributes
    ----------
    result_ : FeatureDropResult
    ensemble_ : TreeEnsemble
        The returned model (forced splits removed, leaves refit).
    model_string_ : str
        It as LightGBM model text.
    booster_ : lightgbm.Booster
        It loaded in LightGBM.
    dropped_features_ : tuple of str
        The dropped features, in order.
    cost_, score_ : float
        Mean validation cost (equal to ``cost_report`` of ``ensemble_``) and validation score.
    cost_full_, score_full_, score_constant_ : float
        The unpruned model's cost and score, the best constant model's score.
    path_ : list of dict
        Every refit model of the search: ``dropped``, ``cost``, ``loss`` (validation loss),
        ``score``, ``step``; ``seed="importance"`` marks the second start, ``add_back`` the
        feature re-added in the add-back phase and ``all_rows=True`` the returned model's refit
        on all training rows (when the search refit on a sample).
    scoring_ : str
    costs_ : FeatureCosts
    n_features_in_ : int
    fit_time_ : float
        Seconds the fit took.
    """

    #: The parameter table (``core._params``), checked before every fit.
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "model": ["no_validation"],
        "budget": [Interval(numbers.Real, 0, None, closed="left")],
        "costs": ["no_validation"],
        "scoring": ["no_validation"],
        "n_refit": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(
        self, model: Any = None, *, budget: float | None = None, costs: Any = None, scoring: Any = None,
        n_refit: int = 3,
    ) -> None:
        self.model = model
        self.budget = budget
        self.costs = costs
        self.scoring = scoring
        self.n_refit = n_refit

    def fit(
        self, X: Any, y: Any, *, X_valid: Any = None, y_valid: Any = None, sample_weight: Any = None
    ) -> FeatureDropRefit:
        """Choose the features to drop and refit the model.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Training rows: the leaf values are refit on them.
        y : array-like of shape (n_rows,)
            Training labels (0/1, class indices or regression targets).
        X_valid : array-like or pandas.DataFrame of shape (n_valid, n_features)
            Validation rows (required): the cost the budget bounds and the scores that choose.
        y_valid : array-like of shape (n_valid,)
            Validation labels (required).
        sample_weight : array-like of shape (n_rows,), optional
            Weights of the training rows: the model's training weights (``lgb.Dataset(weight=...)``),
            used in the refit as LightGBM used them (weighted gradients, hessians and initial
            score). Default 1 per row. A model trained with weights and refit without them is
            not the model.

        Returns
        -------
        self : FeatureDropRefit
        """
        return fit_in_one_step(self, lambda work: work._fit(X, y, X_valid, y_valid, sample_weight))

    # ------------------------------------------------------------------ fit

    def _setup(self, X: Any, y: Any, X_valid: Any, y_valid: Any, sample_weight: Any = None) -> None:

        if self.model is None:
            raise ValueError("FeatureDropRefit needs the model: FeatureDropRefit(model, budget=..., costs=...).")
        if y is None or X_valid is None or y_valid is None:
            raise ValueError(
                "FeatureDropRefit.fit needs training rows and labels (X, y: the refit) and held-out "
                "X_valid, y_valid (the choices); got None for one of them."
            )
        ens = TreeEnsemble.from_booster(check_booster(self.model, owner="FeatureDropRefit"))
        self._spec = RefitSpec(ens)
        self._ens = ens
        self._X_all = prepare_rows(ens, X, name="X")
        self._y_all = labels_iv(ens, y, n_rows=self._X_all.shape[1], name="y", x_name="X")
        self._w_all = _weights_iv(sample_weight, self._y_all.size)
        self._Xt, self._yt, self._wt = self._X_all, self._y_all, self._w_all
        if self._y_all.size > SEARCH_ROWS:  # the search refits on a sample, the returned model on all rows
            rows = np.sort(np.random.default_rng(0).choice(self._y_all.size, SEARCH_ROWS, replace=False))
            self._Xt, self._yt = np.ascontiguousarray(self._X_all[:, rows]), self._y_all[rows]
            self._wt = None if self._w_all is None else self._w_all[rows]
        self._Xv = prepare_rows(ens, X_valid, name="X_valid")
        self._yv = labels_iv(ens, y_valid, n_rows=self._Xv.shape[1], name="y_valid", x_name="X_valid")
        self.costs_: FeatureCosts = as_feature_costs(
            self.costs, n_features=ens.n_features, feature_names=ens.feature_names or None,
            owner="FeatureDropRefit",
        )
        self._split = np.broadcast_to(np.asarray(self.costs_.split, dtype=np.float64), (ens.n_features,)).copy()
        self._bias = initial_score(self._spec, self._y_all, self._w_all)
        self.scoring_, self._score_fn = resolve_scoring(self.scoring, ens)
        self.n_features_in_ = ens.n_features
        self._n_refits = 0

    def _evaluate(
        self, dropped: tuple[int, ...], forced: np.ndarray, value: np.ndarray, leaves_v: np.ndarray,
        raw: np.ndarray | None = None, *, score: bool,
    ) -> _State:
        """Return the validation cost, loss (and score) of a forcing whose validation leaves are ``leaves_v``."""
        ens = self._ens
        bits, pcost = path_tables(ens, forced, self._split)
        used, path_cost = row_usage(leaves_v, bits, pcost, ens.n_features)
        cost = self.costs_.row_cost(used) + path_cost + self.costs_.tree * ens.n_trees
        raw = _raw(ens, value, leaves_v) if raw is None else raw
        loss = mean_loss(ens, self._yv, _flat(raw))
        st = _State(dropped, forced, value, float(cost.mean()), loss, np.asarray(used.any(axis=0)), leaves_v, raw)
        if score:
            st.score = self._score_fn(_flat(raw), self._Xv.T, self._yv)
        return st

    def _proxy(self, cur: _State, features: Any) -> _State:
        """Drop ``features`` from ``cur`` without refitting."""
        dropped = (*cur.dropped, *(int(f) for f in features))
        forced = drop_forcing(self._ens, dropped)
        leaves_v, raw = route(
            self._ens, self._Xv, forced, base=cur.leaves_v, base_forced=cur.forced, value=cur.value, raw=cur.raw_v
        )
        return self._evaluate(dropped, forced, cur.value, leaves_v, raw, score=False)

    def _refit(self, cur: _State, prop: _State) -> _State:
        """Refit the leaves of the proposal ``prop`` (``cur`` with features dropped or re-added)."""
        ens = self._ens
        assert cur.leaves_t is not None
        leaves_t, _ = route(ens, self._Xt, prop.forced, base=cur.leaves_t, base_forced=cur.forced)
        changed = np.flatnonzero((leaves_t != cur.leaves_t).any(axis=1))
        start = (int(changed[0]) if changed.size else ens.n_trees) if cur.refit else 0
        return self._refit_from(prop, leaves_t, start=start, value=cur.value)

    def _refit_from(self, prop: _State, leaves_t: np.ndarray, *, start: int, value: np.ndarray) -> _State:
        """Refit ``prop`` on its training leaves, trees from ``start`` on (those before keep ``value``)."""
        ens = self._ens
        value, count, hess = refit_values(
            ens, self._spec, leaves_t, self._yt, self._bias, value=value, start=start, weight=self._wt
        )
        self._n_refits += 1
        st = self._evaluate(prop.dropped, prop.forced, value, prop.leaves_v, score=True)
        st.leaves_t, st.count, st.hess, st.refit = leaves_t, count, hess, True
        return st

    def _refit_all(self, chosen: _State, step: int) -> _State:
        """Refit the chosen model's leaves on all training rows (the search refit them on a sample)."""
        ens = self._ens
        leaves, _ = route(ens, self._X_all, chosen.forced)
        value, count, hess = refit_values(ens, self._spec, leaves, self._y_all, self._bias, weight=self._w_all)
        self._n_refits += 1
        st = self._evaluate(chosen.dropped, chosen.forced, value, chosen.leaves_v, score=True)
        st.count, st.hess, st.refit = count, hess, True
        self.path_.append(
            {"dropped": self._names(st.dropped), "cost": st.cost, "loss": st.loss, "score": st.score,
             "step": step, "all_rows": True}
        )
        return st

    def _check_feasible(self, budget: float) -> None:
        """Refuse at once a budget below the cheapest model that uses a feature (or below 0)."""
        ens = self._ens
        floor = self.costs_.tree * ens.n_trees
        if not fits_budget(floor, budget):
            raise ValueError(
                f"FeatureDropRefit: budget={budget:.6g} is below the cost of evaluating the model's "
                f"{ens.n_trees} trees ({floor:.6g} per row, the tree cost): no model fits it."
            )
        used = np.unique(ens.feature[~ens.is_leaf])
        # a one-feature model costs at most its feature's unit plus every split on a path on it
        depth = int(ens.depth.max(initial=0))
        unit_cost = self.costs_.unit_cost[self.costs_.unit[used]]
        bound = unit_cost + self._split[used] * depth * ens.n_trees + floor
        if used.size and fits_budget(float(bound.min()), budget):
            return
        singles = []
        for f in used:
            forced = drop_forcing(ens, np.setdiff1d(used, [f]))
            leaves_v, _ = route(ens, self._Xv, forced)
            singles.append(self._evaluate((), forced, np.asarray(ens.value), leaves_v, score=False).cost)
        cheapest = min(singles, default=np.inf)
        if not fits_budget(cheapest, budget):
            raise ValueError(
                f"FeatureDropRefit: budget={budget:.6g} is below the cheapest model that keeps one "
                f"feature ({cheapest:.6g} per validation row): only the constant model fits it. "
                "Raise the budget."
            )

    def _step(self, cur: _State, step: int) -> tuple[_State, list[_State]]:
        """One elimination step: proxies for every used feature, refit the best ``n_refit``."""
        proposals: list[tuple[float, int, _State]] = []
        for f in np.flatnonzero(cur.used):
            st = self._proxy(cur, [f])
            saved = cur.cost - st.cost
            if saved > 1e-12 * max(1.0, cur.cost):
                proposals.append(((st.loss - cur.loss) / saved, len(proposals), st))
        if not proposals:
            raise RuntimeError("no feature left whose removal lowers the cost")  # pragma: no cover
        proposals.sort(key=lambda p: p[:2])
        props = [st for _, _, st in proposals[: int(self.n_refit)]]
        free = [st.dropped[-1] for r, _, st in proposals if r <= 0]
        if len(free) >= 2:  # every drop that costs no validation loss, at once: one step instead of many
            props.append(self._proxy(cur, free))
        refit = [self._refit(cur, st) for st in props]
        for st in refit:
            self.path_.append(
                {"dropped": self._names(st.dropped), "cost": st.cost, "loss": st.loss, "score": st.score, "step": step}
            )
        best = min(refit, key=lambda s: (s.loss - cur.loss) / max(cur.cost - s.cost, 1e-300))
        return best, refit

    def _importance_seed(self, full: _State, budget: float) -> _State | None:
        """Keep the most important features (total split gain) while they fit, refit: a second start.

        Backward elimination can walk into a corner: on thyroid it dropped TSH, the most useful
        test, because no single other drop met the budget. The prefix of the features by the
        model's gain that fits the budget is the no-retraining version of the top-k baseline.
        """
        ens = self._ens
        internal = ~ens.is_leaf
        gain = np.bincount(ens.feature[internal], weights=np.nan_to_num(ens.split_gain[internal]),
                           minlength=ens.n_features)
        order = [int(f) for f in np.argsort(-gain, kind="stable") if gain[f] > 0 or f in ens.feature[internal]]
        cur = full
        for k in range(len(order) - 1, 0, -1):
            prop = self._proxy(cur, [order[k]])
            if fits_budget(prop.cost, budget):
                leaves_t, _ = route(ens, self._Xt, prop.forced)
                st = self._refit_from(prop, leaves_t, start=0, value=np.asarray(ens.value))
                self.path_.append(
                    {"dropped": self._names(st.dropped), "cost": st.cost, "loss": st.loss, "score": st.score,
                     "step": 0, "seed": "importance"}
                )
                return st
            cur = prop
        return None

    def _add_back(self, chosen: _State, budget: float, step: int) -> _State:
        """Re-add dropped features while one fits the budget and raises the validation score.

        Every dropped feature that fits is scored by a refit-free proxy: the validation loss of
        the current model with the feature's splits restored, the leaves it reopens holding the
        original model's values. The ``ADD_BACK_REFITS`` best are refit.
        """
        ens = self._ens
        while True:
            assert chosen.count is not None
            mixed = np.where(chosen.count > 0, chosen.value, ens.value)
            props: list[tuple[float, int, int, _State]] = []
            for g in chosen.dropped:
                dropped = tuple(f for f in chosen.dropped if f != g)
                forced = drop_forcing(ens, dropped)
                leaves_v, _ = route(ens, self._Xv, forced, base=chosen.leaves_v, base_forced=chosen.forced)
                prop = self._evaluate(dropped, forced, mixed, leaves_v, score=False)
                if fits_budget(prop.cost, budget):
                    props.append((prop.loss, len(props), g, prop))
            best = chosen
            for _, _, g, prop in sorted(props, key=lambda p: p[:2])[:ADD_BACK_REFITS]:
                st = self._refit(chosen, prop)
                self.path_.append(
                    {"dropped": self._names(st.dropped), "cost": st.cost, "loss": st.loss, "score": st.score,
                     "step": step, "add_back": self._names((g,))[0]}
                )
                if (st.score, -st.loss) > (best.score, -best.loss):
                    best = st
            if best is chosen:
                return chosen
            chosen = best

    def _names(self, dropped: tuple[int, ...]) -> tuple[str, ...]:
        names = self._ens.feature_names
        return tuple(names[f] if names else f"Column_{f}" for f in dropped)

    def _fit(self, X: Any, y: Any, X_valid: Any, y_valid: Any, sample_weight: Any = None) -> None:
        t0 = time.perf_counter()
        self._setup(X, y, X_valid, y_valid, sample_weight)
        ens, budget = self._ens, float(self.budget)  # type: ignore[arg-type]
        none = drop_forcing(ens, ())
        full = self._evaluate((), none, np.asarray(ens.value), route(ens, self._Xv, none)[0], score=True)
        full.leaves_t = route(ens, self._Xt, none)[0]
        self.cost_full_, self.score_full_ = full.cost, full.score
        self.score_constant_ = self._score_fn(
            constant_raw(ens, self._y_all, self._Xv.shape[1]), self._Xv.T, self._yv
        )
        self.path_: list[dict[str, Any]] = []
        if fits_budget(full.cost, budget):
            chosen, step = full, 0
        else:
            self._check_feasible(budget)
            cur, step, best = full, 0, None
            # the path follows the best ratio until its model fits; every refit model within the
            # budget on the way is a candidate (a proposal that fits early may be a bad one)
            while not fits_budget(cur.cost, budget) and cur.used.any():
                step += 1
                cur, refit = self._step(cur, step)
                for s in refit:
                    if fits_budget(s.cost, budget) and s.used.any():
                        if best is None or (s.score, -s.cost) > (best.score, -best.cost):
                            best = s
            seed = self._importance_seed(full, budget)
            if seed is not None and (best is None or (seed.score, -seed.cost) > (best.score, -best.cost)):
                best = seed
            if best is None:
                raise ValueError(
                    f"FeatureDropRefit: budget={budget:.6g}: the elimination reached the constant "
                    "model without a model that uses a feature within the budget. Raise the budget."
                )
            chosen = self._add_back(best, budget, step)
            if self._Xt is not self._X_all:
                chosen = self._refit_all(chosen, step)
        self._finish(chosen, budget, step, time.perf_counter() - t0)

    def _finish(self, chosen: _State, budget: float, step: int, t_search: float) -> None:
        import lightgbm as lgb

        t0 = time.perf_counter()
        ens = self._ens
        if chosen.dropped:
            self.ensemble_ = forced_ensemble(ens, chosen.forced, chosen.value, chosen.count, chosen.hess)
        else:
            self.ensemble_ = ens
        self.model_string_ = self.ensemble_.to_model_string()
        self.booster_ = lgb.Booster(model_str=self.model_string_)
        self.cost_ = chosen.cost  # the core's accounting of the forcing on the validation rows (cost_report's)
        self.score_ = chosen.score
        self.dropped_features_ = self._names(chosen.dropped)
        message = (
            f"dropped {len(chosen.dropped)} of {len(np.unique(ens.feature[~ens.is_leaf]))} used features "
            f"({', '.join(self.dropped_features_) or 'none'}); validation cost {self.cost_:.6g} within "
            f"budget {budget:.6g} (unpruned {self.cost_full_:.6g}); {self.scoring_} {self.score_:.4g} "
            f"(unpruned {self.score_full_:.4g})"
        )
        self.result_ = FeatureDropResult(
            status=Status.SUCCESS, message=message, budget=budget, cost=self.cost_, score=self.score_,
            dropped=self.dropped_features_, n_steps=step, n_refits=self._n_refits,
        )
        self.fit_time_ = t_search + time.perf_counter() - t0

    # ------------------------------------------------------------------ use

    def predict_raw(self, X: Any) -> np.ndarray:
        """Raw scores of the returned model (``booster_.predict(X, raw_score=True)``).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of float64, shape (n_rows,) or (n_rows, n_classes)
        """
        check_is_fitted(self)
        return self.ensemble_.predict_raw(X)

    def decision_function(self, X: Any) -> np.ndarray:
        """Raw scores of the returned model (same as :meth:`predict_raw`).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of float64, shape (n_rows,) or (n_rows, n_classes)
        """
        return self.predict_raw(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of the returned model (classifiers).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of float64, shape (n_rows, n_classes)
        """
        check_is_fitted(self)
        if self._is_regression():
            raise ValueError("predict_proba needs a classifier; this model is a regression.")
        p = np.asarray(self.booster_.predict(self.ensemble_.check_X(X)), dtype=np.float64)
        return np.stack([1 - p, p], axis=1) if p.ndim == 1 else p

    def predict(self, X: Any) -> np.ndarray:
        """Class labels (classifiers) or values (regression) of the returned model.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of shape (n_rows,)
        """
        check_is_fitted(self)
        raw = self.predict_raw(X)
        if self._is_regression():
            return raw
        return np.argmax(raw, axis=1) if raw.ndim == 2 else (raw > 0).astype(np.int64)

    def _is_regression(self) -> bool:
        return RefitSpec(self.ensemble_).code == 1

    def cost_report(self, X: Any, costs: Any = None) -> CostReport:
        """Return the core's cost accounting of the returned model on the rows ``X``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to account.
        costs : FeatureCosts, list, dict, pandas.Series or CSV path, optional
            Default: the costs of the fit.

        Returns
        -------
        CostReport
        """
        check_is_fitted(self)
        return cost_report(self.ensemble_, X, self.costs_ if costs is None else costs)

    def save_model(self, path: str | os.PathLike[str]) -> None:
        """Write the returned model as LightGBM model text.

        Parameters
        ----------
        path : str or os.PathLike
            File to write.
        """
        check_is_fitted(self)
        self.ensemble_.save_model(path)
