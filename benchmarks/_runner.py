"""Shared helpers for the fork's training-time benchmarks: one interpreter per competitor."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

WORKER = r"""
import json, sys, time
import numpy as np
import lightgbm as lgb
data = np.load(sys.argv[1])
params = json.loads(sys.argv[2])
rounds = int(sys.argv[3])
ds = lgb.Dataset(data["X"], data["y"], params={"verbose": -1, "max_bin": 255})
ds.construct()
t = time.perf_counter()
booster = lgb.train(params, ds, num_boost_round=rounds)
elapsed = time.perf_counter() - t
text = booster.model_to_string()
body = "\n".join(line for line in text.splitlines() if not line.startswith("version="))
import hashlib
print(json.dumps({"seconds": elapsed, "model_sha": hashlib.sha256(body.encode()).hexdigest(),
                  "version": lgb.__version__}))
"""


class Competitor:
    """One LightGBM build, run in its own interpreter."""

    def __init__(self, name: str, python: str) -> None:
        self.name, self.python = name, python

    def run(self, data: Path, params: dict, rounds: int) -> dict:
        out = subprocess.run([self.python, "-c", WORKER, str(data), json.dumps(params), str(rounds)],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])


ROOT = Path(__file__).resolve().parents[1]


def common_parser(doc: str, *, result_name: str, repeats: int) -> argparse.ArgumentParser:
    """The options every fork training benchmark takes (data size, repeats, threads, upstream, output)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--cols", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--upstream-python", default=str(ROOT / ".venv-upstream" / "bin" / "python"),
                        help="interpreter with the upstream wheel")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / f"{result_name}.json"))
    return parser


def run_interleaved(runs: list[tuple[str, str, dict]], data: Path, rounds: int,
                    repeats: int) -> tuple[dict[str, list[float]], dict[str, set[str]], dict[str, str]]:
    """Run (name, python, params) competitors interleaved `repeats` times on one data file.

    Returns seconds per name, the set of saved-model hashes per name and the LightGBM version per name.
    """
    times: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    shas: dict[str, set[str]] = {name: set() for name, _, _ in runs}
    versions: dict[str, str] = {}
    for rep in range(repeats):
        for name, python, params in runs:
            r = Competitor(name, python).run(data, params, rounds)
            times[name].append(r["seconds"])
            shas[name].add(r["model_sha"])
            versions[name] = r["version"]
            print(f"repeat {rep + 1}/{repeats} {name:15s} {r['seconds']:.3f}s", flush=True)
    return times, shas, versions


def synthetic_regression(rows: int, cols: int, *, leaves: int, threads: int):
    """The fork benchmarks' data and settings: (X, y, base params, one lazy cost per feature).

    200,000 x 50 float32 Gaussian features with a nonlinear target; col-wise histograms,
    deterministic; lazy costs uniform in [0.5, 3].
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, cols)).astype(np.float32)
    y = X[:, 0] + X[:, 1] * X[:, 2] + np.sin(X[:, 3]) + 0.5 * X[:, 4:10].sum(axis=1) + rng.normal(size=rows)
    base = {"objective": "l2", "num_leaves": leaves, "verbose": -1, "num_threads": threads,
            "force_col_wise": True, "deterministic": True, "seed": 1}
    lazy = [float(c) for c in rng.uniform(0.5, 3.0, size=cols)]
    return X, y, base, lazy


def environment(*packages: str) -> dict[str, Any]:
    """``{"versions": ..., "hardware": ...}`` for a results file: python and each named package's version."""
    versions = {"python": platform.python_version()}
    for name in packages:
        versions[name] = getattr(importlib.import_module(name), "__version__", "unknown")
    return {
        "versions": versions,
        "hardware": {
            "machine": platform.machine(),
            "processor": platform.processor(),
            "cpus": os.cpu_count(),
            "load_average_at_end": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        },
    }
