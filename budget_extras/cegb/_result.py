"""The report of :func:`train_to_budget`: chosen knobs, score, cost and the validation frontier."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    """

    family: str
    params: dict[str, Any]
    k: int | None
    tradeoff: float | None
    score: float
    cost: float
    coupled_cost: float
    constant: bool


@dataclass(frozen=True)
class BudgetTrainResult:
    """Outcome of :func:`train_to_budget` (scipy ``OptimizeResult`` style).

    Attributes
    ----------
    status : int
        0: a non-constant candidate fits the budget; 1: only constant models fit the budget
        (the returned model predicts one value for every row); 2: infeasible, no candidate
        fits and the cheapest one is returned.
    success : bool
        ``status < 2``.
    message : str
        One line saying what happened (for status 2, the cheapest cost found).
    budget : float
    chosen : Candidate
        The returned model's candidate.
    score, cost : float
        The chosen candidate's validation score and mean per-row validation cost.
    params : dict
        The full parameters the returned booster was trained with.
    frontier : list of Candidate
        Every candidate trained, in search order.
    scoring : str
        Name of the score.
    fork : bool
        True if the lightgbm-cegb fork's knobs were available (groups, named costs).
    boosters : list of lightgbm.Booster
        With ``keep_boosters=True``: every candidate's booster, aligned with ``frontier``
        (empty otherwise). :meth:`booster_at` reads one off for another budget.
    """

    status: int
    success: bool
    message: str
    budget: float
    chosen: Candidate
    score: float
    cost: float
    params: dict[str, Any]
    frontier: list[Candidate] = field(default_factory=list)
    scoring: str = ""
    fork: bool = True
    boosters: list[Any] = field(default_factory=list)

    def booster_at(self, budget: float) -> Any:
        """Return the booster of :meth:`best_at` (needs ``keep_boosters=True``); None if no candidate fits.

        Raises
        ------
        ValueError
            If the boosters were not kept.
        """
        if len(self.boosters) != len(self.frontier):
            raise ValueError("booster_at needs train_to_budget(..., keep_boosters=True).")
        c = self.best_at(budget)
        return None if c is None else self.boosters[self.frontier.index(c)]

    def best_at(self, budget: float) -> Candidate | None:
        """Best-scoring candidate of the frontier whose validation cost is <= ``budget``.

        Parameters
        ----------
        budget : float

        Returns
        -------
        Candidate or None
            None if no candidate fits.
        """
        fits = [c for c in self.frontier if c.cost <= budget]
        if not fits:
            return None
        return max(fits, key=lambda c: (c.score, -c.cost))

    def pareto(self) -> list[Candidate]:
        """Candidates no other one beats on both score and cost, by increasing cost.

        Returns
        -------
        list of Candidate
        """
        out: list[Candidate] = []
        for c in sorted(self.frontier, key=lambda c: (c.cost, -c.score)):
            if not out or c.score > out[-1].score:
                out.append(c)
        return out

    def __repr__(self) -> str:
        c = self.chosen
        return (
            f"BudgetTrainResult(status={self.status}, success={self.success}, message={self.message!r}, "
            f"family={c.family!r}, k={c.k}, tradeoff={c.tradeoff}, score={self.score:.6g}, "
            f"cost={self.cost:.6g}, budget={self.budget:.6g}, n_candidates={len(self.frontier)})"
        )
