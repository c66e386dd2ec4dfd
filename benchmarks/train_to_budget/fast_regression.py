"""Does ``train_to_budget(search="fast")`` spend the budget on a regression? Default against fast, RMSE and cost.

For each regression table (50 / 25 / 25 train / validation / test split, 100 rounds, 31 leaves,
learning rate 0.1) it trains plain LightGBM, takes its mean per-row validation cost, and runs
ONE default search and ONE fast search with ``budgets=`` at 20 / 40 / 60% of it (the frontier
harness's protocol: ``result.booster_at(b)`` is the model each search returns at budget ``b``).
It prints, side by side, the test RMSE and mean per-row test cost of the default search, the
fast search, and the fast search with its capped candidates' last tradeoff fixed at 0.003
(``fixed_end``: the schedule before it followed the ranking model's convergence), and writes
JSON to ``benchmarks/results/fast_regression.json``.

Tables:

* ``elevation``: Covertype's elevation (metres) from the other 11 columns (wilderness area and
  soil type as codes), tiered costs 1 / 5 / 10 (``_data.tiered_costs``), a 20,000-row
  random sample;
* ``gems``: diamond-like prices (the construction of
  ``tests/cegb/test_train_to_budget_fast.py::test_regression_spends_a_budget_worth_spending``):
  a cheap size proxy (cost 1) explains most of the variance, dearer grades (5-10) the rest;
* ``proxy``: ``y = 3 x_exp + 0.3 x_1 + 0.3 x_2 + noise`` where ``x_exp`` costs 10, and a cheap
  noisy copy of it, ``x_1``, ``x_2`` and nine noise features cost 1 each.

    python -m benchmarks.train_to_budget.fast_regression --data-dir ../shared/data
"""

from __future__ import annotations

import platform
import time
import warnings
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd

import budget_extras.cegb._fast as fast
from benchmarks._runner import parse, script_parser, write_results
from benchmarks.train_to_budget import _data as fdata
from budget_extras import FeatureCosts, TreeEnsemble, cost_report
from budget_extras.cegb import train_to_budget

PARAMS = {"objective": "regression", "learning_rate": 0.1, "num_leaves": 31, "verbosity": -1, "seed": 0}
ROUNDS = 100
FRACTIONS = (0.2, 0.4, 0.6)


def load_elevation(data_dir: Path, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = pd.read_csv(data_dir / "covertype" / "covertype_sample_397k.csv.gz")
    d = d.sample(min(rows, len(d)), random_state=0).reset_index(drop=True)
    y = d.pop("Elevation").to_numpy(np.float64)
    d.pop("Cover_Type")
    return fdata._codes(d), y, fdata.tiered_costs(d.shape[1])


def load_gems(rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    carat = np.exp(rng.normal(-0.5, 0.55, rows))
    cut, color, clarity = rng.integers(0, 5, rows), rng.integers(0, 7, rows), rng.integers(0, 8, rows)
    depth = rng.normal(61.7, 1.4, rows)
    size = 6.4 * carat ** (1 / 3) * np.exp(rng.normal(0, 0.01, rows))
    logp = 8.4 + 1.7 * np.log(carat) + 0.09 * clarity - 0.07 * color + 0.03 * cut + 0.08 * rng.normal(size=rows)
    X = np.column_stack([carat, cut, color, clarity, depth, size, size * depth / 100])
    return X, np.exp(logp), np.array([5.0, 10.0, 10.0, 5.0, 1.0, 1.0, 5.0])


def load_proxy(rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    xe = rng.normal(size=rows)
    X = np.column_stack([xe, xe + 0.15 * rng.normal(size=rows), rng.normal(size=(rows, 11))])
    y = 3 * xe + 0.3 * X[:, 2] + 0.3 * X[:, 3] + 0.3 * rng.normal(size=rows)
    return X, y, np.array([10.0] + [1.0] * 12)


def _measure(booster: Any, X: np.ndarray, y: np.ndarray, costs: np.ndarray) -> dict[str, float]:
    cost = cost_report(TreeEnsemble.from_booster(booster), X, FeatureCosts(list(costs))).total_cost.mean()
    return {"rmse": float(np.sqrt(np.mean((booster.predict(X) - y) ** 2))), "cost": float(cost)}


def _search(parts: tuple[np.ndarray, ...], costs: np.ndarray, budgets: list[float], how: str,
            threads: int) -> dict[str, Any]:
    Xt, yt, Xv, yv, Xs, ys = parts
    real_end = fast.decay_end
    if how == "fixed_end":  # the previous schedule: 0.3 -> 0.003 whatever the loss
        fast.decay_end = lambda booster: fast.FAST_DECAY[1]
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = train_to_budget({**PARAMS, "num_threads": threads}, lgb.Dataset(Xt, yt), budget=budgets[-1],
                                budgets=budgets[:-1], valid_set=(Xv, yv), costs=list(costs), num_boost_round=ROUNDS,
                                progress=False, keep_boosters=True, search="full" if how == "default" else "fast")
    finally:
        fast.decay_end = real_end
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "at": [_measure(r.booster_at(b), Xs, ys, costs) for b in budgets]}


def run_table(name: str, X: np.ndarray, y: np.ndarray, costs: np.ndarray, threads: int) -> dict[str, Any]:
    n = len(y)
    perm = np.random.default_rng(1).permutation(n)
    tr, va, te = perm[: n // 2], perm[n // 2 : 3 * n // 4], perm[3 * n // 4 :]
    parts = (X[tr], y[tr], X[va], y[va], X[te], y[te])
    plain = lgb.train({**PARAMS, "num_threads": threads}, lgb.Dataset(X[tr], y[tr]), ROUNDS)
    plain_valid = _measure(plain, X[va], y[va], costs)
    budgets = [f * plain_valid["cost"] for f in FRACTIONS]
    out: dict[str, Any] = {"table": name, "rows": n, "features": X.shape[1], "budgets": budgets,
                           "plain_test": _measure(plain, *parts[4:], costs), "plain_valid_cost": plain_valid["cost"]}
    for how in ("default", "fast", "fixed_end"):
        out[how] = _search(parts, costs, budgets, how, threads)
    return out


def table_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The markdown table: per table and budget, test RMSE (test cost) of each search."""
    lines = ["| table | budget (share of plain cost) | default | fast | fast / default RMSE | "
             "fast, fixed last tradeoff |", "|---|---|---|---|---|---|"]
    for r in rows:
        for i, (f, b) in enumerate(zip(FRACTIONS, r["budgets"], strict=True)):
            d, q, o = (r[h]["at"][i] for h in ("default", "fast", "fixed_end"))
            lines.append(f"| {r['table']} | {b:.2f} ({f:.0%}) | {d['rmse']:.4g} ({d['cost']:.2f}) | "
                         f"{q['rmse']:.4g} ({q['cost']:.2f}) | {q['rmse'] / d['rmse']:.3f} | "
                         f"{o['rmse']:.4g} ({o['cost']:.2f}) |")
    return lines


def main(argv: list[str] | None = None) -> None:
    p = script_parser(__doc__, result_name="fast_regression", quick={"tables": ["gems"], "rows": 2_000})
    tables = ["elevation", "gems", "proxy"]
    p.add_argument("--tables", nargs="+", default=tables, choices=tables)
    p.add_argument("--rows", type=int, default=20_000, help="rows per table (sampled from Covertype; generated)")
    p.add_argument("--threads", type=int, default=1)
    args = parse(p, argv)
    rows = []
    for name in args.tables:
        X, y, costs = (load_elevation(args.data_dir, args.rows) if name == "elevation" else
                       load_gems(args.rows) if name == "gems" else load_proxy(args.rows))
        rows.append(run_table(name, X, y, costs, args.threads))
        print("\n".join(table_lines(rows[-1:])[2:]), flush=True)
        secs = {h: round(rows[-1][h]["seconds"], 1) for h in ("default", "fast", "fixed_end")}
        print(f"  seconds: {secs}", flush=True)
        write_results(args.out, {"rows": rows, "rounds": ROUNDS, "params": PARAMS, "fractions": FRACTIONS,
                                 "lightgbm": lgb.__version__, "machine": platform.platform()}, "lightgbm")
    print("\n".join(table_lines(rows)))


if __name__ == "__main__":
    main()
