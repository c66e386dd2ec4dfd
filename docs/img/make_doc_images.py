"""Draw the images of docs/plotting.md (docs/img/plotting_*.png) with the package's own plots.

    python docs/img/make_doc_images.py [--out docs/img]

Data: the embedded UCI thyroid data (budget_extras.datasets.load_thyroid, Turney's test costs,
TT4/T4U/FTI one acquisition group), the binary task "abnormal vs normal", the first 2,500
training rows to train, the other 1,272 to validate, the 3,428 test rows for the cost report;
QWYC on a synthetic 200-tree model as in docs/qwyc.md. About a minute on one core.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import lightgbm as lgb
import numpy as np
import pandas as pd
from sklearn.datasets import make_classification

from budget_extras import QWYC, TreeEnsemble, cost_report, train_to_budget
from budget_extras.datasets import load_thyroid
from budget_extras.plotting import plot_cost_report, plot_frontier, plot_qwyc

PARAMS = {"objective": "binary", "num_leaves": 15, "learning_rate": 0.1, "verbose": -1, "num_threads": 1}
BUDGETS = (25.0, 50.0)


def thyroid() -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame, np.ndarray, pd.DataFrame, np.ndarray, object]:
    d = load_thyroid()
    names = list(d.feature_names)
    X = pd.DataFrame(d.X_train, columns=names)
    y = (d.y_train != 2).astype(int)
    Xt = pd.DataFrame(d.X_test, columns=names)
    yt = (d.y_test != 2).astype(int)
    return X.iloc[:2500], y[:2500], X.iloc[2500:], y[2500:], Xt, yt, d.costs


def frontier(out: Path) -> object:
    Xtr, ytr, Xva, yva, _, _, costs = thyroid()
    result = train_to_budget(
        PARAMS, lgb.Dataset(Xtr, ytr), budget=BUDGETS[0], budgets=BUDGETS, valid_set=(Xva, yva), costs=costs,
        num_boost_round=100, progress=False, greedy=False,
    )
    ax = plot_frontier(result)
    ax.set_title(f"train_to_budget on thyroid (abnormal vs normal), budgets {BUDGETS}")
    ax.figure.set_size_inches(7.5, 4.5)
    ax.figure.savefig(out / "plotting_frontier.png", dpi=110, bbox_inches="tight")
    return result


def cost(out: Path, result: object) -> None:
    *_, Xt, _, costs = thyroid()
    rep = cost_report(TreeEnsemble.from_booster(result.booster), Xt, costs)  # type: ignore[attr-defined]
    axes = plot_cost_report(rep)
    axes[0].figure.suptitle(f"cost report of the model chosen at budget {BUDGETS[0]:g}, thyroid test rows")
    axes[0].figure.savefig(out / "plotting_cost_report.png", dpi=110, bbox_inches="tight")


def qwyc(out: Path) -> None:
    X, y = make_classification(n_samples=6000, n_features=20, n_informative=8, flip_y=0.02, random_state=0)
    booster = lgb.train({**PARAMS, "learning_rate": 0.05}, lgb.Dataset(X[:3000], y[:3000]), num_boost_round=200)
    q = QWYC(booster, alpha=0.01, random_state=0).fit(X[3000:4500])
    axes = plot_qwyc(q, X[5000:], X_holdout=X[4500:5000], alphas=[0.002, 0.005, 0.01, 0.02, 0.05])
    axes[0].figure.savefig(out / "plotting_qwyc.png", dpi=110, bbox_inches="tight")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    result = frontier(args.out)
    print(result)
    cost(args.out, result)
    qwyc(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
