"""QWYC exit scores: ranking (AUC) and log-loss of partial vs calibrated scores (``QWYC(scores=...)``).

Usage: python -m benchmarks.qwyc.qwyc_scores --data-dir DATA [--datasets adult magic higgs]
       [--seeds 0] [--alphas 0.001 0.005 0.01] [--out benchmarks/results/qwyc_scores.json]
       python -m benchmarks.qwyc.qwyc_scores --data-dir DATA --part default
       [--datasets adult magic higgs adult_rare] [--alphas 0.005 0.01]
       [--out benchmarks/results/qwyc_default.json]

``--quick`` (either part): heart, alpha 0.005, and with ``--part default`` the ``auto`` scores only;
written under ``benchmarks/results/quick/``.

``--part default`` measures QWYC as a user runs it: the library's default fit (cross-fitted over
five folds of the calibration rows, no ``X_valid``) on one thread, its CPU time in trainings of
the model (one plain ``lgb.train`` with the model's parameters on its training rows, one thread,
median of three), and the test AUC of its exit scores (``scores="auto"``, ``"calibrated"`` and
``"partial"``) against LightGBM's ``pred_early_stop`` setting with the fewest mean trees among
those changing at most as many test answers (chosen on the test rows, which favours it).
``adult_rare`` is Adult with its positives subsampled to 6% of the rows and the pool capped at
6,000 rows (1,500 calibration rows, 90 of them positive): a small, imbalanced calibration set.

Per dataset (loaders of ``benchmarks/train_to_budget/_data.py``: all rows pooled, split 50% train,
25% calibration, 25% test, stratified, by seed) a 400-tree binary LightGBM model (31 leaves,
learning rate 0.05) is trained; QWYC's plan is fit on the unlabeled calibration rows (order rows
= one half, held-out rows of the conformal shift = the other half, given as ``X_valid``) and
measured on the test rows:

* AUC and log-loss (against the true test labels) of the full model, of QWYC's partial exit
  scores (``scores="partial"``) and of its calibrated exit scores (``scores="calibrated"``,
  maps fit on all calibration rows: the library's choice), mean trees evaluated, disagreement
  with the full model's labels;
* the same calibrated scores with the maps fit on the order rows only and on the held-out rows
  only (does fitting the maps on the rows that set the thresholds bias them?);
* LightGBM's ``pred_early_stop`` (``pred_early_stop_plan``: training order, stop when
  ``|partial score| > margin / 2`` every ``freq`` iterations), swept over freq {1, 2, 5, 10, 20}
  x margins 0.5..12: its partial scores, and its partial scores through the same calibrated
  maps (fit on the calibration rows under its plan). For each QWYC alpha the table reports the
  setting with the fewest mean trees whose test AUC reaches QWYC's calibrated test AUC (chosen
  on the test rows: favours the baseline);
* at equal trees: the ``pred_early_stop`` setting with the best test AUC (of its native partial
  scores) among those evaluating at most QWYC's mean trees per row (chosen on the test rows);
* feature cost per row (``cost_report``: the features a row reads before it quits) of the full
  model, of QWYC and of that ``pred_early_stop`` setting, with the dataset's real costs (heart)
  or the tiered 1 / 5 / 10 costs of ``_data.tiered_costs`` of ``benchmarks/train_to_budget/_data.py``;
* at equal disagreement: the ``pred_early_stop`` setting with the fewest mean trees whose test
  disagreement with the full model is at most QWYC's (chosen on the test rows), with its feature
  cost;
* QWYC with ``order="training"`` (its thresholds on the training order, whose early trees share
  the strongest features): trees, disagreement, calibrated AUC / log-loss, feature cost.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
from sklearn.metrics import log_loss, roc_auc_score

from benchmarks._runner import RESULTS, parse, script_parser, write_results
from benchmarks.train_to_budget._data import LOADERS, cost_schemes, feature_costs, split
from budget_extras.qwyc import _kernels as core
from budget_extras.qwyc import _scores
from budget_extras.qwyc._baselines import pred_early_stop_plan
from budget_extras.qwyc._estimator import QWYC

RARE_SHARE, RARE_CAP = 0.06, 6000

ROUNDS = 400
FREQS = (1, 2, 5, 10, 20)
MARGINS = tuple(float(m) for m in np.round(np.r_[np.arange(0.5, 4.0, 0.25), np.arange(4.0, 12.5, 0.5)], 2))


def _sig(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _metrics(y: np.ndarray, s: np.ndarray) -> dict[str, float]:
    return {"auc": float(roc_auc_score(y, s)), "log_loss": float(log_loss(y, np.clip(_sig(s), 1e-15, 1 - 1e-15)))}


def _feature_cost(booster: Any, plan: Any, X: np.ndarray, costs: Any) -> float:
    """Mean per-row feature cost of ``plan`` on ``X``: the features a row reads before it quits."""
    return float(QWYC.from_plan(booster, plan).cost_report(X, costs).acquisition_cost.mean())


def _calibrated(F_fit: np.ndarray, F_test: np.ndarray, plan: Any) -> tuple[np.ndarray, core.ExitTrace]:
    """Test scores of ``plan`` with maps fit on ``F_fit``; exited rows mapped, full rows full."""
    maps = _scores.fit_score_maps(F_fit, plan.order, plan.eps_neg, plan.eps_pos, threshold=plan.decision_threshold)
    tr = core.early_exit(F_test, plan.order, plan.eps_neg, plan.eps_pos, threshold=plan.decision_threshold)
    return _scores.calibrate_exits(maps, tr.scores, tr.labels, tr.n_evaluated, plan.decision_threshold), tr


def run_dataset(name: str, data_dir: Path, seed: int, alphas: list[float]) -> dict[str, Any]:
    ds = LOADERS[name](data_dir)
    sp = split(ds, seed, cap=10**9)
    params = dict(objective="binary", num_leaves=31, learning_rate=0.05, verbose=-1, num_threads=2, seed=seed)
    booster = lgb.train(params, lgb.Dataset(sp.X_train, sp.y_train, feature_name=list(ds.names)), ROUNDS)
    Xc, Xt, yt = sp.X_valid, sp.X_test, sp.y_test
    half = len(Xc) // 2
    XA, XB = Xc[:half], Xc[half:]
    full = booster.predict(Xt, raw_score=True)
    scheme, (cost_values, groups) = next((k, v) for k, v in cost_schemes(ds).items() if k != "uniform")
    costs = feature_costs(ds.names, cost_values, groups)
    out: dict[str, Any] = {
        "dataset": name,
        "seed": seed,
        "rows": {"train": len(sp.X_train), "order": len(XA), "holdout": len(XB), "test": len(Xt)},
        "full": _metrics(yt, full),
        "costs": scheme,
        "full_feature_cost": _feature_cost(booster, pred_early_stop_plan(booster.num_trees(), freq=10**9, margin=1.0),
                                           Xt, costs),
        "qwyc": [],
    }
    print(f"{name} seed {seed}: full AUC {out['full']['auc']:.4f} log-loss {out['full']['log_loss']:.4f}", flush=True)
    probe = QWYC(booster)
    probe._load(booster)  # per-iteration outputs through the estimator's one path
    FA, FB, FT = (probe._outputs(X)[:, :, 0] for X in (XA, XB, Xt))
    Fc = np.vstack([FA, FB])
    t0 = time.perf_counter()
    sweep = []
    for freq in FREQS:
        for margin in MARGINS:
            pl = pred_early_stop_plan(FT.shape[1], freq=freq, margin=margin)
            tr = core.early_exit(FT, pl.order, pl.eps_neg, pl.eps_pos)
            cal, _ = _calibrated(Fc, FT, pl)
            sweep.append(
                {
                    "freq": freq,
                    "margin": margin,
                    "mean_trees": float(tr.n_evaluated.mean()),
                    "disagreement": float(np.mean(tr.labels != (full > 0))),
                    "partial": _metrics(yt, tr.scores),
                    "calibrated": _metrics(yt, cal),
                }
            )
    print(f"  pred_early_stop sweep: {len(sweep)} settings, {time.perf_counter() - t0:.0f} s", flush=True)
    for alpha in alphas:
        t0 = time.perf_counter()
        qp = QWYC(booster, alpha=alpha, scores="partial").fit(XA, X_valid=XB)
        t_partial = time.perf_counter() - t0
        t0 = time.perf_counter()
        qc = QWYC(booster, alpha=alpha, scores="calibrated").fit(XA, X_valid=XB)
        t_cal = time.perf_counter() - t0
        rp, rc = qp.predict(Xt), qc.predict(Xt)
        assert np.array_equal(rp.labels, rc.labels) and np.array_equal(rp.trees_evaluated, rc.trees_evaluated)
        plan = qc.plan_
        cal_A, _ = _calibrated(FA, FT, plan)
        cal_B, _ = _calibrated(FB, FT, plan)
        exited = rc.positions_evaluated < plan.n_positions
        row: dict[str, Any] = {
            "alpha": alpha,
            "mean_trees": float(rc.trees_evaluated.mean()),
            "disagreement": float(np.mean(rc.labels != (full > plan.decision_threshold))),
            "exited_share": float(exited.mean()),
            "partial": _metrics(yt, rp.scores),
            "calibrated": _metrics(yt, rc.scores),
            "calibrated_maps_on_order_rows": _metrics(yt, cal_A),
            "calibrated_maps_on_holdout_rows": _metrics(yt, cal_B),
            "rmse_to_full_score": {
                "partial": float(np.sqrt(np.mean((rp.scores - full) ** 2))),
                "calibrated": float(np.sqrt(np.mean((rc.scores - full) ** 2))),
            },
            "fit_seconds": {"partial": t_partial, "calibrated": t_cal},
        }
        for kind in ("partial", "calibrated"):
            ok = [p for p in sweep if p[kind]["auc"] >= row["calibrated"]["auc"]]
            row[f"pred_early_stop_{kind}_at_qwyc_auc"] = min(ok, key=lambda p: p["mean_trees"]) if ok else None
        row["feature_cost"] = _feature_cost(booster, qc.plan_, Xt, costs)
        qf = QWYC(booster, alpha=alpha, scores="calibrated", order="training").fit(XA, X_valid=XB)
        rf = qf.predict(Xt)
        row["training_order"] = {  # QWYC's thresholds on the training order: early trees share features
            "mean_trees": float(rf.trees_evaluated.mean()),
            "disagreement": float(np.mean(rf.labels != (full > plan.decision_threshold))),
            "calibrated": _metrics(yt, rf.scores),
            "feature_cost": _feature_cost(booster, qf.plan_, Xt, costs),
        }
        within = [p for p in sweep if p["mean_trees"] <= row["mean_trees"]]
        if within:
            best = dict(max(within, key=lambda p: p["partial"]["auc"]))
            plan_pes = pred_early_stop_plan(FT.shape[1], freq=best["freq"], margin=best["margin"])
            best["feature_cost"] = _feature_cost(booster, plan_pes, Xt, costs)
            row["pred_early_stop_at_equal_trees"] = best
        else:
            row["pred_early_stop_at_equal_trees"] = None
        agree = [p for p in sweep if p["disagreement"] <= row["disagreement"]]
        if agree:  # the same changed answers: fewest trees
            best = dict(min(agree, key=lambda p: p["mean_trees"]))
            plan_pes = pred_early_stop_plan(FT.shape[1], freq=best["freq"], margin=best["margin"])
            best["feature_cost"] = _feature_cost(booster, plan_pes, Xt, costs)
            row["pred_early_stop_at_equal_disagreement"] = best
        else:
            row["pred_early_stop_at_equal_disagreement"] = None
        out["qwyc"].append(row)
        pes = row["pred_early_stop_partial_at_qwyc_auc"]
        print(
            f"  alpha {alpha}: trees {row['mean_trees']:.1f} dis {row['disagreement']:.4f} "
            f"AUC partial {row['partial']['auc']:.4f} calibrated {row['calibrated']['auc']:.4f} "
            f"(maps A {row['calibrated_maps_on_order_rows']['auc']:.4f}, "
            f"B {row['calibrated_maps_on_holdout_rows']['auc']:.4f}) "
            f"LL partial {row['partial']['log_loss']:.4f} calibrated {row['calibrated']['log_loss']:.4f}; "
            f"pred_early_stop at that AUC: {pes and (pes['freq'], pes['margin'], round(pes['mean_trees'], 1))}",
            flush=True,
        )
    out["pred_early_stop_sweep"] = sweep
    return out


def load(name: str, data_dir: Path) -> Any:
    """A dataset of ``frontier_data``, or ``adult_rare``: Adult with its positives subsampled to 6%."""
    if name != "adult_rare":
        return LOADERS[name](data_dir)
    ds = LOADERS["adult"](data_dir)
    rng = np.random.default_rng(7)
    neg, pos = np.flatnonzero(ds.y == 0), np.flatnonzero(ds.y == 1)
    keep = np.sort(np.r_[neg, rng.choice(pos, round(RARE_SHARE / (1 - RARE_SHARE) * neg.size), replace=False)])
    return type(ds)("adult_rare", ds.X[keep], ds.y[keep], ds.names, "binary", note="Adult, 6% positives")


def _cpu(fn: Any) -> tuple[float, Any]:
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def run_default(name: str, data_dir: Path, seed: int, alphas: list[float], kinds: list[str]) -> dict[str, Any]:
    """The library's default fit: CPU time in trainings, test AUC against ``pred_early_stop``."""
    import warnings

    ds = load(name, data_dir)
    sp = split(ds, seed, cap=RARE_CAP if name == "adult_rare" else 10**9)
    params = dict(objective="binary", num_leaves=31, learning_rate=0.05, verbose=-1, num_threads=1, seed=seed)
    train = [_cpu(lambda: lgb.train(params, lgb.Dataset(sp.X_train, sp.y_train), ROUNDS)) for _ in range(3)]
    t_train, booster = float(np.median([t for t, _ in train])), train[0][1]
    Xc, Xt, yt = sp.X_valid, sp.X_test, sp.y_test
    full = booster.predict(Xt, raw_score=True)
    FT = QWYC.from_plan(booster, pred_early_stop_plan(ROUNDS, freq=1, margin=1.0))._outputs(Xt)[:, :, 0]
    sweep = []
    for freq in FREQS:
        for margin in MARGINS:
            pl = pred_early_stop_plan(ROUNDS, freq=freq, margin=margin)
            tr = core.early_exit(FT, pl.order, pl.eps_neg, pl.eps_pos)
            sweep.append({"freq": freq, "margin": margin, "mean_trees": float(tr.n_evaluated.mean()),
                          "disagreement": float(np.mean(tr.labels != (full > 0))),
                          "auc": _metrics(yt, tr.scores)["auc"]})
    QWYC(booster, holdout=None).fit(Xc[:50])  # load the compiled kernels before timing
    t_greedy, _ = _cpu(lambda: QWYC(booster, holdout=None, scores="partial").fit(Xc))
    out: dict[str, Any] = {"dataset": name, "seed": seed, "positives": float(ds.y.mean()),
                           "rows": {"train": len(sp.X_train), "calibration": len(Xc), "test": len(Xt)},
                           "train_cpu_s": t_train, "one_greedy_fit_cpu_s": t_greedy,
                           "full_auc": _metrics(yt, full)["auc"], "qwyc": []}
    for alpha in alphas:
        row: dict[str, Any] = {"alpha": alpha}
        for kind in kinds:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                t_fit, q = _cpu(lambda a=alpha, k=kind: QWYC(booster, alpha=a, scores=k).fit(Xc))
            res = q.predict(Xt)
            row[kind] = {"fit_cpu_s": t_fit, "fit_trainings": t_fit / t_train, "auc": _metrics(yt, res.scores)["auc"],
                         "mean_trees": float(res.trees_evaluated.mean()),
                         "disagreement": float(np.mean(res.labels != (full > 0))), "scores_": q.scores_,
                         "score_choice_": getattr(q, "score_choice_", None), "warned": bool(caught),
                         "message": q.result_.message, "rival_": q.rival_}
        dis = row[kinds[0]]["disagreement"]
        agree = [p for p in sweep if p["disagreement"] <= dis]
        row["pred_early_stop_at_equal_disagreement"] = min(agree, key=lambda p: p["mean_trees"]) if agree else None
        out["qwyc"].append(row)
        pes = row["pred_early_stop_at_equal_disagreement"]
        print(f"{name} alpha {alpha}: train {t_train:.2f} s; " + "; ".join(
            f"{k} fit {row[k]['fit_trainings']:.2f}x AUC {row[k]['auc']:.4f} trees {row[k]['mean_trees']:.1f} "
            f"dis {row[k]['disagreement']:.4f} ({row[k]['scores_']})" for k in kinds)
            + f"; pred_early_stop AUC {pes and round(pes['auc'], 4)} trees {pes and round(pes['mean_trees'], 1)}",
            flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = script_parser(__doc__, result_name="qwyc_scores",
                       quick={"datasets": ["heart"], "alphas": [0.005], "scores": ["auto"]})
    ap.add_argument("--part", choices=["scores", "default"], default="scores")
    ap.add_argument("--datasets", nargs="+", choices=[*sorted(LOADERS), "adult_rare"],
                    help="default: adult magic higgs heart (adult magic higgs adult_rare with --part default)")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--alphas", nargs="+", type=float,
                    help="default: 0.001 0.005 0.01 (0.005 0.01 with --part default)")
    ap.add_argument("--scores", nargs="+", default=["auto", "calibrated", "partial"], help="--part default: kinds fit")
    args = parse(ap, argv)
    default = args.part == "default"
    datasets = args.datasets or ["adult", "magic", "higgs", "adult_rare" if default else "heart"]
    alphas = args.alphas or ([0.005, 0.01] if default else [0.001, 0.005, 0.01])
    out = args.out
    if default and out == (RESULTS / "quick" if args.quick else RESULTS) / "qwyc_scores.json":
        out = out.with_name("qwyc_default.json")  # --part default's own results file, unless --out names one
    if default:
        runs = [run_default(d, args.data_dir, s, alphas, args.scores) for d in datasets for s in args.seeds]
    else:
        runs = [run_dataset(d, args.data_dir, s, alphas) for d in datasets for s in args.seeds]
    result = {
        "part": args.part, "datasets": datasets, "seeds": args.seeds, "alphas": alphas,
        "rounds": ROUNDS,
        "runs": runs,
    }
    write_results(out, result, "numpy", "lightgbm", "sklearn")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
