"""The state of one :func:`train_to_budget` search: fits, their measurements, limits and progress."""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import lightgbm as lgb
import numpy as np

from .._compat import param_aliases
from ..core._costs import FeatureCosts
from ..core._ensemble import TreeEnsemble
from ..core._leaf_cost import row_costs_from_leaves
from ..core._status import fits_budget
from ._measure import measure_rows, model_row_costs, predict
from ._result import Candidate

if TYPE_CHECKING:
    from ._halving import Halving

__all__ = ["Search", "SearchCut", "Spec"]


class SearchCut(Exception):
    """Raised inside a search when ``max_fits`` or ``time_limit`` is reached."""


@dataclass(frozen=True)
class Spec:
    """One candidate to train: its family, the parameters added to the user's, and its knobs.

    ``decay``: ``cegb_tradeoff`` falls geometrically from ``decay[0]`` at the first round to
    ``decay[1]`` at the last (``tradeoff`` is then the first value).
    """

    family: str
    extra: dict[str, Any]
    k: int | None = None
    tradeoff: float | None = None
    decay: tuple[float, float] | None = None


def _decay(first: float, last: float, rounds: int) -> Any:
    """Return ``round -> first * (last / first) ** (round / (rounds - 1))``."""
    return lambda i: first * (last / first) ** (i / max(1, rounds - 1))


class Search:
    """Trains candidates on one row set, measures them on the validation rows, keeps the frontier.

    Parameters
    ----------
    base : dict
        The user's LightGBM parameters (with seed and verbosity set).
    root : lightgbm.Dataset
        The whole training set, constructed.
    indices : numpy.ndarray of int or None
        Sorted rows of ``root`` the candidates are trained on (None: every row; else the
        candidates are proxies).
    Xv, yv : array-like
        Validation rows, columns in the training set's order.
    fc : FeatureCosts
        The cost model, aligned with the training columns.
    score_fn : callable
        ``score_fn(booster, X, y, known=None)``, higher is better; ``known``: the booster's raw
        scores on ``X`` (:class:`._measure.RawScores`), measured with the costs.
    rounds : int
        Boosting rounds of every candidate.
    clock : _Clock
        The limits and progress shared by every row set of one search.
    proxy : bool, optional
        Whether the candidates only rank others (default: True when ``indices`` is given).
    """

    def __init__(
        self,
        base: dict[str, Any],
        root: lgb.Dataset,
        indices: np.ndarray | None,
        Xv: Any,
        yv: np.ndarray,
        fc: FeatureCosts,
        score_fn: Any,
        rounds: int,
        clock: Clock,
        proxy: bool | None = None,
    ) -> None:
        self.base = base
        self.root, self.indices = root, indices
        self.train = root if indices is None else root.subset(indices.tolist())
        self.Xv, self.yv, self.fc = Xv, yv, fc
        self.score_fn = score_fn
        self.rounds = rounds
        self.proxy = indices is not None if proxy is None else proxy
        self.clock = clock
        self.rows = int(root.num_data() if indices is None else indices.size)
        self.frontier: list[Candidate] = []
        self.boosters: list[lgb.Booster] = []
        #: Successive halving of the candidates (None: each one trained to every round).
        self.halving: Halving | None = None
        #: The rung measurements, {round: (score, cost)}, of every candidate halving trained to the end.
        self.history: list[dict[int, tuple[float, float]]] = []
        #: The share of ``num_boost_round`` one fit trains (``rounds / num_boost_round`` on a
        #: shortened proxy): a fit counts it, times its share of the rows, on the progress bar.
        self.fit_share = 1.0

    def folds(self, n_folds: int, salt: int) -> list[tuple[lgb.Dataset, lgb.Dataset]]:
        """Split this search's rows at random into (fit, held-out) Dataset pairs.

        ``n_folds >= 2``: a K-fold partition (each row held out once); ``1``: one split with
        20% of the rows held out.
        """
        idx = np.arange(self.root.num_data()) if self.indices is None else self.indices
        rng = np.random.default_rng([int(self.base.get("seed", 0)) & 0xFFFFFFFF, salt])
        perm = rng.permutation(idx)
        parts = np.array_split(perm, n_folds) if n_folds >= 2 else [perm[: max(1, round(0.2 * idx.size))]]
        out = []
        for hold in parts:
            fit = np.setdiff1d(idx, hold)
            out.append((self.root.subset(fit.tolist()), self.root.subset(np.sort(hold).tolist())))
        return out

    def params_for(self, extra: dict[str, Any]) -> dict[str, Any]:
        """Return the user's parameters with ``extra`` added (a ``num_leaves`` replaces the user's under any alias)."""
        p = {**self.base, **extra}
        if "num_leaves" in extra:
            for alias in param_aliases("num_leaves") - {"num_leaves"}:
                p.pop(alias, None)
        return p

    def train_booster(self, extra: dict[str, Any], data: lgb.Dataset,
                      decay: tuple[float, float] | None = None, transient: bool = False) -> lgb.Booster:
        """Train the user's parameters with ``extra`` on ``data`` for this search's rounds.

        ``decay``: ``cegb_tradeoff`` falls geometrically from ``decay[0]`` to ``decay[1]``.
        ``transient``: the booster is measured and dropped, so LightGBM's copy of it through its
        model text into a prediction-only booster (``keep_training_booster=False``) is skipped.
        """
        callbacks = [] if decay is None else [lgb.reset_parameter(cegb_tradeoff=_decay(*decay, self.rounds))]
        return lgb.train(self.params_for(extra), data, num_boost_round=self.rounds, callbacks=callbacks,
                         keep_training_booster=transient)

    def row_costs(self, booster: lgb.Booster, X: Any, ens: TreeEnsemble | None = None) -> np.ndarray:
        """Return each row's cost: LightGBM routes the rows (its C++ predictor), the accounting is cost_report's."""
        if ens is None:
            return model_row_costs(booster, X, self.fc)[0]
        return row_costs_from_leaves(ens, predict(booster, X, pred_leaf=True), self.fc)

    def batches(self, work: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[list[Any]]:
        """Yield ``work``'s results one item at a time, in the order of ``items``.

        With ``n_jobs > 1``, ``n_jobs`` threads run the items: a thread that finishes takes the
        next item at once (no barrier after each ``n_jobs`` items), and the results are yielded
        in order as soon as every earlier one is done.

        Raises
        ------
        SearchCut
            Before an item that ``max_fits`` or ``time_limit`` does not allow (the items
            started before finish and are yielded first).
        """
        jobs = min(max(1, self.clock.n_jobs), len(items))
        if jobs <= 1:
            for item in items:
                self.clock.allow(1)
                yield [work(item)]
            return
        cut: SearchCut | None = None
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            queued: deque[Future[Any]] = deque()
            for item in items:
                while queued and queued[0].done():
                    yield [queued.popleft().result()]
                if sum(not f.done() for f in queued) >= jobs:
                    wait(queued, return_when=FIRST_COMPLETED)
                    while queued and queued[0].done():
                        yield [queued.popleft().result()]
                try:
                    self.clock.allow(1)
                except SearchCut as exc:
                    cut = exc
                    break
                queued.append(pool.submit(work, item))
            while queued:
                yield [queued.popleft().result()]
        if cut is not None:
            raise cut

    def _train_one(self, spec: Spec) -> tuple[Candidate, lgb.Booster, float]:
        t0 = time.perf_counter()
        b = self.train_booster(spec.extra, self.train, spec.decay, transient=True)
        # lgb.train's own copy into a prediction-only booster (keep_training_booster=False), its
        # model text kept for the measurement, which reads the leaves' paths from it
        text = b.model_to_string()
        b.model_from_string(text).free_dataset()
        return self.measure(spec, b, time.perf_counter() - t0, text), b, self.fit_share

    def measure(self, spec: Spec, b: lgb.Booster, seconds: float, text: str | None = None) -> Candidate:
        """Return ``spec``'s candidate: ``b`` measured on the validation rows (``seconds``: its training's).

        ``text``: ``b``'s model text, where the caller has it (else it is read from ``b``).
        """
        t0 = time.perf_counter()
        row_cost, coupled, known = measure_rows(b, self.Xv, self.fc, text)  # one routing: the costs and the scores
        return Candidate(
            family=spec.family,
            params=dict(spec.extra),
            k=spec.k,
            tradeoff=spec.tradeoff,
            score=float(self.score_fn(b, self.Xv, self.yv, known=known)),
            cost=float(np.mean(row_cost)),
            coupled_cost=coupled,
            constant=bool(np.sum(b.feature_importance("split")) == 0),
            rows=self.rows,
            proxy=self.proxy,
            seconds=seconds + time.perf_counter() - t0,
            cost_sd=float(np.std(row_cost)),
            decay=spec.decay,
        )

    def fit_many(self, specs: Sequence[Spec]) -> list[Candidate]:
        """Train ``specs`` (in parallel with ``n_jobs`` threads); results in the order of ``specs``.

        The candidates are the same as serial fits: each one is trained with its own parameters
        on the same rows; only their wall-clock order differs. With :attr:`halving`, the specs
        are trained side by side and the dominated ones stopped early (:mod:`._halving`).

        Raises
        ------
        SearchCut
            Before a fit that ``max_fits`` or ``time_limit`` does not allow (fits already done stay).
        """
        out: list[Candidate] = []
        batches = (self.batches(self._train_one, specs) if self.halving is None else
                   self._halving_batches(specs))
        for done in batches:
            for c, b, share in done:
                self.frontier.append(c)
                self.boosters.append(b)
                self.clock.record(c, self.best_score(), share)
                out.append(c)
        return out

    def _halving_batches(self, specs: Sequence[Spec]) -> Iterator[list[tuple[Candidate, lgb.Booster, float]]]:
        """Yield the specs the limits allow, trained together with successive halving, then raise any cut."""
        from ._halving import fit_halving

        allowed, cut = [], None
        for spec in specs:
            try:
                self.clock.allow(1)
            except SearchCut as exc:
                cut = exc
                break
            allowed.append(spec)
        if allowed:
            yield fit_halving(self, allowed, self.halving)  # type: ignore[arg-type]
        if cut is not None:
            raise cut

    def fit(self, spec: Spec) -> Candidate:
        """Train one candidate (see :meth:`fit_many`)."""
        return self.fit_many([spec])[0]

    def best_score(self) -> float | None:
        """Best validation score among this row set's candidates within the main budget."""
        fits = [c.score for c in self.frontier if c.rounds is None and fits_budget(c.cost, self.clock.budget)]
        return max(fits) if fits else None


class Clock:
    """Fit and time limits, per-family wall time and the progress bar of one search.

    The bar counts in units of ONE training of the user's model on every row: a proxy fit on
    ``m`` of ``n`` rows counts ``m / n``, a candidate stopped after ``r`` of ``R`` rounds
    ``r / R``. Its total is the search's plan: the most work of each stage (a family, the
    refits, the cross-validation), declared before the search starts. A stage that ends under
    its plan moves the bar to the stage's planned end, so the bar never passes its total and
    ends exactly at it; :attr:`spent` keeps the work actually done.

    Parameters
    ----------
    plan : sequence of (str, float) or None
        The stages in order, each with its most work in trainings on every row; None: no plan
        (the bar counts without a total).
    """

    def __init__(
        self,
        budget: float,
        n_rows: int,
        max_fits: int | None,
        time_limit: float | None,
        n_jobs: int,
        progress: bool,
        plan: Sequence[tuple[str, float]] | None,
    ) -> None:
        from tqdm.auto import tqdm

        self.budget = budget
        self.n_rows = max(1, n_rows)
        self.max_fits = max_fits
        self.time_limit = time_limit
        self.n_jobs = n_jobs
        self.start = time.perf_counter()
        self.nfev = 0
        self.seconds: dict[str, float] = defaultdict(float)
        self.cut: str | None = None
        self.plan = None if plan is None else [(str(n), max(0.0, float(u))) for n, u in plan]
        self.total = None if self.plan is None else float(sum(u for _, u in self.plan))
        self.spent = 0.0  # the work done, in trainings on every row
        self.overrun = 0.0  # work beyond a stage's plan (a plan below its stage's most work)
        self._done = 0.0  # the planned work of the stages ended
        self._stage = 0.0  # the plan of the stage running
        self.bar = tqdm(
            total=self.total, disable=not progress, desc="train_to_budget", unit="training",
            bar_format=("{l_bar}{bar}| {n:.1f}/{total:.1f} trainings [{elapsed}<{remaining}{postfix}]"
                        if self.total is not None else "{desc}: {n:.1f} trainings [{elapsed}{postfix}]"),
        )

    @contextmanager
    def stage(self, *names: str) -> Iterator[None]:
        """Run stages of the plan together; at their end (or a cut) the bar moves to their planned end."""
        plan = dict(self.plan or [])
        self._stage = sum(plan.get(name, 0.0) for name in names)
        try:
            yield
        finally:
            self._done += self._stage
            self._stage = 0.0
            self._advance_to(self._done)

    def _advance_to(self, position: float) -> None:
        if self.total is not None and position > self.bar.n:
            self.bar.update(min(position, self.total) - self.bar.n)

    def allow(self, n: int) -> None:
        """Raise :class:`SearchCut` if ``n`` more fits would pass a limit (the first fit always runs)."""
        if self.nfev > 0 and self.max_fits is not None and self.nfev + n > self.max_fits:
            self.cut = f"max_fits={self.max_fits} reached"
        elif self.nfev > 0 and self.time_limit is not None and time.perf_counter() - self.start > self.time_limit:
            self.cut = f"time_limit={self.time_limit:g} s reached"
        if self.cut is not None:
            raise SearchCut(self.cut)
        self.nfev += n

    def record(self, c: Candidate, best: float | None, rounds: float = 1.0) -> None:
        """Account one finished candidate (``rounds``: the share of the rounds it was trained for)."""
        self.record_raw(("proxy:" if c.proxy else "") + c.family, c.seconds, c.rows * rounds)
        self.bar.set_postfix(best="-" if best is None else f"{best:.4g}", refresh=False)

    def record_raw(self, family: str, seconds: float, rows: float) -> None:
        """Account one fit's time to ``family`` and advance the bar by ``rows`` (row-rounds) / all rows.

        Within a plan the bar stops at the running stage's planned end (work beyond it is
        counted in :attr:`overrun`).
        """
        self.seconds[family] += seconds
        step = rows / self.n_rows
        self.spent += step
        if self.total is None:
            self.bar.update(step)
            return
        room = max(0.0, self._done + self._stage - self.bar.n)
        self.overrun += max(0.0, step - room)
        self._advance_to(self.bar.n + min(step, room))

    def close(self) -> dict[str, float]:
        """Move the bar to its total, close it and return the per-family seconds with their ``"total"``."""
        if self.total is not None:
            self._advance_to(self.total)
        self.bar.close()
        return {**dict(self.seconds), "total": time.perf_counter() - self.start}
