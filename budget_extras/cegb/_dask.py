"""``train_to_budget(..., client=)``: the search on a row sample in one Dask task, the chosen model on every row.

The candidates are fitted by the ordinary local search (one code path for the choice) inside
one ``client.submit`` task, on a random row sample small enough for one worker (the whole
table when it is small). The chosen configuration is then trained on every row through
``lightgbm.dask`` (the fork's CEGB parameters pass through), measured on every validation row
and checked against the budget; a full-size model that misses the budget hands the choice to
the next sample candidate (at most three tries a budget), and if none fits the result says so.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd

from .._compat import param_aliases
from ..core._costs import FeatureCosts, as_feature_costs
from ..core._ensemble import TreeEnsemble
from ..core._leaf_cost import row_costs_from_leaves
from ..core._report import model_coupled_cost
from ..core._status import Status, fits_budget
from ..core._validation import check_finite_labels
from ._result import BudgetTrainResult, Candidate, pick
from ._scoring import objective_kind, readable, resolve_scoring

__all__ = ["check_client", "train_on_cluster"]

#: Training rows above which the search runs on a sample (``proxy_rows="auto"``), as the local search's proxies.
SAMPLE_ABOVE = 50_000
#: Full-size trainings tried per budget before the result says the budget is missed.
MAX_TRIES = 3


def check_client(client: Any) -> None:
    """Refuse a ``client`` that is not a ``distributed.Client``, or one without workers.

    Raises
    ------
    TypeError
        Naming ``client``, what is expected and what came.
    ValueError
        If the client is closed or its cluster has no workers (the search task would wait forever).
    """
    try:
        from distributed import Client
    except ImportError as exc:
        raise TypeError(
            "The 'client' argument needs the 'distributed' package (pip install 'dask[distributed]'); "
            f"it is not installed. Got {type(client).__name__}."
        ) from exc
    if not isinstance(client, Client):
        raise TypeError(f"The 'client' argument must be a distributed.Client or None. Got {type(client).__name__}.")
    if client.status != "running":
        raise ValueError(f"The 'client' argument must be connected to a scheduler. Got a client with status "
                         f"{client.status!r}.")
    if not client.scheduler_info().get("workers"):  # a task would wait for a worker forever
        raise ValueError("The 'client' argument's cluster has no workers: start some (or wait for them with "
                         "client.wait_for_workers) before searching on it.")


def _is_dask(obj: Any) -> bool:
    try:
        import dask
    except ImportError:  # pragma: no cover - distributed depends on dask
        return False
    return bool(dask.is_dask_collection(obj))


@dataclass(frozen=True)
class _Table:
    """The training rows: in memory (numpy / pandas) or Dask collections, with their feature names."""

    X: Any
    y: Any
    weight: Any
    names: list[str] | None
    categorical: Any


def _train_table(train_set: Any) -> _Table:
    """Read ``train_set``: a ``lightgbm.Dataset`` holding raw in-memory rows, or a tuple ``(X, y)``."""
    if isinstance(train_set, tuple) and len(train_set) == 2:
        X, y = train_set
        if X is None or y is None:
            raise ValueError("The 'train_set' argument (X, y) must have rows and labels. Got None.")
        if _is_dask(X) != _is_dask(y):
            raise ValueError("The 'train_set' argument's X and y must both be Dask collections or both in memory. "
                             f"Got X {type(X).__name__}, y {type(y).__name__}.")
        if getattr(X, "ndim", 2) != 2:
            raise ValueError(f"The 'train_set' argument's X must be 2-D. Got {X.ndim} dimension(s).")
        return _Table(X, y, None, None, "auto")
    if not isinstance(train_set, lgb.Dataset):
        raise TypeError(
            "The 'train_set' argument must be a lightgbm.Dataset or, with 'client', a tuple (X, y) of arrays, "
            f"DataFrames or Dask collections. Got {type(train_set).__name__}."
        )
    X = train_set.data
    if X is None or isinstance(X, (str, bytes)) or hasattr(X, "__fspath__") or train_set.label is None:
        raise ValueError(
            "The 'train_set' argument must keep its raw rows and labels to be shipped to a Dask cluster "
            f"(an unconstructed lightgbm.Dataset(X, y) or a tuple (X, y)). Got data={X!r:.60}."
        )
    if train_set.init_score is not None or train_set.group is not None:
        raise ValueError(
            "The 'train_set' argument must have no init_score or group with 'client' (the cluster search "
            "trains classifiers and regressors without them). Got a Dataset with one."
        )
    names = train_set.feature_name if isinstance(train_set.feature_name, list) else None
    return _Table(X, train_set.label, train_set.weight, names, train_set.categorical_feature)


def _row_counts(client: Any, obj: Any) -> tuple[Any, np.ndarray]:
    """Return a Dask collection chunked by rows only and its rows per partition."""
    if not hasattr(obj, "chunks"):  # DataFrame or Series (a Dask array has chunks)
        return obj, np.asarray(client.compute(obj.map_partitions(len)).result(), dtype=np.int64)
    if obj.ndim == 2 and len(obj.chunks[1]) > 1:
        obj = obj.rechunk({1: -1})
    if any(math.isnan(c) for c in obj.chunks[0]):
        obj = obj.compute_chunk_sizes()
    return obj, np.asarray(obj.chunks[0], dtype=np.int64)


def _take(part: Any, rows: np.ndarray) -> Any:
    return part.iloc[rows] if isinstance(part, (pd.DataFrame, pd.Series)) else np.asarray(part)[rows]


def _concat(parts: list[Any]) -> Any:
    if parts and isinstance(parts[0], (pd.DataFrame, pd.Series)):
        return pd.concat(parts, ignore_index=True)
    return np.concatenate(parts)


def _dask_sample(client: Any, cols: list[Any], m_rule: Any, seed: int) -> tuple[int, list[Any]]:
    """Return the rows and futures of a random row sample (:func:`_sample_size`) of the aligned Dask ``cols``."""
    from dask import delayed

    chunked, counts = zip(*(_row_counts(client, c) for c in cols), strict=True)
    if any(len(c) != len(counts[0]) or np.any(c != counts[0]) for c in counts):
        raise ValueError(
            "The 'train_set' argument's X, y (and weight) must be partitioned alike (the same rows per "
            f"partition). Got rows per partition {[c.tolist()[:8] for c in counts]}."
        )
    n = int(counts[0].sum())
    idx = _rows(n, _sample_size(n, m_rule), seed)
    ends = np.cumsum(counts[0])
    out = []
    for col in chunked:
        parts = list(col.to_delayed().ravel()) if hasattr(col, "chunks") else list(col.to_delayed())
        pieces = []
        for p, part in enumerate(parts):
            lo = int(ends[p] - counts[0][p])
            local = np.arange(counts[0][p]) if idx is None else idx[(idx >= lo) & (idx < ends[p])] - lo
            if local.size:
                pieces.append(delayed(_take)(part, local))
        out.append(client.compute(delayed(_concat)(pieces)))
    return n, out


def _rows(n: int, m: int, seed: int) -> np.ndarray | None:
    """Return ``m`` of ``n`` row indices drawn at random, sorted (None if ``m >= n``)."""
    if m >= n:
        return None
    return np.sort(np.random.default_rng([seed & 0xFFFFFFFF, 7]).choice(n, size=m, replace=False))


def _n_rows(obj: Any) -> int:
    return int(obj.shape[0]) if hasattr(obj, "shape") else len(obj)


def _sample_size(n: int, proxy_rows: Any) -> int:
    """Rows the search runs on: every row up to 50,000 (``"auto"``), else ``max(10000, n // 40)`` or ``proxy_rows``."""
    if proxy_rows is None or (proxy_rows == "auto" and n <= SAMPLE_ABOVE):
        return n
    return min(n, max(10_000, n // 40) if proxy_rows == "auto" else int(proxy_rows))


def _local_sample(t: _Table, m: int, seed: int) -> tuple[int, list[Any]]:
    cols = [t.X, t.y] + ([] if t.weight is None else [t.weight])
    n = _n_rows(t.X)
    if any(_n_rows(c) != n for c in cols):
        raise ValueError(f"The 'train_set' argument must have one label (and weight) per row. Got {n} rows and "
                         f"{[_n_rows(c) for c in cols[1:]]} labels/weights.")
    idx = _rows(n, m, seed)
    return n, [c if idx is None else _take(c, idx) for c in cols]


def _names(t: _Table) -> list[str]:
    """Return the training features' names, as LightGBM names them (``Column_i`` without names)."""
    if t.names:
        return [str(n) for n in t.names]
    cols = getattr(t.X, "columns", None)
    if cols is not None:
        return [str(c) for c in cols]
    return [f"Column_{i}" for i in range(int(t.X.shape[1]))]


def _bad_label_count(client: Any, y: Any) -> int:
    """Count the NaN or infinite labels of a Dask collection on the cluster (0 for labels that are not numbers)."""
    from dask import delayed

    def count(part: Any) -> int:
        try:
            return int(np.count_nonzero(~np.isfinite(np.asarray(part, dtype=np.float64))))
        except (TypeError, ValueError):
            return 0

    parts = list(y.to_delayed().ravel()) if hasattr(y, "chunks") else list(y.to_delayed())
    return int(client.compute(delayed(sum)([delayed(count)(p) for p in parts])).result())


def _ship(client: Any, t: _Table, m_rule: Any, seed: int) -> tuple[tuple[Any, Any, Any], int, list[Any]]:
    """Return the Dask training collections, the number of rows and futures of the sampled columns.

    In-memory rows are split into one partition per worker; Dask rows are used as they are and
    sampled partition by partition on the cluster.
    """
    if _is_dask(t.X):
        bad = _bad_label_count(client, t.y)
        if bad:
            raise ValueError(f"The 'train_set' argument must have finite labels. Got {bad} NaN or infinite label(s).")
        n, futures = _dask_sample(client, [t.X, t.y], m_rule, seed)
        return (t.X, t.y, None), n, [*futures, None]
    check_finite_labels(np.asarray(t.y).ravel(), name="train_set", owner="train_to_budget")
    n, cols = _local_sample(t, _sample_size(_n_rows(t.X), m_rule), seed)
    k = max(1, len(client.scheduler_info()["workers"]))
    return _to_dask(t, k), n, [client.scatter([c], hash=False)[0] for c in cols] + ([None] if t.weight is None else [])


def _to_dask(t: _Table, k: int) -> tuple[Any, Any, Any]:
    """Split in-memory training rows into ``k`` Dask DataFrame partitions (feature names kept)."""
    import dask.dataframe as dd

    X = t.X.reset_index(drop=True) if isinstance(t.X, pd.DataFrame) else pd.DataFrame(np.asarray(t.X),
                                                                                       columns=_names(t))
    if t.names and isinstance(t.X, pd.DataFrame):
        X = X.set_axis(t.names, axis=1)
    y = pd.Series(np.asarray(t.y).ravel())
    w = None if t.weight is None else pd.Series(np.asarray(t.weight, dtype=np.float64).ravel())
    parts = min(k, max(1, len(y)))
    return (dd.from_pandas(X, npartitions=parts), dd.from_pandas(y, npartitions=parts),
            None if w is None else dd.from_pandas(w, npartitions=parts))


def _valid(client: Any, valid_set: Any, kind: str, names: list[str]) -> tuple[Any, np.ndarray, np.ndarray | None]:
    """Gather the validation rows to the client (Dask ones computed) and check them as the local search does."""
    from . import _train_to_budget as ttb

    if isinstance(valid_set, tuple) and len(valid_set) == 2 and any(_is_dask(v) for v in valid_set):
        valid_set = tuple(client.compute(v).result() if _is_dask(v) else v for v in valid_set)
    Xv, yv, init = ttb._valid_iv(valid_set, kind)
    return ttb._align_valid(Xv, names), yv, init


def _search_task(params: dict[str, Any], X: Any, y: Any, w: Any, names: list[str] | None, categorical: Any,
                 valid: tuple[Any, np.ndarray, np.ndarray | None], costs: Any, kw: dict[str, Any]) -> BudgetTrainResult:
    """Run the local search on the sampled rows (on a worker): every candidate family, chosen on the validation rows."""
    from ._train_to_budget import train_to_budget

    Xv, yv, init = valid
    ds = lgb.Dataset(X, np.asarray(y).ravel(), weight=w, feature_name=names or "auto",
                     categorical_feature=categorical, free_raw_data=False)
    vs = (Xv, yv) if init is None else lgb.Dataset(Xv, yv, init_score=init, free_raw_data=False)
    with warnings.catch_warnings():  # the client reports the outcome; the worker's copies would be lost
        warnings.simplefilter("ignore", UserWarning)
        return train_to_budget(params, ds, valid_set=vs, costs=costs, **kw)


@dataclass(frozen=True)
class _Measure:
    """How the full-size models are measured: every validation row, the search's score and cost rule."""

    Xv: Any
    yv: np.ndarray
    fc: FeatureCosts
    score_fn: Any
    rows: int


def _fit_full(client: Any, data: tuple[Any, Any, Any], params: dict[str, Any], rounds: int,
              kind: str) -> lgb.Booster:
    """Train ``params`` on every row through ``lightgbm.dask`` and return the booster."""
    cls = lgb.DaskLGBMRegressor if kind == "regression" else lgb.DaskLGBMClassifier
    skip = param_aliases("num_iterations") | param_aliases("num_threads")  # lightgbm.dask uses each worker's threads
    p = {k: v for k, v in params.items() if k not in skip}
    X, y, w = data
    model = cls(client=client, n_estimators=rounds, **p)
    model.fit(X, y, sample_weight=w)
    return model.booster_


def _zero_columns(part: Any, drop: list[int]) -> Any:
    """Return a copy of a partition whose columns ``drop`` hold one value (0; no category for a categorical one)."""
    if isinstance(part, pd.DataFrame):
        out = part.copy()
        for j in drop:
            col = out.iloc[:, j]
            out.isetitem(j, pd.Series(pd.Categorical.from_codes(np.full(len(col), -1), dtype=col.dtype)
                                      if isinstance(col.dtype, pd.CategoricalDtype) else np.zeros(len(col), col.dtype),
                                      index=out.index))
        return out
    out = np.array(part, copy=True)
    out[:, drop] = 0
    return out


def _masked(data: tuple[Any, Any, Any], constraints: Any) -> tuple[Any, Any, Any]:
    """Return the training collections with the features outside a subset candidate's one set made constant.

    The search restricts a feature subset with ``interaction_constraints=[subset]``, which LightGBM
    4.7.0's data- and voting-parallel learners do not run (``std::bad_alloc``). A feature that holds
    one value is never split on, so training on the rows with every other feature constant grows
    the trees the constraint grows, and the model keeps every feature's position and name.
    """
    if not constraints:
        return data
    X, y, w = data
    keep = {int(j) for j in constraints[0]}
    drop = [j for j in range(int(X.shape[1])) if j not in keep]
    if not drop:
        return data
    if not hasattr(X, "chunks"):  # a Dask DataFrame
        return X.map_partitions(_zero_columns, drop, meta=X._meta), y, w
    return X.map_blocks(_zero_columns, drop, dtype=X.dtype), y, w


def _full_candidate(client: Any, data: tuple[Any, Any, Any], base: dict[str, Any], c: Candidate, rounds: int,
                    kind: str, meas: _Measure) -> tuple[Candidate, lgb.Booster]:
    """Train the sample candidate ``c``'s configuration on every row and measure it on every validation row."""
    t0 = time.perf_counter()
    params = {**base, **c.params}
    if "num_leaves" in c.params:  # the refit's tree size replaces the user's under any alias, as in the search
        for alias in param_aliases("num_leaves") - {"num_leaves"}:
            params.pop(alias, None)
    b = _fit_full(client, _masked(data, params.pop("interaction_constraints", None)), params, rounds, kind)
    ens = TreeEnsemble.from_booster(b)
    row_cost = row_costs_from_leaves(ens, b.predict(meas.Xv, pred_leaf=True), meas.fc)
    full = replace(
        c, score=float(meas.score_fn(b, meas.Xv, meas.yv)), cost=float(np.mean(row_cost)),
        coupled_cost=model_coupled_cost(ens, meas.fc)[1], constant=bool(np.sum(b.feature_importance("split")) == 0),
        rows=meas.rows, proxy=False, seconds=time.perf_counter() - t0, cost_sd=float(np.std(row_cost)),
    )
    return full, b


def _ranked(frontier: list[Candidate], b: float) -> list[Candidate]:
    """Return the sample candidates to train on every row for budget ``b``, best first (else the cheapest)."""
    ranked = sorted((c for c in frontier if fits_budget(c.cost, b)), key=lambda c: (-c.score, c.constant, c.cost))
    return ranked or sorted(frontier, key=lambda c: (c.cost, -c.score))[:1]


def _full_models(client: Any, data: tuple[Any, Any, Any], base: dict[str, Any], inner: BudgetTrainResult,
                 targets: list[float], budget: float, rounds: int, kind: str,
                 meas: _Measure) -> tuple[list[Candidate], list[lgb.Booster]]:
    """Train on every row the best sample candidate at each budget (the main one first).

    A full-size model that misses its budget hands it to the next sample candidate, at most
    :data:`MAX_TRIES` full-size trainings a budget.
    """
    done: dict[tuple[str, str], int] = {}
    fulls: list[Candidate] = []
    boosters: list[lgb.Booster] = []
    for b in sorted(targets, key=lambda t: t != budget):
        tries = 0
        for c in _ranked(inner.frontier, b):
            key = (c.family, repr(sorted(c.params.items())))
            if key not in done:
                if tries == MAX_TRIES:
                    break
                tries += 1
                full, booster = _full_candidate(client, data, base, c, rounds, kind, meas)
                done[key] = len(fulls)
                fulls.append(full)
                boosters.append(booster)
            if fits_budget(fulls[done[key]].cost, b):
                break
    return fulls, boosters


def _outcome(fulls: list[Candidate], inner: BudgetTrainResult, budget: float, n: int,
             m: int) -> tuple[int, Status, str]:
    """Pick the full-size model at ``budget``; return its index, status and message."""
    j = pick(fulls, budget)
    status = Status.SUCCESS
    if j is None:
        j, status = min(range(len(fulls)), key=lambda i: (fulls[i].cost, -fulls[i].score)), Status.INFEASIBLE
    elif fulls[j].constant:
        status = Status.CONSTANT
    c = fulls[j]
    metric, value = readable(inner.scoring, c.score)
    what = (f"{c.family} (trained on all {n:,} rows on the cluster; validation cost {c.cost:.6g}, "
            f"{metric} {value:.6g})")
    if status == Status.INFEASIBLE and any(fits_budget(s.cost, budget) for s in inner.frontier):
        msg = (f"infeasible: the models trained on every row miss budget {budget:g} although their "
               f"configurations fit it on the {m:,}-row sample; the cheapest, {what}, is returned")
    elif status == Status.INFEASIBLE:
        msg = f"infeasible: no candidate fits budget {budget:g}; the cheapest, {what}, is returned"
    elif status == Status.CONSTANT:
        msg = f"only a constant model (one prediction for every row) fits budget {budget:g}: {what}"
    else:
        where = f"searched on {m:,} sampled rows" if m < n else "searched on every row"
        msg = f"{what} fits budget {budget:g}; {where}"
    if inner.status == Status.LIMIT:
        msg, status = f"search on the sample cut by max_fits / time_limit: best so far: {msg}", Status.LIMIT
    return j, status, msg


def _base(params: Mapping[str, Any], random_state: int) -> dict[str, Any]:
    """Return the user's parameters as the local search completes them (seed, quiet)."""
    base = dict(params)
    base.setdefault("seed", random_state)
    if not param_aliases("verbosity") & set(base):
        base["verbosity"] = -1
    return base


def _refuse(kw: Mapping[str, Any]) -> None:
    """Refuse the options the cluster search does not run (before any work)."""
    if kw["search"] != "full":
        raise ValueError(
            "The 'search' argument must be 'full' with 'client': search='fast' trains with cegb_budget, which "
            f"LightGBM's distributed learners refuse. Got {kw['search']!r}."
        )
    if kw["choose"] == "cv":
        raise ValueError(
            "The 'choose' argument 'cv' is not available with 'client' (the cluster search chooses on the "
            "validation rows). Use choose='valid' or 'auto'."
        )


def train_on_cluster(args: dict[str, Any]) -> BudgetTrainResult:
    """``train_to_budget`` with ``client``: the search on a sample in one task, the choice trained on every row.

    ``args``: every argument of :func:`~budget_extras.cegb._train_to_budget.train_to_budget`, by name.

    Raises
    ------
    TypeError, ValueError
        Naming the argument refused (``client``, ``train_set``, ``valid_set``, ``search``,
        ``choose`` or any the local search refuses).
    """
    import functools

    from . import _train_to_budget as ttb

    t0 = time.perf_counter()
    kw = dict(args)
    client, params, train_set, valid_set, costs, scoring, budget = (
        kw.pop(k) for k in ("client", "params", "train_set", "valid_set", "costs", "scoring", "budget"))
    check_client(client)
    base = _base(ttb._params_iv(params), kw["random_state"])
    ttb._check_arguments({**kw, "budget": budget})
    _refuse(kw)
    kind = objective_kind(base)
    t = _train_table(train_set)
    names = _names(t)
    Xv, yv, init = _valid(client, valid_set, kind, names)
    fc = as_feature_costs(costs, n_features=len(names), feature_names=names, owner="train_to_budget")
    seed = int(base["seed"])
    data, n, sample = _ship(client, t, kw["proxy_rows"], seed)
    m = _sample_size(n, kw["proxy_rows"])
    vi = _rows(len(yv), m, seed) if m < n else None
    sub = (Xv, yv, init) if vi is None else (_take(Xv, vi), yv[vi], None if init is None else init[vi])
    inner_kw = {**kw, "budget": budget, "scoring": scoring, "progress": False, "proxy_rows": None, "choose": "valid"}
    shipped = client.scatter([sub], hash=False)[0]  # unhashed: a key shared with an earlier call may be released
    inner: BudgetTrainResult = client.submit(
        _search_task, dict(params), *sample, t.names, t.categorical, shipped, costs, inner_kw, pure=False,
    ).result()
    t1 = time.perf_counter()
    score_fn: Any = resolve_scoring(scoring, base)[1]
    meas = _Measure(Xv, yv, fc, score_fn if init is None else functools.partial(score_fn, init_score=init), n)
    fulls, boosters = _full_models(client, data, base, inner, list(inner.budgets), float(budget),
                                   int(kw["num_boost_round"]), kind, meas)
    j, status, msg = _outcome(fulls, inner, float(budget), n, m)
    if status != Status.SUCCESS:
        warnings.warn(f"train_to_budget: {msg}.", UserWarning, stacklevel=3)
    c = fulls[j]
    seconds = {**{f"sample:{k}": v for k, v in inner.seconds.items() if k != "total"},
               "sample_search": t1 - t0, "cluster_fit": time.perf_counter() - t1, "total": time.perf_counter() - t0}
    frontier = [replace(s, proxy=True) for s in inner.frontier] + fulls
    kept = (list(inner.boosters) or [None] * len(inner.frontier)) + boosters if kw["keep_boosters"] else []
    return BudgetTrainResult(
        status=status, message=msg, booster=boosters[j], budget=float(budget), budgets=inner.budgets, chosen=c,
        score=c.score, cost=c.cost, params={**base, **c.params}, frontier=frontier, scoring=inner.scoring,
        fork=inner.fork, boosters=kept, nfev=inner.nfev + len(fulls), seconds=seconds, rule=inner.rule,
    )
