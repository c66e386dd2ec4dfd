"""A boosted model at half its cost: FeatureDropRefit against the hand recipe and the unpruned model.

Usage::

    python -m benchmarks.budgetprune.gbdt_prune_recipe --data-dir ../shared/data [--quick] [--datasets magic heart ...]
        [--fraction 0.5] [--out benchmarks/results/gbdt_prune_recipe.json]

For each table: a plain GBDT (200 trees, learning_rate 0.05, num_leaves 31, num_threads 1, seed 0;
``benchmarks/budgetprune/gbdt_prune.py``'s model) is trained on the train split; the budget is 50% of its mean
per-row validation cost (the package's accounting, ``cost_report``). Printed side by side, on the
test split: the unpruned model's score, the hand recipe's and ``FeatureDropRefit``'s (refit on
train, choices on validation), their test costs, and the CPU time of each fit in trainings: CPU
seconds (``time.process_time``, one thread; ``FeatureDropRefit``: the fastest of two fits) over the
CPU seconds of one plain ``lgb.train`` with the model's parameters on the same training rows
(Dataset construction included; the fastest of two).

**The hand recipe** is what a user does with LightGBM alone: buy the features in the order of
the model's gain importance, each one whose masked validation cost still fits the budget (the
others set to NaN, never bought: they cost 0; a feature that does not fit is skipped), and
refit the leaves on the masked training rows with ``Booster.refit(X, y, decay_rate=0)``;
predictions mask the same features. Its fit time counts its cost evaluations (``cost_report``,
one per feature) and the refit.

Tables (every table of the shared data folder, plus one built with >= 80 features):

* thyroid, heart, adult, magic: ``gbdt_prune.load`` (real costs on thyroid and heart);
* adult_onehot (>= 80 features): adult's splits with every string column one-hot encoded
  (``pandas.get_dummies``; 108 columns);
* letter: letters >= 'N' against the rest (Adapt-GBRT's binary task), 60/20/20 stratified;
* higgs: LightGBM's Higgs example, its 7,000 training rows split 75/25 into train/validation,
  its 500 test rows as test;
* covertype: the 7 classes, a 50,000-row random sample, 54 columns, 60/20/20 stratified;
* yahoo (regression, 300 features): the Yahoo! LTR sample's relevance label (0-4) as an l2
  target, its training file split 75/25, its test file as test;
* elevation (regression): Covertype's elevation from the other columns (wilderness area as a
  category, soil type as its code), a 20,000-row random sample, 60/20/20.

Costs: thyroid and heart have Turney's test costs (thyroid's FTI costs TT4 + T4U); the others
have tiered costs, the features sorted by the full model's gain importance and cut into thirds
costing 10 / 5 / 1 (most important first). Scores: AUC (binary), accuracy (multiclass), R^2
(regression). ``--quick`` runs heart, magic, adult_onehot and elevation (results under
``benchmarks/results/quick/``). Results go to ``benchmarks/results/gbdt_prune_recipe.json``, rewritten
after each table.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.budgetprune import gbdt_prune as gp
from budget_extras.budgetprune import FeatureDropRefit
from budget_extras.core import TreeEnsemble

ROOT = Path(__file__).resolve().parents[2]
ALL = ["thyroid", "heart", "adult", "magic", "adult_onehot", "letter", "higgs", "covertype", "yahoo", "elevation"]
QUICK = ["heart", "magic", "adult_onehot", "elevation"]
REGRESSION = -1  # n_class of a regression table


def _split3(X: pd.DataFrame, y: np.ndarray, stratify: bool = True) -> list[Any]:
    strat = y if stratify else None
    Xa, Xr, ya, yr = train_test_split(X, y, test_size=0.4, stratify=strat, random_state=0)
    Xb, Xc, yb, yc = train_test_split(Xr, yr, test_size=0.5, stratify=yr if stratify else None, random_state=0)
    return [(Xa, ya), (Xb, yb), (Xc, yc)]


def _adult_onehot(data_dir: Path) -> list[Any]:
    splits, _, _ = gp.load("adult", data_dir)
    frames = [X for X, _ in splits]
    both = pd.get_dummies(pd.concat(frames, keys=range(3)), dtype=np.float64)
    both.columns = [str(c).replace(" ", "_").replace("-", "_").replace("&", "_") for c in both.columns]
    return [(both.loc[i], y) for i, (_, y) in enumerate(splits)]


def load(name: str, data_dir: Path) -> tuple[list[Any], pd.Series | None, int]:
    """[(X_tr, y_tr), (X_va, y_va), (X_te, y_te)], costs (None: tiered) and classes (-1: regression)."""
    if name in ("thyroid", "heart", "adult", "magic"):
        return gp.load(name, data_dir)
    sys.path.insert(0, str(data_dir))
    import load_datasets as ld  # the loaders shipped with the data

    if name == "adult_onehot":
        return _adult_onehot(data_dir), None, 2
    if name == "letter":
        X, y = ld.load_letter()
        X = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
        return _split3(X, (y >= "N").astype(int)), None, 2
    if name == "higgs":
        Xtr, ytr, Xte, yte = ld.load_higgs_lightgbm()
        cols = [f"f{i}" for i in range(Xtr.shape[1])]
        Xa, Xb, ya, yb = train_test_split(pd.DataFrame(Xtr, columns=cols), ytr, test_size=0.25, stratify=ytr,
                                          random_state=0)
        return [(Xa, ya), (Xb, yb), (pd.DataFrame(Xte, columns=cols), yte)], None, 2
    if name == "covertype":
        X, y = ld.load_covertype()
        rows = np.random.default_rng(0).choice(len(y), 50_000, replace=False)
        return _split3(X.iloc[rows].reset_index(drop=True), y[rows] - 1), None, 7
    if name == "yahoo":
        Xtr, ytr, _, Xte, yte, _ = ld.load_yahoo_ltr_sample()
        cols = [f"f{i}" for i in range(Xtr.shape[1])]
        Xa, Xb, ya, yb = train_test_split(pd.DataFrame(Xtr, columns=cols), ytr, test_size=0.25, random_state=0)
        return [(Xa, ya), (Xb, yb), (pd.DataFrame(Xte, columns=cols), yte)], None, REGRESSION
    if name == "elevation":
        X, _ = ld.load_covertype(compact=True)
        X = X.sample(20_000, random_state=0).reset_index(drop=True)
        y = X.pop("Elevation").to_numpy(np.float64)
        X["Wilderness_Area"] = X["Wilderness_Area"].astype("category")
        return _split3(X, y, stratify=False), None, REGRESSION
    raise ValueError(f"unknown dataset {name!r}; choose from {ALL}")


def params_for(n_class: int) -> dict[str, Any]:
    if n_class == REGRESSION:
        return dict(gp.PARAMS, objective="regression")
    if n_class == 2:
        return dict(gp.PARAMS, objective="binary")
    return dict(gp.PARAMS, objective="multiclass", num_class=n_class)


def train_cpu(X: pd.DataFrame, y: np.ndarray, n_class: int, repeats: int = 2) -> tuple[lgb.Booster, float]:
    """The model and the fastest CPU time of ``repeats`` plain trainings (Dataset construction included)."""
    best, booster = np.inf, None
    for _ in range(repeats):
        t0 = time.process_time()
        booster = lgb.train(params_for(n_class), lgb.Dataset(X, y), num_boost_round=gp.ROUNDS)
        best = min(best, time.process_time() - t0)
    assert booster is not None
    return booster, best


def score(raw: np.ndarray, y: np.ndarray, n_class: int) -> float:
    return float(r2_score(y, raw)) if n_class == REGRESSION else gp.score(raw, y, n_class)


def masked(X: pd.DataFrame, drop: list[str]) -> pd.DataFrame:
    """``X`` with the columns ``drop`` set to NaN (categorical columns keep their dtype)."""
    X = X.copy()
    for c in drop:
        X[c] = np.nan if not isinstance(X[c].dtype, pd.CategoricalDtype) else pd.Categorical(
            [None] * len(X), categories=X[c].cat.categories)
    return X


def recipe(booster: lgb.Booster, splits: list[Any], costs: pd.Series, budget: float, n_class: int) -> dict[str, Any]:
    """Run the hand recipe: buy the features by gain while their masked cost fits, then ``Booster.refit``."""
    (Xa, ya), (Xb, yb), (Xc, yc) = splits
    t0 = time.process_time()
    gain = pd.Series(booster.feature_importance("gain"), index=booster.feature_name())
    used = [f for f in gain.sort_values(ascending=False, kind="stable").index if gain[f] > 0]
    ens = TreeEnsemble.from_booster(booster)

    def masked_cost(k: int, keep: list[str]) -> tuple[float, list[str], pd.Series]:
        drop = [f for f in booster.feature_name() if f not in keep[:k]]
        free = costs.copy()
        free[drop] = 0.0  # masked features are never bought
        return gp.mean_cost(ens, masked(Xb, drop), free), drop, free

    kept: list[str] = []
    for f in used:  # the most important first; a feature the budget cannot buy is skipped
        if masked_cost(len(kept) + 1, [*kept, f])[0] <= budget * (1 + 1e-9):
            kept.append(f)
    cost, drop, free = masked_cost(len(kept), kept)
    refit = booster.refit(masked(Xa, drop), np.asarray(ya), decay_rate=0.0)
    t = time.process_time() - t0
    return {
        "k": len(kept), "kept": kept, "valid_cost": cost, "cpu_s": t,
        "test_cost": gp.mean_cost(refit, masked(Xc, drop), free),
        "valid_score": score(refit.predict(masked(Xb, drop), raw_score=True), yb, n_class),
        "test_score": score(refit.predict(masked(Xc, drop), raw_score=True), yc, n_class),
    }


def run(name: str, data_dir: Path, fraction: float) -> dict[str, Any]:
    splits, costs, n_class = load(name, data_dir)
    (Xa, ya), (Xb, yb), (Xc, yc) = splits
    booster, t_train = train_cpu(Xa, ya, n_class)
    gain = pd.Series(booster.feature_importance("gain"), index=booster.feature_name()).sort_values(ascending=False)
    if costs is None:
        tiers = np.array_split(np.array(gain.index), 3)
        costs = pd.Series({f: c for part, c in zip(tiers, (10.0, 5.0, 1.0), strict=True) for f in part})
    costs = costs.reindex(booster.feature_name()).astype(float)
    full_va = gp.mean_cost(booster, Xb, costs)
    budget = fraction * full_va
    scoring = "r2" if n_class == REGRESSION else "roc_auc" if n_class == 2 else "accuracy"
    t_fit = np.inf
    for _ in range(2):  # the fastest of two fits (the same model), as for the trainings
        est = FeatureDropRefit(booster, budget=budget, costs=costs.to_dict(), scoring=scoring)
        t0 = time.process_time()
        est.fit(Xa, ya, X_valid=Xb, y_valid=yb)
        t_fit = min(t_fit, time.process_time() - t0)
    rec = recipe(booster, splits, costs, budget, n_class)
    rec["trainings"] = rec["cpu_s"] / t_train
    return {
        "dataset": name, "n_train": len(ya), "n_valid": len(yb), "n_test": len(yc), "n_features": Xa.shape[1],
        "n_class": n_class, "metric": "r2" if n_class == REGRESSION else "auc" if n_class == 2 else "accuracy",
        "budget": budget, "fraction": fraction, "train_cpu_s": t_train,
        "unpruned": {"valid_cost": full_va, "test_cost": gp.mean_cost(booster, Xc, costs),
                     "test_score": score(booster.predict(Xc, raw_score=True), yc, n_class)},
        "method": {"valid_cost": est.cost_, "test_cost": gp.mean_cost(est.ensemble_, Xc, costs),
                   "valid_score": est.score_, "test_score": score(est.predict_raw(Xc), yc, n_class),
                   "dropped": list(est.dropped_features_), "cpu_s": t_fit, "trainings": t_fit / t_train,
                   "n_refits": est.result_.n_refits, "message": est.result_.message,
                   "candidate": getattr(est, "candidate_", None)},
        "recipe": rec,
    }


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| dataset (metric, features) | unpruned | hand recipe | FeatureDropRefit | method - recipe | "
        "test cost: method / recipe / unpruned | fit, trainings: method / recipe |\n"
        "|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for r in results:
        u, m, c = r["unpruned"], r["method"], r["recipe"]
        rows.append(
            f"| {r['dataset']} ({r['metric']}, {r['n_features']}) | {u['test_score']:.4f} | {c['test_score']:.4f} | "
            f"{m['test_score']:.4f} | {m['test_score'] - c['test_score']:+.4f} | "
            f"{m['test_cost']:.3g} / {c['test_cost']:.3g} / {u['test_cost']:.3g} | "
            f"{m['trainings']:.2f} / {c['trainings']:.2f} |"
        )
    return head + "\n".join(rows)


def warm_up() -> None:
    """One tiny fit per objective, so that no fit time includes numba's compilation."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "c"])
    for n_class in (2, 3, REGRESSION):
        y = (X["a"] > 0).to_numpy().astype(int) + (n_class == 3) * (X["b"] > 0).to_numpy()
        b, _ = train_cpu(X, y.astype(float) if n_class == REGRESSION else y, n_class, repeats=1)
        FeatureDropRefit(b, budget=1.5).fit(X, y, X_valid=X, y_valid=y)


def main(argv: list[str] | None = None) -> None:
    ap = script_parser(__doc__, result_name="gbdt_prune_recipe", quick={"datasets": QUICK})
    ap.add_argument("--datasets", nargs="+", choices=ALL, default=ALL)
    ap.add_argument("--fraction", type=float, default=0.5)
    args = parse(ap, argv)
    warnings.filterwarnings("ignore", category=UserWarning)
    warm_up()
    results = []
    for name in args.datasets:
        r = run(name, args.data_dir, args.fraction)
        results.append(r)
        print(table([r]).splitlines()[-1], flush=True)
        write_results(args.out, {"results": json.loads(json.dumps(results, default=float))},
                      "lightgbm", "numpy")
    print(table(results))


if __name__ == "__main__":
    main()
