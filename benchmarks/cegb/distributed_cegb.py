"""Distributed lazy CEGB cost: 2 local processes (tree_learner=data), 400k x 50, lazy costs.

Prints, side by side, distributed lazy time / distributed plain time and serial lazy / serial plain,
and the bytes sent per split for the histograms (reduce-scatter input) and for the CEGB sync; writes
them to benchmarks/results/distributed_cegb.json (not committed: the numbers are in the doc).

    .venv/bin/python -m benchmarks.cegb.distributed_cegb [--rows 400000] [--features 50] [--rounds 20] [--quick]

Each rank uses --threads threads (default 1, so the two ranks do not fight over the cores).
Timings are the best of --repeat runs. Results are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._runner import parse, script_parser, write_results


def make_data(rows: int, features: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, features)).astype(np.float32)
    w = rng.normal(size=features)
    y = X @ w + np.sin(3 * X[:, 0]) + 0.5 * rng.normal(size=rows)
    return X, y


def params(args: argparse.Namespace, lazy: bool) -> dict:
    p = {"objective": "regression", "boost_from_average": False, "num_leaves": args.leaves,
         "learning_rate": 0.1, "max_bin": 255, "verbose": -1, "num_threads": args.threads,
         "deterministic": True, "force_col_wise": True, "seed": 1}
    if lazy:
        p.update(cegb_tradeoff=0.01, cegb_penalty_feature_lazy=[float(1 + (i % 5)) for i in range(args.features)])
    return p


def worker(args: argparse.Namespace) -> None:
    import lightgbm as lgb

    from budget_extras._compat import lightgbm_network

    out = {}
    with lightgbm_network(args.machines, port=args.port, timeout_minutes=2, num_machines=2):
        for name, lazy in (("plain", False), ("lazy", True)):
            best = float("inf")
            for _ in range(args.repeat):
                ds = lgb.Dataset(args.bin, params={"pre_partition": False, "verbose": -1})
                p = dict(params(args, lazy), tree_learner="data", num_machines=2)
                t = time.perf_counter()
                booster = lgb.train(p, ds, num_boost_round=args.rounds)
                best = min(best, time.perf_counter() - t)
            out[name] = best
            out[name + "_splits"] = sum(t["num_leaves"] - 1 for t in booster.dump_model()["tree_info"])
    Path(args.out).write_text(json.dumps(out))


def main(argv: list[str] | None = None) -> None:
    ap = script_parser(__doc__, result_name="distributed_cegb", data=False,
                       quick={"rows": 20_000, "rounds": 5, "repeat": 1})
    ap.add_argument("--rows", type=int, default=400_000)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--machines", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--bin", help=argparse.SUPPRESS)
    args = parse(ap, argv)
    if args.worker:
        worker(args)
        return
    import lightgbm as lgb

    tmp = Path(tempfile.mkdtemp(prefix="dist_cegb_"))
    X, y = make_data(args.rows, args.features)
    ds = lgb.Dataset(X, y, params={"max_bin": 255, "verbose": -1}).construct()
    bin_path = tmp / "train.bin"
    ds.save_binary(str(bin_path))
    # histogram bytes per split: the reduce-scatter input, 16 B (gradient, hessian) per bin; an
    # upper bound (LightGBM leaves out bin 0 of features whose most frequent bin is 0)
    hist_bytes = 0
    for f in range(ds.num_feature()):
        hist_bytes += 16 * ds.feature_num_bin(f)
    groups = args.features
    sync_bytes = 4 * (2 + 2 * groups)

    serial = {}
    for name, lazy in (("plain", False), ("lazy", True)):
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            lgb.train(params(args, lazy), lgb.Dataset(str(bin_path)), num_boost_round=args.rounds)
            best = min(best, time.perf_counter() - t)
        serial[name] = best

    socks = [socket.socket() for _ in range(2)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    machines = ",".join(f"127.0.0.1:{p}" for p in ports)
    procs = []
    try:
        for rank in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", __spec__.name, "--worker", "--machines", machines,
                                           "--port", str(ports[rank]), "--bin", str(bin_path),
                                           "--out", str(tmp / f"r{rank}.json"), "--rounds", str(args.rounds),
                                           "--leaves", str(args.leaves), "--threads", str(args.threads),
                                           "--repeat", str(args.repeat), "--features", str(args.features)]))
        for p in procs:
            p.wait(timeout=3600)
            assert p.returncode == 0, "a rank failed"
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    dist = json.loads((tmp / "r0.json").read_text())
    print(f"data: {args.rows} x {args.features}, {args.rounds} rounds, {args.leaves} leaves, "
          f"{args.threads} thread(s) per process, best of {args.repeat}")
    print(f"{'':14s} {'plain s':>9s} {'lazy s':>9s} {'lazy/plain':>10s}")
    print(f"{'serial':14s} {serial['plain']:9.2f} {serial['lazy']:9.2f} {serial['lazy'] / serial['plain']:10.3f}")
    print(f"{'data x2 ranks':14s} {dist['plain']:9.2f} {dist['lazy']:9.2f} {dist['lazy'] / dist['plain']:10.3f}")
    print(f"bytes per split: histograms (reduce-scatter input) {hist_bytes}, CEGB count sync {sync_bytes} "
          f"({100 * sync_bytes / hist_bytes:.2f}%); splits in the lazy model: {dist['lazy_splits']}")
    settings = {k: getattr(args, k) for k in ("rows", "features", "rounds", "leaves", "threads", "repeat")}
    write_results(args.out, {"settings": settings, "serial_s": serial, "distributed_s": dist,
                             "bytes_per_split": {"histograms": hist_bytes, "cegb_sync": sync_bytes}}, "lightgbm")


if __name__ == "__main__":
    main()
