"""Patch 0033: LGBM_BoosterGetTreeArrays gives the numbers of the model text's tree lines, without the text.

Every tree's ``num_leaves``, ``split_feature``, ``left_child``, ``right_child`` and ``leaf_value``
(the doubles, bit for bit, that the text's 17-digit decimals read back as), the header's
``objective=`` value, and the linear-tree and ``average_output`` flags. Null pointers and short
buffers are LightGBM errors, not crashes.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from budget_extras._compat import tree_arrays

N = 600


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 5))
    X[rng.random(N) < 0.15, 1] = np.nan  # missing values: splits with a default direction
    X[:, 4] = rng.integers(0, 6, size=N)  # a categorical column
    z = X[:, 0] + 0.8 * np.nan_to_num(X[:, 1], nan=1.0) + 0.6 * np.isin(X[:, 4], [1, 3]) + 0.3 * X[:, 2] * X[:, 3]
    return X, z + 0.3 * rng.normal(size=N)


def _train(lgb, extra: dict, rounds: int = 12, **kwargs):
    X, z = _data()
    objective = extra.get("objective", "regression")
    y = {"binary": (z > 0).astype(int), "multiclass": np.digitize(z, [-0.7, 0.7])}.get(objective, z)
    params = {"verbose": -1, "num_leaves": 7, "min_data_in_leaf": 10, "seed": 1, "num_threads": 1, **extra}
    return lgb.train(params, lgb.Dataset(X, y, categorical_feature=[4]), rounds, **kwargs)


MODELS = {
    "regression": {"objective": "regression"},
    "binary": {"objective": "binary"},
    "multiclass": {"objective": "multiclass", "num_class": 3},
    "dart": {"objective": "binary", "boosting": "dart", "drop_rate": 0.5, "skip_drop": 0.0},
    "constant": {"objective": "regression", "min_gain_to_split": 1e300},
    "sqrt regression": {"objective": "regression", "reg_sqrt": True},
    "random forest": {"objective": "regression", "boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1},
}


def _lines(text: str, key: str) -> list[str]:
    """Every ``key=`` line's values of the text's trees, one list per tree."""
    body = text.split("\nend of trees", 1)[0]
    return [line[len(key) + 1 :] for line in body.split("\n") if line.startswith(key + "=")]


def _from_text(text: str) -> dict:
    """The arrays as the model text writes them (the oracle)."""
    def ints(key: str) -> np.ndarray:
        return np.array(" ".join(_lines(text, key)).split(), dtype=np.int64)

    head = text.split("\nTree=", 1)[0].split("\n")
    objective = next((h[len("objective="):] for h in head if h.startswith("objective=")), "")
    return {"num_leaves": ints("num_leaves"), "split_feature": ints("split_feature"), "left_child": ints("left_child"),
            "right_child": ints("right_child"),
            "leaf_value": np.array(" ".join(_lines(text, "leaf_value")).split(), dtype=np.float64),
            "objective": objective.strip(), "average_output": "average_output" in head,
            "max_feature_idx": int(next(h for h in head if h.startswith("max_feature_idx="))[16:]),
            "per_iteration": int(next(h for h in head if h.startswith("num_tree_per_iteration="))[23:])}


def _assert_same(booster) -> None:
    text = booster.model_to_string()
    got, want = tree_arrays(booster), _from_text(text)
    assert got is not None
    for key in ("num_leaves", "split_feature", "left_child", "right_child"):
        np.testing.assert_array_equal(getattr(got, key), want[key], err_msg=key)
    # the same doubles, to the bit (a -0.0 included)
    assert got.leaf_value.tobytes() == want["leaf_value"].tobytes()
    assert (got.objective, got.average_output, got.max_feature_idx, got.per_iteration, got.linear) == (
        want["objective"], want["average_output"], want["max_feature_idx"], want["per_iteration"], False)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_arrays_are_the_model_texts_numbers(lgb, name):
    """Regression, binary, multiclass, DART, a constant model, sqrt and a random forest: the text's numbers."""
    booster = _train(lgb, MODELS[name])
    _assert_same(booster)
    arrays = tree_arrays(booster)
    assert arrays is not None
    if name == "constant":
        assert (arrays.num_leaves == 1).all() and arrays.split_feature.size == 0
    if name == "binary":
        assert arrays.objective == "binary sigmoid:1"


def test_the_arrays_hold_categorical_and_missing_value_splits(lgb):
    """The oracle models split on the categorical column and on the column with missing values."""
    arrays = tree_arrays(_train(lgb, MODELS["regression"]))
    assert arrays is not None and {1, 4} <= set(arrays.split_feature.tolist())


def test_a_loaded_model_gives_the_arrays_of_its_file(lgb, tmp_path):
    """A booster read from a model file: the file's numbers and its objective line."""
    path = tmp_path / "model.txt"
    _train(lgb, MODELS["multiclass"]).save_model(str(path))
    loaded = lgb.Booster(model_file=str(path))
    _assert_same(loaded)
    assert tree_arrays(loaded).objective == "multiclass num_class:3"


def test_the_best_iteration_bounds_the_trees_as_the_text_does(lgb):
    """With early stopping, the default model text holds the best iteration's trees: so do the arrays."""
    X, z = _data(1)
    valid = lgb.Dataset(X, z, categorical_feature=[4])
    booster = _train(lgb, {"objective": "regression", "learning_rate": 0.9}, rounds=60, valid_sets=[valid],
                     callbacks=[lgb.early_stopping(2, verbose=False)], keep_training_booster=True)
    assert 0 < booster.best_iteration < booster.current_iteration()
    _assert_same(booster)
    assert tree_arrays(booster).num_leaves.size == booster.best_iteration


def test_linear_trees_are_flagged(lgb):
    """A linear tree's outputs are not its leaf values alone: the flag says so."""
    X, z = _data()
    booster = lgb.train({"verbose": -1, "linear_tree": True, "num_leaves": 4}, lgb.Dataset(np.nan_to_num(X), z), 3)
    arrays = tree_arrays(booster)
    assert arrays is not None and arrays.linear


def _call(lgb, handle, lengths=(0, 0, 0, 0), buffers=(None,) * 6, sizes=True):
    lib = lgb.basic._LIB
    out = [ctypes.c_int64(0) for _ in range(4)] + [ctypes.c_int(0)]
    refs = [ctypes.byref(o) for o in out] if sizes else [None] * 5
    rc = lib.LGBM_BoosterGetTreeArrays(handle, *map(ctypes.c_int64, lengths), *refs, *buffers)
    return rc, [o.value for o in out], lib.LGBM_GetLastError().decode()


def _buffers(n_trees: int, n_nodes: int, n_leaves: int, n_name: int):
    arrays = [np.full(n_trees, -7, dtype=np.int32)] + [np.full(n_nodes, -7, dtype=np.int32) for _ in range(3)]
    values = np.full(n_leaves, -7.0)
    name = ctypes.create_string_buffer(n_name)
    ptrs = [a.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)) for a in arrays]
    return arrays, values, name, [*ptrs, values.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), name]


def test_a_null_handle_is_an_error(lgb):
    rc, _, message = _call(lgb, None)
    assert rc == -1 and "handle must not be null" in message


def test_null_size_outputs_are_an_error(lgb):
    booster = _train(lgb, MODELS["binary"], rounds=2)
    rc, _, message = _call(lgb, booster._handle, sizes=False)
    assert rc == -1 and "must not be null" in message


def test_short_or_missing_buffers_are_errors_and_nothing_is_written(lgb):
    booster = _train(lgb, MODELS["multiclass"], rounds=2)
    rc, (n_trees, n_nodes, n_leaves, n_name, flags), _ = _call(lgb, booster._handle)
    assert rc == 0 and n_trees == 6 and n_leaves == n_nodes + n_trees and flags == 0
    full = (n_trees, n_nodes, n_leaves, n_name)
    for short in range(4):
        lengths = tuple(n - 1 if i == short else n for i, n in enumerate(full))
        arrays, values, name, ptrs = _buffers(*full)
        rc, _, message = _call(lgb, booster._handle, lengths, ptrs)
        assert rc == -1 and "buffers too short" in message
        assert all((a == -7).all() for a in arrays) and (values == -7.0).all() and name.value == b""
    arrays, values, name, ptrs = _buffers(*full)
    rc, _, message = _call(lgb, booster._handle, full, [*ptrs[:2], None, *ptrs[3:]])
    assert rc == -1 and "all six buffers" in message
    assert (arrays[0] == -7).all()
    rc, _, _ = _call(lgb, booster._handle, full, ptrs)
    assert rc == 0 and arrays[0].tolist() == tree_arrays(booster).num_leaves.tolist()
    assert name.value == b"multiclass num_class:3"
