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
    rows the candidates are trained on; ``coupled``: whether the costs have coupled costs.
    """

    opts: Any
    n_features: int
    rows: int
    share: float
    coupled: bool


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
    """

    search: Search
    full: Search
    proxy: Search | None
    opts: Any
    fork: bool
    options: dict[str, Any]
    sample: Callable[..., Search]

    def stage(self, name: str) -> Any:
        """Return the context in which the plan's stage ``name`` runs (the bar's accounting)."""
        return self.search.clock.stage(name)


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
    """

    run: Callable[[SearchRun], None]
    plan: Callable[[PlanInput, Mapping[str, Any]], Plan] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    fork_only: bool = False
    proxies: bool = True
    cross_validates: bool = True


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
    defaults; None: skipped); the lazy-CEGB sweep (``bisect`` bisections a budget); lazy CEGB
    inside the subsets (``subset_bisect``); with coupled costs the coupled sweep
    (``coupled_bisect``); smaller trees. ``rank`` is the plain model's feature ranking.
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
    with r.stage("lazy"):
        fam.lazy_sweep(s, "lazy", knobs, None, [rank.scale * 10.0**e for e in exps], bisect, o.targets)
    with r.stage("lazy_subsets"):
        fam.lazy_in_subsets(s, subsets, knobs, rank.scale, o.targets, subset_bisect)
    with r.stage("lazy_coupled"):
        if np.any(np.asarray(s.fc.coupled) > 0):
            coupled = fam.cegb_knobs(s, rank, r.fork, coupled=True)
            fam.lazy_sweep(s, "lazy_coupled", coupled, None, [rank.scale * 10.0**e for e in (-1.5, 0.0, 1.5)],
                           coupled_bisect, o.targets)
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


def refit_calibrated(proxy: Search, full: Search, targets: list[float], tries: int, finalists: int = 1) -> None:
    """Refit on every row the best proxy at each budget, reading proxy costs through the refits' costs.

    A proxy on fewer rounds buys fewer features than its refit. Each refit's cost over its
    proxy's scales the proxy costs of its kind (CEGB candidates; subsets and plain models: the
    geometric mean of the ratios seen), so the next proxy tried is one whose refit should fit; a
    candidate inside a feature subset costs at most the subset's purchase for every row.
    At each budget, in increasing order (a refit that misses one may fit the next), the best
    proxy by validation score whose cost so read fits is refit (a proxy already refit counts at
    its refit's cost) until the ``finalists`` best are refit, at most ``tries`` refits a budget.
    Where no proxy fits and no refit does, the cheapest proxy is refit.
    """
    ratios: dict[bool, list[float]] = {False: [], True: []}  # by whether the candidate is CEGB
    done: dict[int, Candidate] = {}  # proxy's position in `finished` -> its refit
    finished = [c for c in proxy.frontier if c.rounds is None]  # not stopped by successive halving

    def cost(i: int) -> float:
        if i in done:
            return done[i].cost
        seen = ratios[finished[i].tradeoff is not None]
        read = finished[i].cost * (math.exp(sum(math.log(x) for x in seen) / len(seen)) if seen else 1.0)
        subset = finished[i].params.get("interaction_constraints")
        return min(read, fam.subset_cost(proxy.fc, subset[0])) if subset else read

    def refit(i: int) -> None:
        c = finished[i]
        done[i] = full.fit(Spec(c.family, c.params, c.k, c.tradeoff))
        if c.cost > 0 and done[i].cost > 0:
            ratios[c.tradeoff is not None].append(done[i].cost / c.cost)

    for b in sorted(targets):
        for _ in range(tries):
            ranked = sorted((i for i in range(len(finished)) if fits_budget(cost(i), b)),
                            key=lambda i: (-finished[i].score, finished[i].constant, cost(i)))
            if not ranked:
                left = [i for i in range(len(finished)) if i not in done]
                if left and not any(fits_budget(c.cost, b) for c in done.values()):
                    refit(min(left, key=lambda i: (cost(i), -finished[i].score)))
                break
            todo = [i for i in ranked[:finalists] if i not in done]
            if not todo:
                break
            refit(todo[0])


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
                                 "greedy_rounds": 20, "refits": 3, "finalists": 1}

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
    m = min(rows, max(LEAN_MIN_ROWS, round(float(options["rows"]) * rows)))
    return _Lean(max(1, round(float(options["rounds"]) * rounds)), m, bool(options["boost"]), int(options["bisect"]),
                 int(options["greedy_steps"]), int(options["greedy_rounds"]), int(options["refits"]),
                 int(options["finalists"]))


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
        ("refit", float(k.refits * t)),
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
    """Plain LightGBM on every row; every family on the lean proxy; the best proxies refit on every row."""
    o = r.opts
    k = _lean(r.options, o.rounds, r.search.rows)
    with r.stage("all"):
        _, rank = fam.plain_and_ranking(r.full)
    s = r.proxy = _lean_proxy(r, k)
    greedy = {"steps": k.greedy_steps, "rounds": k.greedy_rounds} if o.greedy and k.greedy_steps else None
    _run_families(r, s, rank, greedy=greedy, bisect=k.bisect, subset_bisect=k.bisect, coupled_bisect=k.bisect)
    with r.stage("refit"):
        refit_calibrated(s, r.full, o.targets, k.refits, k.finalists)


#: The strategies ``search=`` names.
STRATEGIES: dict[str, Strategy] = {
    "full": Strategy(run=_run_full, plan=_plan_full, options=HALVING_DEFAULTS),
    "fast": Strategy(run=_run_fast, plan=_plan_fast, fork_only=True, cross_validates=False),
    "lean": Strategy(run=_run_lean, plan=_plan_lean, options=LEAN_DEFAULTS, cross_validates=False),
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
