"""CEGB beyond upstream: feature groups, per-feature split costs, named and file cost
specifications, GreedyMiser mode and the incremental lazy charge (issue "CEGB beyond upstream").

Oracles: models that must be identical to an equivalent specification (singleton groups =
per-feature costs; uniform split vector = cegb_penalty_split; names = positions; incremental
lazy counts = the reference row scan), and the split gains stored in the model, from which the
charged penalty is recovered exactly (L2 loss, lambda = 0, hessian = 1: the unpenalized gain is
recomputed from the children's values and counts).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from .scenarios import BASE, _raw_gain, _tree_signatures

LAZY = [3.0, 1.0, 1.0, 2.0, 0.5, 0.5, 1.0, 1.0]
NAMES = [f"f{i}" for i in range(8)]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(3000, 8))
    y = X[:, 0] + 0.8 * X[:, 1] * X[:, 2] + 0.5 * np.sin(3 * X[:, 3]) + 0.3 * X[:, 4] ** 2 + 0.1 * rng.normal(size=3000)
    return X, y


def _train(lgb, data, rounds=12, names=NAMES, **params):
    X, y = data
    full = dict(BASE, objective="l2", num_leaves=15, **params)
    return lgb.train(full, lgb.Dataset(X, y, feature_name=list(names)), num_boost_round=rounds)


def _same(a, b):
    return _tree_signatures(a) == _tree_signatures(b)


def _charges(booster, lr=0.1):
    """Per split: (tree, depth, feature, count, penalty = unpenalized gain - stored gain)."""
    out = []
    for t, tree in enumerate(booster.dump_model()["tree_info"]):
        stack = [(tree["tree_structure"], 0, ())]
        while stack:
            node, depth, path = stack.pop()
            if "split_feature" not in node:
                continue
            raw = _raw_gain(node, lr)
            # internal values are written with 6 significant digits: compare within that resolution
            out.append({"tree": t, "depth": depth, "feature": node["split_feature"], "path": path,
                        "count": node["internal_count"], "penalty": raw - node["split_gain"],
                        "tol": 1e-3 + 2e-5 * abs(raw)})
            for child in (node["left_child"], node["right_child"]):
                stack.append((child, depth + 1, (*path, node["split_feature"])))
    return out


# ---- incremental lazy charge == reference scan -------------------------------------------

@pytest.mark.parametrize(
    "extra",
    [{},
     {"bagging_fraction": 0.5, "bagging_freq": 1},
     {"data_sample_strategy": "goss"},
     {"cegb_feature_group": [0, 0, 1, 1, 2, 3, 3, 4]},
     {"cegb_penalty_feature_coupled": [5.0] * 8, "cegb_penalty_split": 0.001},
     {"cegb_independent_branches": True}],
    ids=["plain", "bagging", "goss", "groups", "coupled_split", "greedymiser"],
)
def test_incremental_lazy_counts_equal_reference_scan(lgb, data, extra):
    params = dict(cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.05, **extra)
    fast = _train(lgb, data, **params)
    reference = _train(lgb, data, cegb_lazy_reference_scan=True, **params)
    assert _same(fast, reference)


def test_incremental_lazy_counts_multiclass(lgb, data):
    X, y = data
    ycls = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    params = dict(BASE, objective="multiclass", num_class=3, num_leaves=7,
                  cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.05)
    fast = lgb.train(params, lgb.Dataset(X, ycls), 5)
    reference = lgb.train(dict(params, cegb_lazy_reference_scan=True), lgb.Dataset(X, ycls), 5)
    assert _same(fast, reference)


def test_incremental_lazy_counts_of_many_groups_equal_reference_scan(lgb):
    """130 groups (three 64-bit words a row), leaves of thousands of rows, most groups paid by some rows only."""
    rng = np.random.default_rng(5)
    n, k = 4000, 130
    X = rng.normal(size=(n, k))
    region = np.clip(((X[:, 0] + 3.0) / 6.0 * k).astype(int), 1, k - 1)
    y = X[:, 0] + 2.0 * X[np.arange(n), region] + 0.3 * rng.normal(size=n)
    params = dict(BASE, objective="l2", num_leaves=31, cegb_penalty_feature_lazy=[1.0] * k, cegb_tradeoff=0.002)
    fast = lgb.train(params, lgb.Dataset(X, y), num_boost_round=15)
    reference = lgb.train(dict(params, cegb_lazy_reference_scan=True), lgb.Dataset(X, y), num_boost_round=15)
    assert len({int(f) for f in np.flatnonzero(fast.feature_importance("split"))}) > 64
    assert _same(fast, reference)


# ---- groups -------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["lazy", "coupled"])
def test_singleton_groups_equal_per_feature_costs(lgb, data, kind):
    params = {f"cegb_penalty_feature_{kind}": LAZY if kind == "lazy" else [20.0 * c for c in LAZY],
              "cegb_tradeoff": 0.05 if kind == "lazy" else 1.0}
    plain = _train(lgb, data, **params)
    singletons = _train(lgb, data, cegb_feature_group=list(range(8)), **params)
    assert _same(plain, singletons)
    # and they do matter: one big group gives another model
    grouped = _train(lgb, data, cegb_feature_group=[0] * 8, **params)
    assert not _same(plain, grouped)


@pytest.fixture(scope="module")
def data_strong():
    """Features 1 and 2 carry much of the signal, so every model uses them."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(3000, 8))
    y = X[:, 0] + 1.5 * X[:, 1] + 1.5 * X[:, 2] + 0.5 * X[:, 3] + 0.1 * rng.normal(size=3000)
    return X, y


def test_lazy_group_is_paid_once_per_row(lgb, data_strong):
    # features 1 and 2 form a group: once a row's path used one of them, the other is free
    tradeoff, lazy = 0.01, 2.0
    booster = _train(lgb, data_strong, rounds=8, cegb_penalty_feature_lazy=[0, lazy, lazy, 0, 0, 0, 0, 0],
                     cegb_feature_group=[-1, 7, 7, -1, -1, -1, -1, -1], cegb_tradeoff=tradeoff,
                     boost_from_average=False)
    charged = [c for c in _charges(booster) if c["feature"] in (1, 2)]
    assert {c["feature"] for c in charged} == {1, 2}
    reused = [c for c in charged if {1, 2} & set(c["path"])]
    assert reused, "some split on 1 or 2 lies below a split on the other"
    for c in reused:
        assert abs(c["penalty"]) < c["tol"], c
    # the first use, at the root of tree 0, is paid by every row
    first = [c for c in charged if c["tree"] == 0 and c["depth"] == 0]
    assert len(first) == 1
    assert first[0]["penalty"] == pytest.approx(tradeoff * lazy * first[0]["count"], abs=first[0]["tol"])
    # without the group, a split on 2 below a split on 1 pays for its rows again
    single = _charges(_train(lgb, data_strong, rounds=8, cegb_penalty_feature_lazy=[0, lazy, lazy, 0, 0, 0, 0, 0],
                             cegb_tradeoff=tradeoff, boost_from_average=False))
    repaid = [c for c in single if c["tree"] == 0 and c["feature"] == 2 and 1 in c["path"] and 2 not in c["path"]]
    assert repaid and all(c["penalty"] == pytest.approx(tradeoff * lazy * c["count"], abs=c["tol"]) for c in repaid)


def test_coupled_group_is_paid_once_per_model(lgb, data_strong):
    booster = _train(lgb, data_strong, rounds=8, cegb_penalty_feature_coupled=[0, 30.0, 30.0, 0, 0, 0, 0, 0],
                     cegb_feature_group=[-1, 4, 4, -1, -1, -1, -1, -1], boost_from_average=False)
    charges = [c for c in _charges(booster) if c["feature"] in (1, 2)]
    assert {c["feature"] for c in charges} == {1, 2}
    paid = [c for c in charges if c["penalty"] > 1.0]
    # exactly one split (the first use of the group) carries the 30.0
    assert len(paid) == 1 and paid[0]["penalty"] == pytest.approx(30.0, abs=paid[0]["tol"]), charges
    assert all(abs(c["penalty"]) < c["tol"] for c in charges if c is not paid[0])


# ---- per-feature split costs ----------------------------------------------------------------

def test_uniform_split_vector_equals_cegb_penalty_split(lgb, data):
    a = _train(lgb, data, cegb_penalty_split=0.002)
    b = _train(lgb, data, cegb_penalty_feature_split=[0.002] * 8)
    assert _same(a, b)


def test_per_feature_split_cost_is_charged_per_row(lgb, data):
    booster = _train(lgb, data, rounds=4, cegb_penalty_feature_split=[0.01, 0.02, 0, 0, 0, 0, 0, 0.03],
                     boost_from_average=False)
    expected = {0: 0.01, 1: 0.02, 7: 0.03}
    for c in _charges(booster):
        assert c["penalty"] == pytest.approx(expected.get(c["feature"], 0.0) * c["count"], abs=c["tol"]), c


# ---- GreedyMiser mode --------------------------------------------------------------------------

def test_greedymiser_charges_branches_of_one_tree_independently(lgb, data):
    """Hand-computed rule: with cegb_independent_branches, a node splitting on a feature already
    used above it in the same tree pays lazy * count again; without it, it pays nothing. Across
    trees both modes treat the feature as paid."""
    lazy = [1.0, 0, 0, 0, 0, 0, 0, 0]
    common = dict(rounds=6, cegb_penalty_feature_lazy=lazy, cegb_tradeoff=0.01, boost_from_average=False)
    normal = _charges(_train(lgb, data, **common))
    miser = _charges(_train(lgb, data, cegb_independent_branches=True, **common))
    reused_normal = [c for c in normal if c["feature"] == 0 and 0 in c["path"]]
    reused_miser = [c for c in miser if c["feature"] == 0 and 0 in c["path"] and c["tree"] == 0]
    assert reused_normal and reused_miser
    assert all(abs(c["penalty"]) < c["tol"] for c in reused_normal)
    assert all(c["penalty"] == pytest.approx(0.01 * c["count"], abs=c["tol"]) for c in reused_miser)
    later = [c for c in miser if c["feature"] == 0 and c["tree"] >= 1]
    assert later and all(abs(c["penalty"]) < c["tol"] for c in later)


# ---- named costs and cost files ----------------------------------------------------------------

def test_named_dict_and_series_equal_positional(lgb, data):
    pd = pytest.importorskip("pandas")
    positional = _train(lgb, data, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.05,
                        cegb_feature_group=[0, 0, 1, 1, 2, 3, 3, 4])
    named = dict(zip(NAMES, LAZY, strict=True))
    by_dict = _train(lgb, data, cegb_penalty_feature_lazy=named, cegb_tradeoff=0.05,
                     cegb_feature_group=dict(zip(NAMES, [0, 0, 1, 1, 2, 3, 3, 4], strict=True)))
    by_series = _train(lgb, data, cegb_penalty_feature_lazy=pd.Series(named).iloc[::-1], cegb_tradeoff=0.05,
                       cegb_feature_group=pd.Series([0, 0, 1, 1, 2, 3, 3, 4], index=NAMES))
    assert _same(positional, by_dict) and _same(positional, by_series)


def test_named_costs_with_pandas_and_sklearn(lgb, data):
    pd = pytest.importorskip("pandas")
    X, y = data
    frame = pd.DataFrame(X, columns=NAMES)
    sparse_costs = {"f0": 3.0, "f3": 2.0}  # features not named cost 0
    est = lgb.LGBMRegressor(n_estimators=10, num_leaves=15, verbose=-1, num_threads=1, deterministic=True,
                            force_row_wise=True, cegb_tradeoff=0.05, cegb_penalty_feature_lazy=sparse_costs)
    est.fit(frame, y)
    ref = _train(lgb, data, rounds=10, cegb_penalty_feature_lazy=[3.0, 0, 0, 2.0, 0, 0, 0, 0], cegb_tradeoff=0.05)
    np.testing.assert_allclose(est.predict(frame), ref.predict(X), rtol=1e-12)


@pytest.mark.parametrize(
    "value, pattern",
    [({"f0": 1.0, "nope": 2.0}, "unknown feature 'nope'"),
     ("f0:1,f0:2", "feature 'f0' is given twice"),
     ("f0:-1", "must be a finite number >= 0"),
     ("f0:inf", "must be a finite number >= 0"),
     ("f0:abc", "is not a number")],
)
def test_bad_named_costs(lgb, data, value, pattern):
    with pytest.raises(lgb.basic.LightGBMError, match=pattern):
        _train(lgb, data, rounds=1, cegb_penalty_feature_lazy=value)


def test_python_rejects_bad_names_and_values(lgb, data):
    with pytest.raises(ValueError, match="must be a finite number >= 0"):
        _train(lgb, data, rounds=1, cegb_penalty_feature_lazy={"f0": -2.0})
    with pytest.raises(ValueError, match="contain none of"):
        _train(lgb, data, rounds=1, cegb_penalty_feature_lazy={"a:b": 2.0})


def test_given_twice_is_an_error(lgb, data, tmp_path):
    path = tmp_path / "costs.csv"
    path.write_text("feature,lazy\nf0,3\n")
    with pytest.raises(lgb.basic.LightGBMError, match="given more than once"):
        _train(lgb, data, rounds=1, cegb_penalty_feature_lazy=LAZY, cegb_cost_file=str(path))


def test_cost_file_equals_positional(lgb, data, tmp_path):
    path = tmp_path / "costs.csv"
    rows = ["feature,lazy,coupled,group,split"]
    for i, name in enumerate(NAMES):
        rows.append(f"{name},{LAZY[i]},{2.0 * i},{[0, 0, 1, 1, 2, 3, 3, 4][i]},{0.001 * (i % 3)}")
    path.write_text("\n".join(rows) + "\n")
    positional = _train(lgb, data, cegb_penalty_feature_lazy=LAZY, cegb_tradeoff=0.05,
                        cegb_penalty_feature_coupled=[2.0 * i for i in range(8)],
                        cegb_feature_group=[0, 0, 1, 1, 2, 3, 3, 4],
                        cegb_penalty_feature_split=[0.001 * (i % 3) for i in range(8)])
    from_file = _train(lgb, data, cegb_cost_file=str(path), cegb_tradeoff=0.05)
    assert _same(positional, from_file)


@pytest.mark.parametrize(
    "content, pattern",
    [("feature,lazy,price\nf0,1,2\n", "unknown column 'price'"),
     ("lazy,coupled\n1,2\n", "no 'feature' column"),
     ("feature,lazy\nf9,1\n", "unknown feature 'f9'"),
     ("feature,lazy\nf0,1\nf0,2\n", "given twice"),
     ("feature,lazy\nf0,-1\n", "must be a finite number >= 0"),
     ("feature,group,group_cost\nf0,1.5,1\nf1,1.5,2\n", "group '1.5' has several group_cost values, 1 and 2"),
     ("feature,lazy\nf0,nan\n", "column lazy of feature 'f0' is not a number: 'nan'")],
)
def test_bad_cost_files(lgb, data, tmp_path, content, pattern):
    path = tmp_path / "costs.csv"
    path.write_text(content)
    with pytest.raises(lgb.basic.LightGBMError, match=pattern):
        _train(lgb, data, rounds=1, cegb_cost_file=str(path))


def test_cli_named_costs_and_cost_file(lgb, data, tmp_path):
    import shutil

    exe = shutil.which("lightgbm")
    assert exe, "the fork's lightgbm CLI must be on PATH"
    X, y = data
    csv = tmp_path / "train.csv"
    header = "label," + ",".join(NAMES)
    np.savetxt(csv, np.column_stack([y, X]), delimiter=",", fmt="%.17g", header=header, comments="")
    costs = tmp_path / "costs.csv"
    costs.write_text("feature,lazy\n" + "\n".join(f"{n},{c}" for n, c in zip(NAMES, LAZY, strict=True)) + "\n")
    common = ["task=train", f"data={csv}", "header=true", "label_column=name:label", "num_iterations=8",
              "objective=l2", "num_leaves=15", "verbose=-1", "num_threads=1", "deterministic=true",
              "force_row_wise=true", "seed=7", "cegb_tradeoff=0.05"]
    models = {}
    named = ",".join(f"{n}:{c}" for n, c in zip(NAMES, LAZY, strict=True))
    for tag, spec in [("positional", "cegb_penalty_feature_lazy=" + ",".join(map(str, LAZY))),
                      ("named", "cegb_penalty_feature_lazy=" + named),
                      ("file", f"cegb_cost_file={costs}")]:
        out = tmp_path / f"{tag}.txt"
        subprocess.run([exe, *common, spec, f"output_model={out}"], check=True, capture_output=True, timeout=300)
        models[tag] = Path(out).read_text().split("\nparameters:")[0]
    assert models["positional"] == models["named"] == models["file"]
