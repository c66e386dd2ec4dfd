"""CSTC: the Cost-Sensitive Tree of Classifiers (Xu, Kusner, Weinberger, Chen, ICML 2013).

A tree of linear classifiers on the outputs of boosted regression trees. Every input follows
one root-to-leaf path and pays only for the weak learners (and their features) with nonzero
weight on the nodes of that path. This module is the scikit-learn estimator: its parameters,
``fit``, prediction, cost and persistence. The training itself is :mod:`._solver` (functions
over arrays), the ``budget`` search :mod:`._budget`, the model file :mod:`._format`, the result
objects :mod:`._results` and the input checks :mod:`._inputs`.
"""

from __future__ import annotations

import numbers
import os
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..core._fit_state import fit_in_one_step
from ..core._params import Interval, Options, check_params
from ..core._status import Status
from ._budget import fit_budget
from ._features import _group_usage, _tree_outputs, feature_map, train_weak_learners
from ._format import dump_model, parse_model, read_text, restore_fitted
from ._inputs import check_fit_data, check_lams, check_X
from ._results import CSTCCostReport, CSTCResult, _resolve_scoring, tree_cost_report
from ._solver import Settings, fit_tree, node_outputs, route, visited_matrix

__all__ = ["CSTC", "CSTCCostReport", "CSTCResult"]

FloatArray = npt.NDArray[np.float64]


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
            check_lams(work.lams)
            if work.budget is None:
                return work._fit_one(X, y, work.costs, work.booster, X_valid, y_valid)
            if X_valid is None or y_valid is None:
                raise ValueError("CSTC with 'budget' needs validation data: pass X_valid and y_valid to fit.")
            return fit_budget(work, X, y, X_valid, y_valid, _resolve_scoring(work.scoring, work.task))

        return fit_in_one_step(self, run)

    def _fit_one(self, X: Any, y: Any, costs: Any, booster: Any, X_valid: Any, y_valid: Any) -> CSTC:
        """One fit at ``self.lam`` (the body of :meth:`fit` without ``budget``)."""
        d = check_fit_data(X, y, X_valid, y_valid, booster, self.task)
        self._feature_names: tuple[str, ...] | None = d.feature_names
        self._pandas_categorical = d.pandas_categorical
        names = None if d.feature_names is None else list(d.feature_names)
        if d.classes is not None:
            self.classes_ = d.classes
        if booster is None:
            booster = train_weak_learners(
                d.X, d.y_gbrt, n_weak=self.n_weak, max_depth=self.weak_max_depth,
                learning_rate=self.weak_learning_rate, random_state=self.random_state, params=self.weak_params,
            )
        self.booster_ = booster
        self.n_features_in_, self.feature_names_in_ = d.X.shape[1], names
        self._wl, self._cm, self._leaf_eval, self.tree_costs_ = feature_map(booster, d.X.shape[1], costs, names)
        self.tree_features_ = self._wl.tree_features.copy()
        tree = fit_tree(
            _tree_outputs(self._wl, d.X), d.y_int, self.tree_costs_, _group_usage(self._wl, self._cm),
            self._cm.group_cost, Settings.of(self), None if d.X_valid is None else _tree_outputs(self._wl, d.X_valid),
            d.y_valid,
        )
        self.coef_, self.intercept_, self.threshold_ = tree.coef, tree.intercept, tree.threshold
        self.active_, self.is_leaf_ = tree.active, tree.is_leaf
        msg = "relative decrease of the objective below tol" if tree.status == Status.SUCCESS else "n_cycles reached"
        self.result_ = CSTCResult(status=tree.status, message=msg, fun=tree.history[-1], nit=tree.nit,
                                  history=tuple(tree.history), n_pruned=tree.n_pruned, lam=float(self.lam))
        return self

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
            check_lams(est.lams)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{source}: field 'params': {exc}") from None
        restore_fitted(est, pm, source, costs)
        return est

    # -- prediction -------------------------------------------------------------------------
    def _leaf_and_outputs(self, X: Any) -> tuple[FloatArray, npt.NDArray[np.int64], FloatArray]:
        check_is_fitted(self, "coef_")
        Xa = check_X(X, "X", self.n_features_in_, self._feature_names, self._pandas_categorical)
        Fr = node_outputs(_tree_outputs(self._wl, Xa), self.coef_, self.intercept_)
        return Xa, route(Fr, self.threshold_, self.active_, int(self.depth)), Fr

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
        return visited_matrix(self._leaf_and_outputs(X)[1], self.coef_.shape[0])

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
        names = self._feature_names or tuple(f"Column_{i}" for i in range(self.n_features_in_))
        return tree_cost_report(self._wl, self._cm, self._leaf_eval, self.coef_, self.active_, int(self.depth), Xa,
                                visited.max(axis=1), tuple(names))
