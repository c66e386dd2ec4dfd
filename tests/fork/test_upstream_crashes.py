"""Upstream LightGBM 4.7.0 crashes the fork fixes (docs/hardening.md).

Each scenario runs in a subprocess, on the upstream wheel (where it must die by a signal) and on
the fork (where it must end cleanly with the correct result or a LightGBMError), so a crash can
never kill pytest:

a. forcedsplits_filename + bagging_fraction=0.1 on small data: segfault in ForceSplits (patch
   "forced splits: no histograms, no forced split"; related upstream #4591);
b. linear_tree=True through lgb.Booster(params, Dataset) + update(): segfault in the linear tree
   learner (patch "linear trees: ..."; related upstream #5056);
c. refit() of a model with monotone_constraints, the refit data declaring that feature
   categorical, 5 rows: SIGABRT "terminate called without an active exception" (patch "openmp:
   an error raised inside a parallel loop is a LightGBMError").
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

FORCED_SPLITS = textwrap.dedent("""
    import json, sys, numpy as np, lightgbm as lgb
    n = int(sys.argv[1]); bagging = float(sys.argv[2])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4)); y = X[:, 0] + rng.normal(size=n)
    json.dump({"feature": 0, "threshold": 2.5,
               "left": {"feature": 1, "threshold": -2.5, "right": {"feature": 2, "threshold": 2.5}},
               "right": {"feature": 3, "threshold": 1.5}}, open(sys.argv[3], "w"))
    out = []
    for seed in range(10):
        params = {"objective": "l2", "verbose": -1, "forcedsplits_filename": sys.argv[3], "seed": seed,
                  "num_leaves": 8, "deterministic": True, "num_threads": 1}
        if bagging < 1:
            params.update(bagging_fraction=bagging, bagging_freq=1)
        b = lgb.train(params, lgb.Dataset(X, y), 20)
        out.append({"trees": b.num_trees(), "rmse": float(np.sqrt(np.mean((b.predict(X) - y) ** 2))),
                    "model": b.model_to_string().split("\\nparameters:")[0]})
    print(json.dumps(out))
""")

FORCED_SPLITS_CASES = textwrap.dedent("""
    import json, sys, numpy as np, lightgbm as lgb
    case = sys.argv[1]
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400 if case == "stale" else 10000, 4)); y = X[:, 0] + rng.normal(size=len(X))
    if case == "stale":  # 40 bagged rows, min_data_in_leaf 20: the left child's forced split is dropped
        spec = {"feature": 0, "threshold": 0.0596, "left": {"feature": 1, "threshold": -1.17}}
        params = {"num_leaves": 4, "bagging_fraction": 0.1, "bagging_freq": 1, "min_data_in_leaf": 20}
    else:  # five forced splits in a tree of at most three
        spec = {"feature": 0, "threshold": 0.3, "left": {"feature": 1, "threshold": -0.5,
                "left": {"feature": 2, "threshold": 0.9}, "right": {"feature": 2, "threshold": -1.0}},
                "right": {"feature": 2, "threshold": 0.1, "right": {"feature": 3, "threshold": -1.4}}}
        params = {"num_leaves": 4}
    json.dump(spec, open(sys.argv[2], "w"))
    params.update(objective="l2", verbose=-1, forcedsplits_filename=sys.argv[2], seed=1, num_threads=1)
    try:
        b = lgb.train(params, lgb.Dataset(X, y), 10)
    except lgb.basic.LightGBMError as e:
        print(json.dumps({"error": str(e)}))
    else:
        print(json.dumps({"error": None, "leaves": [t["num_leaves"] for t in b.dump_model()["tree_info"]],
                          "root": b.dump_model()["tree_info"][0]["tree_structure"].get("split_feature")}))
""")

LINEAR_TREE = textwrap.dedent("""
    import json, sys, numpy as np, lightgbm as lgb
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)); y = X[:, 0] * 2 + rng.normal(size=500) * 0.1
    params = {"objective": "l2", "verbose": -1, "linear_tree": True, "num_threads": 1, "deterministic": True}
    variant = sys.argv[1]
    if variant == "constructed":  # built before, without linear_tree, its data freed
        ds = lgb.Dataset(X, y).construct()
    else:
        ds = lgb.Dataset(X, y, params={"verbose": -1})
        if variant == "goss":
            params["data_sample_strategy"] = "goss"
    try:
        b = lgb.Booster(params, ds)
        for _ in range(5):
            b.update()
    except lgb.basic.LightGBMError as e:
        print(json.dumps({"error": str(e)}))
        sys.exit(0)
    ref = lgb.train(params, lgb.Dataset(X, y), 5)
    trees = lambda booster: booster.model_to_string().split("\\nparameters:")[0]
    print(json.dumps({"same_as_train": trees(b) == trees(ref),
                      "is_linear": "is_linear=1" in b.model_to_string(),
                      "rmse": float(np.sqrt(np.mean((b.predict(X) - y) ** 2)))}))
""")

REFIT = textwrap.dedent("""
    import json, sys, numpy as np, lightgbm as lgb
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 4, 200), rng.normal(size=200)]).astype(float)
    y = X[:, 0] + X[:, 1] + rng.normal(size=200) * 0.1
    where = sys.argv[1]
    try:
        if where == "train":  # a monotone constraint on a categorical feature, at training
            lgb.train({"objective": "l2", "verbose": -1, "monotone_constraints": [1, 0]},
                      lgb.Dataset(X, y, categorical_feature=[0]), 5)
        else:
            b = lgb.train({"objective": "l2", "verbose": -1, "monotone_constraints": [1, 0], "num_leaves": 7},
                          lgb.Dataset(X, y), 5)
            b.refit(X[:5], y[:5], categorical_feature=[0])
    except lgb.basic.LightGBMError as e:
        print(json.dumps({"error": str(e)}))
    else:
        print(json.dumps({"error": None}))
""")


def _run(python, code, *args, timeout=300):
    proc = subprocess.run([str(python), "-c", code, *map(str, args)], capture_output=True, timeout=timeout)
    out = proc.stdout.decode(errors="replace").strip().splitlines()
    return proc.returncode, (json.loads(out[-1]) if proc.returncode == 0 and out else None), proc


@pytest.mark.parametrize("n", [100, 300])
def test_forced_splits_with_bagging(upstream_python, tmp_path, n):
    rc, _, _ = _run(upstream_python, FORCED_SPLITS, n, 0.1, tmp_path / "fs.json")
    assert rc < 0, rc  # upstream: SIGSEGV
    rc, fork, proc = _run(sys.executable, FORCED_SPLITS, n, 0.1, tmp_path / "fs.json")
    assert rc == 0, proc.stderr[-2000:]
    assert all(r["trees"] >= 1 and np.isfinite(r["rmse"]) for r in fork)


def test_forced_split_with_an_empty_bagged_child_is_dropped(upstream_python, tmp_path):
    """1000 rows, bagging 0.1: a forced split leaves a child without bagged rows; upstream fails a
    check (an error, not a crash), the fork drops that forced split and trains."""
    rc, _, proc = _run(upstream_python, FORCED_SPLITS, 1000, 0.1, tmp_path / "fs.json")
    assert rc == 1 and b"Check failed: (best_split_info.right_count) > (0)" in proc.stderr
    rc, fork, proc = _run(sys.executable, FORCED_SPLITS, 1000, 0.1, tmp_path / "fs.json")
    assert rc == 0, proc.stderr[-2000:]
    assert all(r["trees"] == 20 for r in fork)


def test_forced_split_of_a_dropped_child_is_not_the_parents(upstream_python, tmp_path):
    """The left child keeps its parent's leaf id: when the child's own forced split is dropped,
    upstream finds the parent's forced split under that id again and applies it to the child,
    which sends every row left (upstream #4286's check, or a segfault); the fork forgets a used
    forced split."""
    rc, up, proc = _run(upstream_python, FORCED_SPLITS_CASES, "stale", tmp_path / "fs.json")
    # upstream: the check, or a segfault when the emptied child's histograms are read first
    assert rc < 0 or "Check failed: (best_split_info.right_count) > (0)" in up["error"], proc.stderr[-500:]
    rc, fork, proc = _run(sys.executable, FORCED_SPLITS_CASES, "stale", tmp_path / "fs.json")
    assert rc == 0 and fork["error"] is None, proc.stderr[-2000:]
    assert fork["root"] == 0 and all(n >= 2 for n in fork["leaves"])  # it trains (until a tree cannot split)


def test_more_forced_splits_than_leaves(upstream_python, tmp_path):
    """Five forced splits and num_leaves=4: upstream writes past the tree (segfault); the fork
    forces the first three (breadth first) and stops."""
    rc, _, _ = _run(upstream_python, FORCED_SPLITS_CASES, "full", tmp_path / "fs.json")
    assert rc < 0, rc
    rc, fork, proc = _run(sys.executable, FORCED_SPLITS_CASES, "full", tmp_path / "fs.json")
    assert rc == 0 and fork["error"] is None, proc.stderr[-2000:]
    assert fork["root"] == 0 and all(n == 4 for n in fork["leaves"])


def test_forced_splits_without_bagging_are_unchanged(upstream_python, tmp_path):
    """Parity: where upstream works, the fork grows the same trees."""
    rc_up, up, _ = _run(upstream_python, FORCED_SPLITS, 3000, 1.0, tmp_path / "fs.json")
    rc, fork, _ = _run(sys.executable, FORCED_SPLITS, 3000, 1.0, tmp_path / "fs.json")
    assert rc_up == 0 and rc == 0
    assert [_strip(r["model"]) for r in fork] == [_strip(r["model"]) for r in up]
    assert all("split_feature=0" in r["model"] for r in fork)  # the forced root split is there


def _strip(model):
    return [line for line in model.splitlines() if not line.startswith("version=")]


@pytest.mark.parametrize("variant", ["plain", "goss"])
def test_linear_tree_booster_update(upstream_python, variant):
    rc, _, _ = _run(upstream_python, LINEAR_TREE, variant)
    assert rc < 0, rc  # upstream: SIGSEGV
    rc, fork, proc = _run(sys.executable, LINEAR_TREE, variant)
    assert rc == 0, proc.stderr[-2000:]
    # the fork trains linear trees, exactly the model lgb.train grows
    assert fork["same_as_train"] and fork["is_linear"], fork


def test_linear_tree_on_a_dataset_constructed_without_it(upstream_python):
    rc, _, _ = _run(upstream_python, LINEAR_TREE, "constructed")
    assert rc < 0, rc  # upstream: SIGSEGV
    rc, fork, proc = _run(sys.executable, LINEAR_TREE, "constructed")
    assert rc == 0, proc.stderr[-2000:]
    assert "Cannot change linear_tree after constructed Dataset handle" in fork["error"]


@pytest.mark.parametrize("where", ["refit", "train"])
def test_refit_categorical_monotone(upstream_python, where):
    rc, _, proc = _run(upstream_python, REFIT, where)
    assert rc < 0 and b"terminate called without an active exception" in proc.stderr, rc  # SIGABRT
    rc, fork, proc = _run(sys.executable, REFIT, where)
    assert rc == 0, proc.stderr[-2000:]
    assert fork["error"] == "The output cannot be monotone with respect to categorical features"


def test_linear_tree_without_raw_values_is_refused_in_cpp(lgb):
    """GBDT::Init's check, for bindings that construct the Dataset themselves (C API)."""
    import ctypes

    X = np.random.default_rng(0).normal(size=(200, 3))
    ds = lgb.Dataset(X, X[:, 0], params={"verbose": -1}).construct()
    handle = ctypes.c_void_p()
    ret = lgb.basic._LIB.LGBM_BoosterCreate(ds._handle, lgb.basic._c_str("linear_tree=true verbose=-1"),
                                            ctypes.byref(handle))
    assert ret != 0
    message = lgb.basic._LIB.LGBM_GetLastError().decode()
    assert "linear_tree=true needs a training Dataset constructed with linear_tree=true" in message
