"""LightGBM's ``pred_early_stop`` as a rival plan inside QWYC's fit (``QWYC(rival="pred_early_stop")``).

LightGBM's binary ``pred_early_stop`` evaluates the trees in training order and, every ``freq``
iterations, stops a row when ``|score| > margin / 2`` (``_baselines.pred_early_stop_plan``). A user
tunes it to a budget of changed answers; QWYC must do at least as well on the rows that measure its
fit. The contest runs on the evaluation rows of the held-out correction (all calibration rows,
each under the fold plan that did not see it, with ``holdout="crossfit"``; the held-out rows
otherwise), where both kinds of plan are honest:

1. the QWYC plan at the conformal shift ``lambda_`` changes ``W`` answers there (with
   cross-fitting: the fewer of the out-of-fold rows' and the all-rows plan's own changed answers on
   the calibration rows, as that plan changes fewer answers on new rows than its fold plans); the
   reference is the ``pred_early_stop`` rule (``freq`` in 1, 2, 5, 10, 20, each with the smallest
   margin whose critical shifts leave at most ``W`` rows wrong) with the fewest trees per row;
2. both plans' exit scores are scored by their expected AUC with labels drawn from the full
   model's probabilities (``_scores.expected_auc``, no labels needed; QWYC's the better of its
   partial and calibrated scores, cross-fitted as ``scores="auto"`` compares them, so the plan
   does not depend on ``scores``; the reference's partial scores, as LightGBM returns them);
   the reference is the plan when it needs no more trees and ranks at least as well;
3. otherwise QWYC is kept when it ranks at least as well as the reference;
4. otherwise the shift grows (each step ``GROWTH`` times QWYC's trees) and 1-3 are repeated
   against the reference at the new, smaller number of changed answers, at most ``MAX_STEPS``
   times; then the first reference is the plan.

Every plan of the contest keeps the guarantee of the held-out correction: a larger shift changes
fewer answers, and the reference's margin leaves at most as many rows above it as the
conformal shift of ``alpha`` allows (its one parameter is fit on the rows that measure it, as
the conformal shift itself is).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from . import _kernels as core
from ._baselines import pred_early_stop_plan
from ._format import QWYCPlan

__all__: list[str] = []

F64 = npt.NDArray[np.float64]

FREQS = (1, 2, 5, 10, 20)
GROWTH = 1.5
MAX_STEPS = 3


@dataclass(frozen=True)
class Candidate:
    """A plan of the contest, measured on the evaluation rows.

    Attributes
    ----------
    plan : QWYCPlan
        The plan (shifted; for ``pred_early_stop``, thresholds ``-margin / 2``, ``margin / 2``).
    lambda_ : float
        Its shift (``margin / 2`` for ``pred_early_stop``).
    mean_cost : float
        Mean cost per evaluation row (trees with uniform costs).
    wrong : int
        Evaluation rows whose exit label differs from the full model's.
    kind : {"qwyc", "pred_early_stop"}
    freq : int
        ``pred_early_stop_freq`` (0 for QWYC).
    expected_auc : float
        Criterion of its exit scores (NaN until measured).
    score_choice : dict
        Expected AUC of each kind of exit scores measured for this plan (empty until measured).
    scores : str
        The kind ``expected_auc`` is of (empty until measured).
    level : int
        QWYC: the changed answers the reference is taken at (``wrong``, or fewer: -1 for ``wrong``).
    """

    plan: QWYCPlan
    lambda_: float
    mean_cost: float
    wrong: int
    kind: str
    freq: int = 0
    expected_auc: float = math.nan
    score_choice: dict[str, float] = field(default_factory=dict)
    scores: str = ""
    level: int = -1

    @property
    def margin(self) -> float:
        """``pred_early_stop_margin`` of a ``pred_early_stop`` candidate (NaN for QWYC)."""
        return 2.0 * self.lambda_ if self.kind == "pred_early_stop" else math.nan

    def summary(self) -> dict[str, Any]:
        """Return the candidate as plain numbers (``QWYC.rival_``)."""
        return {"kind": self.kind, "freq": self.freq, "margin": self.margin, "lambda": self.lambda_,
                "mean_cost": self.mean_cost, "wrong": self.wrong, "level": self.level,
                "expected_auc": self.expected_auc, "scores": self.scores}


def exit_cost(costs: F64, plan: QWYCPlan, n_evaluated: npt.NDArray[np.int64]) -> float:
    """Mean cost of rows that evaluated the first ``n_evaluated`` positions of ``plan``."""
    return float(np.cumsum(costs[plan.order])[n_evaluated - 1].mean()) if n_evaluated.size else 0.0


@njit(cache=True)
def _critical_all(F: F64, freqs: npt.NDArray[np.int64]) -> F64:  # pragma: no cover - compiled
    """Critical shifts of every row under the zero-margin ``pred_early_stop`` rule of each ``freq``, in one pass.

    The doubles of ``_kernels.conformal_critical`` on ``pred_early_stop_plan(t, freq=f, margin=0)``
    with unit scale: at a check position a positive partial sum ``s`` has ``c = (s - 0.0) / 1.0``,
    a negative one ``c = (0.0 - s) / 1.0``; the sums run left to right in training order.
    """
    n, t = F.shape
    k = freqs.size
    out = np.full((n, k), -np.inf)
    c = np.empty(t)
    positive = np.empty(t, np.bool_)
    for i in range(n):
        s = 0.0
        for r in range(t):
            s = F[i, 0] if r == 0 else s + F[i, r]
            positive[r] = s > 0.0
            c[r] = (s - 0.0) / 1.0 if s > 0.0 else ((0.0 - s) / 1.0 if s < 0.0 else -np.inf)
        y = s > 0.0
        for j in range(k):
            prev, best = -np.inf, -np.inf
            for r in range(freqs[j] - 1, t - 1, freqs[j]):  # the check positions, the last one excluded
                if c[r] > prev and positive[r] != y and c[r] > best:  # a wrong strict prefix-maximum record
                    best = c[r]
                prev = max(prev, c[r])
            out[i, j] = best
    return out


class PredEarlyStop:
    """LightGBM's ``pred_early_stop`` settings on the evaluation rows, at a number of changed answers.

    A row's critical shift ``c`` (``_kernels.conformal_critical`` of the rule with zero margin) is
    the half-margin below which its label is wrong at that margin or a larger one; it does not
    depend on the changed answers allowed, so it is computed once per ``freq``.

    Parameters
    ----------
    F : ndarray of float64, shape (n_rows, n_iterations)
        Per-iteration outputs of the evaluation rows.
    costs : ndarray of float64, shape (n_iterations,)
        Cost of each iteration.
    """

    def __init__(self, F: F64, costs: F64) -> None:
        self.F, self.costs = F, costs
        t = F.shape[1]
        self.freqs = [f for f in FREQS if f < t]
        crit = _critical_all(np.ascontiguousarray(F, dtype=np.float64), np.asarray(self.freqs, dtype=np.int64))
        self.crit = {f: crit[:, j] for j, f in enumerate(self.freqs)}  # per row, and in decreasing order
        self.ranked = {f: np.sort(c)[::-1] for f, c in self.crit.items()}
        self.y = core.early_exit(F, np.arange(t), np.full(t, -np.inf), np.full(t, np.inf)).labels

    def at(self, freq: int, max_wrong: int) -> Candidate | None:
        """Return the setting at ``freq`` with the smallest margin that leaves <= ``max_wrong`` rows wrong.

        The half-margin is the ``(max_wrong + 1)``-th largest critical shift, at least 0, raised
        until the predictor's floating-point comparisons agree (``_kernels.settle_lambda``).

        Parameters
        ----------
        freq : int
            ``pred_early_stop_freq``.
        max_wrong : int
            Changed answers allowed on these rows.

        Returns
        -------
        Candidate or None
            None when that margin stops no row.
        """
        F, t = self.F, self.F.shape[1]
        crit, ranked = self.crit[freq], self.ranked[freq]
        lam = 0.0 if max_wrong >= crit.size else max(float(ranked[max_wrong]), 0.0)
        if not math.isfinite(lam):
            return None
        traces: dict[float, core.ExitTrace] = {}

        def exits(m: float) -> core.ExitTrace:
            if m not in traces:
                p = pred_early_stop_plan(t, freq=freq, margin=2.0 * m)
                traces[m] = core.early_exit(F, p.order, p.eps_neg, p.eps_pos)
            return traces[m]

        lam = core.settle_lambda(lam, crit <= lam, self.y, lambda m: exits(m).labels) if max_wrong < crit.size else lam
        tr = exits(lam)
        if int(tr.n_evaluated.min(initial=t)) >= t:
            return None
        plan = pred_early_stop_plan(t, freq=freq, margin=2.0 * lam)
        wrong = int(np.sum(tr.labels != self.y))
        return Candidate(plan, lam, exit_cost(self.costs, plan, tr.n_evaluated), wrong, "pred_early_stop", freq)

    def reference(self, max_wrong: int) -> Candidate | None:
        """Return the setting with the fewest trees at <= ``max_wrong`` changed answers (or None).

        Parameters
        ----------
        max_wrong : int
            Changed answers allowed on these rows.

        Returns
        -------
        Candidate or None
        """
        found = [c for f in self.freqs if (c := self.at(f, max_wrong)) is not None]
        return min(found, key=lambda c: (c.mean_cost, c.wrong)) if found else None


def _shift_for_cost(qwyc_at: Callable[[float], Candidate], lam0: float, target: float) -> float:
    """Smallest shift (6 bisection steps) above ``lam0`` at which QWYC's mean cost reaches ``target``."""
    step = 1e-2 * max(1.0, abs(lam0))
    hi = lam0 + step
    while qwyc_at(hi).mean_cost < target:
        step *= 2.0
        hi = lam0 + step
        if step > 1e6:
            return math.inf
    lo = lam0
    for _ in range(6):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if qwyc_at(mid).mean_cost >= target else (mid, hi)
    return hi


def contest(
    qwyc_at: Callable[[float], Candidate],
    lam0: float,
    F: F64,
    costs: F64,
    auc_of: Callable[[Candidate], Candidate],
) -> tuple[Candidate, list[Candidate]]:
    """Run the contest (module docstring); return the winner and every candidate measured.

    Parameters
    ----------
    qwyc_at : callable
        QWYC's plan at a shift, measured on the evaluation rows (``expected_auc`` not yet set).
    lam0 : float
        The conformal shift of ``alpha``.
    F : ndarray of float64, shape (n_rows, n_iterations)
        Per-iteration outputs of the evaluation rows.
    costs : ndarray of float64, shape (n_iterations,)
        Cost of each iteration.
    auc_of : callable
        Sets a candidate's ``expected_auc`` and ``score_choice``.

    Returns
    -------
    winner : Candidate
    measured : list of Candidate
    """
    pes = PredEarlyStop(F, costs)
    q = qwyc_at(lam0)
    first = ref = pes.reference(q.wrong if q.level < 0 else q.level)
    measured: list[Candidate] = []
    for step in range(MAX_STEPS + 1):
        if ref is None:  # no pred_early_stop setting exits at QWYC's changed answers
            return q, [*measured, q]
        q, ref = auc_of(q), auc_of(ref)
        measured += [q, ref]
        first = ref if step == 0 else first
        if ref.mean_cost <= q.mean_cost and ref.expected_auc >= q.expected_auc:
            return ref, measured
        if q.expected_auc >= ref.expected_auc:
            return q, measured
        lam = _shift_for_cost(qwyc_at, q.lambda_, GROWTH * q.mean_cost) if step < MAX_STEPS else math.inf
        if not math.isfinite(lam):
            break
        q = qwyc_at(lam)
        ref = pes.reference(q.wrong if q.level < 0 else q.level)
    assert first is not None
    return first, measured
