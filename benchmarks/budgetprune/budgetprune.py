"""BudgetPrune benchmark: accuracy-cost curves (paper, section 5) and solver speed against HiGHS.

Usage::

    python -m benchmarks.budgetprune.budgetprune --data-dir DATA [--part curves|speed|scale|all|report] [--quick]

``DATA`` holds ``covertype/covertype_sample_397k.csv.gz`` and ``magic04/magic04.data`` (UCI).
Results go to ``benchmarks/results/budgetprune.json`` (merged into the file there: each part
rewrites its own keys) and plots to ``docs/img/``. ``--quick``: small training sets, 3 lambda
points without the retrained reference, 2 speed sizes, a 20-tree x 5,000-row scale run; results
and plots under ``benchmarks/results/quick/``.

Curves: Forest (Covertype classes 1 vs 2) and MAGIC (stand-in for MiniBooNE), a 40-tree LightGBM
random forest of fully grown trees (the paper's; ``--num-leaves 255 --min-data-in-leaf 2`` gives the
255-leaf configuration), uniform feature costs; methods: BudgetPrune (lambda sweep; in-bag, all
training rows, out-of-bag and loss error terms), cost-complexity pruning (alpha sweep), GreedyPrune
(its removal path), BudgetRF-style Gini threshold (tau sweep), the unpruned forest and, as a
reference that is not a pruning, forests retrained on the top-k features. Each curve is read on test
and, honestly, at the point chosen on validation (``operating_points``). Every method returns the
leaves of a pruned forest, scored by one accounting: test accuracy of the pruned LightGBM model and
average number of distinct features a test row acquires.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pandas as pd

from benchmarks._runner import RESULTS, parse, script_parser, write_results
from budget_extras.budgetprune import PruneProblem, _solver, build_problem, lp_highs, solve_primal_dual
from budget_extras.budgetprune._baselines import ccp_prune, gini, greedy_prune_path, threshold_prune
from budget_extras.budgetprune._leaves import leaf_nodes, pruned_leaf_map, raw_from_leaves
from budget_extras.budgetprune._setup import prepare

ROOT = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- data
def load_forest(data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    d = pd.read_csv(data_dir / "covertype" / "covertype_sample_397k.csv.gz")
    d = d[d.Cover_Type.isin([1, 2])].reset_index(drop=True)
    y = (d.pop("Cover_Type").to_numpy() == 2).astype(int)
    num = d.iloc[:, :10].copy()
    for i, w in enumerate(sorted(d.Wilderness_Area.unique()), 1):
        num[f"Wilderness_Area{i}"] = (d.Wilderness_Area == w).astype(np.int8)
    for i, s in enumerate(sorted(d.Soil_Type.unique()), 1):
        num[f"Soil_Type{i}"] = (d.Soil_Type == s).astype(np.int8)
    return num.to_numpy(dtype=np.float64), y


def load_magic(data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    d = pd.read_csv(data_dir / "magic04" / "magic04.data", header=None)
    y = (d.pop(10) == "g").astype(int).to_numpy()
    return d.to_numpy(dtype=np.float64), y


def split(X, y, sizes, seed):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))
    out, start = [], 0
    for s in sizes:
        part = idx[start : start + s]
        out += [X[part], y[part]]
        start += s
    return out


def train_rf(X, y, n_trees, *, num_leaves, min_data_in_leaf=2, seed=0):
    """A LightGBM random forest; ``num_leaves > 255`` with ``min_data_in_leaf=1`` grows trees fully.

    Fully grown trees (the paper's, scikit-learn style) stop only on pure nodes (or one row); the
    histogram pool is capped because LightGBM would otherwise reserve one histogram per leaf.
    """
    d = X.shape[1]
    params = dict(
        objective="binary",
        boosting="rf",
        bagging_fraction=0.632,
        bagging_freq=1,
        feature_fraction_bynode=float(min(1.0, np.sqrt(d) / d * 2)),
        num_leaves=num_leaves,
        min_data_in_leaf=min_data_in_leaf,
        verbose=-1,
        seed=seed,
        num_threads=1,
    )
    if num_leaves > 255:
        params.update(max_depth=-1, min_sum_hessian_in_leaf=0.0, histogram_pool_size=256)
    return lgb.train(params, lgb.Dataset(X, y), num_boost_round=n_trees)


# -------------------------------------------------------------------------- methods
class Method:
    name = ""

    def setup(self, ctx):
        pass

    def run(self, ctx):
        raise NotImplementedError


class Unpruned(Method):
    name = "Unpruned RF"

    def run(self, ctx):
        return [("-", ctx["problem"].is_leaf.copy())]


class BudgetPruneMethod(Method):
    name = "BudgetPrune"

    def __init__(self, lams, max_iter, *, problem_key="problem", name=None):
        self.lams, self.max_iter, self.problem_key = lams, max_iter, problem_key
        if name:
            self.name = name

    def run(self, ctx):
        out, beta, prev, self.stats = [], None, None, []
        for lam in self.lams:
            if beta is not None:
                beta = beta * (lam / prev)  # warm start, rescaled to the new lambda
            r = solve_primal_dual(ctx[self.problem_key], lam, max_iter=self.max_iter, beta0=beta)
            beta, prev = r.beta, lam
            self.stats.append(
                dict(lam=lam, status=r.status, rel_gap=r.rel_gap, iterations=r.nit, seconds=r.elapsed)
            )
            out.append((lam, r.leaf_mask))
        return out


class CCPMethod(Method):
    name = "CCP (per tree)"

    def __init__(self, alphas):
        self.alphas = alphas

    def run(self, ctx):
        return [(a, ccp_prune(ctx["problem"], a)) for a in self.alphas]


class GreedyMethod(Method):
    name = "GreedyPrune"

    def run(self, ctx):
        return greedy_prune_path(ctx["problem"], ctx["node_group"])


class ThresholdMethod(Method):
    name = "BudgetRF threshold"

    def __init__(self, taus):
        self.taus = taus

    def run(self, ctx):
        imp = gini(ctx["counts"])
        return [(t, threshold_prune(ctx["problem"], imp, t)) for t in self.taus]


# ---------------------------------------------------------------------------- curves
def evaluate(ctx, leaf_mask):
    """Test accuracy, test cost, validation accuracy and validation cost of a pruned forest."""
    forest = ctx["forest"]
    collapsed = np.flatnonzero(leaf_mask & ~forest.is_leaf)
    mapping = pruned_leaf_map(forest, collapsed)
    raw = raw_from_leaves(forest, mapping[ctx["test_leaves"]])
    acc = float(np.mean((raw > 0).astype(int) == ctx["y_test"]))
    raw_v = raw_from_leaves(forest, mapping[ctx["valid_leaves"]])
    valid_acc = float(np.mean((raw_v > 0).astype(int) == ctx["y_valid"]))
    test_cost = ctx["test_problem"].primal_terms(leaf_mask)[1]
    valid_cost = ctx["problem"].primal_terms(leaf_mask)[1]
    return acc, test_cost, valid_acc, valid_cost


def retrained_subsets(booster, Xtr, ytr, Xva, yva, Xte, yte, args, seed):
    """Reference, not a pruning: forests retrained on the k most important features (gain).

    Shows what choosing a feature subset *before* training reaches at cost k; scored like the
    prunings (test accuracy, distinct features a test row meets).
    """
    order = np.argsort(-booster.feature_importance(importance_type="gain"), kind="stable")
    d = Xtr.shape[1]
    ks = sorted({k for k in np.unique(np.geomspace(2, d, args.subset_points).round().astype(int)) if k <= d})
    rows = []
    for k in ks:
        cols = np.sort(order[:k])
        b = train_rf(
            Xtr[:, cols], ytr, args.trees, num_leaves=args.num_leaves, min_data_in_leaf=args.min_data_in_leaf, seed=seed
        )
        costs = np.ones(k)
        test_cost = prepare(b, Xtr[:, cols], ytr, Xte[:, cols], costs).problem
        valid_cost = prepare(b, Xtr[:, cols], ytr, Xva[:, cols], costs).problem
        rows.append(
            dict(
                param=int(k),
                accuracy=float(np.mean((b.predict(Xte[:, cols], raw_score=True) > 0) == yte)),
                test_cost=test_cost.primal_terms(test_cost.is_leaf)[1],
                valid_accuracy=float(np.mean((b.predict(Xva[:, cols], raw_score=True) > 0) == yva)),
                valid_cost=valid_cost.primal_terms(valid_cost.is_leaf)[1],
            )
        )
    return rows


def operating_points(points, base):
    """The paper's reading (on test) and an honest one (chosen on validation).

    ``test_reading``: lowest test cost whose test accuracy is within 0.1 point of the unpruned
    forest's (what a curve shows). ``valid_selected``: the point with the lowest validation cost
    whose validation accuracy is within 0.1 point of the unpruned forest's validation accuracy,
    chosen without test labels; its test accuracy and cost are reported.
    """
    ok = [p for p in points if p["accuracy"] >= base["accuracy"] - 0.001]
    best = min(ok, key=lambda p: p["test_cost"]) if ok else None
    okv = [p for p in points if p.get("valid_accuracy", -1.0) >= base["valid_accuracy"] - 0.001]
    sel = min(okv, key=lambda p: (p["valid_cost"], -p["valid_accuracy"])) if okv else None

    def red(p):
        return (1 - p["test_cost"] / base["test_cost"]) if p else None

    return dict(
        best_within_0_1pt=best,
        cost_reduction=red(best),
        valid_selected=sel,
        valid_selected_cost_reduction=red(sel),
        valid_selected_accuracy_loss=(base["accuracy"] - sel["accuracy"]) if sel else None,
    )


def curves(name, X, y, sizes, args, seed=0, previous=None):
    Xtr, ytr, Xva, yva, Xte, yte = split(X, y, sizes, seed)
    t0 = time.perf_counter()
    booster = train_rf(
        Xtr, ytr, args.trees, num_leaves=args.num_leaves, min_data_in_leaf=args.min_data_in_leaf, seed=seed
    )
    train_s = time.perf_counter() - t0
    costs = np.ones(X.shape[1])
    setup = prepare(booster, Xtr, ytr, Xva, costs, error_source="train")
    forest, problem = setup.ensemble, setup.problem
    test_leaves = leaf_nodes(forest, booster, Xte)
    test_problem = build_problem(
        tree_offset=forest.tree_offset,
        parent=forest.parent,
        node_group=forest.feature,
        node_error=problem.node_error,
        leaf_nodes=test_leaves,
        group_cost=costs,
    )
    # correctness gate: our routing of the unpruned forest is LightGBM's
    ref = booster.predict(Xte, raw_score=True)
    assert np.allclose(raw_from_leaves(forest, test_leaves), ref, atol=1e-9)
    ctx = dict(
        forest=forest,
        problem=problem,
        test_problem=test_problem,
        test_leaves=test_leaves,
        valid_leaves=setup.valid_leaves,
        y_test=yte,
        y_valid=yva,
        counts=setup.counts,
        node_group=forest.feature,
    )
    lo, hi = args.lam_range.get(name, (1e-4, 3e-2))
    lams = np.geomspace(lo, hi, args.points)
    methods = [
        Unpruned(),
        BudgetPruneMethod(lams, args.max_iter, problem_key="problem_inbag", name="BudgetPrune (in-bag 0-1 error)"),
        BudgetPruneMethod(lams, args.max_iter),
        BudgetPruneMethod(lams, args.max_iter, problem_key="problem_oob", name="BudgetPrune (OOB error)"),
        BudgetPruneMethod(lams, args.max_iter, problem_key="problem_loss", name="BudgetPrune (loss error)"),
        CCPMethod(np.geomspace(1e-7, 1e-2, args.points)),
        GreedyMethod(),
        ThresholdMethod(np.linspace(0.0, 0.5, args.points)),
    ]
    if args.only:
        methods = [m for m in methods if m.name in args.only or m.name == "Unpruned RF"]
    lazy = dict(
        problem_inbag=lambda: prepare(booster, Xtr, ytr, Xva, costs, error_source="inbag").problem,
        problem_oob=lambda: prepare(booster, Xtr, ytr, Xva, costs, error_source="oob").problem,
        problem_loss=lambda: prepare(booster, Xtr, ytr, Xva, costs, error="loss").problem,
    )
    results = dict(previous or {})
    for m in methods:  # one pass each; curves are not timings
        key = getattr(m, "problem_key", "problem")
        if key not in ctx:
            ctx[key] = lazy[key]()
        m.setup(ctx)
        t = time.perf_counter()
        pts = m.run(ctx)
        secs = time.perf_counter() - t
        rows = []
        for param, z in pts:
            acc, tc, vacc, vc = evaluate(ctx, z)
            rows.append(
                dict(
                    param=param if isinstance(param, str) else float(param),
                    accuracy=acc,
                    test_cost=tc,
                    valid_accuracy=vacc,
                    valid_cost=vc,
                )
            )
        results[m.name] = dict(points=rows, seconds=secs, **({"solver": m.stats} if hasattr(m, "stats") else {}))
        print(f"  {name}: {m.name:32s} {len(rows):3d} points in {secs:7.1f}s", flush=True)
    ref_name = "RF retrained on top-k features (reference)"
    if args.subset_points and (not args.only or ref_name in args.only):
        t = time.perf_counter()
        rows = retrained_subsets(booster, Xtr, ytr, Xva, yva, Xte, yte, args, seed)
        results[ref_name] = dict(points=rows, seconds=time.perf_counter() - t)
        print(f"  {name}: {ref_name:32s} {len(rows):3d} points", flush=True)
    base = results["Unpruned RF"]["points"][0]
    summary = dict(
        unpruned_accuracy=base["accuracy"],
        unpruned_cost=base["test_cost"],
        unpruned_valid_accuracy=base["valid_accuracy"],
    )
    for key in results:
        if key != "Unpruned RF":
            summary[key] = operating_points(results[key]["points"], base)
    info = dict(
        n_train=len(ytr),
        n_valid=len(yva),
        n_test=len(yte),
        n_features=X.shape[1],
        trees=args.trees,
        num_leaves=args.num_leaves,
        min_data_in_leaf=args.min_data_in_leaf,
        leaves_per_tree=float(forest.is_leaf.sum() / forest.n_trees),
        n_nodes=forest.n_nodes,
        n_triples=problem.n_triples,
        lambdas=[float(lo), float(hi), int(args.points)],
        max_iter=args.max_iter,
        train_seconds=train_s,
    )
    return dict(info=info, methods=results, summary=summary)


def plot(name, res, path):
    """Full curves (left) and the target region (right: 0.1 point below the unpruned accuracy, 40% less cost)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base = res["summary"]["unpruned_accuracy"] * 100
    base_cost = res["summary"]["unpruned_cost"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    for ax in axes:
        for mname, r in res["methods"].items():
            pts = sorted(r["points"], key=lambda p: p["test_cost"])
            c = [p["test_cost"] for p in pts]
            a = [100 * p["accuracy"] for p in pts]
            if mname == "Unpruned RF":
                ax.plot(c, a, "k*", ms=12, label=mname, zorder=5)
            elif "reference" in mname:
                ax.plot(c, a, "s--", color="0.5", ms=3, label=mname)
            else:
                ax.plot(c, a, "o-", ms=3, label=mname)
        ax.set_xlabel("average feature cost per test row (uniform costs)")
        ax.set_ylabel("test accuracy (%)")
        ax.grid(alpha=0.3)
    axes[0].set_ylim(max(base - 12, 40), base + 1.5)
    axes[0].set_title(f"{name}: {res['info']['trees']}-tree LightGBM random forest")
    axes[0].legend(fontsize=7)
    zoom = axes[1]
    zoom.axhline(base - 0.1, color="k", lw=0.8, ls=":")
    zoom.axvline(0.6 * base_cost, color="k", lw=0.8, ls=":")
    zoom.fill_between([0, 0.6 * base_cost], base - 0.1, base + 1.5, color="g", alpha=0.08, label="target region")
    zoom.set_xlim(0.4 * base_cost, 1.02 * base_cost)
    zoom.set_ylim(base - 2.0, base + 0.6)
    zoom.set_title("target: <= 60% of the cost within 0.1 point")
    zoom.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ----------------------------------------------------------------------------- speed
def _peak_rss_gb():
    """Peak resident memory of this process (ru_maxrss: KiB on Linux), numba's allocations included."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _warm_up_kernels():
    """Compile (or load from numba's cache) every kernel on a tiny program; returns the seconds."""
    t = time.perf_counter()
    leaf = np.array([[1, 2], [2, 1]])
    prob = build_problem(
        tree_offset=np.array([0, 3]),
        parent=np.array([-1, 0, 0]),
        node_group=np.array([0, -1, -1]),
        node_error=np.array([0.1, 0.0, 0.0]),
        leaf_nodes=leaf[:, :1],
        group_cost=np.ones(1),
    )
    for dtype in ("float64", "float32"):
        solve_primal_dual(prob, 0.01, beta0=np.zeros(prob.n_triples, dtype=dtype), max_iter=3)
    old = _solver._BIG
    try:
        _solver._BIG = 0  # the float32 path of large programs
        solve_primal_dual(prob, 0.01, max_iter=3)
    finally:
        _solver._BIG = old
    return time.perf_counter() - t


def highs_child(args):
    """Run in a fresh process: HiGHS on a saved program, with an address-space limit; prints JSON."""
    if args.highs_mem_gb:
        lim = int(args.highs_mem_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    d = np.load(args.problem_file)
    prob = PruneProblem(
        tree_offset=d["tree_offset"],
        parent=d["parent"],
        node_error=d["node_error"],
        node_eval=d["node_eval"],
        pair_ptr=d["pair_ptr"],
        pair_node=d["pair_node"],
        pair_cost=d["pair_cost"],
        pair_group=d["pair_group"],
        pair_row=d["pair_row"],
        n_rows=int(d["n_rows"]),
        pair_count=d["pair_count"],
    )
    out = dict(peak_rss_gb_before=_peak_rss_gb())
    try:
        t = time.perf_counter()
        lp, x = lp_highs(prob, args.speed_lam, time_limit=args.highs_limit)
        out.update(
            seconds=time.perf_counter() - t,
            status=lp.status,
            message=lp.message,
            objective=lp.fun,
            max_fractionality=float(np.abs(x - np.round(x)).max()) if lp.status == 0 else None,
        )
    except MemoryError:
        out.update(
            seconds=time.perf_counter() - t, status=-1, message=f"MemoryError under a {args.highs_mem_gb} GB limit"
        )
    out["peak_rss_gb"] = _peak_rss_gb()
    print(json.dumps(out), flush=True)


def _run_highs(prob, args):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "problem.npz"
        np.savez(
            path,
            **{k: getattr(prob, k) for k in ("tree_offset", "parent", "node_error", "node_eval", "pair_ptr")},
            **{k: getattr(prob, k) for k in ("pair_node", "pair_cost", "pair_group", "pair_row", "pair_count")},
            n_rows=prob.n_rows,
        )
        cmd = [sys.executable, "-m", __spec__.name, "--data-dir", args.data_dir, "--part", "_highs_child"]
        cmd += ["--problem-file", str(path), "--speed-lam", str(args.speed_lam)]
        cmd += ["--highs-limit", str(args.highs_limit), "--highs-mem-gb", str(args.highs_mem_gb)]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if line:
            return json.loads(line[-1])
        return dict(
            seconds=time.perf_counter() - t, status=-1, message=f"HiGHS process failed: {proc.stderr[-500:]}"
        )


def speed(X, y, configs, args):
    compile_s = _warm_up_kernels()
    print(f"  kernels ready in {compile_s:.1f}s (compiled or loaded from numba's cache)", flush=True)
    rows = []
    for n_trees, n_valid in configs:
        Xtr, ytr, Xva, _ = split(X, y, (args.speed_train, n_valid), 1)
        booster = train_rf(Xtr, ytr, n_trees, num_leaves=31, seed=1)
        t = time.perf_counter()
        setup = prepare(booster, Xtr, ytr, Xva, np.ones(X.shape[1]))
        build_s = time.perf_counter() - t
        prob = setup.problem
        lam = args.speed_lam
        trace = []
        t0 = time.perf_counter()
        pd_res = solve_primal_dual(
            prob,
            lam,
            gap_tol=1e-4,
            max_iter=5000,
            progress=lambda i, u, lo, trace=trace, t0=t0: trace.append((time.perf_counter() - t0, u, lo)),
        )
        pd_s = time.perf_counter() - t0
        row = dict(
            trees=n_trees,
            valid_rows=n_valid,
            n_pairs=prob.n_pairs,
            n_triples=prob.n_triples,
            n_unmerged_pairs=int(prob.pair_count.sum()),
            build_seconds=build_s,
            lam=lam,
            pd_seconds=pd_s,
            pd_status=pd_res.status,
            pd_rel_gap=pd_res.rel_gap,
            pd_iterations=pd_res.nit,
            pd_objective=pd_res.fun,
            load_average=os.getloadavg(),
        )
        if prob.n_triples > args.highs_max_triples:
            row["highs_skipped"] = args.highs_skip_note
        else:
            hi = _run_highs(prob, args)
            row.update(
                highs_seconds=hi["seconds"],
                highs_status=hi["status"],
                highs_message=hi["message"],
                highs_objective=hi.get("objective"),
                highs_peak_rss_gb=hi.get("peak_rss_gb"),
                highs_mem_limit_gb=args.highs_mem_gb,
            )
            if hi["status"] == 0:
                obj = hi["objective"]
                row["lp_max_fractionality"] = hi["max_fractionality"]
                row["pd_matches_highs"] = bool(abs(pd_res.fun - obj) <= 1e-6 * abs(obj))
                hit = [t for t, u, _ in trace if abs(u - obj) <= 1e-6 * abs(obj)]
                row["pd_seconds_to_optimal_primal"] = hit[0] if hit else None
        if int(prob.pair_count @ np.diff(prob.pair_ptr)) <= args.highs_unmerged_max_triples:
            # the paper's LP as written (no merged pairs), for reference
            plain = build_problem(
                tree_offset=prob.tree_offset,
                parent=prob.parent,
                node_group=setup.ensemble.feature,  # uniform costs: one group per feature
                node_error=prob.node_error,
                leaf_nodes=setup.valid_leaves,
                group_cost=np.ones(X.shape[1]),
                merge=False,
            )
            hi = _run_highs(plain, args)
            row["unmerged"] = dict(
                n_triples=plain.n_triples,
                highs_seconds=hi["seconds"],
                highs_status=hi["status"],
                highs_objective=hi.get("objective"),
                highs_peak_rss_gb=hi.get("peak_rss_gb"),
                same_optimum=hi["status"] == 0
                and abs(hi["objective"] - pd_res.fun) <= 1e-6 * abs(hi["objective"]),
            )
        rows.append(row)
        print(f"  speed {n_trees} trees x {n_valid} rows: {row}", flush=True)
    return rows, compile_s


def scale_child(args):
    """Run in a fresh process: 500 trees x 100,000 validation rows, wall time and peak memory."""
    X, y = load_forest(Path(args.data_dir))
    Xtr, ytr, Xva, _ = split(X, y, (args.scale_train, args.scale_rows), 2)
    del X, y
    t = time.perf_counter()
    booster = train_rf(Xtr, ytr, args.scale_trees, num_leaves=31, seed=2)
    train_s = time.perf_counter() - t
    compile_s = _warm_up_kernels()
    rss_before = _peak_rss_gb()
    t0 = time.perf_counter()
    setup = prepare(booster, Xtr, ytr, Xva, np.ones(Xtr.shape[1]))
    build_s = time.perf_counter() - t0
    left = max(1.0, args.scale_budget - build_s)
    trace = []
    r = solve_primal_dual(
        setup.problem,
        args.speed_lam,
        gap_tol=1e-4,
        max_iter=10**6,
        time_limit=left,
        progress=lambda i, u, lo: trace.append((time.perf_counter() - t0, (u - lo) / abs(u))),
    )
    total = time.perf_counter() - t0
    out = dict(
        trees=args.scale_trees,
        valid_rows=args.scale_rows,
        n_pairs=setup.problem.n_pairs,
        n_triples=setup.problem.n_triples,
        n_unmerged_pairs=int(setup.problem.pair_count.sum()),
        train_seconds=train_s,
        kernels_ready_seconds=compile_s,
        budget_seconds=args.scale_budget,
        build_seconds=build_s,
        solve_seconds=r.elapsed,
        total_seconds=total,
        peak_rss_gb=_peak_rss_gb(),
        peak_rss_gb_before_build=rss_before,
        status=r.status,
        message=r.message,
        rel_gap=r.rel_gap,
        iterations=r.nit,
        gap_trace=[(round(t, 2), g) for t, g in trace],
        load_average=os.getloadavg(),
    )
    if r.status != 0 and args.scale_certify_limit > 0:  # how long a certified 1e-4 gap takes
        t1 = time.perf_counter()
        r2 = solve_primal_dual(
            setup.problem, args.speed_lam, gap_tol=1e-4, max_iter=10**6, time_limit=args.scale_certify_limit
        )
        out["certify"] = dict(
            seconds_after_build=time.perf_counter() - t1,
            status=r2.status,
            rel_gap=r2.rel_gap,
            iterations=r2.nit,
            same_objective=bool(abs(r2.fun - r.fun) <= 1e-9 * abs(r.fun)),
        )
        out["peak_rss_gb"] = _peak_rss_gb()
    print(json.dumps(out))


def report(paths):
    """Markdown tables of the recorded results (for docs/budgetprune.md)."""
    res = {}
    for path in paths:
        if Path(path).exists():
            res.update(json.loads(Path(path).read_text()))
    lines = []
    for name, c in res.get("curves", {}).items():
        info, summ = c["info"], c["summary"]
        lines.append(
            f"### {name}: {info['n_train']} train / {info['n_valid']} validation / "
            f"{info['n_test']} test rows, "
            f"{info['n_features']} features, {info['trees']} trees, num_leaves {info['num_leaves']}, "
            f"min_data_in_leaf {info.get('min_data_in_leaf', 2)} "
            f"({info.get('leaves_per_tree', float('nan')):.0f} leaves per tree, "
            f"{info['n_nodes']} nodes, {info['n_triples']} triples)\n"
        )
        lines.append(
            f"Unpruned: test accuracy {100 * summ['unpruned_accuracy']:.2f}%, "
            f"average cost {summ['unpruned_cost']:.2f} features per row.\n"
        )
        lines.append(
            "| method | test reading: lowest test cost within 0.1 pt | reduction | test acc there | "
            "chosen on validation: test cost | reduction | test acc (loss, pt) | method time (s) |"
        )
        lines.append("|---|---|---|---|---|---|---|---|")
        for m, v in summ.items():
            if not isinstance(v, dict):
                continue
            b, sel = v["best_within_0_1pt"], v.get("valid_selected")
            secs = c["methods"][m]["seconds"]
            left = (
                "none | - | -"
                if b is None
                else (f"{b['test_cost']:.2f} | {100 * v['cost_reduction']:.1f}% | {100 * b['accuracy']:.2f}%")
            )
            right = (
                "none | - | -"
                if sel is None
                else (
                    f"{sel['test_cost']:.2f} | {100 * v['valid_selected_cost_reduction']:.1f}% | "
                    f"{100 * sel['accuracy']:.2f}% ({100 * v['valid_selected_accuracy_loss']:+.2f})"
                )
            )
            lines.append(f"| {m} | {left} | {right} | {secs:.1f} |")
        lines.append("")
        lines.append("| method | (test cost, test accuracy %) along the sweep |")
        lines.append("|---|---|")
        for m, v in c["methods"].items():
            pts = sorted(v["points"], key=lambda p: -p["test_cost"])
            lines.append(
                f"| {m} | " + ", ".join(f"({p['test_cost']:.1f}, {100 * p['accuracy']:.1f})" for p in pts) + " |"
            )
        for m, v in c["methods"].items():
            if "solver" in v:
                st = v["solver"]
                n_opt = sum(1 for r in st if r["status"] == 0)
                lines.append(
                    f"\n{m}: {n_opt}/{len(st)} solves certified (gap <= 1e-4 relative); largest final gap "
                    f"{max(r['rel_gap'] for r in st):.1e}; iterations {min(r['iterations'] for r in st)}-"
                    f"{max(r['iterations'] for r in st)}."
                )
        lines.append("")
    if "speed" in res:
        lines.append(
            "| trees x validation rows | pairs (merged from) | triples | build (s) | primal-dual (s) | iterations | "
            "status, gap | HiGHS, same LP (s) | HiGHS peak memory | LP integral | speed-up | "
            "HiGHS, unmerged LP (s) |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in res["speed"]:
            head = (
                f"| {r['trees']} x {r['valid_rows']} | {r['n_pairs']} ({r['n_unmerged_pairs']}) | {r['n_triples']} | "
                f"{r['build_seconds']:.2f} | {r['pd_seconds']:.2f} | {r['pd_iterations']} | "
                f"{r['pd_status']}, {r['pd_rel_gap']:.1e} | "
            )
            if "highs_skipped" in r:
                lines.append(head + f"{r['highs_skipped']} | - | - | - | - |")
                continue
            frac = r.get("lp_max_fractionality")
            ok = r["highs_status"] == 0
            unm = r.get("unmerged")
            unm_s = "-" if unm is None else f"{unm['highs_seconds']:.1f} ({unm['highs_peak_rss_gb']:.1f} GB)"
            lines.append(
                head + f"{r['highs_seconds']:.1f}{'' if ok else ' (' + r['highs_message'] + ')'} | "
                f"{r['highs_peak_rss_gb']:.1f} GB | {'yes' if frac is not None and frac <= 1e-7 else frac} | "
                f"{r['highs_seconds'] / r['pd_seconds']:.0f}x{'' if ok else ' (HiGHS unfinished)'} | "
                f"{unm_s} |"
            )
    if "scale" in res:
        lines.append("\n" + json.dumps(res["scale"], indent=1))
    print("\n".join(lines))


QUICK = {"points": 3, "subset_points": 0, "scale_trees": 20, "scale_rows": 5000, "scale_train": 2000,
         "img_dir": str(RESULTS / "quick")}
#: Keys of a results file that each run rewrites (the runner's record of the command and machine).
RUN_KEYS = ("command", "versions", "hardware", "environment")


def _save(path: Path, results: dict) -> None:
    """Write the merged results with this run's command line and versions."""
    payload = {k: v for k, v in results.items() if k not in RUN_KEYS}
    write_results(path, payload, "numpy", "scipy", "lightgbm", "numba")


def main(argv=None):
    p = script_parser(__doc__, result_name="budgetprune", quick=QUICK)
    p.add_argument(
        "--part",
        choices=("curves", "speed", "scale", "all", "report", "_scale_child", "_highs_child"),
        default="all",
    )
    p.add_argument("--img-dir", default=str(ROOT / "docs" / "img"))
    p.add_argument("--trees", type=int, default=40)
    p.add_argument("--num-leaves", type=int, default=8191, help="8191 with --min-data-in-leaf 1: fully grown")
    p.add_argument("--min-data-in-leaf", type=int, default=1)
    p.add_argument("--points", type=int, default=20)
    p.add_argument(
        "--lam-range",
        nargs="*",
        default=["MAGIC=1e-3,1e-1", "Forest=3e-4,3e-2"],
        help="NAME=LO,HI: lambda sweep (geometric) per data set; the same for every error variant",
    )
    p.add_argument("--max-iter", type=int, default=500)
    p.add_argument("--subset-points", type=int, default=8, help="sizes k of the retrained reference (0: skip)")
    p.add_argument("--datasets", nargs="*", default=["MAGIC", "Forest"])
    p.add_argument("--only", nargs="*", default=None, help="run only these methods (merged into the results)")
    p.add_argument("--speed-lam", type=float, default=3e-4)
    p.add_argument("--speed-train", type=int, default=20000)
    p.add_argument("--highs-limit", type=float, default=900.0)
    p.add_argument("--highs-max-triples", type=float, default=float("inf"), help="skip HiGHS above this size")
    p.add_argument("--highs-skip-note", default="HiGHS not run at this size")
    p.add_argument(
        "--highs-unmerged-max-triples", type=float, default=1e6, help="also HiGHS on the unmerged LP up to this size"
    )
    p.add_argument("--highs-mem-gb", type=float, default=16.0, help="address-space limit of the HiGHS process")
    p.add_argument("--problem-file", default=None, help=argparse.SUPPRESS)
    p.add_argument("--scale-budget", type=float, default=60.0, help="seconds for build + solve (the target)")
    p.add_argument(
        "--scale-certify-limit", type=float, default=300.0, help="then re-solve up to this long for a 1e-4 gap"
    )
    p.add_argument("--speed-configs", nargs="*", default=None, help="TREESxROWS, e.g. 100x10000")
    p.add_argument("--append", action="store_true", help="append speed rows to the existing results")
    p.add_argument("--scale-trees", type=int, default=500)
    p.add_argument("--scale-rows", type=int, default=100000)
    p.add_argument("--scale-train", type=int, default=20000)
    args = parse(p, argv)
    args.lam_range = {k: tuple(float(v) for v in r.split(",")) for k, r in (item.split("=") for item in args.lam_range)}
    if args.part == "_scale_child":
        scale_child(args)
        return 0
    if args.part == "_highs_child":
        highs_child(args)
        return 0
    if args.part == "report":
        out = Path(args.out)
        report([out, out.with_name(out.stem + "_speed.json"), out.with_name(out.stem + "_scale.json")])
        return 0
    data = Path(args.data_dir)
    out_path = Path(args.out)
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
    if args.part in ("curves", "all"):
        Xf, yf = load_forest(data)
        Xm, ym = load_magic(data)
        sizes_f = (4000, 2000, 4000) if args.quick else (40000, 5000, 40000)
        sizes_m = (2000, 1000, 2000) if args.quick else (9510, 4755, 4755)
        results.setdefault("curves", {})
        for name, X, y, sizes in (("MAGIC", Xm, ym, sizes_m), ("Forest", Xf, yf, sizes_f)):
            if name not in args.datasets:
                continue
            print(f"curves: {name}", flush=True)
            prev = results["curves"].get(name, {}).get("methods") if args.only else None
            res = curves(name, X, y, sizes, args, previous=prev)
            results["curves"][name] = res
            Path(args.img_dir).mkdir(parents=True, exist_ok=True)
            plot(name, res, Path(args.img_dir) / f"budgetprune_{name.lower()}.png")
            print(f"  summary: {res['summary']}", flush=True)
            _save(out_path, results)
    if args.part in ("speed", "all"):
        Xf, yf = load_forest(data)
        configs = [(10, 1000), (25, 2500)] if args.quick else [(20, 2000), (50, 5000), (100, 10000)]
        if args.speed_configs:
            configs = [tuple(int(v) for v in c.split("x")) for c in args.speed_configs]
        rows, compile_s = speed(Xf, yf, configs, args)
        results["speed"] = [*results.get("speed", []), *rows] if args.append else rows
        results["kernels_ready_seconds"] = compile_s
        _save(out_path, results)
    if args.part in ("scale", "all"):
        cmd = [
            sys.executable,
            "-m",
            __spec__.name,
            "--data-dir",
            str(data),
            "--part",
            "_scale_child",
            "--scale-trees",
            str(args.scale_trees),
            "--scale-rows",
            str(args.scale_rows),
            "--scale-train",
            str(args.scale_train),
            "--speed-lam",
            str(args.speed_lam),
            "--scale-budget",
            str(args.scale_budget),
            "--scale-certify-limit",
            str(args.scale_certify_limit),
        ]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        results["scale"] = json.loads(line[-1]) if line else dict(error=proc.stderr[-2000:])
        results["scale"]["wall_seconds_with_training"] = time.perf_counter() - t
        print(f"scale: {results['scale']}", flush=True)
        _save(out_path, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
