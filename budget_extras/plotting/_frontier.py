"""The score-cost trade-off of :func:`~budget_extras.train_to_budget`: every candidate, the front, the choice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._frames import _front, _metric
from ._mpl import matplotlib, new_axes

__all__ = ["plot_frontier"]


def _budgets(result: Any) -> list[float]:
    """``result.budget`` and every budget of ``result.budgets``, finite ones, each once."""
    b = [getattr(result, "budget", None), *(getattr(result, "budgets", None) or ())]
    return list(dict.fromkeys(float(x) for x in b if x is not None and np.isfinite(x)))


def _named(results: Any, label: Any) -> list[tuple[str | None, Any]]:
    """``[(label, result), ...]`` from one result, a sequence or a mapping of them."""
    if isinstance(results, Mapping):
        return [(str(k), v) for k, v in results.items()]
    if isinstance(results, Sequence) and not isinstance(results, str) and not hasattr(results, "frontier"):
        labels = list(label) if isinstance(label, Sequence) and not isinstance(label, str) else None
        if labels is not None and len(labels) != len(results):
            raise ValueError(
                f"The 'label' argument of plot_frontier must give one label per result ({len(results)}). "
                f"Got {len(labels)} instead."
            )
        return [(labels[i] if labels else f"result {i}", r) for i, r in enumerate(results)]
    return [(label, results)]


def _check(result: Any) -> None:
    if not (hasattr(result, "frontier") and hasattr(result, "chosen")):
        raise TypeError(
            "The 'result_or_results' argument of plot_frontier must be a BudgetTrainResult (an object with "
            f"'frontier' and 'chosen'), or a list or dict of them. Got {type(result).__name__} instead."
        )


def plot_frontier(result_or_results: Any, ax: Any = None, label: Any = None) -> Any:
    """Plot every candidate at its validation cost and score, the Pareto front and the chosen model.

    Parameters
    ----------
    result_or_results : BudgetTrainResult, list or dict of BudgetTrainResult
        One search result (any object with ``frontier``, ``chosen`` and ``budget`` or
        ``budgets``), or several to compare on one axes (a dict's keys are their labels).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    label : str or list of str, optional
        Legend label of the result (one per result for a list; default ``"result i"``).

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    Cost is the mean per-row validation cost, score the validation score: the numbers the
    search chose on, the score as users read it (``result.metric_value``: RMSE, lower is
    better, for the default regression score; the axis is named by ``result.metric``). One
    result: each family of candidates is a scatter coloured by family (artist gid
    ``"candidates:<family>"``), proxies fitted on a row subsample small crosses (gid
    ``"proxies"``), the front a step line (gid ``"pareto"``), the chosen model a star (gid
    ``"chosen"``) and each budget asked a dashed vertical line (gid ``"budget"``). Several
    results: each result's candidates, front and chosen model in one colour (gids suffixed with
    ``":<label>"``).

    Raises
    ------
    ImportError
        If matplotlib is not installed (``pip install budget-extras[plot]``).
    TypeError
        If a result has no ``frontier`` / ``chosen``.
    """
    named = _named(result_or_results, label)
    for _, r in named:
        _check(r)
    ax = new_axes(ax)
    several = len(named) > 1 or isinstance(result_or_results, Mapping | list | tuple)
    cycle = matplotlib().rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    for i, (name, r) in enumerate(named):
        suffix = f":{name}" if several else ""
        color = cycle[i % len(cycle)] if several else None
        y = _metric(r)[1] or float  # the score as users read it (RMSE for neg_l2)
        full = [x for x in r.frontier if not getattr(x, "proxy", False)]
        proxies = [x for x in r.frontier if getattr(x, "proxy", False)]
        if several:
            c = np.array([[x.cost, y(x.score)] for x in full], dtype=float).reshape(-1, 2)
            ax.scatter(c[:, 0], c[:, 1], s=14, alpha=0.35, color=color, gid=f"candidates{suffix}")
        else:
            for fam in dict.fromkeys(x.family for x in full):
                c = np.array([[x.cost, y(x.score)] for x in full if x.family == fam], dtype=float)
                ax.scatter(c[:, 0], c[:, 1], s=16, alpha=0.7, label=fam, gid=f"candidates:{fam}")
        cv = [x for x in full if getattr(x, "folds", 0) > 0]
        if cv:  # cross-validated candidates: one standard error of the mean fold score
            ends = np.array([[y(x.score - x.score_se), y(x.score + x.score_se)] for x in cv], dtype=float)
            ax.vlines([x.cost for x in cv], ends.min(axis=1), ends.max(axis=1), colors=color or "grey", alpha=0.6,
                      lw=1, gid=f"score_se{suffix}")
        if proxies:
            c = np.array([[x.cost, y(x.score)] for x in proxies], dtype=float)
            what = "validation score (ranks only)" if cv else "proxy (row subsample)"
            ax.scatter(c[:, 0], c[:, 1], s=10, marker="x", alpha=0.4, color=color or "grey",
                       label=None if several else what, gid=f"proxies{suffix}")
        front = _front(r)
        if front:
            ax.step(
                [x.cost for x in front],
                [y(x.score) for x in front],
                where="post",
                color=color if several else "black",
                lw=1.5,
                label=f"{name} (Pareto front)" if several else "Pareto front",
                gid=f"pareto{suffix}",
            )
        ch = r.chosen
        if ch is not None:
            ax.scatter(
                [ch.cost],
                [y(ch.score)],
                marker="*",
                s=220,
                color=color if several else "red",
                edgecolors="black",
                zorder=5,
                label=f"{name} (chosen)" if several else "chosen",
                gid=f"chosen{suffix}",
            )
    seen: set[float] = set()
    for _, r in named:
        for b in _budgets(r):
            if b not in seen:
                seen.add(b)
                ax.axvline(b, color="grey", ls="--", lw=1, label="budget" if len(seen) == 1 else None, gid="budget")
    scoring = {_metric(r)[0] or getattr(r, "scoring", "") for _, r in named}
    ax.set_xlabel("mean per-row validation cost")
    ax.set_ylabel(f"validation {scoring.pop()}" if len(scoring) == 1 and "" not in scoring else "validation score")
    ax.legend(fontsize="small")
    return ax
