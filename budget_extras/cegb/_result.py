"""The result of :func:`train_to_budget`: the chosen model, its knobs, score and cost, and the frontier."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core._status import MethodResult, fits_budget
from ._scoring import readable

__all__ = ["BudgetTrainResult", "Candidate"]


@dataclass(frozen=True)
class Candidate:
    """One trained candidate of the search, measured on the validation rows.

    Attributes
    ----------
    family : str
        ``"all"`` (no restriction), ``"topk_gain"``, ``"topk_gain_cost"``, ``"greedy"`` (a
        feature subset), ``"lazy"``, ``"lazy_topk"`` / ``"lazy_greedy"`` (CEGB lazy inside a
        top-k / greedy subset) or ``"lazy_coupled"``.
    params : dict
        The parameters added to the user's for this candidate.
    k : int or None
        Size of the feature subset (None: every feature).
    tradeoff : float or None
        ``cegb_tradeoff`` (None: CEGB off).
    score : float
        Validation score (higher is better).
    cost : float
        Mean per-row validation cost (``cost_report(...).total_cost.mean()``).
    coupled_cost : float
        One-time model cost of the features the model uses (``CostReport.coupled_cost``).
    constant : bool
        True if every tree is a single leaf (the model predicts one value for every row).
    rows : int
        Training rows the candidate was fitted on (fewer than the training set for a proxy).
    proxy : bool
        True for a proxy fitted on a row subsample to rank candidates; proxies are never
        returned while a model trained on every row fits the budget.
    seconds : float
        Wall time of its training and validation measurement.
    decay : tuple of float or None
        ``(first, last)``: ``cegb_tradeoff`` fell geometrically from ``first`` (``tradeoff``) to
        ``last`` over the rounds (None: constant).
    cost_sd : float
        Standard deviation of the per-row validation costs (``cost``'s standard error is
        ``cost_sd / sqrt(validation rows)``).
    """

    family: str
    params: dict[str, Any]
    k: int | None
    tradeoff: float | None
    score: float
    cost: float
    coupled_cost: float
    constant: bool
    rows: int = 0
    proxy: bool = False
    seconds: float = 0.0
    cost_sd: float = 0.0
    decay: tuple[float, float] | None = None


@dataclass(frozen=True)
class BudgetTrainResult(MethodResult):
    """Outcome of :func:`train_to_budget` (scipy ``OptimizeResult`` style).

    Attributes
    ----------
    status : Status
        ``SUCCESS``: a non-constant model fits the budget; ``CONSTANT``: only constant models
        fit (the returned model predicts one value for every row); ``INFEASIBLE``: no candidate
        fits and the cheapest one is returned; ``LIMIT``: ``max_fits`` or ``time_limit`` cut the
        search, and the best model found so far is returned.
    message : str
        One line saying what happened (for ``INFEASIBLE``, the cheapest cost found).
    booster : lightgbm.Booster
        The chosen model.
    budget : float
        The budget the returned model was chosen for.
    budgets : tuple of float
        Every budget the search refined (``budget`` and ``budgets=``), increasing.
    chosen : Candidate
        The returned model's candidate.
    score, cost : float
        The chosen candidate's validation score (higher is better: the search chooses by it)
        and mean per-row validation cost. :attr:`metric` and :meth:`metric_value` read the
        score as users do (RMSE for the default regression score).
    params : dict
        The full parameters the returned booster was trained with.
    frontier : list of Candidate
        Every candidate trained, in search order (proxies included, marked ``proxy``).
    scoring : str
        Name of the score (``"neg_l2"``: minus the mean squared error).
    fork : bool
        True if the lightgbm-cegb fork's knobs were available (groups, named costs).
    boosters : list of lightgbm.Booster
        With ``keep_boosters=True``: every candidate's booster, aligned with ``frontier``
        (empty otherwise). :meth:`booster_at` reads one off for another budget.
    nfev : int
        Number of LightGBM trainings run (proxies included).
    seconds : dict of str to float
        Wall time spent per family (``"proxy:<family>"`` for proxies), plus ``"total"``.
    """

    booster: Any
    budget: float
    budgets: tuple[float, ...]
    chosen: Candidate
    score: float
    cost: float
    params: dict[str, Any]
    frontier: list[Candidate] = field(default_factory=list)
    scoring: str = ""
    fork: bool = True
    boosters: list[Any] = field(default_factory=list)
    nfev: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def metric(self) -> str:
        """Name of the score as users read it: ``"rmse"`` for ``"neg_l2"``, ``"<error>"`` for ``"neg_<error>"``.

        Messages, :meth:`to_frame`, :meth:`plot` and the command line show it; other scores
        (AUC, accuracy, a callable's) are their own name.
        """
        return readable(self.scoring, self.score)[0]

    def metric_value(self, score: float | None = None) -> float:
        """Return a validation score as users read it (RMSE for ``"neg_l2"``; lower is better for errors).

        Parameters
        ----------
        score : float, optional
            A candidate's ``score`` (default: the chosen model's).

        Returns
        -------
        float
        """
        return readable(self.scoring, self.score if score is None else score)[1]

    def best_at(self, budget: float) -> Candidate | None:
        """Best-scoring candidate trained on every row whose validation cost fits ``budget``.

        Parameters
        ----------
        budget : float
            The budget (mean per-row validation cost), compared with
            :func:`budget_extras.core.fits_budget` as the search does.

        Returns
        -------
        Candidate or None
            None if no candidate fits. Ties in score go to the cheaper candidate.
        """
        fits = [c for c in self.frontier if not c.proxy and fits_budget(c.cost, budget)]
        if not fits:
            return None
        return max(fits, key=lambda c: (c.score, not c.constant, -c.cost))

    def booster_at(self, budget: float) -> Any:
        """Return the booster of :meth:`best_at` (needs ``keep_boosters=True``).

        Parameters
        ----------
        budget : float
            The budget.

        Returns
        -------
        lightgbm.Booster or None
            None if no candidate fits.

        Raises
        ------
        ValueError
            If the boosters were not kept.
        """
        if len(self.boosters) != len(self.frontier):
            raise ValueError("booster_at needs train_to_budget(..., keep_boosters=True).")
        c = self.best_at(budget)
        return None if c is None else self.boosters[self.frontier.index(c)]

    def pareto(self) -> list[Candidate]:
        """Candidates trained on every row that no other one beats on both score and cost, by cost.

        Returns
        -------
        list of Candidate
        """
        out: list[Candidate] = []
        for c in sorted((c for c in self.frontier if not c.proxy), key=lambda c: (c.cost, -c.score)):
            if not out or c.score > out[-1].score:
                out.append(c)
        return out

    def to_frame(self) -> Any:
        """Return one row per candidate (:func:`budget_extras.plotting.frontier_frame`).

        Returns
        -------
        pandas.DataFrame
            Family, k, tradeoff, num_leaves, score, cost, coupled cost, constant, proxy, chosen, pareto;
            where the score is not what users read (``"neg_l2"``), also the :attr:`metric`
            column (``"rmse"``) after ``score``.
        """
        from ..plotting import frontier_frame

        return frontier_frame(self)

    def plot(self, ax: Any = None) -> Any:
        """Draw the candidates, the Pareto front, the chosen model and the budgets (needs matplotlib).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
        """
        from ..plotting import plot_frontier

        return plot_frontier(self, ax=ax)

    def __repr__(self) -> str:
        c = self.chosen
        return (
            f"BudgetTrainResult(status={self.status.name}, success={self.success}, message={self.message!r}, "
            f"family={c.family!r}, k={c.k}, tradeoff={c.tradeoff}, {self.metric}={self.metric_value():.6g}, "
            f"cost={self.cost:.6g}, budget={self.budget:.6g}, n_candidates={len(self.frontier)}, nfev={self.nfev})"
        )
