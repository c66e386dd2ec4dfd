"""A cost-aware scikit-learn scorer: a model's metric when its prediction cost fits the budget."""

from __future__ import annotations

import math
from typing import Any

from ._ensemble import TreeEnsemble
from ._params import is_real
from ._report import cost_report
from ._scoring import SCORING_ALIASES
from ._status import fits_budget
from ._validation import _describe

__all__ = ["BudgetScorer", "make_budget_scorer"]

_PENALTIES = ("worst",)


def _is_pipeline(estimator: Any) -> bool:
    return hasattr(estimator, "steps") and hasattr(estimator, "__getitem__")


def _model_and_rows(estimator: Any, X: Any) -> tuple[Any, Any]:
    """Return the LightGBM model a scorer received and the rows it sees (a Pipeline: last step, X transformed)."""
    if _is_pipeline(estimator):
        return estimator[-1], estimator[:-1].transform(X) if len(estimator.steps) > 1 else X
    return estimator, X


def _is_estimator(model: Any) -> bool:
    """Tell whether ``model`` is a scikit-learn estimator (what scikit-learn's named scorers call), not a Booster."""
    return hasattr(model, "get_params") and hasattr(model, "fit")


class BudgetScorer:
    """A scikit-learn scorer that scores a LightGBM model by ``metric`` only if its mean per-row cost fits a budget.

    Build it with :func:`make_budget_scorer`; see there for the parameters. Every attribute is
    plain data (the metric is stored by name when given by name), so the scorer pickles and
    works in ``GridSearchCV(..., n_jobs=...)``.

    Attributes
    ----------
    metric : str or callable
    costs : FeatureCosts, list, dict, pandas.Series or CSV path
    budget : float
    X_cost : array-like or None
    penalty : "worst" or float
    last_cost_ : float or None
        Mean per-row cost of the last call in this process (None before the first call): for
        inspection only, GridSearchCV's workers keep their own copies.
    """

    def __init__(self, metric: Any, costs: Any, *, budget: float, X_cost: Any = None, penalty: Any = "worst") -> None:
        self.metric = metric
        self.costs = costs
        self.budget = budget
        self.X_cost = X_cost
        self.penalty = penalty
        self.last_cost_: float | None = None

    def __repr__(self) -> str:
        m = self.metric if isinstance(self.metric, str) else getattr(self.metric, "__name__", repr(self.metric))
        return f"make_budget_scorer({m!r}, budget={self.budget!r}, penalty={self.penalty!r})"

    def _metric(self) -> Any:
        if callable(self.metric):
            return self.metric
        from sklearn.metrics import get_scorer

        return get_scorer(SCORING_ALIASES.get(self.metric, self.metric))

    @property
    def penalty_value(self) -> float:
        """The score returned when the cost misses the budget (``-inf`` for ``"worst"``)."""
        return -math.inf if isinstance(self.penalty, str) else float(self.penalty)

    def cost(self, estimator: Any, X: Any) -> float:
        """Mean per-row prediction cost of ``estimator`` on ``X`` (on ``X_cost`` when set).

        Parameters
        ----------
        estimator : LGBMClassifier, LGBMRegressor, lightgbm.Booster or a Pipeline ending in one
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)

        Returns
        -------
        float
            ``cost_report(TreeEnsemble.from_booster(model), X, costs).total_cost.mean()``.
        """
        model, rows = _model_and_rows(estimator, X if self.X_cost is None else self.X_cost)
        ens = TreeEnsemble.from_booster(model)
        rep = cost_report(ens, rows, self.costs, feature_counts=False)
        return float(rep.total_cost.mean()) if rep.n_rows else 0.0

    def __call__(self, estimator: Any, X: Any, y: Any, **kwargs: Any) -> float:
        """Score ``estimator`` on ``(X, y)``: ``metric`` if its mean per-row cost fits the budget, else the penalty.

        Parameters
        ----------
        estimator : fitted LGBMClassifier, LGBMRegressor, lightgbm.Booster or a Pipeline ending in one
            A Booster needs a callable ``metric`` (scikit-learn's named scorers need
            ``predict`` / ``predict_proba``).
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
        y : array-like of shape (n_rows,)
        **kwargs
            Passed to ``metric`` (``sample_weight``, ...).

        Returns
        -------
        float

        Raises
        ------
        TypeError
            If ``metric`` is a scorer name and the model is not a scikit-learn estimator (a
            ``lightgbm.Booster``, say): a Booster needs a callable ``metric``.
        """
        model = estimator[-1] if _is_pipeline(estimator) else estimator
        if not callable(self.metric) and not _is_estimator(model):
            raise TypeError(
                f"make_budget_scorer({self.metric!r}, ...) was called on a {type(model).__name__}: a scikit-learn "
                "scorer name needs a fitted scikit-learn estimator (LGBMClassifier / LGBMRegressor); a "
                "lightgbm.Booster needs a callable metric(estimator, X, y), e.g. "
                "lambda b, X, y: roc_auc_score(y, b.predict(X))."
            )
        cost = self.cost(estimator, X)
        self.last_cost_ = cost
        if not fits_budget(cost, float(self.budget)):
            return self.penalty_value
        return float(self._metric()(estimator, X, y, **kwargs))


def make_budget_scorer(
    metric: Any,
    costs: Any,
    *,
    budget: float,
    X_cost: Any = None,
    penalty: Any = "worst",
) -> BudgetScorer:
    """Make a scikit-learn scorer: ``metric`` for a LightGBM model whose prediction cost fits ``budget``.

    ``scorer(estimator, X, y)`` measures the fitted model's mean per-row prediction cost on the
    scored rows ``X`` (the core's accounting: ``cost_report(TreeEnsemble.from_booster(model), X,
    costs).total_cost.mean()``, each feature or group paid once per row) and returns
    ``metric(estimator, X, y)`` when that cost fits the budget (:func:`fits_budget`), the
    ``penalty`` otherwise. Use it as ``GridSearchCV(..., scoring=scorer)`` to pick the best model
    among those a prediction budget allows, e.g. over ``cegb_tradeoff``.

    Parameters
    ----------
    metric : str or callable
        A scikit-learn scorer name (``"roc_auc"``, ``"accuracy"``, ``"neg_log_loss"``, ``"r2"``,
        ...; ``"auc"`` and ``"log_loss"`` are accepted too) or a scorer ``metric(estimator, X,
        y)``, higher is better.
    costs : FeatureCosts, list, dict, pandas.Series or CSV path
        The cost model (the core's one cost input, aligned to the model's feature names).
    budget : float
        Largest mean per-row cost allowed (finite, >= 0).
    X_cost : array-like, optional
        Rows to measure the cost on instead of the scored rows (the same rows for every fold,
        e.g. the rows the model will serve).
    penalty : "worst" or float, default "worst"
        Score of a model over budget: a finite number, or ``"worst"``, which is ``-inf``: such a
        model ranks below every model within the budget, in every fold where it is over budget,
        and GridSearchCV warns "One or more of the test scores are non-finite" naming the
        over-budget candidates
        (their ``mean_test_score`` is ``-inf``, ``std_test_score`` NaN). If every candidate is
        over budget, all rank first and ``best_params_`` is the first candidate: check
        ``best_score_ > -inf``. A float (e.g. a value below the metric's range, such as -1 for
        AUC) gives finite means without the warning, but an over-budget model can then
        outrank a poor in-budget one in the mean over folds.

    Returns
    -------
    BudgetScorer
        A picklable callable ``scorer(estimator, X, y) -> float``.

    Raises
    ------
    ValueError
        If ``budget`` is not a finite number >= 0, ``penalty`` is neither ``"worst"`` nor a
        finite number, or ``metric`` names no scikit-learn scorer.
    TypeError
        If ``metric`` is neither a string nor a callable.

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV  # doctest: +SKIP
    >>> scorer = make_budget_scorer("roc_auc", costs, budget=20.0)  # doctest: +SKIP
    >>> GridSearchCV(lgb.LGBMClassifier(), {"cegb_tradeoff": [0, 1, 10]}, scoring=scorer)  # doctest: +SKIP
    """
    if not is_real(budget) or not (
        math.isfinite(float(budget)) and float(budget) >= 0
    ):
        raise ValueError(
            f"The 'budget' parameter of make_budget_scorer must be a finite number >= 0. Got {_describe(budget)}."
        )
    if not (penalty in _PENALTIES or (is_real(penalty) and math.isfinite(float(penalty)))):
        raise ValueError(
            "The 'penalty' parameter of make_budget_scorer must be 'worst' (-inf) or a finite number (an "
            f"over-budget model's score; +inf or NaN would rank it first). Got {penalty!r} instead."
        )
    if isinstance(metric, str):
        from sklearn.metrics import get_scorer

        try:
            get_scorer(SCORING_ALIASES.get(metric, metric))
        except ValueError as exc:
            raise ValueError(
                f"The 'metric' parameter of make_budget_scorer must be a scikit-learn scorer name or a callable "
                f"scorer(estimator, X, y). Got {metric!r}, which names no scikit-learn scorer."
            ) from exc
    elif not callable(metric):
        raise TypeError(
            "The 'metric' parameter of make_budget_scorer must be a scikit-learn scorer name or a callable "
            f"scorer(estimator, X, y). Got {_describe(metric)}."
        )
    if costs is None:
        raise ValueError("The 'costs' parameter of make_budget_scorer must give the feature costs. Got None.")
    return BudgetScorer(metric, costs, budget=float(budget), X_cost=X_cost, penalty=penalty)
