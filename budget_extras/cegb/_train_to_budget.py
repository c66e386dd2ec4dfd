"""Train a LightGBM model to a prediction-cost budget on validation rows."""

from __future__ import annotations

import math
import numbers
import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd

from .._compat import construct_dataset, param_aliases
from ..core._costs import FeatureCosts, as_feature_costs
from ..core._status import Status, fits_budget
from ..core._validation import align_columns
from . import _families as fam
from ._fast import RANK_ROUNDS, planned_fast_units, run_fast
from ._result import BudgetTrainResult, Candidate
from ._scoring import objective_kind, readable, resolve_scoring
from ._search import Clock, Search, SearchCut, Spec

__all__ = ["is_fork", "train_to_budget"]

#: Rows above which candidates are ranked on a row subsample first (``proxy_rows="auto"``).
_PROXY_ABOVE = 50_000


def is_fork() -> bool:
    """Return True if the imported ``lightgbm`` is the lightgbm-cegb fork (``+cegb`` in its version)."""
    return "+cegb" in str(getattr(lgb, "__version__", ""))


@dataclass(frozen=True)
class _Options:
    """The validated arguments of one call."""

    base: dict[str, Any]
    budget: float
    targets: list[float]
    rounds: int
    k_grid: list[int] | None
    n_tradeoffs: int
    n_bisect: int
    greedy: bool
    leaves_grid: list[int]
    proxy_rows: Any
    n_jobs: int
    max_fits: int | None
    time_limit: float | None
    search: str


def _float(value: Any) -> float:
    """``float(value)``, with an int beyond the float range read as +-inf instead of raising."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _finite(value: Any) -> bool:
    """Tell whether ``value`` converts to a finite float (an int beyond 1e308 does not)."""
    return math.isfinite(_float(value))


def _int_at_least(name: str, val: Any, low: int, none_ok: bool = False) -> int | None:
    if val is None and none_ok:
        return None
    if isinstance(val, bool) or not isinstance(val, numbers.Integral) or val < low:
        more = " or None" if none_ok else ""
        raise ValueError(f"The '{name}' argument must be an integer >= {low}{more}. Got {val!r}.")
    return int(val)


def _params_iv(params: Any) -> dict[str, Any]:
    if not isinstance(params, Mapping):
        raise TypeError(f"The 'params' argument must be a mapping of LightGBM parameters. Got {type(params).__name__}.")
    reserved = param_aliases("interaction_constraints")
    bad = sorted(str(k) for k in params if str(k).startswith("cegb_") or k in reserved)
    if bad:
        raise ValueError(
            f"The 'params' argument must not set {bad!r}: train_to_budget searches the CEGB parameters and "
            "feature subsets itself, and its cost accounting assumes no other CEGB penalty "
            "(costs go in the 'costs' argument)."
        )
    return dict(params)


def _valid_iv(valid_set: Any, kind: str) -> tuple[Any, np.ndarray]:
    if isinstance(valid_set, lgb.Dataset):
        X = valid_set.data
        if X is None or isinstance(X, (str, bytes)) or hasattr(X, "__fspath__"):
            raise ValueError(
                "The 'valid_set' argument must keep its raw rows (an array or DataFrame, not a file path, "
                f"and not freed): pass lightgbm.Dataset(X, y) unconstructed or a tuple (X, y). Got data={X!r:.60}."
            )
        y = valid_set.label
    elif isinstance(valid_set, tuple) and len(valid_set) == 2:
        X, y = valid_set
    else:
        raise TypeError(
            f"The 'valid_set' argument must be a lightgbm.Dataset or a tuple (X, y). Got {type(valid_set).__name__}."
        )
    if y is None:
        raise ValueError("The 'valid_set' argument has no label.")
    yv = np.asarray(y).ravel()
    n_rows = X.shape[0] if hasattr(X, "shape") else len(X)
    if yv.shape[0] != n_rows or n_rows == 0:
        raise ValueError(
            f"The 'valid_set' argument must have one label per row (>= 1 row). Got {n_rows} rows, {yv.shape[0]} labels."
        )
    if yv.dtype.kind not in "biuf" or not np.all(np.isfinite(yv.astype(np.float64))):
        raise ValueError("The 'valid_set' argument must have finite numeric labels. Got NaN, inf or non-numbers.")
    if kind != "regression" and np.unique(yv).size < 2:
        raise ValueError(
            f"The 'valid_set' argument must hold at least two classes to score a {kind} model. "
            f"Got only the label {yv[0].item()!r}."
        )
    return X, yv


def _iv(params: Any, train_set: Any, budget: Any, valid_set: Any, **kw: Any) -> tuple[_Options, Any, np.ndarray]:
    base = _params_iv(params)
    if not isinstance(train_set, lgb.Dataset):
        raise TypeError(f"The 'train_set' argument must be a lightgbm.Dataset. Got {type(train_set).__name__}.")
    if (isinstance(budget, bool) or not isinstance(budget, numbers.Real) or not _finite(budget)
            or not float(budget) >= 0):
        raise ValueError(f"The 'budget' argument must be a finite number >= 0. Got {budget!r}.")
    Xv, yv = _valid_iv(valid_set, objective_kind(base))
    base.setdefault("seed", kw["random_state"])
    if not param_aliases("verbosity") & set(base):
        base["verbosity"] = -1
    extra: list[float] = []
    if kw["budgets"] is not None:
        try:
            extra = [float(v) for v in kw["budgets"]]
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(
                f"The 'budgets' argument must be a sequence of numbers >= 0. Got {kw['budgets']!r}."
            ) from exc
        if any(not math.isfinite(v) or v < 0 for v in extra):
            raise ValueError(f"The 'budgets' argument must hold finite numbers >= 0. Got {kw['budgets']!r}.")
    ks: list[int] | None = None
    if kw["k_grid"] is not None:
        grid = kw["k_grid"]
        if isinstance(grid, (str, bytes)) or not isinstance(grid, Iterable):
            raise TypeError(f"The 'k_grid' argument must be a sequence of integers >= 1. Got {grid!r}.")
        grid = list(grid)
        if any(isinstance(k, bool) or not isinstance(k, numbers.Integral) for k in grid):
            raise ValueError(f"The 'k_grid' argument must hold integers >= 1. Got {kw['k_grid']!r}.")
        ks = sorted({int(k) for k in grid})
        if not ks or ks[0] < 1:
            raise ValueError(f"The 'k_grid' argument must hold integers >= 1. Got {kw['k_grid']!r}.")
    proxy = kw["proxy_rows"]
    if not (proxy is None or proxy == "auto"):
        _int_at_least("proxy_rows", proxy, 100)
    if kw["search"] not in ("full", "fast"):
        raise ValueError(f"The 'search' argument must be 'full' or 'fast'. Got {kw['search']!r}.")
    if kw["search"] == "fast" and not is_fork():
        raise ValueError(
            "The 'search' argument 'fast' needs the lightgbm-cegb fork (its cegb_budget parameter); "
            f"the imported lightgbm is {lgb.__version__}. Use search='full'."
        )
    limit = kw["time_limit"]
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, numbers.Real) or not _float(limit) > 0):
        raise ValueError(f"The 'time_limit' argument must be a number of seconds > 0 or None. Got {limit!r}.")
    opts = _Options(
        base=base,
        budget=float(budget),
        targets=sorted({float(budget), *extra}),
        rounds=int(_int_at_least("num_boost_round", kw["num_boost_round"], 1) or 1),
        k_grid=ks,
        n_tradeoffs=int(_int_at_least("n_tradeoffs", kw["n_tradeoffs"], 0) or 0),
        n_bisect=int(_int_at_least("n_bisect", kw["n_bisect"], 0) or 0),
        greedy=bool(kw["greedy"]),
        leaves_grid=_leaves_grid(kw["num_leaves_grid"], params),
        proxy_rows=proxy,
        n_jobs=int(_int_at_least("n_jobs", kw["n_jobs"], 1) or 1),
        max_fits=_int_at_least("max_fits", kw["max_fits"], 1, none_ok=True),
        time_limit=None if limit is None else _float(limit),
        search=str(kw["search"]),
    )
    return opts, Xv, yv


def _leaves_grid(grid: Any, params: Mapping[str, Any]) -> list[int]:
    bad = f"The 'num_leaves_grid' argument must be 'auto', a sequence of int or None. Got {grid!r}."
    if grid is None:
        return []
    if isinstance(grid, str):
        if grid != "auto":
            raise ValueError(bad)
        user = next((params[k] for k in sorted(param_aliases("num_leaves")) if k in params), 31)
        try:
            n = int(user)
        except (TypeError, ValueError):
            return []
        return [v for v in (n // 2, n // 4) if v >= 2]
    try:
        vals = list(grid)
    except TypeError:
        raise ValueError(bad) from None
    if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 2 for v in vals):
        raise ValueError(f"The 'num_leaves_grid' argument must hold integers >= 2. Got {grid!r}.")
    return sorted({int(v) for v in vals}, reverse=True)


def _default_k_grid(n_used: int) -> list[int]:
    if n_used <= 1:
        return []
    ks = np.unique(np.round(np.geomspace(1, n_used, 6)).astype(int))
    return [int(k) for k in ks if k < n_used][:5]


def _align_valid(Xv: Any, names: list[str]) -> Any:
    """Return the validation columns in the training order: the package's one column rule."""
    if isinstance(Xv, pd.DataFrame):
        Xv = align_columns(Xv, names, name="valid_set")
    width = Xv.shape[1] if hasattr(Xv, "shape") and len(Xv.shape) == 2 else None
    if width is not None and width != len(names):
        raise ValueError(f"The 'valid_set' argument must have {len(names)} columns (as training). Got {width}.")
    return Xv


def _construct(train_set: lgb.Dataset, base: dict[str, Any]) -> lgb.Dataset:
    """Bin the training set once with the user's parameters (every candidate reuses it)."""
    return construct_dataset(train_set, base)


def _rows(n: int, m: int, seed: int, salt: int = 7) -> np.ndarray | None:
    """Return ``m`` of ``n`` row indices drawn at random, sorted (None if ``m >= n``)."""
    if m >= n:
        return None
    return np.sort(np.random.default_rng([seed & 0xFFFFFFFF, salt]).choice(n, size=m, replace=False))


def _valid_sample(Xv: Any, yv: np.ndarray, m: int, seed: int) -> tuple[Any, np.ndarray]:
    """Return ``m`` of the validation rows drawn by :func:`_rows` (all of them if there are no more)."""
    vi = _rows(len(yv), m, seed)
    if vi is None:
        return Xv, yv
    return (Xv.iloc[vi] if isinstance(Xv, pd.DataFrame) else Xv[vi]), yv[vi]


def _proxy_indices(n: int, o: _Options, seed: int) -> np.ndarray | None:
    if o.proxy_rows is None or (o.proxy_rows == "auto" and n <= _PROXY_ABOVE):
        return None
    return _rows(n, max(10_000, n // 40) if o.proxy_rows == "auto" else int(o.proxy_rows), seed)


def _run_families(s: Search, o: _Options, fork: bool) -> None:
    """Every candidate family on one row set (raises :class:`SearchCut` at a limit)."""
    _, rank = fam.plain_and_ranking(s)
    seen: set[frozenset[int]] = set()
    grid = o.k_grid if o.k_grid is not None else _default_k_grid(rank.by_gain.size)
    subsets = fam.topk(s, rank, grid, seen)
    if o.greedy and rank.by_gain.size > 1:
        subsets += fam.greedy_forward(s, rank, seen)
    knobs = fam.cegb_knobs(s, rank, fork)
    exps = np.linspace(-2.0, 2.0, o.n_tradeoffs) if o.n_tradeoffs else np.array([])
    fam.lazy_sweep(s, "lazy", knobs, None, [rank.scale * 10.0**e for e in exps], o.n_bisect, o.targets)
    fam.lazy_in_subsets(s, subsets, knobs, rank.scale, o.targets)
    if np.any(np.asarray(s.fc.coupled) > 0):
        coupled = {**knobs, "cegb_penalty_feature_coupled": [float(v) for v in s.fc.coupled]}
        fam.lazy_sweep(s, "lazy_coupled", coupled, None, [rank.scale * 10.0**e for e in (-1.5, 0.0, 1.5)], 2,
                       o.targets)
    fam.smaller_trees(s, o.targets, o.leaves_grid)


def _refit_finalists(proxy: Search, full: Search, o: _Options) -> None:
    """Refit on every row the best proxy at each budget.

    A refit that misses its budget is replaced by the next proxy, at most three refits a budget.
    """
    done: dict[tuple[str, str], Candidate] = {}
    for b in sorted(o.targets, key=lambda t: t != o.budget):
        need, tries = 1, 0
        ranked = sorted(
            (c for c in proxy.frontier if fits_budget(c.cost, b)), key=lambda c: (-c.score, c.constant, c.cost)
        )
        if not ranked:  # infeasible at b: the cheapest proxy, so the cheapest full model is known
            ranked = sorted(proxy.frontier, key=lambda c: (c.cost, -c.score))[:1]
        for c in ranked:
            key = (c.family, repr(sorted(c.params.items())))
            if key not in done:
                if tries == 3:
                    break
                tries += 1
                done[key] = full.fit(Spec(c.family, c.params, c.k, c.tradeoff))
            need -= bool(fits_budget(done[key].cost, b))
            if need <= 0:
                break


def _choose(frontier: list[Candidate], budget: float) -> tuple[int, Status]:
    full = [i for i, c in enumerate(frontier) if not c.proxy] or list(range(len(frontier)))
    fits = [i for i in full if fits_budget(frontier[i].cost, budget)]
    if not fits:
        return min(full, key=lambda i: (frontier[i].cost, -frontier[i].score)), Status.INFEASIBLE
    best = max(fits, key=lambda i: (frontier[i].score, not frontier[i].constant, -frontier[i].cost))
    return best, (Status.CONSTANT if frontier[best].constant else Status.SUCCESS)


def _message(status: Status, c: Candidate, budget: float, score_name: str, cut: str | None) -> str:
    metric, value = readable(score_name, c.score)  # RMSE, not minus the mean squared error
    what = f"{c.family} (validation cost {c.cost:.6g}, {metric} {value:.6g})"
    if status == Status.INFEASIBLE:
        msg = f"infeasible: no candidate fits budget {budget:g}; the cheapest, {what}, is returned"
    elif status == Status.CONSTANT:
        msg = f"only a constant model (one prediction for every row) fits budget {budget:g}: {what}"
    else:
        msg = f"{what} fits budget {budget:g}"
    if cut is not None:
        proxy = " (trained on a row subsample: no full-size model was reached)" if c.proxy else ""
        msg = f"search cut ({cut}): best so far{proxy}: {msg}"
    return msg


def _planned_units(o: _Options, share: float, cross_fit: bool, n_coupled: bool, n_features: int) -> float:
    """Return the search's expected cost in trainings on every row (the progress bar's total).

    Typical counts, not bounds: top-k sizes that repeat are skipped, greedy selection runs
    about four steps over its pool (the 16 best features), bisections stop early.
    """
    pool = min(16, n_features)
    steps = min(4, pool)
    t = len(o.targets)
    k = len(o.k_grid) if o.k_grid is not None else 5
    fits = 1 + 1.5 * k + o.n_tradeoffs + o.n_bisect * t + 5 * t + (5 if n_coupled else 0) + len(o.leaves_grid) * t
    selection = (3 * 2 / 3 if cross_fit else 0.8) * steps * (pool - steps / 2) * min(40, o.rounds) / o.rounds
    greedy = steps + selection if o.greedy else 0.0
    return (fits + greedy) * share + (t if share < 1 else 0)


def train_to_budget(
    params: Mapping[str, Any],
    train_set: lgb.Dataset,
    *,
    budget: float,
    valid_set: Any,
    costs: Any,
    num_boost_round: int = 200,
    scoring: Any = None,
    random_state: int = 0,
    progress: bool = True,
    k_grid: Any = None,
    n_tradeoffs: int = 6,
    n_bisect: int = 3,
    greedy: bool = True,
    budgets: Any = None,
    keep_boosters: bool = False,
    num_leaves_grid: Any = "auto",
    proxy_rows: Any = "auto",
    n_jobs: int = 1,
    max_fits: int | None = None,
    time_limit: float | None = None,
    search: str = "full",
) -> BudgetTrainResult:
    """Train the most accurate model whose mean per-row validation cost is <= ``budget``.

    Trains candidates of several families (plain LightGBM, top-k feature subsets, greedy
    forward selection scored on held-out training rows, CEGB lazy costs over a tradeoff grid
    with bisection of every budget crossing, CEGB inside a subset, smaller trees; see
    docs/train_to_budget.md) and returns the one with the best validation score among those
    whose mean per-row validation cost, by :func:`budget_extras.cost_report`, fits ``budget``
    (:func:`budget_extras.core.fits_budget`). On a large training set (``proxy_rows``) every
    family runs on a row subsample first and only the best proxy at each budget is refit on
    every row.

    Parameters
    ----------
    params : mapping
        LightGBM parameters (objective, learning rate, leaves, ...). Must not set any ``cegb_*``
        parameter nor ``interaction_constraints``.
    train_set : lightgbm.Dataset
        Training rows; binned once, every candidate reuses the bins.
    budget : float
        Largest allowed mean per-row validation cost (>= 0).
    valid_set : lightgbm.Dataset with its raw rows, or tuple (X, y)
        Rows on which cost and score are measured and the model is chosen. A DataFrame's columns
        are matched to the training features by name, as :func:`budget_extras.cost_report` does.
    costs : FeatureCosts, list / array, dict, pandas.Series or path to a costs CSV
        Per-feature acquisition costs (dict / Series keyed by feature name; features not listed
        cost 0). A FeatureCosts may also carry groups (the fork trains with them), coupled and
        evaluation costs.
    num_boost_round : int, default 200
        Rounds of every candidate (the returned model is the candidate itself, so its
        measured validation cost is exact).
    scoring : None, str or callable
        None: AUC (binary), accuracy (multiclass), else the l1/l2/mape error ``params['metric']``
        names or minus the MSE (``"neg_l2"``, shown as RMSE). A string: an sklearn scorer name; a
        callable: a scorer ``scoring(estimator, X, y)``. Higher is better (errors shown positive).
    random_state : int, default 0
        LightGBM ``seed`` unless ``params`` sets one; also draws the proxy and greedy rows.
    progress : bool, default True
        Show a progress bar counted in trainings on every row (its total is the expected
        search cost, so the bar reads the search's cost as a multiple of one training).
    k_grid : sequence of int, optional
        Subset sizes (default: up to 5 geometric sizes below the number of used features).
    n_tradeoffs, n_bisect : int
        Grid size and bisection steps of the ``lazy`` family.
    greedy : bool, default True
        Include the ``greedy`` family.
    budgets : sequence of float, optional
        Further budgets the search also refines, so that ``result.best_at(b)`` serves each of
        them; the returned model is still the one for ``budget``.
    keep_boosters : bool, default False
        Keep every candidate's booster in ``result.boosters`` (aligned with ``frontier``;
        ``result.booster_at(b)`` reads one off).
    num_leaves_grid : "auto", sequence of int or None, default "auto"
        Tree sizes for the smaller-trees refits. ``"auto"``: half and a quarter of the
        ``num_leaves`` in ``params`` (default 31: 15 and 7); None or empty: no refits.
    proxy_rows : "auto", int or None, default "auto"
        Rows of the proxy subsample. ``"auto"``: ``max(10000, n // 40)`` when the training set
        has more than 50,000 rows, else no proxies; None: never.
    n_jobs : int, default 1
        Candidates trained at once (threads; each uses the ``num_threads`` of ``params``, so
        set ``num_threads`` to cores // n_jobs). The candidates equal a serial search's.
    max_fits : int, optional
        Largest number of LightGBM trainings (proxies and selection fits included).
    time_limit : float, optional
        Seconds after which no new training starts.
    search : {"full", "fast"}, default "full"
        ``"full"``: every family above. ``"fast"`` (the fork only): two candidates per budget on
        every row, the fork's learner budget (``cegb_budget``, a cap on the training rows' mean
        per-row cost, with a falling tradeoff) and the largest top-k subset within the budget:
        about two trainings per budget, or one after proxies on large training sets
        (docs/train_to_budget.md has the table); ``k_grid``, ``n_tradeoffs``, ``n_bisect``,
        ``greedy`` and ``num_leaves_grid`` are not used.

    Returns
    -------
    BudgetTrainResult
        ``result.booster`` is the chosen model; ``status``, ``message``, ``frontier``,
        ``seconds`` per family and ``nfev`` describe the search.

    Warns
    -----
    UserWarning
        If the returned model is constant, if no candidate fits the budget (``INFEASIBLE``: the
        cheapest is returned), or if a limit cut the search (``LIMIT``).

    Notes
    -----
    With upstream LightGBM (no ``+cegb`` in ``lightgbm.__version__``) groups are not trained on
    (each member carries its group's cost), but the accounting still charges a group once per row.
    """
    o, Xv, yv = _iv(
        params, train_set, budget, valid_set, budgets=budgets, k_grid=k_grid, proxy_rows=proxy_rows,
        time_limit=time_limit, num_boost_round=num_boost_round, n_tradeoffs=n_tradeoffs, n_bisect=n_bisect,
        greedy=greedy, num_leaves_grid=num_leaves_grid, n_jobs=n_jobs, max_fits=max_fits, random_state=random_state,
        search=search,
    )
    return _search(o, train_set, Xv, yv, costs, scoring, progress, keep_boosters)


def _search(
    o: _Options, train_set: lgb.Dataset, Xv: Any, yv: np.ndarray, costs: Any, scoring: Any, progress: bool,
    keep_boosters: bool,
) -> BudgetTrainResult:
    """Run the validated search: bin once, run the families (on proxies first if large), choose."""
    if not isinstance(costs, (FeatureCosts, Mapping, pd.Series, list, tuple, np.ndarray, str, os.PathLike)):
        as_feature_costs(costs, n_features=0, feature_names=[], owner="train_to_budget")  # raises the TypeError
    score_name, score_fn = resolve_scoring(scoring, o.base)
    fork = is_fork()
    root = _construct(train_set, o.base)
    names = [str(n) for n in root.get_feature_name()]
    Xv = _align_valid(Xv, names)
    fc = as_feature_costs(costs, n_features=len(names), feature_names=names, owner="train_to_budget")
    idx = _proxy_indices(root.num_data(), o, int(o.base["seed"]))
    share = 1.0 if idx is None else idx.size / root.num_data()
    planned = (planned_fast_units(o.rounds, len(o.targets), share) if o.search == "fast" else
               _planned_units(o, share, idx is None and root.num_data() <= fam.CROSS_FIT_ROWS,
                              bool(np.any(np.asarray(fc.coupled) > 0)), len(names)))
    clock = Clock(o.budget, root.num_data(), o.max_fits, o.time_limit, o.n_jobs, progress, planned)
    full = Search(o.base, root, None, Xv, yv, fc, score_fn, o.rounds, clock)
    proxy = None
    seed = int(o.base["seed"])
    if idx is not None:  # proxies are ranked on as many validation rows as they were trained on
        proxy = Search(o.base, root, idx, *_valid_sample(Xv, yv, idx.size, seed), fc, score_fn, o.rounds, clock)
    try:
        if o.search == "fast":  # without proxies, the ranking model: every row, few rounds, 5,000 validation rows
            proxy = proxy or Search(o.base, root, None, *_valid_sample(Xv, yv, 5000, seed), fc, score_fn,
                                    min(RANK_ROUNDS, o.rounds), clock, proxy=True)
            run_fast(proxy, full, lambda s, rank: fam.cegb_knobs(s, rank, fork), o.targets)
        else:
            _run_families(proxy or full, o, fork)
            if proxy is not None:
                _refit_finalists(proxy, full, o)
    except SearchCut:
        pass
    finally:
        seconds = clock.close()
    frontier = (proxy.frontier if proxy else []) + full.frontier
    boosters = (proxy.boosters if proxy else []) + full.boosters
    if not frontier:
        raise ValueError(f"The search was cut before its first model ({clock.cut}): raise 'max_fits' or 'time_limit'.")
    best, status = _choose(frontier, o.budget)
    msg = _message(status, frontier[best], o.budget, score_name, clock.cut)
    if clock.cut is not None:
        status = Status.LIMIT
    if status != Status.SUCCESS:
        warnings.warn(f"train_to_budget: {msg}.", UserWarning, stacklevel=2)
    c = frontier[best]
    return BudgetTrainResult(
        status=status, message=msg, booster=boosters[best], budget=o.budget, budgets=tuple(o.targets), chosen=c,
        score=c.score, cost=c.cost, params={**o.base, **c.params}, frontier=frontier, scoring=score_name, fork=fork,
        boosters=boosters if keep_boosters else [], nfev=clock.nfev, seconds=seconds,
    )
