"""The shared runner of the benchmarks: common options, results files, one interpreter per competitor.

Every script takes the options of :func:`script_parser` (``--data-dir`` where it reads the shared
data, ``--quick``, ``--out``) and writes its results file with :func:`write_results`. A ``--quick``
run is a small end-to-end check (fewer rows, rounds, seeds or grid points): unless ``--out`` is given it writes under
``benchmarks/results/quick/`` (git-ignored), never over a committed results file. The fork's
training-time benchmarks also use :func:`common_parser` and :func:`run_interleaved`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
import sys
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
RESULTS = ROOT / "benchmarks" / "results"
#: The shared benchmark data folder (UCI and Turney files), beside the repository.
DATA_DIR = ROOT.parent / "shared" / "data"


def script_parser(doc: str | None, *, result_name: str, data: bool = True, suffix: str = ".json",
                  quick: dict[str, Any] | None = None) -> argparse.ArgumentParser:
    """The options every benchmark script takes: ``--data-dir`` (when ``data``), ``--quick`` and ``--out``.

    ``quick`` maps option names (``dest``) to the values a ``--quick`` run uses where the command
    line left them at their defaults; :func:`parse` applies them.
    """
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if data:
        parser.add_argument("--data-dir", type=Path, default=DATA_DIR,
                            help="the shared benchmark data folder (default: ../shared/data beside the repository)")
    parser.add_argument("--quick", action="store_true",
                        help="a small end-to-end run; writes under benchmarks/results/quick/ unless --out is given")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"JSON results file (default: benchmarks/results/{result_name}{suffix})")
    parser.set_defaults(_result_file=f"{result_name}{suffix}", _quick=dict(quick or {}))
    return parser


def parse(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> argparse.Namespace:
    """Parse ``argv``; under ``--quick`` apply the parser's quick values and the quick results folder."""
    args = parser.parse_args(argv)
    if args.quick:
        for dest, value in args._quick.items():
            if getattr(args, dest) == parser.get_default(dest):
                setattr(args, dest, value)
    if args.out is None:
        args.out = (RESULTS / "quick" if args.quick else RESULTS) / args._result_file
    del args._quick, args._result_file
    return args


def write_results(path: Path | str, payload: dict[str, Any], *packages: str, indent: int = 1) -> None:
    """Write a results file: ``payload`` plus the command line and :func:`environment` (folder created)."""
    record = {"command": " ".join(["python -m", _module_name(), *sys.argv[1:]]), **environment(*packages)}
    record.update(payload)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=indent) + "\n")


def _module_name() -> str:
    """The running script as ``benchmarks.<area>.<script>`` (its ``-m`` name)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return spec.name if spec is not None else str(getattr(main, "__file__", "?"))


def common_parser(doc: str, *, result_name: str, repeats: int) -> argparse.ArgumentParser:
    """The options every fork training benchmark takes: :func:`script_parser`'s and data size, repeats, threads.

    ``--quick`` trains on 20,000 rows, 10 rounds, once.
    """
    parser = script_parser(doc, result_name=result_name, data=False,
                           quick={"rows": 20_000, "rounds": 10, "repeats": 1})
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--cols", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--upstream-python", default=str(ROOT / ".venv-upstream" / "bin" / "python"),
                        help="interpreter with the upstream wheel")
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
