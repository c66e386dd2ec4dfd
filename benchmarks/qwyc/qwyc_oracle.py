"""How few trees can an early-exit plan use at 0.5% held-out disagreement on Adult? (target: 40 trees)

Usage::

    python -m benchmarks.qwyc.qwyc_oracle --data-dir DATA [--out benchmarks/results/qwyc_oracle.json] [--quick]

``--quick``: a few settings of each part.

Same model, order rows and test folds as ``benchmarks/qwyc/qwyc.py`` (UCI Adult, 500 trees of depth
5, learning rate 0.05; order rows: 15,000 training rows; the test file split in two folds).
Every part below gives a plan an advantage no held-out procedure has: the one free parameter is
chosen on the very rows it is scored on (**oracle shift**), so each number is a lower bound on
the mean trees any held-out calibration of that family can reach at the stated disagreement.

* **A, family ceiling.** Greedy order and base thresholds fit on the order rows (margin x
  ``alpha_fit`` grid), each shift shape; the shift ``lambda`` is the one that gives the fewest
  trees on the evaluation fold with disagreement <= the target there.
* **B, calibration size.** The same with base plans fit on 2,000 to 32,561 rows (training rows,
  or rows of the other test fold): does more calibration data help?
* **C, order oracle.** The greedy order chosen on the evaluation fold itself; thresholds from the
  order rows; oracle shift.
* **D, another threshold family.** Thresholds from a Lagrangian optimal-stopping backward pass
  (cost 1 per tree, ``penalty`` per disagreement, one threshold pair per position, fit on all
  training rows as in regression-based optimal stopping): held-out points without a shift, and
  with the oracle shift.
* **E, in-sample.** Algorithm 2 fit on a fold at the target itself (the paper's procedure):
  trees on that fold, and disagreement on the other.
* **F, two free parameters.** One shift per side (negative exits, positive exits), both chosen on
  the evaluation fold: a richer family than any of ours, and still an oracle.

The oracle shift is exact, not a grid: a row's exit position is a step function of ``lambda``
with breakpoints at its critical values (``_qwyc_core.critical_values``), so trees(lambda) and
disagreement(lambda) are evaluated at every breakpoint; the chosen point is re-evaluated with
``_qwyc_core.early_exit``, and the reported numbers are the predictor's.
"""

from __future__ import annotations

import json
import time
from typing import Any

import lightgbm as lgb
import numpy as np

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.qwyc.qwyc import CATS, load_adult
from budget_extras.qwyc import _kernels as core
from budget_extras.qwyc._baselines import pred_early_stop_plan
from budget_extras.qwyc._estimator import QWYC

T = 500
TARGETS = (0.005, 0.001)


def oracle_shift(
    F: np.ndarray, order: np.ndarray, en: np.ndarray, ep: np.ndarray, scale: np.ndarray, alpha: float
) -> tuple[float, int, float] | None:
    """Fewest mean trees on rows ``F`` over all shifts ``lambda`` with disagreement <= ``alpha`` on ``F``.

    Returns ``(trees_sum, wrong, lambda)`` (sums over the rows of ``F``) or ``None``.
    """
    n = F.shape[0]
    C = np.cumsum(F[:, order], axis=1)
    y = C[:, -1] > 0
    c, positive = core.critical_values(C, en, ep, scale)
    wrong = positive != y[:, None]
    prev, rec = core.exit_records(c)  # the row exits at position r exactly for lambda in [prev_r, c_r)
    ri, rr = np.nonzero(rec)
    starts, ends = prev[ri, rr], c[ri, rr]
    w_t, w_e = (rr + 1).astype(float), wrong[ri, rr].astype(float)
    cmax = np.max(c, axis=1, initial=-np.inf)
    fin = np.isfinite(cmax)
    base_t = float(T * np.sum(~fin))
    # trees(x) = base + sum_{start <= x} w - sum_{end <= x} w + T #{cmax <= x}
    s_ord, e_ord = np.argsort(starts), np.argsort(ends)
    s_sorted, e_sorted, m_sorted = starts[s_ord], ends[e_ord], np.sort(cmax[fin])
    cs_t, ce_t = np.concatenate([[0.0], np.cumsum(w_t[s_ord])]), np.concatenate([[0.0], np.cumsum(w_t[e_ord])])
    cs_e, ce_e = np.concatenate([[0.0], np.cumsum(w_e[s_ord])]), np.concatenate([[0.0], np.cumsum(w_e[e_ord])])
    cand = np.unique(np.concatenate([s_sorted[np.isfinite(s_sorted)], e_sorted, m_sorted]))
    i_s = np.searchsorted(s_sorted, cand, side="right")
    i_e = np.searchsorted(e_sorted, cand, side="right")
    i_m = np.searchsorted(m_sorted, cand, side="right")
    trees = base_t + cs_t[i_s] - ce_t[i_e] + T * i_m
    errs = cs_e[i_s] - ce_e[i_e]
    ok = errs <= alpha * n + 1e-9
    if not ok.any():
        return None
    # trees and errors are constant on [cand[k], cand[k+1]): evaluate the middle with the real
    # predictor (floating-point ties at clipped thresholds can move a row), best verified point first
    for k in np.flatnonzero(ok)[np.argsort(trees[ok], kind="stable")][:50]:
        lam = float(0.5 * (cand[k] + cand[k + 1])) if k + 1 < cand.size else float(cand[k] + 1.0)
        en2, ep2 = core.shift_thresholds(en, ep, lam, scale)
        tr = core.early_exit(F, order, en2, ep2)
        t_sum, wrong_n = float(tr.n_evaluated.sum()), int(np.sum(tr.labels != y))
        assert abs(t_sum - trees[k]) <= 0.01 * trees[k] and abs(wrong_n - errs[k]) <= 3, (lam, t_sum, trees[k])
        if wrong_n <= alpha * n + 1e-9:
            return t_sum, wrong_n, lam
    return None


def both_folds(Fte: np.ndarray, folds: list[np.ndarray], plans: list[tuple], shape: Any, alpha: float) -> dict:
    """Oracle shift on each fold (``plans[i]`` is scored on ``folds[i]``); pooled mean trees and disagreement."""
    t_sum = e_sum = 0.0
    lams = []
    for fold, (order, en, ep, FA) in zip(folds, plans, strict=True):
        scale = shape_scale(shape, FA, order, en, ep)
        r = oracle_shift(Fte[fold], order, en, ep, scale, alpha)
        if r is None:
            return {"trees": None}
        t_sum, e_sum = t_sum + r[0], e_sum + r[1]
        lams.append(r[2])
    n = sum(len(f) for f in folds)
    return {"trees": round(t_sum / n, 2), "disagreement": round(e_sum / n, 5), "lambdas": lams}


def shape_scale(shape: str, FA: np.ndarray, order: np.ndarray, en: np.ndarray, ep: np.ndarray) -> np.ndarray:
    if shape == "constant":
        return np.ones(order.size)
    if shape == "residual_std":
        return core.residual_scale(FA, order)
    return core.extreme_spacing(FA, order, en, ep, k=30)


def lagrangian_thresholds(F: np.ndarray, order: np.ndarray, penalty: float) -> tuple[np.ndarray, np.ndarray]:
    """Backward induction: at each position the threshold pair minimizing trees + penalty * disagreement.

    Rows that continue pay 1 + their realized cost-to-go under the thresholds already chosen for
    the later positions; rows that stop pay ``penalty`` if their label is wrong. Per side, the
    best prefix of rows sorted by partial score is stopped (splits only between distinct scores).
    """
    S = np.cumsum(F[:, order], axis=1)
    y = S[:, -1] > 0
    n = S.shape[0]
    en, ep = np.full(T, -np.inf), np.full(T, np.inf)
    V = np.zeros(n)
    for r in range(T - 2, -1, -1):
        cont, s = 1.0 + V, S[:, r]
        stop = np.zeros(n, bool)
        for sign, err in ((1.0, ~y), (-1.0, y)):
            idx = np.flatnonzero(sign * s > 0)
            o = idx[np.argsort(-sign * s[idx], kind="stable")]
            v = sign * s[o]
            pre = np.concatenate([[0.0], np.cumsum(cont[o] - penalty * err[o])])
            pre[1:-1][v[:-1] == v[1:]] = -np.inf
            k = int(np.argmax(pre))
            if k > 0:
                thr = sign * 0.5 * (v[k - 1] + (v[k] if k < v.size else 0.0))
                if sign > 0:
                    ep[r] = thr
                else:
                    en[r] = thr
                stop[o[:k]] = True
        V = np.where(stop, penalty * np.where(s > 0, ~y, y), cont)
    return en, ep


def exit_sums(F: np.ndarray, order: np.ndarray, en: np.ndarray, ep: np.ndarray) -> tuple[int, int]:
    """Trees evaluated and disagreements with the full ensemble, summed over the rows of ``F`` (no shift)."""
    tr = core.early_exit(F, order, en, ep)
    return int(tr.n_evaluated.sum()), int(np.sum(tr.labels != (F.sum(axis=1) > 0)))


def held_out_point(Fte: np.ndarray, order: np.ndarray, en: np.ndarray, ep: np.ndarray) -> dict[str, float]:
    """Mean trees and disagreement of a plan on all test rows, without any shift."""
    trees, wrong = exit_sums(Fte, order, en, ep)
    return {"trees": round(trees / len(Fte), 2), "disagreement": round(wrong / len(Fte), 5)}


def main(argv: list[str] | None = None) -> int:
    args = parse(script_parser(__doc__, result_name="qwyc_oracle"), argv)
    t_start = time.perf_counter()

    Xtr, ytr, Xte, _, names = load_adult(args.data_dir)
    params = dict(objective="binary", learning_rate=0.05, max_depth=5, num_leaves=32, verbose=-1, num_threads=1, seed=0)
    booster = lgb.train(
        params,
        lgb.Dataset(Xtr, ytr, feature_name=names, categorical_feature=[names.index(c) for c in CATS]),
        num_boost_round=500,
    )
    rng = np.random.default_rng(0)  # the same draws as benchmarks/qwyc/qwyc.py
    pa = rng.permutation(len(Xtr))
    perm = rng.permutation(len(Xte))
    folds = [np.sort(perm[: len(perm) // 2]), np.sort(perm[len(perm) // 2 :])]
    helper = QWYC.from_plan(booster, pred_early_stop_plan(T, freq=1, margin=0.0))
    Ftr, Fte = helper._outputs(Xtr)[:, :, 0], helper._outputs(Xte)[:, :, 0]
    assert np.allclose(Fte.sum(axis=1), booster.predict(Xte, raw_score=True))
    FA = Ftr[pa[:15000]]
    out: dict[str, Any] = {
        "setup": "Adult, 500 trees depth 5, lr 0.05; order rows: 15,000 training rows; "
        "shift chosen on the evaluation fold itself (oracle)"
    }

    def log(part: str, row: dict) -> None:
        out.setdefault(part, []).append(row)
        print(part, json.dumps(row), f"[{time.perf_counter() - t_start:.0f}s]", flush=True)

    margins, alpha_fits = ([0.1], [0.0]) if args.quick else ([0.0, 0.1, 0.2], [0.0, 0.002, 0.005])
    greedy: dict[tuple[float, float], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for margin in margins:
        for af in alpha_fits:
            order, en, ep = greedy[margin, af] = core.greedy_plan(FA, alpha=af, costs=np.ones(T), margin=margin)
            for shape in ("constant", "extreme_spacing", "residual_std"):
                for a in TARGETS:
                    r = both_folds(Fte, folds, [(order, en, ep, FA)] * 2, shape, a)
                    log("A_family_ceiling", {"margin": margin, "alpha_fit": af, "shape": shape, "target": a, **r})

    sizes = {"training rows": [4000, 8000, 15000, 32561], "other test fold": [2000, 4000, 8140]}
    if args.quick:
        sizes = {"training rows": [4000], "other test fold": [2000]}
    sub_rng = np.random.default_rng(1)
    for pool_name, ns in sizes.items():
        for n_rows in ns:
            plans = []
            for i in range(2):
                pool = Ftr if pool_name == "training rows" else Fte[folds[1 - i]]
                sub = pool[sub_rng.choice(len(pool), min(n_rows, len(pool)), replace=False)]
                order, en, ep = core.greedy_plan(sub, alpha=0.0, costs=np.ones(T), margin=0.1)
                plans.append((order, en, ep, sub))
            for shape in ("constant", "extreme_spacing"):
                r = both_folds(Fte, folds, plans, shape, 0.005)
                log("B_calibration_size", {"pool": pool_name, "rows": n_rows, "shape": shape, "target": 0.005, **r})

    fold_orders = [core.greedy_plan(Fte[fold], alpha=0.0, costs=np.ones(T), margin=0.1)[0] for fold in folds]
    for af_thr in (0.0, 0.002):
        plans = []
        for order in fold_orders:
            en, ep = core.fixed_order_thresholds(FA, order, alpha=af_thr, margin=0.1)
            plans.append((order, en, ep, FA))
        r = both_folds(Fte, folds, plans, "constant", 0.005)
        log("C_order_oracle", {"threshold_alpha_fit": af_thr, "target": 0.005, **r})

    order, en0, ep0 = greedy[0.1, 0.0]
    for penalty in [3000.0] if args.quick else [1000.0, 2000.0, 3000.0, 5000.0, 10000.0]:
        en, ep = lagrangian_thresholds(Ftr, order, penalty)
        r = both_folds(Fte, folds, [(order, en, ep, FA)] * 2, "constant", 0.005)
        log(
            "D_lagrangian",
            {
                "penalty": penalty,
                "held_out_no_shift": held_out_point(Fte, order, en, ep),
                "oracle_shift_target": 0.005,
                "oracle_shift": r,
            },
        )

    for shape in ("constant", "extreme_spacing"):
        t_sum = e_sum = 0.0
        best_lams = []
        scale = shape_scale(shape, FA, order, en0, ep0)
        sn, sp = core._sides(scale)
        scale_pos = np.vstack([np.full(T, 1e-12), sp])  # only the positive side moves with lambda
        for fold in folds:
            best = None
            one = oracle_shift(Fte[fold], order, en0, ep0, scale, 0.005)
            assert one is not None  # the one-shift optimum is in the grid: two shifts can only do better
            width = 0.1 if shape == "constant" else 1.0
            for lam_neg in one[2] + width * np.linspace(-1.0, 1.0, 9 if args.quick else 41):
                en_f = core.shift_thresholds(en0, ep0, lam_neg, sn)[0]  # negative side fixed at lam_neg
                r = oracle_shift(Fte[fold], order, en_f, ep0, scale_pos, 0.005)
                if r is not None and (best is None or r[0] < best[0]):
                    best = (r[0], r[1], (float(lam_neg), r[2]))
            assert best is not None
            t_sum, e_sum = t_sum + best[0], e_sum + best[1]
            best_lams.append(best[2])
        log(
            "F_two_shifts",
            {
                "margin": 0.1,
                "alpha_fit": 0.0,
                "shape": shape,
                "target": 0.005,
                "trees": round(t_sum / len(Xte), 2),
                "disagreement": round(e_sum / len(Xte), 5),
                "lambdas_neg_pos": best_lams,
            },
        )

    for a in TARGETS:
        t_in = t_out = e_in = e_out = 0.0
        for i, fold in enumerate(folds):
            order, en, ep = core.greedy_plan(Fte[fold], alpha=a, costs=np.ones(T), margin=0.0)
            (ti, ei), (to, eo) = exit_sums(Fte[fold], order, en, ep), exit_sums(Fte[folds[1 - i]], order, en, ep)
            t_in, e_in, t_out, e_out = t_in + ti, e_in + ei, t_out + to, e_out + eo
        n = len(Xte)
        log(
            "E_in_sample",
            {
                "alpha": a,
                "trees_in_sample": round(t_in / n, 2),
                "disagreement_in_sample": round(e_in / n, 5),
                "trees_other_fold": round(t_out / n, 2),
                "disagreement_other_fold": round(e_out / n, 5),
            },
        )

    out["seconds"] = round(time.perf_counter() - t_start, 1)
    write_results(args.out, out, "numpy", "lightgbm")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
