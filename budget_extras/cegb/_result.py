"""The result of :func:`train_to_budget`: the chosen model, its knobs, score and cost, and the frontier."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core._status import MethodResult, fits_budget
from ._scoring import readable

__all__ = ["BudgetTrainResult", "Candidate", "pick"]


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
        True for a proxy that only ranks candidates (fitted on a row subsample, or the fast
        search's short ranking model); proxies are never returned.
    seconds : float
        Wall time of its training and validation measurement.
    decay : tuple of float or None
        ``(first, last)``: ``cegb_tradeoff`` fell geometrically from ``first`` (``tradeoff``) to
        ``last`` over the rounds (None: constant).
    cost_sd : float
        Standard deviation of the per-row validation costs (``cost``'s standard error is
        ``cost_sd / sqrt(validation rows)``).
    folds : int
        0: scored on the validation rows. K > 0: cross-validated over the training and
        validation rows pooled (``choose="cv"``): ``score`` is the mean of the K held-out fold
        scores (5 folds, drawn 3 times below 1,000 pooled rows: K = 15), ``cost`` the mean cost
        of every held-out row, ``rows`` the pooled rows.
    score_se : float or None
        Standard error of ``score`` over the folds (fold standard deviation / sqrt(K)); None for
        a candidate scored on the validation rows.
    fold_scores : tuple of float
        The K fold scores (empty for a candidate scored on the validation rows).
    rounds : int or None
        Boosting rounds trained when successive halving stopped the candidate early (its
        ``score`` and ``cost`` are those of its first ``rounds`` trees, and it is marked
        ``proxy``: never returned); None: trained for every round.
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
    folds: int = 0
    score_se: float | None = None
    fold_scores: tuple[float, ...] = ()
    rounds: int | None = None


def pick(cands: Sequence[Candidate], budget: float, rule: str = "best") -> int | None:
    """Return the index of the candidate chosen at ``budget`` (None: none fits).

    ``rule="best"``: the best score (ties: non-constant, then cheaper). ``rule="1se"``: the
    one-standard-error rule (Breiman et al., CART, 1984): among the candidates whose score is
    within one standard error (``score_se``) of the best one's, the cheapest.
    """
    fits = [i for i, c in enumerate(cands) if fits_budget(c.cost, budget)]
    if not fits:
        return None
    best = max(fits, key=lambda i: (cands[i].score, not cands[i].constant, -cands[i].cost))
    se = cands[best].score_se
    if rule != "1se" or se is None or not math.isfinite(se):
        return best
    floor = cands[best].score - se
    return min((i for i in fits if cands[i].score >= floor), key=lambda i: (cands[i].cost, -cands[i].score))


@dataclass(frozen=True)
class BudgetTrainResult(MethodResult):
    """Outcome of :func:`train_to_budget` (scipy ``OptimizeResult`` style).

    Attributes
    ----------
    status : Status
        ``SUCCESS``: a non-constant model fits the budget; ``CONSTANT``: only constant models
        fit (the returned model predicts one value for every row); ``INFEASIBLE``: no candidate
        fits and the cheapest one is returned; ``LIMIT``: ``max_fits`` or ``time_limit`` cut the
        search, and the best model found so far (never a proxy) is returned.
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
    rule : str
        How a budget's model is picked among the candidates: ``"best"`` score, or ``"1se"``
        (the cheapest within one standard error of the best cross-validated score).
    picks : dict of float to int
        After a cross-validated choice: for each of :attr:`budgets`, the index in ``frontier`` of
        the model the search picked and refit there (a refit that bought more than its folds is
        not picked again, so the pick need not be the best by the final costs);
        :meth:`best_at` and :meth:`booster_at` return it. Empty otherwise.
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
    rule: str = "best"
    picks: dict[float, int] = field(default_factory=dict)

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
        """Return the candidate picked at ``budget`` among those not marked ``proxy``, by :attr:`rule`.

        After a cross-validated choice these are the cross-validated candidates (score: mean
        held-out fold score; cost: mean held-out cost); else the candidates trained on every
        training row, scored on the validation rows.

        Parameters
        ----------
        budget : float
            The budget (mean per-row validation cost), compared with
            :func:`budget_extras.core.fits_budget` as the search does.

        Returns
        -------
        Candidate or None
            None if no candidate fits. Ties in score go to the cheaper candidate. At a budget of
            :attr:`budgets` after a cross-validated choice: the search's pick there (:attr:`picks`).
        """
        if budget in self.picks:
            c = self.frontier[self.picks[budget]]
            return c if fits_budget(c.cost, budget) else None
        cands = [c for c in self.frontier if not c.proxy]
        i = pick(cands, budget, self.rule)
        return None if i is None else cands[i]

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
            If the boosters were not kept, or if the candidate picked at ``budget`` was
            cross-validated but not refit (only the picks at ``budgets=`` are).
        """
        if len(self.boosters) != len(self.frontier):
            raise ValueError("booster_at needs train_to_budget(..., keep_boosters=True).")
        c = self.best_at(budget)
        if c is not None and budget in self.picks:
            return self.boosters[self.picks[budget]]
        if c is None:
            return None
        b = self.boosters[self.frontier.index(c)]
        if b is None:
            raise ValueError(
                f"The 'budget' argument {budget:g} picks a cross-validated candidate that was not refit: only "
                f"the picks at the search's budgets {list(self.budgets)} are; pass it in train_to_budget's budgets=."
            )
        return b

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
