"""The ``scoring`` argument of every method: one resolution to a name and a score function.

Every method that selects a model on validation rows (``BudgetPrune``, ``AdaptGBRT``, ``CSTC``,
``train_to_budget``) accepts the same ``scoring`` values and refuses a bad one with the same
error. What differs per method is passed in: the default (a metric per task) and the ``view``,
the scikit-learn estimator a scorer receives in place of the method's own object (labels,
probabilities or raw scores behind ``predict``, ``predict_proba``, ``decision_function``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._validation import _describe

__all__ = ["SCORING_ALIASES", "Scorer", "resolve_scoring", "scoring_name"]

#: Short names accepted besides scikit-learn's scorer names.
SCORING_ALIASES = {"auc": "roc_auc", "log_loss": "neg_log_loss", "logloss": "neg_log_loss"}

#: A scikit-learn style scorer: ``scorer(estimator, X, y) -> float``, higher is better.
Scorer = Callable[[Any, Any, Any], float]

_EXPECTED = (
    "must be None, a scikit-learn scorer name (e.g. 'accuracy', 'roc_auc', 'neg_log_loss', 'r2'; "
    "'auc' and 'log_loss' are accepted too) or a callable scorer(estimator, X, y)"
)


def scoring_name(scoring: Any) -> str:
    """Return how a ``scoring`` value that is not None is named in results and messages.

    A string is its scikit-learn name (aliases resolved); a callable its ``__name__``, the
    ``repr`` of a scikit-learn scorer object (``make_scorer(...)``) or its type name.

    Parameters
    ----------
    scoring : str or callable
        A ``scoring`` argument (not None).
    """
    if isinstance(scoring, str):
        return SCORING_ALIASES.get(scoring, scoring)
    name = getattr(scoring, "__name__", None)
    if isinstance(name, str):
        return name
    if type(scoring).__module__.startswith("sklearn."):
        return repr(scoring)
    return type(scoring).__name__


def resolve_scoring(
    scoring: Any,
    *,
    owner: str,
    default: str | tuple[str, Scorer],
    view: Callable[[Any], Any] | None = None,
) -> tuple[str, Callable[[Any, Any, Any], float]]:
    """Return ``(name, score)`` for a method's ``scoring`` argument.

    Parameters
    ----------
    scoring : None, str or callable
        None is the method's ``default``; a string is a scikit-learn scorer name
        (``sklearn.metrics.get_scorer``: ``"accuracy"``, ``"roc_auc"``, ``"neg_log_loss"``,
        ``"r2"``, ...) or one of :data:`SCORING_ALIASES`; a callable is a scorer
        ``scorer(estimator, X, y)`` as scikit-learn's are.
    owner : str
        The estimator or function whose argument this is, for the error message.
    default : str or (str, callable)
        What None means: a scorer name, or a name with its scorer ``scorer(estimator, X, y)``.
    view : callable, optional
        Turns the object ``score`` receives (a booster, raw scores, probabilities, a fitted
        model) into the scikit-learn estimator the scorer is called with; identity when None.

    Returns
    -------
    name : str
        The metric's name for results and messages.
    score : callable
        ``score(obj, X, y) -> float`` (higher is better): ``scorer(view(obj), X, y)``.

    Raises
    ------
    ValueError
        If ``scoring`` (or ``default``) is a string that names no scikit-learn scorer.
    TypeError
        If ``scoring`` is neither None, a string nor a callable.
    """
    if scoring is None:
        if isinstance(default, str):
            name, scorer = default, _named_scorer(default, owner)
        else:
            name, scorer = default
    elif isinstance(scoring, str):
        name, scorer = scoring_name(scoring), _named_scorer(scoring, owner)
    elif callable(scoring):
        name, scorer = scoring_name(scoring), scoring
    else:
        raise TypeError(f"The 'scoring' parameter of {owner} {_EXPECTED}. Got {_describe(scoring)}.")

    def score(obj: Any, X: Any, y: Any) -> float:
        return float(scorer(obj if view is None else view(obj), X, y))

    return name, score


def _named_scorer(name: str, owner: str) -> Scorer:
    """scikit-learn's scorer for ``name`` (aliases resolved), or the one ValueError."""
    from sklearn.metrics import get_scorer

    try:
        return get_scorer(SCORING_ALIASES.get(name, name))
    except ValueError as exc:
        raise ValueError(
            f"The 'scoring' parameter of {owner} {_EXPECTED}. Got {name!r}, which names no scikit-learn scorer."
        ) from exc
