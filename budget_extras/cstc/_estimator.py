"""CSTC: the Cost-Sensitive Tree of Classifiers (Xu, Kusner, Weinberger, Chen, ICML 2013).

A tree of linear classifiers on the outputs of boosted regression trees. Every input follows
one root-to-leaf path and pays only for the weak learners (and their features) with nonzero
weight on the nodes of that path. Training minimizes the relaxed objective of
:mod:`budget_extras._cstc_objective` node by node: closed-form Lemma 1 updates of the auxiliary
variables alternate with scipy's L-BFGS-B on ``(beta^k, b^k, theta^k)``; the tree is
initialized top-down, pruned on validation data and its leaves are fine-tuned with the
zero-weight dimensions clamped.
"""

from __future__ import annotations

import numbers
import os
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..core._costs import FeatureCosts
from ..core._fit_state import fit_in_one_step
from ..core._params import Interval, Options, check_params
from ..core._report import CostReport, features_used
from ..core._scoring import resolve_scoring
from ..core._status import MethodResult, Status, fits_budget
from ..core._validation import check_array_2d, check_finite_labels, column_names, pandas_categories
from ._features import (
    _CostModel,
    _costs_iv,
    _group_usage,
    _leaf_rows,
    _read_weak_learners,
    _tree_eval_costs,
    _tree_outputs,
    _WeakLearners,
)
from ._format import dump_model, parse_model, read_text
from ._objective import (
    _aux_update,
    _evaluate,
    _loss,
    _n_nodes,
    _Problem,
    _Structure,
)

__all__ = ["CSTC", "CSTCCostReport", "CSTCResult"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class CSTCResult(MethodResult):
    """Outcome of the CSTC optimization (scipy-style result object).

    Attributes
    ----------
    status : Status
        Without ``budget``: ``SUCCESS`` when the relative decrease of the objective fell below
        ``tol``, ``LIMIT`` when ``n_cycles`` was reached. With ``budget``, that of the search:
        ``SUCCESS`` (the best validation score within the budget, a tree that uses weak
        learners), ``INFEASIBLE`` (no ``lam`` tried is within the budget: the cheapest tree is
        returned), ``CONSTANT`` (only a constant tree, one that uses no weak learner, is within
        the budget) or ``TRIVIAL`` (the best validation score within the budget is a constant
        tree's, though non-constant trees are within it); all but ``SUCCESS`` also warn.
    success : bool
        ``status is Status.SUCCESS``.
    message : str
        Human-readable description of ``status``.
    fun : float
        Final value of the relaxed objective (before pruning and fine-tuning).
    nit : int
        Optimization cycles over all nodes (after the top-down initialization).
    history : tuple of float
        Relaxed objective after the initialization and after every cycle.
    n_pruned : int
        Nodes removed by validation pruning.
    lam : float or None
        The ``lam`` of the returned tree (``budget=`` mode: the one selected; else ``lam``).
    path : tuple of dict
        ``budget=`` mode: every ``lam`` tried, in increasing order, with its mean validation
        cost (``"cost"``), validation score (``"score"``) and whether it uses no weak learner
        (``"constant"``, 1.0 or 0.0). Empty otherwise.
    scoring : str or None
        ``budget=`` mode: the name of the validation score.
    """

    fun: float
    nit: int
    history: tuple[float, ...]
    n_pruned: int
    lam: float | None = None
    path: tuple[dict[str, float], ...] = ()
    scoring: str | None = None


@dataclass(frozen=True, eq=False)
class CSTCCostReport(CostReport):
    """The core's :class:`~budget_extras.CostReport` of a fitted CSTC tree.

    Every field is the core's (``used``: features on the row's paths through the weak
    learners with nonzero weight on the CSTC nodes it visits; ``acquired``: those plus the
    other members of the groups bought).
    """


def _check_X(
    X: Any,
    name: str,
    n_features: int | None = None,
    feature_names: Any = None,
    pandas_categorical: Any = None,
) -> tuple[FloatArray, list[str] | None]:
    names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
    arr = check_array_2d(
        X, name=name, n_features=n_features, feature_names=feature_names, pandas_categorical=pandas_categorical
    )
    if arr.shape[0] == 0:
        raise ValueError(f"The {name!r} argument of CSTC must have at least one row. Got shape {arr.shape}.")
    if arr.shape[1] == 0:
        raise ValueError(
            f"The {name!r} argument of CSTC has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    return arr, names


def _cstc_iv(est: CSTC) -> None:
    """Validate what the parameter table cannot: the entries of ``lams``."""
    if est.lams is not None:
        lams = np.asarray(est.lams, dtype=np.float64).reshape(-1) if _is_numeric_seq(est.lams) else None
        if lams is None or lams.size == 0 or not np.all(np.isfinite(lams)) or np.any(lams < 0):
            raise ValueError(
                f"The 'lams' parameter of CSTC must be a non-empty sequence of non-negative finite numbers "
                f"or None. Got {est.lams!r} instead."
            )


def _is_numeric_seq(v: Any) -> bool:
    try:
        np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return not isinstance(v, str | bytes)


class _CSTCClassifierView(ClassifierMixin, BaseEstimator):
    """A fitted binary CSTC seen as a scikit-learn classifier (for scorers)."""

    def __init__(self, model: Any = None) -> None:
        self.model = model

    @property
    def classes_(self) -> Any:
        return self.model.classes_

    def predict(self, X: Any) -> Any:
        return self.model.predict(X)

    def predict_proba(self, X: Any) -> FloatArray:
        return self.model.predict_proba(X)

    def decision_function(self, X: Any) -> FloatArray:
        return self.model.decision_function(X)


class _CSTCRegressorView(RegressorMixin, BaseEstimator):
    """A fitted regression CSTC seen as a scikit-learn regressor (for scorers)."""

    def __init__(self, model: Any = None) -> None:
        self.model = model

    def predict(self, X: Any) -> Any:
        return self.model.predict(X)


def _accuracy(view: Any, X: Any, y: Any) -> float:
    return float(np.mean(view.predict(X) == y))


def _neg_mse(view: Any, X: Any, y: Any) -> float:
    return -float(np.mean((view.predict(X) - np.asarray(y, dtype=np.float64)) ** 2))


def _resolve_scoring(scoring: Any, task: str) -> tuple[str, Any]:
    """``(name, score(cstc, X, y))`` of CSTC's ``scoring`` (higher is better)."""
    if task == "binary":
        default, view = ("accuracy", _accuracy), _CSTCClassifierView
    else:
        default, view = ("neg_mean_squared_error", _neg_mse), _CSTCRegressorView
    name, score = resolve_scoring(scoring, owner="CSTC", default=default, view=view)
    return name, lambda m, X, y: score(m, X, np.asarray(y).reshape(-1))


class CSTC(BaseEstimator):
    """Cost-Sensitive Tree of Classifiers on boosted-tree features.

    Parameters
    ----------
    booster : lightgbm.Booster, LGBMModel, TreeEnsemble or None, default=None
        A trained ensemble whose tree outputs form ``phi(x)``; by default a LightGBM regression
        ensemble (squared loss) of ``n_weak`` trees of depth ``weak_max_depth`` is trained on
        ``X`` in ``fit``. Not modified.
    costs : FeatureCosts, list, dict, pandas.Series, CSV path or None, default=None
        Feature acquisition costs (the core's one cost input; None: each feature costs 1). A
        ``FeatureCosts`` also brings its groups and its per-tree and per-split evaluation costs.
    depth : int, default=3
        Levels of the tree of classifiers (``2**depth - 1`` nodes before pruning).
    lam : float, default=0.01
        Weight of the expected test-time cost against the expected risk (``lambda``).
    rho : float, default=1e-3
        Weight of the l1 regularization of every node's weights (``rho``).
    task : {"regression", "binary"}, default="regression"
        Squared loss on standardized targets (the paper) or logistic loss on two classes.
    sharpness : float, default=5.0
        Routing sharpness ``a`` of the soft traversal ``sigmoid(a (f - theta))`` during
        training (in standardized target units for regression, logits for binary). The paper
        uses ``a = 1`` on raw targets; training moves towards the hard test-time routing as
        ``a`` grows.
    risk : {"leaves", "all"}, default="leaves"
        Where the expected risk is counted: at the leaves, where test-time predictions are
        made (internal nodes then learn to route), or at every node weighted by its traversal
        probability (every internal node is then also trained as a predictor; its weights
        are paid by every path below it, which on the paper's synthetic data makes ancestors
        buy the experts' features; see docs/cstc_design.md).
    n_weak, weak_max_depth, weak_learning_rate : int, int, float
        The LightGBM regression ensemble (squared loss) whose tree outputs form ``phi(x)``
        when ``fit`` receives no ``booster``: number of trees, their maximum depth (default 1:
        stumps, so that every weak learner costs one feature; a deeper tree that tests several
        features costs all of them, and CSTC then has no model between the full cost and a
        constant, docs/cstc_design.md), shrinkage.
    weak_params : dict or None
        Extra LightGBM parameters for that ensemble.
    n_cycles : int, default=5
        Cycles of node-by-node optimization after the top-down initialization.
    n_alternations : int, default=4
        Lemma 1 updates alternating with L-BFGS-B per visit of a node.
    max_iter : int, default=25
        L-BFGS-B iterations per node solve.
    tol : float, default=1e-4
        Stop the cycles when the relaxed objective decreases by less than ``tol`` (relative).
    eps : float, default=1e-3
        Floor of the auxiliary variables (a norm below it counts as unused); weights below
        ``eps`` in magnitude (standardized units) are set to zero after training.
    prune, fine_tune : bool, default=True
        Validation pruning (needs ``X_valid``) and fine-tuning of the leaves.
    random_state : int or None
        Seed of the LightGBM ensemble.
    budget : float or None, default=None
        Mean test-time cost per row to stay within. ``fit`` then needs ``X_valid, y_valid``,
        trains the weak learners once and fits one tree per ``lam`` of ``lams`` (increasing;
        the scan stops at the first constant tree), and keeps the tree with the best validation
        score among those whose mean validation cost (``cost_report(X_valid).total_cost``)
        fits the budget (:func:`budget_extras.fits_budget`; ties: the cheaper). A larger budget
        never gives a lower validation score. ``result_.status`` says when nothing fits or a
        constant tree is returned (and warns).
    scoring : None, str or callable, default=None
        Validation score of the ``budget`` search (higher is better): ``None`` is accuracy for
        ``task="binary"`` and minus the mean squared error for regression; a string is a
        scikit-learn scorer name (``"roc_auc"``, ``"neg_log_loss"``, ...); a callable is called
        as ``scoring(estimator, X, y)`` like a scikit-learn scorer (the estimator is a
        scikit-learn classifier/regressor view of the fitted CSTC).
    lams : array-like of float or None, default=None
        The ``lam`` values of the ``budget`` search; ``None``: 12 values from 1e-4 to 1
        (geometric).

    Attributes
    ----------
    booster_ : lightgbm.Booster
        The ensemble that defines ``phi``.
    coef_ : ndarray of float64, shape (n_nodes, n_trees)
        Weights of every node on the raw tree outputs (zero rows for inactive nodes).
    intercept_, threshold_ : ndarray of float64, shape (n_nodes,)
        Node ``k`` predicts ``phi(x) @ coef_[k] + intercept_[k]`` and routes to ``2k+2`` when
        that exceeds ``threshold_[k]``, else to ``2k+1``.
    active_, is_leaf_ : ndarray of bool, shape (n_nodes,)
        Nodes kept after pruning; those that predict.
    tree_features_ : ndarray of bool, shape (n_features, n_trees)
        Features of each weak learner.
    tree_costs_ : ndarray of float64, shape (n_trees,)
        Expected evaluation cost ``e_t`` of each weak learner.
    result_ : CSTCResult
        Optimization outcome.
    """

    #: Private attributes that are part of the fitted state (see ``core._fit_state``).
    _fitted_private = ("_wl", "_cm", "_leaf_eval", "_feature_names", "_pandas_categorical")
    #: The parameter table (``core._params``), checked before every fit.
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "booster": ["no_validation"],
        "costs": ["no_validation"],
        "depth": [Interval(numbers.Integral, 1, 8, closed="both")],
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
        "rho": [Interval(numbers.Real, 0, None, closed="left")],
        "task": [Options(("regression", "binary"))],
        "sharpness": [Interval(numbers.Real, 0, None, closed="neither")],
        "risk": [Options(("leaves", "all"))],
        "n_weak": [Interval(numbers.Integral, 1, None, closed="left")],
        "weak_max_depth": [Interval(numbers.Integral, 1, None, closed="left")],
        "weak_learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "weak_params": [dict, None],
        "n_cycles": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_alternations": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "eps": [Interval(numbers.Real, 0, None, closed="neither")],
        "prune": ["boolean"],
        "fine_tune": ["boolean"],
        "random_state": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "budget": [Interval(numbers.Real, 0, None, closed="left"), None],
        "scoring": ["no_validation"],
        "lams": ["array-like", None],
    }

    def __init__(
        self,
        booster: Any = None,
        *,
        costs: Any = None,
        depth: int = 3,
        lam: float = 0.01,
        rho: float = 1e-3,
        task: str = "regression",
        sharpness: float = 5.0,
        risk: str = "leaves",
        n_weak: int = 100,
        weak_max_depth: int = 1,
        weak_learning_rate: float = 0.1,
        weak_params: dict[str, Any] | None = None,
        n_cycles: int = 5,
        n_alternations: int = 4,
        max_iter: int = 25,
        tol: float = 1e-4,
        eps: float = 1e-3,
        prune: bool = True,
        fine_tune: bool = True,
        random_state: int | None = None,
        budget: float | None = None,
        scoring: Any = None,
        lams: Any = None,
    ) -> None:
        self.booster = booster
        self.costs = costs
        self.depth = depth
        self.lam = lam
        self.rho = rho
        self.task = task
        self.sharpness = sharpness
        self.risk = risk
        self.n_weak = n_weak
        self.weak_max_depth = weak_max_depth
        self.weak_learning_rate = weak_learning_rate
        self.weak_params = weak_params
        self.n_cycles = n_cycles
        self.n_alternations = n_alternations
        self.max_iter = max_iter
        self.tol = tol
        self.eps = eps
        self.prune = prune
        self.fine_tune = fine_tune
        self.random_state = random_state
        self.budget = budget
        self.scoring = scoring
        self.lams = lams

    # -- fitting --------------------------------------------------------------------------
    def fit(self, X: Any, y: Any, *, X_valid: Any = None, y_valid: Any = None) -> CSTC:
        """Train the feature map (unless the constructor's ``booster`` is given) and the tree of classifiers.

        The fit runs on a private copy; its fitted attributes replace this estimator's only when
        it succeeds, so a refused fit leaves an earlier fit untouched.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Training inputs (a DataFrame's column names are matched to ``costs`` by name).
        y : array-like of shape (n_rows,)
            Targets: real values (``task="regression"``) or two classes (``"binary"``).
        X_valid, y_valid : array-like or None
            Validation data for pruning and for accepting fine-tuned leaves.

        Returns
        -------
        CSTC
            self.
        """

        def run(work: CSTC) -> object:
            _cstc_iv(work)
            if work.budget is not None:
                return work._fit_budget(X, y, X_valid, y_valid)
            return work._fit_one(X, y, work.costs, work.booster, X_valid, y_valid)

        return fit_in_one_step(self, run)

    def _fit_one(self, X: Any, y: Any, costs: Any, booster: Any, X_valid: Any, y_valid: Any) -> CSTC:
        """One fit at ``self.lam`` (the body of :meth:`fit` without ``budget``)."""
        names_x, cats = column_names(X), pandas_categories(X)
        n_model: int | None = None
        if booster is not None:
            wl = _read_weak_learners(booster)
            n_model, cats = wl.n_features, wl.ensemble.pandas_categorical
            model_names = wl.ensemble.feature_names
            if not all(f == f"Column_{i}" for i, f in enumerate(model_names)):
                names_x = model_names
        self._feature_names: tuple[str, ...] | None = names_x
        self._pandas_categorical = cats
        Xa, _ = _check_X(X, "X", n_model, names_x, cats)
        names = None if names_x is None else list(names_x)
        ya_raw = check_finite_labels(y, name="y", owner="CSTC.fit").reshape(-1)
        if ya_raw.shape[0] != Xa.shape[0]:
            raise ValueError(
                f"The 'y' argument of CSTC.fit must have one entry per row of X ({Xa.shape[0]}). "
                f"Got {ya_raw.shape[0]} instead."
            )
        y_gbrt, y_int = self._encode_y(ya_raw, fitting=True)
        Xv = yv = None
        if X_valid is not None:
            if y_valid is None:
                raise ValueError("The 'y_valid' argument of CSTC.fit is required with 'X_valid'. Got None.")
            Xv, _ = _check_X(X_valid, "X_valid", Xa.shape[1], names_x, cats)
            yv = self._encode_y(check_finite_labels(y_valid, name="y_valid", owner="CSTC.fit").reshape(-1),
                                fitting=False)[1]
            if yv.shape[0] != Xv.shape[0]:
                raise ValueError(
                    f"The 'y_valid' argument of CSTC.fit must have {Xv.shape[0]} entries. Got {yv.shape[0]}."
                )

        if booster is None:
            import lightgbm as lgb

            params = {
                "objective": "regression",
                "learning_rate": float(self.weak_learning_rate),
                "max_depth": int(self.weak_max_depth),
                "num_leaves": 2 ** int(self.weak_max_depth),
                "min_data_in_leaf": 5,
                "verbose": -1,
                "seed": 0 if self.random_state is None else int(self.random_state),
                "deterministic": True,
                "num_threads": 1,
            }
            params.update(self.weak_params or {})
            booster = lgb.train(params, lgb.Dataset(Xa, y_gbrt), num_boost_round=int(self.n_weak))
        self.booster_ = booster
        self._wl: _WeakLearners = _read_weak_learners(booster)
        if self._wl.n_features != Xa.shape[1]:
            raise ValueError(
                f"The 'booster' of CSTC.fit uses {self._wl.n_features} features; X has {Xa.shape[1]}."
            )
        self.n_features_in_ = Xa.shape[1]
        self.feature_names_in_ = names
        self._cm: _CostModel = _costs_iv(costs, Xa.shape[1], names)
        self._leaf_eval, e = _tree_eval_costs(self._wl, self._cm)
        self.tree_costs_ = e
        self.tree_features_ = self._wl.tree_features.copy()
        G = _group_usage(self._wl, self._cm)

        Phi_raw = self._phi(Xa)
        mu = Phi_raw.mean(axis=0)
        sd = Phi_raw.std(axis=0)
        usable = sd > 1e-12 * (1.0 + np.abs(mu))
        scale = np.where(usable, sd, 1.0)
        Phi = np.where(usable[None, :], (Phi_raw - mu) / scale, 0.0)
        if self.task == "regression":
            y_mu, y_sd = float(y_int.mean()), float(y_int.std()) or 1.0
        else:
            y_mu, y_sd = 0.0, 1.0
        ys = (y_int - y_mu) / y_sd
        pb = _Problem(Phi, ys, self.task, e, G, self._cm.group_cost, float(self.lam), float(self.rho),
                      float(self.sharpness), self.risk == "leaves")
        with _single_thread_blas():
            B, b, theta, result_hist, nit, status = self._optimize(pb)
        B[np.abs(B) < self.eps] = 0.0
        B[:, ~usable] = 0.0
        active = np.ones(_n_nodes(int(self.depth)), dtype=bool)

        # back to raw units: f_raw = Phi_raw @ coef + intercept; routing on f_raw vs threshold
        def to_raw(
            B: FloatArray, b: FloatArray, theta: FloatArray
        ) -> tuple[FloatArray, FloatArray, FloatArray]:
            coef = B / scale[None, :] * y_sd
            inter = (b - B @ (mu / scale)) * y_sd + y_mu
            return coef, inter, theta * y_sd + y_mu

        self.coef_, self.intercept_, self.threshold_ = to_raw(B, b, theta)
        self.active_ = active
        n_pruned = 0
        if self.prune and Xv is not None and yv is not None:
            n_pruned = self._prune(self._phi(Xv), yv)
        if self.fine_tune:
            self._fine_tune(Phi_raw, y_int, Xv, yv)
        st = _Structure(int(self.depth), self.active_)
        self.is_leaf_ = st.is_leaf
        self.coef_[~self.active_] = 0.0
        msg = ("relative decrease of the objective below tol" if status == Status.SUCCESS else "n_cycles reached")
        self.result_ = CSTCResult(status=status, message=msg, fun=result_hist[-1], nit=nit,
                                  history=tuple(result_hist), n_pruned=n_pruned, lam=float(self.lam))
        return self

    def _fit_budget(self, X: Any, y: Any, X_valid: Any, y_valid: Any) -> CSTC:
        """``budget`` mode: one tree per ``lam``; keep the best validation score within the budget."""
        if X_valid is None or y_valid is None:
            raise ValueError("CSTC with 'budget' needs validation data: pass X_valid and y_valid to fit.")
        score_name, score_fn = _resolve_scoring(self.scoring, self.task)
        lams = np.sort(np.unique(np.asarray(
            np.geomspace(1e-4, 1.0, 12) if self.lams is None else self.lams, dtype=np.float64
        ).reshape(-1)))
        budget = float(self.budget)  # type: ignore[arg-type]
        costs, booster = self.costs, self.booster
        path: list[dict[str, float]] = []
        fits: list[CSTC] = []
        for lam in lams:
            m = clone(self).set_params(budget=None, lam=float(lam))
            m._fit_one(X, y, costs, booster, X_valid, y_valid)
            booster = m.booster_  # the weak learners are trained once
            constant = not bool((m.coef_[m.active_] != 0).any())
            cost = float(m.cost_report(X_valid).total_cost.mean())
            path.append({"lam": float(lam), "cost": cost, "score": score_fn(m, X_valid, y_valid),
                         "constant": float(constant)})
            fits.append(m)
            if constant:  # a larger lam only gives the same constant tree
                break
        costs_v = np.array([p["cost"] for p in path])
        scores = np.array([p["score"] for p in path])
        ok = np.asarray(fits_budget(costs_v, budget), dtype=bool)
        if ok.any():
            cand = np.flatnonzero(ok)
            best = scores[cand].max()
            top = cand[scores[cand] >= best]
            i = int(top[np.argmin(costs_v[top])])
            nonconst = [j for j in cand if not path[j]["constant"]]
            if path[i]["constant"] and not nonconst:
                status = Status.CONSTANT
                msg = (f"only a constant tree (no weak learner, validation {score_name} {scores[i]:.4g}) is within "
                       f"budget {budget:g}; the cheapest non-constant tree tried costs "
                       f"{min((p['cost'] for p in path if not p['constant']), default=float('nan')):.4g}")
            elif path[i]["constant"]:
                status = Status.TRIVIAL
                j = max(nonconst, key=lambda j: scores[j])
                msg = (f"the best validation {score_name} within budget {budget:g} ({scores[i]:.4g}) is a constant "
                       f"tree (no weak learner); the best non-constant one scores {scores[j]:.4g} at cost "
                       f"{costs_v[j]:.4g} (lam={lams[j]:.4g}); a ranking score such as scoring='roc_auc' "
                       "may prefer it")
            else:
                status = Status.SUCCESS
                msg = (f"best validation {score_name} {scores[i]:.4g} within budget {budget:g}: lam={lams[i]:.4g}, "
                       f"mean validation cost {costs_v[i]:.4g}")
        else:
            i = int(np.argmin(costs_v))
            status = Status.INFEASIBLE
            msg = (f"no lam tried is within budget {budget:g}; kept the cheapest tree (lam={lams[i]:.4g}, mean "
                   f"validation cost {costs_v[i]:.4g}, validation {score_name} {scores[i]:.4g})")
        if status != Status.SUCCESS:
            warnings.warn(f"CSTC: {msg}.", UserWarning, stacklevel=5)
        chosen = fits[i]
        for k, v in vars(chosen).items():
            if k.endswith("_") or k.startswith("_"):
                setattr(self, k, v)
        r = chosen.result_
        self.result_ = CSTCResult(status=status, message=msg, fun=r.fun, nit=r.nit, history=r.history,
                                  n_pruned=r.n_pruned, lam=float(lams[i]), path=tuple(path), scoring=score_name)
        return self

    def _encode_y(self, y: npt.NDArray[Any], *, fitting: bool) -> tuple[FloatArray, FloatArray]:
        """Targets for the GBRT (squared loss) and for the CSTC loss."""
        if self.task == "regression":
            try:
                yf = y.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise TypeError(
                    "The 'y' argument of CSTC.fit must be numeric for task='regression'."
                ) from exc
            if not np.all(np.isfinite(yf)):
                raise ValueError("The 'y' argument of CSTC.fit must be finite for task='regression'.")
            return yf, yf
        if fitting:
            classes = np.unique(y)
            if classes.shape[0] != 2:
                raise ValueError(
                    f"The 'y' argument of CSTC.fit must hold exactly two classes for task='binary'. "
                    f"Got {classes.shape[0]} classes instead."
                )
            self.classes_ = classes
        pos = y == self.classes_[1]
        if not np.all(pos | (y == self.classes_[0])):
            raise ValueError(f"The labels of CSTC must be among the fitted classes {self.classes_.tolist()}.")
        return pos.astype(np.float64), np.where(pos, 1.0, -1.0)

    def _phi(self, X: FloatArray) -> FloatArray:
        return _tree_outputs(self._wl, X)

    # -- optimization ---------------------------------------------------------------------
    def _solve_node(
        self, k: int, st: _Structure, pb: _Problem, B: FloatArray, b: FloatArray, theta: FloatArray,
        F: FloatArray,
    ) -> None:
        """Alternate Lemma 1 closed-form updates with L-BFGS-B on node k (in place on B, b, theta, F)."""
        T = B.shape[1]
        rho = pb.rho
        for _ in range(int(self.n_alternations)):
            aux = _aux_update(st, pb, B, float(self.eps))

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
            res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": int(self.max_iter)})
            fun(res.x)

    def _init_node(self, k: int, pb: _Problem, w: FloatArray, B: FloatArray, b: FloatArray) -> None:
        """Weighted ridge fit of node k on rows weighted by their traversal probability."""
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

    def _optimize(self, pb: _Problem) -> tuple[FloatArray, FloatArray, FloatArray, list[float], int, Status]:
        D = int(self.depth)
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
                self._init_node(k, pb, P[:, k], B, b)
                F[:, k] = pb.Phi @ B[k] + b[k]
                self._solve_node(k, st, pb, B, b, theta, F)
                P = _evaluate(st, pb, F, B, theta).P
                theta[k] = _weighted_median(F[:, k], P[:, k])
        st = _Structure(D, np.ones(K, dtype=bool))
        hist = [_evaluate(st, pb, F, B, theta).value]
        status, nit = Status.LIMIT, 0
        for _ in range(int(self.n_cycles)):
            for k in range(K):
                self._solve_node(k, st, pb, B, b, theta, F)
            nit += 1
            hist.append(_evaluate(st, pb, F, B, theta).value)
            if hist[-2] - hist[-1] <= self.tol * max(abs(hist[-2]), 1e-12):
                status = Status.SUCCESS
                break
        return B, b, theta, hist, nit, status

    # -- pruning and fine-tuning ------------------------------------------------------------
    def _node_outputs(self, Phi_raw: FloatArray) -> FloatArray:
        return Phi_raw @ self.coef_.T + self.intercept_[None, :]

    def _route(self, Fr: FloatArray, active: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """Hard traversal: visited node at each level, -1 once the row has stopped (n x depth)."""
        n = Fr.shape[0]
        D = int(self.depth)
        K = _n_nodes(D)
        visited = -np.ones((n, D), dtype=np.int64)
        node = np.zeros(n, dtype=np.int64)
        alive = np.ones(n, dtype=bool)
        for d in range(D):
            visited[alive, d] = node[alive]
            lo = 2 * node + 1
            can = alive & (lo + 1 < K)
            can[can] = active[lo[can]] & active[lo[can] + 1]
            up = Fr[np.arange(n), node] > self.threshold_[node]
            node = np.where(can, np.where(up, lo + 1, lo), node)
            alive = can
        return visited

    def _loss_raw(self, y_int: FloatArray, f: FloatArray) -> FloatArray:
        return _loss(self.task, y_int, f[:, None])[0][:, 0]

    def _prune(self, Phi_v: FloatArray, yv: FloatArray) -> int:
        """Collapse, bottom-up, every subtree whose validation loss is not below its root's alone."""
        Fr = self._node_outputs(Phi_v)
        active = self.active_.copy()
        K = active.shape[0]
        n_pruned = 0
        for k in reversed(range(K)):
            lo = 2 * k + 1
            if lo + 1 >= K or not (active[k] and active[lo] and active[lo + 1]):
                continue
            visited = self._route(Fr, active)
            rows = (visited == k).any(axis=1)
            leaf = visited.max(axis=1)
            if rows.any():
                sub = self._loss_raw(yv[rows], Fr[rows, leaf[rows]]).sum()
                alone = self._loss_raw(yv[rows], Fr[rows, k]).sum()
                if sub < alone:
                    continue
            stack = [lo, lo + 1]
            while stack:
                j = stack.pop()
                if j < K and active[j]:
                    active[j] = False
                    n_pruned += 1
                    stack.extend([2 * j + 1, 2 * j + 2])
        self.active_ = active
        return n_pruned

    def _fine_tune(self, Phi_raw: FloatArray, y_int: FloatArray, Xv: FloatArray | None,
                   yv: FloatArray | None) -> None:
        """Refit every leaf on the training rows routed to it, only on weak learners already paid for."""
        st = _Structure(int(self.depth), self.active_)
        Fr = self._node_outputs(Phi_raw)
        visited = self._route(Fr, self.active_)
        leaf_of = visited.max(axis=1)
        if Xv is not None and yv is not None:
            Phi_v = self._phi(Xv)
            vis_v = self._route(self._node_outputs(Phi_v), self.active_).max(axis=1)
        for r, leaf in enumerate(st.leaves):
            used = np.flatnonzero((self.coef_[st.path[r]] != 0).any(axis=0))
            rows = leaf_of == leaf
            if used.size == 0 or rows.sum() < 2 * used.size + 2:
                continue
            Xs = Phi_raw[rows][:, used]
            ys = y_int[rows]
            mu, sd = Xs.mean(axis=0), Xs.std(axis=0)
            sd = np.where(sd > 0, sd, 1.0)
            Z = (Xs - mu) / sd
            y_mu = float(ys.mean()) if self.task == "regression" else 0.0
            y_sd = (float(ys.std()) or 1.0) if self.task == "regression" else 1.0
            yz = (ys - y_mu) / y_sd
            m = used.size
            rho = float(self.rho)

            def fun(x: FloatArray, Z: FloatArray = Z, yz: FloatArray = yz, m: int = m,
                    rho: float = rho) -> tuple[float, FloatArray]:
                beta = x[:m] - x[m:2 * m]
                f = Z @ beta + x[2 * m]
                L, dL = _loss(self.task, yz, f[:, None])
                nr = f.shape[0]
                g = Z.T @ dL[:, 0] / nr
                val = float(L.sum() / nr + rho * x[: 2 * m].sum())
                return val, np.concatenate([g + rho, -g + rho, [dL[:, 0].sum() / nr]])

            res = minimize(fun, np.zeros(2 * m + 1), jac=True, method="L-BFGS-B",
                           bounds=[(0.0, None)] * (2 * m) + [(None, None)], options={"maxiter": 500})
            bz = res.x[:m] - res.x[m : 2 * m]
            coef = np.zeros_like(self.coef_[leaf])
            coef[used] = bz / sd * y_sd
            inter = (res.x[2 * m] - bz @ (mu / sd)) * y_sd + y_mu
            if Xv is not None and yv is not None:
                vr = vis_v == leaf
                if vr.any():
                    old = self._loss_raw(yv[vr], Phi_v[vr] @ self.coef_[leaf] + self.intercept_[leaf]).sum()
                    new = self._loss_raw(yv[vr], Phi_v[vr] @ coef + inter).sum()
                    if new > old:
                        continue
            self.coef_[leaf] = coef
            self.intercept_[leaf] = inter

    # -- save and load ----------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the fitted model to ``path`` as one JSON document (format ``budget_extras.CSTC/1``).

        The file holds everything :meth:`predict`, :meth:`predict_proba`,
        :meth:`decision_function`, :meth:`apply`, :meth:`path` and :meth:`cost_report` need:
        the nodes' weights, intercepts and thresholds, the weak learners (LightGBM model text),
        the costs, the classes, the feature names and the hyperparameters (docs/cstc.md,
        "Model file"). The text is built before the file is opened: a model that cannot be
        saved leaves ``path`` untouched.

        Parameters
        ----------
        path : str or os.PathLike
            File to write (replaced if it exists).

        Raises
        ------
        NotFittedError
            If the model is not fitted.
        TypeError
            If the costs are a custom object with ``row_cost`` (not a ``FeatureCosts``), or a
            class label or pandas category is not a string, integer, finite float or boolean.
        """
        check_is_fitted(self, "coef_")
        text = dump_model(self)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, costs: Any = None) -> CSTC:
        """Read a model written by :meth:`save`.

        Every field is validated before the model is built (docs/cstc.md, "Model file"); the
        loaded model predicts and reports cost exactly as the saved one, without the training
        data.

        Parameters
        ----------
        path : str or os.PathLike
            A file written by :meth:`save`.
        costs : FeatureCosts, list, dict, pandas.Series, CSV path or None, default=None
            Costs to report with instead of the saved ones (the one cost input of
            docs/costs.md); None: the saved costs.

        Returns
        -------
        CSTC
            A fitted CSTC; ``booster_`` is a ``lightgbm.Booster`` read from the saved text.

        Raises
        ------
        ValueError
            If the file is not a version-1 CSTC model file or a field is missing, of the wrong
            type or shape, not finite, out of range or inconsistent; the message names the
            file and the field.
        OSError
            If the file cannot be read.
        """
        source = repr(os.fspath(path))
        pm = parse_model(read_text(path), source)
        est = cls(**pm.params)
        try:
            check_params(est)
            _cstc_iv(est)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{source}: field 'params': {exc}") from None
        import lightgbm as lgb

        try:
            est.booster_ = lgb.Booster(model_str=pm.model_text)
        except lgb.basic.LightGBMError as exc:
            raise ValueError(f"{source}: field 'weak_learners': LightGBM cannot load it: {exc}") from None
        est.costs = pm.costs if costs is None else costs
        est._wl = _read_weak_learners(pm.ensemble)
        est._feature_names = pm.feature_names
        est._pandas_categorical = pm.pandas_categorical
        est.n_features_in_ = pm.n_features
        est.feature_names_in_ = None if pm.feature_names is None else list(pm.feature_names)
        if pm.classes is not None:
            est.classes_ = pm.classes
        est._cm = _costs_iv(est.costs, pm.n_features, est.feature_names_in_)
        est._leaf_eval, est.tree_costs_ = _tree_eval_costs(est._wl, est._cm)
        est.tree_features_ = est._wl.tree_features.copy()
        est.coef_, est.intercept_, est.threshold_ = pm.coef, pm.intercept, pm.threshold
        est.active_ = pm.active
        est.is_leaf_ = _Structure(int(est.depth), est.active_).is_leaf
        est.result_ = CSTCResult(**pm.result)
        return est

    # -- prediction -------------------------------------------------------------------------
    def _leaf_and_outputs(self, X: Any) -> tuple[FloatArray, npt.NDArray[np.int64], FloatArray]:
        check_is_fitted(self, "coef_")
        Xa, _ = _check_X(X, "X", self.n_features_in_, self._feature_names, self._pandas_categorical)
        Fr = self._node_outputs(self._phi(Xa))
        visited = self._route(Fr, self.active_)
        return Xa, visited, Fr

    def apply(self, X: Any) -> npt.NDArray[np.int64]:
        """Index of the leaf node each row reaches (hard traversal).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of int64, shape (n_rows,)
        """
        _, visited, _ = self._leaf_and_outputs(X)
        return visited.max(axis=1)

    def path(self, X: Any) -> sp.csr_matrix:
        """Nodes visited by each row, root to leaf.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        scipy.sparse.csr_matrix of bool, shape (n_rows, n_nodes)
        """
        _, visited, _ = self._leaf_and_outputs(X)
        n = visited.shape[0]
        rows, cols = np.nonzero(visited >= 0)
        data = np.ones(rows.shape[0], dtype=bool)
        return sp.csr_matrix((data, (rows, visited[rows, cols])), shape=(n, self.coef_.shape[0]), dtype=bool)

    def decision_function(self, X: Any) -> FloatArray:
        """Output of the leaf reached: the regression value, or the logit for ``task="binary"``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of float64, shape (n_rows,)
        """
        _, visited, Fr = self._leaf_and_outputs(X)
        leaf = visited.max(axis=1)
        return Fr[np.arange(Fr.shape[0]), leaf]

    def predict(self, X: Any) -> npt.NDArray[Any]:
        """Predicted values (regression) or class labels (binary).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of shape (n_rows,)
        """
        f = self.decision_function(X)
        if self.task == "regression":
            return f
        return np.where(f > 0, self.classes_[1], self.classes_[0])

    def __sklearn_tags__(self) -> Any:
        """Scikit-learn tags: NaN and sparse input are accepted (LightGBM's missing-value rules)."""
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    @available_if(lambda self: self.task == "binary")
    def predict_proba(self, X: Any) -> FloatArray:
        """Class probabilities for ``task="binary"`` (absent otherwise).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of float64, shape (n_rows, 2)
        """
        if self.task != "binary":
            raise ValueError("CSTC.predict_proba needs task='binary'. Got task='regression'.")
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def cost_report(self, X: Any) -> CSTCCostReport:
        """Per-row test-time cost: the core's :class:`~budget_extras.CostReport` (extended).

        A row evaluates every weak learner with nonzero weight on a node its path visits;
        it acquires the features tested on its own path through each such tree, priced by the
        cost model (``FeatureCosts.row_cost``), and pays each tree's evaluation cost (per tree
        plus split costs along that path). ``tree_order`` lists the weak learners some node
        uses; the coupled cost is that of the features they split on.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to account.

        Returns
        -------
        CSTCCostReport
            A :class:`~budget_extras.CostReport`.
        """
        Xa, visited, _ = self._leaf_and_outputs(X)
        n = Xa.shape[0]
        leaf_rows = _leaf_rows(self._wl, Xa)
        nz = self.coef_ != 0
        st = _Structure(int(self.depth), self.active_)
        leaf = visited.max(axis=1)
        used = sp.lil_matrix((n, self.n_features_in_), dtype=bool)
        eval_cost = np.zeros(n)
        n_trees = np.zeros(n, dtype=np.int64)
        splits = np.zeros(n, dtype=np.int64)
        depth = self._wl.ensemble.depth
        for r, l_node in enumerate(st.leaves):
            rows = np.flatnonzero(leaf == l_node)
            order = np.flatnonzero(nz[st.path[r]].any(axis=0))
            if rows.size == 0 or order.size == 0:
                continue
            # the core's path rule: features on each row's paths through the trees it evaluates
            used[rows] = features_used(self._wl.ensemble, Xa[rows], tree_order=order)
            reached = leaf_rows[np.ix_(rows, order)]
            eval_cost[rows] = self._leaf_eval[reached].sum(axis=1)
            splits[rows] = depth[reached].sum(axis=1)
            n_trees[rows] = order.size
        used_csr = sp.csr_matrix(used.tocsr(), dtype=bool)
        acq = self._cm.acquisition_cost(used_csr)
        source = self._cm.source if isinstance(self._cm.source, FeatureCosts) else None
        acquired = sp.csr_matrix(source.acquired_features(used_csr)) if source is not None else used_csr
        trees = np.flatnonzero(nz[self.active_].any(axis=0))
        coupled_features = np.asarray(self._wl.tree_features[:, trees].any(axis=1), dtype=bool)
        coupled = float(np.asarray(source.coupled)[coupled_features].sum()) if source is not None else 0.0
        names = self._feature_names or tuple(f"Column_{i}" for i in range(self.n_features_in_))
        return CSTCCostReport(
            used=used_csr,
            acquired=acquired,
            feature_counts=None,
            acquisition_cost=acq,
            splits_evaluated=splits,
            trees_evaluated=n_trees,
            eval_cost=eval_cost,
            total_cost=acq + eval_cost,
            coupled_cost=coupled,
            coupled_features=coupled_features,
            tree_order=trees.astype(np.int64),
            feature_names=tuple(names),
            costs=source,  # type: ignore[arg-type]
        )


def _single_thread_blas() -> Any:
    """Limit BLAS to one thread: the many small products of the node solves only lose to threading."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _weighted_median(v: FloatArray, w: FloatArray) -> float:
    if w.sum() <= 0:
        return float(np.median(v))
    order = np.argsort(v)
    vs = v[order]
    cw = np.cumsum(w[order])
    i = int(np.searchsorted(cw, 0.5 * cw[-1]))
    above = vs[i + 1 :][vs[i + 1 :] > vs[i]]
    # halfway to the next distinct value, so that ties do not sit on the threshold
    return float(0.5 * (vs[i] + above[0])) if above.size else float(vs[i])
