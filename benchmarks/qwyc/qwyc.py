"""QWYC benchmark on UCI Adult: trees evaluated and wall-clock at matched TEST disagreement.

Usage: python -m benchmarks.qwyc.qwyc --data-dir DATA
       [--out benchmarks/results/qwyc.json] [--plot docs/img/qwyc.png] [--quick]

DATA holds adult/adult.data and adult/adult.test (the published UCI files). The model
(500 trees, depth 5, learning rate 0.05) is trained on the training file minus a
calibration split; every method is fit on the (unlabeled) calibration rows and
measured on the test file against the full ensemble. ``--quick``: 100 trees, 3,000 order
rows, fewer settings, one timing repeat, no plot.
"""

from __future__ import annotations

import copy
import json
import os
import time
from dataclasses import dataclass
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd

from benchmarks._runner import parse, script_parser, write_results
from budget_extras.qwyc._baselines import fan_exit, fan_fit, pred_early_stop_plan
from budget_extras.qwyc._estimator import QWYC
from budget_extras.qwyc._kernels import ExitTrace
from budget_extras.qwyc._solver import shift_scale

COLS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
CATS = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
]
TARGETS = (0.001, 0.005, 0.01)


def load_adult(data_dir: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    kw: dict[str, Any] = dict(header=None, names=COLS, sep=r",\s*", engine="python", na_values="?")
    tr = pd.read_csv(os.path.join(data_dir, "adult", "adult.data"), **kw).dropna(subset=["income"])
    te = pd.read_csv(os.path.join(data_dir, "adult", "adult.test"), skiprows=1, **kw).dropna(
        subset=["income"]
    )
    for c in CATS:
        cats = pd.Categorical(tr[c]).categories
        tr[c] = pd.Categorical(tr[c], categories=cats).codes.astype(float)
        te[c] = pd.Categorical(te[c], categories=cats).codes.astype(float)
        tr.loc[tr[c] < 0, c] = np.nan
        te.loc[te[c] < 0, c] = np.nan
    ytr = tr.pop("income").str.startswith(">50K").to_numpy(int)
    yte = te.pop("income").str.startswith(">50K").to_numpy(int)
    return tr.to_numpy(float), ytr, te.to_numpy(float), yte, list(tr.columns)


@dataclass
class Point:
    method: str
    setting: str
    mean_trees: float
    test_disagreement: float
    accuracy: float
    calib_disagreement: float | None = None
    target_alpha: float | None = None
    fit_seconds: float | None = None
    family: str | None = None


def _point(method: str, setting: str, tr: ExitTrace, full: np.ndarray, y: np.ndarray, **kw: Any) -> Point:
    return Point(
        method,
        setting,
        float(tr.n_evaluated.mean()),
        float(np.mean(tr.labels != full)),
        float(np.mean(tr.labels == y)),
        **kw,
    )


class QWYCAdapter:
    """QWYC whose order and base thresholds are fit once on training rows; the held-out
    correction is fit on one test fold and the plan evaluated on the other fold (and vice
    versa), so every test row is scored by a plan that never saw it. ``cross=False`` is the
    paper's in-sample setting (everything fit on the training rows)."""

    def __init__(self, name: str, *, cross: bool = True, family: str | None = None, **params: Any) -> None:
        self.name, self.cross, self.params = name, cross, params
        self.family = family or name
        self.base: QWYC | None = None
        self.base_seconds = 0.0

    def with_shift(self, name: str, shift: str, FA3: np.ndarray, family: str | None = None) -> QWYCAdapter:
        """Same order and base thresholds, another shape of the held-out shift (sigma_r from the order rows)."""
        assert self.base is not None
        other = QWYCAdapter(name, cross=self.cross, family=family, **{**self.params, "shift": shift})
        other.base = copy.deepcopy(self.base)
        other.base.shift = shift
        other.base.shift_scale_ = shift_scale(other.base._settings(), other.base.base_plan_, FA3)
        other.base_seconds = self.base_seconds
        return other

    def fit_base(self, booster: Any, Xa: np.ndarray, alpha: float = 0.0) -> None:
        t0 = time.perf_counter()
        self.base = QWYC(booster, alpha=alpha, random_state=0, holdout=None, **self.params).fit(Xa)
        self.base_seconds = time.perf_counter() - t0

    def run(
        self,
        Xte: np.ndarray,
        folds: list[np.ndarray],
        F3t: np.ndarray,
        full: np.ndarray,
        y: np.ndarray,
        alpha: float,
    ) -> tuple[Point, list[tuple[QWYC, np.ndarray]]]:
        assert self.base is not None
        t0 = time.perf_counter()
        n = len(Xte)
        scores, labels, ev = np.zeros(n), np.zeros(n, bool), np.zeros(n, np.int64)
        fitted, calib = [], []
        if self.cross:
            for i, fold in enumerate(folds):
                q = copy.deepcopy(self.base).recalibrate_outputs(F3t[folds[1 - i]], alpha=alpha)
                res = q.predict_outputs(F3t[fold])
                scores[fold], labels[fold], ev[fold] = res.scores, res.labels, res.positions_evaluated
                fitted.append((q, fold))
                calib.append(q.holdout_disagreement_)
        else:
            q = self.base
            res = q.predict_outputs(F3t)
            scores, labels, ev = res.scores, res.labels, res.positions_evaluated
            fitted.append((q, np.arange(n)))
            calib.append(q.calibration_disagreement_)
        fit_s = self.base_seconds + time.perf_counter() - t0
        tr = ExitTrace(scores, labels, ev)
        return _point(
            self.name,
            f"alpha={alpha}",
            tr,
            full,
            y,
            calib_disagreement=float(np.mean(calib)),
            target_alpha=alpha,
            fit_seconds=fit_s,
            family=self.family,
        ), fitted


class PredEarlyStopAdapter:
    name = "lightgbm pred_early_stop"

    def run(
        self, booster: Any, F3t: np.ndarray, full: np.ndarray, y: np.ndarray, freq: int, margin: float
    ) -> tuple[Point, Any]:
        plan = pred_early_stop_plan(F3t.shape[1], freq=freq, margin=margin)
        q = QWYC.from_plan(booster, plan)
        res = q.predict_outputs(F3t)
        tr = ExitTrace(res.scores, res.labels, res.positions_evaluated)
        return _point(self.name, f"freq={freq},margin={margin}", tr, full, y), q


class FanAdapter:
    """Fan et al.'s statistics fit on one test fold, applied to the other (and vice versa)."""

    name = "Fan et al. 2002"

    def __init__(self, Ft: np.ndarray, folds: list[np.ndarray], n_bins: int = 20) -> None:
        self.schedules = [fan_fit(Ft[folds[1 - i]], n_bins=n_bins) for i in range(2)]
        self.Ft, self.folds, self.n_bins = Ft, folds, n_bins

    def run(self, full: np.ndarray, y: np.ndarray, t: float) -> Point:
        n = len(full)
        scores, labels, ev = np.zeros(n), np.zeros(n, bool), np.zeros(n, np.int64)
        for sch, fold in zip(self.schedules, self.folds, strict=True):
            tr = fan_exit(self.Ft[fold], sch, t=t)
            scores[fold], labels[fold], ev[fold] = tr
        return _point(self.name, f"bins={self.n_bins},t={t}", ExitTrace(scores, labels, ev), full, y)


def best_at(points: list[Point], method: str, target: float) -> Point | None:
    ok = [p for p in points if p.method == method and p.test_disagreement <= target + 1e-12]
    return min(ok, key=lambda p: p.mean_trees) if ok else None


def time_predictors(cands: dict[str, Any], X: np.ndarray, repeats: int) -> dict[str, dict[str, float]]:
    """Interleaved timings (seconds) of callables; min and median over repeats."""
    times: dict[str, list[float]] = {k: [] for k in cands}
    for _ in range(repeats):
        for k, fn in cands.items():
            t0 = time.perf_counter_ns()
            fn(X)
            times[k].append((time.perf_counter_ns() - t0) / 1e9)
    return {k: {"min_s": float(np.min(v)), "median_s": float(np.median(v))} for k, v in times.items()}


def plot(points: list[dict[str, Any]], path: str) -> None:
    """Mean trees vs test disagreement, one line per method (lower-left is better)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def fam(p: dict[str, Any]) -> str:
        return p.get("family") or p["method"]

    methods = sorted({fam(p) for p in points})
    fig, ax = plt.subplots(figsize=(9, 5.5))
    colors = plt.get_cmap("tab20")
    for i, m in enumerate(methods):
        ps = sorted((p for p in points if fam(p) == m), key=lambda p: p["test_disagreement"])
        # lower envelope: best trees at each disagreement level
        xs, ys, best = [], [], np.inf
        for p in ps:
            if p["mean_trees"] < best:
                best = p["mean_trees"]
                xs.append(100 * p["test_disagreement"])
                ys.append(best)
        style = "-" if m.startswith("QWYC greedy") else "--"
        ax.step(xs, ys, style, where="post", label=m, color=colors(i % 20), marker="o", ms=3)
    ax.axhline(40, color="grey", lw=0.5)
    ax.axhline(100, color="grey", lw=0.5)
    ax.set_xlabel("test disagreement with the full ensemble (%)")
    ax.set_ylabel("mean trees evaluated per row (of 500)")
    ax.set_xlim(0, 1.0)
    ax.set_ylim(0, 260)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6.5, ncol=2)
    ax.set_title("UCI Adult, 500 trees of depth 5: best trees at each test disagreement\n"
                 "(each line: lower envelope over that family's settings)", fontsize=9)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    ap = script_parser(__doc__, result_name="qwyc",
                       quick={"rounds": 100, "n_order": 3000, "repeats": 1, "plot": ""})
    ap.add_argument("--plot", default=os.path.join("docs", "img", "qwyc.png"))
    ap.add_argument("--rounds", type=int, default=500, help="trees of the model")
    ap.add_argument("--n-order", type=int, default=15000, help="training rows that choose the order")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--plot-only", metavar="RESULTS_JSON", help="only redraw the plot from a results file")
    args = parse(ap, argv)
    if args.plot_only:
        with open(args.plot_only) as fh:
            plot(json.load(fh)["points"], args.plot)
        return 0

    Xtr, ytr, Xte, yte, names = load_adult(args.data_dir)
    rng = np.random.default_rng(0)
    cat_idx = [names.index(c) for c in CATS]
    params = dict(
        objective="binary", learning_rate=0.05, max_depth=5, num_leaves=32, verbose=-1, num_threads=1, seed=0
    )
    t0 = time.perf_counter()
    booster = lgb.train(
        params, lgb.Dataset(Xtr, ytr, feature_name=names, categorical_feature=cat_idx), num_boost_round=args.rounds
    )
    train_s = time.perf_counter() - t0
    Xa = Xtr[rng.permutation(len(Xtr))[: args.n_order]]  # rows that choose the order (training rows)
    perm = rng.permutation(len(Xte))
    folds = [np.sort(perm[: len(perm) // 2]), np.sort(perm[len(perm) // 2 :])]
    raw = booster.predict(Xte, raw_score=True, num_threads=1)
    full = raw > 0
    acc_full = float(np.mean(full == yte))
    print(f"trained in {train_s:.1f}s; full-ensemble test accuracy {acc_full:.4f}")

    helper = QWYC.from_plan(booster, pred_early_stop_plan(args.rounds, freq=1, margin=0.0))
    F3t = helper._outputs(Xte)
    assert np.array_equal(np.cumsum(F3t[:, :, 0], axis=1)[:, -1], raw), "tree outputs differ from LightGBM"

    points: list[Point] = []
    models: dict[tuple[str, str], Any] = {}
    alphas = [0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01] if not args.quick else [0.001, 0.005]
    in_alphas = [0.0, 0.0005, 0.002] if not args.quick else [0.0]
    margins = [0.0, 0.1, 0.2] if not args.quick else [0.0, 0.1]
    alpha_fits = [0.0, 0.005] if not args.quick else [0.0]
    shifts = ["constant", "extreme_spacing", "residual_std"] if not args.quick else ["constant", "extreme_spacing"]
    greedy: list[QWYCAdapter] = [
        QWYCAdapter(
            f"QWYC greedy (held-out, margin {m}, alpha_fit {af}, constant)",
            family="QWYC greedy (held-out, constant shift)",
            margin=m,
            alpha_fit=af,
        )
        for m in margins
        for af in alpha_fits
    ]
    held: list[QWYCAdapter] = list(greedy)
    held += [QWYCAdapter("QWYC filter-and-score (held-out, margin 0.1)", mode="negative_only", margin=0.1)]
    for kind in ("training", "random", "individual_mse", "greedy_mse"):
        held += [QWYCAdapter(f"{kind} order (held-out, margin 0.0)", order=kind, margin=0.0)]
    for ad in held:
        ad.fit_base(booster, Xa)
        print(f"base plan {ad.name}: {ad.base_seconds:.1f}s", flush=True)
    FA3 = helper._outputs(Xa)
    for ad in greedy:
        for sh in shifts[1:]:
            held.append(
                ad.with_shift(
                    ad.name.replace(", constant)", f", {sh})"), sh, FA3, family=f"QWYC greedy (held-out, {sh} shift)"
                )
            )
    for a in alphas:  # interleaved: alpha outer, method inner
        for ad in held:
            p, fitted = ad.run(Xte, folds, F3t, full, yte, a)
            points.append(p)
            models[(p.method, p.setting)] = fitted
            print(
                f"{p.method:45s} {p.setting:14s} trees {p.mean_trees:7.2f} "
                f"test dis {p.test_disagreement:.4%} holdout dis {p.calib_disagreement:.4%}",
                flush=True,
            )
    for a in in_alphas:
        ad = QWYCAdapter("QWYC greedy (in-sample, paper)", cross=False)
        ad.fit_base(booster, Xa, alpha=a)
        p, fitted = ad.run(Xte, folds, F3t, full, yte, a)
        points.append(p)
        models[(p.method, p.setting)] = fitted
        print(
            f"{p.method:45s} {p.setting:14s} trees {p.mean_trees:7.2f} test dis {p.test_disagreement:.4%} "
            f"fit {p.fit_seconds:.1f}s",
            flush=True,
        )
    pes = PredEarlyStopAdapter()
    pes_margins = (
        [0.5, 1, 1.5, 2, 2.25, 2.5, 2.75, 3, 3.25, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 12, 14]
        if not args.quick
        else [2, 6]
    )
    for freq in [1, 5, 10, 20] if not args.quick else [5]:
        for m in pes_margins:
            p, q = pes.run(booster, F3t, full, yte, freq, m)
            points.append(p)
            models[(p.method, p.setting)] = [(q, np.arange(len(Xte)))]
    fan = FanAdapter(F3t[:, :, 0], folds)
    for tconf in [0.5, 1, 1.5, 2, 3, 4, 6, 8] if not args.quick else [2, 4]:
        points.append(fan.run(full, yte, tconf))

    # correctness gate: native pred_early_stop equals the emulation on the test set
    for freq, m in [(5, 2.0)] + ([(10, 8.0)] if not args.quick else []):
        nat = booster.predict(
            Xte,
            raw_score=True,
            num_threads=1,
            pred_early_stop=True,
            pred_early_stop_freq=freq,
            pred_early_stop_margin=m,
        )
        emu = QWYC.from_plan(booster, pred_early_stop_plan(args.rounds, freq=freq, margin=m)).predict_outputs(F3t)
        assert np.array_equal(emu.scores, nat), "pred_early_stop emulation differs from LightGBM"

    summary: dict[str, Any] = {}
    methods = sorted({p.method for p in points})
    for target in TARGETS:
        summary[str(target)] = {m: (vars(b) if (b := best_at(points, m, target)) else None) for m in methods}

    # wall-clock at matched test disagreement (numpy predictors, 1 thread; a cross-fitted QWYC
    # result is timed as its two plans, each on its own fold)
    timing: dict[str, Any] = {}
    full_plan = QWYC.from_plan(booster, pred_early_stop_plan(args.rounds, freq=10**9, margin=0.0))

    def folded(fitted: list[tuple[QWYC, np.ndarray]]) -> Any:
        def fn(X: np.ndarray) -> None:
            for q, idx in fitted:
                q.predict(X[idx])

        return fn

    for target in TARGETS:
        bqs = [b for m in methods if m.startswith("QWYC greedy (held-out") and (b := best_at(points, m, target))]
        bq = min(bqs, key=lambda p: p.mean_trees) if bqs else None
        bp = best_at(points, "lightgbm pred_early_stop", target)
        cands: dict[str, Any] = {"numpy full ensemble": full_plan.predict}
        if bq:
            fitted = models[(bq.method, bq.setting)]
            cands[f"numpy QWYC ({bq.method}, {bq.setting})"] = folded(fitted)
            for q, idx in fitted:
                assert np.array_equal(q.predict(Xte[idx]).scores, q.predict_outputs(F3t[idx]).scores), (
                    "QWYC gate"
                )
        if bp:
            cands[f"numpy pred_early_stop ({bp.setting})"] = folded(models[(bp.method, bp.setting)])
            fq, mg = (float(v.split("=")[1]) for v in bp.setting.split(","))
            cands[f"native LightGBM pred_early_stop ({bp.setting})"] = lambda X, fq=int(fq), mg=mg: (
                booster.predict(
                    X,
                    raw_score=True,
                    num_threads=1,
                    pred_early_stop=True,
                    pred_early_stop_freq=fq,
                    pred_early_stop_margin=mg,
                )
            )
        cands["native LightGBM full"] = lambda X: booster.predict(X, raw_score=True, num_threads=1)
        timing[str(target)] = time_predictors(cands, Xte, args.repeats)
        print(target, json.dumps(timing[str(target)], indent=1), flush=True)

    t0 = time.perf_counter()
    QWYC(booster, alpha=0.005, holdout=None).fit(Xtr[: 3000 if args.quick else 30000])  # speed requirement
    greedy_30k_s = time.perf_counter() - t0

    result = {
        "dataset": "UCI Adult (adult.data / adult.test)",
        "model": {
            **params,
            "num_boost_round": args.rounds,
            "train_rows": len(Xtr),
            "order_rows": len(Xa),
            "test_rows": len(Xte),
            "full_test_accuracy": acc_full,
            "train_seconds": train_s,
        },
        "greedy_fit_seconds_500_trees_30000_rows": greedy_30k_s,
        "points": [vars(p) for p in points],
        "best_at_target": summary,
        "timing": timing,
    }
    write_results(args.out, result, "lightgbm", "numpy")
    print(f"greedy on 500 trees x 30000 rows: {greedy_30k_s:.1f}s")
    for target in TARGETS:
        print(f"-- best mean trees at test disagreement <= {target:.1%}")
        for m in methods:
            b = summary[str(target)][m]
            print(
                f"   {m:36s} "
                + (
                    f"{b['mean_trees']:7.2f} ({b['setting']}, dis {b['test_disagreement']:.3%})"
                    if b
                    else "none"
                )
            )
    if args.plot:
        plot([vars(p) for p in points], args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
