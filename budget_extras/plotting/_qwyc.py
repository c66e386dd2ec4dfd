"""A fitted :class:`~budget_extras.QWYC` plan, drawn: how many trees rows evaluate, and what each alpha gives."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ._mpl import new_axes, two_axes

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["plot_qwyc", "plot_qwyc_alpha", "plot_qwyc_trees", "qwyc_alpha_frame"]


def _check(qwyc: Any, owner: str) -> None:
    if not (hasattr(qwyc, "plan_") and hasattr(qwyc, "predict") and hasattr(qwyc, "booster_")):
        raise TypeError(
            f"The 'qwyc' argument of {owner} must be a fitted budget_extras.QWYC. Got {type(qwyc).__name__} instead."
        )


def _full_labels(qwyc: Any, X: Any) -> np.ndarray:
    """Labels of the full ensemble: LightGBM's raw score, thresholded as the plan decides."""
    raw = np.asarray(qwyc.booster_.predict(X, raw_score=True), dtype=np.float64)
    if raw.ndim == 1:
        return raw > qwyc.plan_.decision_threshold
    return np.argmax(raw, axis=1)


def qwyc_alpha_frame(qwyc: Any, X: Any, X_holdout: Any, alphas: Sequence[float]) -> pd.DataFrame:
    """Disagreement and trees evaluated on ``X`` for each target ``alpha``, the order kept.

    For each ``alpha`` a copy of the fitted plan is recalibrated on ``X_holdout``
    (:meth:`QWYC.recalibrate`: same order and base thresholds, a new held-out shift) and applied
    to ``X``. The fitted estimator is not modified.

    Parameters
    ----------
    qwyc : QWYC (fitted)
    X : array-like of shape (n_rows, n_features)
        Rows to measure on (not those of ``X_holdout``, for an honest estimate).
    X_holdout : array-like of shape (n_holdout, n_features)
        Rows the shift is recalibrated on; none of them may have been used to fit the order.
    alphas : sequence of float
        Disagreement targets, each in [0, 1).

    Returns
    -------
    pandas.DataFrame
        Columns ``alpha``, ``lambda`` (the shift), ``disagreement`` (share of rows of ``X`` whose
        early-exit label differs from the full model's) and ``mean_trees`` (mean trees evaluated
        per row of ``X``), one row per alpha in the given order.
    """
    import pandas as pd

    _check(qwyc, "qwyc_alpha_frame")
    alphas = [float(a) for a in np.atleast_1d(np.asarray(alphas, dtype=np.float64))]
    if not alphas:
        raise ValueError("The 'alphas' argument of qwyc_alpha_frame must hold at least one alpha. Got none.")
    full = _full_labels(qwyc, X)
    rows = []
    for a in alphas:
        q = copy.deepcopy(qwyc).recalibrate(X_holdout, alpha=a)
        res = q.predict(X)
        rows.append(
            {
                "alpha": a,
                "lambda": float(q.lambda_),
                "disagreement": float(np.mean(res.labels != full)),
                "mean_trees": float(np.mean(res.trees_evaluated)),
            }
        )
    return pd.DataFrame(rows, columns=["alpha", "lambda", "disagreement", "mean_trees"])


def plot_qwyc_trees(qwyc: Any, X: Any, ax: Any = None) -> Any:
    """Histogram of the number of trees each row of ``X`` evaluates under the fitted plan.

    Parameters
    ----------
    qwyc : QWYC (fitted)
    X : array-like of shape (n_rows, n_features)
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        Bars (gid ``"trees_evaluated"``) at each number of trees, of height the number of rows
        of ``X`` that evaluate exactly that many (``qwyc.predict(X).trees_evaluated``); the mean
        is a vertical line (gid ``"mean"``), the full model's tree count a dashed one (gid ``"full"``).
    """
    _check(qwyc, "plot_qwyc_trees")
    ax = new_axes(ax)
    t = np.asarray(qwyc.predict(X).trees_evaluated, dtype=np.int64)
    values, counts = np.unique(t, return_counts=True)
    n_full = int(qwyc.plan_.n_positions * getattr(qwyc, "num_tree_per_iteration_", 1))
    width = max(1.0, n_full / 100.0)
    ax.bar(values, counts, width=width, color="C0", gid="trees_evaluated")
    if t.size:
        ax.axvline(float(t.mean()), color="black", lw=1.5, label=f"mean {t.mean():.3g}", gid="mean")
    ax.axvline(n_full, color="grey", ls="--", lw=1, label=f"full model {n_full}", gid="full")
    ax.set_xlabel("trees evaluated")
    ax.set_ylabel("rows")
    ax.set_title("QWYC: trees evaluated per row")
    ax.legend(fontsize="small")
    return ax


def plot_qwyc_alpha(qwyc: Any, X: Any, X_holdout: Any, alphas: Sequence[float], ax: Any = None) -> Any:
    """Disagreement with the full model on ``X`` against the target ``alpha`` (:func:`qwyc_alpha_frame`).

    Parameters
    ----------
    qwyc : QWYC (fitted)
    X, X_holdout, alphas
        See :func:`qwyc_alpha_frame`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The disagreement per alpha (line, gid ``"disagreement"``), the target ``y = alpha``
        (gid ``"target"``) and, on a twin axes, the mean trees evaluated (gid ``"mean_trees"``).
    """
    df = qwyc_alpha_frame(qwyc, X, X_holdout, alphas)
    ax = new_axes(ax)
    a = df["alpha"].to_numpy()
    ax.plot(a, df["disagreement"].to_numpy(), "o-", color="C3", label="disagreement on X", gid="disagreement")
    ax.plot(a, a, ":", color="grey", label="target alpha", gid="target")
    ax.set_xlabel("alpha (target disagreement)")
    ax.set_ylabel("disagreement with the full model")
    tw = ax.twinx()
    tw.plot(a, df["mean_trees"].to_numpy(), "s--", color="C0", label="mean trees evaluated", gid="mean_trees")
    tw.set_ylabel("mean trees evaluated", color="C0")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = tw.get_legend_handles_labels()
    tw.legend(h1 + h2, l1 + l2, fontsize="small", loc="upper center")  # on top of both axes' artists
    ax.set_title("QWYC: target alpha against what it gives")
    return ax


def plot_qwyc(
    qwyc: Any,
    X: Any,
    ax: Any = None,
    *,
    X_holdout: Any = None,
    alphas: Sequence[float] | None = None,
) -> Any:
    """Trees evaluated per row and, with ``alphas`` and ``X_holdout``, disagreement against alpha.

    Parameters
    ----------
    qwyc : QWYC (fitted)
    X : array-like of shape (n_rows, n_features)
    ax : matplotlib.axes.Axes or sequence of two Axes, optional
        One Axes without ``alphas``, two with them; a new figure when None.
    X_holdout : array-like, optional
        Rows to recalibrate on for each alpha (see :func:`qwyc_alpha_frame`).
    alphas : sequence of float, optional
        Disagreement targets for the second panel.

    Returns
    -------
    matplotlib.axes.Axes, or numpy.ndarray of two Axes with ``alphas``
    """
    _check(qwyc, "plot_qwyc")
    if alphas is None:
        return plot_qwyc_trees(qwyc, X, ax)
    if X_holdout is None:
        raise ValueError("The 'X_holdout' argument of plot_qwyc is needed with 'alphas'. Got None.")
    axes = two_axes(ax, owner="plot_qwyc", need="two Axes with 'alphas'")
    plot_qwyc_trees(qwyc, X, axes[0])
    plot_qwyc_alpha(qwyc, X, X_holdout, alphas, axes[1])
    return axes
