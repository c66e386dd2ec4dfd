"""The state of one :func:`train_to_budget` search: fits, their measurements, limits and progress."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import lightgbm as lgb
import numpy as np

from .._compat import param_aliases
from ..core._costs import FeatureCosts
from ..core._ensemble import TreeEnsemble
from ..core._leaf_cost import row_costs_from_leaves
from ..core._report import model_coupled_cost
from ..core._status import fits_budget
from ._result import Candidate

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
        ``score_fn(booster, X, y)``, higher is better.
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
                      decay: tuple[float, float] | None = None) -> lgb.Booster:
        """Train the user's parameters with ``extra`` on ``data`` for this search's rounds.

        ``decay``: ``cegb_tradeoff`` falls geometrically from ``decay[0]`` to ``decay[1]``.
        """
        callbacks = [] if decay is None else [lgb.reset_parameter(cegb_tradeoff=_decay(*decay, self.rounds))]
        return lgb.train(self.params_for(extra), data, num_boost_round=self.rounds, callbacks=callbacks)

    def row_costs(self, booster: lgb.Booster, X: Any, ens: TreeEnsemble | None = None) -> np.ndarray:
        """Return each row's cost: LightGBM routes the rows (its C++ predictor), the accounting is cost_report's."""
        ens = TreeEnsemble.from_booster(booster) if ens is None else ens
        return row_costs_from_leaves(ens, booster.predict(X, pred_leaf=True), self.fc)

    def batches(self, work: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[list[Any]]:
        """Yield ``work``'s results ``n_jobs`` items at a time (threads), in the order of ``items``.

        Raises
        ------
        SearchCut
            Before a batch that ``max_fits`` or ``time_limit`` does not allow (batches already
            yielded stay).
        """
        step = max(1, self.clock.n_jobs)
        for i in range(0, len(items), step):
            batch = list(items[i : i + step])
            self.clock.allow(len(batch))
            if len(batch) == 1:
                yield [work(batch[0])]
            else:
                with ThreadPoolExecutor(max_workers=len(batch)) as pool:
                    yield list(pool.map(work, batch))

    def _train_one(self, spec: Spec) -> tuple[Candidate, lgb.Booster]:
        t0 = time.perf_counter()
        b = self.train_booster(spec.extra, self.train, spec.decay)
        ens = TreeEnsemble.from_booster(b)
        row_cost = self.row_costs(b, self.Xv, ens)
        c = Candidate(
            family=spec.family,
            params=dict(spec.extra),
            k=spec.k,
            tradeoff=spec.tradeoff,
            score=float(self.score_fn(b, self.Xv, self.yv)),
            cost=float(np.mean(row_cost)),
            coupled_cost=model_coupled_cost(ens, self.fc)[1],
            constant=bool(np.sum(b.feature_importance("split")) == 0),
            rows=self.rows,
            proxy=self.proxy,
            seconds=time.perf_counter() - t0,
            cost_sd=float(np.std(row_cost)),
            decay=spec.decay,
        )
        return c, b

    def fit_many(self, specs: Sequence[Spec]) -> list[Candidate]:
        """Train ``specs`` (in parallel with ``n_jobs`` threads); results in the order of ``specs``.

        The candidates are the same as serial fits: each one is trained with its own parameters
        on the same rows; only their wall-clock order differs.

        Raises
        ------
        SearchCut
            Before a fit that ``max_fits`` or ``time_limit`` does not allow (fits already done stay).
        """
        out: list[Candidate] = []
        for done in self.batches(self._train_one, specs):
            for c, b in done:
                self.frontier.append(c)
                self.boosters.append(b)
                self.clock.record(c, self.best_score())
                out.append(c)
        return out

    def fit(self, spec: Spec) -> Candidate:
        """Train one candidate (see :meth:`fit_many`)."""
        return self.fit_many([spec])[0]

    def best_score(self) -> float | None:
        """Best validation score among this row set's candidates within the main budget."""
        fits = [c.score for c in self.frontier if fits_budget(c.cost, self.clock.budget)]
        return max(fits) if fits else None


class Clock:
    """Fit and time limits, per-family wall time and the progress bar of one search.

    The bar counts in units of ONE training of the user's model on every row: a proxy fit on
    ``m`` of ``n`` rows counts ``m / n``, so the bar's position is the search's cost so far
    as a multiple of one training.
    """

    def __init__(
        self,
        budget: float,
        n_rows: int,
        max_fits: int | None,
        time_limit: float | None,
        n_jobs: int,
        progress: bool,
        planned: float,
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
        self.bar = tqdm(
            total=round(planned, 2), disable=not progress, desc="train_to_budget", unit="training",
            bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} trainings [{elapsed}<{remaining}{postfix}]",
        )

    def allow(self, n: int) -> None:
        """Raise :class:`SearchCut` if ``n`` more fits would pass a limit (the first fit always runs)."""
        if self.nfev > 0 and self.max_fits is not None and self.nfev + n > self.max_fits:
            self.cut = f"max_fits={self.max_fits} reached"
        elif self.nfev > 0 and self.time_limit is not None and time.perf_counter() - self.start > self.time_limit:
            self.cut = f"time_limit={self.time_limit:g} s reached"
        if self.cut is not None:
            raise SearchCut(self.cut)
        self.nfev += n

    def record(self, c: Candidate, best: float | None) -> None:
        """Account one finished candidate: its family's time and the bar."""
        self.record_raw(("proxy:" if c.proxy else "") + c.family, c.seconds, c.rows)
        self.bar.set_postfix(best="-" if best is None else f"{best:.4g}", refresh=False)

    def record_raw(self, family: str, seconds: float, rows: float) -> None:
        """Account one fit's time to ``family`` and advance the bar by ``rows`` (row-rounds) / all rows."""
        self.seconds[family] += seconds
        step = rows / self.n_rows
        if self.bar.n + step > self.bar.total:
            self.bar.total = round(self.bar.n + step, 2)
        self.bar.update(step)

    def close(self) -> dict[str, float]:
        """Close the bar and return the per-family seconds with their ``"total"``."""
        self.bar.total = self.bar.n
        self.bar.close()
        return {**dict(self.seconds), "total": time.perf_counter() - self.start}
