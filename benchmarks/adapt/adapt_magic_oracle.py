"""How far can any gate + f1 on a feature subset go on MAGIC? (evidence for the 63% target).

Usage::

    python -m benchmarks.adapt.adapt_magic_oracle --data-dir DATA

The systems of Adapt-GBRT's form: ``f1`` and the gate read a feature subset ``S`` on every row,
rows sent to ``f0`` (the benchmark's random forest, which reads all 10 features) pay all 10.
With uniform unit costs the mean cost is ``|S| + (10 - |S|) * share_to_f0``, so the 63% target
(mean cost <= 3.7) needs ``|S| <= 3`` and at most ``(3.7 - |S|) / (10 - |S|)`` of the rows sent
to ``f0``. For every ``S`` with ``|S| <= 3`` (175 subsets):

* ``f1_S``: an unpenalized LightGBM model on ``S`` (more capacity than Adapt-GBRT's f1);
* **oracle gate**: sends to ``f0`` exactly the rows where ``f0`` is right and ``f1_S`` wrong
  (an upper bound for every gate, also gates on other features, given ``f1_S``);
* **learned gate on S**: a LightGBM regressor on ``x_S`` predicting ``[f0 right] - [f1 right]``
  (out-of-fold on the training rows), sending the rows with the largest predicted gain.

The accuracy is read on the benchmark's test split at the largest share to ``f0`` that keeps the
cost <= 3.7 and compared with ``f0``'s test accuracy - 1 point. Results:
``benchmarks/results/adapt_magic_oracle.json``.
"""

from __future__ import annotations

import itertools
from typing import Any

import lightgbm as lgb
import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import KFold, cross_val_predict

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.adapt.adapt import load_magic

F1_PARAMS = {"objective": "binary", "num_leaves": 15, "learning_rate": 0.05, "num_threads": 1, "verbose": -1}
GATE_PARAMS = {"objective": "regression", "num_leaves": 15, "learning_rate": 0.05, "num_threads": 1, "verbose": -1}


def _fit(params: dict[str, Any], X: np.ndarray, y: np.ndarray, rounds: int) -> Any:
    return lgb.train(params, lgb.Dataset(X, label=y), num_boost_round=rounds)


def _oof(params: dict[str, Any], X: np.ndarray, y: np.ndarray, rounds: int) -> np.ndarray:
    out = np.zeros(len(y))
    for tr, te in KFold(3, shuffle=True, random_state=0).split(X):
        out[te] = _fit(params, X[tr], y[tr], rounds).predict(X[te])
    return out


def subset_system(
    ds: dict[str, Any], S: tuple[int, ...], f0_oof_ok: np.ndarray, f0_test_ok: np.ndarray
) -> dict[str, Any]:
    """Best test accuracy at cost <= 3.7 of f1_S with the oracle gate and with a learned gate on S."""
    cols = list(S)
    X, y, Xt, yt = ds["X"][:, cols], ds["y"], ds["Xt"][:, cols], ds["yt"]
    f1 = _fit(F1_PARAMS, X, y, 300)
    f1_test_ok = (f1.predict(Xt) > 0.5) == yt
    f1_oof_ok = (_oof(F1_PARAMS, X, y, 300) > 0.5) == y
    k = len(S)
    max_share = max(0.0, (3.7 - k) / (10 - k))
    n_f0 = int(np.floor(max_share * len(yt) + 1e-9))
    gain = f0_test_ok.astype(int) - f1_test_ok.astype(int)
    oracle_acc = float(f1_test_ok.mean() + min(n_f0, int((gain > 0).sum())) / len(yt))
    gate = _fit(GATE_PARAMS, X, f0_oof_ok.astype(float) - f1_oof_ok.astype(float), 200)
    order = np.argsort(-gate.predict(Xt), kind="stable")[:n_f0]
    sys_ok = f1_test_ok.copy()
    sys_ok[order] = f0_test_ok[order]
    return {
        "features": cols,
        "f1_test_acc": float(f1_test_ok.mean()),
        "max_share_to_f0": max_share,
        "oracle_gate_test_acc": oracle_acc,
        "learned_gate_test_acc": float(sys_ok.mean()),
    }


def main(argv: list[str] | None = None) -> int:
    ap = script_parser(__doc__.splitlines()[0], result_name="adapt_magic_oracle", quick={"max_features": 1})
    ap.add_argument("--max-features", type=int, default=3, help="largest feature subset of f1 (--quick: 1)")
    args = parse(ap, argv)
    ds = load_magic(args.data_dir)
    f0 = RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=0)
    f0_oof = cross_val_predict(f0, ds["X"], ds["y"], cv=3, method="predict_proba")[:, 1]
    f0.fit(ds["X"], ds["y"])
    f0_test_ok = f0.predict(ds["Xt"]) == ds["yt"]
    f0_oof_ok = (f0_oof > 0.5) == ds["y"]
    need = float(f0_test_ok.mean()) - 0.01
    print(f"f0 test accuracy {f0_test_ok.mean():.4f}; needed {need:.4f} at mean cost <= 3.7", flush=True)
    rows = []
    for k in range(1, args.max_features + 1):
        for S in itertools.combinations(range(10), k):
            r = subset_system(ds, S, f0_oof_ok, f0_test_ok)
            rows.append(r)
        best = max((r for r in rows if len(r["features"]) == k), key=lambda r: r["oracle_gate_test_acc"])
        best_l = max((r for r in rows if len(r["features"]) == k), key=lambda r: r["learned_gate_test_acc"])
        print(
            f"|S|={k}: best f1 {max(r['f1_test_acc'] for r in rows if len(r['features']) == k):.4f}; "
            f"oracle gate {best['oracle_gate_test_acc']:.4f} {best['features']}; "
            f"learned gate {best_l['learned_gate_test_acc']:.4f} {best_l['features']}",
            flush=True,
        )
    feasible_oracle = [r for r in rows if r["oracle_gate_test_acc"] >= need]
    feasible_learned = [r for r in rows if r["learned_gate_test_acc"] >= need]
    out: dict[str, Any] = {
        "f0_test_acc": float(f0_test_ok.mean()),
        "needed_test_acc": need,
        "max_mean_cost": 3.7,
        "f1_params": F1_PARAMS,
        "gate_params": GATE_PARAMS,
        "subsets": rows,
        "feasible_oracle": feasible_oracle,
        "feasible_learned": feasible_learned,
    }
    write_results(args.out, out, "lightgbm", "sklearn")
    print(f"feasible with oracle gate: {len(feasible_oracle)}; learned: {len(feasible_learned)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
