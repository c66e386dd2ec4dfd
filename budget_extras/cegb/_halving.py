"""Successive halving of :func:`train_to_budget`'s candidates on LightGBM's own continuation.

A batch of candidates is trained together, a few rounds at a time, each on a live booster over
the one constructed training Dataset (``Booster.update()``). At every rung (a share of the
rounds) each live candidate is measured on the validation rows; a candidate is dropped when
another, at the same rung, has no higher cost and a validation score higher by more than
``margin`` times the spread of the scores at that rung. The others go on to every round. The
rung measurements of every finished candidate of the search stay, so later batches (one
bisection fit, one refit) are compared with everything trained before them.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import lightgbm as lgb
import numpy as np

from .._compat import param_value
from ..core._params import Interval, check_scalar
from ._result import Candidate

if TYPE_CHECKING:
    from ._search import Search, Spec

__all__ = ["Halving", "fit_halving", "halving_from_options"]

#: The full search's halving knobs and their defaults (``options=``).
DEFAULTS: dict[str, Any] = {"halving": False, "rungs": (0.25,), "margin": 0.0}


@dataclass(frozen=True)
class Halving:
    """Where candidates are compared (``rungs``, shares of the rounds) and by how much they must lose."""

    rungs: tuple[float, ...]
    margin: float

    def rounds_at(self, total: int) -> list[int]:
        """Return the rungs in rounds of ``total`` (each at least 1, below ``total``, increasing)."""
        return sorted({r for r in (max(1, math.floor(q * total)) for q in self.rungs) if r < total})


def halving_from_options(options: dict[str, Any]) -> Halving | None:
    """Return the halving the knobs ask for (None: every candidate to every round).

    Raises
    ------
    ValueError, TypeError
        Naming the option (``halving``, ``rungs``, ``margin``), by the parameter table's rule.
    """
    where = {"owner": "train_to_budget(options=...)", "kind": "option"}
    check_scalar(options.get("halving"), "halving", ["boolean"], **where)
    rungs, margin = options.get("rungs"), options.get("margin")
    if isinstance(rungs, (str, bytes, bytearray)) or not isinstance(rungs, Iterable):
        raise TypeError(f"The 'rungs' option of train_to_budget(options=...) must be a sequence of numbers in "
                        f"(0, 1). Got {rungs!r} instead.")
    qs = tuple(rungs)
    for q in qs:
        check_scalar(q, "rungs", [Interval(numbers.Real, 0, 1, closed="neither")], **where)
    check_scalar(margin, "margin", [Interval(numbers.Real, 0, None, closed="left")], **where)
    assert margin is not None  # for mypy: the table refused None
    qs = tuple(float(q) for q in qs)
    return Halving(tuple(sorted(set(qs))), float(margin)) if options["halving"] and qs else None


@dataclass
class _Live:
    """One candidate in training."""

    spec: Spec
    booster: lgb.Booster
    seconds: float = 0.0
    at: dict[int, tuple[float, float]] | None = None
    stopped: int | None = None


def _advance(s: Search, x: _Live, start: int, stop: int) -> None:
    """Train ``x`` from round ``start`` to ``stop`` (the decaying tradeoff reset before each round)."""
    t0 = time.perf_counter()
    decay = None if x.spec.decay is None else _decay_fn(*x.spec.decay, s.rounds)
    for i in range(start, stop):
        if decay is not None:
            x.booster.reset_parameter({"cegb_tradeoff": decay(i)})
        x.booster.update()
    x.seconds += time.perf_counter() - t0


def _decay_fn(first: float, last: float, rounds: int) -> Any:
    return lambda i: first * (last / first) ** (i / max(1, rounds - 1))


def _measure(s: Search, x: _Live, rung: int) -> None:
    """Score and cost ``x`` on the validation rows at ``rung``.

    LightGBM's predict sets the calling thread's OpenMP threads to its own ``num_threads``
    (all cores unless given); training on after it would keep them, so the booster's
    ``num_threads`` is set again before it trains on.
    """
    t0 = time.perf_counter()
    cost = float(np.mean(s.row_costs(x.booster, s.Xv)))
    x.at = {**(x.at or {}), rung: (float(s.score_fn(x.booster, s.Xv, s.yv)), cost)}
    threads = param_value(s.base, "num_threads", 0)
    x.booster.reset_parameter({"num_threads": threads})
    x.seconds += time.perf_counter() - t0


def _drop_dominated(s: Search, live: list[_Live], rung: int, margin: float) -> None:
    """Stop every live candidate another one (live, or finished before) dominates at ``rung``."""
    refs = [h[rung] for h in s.history if rung in h] + [x.at[rung] for x in live if x.at]
    scores = [r[0] for r in refs]
    gap = margin * (max(scores) - min(scores)) if scores else 0.0
    for x in live:
        score, cost = x.at[rung]  # type: ignore[index]
        if any(c <= cost and v > score + gap for v, c in refs):
            x.stopped = rung


def fit_halving(s: Search, specs: Sequence[Spec], halving: Halving) -> list[tuple[Candidate, lgb.Booster, float]]:
    """Train ``specs`` with successive halving; return each one's candidate, booster and share of rounds trained.

    A stopped candidate is returned with its rung's score and cost, ``rounds`` set and marked
    ``proxy``. The ``n_jobs`` threads advance live candidates side by side.
    """
    live = []
    for spec in specs:
        t0 = time.perf_counter()
        b = lgb.Booster(params=s.params_for(spec.extra), train_set=s.train)
        live.append(_Live(spec, b, time.perf_counter() - t0))
    done = 0
    for stop in [*halving.rounds_at(s.rounds), s.rounds]:
        going = [x for x in live if x.stopped is None]
        _map(s, lambda x, a=done, b=stop: _advance(s, x, a, b), going)
        done = stop
        if stop == s.rounds:
            break
        _map(s, lambda x, r=stop: _measure(s, x, r), going)
        _drop_dominated(s, going, stop, halving.margin)
    out = []
    for x in live:
        x.booster.model_from_string(x.booster.model_to_string()).free_dataset()
        if x.stopped is None:
            c = s.measure(x.spec, x.booster, x.seconds)
            s.history.append(dict(x.at or {}))
        else:
            c = _stopped(s, x)
        out.append((c, x.booster, (x.stopped or s.rounds) / s.rounds))
    return out


def _stopped(s: Search, x: _Live) -> Candidate:
    """Return a stopped candidate: its last rung's score and cost, marked ``proxy`` (never returned)."""
    score, cost = x.at[x.stopped]  # type: ignore[index]
    used = np.asarray(x.booster.feature_importance("split")) > 0
    return Candidate(
        family=x.spec.family, params=dict(x.spec.extra), k=x.spec.k, tradeoff=x.spec.tradeoff, score=score,
        cost=cost, coupled_cost=float(np.asarray(s.fc.coupled)[used].sum()), constant=not bool(used.any()),
        rows=s.rows, proxy=True, seconds=x.seconds, decay=x.spec.decay, rounds=x.stopped,
    )


def _map(s: Search, fn: Any, items: list[_Live]) -> None:
    if s.clock.n_jobs > 1 and len(items) > 1:
        with ThreadPoolExecutor(max_workers=min(s.clock.n_jobs, len(items))) as pool:
            list(pool.map(fn, items))
    else:
        for x in items:
            fn(x)
