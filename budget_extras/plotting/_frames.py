"""Tables of search results: one pandas row per candidate the search measured.

Every function reads a result (or a fitted estimator) by its documented attributes only, so it
works on any object of that shape; none of them needs matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["adapt_frame", "budgetprune_frame", "cstc_frame", "frontier_frame", "pareto_front"]

FRONTIER_COLUMNS = (
    "family",
    "k",
    "tradeoff",
    "num_leaves",
    "score",
    "score_se",
    "folds",
    "cost",
    "coupled_cost",
    "constant",
    "chosen",
    "pareto",
    "proxy",
)


def pareto_front(candidates: Sequence[Any]) -> list[Any]:
    """Candidates no other one beats on both score and cost, by increasing cost.

    The rule of ``BudgetTrainResult.pareto``: proxies (candidates with ``proxy=True``, fitted on
    a row subsample) left out, sorted by (cost, -score), a candidate is on the front when it
    scores strictly better than every cheaper one.

    Parameters
    ----------
    candidates : sequence of objects with ``score`` and ``cost``

    Returns
    -------
    list
        The candidates on the front (the same objects), by increasing cost.
    """
    out: list[Any] = []
    full = (c for c in candidates if not getattr(c, "proxy", False))
    for c in sorted(full, key=lambda c: (c.cost, -c.score)):
        if not out or c.score > out[-1].score:
            out.append(c)
    return out


def _front(result: Any) -> list[Any]:
    pareto = getattr(result, "pareto", None)
    return list(pareto()) if callable(pareto) else pareto_front(result.frontier)


def _is_chosen(c: Any, chosen: Any) -> bool:
    return c is chosen or (chosen is not None and c == chosen)


def frontier_frame(result: Any) -> pd.DataFrame:
    """One row per candidate of a :func:`~budget_extras.train_to_budget` search.

    Parameters
    ----------
    result : BudgetTrainResult or any object with ``frontier`` (a list of candidates with
        ``family``, ``params``, ``k``, ``tradeoff``, ``score``, ``cost``, ``coupled_cost`` and
        ``constant``) and ``chosen``; ``pareto()`` is used when present.

    Returns
    -------
    pandas.DataFrame
        Columns ``family``, ``k``, ``tradeoff``, ``num_leaves`` (the candidate's own
        ``num_leaves`` parameter, None when it kept the user's), ``score`` (validation, or the
        mean held-out fold score of a cross-validated candidate), ``score_se`` (its standard
        error over the folds; NaN for a validation score), ``folds`` (0: scored on the
        validation rows; K: cross-validated), ``cost`` (mean per-row validation or held-out
        cost), ``coupled_cost``, ``constant``, ``chosen`` (the returned model's candidate),
        ``pareto`` (on the Pareto front) and ``proxy`` (only ranks others: fitted on a row
        subsample, or scored on the validation rows before a cross-validated choice; never on
        the front; False for candidates without the attribute), in search order. Where the score is
        not what users read (``result.metric`` differs from ``result.scoring``: ``"rmse"`` for the
        default regression score ``"neg_l2"``), a column named ``result.metric`` follows ``score``
        with ``result.metric_value(score)`` (RMSE, positive, lower is better).

    Raises
    ------
    TypeError
        If ``result`` has no ``frontier``.
    """
    import pandas as pd

    if not hasattr(result, "frontier"):
        raise TypeError(
            "The 'result' argument of frontier_frame must be a BudgetTrainResult (an object with "
            f"'frontier' and 'chosen'). Got {type(result).__name__} instead."
        )
    chosen = getattr(result, "chosen", None)
    front = {id(c) for c in _front(result)}
    rows = [
        {
            "family": c.family,
            "k": c.k,
            "tradeoff": c.tradeoff,
            "num_leaves": (c.params or {}).get("num_leaves"),
            "score": float(c.score),
            "score_se": float("nan") if getattr(c, "score_se", None) is None else float(c.score_se),
            "folds": int(getattr(c, "folds", 0)),
            "cost": float(c.cost),
            "coupled_cost": float(c.coupled_cost),
            "constant": bool(c.constant),
            "chosen": _is_chosen(c, chosen),
            "pareto": id(c) in front,
            "proxy": bool(getattr(c, "proxy", False)),
        }
        for c in result.frontier
    ]
    df = pd.DataFrame(rows, columns=list(FRONTIER_COLUMNS))
    for col in ("k", "tradeoff", "num_leaves"):  # None stays None and k stays an int (not NaN / float)
        df[col] = pd.Series([r[col] for r in rows], index=df.index, dtype=object)
    metric, value = _metric(result)
    if metric is not None:
        df.insert(df.columns.get_loc("score") + 1, metric, [value(c.score) for c in result.frontier])
    return df


def _metric(result: Any) -> tuple[str | None, Any]:
    """``(result.metric, result.metric_value)`` where the metric users read is not the score, else ``(None, None)``."""
    metric, value = getattr(result, "metric", None), getattr(result, "metric_value", None)
    if not isinstance(metric, str) or not callable(value) or metric in (getattr(result, "scoring", None), "score"):
        return None, None
    return metric, value


def adapt_frame(sweep: Any) -> pd.DataFrame:
    """Tabulate the validation sweep of a fitted :class:`~budget_extras.AdaptGBRT`, one row per configuration.

    Parameters
    ----------
    sweep : AdaptGBRT (fitted) or AdaptSweepResult
        The estimator (its ``sweep_result_``) or the sweep result itself.

    Returns
    -------
    pandas.DataFrame
        A copy of ``AdaptSweepResult.results`` (``p_full``, ``gamma``, ``init``, ``score``,
        ``accuracy``, ``cost``, ``frac_f0``, ``nit``, ``on_frontier``) with a ``chosen`` column
        (the configuration the estimator kept).

    Raises
    ------
    TypeError
        If ``sweep`` holds no sweep result (an unfitted estimator, or AdaptGBRT fitted without
        a budget).
    """
    r = getattr(sweep, "sweep_result_", sweep)
    if not (hasattr(r, "results") and hasattr(r, "best_index")):
        raise TypeError(
            "The 'sweep' argument of adapt_frame must be an AdaptGBRT fitted with a budget or its "
            f"AdaptSweepResult (with 'results' and 'best_index'). Got {type(sweep).__name__} instead."
        )
    df = r.results.copy()
    df["chosen"] = df.index == r.best_index
    return df


def cstc_frame(cstc: Any) -> pd.DataFrame:
    """Tabulate the ``lam`` path of a :class:`~budget_extras.CSTC` fitted with a budget.

    Parameters
    ----------
    cstc : CSTC (fitted) or CSTCResult
        The estimator (its ``result_``) or the result itself.

    Returns
    -------
    pandas.DataFrame
        Columns ``lam``, ``cost`` (mean per-row validation cost), ``score`` (validation,
        ``result.scoring``), ``constant`` (bool: no weak learner) and ``chosen`` (the ``lam``
        returned), in increasing ``lam``. Empty when CSTC was fitted without a budget.

    Raises
    ------
    TypeError
        If ``cstc`` has no ``path``.
    """
    import pandas as pd

    r = getattr(cstc, "result_", cstc)
    if not hasattr(r, "path"):
        raise TypeError(
            "The 'cstc' argument of cstc_frame must be a fitted CSTC or its CSTCResult (with 'path'). "
            f"Got {type(cstc).__name__} instead."
        )
    df = pd.DataFrame(list(r.path), columns=["lam", "cost", "score", "constant"])
    df["constant"] = df["constant"].astype(bool)
    lam = getattr(r, "lam", None)
    df["chosen"] = (df["lam"] == lam) if lam is not None and len(df) else False
    return df


def budgetprune_frame(prune: Any) -> pd.DataFrame:
    """Tabulate the budget search of a fitted :class:`~budget_extras.BudgetPrune`, one row per pruning.

    Parameters
    ----------
    prune : BudgetPrune (fitted)

    Returns
    -------
    pandas.DataFrame
        ``search_`` (with ``budget=``: every candidate pruning, re-linearization iterates
        included) with columns ``lam``, ``cost`` (mean per-row validation cost), ``score``
        (validation), ``status`` and ``chosen`` (the returned pruning: its lambda, score and cost);
        without a budget (a fixed ``lam``), ``path_``: ``lam``, ``cost``, ``error_term``,
        ``status`` and ``chosen``.

    Raises
    ------
    TypeError
        If ``prune`` has neither ``search_`` nor ``path_`` (not fitted).
    """
    import pandas as pd

    search = getattr(prune, "search_", None)
    path = getattr(prune, "path_", None)
    if search is None and path is None:
        raise TypeError(
            "The 'prune' argument of budgetprune_frame must be a fitted BudgetPrune (with 'search_' "
            f"or 'path_'). Got {type(prune).__name__} instead."
        )
    lam = getattr(prune, "lam_", None)
    if search:
        df = pd.DataFrame(list(search), columns=["lam", "cost", "score", "status"])
        chosen = (df["lam"] == lam) & (df["score"] == getattr(prune, "score_", None))
        r = getattr(prune, "result_", None)
        if r is not None and hasattr(r, "acquisition_term"):
            chosen &= df["cost"] == r.acquisition_term + r.evaluation_term
        df["chosen"] = chosen
        return df
    df = pd.DataFrame(list(path or []), columns=["lam", "cost", "error_term", "status"])
    df["chosen"] = df["lam"] == lam
    return df
