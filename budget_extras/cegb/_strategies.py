"""The search strategies of :func:`train_to_budget`, one table: ``search=`` names one or is a callable.

As scipy's ``minimize(method=...)``: every strategy is a :class:`Strategy` with its run, its
plan (the most work of each of its stages, declared before it starts: the progress bar's
total) and its knobs (``options=``; unknown keys warn).
"""

from __future__ import annotations

import inspect
import math
import numbers
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._compat import param_aliases
from ..core._params import Interval, check_scalar
from ..core._status import fits_budget
from . import _families as fam
from ._fast import RANK_ROUNDS, run_fast
from ._halving import DEFAULTS as HALVING_DEFAULTS
from ._halving import halving_from_options
from ._result import Candidate
from ._search import Search, Spec

__all__ = ["STRATEGIES", "PlanInput", "SearchRun", "Strategy", "resolve_strategy"]

#: Stages of a plan: (name, most work in trainings on every row), in order.
Plan = list[tuple[str, float]]


@dataclass(frozen=True)
class PlanInput:
    """What a plan is made from, known before any training.

    ``opts`` is the validated call (budgets ``targets``, ``rounds``, the full search's grids);
    ``share``: the proxy subsample's share of the training rows (1: no proxies); ``rows``: the
    rows the candidates are trained on; ``coupled``: whether the costs have coupled costs;
    ``cross_validated``: whether the choice is made by cross-validation (planned after the
    strategy's stages).
    """

    opts: Any
    n_features: int
    rows: int
    share: float
    coupled: bool
    cross_validated: bool = False


@dataclass
class SearchRun:
    """What a strategy runs on.

    Attributes
    ----------
    search : Search
        Where the candidates are trained: the proxy subsample on large training sets, else
        every row. ``search.fit(Spec(family, params))`` trains and measures one candidate.
    full : Search
        Every training row (the models the search may return).
    proxy : Search or None
        The proxy subsample (None: none).
    opts : _Options
        The validated call.
    fork : bool
        Whether the imported LightGBM is the fork.
    options : dict
        The strategy's knobs: its defaults updated with ``options=``.
    sample : callable
        ``sample(indices, m, rounds, learning_rate=None)`` returns a proxy :class:`Search` on the
        training rows ``indices`` (None: every row), ``m`` validation rows and ``rounds`` rounds
        (a fit counts ``rounds / num_boost_round`` of a training), with ``learning_rate`` in place
        of the user's if given; a strategy that ranks on one sets :attr:`proxy` to it (its
        candidates join the frontier as proxies).
    cross_validated : bool
        Whether the choice is made by cross-validation after the run (a strategy with its own
        :attr:`Strategy.shortlist` then leaves the refits to it).
    """

    search: Search
    full: Search
    proxy: Search | None
    opts: Any
    fork: bool
    options: dict[str, Any]
    sample: Callable[..., Search]
    cross_validated: bool = False

    def stage(self, *names: str) -> Any:
        """Return the context in which the plan's stages ``names`` run together (the bar's accounting)."""
        return self.search.clock.stage(*names)


@dataclass(frozen=True)
class Strategy:
    """One way of searching.

    Attributes
    ----------
    run : callable
        ``run(search_run)`` trains the candidates (``search_run.options`` holds the knobs).
    plan : callable or None
        ``plan(plan_input, options)`` returns the stages in order with their most work in
        trainings on every row; None: no plan (the bar counts without a total).
    options : mapping
        The knobs and their defaults (``options=`` may set these keys only).
    fork_only : bool
        Whether it needs the lightgbm-cegb fork.
    proxies : bool
        Whether it trains on the proxy subsample of a large training set (else every row).
    cross_validates : bool
        Whether ``choose="cv"`` may choose among its candidates (else they are chosen on the
        validation rows).
    shortlist : callable or None
        ``shortlist(search_run, cross_validate)`` returns the configurations it cross-validated
        (``cross_validate(candidate)`` returns one cross-validated); None: the candidates on
        every training row are shortlisted by validation score (:func:`._cv.shortlist`).
    shortlist_most : callable or None
        ``shortlist_most(n_budgets, options)``: the most configurations :attr:`shortlist`
        cross-validates (the plan's); None: :func:`._cv.shortlist`'s.
    pool_refit : bool
        For a strategy that does not cross-validate: whether, where ``choose="auto"`` would
        cross-validate, each budget's pick on the validation rows is refit on the training and
        validation rows pooled and returned (:func:`._fast.refit_on_pool`).
    """

    run: Callable[[SearchRun], None]
    plan: Callable[[PlanInput, Mapping[str, Any]], Plan] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    fork_only: bool = False
    proxies: bool = True
    cross_validates: bool = True
    shortlist: Callable[[SearchRun, Callable[[Candidate], Candidate]], list[Candidate]] | None = None
    shortlist_most: Callable[[int, Mapping[str, Any]], int] | None = None
    pool_refit: bool = False


# ---------------------------------------------------------------------------------------------
# search="full": every family


def _plan_full(p: PlanInput, options: Mapping[str, Any]) -> Plan:
    """Return the full search's stages: each family's most fits at its share of the rows."""
    o, t, share = p.opts, len(p.opts.targets), p.share
    n_grid = len(o.k_grid) if o.k_grid is not None else 5
    cross_fit = share >= 1 and p.rows <= fam.CROSS_FIT_ROWS
    plan: Plan = [
        ("all", share),
        ("topk", share * fam.planned_topk(p.n_features, n_grid, t)),
        ("greedy", share * fam.planned_greedy(p.n_features, p.rows, cross_fit, o.rounds) if o.greedy else 0.0),
        ("lazy", share * fam.planned_lazy_sweep(o.n_tradeoffs, o.n_bisect, t)),
        ("lazy_subsets", share * fam.planned_lazy_in_subsets(t)),
        ("lazy_coupled", share * fam.planned_lazy_sweep(3, 2, t) if p.coupled else 0.0),
        ("smaller_trees", share * fam.planned_smaller_trees(t, len(o.leaves_grid))),
    ]
    if share < 1:
        plan.append(("refit", 3.0 * t))
    return plan


def _run_families(r: SearchRun, s: Search, rank: Any, *, greedy: dict[str, int] | None, bisect: int,
                 subset_bisect: int, coupled_bisect: int) -> None:
    """Train the candidate families of the full search on ``s``, each in its stage of ``r``'s plan.

    Top-k subsets; greedy selection (``greedy``: its ``steps``/``rounds``, ``{}`` for the
    defaults; None: skipped); the tradeoff sweeps, run together (:func:`~._families.run_sweeps`):
    lazy CEGB (``bisect`` bisections a budget), lazy CEGB inside the subsets (``subset_bisect``)
    and with coupled costs the coupled sweep (``coupled_bisect``); smaller trees. ``rank`` is
    the plain model's feature ranking.
    """
    o = r.opts
    seen: set[frozenset[int]] = set()
    grid = o.k_grid if o.k_grid is not None else fam.default_k_grid(rank.by_gain.size)
    with r.stage("topk"):
        subsets = fam.topk(s, rank, grid, seen, o.targets)
    with r.stage("greedy"):
        if greedy is not None and rank.by_gain.size > 1:
            subsets += fam.greedy_forward(s, rank, seen, **greedy)
    knobs = fam.cegb_knobs(s, rank, r.fork)
    exps = np.linspace(-2.0, 2.0, o.n_tradeoffs) if o.n_tradeoffs else np.array([])
    sweeps = [fam.Sweep("lazy", knobs, None, [rank.scale * 10.0**e for e in exps], bisect),
              *fam.subset_sweeps(subsets, knobs, rank.scale, o.targets, subset_bisect)]
    if np.any(np.asarray(s.fc.coupled) > 0):
        coupled = fam.cegb_knobs(s, rank, r.fork, coupled=True)
        sweeps.append(fam.Sweep("lazy_coupled", coupled, None, [rank.scale * 10.0**e for e in (-1.5, 0.0, 1.5)],
                                coupled_bisect))
    with r.stage("lazy", "lazy_subsets", "lazy_coupled"):  # independent sweeps, their steps side by side
        fam.run_sweeps(s, sweeps, o.targets)
    with r.stage("smaller_trees"):
        fam.smaller_trees(s, o.targets, o.leaves_grid)


def _run_full(r: SearchRun) -> None:
    """Every candidate family on ``r.search``, then (with proxies) the finalists refit on every row."""
    s, o = r.search, r.opts
    s.halving = halving_from_options(r.options)
    with r.stage("all"):
        _, rank = fam.plain_and_ranking(s)
    _run_families(r, s, rank, greedy={} if o.greedy else None, bisect=o.n_bisect, subset_bisect=2,
                 coupled_bisect=2)
    if r.proxy is not None:
        with r.stage("refit"):
            refit_finalists(r.proxy, r.full, o.targets, o.budget)


def refit_finalists(proxy: Search, full: Search, targets: list[float], budget: float, tries: int = 3) -> None:
    """Refit on every row the best proxy at each budget (``budget``, the main one, first).

    A refit that misses its budget is replaced by the next proxy, at most ``tries`` refits a budget.
    """
    done: dict[tuple[str, str], Candidate] = {}
    for b in sorted(targets, key=lambda t: t != budget):
        need, tried = 1, 0
        finished = [c for c in proxy.frontier if c.rounds is None]  # not stopped by successive halving
        ranked = sorted((c for c in finished if fits_budget(c.cost, b)), key=lambda c: (-c.score, c.constant, c.cost))
        if not ranked:  # infeasible at b: the cheapest proxy, so the cheapest full model is known
            ranked = sorted(finished, key=lambda c: (c.cost, -c.score))[:1]
        for c in ranked:
            key = (c.family, repr(sorted(c.params.items())))
            if key not in done:
                if tried == tries:
                    break
                tried += 1
                done[key] = full.fit(Spec(c.family, c.params, c.k, c.tradeoff))
            need -= bool(fits_budget(done[key].cost, b))
            if need <= 0:
                break


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


# ---------------------------------------------------------------------------------------------
# search="fast": the fork's learner budget


def _plan_fast(p: PlanInput, options: Mapping[str, Any]) -> Plan:
    """Return the fast search's stages: the ranking model, candidates, refits, retries.

    At most five candidates per budget and plain LightGBM once; a retry for each of the two capped
    candidates per budget (with proxies: for the one refit per budget).
    """
    t, rounds = len(p.opts.targets), p.opts.rounds
    if p.share < 1:
        return [("rank", p.share), ("candidates", p.share * (5 * t + 1)), ("refit", float(t)), ("retry", float(t))]
    return [("rank", min(RANK_ROUNDS, rounds) / rounds), ("candidates", 5.0 * t + 1), ("retry", 2.0 * t)]


def _run_fast(r: SearchRun) -> None:
    """Run the fast search; without proxies, its ranking model has every row, few rounds, 5,000 validation rows."""
    if r.proxy is None:
        r.proxy = r.sample(None, 5000, min(RANK_ROUNDS, r.opts.rounds))
    run_fast(r.proxy, r.full, lambda s, rank: fam.cegb_knobs(s, rank, r.fork), r.opts.targets, r.full.clock.stage)


# ---------------------------------------------------------------------------------------------
# search="lean": every family on short proxies, the best few refit on every row

#: The lean search's knobs and their defaults (``options=``).
LEAN_DEFAULTS: dict[str, Any] = {"rounds": 0.25, "rows": 1.0, "boost": True, "bisect": 1, "greedy_steps": 0,
                                 "greedy_rounds": 20, "refits": 3, "finalists": 1, "shortlist": 2}

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
    m = min(rows, max(LEAN_MIN_ROWS, round(float(options["rows"]) * rows)))
    return _Lean(max(1, round(float(options["rounds"]) * rounds)), m, bool(options["boost"]), int(options["bisect"]),
                 int(options["greedy_steps"]), int(options["greedy_rounds"]), int(options["refits"]),
                 int(options["finalists"]), int(options["shortlist"]))


def _plan_lean(p: PlanInput, options: Mapping[str, Any]) -> Plan:
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
        user = next((o.base[a] for a in sorted(param_aliases("learning_rate")) if a in o.base), 0.1)
        lr = min(1.0, float(user) * o.rounds / k.rounds)
    return r.sample(idx, len(r.full.yv), k.rounds, lr)


def _run_lean(r: SearchRun) -> None:
    """Plain LightGBM on every row; every family on the lean proxy; the best proxies refit on every row.

    With a cross-validated choice the refits are left to :func:`_lean_shortlist`.
    """
    o = r.opts
    k = _lean(r.options, o.rounds, r.search.rows)
    with r.stage("all"):
        _, rank = fam.plain_and_ranking(r.full)
    s = r.proxy = _lean_proxy(r, k)
    greedy = {"steps": k.greedy_steps, "rounds": k.greedy_rounds} if o.greedy and k.greedy_steps else None
    _run_families(r, s, rank, greedy=greedy, bisect=k.bisect, subset_bisect=k.bisect, coupled_bisect=k.bisect)
    if not r.cross_validated:
        with r.stage("refit"):
            refit_calibrated(s, r.full, o.targets, k.refits, k.finalists)


def _lean_shortlist(r: SearchRun, cross_validate: Callable[[Candidate], Candidate]) -> list[Candidate]:
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


def _lean_shortlist_most(n_targets: int, options: Mapping[str, Any]) -> int:
    """Return the most configurations :func:`_lean_shortlist` cross-validates for ``n_targets`` budgets."""
    return n_targets * (int(options["refits"]) + 1) + 1


#: The strategies ``search=`` names.
STRATEGIES: dict[str, Strategy] = {
    "full": Strategy(run=_run_full, plan=_plan_full, options=HALVING_DEFAULTS),
    "fast": Strategy(run=_run_fast, plan=_plan_fast, fork_only=True, cross_validates=False, pool_refit=True),
    "lean": Strategy(run=_run_lean, plan=_plan_lean, options=LEAN_DEFAULTS, shortlist=_lean_shortlist,
                     shortlist_most=_lean_shortlist_most),
}


def _callable_strategy(fn: Callable[..., Any]) -> Strategy:
    """Wrap a user's ``fn(search_run, **options)`` (its plan: ``fn.plan(plan_input, options)`` if it has one)."""
    try:
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[1:]
    except (TypeError, ValueError):
        params = []
    takes_any = any(q.kind == inspect.Parameter.VAR_KEYWORD for q in params)
    defaults = {q.name: (None if q.default is inspect.Parameter.empty else q.default) for q in params
                if q.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)}
    plan = getattr(fn, "plan", None)
    return Strategy(run=lambda r: fn(r, **r.options), plan=plan if callable(plan) else None,
                    options=_AnyKey(defaults) if takes_any else defaults, proxies=False)


class _AnyKey(dict[str, Any]):
    """Option defaults of a callable that takes ``**kwargs``: every key is used."""

    def __contains__(self, key: object) -> bool:
        return True


def resolve_strategy(search: Any, options: Any, fork: bool, lgb_version: str) -> tuple[Strategy, dict[str, Any]]:
    """Return the strategy ``search`` names (or wraps) and its knobs, ``options`` over its defaults.

    Raises
    ------
    ValueError
        On an unknown name, a fork-only strategy without the fork.
    TypeError
        When ``options`` is not a mapping with string keys.

    Warns
    -----
    UserWarning
        Naming the keys of ``options`` the strategy does not use (they are ignored).
    """
    if isinstance(search, Strategy):
        strategy, name = search, getattr(search.run, "__name__", "Strategy")
    elif callable(search):
        strategy, name = _callable_strategy(search), getattr(search, "__name__", type(search).__name__)
    elif isinstance(search, str) and search in STRATEGIES:
        strategy, name = STRATEGIES[search], repr(search)
    else:
        err = ValueError if isinstance(search, str) else TypeError
        raise err(f"The 'search' argument of train_to_budget must be one of {tuple(STRATEGIES)} or a callable "
                  f"strategy. Got {search!r}.")
    if strategy.fork_only and not fork:
        raise ValueError(
            f"The 'search' argument {name} needs the lightgbm-cegb fork (its cegb_budget parameter); "
            f"the imported lightgbm is {lgb_version}. Use search='full'."
        )
    if options is None:
        options = {}
    if not isinstance(options, Mapping) or not all(isinstance(k, str) for k in options):
        raise TypeError(f"The 'options' argument must be a dict of the strategy's knobs (string keys) or None. "
                        f"Got {options!r:.80}.")
    unused = [k for k in options if k not in strategy.options]
    if unused:
        known = ", ".join(repr(k) for k in strategy.options) or "none"
        warnings.warn(f"train_to_budget: search={name} does not use the options "
                      f"{', '.join(repr(k) for k in unused)} (its options: {known}); they are ignored.",
                      UserWarning, stacklevel=4)
    return strategy, {**dict(strategy.options), **{k: v for k, v in options.items() if k in strategy.options}}
