"""The search strategies of :func:`train_to_budget`, one table: ``search=`` names one or is a callable.

As scipy's ``minimize(method=...)``: every strategy is a :class:`Strategy` with its run, its
plan (the most work of each of its stages, declared before it starts: the progress bar's
total) and its knobs (``options=``; unknown keys warn).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core._status import fits_budget
from . import _families as fam
from ._fast import RANK_ROUNDS, run_fast
from ._halving import DEFAULTS as HALVING_DEFAULTS
from ._halving import halving_from_options
from ._lean import LEAN_DEFAULTS, lean_shortlist, lean_shortlist_most, plan_lean, run_lean
from ._result import Candidate
from ._search import Search, Spec

__all__ = ["STRATEGIES", "PlanInput", "SearchRun", "Strategy", "resolve_strategy", "run_families"]

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


def run_families(r: SearchRun, s: Search, rank: Any, *, greedy: dict[str, int] | None, bisect: int,
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
    run_families(r, s, rank, greedy={} if o.greedy else None, bisect=o.n_bisect, subset_bisect=2,
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


#: The strategies ``search=`` names.
STRATEGIES: dict[str, Strategy] = {
    "full": Strategy(run=_run_full, plan=_plan_full, options=HALVING_DEFAULTS),
    "fast": Strategy(run=_run_fast, plan=_plan_fast, fork_only=True, cross_validates=False, pool_refit=True),
    "lean": Strategy(run=run_lean, plan=plan_lean, options=LEAN_DEFAULTS, shortlist=lean_shortlist,
                     shortlist_most=lean_shortlist_most),
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
