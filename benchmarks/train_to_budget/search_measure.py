"""What measuring candidates, a second thread and memory cost ``train_to_budget``'s default search.

For each table (tiered costs 1 / 5 / 10, the 60 / 20 / 20 split, 200 rounds, 31 leaves, learning
rate 0.05, ``num_threads=1``, budgets at 20 / 40 / 60% of the plain model's validation cost),
in one process:

* ``measure``: the search with each candidate's validation costs read through the full model
  parse (``TreeEnsemble.from_booster``, the reference) and through the one-pass leaf-path reader
  (``cegb/_measure.py``), alternating; CPU time of the search and of the measurements, and
  whether the frontiers are equal;
* ``threads``: ``n_jobs=1`` and ``n_jobs=2`` alternating; wall and CPU time, the load average,
  whether the models are equal, and the CPU share of the calls that train two or more
  candidates at once (what a second thread can run side by side);
* ``share`` (not run by default): the search with ``n_jobs=1``, each fit of a batch timed on its
  thread; the CPU share of the batches of two or more fits and the bound it sets on two threads;
* ``memory``: peak resident memory of a plain training and of the search with ``n_jobs`` 1 and
  2, each in a fresh process, as the process peak and above the loaded data.

    python -m benchmarks.train_to_budget.search_measure --data-dir ../shared/data
    python -m benchmarks.train_to_budget.search_measure --data-dir ../shared/data --quick
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from typing import Any

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.train_to_budget import _data as fdata
from benchmarks.train_to_budget.budget_search_cost import LOADERS, PARAMS, ROOT, ROUNDS, split


def _setup(args: argparse.Namespace, name: str, budgets: list[float] | None = None) -> dict[str, Any]:
    """The table's split, costs and parameters; ``budgets`` (default: from a plain model's validation cost)."""
    import lightgbm as lgb

    from budget_extras import FeatureCosts, TreeEnsemble, cost_report

    Xt, yt, Xv, yv, _, _ = split(LOADERS[name](args.data_dir))
    costs = FeatureCosts(fdata.tiered_costs(Xt.shape[1]))
    params = {**PARAMS, "num_threads": 1}
    if budgets is None:
        b = lgb.train(params, lgb.Dataset(Xt, yt), num_boost_round=ROUNDS)
        full = float(cost_report(TreeEnsemble.from_booster(b), Xv, costs).total_cost.mean())
        budgets = [f * full for f in (0.2, 0.4, 0.6)]
    return {"Xt": Xt, "yt": yt, "Xv": Xv, "yv": yv, "costs": costs, "params": params, "budgets": budgets}


def _search(d: dict[str, Any], n_jobs: int = 1) -> Any:
    import lightgbm as lgb

    from budget_extras import train_to_budget

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train_to_budget(d["params"], lgb.Dataset(d["Xt"], d["yt"]), budget=d["budgets"][0],
                               valid_set=(d["Xv"], d["yv"]), costs=d["costs"], num_boost_round=ROUNDS,
                               progress=False, budgets=d["budgets"][1:], n_jobs=n_jobs)


def _full_parse(booster: Any, X: Any, costs: Any, text: str | None = None) -> tuple[Any, float]:
    from budget_extras import TreeEnsemble
    from budget_extras.core._leaf_cost import row_costs_from_leaves
    from budget_extras.core._report import model_coupled_cost

    ens = TreeEnsemble.from_booster(booster)
    return row_costs_from_leaves(ens, booster.predict(X, pred_leaf=True), costs), model_coupled_cost(ens, costs)[1]


def measure(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """The search with the full parse and with the leaf-path reader, alternating (CPU seconds)."""
    import budget_extras.cegb._search as sm

    d = _setup(args, name)
    reader, original = sm.model_row_costs, sm.Search.measure
    spent = {"cpu": 0.0, "n": 0}

    def timed(self: Any, spec: Any, b: Any, seconds: float, text: str | None = None) -> Any:
        c0 = time.process_time()
        out = original(self, spec, b, seconds, text)
        spent["cpu"] += time.process_time() - c0
        spent["n"] += 1
        return out

    sm.Search.measure = timed  # type: ignore[method-assign]
    runs: dict[str, list[dict[str, float]]] = {"full_parse": [], "leaf_paths": []}
    frontiers = {}
    try:
        for _ in range(args.repeats):
            for how, fn in (("full_parse", _full_parse), ("leaf_paths", reader)):
                sm.model_row_costs = fn
                spent.update(cpu=0.0, n=0)
                load, c0 = os.getloadavg()[0], time.process_time()
                r = _search(d)
                runs[how].append({"search_cpu": time.process_time() - c0, "measure_cpu": spent["cpu"],
                                  "candidates": spent["n"], "load": load})
                frontiers[how] = [(c.score, c.cost, c.cost_sd, c.coupled_cost, c.constant) for c in r.frontier]
    finally:
        sm.model_row_costs, sm.Search.measure = reader, original  # type: ignore[method-assign]
    return {"runs": runs, "frontiers_equal": frontiers["full_parse"] == frontiers["leaf_paths"]}


def threads(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """``n_jobs`` 1 and 2 alternating, and the CPU share of the calls that run candidates side by side."""
    import budget_extras.cegb._search as sm

    d = _setup(args, name)
    original = sm.Search.batches
    share = {"cpu": 0.0}

    def counted(self: Any, work: Any, items: Any) -> Any:
        it = original(self, work, items)
        while True:
            c0 = time.process_time()
            try:
                out = next(it)
            except StopIteration:
                return
            if len(items) > 1:
                share["cpu"] += time.process_time() - c0
            yield out

    sm.Search.batches = counted  # type: ignore[method-assign]
    runs: dict[int, list[dict[str, float]]] = {1: [], 2: []}
    models = set()
    try:
        for _ in range(args.repeats):
            for n_jobs in (1, 2):
                share["cpu"] = 0.0
                load, t0, c0 = os.getloadavg()[0], time.perf_counter(), time.process_time()
                r = _search(d, n_jobs)
                cpu = time.process_time() - c0
                at = [r.best_at(b) for b in d["budgets"]]
                runs[n_jobs].append({"wall": time.perf_counter() - t0, "cpu": cpu, "load": load,
                                     "side_by_side_cpu_share": share["cpu"] / cpu, "nfev": r.nfev,
                                     "best_at": [None if c is None else [c.family, c.score, c.cost] for c in at]})
                models.add(r.booster.model_to_string())
    finally:
        sm.Search.batches = original  # type: ignore[method-assign]
    return {"runs": {str(k): v for k, v in runs.items()}, "same_model": len(models) == 1}


def _two_thread_makespan(cpus: list[float]) -> float:
    """Wall time of ``cpus`` on two threads, each taking the next item when free (``Search.batches``)."""
    free = [0.0, 0.0]
    for c in cpus:
        i = free.index(min(free))
        free[i] += c
    return max(free)


def share(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """CPU shares of the search (``n_jobs=1``): fits in batches of two or more, and the two-thread bound.

    Every item of ``Search.batches`` is timed on its thread (``time.thread_time``); the rest of
    the search's CPU time (fits made one at a time outside a batch, the search's own work) is
    serial. ``bound_2``: the search's CPU time over its wall time on two threads with each batch
    list-scheduled in item order (the serial part unchanged); ``bound_2_naive``:
    ``1 / (serial share + batched share / 2)``.
    """
    import budget_extras.cegb._search as sm

    d = _setup(args, name)
    original = sm.Search.batches
    found: list[list[float]] = []

    def timed(self: Any, work: Any, items: Any) -> Any:
        cpus: list[float] = []
        found.append(cpus)

        def run(item: Any) -> Any:
            c0 = time.thread_time()
            out = work(item)
            cpus.append(time.thread_time() - c0)
            return out

        yield from original(self, run, items)

    sm.Search.batches = timed  # type: ignore[method-assign]
    runs = []
    try:
        for _ in range(args.repeats):
            found.clear()
            c0, m0, t0, load = time.process_time(), time.thread_time(), time.perf_counter(), os.getloadavg()[0]
            _search(d, 1)
            cpu, main = time.process_time() - c0, time.thread_time() - m0
            batched = sum(sum(b) for b in found if len(b) >= 2)
            two = sum(_two_thread_makespan(b) for b in found if len(b) >= 2)
            sizes: dict[int, int] = {}
            for b in found:
                sizes[len(b)] = sizes.get(len(b), 0) + 1
            runs.append({"cpu": cpu, "main_thread_cpu": main, "wall": time.perf_counter() - t0, "load": load,
                         "batched_share": batched / cpu,
                         "bound_2": cpu / (cpu - batched + two),
                         "bound_2_naive": 1.0 / (1.0 - batched / cpu + batched / cpu / 2),
                         "batch_sizes": dict(sorted(sizes.items()))})
    finally:
        sm.Search.batches = original  # type: ignore[method-assign]
    return {"runs": runs}


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:")) / 1024


def memory_child(args: argparse.Namespace, name: str, what: str) -> dict[str, float]:
    """One peak in this process: a plain training (``what="plain"``) or the search with ``n_jobs``."""
    import gc

    import lightgbm as lgb

    d = _setup(args, name, json.loads(args.budgets))  # no training before the peak is read
    gc.collect()
    base = _rss_mb()
    if what == "plain":
        lgb.train(d["params"], lgb.Dataset(d["Xt"], d["yt"]), num_boost_round=ROUNDS)
    else:
        _search(d, int(what))
    return {"base_mb": base, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def memory(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """Peaks of a plain training and of the search (``n_jobs`` 1 and 2), each in a fresh process."""
    out = {}
    budgets = json.dumps(_setup(args, name)["budgets"])
    for what in ("plain", "1", "2"):
        cmd = [sys.executable, "-m", __spec__.name, "--data-dir", str(args.data_dir), "--memory-child", what,
               "--datasets", name, "--budgets", budgets]
        res = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
        out[what] = json.loads(res.stdout.strip().splitlines()[-1])
    p = out["plain"]
    for what in ("1", "2"):
        r = out[what]
        r["peak_x"] = r["peak_mb"] / p["peak_mb"]
        r["above_data_x"] = (r["peak_mb"] - r["base_mb"]) / (p["peak_mb"] - p["base_mb"])
    return out


def main(argv: list[str] | None = None) -> None:
    p = script_parser(__doc__, result_name="search_measure", quick={"datasets": ["magic"], "repeats": 1})
    p.add_argument("--datasets", nargs="+", default=["magic", "higgs", "adult"])
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--parts", nargs="+", default=["measure", "threads", "memory"])
    p.add_argument("--memory-child", help=argparse.SUPPRESS)
    p.add_argument("--budgets", help=argparse.SUPPRESS)
    args = parse(p, argv)
    if args.memory_child:
        print(json.dumps(memory_child(args, args.datasets[0], args.memory_child)))
        return
    rows = []
    for name in args.datasets:
        row: dict[str, Any] = {"dataset": name}
        for part in args.parts:
            row[part] = {"measure": measure, "threads": threads, "memory": memory, "share": share}[part](args, name)
            print(name, part, json.dumps(row[part])[:600], flush=True)
        rows.append(row)
        write_results(args.out, {"rows": rows}, "lightgbm", "numpy")


if __name__ == "__main__":
    main()
