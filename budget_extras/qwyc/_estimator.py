"""QWYC estimator: fit an early-exit plan on unlabeled calibration rows, predict with it."""

from __future__ import annotations

import copy
import math
import numbers
import os
import warnings
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..core._ensemble import TreeEnsemble
from ..core._fit_state import fit_in_one_step
from ..core._params import Interval, Options, check_scalar
from ..core._validation import check_booster
from . import _model, _rival, _scores
from ._baselines import pred_early_stop_plan
from ._calibration import CROSSFIT, Calibrated, calibrate, correct
from ._format import QWYCPlan, lf_lines, read_qwyc_plan, write_qwyc_plan
from ._plans import full_labels, prediction, trace
from ._results import QWYCPrediction, QWYCResult, few_rows, qwyc_result
from ._solver import SHIFTS, PlanSettings

__all__ = ["QWYC", "QWYCPrediction", "QWYCResult"]

_ORDERS = ("greedy", "training", "random", "individual_mse", "greedy_mse")
_MODES = ("two_sided", "negative_only")
_SCORES = ("auto", "partial", "calibrated")
_RIVALS = ("pred_early_stop",)
_N_FOLDS = Interval(numbers.Integral, 2, None, closed="left")
#: Default base budget of the cross-fitted plans, as a share of ``alpha`` (docs/qwyc.md, "holdout").
CROSSFIT_FIT = 0.75


class QWYC(BaseEstimator):
    """Quit When You Can: optimized evaluation order and early-exit thresholds (docs/qwyc.md).

    Parameters
    ----------
    model : lightgbm.Booster, LGBMModel, TreeEnsemble, path or model text
        The additive binary or multiclass LightGBM ensemble to reorder (not modified).
    alpha : float, default=0.005
        Target share of rows whose early-exit label may differ from the full ensemble's: with
        held-out rows a guarantee in expectation over the calibration draw, without them a
        calibration-set bound.
    order : {"greedy", "training", "random", "individual_mse", "greedy_mse"} or array-like
        ``"greedy"``: the paper's joint optimization (Algorithm 1); the others fix the order
        (Algorithm 2 thresholds); an array is a permutation of the iterations.
    mode : {"two_sided", "negative_only"}, default="two_sided"
        ``"negative_only"``: filter-and-score, only early negative decisions.
    holdout : "crossfit", float or None, default="crossfit"
        Rows that choose the conformal shift ``lambda_`` of all thresholds (``_calibration``):
        ``"crossfit"``: each of ``n_folds`` folds is scored by the plan fit on the other folds
        and the plan fit on all rows is shifted; a number: that share is held out, the plan is
        fit on the rest; ``None`` or 0: the paper's in-sample fit, no shift.
    costs : None, array-like of shape (n_iterations,), "splits", or feature costs, default=None
        Cost of each iteration for the greedy order: uniform, explicit, the mean splits its
        trees evaluate, or the mean cost ``cost_report`` charges for its trees alone (feature
        costs: ``FeatureCosts``, dict or Series by name, costs CSV path).
    decision_threshold : float, default=0.0
        Binary raw-score threshold of the label (0 = probability 0.5).
    random_state : int or None, default=0
        Seed of the folds (or split), the score choice and the ``"random"`` order.
    progress : bool, default=False
        Show a progress bar during the greedy search.
    margin : float, default=0.0
        Robustness margin (raw score) of the base thresholds: a row counts as decided only
        ``margin`` beyond every calibration row of the other label (0: the paper's rule).
    alpha_fit : float or None, default=None
        Disagreement budget of the base thresholds (default ``0.75 * alpha`` with the cross-fitted
        shift, ``holdout="crossfit"`` without ``X_valid``; else ``alpha``).
    n_folds : int, default=5
        Folds of ``holdout="crossfit"`` (an integer >= 2, checked only there).
    shift : {"constant", "residual_std", "active_residual_std", "extreme_spacing"} or array-like
        Shape ``sigma_r`` of the shift: position ``r`` moves by ``lambda_ * sigma_r``
        (docs/qwyc_design.md); an array gives one positive scale per iteration.
    scores : {"auto", "partial", "calibrated"}, default="auto"
        Score of a row that exits early (exits and labels do not depend on it): its partial
        raw score, or (binary) its partial score through a monotone map to the expected full
        score, fit per position on the calibration rows. ``"auto"``: on binary models the one
        of the two with the higher expected AUC on the calibration rows, cross-fitted (three
        folds of the maps, labels drawn from the full model's probabilities); partial on
        multiclass ones.
    rival : {"pred_early_stop"} or None, default="pred_early_stop"
        Binary models with ``mode="two_sided"``, ``decision_threshold=0`` and held-out rows:
        LightGBM's own ``pred_early_stop`` rule (training order, ``|score| > margin / 2`` every
        ``freq`` iterations) competes with the fitted plan on the held-out rows (out-of-fold with
        cross-fitting): at QWYC's changed answers there, the setting with the fewest trees is the
        plan when it needs no more trees than QWYC, or when QWYC's exit scores rank worse than
        its (expected AUC, no labels) even after QWYC's shift grows (docs/qwyc.md). ``None``:
        no contest.

    Attributes
    ----------
    result_ : QWYCResult
        Status, message (what ``alpha`` guarantees) and the plan's disagreement and mean trees.
    alpha_ : float
        The target of the fitted plan: ``alpha``, or the one last passed to :meth:`recalibrate`.
    plan_, base_plan_ : QWYCPlan
        The fitted plan, and its order and thresholds before the held-out shift.
    lambda_ : float
        The shift (0 without held-out rows, inf: never exit early): ``eps_pos_r = max(base
        eps_pos_r + lambda_ * sigma_r, threshold)``, ``eps_neg_r = min(base eps_neg_r - lambda_ *
        sigma_r, threshold)``.
    shift_scale_ : ndarray of float64, shape (n_positions,)
        ``sigma_r`` per plan position.
    calibration_disagreement_ : float
        Disagreement with the full ensemble on all calibration rows.
    scores_ : {"partial", "calibrated"}
        The scores ``scores`` resolved for this model.
    score_choice_ : dict
        ``scores="auto"`` on a binary model: the cross-fitted expected AUC of each kind (else empty).
    score_maps_ : ScoreMaps or None
        Per-position knots of the calibrated score maps (``scores_ == "calibrated"``).
    rival_ : dict or None
        The contest with ``pred_early_stop`` (``rival``): ``"winner"`` (``"qwyc"`` or
        ``"pred_early_stop"``, with its ``freq`` and ``margin``) and ``"candidates"``, each plan
        measured on the held-out rows (mean cost, changed answers, expected AUC); None without one.
    """

    #: Private attributes that are part of the fitted state (see ``core._fit_state``).
    _fitted_private = ("_leaf_table",)
    #: The parameter table (``core._params``), checked before every fit.
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "model": ["no_validation"],
        "alpha": [Interval(numbers.Real, 0, 1, closed="left")],
        "order": [Options(_ORDERS), "array-like"],
        "mode": [Options(_MODES)],
        "holdout": [Options((CROSSFIT,)), None, Interval(numbers.Real, 0, 1, closed="left")],
        "costs": ["no_validation"],
        "decision_threshold": [Interval(numbers.Real, None, None, closed="neither")],
        "random_state": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "progress": ["boolean"],
        "margin": [Interval(numbers.Real, 0, None, closed="left")],
        "alpha_fit": [Interval(numbers.Real, 0, 1, closed="left"), None],
        "shift": [Options(SHIFTS), "array-like"],
        "scores": [Options(_SCORES)],
        "n_folds": ["no_validation"],  # used (and checked in fit) only with holdout="crossfit"
        "rival": [Options(_RIVALS), None],
    }

    def __init__(
        self,
        model: Any = None,
        *,
        alpha: float = 0.005,
        order: Any = "greedy",
        mode: str = "two_sided",
        holdout: float | str | None = CROSSFIT,
        costs: Any = None,
        decision_threshold: float = 0.0,
        random_state: int | None = 0,
        progress: bool = False,
        margin: float = 0.0,
        alpha_fit: float | None = None,
        shift: Any = "constant",
        scores: str = "auto",
        n_folds: int = 5,
        rival: str | None = "pred_early_stop",
    ) -> None:
        self.model = model
        self.alpha = alpha
        self.order = order
        self.mode = mode
        self.holdout = holdout
        self.costs = costs
        self.decision_threshold = decision_threshold
        self.random_state = random_state
        self.progress = progress
        self.margin = margin
        self.alpha_fit = alpha_fit
        self.shift = shift
        self.scores = scores
        self.n_folds = n_folds
        self.rival = rival

    # ------------------------------------------------------------------ fitting
    def _X(self, X: Any, name: str = "X") -> npt.NDArray[np.float64]:
        """``X`` through the core's one input path (shape, names, pandas categoricals)."""
        return self.ensemble_.check_X(X, name=name)

    def _outputs(self, X: Any, name: str = "X") -> npt.NDArray[np.float64]:
        """Per-iteration raw outputs of ``X``, shape ``(n_rows, n_iterations, n_classes)``."""
        return _model.outputs(self.booster_, self._leaf_table, self.num_tree_per_iteration_, self._X(X, name))

    def _load(self, model: Any) -> str:
        """Set the model's fitted attributes (text, booster, ensemble, leaf table) from ``model``."""
        text = _model.model_text(model)
        self.model_text_ = text
        self.booster_ = check_booster(text)
        self.ensemble_ = TreeEnsemble.from_model_string(text)
        self.num_tree_per_iteration_ = self.ensemble_.num_tree_per_iteration
        self._leaf_table = _model.per_leaf(self.ensemble_, self.ensemble_.value)
        return text

    def fit(self, X: Any, y: Any = None, *, X_valid: Any = None, y_valid: Any = None) -> QWYC:
        """Fit the plan of the constructor's ``model`` on calibration rows ``X`` (no labels needed).

        The fit runs on a private copy; its fitted attributes replace this estimator's only when
        it succeeds, so a refused fit leaves an earlier fit untouched.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Calibration rows.
        y : None
            Ignored: QWYC needs no labels, it agrees with the full model whatever the truth.
        X_valid : array-like of shape (n_valid, n_features), optional
            Explicit held-out rows for the conformal correction (then ``holdout`` is not
            used and all of ``X`` chooses the order). They should be exchangeable with
            the rows the plan will be used on; ``X`` need not be (e.g. training rows).
        y_valid : None
            Ignored.

        Returns
        -------
        self : QWYC
        """
        del y, y_valid
        return fit_in_one_step(self, lambda work: work._fit(X, X_valid))

    def _settings(self, crossfit: bool = False) -> PlanSettings:
        """Return the parameters that shape the plan, resolved.

        ``alpha_fit`` defaults to ``CROSSFIT_FIT * alpha_`` when the shift is cross-fitted (``crossfit``),
        else to ``alpha_``.
        """
        default_fit = (CROSSFIT_FIT if crossfit else 1.0) * self.alpha_
        return PlanSettings(
            order=self.order, mode=self.mode, alpha=self.alpha_,
            alpha_fit=default_fit if self.alpha_fit is None else float(self.alpha_fit),
            threshold=float(self.decision_threshold), margin=float(self.margin), shift=self.shift,
            progress=bool(self.progress),
        )

    def _fit(self, X: Any, X_valid: Any) -> None:
        """Fit this private copy (the body of :meth:`fit`)."""
        if self.model is None:
            raise ValueError("QWYC needs the LightGBM model to reorder: QWYC(model, alpha=...).")
        if self.holdout == CROSSFIT and self.n_folds not in _N_FOLDS:  # a cross-parameter rule
            raise ValueError(
                f"The 'n_folds' parameter of QWYC must be an integer >= 2 with holdout={CROSSFIT!r}. "
                f"Got {self.n_folds!r} instead."
            )
        self.alpha_ = float(self.alpha)
        self._load(self.model)
        if self.scores == "calibrated" and self.num_tree_per_iteration_ > 1:
            raise ValueError(
                "The 'scores' parameter 'calibrated' applies to binary models only; this model is "
                "multiclass: use scores='partial' (partial raw scores of the exit position)."
            )
        X = self._X(X)
        outputs = self._outputs(X)
        n_valid = 0
        if X_valid is not None:
            outputs = np.concatenate([outputs, self._outputs(X_valid, "X_valid")], axis=0)
            n_valid = len(outputs) - len(X)
        n = outputs.shape[0]
        if n < 2:
            raise ValueError(f"QWYC.fit needs at least 2 calibration rows. Got {n}.")
        if outputs.shape[2] > 1 and self.mode != "two_sided":
            raise ValueError("The 'mode' parameter 'negative_only' applies to binary models only.")
        rng = np.random.default_rng(self.random_state)
        costs = _model.iteration_costs(self.costs, self.ensemble_, self.booster_, X)
        self.iteration_costs_ = costs
        cal = calibrate(
            self._settings(crossfit=self.holdout == CROSSFIT and not n_valid), outputs, costs, holdout=self.holdout,
            n_folds=self.n_folds, n_valid=n_valid, rng=rng,
        )
        self.base_plan_, self.shift_scale_, self.plan_ = cal.base_plan, cal.shift_scale, cal.plan
        self.lambda_, self.n_holdout_, self.holdout_disagreement_ = cal.lambda_, cal.n_holdout, cal.holdout_disagreement
        choice = self._contest(cal, outputs, costs, rng)
        self.scores_, self.score_choice_ = self._resolve_scores(outputs, rng) if choice is None else choice
        self._fit_score_maps(outputs)
        res = self.predict_outputs(outputs)
        self.calibration_disagreement_ = float(np.mean(res.labels != self.full_labels_outputs(outputs)))
        self.mean_trees_evaluated_ = float(res.trees_evaluated.mean())
        self.n_features_in_ = self.ensemble_.n_features
        self.result_ = self._result()
        if few_rows(self.alpha_, self.n_holdout_):
            warnings.warn(f"QWYC: {self.result_.message}", UserWarning, stacklevel=5)

    def _contest(
        self, cal: Calibrated, outputs: npt.NDArray[np.float64], costs: npt.NDArray[np.float64],
        rng: np.random.Generator,
    ) -> tuple[str, dict[str, float]] | None:
        """Run the contest with ``pred_early_stop`` (``_rival``); set the winner's plan and ``rival_``.

        Returns the winner's resolved scores when the contest measured them (else None).
        """
        self.rival_ = None
        if (self.rival is None or outputs.shape[2] > 1 or self.mode != "two_sided" or cal.n_holdout == 0
                or float(self.decision_threshold) != 0.0):
            return None
        blocks, y = cal.held_out_blocks(outputs)

        y_all = full_labels(cal.base_plan, outputs) if cal.fold is not None else None

        def qwyc_at(lam: float) -> _rival.Candidate:
            plan, done, labels = cal.at(lam, blocks)
            wrong = int(np.sum(labels != y))
            # cross-fitted: the all-rows plan changes fewer answers on new rows than its fold plans
            level = wrong if y_all is None else min(wrong, int(np.sum(trace(plan, outputs).labels != y_all)))
            return _rival.Candidate(plan, lam, _rival.exit_cost(costs, plan, done), wrong, "qwyc", level=level)

        F = outputs[:, :, 0]
        full = F.sum(axis=1)

        def auc_of(c: _rival.Candidate) -> _rival.Candidate:
            p, thr = c.plan, c.plan.decision_threshold
            if c.kind == "pred_early_stop" or F.shape[0] < 6:  # LightGBM's own scores: partial
                auc = _scores.expected_auc(trace(p, outputs).scores, full)
                return replace(c, expected_auc=auc, score_choice={"partial": auc}, scores="partial")
            fold, maps = _scores.fold_maps(F, p.order, p.eps_neg, p.eps_pos, threshold=thr, n_folds=3,
                                           rng=copy.deepcopy(rng))  # the folds of scores="auto"'s comparison
            crit = _scores.criteria(F, p.order, p.eps_neg, p.eps_pos, threshold=thr, fold=fold, maps=maps)
            kind = self.scores if self.scores != "auto" else (
                "partial" if crit["partial"] > crit["calibrated"] else "calibrated")
            return replace(c, expected_auc=max(crit.values()), score_choice=crit, scores=kind)

        win, measured = _rival.contest(qwyc_at, cal.lambda_, np.concatenate(blocks)[:, :, 0], costs, auc_of)
        n_iter = outputs.shape[1]
        if win.kind == "pred_early_stop":
            self.base_plan_ = replace(pred_early_stop_plan(n_iter, freq=win.freq, margin=0.0), alpha=self.alpha_)
            self.shift_scale_ = np.ones(n_iter)
        self.plan_, self.lambda_ = replace(win.plan, alpha=self.alpha_), win.lambda_
        self.holdout_disagreement_ = win.wrong / len(y)
        self.rival_ = {"winner": win.summary(), "candidates": [c.summary() for c in measured]}
        if self.scores != "auto" or "calibrated" not in win.score_choice:
            return None
        return win.scores, dict(win.score_choice)

    def _resolve_scores(
        self, outputs: npt.NDArray[np.float64], rng: np.random.Generator, plan: QWYCPlan | None = None
    ) -> tuple[str, dict[str, float]]:
        """Return ``scores`` for this model: ``"auto"`` compares both kinds on the calibration rows, cross-fitted."""
        if self.scores == "partial" or self.num_tree_per_iteration_ > 1:
            return "partial", {}
        if self.scores == "calibrated":
            return "calibrated", {}
        p = self.plan_ if plan is None else plan
        return _scores.choose_scores(
            outputs[:, :, 0], p.order, p.eps_neg, p.eps_pos, threshold=p.decision_threshold, n_folds=3, rng=rng
        )

    def _fit_score_maps(self, outputs: npt.NDArray[np.float64]) -> None:
        """Fit ``score_maps_`` (``scores_ == "calibrated"``) on the outputs of calibration rows."""
        p = self.plan_
        self.score_maps_ = None if getattr(self, "scores_", "partial") != "calibrated" else _scores.fit_score_maps(
            outputs[:, :, 0], p.order, p.eps_neg, p.eps_pos, threshold=p.decision_threshold
        )

    def _result(self) -> QWYCResult:
        """Return the fit's outcome from its fitted attributes."""
        return qwyc_result(
            self.alpha_, self.lambda_, getattr(self, "calibration_disagreement_", math.nan),
            getattr(self, "holdout_disagreement_", math.nan), getattr(self, "mean_trees_evaluated_", math.nan),
            n_holdout=getattr(self, "n_holdout_", 0),
        )

    def recalibrate(self, X_holdout: Any, *, alpha: float | None = None) -> QWYC:
        """Refit the held-out correction on new rows, keeping the order and base thresholds.

        The hyperparameter ``alpha`` is not changed: the target used is stored in ``alpha_``
        (and in ``plan_.alpha``). If the refit raises, the earlier fit is left untouched.

        Parameters
        ----------
        X_holdout : array-like of shape (n_rows, n_features)
            Rows exchangeable with those the plan will be used on; none of them may
            have been used to fit the order.
        alpha : float, optional
            New disagreement target (default: keep ``alpha_``).

        Returns
        -------
        self : QWYC
        """
        check_is_fitted(self, "base_plan_")
        return self.recalibrate_outputs(self._outputs(X_holdout, "X_holdout"), alpha=alpha)

    def recalibrate_outputs(self, outputs: npt.NDArray[np.float64], *, alpha: float | None = None) -> QWYC:
        """:meth:`recalibrate` from precomputed per-iteration outputs of the held-out rows.

        Parameters
        ----------
        outputs : ndarray of float64, shape (n_rows, n_iterations, n_classes)
            Per-iteration raw outputs of the held-out rows (iteration ``j`` of row ``i``
            at ``outputs[i, j]``, in training order; one class for binary models).
        alpha : float, optional
            New disagreement target (default: keep ``alpha_``).

        Returns
        -------
        self : QWYC
        """
        check_is_fitted(self, "base_plan_")
        if alpha is not None:
            check_scalar(alpha, "alpha", self._parameter_constraints["alpha"], owner="QWYC")

        def step(work: QWYC) -> None:
            if alpha is not None:
                work.alpha_ = float(alpha)
            work.plan_, work.lambda_ = correct(work.base_plan_, work.shift_scale_, outputs, work.alpha_)
            work._fit_score_maps(outputs)
            work.n_holdout_ = len(outputs)
            res = work.predict_outputs(outputs)
            work.holdout_disagreement_ = float(np.mean(res.labels != work.full_labels_outputs(outputs)))
            work.result_ = work._result()

        return fit_in_one_step(self, step, from_fitted=True)

    # --------------------------------------------------------------- prediction
    def full_labels_outputs(self, outputs: npt.NDArray[np.float64]) -> npt.NDArray[Any]:
        """Labels of the full ensemble (summed in plan order) from precomputed per-iteration outputs.

        Parameters
        ----------
        outputs : ndarray of float64, shape (n_rows, n_iterations, n_classes)
            Per-iteration raw outputs (one class for binary models).

        Returns
        -------
        ndarray, shape (n_rows,)
            bool for binary (``True`` = positive), class index for multiclass.
        """
        check_is_fitted(self, "plan_")
        return full_labels(self.plan_, outputs)

    def predict_outputs(self, outputs: npt.NDArray[np.float64]) -> QWYCPrediction:
        """Apply the plan to precomputed per-iteration outputs.

        Parameters
        ----------
        outputs : ndarray of float64, shape (n_rows, n_iterations, n_classes)
            Per-iteration raw outputs (one class for binary models).

        Returns
        -------
        QWYCPrediction
        """
        check_is_fitted(self, "plan_")
        tr = trace(self.plan_, outputs)
        return prediction(self.plan_, tr.scores, tr.labels, tr.n_evaluated, outputs.shape[2], self._maps())

    def _maps(self) -> Any:
        """Return the score maps (None for partial scores or a plan loaded without maps)."""
        return getattr(self, "score_maps_", None)

    def predict(self, X: Any) -> QWYCPrediction:
        """Early-exit prediction: each row walks only the trees of the positions it reaches.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        QWYCPrediction
            Scores, labels and trees evaluated per row.
        """
        check_is_fitted(self, "plan_")
        s, done = _model.walk(self.ensemble_, self._X(X), self.plan_)
        if s.shape[1] == 1:
            return prediction(self.plan_, s[:, 0], s[:, 0] > self.plan_.decision_threshold, done, 1, self._maps())
        return prediction(self.plan_, s, np.argmax(s, axis=1), done, s.shape[1], None)

    def decision_function(self, X: Any) -> npt.NDArray[np.float64]:
        """Early-exit raw scores (``predict(X).scores``: partial or calibrated, see ``scores``).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of float64, shape (n_rows,) or (n_rows, n_classes)
        """
        return self.predict(X).scores

    def predict_proba(self, X: Any) -> npt.NDArray[np.float64]:
        """Early-exit class probabilities (sigmoid or softmax of the scores).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of float64, shape (n_rows, n_classes)
        """
        p = self.predict(X).probabilities
        return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p

    def cost_report(self, X: Any, costs: Any = None) -> Any:
        """Run the core's ``cost_report`` on the early-exit evaluation of ``X``.

        Trees are taken in plan order and row ``i`` is charged for its first
        ``trees_evaluated[i]`` trees (``tree_order`` / ``n_trees`` of ``cost_report``).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Rows to account.
        costs : FeatureCosts, list, dict, pandas.Series or CSV path, optional
            Feature costs (the core's one cost input). Default: the constructor's ``costs``
            when they are feature costs, else 1 per feature.

        Returns
        -------
        CostReport
        """
        from ..core._report import cost_report

        check_is_fitted(self, "plan_")
        if costs is None and _model.is_feature_costs_form(self.costs):
            costs = self.costs
        X = self._X(X)
        res = self.predict(X)
        k = self.num_tree_per_iteration_
        tree_order = (self.plan_.order[:, None] * k + np.arange(k)[None, :]).reshape(-1)
        return cost_report(self.ensemble_, X, costs, tree_order=tree_order, n_trees=res.trees_evaluated)

    # ----------------------------------------------------------------- model file
    def to_model_string(self) -> str:
        """LightGBM model text with the trees in plan order and the plan in the header."""
        check_is_fitted(self, "plan_")
        return write_qwyc_plan(self.model_text_, replace(self.plan_, score_maps=getattr(self, "score_maps_", None)))

    def save_model(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_model_string` to ``path``.

        Parameters
        ----------
        path : str or os.PathLike
            File to write.
        """
        text = self.to_model_string()
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)

    @classmethod
    def from_model_string(cls, text: str) -> QWYC:
        """Build a fitted QWYC from model text written by :meth:`to_model_string`.

        Parameters
        ----------
        text : str
            LightGBM model text with a QWYC plan in its header (calibrated scores when the plan
            carries score maps, version 2).

        Returns
        -------
        QWYC
        """
        text = lf_lines(text)
        plan = read_qwyc_plan(text)
        if plan is None:
            raise ValueError("The model text has no QWYC plan (no 'qwyc_version' line in its header).")
        return cls.from_plan(text, plan)

    @classmethod
    def from_plan(cls, model: Any, plan: QWYCPlan) -> QWYC:
        """Build a fitted QWYC that applies ``plan`` to ``model`` (e.g. a pred_early_stop plan).

        Parameters
        ----------
        model : lightgbm.Booster, LGBMModel, TreeEnsemble, path or model text
            The model the plan was made for.
        plan : QWYCPlan
            Order and thresholds, one position per iteration of ``model``; with
            ``plan.score_maps`` the estimator returns calibrated scores.

        Returns
        -------
        QWYC
        """
        est = cls(
            alpha=plan.alpha if math.isfinite(plan.alpha) else 0.005,
            mode="negative_only" if plan.mode == "binary_negative_only" else "two_sided",
            decision_threshold=plan.decision_threshold,
            scores="partial" if plan.score_maps is None else "calibrated",
        )
        est._load(model)
        n_iter = est.ensemble_.n_trees // est.num_tree_per_iteration_
        if plan.n_positions != n_iter:
            raise ValueError(
                f"The plan has {plan.n_positions} positions but the model has {n_iter} iterations."
            )
        est.plan_ = plan
        est.scores_, est.score_choice_ = est.scores, {}
        est.score_maps_ = plan.score_maps
        est.lambda_ = math.nan
        est.alpha_ = float(est.alpha)
        return est

    @classmethod
    def from_model_file(cls, path: str | os.PathLike[str]) -> QWYC:
        """Build a fitted QWYC from a model file written by :meth:`save_model`.

        Parameters
        ----------
        path : str or os.PathLike
            The model file.

        Returns
        -------
        QWYC
        """
        with open(path, encoding="utf-8") as fh:
            return cls.from_model_string(fh.read())
