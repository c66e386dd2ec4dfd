"""Export back to LightGBM: round trips, and LightGBM predicts what our predictor predicts."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras import TreeEnsemble

from .conftest import MODEL_KINDS, STRUCTURE_ARRAYS, get_booster, hard_rows

ARRAYS = (*STRUCTURE_ARRAYS, "value", "weight", "split_gain")


def assert_same_ensemble(a: TreeEnsemble, b: TreeEnsemble) -> None:
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in (
        "feature_names",
        "feature_infos",
        "num_class",
        "num_tree_per_iteration",
        "objective",
        "average_output",
        "pandas_categorical",
    ):
        assert getattr(a, name) == getattr(b, name), name


def assert_lightgbm_agrees(ens: TreeEnsemble, X: np.ndarray) -> None:
    booster = lgb.Booster(model_str=ens.to_model_string())
    np.testing.assert_allclose(
        ens.predict_raw(X), booster.predict(X, raw_score=True), rtol=1e-12, atol=1e-300
    )
    np.testing.assert_array_equal(ens.apply_leaf_index(X), booster.predict(X, pred_leaf=True))


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_round_trip_gives_equal_arrays(kind):
    ens = TreeEnsemble.from_booster(get_booster(kind))
    again = TreeEnsemble.from_model_string(ens.to_model_string())
    assert_same_ensemble(ens, again)
    assert again.to_model_string() == ens.to_model_string()


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_lightgbm_loads_export(kind, rng):
    ens = TreeEnsemble.from_booster(get_booster(kind))
    assert_lightgbm_agrees(ens, hard_rows(rng, 200))


@pytest.mark.parametrize("kind", ["regression", "categorical", "multiclass", "rf", "deep_leafwise"])
@pytest.mark.parametrize("share", [0.2, 1.0])
def test_collapsed_export(kind, share, rng):
    ens = TreeEnsemble.from_booster(get_booster(kind))
    internal = np.flatnonzero(~ens.is_leaf)
    pick = rng.choice(internal, size=max(1, int(share * internal.size)), replace=False)
    col = ens.collapse(pick)
    assert_lightgbm_agrees(col, hard_rows(rng, 200))
    assert_same_ensemble(col, TreeEnsemble.from_model_string(col.to_model_string()))


def test_collapse_semantics(rng):
    ens = TreeEnsemble.from_booster(get_booster("deep_leafwise"))
    X = hard_rows(rng, 300)
    leaves = ens.apply(X)
    node = int(np.flatnonzero(~ens.is_leaf & (ens.depth == 2))[0])
    t = int(ens.node_tree[node])
    col = ens.collapse([node])
    # rows whose path went through `node` now output its internal value in tree t
    through = (leaves[:, t] >= node) & (leaves[:, t] < ens.subtree_end[node])
    out_old, out_new = ens.tree_outputs(X), col.tree_outputs(X)
    np.testing.assert_array_equal(out_new[through, t], ens.value[node])
    np.testing.assert_array_equal(out_new[~through, t], out_old[~through, t])
    others = np.arange(ens.n_trees) != t
    np.testing.assert_array_equal(out_new[:, others], out_old[:, others])
    assert col.n_nodes == ens.n_nodes - (ens.subtree_end[node] - node - 1)
    # leaves and nested nodes are ignored; the input ensemble is untouched
    assert ens.collapse(np.flatnonzero(ens.is_leaf)) is ens
    nested = [node, node + 1]
    assert col.n_nodes == ens.collapse(nested).n_nodes


def test_collapse_roots_gives_single_leaf_trees(rng):
    ens = TreeEnsemble.from_booster(get_booster("binary"))
    col = ens.collapse(ens.tree_offset[:-1])
    assert (col.n_leaves == 1).all()
    assert_lightgbm_agrees(col, hard_rows(rng, 20))


@pytest.mark.parametrize("kind", ["regression", "categorical", "rf"])
def test_select_trees_drop_and_reorder(kind, rng):
    ens = TreeEnsemble.from_booster(get_booster(kind))
    order = rng.permutation(ens.n_trees)[: ens.n_trees - 3]
    sub = ens.select_trees(order)
    X = hard_rows(rng, 150)
    np.testing.assert_array_equal(sub.tree_outputs(X), ens.tree_outputs(X)[:, order])
    assert_lightgbm_agrees(sub, X)
    assert_lightgbm_agrees(sub.collapse(np.flatnonzero(~sub.is_leaf)[::4]), X)


def test_select_whole_iterations_multiclass(rng):
    ens = TreeEnsemble.from_booster(get_booster("multiclass"))
    k = ens.num_tree_per_iteration
    iters = np.array([3, 0, 5])
    sub = ens.select_trees((iters[:, None] * k + np.arange(k)).ravel())
    assert_lightgbm_agrees(sub, hard_rows(rng, 50))


@pytest.mark.parametrize("pick", [[1, 0, 2], [0, 3, 6, 9], [2, 5, 4, 8, 1]])
def test_multiclass_partial_iterations_are_padded(pick, rng):
    ens = TreeEnsemble.from_booster(get_booster("multiclass"))
    sub = ens.select_trees(pick)
    X = hard_rows(rng, 60)
    booster = lgb.Booster(model_str=sub.to_model_string())
    np.testing.assert_array_equal(sub.predict_raw(X), booster.predict(X, raw_score=True))
    back = TreeEnsemble.from_model_string(sub.to_model_string())
    np.testing.assert_array_equal(back.predict_raw(X), sub.predict_raw(X))


def test_rf_multiclass_out_of_pattern_is_refused():
    ens = TreeEnsemble.from_booster(get_booster("multiclass"))
    rf = ens.select_trees([1, 0, 2]).replace(average_output=True)
    with pytest.raises(ValueError, match="would change the average"):
        rf.to_model_string()


def test_save_model_and_errors(tmp_path, rng):
    ens = TreeEnsemble.from_booster(get_booster("categorical"))
    path = tmp_path / "out.txt"
    ens.save_model(path)
    booster = lgb.Booster(model_file=str(path))
    X = hard_rows(rng, 20)
    np.testing.assert_allclose(booster.predict(X, raw_score=True), ens.predict_raw(X), rtol=1e-12)
    with pytest.raises(ValueError, match=r"'nodes' parameter must contain integers in \[0, "):
        ens.collapse([ens.n_nodes])
    with pytest.raises(ValueError, match="'indices' mask must have shape"):
        ens.select_trees(np.ones(3, dtype=bool))


def test_pandas_categorical_survives_export(rng):
    import pandas as pd

    from .conftest import N_FEAT, _make

    ens = TreeEnsemble.from_booster(_make("pandas_categorical"))
    booster = lgb.Booster(model_str=ens.to_model_string())
    X = hard_rows(rng, 50)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(N_FEAT)])
    df["f2"] = pd.Categorical(rng.choice(["c1", "c4", "c7", "zz"], size=50))
    np.testing.assert_allclose(ens.predict_raw(df), booster.predict(df, raw_score=True), rtol=1e-12)


def test_training_parameters_are_read_kept_and_written_back(rng):
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    params = dict(objective="binary", lambda_l2=2.5, cat_l2=7.0, path_smooth=0.0, verbose=-1, num_threads=1)
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=3)
    ens = TreeEnsemble.from_booster(booster)
    # LightGBM's own text values of its parameters section
    assert ens.parameters["lambda_l2"] == "2.5" and ens.parameters["cat_l2"] == "7"
    assert ens.parameters["objective"] == "binary"
    with pytest.raises(TypeError):
        ens.parameters["lambda_l2"] = "0"  # type: ignore[index]
    assert TreeEnsemble.from_dump(booster.dump_model()).parameters == {}  # the JSON dump has none
    pruned = ens.collapse([0]).select_trees([0, 1])
    assert dict(pruned.parameters) == dict(ens.parameters)
    text = pruned.to_model_string()
    assert dict(TreeEnsemble.from_model_string(text).parameters) == dict(ens.parameters)
    # LightGBM reads the written section back exactly as it reads its own
    expected = lgb.Booster(model_str=booster.model_to_string()).params
    assert lgb.Booster(model_str=text).params == expected
