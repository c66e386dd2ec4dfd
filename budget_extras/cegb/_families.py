"""The candidate families of :func:`train_to_budget`, one function each, over a :class:`Search`."""

from __future__ import annotations

import itertools
import math
import queue
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import lightgbm as lgb
import numpy as np

from .._compat import param_aliases, param_value
from ..core._costs import FeatureCosts
from ..core._status import fits_budget
from ._result import Candidate
from ._scoring import objective_kind
from ._search import Search, Spec

__all__ = [
    "Ranking",
    "Subset",
    "Sweep",
    "cegb_knobs",
    "default_k_grid",
    "greedy_forward",
    "plain_and_ranking",
    "run_sweeps",
    "smaller_trees",
    "subset_cost",
    "subset_sweeps",
    "topk",
]

#: Rows up to which greedy selection cross-fits its held-out score (3 folds); one split above.
CROSS_FIT_ROWS = 50_000

#: LightGBM metric a greedy step is scored with, per objective kind (unless the user set one).
_GREEDY_METRIC = {"binary": "auc", "multiclass": "multi_logloss", "regression": "l2"}


@dataclass(frozen=True)
class Ranking:
    """Features of the plain model, ranked.

    Attributes
    ----------
    gain : numpy.ndarray of float64, shape (n_features,)
        Total split gain of each feature in the plain model.
    unit_cost : numpy.ndarray of float64, shape (n_features,)
        Cost of buying each feature alone (its group's cost if grouped).
    by_gain, by_gain_cost : numpy.ndarray of int
        Used features (gain > 0) by decreasing gain, and by decreasing gain / cost.
    scale : float
        Data-derived tradeoff scale: total gain / (trees * rows * mean positive cost).
    """

    gain: np.ndarray
    unit_cost: np.ndarray
    by_gain: np.ndarray
    by_gain_cost: np.ndarray
    scale: float


@dataclass(frozen=True)
class Subset:
    """A feature-subset candidate: its size, sorted feature indices and measurement."""

    k: int
    features: list[int]
    candidate: Candidate


def plain_and_ranking(s: Search) -> tuple[Candidate, Ranking]:
    """Train plain LightGBM (family ``all``) and rank the features by its gain."""
    c0 = s.fit(Spec("all", {}))
    b0 = s.boosters[-1]
    gain = np.asarray(b0.feature_importance("gain"), dtype=np.float64)
    fcost = s.fc.unit_cost[s.fc.unit]
    used = np.flatnonzero(gain > 0)
    ratio = np.where(fcost > 0, gain / np.where(fcost > 0, fcost, 1.0), np.inf)
    pos = fcost[fcost > 0]
    scale = float(gain.sum()) / (max(1, b0.num_trees()) * max(1, s.rows) * (float(pos.mean()) if pos.size else 1.0))
    if not math.isfinite(scale) or scale <= 0:
        scale = 1e-3
    rank = Ranking(
        gain=gain,
        unit_cost=fcost,
        by_gain=used[np.argsort(-gain[used], kind="stable")],
        by_gain_cost=used[np.lexsort((-gain[used], -ratio[used]))],
        scale=scale,
    )
    return c0, rank


def default_k_grid(n_used: int) -> list[int]:
    """Return the default top-k sizes: up to 5 geometric sizes below ``n_used``."""
    if n_used <= 1:
        return []
    ks = np.unique(np.round(np.geomspace(1, n_used, 6)).astype(int))
    return [int(k) for k in ks if k < n_used][:5]


def _packed(fc: FeatureCosts, order: np.ndarray, budget: float) -> list[int]:
    """Return the features of ``order`` taken in turn, each one the budget can still buy for every row."""
    sub: list[int] = []
    for f in order:
        if fits_budget(subset_cost(fc, [*sub, int(f)]), budget):
            sub.append(int(f))
    return sorted(sub)


def topk(
    s: Search, rank: Ranking, grid: list[int], seen: set[frozenset[int]], targets: list[float] | None = None
) -> list[Subset]:
    """Top-k features by gain and by gain / cost, for k in ``grid`` (``interaction_constraints=[subset]``).

    With ``targets``, also at each budget and in each order the packed subset: the features
    taken in turn, each one the budget can still buy for every row (unaffordable ones skipped).
    """
    n_used = rank.by_gain.size
    todo: list[tuple[int, list[int], Spec]] = []

    def add(family: str, sub: list[int]) -> None:
        if 0 < len(sub) < n_used and frozenset(sub) not in seen:
            seen.add(frozenset(sub))
            todo.append((len(sub), sub, Spec(family, {"interaction_constraints": [sub]}, len(sub))))

    for family, order in (("topk_gain", rank.by_gain), ("topk_gain_cost", rank.by_gain_cost)):
        for k in grid:
            if k < n_used:
                add(family, sorted(int(i) for i in order[:k]))
        for b in targets or []:
            add(family, _packed(s.fc, order, b))
    cands = s.fit_many([t[2] for t in todo])
    return [Subset(k, sub, c) for (k, sub, _), c in zip(todo, cands, strict=True)]


def subset_cost(fc: FeatureCosts, sel: list[int]) -> float:
    """Return the cost of buying the features ``sel`` for one row (the most a model inside them costs)."""
    m = np.zeros((1, fc.n_features), dtype=bool)
    m[0, sel] = True
    return float(fc.row_cost(m)[0])


class _FoldSets:
    """The greedy selection folds' Datasets, one copy for each fit running at once.

    LightGBM's training writes to its validation Dataset (the training set's feature names), so
    two fits at once never share one; the copies hold the same rows and bins.
    """

    def __init__(self, s: Search, n_folds: int) -> None:
        self._make = lambda: s.folds(n_folds, salt=1)
        self._free: queue.SimpleQueue[list[tuple[lgb.Dataset, lgb.Dataset]]] = queue.SimpleQueue()
        self.n = max(1, n_folds)

    @contextmanager
    def take(self) -> Iterator[list[tuple[lgb.Dataset, lgb.Dataset]]]:
        """Lend a copy of the folds no other running fit holds."""
        try:
            sets = self._free.get_nowait()
        except queue.Empty:
            sets = self._make()
        try:
            yield sets
        finally:
            self._free.put(sets)


def _greedy_score(
    s: Search, fit_rows: lgb.Dataset, hold: lgb.Dataset, sub: list[int], rounds: int, constant: bool = False
) -> tuple[float, float, int]:
    """Score a cheap proxy restricted to ``sub`` on held-out TRAINING rows (LightGBM's own metric).

    Returns the score (higher is better), the fit's seconds and its training rows.
    ``constant``: no split may happen (``min_gain_to_split`` past any gain), so the proxy is the
    constant model every step is compared with first.
    """
    p = s.params_for({"learning_rate": 0.2, "num_leaves": 15, "interaction_constraints": [sub]})
    if constant:
        p["min_gain_to_split"] = 1e300
    if not param_aliases("metric") & set(p):
        p["metric"] = _GREEDY_METRIC[objective_kind(p)]
    t0 = time.perf_counter()
    if _boosting(p) == "gbdt":
        # the held-out rows join after the last round: LightGBM adds every tree to their scores in
        # the same order as while training (the same doubles), and its metric runs once, not every round
        b = lgb.train(p, fit_rows, num_boost_round=rounds, keep_training_booster=True)
        b.add_valid(hold.set_reference(fit_rows), "hold")
    else:  # a random forest averages and dart rescales the scores of earlier trees while it trains
        b = lgb.train(
            p, fit_rows, num_boost_round=rounds, valid_sets=[hold], valid_names=["hold"], keep_training_booster=True
        )
    _, _, value, higher = b.eval_valid()[0][:4]
    return (float(value) if higher else -float(value)), time.perf_counter() - t0, fit_rows.num_data()


def _boosting(params: dict[str, Any]) -> str:
    """Return the ``boosting`` of ``params`` under any alias (LightGBM's default: ``gbdt``)."""
    return str(param_value(params, "boosting", "gbdt")).lower()


def _greedy_scores(s: Search, folds: _FoldSets, subs: list[list[int]], rounds: int,
                   constant: bool = False) -> list[float]:
    """Return each feature set's held-out score (the mean over the folds): every (set, fold) fit in one batch.

    Raises
    ------
    SearchCut
        Before a fit that ``max_fits`` or ``time_limit`` does not allow.
    """
    def work(item: tuple[list[int], int]) -> tuple[float, float, int]:
        with folds.take() as sets:
            fit_rows, hold = sets[item[1]]
            return _greedy_score(s, fit_rows, hold, item[0], rounds, constant)

    values: list[float] = []
    for batch in s.batches(work, [(sub, f) for sub in subs for f in range(folds.n)]):
        for value, seconds, rows in batch:
            s.clock.record_raw("greedy_select", seconds, rows * s.fit_share * rounds / s.rounds)
            values.append(value)
    return [float(np.mean(values[i * folds.n:(i + 1) * folds.n])) for i in range(len(subs))]


def greedy_forward(
    s: Search, rank: Ranking, seen: set[frozenset[int]], pool_size: int = 16, steps: int = 8, rounds: int = 40
) -> list[Subset]:
    """Forward selection scored on held-out training rows; every selected prefix refit as a candidate.

    Each step adds the feature with the best held-out gain per unit of added cost (cheap proxies:
    ``rounds`` rounds (at most the search's), learning rate 0.2, 15 leaves, scored with LightGBM's
    metric on held-out training rows: cross-fitted over 3 folds up to 50,000 rows, one 80/20 split
    above and on proxies) over the ``pool_size`` best features by gain / cost; it stops when no
    feature improves the held-out score. A step's fits (every feature left, every fold) are one
    batch, trained side by side with ``n_jobs``. The validation rows only score the refit
    prefixes, as every other candidate.
    """
    pool = [int(i) for i in rank.by_gain_cost[:pool_size]]
    folds = _FoldSets(s, 3 if s.rows <= CROSS_FIT_ROWS and not s.proxy else 1)
    rounds = min(rounds, s.rounds)
    chosen: list[int] = []
    # the constant model's held-out score: the first step weighs its gain by cost too
    current = _greedy_scores(s, folds, [pool[:1]], 1, constant=True)[0] if pool else 0.0
    prefixes: list[list[int]] = []
    for _ in range(min(steps, len(pool))):
        base_cost = subset_cost(s.fc, chosen)
        left = [f for f in pool if f not in chosen]
        best: tuple[Any, ...] | None = None
        for f, score in zip(left, _greedy_scores(s, folds, [sorted([*chosen, f]) for f in left], rounds),
                            strict=True):
            gain, added = score - current, subset_cost(s.fc, [*chosen, f]) - base_cost
            ratio = gain / added if added > 1e-12 else (math.inf if gain > 0 else gain)
            key = (gain > 0, ratio, score, -f)
            if best is None or key > best[0]:
                best = (key, f, score)
        if best is None or not best[0][0]:
            break
        chosen.append(best[1])
        current = best[2]
        prefixes.append(sorted(chosen))
    todo = [p for p in prefixes if frozenset(p) not in seen and len(p) < rank.by_gain.size]
    seen.update(frozenset(p) for p in todo)
    cands = s.fit_many([Spec("greedy", {"interaction_constraints": [p]}, len(p)) for p in todo])
    return [Subset(len(p), p, c) for p, c in zip(todo, cands, strict=True)]


def cegb_knobs(s: Search, rank: Ranking, fork: bool, coupled: bool = False) -> dict[str, Any]:
    """Return the cost parameters every CEGB candidate adds, from :meth:`FeatureCosts.to_cegb_params`.

    The lazy costs (a grouped feature at its group's cost), the groups with the fork (upstream
    LightGBM has no ``cegb_feature_group``) and, with ``coupled``, the coupled costs.
    """
    params = s.fc.to_cegb_params(s.fc.feature_names)
    keys = ["cegb_penalty_feature_lazy"]
    if fork and np.any(np.asarray(s.fc.group) >= 0):
        keys.append("cegb_feature_group")
    if coupled:
        keys.append("cegb_penalty_feature_coupled")
    return {k: params[k] for k in keys}


def _crossing(pts: list[tuple[float, Candidate]], b: float) -> tuple[float, float] | None:
    """Return the tradeoffs around the first step from missing ``b`` to fitting it (None: none).

    A candidate stopped early by successive halving has the cost of its first trees, a lower
    bound of its cost: it counts where it misses ``b`` and is left out where it fits.
    """
    pts.sort(key=lambda z: z[0])
    known = [(t, c) for t, c in pts if c.rounds is None or not fits_budget(c.cost, b)]
    for (t1, c1), (t2, c2) in itertools.pairwise(known):
        if not fits_budget(c1.cost, b) and fits_budget(c2.cost, b):
            return t1, t2
    return None


@dataclass
class Sweep:
    """One CEGB tradeoff sweep: ``extra`` with each ``cegb_tradeoff`` of a grid, then bisections.

    The candidates at each of ``tradeoffs``, then up to ``n_bisect`` geometric bisections of
    every budget's crossing (:func:`run_sweeps`). ``points``: (tradeoff, candidate) of every fit so far.
    """

    family: str
    extra: dict[str, Any]
    k: int | None
    tradeoffs: list[float]
    n_bisect: int
    points: list[tuple[float, Candidate]] = field(default_factory=list)

    def spec(self, t: float) -> Spec:
        """Return the candidate at tradeoff ``t``."""
        return Spec(self.family, {**self.extra, "cegb_tradeoff": t}, self.k, t)


def _fit_points(s: Search, todo: list[tuple[Sweep, float]]) -> None:
    """Train every (sweep, tradeoff) of ``todo`` in one batch; each joins its sweep's points."""
    for (sweep, t), c in zip(todo, s.fit_many([sw.spec(t) for sw, t in todo]), strict=True):
        sweep.points.append((t, c))


def run_sweeps(s: Search, sweeps: list[Sweep], targets: list[float]) -> None:
    """Run the sweeps together: every grid in one batch, then the bisections in lockstep.

    At each bisection step, every (sweep, budget) whose crossing is still wider than 5% (and
    that has steps left) places the geometric middle of its crossing, read from its sweep's
    points before the step; the step's tradeoffs (one fit for two budgets that place the same
    one) are one batch, trained side by side with ``n_jobs``. A budget with no crossing, or a
    crossing within 5%, stops bisecting.
    """
    _fit_points(s, [(sw, t) for sw in sweeps for t in sw.tradeoffs])
    live = [(sw, b) for sw in sweeps for b in targets]
    for step in itertools.count():
        todo: list[tuple[Sweep, float]] = []
        still = []
        for sw, b in live:
            span = _crossing(sw.points, b) if step < sw.n_bisect else None
            if span is None or span[1] / span[0] < 1.05:
                continue
            still.append((sw, b))
            t = math.sqrt(span[0] * span[1])
            if not any(x is sw and u == t for x, u in todo):
                todo.append((sw, t))
        if not todo:
            return
        live = still
        _fit_points(s, todo)


def subset_sweeps(
    subsets: list[Subset], knobs: dict[str, Any], scale: float, targets: list[float], n_bisect: int = 2
) -> list[Sweep]:
    """CEGB lazy inside the cheapest subset (top-k or greedy) that misses each budget (``n_bisect`` bisections).

    One three-point sweep for each such subset (a subset chosen at two budgets sweeps once).
    """
    done: set[frozenset[int]] = set()
    out = []
    for b in targets:
        over = [x for x in subsets if not fits_budget(x.candidate.cost, b)]
        if not over:
            continue
        x = min(over, key=lambda z: z.candidate.cost)
        if frozenset(x.features) in done:
            continue
        done.add(frozenset(x.features))
        family = "lazy_greedy" if x.candidate.family == "greedy" else "lazy_topk"
        extra = {**knobs, "interaction_constraints": [x.features]}
        out.append(Sweep(family, extra, x.k, [scale * 10.0**e for e in (-1.5, 0.0, 1.5)], n_bisect))
    return out


def smaller_trees(s: Search, targets: list[float], leaves_grid: list[int]) -> None:
    """At each budget, the best candidate so far refit with each ``num_leaves`` of ``leaves_grid``.

    A refit is never the base of another (it has ``num_leaves``) and a base serves one budget,
    so the bases are read from the candidates before this family and every refit is one batch.
    """
    refit: list[int] = []
    for b in targets if leaves_grid else []:
        within = [
            i
            for i, c in enumerate(s.frontier)
            if fits_budget(c.cost, b) and not c.constant and i not in refit and "num_leaves" not in c.params
            and c.rounds is None
        ]
        if within:
            refit.append(max(within, key=lambda j: (s.frontier[j].score, -s.frontier[j].cost)))
    bases = [s.frontier[i] for i in refit]
    s.fit_many([Spec(c.family, {**c.params, "num_leaves": nl}, c.k, c.tradeoff) for c in bases for nl in leaves_grid])


# The most work of each family, in trainings on the search's rows at the search's rounds (the
# progress bar's plan; a family that ends under it moves the bar forward).


def planned_topk(n_features: int, n_grid: int, n_targets: int) -> float:
    """Return the most fits of :func:`topk`: per order, every grid size and a packed subset per budget."""
    return 2.0 * (min(n_grid, max(0, n_features - 1)) + n_targets) if n_features > 1 else 0.0


def greedy_fit_share(rows: int, cross_fit: bool) -> float:
    """Return the largest share of ``rows`` a greedy selection fit trains on (:meth:`Search.folds`)."""
    if rows <= 0:
        return 0.0
    held = rows // 3 if cross_fit else max(1, round(0.2 * rows))
    return (rows - held) / rows


def planned_greedy(n_features: int, rows: int, cross_fit: bool, rounds: int,
                   pool_size: int = 16, steps: int = 8, select_rounds: int = 40) -> float:
    """Return the most work of :func:`greedy_forward`: every selection fit of every step, and the refits.

    The selection fits count their share of the rows and of the rounds (at most ``select_rounds``),
    in fits of the search's ``rounds``.
    """
    pool = min(pool_size, n_features)
    if n_features <= 1 or pool == 0:
        return 0.0
    n_steps = min(steps, pool)
    folds = 3 if cross_fit else 1
    evals = folds * (1 + sum(pool - i for i in range(n_steps)))
    return evals * greedy_fit_share(rows, cross_fit) * min(select_rounds, rounds) / rounds + n_steps


def planned_lazy_sweep(n_tradeoffs: int, n_bisect: int, n_targets: int) -> float:
    """Return the most fits of :func:`lazy_sweep`."""
    return float(n_tradeoffs + n_bisect * n_targets)


def planned_lazy_in_subsets(n_targets: int, n_bisect: int = 2) -> float:
    """Return the most fits of :func:`lazy_in_subsets`: per budget, a three-point sweep and its bisections."""
    return n_targets * planned_lazy_sweep(3, n_bisect, n_targets)


def planned_smaller_trees(n_targets: int, n_leaves: int) -> float:
    """Return the most fits of :func:`smaller_trees`."""
    return float(n_targets * n_leaves)
