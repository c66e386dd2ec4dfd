"""FeatureDropRefit: make a boosted model cheaper by dropping features and refitting its leaves.

The search's work does not grow with features x steps. Every used feature is ranked once: dropped
alone from the unpruned model (its splits forced, see ``_drop_refit``), without refitting, on a
random sample of the training rows (as many as the fit-time plan allows, ``_rank.rank_rows``), by
the rise of the loss per unit of mean cost saved. Two greedy fills (a knapsack greedy) keep
features, from none, while the model still fits the budget: in the ranking's order (most loss
avoided per unit of cost first) and in the order of the model's gain importance; a feature that
does not fit is skipped. Each fill costs one evaluation per feature and one refit. The hand recipe
is a third candidate: the longest prefix of the importance order whose masked model (the other
features missing, NaN) fits, found by bisection, refit as ``Booster.refit(decay_rate=0)`` does. The
candidate with the best validation ``scoring`` is returned; the recipe wins ties. Training rows
(``X``, ``y``) are only used to refit; choices are made on the validation rows (``X_valid``,
``y_valid``). With more than ``SEARCH_ROWS`` training rows the candidates are refit on a fixed
random sample of that many, and the returned model is refit on all of them (its validation score is
recomputed; it can differ a little from the sample refit's that chose it).
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
    copy_rows,
    drop_forcing,
    forced_ensemble,
    initial_score,
    leaf_sum,
    merge_columns,
    nan_forcing,
    prepare_rows,
    refit_values,
    route,
)
from ._error_terms import mean_loss, row_loss
from ._rank import drop_alone, rank_rows
from ._scoring import constant_raw, resolve_scoring
from ._setup import labels_iv
from ._usage import feature_counts, path_tables, usage_cost, usage_cost_delta

__all__ = ["PROXY_ROWS", "RECIPE_MARGIN", "SEARCH_ROWS", "FeatureDropRefit", "FeatureDropResult"]

#: Training rows the search refits on (a fixed random sample when there are more); the returned
#: model is refit on all of them.
SEARCH_ROWS = 5000
#: Standard errors of the per-row validation loss difference by which the search's model must beat
#: the hand recipe's to be returned instead.
RECIPE_MARGIN = 2.0
#: Validation rows the refit-free proxies (ranking, add-back) route (a fixed random sample when there are more).
PROXY_ROWS = 1000
#: A fill (:meth:`FeatureDropRefit._walk`) and the ranking's cost keep per-row feature counts from this many
#: rows x trees (below, re-evaluating every tree costs less than keeping the counts) up to ``WALK_CELLS``
#: rows x features.
WALK_PAIRS = 1_000_000
WALK_CELLS = 20_000_000


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
        Feature sets whose cost and validation loss the search evaluated without refitting
        (about three per used feature: the ranking and the two fills, plus a bisection).
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
    recipe: bool = False  # the hand recipe: dropped features masked (NaN), refit as Booster.refit
    seed: str = ""  # the candidate this model is: "fill", "importance", "recipe"
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
    on validation rows by greedy fills on a ranking made once, against the hand recipe (mask
    the features the budget cannot buy, refit); see the module docstring and
    ``docs/budgetprune.md``, section on boosted models.

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

    Attributes
    ----------
    result_ : FeatureDropResult
    ensemble_ : TreeEnsemble
        The returned model (forced splits removed, leaves refit).
    model_string_ : str
        It as LightGBM model text (written on first use).
    booster_ : lightgbm.Booster
        It loaded in LightGBM (on first use).
    candidate_ : str
        Which candidate was returned: ``"fill"``, ``"importance"``, ``"recipe"`` (the hand
        recipe's masked model) or ``"unpruned"`` (the model already fits the budget).
    dropped_features_ : tuple of str
        The dropped features, in order.
    cost_, score_ : float
        Mean validation cost (equal to ``cost_report`` of ``ensemble_``) and validation score.
    cost_full_, score_full_, score_constant_ : float
        The unpruned model's cost and score, the best constant model's score.
    path_ : list of dict
        Every refit model of the search: ``dropped``, ``cost``, ``loss`` (validation loss),
        ``score``, ``step``, ``seed`` (the candidate: ``"fill"``, ``"importance"``, ``"recipe"``)
        and ``all_rows=True`` on the returned model's refit on all training rows (when the
        search refit on a sample).
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
    }

    def __init__(
        self, model: Any = None, *, budget: float | None = None, costs: Any = None, scoring: Any = None
    ) -> None:
        self.model = model
        self.budget = budget
        self.costs = costs
        self.scoring = scoring

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
            self._search_rows = rows
            self._Xt, self._yt = np.ascontiguousarray(self._X_all[:, rows]), self._y_all[rows]
            self._wt = None if self._w_all is None else self._w_all[rows]
        self._Xv = prepare_rows(ens, X_valid, name="X_valid")
        self._yv = labels_iv(ens, y_valid, n_rows=self._Xv.shape[1], name="y_valid", x_name="X_valid")
        # the row sets the search evaluates on: all validation rows (the budget, the choice), a sample
        # of them (the fills' costs) and a sample of the training rows (the ranking's loss and cost)
        self._proxy_rows: np.ndarray | None = None
        self._rows = {"valid": (self._Xv, self._yv), "proxy": (self._Xv, self._yv), "rank": (self._Xt, self._yt)}
        n_rank = rank_rows(ens, self._y_all.size, self._yt.size, PROXY_ROWS)
        if self._yt.size > PROXY_ROWS:  # a random sample in random order: the rows may come sorted (by label, time)
            rank = np.random.default_rng(2).choice(self._yt.size, n_rank, replace=False)
            self._rows["rank"] = (np.ascontiguousarray(self._Xt[:, rank]), self._yt[rank])
        if self._yv.size > PROXY_ROWS:
            self._proxy_rows = np.sort(np.random.default_rng(1).choice(self._yv.size, PROXY_ROWS, replace=False))
            self._rows["proxy"] = (np.ascontiguousarray(self._Xv[:, self._proxy_rows]), self._yv[self._proxy_rows])
        self.costs_: FeatureCosts = as_feature_costs(
            self.costs, n_features=ens.n_features, feature_names=ens.feature_names or None,
            owner="FeatureDropRefit",
        )
        self._split = np.broadcast_to(np.asarray(self.costs_.split, dtype=np.float64), (ens.n_features,)).copy()
        self._bias = initial_score(self._spec, self._y_all, self._w_all)
        self._bias_recipe = np.zeros(self._spec.n_class)  # LightGBM's refit starts every row from 0
        self.scoring_, self._score_fn = resolve_scoring(self.scoring, ens)
        self.n_features_in_ = ens.n_features
        self._n_refits = 0
        self._n_evals = 0

    def _evaluate(
        self, dropped: tuple[int, ...], forced: np.ndarray, value: np.ndarray, leaves_v: np.ndarray,
        raw: np.ndarray | None = None, *, score: bool, rows: str = "valid",
    ) -> _State:
        """Return the validation cost, loss (and score) of a forcing whose validation leaves are ``leaves_v``.

        ``rows``: the rows ``leaves_v`` are of, ``"valid"`` (all validation rows), ``"proxy"`` (a
        sample of them) or ``"rank"`` (a sample of the training rows).
        """
        ens = self._ens
        bits, pcost = path_tables(ens, forced, self._split)
        row, used = usage_cost(leaves_v, bits, pcost, self.costs_.unit, self.costs_.unit_cost, ens.n_features)
        cost = float(row.mean()) + self.costs_.tree * ens.n_trees
        raw = _raw(ens, value, leaves_v) if raw is None else raw
        loss = mean_loss(ens, self._rows[rows][1], _flat(raw))
        st = _State(dropped, forced, value, cost, loss, used, leaves_v, raw)
        if score:
            st.score = self._score_fn(_flat(raw), self._Xv.T, self._yv)
        return st

    def _on_rows(self, st: _State, rows: str) -> _State:
        """Return the model ``st`` (a state on all validation rows) on the row set ``rows``."""
        if rows == "rank":
            leaves = route(self._ens, self._rows["rank"][0], st.forced)[0]
        elif rows == "proxy" and self._proxy_rows is not None:
            leaves = np.ascontiguousarray(st.leaves_v[:, self._proxy_rows])
        else:
            return st
        return self._evaluate(st.dropped, st.forced, st.value, leaves, score=False, rows=rows)

    def _at(self, base: _State, dropped: tuple[int, ...], *, masked: bool = False, rows: str = "valid") -> _State:
        """Evaluate the model with ``dropped`` forced (or masked) at ``base``'s leaf values, without refitting.

        ``base`` is a model on the row set ``rows`` (see :meth:`_evaluate`).
        """
        forced = (nan_forcing if masked else drop_forcing)(self._ens, dropped)
        leaves_v, raw = route(
            self._ens, self._rows[rows][0], forced, base=base.leaves_v, base_forced=base.forced,
            value=base.value, raw=base.raw_v,
        )
        self._n_evals += 1
        return self._evaluate(dropped, forced, base.value, leaves_v, raw, score=False, rows=rows)

    def _refit(self, cur: _State, prop: _State) -> _State:
        """Refit the leaves of the proposal ``prop`` (``cur`` with features dropped or re-added)."""
        ens = self._ens
        assert cur.leaves_t is not None
        leaves_t, _ = route(ens, self._Xt, prop.forced, base=cur.leaves_t, base_forced=cur.forced)
        changed = np.flatnonzero((leaves_t != cur.leaves_t).any(axis=1))
        start = (int(changed[0]) if changed.size else ens.n_trees) if cur.refit and not cur.recipe else 0
        return self._refit_from(prop, leaves_t, start=start, value=cur.value if start else np.asarray(ens.value))

    def _refit_from(
        self, prop: _State, leaves_t: np.ndarray, *, start: int, value: np.ndarray, recipe: bool = False
    ) -> _State:
        """Refit ``prop`` on its training leaves, trees from ``start`` on (those before keep ``value``).

        ``recipe``: as ``Booster.refit(decay_rate=0)`` on the masked rows (the hand recipe).
        """
        ens = self._ens
        value, count, hess = refit_values(
            ens, self._spec, leaves_t, self._yt, self._bias_recipe if recipe else self._bias, value=value,
            start=start, weight=self._wt, lightgbm=recipe,
        )
        self._n_refits += 1
        st = self._evaluate(prop.dropped, prop.forced, value, prop.leaves_v, score=True)
        st.leaves_t, st.count, st.hess, st.refit, st.recipe = leaves_t, count, hess, True, recipe
        return st

    def _refit_all(self, chosen: _State, step: int) -> _State:
        """Refit the chosen model's leaves on all training rows (the search refit them on a sample)."""
        ens = self._ens
        if chosen.leaves_t is None:
            leaves, _ = route(ens, self._X_all, chosen.forced)
        else:  # the sample's leaves are the chosen model's: route the other rows only
            rest = np.setdiff1d(np.arange(self._y_all.size), self._search_rows)
            rest_leaves, _ = route(ens, np.ascontiguousarray(self._X_all[:, rest]), chosen.forced)
            leaves = merge_columns(chosen.leaves_t, self._search_rows, rest_leaves, rest)
        bias = self._bias_recipe if chosen.recipe else self._bias
        value, count, hess = refit_values(
            ens, self._spec, leaves, self._y_all, bias, weight=self._w_all, lightgbm=chosen.recipe
        )
        self._n_refits += 1
        st = self._evaluate(chosen.dropped, chosen.forced, value, chosen.leaves_v, score=True)
        st.count, st.hess, st.refit, st.recipe, st.seed = count, hess, True, chosen.recipe, chosen.seed
        self._log(st, step, all_rows=True)
        return st

    def _log(self, st: _State, step: int, **extra: Any) -> None:
        """Record a refit model in ``path_``."""
        self.path_.append(
            {"dropped": self._names(st.dropped), "cost": st.cost, "loss": st.loss, "score": st.score,
             "step": step, "seed": st.seed, **extra}
        )

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

    def _rank(self, full: _State) -> list[int]:
        """Rank the used features once: loss rise per unit of cost saved when dropped alone (no refit).

        On training rows, so that the validation rows, which choose among the candidates, have
        not chosen the features: the loss rise on the ranking's rows (:func:`rank_rows` of them,
        a random sample of the search's training rows), the cost saved on ``PROXY_ROWS`` of them.
        Features whose drop saves nothing come last, by loss rise.
        """
        full = self._on_rows(full, "rank")
        features = np.flatnonzero(full.used)
        ens = self._ens
        pairs, cells = min(PROXY_ROWS, full.leaves_v.shape[1]) * ens.n_trees, PROXY_ROWS * ens.n_features
        loss, cost, cost_full = drop_alone(ens, *self._rows["rank"], full.leaves_v, full.raw_v, features, self.costs_,
                                           self._split, PROXY_ROWS, counted=WALK_PAIRS <= pairs and cells <= WALK_CELLS)
        self._n_evals += features.size
        keys = []
        for f, rise, saved in zip(features, loss - full.loss, cost_full - cost, strict=True):
            keys.append((0, rise / saved, int(f)) if saved > 1e-12 * max(1.0, full.cost) else (1, rise, int(f)))
        return [f for *_, f in sorted(keys)]

    def _fill(
        self, full: _State, order: list[int], budget: float, *, masked: bool = False, rows: str = "proxy"
    ) -> _State | None:
        """Keep features greedily: from none, add each feature of ``order`` reversed while the model still fits.

        The knapsack greedy (a feature that does not fit is skipped): one cost per feature on the
        row set ``rows``; on the proxy rows, then the exact cost on all validation rows (the last
        kept features dropped again while it does not fit). ``masked``: the dropped features are
        masked (:func:`nan_forcing`, the hand recipe) instead of forced to the larger child.
        None when no feature can be kept.
        """
        cur = self._walk(self._at(self._on_rows(full, rows), tuple(order), masked=masked, rows=rows), order,
                         budget, masked=masked, rows=rows)
        kept = [f for f in order[::-1] if f not in cur.dropped]
        while kept:
            st = cur if rows == "valid" else self._at(full, tuple(f for f in order if f not in kept), masked=masked)
            if fits_budget(st.cost, budget) and st.used.any():
                return st
            kept.pop()
            cur = self._at(full, tuple(f for f in order if f not in kept), masked=masked)
        return None

    def _walk(self, cur: _State, order: list[int], budget: float, *, masked: bool, rows: str) -> _State:
        """From ``cur`` (every feature of ``order`` dropped), add back each one, last first, if the model still fits.

        Each proposal re-routes its changed pairs in a buffer (no copy of every leaf); when it
        changes at most half of the trees, its cost reads only their pairs, with the features every
        row's paths evaluate kept as counts (:func:`usage_cost_delta`). The costs, and so the
        choices, are :meth:`_at`'s; with split costs, fewer than ``WALK_PAIRS``
        (rows x trees) or more than ``WALK_CELLS`` (rows x features), each proposal is :meth:`_at`.
        """
        ens = self._ens
        Xp = self._rows[rows][0]
        pairs, cells = Xp.shape[1] * ens.n_trees, Xp.shape[1] * ens.n_features
        if self._split.any() or pairs < WALK_PAIRS or cells > WALK_CELLS:
            for f in order[::-1]:
                prop = self._at(cur, tuple(g for g in cur.dropped if g != f), masked=masked, rows=rows)
                if fits_budget(prop.cost, budget):
                    cur = prop
            return cur
        make = nan_forcing if masked else drop_forcing
        leaves, forced, dropped = cur.leaves_v.copy(), cur.forced, cur.dropped
        scratch = leaves.copy()  # equal to ``leaves`` between proposals
        bits = path_tables(ens, forced, self._split)[0]
        counts: np.ndarray | None = None  # feature counts of ``leaves``, made when a proposal needs them
        node_tree = np.asarray(ens.node_tree)
        for f in order[::-1]:
            prop_dropped = tuple(g for g in dropped if g != f)
            prop_forced = make(ens, prop_dropped)
            trees = np.unique(node_tree[np.flatnonzero(prop_forced != forced)])
            route(ens, Xp, prop_forced, base=leaves, base_forced=forced, out=scratch)
            bits_new, path_cost = path_tables(ens, prop_forced, self._split)
            delta = None
            if 2 * trees.size <= ens.n_trees:  # a few trees: their pairs' changes; else all pairs, as :meth:`_at`
                counts = feature_counts(leaves, bits, ens.n_features) if counts is None else counts
                row, _, delta = usage_cost_delta(leaves, scratch, trees, bits, bits_new, counts, self.costs_.unit,
                                                 self.costs_.unit_cost)
            else:
                row, _ = usage_cost(scratch, bits_new, path_cost, self.costs_.unit, self.costs_.unit_cost,
                                    ens.n_features)
            self._n_evals += 1
            if fits_budget(float(row.mean()) + self.costs_.tree * ens.n_trees, budget):
                if counts is not None:
                    counts = counts + delta if delta is not None else None
                leaves, scratch = scratch, leaves  # the proposal's leaves become the model's, no copy
                forced, dropped, bits = prop_forced, prop_dropped, bits_new
            copy_rows(scratch, leaves, trees)  # equal again
        if dropped == cur.dropped:
            return cur
        return self._evaluate(dropped, forced, cur.value, leaves, score=False, rows=rows)

    def _gain_order(self) -> list[int]:
        """Return the used features from the least to the most important (total split gain)."""
        ens = self._ens
        internal = ~ens.is_leaf
        gain = np.bincount(ens.feature[internal], weights=np.nan_to_num(ens.split_gain[internal]),
                           minlength=ens.n_features)
        used = np.unique(ens.feature[internal])
        return [int(f) for f in np.argsort(-gain, kind="stable")[::-1] if f in used]

    def _candidates(self, full: _State, budget: float) -> tuple[list[_State], _State | None]:
        """Refit the search's candidates within the budget and the hand recipe's model (refit as LightGBM does).

        Fill: the features ranked once (:meth:`_rank`), kept greedily while they fit
        (:meth:`_fill`). Recipe: the fill in the order of the model's gain importance on all
        validation rows, the dropped features masked (missing values, :func:`nan_forcing`).
        Importance: the recipe's features with the dropped ones forced to the larger child (when
        that does not fit, the importance-order fill with forcing).
        """
        ens = self._ens
        cands = []
        order = self._rank(full)
        gain_order = self._gain_order()
        masked = self._fill(full, gain_order, budget, masked=True, rows="valid")
        forced = [(self._fill(full, order, budget), "fill")]
        st = None if masked is None else self._at(full, masked.dropped)  # the recipe's features, forced
        if st is None or not fits_budget(st.cost, budget):  # they do not fit forced: fill by importance
            st = self._fill(full, gain_order, budget)
        forced.append((st, "importance"))
        for st, name in forced:
            if st is not None and fits_budget(st.cost, budget) and st.used.any():
                cands.append(self._refit(full, st))
                cands[-1].seed = name
                self._log(cands[-1], 1)
        recipe = None
        if masked is not None:
            assert full.leaves_t is not None
            leaves_t, _ = route(ens, self._Xt, masked.forced, base=full.leaves_t, base_forced=full.forced)
            recipe = self._refit_from(masked, leaves_t, start=0, value=np.asarray(ens.value), recipe=True)
            recipe.seed = "recipe"
            self._log(recipe, 1)
        return cands, recipe

    def _beats(self, st: _State, recipe: _State) -> bool:
        """Whether the search's model ``st`` clearly beats the hand recipe's on the validation rows.

        It must score higher and lower the validation loss by more than ``RECIPE_MARGIN``
        standard errors of the per-row loss difference: the search chose among its candidates on
        these rows, so a small lead is not evidence that it generalizes better than the recipe.
        """
        if (st.score, -st.loss) <= (recipe.score, -recipe.loss):
            return False
        ens = self._ens
        d = row_loss(ens, self._yv, _flat(recipe.raw_v)) - row_loss(ens, self._yv, _flat(st.raw_v))
        se = float(d.std()) / np.sqrt(d.size)
        return float(d.mean()) > RECIPE_MARGIN * se

    def _names(self, dropped: tuple[int, ...]) -> tuple[str, ...]:
        names = self._ens.feature_names
        return tuple(names[f] if names else f"Column_{f}" for f in dropped)

    def _fit(self, X: Any, y: Any, X_valid: Any, y_valid: Any, sample_weight: Any = None) -> None:
        t0 = time.perf_counter()
        self._setup(X, y, X_valid, y_valid, sample_weight)
        ens, budget = self._ens, float(self.budget)  # type: ignore[arg-type]
        none = drop_forcing(ens, ())
        full = self._evaluate((), none, np.asarray(ens.value), route(ens, self._Xv, none)[0], score=True)
        self.cost_full_, self.score_full_ = full.cost, full.score
        self.score_constant_ = self._score_fn(
            constant_raw(ens, self._y_all, self._Xv.shape[1]), self._Xv.T, self._yv
        )
        self.path_: list[dict[str, Any]] = []
        self.candidate_ = "unpruned"
        if fits_budget(full.cost, budget):
            self._finish(full, budget, time.perf_counter() - t0)
            return
        self._check_feasible(budget)
        full.leaves_t = route(ens, self._Xt, none)[0]
        cands, recipe = self._candidates(full, budget)
        if not cands and recipe is None:
            raise ValueError(
                f"FeatureDropRefit: budget={budget:.6g}: no model that uses a feature fits the budget "
                "(every feature had to go). Raise the budget."
            )
        chosen = max(cands, key=lambda s: (s.score, -s.cost)) if cands else None
        if chosen is None or (recipe is not None and not self._beats(chosen, recipe)):
            assert recipe is not None
            chosen = recipe
        if self._Xt is not self._X_all:
            chosen = self._refit_all(chosen, 2)
        self.candidate_ = chosen.seed
        self._finish(chosen, budget, time.perf_counter() - t0)

    def _finish(self, chosen: _State, budget: float, t_search: float) -> None:
        t0 = time.perf_counter()
        ens = self._ens
        if chosen.dropped:
            self.ensemble_ = forced_ensemble(ens, chosen.forced, chosen.value, chosen.count, chosen.hess)
        else:
            self.ensemble_ = ens
        self._model_text_: str | None = None  # model_string_ and booster_ are made on first use
        self._booster_: Any = None
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
            dropped=self.dropped_features_, n_steps=self._n_evals, n_refits=self._n_refits,
        )
        self.fit_time_ = t_search + time.perf_counter() - t0

    # ------------------------------------------------------------------ use

    @property
    def model_string_(self) -> str:
        """The returned model as LightGBM model text (written on first use)."""
        check_is_fitted(self, "ensemble_")
        if self._model_text_ is None:
            self._model_text_ = self.ensemble_.to_model_string()
        return self._model_text_

    @property
    def booster_(self) -> Any:
        """The returned model loaded in LightGBM (``lightgbm.Booster``, loaded on first use)."""
        import lightgbm as lgb

        check_is_fitted(self, "ensemble_")
        if self._booster_ is None:
            self._booster_ = lgb.Booster(model_str=self.model_string_)
        return self._booster_

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
