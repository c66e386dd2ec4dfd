"""BudgetPrune estimator: prune a LightGBM forest to a feature-cost budget, exactly."""

from __future__ import annotations

import numbers
import os
import warnings
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..core._costs import as_feature_costs
from ..core._ensemble import TreeEnsemble
from ..core._fit_state import fit_in_one_step
from ..core._params import Interval, Options
from ..core._report import CostReport, cost_report
from ..core._status import Status, fits_budget
from ..core._validation import check_booster, check_finite_labels
from ._error_terms import (
    gbdt_surrogate_error,
    mean_loss,
    objective_name,
)
from ._feature_drop import FeatureDropRefit
from ._leaves import leaf_nodes, pruned_leaf_map, raw_from_leaves
from ._problem import PruneProblem
from ._scoring import constant_raw, resolve_scoring
from ._setup import ERROR_SOURCES, BudgetPruneSetup, Progress, prepare
from ._solver import PruneResult, solve_primal_dual

__all__ = ["BudgetPrune"]


class BudgetPrune(BaseEstimator):
    """Prune a LightGBM random forest (or GBDT) for prediction on a feature-cost budget.

    Solves the 0-1 program of Nan, Wang and Saligrama (NeurIPS 2016) exactly by its primal-dual
    method (see :func:`solve_primal_dual`), for a given trade-off ``lam`` or for the smallest
    ``lam`` whose pruned forest meets an average validation cost ``budget`` (bisection).

    Parameters
    ----------
    model : lightgbm.Booster, LGBMModel, TreeEnsemble, path or model text
        The LightGBM random forest (binary or multiclass) or GBDT to prune (not modified).
    lam : float, optional
        Trade-off between error and average feature cost. Exactly one of ``lam`` and ``budget``.
    budget : float, optional
        Target average acquisition (plus evaluation, with ``eval_cost``) cost per validation row.
    error_source : {"train", "inbag", "oob"}, default "train"
        Which training rows define the error terms (see ``_budgetprune_errors``).
    error : {"misclassification", "loss"}, default "misclassification"
        Random forests: the paper's 0-1 majority error per node, or the loss surrogate (training
        loss of the forest's averaged output with one tree collapsed at the node; needs
        ``error_source="train"``). Boosted models always use the loss surrogate.
    costs : FeatureCosts, list, dict, pandas.Series or CSV path, optional
        Feature costs (the core's one cost input; default: 1 per feature).
    eval_cost : bool, default False
        Add the split-evaluation cost of the costs object (``split``) to the cost term.
    gap_tol : float, default 1e-4
        Relative duality gap at which the solver stops.
    max_iter : int, default 500
        Dual iterations per solve.
    time_limit : float, optional
        Seconds per solve.
    bisect_steps : int, default 30
        Bisection steps on ``log(lam)`` when a budget is given.
    progress : bool, optional
        Show a tqdm progress bar (dual iterations, with the current lambda and gap). ``None``
        (default): at once when stderr is a terminal, otherwise once the fit has run 2 s.
    scoring : None, str or callable, default None
        Validation metric (greater is better) that chooses among the budget search's prunings
        within the budget, and that ``min_score`` bounds: ``None`` is accuracy for classifiers
        (R^2 otherwise); a scikit-learn scorer name (``"roc_auc"``, ``"neg_log_loss"``,
        ``"balanced_accuracy"``, ...; ``"auc"``, ``"log_loss"`` accepted) or a callable
        ``scorer(estimator, X, y)``. Scored on ``(X_valid, y_valid)``, or on ``(X, y)`` when
        ``y_valid`` is not given.
    min_score : float, "auto" or None, default "auto"
        Floor on that score. ``"auto"``: the best constant model's score plus half the way to
        the unpruned model's (a pruning must keep at least half of the model's lift over a
        constant); ``None``: no floor. With ``budget``, no pruning below the floor is returned
        (``ValueError`` naming the metric, the floor and what was reached); with ``lam``, a
        ``UserWarning``.
    relinearize : int, default 0
        Boosted models: re-linearize the loss surrogate around the current pruning and re-solve,
        at most this many times per lambda (until the pruning repeats); the pruning with the
        smallest true training objective (loss + lam x cost) is kept. 0: the one-shot
        surrogate around the full model. Off by default: on the measured models it found no
        better pruning and doubled the time (docs/budgetprune_design.md).
    method : {"auto", "program", "drop_refit"}, default "auto"
        ``"program"``: the pruning program above. ``"drop_refit"``: drop whole features and
        refit the leaf values (:class:`FeatureDropRefit`, boosted models with a ``budget`` only;
        needs ``X_valid`` and ``y_valid``). ``"auto"``: ``"drop_refit"`` for a boosted model
        with a ``budget`` fitted with validation labels ``y_valid``, ``"program"`` otherwise
        (random forests, ``lam``, no validation labels). On boosted models
        the program collapses subtrees of single trees, which the other trees' outputs were
        fitted around; it is slow and rarely finds a useful pruning (docs/budgetprune.md).

    Attributes
    ----------
    method_ : str
        The method used (``"program"`` or ``"drop_refit"``).
    drop_refit_ : FeatureDropRefit
        With ``method_ == "drop_refit"``: the fitted estimator that did the work; the
        attributes ``result_`` (its :class:`FeatureDropResult`), ``ensemble_``,
        ``model_string_``, ``booster_``, ``scoring_``, ``score_``, ``score_full_``,
        ``score_constant_``, ``min_score_``, ``costs_`` and ``n_features_in_`` are set from it;
        the program's attributes (``lam_``, ``collapsed_``, ``setup_``, ``path_``, ``search_``)
        are not.
    result_ : PruneResult
        The solver's result at ``lam_``.
    lam_ : float
        The lambda used.
    collapsed_ : ndarray of int64
        Internal nodes (pre-order global indices) turned into leaves.
    model_string_ : str
        The pruned model as LightGBM model text (``ensemble_.to_model_string()``).
    booster_ : lightgbm.Booster
        The pruned model loaded in LightGBM.
    ensemble_ : TreeEnsemble
        The pruned model: ``TreeEnsemble.from_booster(model).collapse(collapsed_)``.
    setup_ : BudgetPruneSetup
        The program and routing, for re-solving at other lambdas.
    path_ : list of tuple
        ``(lam, average cost, error term, status)`` of each solve (bisection history;
        ``status`` a :class:`~budget_extras.core.Status`).
    search_ : list of dict
        Each candidate pruning (per lambda, after re-linearization): ``lam``, ``cost``,
        ``score`` (validation, ``scoring``), ``status``.
    scoring_ : str
        Name of the validation metric (``scoring`` resolved).
    score_ : float
        Validation score of the returned pruning; ``score_full_``, ``score_constant_`` and
        ``min_score_`` the unpruned model's, the best constant model's and the floor applied.
    """

    _best: tuple[tuple[float, float, float], PruneResult] | None
    #: The parameter table (``core._params``), checked before every fit.
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "model": ["no_validation"],
        "lam": [Interval(numbers.Real, 0, None, closed="left"), None],
        "budget": [Interval(numbers.Real, 0, None, closed="left"), None],
        "costs": ["no_validation"],
        "error_source": [Options(ERROR_SOURCES)],
        "error": [Options(("misclassification", "loss"))],
        "eval_cost": ["boolean"],
        "gap_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "bisect_steps": [Interval(numbers.Integral, 1, None, closed="left")],
        "progress": ["boolean", None],
        "scoring": ["no_validation"],
        "min_score": [Options(("auto",)), Interval(numbers.Real, None, None, closed="neither"), None],
        "relinearize": [Interval(numbers.Integral, 0, None, closed="left")],
        "method": [Options(("auto", "program", "drop_refit"))],
    }

    def __init__(
        self,
        model: Any = None,
        *,
        lam: float | None = None,
        budget: float | None = None,
        costs: Any = None,
        error_source: str = "train",
        error: str = "misclassification",
        eval_cost: bool = False,
        gap_tol: float = 1e-4,
        max_iter: int = 500,
        time_limit: float | None = None,
        bisect_steps: int = 30,
        progress: bool | None = None,
        scoring: Any = None,
        min_score: Any = "auto",
        relinearize: int = 0,
        method: str = "auto",
    ) -> None:
        self.model = model
        self.lam = lam
        self.budget = budget
        self.costs = costs
        self.error_source = error_source
        self.error = error
        self.eval_cost = eval_cost
        self.gap_tol = gap_tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.bisect_steps = bisect_steps
        self.progress = progress
        self.scoring = scoring
        self.min_score = min_score
        self.relinearize = relinearize
        self.method = method

    def _params_iv(self) -> None:
        """Refuse a missing model and a fit with both or neither of lam and budget.

        The parameter table checks each parameter alone before any work.
        """
        if self.model is None:
            raise ValueError(
                "BudgetPrune needs the LightGBM model to prune: BudgetPrune(model, lam=... or budget=...)."
            )
        if (self.lam is None) == (self.budget is None):
            raise ValueError(
                "BudgetPrune needs exactly one of 'lam' and 'budget'. "
                f"Got lam={self.lam!r}, budget={self.budget!r}."
            )

    def fit(self, X: Any, y: Any, *, X_valid: Any = None, y_valid: Any = None) -> BudgetPrune:
        """Prune the constructor's ``model`` for the costs ``costs``.

        The fit runs on a private copy; its fitted attributes replace this estimator's only when
        it succeeds, so a refused fit leaves an earlier fit untouched.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Training rows (define the error terms).
        y : array-like of shape (n_rows,)
            Training labels as the model was trained on them: 0/1, class indices or regression
            targets.
        X_valid : array-like or pandas.DataFrame, optional
            Validation rows: which features each row would acquire, hence the cost the
            budget bounds. Default: ``X``.
        y_valid : array-like of shape (n_valid,), optional
            Validation labels: the rows ``scoring`` is computed on are ``(X_valid, y_valid)``;
            without them, ``(X, y)``.

        Returns
        -------
        self : BudgetPrune
        """
        return fit_in_one_step(self, lambda work: work._fit(X, y, X_valid, y_valid))

    def _resolve_method(self, y_valid: Any) -> str:
        """``"program"`` or ``"drop_refit"`` (see the ``method`` parameter)."""
        if self.method == "program":
            return "program"
        boosted = not TreeEnsemble.from_booster(check_booster(self.model, owner="BudgetPrune.fit")).average_output
        if self.method == "drop_refit" and (self.budget is None or not boosted):
            raise ValueError("method='drop_refit' needs a boosted model and a 'budget' (not 'lam').")
        return "drop_refit" if boosted and self.budget is not None and y_valid is not None else "program"

    def _fit_drop_refit(self, X: Any, y: Any, X_valid: Any, y_valid: Any) -> None:
        """Fit with ``method_ == "drop_refit"``: a :class:`FeatureDropRefit` does the work."""
        fdr = FeatureDropRefit(self.model, budget=self.budget, costs=self.costs, scoring=self.scoring)
        fdr.fit(X, y, X_valid=X_valid, y_valid=y_valid)
        self.method_ = "drop_refit"
        self.drop_refit_ = fdr
        for name in ("ensemble_", "model_string_", "booster_", "result_", "scoring_", "score_", "score_full_",
                     "score_constant_", "costs_", "n_features_in_"):
            setattr(self, name, getattr(fdr, name))
        if isinstance(self.min_score, str) and self.min_score == "auto":
            lift = max(fdr.score_full_ - fdr.score_constant_, 0.0)
            floor: float | None = fdr.score_constant_ + 0.5 * lift
        else:
            floor = None if self.min_score is None else float(self.min_score)
        self.min_score_ = floor
        if self.min_score_ is not None and fdr.score_ < self.min_score_:
            raise ValueError(
                f"BudgetPrune refuses the model for budget={float(self.budget):.6g}: dropping features to meet "  # type: ignore[arg-type]
                f"it leaves {self.scoring_}={fdr.score_:.4g} on validation, below the floor "
                f"min_score={self.min_score_:.4g} (unpruned {fdr.score_full_:.4g}, best constant model "
                f"{fdr.score_constant_:.4g}). Raise the budget, or pass min_score=None to accept it."
            )

    def _fit(self, X: Any, y: Any, X_valid: Any, y_valid: Any) -> None:
        """Fit this private copy (the body of :meth:`fit`)."""
        if y is None:
            raise ValueError("The 'y' argument of BudgetPrune.fit is required (training labels). Got None.")
        self._params_iv()
        if self._resolve_method(y_valid) == "drop_refit":
            self._fit_drop_refit(X, y, X_valid, y_valid)
            return
        self.method_ = "program"
        setup = prepare(
            self.model,
            X,
            y,
            X if X_valid is None else X_valid,
            self.costs,
            error_source=self.error_source,
            error=self.error,
            eval_cost=self.eval_cost,
            arg_names=("X", "y", "X" if X_valid is None else "X_valid"),
        )
        self.setup_ = setup
        self.costs_ = as_feature_costs(
            self.costs, n_features=setup.ensemble.n_features, feature_names=setup.ensemble.feature_names
        )
        self.n_features_in_ = setup.ensemble.n_features
        self.path_: list[tuple[float, float, float, int]] = []
        self.search_: list[dict[str, Any]] = []
        self._scoring_setup(setup, X, y, X_valid, y_valid)
        self._bar = Progress(self.progress, "BudgetPrune")
        self._capped: list[float] = []
        try:
            if self.lam is not None:
                result = self._solve(setup.problem, float(self.lam), None)
                self.score_ = self._score_of(result.collapsed)
                if self.min_score_ is not None and self.score_ < self.min_score_:
                    warnings.warn(
                        f"BudgetPrune: the pruning at lam={float(self.lam):.6g} scores {self.scoring_}="
                        f"{self.score_:.4g} on validation, below the floor min_score={self.min_score_:.4g} "
                        f"(unpruned {self.score_full_:.4g}, best constant model {self.score_constant_:.4g}).",
                        UserWarning,
                        stacklevel=5,
                    )
            else:
                result = self._bisect(setup.problem, float(self.budget))  # type: ignore[arg-type]
        finally:
            self._bar.close()
        if self._capped:
            lams = ", ".join(f"{v:.6g}" for v in self._capped[:8])
            more = f" and {len(self._capped) - 8} more" if len(self._capped) > 8 else ""
            chosen = " (including the returned one)" if result.status == Status.LIMIT else ""
            limit = f"max_iter={self.max_iter}" + (
                "" if self.time_limit is None else f" or the time limit time_limit={self.time_limit:g} s"
            )
            warnings.warn(
                f"BudgetPrune: the solve at lam={lams}{more}{chosen} stopped at the iteration limit "
                f"{limit} before certifying gap_tol={self.gap_tol:g}; its pruning is feasible and "
                "exactly scored but not proven optimal. Raise max_iter (or time_limit) to certify it.",
                UserWarning,
                stacklevel=5,
            )
        self.result_ = result
        self.lam_ = result.lam
        self.collapsed_ = result.collapsed
        self.ensemble_ = setup.ensemble.collapse(result.collapsed)
        self.model_string_ = self.ensemble_.to_model_string()
        import lightgbm as lgb

        self.booster_ = lgb.Booster(model_str=self.model_string_)

    def save_model(self, path: str | os.PathLike[str]) -> None:
        """Write the pruned model as LightGBM model text (``lightgbm.Booster(model_file=path)`` loads it).

        Parameters
        ----------
        path : str or os.PathLike
            File to write.
        """
        check_is_fitted(self)
        self.ensemble_.save_model(path)

    def cost_report(self, X: Any, costs: Any = None) -> CostReport:
        """Return the core's cost accounting of the pruned model on the rows ``X``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to account.
        costs : FeatureCosts, list, dict, pandas.Series or CSV path, optional
            Default: the costs the model was pruned for.

        Returns
        -------
        CostReport
        """
        check_is_fitted(self)
        return cost_report(self.ensemble_, X, self.costs_ if costs is None else costs)

    def decision_function(self, X: Any) -> np.ndarray:
        """Raw scores of the pruned model (same as :meth:`predict_raw`).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of float64, shape (n_rows,) or (n_rows, n_classes)
        """
        return self.predict_raw(X)

    def predict(self, X: Any) -> np.ndarray:
        """Predictions of the pruned model: class labels for classifiers, values otherwise.

        Labels are ``0/1`` for binary and the class index for multiclass models (as the model
        was trained); other objectives return ``booster_.predict(X)``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of shape (n_rows,)
        """
        check_is_fitted(self)
        if self.method_ == "drop_refit":
            return self.drop_refit_.predict(X)
        objective = objective_name(self.setup_.ensemble)
        raw = self.predict_raw(X)
        if objective in ("multiclass", "multiclassova"):
            return np.argmax(raw, axis=1)
        if objective == "binary":
            return (raw > 0).astype(np.int64)
        return np.asarray(self.booster_.predict(self.setup_.ensemble.check_X(X)), dtype=np.float64)

    def _scoring_setup(self, setup: BudgetPruneSetup, X: Any, y: Any, X_valid: Any, y_valid: Any) -> None:
        """Rows, labels and floor of the validation score (``scoring``, ``min_score``)."""
        forest = setup.ensemble
        self.scoring_, self._score_fn = resolve_scoring(self.scoring, forest)
        if y_valid is not None or X_valid is None:
            rows = forest.check_X(X if X_valid is None else X_valid)
            labels = check_finite_labels(np.asarray(y if X_valid is None else y_valid, dtype=np.float64),
                                         name="y" if X_valid is None else "y_valid", owner="BudgetPrune.fit")
            if labels.shape[0] != rows.shape[0]:
                raise ValueError(
                    f"y_valid has {labels.shape[0]} labels but X_valid has {rows.shape[0]} rows."
                )
            leaves = setup.valid_leaves
        else:  # validation rows without labels: score on the training rows
            rows = forest.check_X(X)
            assert setup.y_train is not None  # fit always has labels
            labels = setup.y_train
            leaves = setup.train_leaves if setup.train_leaves is not None else leaf_nodes(forest, setup.booster, rows)
        self._score_rows, self._score_y, self._score_leaves = rows, labels, leaves
        assert setup.y_train is not None
        self.score_full_ = self._score_fn(raw_from_leaves(forest, leaves), rows, labels)
        self.score_constant_ = self._score_fn(constant_raw(forest, setup.y_train, rows.shape[0]), rows, labels)
        if isinstance(self.min_score, str):
            if self.min_score != "auto":
                raise ValueError(
                    f"The 'min_score' parameter must be a number, 'auto' or None. Got {self.min_score!r}."
                )
            lift = max(self.score_full_ - self.score_constant_, 0.0)
            self.min_score_ = self.score_constant_ + 0.5 * lift
        elif self.min_score is None:
            self.min_score_ = None
        else:
            self.min_score_ = float(self.min_score)

    def _score_of(self, collapsed: np.ndarray) -> float:
        forest = self.setup_.ensemble
        raw = raw_from_leaves(forest, pruned_leaf_map(forest, collapsed)[self._score_leaves])
        return self._score_fn(raw, self._score_rows, self._score_y)

    def _solve_once(self, problem: PruneProblem, lam: float, beta0: np.ndarray | None) -> PruneResult:
        def tick(it: int, upper: float, lower: float) -> None:
            self._bar.tick(lam=f"{lam:.3g}", gap=f"{upper - lower:.2e}")

        res = solve_primal_dual(
            problem,
            lam,
            gap_tol=self.gap_tol,
            max_iter=self.max_iter,
            time_limit=self.time_limit,
            beta0=beta0,
            progress=tick,
        )
        self.path_.append((lam, res.cost, res.error_term, res.status))
        if res.status == Status.LIMIT and lam not in self._capped:
            self._capped.append(lam)
        return res

    def _solve(self, problem: PruneProblem, lam: float, beta0: np.ndarray | None) -> PruneResult:
        """One lambda; for boosted models re-linearized around the current pruning (``relinearize``)."""
        res = self._solve_once(problem, lam, beta0)
        self._iterates = [res]  # every pruning solved for this lambda (budget candidates)
        setup = self.setup_
        forest = setup.ensemble
        if forest.average_output or not self.relinearize or setup.train_leaves is None:
            return res
        tr, y = setup.train_leaves, setup.y_train
        assert y is not None

        def true_objective(r: PruneResult) -> float:
            raw = raw_from_leaves(forest, pruned_leaf_map(forest, r.collapsed)[tr])
            return mean_loss(forest, y, raw) + lam * (r.acquisition_term + r.evaluation_term)

        best, best_obj = res, true_objective(res)
        seen = {res.collapsed.tobytes()}
        for _ in range(int(self.relinearize)):
            pmap = pruned_leaf_map(forest, res.collapsed)[tr]
            own = forest.value[pmap]
            raw = raw_from_leaves(forest, pmap)
            err = gbdt_surrogate_error(forest, setup.booster, None, y, tr, raw=raw, own=own)
            res = self._solve_once(replace(problem, node_error=err), lam, res.beta)
            self._iterates.append(res)
            obj = true_objective(res)
            if obj < best_obj:
                best, best_obj = res, obj
            key = res.collapsed.tobytes()
            if key in seen:
                break
            seen.add(key)
        return best

    def _bisect(self, problem: PruneProblem, budget: float) -> PruneResult:
        """Search lambda for the budget; return the best-scoring pruning within it (``scoring``).

        A bisection on ``log lam`` for the smallest lambda whose cost is within the budget, on the
        first solve of each lambda (the one fixed program, cost monotone in lambda); every pruning
        solved on the way (re-linearization iterates included) is a candidate, and the one with
        the best validation score within the budget and at or above ``min_score`` is returned.
        """

        def cost(r: PruneResult) -> float:
            return r.cost

        def run(lam: float, beta0: np.ndarray | None) -> PruneResult:
            self._solve(problem, lam, beta0)
            # every iterate of the re-linearization is a feasible pruning: all are candidates
            for it in {x.collapsed.tobytes(): x for x in self._iterates}.values():
                sc = self._score_of(it.collapsed)
                self.search_.append({"lam": lam, "cost": cost(it), "score": sc, "status": it.status})
                if fits_budget(cost(it), budget):
                    key = (sc, -cost(it), -lam)
                    if self._best is None or key > self._best[0]:
                        self._best = (key, it)
            # the bisection follows the first solve of each lambda: one fixed program (the
            # surrogate around the full model), whose exact optimum's cost is monotone in lambda
            return self._iterates[0]

        self._best = None
        res = run(0.0, None)
        if not fits_budget(cost(res), budget):
            total = float(problem.pair_cost.sum() + problem.node_eval.max(initial=0.0))
            lam_hi = 1.0 / max(total, 1e-12)
            hi = run(lam_hi, None)
            if fits_budget(cost(hi), budget):  # bracket from above: shrink lambda until the budget is missed
                lam_lo = lam_hi / 4.0
                for _ in range(60):
                    lo = run(lam_lo, hi.beta)
                    if not fits_budget(cost(lo), budget):
                        break
                    lam_hi, hi, lam_lo = lam_lo, lo, lam_lo / 4.0
                else:
                    lam_lo = lam_hi
            else:  # bracket from below: grow lambda until the budget is met
                for _ in range(200):
                    lam_lo, lam_hi = lam_hi, lam_hi * 4.0
                    hi = run(lam_hi, hi.beta)
                    if fits_budget(cost(hi), budget):
                        break
            for _ in range(self.bisect_steps):
                if lam_hi / max(lam_lo, 1e-300) - 1.0 < 1e-6:
                    break
                mid = float(np.sqrt(lam_lo * lam_hi))
                r = run(mid, hi.beta)
                if fits_budget(cost(r), budget):
                    lam_hi, hi = mid, r
                else:
                    lam_lo = mid
        return self._select(budget)

    def _select(self, budget: float) -> PruneResult:
        feasible = [c for c in self.search_ if fits_budget(c["cost"], budget)]
        if self._best is None:
            raise ValueError(
                f"BudgetPrune: no pruning found within budget={budget:.6g} (lowest cost reached "
                f"{min(c['cost'] for c in self.search_):.6g})."
            )
        (score, _, _), r = self._best
        if self.min_score_ is not None and score < self.min_score_:
            above = [c for c in self.search_ if c["score"] >= self.min_score_]
            cheapest = (
                f"; the cheapest pruning found at or above the floor costs {min(c['cost'] for c in above):.6g}"
                if above
                else ""
            )
            raise ValueError(
                f"BudgetPrune refuses the pruning for budget={budget:.6g}: the best of the "
                f"{len(feasible)} prunings within the budget scores {self.scoring_}={score:.4g} on "
                f"validation, below the floor min_score={self.min_score_:.4g} (unpruned model "
                f"{self.score_full_:.4g}, best constant model {self.score_constant_:.4g}; 'auto' is "
                f"halfway between them){cheapest}. Raise the budget, or pass min_score=None to accept it."
            )
        self.score_ = score
        return r

    def predict_raw(self, X: Any) -> np.ndarray:
        """Raw scores of the pruned model, as ``booster_.predict(X, raw_score=True)``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of float64, shape (n_rows,) or (n_rows, n_classes)
        """
        check_is_fitted(self)
        if self.method_ == "drop_refit":
            return self.drop_refit_.predict_raw(X)
        setup = self.setup_
        leaves = leaf_nodes(setup.ensemble, setup.booster, X)
        return raw_from_leaves(setup.ensemble, pruned_leaf_map(setup.ensemble, self.collapsed_)[leaves])

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities as the average of the pruned leaves' class distributions (paper, step 6).

        Random forests only (with ``method_ == "drop_refit"``: the boosted model's own
        probabilities); for multiclass each tree's positive share votes for its class and the
        votes are normalized.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of float64, shape (n_rows, n_classes)
        """
        check_is_fitted(self)
        if self.method_ == "drop_refit":
            return self.drop_refit_.predict_proba(X)
        setup = self.setup_
        if setup.counts is None:
            raise ValueError("predict_proba needs a random forest (class counts); use predict_raw for GBDT.")
        leaves = pruned_leaf_map(setup.ensemble, self.collapsed_)[leaf_nodes(setup.ensemble, setup.booster, X)]
        share = setup.counts[:, 1] / np.maximum(setup.counts.sum(axis=1), 1.0)
        votes = share[leaves]
        forest = setup.ensemble
        if forest.num_tree_per_iteration == 1:
            p = votes.mean(axis=1)
            return np.stack([1 - p, p], axis=1)
        out = np.zeros((votes.shape[0], forest.num_tree_per_iteration))
        for c in range(forest.num_tree_per_iteration):
            out[:, c] = votes[:, forest.tree_class == c].mean(axis=1)
        return out / np.maximum(out.sum(axis=1, keepdims=True), 1e-300)

