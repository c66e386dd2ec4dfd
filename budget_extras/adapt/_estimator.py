"""AdaptGBRT: a cheap gate and a cheap model that approximate an expensive model where they can.

Nan & Saligrama, "Adaptive Classification for Prediction Under a Budget", NeurIPS 2017.

The estimator is the scikit-learn facade: the alternating minimization is in ``_train``, the
choice among initializations and the budget sweep in ``_sweep``, the model file in ``_format``.
"""

from __future__ import annotations

import numbers
import os
import warnings
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..core._ensemble import TreeEnsemble
from ..core._fit_state import fit_in_one_step
from ..core._params import Interval, Options
from ..core._report import CostReport
from ..core._status import Status
from ..core._validation import check_array_2d, check_finite_labels
from ._f0 import F0Model
from ._format import dump_model, load_model
from ._heads import F1Head, make_head
from ._paths import as_feature_costs, routed_features_used, row_cost, system_cost_report
from ._sweep import AdaptSweepResult, Candidate, FitContext, check_train_trivial, fit_best_init, make_context, sweep
from ._train import AdaptTrainResult, _per_feature_cost

__all__ = ["AdaptGBRT"]


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
        Overrides of :func:`~budget_extras.adapt._train.default_lgb_params`.
    f0_features : {"auto", "all"}, bool mask or callable, default "auto"
        Features ``f0`` reads per row (see :class:`~budget_extras.adapt._f0.F0Model`).
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
        ctx = self._prepare(X, y, f0_proba_train)
        if self.budget is None:
            cand = fit_best_init(self, ctx)
            self._adopt(cand)
            self.sweep_result_: AdaptSweepResult | None = None
            self.train_result_ = check_train_trivial(cand.result, ctx)
            if self.train_result_ is not cand.result:
                warnings.warn(f"AdaptGBRT: {self.train_result_.message}", UserWarning, stacklevel=5)
            self.result_: AdaptTrainResult | AdaptSweepResult = self.train_result_
            return
        Xv = self._validate(X_valid, "X_valid")
        yv = check_finite_labels(y_valid, name="y_valid", owner="AdaptGBRT.fit")
        if yv.shape != (Xv.shape[0],):
            raise ValueError(
                f"The 'y_valid' argument of AdaptGBRT.fit must have shape ({Xv.shape[0]},). Got {yv.shape} instead."
            )
        cand, result, trivial = sweep(self, ctx, Xv, yv)
        if result.status is Status.TRIVIAL:
            warnings.warn(f"AdaptGBRT: {result.message}", UserWarning, stacklevel=5)
        self._adopt(cand)
        self.sweep_result_, self.trivial_ = result, trivial
        self.result_ = result

    def _prepare(self, X: Any, y: Any, f0_proba_train: Any) -> FitContext:
        """Check the training data, record the input columns and costs; return what every candidate shares."""
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"The 'y' argument of AdaptGBRT.fit must be 1-D. Got shape {y.shape} instead.")
        check_finite_labels(y, name="y", owner="AdaptGBRT.fit")
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(f"AdaptGBRT needs at least 2 classes in 'y'. Got {classes.size} instead.")
        self.f0_ = F0Model(self.f0, features=self.f0_features, n_classes=classes.size)
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
        return make_context(
            X, y, classes, f0_proba_train, f0=self.f0_, costs=self.costs_, cost_vec=self.cost_vec_,
            lgb_params=self.lgb_params, head=self._head(), feature_names=self._feature_names,
        )

    def _set_input_spec(self, X: Any) -> None:
        """Record the columns, names and pandas categories that later data must match (:meth:`F0Model.input_spec`)."""
        n, names, cats = self.f0_.input_spec(X)
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

    def _adopt(self, cand: Candidate) -> None:
        """Take over the gate and f1 of ``cand`` and its configuration."""
        self.train_result_ = cand.result
        self.g_model_, self.f1_model_ = cand.result.g_model, cand.result.f1_model
        self.g_bias_, self.f1_bias_ = cand.g_bias, cand.result.f1_bias
        self.p_full_, self.gamma_, self.init_ = cand.p_full, cand.gamma, cand.init
        self._leaf_cache: dict[str, TreeEnsemble] = {}

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

        def f0_rows(rows: np.ndarray) -> np.ndarray:
            if f0_used is not None:
                return np.asarray(f0_used)[rows]
            return self._require_f0().features_used(X[rows])

        return routed_features_used(
            self.g_model_, self.f1_model_, X, self.route(X).astype(bool), f0_rows,
            g_ensemble=self._ensemble("g"), f1_ensemble=self._ensemble("f1"),
        )

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
        to_f0 = self.route(X).astype(bool)
        g_ens, f1_ens = self._ensemble("g"), self._ensemble("f1")
        f0 = self._require_f0() if to_f0.any() else None
        names = self._feature_names or tuple(f"Column_{i}" for i in range(self.n_features_in_))
        return system_cost_report(X, to_f0, g_ens, f1_ens, f0, self.costs_, names)

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
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the gate, f1, classes, costs and parameters as JSON (f0 is not saved).

        Parameters
        ----------
        path : str or os.PathLike
            File to write.
        """
        check_is_fitted(self, "g_model_")
        text = dump_model(self)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, f0: Any = None, costs: Any = None, f0_features: Any = "auto"
    ) -> AdaptGBRT:
        """Read a model written by :meth:`save`; pass ``f0`` to predict rows routed to it.

        Parameters
        ----------
        path : str or os.PathLike
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
        est: AdaptGBRT = load_model(cls, path, f0=f0, costs=costs, f0_features=f0_features)
        return est

    def _price(self, costs: Any) -> None:
        """Charge a loaded model's features ``costs`` (None: the costs saved with the model)."""
        self.costs_ = as_feature_costs(
            costs if costs is not None else self.cost_vec_, self.n_features_in_, self._feature_names
        )

