"""Train a LightGBM model to a prediction-cost budget on validation rows."""

from __future__ import annotations

import itertools
import math
import numbers
import warnings
from collections.abc import Mapping
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd

from ..core._costs import FeatureCosts
from ..core._ensemble import TreeEnsemble
from ..core._report import cost_report
from ..core._validation import check_unique_items
from ._result import BudgetTrainResult, Candidate
from ._scoring import resolve_scoring

__all__ = ["is_fork", "train_to_budget"]

#: Parameters the search sets itself; the user's ``params`` must not set them.
_RESERVED = (
    "cegb_tradeoff",
    "cegb_penalty_feature_lazy",
    "cegb_penalty_feature_coupled",
    "cegb_feature_group",
    "cegb_cost_file",
    "interaction_constraints",
)


def is_fork() -> bool:
    """Return True if the imported ``lightgbm`` is the lightgbm-cegb fork (``+cegb`` in its version)."""
    return "+cegb" in str(getattr(lgb, "__version__", ""))


def _iv(
    params: Any, train_set: Any, budget: Any, valid_set: Any, num_boost_round: Any, k_grid: Any
) -> tuple[dict[str, Any], float, Any, np.ndarray, int, list[int] | None]:
    if not isinstance(params, Mapping):
        raise TypeError(f"The 'params' argument must be a mapping of LightGBM parameters. Got {type(params).__name__}.")
    bad = [k for k in params if k in _RESERVED]
    if bad:
        raise ValueError(
            f"The 'params' argument must not set {bad!r}: train_to_budget searches them itself "
            "(costs go in the 'costs' argument)."
        )
    if not isinstance(train_set, lgb.Dataset):
        raise TypeError(f"The 'train_set' argument must be a lightgbm.Dataset. Got {type(train_set).__name__}.")
    if (
        isinstance(budget, bool)
        or not isinstance(budget, numbers.Real)
        or not math.isfinite(float(budget))
        or budget < 0
    ):
        raise ValueError(f"The 'budget' argument must be a finite number >= 0. Got {budget!r}.")
    if isinstance(valid_set, lgb.Dataset):
        X, y = valid_set.data, valid_set.get_label()
        if X is None or isinstance(X, (str, bytes)) or hasattr(X, "__fspath__"):
            raise ValueError(
                "The 'valid_set' argument must keep its raw rows (an array or DataFrame, not a file path, "
                f"and not freed): pass lightgbm.Dataset(X, y) unconstructed or a tuple (X, y). Got data={X!r:.60}."
            )
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
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, numbers.Integral) or num_boost_round < 1:
        raise ValueError(f"The 'num_boost_round' argument must be an integer >= 1. Got {num_boost_round!r}.")
    ks: list[int] | None = None
    if k_grid is not None:
        ks = sorted({int(k) for k in k_grid})
        if not ks or ks[0] < 1:
            raise ValueError(f"The 'k_grid' argument must hold integers >= 1. Got {k_grid!r}.")
    return dict(params), float(budget), X, yv, int(num_boost_round), ks


def _costs_for(costs: Any, names: list[str]) -> FeatureCosts:
    if isinstance(costs, FeatureCosts):
        if costs.feature_names is not None:
            return costs.aligned(names)
        if costs.n_features != len(names):
            raise ValueError(
                f"The 'costs' argument has {costs.n_features} features but the training data has {len(names)}."
            )
        return costs
    if isinstance(costs, (Mapping, pd.Series)):
        unknown = [k for k in costs.keys() if str(k) not in names]
        if unknown:
            raise ValueError(
                f"The 'costs' argument names features {unknown[:5]!r} not in the training data "
                f"(features: {names[:8]!r}...)."
            )
        items = check_unique_items(costs, name="costs", key=str, owner="train_to_budget")
        return FeatureCosts({k: float(v) for k, v in items.items()}, feature_names=names)
    if isinstance(costs, (list, tuple, np.ndarray)):
        arr = np.asarray(costs, dtype=np.float64).ravel()
        if arr.shape[0] != len(names):
            raise ValueError(f"The 'costs' argument must have one cost per feature ({len(names)}). Got {arr.shape[0]}.")
        return FeatureCosts(arr, feature_names=names)
    raise TypeError(
        "The 'costs' argument must be a FeatureCosts, a list / array (one cost per feature), a dict or "
        f"pandas.Series keyed by feature name. Got {type(costs).__name__}."
    )


def _feature_cost(fc: FeatureCosts) -> np.ndarray:
    """Acquisition cost of each feature alone (its group's cost for grouped features)."""
    c = np.array(fc.lazy, dtype=np.float64)
    g = np.asarray(fc.group)
    c[g >= 0] = np.asarray(fc.group_cost)[g[g >= 0]]
    return c


def _default_k_grid(n_used: int) -> list[int]:
    if n_used <= 1:
        return []
    ks = np.unique(np.round(np.geomspace(1, n_used, 6)).astype(int))
    return [int(k) for k in ks if k < n_used][:5]


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
) -> lgb.Booster:
    """Train the most accurate model whose mean per-row validation cost is <= ``budget``.

    Trains a moderate set of candidates (about 30 at the defaults) and returns the one with the
    best validation score among those whose mean per-row validation cost, by
    :func:`budget_extras.cost_report` (each feature or group paid once per row on its paths,
    plus split / tree evaluation costs if ``costs`` has them), is <= ``budget``. The candidates
    include what a user would otherwise do, so on validation the result is at least as good as
    each of them at the same budget:

    * ``all``: plain LightGBM (it also ranks the features by total gain);
    * ``topk_gain`` / ``topk_gain_cost``: the top-k features by gain and by gain / cost, for k
      in ``k_grid`` (restricted with ``interaction_constraints=[subset]``);
    * ``lazy``: CEGB lazy costs, ``n_tradeoffs`` tradeoffs over four decades around a
      data-derived scale, then ``n_bisect`` geometric bisections of the budget crossing;
    * ``lazy_topk``: CEGB lazy inside the cheapest top-k subset that misses the budget;
    * ``lazy_coupled``: lazy plus coupled costs (the lazy costs, or ``costs.coupled`` if set).

    Parameters
    ----------
    params : mapping
        LightGBM parameters (objective, learning rate, leaves, ...). Must not set the CEGB cost
        parameters nor ``interaction_constraints``.
    train_set : lightgbm.Dataset
    budget : float
        Largest allowed mean per-row validation cost (>= 0).
    valid_set : lightgbm.Dataset with its raw rows, or tuple (X, y)
        Rows on which cost and score are measured (and the candidate chosen).
    costs : FeatureCosts, list / array, dict or pandas.Series
        Per-feature acquisition costs (dict / Series keyed by feature name; features not listed
        cost 0). A FeatureCosts may also carry groups (the fork trains with them), coupled and
        evaluation costs.
    num_boost_round : int, default 200
        Rounds of every candidate (the returned model is the candidate itself, so its
        measured validation cost is exact).
    scoring : None, str or callable
        None: AUC for ``binary``, accuracy for multiclass objectives, minus the mean squared
        error otherwise. A string is an sklearn scorer name, a callable an sklearn-style scorer
        ``scoring(estimator, X, y)`` (see ``budget_extras.cegb._scoring.resolve_scoring``).
        Higher is better.
    random_state : int, default 0
        LightGBM ``seed`` unless ``params`` sets one.
    progress : bool, default True
        Show a tqdm progress bar.
    k_grid : sequence of int, optional
        Subset sizes (default: up to 5 geometric sizes below the number of used features).
    n_tradeoffs, n_bisect : int
        Grid size and bisection steps of the ``lazy`` family.

    Returns
    -------
    lightgbm.Booster
        With the report as the attribute ``budget_result_`` (a :class:`BudgetTrainResult`).

    Warns
    -----
    UserWarning
        If the returned model is constant (every tree one leaf), or if no candidate fits the
        budget (status 2: the cheapest candidate is returned and the message gives its cost).

    Notes
    -----
    With upstream LightGBM (no ``+cegb`` in ``lightgbm.__version__``) only upstream's knobs
    are used: groups are not trained on (each member carries its group's cost), but the cost
    accounting still charges a group once per row.
    """
    base, budget_f, Xv, yv, rounds, ks = _iv(params, train_set, budget, valid_set, num_boost_round, k_grid)
    for name, val in (("n_tradeoffs", n_tradeoffs), ("n_bisect", n_bisect)):
        if isinstance(val, bool) or not isinstance(val, numbers.Integral) or val < 0:
            raise ValueError(f"The '{name}' argument must be an integer >= 0. Got {val!r}.")
    if not isinstance(costs, (FeatureCosts, Mapping, pd.Series, list, tuple, np.ndarray)):
        _costs_for(costs, [])  # raises the TypeError
    score_name, score_fn = resolve_scoring(scoring, base)
    fork = is_fork()
    base.setdefault("seed", random_state)
    if not any(k in base for k in ("verbosity", "verbose")):
        base["verbosity"] = -1

    from tqdm.auto import tqdm

    bar = tqdm(total=1 + 10 + n_tradeoffs + n_bisect + 10, disable=not progress, desc="train_to_budget")
    frontier: list[Candidate] = []
    boosters: list[lgb.Booster] = []
    state: dict[str, Any] = {}
    tol = 1e-9 * max(1.0, budget_f)

    def fit(family: str, extra: dict[str, Any], k: int | None, t: float | None) -> Candidate:
        p = {**base, **extra}
        b = lgb.train(p, train_set, num_boost_round=rounds)
        ens = TreeEnsemble.from_booster(b)
        rep = cost_report(ens, Xv, state["fc"], feature_counts=False) if "fc" in state else None
        if rep is None:  # the first model: costs are resolved from its feature names
            state["fc"] = _costs_for(costs, list(b.feature_name()))
            rep = cost_report(ens, Xv, state["fc"], feature_counts=False)
        c = Candidate(
            family=family,
            params=extra,
            k=k,
            tradeoff=t,
            score=score_fn(b, Xv, yv),
            cost=float(np.mean(rep.total_cost)),
            coupled_cost=float(rep.coupled_cost),
            constant=bool(np.sum(b.feature_importance("split")) == 0),
        )
        frontier.append(c)
        boosters.append(b)
        bar.update(1)
        bar.set_postfix(best=_best_score(), refresh=False)
        return c

    def _best_score() -> str:
        fits = [c.score for c in frontier if c.cost <= budget_f + tol]
        return f"{max(fits):.4g}" if fits else "-"

    try:
        c0 = fit("all", {}, None, None)
        del c0
        b0 = boosters[0]
        fc: FeatureCosts = state["fc"]
        gain = np.asarray(b0.feature_importance("gain"), dtype=np.float64)
        fcost = _feature_cost(fc)
        used = np.flatnonzero(gain > 0)
        ratio = np.where(fcost > 0, gain / np.where(fcost > 0, fcost, 1.0), np.inf)
        rank_gain = used[np.argsort(-gain[used], kind="stable")]
        rank_gc = used[np.lexsort((-gain[used], -ratio[used]))]
        grid = ks if ks is not None else _default_k_grid(used.size)
        seen: set[frozenset[int]] = set()
        subsets: list[tuple[int, list[int], Candidate]] = []
        for family, rank in (("topk_gain", rank_gain), ("topk_gain_cost", rank_gc)):
            for k in grid:
                if k >= used.size:
                    continue
                sub = sorted(int(i) for i in rank[:k])
                key = frozenset(sub)
                if key in seen:
                    continue
                seen.add(key)
                subsets.append((k, sub, fit(family, {"interaction_constraints": [sub]}, k, None)))

        # CEGB knobs
        lazy = [float(v) for v in fcost]
        cegb: dict[str, Any] = {"cegb_penalty_feature_lazy": lazy}
        if fork and np.any(np.asarray(fc.group) >= 0):
            cegb["cegb_feature_group"] = [int(g) for g in fc.group]
        pos = fcost[fcost > 0]
        n_train = max(1, int(train_set.num_data()))
        n_trees = max(1, b0.num_trees())
        scale = float(gain.sum()) / (n_trees * n_train * (float(pos.mean()) if pos.size else 1.0))
        if not math.isfinite(scale) or scale <= 0:
            scale = 1e-3

        def sweep(family: str, extra: dict[str, Any], k: int | None, exps: np.ndarray, n_bis: int) -> None:
            pts: list[tuple[float, Candidate]] = []
            for e in exps:
                t = float(scale * 10.0**e)
                pts.append((t, fit(family, {**extra, "cegb_tradeoff": t}, k, t)))
            for _ in range(n_bis):
                pts.sort(key=lambda z: z[0])
                lo = hi = None
                for (t1, c1), (t2, c2) in itertools.pairwise(pts):
                    if c1.cost > budget_f + tol and c2.cost <= budget_f + tol:
                        lo, hi = t1, t2
                        break
                if lo is None or hi is None or hi / lo < 1.05:
                    break
                t = math.sqrt(lo * hi)
                pts.append((t, fit(family, {**extra, "cegb_tradeoff": t}, k, t)))

        sweep("lazy", cegb, None, np.linspace(-2.0, 2.0, n_tradeoffs) if n_tradeoffs else np.array([]), n_bisect)
        over = [s for s in subsets if s[2].cost > budget_f + tol]
        if over:
            k, sub, _ = min(over, key=lambda s: s[2].cost)
            sweep("lazy_topk", {**cegb, "interaction_constraints": [sub]}, k, np.array([-1.5, 0.0, 1.5]), 2)
        coupled = [float(v) for v in fc.coupled] if np.any(np.asarray(fc.coupled) > 0) else lazy
        sweep("lazy_coupled", {**cegb, "cegb_penalty_feature_coupled": coupled}, None, np.array([-1.5, 0.0, 1.5]), 2)
    finally:
        bar.close()

    fits = [i for i, c in enumerate(frontier) if c.cost <= budget_f + tol]
    if fits:
        best = max(fits, key=lambda i: (frontier[i].score, not frontier[i].constant, -frontier[i].cost))
        chosen = frontier[best]
        if chosen.constant:
            status, msg = (
                1,
                (
                    f"only a constant model (every tree a single leaf: one prediction for every row) fits budget "
                    f"{budget_f:g}; its validation {score_name} is {chosen.score:.6g}"
                ),
            )
            warnings.warn(f"train_to_budget: {msg}.", UserWarning, stacklevel=2)
        else:
            status, msg = (
                0,
                (
                    f"{chosen.family} fits budget {budget_f:g}: validation cost {chosen.cost:.6g}, "
                    f"{score_name} {chosen.score:.6g}"
                ),
            )
    else:
        best = min(range(len(frontier)), key=lambda i: (frontier[i].cost, -frontier[i].score))
        chosen = frontier[best]
        status, msg = (
            2,
            (
                f"infeasible: no candidate fits budget {budget_f:g}; the cheapest costs {chosen.cost:.6g} per "
                f"validation row ({chosen.family}) and is returned"
            ),
        )
        warnings.warn(f"train_to_budget: {msg}.", UserWarning, stacklevel=2)
        if chosen.constant:
            warnings.warn(
                "train_to_budget: the returned model is constant (every tree a single leaf).",
                UserWarning,
                stacklevel=2,
            )
    booster = boosters[best]
    result = BudgetTrainResult(
        status=status,
        success=status < 2,
        message=msg,
        budget=budget_f,
        chosen=chosen,
        score=chosen.score,
        cost=chosen.cost,
        params={**base, **chosen.params},
        frontier=frontier,
        scoring=score_name,
        fork=fork,
    )
    booster.budget_result_ = result  # type: ignore[attr-defined]
    return booster
