"""Competitors of the accuracy-cost frontier harness, one adapter each (lleaves style).

An adapter turns one :class:`Context` (one dataset x cost scheme x seed: the split, the costs and
the unconstrained LightGBM model) into a list of CANDIDATES, one per knob setting it tries:
``{"method", "knobs", "val_score", "val_cost", "test_score", "test_cost", "constant"}``.
Costs are the mean per-row acquisition cost under ONE rule: each feature (or group) is paid once
per row when some split on the row's paths uses it. LightGBM models go through
``budget_extras.cost_report``; CatBoost and XGBoost models through walkers of their JSON exports
(:func:`catboost_walk`, :func:`xgboost_walk`) that also rebuild the raw scores, checked against the
library's own raw predictions before any cost is recorded.
"""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from benchmarks.train_to_budget._data import feature_costs

ROUNDS, LEARNING_RATE, LEAVES = 200, 0.05, 31
TRADEOFFS = [float(10.0 ** e) for e in np.arange(-4.0, 1.0001, 0.25)]  # factor 10^0.25, 1e-4 .. 1e1
# cegb_tradeoff_scale=gain: the tradeoff is a share of each tree's best root gain (documented range 1e-3 .. 10^-0.25)
TRADEOFFS_SCALED = [float(10.0 ** e) for e in np.arange(-3.0, -0.2499, 0.25)]
CATBOOST_COEFS = {"object": [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 0.1], "first": [0.1, 0.3, 1.0, 3.0, 10.0, 30.0]}
BUDGET_FRACTIONS = [0.1, 0.2, 0.3, 0.5, 0.75, 1.0]


@dataclass
class Context:
    """One (dataset, cost scheme, seed): rows, costs and the unconstrained model."""

    dataset: str
    scheme: str
    seed: int
    names: list[str]
    task: str
    n_classes: int
    X_train: np.ndarray
    y_train: np.ndarray
    X_valid: np.ndarray
    y_valid: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    costs: np.ndarray  # per feature
    groups: np.ndarray | None  # per feature, -1 = none
    rounds: int = ROUNDS
    threads: int = 1
    quick: bool = False
    _plain: Any = None

    @property
    def fc(self) -> Any:
        return feature_costs(self.names, self.costs, self.groups)

    @property
    def d(self) -> int:
        return len(self.names)

    def lgb_params(self, **extra: Any) -> dict[str, Any]:
        p: dict[str, Any] = {"objective": self.task, "learning_rate": LEARNING_RATE, "num_leaves": LEAVES,
                             "verbose": -1, "seed": self.seed, "num_threads": self.threads, "deterministic": True,
                             "force_col_wise": True}
        if self.task == "multiclass":
            p["num_class"] = self.n_classes
        p.update(extra)
        return p

    def plain(self) -> Any:
        """The unconstrained LightGBM model (trained once per context)."""
        if self._plain is None:
            self._plain = lgb_fit(self, self.lgb_params())
        return self._plain

    def k_grid(self) -> list[int]:
        return sorted({k for k in (1, 2, 3, 5, 8, 13, 21, 34) if k < self.d} | {self.d})


# ---------------------------------------------------------------- scoring and the one cost rule
def score(task: str, y: np.ndarray, pred: np.ndarray) -> float:
    """AUC for binary (pred: probability or margin of class 1), accuracy for multiclass."""
    if task == "multiclass":
        return float((np.asarray(pred).argmax(axis=1) == y).mean())
    from sklearn.metrics import roc_auc_score

    p = np.asarray(pred, float).ravel()
    return 0.5 if np.ptp(p) == 0 else float(roc_auc_score(y, p))


def lgb_fit(ctx: Context, params: dict[str, Any], keep: np.ndarray | None = None, *,
            rounds: int | None = None, X: np.ndarray | None = None, y: np.ndarray | None = None) -> Any:
    """Train LightGBM; ``keep`` (bool per feature) hides the other features (all-NaN columns never split)."""
    import lightgbm as lgb

    X = ctx.X_train if X is None else X
    y = ctx.y_train if y is None else y
    if keep is not None:
        X = np.where(keep[None, :], X, np.nan)
    ds = lgb.Dataset(X, y, feature_name=list(ctx.names), params={"verbose": -1, "max_bin": 255})
    return lgb.train(params, ds, num_boost_round=ctx.rounds if rounds is None else rounds)


def lgb_cost(ctx: Context, booster: Any, X: np.ndarray) -> float:
    """Mean per-row acquisition cost of a LightGBM model: ``budget_extras.cost_report``."""
    from budget_extras import TreeEnsemble, cost_report

    return float(cost_report(TreeEnsemble.from_booster(booster), X, ctx.fc).acquisition_cost.mean())


def lgb_candidate(ctx: Context, method: str, booster: Any, knobs: dict[str, Any]) -> dict[str, Any]:
    from budget_extras import TreeEnsemble, cost_report

    ens = TreeEnsemble.from_booster(booster)
    fc = ctx.fc
    out = {"method": method, "knobs": knobs, "constant": bool((ens.feature >= 0).sum() == 0)}
    for part, X, y in (("val", ctx.X_valid, ctx.y_valid), ("test", ctx.X_test, ctx.y_test)):
        out[f"{part}_score"] = score(ctx.task, y, booster.predict(X))
        out[f"{part}_cost"] = float(cost_report(ens, X, fc).acquisition_cost.mean())
    return out


def used_cost(ctx: Context, used: np.ndarray) -> float:
    """The same rule for other libraries: ``FeatureCosts.row_cost`` of the per-row used features."""
    return float(np.mean(ctx.fc.row_cost(used)))


def gain_ranking(ctx: Context, gain: np.ndarray, per_cost: bool) -> np.ndarray:
    """Features by decreasing gain (or gain / cost); ties by index."""
    key = gain / np.maximum(ctx.costs, 1e-12) if per_cost else gain
    return np.lexsort((np.arange(ctx.d), -key))


# ---------------------------------------------------------------- adapters
class Adapter:
    """One competitor: ``candidates(ctx)`` fits its grid on the context's split."""

    name = "adapter"
    family = "peer"  # "peer" (what a user can do without this project) or "ours" (the fork / budget_extras)

    def available(self) -> bool:
        return True

    def applies(self, ctx: Context) -> bool:
        return True

    def candidates(self, ctx: Context) -> list[dict[str, Any]]:
        raise NotImplementedError


class PlainLGBM(Adapter):
    name, family = "lightgbm", "peer"

    def candidates(self, ctx: Context) -> list[dict[str, Any]]:
        return [lgb_candidate(ctx, self.name, ctx.plain(), {})]


class TopK(Adapter):
    """Plain LightGBM on the k best features by train gain importance (or gain / cost)."""

    def __init__(self, per_cost: bool) -> None:
        self.per_cost = per_cost
        self.name = "topk_gain_per_cost" if per_cost else "topk_gain"

    def candidates(self, ctx: Context) -> list[dict[str, Any]]:
        plain = ctx.plain()
        order = gain_ranking(ctx, plain.feature_importance("gain"), self.per_cost)
        out = []
        for k in ctx.k_grid():
            keep = np.zeros(ctx.d, bool)
            keep[order[:k]] = True
            booster = plain if k == ctx.d else lgb_fit(ctx, ctx.lgb_params(), keep)
            out.append(lgb_candidate(ctx, self.name, booster, {"k": k, "features": [ctx.names[i] for i in order[:k]]}))
        return out


class GreedyForward(Adapter):
    """Forward selection on validation: add the feature with the best validation gain per unit of new cost.

    Search with a cheap model (40 rounds, learning rate 0.2, 15 leaves) over the 16 best features by
    train gain / cost, up to 8 steps; every prefix is then refit at full size.
    """

    name = "greedy_forward"
    search_rounds, search_lr, search_leaves, pool, steps = 40, 0.2, 15, 16, 8

    def candidates(self, ctx: Context) -> list[dict[str, Any]]:
        plain = ctx.plain()
        pool = list(gain_ranking(ctx, plain.feature_importance("gain"), True)[: self.pool])
        fc = ctx.fc
        cheap = ctx.lgb_params(learning_rate=self.search_lr, num_leaves=self.search_leaves)

        def set_cost(sel: list[int]) -> float:
            used = np.zeros((1, ctx.d), bool)
            used[0, sel] = True
            return float(fc.row_cost(used)[0])

        chosen: list[int] = []
        current = 0.5 if ctx.task == "binary" else float(np.bincount(ctx.y_train).max() / len(ctx.y_train))
        prefixes = []
        for _ in range(min(self.steps, len(pool))):
            best, best_key = None, None
            base_cost = set_cost(chosen)
            for f in pool:
                if f in chosen:
                    continue
                keep = np.zeros(ctx.d, bool)
                keep[[*chosen, f]] = True
                b = lgb_fit(ctx, cheap, keep, rounds=self.search_rounds)
                s = score(ctx.task, ctx.y_valid, b.predict(ctx.X_valid))
                gain, added = s - current, set_cost([*chosen, f]) - base_cost
                key = (gain > 0, gain / added if added > 1e-12 else np.inf if gain > 0 else gain, s)
                if best_key is None or key > best_key:
                    best, best_key = (f, s), key
            if best is None or not best_key[0]:  # type: ignore[index]
                break
            chosen.append(best[0])
            current = best[1]
            prefixes.append(list(chosen))
        out = []
        for sel in prefixes:
            keep = np.zeros(ctx.d, bool)
            keep[sel] = True
            b = lgb_fit(ctx, ctx.lgb_params(), keep)
            out.append(lgb_candidate(ctx, self.name, b, {"k": len(sel), "features": [ctx.names[i] for i in sel]}))
        return out


class CEGB(Adapter):
    """The fork's CEGB over the tradeoff grid (costs normalized to mean 1; coupled costs x n_train rows).

    Stops after two constant models in a row (larger tradeoffs only make models cheaper); the
    skipped grid points are recorded as such.
    """

    family = "ours"

    def __init__(self, variant: str) -> None:
        self.variant = variant
        self.name = f"cegb_{variant}"

    def applies(self, ctx: Context) -> bool:
        return self.variant != "groups" or ctx.groups is not None

    def params(self, ctx: Context, t: float) -> dict[str, Any]:
        c = ctx.costs / ctx.costs.mean()
        extra: dict[str, Any] = {"cegb_tradeoff": t}
        if self.variant in ("lazy_scaled", "lazy_first"):
            extra["cegb_tradeoff_scale"] = "gain" if self.variant == "lazy_scaled" else "first_gain"
        if self.variant in ("lazy", "lazy_scaled", "lazy_first", "lazy_coupled", "groups"):
            extra["cegb_penalty_feature_lazy"] = [float(v) for v in c]
        if self.variant in ("coupled", "lazy_coupled"):
            extra["cegb_penalty_feature_coupled"] = [float(v * len(ctx.y_train)) for v in c]
        if self.variant == "groups":
            extra["cegb_feature_group"] = [int(g) for g in ctx.groups]  # type: ignore[union-attr]
        return ctx.lgb_params(**extra)

    def candidates(self, ctx: Context) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        constant_run = 0
        full = TRADEOFFS_SCALED if self.variant in ("lazy_scaled", "lazy_first") else TRADEOFFS
        grid = full[::4] if ctx.quick else full
        for t in grid:
            if constant_run >= 2:
                out.append({"method": self.name, "knobs": {"tradeoff": t}, "skipped": True})
                continue
            cand = lgb_candidate(ctx, self.name, lgb_fit(ctx, self.params(ctx, t)), {"tradeoff": t})
            out.append(cand)
            constant_run = constant_run + 1 if cand["constant"] else 0
        return out


class BudgetPruneAdapter(Adapter):
    """budget_extras.BudgetPrune on the unconstrained GBDT over a grid of its trade-off ``lam``.

    The program is solved with the costs normalized to mean 1 (so one ``lam`` grid serves every
    scheme); the pruned models are costed with the real costs like every other candidate.
    """

    name, family = "budgetprune", "ours"
    lams: tuple[float, ...] = tuple(float(10.0 ** e) for e in np.arange(-4.0, -0.99, 0.25))

    def candidates(self, ctx: Context) -> list[dict[str, Any]]:
        from budget_extras import BudgetPrune

        plain = ctx.plain()
        norm = feature_costs(ctx.names, ctx.costs / ctx.costs.mean(), ctx.groups)
        out = []
        for lam in self.lams[::3] if ctx.quick else self.lams:
            bp = BudgetPrune(plain, lam=lam, costs=norm, max_iter=200, progress=False)
            bp.fit(ctx.X_train, ctx.y_train, X_valid=ctx.X_valid)
            out.append(lgb_candidate(ctx, self.name, bp.booster_, {"lam": lam}))
        return out


# ---------------------------------------------------------------- CatBoost
def catboost_walk(model_json: dict[str, Any], X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Raw scores and per-row used features of a CatBoost model from its JSON export.

    Numeric features only. Oblivious (symmetric) trees charge every row every split feature of the
    model (all its splits are evaluated); non-symmetric (Lossguide / Depthwise) trees charge the
    features on the row's path. Returns ``(raw of shape (n_rows, n_dims), used of shape (n_rows,
    n_features) bool)``. Splits go right iff ``float32(x) > border``; NaN follows the feature's
    ``nan_value_treatment`` (AsTrue: right; AsFalse, the default for nan_mode Min: left).
    """
    info = model_json["features_info"]["float_features"]
    flat = {int(f.get("feature_index", i)): int(f.get("flat_feature_index", i)) for i, f in enumerate(info)}
    nan_right = {int(f.get("feature_index", i)): f.get("nan_value_treatment") == "AsTrue" for i, f in enumerate(info)}
    X32 = np.asarray(X, np.float32)
    n = X32.shape[0]
    scale, bias = model_json.get("scale_and_bias", [1.0, [0.0]])
    bias = np.atleast_1d(np.asarray(bias, float))
    trees = model_json.get("trees") or model_json.get("oblivious_trees") or []
    dims = len(bias)
    raw = np.zeros((n, dims))
    used = np.zeros((n, X32.shape[1]), bool)

    def goes_right(ffi: int, border: float, rows: np.ndarray) -> np.ndarray:
        v = X32[rows, flat[ffi]]
        r = v > np.float32(border)
        return np.where(np.isnan(v), nan_right[ffi], r)

    for tree in trees:
        if "splits" in tree and "leaf_values" in tree:  # oblivious
            idx = np.zeros(n, np.int64)
            rows = np.arange(n)
            for j, s in enumerate(tree["splits"]):
                ffi = int(s["float_feature_index"])
                used[:, flat[ffi]] = True
                idx |= goes_right(ffi, s["border"], rows).astype(np.int64) << j
            lv = np.asarray(tree["leaf_values"], float).reshape(-1, dims)
            raw += lv[idx]
            continue
        stack = [(tree, np.arange(n))]
        while stack:
            node, rows = stack.pop()
            if rows.size == 0:
                continue
            if "split" not in node:
                raw[rows] += np.atleast_1d(np.asarray(node["value"], float))
                continue
            s = node["split"]
            ffi = int(s["float_feature_index"])
            used[rows, flat[ffi]] = True
            right = goes_right(ffi, s["border"], rows)
            stack.append((node["left"], rows[~right]))
            stack.append((node["right"], rows[right]))
    return scale * raw + bias[None, :], used


class CatBoostAdapter(Adapter):
    """CatBoost with per-object (lazy) or first-use (coupled) feature penalties, symmetric or Lossguide trees."""

    def __init__(self, policy: str, penalty: str) -> None:
        self.policy, self.penalty = policy, penalty
        self.name = f"catboost_{'sym' if policy == 'SymmetricTree' else 'lossguide'}_{penalty}"

    def available(self) -> bool:
        return importlib.util.find_spec("catboost") is not None

    def fit(self, ctx: Context, coef: float) -> Any:
        import catboost

        params: dict[str, Any] = {"iterations": ctx.rounds, "learning_rate": LEARNING_RATE, "grow_policy": self.policy,
                                  "random_seed": ctx.seed, "thread_count": ctx.threads, "verbose": 0,
                                  "allow_writing_files": False}
        params.update({"depth": 5} if self.policy == "SymmetricTree" else {"max_leaves": LEAVES})
        if ctx.task == "multiclass":
            params["loss_function"] = "MultiClass"
        if coef > 0:
            c = ctx.costs / ctx.costs.mean()
            key = "per_object_feature_penalties" if self.penalty == "object" else "first_feature_use_penalties"
            params[key] = {i: float(v) for i, v in enumerate(c)}
            params["penalties_coefficient"] = coef
        model = catboost.CatBoostClassifier(**params)
        model.fit(ctx.X_train, ctx.y_train)
        return model

    def candidates(self, ctx: Context) -> list[dict[str, Any]]:
        out = []
        grid = CATBOOST_COEFS[self.penalty]
        for coef in [0.0, *(grid[::2] if ctx.quick else grid)]:
            model = self.fit(ctx, coef)
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "m.json")
                model.save_model(path, format="json")
                with open(path) as fh:
                    mj = json.load(fh)
            cand: dict[str, Any] = {"method": self.name, "knobs": {"coefficient": coef}}
            for part, X, y in (("val", ctx.X_valid, ctx.y_valid), ("test", ctx.X_test, ctx.y_test)):
                raw, used = catboost_walk(mj, X)
                ref = np.asarray(model.predict(X, prediction_type="RawFormulaVal"), float).reshape(len(X), -1)
                err = float(np.max(np.abs(raw - ref)))
                if err > 1e-4 * max(1.0, float(np.max(np.abs(ref)))):
                    raise RuntimeError(f"{self.name}: the JSON walk misses CatBoost's raw scores by {err:g}")
                cand[f"{part}_score"] = score(ctx.task, y, ref if ctx.task == "multiclass" else ref[:, -1])
                cand[f"{part}_cost"] = used_cost(ctx, used)
                cand["walk_max_abs_err"] = max(cand.get("walk_max_abs_err", 0.0), err)
            cand["constant"] = cand["val_cost"] == 0 and cand["test_cost"] == 0
            out.append(cand)
        return out


# ---------------------------------------------------------------- XGBoost
def xgboost_walk(dump: list[str], X: np.ndarray, n_groups: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Sum of leaf values per output and per-row used features of an XGBoost JSON dump.

    ``dump``: ``Booster.get_dump(dump_format="json")`` (features named ``f{i}``); tree ``t`` adds to
    output ``t % n_groups``. ``x < split_condition`` (float32) goes to ``yes``; NaN to ``missing``.
    The margin is this sum plus a constant base score.
    """
    X32 = np.asarray(X, np.float32)
    n = X32.shape[0]
    raw = np.zeros((n, n_groups))
    used = np.zeros((n, X32.shape[1]), bool)
    for t, text in enumerate(dump):
        root = json.loads(text)
        stack = [(root, np.arange(n))]
        while stack:
            node, rows = stack.pop()
            if rows.size == 0:
                continue
            if "leaf" in node:
                raw[rows, t % n_groups] += float(node["leaf"])
                continue
            f = int(str(node["split"]).lstrip("f"))
            used[rows, f] = True
            v = X32[rows, f]
            yes = v < np.float32(node["split_condition"])
            miss = np.isnan(v)
            kids = {int(c["nodeid"]): c for c in node["children"]}
            go_yes = np.where(miss, node["missing"] == node["yes"], yes)
            stack.append((kids[int(node["yes"])], rows[go_yes]))
            stack.append((kids[int(node["no"])], rows[~go_yes]))
    return raw, used


class XGBoostTopK(Adapter):
    """XGBoost (hist, lossguide, 31 leaves) on the k best features by its own total gain / cost."""

    name = "xgboost_topk"

    def available(self) -> bool:
        return importlib.util.find_spec("xgboost") is not None

    def fit(self, ctx: Context, keep: np.ndarray | None) -> Any:
        import xgboost as xgb

        X = ctx.X_train if keep is None else np.where(keep[None, :], ctx.X_train, np.nan)
        params: dict[str, Any] = {"eta": LEARNING_RATE, "max_leaves": LEAVES, "max_depth": 0,
                                  "grow_policy": "lossguide",
                                  "tree_method": "hist", "nthread": ctx.threads, "seed": ctx.seed}
        if ctx.task == "multiclass":
            params.update(objective="multi:softprob", num_class=ctx.n_classes)
        else:
            params["objective"] = "binary:logistic"
        return xgb.train(params, xgb.DMatrix(X, ctx.y_train, missing=np.nan), ctx.rounds)

    def candidates(self, ctx: Context) -> list[dict[str, Any]]:
        import xgboost as xgb

        full = self.fit(ctx, None)
        gains = full.get_score(importance_type="total_gain")
        gain = np.array([gains.get(f"f{i}", 0.0) for i in range(ctx.d)])
        order = gain_ranking(ctx, gain, True)
        groups = ctx.n_classes if ctx.task == "multiclass" else 1
        out = []
        for k in ctx.k_grid():
            keep = np.zeros(ctx.d, bool)
            keep[order[:k]] = True
            model = full if k == ctx.d else self.fit(ctx, keep)
            dump = model.get_dump(dump_format="json")
            knobs = {"k": k, "features": [ctx.names[i] for i in order[:k]]}
            cand: dict[str, Any] = {"method": self.name, "knobs": knobs}
            for part, X, y in (("val", ctx.X_valid, ctx.y_valid), ("test", ctx.X_test, ctx.y_test)):
                raw, used = xgboost_walk(dump, X, groups)
                margin = np.asarray(model.predict(xgb.DMatrix(X, missing=np.nan), output_margin=True), float)
                diff = margin.reshape(len(X), -1) - raw
                err = float(np.max(np.abs(diff - diff.mean(axis=0, keepdims=True))))
                if err > 1e-4 * max(1.0, float(np.max(np.abs(margin)))):
                    raise RuntimeError(f"{self.name}: the JSON walk misses XGBoost's margins by {err:g}")
                cand[f"{part}_score"] = score(ctx.task, y, margin.reshape(len(X), -1) if groups > 1 else margin)
                cand[f"{part}_cost"] = used_cost(ctx, used)
                cand["walk_max_abs_err"] = max(cand.get("walk_max_abs_err", 0.0), err)
            cand["constant"] = cand["val_cost"] == 0 and cand["test_cost"] == 0
            out.append(cand)
        return out


# ---------------------------------------------------------------- train_to_budget (budget_extras.cegb)
class TrainToBudget(Adapter):
    """``budget_extras.train_to_budget``: ONE search per seed, refined at every budget fraction of the
    unconstrained validation cost (``budgets=``); every candidate it trains is recorded, so choosing on
    validation at budget B (the harness rule) is ``result.best_at(B)``. The harness chooses every
    method's operating point on the validation rows, so the search runs with ``choose="valid"`` (its
    cross-validated choice on small tables is measured by ``benchmarks/train_to_budget/small_data.py``)."""

    name, family = "train_to_budget", "ours"
    extra: ClassVar[dict[str, Any]] = {"choose": "valid"}

    def available(self) -> bool:
        try:
            return importlib.util.find_spec("budget_extras.cegb") is not None
        except ModuleNotFoundError:
            return False

    def search(self, ctx: Context) -> tuple[Any, float]:
        """Run the search once on the context's split; return its result and the plain validation cost."""
        import warnings

        import lightgbm as lgb

        from budget_extras.cegb import train_to_budget

        full = lgb_cost(ctx, ctx.plain(), ctx.X_valid)
        train = lgb.Dataset(ctx.X_train, ctx.y_train, feature_name=list(ctx.names), free_raw_data=False,
                            params={"verbose": -1, "max_bin": 255})
        valid = lgb.Dataset(ctx.X_valid, ctx.y_valid, reference=train, free_raw_data=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = train_to_budget(ctx.lgb_params(), train, budget=full, valid_set=valid, costs=ctx.fc,
                                  num_boost_round=ctx.rounds, random_state=ctx.seed, progress=False,
                                  k_grid=[k for k in ctx.k_grid() if k < ctx.d],
                                  budgets=[f * full for f in BUDGET_FRACTIONS], keep_boosters=True,
                                  **self.extra)
        return res, full

    def candidates(self, ctx: Context) -> list[dict[str, Any]]:
        return self.every_candidate(ctx, self.search(ctx)[0])

    def every_candidate(self, ctx: Context, res: Any) -> list[dict[str, Any]]:
        """Every candidate of the search's result ``res`` trained on every training row."""
        out = []
        for c, b in zip(res.frontier, res.boosters, strict=True):
            if c.proxy:  # ranked the candidates on a row subsample; never returned
                continue
            knobs = {"family": c.family, "k": c.k, "tradeoff": c.tradeoff, "num_leaves": c.params.get("num_leaves")}
            out.append(lgb_candidate(ctx, self.name, b, knobs))
        return out


class TrainToBudgetFast(TrainToBudget):
    """``train_to_budget(search="fast")`` as a user calls it: the fork's learner budget, a few candidates per
    budget, chosen on the validation rows. With the default ``choose="auto"`` on these small tables each
    budget's pick is refit on the training and validation rows pooled (``result.picks``): one candidate per
    budget fraction, the search's model there (``knobs["budget_fraction"]``), ``val_score`` the validation
    score it was chosen by and ``val_cost`` its cost as the search measured it (the larger of the validation
    cost and the refit's on the pooled rows); ``valid_rows_score`` and ``valid_rows_cost`` are in-sample.
    Where the rows did not pool (no ``picks``), every candidate on the training rows, as the other searches."""

    name, family = "train_to_budget_fast", "ours"
    extra: ClassVar[dict[str, Any]] = {"search": "fast"}

    def candidates(self, ctx: Context) -> list[dict[str, Any]]:
        res, full = self.search(ctx)
        if not res.picks:
            return self.every_candidate(ctx, res)
        out = []
        for f in BUDGET_FRACTIONS:
            j = res.picks[f * full]
            c = res.frontier[j]
            knobs = {"budget_fraction": f, "family": c.family, "k": c.k, "tradeoff": c.tradeoff,
                     "num_leaves": c.params.get("num_leaves"), "rows": c.rows,
                     "refit_seconds": res.seconds.get("cv_refit", 0.0), "search_seconds": res.seconds["total"]}
            cand = lgb_candidate(ctx, self.name, res.boosters[j], knobs)
            cand["valid_rows_score"], cand["valid_rows_cost"] = cand["val_score"], cand["val_cost"]
            cand["val_score"], cand["val_cost"] = float(c.score), float(c.cost)
            out.append(cand)
        return out


class TrainToBudgetLean(TrainToBudget):
    """``train_to_budget(search="lean")``: every family on short proxies, the best refit; it chooses on
    the validation rows (it refuses ``choose="cv"``), so every non-proxy candidate is handed over."""

    name, family = "train_to_budget_lean", "ours"
    extra: ClassVar[dict[str, Any]] = {"search": "lean", "choose": "valid"}


class TrainToBudgetCV(TrainToBudget):
    """``train_to_budget`` as a user calls it: the default ``choose="auto"``, which on these small tables
    cross-validates a shortlist (5 folds of the training and validation rows pooled) and refits each
    budget's pick on the pooled rows. One candidate per budget fraction: the search's own pick
    (``result.best_at`` / ``booster_at``; where that pick has no refit, the best refit candidate within the
    budget, else the cheapest: ``knobs["pick"]`` says which), then every refit candidate once
    (``knobs["budget_fraction"]`` None). Each has ``val_score`` its mean fold score and ``val_cost`` its
    cost as the search measured it (the larger of the held-out and the refit's); test score and cost by
    the harness's one cost rule; ``valid_rows_score`` and ``valid_rows_cost`` are in-sample (the refit
    trained on the validation rows)."""

    name, family = "train_to_budget_cv", "ours"
    extra: ClassVar[dict[str, Any]] = {}

    def candidates(self, ctx: Context) -> list[dict[str, Any]]:
        from budget_extras.core import fits_budget

        res, full = self.search(ctx)
        n_proxy = sum(c.proxy for c in res.frontier)
        cands = res.frontier[n_proxy:]
        refit = [j for j in range(len(cands)) if res.boosters[n_proxy + j] is not None]
        out = []
        for f in BUDGET_FRACTIONS:
            c, how = res.best_at(f * full), "best_at"
            if c is None or res.boosters[n_proxy + cands.index(c)] is None:
                # booster_at would refuse (a refit raised a pick's cost so best_at moved to an unrefit
                # candidate): the best refit within the budget, as the search picked it; none: the cheapest refit
                fit = [j for j in refit if fits_budget(cands[j].cost, f * full)]
                c = cands[min(fit, key=lambda j: (-cands[j].score, cands[j].cost)) if fit else
                          min(refit, key=lambda j: (cands[j].cost, -cands[j].score))]
                how = "best_refit" if fit else "cheapest_refit"
            knobs = {"budget_fraction": f, "pick": how, "family": c.family, "k": c.k, "tradeoff": c.tradeoff,
                     "num_leaves": c.params.get("num_leaves"), "folds": c.folds, "rows": c.rows,
                     "cv_se": c.score_se}
            cand = lgb_candidate(ctx, self.name, res.boosters[n_proxy + cands.index(c)], knobs)
            # the refit trained on the validation rows: its scores there are in-sample, kept for reference only
            cand["valid_rows_score"], cand["valid_rows_cost"] = cand["val_score"], cand["val_cost"]
            cand["val_score"], cand["val_cost"] = float(c.score), float(c.cost)
            out.append(cand)
        for j in refit:  # every refit model (budget_fraction None): what other rules could pick among
            c = cands[j]
            knobs = {"budget_fraction": None, "pick": "refit", "family": c.family, "k": c.k, "tradeoff": c.tradeoff,
                     "num_leaves": c.params.get("num_leaves"), "folds": c.folds, "rows": c.rows, "cv_se": c.score_se}
            cand = lgb_candidate(ctx, self.name, res.boosters[n_proxy + j], knobs)
            cand["valid_rows_score"], cand["valid_rows_cost"] = cand["val_score"], cand["val_cost"]
            cand["val_score"], cand["val_cost"] = float(c.score), float(c.cost)
            out.append(cand)
        return out


def all_adapters() -> list[Adapter]:
    """Every competitor, in run order (cheap and essential first)."""
    return [PlainLGBM(), TopK(False), TopK(True), GreedyForward(), CEGB("lazy"), CEGB("coupled"),
            CEGB("lazy_coupled"), CEGB("groups"), CEGB("lazy_scaled"), CEGB("lazy_first"),
            BudgetPruneAdapter(),
            CatBoostAdapter("SymmetricTree", "object"), CatBoostAdapter("SymmetricTree", "first"),
            CatBoostAdapter("Lossguide", "object"), CatBoostAdapter("Lossguide", "first"), XGBoostTopK(),
            TrainToBudget(), TrainToBudgetFast(), TrainToBudgetLean(), TrainToBudgetCV()]
