"""TreeEnsemble: parsing and exact prediction, with LightGBM as the oracle."""

from __future__ import annotations

from pathlib import Path

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from budget_extras import ModelParseError, TreeEnsemble
from budget_extras.core._predict import reference_leaf

from .conftest import CAT_FEATURE, MODEL_KINDS, N_FEAT, STRUCTURE_ARRAYS, get_booster, hard_rows


def assert_raw_equal(ours: np.ndarray, theirs: np.ndarray) -> None:
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_predict_raw_and_leaves_match_lightgbm(kind, rng):
    booster = get_booster(kind)
    ens = TreeEnsemble.from_booster(booster)
    X = hard_rows(rng, 400)
    assert_raw_equal(ens.predict_raw(X), booster.predict(X, raw_score=True))
    np.testing.assert_array_equal(ens.apply_leaf_index(X), booster.predict(X, pred_leaf=True))


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_dump_and_text_give_same_arrays(kind):
    booster = get_booster(kind)
    a = TreeEnsemble.from_booster(booster)
    b = TreeEnsemble.from_dump(booster.dump_model())
    for name in STRUCTURE_ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(a.value[a.is_leaf], b.value[b.is_leaf])
    np.testing.assert_allclose(a.value, b.value, rtol=1e-14)  # internal values: 6 digits, JSON may round
    np.testing.assert_allclose(a.weight, b.weight, rtol=1e-14)
    np.testing.assert_allclose(a.split_gain, b.split_gain, rtol=1e-5)
    for name in (
        "feature_names",
        "num_class",
        "num_tree_per_iteration",
        "average_output",
        "objective",
        "n_features",
    ):
        assert getattr(a, name) == getattr(b, name), name


def test_from_model_file(tmp_path, rng):
    booster = get_booster("binary")
    path = tmp_path / "model.txt"
    booster.save_model(str(path))
    ens = TreeEnsemble.from_model_file(path)
    X = hard_rows(rng, 50)
    assert_raw_equal(ens.predict_raw(X), booster.predict(X, raw_score=True))


@pytest.mark.parametrize("kind", ["regression", "categorical", "deep_leafwise", "zero_missing", "no_missing"])
def test_apply_matches_slow_reference(kind, rng):
    ens = TreeEnsemble.from_booster(get_booster(kind))
    X = hard_rows(rng, 60)
    leaves = ens.apply(X)
    expected = np.array(
        [[reference_leaf(ens, X[i], t) for t in range(ens.n_trees)] for i in range(X.shape[0])]
    )
    np.testing.assert_array_equal(leaves, expected)


def test_covers_the_intended_cases():
    # The fixtures really contain what the tests claim to cover.
    cases = {kind: TreeEnsemble.from_booster(get_booster(kind)) for kind in MODEL_KINDS}
    internal = {k: ~e.is_leaf for k, e in cases.items()}
    assert (cases["regression"].missing_type[internal["regression"]] == 2).any()
    assert (cases["zero_missing"].missing_type[internal["zero_missing"]] == 1).any()
    assert (cases["no_missing"].missing_type[internal["no_missing"]] == 0).all()
    dl = cases["regression"].default_left[internal["regression"] & (cases["regression"].missing_type == 2)]
    assert dl.any() and (~dl).any()
    cat = cases["categorical"]
    sizes = np.diff(cat.cat_offsets)[cat.is_categorical]
    assert sizes.size and sizes.max() >= 2  # "a||b" multi-category sets
    assert (cases["single_leaf"].n_leaves == 1).all()
    assert cases["rf"].average_output and not cases["regression"].average_output
    assert cases["multiclass"].num_tree_per_iteration == 3
    assert cases["deep_leafwise"].depth.max() >= 8


def test_rf_average_option(rng):
    booster = get_booster("rf")
    ens = TreeEnsemble.from_booster(booster)
    X = hard_rows(rng, 30)
    assert_raw_equal(ens.predict_raw(X, average=True), booster.predict(X))


@pytest.mark.parametrize("kind", ["regression", "multiclass", "rf"])
def test_staged_predict_matches_num_iteration(kind, rng):
    booster = get_booster(kind)
    ens = TreeEnsemble.from_booster(booster)
    X = hard_rows(rng, 40)
    stages = list(ens.staged_predict_raw(X))
    assert len(stages) == booster.current_iteration()
    for it in (1, len(stages) // 2, len(stages)):
        assert_raw_equal(stages[it - 1], booster.predict(X, raw_score=True, num_iteration=it))


def test_tree_outputs_and_decision_path(rng):
    ens = TreeEnsemble.from_booster(get_booster("categorical"))
    X = hard_rows(rng, 50)
    leaves = ens.apply(X)
    np.testing.assert_array_equal(ens.tree_outputs(X), ens.value[leaves])
    path = ens.decision_path(X)
    assert sp.issparse(path) and path.shape == (50, ens.n_nodes)
    # each row visits depth+1 nodes per tree, the reached leaf among them
    np.testing.assert_array_equal(np.asarray(path.sum(axis=1)).ravel(), (ens.depth[leaves] + 1).sum(axis=1))
    dense = path.toarray()
    assert dense[np.arange(50)[:, None], leaves].all()
    assert (dense[:, ens.is_leaf].sum(axis=1) == ens.n_trees).all()


def test_pandas_categorical_matches_lightgbm(rng):
    booster = lgb_pandas_booster()
    ens = TreeEnsemble.from_booster(booster)
    assert ens.pandas_categorical is not None
    n = 200
    X = hard_rows(rng, n)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(N_FEAT)])
    labels = np.array([f"c{i}" for i in range(12)] + ["unseen", "other"], dtype=object)
    picks = labels[rng.integers(0, labels.size, n)]
    picks[rng.random(n) < 0.1] = None
    df["f2"] = pd.Categorical(picks, categories=list(labels[::-1]))  # other order than training
    assert_raw_equal(ens.predict_raw(df), booster.predict(df, raw_score=True))
    np.testing.assert_array_equal(ens.apply_leaf_index(df), booster.predict(df, pred_leaf=True))


def lgb_pandas_booster() -> lgb.Booster:
    from .conftest import _make

    return _make("pandas_categorical")


_special = st.sampled_from(
    [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 1e-35, -1e-35, 1e300, -0.5, 0.5, 2.7, 3.0, 1e10]
)
_value = st.one_of(
    _special, st.floats(allow_nan=True, allow_infinity=True, width=64), st.integers(-5, 40).map(float)
)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.lists(_value, min_size=N_FEAT, max_size=N_FEAT), min_size=1, max_size=8))
def test_property_matches_lightgbm_on_any_values(rows):
    X = np.array(rows, dtype=np.float64)
    for kind in ("categorical", "zero_missing", "multiclass"):
        booster = get_booster(kind)
        ens = TreeEnsemble.from_booster(booster)
        assert_raw_equal(ens.predict_raw(X), booster.predict(X, raw_score=True))
        np.testing.assert_array_equal(ens.apply_leaf_index(X), booster.predict(X, pred_leaf=True))


def test_every_row_reaches_exactly_one_leaf_per_tree(rng):
    ens = TreeEnsemble.from_booster(get_booster("deep_leafwise"))
    leaves = ens.apply(hard_rows(rng, 100))
    assert ens.is_leaf[leaves].all()
    np.testing.assert_array_equal(
        ens.node_tree[leaves], np.broadcast_to(np.arange(ens.n_trees), leaves.shape)
    )


def test_arrays_are_read_only_and_object_immutable():
    ens = TreeEnsemble.from_booster(get_booster("regression"))
    with pytest.raises(ValueError, match="read-only"):
        ens.value[0] = 1.0
    with pytest.raises(AttributeError, match="immutable"):
        ens.value = np.zeros(3)


def test_linear_tree_is_refused(rng):
    X = rng.normal(size=(200, 3))
    y = X[:, 0] * 2 + X[:, 1]
    booster = lgb.train(
        {"verbose": -1, "linear_tree": True, "num_leaves": 4}, lgb.Dataset(X, y), num_boost_round=2
    )
    with pytest.raises(ModelParseError, match="linear tree"):
        TreeEnsemble.from_booster(booster)
    with pytest.raises(ModelParseError, match="linear tree"):
        TreeEnsemble.from_dump(booster.dump_model())


def _no_tree_sizes(text: str) -> str:
    """Drop the ``tree_sizes`` line: LightGBM then reads the trees one after another, whatever their sizes."""
    return "\n".join(line for line in text.split("\n") if not line.startswith("tree_sizes="))


def _text() -> str:
    return get_booster("regression").model_to_string()


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda s: s.replace("tree\n", "nottree\n", 1), "first line must be 'tree'"),
        (lambda s: s.replace("num_leaves=", "num_leafs=", 1), "line 13: unknown key 'num_leafs'"),
        (lambda s: s.replace("end of trees", "end of forest"), "end of trees"),
        (lambda s: s.replace("max_feature_idx=", "max_feat=", 1), "max_feature_idx"),
        (lambda s: _no_tree_sizes(s).replace("left_child=1 ", "left_child=1 1 ", 1), "'left_child' must have"),
    ],
)
def test_ill_formed_text_errors(mutate, match):
    with pytest.raises(ModelParseError, match=match):
        TreeEnsemble.from_model_string(mutate(_text()))


def test_missing_objective_and_wrong_types():
    text = "\n".join(line for line in _text().splitlines() if not line.startswith("objective="))
    assert TreeEnsemble.from_model_string(text).objective == ""
    with pytest.raises(TypeError, match="must be a str"):
        TreeEnsemble.from_model_string(b"tree")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"lightgbm\.Booster"):
        TreeEnsemble.from_booster("model.txt")
    with pytest.raises(ValueError, match="readable LightGBM model file"):
        TreeEnsemble.from_model_file("/nonexistent/model.txt")


def test_bad_X_errors():
    ens = TreeEnsemble.from_booster(get_booster("regression"))
    with pytest.raises(ValueError, match="must have 5 columns"):
        ens.predict_raw(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="must be 2-D"):
        ens.predict_raw(np.zeros(5))
    with pytest.raises(TypeError, match="2-D array of numbers"):
        ens.predict_raw([["a"] * 5])


def test_categorical_threshold_strings_in_dump(rng):
    # "1||3||5"-style thresholds and a single-category set, written by hand.
    dump = {
        "name": "tree",
        "version": "v4",
        "num_class": 1,
        "num_tree_per_iteration": 1,
        "label_index": 0,
        "max_feature_idx": 1,
        "objective": "regression",
        "feature_names": ["a", "b"],
        "tree_info": [
            {
                "tree_index": 0,
                "num_leaves": 3,
                "num_cat": 2,
                "shrinkage": 1,
                "tree_structure": {
                    "split_index": 0,
                    "split_feature": 0,
                    "threshold": "1||3||5",
                    "decision_type": "==",
                    "default_left": False,
                    "missing_type": "NaN",
                    "internal_value": 0.0,
                    "internal_count": 10,
                    "left_child": {"leaf_index": 0, "leaf_value": 1.0},
                    "right_child": {
                        "split_index": 1,
                        "split_feature": 1,
                        "threshold": 40,
                        "decision_type": "==",
                        "default_left": False,
                        "missing_type": "None",
                        "internal_value": 0.5,
                        "left_child": {"leaf_index": 1, "leaf_value": 2.0},
                        "right_child": {"leaf_index": 2, "leaf_value": 3.0},
                    },
                },
            },
            {
                "tree_index": 1,
                "num_leaves": 1,
                "num_cat": 0,
                "shrinkage": 1,
                "tree_structure": {"leaf_value": 0.25},
            },
        ],
    }
    ens = TreeEnsemble.from_dump(dump)
    X = np.array([[1, 0], [3.9, 40], [-1, 40.5], [np.nan, 40], [5, np.nan], [2, 39], [-0.5, 41], [1e10, 40]])
    np.testing.assert_array_equal(ens.predict_raw(X), [1.25, 1.25, 2.25, 2.25, 1.25, 3.25, 3.25, 2.25])
    np.testing.assert_array_equal(ens.cat_values, [1, 3, 5, 40])
    assert ens.is_categorical[ens.feature == 1].all()


def test_single_leaf_only_model(rng):
    booster = get_booster("single_leaf")
    ens = TreeEnsemble.from_booster(booster)
    assert ens.n_nodes == ens.n_trees
    X = hard_rows(rng, 5)
    assert_raw_equal(ens.predict_raw(X), booster.predict(X, raw_score=True))
    assert (ens.apply_leaf_index(X) == 0).all()


def test_cat_feature_is_categorical_in_fixture():
    ens = TreeEnsemble.from_booster(get_booster("categorical"))
    assert ens.is_categorical.any()
    assert (ens.feature[ens.is_categorical] == CAT_FEATURE).all()


def test_pickle_and_deepcopy_round_trip(rng):
    import copy
    import pickle

    ens = TreeEnsemble.from_booster(get_booster("categorical"))
    X = hard_rows(rng, 20)
    for other in (pickle.loads(pickle.dumps(ens)), copy.deepcopy(ens)):
        np.testing.assert_array_equal(other.predict_raw(X), ens.predict_raw(X))
        assert not other.value.flags.writeable


FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("name", ["stump", "categorical", "multiclass", "rf"])
def test_checked_in_model_fixtures(name, rng):
    # Tiny model files written by LightGBM 4.7.0 (parameters block removed), loaded by the
    # LightGBM under test (upstream or fork) as the oracle.
    path = FIXTURES / f"{name}.txt"
    ens = TreeEnsemble.from_model_file(path)
    booster = lgb.Booster(model_file=str(path))
    X = hard_rows(rng, 100)
    assert_raw_equal(ens.predict_raw(X), booster.predict(X, raw_score=True))
    np.testing.assert_array_equal(ens.apply_leaf_index(X), booster.predict(X, pred_leaf=True))
    assert ens.to_model_string() == TreeEnsemble.from_model_string(ens.to_model_string()).to_model_string()


def test_thresholds_clamped_to_1e300(rng):
    text = (FIXTURES / "stump.txt").read_text()
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("threshold="))
    lines[i] = "threshold=1.0000000000000001e+300"
    lines = [line for line in lines if not line.startswith("tree_sizes=")]  # sizes changed
    ens = TreeEnsemble.from_model_string("\n".join(lines) + "\n")
    booster = lgb.Booster(model_str="\n".join(lines) + "\n")
    X = np.array([[1e300, 0, 0, 0, 0], [np.inf, 0, 0, 0, 0], [2e300, 0, 0, 0, 0], [-np.inf, 0, 0, 0, 0]])
    assert_raw_equal(ens.predict_raw(X), booster.predict(X, raw_score=True))


def test_replace_returns_a_validated_new_ensemble(rng):
    ens = TreeEnsemble.from_booster(get_booster("categorical"))
    X = hard_rows(rng, 50)
    doubled = ens.replace(value=2 * ens.value, parameters={})
    assert type(doubled) is TreeEnsemble and doubled is not ens
    np.testing.assert_allclose(doubled.predict_raw(X), 2 * ens.predict_raw(X), rtol=1e-12)
    assert dict(doubled.parameters) == {} and dict(ens.parameters)
    np.testing.assert_array_equal(doubled.left_child, ens.left_child)
    assert ens.replace().to_model_string() == ens.to_model_string()
    with pytest.raises(TypeError, match=r"Got \['depth'\]"):
        ens.replace(depth=ens.depth)
    bad = ens.left_child.copy()
    bad[0] = 5
    with pytest.raises(ValueError, match="pre-order"):
        ens.replace(left_child=bad)


def test_routing_tables_are_cached_outside_the_ensemble(rng):
    import pickle

    from budget_extras.core._routing import routing_tables

    ens = TreeEnsemble.from_booster(get_booster("categorical"))
    before = dict(vars(ens))
    tables = routing_tables(ens)
    assert routing_tables(ens) is tables
    assert vars(ens).keys() == before.keys()  # nothing stored on the ensemble
    assert not tables.threshold.flags.writeable
    again = pickle.loads(pickle.dumps(ens))
    assert type(again) is TreeEnsemble and routing_tables(again) is not tables
