"""Accuracy vs average per-patient test cost: plain LightGBM, upstream-style CEGB, CEGB with groups.

Data with REAL test costs (Turney 1995), read from --data-dir:
  thyroid_costs/  ann-train.data, ann-test.data, ann-thyroid.cost   (FTI grouped with TT4 and T4U)
  heart_costs/    heartdisease.csv, heart_cost.csv                   (exang, oldpeak, slope: one exercise test)

For a sweep of cegb_tradeoff values it trains
  * LightGBM, no penalty, with early stopping on the number of trees (one point per size),
  * CEGB with per-feature lazy costs (what upstream LightGBM offers),
  * CEGB with the same costs and feature groups (the fork's cegb_feature_group),
and measures on the test set the accuracy and the average cost actually paid per patient
(budget_extras.cost_report: features on the patient's paths, each group paid once). The cost
accounting is the same for all three, groups included, so the points are comparable.

    python -m benchmarks.cegb.cegb_curves --data-dir DIR [--dataset thyroid heart] [--quick]

Writes benchmarks/results/cegb_curves.json and docs/img/cegb_curves.png.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._runner import parse, script_parser, write_results

ROOT = Path(__file__).resolve().parents[2]

THYROID_NAMES = ["age", "sex", "on_thyroxine", "query_on_thyroxine", "on_antithyroid_medication", "sick",
                 "pregnant", "thyroid_surgery", "I131_treatment", "query_hypothyroid", "query_hyperthyroid",
                 "lithium", "goitre", "tumor", "hypopituitary", "psych", "TSH", "T3", "TT4", "T4U", "FTI"]


def load_thyroid(data_dir: Path):
    d = data_dir / "thyroid_costs"
    train = np.loadtxt(d / "ann-train.data")
    test = np.loadtxt(d / "ann-test.data")
    costs = {}
    for line in (d / "ann-thyroid.cost").read_text().split("\n"):
        if ":" in line:
            k, v = line.split(":")
            costs[k.strip()] = float(v)
    costs["FTI"] = costs["TT4"] + costs["T4U"]  # computed from TT4 and T4U: the three are one purchase
    lazy = np.array([costs[n] for n in THYROID_NAMES])
    groups = np.arange(len(THYROID_NAMES))
    groups[[THYROID_NAMES.index(n) for n in ("TT4", "T4U", "FTI")]] = 100
    return (train[:, :-1], train[:, -1].astype(int) - 1, test[:, :-1], test[:, -1].astype(int) - 1,
            THYROID_NAMES, lazy, groups, "multiclass")


# The heart file spells four features as words; these are the UCI Cleveland codes for them
# (cp: 1 typical angina .. 4 asymptomatic; restecg: 0 normal, 1 ST-T abnormality, 2 hypertrophy;
# slope: 1 up, 2 flat, 3 down; thal: 3 normal, 6 fixed defect, 7 reversible defect).
HEART_CODES = {
    "cp": {"ta": 1, "aa": 2, "np": 3, "a": 4},
    "restecg": {"normal": 0, "abnormal": 1, "hypertrophy": 2},
    "slope": {"up": 1, "flat": 2, "down": 3},
    "thal": {"normal": 3, "fd": 6, "rd": 7},
}


def load_heart_frame(data_dir: Path) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """Heart as numbers: (X, y, feature names, Turney cost per feature), every column numeric.

    The word-coded columns (cp, restecg, slope, thal) become their UCI codes; an unknown word
    raises instead of turning into a missing value.
    """
    d = data_dir / "heart_costs"
    frame = pd.read_csv(d / "heartdisease.csv")
    cost = pd.read_csv(d / "heart_cost.csv").set_index("feature")["cost_usd"]
    target = next(c for c in frame.columns if c not in cost.index)
    names = list(cost.index)
    columns = []
    for name in names:
        col = frame[name]
        if name in HEART_CODES:
            coded = col.map(HEART_CODES[name])
            unknown = col[coded.isna() & col.notna()]
            if len(unknown):
                raise ValueError(f"heart column {name!r}: unknown values {sorted(set(unknown))}")
            col = coded
        columns.append(pd.to_numeric(col).to_numpy(float))
    X = np.column_stack(columns)
    y = (pd.to_numeric(frame[target]).to_numpy() > 0).astype(int)
    return X, y, names, cost.to_numpy(float)


def load_heart(data_dir: Path, seed: int = 0):
    X, y, names, cost = load_heart_frame(data_dir)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    cut = int(0.67 * len(y))
    tr, te = perm[:cut], perm[cut:]
    groups = np.arange(len(names))
    groups[[names.index(n) for n in ("exang", "oldpeak", "slope")]] = 100
    return X[tr], y[tr], X[te], y[te], names, cost, groups, "binary"


def evaluate(lgb, booster, X_test, y_test, costs, objective):
    from budget_extras import TreeEnsemble, cost_report

    pred = booster.predict(X_test)
    labels = pred.argmax(axis=1) if objective == "multiclass" else (pred > 0.5).astype(int)
    report = cost_report(TreeEnsemble.from_booster(booster), X_test, costs)
    return float((labels == y_test).mean()), float(report.acquisition_cost.mean())


def run(name, loader, data_dir, tradeoffs, rounds):
    import lightgbm as lgb

    from budget_extras import FeatureCosts

    X, y, Xt, yt, names, lazy, groups, objective = loader(data_dir)
    costs = FeatureCosts(lazy=dict(zip(names, lazy, strict=True)), groups=dict(zip(names, groups, strict=True)),
                         feature_names=names)
    base = {"objective": objective, "num_leaves": 15, "learning_rate": 0.1, "min_data_in_leaf": 5,
            "verbose": -1, "seed": 1, "num_threads": 2}
    if objective == "multiclass":
        base["num_class"] = int(y.max()) + 1
    points = {"LightGBM (trees)": [], "CEGB (per-feature costs)": [], "CEGB + groups (fork)": []}
    plain = lgb.train(base, lgb.Dataset(X, y, feature_name=names), num_boost_round=rounds)
    for k in sorted({1, 2, 3, 5, 8, 13, 21, 34, 55, 89, rounds}):
        if k <= rounds:
            model = lgb.train(base, lgb.Dataset(X, y, feature_name=names), num_boost_round=k)
            points["LightGBM (trees)"].append((*evaluate(lgb, model, Xt, yt, costs, objective), k))
    del plain
    for t in tradeoffs:
        per_feature = dict(base, cegb_tradeoff=t, cegb_penalty_feature_lazy=list(lazy))
        grouped = dict(per_feature, cegb_feature_group=[int(g) for g in groups])
        for label, params in (("CEGB (per-feature costs)", per_feature), ("CEGB + groups (fork)", grouped)):
            model = lgb.train(params, lgb.Dataset(X, y, feature_name=names), num_boost_round=rounds)
            points[label].append((*evaluate(lgb, model, Xt, yt, costs, objective), t))
        print(f"{name}: tradeoff {t:g} done", flush=True)
    return points


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__, result_name="cegb_curves",
                           quick={"rounds": 30, "tradeoffs": [0.001, 0.01, 0.1], "plot": None})
    parser.add_argument("--dataset", nargs="+", default=["thyroid", "heart"], choices=["thyroid", "heart"])
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--tradeoffs", type=float, nargs="+",
                        default=[0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.3, 1.0])
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "img" / "cegb_curves.png")
    args = parse(parser, argv)
    for sub in ("thyroid_costs", "heart_costs"):
        if not (args.data_dir / sub).is_dir():
            parser.error(f"--data-dir must contain {sub}/, got {args.data_dir}")
    loaders = {"thyroid": load_thyroid, "heart": load_heart}
    results = {name: run(name, loaders[name], args.data_dir, args.tradeoffs, args.rounds) for name in args.dataset}
    write_results(args.out, {"datasets": results}, "lightgbm", indent=2)
    if args.plot is not None:
        plot(results, args.plot)
    for name, points in results.items():
        print(f"\n{name}")
        for label, pts in points.items():
            for acc, cost, knob in sorted(pts, key=lambda p: p[1]):
                print(f"  {label:28s} knob={knob:<8g} accuracy={acc:.4f} mean cost={cost:8.2f}")
    return 0


def plot(results: dict, path: Path) -> None:
    """Accuracy against mean test cost, one panel per dataset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4.5), squeeze=False)
    for ax, (name, points) in zip(axes[0], results.items(), strict=True):
        for (label, pts), marker in zip(points.items(), "osD", strict=True):
            pts = sorted(pts, key=lambda p: p[1])
            ax.plot([p[1] for p in pts], [p[0] for p in pts], marker=marker, label=label)
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlabel("average test cost paid per patient")
        ax.set_ylabel("test accuracy")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
