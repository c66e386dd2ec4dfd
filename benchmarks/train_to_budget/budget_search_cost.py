"""What does finding a budgeted model cost? ``train_to_budget`` as a multiple of ONE plain training.

For each dataset (tiered costs 1 / 5 / 10, 60 / 20 / 20 split, 200 rounds, 31 leaves, learning
rate 0.05, the same threads everywhere) it measures side by side, each in a fresh process:

* ``plain``: ``lgb.train`` on a fresh ``Dataset`` (binning included), as a user trains once;
* ``one``: ``train_to_budget`` at 30% of the plain model's validation cost;
* ``three``: ``train_to_budget`` with ``budgets=`` at 20 / 40 / 60%;
* ``one_fast``, ``three_fast``: the same with ``search="fast"`` (the fork's learner budget);
* ``one_cut``, ``three_cut``: the default search with cuts on its proxy path only (``--cut``, JSON:
  ``greedy_steps`` of greedy selection, ``valid_share`` of the proxy's validation rows the proxies
  are measured on, ``rounds_share`` of the rounds the proxies train for at the learning rate
  divided by it, ``rows`` of the proxy subsample, ``n_k`` top-k sizes; :func:`cut_strategy`); with a
  list of cuts, ``three_cut2`` runs the second;

(``covertype54x``: Covertype 1 vs 2 with a jittered copy, 406k training rows; ``covertype54x3``:
with two jittered copies, 609k training rows; ``synth1m``: a synthetic table of 1M x 40, 600k
training rows, :func:`load_synth1m`)

and prints the search's wall time (``train_to_budget`` alone: the test rows' measurements after it
are counted apart, in ``cpu_x_with_test``) as a multiple of a plain training run right before the
search in the same process, and peak resident memory (ru_maxrss) as a multiple of ``plain``'s, plus the
chosen model's test score (with its standard error, Hanley and McNeil 1982) and test cost.
Optionally (``--compare``) the same searches with
``proxy_rows=None`` (every candidate on every row) for the score difference.

CPU time (``time.process_time``, every thread of the process) is measured beside wall time, as
a multiple of the plain training's CPU time. ``--search lean`` names the ``search=`` of the
``one`` / ``three`` searches (default ``full``); ``--options '{"halving": false}'`` passes
``options=`` to them; ``--n-jobs 2`` sets every search's ``n_jobs`` (default 1); ``--choose valid``
every search's ``choose`` (default ``auto``); ``--quick`` runs
the three-budget full search on the 10k-30k-row tables only (magic, higgs, adult), unless
``--datasets`` / ``--searches`` say otherwise, and writes under ``benchmarks/results/quick/``
unless ``--out`` is given.

    python -m benchmarks.train_to_budget.budget_search_cost --data-dir ../shared/data
    python -m benchmarks.train_to_budget.budget_search_cost --data-dir ../shared/data --datasets covertype54x --compare
    python -m benchmarks.train_to_budget.budget_search_cost --data-dir ../shared/data --quick \
        --options '{"halving": false}'
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.train_to_budget import _data as fdata

ROOT = Path(__file__).resolve().parents[2]
PARAMS = {"objective": "binary", "learning_rate": 0.05, "num_leaves": 31, "verbosity": -1, "seed": 0}
ROUNDS = 200


def load_covertype54x(data_dir: Path, copies: int = 1) -> fdata.Dataset:
    """Covertype 1 vs 2: wilderness and soil one-hot, 4 engineered columns, plus a jittered copy (677k x 53).

    ``copies``: jittered copies added (each with its own noise; 2: 1,015k x 53, 609k training rows).
    """
    d = pd.read_csv(data_dir / "covertype" / "covertype_sample_397k.csv.gz")
    d = d[d.Cover_Type.isin([1, 2])].reset_index(drop=True)
    y = (d.pop("Cover_Type").to_numpy() == 2).astype(int)
    d = pd.get_dummies(d, columns=["Wilderness_Area", "Soil_Type"], dtype=np.float64)
    d.columns = [str(c).replace(" ", "_") for c in d.columns]
    # the usual engineered columns of this data set (and >= 50 features in all)
    d["Hydro_Euclid"] = np.hypot(d.Horizontal_Distance_To_Hydrology, d.Vertical_Distance_To_Hydrology)
    d["Elevation_Minus_VHydro"] = d.Elevation - d.Vertical_Distance_To_Hydrology
    d["Hydro_Plus_Fire"] = d.Horizontal_Distance_To_Hydrology + d.Horizontal_Distance_To_Fire_Points
    d["Hydro_Minus_Road"] = d.Horizontal_Distance_To_Hydrology - d.Horizontal_Distance_To_Roadways
    X = d.to_numpy(np.float64)
    rng = np.random.default_rng(0)
    parts = [X]
    for _ in range(copies):
        jitter = X.copy()
        jitter[:, :10] += rng.normal(scale=0.01, size=(len(X), 10)) * X[:, :10].std(axis=0)
        parts.append(jitter)
    name = "covertype54x" if copies == 1 else f"covertype54x{copies + 1}"
    return fdata.Dataset(name, np.vstack(parts), np.tile(y, copies + 1), list(d.columns), "binary")


def load_synth1m(data_dir: Path) -> fdata.Dataset:
    """A synthetic binary table of 1M x 40 (600k training rows): informative features at every cost tier.

    scikit-learn's ``make_classification`` (seed 0): 10 informative features, 10 linear
    combinations of them (cheaper or dearer substitutes under the tiered costs), 20 noise
    features, 4 clusters per class, 3% flipped labels; columns shuffled, so an informative
    feature's cost tier is drawn as any other's. ``data_dir`` is not read.
    """
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=1_000_000, n_features=40, n_informative=10, n_redundant=10,
                               n_clusters_per_class=4, flip_y=0.03, class_sep=1.0, shuffle=True, random_state=0)
    return fdata.Dataset("synth1m", X, y.astype(int), [f"f{i}" for i in range(X.shape[1])], "binary")


LOADERS = {**fdata.LOADERS, "covertype54x": load_covertype54x,
           "covertype54x3": lambda data_dir: load_covertype54x(data_dir, copies=2), "synth1m": load_synth1m}

#: The cuts of ``--cut`` and their values that leave the default search as it is.
CUT_DEFAULTS = {"greedy_steps": 8, "valid_share": 1.0, "rounds_share": 1.0, "rows": 0, "n_k": 5}


def cut_strategy(cut: dict[str, Any]) -> Any:
    """Return ``search="full"`` as a :class:`Strategy` with ``cut`` (:data:`CUT_DEFAULTS`' keys) on its proxy path.

    On a training set without proxies it is the default search. On the proxy path the proxies are
    trained on ``rows`` of the default proxy rows (0: all of them) for ``rounds_share`` of the
    rounds at the user's learning rate divided by ``rounds_share``, measured on ``valid_share``
    of as many validation rows as they train on; greedy selection takes ``greedy_steps`` steps
    and top-k the first ``n_k`` sizes of the default grid. The picks are refit on every row as
    by the default search.
    """
    from dataclasses import replace

    from budget_extras.cegb import _families as fam
    from budget_extras.cegb._halving import DEFAULTS, halving_from_options
    from budget_extras.cegb._strategies import STRATEGIES, Strategy, refit_finalists, run_families

    k = {**CUT_DEFAULTS, **cut}
    unknown = set(k) - set(CUT_DEFAULTS)
    if unknown:
        raise ValueError(f"--cut: unknown keys {sorted(unknown)}; known: {sorted(CUT_DEFAULTS)}")
    full = STRATEGIES["full"]

    def run_cut(r: Any) -> None:
        if r.proxy is None:
            return full.run(r)
        o, idx = r.opts, r.proxy.indices
        if k["rows"]:
            rng = np.random.default_rng([int(o.base["seed"]), 11])
            idx = np.sort(rng.choice(idx, size=min(int(k["rows"]), idx.size), replace=False))
        rounds = max(1, round(o.rounds * float(k["rounds_share"])))
        lr = None if rounds == o.rounds else float(o.base.get("learning_rate", 0.1)) * o.rounds / rounds
        s = r.sample(idx, max(100, round(idx.size * float(k["valid_share"]))), rounds, lr)
        r.proxy = r.search = s
        s.halving = halving_from_options(r.options)
        with r.stage("all"):
            _, rank = fam.plain_and_ranking(s)
        grid = fam.default_k_grid(rank.by_gain.size)[: int(k["n_k"])]
        run_families(replace(r, opts=replace(o, k_grid=o.k_grid if o.k_grid is not None else grid)), s, rank,
                     greedy={"steps": int(k["greedy_steps"])} if o.greedy else None, bisect=o.n_bisect,
                     subset_bisect=2, coupled_bisect=2)
        with r.stage("refit"):
            refit_finalists(s, r.full, o.targets, o.budget)
        return None

    return Strategy(run=run_cut, plan=full.plan, options=DEFAULTS)


def split(ds: fdata.Dataset) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(ds.y))
    a, b = int(0.6 * len(idx)), int(0.8 * len(idx))
    tr, va, te = idx[:a], idx[a:b], idx[b:]
    return ds.X[tr], ds.y[tr], ds.X[va], ds.y[va], ds.X[te], ds.y[te]


def one(args: argparse.Namespace) -> dict[str, Any]:
    """One measurement in this process (called through a subprocess by :func:`main`)."""
    import lightgbm as lgb

    from budget_extras import FeatureCosts, TreeEnsemble, cost_report, train_to_budget

    ds = LOADERS[args.one_dataset](args.data_dir)
    Xt, yt, Xv, yv, Xs, ys = split(ds)
    costs = FeatureCosts(fdata.tiered_costs(len(ds.names)), feature_names=list(ds.names))
    params = {**PARAMS, "num_threads": args.threads}
    t0, c0 = time.perf_counter(), time.process_time()
    if args.one == "plain":
        booster = lgb.train(params, lgb.Dataset(Xt, yt, feature_name=list(ds.names)), num_boost_round=ROUNDS)
        extra: dict[str, Any] = {}
    else:
        # a plain training right before the search, in the same process: the ratio's denominator
        t_plain, c_plain = time.perf_counter(), time.process_time()
        lgb.train(params, lgb.Dataset(Xt, yt, feature_name=list(ds.names)), num_boost_round=ROUNDS)
        t0, c0 = time.perf_counter(), time.process_time()
        t_plain, c_plain = t0 - t_plain, c0 - c_plain
        fr = [0.3] if args.one.startswith("one") else [0.2, 0.4, 0.6]
        budgets = [f * args.full_cost for f in fr]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = train_to_budget(
                params, lgb.Dataset(Xt, yt, feature_name=list(ds.names)), budget=budgets[0], valid_set=(Xv, yv),
                costs=costs, num_boost_round=ROUNDS, progress=False, budgets=budgets[1:], keep_boosters=True,
                proxy_rows=None if args.one.endswith("_full") else "auto",
                search=("fast" if args.one.endswith("_fast") else
                        cut_strategy(json.loads(args.cut)) if "_cut" in args.one else args.search),
                options=None if args.one.endswith("_fast") else json.loads(args.options), n_jobs=args.n_jobs,
                choose=args.choose,
            )
        # the search's time ends here: the test rows' measurements below are the benchmark's
        t_search, c_search = time.perf_counter() - t0, time.process_time() - c0
        booster = r.booster
        stopped = sum(getattr(c, "rounds", None) is not None for c in r.frontier)
        extra = {"plain_seconds": t_plain, "plain_cpu": c_plain, "stopped": stopped, "search_seconds": t_search,
                 "search_cpu": c_search,
                 "nfev": r.nfev, "n_candidates": len(r.frontier), "family": r.chosen.family,
                 "seconds_by_family": {k: round(v, 2) for k, v in r.seconds.items()}, "per_budget": []}
        for b in budgets:
            bb = r.booster_at(b)
            extra["per_budget"].append({"budget": b, **measure(bb, Xs, ys, costs)} if bb is not None else {"budget": b})
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {"seconds": seconds, "cpu": cpu, "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           **measure(booster, Xs, ys, costs), **extra}
    if args.one == "plain":
        out["valid_cost"] = float(cost_report(TreeEnsemble.from_booster(booster), Xv, costs).total_cost.mean())
    return out


def measure(booster: Any, X: np.ndarray, y: np.ndarray, costs: Any) -> dict[str, float]:
    from sklearn.metrics import roc_auc_score

    from budget_extras import TreeEnsemble, cost_report

    rep = cost_report(TreeEnsemble.from_booster(booster), X, costs)
    auc = float(roc_auc_score(y, booster.predict(X)))
    return {"test_auc": auc, "test_auc_se": auc_se(auc, int(np.sum(y == 1)), int(np.sum(y != 1))),
            "test_cost": float(rep.total_cost.mean())}


def auc_se(auc: float, n_pos: int, n_neg: int) -> float:
    """Return the standard error of an AUC on ``n_pos`` positives and ``n_neg`` negatives (Hanley and McNeil 1982)."""
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    var = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc) + (n_neg - 1) * (q2 - auc * auc)) / max(1, n_pos * n_neg)
    return float(np.sqrt(max(0.0, var)))


def run_child(args: argparse.Namespace, dataset: str, what: str, full_cost: float = 0.0) -> dict[str, Any]:
    cmd = [sys.executable, "-m", __spec__.name, "--data-dir", str(args.data_dir), "--threads", str(args.threads),
           "--one", what, "--one-dataset", dataset, "--full-cost", str(full_cost), "--options", args.options,
           "--cut", json.dumps(_cut_of(args.cut, what)),
           "--search", args.search, "--n-jobs", str(args.n_jobs), "--choose", args.choose]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _cut_of(cut: str, what: str) -> dict[str, Any]:
    """Return the cut of the search ``what``: ``three_cut`` the first of ``--cut`` (a dict or a list of them).

    ``three_cut2`` the second, and so on; a search without ``_cut`` has none.
    """
    cuts = json.loads(cut)
    cuts = cuts if isinstance(cuts, list) else [cuts]
    if "_cut" not in what:
        return {}
    tail = what.split("_cut", 1)[1]
    return dict(cuts[int(tail) - 1 if tail else 0])


def main(argv: list[str] | None = None) -> None:
    p = script_parser(__doc__, result_name="budget_search_cost",
                      quick={"datasets": ["magic", "higgs", "adult"], "searches": ["three"]})
    p.add_argument("--datasets", nargs="+", default=["covertype54x", "adult", "higgs", "magic"])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--n-jobs", type=int, default=1, help="n_jobs of the searches (candidates trained at once)")
    p.add_argument("--compare", action="store_true", help="also run every candidate on every row")
    p.add_argument("--searches", nargs="+", default=["one", "three", "one_fast", "three_fast"],
                   help="which searches: one / three (search='full'), one_fast / three_fast (search='fast'), "
                        "one_cut / three_cut (search='full' with --cut)")
    p.add_argument("--options", default="{}", help="options= of the full searches, as JSON")
    p.add_argument("--cut", default="{}",
                   help="cuts of the *_cut searches' proxy path, as JSON: a dict or a list (three_cut2: the second)")
    p.add_argument("--search", default="full", help="search= of the searches one / three (default 'full')")
    p.add_argument("--choose", choices=("auto", "valid", "cv"), default="auto", help="choose= of every search")
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--one-dataset", help=argparse.SUPPRESS)
    p.add_argument("--full-cost", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parse(p, argv)
    if args.one:
        print(json.dumps(one(args)))
        return
    rows = []
    for name in args.datasets:
        plain = run_child(args, name, "plain")
        row: dict[str, Any] = {"dataset": name, "plain": plain}
        for what in args.searches + (["one_full", "three_full"] if args.compare else []):
            r = run_child(args, name, what, plain["valid_cost"])
            r["time_x"] = r["search_seconds"] / r["plain_seconds"]
            r["cpu_x"] = r["search_cpu"] / r["plain_cpu"]
            r["cpu_x_with_test"] = r["cpu"] / r["plain_cpu"]
            r["mem_x"] = r["maxrss_mb"] / plain["maxrss_mb"]
            row[what] = r
            print(f"{name:14s} {what:10s} {r['search_seconds']:8.1f} s = {r['time_x']:6.2f}x plain "
                  f"({r['plain_seconds']:.2f} s), CPU {r['search_cpu']:.1f} s = {r['cpu_x']:.2f}x "
                  f"({r['plain_cpu']:.2f} s; {r['cpu_x_with_test']:.2f}x with the test rows' measurements), "
                  f"stopped early {r['stopped']}, "
                  f"memory {r['mem_x']:.2f}x, fits {r['nfev']}, chosen {r['family']}, "
                  + ", ".join(f"B={q['budget']:.3g}: AUC {q.get('test_auc', float('nan')):.4f}"
                              f"+-{q.get('test_auc_se', float('nan')):.4f} "
                              f"cost {q.get('test_cost', float('nan')):.3g}" for q in r["per_budget"]), flush=True)
        rows.append(row)
        # after every dataset: a cut run keeps what it measured
        write_results(args.out, {"search": args.search, "options": json.loads(args.options),
                                 "cut": json.loads(args.cut), "n_jobs": args.n_jobs,
                                 "choose": args.choose, "rows": rows},
                      "lightgbm", "numpy")


if __name__ == "__main__":
    main()
