"""Boosted models made cheaper post hoc: FeatureDropRefit against retraining on the top-k features.

Usage::

    python -m benchmarks.budgetprune.gbdt_prune --data-dir ../shared/data [--datasets thyroid heart adult magic]
        [--fraction 0.5] [--skip-topk] [--quick] [--out benchmarks/results/gbdt_prune.json]

For each dataset: a plain GBDT (200 trees, learning_rate 0.05, num_leaves 31, num_threads 1,
seed 0) is trained on a train split; the budget is 50% of its mean per-row validation cost (the
package's accounting, ``cost_report``: lazy acquisition of the features on each row's paths).
Reported on the test split: the unpruned model's score (AUC for binary, accuracy for multiclass),
``FeatureDropRefit``'s score and cost (refit on train, choices on validation), and the user's
alternative: a GBDT retrained (same parameters) on the top-k features by the full model's gain
importance, the largest k whose validation cost fits the budget (chosen on validation). Fit time
is FeatureDropRefit's wall time divided by the wall time of one training of the model.

Data and costs:

* thyroid (UCI ann-thyroid, 3 classes): the original train file split 75/25 (stratified, seed 0)
  into train/validation, the original test file as test; Turney's per-feature costs; FTI, which
  has no cost line (it is computed from TT4 and T4U), costs TT4 + T4U = 25.92.
* heart (Cleveland, binary): 303 rows split 60/20/20 (stratified, seed 0); Turney's per-test costs
  in USD as independent per-feature lazy costs; string columns as pandas categoricals.
* adult (UCI, binary): adult.data split 80/20 (stratified, seed 0) into train/validation,
  adult.test as test; string columns as pandas categoricals.
* magic (UCI MAGIC gamma telescope, binary): 60/20/20 (stratified, seed 0).

adult and magic have no real costs: tiered costs by the full model's gain importance, the
features sorted by decreasing importance and cut into thirds (``numpy.array_split``): the most
important third costs 10, the middle third 5, the least important third 1.

``--quick``: heart only. The results file is rewritten after each dataset.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import train_test_split

from benchmarks._runner import parse, script_parser, write_results
from budget_extras.budgetprune import FeatureDropRefit
from budget_extras.core import TreeEnsemble, cost_report

ROOT = Path(__file__).resolve().parents[2]
PARAMS = dict(learning_rate=0.05, num_leaves=31, num_threads=1, verbose=-1, seed=0, deterministic=True)
ROUNDS = 200


def _cats(d: pd.DataFrame) -> pd.DataFrame:
    d = d.copy()
    for c in d.columns:
        if not pd.api.types.is_numeric_dtype(d[c]):
            d[c] = d[c].astype("category")
    return d


def load(name: str, data_dir: Path) -> tuple[list[Any], pd.Series | None, int]:
    """[(X_tr, y_tr), (X_va, y_va), (X_te, y_te)], costs (None: tiered) and number of classes."""
    sys.path.insert(0, str(data_dir))
    import load_datasets as ld  # the loaders shipped with the data

    if name == "thyroid":
        Xtr, ytr, Xte, yte, costs = ld.load_thyroid_costs()
        cols = list(costs.index)
        costs = costs.copy()
        costs["FTI"] = costs["TT4"] + costs["T4U"]
        X = pd.DataFrame(Xtr, columns=cols)
        Xa, Xb, ya, yb = train_test_split(X, ytr - 1, test_size=0.25, stratify=ytr, random_state=0)
        return [(Xa, ya), (Xb, yb), (pd.DataFrame(Xte, columns=cols), yte - 1)], costs, 3
    if name == "heart":
        X, y, costs = ld.load_heart_costs()
        X = _cats(X)
        Xa, Xr, ya, yr = train_test_split(X, y, test_size=0.4, stratify=y, random_state=0)
        Xb, Xc, yb, yc = train_test_split(Xr, yr, test_size=0.5, stratify=yr, random_state=0)
        return [(Xa, ya), (Xb, yb), (Xc, yc)], costs, 2
    if name == "adult":
        tr, te = ld.load_adult()
        cats = [c for c in tr.columns if not pd.api.types.is_numeric_dtype(tr[c])]
        both = pd.concat([tr, te], keys=["tr", "te"])
        for c in cats:  # one category list for train and test
            both[c] = both[c].astype("category")
        tr, te = both.loc["tr"], both.loc["te"]
        y, yte = tr.pop("income").to_numpy(), te.pop("income").to_numpy()
        tr.columns = te.columns = [c.replace("-", "_") for c in tr.columns]
        Xa, Xb, ya, yb = train_test_split(tr, y, test_size=0.2, stratify=y, random_state=0)
        return [(Xa, ya), (Xb, yb), (te, yte)], None, 2
    if name == "magic":
        X, y = ld.load_magic()
        X = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
        Xa, Xr, ya, yr = train_test_split(X, y, test_size=0.4, stratify=y, random_state=0)
        Xb, Xc, yb, yc = train_test_split(Xr, yr, test_size=0.5, stratify=yr, random_state=0)
        return [(Xa, ya), (Xb, yb), (Xc, yc)], None, 2
    raise ValueError(name)


def train(X: pd.DataFrame, y: np.ndarray, n_class: int) -> tuple[lgb.Booster, float]:
    if n_class == 2:
        params = dict(PARAMS, objective="binary")
    else:
        params = dict(PARAMS, objective="multiclass", num_class=n_class)
    t0 = time.perf_counter()
    b = lgb.train(params, lgb.Dataset(X, y), num_boost_round=ROUNDS)
    return b, time.perf_counter() - t0


def score(raw: np.ndarray, y: np.ndarray, n_class: int) -> float:
    if n_class == 2:
        return float(roc_auc_score(y, raw))
    return float(accuracy_score(y, np.argmax(raw, axis=1)))


def mean_cost(model: Any, X: pd.DataFrame, costs: pd.Series) -> float:
    ens = model if isinstance(model, TreeEnsemble) else TreeEnsemble.from_booster(model)
    return float(cost_report(ens, X, costs.reindex(list(ens.feature_names)).to_dict()).total_cost.mean())


def top_k(splits: list[Any], costs: pd.Series, order: list[str], budget: float, n_class: int) -> dict[str, Any]:
    """Largest k whose retrained model's validation cost fits the budget (k from all features down)."""
    (Xa, ya), (Xb, yb), (Xc, yc) = splits
    tried = []
    for k in range(len(order), 0, -1):
        cols = order[:k]
        b, _ = train(Xa[cols], ya, n_class)
        c_va = mean_cost(b, Xb[cols], costs)
        tried.append({"k": k, "valid_cost": c_va})
        if c_va <= budget * (1 + 1e-9):
            return {
                "k": k, "features": cols, "valid_cost": c_va, "test_cost": mean_cost(b, Xc[cols], costs),
                "valid_score": score(b.predict(Xb[cols], raw_score=True), yb, n_class),
                "test_score": score(b.predict(Xc[cols], raw_score=True), yc, n_class), "tried": tried,
            }
    return {"k": 0, "tried": tried}


def prepare(name: str, data_dir: Path) -> tuple[list[Any], pd.Series, int, lgb.Booster, float, list[str]]:
    """Splits, costs (tiered where the data has none), classes, the trained model, its training time, gain order."""
    splits, costs, n_class = load(name, data_dir)
    (Xa, ya), _, _ = splits
    booster, t_train = train(Xa, ya, n_class)
    gain = pd.Series(booster.feature_importance("gain"), index=booster.feature_name()).sort_values(ascending=False)
    order = list(gain.index)
    if costs is None:
        tiers = np.array_split(np.array(order), 3)
        costs = pd.Series({f: c for part, c in zip(tiers, (10.0, 5.0, 1.0), strict=True) for f in part})
    return splits, costs.reindex(booster.feature_name()).astype(float), n_class, booster, t_train, order


def run(name: str, data_dir: Path, fraction: float, topk: bool = True) -> dict[str, Any]:
    splits, costs, n_class, booster, t_train, order = prepare(name, data_dir)
    (Xa, ya), (Xb, yb), (Xc, yc) = splits
    cost_dict = costs.to_dict()
    full_va, full_te = mean_cost(booster, Xb, costs), mean_cost(booster, Xc, costs)
    budget = fraction * full_va
    est = FeatureDropRefit(booster, budget=budget, costs=cost_dict, scoring="roc_auc" if n_class == 2 else "accuracy")
    t0 = time.perf_counter()
    est.fit(Xa, ya, X_valid=Xb, y_valid=yb)
    t_fit = time.perf_counter() - t0
    out = {
        "dataset": name, "n_train": len(ya), "n_valid": len(yb), "n_test": len(yc), "n_features": Xa.shape[1],
        "n_class": n_class, "metric": "auc" if n_class == 2 else "accuracy", "costs": cost_dict,
        "budget": budget, "fraction": fraction, "train_time_s": t_train,
        "unpruned": {"valid_cost": full_va, "test_cost": full_te,
                     "test_score": score(booster.predict(Xc, raw_score=True), yc, n_class)},
        "pruned": {"valid_cost": est.cost_, "test_cost": mean_cost(est.ensemble_, Xc, costs),
                   "valid_score": est.score_, "test_score": score(est.predict_raw(Xc), yc, n_class),
                   "dropped": list(est.dropped_features_), "fit_time_s": t_fit, "fit_over_train": t_fit / t_train,
                   "n_steps": est.result_.n_steps, "n_refits": est.result_.n_refits, "message": est.result_.message},
        "top_k": top_k(splits, costs, order, budget, n_class) if topk else {"k": 0, "skipped": True},
    }
    return out


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| dataset | metric | unpruned test score (cost) | budget | FeatureDropRefit test score (test cost) | "
        "top-k retrain test score (k, test cost) | drop-refit - unpruned | drop-refit - top-k | fit time / training |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for r in results:
        u, p, k = r["unpruned"], r["pruned"], r["top_k"]
        ks = f"{k['test_score']:.4f} ({k['k']}, {k['test_cost']:.3g})" if k["k"] else "none fits"
        dk = f"{p['test_score'] - k['test_score']:+.4f}" if k["k"] else "-"
        rows.append(
            f"| {r['dataset']} | {r['metric']} | {u['test_score']:.4f} ({u['test_cost']:.3g}) | {r['budget']:.3g} | "
            f"{p['test_score']:.4f} ({p['test_cost']:.3g}) | {ks} | {p['test_score'] - u['test_score']:+.4f} | {dk} | "
            f"{p['fit_over_train']:.2f} ({p['fit_time_s']:.2f} s / {r['train_time_s']:.2f} s) |"
        )
    return head + "\n".join(rows)


def warm_up() -> None:
    """One tiny fit per objective, so that no reported fit time includes numba's compilation."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "c"])
    for n_class in (2, 3):
        y = (X["a"] > 0).to_numpy().astype(int) + (n_class == 3) * (X["b"] > 0).to_numpy()
        b, _ = train(X, y, n_class)
        FeatureDropRefit(b, budget=1.5).fit(X, y, X_valid=X, y_valid=y)


def main(argv: list[str] | None = None) -> None:
    ap = script_parser(__doc__, result_name="gbdt_prune", quick={"datasets": ["heart"]})
    ap.add_argument("--datasets", nargs="+", default=["thyroid", "heart", "adult", "magic"])
    ap.add_argument("--fraction", type=float, default=0.5)
    ap.add_argument("--skip-topk", action="store_true", help="do not retrain the top-k baseline")
    args = parse(ap, argv)
    warm_up()
    results = []
    for name in args.datasets:
        r = run(name, args.data_dir, args.fraction, not args.skip_topk)
        results.append(r)
        print(json.dumps({k: r[k] for k in ("dataset", "unpruned", "pruned")}, default=str)[:600], flush=True)
        write_results(args.out, {"lightgbm": lgb.__version__,
                                 "results": json.loads(json.dumps(results, default=float))}, "lightgbm", "numpy")
    print(table(results))


if __name__ == "__main__":
    main()
