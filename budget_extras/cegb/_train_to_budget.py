"""Train a LightGBM model to a prediction-cost budget on validation rows."""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd

from .._compat import construct_dataset, param_aliases
from ..core._costs import as_feature_costs
from ..core._params import Interval, Options, check_scalar, is_integer, is_real
from ..core._status import Status, fits_budget
from ..core._validation import _is_default_names, align_columns, check_finite_labels, column_names
from . import _cv as cv
from . import _dask
from ._fast import POOL_TRIES, refit_on_pool
from ._result import BudgetTrainResult, Candidate, pick
from ._scoring import objective_kind, readable, resolve_scoring
from ._search import Clock, Search, SearchCut
from ._strategies import PlanInput, SearchRun, Strategy, resolve_strategy

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
    strategy: Strategy
    knobs: dict[str, Any]
    choose: str
    rule: str


#: The scalar arguments of :func:`train_to_budget` in the package's parameter table
#: (``core/_params.py``): a bool is never a number, numpy scalars are numbers.
_ARGUMENT_CONSTRAINTS: dict[str, list[Any]] = {
    "budget": [Interval(numbers.Real, 0, None, closed="left")],
    "num_boost_round": [Interval(numbers.Integral, 1, None, closed="left")],
    "random_state": [Interval(numbers.Integral, None, None, closed="neither")],
    "progress": ["boolean"],
    "n_tradeoffs": [Interval(numbers.Integral, 0, None, closed="left")],
    "n_bisect": [Interval(numbers.Integral, 0, None, closed="left")],
    "greedy": ["boolean"],
    "keep_boosters": ["boolean"],
    "proxy_rows": [Interval(numbers.Integral, 100, None, closed="left"), Options(("auto",)), None],
    "n_jobs": [Interval(numbers.Integral, 1, None, closed="left")],
    "max_fits": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "time_limit": [Interval(numbers.Real, 0, None, closed="neither", allow_inf=True), None],
    "choose": [Options(("auto", "cv", "valid"))],
    "rule": [Options(("best", "1se"))],
}


def _check_arguments(kw: Mapping[str, Any]) -> None:
    """Check the scalar arguments of one call against :data:`_ARGUMENT_CONSTRAINTS` (before any work).

    Raises
    ------
    ValueError, TypeError
        As :func:`~budget_extras.core._params.check_scalar`, naming the first argument refused.
    """
    for name, constraints in _ARGUMENT_CONSTRAINTS.items():
        check_scalar(kw[name], name, constraints, owner="train_to_budget", kind="argument")


def _params_iv(params: Any) -> dict[str, Any]:
    if not isinstance(params, Mapping):
        raise TypeError(f"The 'params' argument must be a mapping of LightGBM parameters. Got {type(params).__name__}.")
    reserved = param_aliases("interaction_constraints")
    bad = sorted(str(k) for k in params if str(k).lower().startswith("cegb") or k in reserved)
    if bad:
        raise ValueError(
            f"The 'params' argument must not set {bad!r}: train_to_budget searches the CEGB parameters and "
            "feature subsets itself, and its cost accounting assumes no other CEGB penalty "
            "(costs go in the 'costs' argument)."
        )
    return dict(params)


def _valid_iv(valid_set: Any, kind: str) -> tuple[Any, np.ndarray, np.ndarray | None]:
    """Return the validation rows, their labels and their init_score (None without one)."""
    init = None
    if isinstance(valid_set, lgb.Dataset):
        X = valid_set.data
        if X is None or isinstance(X, (str, bytes)) or hasattr(X, "__fspath__"):
            raise ValueError(
                "The 'valid_set' argument must keep its raw rows (an array or DataFrame, not a file path, "
                f"and not freed): pass lightgbm.Dataset(X, y) unconstructed or a tuple (X, y). Got data={X!r:.60}."
            )
        y = valid_set.label
        init = valid_set.init_score
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
    if yv.dtype.kind not in "biuf":
        raise ValueError(f"The 'valid_set' argument must have numeric labels. Got dtype {yv.dtype}.")
    check_finite_labels(yv, name="valid_set", owner="train_to_budget")
    if kind != "regression" and np.unique(yv).size < 2:
        raise ValueError(
            f"The 'valid_set' argument must hold at least two classes to score a {kind} model. "
            f"Got only the label {yv[0].item()!r}."
        )
    return X, yv, None if init is None else _init_score_iv(init, n_rows)


def _init_score_iv(init: Any, n_rows: int) -> np.ndarray:
    """Return a validation init_score shaped as raw scores: (n_rows,) or (n_rows, n_classes).

    A 1-D init_score of ``n_rows * k`` entries is class-major, as LightGBM reads it.
    """
    try:
        arr = np.asarray(init, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"The 'valid_set' argument's init_score must hold numbers. Got {init!r:.60}.") from exc
    if arr.ndim == 1 and arr.size % max(1, n_rows) == 0 and arr.size > n_rows:
        arr = arr.reshape(arr.size // n_rows, n_rows).T
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim not in (1, 2) or arr.shape[0] != n_rows:
        raise ValueError(
            f"The 'valid_set' argument's init_score must have one entry per row ({n_rows}), per class for a "
            f"multiclass model. Got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError("The 'valid_set' argument's init_score must be finite. Got NaN or inf.")
    return arr


def _iv(
    params: Any, train_set: Any, budget: Any, valid_set: Any, **kw: Any
) -> tuple[_Options, Any, np.ndarray, np.ndarray | None]:
    base = _params_iv(params)
    if not isinstance(train_set, lgb.Dataset):
        raise TypeError(f"The 'train_set' argument must be a lightgbm.Dataset. Got {type(train_set).__name__}.")
    _check_arguments({**kw, "budget": budget})
    Xv, yv, init = _valid_iv(valid_set, objective_kind(base))
    base.setdefault("seed", kw["random_state"])
    if not param_aliases("verbosity") & set(base):
        base["verbosity"] = -1
    extra: list[float] = []
    if kw["budgets"] is not None:
        if isinstance(kw["budgets"], (str, bytes, bytearray)):  # iterating would read '13' as budgets 1 and 3
            raise ValueError(f"The 'budgets' argument must be a sequence of numbers >= 0, not a string. "
                             f"Got {kw['budgets']!r}.")
        try:
            extra = [float(v) if is_real(v) else math.nan for v in kw["budgets"]]  # a bool is no budget
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(
                f"The 'budgets' argument must be a sequence of numbers >= 0. Got {kw['budgets']!r}."
            ) from exc
        if any(not math.isfinite(v) or v < 0 for v in extra):
            raise ValueError(f"The 'budgets' argument must hold finite numbers >= 0. Got {kw['budgets']!r}.")
    ks: list[int] | None = None
    if kw["k_grid"] is not None:
        grid = kw["k_grid"]
        if isinstance(grid, (str, bytes, bytearray)) or not isinstance(grid, Iterable):
            raise TypeError(f"The 'k_grid' argument must be a sequence of integers >= 1. Got {grid!r}.")
        grid = list(grid)
        if any(not is_integer(k) for k in grid):
            raise ValueError(f"The 'k_grid' argument must hold integers >= 1. Got {kw['k_grid']!r}.")
        ks = sorted({int(k) for k in grid})
        if not ks or ks[0] < 1:
            raise ValueError(f"The 'k_grid' argument must hold integers >= 1. Got {kw['k_grid']!r}.")
    proxy = kw["proxy_rows"]
    strategy, knobs = resolve_strategy(kw["search"], kw["options"], is_fork(), str(lgb.__version__))
    if kw["choose"] == "cv" and not strategy.cross_validates:
        raise ValueError(
            f"The 'choose' argument 'cv' needs search='full' or 'lean' (search={kw['search']!r} chooses on the "
            "validation rows)."
        )
    _warn_unused(kw)
    limit = kw["time_limit"]
    opts = _Options(
        base=base,
        budget=float(budget),
        targets=sorted({float(budget), *extra}),
        rounds=int(kw["num_boost_round"]),
        k_grid=ks,
        n_tradeoffs=int(kw["n_tradeoffs"]),
        n_bisect=int(kw["n_bisect"]),
        greedy=bool(kw["greedy"]),
        leaves_grid=_leaves_grid(kw["num_leaves_grid"], params),
        proxy_rows=proxy,
        n_jobs=int(kw["n_jobs"]),
        max_fits=None if kw["max_fits"] is None else int(kw["max_fits"]),
        time_limit=None if limit is None else (math.inf if limit > 1e308 else float(limit)),
        search=kw["search"] if isinstance(kw["search"], str) else getattr(kw["search"], "__name__", "callable"),
        strategy=strategy,
        knobs=knobs,
        choose=str(kw["choose"]),
        rule=str(kw["rule"]),
    )
    return opts, Xv, yv, init


#: The options of ``search="full"`` each named strategy does not read (``"lean"``: its knob ``bisect``).
_UNREAD = {"fast": ("k_grid", "n_tradeoffs", "n_bisect", "greedy", "num_leaves_grid"), "lean": ("n_bisect",)}


def _warn_unused(kw: Mapping[str, Any]) -> None:
    """Warn when a named strategy meets full-search options it does not read set to other than their defaults."""
    if not isinstance(kw["search"], str) or kw["search"] not in _UNREAD:
        return
    defaults = inspect.signature(train_to_budget).parameters
    unused = [k for k in _UNREAD[kw["search"]] if not _is_default(kw[k], defaults[k].default)]
    if unused:
        warnings.warn(
            f"train_to_budget: search={kw['search']!r} does not use {', '.join(repr(k) for k in unused)} "
            "(options of search='full'); they are ignored.",
            UserWarning, stacklevel=4,
        )


def _is_default(value: Any, default: Any) -> bool:
    if default is None or isinstance(default, (bool, str)):
        return value is default or (isinstance(value, (bool, str)) and value == default)
    return is_real(value) and value == default


def _leaves_grid(grid: Any, params: Mapping[str, Any]) -> list[int]:
    bad = f"The 'num_leaves_grid' argument must be 'auto', a sequence of int or None. Got {grid!r}."
    if grid is None:
        return []
    if isinstance(grid, (str, bytes, bytearray)):
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
    if any(not is_integer(v) or v < 2 for v in vals):
        raise ValueError(f"The 'num_leaves_grid' argument must hold integers >= 2. Got {grid!r}.")
    return sorted({int(v) for v in vals}, reverse=True)


def _align_valid(Xv: Any, names: list[str]) -> Any:
    """Return the validation columns in the training order: the package's one column rule.

    Warns when the training set names its features and ``Xv`` has no column names: its columns
    are then read by position, which the names cannot check.
    """
    if isinstance(Xv, pd.DataFrame):
        Xv = align_columns(Xv, names, name="valid_set")
    if not _is_default_names(names) and column_names(Xv) is None:
        shown = ", ".join(repr(n) for n in names[:3]) + (", ..." if len(names) > 3 else "")
        warnings.warn(
            f"train_to_budget: the training set names its features ({shown}) but the 'valid_set' "
            "argument has no column names: its columns are matched by position. Pass a DataFrame "
            "with the training names to match them by name.",
            UserWarning, stacklevel=4,
        )
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


def _with_offset(score_fn: Any, init: np.ndarray | None, m: int | None = None, seed: int = 0) -> Any:
    """Return ``score_fn`` scoring with the validation init_score (of the rows :func:`_valid_sample` draws)."""
    if init is None:
        return score_fn
    vi = None if m is None else _rows(init.shape[0], m, seed)
    return functools.partial(score_fn, init_score=init if vi is None else init[vi])


def _proxy_indices(n: int, o: _Options, seed: int) -> np.ndarray | None:
    if o.proxy_rows is None or (o.proxy_rows == "auto" and n <= _PROXY_ABOVE):
        return None
    return _rows(n, max(10_000, n // 40) if o.proxy_rows == "auto" else int(o.proxy_rows), seed)


def _choose(frontier: list[Candidate], budget: float) -> tuple[int, Status]:
    full = [i for i, c in enumerate(frontier) if not c.proxy]
    j = pick([frontier[i] for i in full], budget)
    if j is None:
        return min(full, key=lambda i: (frontier[i].cost, -frontier[i].score)), Status.INFEASIBLE
    best = full[j]
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
        msg = f"search cut ({cut}): best so far: {msg}"
    return msg


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
    search: Any = "full",
    choose: str = "auto",
    rule: str = "best", options: Mapping[str, Any] | None = None, client: Any = None,
) -> BudgetTrainResult:
    """Train the most accurate model whose mean per-row validation cost is <= ``budget``.

    Trains candidates of several families (plain, top-k subsets, greedy forward selection, CEGB lazy costs,
    CEGB inside a subset, smaller trees; docs/train_to_budget.md) and returns the best whose mean per-row
    cost (:func:`budget_extras.cost_report`) fits ``budget`` (:func:`budget_extras.core.fits_budget`), chosen
    on the validation rows or by cross-validation (``choose``). Large training sets run on proxies first.

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
        A Dataset's ``init_score`` starts the raw scores (required if the training set has one).
    costs : FeatureCosts, list / array, dict, pandas.Series or path to a costs CSV
        Per-feature acquisition costs (dict / Series keyed by feature name; features not listed
        cost 0). A FeatureCosts may also carry groups (the fork trains with them; upstream
        LightGBM does not, but a group is still charged once per row), coupled and evaluation costs.
    num_boost_round : int, default 200
        Rounds of every candidate.
    scoring : None, str or callable
        None: AUC (binary), accuracy (multiclass), else the l1/l2/mape error ``params['metric']``
        names or minus the MSE (``"neg_l2"``, shown as RMSE). A string: an sklearn scorer name; a
        callable: a scorer ``scoring(estimator, X, y)``. Higher is better (errors shown positive).
    random_state : int, default 0
        LightGBM ``seed`` unless ``params`` sets one; also draws the proxy and greedy rows.
    progress : bool, default True
        A bar in trainings on every row, its total (the planned most work) its end.
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
        Keep every candidate's booster in ``result.boosters`` (aligned with ``frontier``).
    num_leaves_grid : "auto", sequence of int or None, default "auto"
        Tree sizes for the smaller-trees refits. ``"auto"``: half and a quarter of the
        ``num_leaves`` in ``params`` (default 31: 15 and 7); None or empty: no refits.
    proxy_rows : "auto", int or None, default "auto"
        Rows of the proxy subsample. ``"auto"``: ``max(10000, n // 40)`` when the training set
        has more than 50,000 rows, else no proxies; None: never.
    n_jobs : int, default 1
        Candidates trained at once (threads, each with the ``num_threads`` of ``params``).
    max_fits, time_limit : int or float, optional
        Most LightGBM trainings (proxies and selection fits included); seconds after which none
        starts. A cut search returns its best model trained on every row (``LIMIT``) or raises.
    search : {"full", "fast", "lean"} or callable, default "full"
        ``"full"``: every family; ``"fast"`` (fork only): the fork's ``cegb_budget``, about four trainings a
        budget; ``"lean"``: every family on short proxies, the best refit; a callable (docs/train_to_budget.md).
    choose : {"auto", "cv", "valid"}, default "auto"
        ``"valid"``: choose on the validation rows. ``"cv"``: a shortlist is cross-validated (5 stratified
        folds of the training and validation rows pooled), the pick refit on every pooled row. ``"auto"``:
        ``"cv"`` up to 20,000 rows together that pool (``search="fast"``: each validation pick refit on them).
    rule : {"best", "1se"}, default "best"
        With cross-validation: the best mean fold score, or the cheapest within one SE of it.
    options : dict, optional
        The strategy's knobs (``"full"``: successive halving; ``"lean"``: its proxies); unused keys warn.
    client : distributed.Client, optional
        Search on a Dask cluster (``train_set`` may be a tuple ``(X, y)``, Dask or not): the search on a row
        sample in one task, the choice trained on every row through ``lightgbm.dask`` (docs/train_to_budget.md).

    Returns
    -------
    BudgetTrainResult
        ``result.booster`` is the chosen model; ``status``, ``message``, ``frontier``,
        ``seconds`` per family and ``nfev`` describe the search.

    Warns
    -----
    UserWarning
        If the returned model is constant, if no candidate fits the budget (``INFEASIBLE``: the cheapest
        is returned), if a limit cut the search (``LIMIT``), on unused options, or if a cross-validated
        choice is within one standard error of the best top-k subset or of a constant model.
    """
    if client is not None:  # docs/train_to_budget.md, "Searching a table on a Dask cluster"
        return _dask.train_on_cluster(dict(locals()))
    o, Xv, yv, init = _iv(
        params, train_set, budget, valid_set, budgets=budgets, k_grid=k_grid, proxy_rows=proxy_rows,
        time_limit=time_limit, num_boost_round=num_boost_round, n_tradeoffs=n_tradeoffs, n_bisect=n_bisect,
        greedy=greedy, num_leaves_grid=num_leaves_grid, n_jobs=n_jobs, max_fits=max_fits, random_state=random_state,
        search=search, choose=choose, rule=rule, options=options, progress=progress, keep_boosters=keep_boosters,
    )
    return _search(o, train_set, (Xv, yv, init), costs, scoring, progress, keep_boosters)


def _cv_reason(o: _Options, train_set: lgb.Dataset, raw: Any, yv: np.ndarray, n_train: int,
               proxied: bool) -> str | None:
    """Return why the choice is made on the validation rows (None: the rows pool).

    None: by cross-validation, or, for a strategy with :attr:`Strategy.pool_refit`, on the
    validation rows and refit on the pooled rows.
    """
    if o.choose == "valid":
        return "choose='valid'"
    if not (o.strategy.cross_validates or o.strategy.pool_refit):
        return f"search={o.search!r}"
    why = ("the training set is large enough for proxies" if proxied else
           cv.pool_problem(train_set, raw, objective_kind(o.base), yv, n_train, size_limit=o.choose == "auto"))
    if why is not None and o.choose == "cv":
        raise ValueError(f"The 'choose' argument 'cv' cannot cross-validate these rows: {why}. "
                         "Use choose='valid' (the validation rows decide) or 'auto'.")
    return why


@dataclass(frozen=True)
class _CVChoice:
    """The cross-validated candidates, the picks refit on every pooled row, and what to say."""

    cands: list[Candidate]
    chosen: int
    refits: dict[int, tuple[lgb.Booster, float]]
    status: Status
    note: str | None
    picks: dict[float, int]
    how: str = "cv"


def _pick_and_refit(full: Search, pool: cv.Pool, cands: list[Candidate], budget: float, rule: str,
                    refits: dict[int, tuple[lgb.Booster, float]]) -> tuple[int, Status]:
    """Pick at ``budget`` and refit the pick on every pooled row (at most three tries).

    A refit candidate's cost becomes the larger of its held-out cost and its refit's cost on the
    pooled rows, so a refit that buys more than the folds did is not picked again.
    """
    for _ in range(3):
        i = pick(cands, budget, rule)
        status = Status.SUCCESS if i is not None else Status.INFEASIBLE
        if i is None:
            i = min(range(len(cands)), key=lambda x: (cands[x].cost, -cands[x].score))
        if i not in refits:
            refits[i] = cv.refit(full, pool, cands[i])
            cands[i] = replace(cands[i], cost=max(cands[i].cost, refits[i][1]))
        if status == Status.INFEASIBLE or fits_budget(cands[i].cost, budget):
            break
    else:
        i = min(refits, key=lambda x: (cands[x].cost, -cands[x].score))
        status = Status.INFEASIBLE if not fits_budget(cands[i].cost, budget) else Status.SUCCESS
    if status == Status.SUCCESS and cands[i].constant:
        status = Status.CONSTANT
    return i, status


def _choose_by_cv(run: SearchRun, root: lgb.Dataset, raw: Any, score_name: str) -> _CVChoice | None:
    """Cross-validate the shortlist, pick and refit at every budget; None if the rows do not pool.

    The shortlist is the strategy's own (:attr:`Strategy.shortlist`) or the candidates on every
    training row by validation score (:func:`cv.shortlist`), with the CEGB twins of
    :func:`cv.retune` that bring a configuration missing a budget on the folds back within it.
    """
    full, o = run.full, run.opts
    pool = cv.make_pool(root, raw, full.Xv, full.yv, objective_kind(o.base), o.base)
    if pool is None:
        return None
    with full.clock.stage("cv"):
        if o.strategy.shortlist is not None:
            cands = o.strategy.shortlist(run, lambda c: cv.cross_validate(full, pool, [c])[0])
        else:
            short = cv.shortlist(full.frontier, o.targets)
            cands = cv.cross_validate(full, pool, short)
    if o.strategy.shortlist is None:
        with full.clock.stage("cv_retune"):
            cands = cv.retune(full, pool, cands, [c.cost for c in short], o.targets)
    refits: dict[int, tuple[lgb.Booster, float]] = {}
    picks: dict[float, int] = {}
    with full.clock.stage("cv_refit"):
        for b in sorted(o.targets, key=lambda t: t != o.budget):  # the main budget first
            picks[b], status = _pick_and_refit(full, pool, cands, b, o.rule, refits)
            if b == o.budget:
                main_status = status
    chosen = picks[o.budget]
    note = cv.noise_note(cands, chosen, o.budget, score_name) if main_status == Status.SUCCESS else None
    return _CVChoice(cands, chosen, refits, main_status, note, picks)


def _refit_picks(run: SearchRun, root: lgb.Dataset, raw: Any) -> _CVChoice | None:
    """Refit each budget's pick on the validation rows on the pooled rows (:func:`._fast.refit_on_pool`).

    None if the rows do not pool. A model kept on the training rows (every refit missed the
    budget) has no pooled cost: ``refits`` holds it with NaN.
    """
    full, o = run.full, run.opts
    pool = cv.make_pool(root, raw, full.Xv, full.yv, objective_kind(o.base), o.base, folds=False)
    if pool is None or not full.frontier:
        return None
    with full.clock.stage("cv_refit"):
        cands, fits, picks = refit_on_pool(full, pool, o.targets)
    c = cands[picks[o.budget]]
    status = (Status.INFEASIBLE if not fits_budget(c.cost, o.budget) else
              Status.CONSTANT if c.constant else Status.SUCCESS)
    refits = {i: (b, math.nan if cost is None else cost) for i, (b, cost) in enumerate(fits)}
    return _CVChoice(cands, picks[o.budget], refits, status, None, picks, how="pool")


def _pool_message(ch: _CVChoice, budget: float, score_name: str) -> str:
    c = ch.cands[ch.chosen]
    metric, value = readable(score_name, c.score)
    pooled = ch.refits[ch.chosen][1]
    where = (f"refit on the {c.rows:,} training and validation rows, cost {pooled:.6g} there" if math.isfinite(pooled)
             else "trained on the training rows: its refits on the training and validation rows miss the budget")
    what = f"{c.family} (chosen on the validation rows: {metric} {value:.6g}, cost {c.cost:.6g}; {where})"
    if ch.status == Status.INFEASIBLE:
        return f"infeasible: no candidate fits budget {budget:g}; the cheapest, {what}, is returned"
    if ch.status == Status.CONSTANT:
        return f"only a constant model (one prediction for every row) fits budget {budget:g}: {what}"
    return f"{what} fits budget {budget:g}"


def _cv_message(ch: _CVChoice, budget: float, score_name: str) -> str:
    c = ch.cands[ch.chosen]
    metric, value = readable(score_name, c.score)
    se = float(c.score_se or 0.0)
    if metric == "rmse" and value > 0:  # the standard error of the MSE, carried to its square root
        se /= 2.0 * value
    reps = c.folds // cv.N_FOLDS
    how = f"{cv.N_FOLDS}-fold cross-validation" + (f" repeated {reps} times" if reps > 1 else "")
    what = (f"{c.family} ({how} over {c.rows:,} training and validation rows: "
            f"{metric} {value:.6g} +- {se:.2g}, cost {c.cost:.6g}; refit on all of them, "
            f"cost {ch.refits[ch.chosen][1]:.6g} there)")
    if ch.status == Status.INFEASIBLE:
        return f"infeasible: no cross-validated candidate fits budget {budget:g}; the cheapest, {what}, is returned"
    if ch.status == Status.CONSTANT:
        return f"only a constant model (one prediction for every row) fits budget {budget:g}: {what}"
    return f"{what} fits budget {budget:g}"


def _plan(o: _Options, p: PlanInput, cross_validates: bool, labels: np.ndarray) -> list[tuple[str, float]] | None:
    """Return the search's stages with their most work (the strategy's, then the cross-validation's).

    ``labels``: the training and validation labels (their classes bound a stratified fold's size).
    ``cross_validates``: the rows pool (a strategy with :attr:`Strategy.pool_refit` then refits at
    most :data:`._fast.POOL_TRIES` picks per budget on them).
    """
    if o.strategy.plan is None:
        return None
    plan = list(o.strategy.plan(p, o.knobs))
    if cross_validates and not o.strategy.cross_validates:
        return [*plan, ("cv_refit", POOL_TRIES * len(o.targets) * labels.size / max(1, p.rows))]
    if cross_validates:
        n_classes = 1 if objective_kind(o.base) == "regression" else int(np.unique(labels).size)
        most = o.strategy.shortlist_most
        plan += cv.planned(len(o.targets), labels.size, p.rows, n_classes,
                           None if most is None else most(len(o.targets), o.knobs))
    return plan


def _search(
    o: _Options, train_set: lgb.Dataset, valid: tuple[Any, np.ndarray, np.ndarray | None], costs: Any, scoring: Any,
    progress: bool, keep_boosters: bool,
) -> BudgetTrainResult:
    """Run the validated search: bin once, run the families (on proxies first if large), choose.

    ``valid``: the validation rows, labels and init_score (None without one).
    """
    Xv, yv, init = valid
    score_name, score_fn = resolve_scoring(scoring, o.base)
    fork = is_fork()
    raw = train_set.data  # read before construction, which may free it
    if train_set.label is not None:  # before binning: LightGBM reads NaN labels as 0 and inf as 1e38
        check_finite_labels(train_set.label, name="train_set", owner="train_to_budget")
    root = _construct(train_set, o.base)
    if init is None and root.get_init_score() is not None:
        raise ValueError(
            "The 'valid_set' argument has no init_score but the training set has one: the models start from "
            "it, so validation scores without it are wrong. Pass valid_set=lightgbm.Dataset(X, y, init_score=...) "
            "(zeros if the validation rows have no offset)."
        )
    names = [str(n) for n in root.get_feature_name()]
    Xv = _align_valid(Xv, names)
    fc = as_feature_costs(costs, n_features=len(names), feature_names=names, owner="train_to_budget")
    idx = _proxy_indices(root.num_data(), o, int(o.base["seed"])) if o.strategy.proxies else None
    cv_why = _cv_reason(o, train_set, raw, yv, root.num_data(), idx is not None)
    plan = _plan(o, PlanInput(o, len(names), root.num_data() if idx is None else idx.size,
                              1.0 if idx is None else idx.size / root.num_data(),
                              bool(np.any(np.asarray(fc.coupled) > 0)), cv_why is None and o.strategy.cross_validates),
                 cv_why is None,
                 np.concatenate([np.asarray(root.get_label(), dtype=np.float64).ravel(), yv]))
    clock = Clock(o.budget, root.num_data(), o.max_fits, o.time_limit, o.n_jobs, progress, plan)
    full = Search(o.base, root, None, Xv, yv, fc, _with_offset(score_fn, init), o.rounds, clock)
    choice = None
    seed = int(o.base["seed"])

    def sample(indices: np.ndarray | None, m: int, rounds: int, learning_rate: float | None = None) -> Search:
        """Return a proxy Search on ``indices`` (None: every row), ``m`` validation rows and ``rounds`` rounds.

        ``learning_rate`` replaces the user's (under any alias); its fits count ``rounds / num_boost_round``.
        """
        base = o.base if learning_rate is None else {
            **{k: v for k, v in o.base.items() if k not in param_aliases("learning_rate")},
            "learning_rate": learning_rate}
        s = Search(base, root, indices, *_valid_sample(Xv, yv, m, seed), fc,
                   _with_offset(score_fn, init, m, seed), rounds, clock, proxy=True)
        s.fit_share = rounds / o.rounds
        return s

    # proxies are ranked on as many validation rows as they were trained on
    proxy = None if idx is None else sample(idx, idx.size, o.rounds)
    run = SearchRun(proxy or full, full, proxy, o, fork, dict(o.knobs), sample,
                    cross_validated=cv_why is None and o.strategy.cross_validates)
    try:
        o.strategy.run(run)
        if cv_why is None:
            choice = (_choose_by_cv(run, root, raw, score_name) if o.strategy.cross_validates else
                      _refit_picks(run, root, raw))
    except SearchCut:
        pass
    finally:
        seconds = clock.close()
    if choice is not None:
        return _cv_result(choice, run, score_name, keep_boosters, clock.nfev, seconds)
    proxy = run.proxy
    frontier = (proxy.frontier if proxy else []) + full.frontier
    boosters = (proxy.boosters if proxy else []) + full.boosters
    if not full.frontier:  # proxies only rank: a model on fewer rows or rounds is never returned
        raise ValueError(
            f"The search was cut before its first model trained on every row ({clock.cut}): raise 'max_fits' or "
            "'time_limit'."
        )
    best, status = _choose(frontier, o.budget)
    msg = _message(status, frontier[best], o.budget, score_name, clock.cut)
    if cv_why is None and clock.cut is None:
        msg += " (chosen on the validation rows: the training and validation rows do not stack for cross-validation)"
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


def _cv_result(ch: _CVChoice, run: SearchRun, score_name: str, keep_boosters: bool, nfev: int,
               seconds: dict[str, float]) -> BudgetTrainResult:
    """Assemble the result of a cross-validated choice (the search's own candidates become proxies)."""
    o, fork = run.opts, run.fork
    own = (run.proxy.frontier if run.proxy is not None else []) + run.full.frontier
    own_boosters = (run.proxy.boosters if run.proxy is not None else []) + run.full.boosters
    msg = (_cv_message if ch.how == "cv" else _pool_message)(ch, o.budget, score_name)
    if ch.status != Status.SUCCESS:
        warnings.warn(f"train_to_budget: {msg}.", UserWarning, stacklevel=3)
    elif ch.note is not None:
        warnings.warn(f"train_to_budget: {ch.note}.", UserWarning, stacklevel=3)
        msg += f"; {ch.note}"
    frontier = [replace(c, proxy=True) for c in own] + ch.cands
    boosters = own_boosters + [ch.refits[i][0] if i in ch.refits else None for i in range(len(ch.cands))]
    c = ch.cands[ch.chosen]
    return BudgetTrainResult(
        status=ch.status, message=msg, booster=ch.refits[ch.chosen][0], budget=o.budget, budgets=tuple(o.targets),
        chosen=c, score=c.score, cost=c.cost, params={**o.base, **c.params}, frontier=frontier, scoring=score_name,
        fork=fork, boosters=boosters if keep_boosters else [], nfev=nfev, seconds=seconds, rule=o.rule,
        picks={b: len(own) + i for b, i in ch.picks.items()},
    )
