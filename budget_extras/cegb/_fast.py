"""``train_to_budget(search="fast")``: the fork's learner budget, about four trainings per budget.

The fork's ``cegb_budget`` caps the mean per-row acquisition cost of the training rows while the
trees grow, so one training lands at a budget and no tradeoff search is needed. At every budget
the fast search trains up to five candidates on every row and keeps the best on the validation
rows (above 50,000 rows they are first trained on the proxy subsample, and only the best is
trained on every row):

* ``budget``: lazy CEGB under the cap, with ``cegb_tradeoff`` (scale ``first_gain``) falling
  geometrically over the rounds from 0.3 to 0.003 times the ranking model's convergence ratio
  (:func:`decay_end`; early trees buy only what pays well, later ones spend what is left); the
  cap is the budget less two standard errors of the validation mean, so that the model fits on
  the validation rows too; once with the user's ``num_leaves`` and once with small trees
  (:func:`small_leaves`, 4 leaves of 31: a row's path through a small tree buys fewer features,
  and on small tables small trees also overfit less);
* ``topk_gain``: the largest top-k subset, by the gain of a short plain model, that fits the
  budget outright (every row buys the k features), with the user's ``num_leaves`` and with a
  quarter of them (7 of 31);
* ``topk_gain_cost``: the features by gain per unit of cost, each one taken while the budget can
  still buy it for every row;
* ``all``: plain LightGBM, once, where the short plain model already fits a budget.

The ranking model (plain LightGBM, at most 40 rounds) is a proxy: it is never returned. Where
the default search would cross-validate (``choose="auto"`` on up to 20,000 training and
validation rows that pool), each budget's pick on the validation rows is refit on the training
and validation rows pooled (:func:`refit_on_pool`) and returned.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any

import lightgbm as lgb
import numpy as np

from .._compat import param_aliases
from ..core._status import fits_budget
from . import _cv as cv
from . import _families as fam
from ._result import Candidate
from ._search import Search, Spec

__all__ = ["FAST_DECAY", "POOL_TRIES", "RANK_ROUNDS", "cap_margin", "capped_spec", "convergence", "decay_end",
           "refit_on_pool", "retry_over_budget", "run_fast", "small_leaves"]

#: ``cegb_tradeoff`` (scale ``first_gain``) of the capped candidates: first round, and last round
#: before :func:`decay_end` multiplies it by the ranking model's convergence ratio.
FAST_DECAY = (0.3, 0.003)

#: Smallest convergence ratio :func:`decay_end` uses (the last tradeoff stays positive).
MIN_CONVERGENCE = 1e-4

#: Rounds of the plain ranking model.
RANK_ROUNDS = 40

#: Refits on the pooled rows tried per budget (:func:`refit_on_pool`).
POOL_TRIES = 3


def convergence(booster: lgb.Booster, iterations: int | None = None) -> float:
    """Return the mean split gain of a model's last iterations over that of its first, in (0, 1].

    The last eighth of the iterations (at least one) are averaged; a model whose first
    iteration has no split, or whose gains do not fall, gives 1. A ratio of gains, so rescaling
    the target (L2) or the raw scores does not change it. ``iterations``: read the model's first
    ``iterations`` only (None: all of them), which are the model a training of that many rounds
    with the same parameters gives.
    """
    n = booster.current_iteration() if iterations is None else min(int(iterations), booster.current_iteration())
    m = max(1, n // 8)
    if n < 2:
        return 1.0
    first = float(np.sum(booster.feature_importance("gain", iteration=1)))
    total = float(np.sum(booster.feature_importance("gain", iteration=n)))
    before = float(np.sum(booster.feature_importance("gain", iteration=n - m)))
    late = (total - before) / m
    if not (first > 0 and math.isfinite(first) and math.isfinite(late)):
        return 1.0
    return float(min(1.0, max(MIN_CONVERGENCE, late / first)))


def decay_end(booster: lgb.Booster, iterations: int | None = None) -> float:
    """Return the capped candidates' last ``cegb_tradeoff``: ``FAST_DECAY[1]`` times :func:`convergence`.

    ``first_gain`` prices every purchase in units of the FIRST tree's best gain per unit of
    cost. Boosting's gains shrink as it converges, far more on some losses than others: an L2
    target that one feature (or a cheap proxy of it) mostly explains leaves later trees gains
    a thousandth of the first tree's, where a logistic loss keeps a few hundredths. A fixed last
    tradeoff then never lets a later tree buy the feature that explains what is left, and the
    cap is never reached. Scaled by the plain ranking model's convergence ratio, the last
    tradeoff is ``FAST_DECAY[1]`` in units of the LAST trees' gains on every loss.
    """
    return FAST_DECAY[1] * convergence(booster, iterations)


def small_leaves(params: dict[str, Any]) -> tuple[int | None, int | None]:
    """Return the small-tree candidates' ``num_leaves``: the capped one's and the top-k subset's.

    The top-k subset's is a quarter of the ``num_leaves`` in ``params`` (default 31: 7, the full
    search's smallest refit), the capped one's half of that, rounded up (31: 4); None where it is
    below 2 leaves or not smaller than the user's.
    """
    user = next((params[k] for k in sorted(param_aliases("num_leaves")) if k in params), 31)
    try:
        n = int(user)
    except (TypeError, ValueError):
        return None, None
    quarter = n // 4
    capped = (quarter + 1) // 2
    return (capped if 2 <= capped < n else None), (quarter if 2 <= quarter < n else None)


def capped_spec(knobs: dict[str, Any], cap: float, last: float, leaves: int | None = None) -> Spec:
    """Return the capped lazy-CEGB candidate: ``knobs``, its mean cost capped at ``cap``.

    ``cegb_tradeoff`` (scale ``first_gain``) falls from ``FAST_DECAY[0]`` to ``last`` over the
    rounds; ``leaves``: its ``num_leaves`` (None: the user's).
    """
    # cegb_budget=0 switches the cap off: a zero budget is a cap below any positive purchase
    extra = {**knobs, "cegb_budget": max(float(cap), 1e-300), "cegb_tradeoff": FAST_DECAY[0],
             "cegb_tradeoff_scale": "first_gain"}
    if leaves is not None:
        extra["num_leaves"] = leaves
    return Spec("budget", extra, None, FAST_DECAY[0], decay=(FAST_DECAY[0], min(FAST_DECAY[0], last)))


def _packed(s: Search, order: np.ndarray, budget: float) -> list[int] | None:
    """Return the features of ``order`` in turn, each one ``budget`` still buys for every row (None: none or all)."""
    sub: list[int] = []
    for f in order:
        if fits_budget(fam.subset_cost(s.fc, [*sub, int(f)]), budget):
            sub.append(int(f))
    return sorted(sub) if 0 < len(sub) < order.size else None


def _topk_within(s: Search, rank: fam.Ranking, budget: float) -> list[int] | None:
    """Return the largest top-k-by-gain subset whose purchase for every row fits ``budget`` (None: none, or all)."""
    best = None
    for k in range(1, rank.by_gain.size):
        sub = sorted(int(i) for i in rank.by_gain[:k])
        if not fits_budget(fam.subset_cost(s.fc, sub), budget):
            break
        best = sub
    return best


def cap_margin(c: Candidate, n_valid: int, n_train: int) -> float:
    """Return two standard errors of a model's validation mean cost around its training mean.

    The cap fixes the training rows' mean cost; the validation rows' mean differs from it by the
    sampling noise of both row sets, ``sd * sqrt(1 / n_valid + 1 / n_train)``, with ``sd`` the
    per-row cost deviation of the plain ranking model.
    """
    return 2.0 * c.cost_sd * math.sqrt(1.0 / max(1, n_valid) + 1.0 / max(1, n_train))


def retry_over_budget(full: Search, capped: list[tuple[Candidate, float]]) -> None:
    """Train once more every capped model whose validation cost misses the budget it was trained for.

    ``capped`` pairs each capped candidate with its budget; the new cap is the old one times
    budget / validation cost (a little less).
    """
    for c, b in capped:
        if fits_budget(c.cost, b) or c.cost <= 0:
            continue
        params = {**c.params, "cegb_budget": max(c.params["cegb_budget"] * b / c.cost * 0.995, 1e-300)}
        full.fit(Spec(c.family, params, c.k, c.tradeoff, decay=c.decay))


def _refit(proxy: Search, full: Search, targets: list[float], margin: float) -> list[tuple[Candidate, float]]:
    """Train the best proxy of every budget on every row (a capped one with its cap less ``margin``).

    Where no proxy fits any budget, the cheapest proxy is trained on every row (the proxies
    only rank: the search returns a model trained on every row). Returns the capped models
    trained for a budget they fit, each with its budget.
    """
    done: set[str] = set()
    capped = []
    for b in targets:
        fits = [c for c in proxy.frontier[1:] if fits_budget(c.cost, b)]  # [0]: the ranking model
        if not fits:
            continue
        c = max(fits, key=lambda z: (z.score, -z.cost))
        params = dict(c.params)
        if "cegb_budget" in params:
            params["cegb_budget"] = max(b - margin, 1e-300)
        key = repr(sorted(params.items()))
        if key not in done:
            done.add(key)
            new = full.fit(Spec(c.family, params, c.k, c.tradeoff, decay=c.decay))
            if "cegb_budget" in params:
                capped.append((new, b))
    if not done and len(proxy.frontier) > 1:  # no proxy fits a budget: the cheapest, so a full-size model exists
        c = min(proxy.frontier[1:], key=lambda z: (z.cost, -z.score))
        full.fit(Spec(c.family, dict(c.params), c.k, c.tradeoff, decay=c.decay))
    return capped


def _specs_at(full: Search, rank: fam.Ranking, knobs: dict[str, Any], cap: float, last: float, b: float,
              seen: set[tuple[Any, ...]]) -> list[Spec]:
    """Return the candidates of budget ``b`` (capped at ``cap``) not trained for an earlier budget (``seen``)."""
    small_cap, small_sub = small_leaves(full.base)
    specs = [capped_spec(knobs, cap, last)]
    if small_cap is not None:
        specs.append(capped_spec(knobs, cap, last, small_cap))
    top = _topk_within(full, rank, b)
    subsets = [("topk_gain", top, None), ("topk_gain", top, small_sub),
               ("topk_gain_cost", _packed(full, rank.by_gain_cost, b), None)]
    for family, sub, leaves in subsets:
        key = (tuple(sub or ()), leaves)
        if sub is None or key in seen:
            continue
        seen.add(key)
        extra: dict[str, Any] = {"interaction_constraints": [sub]}
        if leaves is not None:
            extra["num_leaves"] = leaves
        specs.append(Spec(family, extra, len(sub)))
    return specs


def run_fast(ranker: Search, full: Search, knobs_for: Any, targets: list[float],
             stage: Callable[[str], AbstractContextManager[Any]] | None = None) -> None:
    """Run the whole fast search: the ranking model, up to five candidates at every budget, retries.

    Parameters
    ----------
    ranker : Search
        Proxies: a row subsample (large training sets), where the candidates are trained first and
        only the best of each budget is trained on every row; or every row with at most
        :data:`RANK_ROUNDS` rounds, where only the ranking model is trained and the candidates
        go straight to ``full``.
    full : Search
        Every row, the user's rounds.
    knobs_for : callable
        ``knobs_for(search, ranking)`` returns the lazy-cost parameters of the capped candidates.
    targets : list of float
        The budgets.
    stage : callable, optional
        ``stage(name)`` returns the context each stage runs in (``"rank"``, ``"candidates"``,
        ``"refit"``, ``"retry"``: the progress plan's stages).
    """
    stage = stage or (lambda name: nullcontext())
    with stage("rank"):
        c0, rank = fam.plain_and_ranking(ranker)
    last = decay_end(ranker.boosters[-1])
    knobs = knobs_for(full, rank)
    margin = cap_margin(c0, len(full.yv), full.rows)
    subsample = ranker.rows < full.rows
    s = ranker if subsample else full
    seen: set[tuple[Any, ...]] = set()
    capped = []
    with stage("candidates"):
        for b in targets:
            specs = _specs_at(full, rank, knobs, b if subsample else max(0.0, b - margin), last, b, seen)
            if fits_budget(c0.cost, b) and ("all",) not in seen:  # the short plain model fits: so may the full one
                seen.add(("all",))
                specs.append(Spec("all", {}))
            capped += [(c, b) for c, sp in zip(s.fit_many(specs), specs, strict=True) if "cegb_budget" in sp.extra]
    if subsample:
        with stage("refit"):
            capped = _refit(ranker, full, targets, margin)
    with stage("retry"):
        retry_over_budget(full, capped)


def _validation_order(own: Sequence[Candidate], budget: float) -> tuple[list[int], bool]:
    """Return the candidates fitting ``budget``, best validation score first (as :func:`pick`), and True.

    None fits: the cheapest alone, and False.
    """
    order = sorted((i for i, c in enumerate(own) if fits_budget(c.cost, budget)),
                   key=lambda i: (-own[i].score, own[i].constant, own[i].cost))
    if order:
        return order, True
    return [min(range(len(own)), key=lambda i: (own[i].cost, -own[i].score))], False


def refit_on_pool(full: Search, pool: cv.Pool, targets: Sequence[float]
                  ) -> tuple[list[Candidate], list[tuple[Any, float | None]], dict[float, int]]:
    """Refit each budget's pick on the validation rows on every pooled row; return the models returned.

    At each budget the candidates trained on the training rows (``full``) that fit it are taken in
    validation order, at most :data:`POOL_TRIES`: each is trained with its parameters on the
    training and validation rows pooled (a capped model keeps its cap, less the margin that
    covers rows it never saw) and costed there; the first whose pooled cost fits is the budget's
    model. A refit's ``cost`` is the larger of its validation cost (trained on the training rows)
    and its pooled cost; its ``score`` stays the validation score it was chosen by; ``rows`` the
    pooled rows. Where every try misses, the pick trained on the training rows is kept (it fits
    on the validation rows); where no candidate fits, the cheapest is refit.

    Returns
    -------
    cands : list of Candidate
        The budgets' models, each configuration once.
    fits : list of (lightgbm.Booster, float or None)
        Their boosters and pooled costs (None: kept on the training rows).
    picks : dict of float to int
        Each budget's position in ``cands``.
    """
    own = full.frontier
    cands: list[Candidate] = []
    fits: list[tuple[Any, float | None]] = []
    at: dict[tuple[str, int], int] = {}  # ("refit" or "kept", position in own): position in cands
    picks: dict[float, int] = {}
    for b in sorted(targets):
        order, feasible = _validation_order(own, b)
        for i in order[:POOL_TRIES]:
            if ("refit", i) not in at:
                booster, cost = cv.refit(full, pool, own[i])
                at["refit", i] = len(cands)
                cands.append(replace(own[i], cost=max(own[i].cost, cost), rows=int(pool.y.size),
                                     constant=bool(np.sum(booster.feature_importance("split")) == 0)))
                fits.append((booster, cost))
            if not feasible or fits_budget(cands[at["refit", i]].cost, b):
                picks[b] = at["refit", i]
                break
        else:  # every refit misses: the pick on the training rows
            if ("kept", order[0]) not in at:
                at["kept", order[0]] = len(cands)
                cands.append(own[order[0]])
                fits.append((full.boosters[order[0]], None))
            picks[b] = at["kept", order[0]]
    return cands, fits, picks
