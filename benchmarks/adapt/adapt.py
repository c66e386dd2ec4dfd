"""Adapt-GBRT benchmark: Letters (RBF-SVM f0), Forest (Covertype 1 vs 2, RF f0), MAGIC (RF f0).

Usage::

    python -m benchmarks.adapt.adapt --data-dir DATA [--datasets letters forest magic] [--quick]

For every dataset: fit f0, then the competitors (interleaved in one run): Adapt-GBRT swept over
(P_full, gamma), ADAPT-LIN swept over (P_full, lambda), and the L1 baseline (its own candidate
grid). Every candidate is scored on validation and test with the unified cost rule (uniform unit
feature costs, as in the paper). The reported operating point of each method is the cheapest
validation candidate whose validation accuracy is within 1 point of f0's; its test accuracy and
cost are reported. Results go to ``benchmarks/results/adapt.json`` and plots to ``docs/img/``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_predict, train_test_split
from sklearn.svm import SVC

from benchmarks._runner import environment, parse, script_parser, write_results
from budget_extras.adapt import AdaptGBRT, AdaptLin, L1GateBaseline
from budget_extras.adapt._sweep import pareto_mask
from budget_extras.adapt._train import default_lgb_params

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GATE_THRESHOLDS = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0)
TARGETS = {"letters": 0.31, "forest": 0.32, "magic": 0.63}
ALL_METHODS = ("Adapt-GBRT", "L1 baseline", "ADAPT-LIN")
GREEDY = "P_full=0 (cost-penalized booster)"


# ------------------------------------------------------------------------------ data
def _letters(data_dir: str, *, binary: bool) -> dict[str, Any]:
    """UCI Letters, features divided by their training max (as the reference code), reference split."""
    d = pd.read_csv(os.path.join(data_dir, "letter", "letter-recognition.data"), header=None)
    letters = d.pop(0).to_numpy()
    y = (letters >= "N").astype(int) if binary else letters.astype(str)
    X = d.to_numpy(dtype=np.float64)
    X = X / np.abs(X[:12000]).max(axis=0)
    return {
        "X": X[:12000],
        "y": y[:12000],
        "Xv": X[12000:16000],
        "yv": y[12000:16000],
        "Xt": X[16000:],
        "yt": y[16000:],
        "f0_kind": "rbf_svm",
    }


def load_letters(data_dir: str) -> dict[str, Any]:
    """Letters, binary (letter >= 'N'), as in the paper."""
    return {
        **_letters(data_dir, binary=True),
        "split": "first 12,000 train / next 4,000 validation / last 4,000 test (reference split)",
    }


def load_letters26(data_dir: str) -> dict[str, Any]:
    """Letters with all 26 classes (the multiclass extension); the same split and scaling."""
    return {
        **_letters(data_dir, binary=False),
        "svm_gamma": 10.0,
        "methods": ("Adapt-GBRT",),  # ADAPT-LIN and the L1 baseline are binary only
        "split": "26 classes; first 12,000 train / next 4,000 validation / last 4,000 test",
    }


def _split_index(y: np.ndarray, n_tr: int, n_va: int, n_te: int, seed: int) -> tuple[np.ndarray, ...]:
    """Row indices of a stratified random train / validation / test split."""
    ia, it = train_test_split(
        np.arange(len(y)), test_size=n_te, train_size=n_tr + n_va, stratify=y, random_state=seed
    )
    i, iv = train_test_split(ia, test_size=n_va, stratify=y[ia], random_state=seed)
    return i, iv, it


def _split(X: np.ndarray, y: np.ndarray, n_tr: int, n_va: int, n_te: int, seed: int) -> dict[str, Any]:
    i, iv, it = _split_index(y, n_tr, n_va, n_te, seed)
    return {"X": X[i], "y": y[i], "Xv": X[iv], "yv": y[iv], "Xt": X[it], "yt": y[it]}


def load_forest(
    data_dir: str, n_tr: int = 20000, n_va: int = 20000, n_te: int = 10000, seed: int = 0
) -> dict[str, Any]:
    """Covertype classes 1 vs 2. ``seed != 0``: a fresh split of the rows the seed-0 split left unused."""
    d = pd.read_csv(os.path.join(data_dir, "covertype", "covertype_sample_397k.csv.gz"))
    d = d[d.Cover_Type.isin([1, 2])].reset_index(drop=True)
    y = (d.pop("Cover_Type").to_numpy() == 2).astype(int)
    num = d.iloc[:, :10].astype(np.float64)
    wild = pd.get_dummies(d.Wilderness_Area).astype(np.float64)
    soil = pd.get_dummies(d.Soil_Type).astype(np.float64)
    X = pd.concat([num, wild, soil], axis=1).to_numpy()
    if seed == 0:
        out = _split(X, y, n_tr, n_va, n_te, seed=0)
        pool = f"{len(y):,}"
    else:  # rows never used by the seed-0 split (default sizes), so looks at its test rows cannot leak
        used = np.concatenate(_split_index(y, 20000, 20000, 10000, seed=0))
        rest = np.setdiff1d(np.arange(len(y)), used)
        out = _split(X[rest], y[rest], n_tr, n_va, n_te, seed=seed)
        pool = f"the {len(rest):,} rows unused by the seed-0 split, seed {seed}"
    out.update(
        f0_kind="random_forest",
        split=f"stratified random {n_tr:,} train / {n_va:,} validation / "
        f"{n_te:,} test rows out of {pool} (classes 1 vs 2)",
    )
    return out


def load_magic(data_dir: str) -> dict[str, Any]:
    d = pd.read_csv(os.path.join(data_dir, "magic04", "magic04.data"), header=None)
    y = (d.pop(10) == "g").astype(int).to_numpy()
    X = d.to_numpy(dtype=np.float64)
    out = _split(X, y, 11412, 3804, 3804, seed=0)
    out.update(f0_kind="random_forest", split="stratified random 60% / 20% / 20%")
    return out


def load_synthetic2(_data_dir: str) -> dict[str, Any]:
    from budget_extras.adapt._synthetic import make_synthetic2

    rng = np.random.default_rng(0)
    out: dict[str, Any] = {}
    for key, n in (("", 2000), ("v", 2000), ("t", 4000)):
        out["X" + key], out["y" + key] = make_synthetic2(n, rng=rng)
    out.update(f0_kind="random_forest", split="2,000 / 2,000 / 4,000 fresh draws", f0_features="all")
    return out


# ------------------------------------------------------------------------ competitors
def fit_f0(ds: dict[str, Any], n_jobs: int) -> tuple[Any, np.ndarray]:
    """Fit f0 and return (f0, f0 probabilities for the training rows used in the q-step)."""
    X, y = ds["X"], ds["y"]
    if ds["f0_kind"] == "rbf_svm":
        # binary: C, gamma picked on the validation split from C=10, gamma in {5, 10, 20}
        # (0.973/0.980/0.987); 26 classes: uncalibrated 0.970/0.974/0.972, so gamma = 10
        f0 = CalibratedClassifierCV(SVC(C=10.0, gamma=ds.get("svm_gamma", 20.0)), ensemble=False, cv=3)
    else:
        f0 = RandomForestClassifier(n_estimators=100, n_jobs=n_jobs, random_state=0)
    # out-of-fold probabilities for the q-step: both models nearly memorize their training rows
    oof = cross_val_predict(f0, X, y, cv=3, method="predict_proba")
    return f0.fit(X, y), oof


class Method:
    name = ""

    def __init__(self, ds: dict[str, Any], f0: Any, p0_train: np.ndarray, ctx: dict[str, Any], quick: bool):
        self.ds, self.f0, self.p0_train, self.ctx, self.quick = ds, f0, p0_train, ctx, quick

    def setup(self) -> None:
        pass

    def run(self) -> pd.DataFrame:  # one row per candidate: val/test accuracy and cost
        raise NotImplementedError


class AdaptGBRTMethod(Method):
    name = "Adapt-GBRT"

    def model_columns(self) -> dict[str, Any]:
        """Size of g and f1 (trees, leaves, learning rate): candidates of differently sized sweeps pool."""
        params = {**default_lgb_params(), **(self.ctx["lgb_params"] or {})}
        return {
            "n_trees": self.ctx["n_trees"],
            "num_leaves": params["num_leaves"],
            "learning_rate": params["learning_rate"],
        }

    def run(self) -> pd.DataFrame:
        ds, c = self.ds, self.ctx
        pgrid = self.ctx["p_grid"] or (
            [0.0, 0.1, 0.3, 0.5] if self.quick else [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
        )
        ggrid = self.ctx["gamma_grid"] or ([3e-3, 3e-2] if self.quick else [1e-3, 2e-3, 5e-3, 1e-2, 2e-2])
        rows = []
        for g in ggrid:
            for p in pgrid:
                m = AdaptGBRT(
                    self.f0,
                    p_full=p,
                    gamma=g,
                    n_trees=self.ctx["n_trees"],
                    max_em_iter=self.ctx["em"],
                    lgb_params=self.ctx["lgb_params"],
                )
                m.fit(ds["X"], ds["y"], f0_proba_train=self.p0_train)
                # correctness gate: every q-step met P_full
                assert all(abs(h["mean_q"] - p) < 1e-5 for h in m.train_result_.history)
                for thr in self.ctx["gate_thresholds"]:  # the same model at shifted gate thresholds
                    m.set_params(gate_threshold=thr)
                    ev_v = m._evaluate(ds["Xv"], ds["yv"], p0=c["p0v"], f0_used=c["f0uv"])
                    ev_t = m._evaluate(ds["Xt"], ds["yt"], p0=c["p0t"], f0_used=c["f0ut"])
                    rows.append(
                        {
                            "p_full": p,
                            "gamma": g,
                            "gate_threshold": thr,
                            **self.model_columns(),
                            "nit": m.train_result_.nit,
                            "val_acc": ev_v["accuracy"],
                            "val_cost": ev_v["cost"],
                            "test_acc": ev_t["accuracy"],
                            "test_cost": ev_t["cost"],
                            "test_frac_f0": ev_t["frac_f0"],
                        }
                    )
                    if thr == 0.0:
                        print(
                            f"  adapt p_full={p} gamma={g}: val acc {ev_v['accuracy']:.4f} "
                            f"cost {ev_v['cost']:.2f} frac_f0 {ev_v['frac_f0']:.2f} "
                            f"(nit {m.train_result_.nit})",
                            flush=True,
                        )
        return pd.DataFrame(rows)


class AdaptLinMethod(Method):
    name = "ADAPT-LIN"

    def run(self) -> pd.DataFrame:
        ds, c = self.ds, self.ctx
        frames = []
        pgrid = [0.1, 0.3, 0.5] if self.quick else [0.1, 0.2, 0.3, 0.5, 0.7]
        lgrid = [1e-3, 1e-2] if self.quick else [1e-3, 3e-3, 1e-2, 3e-2]
        for lam in lgrid:
            for p in pgrid:
                m = AdaptLin(p_full=p, lam=lam, max_em_iter=10, max_iter=200)
                m.fit(ds["X"], ds["y"], self.f0, f0_proba_train=self.p0_train)
                v = m.evaluate(ds["Xv"], ds["yv"], f0_proba=c["p0v"], f0_used=c["f0uv"])
                t = m.evaluate(ds["Xt"], ds["yt"], f0_proba=c["p0t"], f0_used=c["f0ut"])
                frames.append(
                    pd.DataFrame(
                        {
                            "p_full": p,
                            "lam": lam,
                            "val_acc": v["accuracy"],
                            "val_cost": v["cost"],
                            "test_acc": t["accuracy"],
                            "test_cost": t["cost"],
                            "test_frac_f0": t["frac_f0"],
                        }
                    )
                )
        return pd.concat(frames, ignore_index=True)


class L1Method(Method):
    name = "L1 baseline"

    def run(self) -> pd.DataFrame:
        ds, c = self.ds, self.ctx
        n_c = self.ctx["l1_c"] or (5 if self.quick else 9)
        m = L1GateBaseline(C_grid=np.logspace(-3, 1, n_c), n_gate_weights=self.ctx["l1_w"]).fit(
            ds["X"], ds["y"], self.f0
        )
        v = m.evaluate(ds["Xv"], ds["yv"], f0_proba=c["p0v"], f0_used=c["f0uv"])
        t = m.evaluate(ds["Xt"], ds["yt"], f0_proba=c["p0t"], f0_used=c["f0ut"])
        return pd.DataFrame(
            {
                "val_acc": v["accuracy"],
                "val_cost": v["cost"],
                "test_acc": t["accuracy"],
                "test_cost": t["cost"],
                "test_frac_f0": t["frac_f0"],
            }
        )


def operating_point(df: pd.DataFrame, f0_val_acc: float, margin: float = 0.0) -> dict[str, float] | None:
    """Cheapest validation candidate with validation accuracy >= f0's - 0.01 + margin."""
    ok = df[df["val_acc"] >= f0_val_acc - 0.01 + margin]
    if ok.empty:
        return None
    r = ok.sort_values(["val_cost", "val_acc"], ascending=[True, False]).iloc[0]
    return {k: float(r[k]) for k in ("val_acc", "val_cost", "test_acc", "test_cost")}


def se_val_margin(z: float, f0_val_acc: float, n_valid: int) -> float:
    """Margin of ``z`` standard errors of a difference of two accuracies near ``f0_val_acc`` on ``n_valid`` rows.

    ``sqrt(2 a (1 - a) / n)`` is the standard error of the difference of two independent
    accuracies ``a``; a candidate and ``f0`` answer the same rows (positively correlated
    errors), so this overstates the paired standard error: a conservative margin.
    """
    return z * float(np.sqrt(2.0 * f0_val_acc * (1.0 - f0_val_acc) / n_valid))


# ---------------------------------------------------------------------------- driver
def run_dataset(name: str, ds: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    t0 = time.perf_counter()
    f0, p0_train = fit_f0(ds, args.n_jobs)
    f0_fit_s = time.perf_counter() - t0
    from budget_extras.adapt._f0 import F0Model

    f0m = F0Model(f0, features=ds.get("f0_features", "auto"), n_classes=np.unique(ds["y"]).size)
    ctx = {
        "p0v": f0m.proba(ds["Xv"]),
        "p0t": f0m.proba(ds["Xt"]),
        "f0uv": f0m.features_used(ds["Xv"]),
        "f0ut": f0m.features_used(ds["Xt"]),
        "n_trees": args.n_trees,
        "em": args.max_em_iter,
        "p_grid": args.p_grid,
        "l1_c": args.l1_c,
        "l1_w": args.l1_gate_weights,
        "gamma_grid": args.gamma_grid,
        "gate_thresholds": args.gate_thresholds or GATE_THRESHOLDS,
        "lgb_params": args.lgb_params,
    }
    classes = np.unique(ds["y"])
    f0_val_acc = float(np.mean(classes[np.argmax(ctx["p0v"], axis=1)] == ds["yv"]))
    f0_test_acc = float(np.mean(classes[np.argmax(ctx["p0t"], axis=1)] == ds["yt"]))
    f0_test_cost = float(ctx["f0ut"].sum(axis=1).mean())
    print(
        f"{name}: f0 ({ds['f0_kind']}) val acc {f0_val_acc:.4f} test acc {f0_test_acc:.4f} "
        f"cost {f0_test_cost:.2f} / {ds['X'].shape[1]} features",
        flush=True,
    )
    out: dict[str, Any] = {
        "n_features": int(ds["X"].shape[1]),
        "split": ds["split"],
        "f0": {
            "kind": ds["f0_kind"],
            "val_acc": f0_val_acc,
            "test_acc": f0_test_acc,
            "test_cost": f0_test_cost,
            "fit_s": f0_fit_s,
        },
        "methods": {},
    }
    wanted = set(ds.get("methods", ALL_METHODS)) & set(args.methods or ALL_METHODS)
    methods = [c for c in (AdaptGBRTMethod, L1Method, AdaptLinMethod) if c.name in wanted]
    for cls in methods:  # interleaved on the same f0 and splits
        meth = cls(ds, f0, p0_train, ctx, args.quick)
        meth.setup()
        t = time.perf_counter()
        df = meth.run()
        secs = time.perf_counter() - t
        df["on_val_frontier"] = pareto_mask(df["val_cost"].to_numpy(), df["val_acc"].to_numpy())
        op = operating_point(df, f0_val_acc, args.val_margin)
        red = None if op is None else 1.0 - op["test_cost"] / f0_test_cost
        out["methods"][cls.name] = {
            "seconds": secs,
            "operating_point": op,
            "cost_reduction": red,
            "candidates": df.to_dict(orient="list"),
        }
        if args.val_margin_se is not None:
            se_margin = se_val_margin(args.val_margin_se, f0_val_acc, len(ds["yv"]))
            op_se = operating_point(df, f0_val_acc, se_margin)
            out["methods"][cls.name]["se_margin"] = {
                "z": args.val_margin_se,
                "margin": se_margin,
                "operating_point": op_se,
                "cost_reduction": None if op_se is None else 1.0 - op_se["test_cost"] / f0_test_cost,
            }
            print(f"  {cls.name}: with a {se_margin:.4f} margin: {out['methods'][cls.name]['se_margin']}", flush=True)
        print(
            f"  {cls.name}: {len(df)} candidates in {secs:.0f}s; operating point {op}; cost reduction {red}",
            flush=True,
        )
        if cls is AdaptGBRTMethod:  # its P_full = 0 runs alone: the cost-penalized booster (no gate)
            out["methods"][GREEDY] = greedy_from_adapt(df, f0_val_acc, f0_test_cost, args.val_margin)
    return out


def greedy_from_adapt(df: pd.DataFrame, f0_val_acc: float, f0_test_cost: float, margin: float) -> dict[str, Any]:
    """The Adapt-GBRT candidates with P_full = 0 (GreedyMiser-style booster) as a method of their own."""
    g = df[df["p_full"] == 0.0].reset_index(drop=True)
    g["on_val_frontier"] = pareto_mask(g["val_cost"].to_numpy(), g["val_acc"].to_numpy())
    op = operating_point(g, f0_val_acc, margin)
    return {
        "seconds": None,
        "operating_point": op,
        "cost_reduction": None if op is None else 1.0 - op["test_cost"] / f0_test_cost,
        "candidates": g.to_dict(orient="list"),
    }


def append_sweep(old: dict[str, Any], new: dict[str, Any], margin: float) -> dict[str, Any]:
    """Union of two runs on the same splits and f0: candidates pooled, frontier and point redone."""
    if old["f0"]["val_acc"] != new["f0"]["val_acc"] or old["split"] != new["split"]:
        raise ValueError("--append needs the same split and f0 as the stored run.")
    out = dict(old, methods=dict(old["methods"]))
    f0_val, f0_cost = old["f0"]["val_acc"], old["f0"]["test_cost"]
    for name, res in new["methods"].items():
        if name == GREEDY:
            continue
        frames = [pd.DataFrame(res["candidates"])]
        if name in old["methods"]:
            frames.insert(0, pd.DataFrame(old["methods"][name]["candidates"]))
        if name == AdaptGBRTMethod.name:  # runs stored before these columns: the defaults of their sweep
            old_settings = old.get("sweeps", [old["settings"]])[0]
            sizes = {
                "n_trees": old_settings["n_trees"],
                "num_leaves": default_lgb_params()["num_leaves"],
                "learning_rate": default_lgb_params()["learning_rate"],
            }
            for f in frames:
                for col, val in sizes.items():
                    if col not in f:
                        f.insert(3, col, val)
        df = pd.concat(frames, ignore_index=True)
        df = df.drop_duplicates([c for c in df.columns if c != "on_val_frontier"], ignore_index=True)
        df["on_val_frontier"] = pareto_mask(df["val_cost"].to_numpy(), df["val_acc"].to_numpy())
        op = operating_point(df, f0_val, margin)
        secs = [m["seconds"] for m in (old["methods"].get(name), res) if m and m["seconds"] is not None]
        out["methods"][name] = {
            "seconds": float(sum(secs)),
            "operating_point": op,
            "cost_reduction": None if op is None else 1.0 - op["test_cost"] / f0_cost,
            "candidates": df.to_dict(orient="list"),
        }
        if name == AdaptGBRTMethod.name:
            out["methods"][GREEDY] = greedy_from_adapt(df, f0_val, f0_cost, margin)
    return out


def plot(results: dict[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in results["datasets"] if n != "synthetic2"]
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        r = results["datasets"][name]
        for meth, style, color in (
            ("Adapt-GBRT", "o-", "C0"),
            ("ADAPT-LIN", "s--", "C1"),
            ("L1 baseline", "^:", "C2"),
            (GREEDY, "x-.", "C3"),
        ):
            if meth not in r["methods"]:
                continue
            df = pd.DataFrame(r["methods"][meth]["candidates"])
            fr = df[df["on_val_frontier"]].sort_values("val_cost")
            ax.plot(fr["test_cost"], fr["test_acc"], style, color=color, label=meth, ms=4)
        ax.axhline(r["f0"]["test_acc"], color="k", lw=0.8, label="f0 accuracy")
        ax.axhline(r["f0"]["test_acc"] - 0.01, color="k", lw=0.5, ls=":", label="f0 - 1 point")
        ax.axvline(r["f0"]["test_cost"], color="gray", lw=0.8)
        ax.set_title(f"{name} (f0: {r['f0']['kind']})")
        ax.set_xlabel("test mean feature cost per row")
        ax.set_ylabel("test accuracy")
        lo = r["f0"]["test_acc"] - 0.08
        ax.set_ylim(lo, min(1.0, r["f0"]["test_acc"] + 0.02))
    axes[0][0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = script_parser(__doc__.splitlines()[0], result_name="adapt",
                       quick={"plot": None, "n_trees": 20, "max_em_iter": 3, "forest_train": 5000})
    ap.add_argument("--datasets", nargs="+", default=["letters", "forest", "magic"])
    ap.add_argument("--n-trees", type=int, default=100)
    ap.add_argument("--max-em-iter", type=int, default=10)
    ap.add_argument("--forest-train", type=int, default=20000)
    ap.add_argument("--forest-valid", type=int, default=20000, help="Forest validation rows")
    ap.add_argument("--forest-test", type=int, default=10000, help="Forest test rows")
    ap.add_argument(
        "--forest-seed", type=int, default=0, help="Forest split seed; not 0: drawn from the rows seed 0 left unused"
    )
    ap.add_argument(
        "--val-margin-se",
        type=float,
        help="also report a second operating point whose margin is Z standard errors of a difference of two "
        "accuracies at f0's validation accuracy a (unpaired, so conservative): Z * sqrt(2 a (1 - a) / n_valid)",
    )
    ap.add_argument(
        "--val-margin", type=float, default=0.0, help="operating point: validation accuracy >= f0's - 0.01 + margin"
    )
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--l1-c", type=int, help="number of L1 strengths of the L1 baseline (default 9)")
    ap.add_argument("--l1-gate-weights", type=int, default=10, help="gate class weights of the L1 baseline")
    ap.add_argument("--p-grid", type=float, nargs="+", help="Adapt-GBRT P_full grid")
    ap.add_argument("--gamma-grid", type=float, nargs="+", help="Adapt-GBRT gamma grid")
    ap.add_argument("--gate-thresholds", type=float, nargs="+", help=f"Adapt-GBRT gate thresholds {GATE_THRESHOLDS}")
    ap.add_argument(
        "--lgb-params",
        type=json.loads,
        help='Adapt-GBRT LightGBM overrides for g and f1, JSON, e.g. \'{"num_leaves": 16, "learning_rate": 0.1}\'',
    )
    ap.add_argument("--methods", nargs="+", choices=ALL_METHODS, help="run only these methods")
    ap.add_argument(
        "--append", action="store_true", help="pool the candidates with the stored run of the dataset (same split, f0)"
    )
    ap.add_argument("--plot", default=os.path.join(ROOT, "docs", "img", "adapt_tradeoff.png"))
    ap.add_argument("--plot-only", action="store_true", help="re-plot an existing results file")
    args = parse(ap, argv)
    if args.plot_only:
        with open(args.out, encoding="utf-8") as fh:
            plot(json.load(fh), args.plot)
        return 0
    loaders = {
        "letters": load_letters,
        "letters26": load_letters26,
        "forest": lambda d: load_forest(d, args.forest_train, args.forest_valid, args.forest_test, args.forest_seed),
        "synthetic2": load_synthetic2,
        "magic": load_magic,
    }
    results: dict[str, Any] = {
        **environment("lightgbm", "sklearn", "numpy"),
        "settings": {
            "n_trees": args.n_trees,
            "max_em_iter": args.max_em_iter,
            "quick": args.quick,
            "costs": "uniform, 1 per feature",
            "selection": "cheapest validation candidate with "
            "validation accuracy >= f0 validation accuracy - 0.01",
        },
        "targets_cost_reduction": TARGETS,
        "datasets": {},
    }
    if os.path.exists(args.out):  # keep the other datasets already in the results file
        with open(args.out, encoding="utf-8") as fh:
            results["datasets"] = json.load(fh).get("datasets", {})
    for name in args.datasets:
        new = run_dataset(name, loaders[name](args.data_dir), args)
        new["settings"] = dict(
            results["settings"],
            forest_train=args.forest_train,
            forest_valid=args.forest_valid,
            forest_test=args.forest_test,
            forest_seed=args.forest_seed,
            val_margin_se=args.val_margin_se,
            val_margin=args.val_margin,
            l1_c=args.l1_c,
            l1_gate_weights=args.l1_gate_weights,
            p_grid=args.p_grid,
            gamma_grid=args.gamma_grid,
            gate_thresholds=args.gate_thresholds,
            lgb_params=args.lgb_params,
            methods=args.methods,
        )
        if args.append and name in results["datasets"]:
            old = results["datasets"][name]
            sweeps = [*old.get("sweeps", [old["settings"]]), new["settings"]]
            new = dict(append_sweep(old, new, args.val_margin), sweeps=sweeps)
        results["datasets"][name] = new
        write_results(args.out, results)
    if args.plot:
        plot(results, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
