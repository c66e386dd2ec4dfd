"""Per-row pruning of a boosted model post hoc: force single splits (not whole features), refit the leaves.

Usage::

    python -m benchmarks.budgetprune.gbdt_prune_rows --data-dir ../shared/data [--datasets magic heart ...]

Same tables, model (200 trees), tiered costs and budget (50% of the unpruned model's mean
validation cost) as ``benchmarks/budgetprune/gbdt_prune_recipe.py``. ``FeatureDropRefit`` drops
whole features: every split on a dropped feature is forced to one child, for every row. The
per-row search here forces single *nodes* instead, so a feature stays bought for the rows whose
paths still test it and is saved for the others (a row pays a feature once if any split on its
paths tests it, ``usage_cost``).

Two searches, on the training rows FeatureDropRefit refits on (a sample of at most 5,000), each
in rounds until the validation cost (the package's accounting) fits the budget; the chosen
forcing is refit on all training rows (``refit_values``, in tree order, as FeatureDropRefit does).

* **node forcing** (``node_search``): per row and feature, count the unforced splits on the
  row's paths that test the feature (``c[i, f]``); an unforced split ``v`` on ``f`` saves
  ``cost(f) * sum over the rows reaching v of 1 / c[i, f]`` per row (its share of each row's
  payment of ``f``); its loss rise when forced to child ``K`` (the side with the smaller rise) is
  the second-order change ``g * d + h * d^2 / 2`` of the training loss of the rows of the other
  child given ``K``'s mean leaf value. Each round forces the ``--batch`` share of the unforced
  splits with the smallest rise per unit of saving, then refits.
* **per-row moves** (``per_row_search``): a move keeps feature ``f`` for the ``level`` share of
  the rows that need it most (largest ``h * d^2``, ``d`` the change of the row's raw score when
  every split on ``f`` is forced) and forces every split on ``f`` that another row reaches (to its
  child with more training rows); level 0 drops ``f`` for every row (FeatureDropRefit's move).
  Each round takes the move with the smallest loss rise per unit of mean training cost saved
  (routed, not refit), then refits.

Printed on the test split: the unpruned model, the hand recipe, FeatureDropRefit, both searches,
**retraining with the costs** (``train_to_budget`` at the same budget and rounds, chosen on the
same validation rows: lazy CEGB among its candidates, the upper reference of a per-row saving)
and, where the oracle ran, the best retrained affordable feature subset
(``gbdt_prune_oracle.py``) and, on tables with at most ``--max-subset-features`` features, every
affordable feature subset (summed cost within the budget) dropped post hoc (forcing + refit on
all training rows: the ceiling of FeatureDropRefit's moves), the best by test and the best by
validation; then, per table, the first step at the unpruned model: per feature,
the loss rise per unit of cost saved of dropping it against the best level that keeps it for
some rows. Binary and regression tables only. Results go to
``benchmarks/results/gbdt_prune_rows.json``.
"""

from __future__ import annotations

import itertools
import time
import warnings
from typing import Any

import lightgbm as lgb
import numpy as np
from numba import njit

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.budgetprune import gbdt_prune as gp
from benchmarks.budgetprune import gbdt_prune_recipe as gr
from budget_extras.budgetprune import FeatureDropRefit
from budget_extras.budgetprune._drop_refit import drop_forcing, forced_ensemble, prepare_rows, refit_values, route
from budget_extras.budgetprune._error_terms import mean_loss
from budget_extras.budgetprune._usage import path_tables, usage_cost
from budget_extras.cegb import train_to_budget

#: Best test score over the affordable feature subsets, retrained (gbdt_prune_oracle.json, same budget).
ORACLE = {"magic": 0.9034}


@njit(cache=True)
def _node_stats(leaves, parent, left, feature, forced, value, g, h, n_features):  # type: ignore[no-untyped-def]
    """Per node and side (0 left, 1 right): rows, sums of value, g, h, g*value, h*value, h*value^2; saving share."""
    n_trees, n = leaves.shape
    n_nodes = parent.size
    c = np.zeros((n, n_features))
    for t in range(n_trees):
        for i in range(n):
            p = parent[leaves[t, i]]
            while p >= 0:
                if forced[p] < 0:
                    c[i, feature[p]] += 1.0
                p = parent[p]
    s = np.zeros((7, n_nodes, 2))
    share = np.zeros(n_nodes)
    for t in range(n_trees):
        for i in range(n):
            leaf = leaves[t, i]
            v = value[leaf]
            child = leaf
            p = parent[child]
            while p >= 0:
                if forced[p] < 0:
                    side = 0 if child == left[p] else 1
                    s[0, p, side] += 1.0
                    s[1, p, side] += v
                    s[2, p, side] += g[i]
                    s[3, p, side] += h[i]
                    s[4, p, side] += g[i] * v
                    s[5, p, side] += h[i] * v
                    s[6, p, side] += h[i] * v * v
                    share[p] += 1.0 / c[i, feature[p]]
                child = p
                p = parent[child]
    return s, share


@njit(cache=True)
def _reach(leaves, parent, mask):  # type: ignore[no-untyped-def]
    """Per node: the rows with ``mask`` true whose paths pass through it."""
    n_trees, n = leaves.shape
    out = np.zeros(parent.size)
    for t in range(n_trees):
        for i in range(n):
            if not mask[i]:
                continue
            p = parent[leaves[t, i]]
            while p >= 0:
                out[p] += 1.0
                p = parent[p]
    return out


def _grad_hess(code: int, y: np.ndarray, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if code == 0:
        p = 1.0 / (1.0 + np.exp(-raw))
        return p - y, p * (1.0 - p)
    return raw - y, np.ones_like(raw)


def _scores(est: FeatureDropRefit, forced: np.ndarray, leaves: np.ndarray, value: np.ndarray,
            unit_cost: np.ndarray) -> np.ndarray:
    """Loss rise per unit of saving of forcing each unforced split (inf where it saves nothing); side in sign."""
    ens, spec = est._ens, est._spec
    raw = gr_raw(ens, value, leaves)
    g, h = _grad_hess(spec.code, est._yt, raw)
    s, share = _node_stats(leaves, np.asarray(ens.parent, dtype=np.int64), ens.left_child.astype(np.int64),
                           ens.feature.astype(np.int64), forced, value, g, h, ens.n_features)
    cnt, sv, sg, sh, sgv, shv, shv2 = s
    rise = np.full((ens.n_nodes, 2), np.inf)
    for k in (0, 1):  # keep side k, the rows of side 1 - k move into it
        d = 1 - k
        m = np.where(cnt[:, k] > 0, sv[:, k] / np.maximum(cnt[:, k], 1), np.nan)
        r = m * sg[:, d] - sgv[:, d] + 0.5 * (m * m * sh[:, d] - 2 * m * shv[:, d] + shv2[:, d])
        rise[:, k] = np.where(np.isfinite(r), r, np.inf)
    saving = unit_cost[np.maximum(ens.feature, 0)] * share / est._yt.size
    ok = (~ens.is_leaf) & (forced < 0) & (saving > 0)
    best = np.min(rise, axis=1)
    ratio = np.where(ok, np.maximum(best, 0.0) / np.where(ok, saving, 1.0), np.inf)
    return ratio, np.argmin(rise, axis=1).astype(np.int8)


def gr_raw(ens: Any, value: np.ndarray, leaves: np.ndarray) -> np.ndarray:
    """Raw score (first class) of the rows whose leaves are ``leaves``."""
    from budget_extras.budgetprune._feature_drop import _raw

    return _raw(ens, value, leaves)[:, 0]


def _valid_cost(est: FeatureDropRefit, forced: np.ndarray) -> float:
    ens = est._ens
    bits, pcost = path_tables(ens, forced, est._split)
    leaves = route(ens, est._Xv, forced)[0]
    row, _ = usage_cost(leaves, bits, pcost, est.costs_.unit, est.costs_.unit_cost, ens.n_features)
    return float(row.mean()) + est.costs_.tree * ens.n_trees


def _train_cost_loss(est: FeatureDropRefit, forced: np.ndarray, leaves: np.ndarray, value: np.ndarray,
                     raw: np.ndarray) -> tuple[float, float]:
    ens = est._ens
    bits, pcost = path_tables(ens, forced, est._split)
    row, _ = usage_cost(leaves, bits, pcost, est.costs_.unit, est.costs_.unit_cost, ens.n_features)
    return float(row.mean()), mean_loss(ens, est._yt, raw)


def _moves(est: FeatureDropRefit, forced: np.ndarray, leaves: np.ndarray, value: np.ndarray, raw: np.ndarray,
           levels: tuple[float, ...]) -> list[tuple[int, float, np.ndarray]]:
    """The proposals ``(feature, level, forcing)``: keep a feature's splits for the rows that need it.

    For feature ``f`` the rows that need it are the ``level`` share with the largest
    ``h * d^2`` (``d``: the change of the row's raw score when every split on ``f`` is forced,
    ``h``: the loss's hessian at the row); every unforced split on ``f`` that another row reaches
    is forced (to its child with more training rows), so those rows stop paying ``f``. Level 0
    drops ``f`` for every row.
    """
    ens = est._ens
    parent = np.asarray(ens.parent, dtype=np.int64)
    feature = np.where(ens.is_leaf, -1, ens.feature)
    big = np.where(ens.count[ens.left_child.clip(0)] >= ens.count[ens.right_child.clip(0)], 0, 1).astype(np.int8)
    _, h = _grad_hess(est._spec.code, est._yt, raw[:, 0])
    out = []
    for f in np.unique(feature[(feature >= 0) & (forced < 0)]):
        nodes = np.flatnonzero((feature == f) & (forced < 0))
        drop = forced.copy()
        drop[nodes] = big[nodes]
        out.append((int(f), 0.0, drop))
        _, rw = route(ens, est._Xt, drop, base=leaves, base_forced=forced, value=value, raw=raw)
        need = h * (rw[:, 0] - raw[:, 0]) ** 2
        rank = np.argsort(-need, kind="stable")
        for q in levels:
            keep = np.zeros(need.size, dtype=np.bool_)
            keep[rank[: round(q * need.size)]] = True
            other = _reach(leaves, parent, ~keep)
            pick = nodes[other[nodes] > 0]
            if 0 < pick.size < nodes.size:
                prop = forced.copy()
                prop[pick] = big[pick]
                out.append((int(f), q, prop))
    return out


def node_search(est: FeatureDropRefit, budget: float, batch: float) -> dict[str, Any]:
    """Force single splits in rounds, the smallest loss rise per unit of saving first (:func:`_scores`).

    Each round forces the ``batch`` share of the unforced splits, then refits the leaves.
    """
    ens, spec = est._ens, est._spec
    forced = np.full(ens.n_nodes, -1, dtype=np.int8)
    value = np.asarray(ens.value, dtype=np.float64)
    leaves = route(ens, est._Xt, forced)[0]
    unit_cost = np.asarray(est.costs_.unit_cost, dtype=np.float64)[np.asarray(est.costs_.unit)]
    rounds, n_refits = [], 0
    cost = _valid_cost(est, forced)
    while cost > budget * (1 + 1e-9):
        ratio, side = _scores(est, forced, leaves, value, unit_cost)
        cand = np.flatnonzero(np.isfinite(ratio))
        if not cand.size:
            break
        k = max(1, int(batch * int(((~ens.is_leaf) & (forced < 0)).sum())))
        pick = cand[np.argsort(ratio[cand], kind="stable")[:k]]
        forced = forced.copy()
        forced[pick] = side[pick]
        leaves = route(ens, est._Xt, forced)[0]
        value = refit_values(ens, spec, leaves, est._yt, est._bias, weight=est._wt)[0]
        n_refits += 1
        cost = _valid_cost(est, forced)
        rounds.append({"forced": int((forced >= 0).sum()), "valid_cost": cost})
    return _final(est, forced, cost, rounds, n_refits, 0)


def _final(est: FeatureDropRefit, forced: np.ndarray, cost: float, rounds: list[dict[str, Any]], n_refits: int,
           n_evals: int) -> dict[str, Any]:
    """Refit the chosen forcing on all training rows."""
    ens = est._ens
    leaves_all = route(ens, est._X_all, forced)[0]
    value, count, hess = refit_values(ens, est._spec, leaves_all, est._y_all, est._bias, weight=est._w_all)
    return {"forced": forced, "value": value, "count": count, "hess": hess, "valid_cost": cost,
            "rounds": rounds, "n_refits": n_refits + 1, "n_evals": n_evals}


def per_row_search(est: FeatureDropRefit, budget: float, levels: tuple[float, ...]) -> dict[str, Any]:
    """Greedy over the moves of :func:`_moves` until the validation cost fits the budget.

    The move with the smallest loss rise per unit of mean training cost saved (routed, not refit)
    is taken, then the leaves are refit in tree order.
    """
    ens, spec = est._ens, est._spec
    forced = np.full(ens.n_nodes, -1, dtype=np.int8)
    value = np.asarray(ens.value, dtype=np.float64)
    leaves = route(ens, est._Xt, forced)[0]
    rounds, n_refits, n_evals = [], 0, 0
    cost = _valid_cost(est, forced)
    while cost > budget * (1 + 1e-9):
        raw = gr_raw(ens, value, leaves)[:, None]
        c0, l0 = _train_cost_loss(est, forced, leaves, value, raw[:, 0])
        best = None
        for f, q, prop in _moves(est, forced, leaves, value, raw, levels):
            lv, rw = route(ens, est._Xt, prop, base=leaves, base_forced=forced, value=value, raw=raw)
            n_evals += 1
            c1, l1 = _train_cost_loss(est, prop, lv, value, rw[:, 0])
            if c0 - c1 <= 1e-12:
                continue
            key = max(l1 - l0, 0.0) / (c0 - c1)
            if best is None or key < best[0]:
                best = (key, prop, f, q)
        if best is None:
            break
        forced = best[1]
        leaves = route(ens, est._Xt, forced)[0]
        value = refit_values(ens, spec, leaves, est._yt, est._bias, weight=est._wt)[0]
        n_refits += 1
        cost = _valid_cost(est, forced)
        rounds.append({"feature": est._names((best[2],))[0], "level": best[3], "forced": int((forced >= 0).sum()),
                       "valid_cost": cost, "train_loss": mean_loss(ens, est._yt, gr_raw(ens, value, leaves))})
    return _final(est, forced, cost, rounds, n_refits, n_evals)


def first_step(est: FeatureDropRefit, levels: tuple[float, ...]) -> list[dict[str, Any]]:
    """At the unpruned model: per feature, the loss rise per unit of cost saved of dropping it and of each level."""
    ens = est._ens
    forced = np.full(ens.n_nodes, -1, dtype=np.int8)
    value = np.asarray(ens.value, dtype=np.float64)
    leaves = route(ens, est._Xt, forced)[0]
    raw = gr_raw(ens, value, leaves)[:, None]
    c0, l0 = _train_cost_loss(est, forced, leaves, value, raw[:, 0])
    out = []
    for f, q, prop in _moves(est, forced, leaves, value, raw, levels):
        lv, rw = route(ens, est._Xt, prop, base=leaves, base_forced=forced, value=value, raw=raw)
        c1, l1 = _train_cost_loss(est, prop, lv, value, rw[:, 0])
        on_f = (ens.feature == f) & ~ens.is_leaf
        out.append({"feature": est._names((f,))[0], "level": q, "saved": c0 - c1, "rise": l1 - l0,
                    "kept_splits": int((on_f & (prop < 0)).sum()), "splits": int(on_f.sum()),
                    "rise_per_cost": (l1 - l0) / max(c0 - c1, 1e-12)})
    return out


def subset_oracle(est: FeatureDropRefit, splits: list[Any], budget: float, costs: Any, n_class: int) -> dict[str, Any]:
    """Every feature subset whose summed cost fits the budget, dropped post hoc (forcing + refit on all training rows).

    The ceiling of dropping whole features from this model (FeatureDropRefit's moves): the best
    test score over the subsets, and the test score of the best by validation.
    """
    ens = est._ens
    Xte = prepare_rows(ens, splits[2][0])
    unit = np.asarray(est.costs_.unit_cost, dtype=np.float64)[np.asarray(est.costs_.unit)]
    used = [int(f) for f in np.unique(ens.feature[~ens.is_leaf])]
    found = []
    for k in range(1, len(used) + 1):
        for keep in itertools.combinations(used, k):
            if unit[list(keep)].sum() > budget * (1 + 1e-9):
                continue
            forced = drop_forcing(ens, [f for f in used if f not in keep])
            value = refit_values(ens, est._spec, route(ens, est._X_all, forced)[0], est._y_all, est._bias,
                                 weight=est._w_all)[0]
            va = gr.score(gr_raw(ens, value, route(ens, est._Xv, forced)[0]), est._yv, n_class)
            te = gr.score(gr_raw(ens, value, route(ens, Xte, forced)[0]), splits[2][1], n_class)
            found.append({"kept": list(est._names(keep)), "valid_score": va, "test_score": te})
    by_valid = max(found, key=lambda r: r["valid_score"])
    return {"n_subsets": len(found), "best_test": max(found, key=lambda r: r["test_score"]), "by_valid": by_valid}


def _pruned(est: FeatureDropRefit, res: dict[str, Any], t: float, t_train: float, splits: list[Any],
            costs: Any, n_class: int) -> dict[str, Any]:
    """Test score and cost of a search's forcing (refit on all training rows)."""
    (_, _), (Xb, yb), (Xc, yc) = splits
    pruned = forced_ensemble(est._ens, res["forced"], res["value"], res["count"], res["hess"])
    return {"test_score": gr.score(pruned.predict_raw(Xc), yc, n_class), "test_cost": gp.mean_cost(pruned, Xc, costs),
            "valid_cost": res["valid_cost"], "valid_score": gr.score(pruned.predict_raw(Xb), yb, n_class),
            "n_forced": int((res["forced"] >= 0).sum()), "n_splits": int((~est._ens.is_leaf).sum()),
            "rounds": res["rounds"], "n_refits": res["n_refits"], "trainings": t / t_train}


def retrained(splits: list[Any], costs: Any, budget: float, n_class: int, t_train: float) -> dict[str, Any]:
    """``train_to_budget`` at ``budget`` (same rows and rounds, chosen on the validation rows): test score, cost.

    Also the best test score of its lazy-CEGB candidates (every family ``lazy*``) whose validation
    cost fits the budget, chosen on test: the ceiling of retraining with per-row (lazy) costs.
    """
    (Xa, ya), (Xb, yb), (Xc, yc) = splits
    t0 = time.process_time()
    res = train_to_budget(gr.params_for(n_class), lgb.Dataset(Xa, ya), budget=budget, valid_set=(Xb, yb),
                          costs=costs.to_dict(), num_boost_round=gp.ROUNDS, choose="valid", progress=False,
                          keep_boosters=True)
    seconds = time.process_time() - t0
    lazy = [gr.score(b.predict(Xc, raw_score=True), yc, n_class)
            for c, b in zip(res.frontier, res.boosters, strict=True)
            if c.family.startswith("lazy") and not c.proxy and c.rounds is None and c.cost <= budget]
    return {"test_score": gr.score(res.booster.predict(Xc, raw_score=True), yc, n_class),
            "test_cost": gp.mean_cost(res.booster, Xc, costs), "valid_cost": res.cost, "family": res.chosen.family,
            "trainings": seconds / t_train, "lazy_best_by_test": max(lazy) if lazy else None,
            "lazy_within_budget": len(lazy)}


def run(name: str, data_dir: Any, fraction: float, levels: tuple[float, ...], batch: float,
        max_subset_features: int) -> dict[str, Any]:
    """One table: the unpruned model, the recipe, FeatureDropRefit and the two per-row searches on the test split."""
    splits, costs, n_class = gr.load(name, data_dir)
    (Xa, ya), (Xb, yb), (Xc, yc) = splits
    if n_class > 2:
        raise ValueError(f"{name}: the per-row searches handle binary and regression models only")
    booster, t_train = gr.train_cpu(Xa, ya, n_class, repeats=1)
    gain = gp.pd.Series(booster.feature_importance("gain"), index=booster.feature_name()).sort_values(ascending=False)
    if costs is None:
        tiers = np.array_split(np.array(gain.index), 3)
        costs = gp.pd.Series({f: c for part, c in zip(tiers, (10.0, 5.0, 1.0), strict=True) for f in part})
    costs = costs.reindex(booster.feature_name()).astype(float)
    budget = fraction * gp.mean_cost(booster, Xb, costs)
    scoring = "r2" if n_class == gr.REGRESSION else "roc_auc"
    est = FeatureDropRefit(booster, budget=budget, costs=costs.to_dict(), scoring=scoring)
    t0 = time.process_time()
    est.fit(Xa, ya, X_valid=Xb, y_valid=yb)
    t_fdr = time.process_time() - t0
    rec = gr.recipe(booster, splits, costs, budget, n_class)
    probe = FeatureDropRefit(booster, budget=budget, costs=costs.to_dict(), scoring=scoring)
    probe._setup(Xa, ya, Xb, yb)
    found = {}
    for key, search in (("nodes", lambda: node_search(probe, budget, batch)),
                        ("moves", lambda: per_row_search(probe, budget, levels))):
        t0 = time.process_time()
        res = search()
        found[key] = _pruned(probe, res, time.process_time() - t0, t_train, splits, costs, n_class)
    return {
        "dataset": name, "n_features": Xa.shape[1], "budget": budget, "metric": scoring,
        "unpruned": {"test_score": gr.score(booster.predict(Xc, raw_score=True), yc, n_class),
                     "test_cost": gp.mean_cost(booster, Xc, costs)},
        "recipe": {"test_score": rec["test_score"], "test_cost": rec["test_cost"]},
        "feature_drop": {"test_score": gr.score(est.predict_raw(Xc), yc, n_class),
                         "test_cost": gp.mean_cost(est.ensemble_, Xc, costs), "valid_cost": est.cost_,
                         "trainings": t_fdr / t_train},
        **found,
        "retrained": retrained(splits, costs, budget, n_class, t_train),
        "first_step": first_step(probe, levels),
        "oracle_best_subset": ORACLE.get(name),
        "posthoc_subsets": (subset_oracle(probe, splits, budget, costs, n_class)
                            if Xa.shape[1] <= max_subset_features else None),
    }


def table(results: list[dict[str, Any]]) -> str:
    head = ("| dataset (metric) | budget | unpruned | hand recipe | FeatureDropRefit | node forcing | per-row moves | "
            "best subset: retrained (oracle) / post hoc, by test, by validation | retrained with the costs "
            "(train_to_budget): score, test cost; best lazy CEGB candidate by test | "
            "test cost: nodes / moves / FDR | splits forced: nodes / moves |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n")
    rows = []
    for r in results:
        u, c, f, n, m = r["unpruned"], r["recipe"], r["feature_drop"], r["nodes"], r["moves"]
        o = r["oracle_best_subset"]
        rows.append(
            f"| {r['dataset']} ({r['metric']}) | {r['budget']:.3g} | {u['test_score']:.4f} | {c['test_score']:.4f} | "
            f"{f['test_score']:.4f} | {n['test_score']:.4f} | {m['test_score']:.4f} | "
            f"{'-' if o is None else f'{o:.4f}'} / {_posthoc(r)} | {_retrained(r)} | "
            f"{n['test_cost']:.3g} / {m['test_cost']:.3g} / {f['test_cost']:.3g} | "
            f"{n['n_forced']} / {m['n_forced']} of {n['n_splits']} |")
    return head + "\n".join(rows)


def _retrained(r: dict[str, Any]) -> str:
    t = r.get("retrained")
    if t is None:
        return "-"
    lazy = "-" if t["lazy_best_by_test"] is None else f"{t['lazy_best_by_test']:.4f}"
    return f"{t['test_score']:.4f} ({t['family']}), {t['test_cost']:.3g}; lazy by test {lazy}"


def _posthoc(r: dict[str, Any]) -> str:
    p = r.get("posthoc_subsets")
    return "-" if p is None else f"{p['best_test']['test_score']:.4f}, {p['by_valid']['test_score']:.4f}"


def step_table(result: dict[str, Any]) -> str:
    """Per feature: loss rise per unit of cost saved when dropped, and the best level that keeps it for some rows."""
    rows = ["| feature (splits) | drop: saved, rise / saved | best partial level: level, splits kept, saved, "
            "rise / saved |",
            "|---|---|---|"]
    steps = result["first_step"]
    for name in dict.fromkeys(s["feature"] for s in steps):
        mine = [s for s in steps if s["feature"] == name]
        drop = next(s for s in mine if s["level"] == 0.0)
        part = [s for s in mine if s["level"] > 0 and s["saved"] > 1e-9]
        best = min(part, key=lambda s: s["rise_per_cost"]) if part else None
        tail = "-" if best is None else (f"{best['level']:.2f}, {best['kept_splits']}, {best['saved']:.2f}, "
                                         f"{best['rise_per_cost']:.4f}")
        rows.append(f"| {name} ({drop['splits']}) | {drop['saved']:.2f}, {drop['rise_per_cost']:.4f} | {tail} |")
    return "\n".join(rows)


def main() -> None:
    parser = script_parser(__doc__, result_name="gbdt_prune_rows", quick={"datasets": ["magic"]})
    parser.add_argument("--datasets", nargs="+", choices=gr.ALL, default=["magic"])
    parser.add_argument("--fraction", type=float, default=0.5)
    parser.add_argument("--levels", type=float, nargs="+", default=[0.5, 0.8, 0.9, 0.95, 0.98],
                        help="shares of the rows a move keeps a feature for (default 0.5 0.8 0.9 0.95 0.98)")
    parser.add_argument("--batch", type=float, default=0.05,
                        help="node forcing: share of the unforced splits forced per round (default 0.05)")
    parser.add_argument("--max-subset-features", type=int, default=10,
                        help="drop every affordable feature subset post hoc on tables with at most this many "
                             "features (default 10)")
    args = parse(parser)
    warnings.filterwarnings("ignore", category=UserWarning)
    results = []
    for name in args.datasets:
        results.append(run(name, args.data_dir, args.fraction, tuple(args.levels), args.batch,
                           args.max_subset_features))
        print(table(results[-1:]).splitlines()[-1], flush=True)
        write_results(args.out, {"fraction": args.fraction, "levels": args.levels, "batch": args.batch,
                                         "results": results}, "lightgbm", "numpy")
    print(table(results))
    for r in results:
        print(f"\n{r['dataset']}, first step (unpruned model, no refit):\n{step_table(r)}")


if __name__ == "__main__":
    main()
