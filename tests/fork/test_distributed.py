"""Distributed CEGB: two local processes over 127.0.0.1 sockets grow the serial trees.

Every case starts two ranks (distributed_worker.py) with ports reserved for it, LightGBM's network
time_out of 1 minute, a wall-clock limit per process pair, and kills both processes on any failure.
Bins are shared (one binary dataset file loaded with pre_partition=false, or a reference Dataset
built before the network starts), the objective is L2 with boost_from_average=false, and training
is deterministic (num_threads=1): upstream's own distributed training equals serial there, so
both ranks' models must equal the serial model (structure exactly, gains and values within 1e-9).
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
WORKER = HERE / "distributed_worker.py"
PAIR_TIMEOUT_S = 90
N_FEATURES = 8

DS_PARAMS = {"max_bin": 31, "verbose": -1, "min_data_in_bin": 3}
BASE = {"objective": "regression", "boost_from_average": False, "num_leaves": 7, "learning_rate": 0.3,
        "min_data_in_leaf": 20, "deterministic": True, "num_threads": 1, "force_col_wise": True,
        "verbose": -1, "seed": 1, "time_out": 1, **DS_PARAMS}
LAZY = [0.6, 0.02, 0.3, 0.08, 0.01, 0.1, 0.05, 0.005]
COUPLED = [900.0, 50.0, 400.0, 0.0, 700.0, 100.0, 300.0, 20.0]
CEGB = {
    "split": {"cegb_penalty_split": 0.05},
    "lazy": {"cegb_penalty_feature_lazy": LAZY, "cegb_tradeoff": 0.5},
    "coupled": {"cegb_penalty_feature_coupled": COUPLED},
    "lazy_coupled_groups": {"cegb_penalty_feature_lazy": LAZY, "cegb_penalty_feature_coupled": COUPLED,
                            "cegb_feature_group": [0, 0, 1, 1, 2, 3, 3, 4], "cegb_tradeoff": 0.5},
    "per_feature_split": {"cegb_penalty_feature_split": [0.3, 0.0, 0.1, 0.05, 0.2, 0.0, 0.4, 0.02]},
    "greedymiser": {"cegb_penalty_feature_lazy": LAZY, "cegb_independent_branches": True, "cegb_tradeoff": 0.5},
    "reference_scan": {"cegb_penalty_feature_lazy": LAZY, "cegb_lazy_reference_scan": True, "cegb_tradeoff": 0.5},
}
ROUNDS = 4


@pytest.fixture(autouse=True)
def _test_time_limit():
    """A hard per-test limit (no pytest-timeout here): SIGALRM fails the test."""
    def fail(signum, frame):
        raise TimeoutError("test_distributed: test ran past its time limit")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(3 * PAIR_TIMEOUT_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def make_data(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, N_FEATURES))
    y = (3 * X[:, 0] + 2 * (X[:, 1] > 0.5) + np.sin(6 * X[:, 2]) + 2 * X[:, 3] * X[:, 4]
         + 1.5 * X[:, 5] + X[:, 6] + 0.2 * rng.normal(size=n))
    return X, y


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, lgb) -> Path:
    d = tmp_path_factory.mktemp("dist_data")
    X, y = make_data()
    np.save(d / "X.npy", X)
    np.save(d / "y.npy", y)
    lgb.Dataset(X, y, params=DS_PARAMS).save_binary(str(d / "train.bin"))
    return d


def free_ports(n: int) -> list[int]:
    """n distinct free ports, reserved together (all bound before any is released)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def run_pair(python: str | Path, data_dir: Path, tmp: Path, partition: str,
             configs: dict[str, dict[str, Any]], attempts: int = 2) -> list[dict[str, str]]:
    """Train `configs` on two ranks; return each rank's {name: model string}."""
    last_error = ""
    for attempt in range(attempts):
        ports = free_ports(2)
        machines = ",".join(f"127.0.0.1:{p}" for p in ports)
        procs, outs = [], []
        try:
            for rank in range(2):
                out = tmp / f"models_{partition}_{attempt}_{rank}.json"
                spec = {"rank": rank, "machines": machines, "port": ports[rank], "data_dir": str(data_dir),
                        "partition": partition, "ds_params": DS_PARAMS, "configs": configs, "out": str(out)}
                spec_path = tmp / f"spec_{partition}_{attempt}_{rank}.json"
                spec_path.write_text(json.dumps(spec))
                outs.append(out)
                procs.append(subprocess.Popen([str(python), str(WORKER), str(spec_path)],
                                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
            deadline = time.monotonic() + PAIR_TIMEOUT_S
            logs = []
            for proc in procs:
                try:
                    logs.append(proc.communicate(timeout=max(1.0, deadline - time.monotonic()))[0])
                except subprocess.TimeoutExpired:
                    raise AssertionError(f"rank timed out after {PAIR_TIMEOUT_S} s (deadlock?)") from None
            if all(p.returncode == 0 for p in procs):
                return [json.loads(o.read_text()) for o in outs]
            last_error = "\n".join(f"rank {r} rc={p.returncode}:\n{log[-3000:]}"
                                   for r, (p, log) in enumerate(zip(procs, logs, strict=True)))
            if "bind" not in last_error.lower() and "connect" not in last_error.lower():
                break  # not a port race: no retry
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    raise AssertionError(f"distributed training failed:\n{last_error}")


def trees(lgb, model: str) -> list[dict]:
    return lgb.Booster(model_str=model).dump_model()["tree_info"]


def _flatten(node: dict, out: list, is_root: bool, skip_root_value: bool) -> None:
    if "split_index" in node:
        out.append(("split", node["split_feature"], node["threshold"], node["decision_type"],
                    node["default_left"], node["missing_type"], node["internal_count"]))
        out.append(("gain", node["split_gain"]))
        if not (is_root and skip_root_value):
            out.append(("value", node["internal_value"]))
        _flatten(node["left_child"], out, False, skip_root_value)
        _flatten(node["right_child"], out, False, skip_root_value)
    else:
        out.append(("leaf", node["leaf_count"]))
        out.append(("value", node["leaf_value"]))


def assert_same_model(lgb, got: str, want: str, what: str, skip_root_value: bool = False,
                      num_trees: int | None = None) -> None:
    a, b = trees(lgb, got)[:num_trees], trees(lgb, want)[:num_trees]
    assert len(a) == len(b), f"{what}: {len(a)} trees vs {len(b)}"
    for t, (ta, tb) in enumerate(zip(a, b, strict=True)):
        fa, fb = [], []
        _flatten(ta["tree_structure"], fa, True, skip_root_value)
        _flatten(tb["tree_structure"], fb, True, skip_root_value)
        assert [x[0] for x in fa] == [x[0] for x in fb], f"{what}: tree {t} has a different shape"
        for ea, eb in zip(fa, fb, strict=True):
            if ea[0] in ("split", "leaf"):
                assert ea == eb, f"{what}: tree {t}: {ea} != {eb}"
            else:
                assert ea[1] == pytest.approx(eb[1], rel=1e-9, abs=1e-12), f"{what}: tree {t}: {ea} != {eb}"


def serial_model(lgb, data_dir: Path, partition: str, cfg: dict[str, Any]) -> str:
    params = {k: v for k, v in cfg["params"].items() if k not in ("tree_learner", "top_k")}
    if partition == "bin":
        ds = lgb.Dataset(str(data_dir / "train.bin"), params=DS_PARAMS)
    else:
        ds = lgb.Dataset(np.load(data_dir / "X.npy"), np.load(data_dir / "y.npy"), params=DS_PARAMS,
                         free_raw_data=False)
    booster = lgb.train(params, ds, num_boost_round=cfg["rounds"])
    if cfg.get("continue_rounds"):
        booster = lgb.train(params, ds, num_boost_round=cfg["continue_rounds"], init_model=booster)
    return booster.model_to_string()


def learner_params(learner: str) -> dict[str, Any]:
    return {"tree_learner": learner, **({"top_k": N_FEATURES} if learner == "voting" else {})}


@pytest.mark.parametrize("partition", ["bin", "skew"])
@pytest.mark.parametrize("learner", ["data", "voting"])
def test_ranks_equal_serial(lgb, data_dir, tmp_path, learner, partition):
    cases = {"plain": {}, **CEGB}  # CEGB with use_quantized_grad is refused (test_cegb_param_validation.py)
    configs = {name: {"params": {**BASE, **learner_params(learner), **extra}, "rounds": ROUNDS}
               for name, extra in cases.items()}
    ranks = run_pair(sys.executable, data_dir, tmp_path, partition, configs)
    if learner == "voting" and partition == "skew":
        # upstream's plain voting differs from serial here (local vote with min_data_in_leaf / M on
        # very different local data): only the ranks must agree
        for name in configs:
            assert_same_model(lgb, ranks[0][name], ranks[1][name], f"voting/skew/{name}: rank 0 vs 1",
                              skip_root_value=True)
        return
    plain = serial_model(lgb, data_dir, partition, configs["plain"])
    for name, cfg in configs.items():
        want = serial_model(lgb, data_dir, partition, cfg)
        if name != "plain":  # the penalties change the model (the test can see a wrong charge)
            assert want != plain, f"{name}: CEGB does not change the serial model"
        for rank in range(2):
            assert_same_model(lgb, ranks[rank][name], want, f"{learner}/{partition}/{name}/rank {rank}",
                              skip_root_value=learner == "voting")


@pytest.fixture(scope="module")
def extras_models(data_dir, tmp_path_factory) -> tuple[dict, list[dict[str, str]]]:
    """One process pair (skewed partition) for continued training, bagging, GOSS, small top_k."""
    cegb = CEGB["lazy_coupled_groups"]
    configs = {
        "continued": {"params": {**BASE, "tree_learner": "data", **cegb}, "rounds": 2, "continue_rounds": 3},
        "bagging": {"params": {**BASE, "tree_learner": "data", "bagging_fraction": 0.6, "bagging_freq": 1,
                               **cegb}, "rounds": ROUNDS},
        "goss": {"params": {**BASE, "tree_learner": "data", "data_sample_strategy": "goss",
                            "learning_rate": 0.5, **cegb}, "rounds": ROUNDS},
        "voting_top2": {"params": {**BASE, "tree_learner": "voting", "top_k": 2, **cegb}, "rounds": ROUNDS},
    }
    return configs, run_pair(sys.executable, data_dir, tmp_path_factory.mktemp("extras"), "skew", configs)


def test_init_model_continuation_equals_serial(lgb, data_dir, extras_models):
    configs, ranks = extras_models
    want = serial_model(lgb, data_dir, "random", configs["continued"])
    assert len(trees(lgb, want)) == 5
    for rank in range(2):
        assert_same_model(lgb, ranks[rank]["continued"], want, f"continued/rank {rank}")


def test_bagging_goss_small_top_k_ranks_identical(lgb, extras_models):
    _, ranks = extras_models
    for name in ("bagging", "goss", "voting_top2"):
        # upstream's voting learner computes the root's internal_value per rank: not compared
        assert_same_model(lgb, ranks[0][name], ranks[1][name], f"{name}: rank 0 vs 1",
                          skip_root_value=name.startswith("voting"))
        assert len(trees(lgb, ranks[0][name])) == ROUNDS


@pytest.mark.parametrize("cegb", ["plain", "coupled", "lazy_coupled_groups"])
def test_feature_parallel_cli_equals_serial(lgb, data_dir, tmp_path, cegb):
    cli = Path(sys.executable).with_name("lightgbm")
    if not cli.exists():
        pytest.skip(f"the fork's CLI is not installed next to {sys.executable}")
    params = {**BASE, **CEGB.get(cegb, {})}
    ports = free_ports(2)
    mlist = tmp_path / "mlist.txt"
    mlist.write_text("".join(f"127.0.0.1 {p}\n" for p in ports))
    procs = []
    try:
        for rank in range(2):
            # pre_partition=true: every rank loads every row (4.7.0 splits a binary file's rows
            # over the machines whenever pre_partition=false, even for feature parallel)
            conf = {"task": "train", "data": str(data_dir / "train.bin"), "tree_learner": "feature",
                    "pre_partition": True,
                    "num_machines": 2, "machine_list_filename": str(mlist), "local_listen_port": ports[rank],
                    "num_iterations": ROUNDS, "output_model": str(tmp_path / f"model{rank}.txt"), **params}
            lines = [f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in conf.items()]
            (tmp_path / f"train{rank}.conf").write_text("\n".join(lines) + "\n")
            procs.append(subprocess.Popen([str(cli), f"config={tmp_path / f'train{rank}.conf'}"],
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        deadline = time.monotonic() + PAIR_TIMEOUT_S
        logs = [p.communicate(timeout=max(1.0, deadline - time.monotonic()))[0] for p in procs]
        for rank, (p, log) in enumerate(zip(procs, logs, strict=True)):
            assert p.returncode == 0, f"CLI rank {rank} failed:\n{log[-3000:]}"
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    models = [(tmp_path / f"model{rank}.txt").read_text() for rank in range(2)]
    # every rank holds the same model (the coupled refund is synced over the feature owners)
    assert_same_model(lgb, models[0], models[1], "feature: rank 0 vs 1")
    # the first tree is the serial one; later trees differ from serial in upstream 4.7.0's
    # feature-parallel learner even with CEGB off (measured with the CLI), so only tree 0 is compared
    want = serial_model(lgb, data_dir, "bin", {"params": params, "rounds": ROUNDS})
    assert_same_model(lgb, models[0], want, "feature: tree 0 vs serial", num_trees=1)


@pytest.fixture(scope="module")
def binary_data_dir(tmp_path_factory, lgb) -> Path:
    d = tmp_path_factory.mktemp("dist_binary")
    X, y = make_data()
    yb = (y > np.median(y)).astype(float)
    np.save(d / "X.npy", X)
    np.save(d / "y.npy", yb)
    lgb.Dataset(X, yb, params=DS_PARAMS).save_binary(str(d / "train.bin"))
    return d


BINARY_SPLIT = {"params": {**BASE, "objective": "binary", "boost_from_average": True, "tree_learner": "data",
                           "cegb_penalty_split": 0.002}, "rounds": 4}


def splits_and_gains(lgb, model: str) -> list[tuple]:
    out = []
    for tree in trees(lgb, model):
        stack = [tree["tree_structure"]]
        while stack:
            node = stack.pop()
            if "split_index" in node:
                out.append((node["split_feature"], node["threshold"], node["split_gain"]))
                stack += [node["left_child"], node["right_child"]]
    return out


def test_split_penalty_uses_exact_global_counts_binary(lgb, binary_data_dir, tmp_path):
    """Binary objective: distributed LightGBM stores leaf counts estimated from the hessians (so
    stored counts differ from serial, CEGB or not); the split penalty multiplies the exact global
    count, so every split and its gain equal serial training's."""
    ranks = run_pair(sys.executable, binary_data_dir, tmp_path, "bin", {"split": BINARY_SPLIT})
    want = splits_and_gains(lgb, serial_model(lgb, binary_data_dir, "bin", BINARY_SPLIT))
    for rank in range(2):
        got = splits_and_gains(lgb, ranks[rank]["split"])
        assert [g[:2] for g in got] == [w[:2] for w in want]
        assert [g[2] for g in got] == pytest.approx([w[2] for w in want], rel=1e-9)


# --- upstream 4.7.0's defects (run on the upstream wheel) -----------------------------------

UPSTREAM_CEGB = {"lazy": CEGB["lazy"], "coupled": CEGB["coupled"]}


@pytest.mark.upstream
def test_upstream_data_parallel_defects(lgb, data_dir, tmp_path, upstream_python):
    """Upstream: data-parallel lazy differs from serial; coupled gives different models per rank."""
    configs = {name: {"params": {**BASE, "tree_learner": "data", **extra}, "rounds": ROUNDS}
               for name, extra in UPSTREAM_CEGB.items()}
    ranks = run_pair(upstream_python, data_dir, tmp_path, "skew", configs)
    # serial upstream equals serial fork for these (parity), so the fork's serial model is the reference
    want_lazy = serial_model(lgb, data_dir, "skew", configs["lazy"])
    with pytest.raises(AssertionError):
        assert_same_model(lgb, ranks[0]["lazy"], want_lazy, "upstream lazy")
    assert ranks[0]["coupled"] != ranks[1]["coupled"], "upstream's coupled refund no longer diverges per rank"


# --- Dask ---------------------------------------------------------------------------------------

def test_dask_classifier_with_named_lazy_costs(lgb):
    """lgb.DaskLGBMClassifier(cegb_tradeoff=..., cegb_penalty_feature_lazy={name: cost}) on a
    LocalCluster with 2 worker processes trains, and the lazy costs steer it away from the costly
    feature exactly as serial training does (integer features present in every partition: same bins)."""
    dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")
    distributed = pytest.importorskip("distributed", reason="distributed is not installed")
    import pandas as pd

    rng = np.random.default_rng(3)
    n = 4000
    X = pd.DataFrame({f"f{i}": rng.integers(0, 20, size=n) for i in range(6)})
    logit = 0.4 * X["f0"] - 0.35 * X["f1"] + 0.2 * X["f2"] - 0.1 * X["f3"] + rng.normal(size=n)
    y = (logit > logit.median()).astype(int)
    costs = {"f0": 1.0, "f1": 0.0, "f2": 0.0, "f3": 0.0, "f4": 0.0, "f5": 0.0}
    params = {"n_estimators": 5, "num_leaves": 7, "cegb_tradeoff": 0.5, "cegb_penalty_feature_lazy": costs,
              "min_child_samples": 20, "deterministic": True, "force_col_wise": True, "verbose": -1,
              "time_out": 1}
    try:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=50)
    except Exception as exc:  # pragma: no cover - environment without working process spawning
        pytest.skip(f"dask LocalCluster cannot start here: {exc!r}")
    try:
        with distributed.Client(cluster) as client:
            dX = dd.from_pandas(X, npartitions=2)
            dy = dd.from_pandas(y, npartitions=2)
            model = lgb.DaskLGBMClassifier(client=client, tree_learner="data", **params)
            model.fit(dX, dy)
            plain = lgb.DaskLGBMClassifier(client=client, tree_learner="data",
                                           **{k: v for k, v in params.items() if not k.startswith("cegb")})
            plain.fit(dX, dy)
            pred = model.predict(dX).compute()
    finally:
        cluster.close()
    assert pred.shape == (n,)
    used = model.booster_.feature_importance("split")
    used_plain = plain.booster_.feature_importance("split")
    assert used_plain[0] > 0 and used[0] < used_plain[0], (used, used_plain)
    # serial training with the same parameters makes the same first tree (bins are identical)
    serial = lgb.LGBMClassifier(**params).fit(X, y)
    first = model.booster_.dump_model()["tree_info"][0]["tree_structure"]
    first_serial = serial.booster_.dump_model()["tree_info"][0]["tree_structure"]

    def splits(node):
        return [] if "split_index" not in node else (
            [(node["split_feature"], node["threshold"]), *splits(node["left_child"]), *splits(node["right_child"])])

    assert splits(first) == splits(first_serial)


@pytest.mark.upstream
def test_upstream_split_penalty_uses_hessian_estimated_counts(lgb, binary_data_dir, tmp_path, upstream_python):
    """Upstream: with a binary objective the data-parallel split penalty multiplies the count
    estimated from the hessians, and the splits differ from serial."""
    ranks = run_pair(upstream_python, binary_data_dir, tmp_path, "bin", {"split": BINARY_SPLIT})
    want = splits_and_gains(lgb, serial_model(lgb, binary_data_dir, "bin", BINARY_SPLIT))
    got = splits_and_gains(lgb, ranks[0]["split"])
    assert [g[:2] for g in got] != [w[:2] for w in want]


UNREACHABLE = """
import sys, time, numpy as np, lightgbm as lgb
p0, p1 = int(sys.argv[1]), int(sys.argv[2])
X = np.random.default_rng(0).normal(size=(200, 3))
params = {"objective": "l2", "verbose": -1, "tree_learner": "data", "num_machines": 2,
          "machines": f"127.0.0.1:{p0},127.0.0.1:{p1}", "local_listen_port": p1, "time_out": 1,
          "cegb_budget": 1.0, "cegb_penalty_feature_lazy": [1.0, 1.0, 1.0]}
start = time.monotonic()
try:
    lgb.train(params, lgb.Dataset(X, X[:, 0]), 2)
except lgb.basic.LightGBMError as e:
    print(f"{time.monotonic() - start:.2f} {e}")
"""


def test_parameter_errors_come_before_the_network_set_up(tmp_path):
    """Nobody listens on the machine list: the listening rank would wait time_out minutes for the
    others (then abort the process); a CEGB parameter error is raised first, through Python and
    the CLI."""
    ports = free_ports(2)
    proc = subprocess.run([sys.executable, "-c", UNREACHABLE, *map(str, ports)], capture_output=True, text=True,
                          timeout=30)
    seconds, message = proc.stdout.strip().split(" ", 1)
    assert message == "cegb_budget is not supported with a distributed tree_learner (data); use tree_learner=serial"
    assert float(seconds) < 5
    cli = Path(sys.executable).with_name("lightgbm")
    X = np.random.default_rng(0).normal(size=(200, 3))
    np.savetxt(tmp_path / "train.csv", np.column_stack([X[:, 0], X]), delimiter=",")
    (tmp_path / "mlist.txt").write_text("".join(f"127.0.0.1 {p}\n" for p in ports))
    proc = subprocess.run([str(cli), "task=train", f"data={tmp_path / 'train.csv'}", "tree_learner=data",
                           "num_machines=2", f"machine_list_filename={tmp_path / 'mlist.txt'}",
                           f"local_listen_port={ports[1]}", "time_out=1", "cegb_budget=1",
                           "cegb_penalty_feature_lazy=1,1,1", "verbose=-1"], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode > 0 and "cegb_budget is not supported with a distributed tree_learner" in proc.stderr
