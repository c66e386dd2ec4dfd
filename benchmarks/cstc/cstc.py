"""Benchmark: CSTC beside CEGB and a cost-penalized booster on data with feature costs.

Datasets (read from --data-dir, the folder of the shared benchmark data):
  thyroid  ann-thyroid, "normal" vs "hyper- or hypothyroid"; Turney's test costs, TT4/T4U/FTI one
           group costing TT4 + T4U (FTI is computed from them)
  heart    Cleveland heart disease; Turney's costs, exang/oldpeak/slope one exercise test (87.30 once)
  magic    MAGIC gamma telescope; every feature costs 1

Methods (one adapter class each, all interleaved per dataset and seed):
  CSTC-stumps budget_extras.CSTC (task="binary", depth 3) on 200 squared-loss LightGBM stumps, lam swept
  CSTC-depth3 the same on 100 squared-loss LightGBM trees of depth 3
  CEGB        upstream LightGBM with cegb_tradeoff / cegb_penalty_feature_lazy, tradeoff swept
  penalized   LightGBM with feature_penalty = 1 / (1 + gamma * cost / median cost), gamma swept
              (gamma = 0 is plain LightGBM, the full-cost reference)

Cost of a row: the features on its paths through the trees it evaluates (boosters: all trees; CSTC:
the weak learners with nonzero weight on the CSTC nodes it visits), priced by the dataset's
FeatureCosts (budget_extras' unified accounting: cost_report / features_used + row_cost).

Usage: python -m benchmarks.cstc.cstc --data-dir DIR [--out benchmarks/results/cstc.json] [--plots docs/img]
[--quick] (``--quick``: heart, one split, no quadrants, no plots)
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from benchmarks._runner import parse, script_parser, write_results
from budget_extras import CSTC, FeatureCosts, TreeEnsemble, cost_report
from budget_extras.cstc._features import _read_weak_learners, _tree_outputs
from budget_extras.cstc._synthetic import QUADRANT_COSTS, make_quadrants

# ---------------------------------------------------------------------------- cost rules


def alone_costs(costs: FeatureCosts) -> np.ndarray:
    """Cost of buying each feature by itself (its whole group for grouped features)."""
    return costs.row_cost(np.eye(costs.n_features, dtype=bool))


# -------------------------------------------------------------------------------- data


@dataclass
class Data:
    name: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    costs: FeatureCosts
    feature_names: list[str]


THYROID_COLS = ["age", "sex", "on_thyroxine", "query_on_thyroxine", "on_antithyroid_medication", "sick",
                "pregnant", "thyroid_surgery", "I131_treatment", "query_hypothyroid", "query_hyperthyroid",
                "lithium", "goitre", "tumor", "hypopituitary", "psych", "TSH", "T3", "TT4", "T4U", "FTI"]


def load_thyroid(d: str) -> Data:
    def rd(fn: str) -> tuple[np.ndarray, np.ndarray]:
        a = np.loadtxt(os.path.join(d, "thyroid_costs", fn))
        return a[:, :21], (a[:, 21].astype(int) != 3).astype(int)

    X, y = rd("ann-train.data")
    Xt, yt = rd("ann-test.data")
    c: dict[str, float] = {}
    with open(os.path.join(d, "thyroid_costs", "ann-thyroid.cost")) as f:
        for line in f:
            if ":" in line:
                k, v = line.split(":")
                c[k.strip()] = float(v)
    lazy = np.array([c.get(k, 0.0) for k in THYROID_COLS])
    # FTI is computed from TT4 and T4U: one acquisition group costing both tests (the core's
    # convention; a row using only TT4 or only T4U is charged the whole group, an upper bound)
    panel = "TT4+T4U+FTI"
    groups = [panel if k in ("TT4", "T4U", "FTI") else None for k in THYROID_COLS]
    costs = FeatureCosts(lazy, groups=groups, group_cost={panel: c["TT4"] + c["T4U"]})
    return Data("thyroid", X, y, Xt, yt, costs, THYROID_COLS)


def load_heart(d: str, seed: int) -> Data:
    df = pd.read_csv(os.path.join(d, "heart_costs", "heartdisease.csv"))
    y = df.pop("diagnosis").to_numpy().astype(int)
    for col in df.columns:
        if not pd.api.types.is_numeric_dtype(df[col]):
            df[col] = df[col].astype("category").cat.codes.astype(float)
    cost = pd.read_csv(os.path.join(d, "heart_costs", "heart_cost.csv")).set_index("feature")["cost_usd"]
    names = list(df.columns)
    lazy = cost.reindex(names).to_numpy(dtype=float)
    # exang / oldpeak / slope come from one exercise test: one group, paid once (max = 87.30)
    groups = ["exercise_test" if k in ("exang", "oldpeak", "slope") else None for k in names]
    X, Xt, y, yt = train_test_split(df.to_numpy(float), y, test_size=0.3, random_state=seed, stratify=y)
    return Data("heart", X, y, Xt, yt, FeatureCosts(lazy, groups=groups), names)


def load_magic(d: str, seed: int) -> Data:
    df = pd.read_csv(os.path.join(d, "magic04", "magic04.data"), header=None)
    y = (df.pop(10) == "g").astype(int).to_numpy()
    X, Xt, y, yt = train_test_split(df.to_numpy(float), y, train_size=6000, test_size=6000,
                                    random_state=seed, stratify=y)
    return Data("magic", X, y, Xt, yt, FeatureCosts.uniform(10), [f"f{i}" for i in range(10)])


# --------------------------------------------------------------------------- adapters


def row_costs(booster: lgb.Booster, X: np.ndarray, costs: FeatureCosts) -> np.ndarray:
    """Per-row acquisition cost of a booster through the core's unified accounting."""
    ens = TreeEnsemble.from_booster(booster)
    # correctness gate: the core's reading of the trees reproduces LightGBM's raw score
    raw = booster.predict(X, raw_score=True)
    assert np.allclose(ens.predict_raw(X), raw, atol=1e-9), "TreeEnsemble mismatch"
    return cost_report(ens, X, costs, feature_counts=False).acquisition_cost


BOOST = {"objective": "binary", "learning_rate": 0.1, "num_leaves": 8, "max_depth": 3,
         "min_data_in_leaf": 5, "verbose": -1, "num_threads": 1, "deterministic": True}
N_TREES = 100


class CEGBAdapter:
    name = "CEGB"
    settings: tuple[float, ...] = (0.0, 0.003, 0.01, 0.02, 0.04, 0.07, 0.1, 0.3)

    def setup(self, data: Data, fit: tuple[np.ndarray, np.ndarray], seed: int) -> None:
        self.data, self.fit_data, self.seed = data, fit, seed

    def params(self, s: float) -> dict[str, Any]:
        c = alone_costs(self.data.costs)
        return {**BOOST, "seed": self.seed, "cegb_tradeoff": s,
                "cegb_penalty_feature_lazy": (c / np.median(c[c > 0])).tolist()}

    def run(self, s: float) -> dict[str, Any]:
        d = self.data
        t0 = time.perf_counter_ns()
        bst = lgb.train(self.params(s), lgb.Dataset(*self.fit_data), num_boost_round=N_TREES)
        t1 = time.perf_counter_ns()
        acc = float(np.mean((bst.predict(d.X_test) > 0.5) == d.y_test))
        return {"setting": s, "accuracy": acc, "cost": float(row_costs(bst, d.X_test, d.costs).mean()),
                "fit_s": (t1 - t0) / 1e9}


class PenalizedAdapter(CEGBAdapter):
    name = "penalized"
    settings: tuple[float, ...] = (0.0, 1.0, 10.0, 100.0, 1e3, 1e4)

    def params(self, s: float) -> dict[str, Any]:
        c = alone_costs(self.data.costs)
        pen = 1.0 / (1.0 + s * c / np.median(c[c > 0]))
        return {**BOOST, "seed": self.seed, "feature_penalty": pen.tolist()}


class CSTCAdapter(CEGBAdapter):
    settings: tuple[float, ...] = (0.003, 0.01, 0.02, 0.04, 0.07, 0.1, 0.2)

    def __init__(self, weak_depth: int, n_weak: int) -> None:
        self.weak_depth, self.n_weak = weak_depth, n_weak
        self.name = "CSTC-stumps" if weak_depth == 1 else f"CSTC-depth{weak_depth}"

    def setup(self, data: Data, fit: tuple[np.ndarray, np.ndarray], seed: int,
              valid: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        super().setup(data, fit, seed)
        self.valid = valid
        Xf, yf = fit
        params = {**BOOST, "objective": "regression", "seed": seed, "max_depth": self.weak_depth,
                  "num_leaves": 2**self.weak_depth}
        self.gbrt = lgb.train(params, lgb.Dataset(Xf, yf.astype(float)), num_boost_round=self.n_weak)
        self.full_cost = float(row_costs(self.gbrt, data.X_test, data.costs).mean())

    def run(self, s: float) -> dict[str, Any]:
        d = self.data
        # lam per unit of the median (positive) feature cost, so one grid serves every dataset
        c = alone_costs(d.costs)
        lam = s / float(np.median(c[c > 0]))
        model = CSTC(self.gbrt, costs=d.costs, depth=3, lam=lam, rho=1e-3, task="binary", random_state=self.seed)
        t0 = time.perf_counter_ns()
        Xv, yv = self.valid if self.valid is not None else (None, None)
        model.fit(*self.fit_data, X_valid=Xv, y_valid=yv)
        t1 = time.perf_counter_ns()
        rep = model.cost_report(d.X_test)
        # correctness gate: a CSTC row never pays more than the whole feature map
        full = row_costs(self.gbrt, d.X_test, d.costs)
        assert np.all(rep.acquisition_cost <= full + 1e-9), "CSTC row cost above the feature map's"
        acc = float(np.mean(model.predict(d.X_test) == d.y_test))
        return {"setting": s, "lam": lam, "accuracy": acc, "cost": float(rep.acquisition_cost.mean()),
                "fit_s": (t1 - t0) / 1e9, "n_nodes": int(model.active_.sum()),
                "trees_evaluated": float(rep.trees_evaluated.mean()), "status": model.result_.message}


# ------------------------------------------------------- the paper's synthetic data (5.1)


def run_quadrants(seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    X, y, q = make_quadrants(3000, rng)
    Xv, yv, _ = make_quadrants(1000, rng)
    Xt, yt, qt = make_quadrants(5000, rng)
    costs = QUADRANT_COSTS
    gbrt = lgb.train({"objective": "regression", "max_depth": 1, "num_leaves": 2, "learning_rate": 0.1,
                      "verbose": -1, "num_threads": 1, "seed": seed}, lgb.Dataset(X, y), 200)
    wl = _read_weak_learners(gbrt)
    phi, phi_t = _tree_outputs(wl, X), _tree_outputs(wl, Xt)
    pred = np.zeros_like(yt)
    for k in range(4):  # oracle tree: true quadrant, least squares on cheap + own expert (cost 12)
        cols = np.flatnonzero(wl.tree_features[[0, 1, 2 + k]].any(axis=0))
        A = np.column_stack([np.ones((q == k).sum()), phi[q == k][:, cols]])
        w = np.linalg.lstsq(A, y[q == k], rcond=None)[0]
        pred[qt == k] = np.column_stack([np.ones((qt == k).sum()), phi_t[qt == k][:, cols]]) @ w
    rows: list[dict[str, Any]] = [
        {"method": "oracle tree (cost 12)", "mse": float(np.mean((pred - yt) ** 2)), "cost": 12.0},
        {"method": "GBRT, all features", "mse": float(np.mean((gbrt.predict(Xt) - yt) ** 2)), "cost": 42.0},
    ]
    for risk in ("leaves", "all"):
        for lam in (0.01, 0.02, 0.05, 0.1, 0.2):
            t0 = time.perf_counter_ns()
            m = CSTC(gbrt, costs=costs, depth=3, lam=lam, risk=risk, random_state=seed).fit(
                X, y, X_valid=Xv, y_valid=yv
            )
            t1 = time.perf_counter_ns()
            rep = m.cost_report(Xt)
            r = {"method": f"CSTC risk={risk}", "lam": lam, "mse": float(np.mean((m.predict(Xt) - yt) ** 2)),
                 "cost": float(rep.acquisition_cost.mean()), "fit_s": (t1 - t0) / 1e9,
                 "leaves_reached": int(np.unique(m.apply(Xt)).size)}
            rows.append(r)
            print("quadrants", r, flush=True)
    return rows


# ------------------------------------------------------------------------------- driver


def run_dataset(data: Data, seed: int) -> dict[str, list[dict[str, Any]]]:
    Xf, Xv, yf, yv = train_test_split(data.X, data.y, test_size=0.25, random_state=seed, stratify=data.y)
    adapters: list[CEGBAdapter] = [CSTCAdapter(1, 200), CSTCAdapter(3, N_TREES), CEGBAdapter(),
                                   PenalizedAdapter()]
    for a in adapters:
        if isinstance(a, CSTCAdapter):
            a.setup(data, (Xf, yf), seed, (Xv, yv))
        else:
            # boosters train on train + validation (they have no use for a separate validation set)
            a.setup(data, (data.X, data.y), seed)
    out: dict[str, list[dict[str, Any]]] = {a.name: [] for a in adapters}
    n = max(len(a.settings) for a in adapters)
    for i in range(n):  # interleave methods
        for a in adapters:
            if i < len(a.settings):
                r = a.run(a.settings[i])
                r["seed"] = seed
                out[a.name].append(r)
                print(f"{data.name:8s} seed {seed} {a.name:11s} setting {r['setting']:<6} "
                      f"acc {r['accuracy']:.4f} cost {r['cost']:8.2f} fit {r['fit_s']:.1f}s", flush=True)
    return out


def plot(results: dict[str, Any], out_dir: str) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for name, res in results["datasets"].items():
        fig, ax = plt.subplots(figsize=(5.5, 4))
        for method, marker in (("CSTC-stumps", "o-"), ("CSTC-depth3", "D-"), ("CEGB", "s--"),
                               ("penalized", "^:")):
            df = pd.DataFrame(res[method])
            pts = df.groupby("setting")[["cost", "accuracy"]].mean().sort_values("cost")
            ax.plot(pts["cost"], pts["accuracy"], marker, label=method)
        ax.set_xlabel("mean feature cost per test row")
        ax.set_ylabel("test accuracy")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend()
        p = os.path.join(out_dir, f"cstc_{name}.png")
        fig.tight_layout()
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = script_parser(__doc__, result_name="cstc",
                       quick={"datasets": "heart", "heart_seeds": 1, "no_synthetic": True, "plots": ""})
    ap.add_argument("--plots", default=os.path.join("docs", "img"))
    ap.add_argument("--datasets", default="thyroid,heart,magic")
    ap.add_argument("--heart-seeds", type=int, default=3, help="random splits of heart (303 rows)")
    ap.add_argument("--magic-seeds", type=int, default=1, help="random splits of magic")
    ap.add_argument("--no-synthetic", action="store_true", help="skip the paper's synthetic quadrants")
    args = parse(ap, argv)

    results: dict[str, Any] = {"benchmark": "cstc", "datasets": {}}
    for name in [n for n in args.datasets.split(",") if n]:
        merged: dict[str, list[dict[str, Any]]] = {}
        seeds = {"thyroid": [0], "heart": list(range(args.heart_seeds)),
                 "magic": list(range(args.magic_seeds))}[name]
        for seed in seeds:
            data = {"thyroid": lambda s: load_thyroid(args.data_dir),
                    "heart": lambda s: load_heart(args.data_dir, s),
                    "magic": lambda s: load_magic(args.data_dir, s)}[name](seed)
            for k, v in run_dataset(data, seed).items():
                merged.setdefault(k, []).extend(v)
        results["datasets"][name] = merged
    if not args.no_synthetic:
        results["quadrants"] = run_quadrants(0)
    write_results(args.out, results, "lightgbm", "numpy", "scipy", "sklearn", "budget_extras")
    if args.plots:
        os.makedirs(args.plots, exist_ok=True)
        print("plots:", plot(results, args.plots))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
