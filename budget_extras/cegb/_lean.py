"""search="lean": every family on short proxies, the best few refit on every row (or cross-validated).

Plain LightGBM trains on every row; every family of the full search runs on proxies (a share of
the rounds at a larger learning rate, optionally fewer rows); proxies only rank. At each budget the
best proxies, their costs read through the refits made so far (:class:`_Calibrated`), are refit on
every row, or with a cross-validated choice shortlisted for the folds (:func:`lean_shortlist`).
With the option ``capped`` (the fork), each budget also gets the fast search's capped lazy-CEGB
model trained on every row (:func:`train_capped`), which competes with the refits.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._compat import param_value
from ..core._params import Interval, check_scalar
from ..core._status import fits_budget
from . import _families as fam
from ._fast import RANK_ROUNDS, cap_margin, capped_spec, decay_end, retry_over_budget
from ._result import Candidate
from ._search import Search, Spec

if TYPE_CHECKING:
    import lightgbm as lgb

    from ._strategies import Plan, PlanInput, SearchRun

__all__ = ["LEAN_DEFAULTS", "LEAN_MIN_ROWS", "lean_shortlist", "lean_shortlist_most", "plan_lean", "refit_calibrated",
           "run_lean", "train_capped"]


class _Calibrated:
    """Proxies ranked with their costs read through the full-round models made from them so far.

    A proxy on fewer rounds buys fewer features than its refit. Each full-round model's cost
    over its proxy's scales the proxy costs of its kind (CEGB candidates; subsets and plain
    models: the geometric mean of the ratios seen); a candidate inside a feature subset costs
    at most the subset's purchase for every row; a candidate already on every row and every
    round (not a proxy) counts at its own cost.
    """

    def __init__(self, finished: list[Candidate], subset_cost: Callable[[list[int]], float],
                 fit: Callable[[Candidate], Candidate]) -> None:
        self.finished, self.subset_cost, self._fit = finished, subset_cost, fit
        self.ratios: dict[bool, list[float]] = {False: [], True: []}  # by whether the candidate is CEGB
        self.done: dict[int, Candidate] = {}  # position in `finished` -> its full-round model

    def cost(self, i: int) -> float:
        """Return candidate ``i``'s cost as a full-round model (its own where one was made)."""
        if i in self.done:
            return self.done[i].cost
        c = self.finished[i]
        if not c.proxy:
            return c.cost
        seen = self.ratios[c.tradeoff is not None]
        read = c.cost * (math.exp(sum(math.log(x) for x in seen) / len(seen)) if seen else 1.0)
        subset = c.params.get("interaction_constraints")
        return min(read, self.subset_cost(subset[0])) if subset else read

    def fit(self, i: int) -> None:
        """Make candidate ``i``'s full-round model; its cost over the proxy's joins the ratios."""
        c = self.finished[i]
        self.done[i] = self._fit(c)
        if c.proxy and c.cost > 0 and self.done[i].cost > 0:
            self.ratios[c.tradeoff is not None].append(self.done[i].cost / c.cost)

    def fit_once(self, i: int) -> None:
        """Make candidate ``i``'s full-round model unless it was made."""
        if i not in self.done:
            self.fit(i)

    def best_at(self, b: float, tries: int, finalists: int) -> None:
        """At budget ``b``: fit the best candidate by validation score whose cost read so fits.

        Until the ``finalists`` best are fitted, at most ``tries`` fits; where none fits and no
        fitted model does, the cheapest is fitted.
        """
        finished = self.finished
        for _ in range(tries):
            ranked = sorted((i for i in range(len(finished)) if fits_budget(self.cost(i), b)),
                            key=lambda i: (-finished[i].score, finished[i].constant, self.cost(i)))
            if not ranked:
                left = [i for i in range(len(finished)) if i not in self.done]
                if left and not any(fits_budget(c.cost, b) for c in self.done.values()):
                    self.fit(min(left, key=lambda i: (self.cost(i), -finished[i].score)))
                break
            todo = [i for i in ranked[:finalists] if i not in self.done]
            if not todo:
                break
            self.fit(todo[0])


def refit_calibrated(proxy: Search, full: Search, targets: list[float], tries: int, finalists: int = 1) -> None:
    """Refit on every row the best proxy at each budget, reading proxy costs through the refits' costs.

    At each budget, in increasing order (a refit that misses one may fit the next), the best
    proxy by validation score whose cost read through the refits made (:class:`_Calibrated`)
    fits is refit (a proxy already refit counts at its refit's cost) until the ``finalists``
    best are refit, at most ``tries`` refits a budget. Where no proxy fits and no refit does,
    the cheapest proxy is refit.
    """
    finished = [c for c in proxy.frontier if c.rounds is None]  # not stopped by successive halving
    cal = _Calibrated(finished, lambda sel: fam.subset_cost(proxy.fc, sel),
                      lambda c: full.fit(Spec(c.family, c.params, c.k, c.tradeoff)))
    for b in sorted(targets):
        cal.best_at(b, tries, finalists)


#: Where a full-round tradeoff step aims, as a share of the budget (costs move between fits).
REFINE_AIM = 0.97
#: A full-round CEGB model costing at least this share of its budget (and fitting it) ends the steps.
REFINE_CLOSE = 0.93


def _sweep_key(c: Candidate) -> tuple[str, str]:
    """Return the CEGB sweep ``c`` belongs to: its family and parameters but the tradeoff."""
    return c.family, repr(sorted((k, v) for k, v in c.params.items() if k != "cegb_tradeoff"))


def _tradeoff_at(pts: list[tuple[float, float]], aim: float) -> float | None:
    """Return the tradeoff at which the cost would be ``aim``, read from (tradeoff, cost) ``pts``.

    Linearly in the cost and the tradeoff's logarithm between the two neighbouring points whose
    costs straddle ``aim`` (a constant model's cost 0 among them); past the ends, a step of
    ``sqrt(10)`` (the cost falls as the tradeoff rises). None without a point.
    """
    pts = sorted((t, c) for t, c in pts if t > 0)
    if not pts:
        return None
    for (t1, c1), (t2, c2) in itertools.pairwise(pts):
        if c1 >= aim >= c2 and c1 > c2:
            w = (c1 - aim) / (c1 - c2)
            return math.exp(math.log(t1) + w * (math.log(t2) - math.log(t1)))
    return pts[-1][0] * math.sqrt(10.0) if all(c > aim for _, c in pts) else pts[0][0] / math.sqrt(10.0)


def refine_tradeoffs(proxy: Search, full: Search, targets: list[float], steps: int) -> None:
    """At each budget, step a CEGB model's tradeoff on the full rounds towards the budget, ``steps`` times at most.

    The model stepped: the best full-round CEGB model by validation score that misses the
    budget and scores above every model that fits it, else the best model that fits if it is
    CEGB and spends under :data:`REFINE_CLOSE` of the budget, else (no full-round CEGB model
    at all) the sweep of the best CEGB proxy whose cost, read through the ratio of full-round
    CEGB costs to their proxies', fits. A step places a tradeoff of the model's sweep (its
    family and parameters but the tradeoff) where the cost would be :data:`REFINE_AIM` of the
    budget: between its full-round models that straddle that, else on its proxies' costs times
    the sweep's ratio (every sweep's where it has none), and trains it on every row (a tradeoff
    already trained ends the budget's steps).
    """
    cegb = [c for c in proxy.frontier if c.tradeoff is not None and c.rounds is None and c.decay is None]
    for b in sorted(targets) if steps > 0 and cegb else []:
        tried: set[float] = set()
        for _ in range(steps):
            base = _to_step(cegb, full.frontier, b, lambda sel: fam.subset_cost(full.fc, sel))
            if base is None:
                break
            key = _sweep_key(base)
            own = [(float(c.tradeoff), c.cost) for c in full.frontier
                   if c.tradeoff is not None and _sweep_key(c) == key]
            r = _ratios(cegb, full.frontier)
            scaled = [(float(c.tradeoff or 0), c.cost * r.get(key, r[None])) for c in cegb if _sweep_key(c) == key]
            t = _tradeoff_at(own, REFINE_AIM * b) if _straddles(own, REFINE_AIM * b) else None
            t = t if t is not None else _tradeoff_at(scaled, REFINE_AIM * b)
            if t is None or t in tried or any(t == u for u, _ in own):
                break
            tried.add(t)
            full.fit(Spec(base.family, {**base.params, "cegb_tradeoff": t}, base.k, t))


def _to_step(cegb: list[Candidate], done: list[Candidate], b: float,
             subset_cost: Callable[[list[int]], float]) -> Candidate | None:
    """Return the model whose sweep :func:`refine_tradeoffs` steps at budget ``b`` (None: none).

    A model inside a feature subset whose purchase for every row fits ``b`` cannot spend more:
    it is not stepped for spending under the budget.
    """
    done = [c for c in done if c.rounds is None and not c.constant]
    fit = [c for c in done if fits_budget(c.cost, b)]
    top = max(fit, key=lambda c: (c.score, -c.cost)) if fit else None
    over = [c for c in done if c.tradeoff is not None and c.decay is None and not fits_budget(c.cost, b)
            and (top is None or c.score > top.score)]
    if over:
        return max(over, key=lambda c: (c.score, -c.cost))
    if top is not None and top.tradeoff is not None and top.decay is None:
        subset = top.params.get("interaction_constraints")
        room = not subset or not fits_budget(subset_cost(subset[0]), b)
        return top if top.cost < REFINE_CLOSE * b and room else None
    if any(c.tradeoff is not None for c in done):
        return None
    r = _ratios(cegb, done)
    fits = [c for c in cegb if not c.constant and fits_budget(c.cost * r.get(_sweep_key(c), r[None]), b)]
    return max(fits, key=lambda c: (c.score, -c.cost)) if fits else None


def _straddles(pts: list[tuple[float, float]], aim: float) -> bool:
    """Return whether some cost of ``pts`` is at least ``aim`` and some other at most."""
    return any(c >= aim for _, c in pts) and any(c <= aim for _, c in pts)


def _ratios(cegb: list[Candidate], done: list[Candidate]) -> dict[Any, float]:
    """Return each sweep's full-round cost over its proxy's (geometric mean; key None: over every sweep, else 1)."""
    proxy_cost = {(_sweep_key(c), c.tradeoff): c.cost for c in cegb}
    logs: dict[Any, list[float]] = {}
    for c in done:
        if c.tradeoff is None:
            continue
        p = proxy_cost.get((_sweep_key(c), c.tradeoff))
        if p is not None and p > 0 and c.cost > 0:
            logs.setdefault(_sweep_key(c), []).append(math.log(c.cost / p))
    out: dict[Any, float] = {k: math.exp(sum(v) / len(v)) for k, v in logs.items()}
    every = [x for v in logs.values() for x in v]
    out[None] = math.exp(sum(every) / len(every)) if every else 1.0
    return out


#: The lean search's knobs and their defaults (``options=``).
LEAN_DEFAULTS: dict[str, Any] = {"rounds": 0.25, "rows": 1.0, "boost": True, "bisect": 1, "greedy_steps": 0,
                                 "greedy_rounds": 20, "refits": 3, "finalists": 1, "shortlist": 2, "refine": 0,
                                 "capped": False}

#: Fewest training rows of a lean proxy (all of them when there are fewer).
LEAN_MIN_ROWS = 2000


@dataclass(frozen=True)
class _Lean:
    """The lean search's validated knobs, resolved against one call."""

    rounds: int  # the proxies' rounds
    rows: int  # the proxies' training rows (of those the search trains on)
    boost: bool
    bisect: int
    greedy_steps: int
    greedy_rounds: int
    refits: int
    finalists: int
    shortlist: int
    refine: int
    capped: bool


def _lean(options: Mapping[str, Any], rounds: int, rows: int) -> _Lean:
    """Validate the lean knobs (naming the one refused) and resolve them for ``rounds`` and ``rows``.

    Raises
    ------
    ValueError, TypeError
        By the parameter table's rule, naming the option.
    """
    where = {"owner": "train_to_budget(options=...)", "kind": "option"}
    share = [Interval(numbers.Real, 0, 1, closed="right")]
    check_scalar(options["rounds"], "rounds", share, **where)
    check_scalar(options["rows"], "rows", share, **where)
    check_scalar(options["boost"], "boost", ["boolean"], **where)
    check_scalar(options["bisect"], "bisect", [Interval(numbers.Integral, 0, None, closed="left")], **where)
    check_scalar(options["greedy_steps"], "greedy_steps", [Interval(numbers.Integral, 0, None, closed="left")],
                 **where)
    check_scalar(options["greedy_rounds"], "greedy_rounds", [Interval(numbers.Integral, 1, None, closed="left")],
                 **where)
    check_scalar(options["refits"], "refits", [Interval(numbers.Integral, 1, None, closed="left")], **where)
    check_scalar(options["finalists"], "finalists", [Interval(numbers.Integral, 1, None, closed="left")], **where)
    check_scalar(options["shortlist"], "shortlist", [Interval(numbers.Integral, 1, None, closed="left")], **where)
    check_scalar(options["refine"], "refine", [Interval(numbers.Integral, 0, None, closed="left")], **where)
    check_scalar(options["capped"], "capped", ["boolean"], **where)
    m = min(rows, max(LEAN_MIN_ROWS, round(float(options["rows"]) * rows)))
    return _Lean(max(1, round(float(options["rounds"]) * rounds)), m, bool(options["boost"]), int(options["bisect"]),
                 int(options["greedy_steps"]), int(options["greedy_rounds"]), int(options["refits"]),
                 int(options["finalists"]), int(options["shortlist"]), int(options["refine"]),
                 bool(options["capped"]))


def plan_lean(p: PlanInput, options: Mapping[str, Any]) -> Plan:
    """Return the lean search's stages: plain on every row, the families on proxies, the refits."""
    o, t = p.opts, len(p.opts.targets)
    k = _lean(options, o.rounds, p.rows)
    unit = p.share * (k.rows / max(1, p.rows)) * (k.rounds / o.rounds)  # one proxy fit, in trainings
    n_grid = len(o.k_grid) if o.k_grid is not None else 5
    greedy = fam.planned_greedy(p.n_features, k.rows, False, k.rounds, steps=k.greedy_steps,
                                select_rounds=k.greedy_rounds) if o.greedy and k.greedy_steps else 0.0
    return [
        ("all", 1.0),
        ("topk", unit * fam.planned_topk(p.n_features, n_grid, t)),
        ("greedy", unit * greedy),
        ("lazy", unit * fam.planned_lazy_sweep(o.n_tradeoffs, k.bisect, t)),
        ("lazy_subsets", unit * fam.planned_lazy_in_subsets(t, k.bisect)),
        ("lazy_coupled", unit * fam.planned_lazy_sweep(3, k.bisect, t) if p.coupled else 0.0),
        ("smaller_trees", unit * fam.planned_smaller_trees(t, len(o.leaves_grid))),
        ("refit", 0.0 if p.cross_validated else float(k.refits * t)),  # cross-validated: the shortlist's
        ("refine", 0.0 if p.cross_validated else float(k.refine * t)),
        ("capped", 2.0 * t if k.capped else 0.0),  # one a budget, and its retry where it misses
    ]


def _lean_proxy(r: SearchRun, k: _Lean) -> Search:
    """Return the lean proxy: ``k.rows`` of the search's rows, ``k.rounds`` rounds, a learning rate to match."""
    o, rows = r.opts, r.search.indices
    n = r.search.rows
    idx = rows
    if k.rows < n:
        rng = np.random.default_rng([int(o.base.get("seed", 0)) & 0xFFFFFFFF, 11])
        pick_ = np.sort(rng.choice(n, size=k.rows, replace=False))
        idx = pick_ if rows is None else rows[pick_]
    lr = None
    if k.boost and k.rounds < o.rounds:
        user = param_value(o.base, "learning_rate", 0.1)
        lr = min(1.0, float(user) * o.rounds / k.rounds)
    return r.sample(idx, len(r.full.yv), k.rounds, lr)


def run_lean(r: SearchRun) -> None:
    """Plain LightGBM on every row; every family on the lean proxy; the best proxies refit on every row.

    With a cross-validated choice the refits are left to :func:`lean_shortlist`. With ``capped``,
    each budget's capped lazy-CEGB model on every row (:func:`train_capped`).

    Raises
    ------
    ValueError
        With ``capped`` and upstream LightGBM (no ``cegb_budget``), before any training.
    """
    o = r.opts
    k = _lean(r.options, o.rounds, r.search.rows)
    if k.capped and not r.fork:
        raise ValueError("The option 'capped' of search='lean' needs the lightgbm-cegb fork (its cegb_budget "
                         "parameter); the imported lightgbm is upstream LightGBM. Leave 'capped' False.")
    with r.stage("all"):
        c0, rank = fam.plain_and_ranking(r.full)
    plain = r.full.boosters[-1]
    s = r.proxy = _lean_proxy(r, k)
    greedy = {"steps": k.greedy_steps, "rounds": k.greedy_rounds} if o.greedy and k.greedy_steps else None
    from ._strategies import run_families  # the full search's families (that module imports this one)

    run_families(r, s, rank, greedy=greedy, bisect=k.bisect, subset_bisect=k.bisect, coupled_bisect=k.bisect)
    if not r.cross_validated:
        with r.stage("refit"):
            refit_calibrated(s, r.full, o.targets, k.refits, k.finalists)
        with r.stage("refine"):
            refine_tradeoffs(s, r.full, o.targets, k.refine)
    if k.capped:
        with r.stage("capped"):
            train_capped(r.full, c0, plain, rank, o.targets, r.fork)


def train_capped(full: Search, c0: Candidate, plain: lgb.Booster, rank: fam.Ranking, targets: list[float],
                 fork: bool) -> None:
    """At each budget, train the fast search's capped lazy-CEGB model on every row; retry one that misses.

    The plain model on every row (``c0``, ``plain``) stands in for the fast search's ranking
    model: its first :data:`~._fast.RANK_ROUNDS` iterations' convergence set the last tradeoff
    (:func:`~._fast.decay_end`; they are the model a training of that many rounds gives), its
    per-row cost spread the cap's margin under each budget (:func:`~._fast.cap_margin`). A
    capped model whose validation cost misses its budget, and whose validation score is above
    every model on every row that fits it, is trained once more with a lower cap
    (:func:`~._fast.retry_over_budget`); one that would not be chosen anyway is not.
    """
    last = decay_end(plain, RANK_ROUNDS)
    knobs = fam.cegb_knobs(full, rank, fork)
    margin = cap_margin(c0, len(full.yv), full.rows)
    budgets = sorted(targets)
    done = full.fit_many([capped_spec(knobs, max(0.0, b - margin), last) for b in budgets])
    retry_over_budget(full, [(c, b) for c, b in zip(done, budgets, strict=True) if c.score > _best_within(full, b)])


def _best_within(full: Search, b: float) -> float:
    """Return the best validation score of the models on every row that fit ``b`` (-inf: none)."""
    return max((c.score for c in full.frontier if c.rounds is None and fits_budget(c.cost, b)), default=-math.inf)


def lean_shortlist(r: SearchRun, cross_validate: Callable[[Candidate], Candidate]) -> list[Candidate]:
    """Cross-validate the lean search's shortlist; return the configurations cross-validated.

    Every proxy and the plain model rank, each configuration once. At each budget, in
    increasing order: the ``shortlist`` best by validation score whose cost fits, proxy costs
    read through the held-out costs of the configurations cross-validated so far
    (:class:`_Calibrated`), at most ``refits`` a budget; the best top-k subset whose cost so
    read fits (the noise warning's rival); at the end the cheapest (a constant model, the
    other rival, where the search reached one).
    """
    k = _lean(r.options, r.opts.rounds, r.search.rows)
    seen: set[str] = set()
    finished = []
    for c in (r.proxy.frontier if r.proxy is not None else []) + r.full.frontier:
        key = repr(sorted(c.params.items()))
        if c.rounds is None and key not in seen:  # not stopped by successive halving; each configuration once
            seen.add(key)
            finished.append(c)
    cal = _Calibrated(finished, lambda sel: fam.subset_cost(r.full.fc, sel), cross_validate)
    for b in sorted(r.opts.targets):
        cal.best_at(b, k.refits, k.shortlist)
        subsets = [i for i, c in enumerate(finished) if c.family.startswith("topk") and fits_budget(cal.cost(i), b)]
        if subsets:
            cal.fit_once(max(subsets, key=lambda i: (finished[i].score, -cal.cost(i))))
    if finished:
        cal.fit_once(_rival_constant(finished))
    return list(cal.done.values())


def _rival_constant(finished: list[Candidate]) -> int:
    """Return the position of the constant proxy with the largest tradeoff (else the cheapest candidate).

    A proxy trains fewer rounds at a larger learning rate: the CEGB penalty that kept it
    constant is likeliest to keep the full-round model constant where it is the largest (and a
    constant model stops after its first round, so its folds cost little).
    """
    const = [i for i, c in enumerate(finished) if c.constant]
    if const:
        return max(const, key=lambda i: (finished[i].tradeoff or math.inf, -finished[i].cost))
    return min(range(len(finished)), key=lambda i: (finished[i].cost, -finished[i].score))


def lean_shortlist_most(n_targets: int, options: Mapping[str, Any]) -> int:
    """Return the most configurations :func:`lean_shortlist` cross-validates for ``n_targets`` budgets."""
    return n_targets * (int(options["refits"]) + 1) + 1
