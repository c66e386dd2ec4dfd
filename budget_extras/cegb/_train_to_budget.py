"""Train a LightGBM model to a prediction-cost budget on validation rows."""

from __future__ import annotations

import itertools
import math
import numbers
import os
import warnings
from collections.abc import Mapping
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd

from ..core._costs import FeatureCosts, as_feature_costs
from ..core._ensemble import TreeEnsemble
from ..core._report import cost_report
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
    return as_feature_costs(costs, n_features=len(names), feature_names=names, owner="train_to_budget")


def _default_k_grid(n_used: int) -> list[int]:
    if n_used <= 1:
        return []
    ks = np.unique(np.round(np.geomspace(1, n_used, 6)).astype(int))
    return [int(k) for k in ks if k < n_used][:5]


def _within(cost: float, budget: float) -> bool:
    """Return True if ``cost`` fits ``budget`` (up to a relative 1e-9 for float noise)."""
    return cost <= budget + 1e-9 * max(1.0, budget)


def _leaves_aliases() -> set[str]:
    from lightgbm.basic import _ConfigAliases

    return set(_ConfigAliases.get("num_leaves")) | {"num_leaves"}


def _leaves_grid(grid: Any, params: Mapping[str, Any]) -> list[int]:
    bad = f"The 'num_leaves_grid' argument must be 'auto', a sequence of int or None. Got {grid!r}."
    if grid is None:
        return []
    if isinstance(grid, str):
        if grid != "auto":
            raise ValueError(bad)
        user = next((params[k] for k in sorted(_leaves_aliases()) if k in params), 31)
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


def _has_tradeoff_scale() -> bool:
    """Return True if the fork knows ``cegb_tradeoff_scale`` (older builds do not)."""
    try:
        from lightgbm.basic import _ConfigAliases

        return "cegb_tradeoff_scale" in _ConfigAliases._get_all_param_aliases()
    except Exception:
        return False


class _Constant:
    """A constant model (the training label mean, or class frequencies) seen as a booster."""

    def __init__(self, value: np.ndarray) -> None:
        self.value = value

    def predict(self, X: Any, **kwargs: Any) -> np.ndarray:
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        return np.tile(self.value, (n, 1)) if self.value.size > 1 else np.full(n, float(self.value[0]))


def _constant_score(base: Mapping[str, Any], train_set: lgb.Dataset, yv: np.ndarray, Xv: Any, score_fn: Any) -> float:
    from ._scoring import objective_kind

    y = train_set.get_label()
    y = np.asarray(yv if y is None else y, dtype=np.float64).ravel()
    if objective_kind(base) == "multiclass":
        k = int(base.get("num_class", base.get("num_classes", int(y.max()) + 1)))
        value = np.bincount(y.astype(np.int64), minlength=k)[:k] / max(1, y.size)
    else:
        value = np.array([float(y.mean())])
    try:
        return float(score_fn(_Constant(value), Xv, yv))
    except Exception:  # a scorer that needs more than predict: start from -inf
        return -math.inf


def _greedy_forward(
    base: dict[str, Any],
    train_set: lgb.Dataset,
    Xv: Any,
    yv: np.ndarray,
    rank_gc: np.ndarray,
    fc: FeatureCosts,
    score_fn: Any,
    rounds: int,
    bar: Any,
    pool_size: int = 16,
    steps: int = 8,
) -> list[list[int]]:
    """Select features forward on validation; return the selected prefixes.

    Each step adds the feature with the best validation gain per unit of added cost (cheap proxy
    models: 40 rounds, learning rate 0.2, 15 leaves), over the ``pool_size`` best features by
    gain / cost; the search stops when no feature improves the validation score.
    """
    pool = [int(i) for i in rank_gc[:pool_size]]
    cheap = {**base, "learning_rate": 0.2, "num_leaves": 15}
    proxy_rounds = min(40, rounds)
    d = fc.n_features

    def set_cost(sel: list[int]) -> float:
        m = np.zeros((1, d), dtype=bool)
        m[0, sel] = True
        return float(fc.row_cost(m)[0])

    chosen: list[int] = []
    current = _constant_score(base, train_set, yv, Xv, score_fn)
    prefixes: list[list[int]] = []
    for _ in range(min(steps, len(pool))):
        best: tuple[int, float] | None = None
        best_key: tuple[Any, ...] | None = None
        base_cost = set_cost(chosen)
        for f in pool:
            if f in chosen:
                continue
            sub = sorted([*chosen, f])
            b = lgb.train({**cheap, "interaction_constraints": [sub]}, train_set, num_boost_round=proxy_rounds)
            s = float(score_fn(b, Xv, yv))
            g, added = s - current, set_cost([*chosen, f]) - base_cost
            ratio = g / added if added > 1e-12 else (math.inf if g > 0 else g)
            key = (g > 0, ratio, s, -f)
            if best_key is None or key > best_key:
                best, best_key = (f, s), key
        bar.set_postfix(greedy_step=len(chosen) + 1, refresh=False)
        if best is None or best_key is None or not best_key[0]:
            break
        chosen.append(best[0])
        current = best[1]
        prefixes.append(list(chosen))
    return prefixes


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
) -> lgb.Booster:
    """Train the most accurate model whose mean per-row validation cost is <= ``budget``.

    Trains a moderate set of candidates (about 40 full fits and up to 100 cheap proxy fits at
    the defaults) and returns the one with the best validation score among those whose mean
    per-row validation cost, by
    :func:`budget_extras.cost_report` (each feature or group paid once per row on its paths,
    plus split / tree evaluation costs if ``costs`` has them), is <= ``budget``. The candidates
    include what a user would otherwise do, so on validation the result is at least as good as
    each of them at the same budget:

    * ``all``: plain LightGBM (it also ranks the features by total gain);
    * ``topk_gain`` / ``topk_gain_cost``: the top-k features by gain and by gain / cost, for k
      in ``k_grid`` (restricted with ``interaction_constraints=[subset]``);
    * ``lazy``: CEGB lazy costs, ``n_tradeoffs`` tradeoffs over four decades around a
      data-derived scale, then ``n_bisect`` geometric bisections of the budget crossing;
    * ``lazy_first`` (fork with ``cegb_tradeoff_scale``): CEGB lazy with
      ``cegb_tradeoff_scale="first_gain"`` (the tradeoff a share of the first tree's best root
      gain per unit of cost; below 1 the first tree always splits), ``n_tradeoffs - 1``
      tradeoffs from 10^-2.5 to 10^-0.1, then the same bisections;
    * ``greedy``: forward selection on validation (each step adds the feature with the best
      validation gain per unit of added cost, searched with cheap proxy models over the 16 best
      features by gain / cost, up to 8 steps); every prefix refit at full size;
    * ``lazy_topk`` / ``lazy_greedy``: CEGB lazy inside the cheapest top-k or greedy subset
      that misses the budget (each budget of ``budgets`` too);
    * ``lazy_coupled``: lazy plus coupled costs (the lazy costs, or ``costs.coupled`` if set);
    * smaller trees: at each budget, the best candidate so far refit with each ``num_leaves``
      of ``num_leaves_grid`` (same family, ``num_leaves`` added to its ``params``). Smaller
      trees regularize on small data and read fewer features per row.

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
    greedy : bool, default True
        Include the ``greedy`` family (about 100 cheap proxy fits and up to 8 full ones).
    budgets : sequence of float, optional
        Further budgets whose crossings the search also refines (bisection, lazy inside the
        cheapest subset over each), so that ``budget_result_.best_at(b)`` is as good for each of
        them as a separate call would be; the returned model is still the one for ``budget``.
    keep_boosters : bool, default False
        Keep every candidate's booster in ``budget_result_.boosters`` (aligned with
        ``frontier``; ``budget_result_.booster_at(b)`` reads one off).
    num_leaves_grid : "auto", sequence of int or None, default "auto"
        Tree sizes for the smaller-trees refits. ``"auto"``: half and a quarter of the
        ``num_leaves`` in ``params`` (default 31: 15 and 7), sizes below 2 dropped; None or
        an empty sequence: no refits.

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
    if not isinstance(costs, (FeatureCosts, Mapping, pd.Series, list, tuple, np.ndarray, str, os.PathLike)):
        _costs_for(costs, [])  # raises the TypeError
    extra_budgets: list[float] = []
    if budgets is not None:
        try:
            extra_budgets = [float(v) for v in budgets]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"The 'budgets' argument must be a sequence of numbers >= 0. Got {budgets!r}.") from exc
        if any(not math.isfinite(v) or v < 0 for v in extra_budgets):
            raise ValueError(f"The 'budgets' argument must hold finite numbers >= 0. Got {budgets!r}.")
    targets = sorted({budget_f, *extra_budgets})
    leaves_grid = _leaves_grid(num_leaves_grid, params)
    score_name, score_fn = resolve_scoring(scoring, base)
    fork = is_fork()
    base.setdefault("seed", random_state)
    if not any(k in base for k in ("verbosity", "verbose")):
        base["verbosity"] = -1

    from tqdm.auto import tqdm

    bar = tqdm(
        total=1 + 10 + (8 if greedy else 0) + n_tradeoffs + n_bisect + 10, disable=not progress, desc="train_to_budget"
    )
    frontier: list[Candidate] = []
    boosters: list[lgb.Booster] = []
    state: dict[str, Any] = {}

    def fit(family: str, extra: dict[str, Any], k: int | None, t: float | None) -> Candidate:
        p = {**base, **extra}
        if "num_leaves" in extra:  # the refit's size replaces the user's, under any alias
            for alias in _leaves_aliases() - {"num_leaves"}:
                p.pop(alias, None)
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
        if bar.n >= bar.total:
            bar.total = bar.n + 1
        bar.update(1)
        bar.set_postfix(best=_best_score(), refresh=False)
        return c

    def _best_score() -> str:
        fits = [c.score for c in frontier if _within(c.cost, budget_f)]
        return f"{max(fits):.4g}" if fits else "-"

    try:
        fit("all", {}, None, None)
        b0 = boosters[0]
        fc: FeatureCosts = state["fc"]
        gain = np.asarray(b0.feature_importance("gain"), dtype=np.float64)
        fcost = fc.unit_cost[fc.unit]  # each feature bought alone (its group's cost if grouped)
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

        if greedy and used.size > 1:
            for sel in _greedy_forward(base, train_set, Xv, yv, rank_gc, fc, score_fn, rounds, bar):
                key = frozenset(sel)
                if key in seen or len(sel) >= used.size:
                    continue
                seen.add(key)
                sub = sorted(sel)
                subsets.append((len(sel), sub, fit("greedy", {"interaction_constraints": [sub]}, len(sel), None)))

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

        def sweep(
            family: str, extra: dict[str, Any], k: int | None, exps: np.ndarray, n_bis: int, unit: float | None = None
        ) -> None:
            pts: list[tuple[float, Candidate]] = []
            for e in exps:
                t = float((scale if unit is None else unit) * 10.0**e)
                pts.append((t, fit(family, {**extra, "cegb_tradeoff": t}, k, t)))
            for b in targets:  # refine the budget crossing of every budget
                for _ in range(n_bis):
                    pts.sort(key=lambda z: z[0])
                    lo = hi = None
                    for (t1, c1), (t2, c2) in itertools.pairwise(pts):
                        if not _within(c1.cost, b) and _within(c2.cost, b):
                            lo, hi = t1, t2
                            break
                    if lo is None or hi is None or hi / lo < 1.05:
                        break
                    t = math.sqrt(lo * hi)
                    pts.append((t, fit(family, {**extra, "cegb_tradeoff": t}, k, t)))

        sweep("lazy", cegb, None, np.linspace(-2.0, 2.0, n_tradeoffs) if n_tradeoffs else np.array([]), n_bisect)
        if fork and _has_tradeoff_scale():
            # scale-free lazy CEGB: the tradeoff is a share of the first tree's best root gain per unit cost
            exps = np.linspace(-2.5, -0.1, max(2, n_tradeoffs - 1)) if n_tradeoffs else np.array([])
            sweep("lazy_first", {**cegb, "cegb_tradeoff_scale": "first_gain"}, None, exps, n_bisect, unit=1.0)
        # lazy inside the cheapest subset (top-k or greedy) that misses each budget
        done: set[frozenset[int]] = set()
        for b in targets:
            over = [s for s in subsets if not _within(s[2].cost, b)]
            if not over:
                continue
            k, sub, c = min(over, key=lambda s: s[2].cost)
            if frozenset(sub) in done:
                continue
            done.add(frozenset(sub))
            fam = "lazy_greedy" if c.family == "greedy" else "lazy_topk"
            sweep(fam, {**cegb, "interaction_constraints": [sub]}, k, np.array([-1.5, 0.0, 1.5]), 2)
        coupled = [float(v) for v in fc.coupled] if np.any(np.asarray(fc.coupled) > 0) else lazy
        sweep("lazy_coupled", {**cegb, "cegb_penalty_feature_coupled": coupled}, None, np.array([-1.5, 0.0, 1.5]), 2)
        # smaller trees: refit the best candidate at each budget with fewer leaves
        refit: set[int] = set()
        for b in targets if leaves_grid else []:
            within = [
                i
                for i, c in enumerate(frontier)
                if _within(c.cost, b) and not c.constant and i not in refit and "num_leaves" not in c.params
            ]
            if not within:
                continue
            i = max(within, key=lambda j: (frontier[j].score, -frontier[j].cost))
            refit.add(i)
            c = frontier[i]
            for nl in leaves_grid:
                fit(c.family, {**c.params, "num_leaves": nl}, c.k, c.tradeoff)
    finally:
        bar.close()

    fits = [i for i, c in enumerate(frontier) if _within(c.cost, budget_f)]
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
        boosters=boosters if keep_boosters else [],
    )
    booster.budget_result_ = result  # type: ignore[attr-defined]
    return booster
