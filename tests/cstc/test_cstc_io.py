"""CSTC.save / CSTC.load: exact round trips, and every hostile file refused naming the field."""

from __future__ import annotations

import json
import re
import warnings

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from budget_extras import CSTC, FeatureCosts, TreeEnsemble

COLS = ["a", "b", "c", "d"]


def _data(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=COLS)
    y = (X["a"] + X["b"] * X["c"] + 0.2 * rng.normal(size=n) > 0).to_numpy()
    return X, y


def _costs() -> FeatureCosts:
    return FeatureCosts([1.0, 2.0, 3.0, 4.0], coupled=[0.0, 1.0, 0.0, 2.0], groups=[None, "lab", "lab", None],
                        group_cost={"lab": 4.5}, split=[0.1, 0.2, 0.0, 0.3], tree=0.25, feature_names=COLS)


def assert_same_model(a: CSTC, b: CSTC, X) -> None:
    """Loaded and original models answer exactly alike: predictions and the whole cost report."""
    for method in ("predict", "decision_function", "apply"):
        pa, pb = getattr(a, method)(X), getattr(b, method)(X)
        np.testing.assert_array_equal(pa, pb, err_msg=method)
        assert pa.dtype == pb.dtype, method
    if a.task == "binary":
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert (a.path(X) != b.path(X)).nnz == 0
    ra, rb = a.cost_report(X), b.cost_report(X)
    for field in vars(ra):
        va, vb = getattr(ra, field), getattr(rb, field)
        if field == "costs":
            for attr in ("lazy", "coupled", "split", "group", "group_cost", "unit", "unit_cost"):
                np.testing.assert_array_equal(getattr(va, attr), getattr(vb, attr), err_msg=attr)
            assert (va.tree, va.group_labels, va.feature_names) == (vb.tree, vb.group_labels, vb.feature_names)
        elif hasattr(va, "toarray"):
            assert va.shape == vb.shape and (va != vb).nnz == 0, field
        elif isinstance(va, np.ndarray):
            np.testing.assert_array_equal(va, vb, err_msg=field)
        else:
            assert va == vb, field
    assert ra.summary() == rb.summary()
    assert a.result_ == b.result_
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.active_, b.active_)
    np.testing.assert_array_equal(a.is_leaf_, b.is_leaf_)
    np.testing.assert_array_equal(a.tree_costs_, b.tree_costs_)
    np.testing.assert_array_equal(a.tree_features_, b.tree_features_)
    act = a.active_
    np.testing.assert_array_equal(a.intercept_[act], b.intercept_[act])
    np.testing.assert_array_equal(a.threshold_[act], b.threshold_[act])
    assert a.n_features_in_ == b.n_features_in_ and a.feature_names_in_ == b.feature_names_in_


@pytest.fixture(scope="module")
def fitted() -> tuple[CSTC, pd.DataFrame]:
    """A binary depth-3 tree with string classes, groups, split and tree costs (all 7 nodes kept)."""
    X, y = _data()
    labels = np.where(y, "sick", "well")
    m = CSTC(costs=_costs(), depth=3, task="binary", n_weak=15, weak_max_depth=2, random_state=0)
    m.fit(X[:200], labels[:200])
    assert m.active_.all()
    return m, X


@pytest.fixture
def saved(fitted, tmp_path):
    m, _ = fitted
    path = tmp_path / "m.json"
    m.save(path)
    return path, json.loads(path.read_text())


# ----------------------------------------------------------------------------- round trips


def test_round_trip_binary_string_classes(fitted, saved):
    m, X = fitted
    loaded = CSTC.load(saved[0])
    assert_same_model(m, loaded, X)
    assert_same_model(m, loaded, X.to_numpy())
    assert loaded.classes_.tolist() == ["sick", "well"] and loaded.classes_.dtype == m.classes_.dtype
    assert isinstance(loaded.booster_, lgb.Booster)
    np.testing.assert_array_equal(loaded.booster_.predict(X), m.booster_.predict(X))
    assert saved[1]["format"] == "budget_extras.CSTC/1"
    loaded.save(saved[0].with_name("again.json"))  # saving the loaded model writes the same bytes
    assert saved[0].with_name("again.json").read_bytes() == saved[0].read_bytes()


def test_round_trip_regression_pruned_numpy(tmp_path):
    X, _ = _data(400, seed=1)
    Xa = X.to_numpy()
    y = Xa[:, 0] * 2 + np.sin(Xa[:, 1]) + 0.1 * np.random.default_rng(1).normal(size=400)
    m = CSTC(depth=3, n_weak=20, random_state=0, lam=0.05).fit(Xa[:250], y[:250], X_valid=Xa[250:], y_valid=y[250:])
    m.save(tmp_path / "r.json")
    loaded = CSTC.load(str(tmp_path / "r.json"))
    assert_same_model(m, loaded, Xa)
    assert loaded.feature_names_in_ is None and not hasattr(loaded, "classes_")
    with pytest.raises(AttributeError):
        loaded.predict_proba(Xa)


@pytest.mark.parametrize("kind", ["booster", "ensemble", "sklearn"])
def test_round_trip_given_booster(tmp_path, kind):
    X, y = _data(300, seed=2)
    yi = y.astype(int)
    reg = lgb.LGBMRegressor(n_estimators=12, max_depth=2, num_leaves=3, verbose=-1).fit(X[:200], yi[:200])
    booster = {"booster": reg.booster_, "ensemble": TreeEnsemble.from_booster(reg.booster_), "sklearn": reg}[kind]
    m = CSTC(booster, costs=[1, 2, 3, 4], depth=2, task="binary").fit(X[:200], yi[:200])
    m.save(tmp_path / "g.json")
    assert_same_model(m, CSTC.load(tmp_path / "g.json"), X)


def test_round_trip_budget_search(tmp_path):
    X, y = _data(400, seed=3)
    m = CSTC(costs=_costs(), depth=2, task="binary", n_weak=10, random_state=0, budget=3.0, lams=[0.01, 0.1, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m.fit(X[:250], y[:250], X_valid=X[250:], y_valid=y[250:])
    assert m.result_.path
    m.save(tmp_path / "b.json")
    loaded = CSTC.load(tmp_path / "b.json")
    assert_same_model(m, loaded, X)
    assert loaded.get_params()["lams"] == [0.01, 0.1, 1.0]


def test_load_with_other_costs(fitted, saved):
    m, X = fitted
    other = FeatureCosts([5.0, 1.0, 1.0, 0.5], feature_names=COLS)
    loaded = CSTC.load(saved[0], costs=other)
    rep = loaded.cost_report(X)
    np.testing.assert_array_equal(loaded.predict(X), m.predict(X))
    np.testing.assert_array_equal(rep.used.toarray(), m.cost_report(X).used.toarray())
    np.testing.assert_allclose(rep.acquisition_cost, other.row_cost(rep.used))
    assert rep.eval_cost.max() == 0.0  # the new costs charge no evaluation


def test_save_refuses_unfitted_and_custom_costs(tmp_path):
    with pytest.raises(NotFittedError):
        CSTC().save(tmp_path / "x.json")

    class RowCost:
        def row_cost(self, used):
            return np.asarray(used, dtype=float).sum(axis=1)

    X, y = _data(200, seed=4)
    m = CSTC(costs=RowCost(), depth=1, n_weak=5).fit(X, y.astype(float))
    target = tmp_path / "x.json"
    target.write_text("before")
    with pytest.raises(TypeError, match=r"costs.*FeatureCosts"):
        m.save(target)
    assert target.read_text() == "before"  # nothing written


# ----------------------------------------------------------------------------- hostile files


def _write(tmp_path, doc) -> str:
    p = tmp_path / "bad.json"
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(p)


def _refused(tmp_path, doc, field: str) -> None:
    path = _write(tmp_path, doc)
    with pytest.raises(ValueError, match=re.escape(field)) as exc:
        CSTC.load(path)
    assert path in str(exc.value)


def test_truncated_empty_and_not_json(tmp_path, saved):
    text = saved[0].read_text()
    for cut in (0, 1, len(text) // 3, len(text) - 2):
        _refused(tmp_path, text[:cut], "not a CSTC model file (invalid JSON")
    _refused(tmp_path, "[1, 2]", "a JSON object is expected")
    _refused(tmp_path, '{"format": ' + "9" * 10_000 + "}", "not a CSTC model file (invalid JSON")
    _refused(tmp_path, "[" * 100_000 + "]" * 100_000, "not a CSTC model file")
    bad = tmp_path / "bin.json"
    bad.write_bytes(b"\xff\xfe" + bytes(range(256)))
    with pytest.raises(ValueError, match="not UTF-8"):
        CSTC.load(bad)
    with pytest.raises(ValueError, match="is a directory"):
        CSTC.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        CSTC.load(tmp_path / "missing.json")


def test_wrong_format_and_version(tmp_path, saved):
    doc = saved[1]
    _refused(tmp_path, {**doc, "format": "budget_extras.CSTC/2"}, "reads format version 1")
    _refused(tmp_path, {**doc, "format": "budget_extras.AdaptGBRT/1"}, "not a CSTC model file: field 'format'")
    _refused(tmp_path, {k: v for k, v in doc.items() if k != "format"}, "field 'format'")
    _refused(tmp_path, {**doc, "format": 1}, "field 'format'")


def _set(doc, dotted: str, value):
    """A deep copy of ``doc`` with ``dotted`` (keys and list indices) set to ``value`` (deleted if ...)."""
    out = json.loads(json.dumps(doc))
    parts = [int(p) if p.isdigit() else p for p in dotted.split(".")]
    target = out
    for p in parts[:-1]:
        target = target[p]
    if value is ...:
        del target[parts[-1]]
    else:
        target[parts[-1]] = value
    return out


NAN, INF = float("nan"), float("inf")

HOSTILE = [
    # (path in the document, new value (... deletes), field the message names)
    ("nodes", ..., "lacks the keys ['nodes']"),
    ("extra", 1, "unknown keys ['extra']"),
    ("n_features", "4", "field 'n_features'"),
    ("n_features", True, "field 'n_features'"),
    ("n_features", 0, "field 'n_features'"),
    ("n_features", 5, "field 'feature_names'"),
    ("feature_names", ["a", "b", "c"], "field 'feature_names'"),
    ("feature_names", ["a", "a", "c", "d"], "field 'feature_names'"),
    ("feature_names.1", 7, "field 'feature_names[1]'"),
    ("pandas_categorical", "x", "field 'pandas_categorical'"),
    ("pandas_categorical", [[NAN]], "field 'pandas_categorical[0][0]'"),
    ("params", [], "field 'params'"),
    ("params.depth", 9, "field 'params.depth'"),
    ("params.depth", "3", "field 'params.depth'"),
    ("params.depth", 3.0, "field 'params.depth'"),
    ("params.depth", ..., "field 'params' lacks the keys ['depth']"),
    ("params.depth", 2, "field 'nodes'"),  # 7 nodes do not fit a depth-2 tree
    ("params.task", "multiclass", "field 'params.task'"),
    ("params.task", "regression", "field 'classes'"),
    ("params.lam", -1.0, "field 'params'"),
    ("params.lam", NAN, "field 'params.lam'"),
    ("params.prune", 1, "field 'params.prune'"),
    ("params.booster", "x", "field 'params' has unknown keys ['booster']"),
    ("classes", ["sick", "well", "x"], "field 'classes'"),
    ("classes", ["sick", "sick"], "field 'classes'"),
    ("classes", None, "field 'classes'"),
    ("classes.0", [1], "field 'classes[0]'"),
    ("classes", [1, True], "field 'classes'"),
    ("nodes.0.intercept", 10**400, "field 'nodes[0].intercept'"),
    ("costs.tree", -(10**400), "field 'costs.tree'"),
    ("classes_dtype", "complex128", "field 'classes_dtype'"),
    ("classes_dtype", "int64", "field 'classes[0]'"),
    ("classes_dtype", "uint8", "field 'classes[0]'"),
    ("costs", None, "field 'costs'"),
    ("costs.lazy", [1.0, 2.0], "field 'costs.lazy'"),
    ("costs.feature_names", ["b", "a", "c", "d"], "field 'costs.feature_names'"),
    ("costs.lazy.0", NAN, "field 'costs.lazy[0]'"),
    ("costs.lazy.0", INF, "field 'costs.lazy[0]'"),
    ("costs.lazy.0", -1.0, "field 'costs'"),
    ("costs.tree", "0", "field 'costs.tree'"),
    ("costs.group.1", 3, "field 'costs.group[1]'"),
    ("costs.group.1", -2, "field 'costs.group[1]'"),
    ("costs.group_labels", ["lab", "lab"], "field 'costs.group_labels'"),
    ("costs.group_labels", ["lab", "other"], "each group used (group 1 is not)"),
    ("costs.group_cost", [1.0, 2.0], "field 'costs.group_cost'"),
    ("costs.group_labels.0", -1, "field 'costs.group_labels[0]'"),
    ("costs.group_cost", [NAN], "field 'costs.group_cost[0]'"),
    ("weak_learners", 3, "field 'weak_learners'"),
    ("weak_learners", "tree\nversion=v4\n", "field 'weak_learners'"),
    ("nodes", {}, "field 'nodes'"),
    ("nodes", [], "field 'nodes'"),
    ("nodes.0", [], "field 'nodes[0]'"),
    ("nodes.0.id", 7, "field 'nodes[0].id'"),
    ("nodes.0.id", -1, "field 'nodes[0].id'"),
    ("nodes.0.id", 1, "field 'nodes[1].id' must be a node id not listed before"),
    ("nodes.0.id", 1.0, "field 'nodes[0].id'"),
    ("nodes.0.id", ..., "field 'nodes[0]' lacks the keys ['id']"),
    ("nodes.0.intercept", NAN, "field 'nodes[0].intercept'"),
    ("nodes.0.intercept", "1", "field 'nodes[0].intercept'"),
    ("nodes.0.threshold", INF, "field 'nodes[0].threshold'"),
    ("nodes.0.threshold", None, "field 'nodes[0].threshold'"),
    ("nodes.0.trees", [999], "field 'nodes[0].trees[0]'"),
    ("nodes.0.trees", [-1], "field 'nodes[0].trees[0]'"),
    ("nodes.0.trees", [0, 0], "field 'nodes[0].trees'"),
    ("nodes.0.weights", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
     "field 'nodes[0].weights'"),
    ("nodes.0.color", "red", "field 'nodes[0]' has unknown keys"),
    ("result", ..., "lacks the keys ['result']"),
    ("result.status", 9, "field 'result.status'"),
    ("result.success", 0, "field 'result.success'"),
    ("result.history", [NAN], "field 'result.history[0]'"),
    ("result.path", [{"lam": 1.0}], "field 'result.path[0]'"),
]


@pytest.mark.parametrize(("where", "value", "field"), HOSTILE, ids=[f"{w}={v!r}"[:40] for w, v, _ in HOSTILE])
def test_hostile_field_is_refused(tmp_path, saved, where, value, field):
    _refused(tmp_path, _set(saved[1], where, value), field)


def test_nan_weight_is_refused(tmp_path, saved):
    doc = saved[1]
    k = next(i for i, node in enumerate(doc["nodes"]) if node["weights"])
    _refused(tmp_path, _set(doc, f"nodes.{k}.weights.0", NAN), f"field 'nodes[{k}].weights[0]'")


def test_tree_shape_is_checked(tmp_path, saved):
    doc = saved[1]
    nodes = {n["id"]: n for n in doc["nodes"]}
    without = lambda *ids: {**doc, "nodes": [n for k, n in nodes.items() if k not in ids]}  # noqa: E731
    _refused(tmp_path, without(0), "lists the root")
    _refused(tmp_path, without(1), "node 3 is listed, its parent 1 is not")
    _refused(tmp_path, without(6), "node 5 is listed, its sibling 6 is not")
    # the heap layout: a subtree removed as a whole is a smaller tree, not an error
    pruned = CSTC.load(_write(tmp_path, without(3, 4)))
    assert pruned.is_leaf_[1] and not pruned.active_[3:5].any()


def test_cycle_in_a_weak_learner_is_refused(tmp_path, saved):
    """The trees of the model text are read by the core's parser: a cycle is refused, not followed."""
    doc = saved[1]
    text = doc["weak_learners"]
    lines = text.split("\n")
    i = next(i for i, ln in enumerate(lines) if ln.startswith("left_child=") and len(ln.split()) >= 2)
    tokens = lines[i][len("left_child="):].split()
    tokens[1] = "0"  # node 1's left child is the root
    lines[i] = "left_child=" + " ".join(tokens)
    _refused(tmp_path, {**doc, "weak_learners": "\n".join(lines)}, "field 'weak_learners'")


def test_weak_learners_of_another_width_are_refused(tmp_path, saved):
    rng = np.random.default_rng(0)
    other = lgb.train({"verbose": -1, "num_leaves": 3}, lgb.Dataset(rng.normal(size=(100, 5)), rng.normal(size=100)),
                      num_boost_round=3)
    _refused(tmp_path, {**saved[1], "weak_learners": other.model_to_string()}, "field 'weak_learners'")


def _leaves(doc, prefix=""):
    """Dotted paths of every scalar in ``doc`` (the LightGBM text excepted)."""
    if isinstance(doc, dict):
        items = doc.items()
    elif isinstance(doc, list):
        items = enumerate(doc)
    else:
        return [prefix[:-1]]
    return [p for k, v in items if k != "weak_learners" for p in _leaves(v, f"{prefix}{k}.")]


HOSTILE_VALUES = [None, "x", -1, 10**30, 1e308, NAN, -INF, True, [], {}, [1, 2], ...]


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # a cost of 1e308 is finite; sums overflow
def test_any_field_replaced_gives_a_model_or_a_value_error(tmp_path, saved, fitted):
    """Every scalar replaced by every hostile value: a loaded model that answers, or ValueError."""
    doc = saved[1]
    X = fitted[1].iloc[:20]
    rng = np.random.default_rng(0)
    paths = _leaves(doc)
    assert len(paths) > 50
    n_loaded = 0
    for where in rng.choice(paths, size=min(len(paths), 80), replace=False):
        for value in HOSTILE_VALUES:
            path = _write(tmp_path, _set(doc, str(where), value))
            try:
                m = CSTC.load(path)
            except ValueError as exc:
                assert path in str(exc), exc
                continue
            n_loaded += 1  # a change the format allows (e.g. a weight or a message): the model still answers
            m.predict(X)
            m.cost_report(X)
    assert n_loaded < 80 * len(HOSTILE_VALUES)


@pytest.mark.fork  # upstream LightGBM aborts on some of these texts; the fork refuses them
def test_weak_learner_text_mutations_give_a_model_or_a_value_error(tmp_path, saved, fitted):
    """Tokens of the embedded LightGBM text replaced: the core's parser or LightGBM refuses, never a crash."""
    doc = saved[1]
    X = fitted[1].iloc[:20]
    lines = doc["weak_learners"].split("\n")
    rng = np.random.default_rng(1)
    candidates = [i for i, ln in enumerate(lines) if "=" in ln and ln.split("=", 1)[1].strip()]
    for _ in range(120):
        i = int(rng.choice(candidates))
        key, val = lines[i].split("=", 1)
        tokens = val.split(" ")
        j = int(rng.integers(len(tokens)))
        tokens[j] = str(rng.choice(["-1", "0", "7", "999999", "nan", "inf", "", "x", "-2147483648", "1e400"]))
        mutated = [*lines[:i], f"{key}={' '.join(tokens)}", *lines[i + 1:]]
        path = _write(tmp_path, {**doc, "weak_learners": "\n".join(mutated)})
        try:
            m = CSTC.load(path)
        except ValueError as exc:
            assert path in str(exc) and "weak_learners" in str(exc), exc
            continue
        m.predict(X)
        m.cost_report(X)


@pytest.mark.parametrize(("classes", "dtype"), [([1e300, 0.5], "float32"), ([300, 1], "uint8"), ([-1, 1], "uint8"),
                                                ([2**64, 1], "int64"), ([1, 1.0], "float64")])
def test_classes_that_do_not_fit_their_dtype_are_refused(tmp_path, saved, classes, dtype):
    _refused(tmp_path, {**saved[1], "classes": classes, "classes_dtype": dtype}, "field 'classes'")


@pytest.mark.parametrize(("classes", "dtype"), [([0, 1], "int8"), ([0.5, 1.5], "float32"), ([False, True], "bool"),
                                                (["no", 1], "object")])
def test_classes_of_every_dtype_load(tmp_path, saved, classes, dtype):
    m = CSTC.load(_write(tmp_path, {**saved[1], "classes": classes, "classes_dtype": dtype}))
    assert m.classes_.dtype == np.dtype(dtype) and m.classes_.tolist() == classes
