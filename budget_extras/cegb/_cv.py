"""Choosing :func:`train_to_budget`'s model by K-fold cross-validation on small tables.

On a few thousand rows one validation split ranks the candidates by noise: the standard error
of an AUC on 1,000 rows with 70 positives is 0.02-0.03, far above the differences between the
best candidates, and the best of 40 noisy scores is a lucky one. With cross-validation the
search's candidates (trained on the training rows, scored on the validation rows) form a
shortlist; every shortlisted configuration is trained once per fold over the training and
validation rows pooled (stratified folds), scored and costed on its held-out fold; the choice
at each budget is made on the fold means (see :func:`pick`), and the chosen configuration is
refit on every pooled row, its cost checked there.

A CEGB configuration tuned to a budget on the training rows sits at the edge of a purchase:
its ``cegb_tradeoff`` is bisected to where the training rows' model stops buying a feature, and
the fold rows (training and validation rows mixed) can tip the same decision the other way, so
its held-out cost misses the budget. :func:`retune` raises such a configuration's tradeoff on the
folds until it fits again.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold

from ..core._status import fits_budget
from ._measure import measure_rows
from ._result import Candidate, pick
from ._scoring import readable
from ._search import Search

__all__ = [
    "CV_ROWS", "N_FOLDS", "Pool", "cross_validate", "make_pool", "noise_note", "pick", "planned", "pool_problem",
    "refit", "retune", "shortlist",
]

#: Pooled training + validation rows up to which ``choose="auto"`` chooses by cross-validation
#: (measured up to 20,000 rows: docs/train_to_budget.md, "Where cross-validation stops").
CV_ROWS = 20_000

#: Folds of the cross-validation.
N_FOLDS = 5

#: Pooled rows below which the K folds are drawn ``N_REPEATS`` times (different shuffles).
REPEATS_BELOW = 1000
N_REPEATS = 3

#: Shortlisted candidates per budget, by validation score (the best top-k subset of each order
#: comes on top). Four: with five, the picks are the same on all but 6 of 126 frontier picks
#: (within noise) for 15% more fold-fit time; with three, a frontier cell falls below
#: (docs/train_to_budget.md, "The default choice on the frontier harness").
TOP_PER_BUDGET = 4

#: :func:`retune`: each step multiplies ``cegb_tradeoff`` by ``RETUNE_STEP``, at most
#: ``RETUNE_STEPS`` steps a budget, for a configuration whose held-out cost is at most
#: ``RETUNE_OVER`` times the budget.
RETUNE_STEP = math.sqrt(10.0)
RETUNE_STEPS = 3
RETUNE_OVER = 2.0


@dataclass(frozen=True)
class Pool:
    """The training and validation rows pooled, binned with the training set's bins, and the folds.

    Attributes
    ----------
    data : lightgbm.Dataset
        Every pooled row, constructed with the training set as reference (the same bins).
    X : array-like
        The pooled raw rows (training rows first).
    y : numpy.ndarray
        Their labels.
    folds : list of (numpy.ndarray, numpy.ndarray)
        ``(fit rows, held-out rows)`` of each fold, indices into the pool.
    fit_sets : list of lightgbm.Dataset
        Each fold's fit rows, a subset of ``data`` constructed once: every configuration
        cross-validated trains on the same ones.
    """

    data: lgb.Dataset
    X: Any
    y: np.ndarray
    folds: list[tuple[np.ndarray, np.ndarray]]
    fit_sets: list[lgb.Dataset] = field(default_factory=list)


def _take(X: Any, rows: np.ndarray) -> Any:
    return X.iloc[rows] if isinstance(X, pd.DataFrame) else X[rows]


def _stack(Xt: Any, Xv: Any) -> Any | None:
    """Return the training rows followed by the validation rows (None: types that do not stack)."""
    if isinstance(Xt, pd.DataFrame) and isinstance(Xv, pd.DataFrame):
        return pd.concat([Xt, Xv.set_axis(Xt.columns, axis=1)], ignore_index=True)
    if isinstance(Xt, np.ndarray) and isinstance(Xv, np.ndarray) and Xt.ndim == Xv.ndim == 2:
        return np.vstack([Xt, Xv])
    if sp.issparse(Xt) and sp.issparse(Xv):
        return sp.vstack([Xt, Xv]).tocsr()
    return None


def pool_problem(
    train_set: lgb.Dataset, raw: Any, kind: str, yv: np.ndarray, n_train: int, size_limit: bool = True
) -> str | None:
    """Return why the rows cannot be cross-validated, or None if they can.

    Parameters
    ----------
    train_set : lightgbm.Dataset
        The user's training set (constructed).
    raw : array-like or None
        Its raw rows, read before construction (None when freed or a file).
    kind : str
        ``"binary"``, ``"multiclass"`` or ``"regression"``.
    yv : numpy.ndarray
        The validation labels.
    n_train : int
        Training rows.
    size_limit : bool, default True
        Refuse more than :data:`CV_ROWS` rows.

    Returns
    -------
    str or None
        A reason a user can act on, or None.
    """
    if raw is None or isinstance(raw, (str, bytes)) or hasattr(raw, "__fspath__"):
        return ("the training Dataset keeps no raw rows (pass lightgbm.Dataset(X, y) unconstructed, "
                "or free_raw_data=False)")
    for name in ("weight", "init_score", "group", "position"):
        if getattr(train_set, name, None) is not None:
            return f"the training Dataset has a {name}"
    if size_limit and n_train + len(yv) > CV_ROWS:
        return f"more than {CV_ROWS:,} training and validation rows"
    if kind != "regression":
        y = np.concatenate([np.asarray(train_set.get_label()), yv])
        if np.unique(y, return_counts=True)[1].min() < N_FOLDS:
            return f"a class has fewer than {N_FOLDS} rows"
    return None


def make_pool(
    root: lgb.Dataset, raw: Any, Xv: Any, yv: np.ndarray, kind: str, params: dict[str, Any], folds: bool = True
) -> Pool | None:
    """Pool the training rows ``raw`` (binned as ``root``) with the validation rows; draw the folds.

    ``params``: the parameters ``root`` was constructed with (its seed draws the folds).
    ``folds=False``: no folds (a pool only refit on). Returns None when the two row sets do not
    stack (different types).
    """
    X = _stack(raw, Xv)
    if X is None:
        return None
    y = np.concatenate([np.asarray(root.get_label(), dtype=np.float64), np.asarray(yv, dtype=np.float64)])
    data = lgb.Dataset(X, y, reference=root, feature_name=root.get_feature_name(), free_raw_data=False,
                       params=dict(params)).construct()
    if not folds:
        return Pool(data, X, y, [])
    seed = int(params.get("seed", 0))
    repeats = N_REPEATS if y.size < REPEATS_BELOW else 1
    split = (RepeatedStratifiedKFold if kind != "regression" else RepeatedKFold)(
        n_splits=N_FOLDS, n_repeats=repeats, random_state=seed & 0x7FFFFFFF)
    drawn = [(np.sort(a), np.sort(b)) for a, b in split.split(np.zeros(len(y)), y)]
    return Pool(data, X, y, drawn, [data.subset(a.tolist()).construct() for a, _ in drawn])


def shortlist(frontier: Sequence[Candidate], targets: Sequence[float], per_budget: int = TOP_PER_BUDGET,
              orders: bool = True) -> list[Candidate]:
    """Return the candidates worth cross-validating, each configuration once.

    At every budget: the best top-k subset of each order (``orders``) and the ``per_budget``
    (:data:`TOP_PER_BUDGET`) best candidates by validation score among those whose validation
    cost is within 10% of the budget (a refit on more rows may buy less); and the cheapest
    candidate overall.
    """
    seen: set[str] = set()
    out: list[Candidate] = []

    def add(c: Candidate) -> None:
        key = repr(sorted(c.params.items()))
        if key not in seen:
            seen.add(key)
            out.append(c)

    pool = [c for c in frontier if not c.proxy]
    for b in targets:
        near = sorted((c for c in pool if c.cost <= 1.1 * b + 1e-9), key=lambda c: (-c.score, c.cost))
        for fam in ("topk_gain", "topk_gain_cost") if orders else ():
            best = next((c for c in near if c.family == fam and fits_budget(c.cost, b)), None)
            if best is not None:
                add(best)
        for c in near[:per_budget]:
            add(c)
    if pool:
        add(min(pool, key=lambda c: (c.cost, -c.score)))
    return out


def planned(n_targets: int, n_pooled: int, n_train: int, n_classes: int,
            shortlist_most: int | None = None) -> list[tuple[str, float]]:
    """Return the most work of the cross-validated choice, in trainings on the ``n_train`` training rows.

    ``"cv"``: every candidate the shortlist can hold (``shortlist_most``; None: :func:`shortlist`'s,
    per budget the best of each top-k order and :data:`TOP_PER_BUDGET` more, and the
    cheapest), each trained on every fold (a fold fit holds at most 4/5 of the pooled rows plus
    one per class: stratified folds); with :func:`shortlist`'s (``shortlist_most`` None),
    ``"cv_retune"``: :data:`RETUNE_STEPS` configurations a budget (:func:`retune`), each on every
    fold; ``"cv_refit"``: at most three refits on every pooled row per budget.
    """
    folds = N_FOLDS * (N_REPEATS if n_pooled < REPEATS_BELOW else 1)
    per_config = folds * min(n_pooled, n_pooled * (N_FOLDS - 1) / N_FOLDS + max(1, n_classes)) / max(1, n_train)
    retunes = 0 if shortlist_most is not None else n_targets * RETUNE_STEPS
    if shortlist_most is None:
        shortlist_most = 1 + n_targets * (2 + TOP_PER_BUDGET)
    share = n_pooled / max(1, n_train)
    return [("cv", shortlist_most * per_config), ("cv_retune", retunes * per_config),
            ("cv_refit", 3.0 * n_targets * share)]


def _fit_fold(s: Search, pool: Pool, c: Candidate, fold: int) -> tuple[float, np.ndarray, float, bool]:
    """Train ``c``'s configuration on fold ``fold``: its held-out score, row costs, seconds, constancy."""
    hold = pool.folds[fold][1]
    data = pool.fit_sets[fold] if pool.fit_sets else pool.data.subset(pool.folds[fold][0].tolist())
    t0 = time.perf_counter()
    b = s.train_booster(c.params, data, c.decay, transient=True)
    Xh, yh = _take(pool.X, hold), pool.y[hold]
    constant = bool(np.sum(b.feature_importance("split")) == 0)
    row_cost, _, known = measure_rows(b, Xh, s.fc)  # one routing: the costs and the scores
    return float(s.score_fn(b, Xh, yh, known=known)), row_cost, time.perf_counter() - t0, constant


def cross_validate(s: Search, pool: Pool, cands: Sequence[Candidate]) -> list[Candidate]:
    """Train each of ``cands``' configurations on every fold; return them scored on the held-out folds.

    Every (candidate, fold) fit is one batch, trained side by side with ``n_jobs``. Each returned
    candidate's ``score`` is its mean fold score, ``score_se`` its standard error (fold standard
    deviation / sqrt(folds)), ``fold_scores`` the scores in fold order, ``cost`` the mean cost of
    every held-out row, ``folds`` the number of fold fits (``N_FOLDS`` times the repeats) and
    ``constant`` whether every fold's model is constant.

    Raises
    ------
    SearchCut
        Before a fold that ``max_fits`` or ``time_limit`` does not allow.
    """
    k = len(pool.folds)
    done: list[tuple[float, np.ndarray, float, bool]] = []
    items = [(c, f) for c in cands for f in range(k)]
    for batch in s.batches(lambda item: (item[0], item[1], *_fit_fold(s, pool, *item)), items):
        for c, f, score, cost, sec, constant in batch:
            s.clock.record_raw("cv:" + c.family, sec, pool.folds[f][0].size)
            done.append((score, cost, sec, constant))
    return [_fold_mean(c, done[i * k:(i + 1) * k], pool) for i, c in enumerate(cands)]


def _tradeoff(c: Candidate) -> float | None:
    """Return ``c``'s constant ``cegb_tradeoff`` if it has a positive one (None: not retunable)."""
    t = c.params.get("cegb_tradeoff")
    if c.decay is not None or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
        return None
    return float(t)


def _retune_base(cands: Sequence[Candidate], tuned: Sequence[float], budget: float) -> Candidate | None:
    """Return the CEGB configuration worth retuning at ``budget`` (None: none).

    Among the first ``len(tuned)`` of ``cands`` (``tuned``: their costs on the validation rows,
    trained on the training rows), those tuned to ``budget`` there (within the shortlist's 10%)
    whose held-out cost misses it by at most :data:`RETUNE_OVER` times and whose mean fold score
    is above every candidate's within it: the best by score.
    """
    floor = max((c.score for c in cands if fits_budget(c.cost, budget)), default=-math.inf)
    over = [c for c, v in zip(cands, tuned, strict=False) if _tradeoff(c) is not None and v <= 1.1 * budget + 1e-9
            and not fits_budget(c.cost, budget) and c.cost <= RETUNE_OVER * budget and c.score > floor]
    return max(over, key=lambda c: (c.score, -c.cost), default=None)


def retune(s: Search, pool: Pool, cands: Sequence[Candidate], tuned: Sequence[float],
           targets: Sequence[float]) -> list[Candidate]:
    """Return ``cands`` and the cheaper twins cross-validated to bring a CEGB configuration back within a budget.

    ``tuned``: each of ``cands``' cost on the validation rows when trained on the training rows.
    At each budget (increasing), the configuration of :func:`_retune_base` is cross-validated
    again with its ``cegb_tradeoff`` multiplied by :data:`RETUNE_STEP`, up to
    :data:`RETUNE_STEPS` times: until a twin's held-out cost fits the budget or its mean fold
    score is no longer above every candidate's within it. Every twin joins the candidates (a
    twin already cross-validated is not trained again).

    Raises
    ------
    SearchCut
        Before a fold that ``max_fits`` or ``time_limit`` does not allow.
    """
    out = list(cands)
    for b in sorted(targets):
        c = _retune_base(out, tuned, b)
        if c is not None:
            _raise_tradeoff(s, pool, out, c, b)
    return out


def _raise_tradeoff(s: Search, pool: Pool, out: list[Candidate], c: Candidate, budget: float) -> None:
    """Append to ``out`` ``c``'s twins at higher tradeoffs, one step at a time (:func:`retune`)."""
    floor = max((x.score for x in out if fits_budget(x.cost, budget)), default=-math.inf)
    for _ in range(RETUNE_STEPS):
        t = float(_tradeoff(c) or 0.0) * RETUNE_STEP
        params = {**c.params, "cegb_tradeoff": t}
        twin = next((x for x in out if x.family == c.family and x.params == params), None)
        if twin is None:
            twin = cross_validate(s, pool, [replace(c, params=params, tradeoff=t)])[0]
            out.append(twin)
        c = twin
        if fits_budget(c.cost, budget) or c.score <= floor:
            return


def _fold_mean(c: Candidate, done: list[tuple[float, np.ndarray, float, bool]], pool: Pool) -> Candidate:
    """Return ``c`` scored by its fold fits ``done`` (score, held-out row costs, seconds, constancy; in fold order)."""
    k = len(done)
    scores = np.array([d[0] for d in done])
    costs = np.concatenate([d[1] for d in done])
    return replace(
        c, score=float(scores.mean()), score_se=float(scores.std(ddof=1) / math.sqrt(k)),
        fold_scores=tuple(float(v) for v in scores), cost=float(costs.mean()), cost_sd=float(costs.std()),
        rows=int(pool.y.size), proxy=False, folds=k, seconds=float(sum(d[2] for d in done)),
        constant=all(d[3] for d in done),
    )


def paired_gap(a: Candidate, b: Candidate) -> tuple[float, float]:
    """Return the mean and standard error of ``a``'s fold scores minus ``b``'s (same folds)."""
    d = np.asarray(a.fold_scores) - np.asarray(b.fold_scores)
    return float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))


def noise_note(cands: Sequence[Candidate], chosen: int, budget: float, score_name: str) -> str | None:
    """Say when the chosen model's cross-validated score is within noise of a simpler choice.

    The simpler choices: the best top-k subset within ``budget`` and the cheapest candidate.
    """
    c = cands[chosen]
    rivals = [x for x in cands if x is not c and fits_budget(x.cost, budget) and x.family.startswith("topk")]
    notes = []
    if rivals and not c.family.startswith("topk"):
        r = max(rivals, key=lambda x: x.score)
        gap, se = paired_gap(c, r)
        if gap < se:
            metric, value = readable(score_name, r.score)
            notes.append(f"the best top-k subset (k={r.k}, {metric} {value:.4g}, cost {r.cost:.4g}): "
                         f"{score_name} difference {gap:+.4g} +- {se:.2g}")
    cheap = min(cands, key=lambda x: (x.cost, -x.score))
    if cheap is not c and (cheap.constant or cheap.cost == 0):
        gap, se = paired_gap(c, cheap)
        if gap < se:
            metric, value = readable(score_name, cheap.score)
            notes.append(f"a constant model ({metric} {value:.4g}): {score_name} difference {gap:+.4g} +- {se:.2g}")
    if not notes:
        return None
    return f"the chosen model's cross-validated score is within one standard error of {'; and of '.join(notes)}"


def refit(s: Search, pool: Pool, c: Candidate) -> tuple[lgb.Booster, float]:
    """Train ``c``'s configuration on every pooled row; return it and its mean cost on those rows."""
    t0 = time.perf_counter()
    s.clock.allow(1)
    b = s.train_booster(c.params, pool.data, c.decay)
    cost = s.row_costs(b, pool.X)
    s.clock.record_raw("cv_refit", time.perf_counter() - t0, pool.y.size)
    return b, float(cost.mean())
