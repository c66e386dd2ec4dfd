"""FeatureCosts and cost_report, against brute-force per-row path walking."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from budget_extras import FeatureCosts, TreeEnsemble, cost_report, features_used
from budget_extras.core._predict import reference_leaf

from .conftest import N_FEAT, get_booster, hard_rows

NAMES = [f"Column_{i}" for i in range(N_FEAT)]


def brute_force(ens, X, costs, order=None, n_trees=None):
    """Walk each row's paths one node at a time; charge every group / feature once."""
    order = list(range(ens.n_trees)) if order is None else list(order)
    n_trees = np.full(len(X), len(order)) if n_trees is None else np.broadcast_to(n_trees, (len(X),))
    counts = np.zeros((len(X), ens.n_features), dtype=np.int64)
    splits = np.zeros(len(X), dtype=np.int64)
    for i, x in enumerate(X):
        for t in order[: n_trees[i]]:
            node = reference_leaf(ens, x, t)
            while ens.parent[node] >= 0:
                node = ens.parent[node]
                counts[i, ens.feature[node]] += 1
                splits[i] += 1
    acq = np.zeros(len(X))
    for i in range(len(X)):
        paid = set()
        for f in np.flatnonzero(counts[i]):
            g = costs.group[f]
            key = ("g", g) if g >= 0 else ("f", f)
            if key not in paid:
                paid.add(key)
                acq[i] += costs.group_cost[g] if g >= 0 else costs.lazy[f]
    ev = counts @ costs.split + costs.tree * n_trees
    return counts, splits, acq, ev


@pytest.fixture
def costs():
    return FeatureCosts(
        [1.0, 2.5, 4.0, 8.0, 16.0],
        groups=[None, "panel", None, "panel", None],
        group_cost={"panel": 9.0},
        split=[0.1, 0.2, 0.3, 0.4, 0.5],
        tree=0.01,
        coupled=[100.0, 0.0, 10.0, 0.0, 1.0],
    )


@pytest.mark.parametrize(
    "kind", ["regression", "categorical", "multiclass", "rf", "single_leaf", "deep_leafwise"]
)
def test_cost_report_matches_brute_force(kind, costs, rng):
    ens = TreeEnsemble.from_booster(get_booster(kind))
    X = hard_rows(rng, 40)
    rep = cost_report(ens, X, costs)
    counts, splits, acq, ev = brute_force(ens, X, costs)
    np.testing.assert_array_equal(rep.feature_counts.toarray(), counts)
    np.testing.assert_array_equal(rep.used.toarray(), counts > 0)
    np.testing.assert_array_equal(rep.splits_evaluated, splits)
    np.testing.assert_allclose(rep.acquisition_cost, acq, rtol=1e-12)
    np.testing.assert_allclose(rep.eval_cost, ev, rtol=1e-12)
    np.testing.assert_allclose(rep.total_cost, acq + ev, rtol=1e-12)
    used_by_model = np.unique(ens.feature[~ens.is_leaf])
    assert rep.coupled_cost == pytest.approx(costs.coupled[used_by_model].sum())


@pytest.mark.parametrize("per_row", [False, True])
def test_tree_order_and_early_exit(per_row, costs, rng):
    ens = TreeEnsemble.from_booster(get_booster("categorical"))
    X = hard_rows(rng, 30)
    order = rng.permutation(ens.n_trees)[: ens.n_trees - 2]
    n_trees = rng.integers(0, order.size + 1, size=30) if per_row else 3
    rep = cost_report(ens, X, costs, tree_order=order, n_trees=n_trees)
    counts, _, acq, ev = brute_force(ens, X, costs, order=order, n_trees=n_trees)
    np.testing.assert_array_equal(rep.feature_counts.toarray(), counts)
    np.testing.assert_array_equal(rep.trees_evaluated, np.broadcast_to(n_trees, (30,)))
    np.testing.assert_allclose(rep.acquisition_cost, acq, rtol=1e-12)
    np.testing.assert_allclose(rep.eval_cost, ev, rtol=1e-12)
    used = features_used(ens, X, tree_order=order, n_trees=n_trees)
    np.testing.assert_array_equal(used.toarray(), counts > 0)


def test_features_used_equals_decision_path_features(rng):
    ens = TreeEnsemble.from_booster(get_booster("regression"))
    X = hard_rows(rng, 50)
    path = ens.decision_path(X).toarray() & ~ens.is_leaf[None, :]
    expected = np.zeros((50, ens.n_features), dtype=bool)
    for i in range(50):
        expected[i, ens.feature[path[i]]] = True
    np.testing.assert_array_equal(features_used(ens, X).toarray(), expected)


def test_row_cost_groups_are_charged_once():
    c = FeatureCosts([1.0, 2.0, 3.0, 4.0], groups=["a", "a", None, "b"], group_cost={"b": 10.0})
    used = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0]], dtype=bool)
    # group a defaults to max(1, 2) = 2
    np.testing.assert_array_equal(c.row_cost(used), [2.0, 2.0, 13.0, 0.0])
    np.testing.assert_array_equal(c.row_cost(sp.csr_matrix(used)), [2.0, 2.0, 13.0, 0.0])
    np.testing.assert_array_equal(c.acquired_features(used)[0], [True, True, False, False])


def test_row_cost_of_dense_usage_reads_columns_without_the_unit_incidence(monkeypatch, rng):
    """Dense usage matrices need no feature-to-unit product (a search costs hundreds of them); costs as sparse's."""
    fc = FeatureCosts([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], groups=["a", "a", None, "b", "b", "c"], group_cost={"a": 2.5})
    built = []
    original = FeatureCosts.unit_matrix

    def counted(self):
        built.append(1)
        return original(self)

    monkeypatch.setattr(FeatureCosts, "unit_matrix", counted)
    used = [rng.random((40, 6)) < 0.4 for _ in range(3)] + [np.zeros((0, 6), dtype=bool)]
    dense = [fc.row_cost(u) for u in used]
    units = [fc.units_used(u) for u in used]
    assert not built
    for u, d, un in zip(used, dense, units, strict=True):
        np.testing.assert_array_equal(un, fc.units_used(sp.csr_matrix(u)).toarray())
        np.testing.assert_array_equal(d, fc.row_cost(sp.csr_matrix(u)))
        np.testing.assert_array_equal(
            d, [2.5 * (r[0] or r[1]) + 3.0 * r[2] + 5.0 * (r[3] or r[4]) + 6.0 * r[5] for r in u])


def test_acquired_includes_group_members(costs, rng):
    ens = TreeEnsemble.from_booster(get_booster("regression"))
    rep = cost_report(ens, hard_rows(rng, 20), costs)
    used, acq = rep.used.toarray(), rep.acquired.toarray()
    panel = costs.group == costs.group_labels.index("panel")
    has_panel = used[:, panel].any(axis=1)
    np.testing.assert_array_equal(acq[:, panel], np.repeat(has_panel[:, None], panel.sum(), axis=1))
    np.testing.assert_array_equal(acq[:, ~panel], used[:, ~panel])


def test_summary_and_feature_usage(costs, rng):
    ens = TreeEnsemble.from_booster(get_booster("deep_leafwise"))
    rep = cost_report(ens, hard_rows(rng, 64), costs)
    s = rep.summary()
    assert s["n_rows"] == 64
    assert s["total_cost"]["mean"] == pytest.approx(rep.total_cost.mean())
    assert s["total_cost"]["p50"] == pytest.approx(np.median(rep.total_cost))
    usage = rep.feature_usage()
    counts = rep.feature_counts.toarray()
    np.testing.assert_allclose(usage["never"], (counts == 0).mean(axis=0))
    np.testing.assert_allclose(usage["1-7"], ((counts >= 1) & (counts <= 7)).mean(axis=0))
    np.testing.assert_allclose(usage[">7"], (counts > 7).mean(axis=0))
    assert list(usage.index) == list(ens.feature_names)


def test_costs_by_name_dict_series_and_alignment(rng):
    ens = TreeEnsemble.from_booster(get_booster("regression"))
    by_index = FeatureCosts([1.0, 2.0, 3.0, 4.0, 5.0])
    shuffled = NAMES[::-1]
    by_name = FeatureCosts(pd.Series({n: float(int(n[-1]) + 1) for n in shuffled}), feature_names=shuffled)
    X = hard_rows(rng, 30)
    a = cost_report(ens, X, by_index).total_cost
    b = cost_report(ens, X, by_name).total_cost
    np.testing.assert_array_equal(a, b)


def test_from_csv(tmp_path):
    path = tmp_path / "costs.csv"
    path.write_text(
        "feature,cost,group,coupled\nColumn_0,1.5,,2\nColumn_1,3,lab,0\nColumn_2,4,lab,0\nColumn_3,0.5,,0\n"
    )
    c = FeatureCosts.from_csv(path, feature_names=NAMES)
    np.testing.assert_array_equal(c.lazy, [1.5, 3, 4, 0.5, 0])
    assert c.group_labels == ("lab",)
    np.testing.assert_array_equal(c.group, [-1, 0, 0, -1, -1])
    np.testing.assert_array_equal(c.group_cost, [4.0])
    np.testing.assert_array_equal(c.coupled, [2, 0, 0, 0, 0])


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"lazy": [1.0, -2.0]}, ValueError, "finite numbers >= 0. Got -2.0"),
        ({"lazy": [1.0, np.nan]}, ValueError, "finite numbers >= 0. Got nan"),
        ({"lazy": [1.0, 2.0], "n_features": 3}, ValueError, "inconsistent numbers of features"),
        ({"lazy": {"x": 1.0}, "feature_names": ["a"]}, ValueError, r"unknown features \['x'\]"),
        ({"lazy": {"a": 1.0}}, ValueError, "'feature_names' is required"),
        ({"lazy": [1.0], "tree": -1}, ValueError, "'tree' parameter must be a finite number >= 0"),
        ({"lazy": [1.0], "split": "x"}, TypeError, "'split' parameter must be a finite number"),
        ({"lazy": [1.0, 2.0], "groups": ["a"]}, ValueError, "'groups' parameter must have length 2"),
        ({"lazy": [1.0], "groups": ["a"], "group_cost": {"b": 1}}, ValueError, "unknown groups"),
        ({}, ValueError, "needs the number of features"),
    ],
)
def test_feature_costs_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        FeatureCosts(**kwargs)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("name,cost\na,1\n", "unknown column 'name'"),
        ("cost\n1\n", "must have a 'feature' column"),
        ("feature,cost\na,1,2\n", "line 2 has 3 cells; the header has 2"),
        ("feature,cost\na,nan\n", "must be numeric: feature 'a' has 'nan'"),
        ("feature,cost\na,-1\n", "must be a finite number >= 0: feature 'a' has '-1'"),
        ("feature,cost,group,group_cost\na,1,g,1\nb,1,g,2\n", "gives group 'g' several group_cost values"),
        ("feature,cost,tree\na,1,1\nb,1,2\n", "column 'tree' must hold one value"),
        ("feature,cost\na,x\n", "must be numeric"),
        ("feature,cost\na,1\na,2\n", "gives feature 'a' twice"),
        ("feature,cost\na,1\n0,2\n", "gives feature 'a' twice"),  # 0 is the index of 'a'
        ("feature,cost\nzzz,1\n", "unknown features"),
        ("feature,cost,cost\na,1,2\n", "repeats the column 'cost'"),
        ("feature,cost,group,group\na,1,,\n", "repeats the column 'group'"),
        ("feature,cost,lazy\na,1,2\n", "both 'cost' and 'lazy'"),
        ("", "is empty"),
        (b"\x00\xff\xfe" * 50, "not UTF-8 text"),
        ("feature,cost\n,1\n", "empty 'feature'"),
        (None, "is a directory"),
    ],
)
def test_from_csv_errors(tmp_path, text, match):
    path = tmp_path / "c.csv"
    if text is None:
        path.mkdir()
    elif isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    with pytest.raises(ValueError, match=match):
        FeatureCosts.from_csv(path, feature_names=["a", "b"])


def test_from_csv_documented_forms(tmp_path):
    """docs/cegb.md's cost file: empty cells are 0 / no group, 'lazy' = 'cost', BOM, indices."""
    path = tmp_path / "c.csv"
    path.write_bytes(
        "\ufefffeature,lazy,coupled,group,split\nTSH,22.78,0,,0\nTT4,25.92,,1,\n2,25.92,0,1,0.5\n".encode()
    )
    c = FeatureCosts.from_csv(path, feature_names=["TSH", "TT4", "T4U", "FTI"])
    np.testing.assert_array_equal(c.lazy, [22.78, 25.92, 25.92, 0])
    np.testing.assert_array_equal(c.coupled, [0, 0, 0, 0])
    np.testing.assert_array_equal(c.split, [0, 0, 0.5, 0])
    np.testing.assert_array_equal(c.group, [-1, 0, 0, -1])
    same = tmp_path / "same.csv"
    same.write_text("feature,cost,group\nTSH,22.78,\nTT4,25.92,1\nT4U,25.92,1\n")
    d = FeatureCosts.from_csv(same, feature_names=c.feature_names)
    np.testing.assert_array_equal(d.unit_cost, c.unit_cost)


@pytest.mark.parametrize("param", ["lazy", "coupled", "split", "groups"])
def test_named_twice_is_refused(param):
    import pandas as pd

    value = pd.Series([1, 2], index=["a", "a"])
    with pytest.raises(ValueError, match=f"'{param}' parameter gives feature 'a' twice"):
        FeatureCosts(**{param: value}, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="'group_cost' parameter gives group 'g' twice"):
        FeatureCosts([1.0, 2.0], groups=["g", "g"], group_cost=pd.Series([1, 2], index=["g", "g"]))


def test_cost_report_argument_errors(costs, rng):
    ens = TreeEnsemble.from_booster(get_booster("regression"))
    X = hard_rows(rng, 5)
    with pytest.raises(ValueError, match=r"'costs' argument must hold one cost per feature \(5\)"):
        cost_report(ens, X, [1, 2, 3])
    with pytest.raises(TypeError, match=r"'costs' argument must be a FeatureCosts, a list .*Got object"):
        cost_report(ens, X, object())
    with pytest.raises(ValueError, match="describes 3 features; the model has 5"):
        cost_report(ens, X, FeatureCosts([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="must not list a tree twice"):
        cost_report(ens, X, costs, tree_order=[0, 0])
    with pytest.raises(ValueError, match=r"'n_trees' parameter must be in \[0, 2\]"):
        cost_report(ens, X, costs, tree_order=[0, 1], n_trees=3)
    with pytest.raises(TypeError, match=r"must be a budget_extras\.TreeEnsemble"):
        cost_report("model", X, costs)


def test_worked_example_of_docs():
    # docs/costs.md, computed by hand: two trees, a TT4+T4U+FTI panel, split and tree costs.
    def leaf(i, v):
        return {"leaf_index": i, "leaf_value": v}

    def split(f, thr, left, right):
        return {
            "split_feature": f, "threshold": thr, "decision_type": "<=", "default_left": True,
            "missing_type": "None", "internal_value": 0.0, "left_child": left, "right_child": right,
        }  # fmt: skip

    dump = {
        "num_class": 1, "num_tree_per_iteration": 1, "max_feature_idx": 4, "objective": "regression",
        "feature_names": ["TSH", "TT4", "T4U", "FTI", "age"],
        "tree_info": [
            {"tree_structure": split(0, 0.01, leaf(0, -1.0), split(3, 0.1, leaf(1, 0.5), leaf(2, 2.0)))},
            {"tree_structure": split(4, 0.5, split(1, 0.08, leaf(0, 0.1), leaf(1, 0.2)), leaf(2, 0.3))},
        ],
    }  # fmt: skip
    ens = TreeEnsemble.from_dump(dump)
    costs = FeatureCosts(
        {"TSH": 22.78, "TT4": 14.51, "T4U": 11.41, "FTI": 0.0, "age": 1.0},
        groups={"TT4": "panel", "T4U": "panel", "FTI": "panel"},
        group_cost={"panel": 25.92},
        split=0.01,
        tree=0.1,
        coupled={"TSH": 5.0},
        feature_names=ens.feature_names,
    )
    X = np.array(
        [[0.005, 0.09, 0.10, 0.12, 0.3], [0.005, 0.09, 0.10, 0.12, 0.7], [0.020, 0.05, 0.10, 0.05, 0.3]]
    )
    rep = cost_report(ens, X, costs)
    np.testing.assert_array_equal(rep.used.toarray(), [[1, 1, 0, 0, 1], [1, 0, 0, 0, 1], [1, 1, 0, 1, 1]])
    np.testing.assert_allclose(rep.acquisition_cost, [49.70, 23.78, 49.70])
    np.testing.assert_array_equal(rep.splits_evaluated, [3, 2, 4])
    np.testing.assert_allclose(rep.eval_cost, [0.23, 0.22, 0.24])
    np.testing.assert_allclose(rep.total_cost, [49.93, 24.00, 49.94])
    assert rep.coupled_cost == 5.0
    np.testing.assert_allclose(ens.predict_raw(X), [-0.8, -0.7, 0.6])


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(
    lazy=st.lists(st.floats(0, 100), min_size=5, max_size=5),
    groups=st.lists(st.sampled_from([None, "a", "b"]), min_size=5, max_size=5),
    split=st.floats(0, 1),
    tree=st.floats(0, 1),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_cost_report_matches_brute_force(lazy, groups, split, tree, seed):
    ens = TreeEnsemble.from_booster(get_booster("categorical"))
    costs = FeatureCosts(lazy, groups=groups, split=split, tree=tree)
    X = hard_rows(np.random.default_rng(seed), 6)
    rep = cost_report(ens, X, costs)
    _, splits, acq, ev = brute_force(ens, X, costs)
    np.testing.assert_array_equal(rep.splits_evaluated, splits)
    np.testing.assert_allclose(rep.acquisition_cost, acq, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rep.eval_cost, ev, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("value", "kwargs", "exc", "match"),
    [
        (
            -3,
            {},
            ValueError,
            r"The 'budget' parameter of BudgetPrune must be a positive finite number\. Got -3\.0",
        ),
        (0, {}, ValueError, "positive finite number"),
        (np.inf, {}, ValueError, "Got inf"),
        ("3", {}, TypeError, "Got '3'"),
        (-1, {"allow_zero": True}, ValueError, ">= 0"),
    ],
)
def test_check_positive(value, kwargs, exc, match):
    from budget_extras.core._validation import check_positive

    with pytest.raises(exc, match=match):
        check_positive(value, name="budget", owner="BudgetPrune", **kwargs)
    assert check_positive(2, name="budget") == 2.0
    assert check_positive(0, name="budget", allow_zero=True) == 0.0


def test_method_cost_inputs_refuse_a_feature_named_twice():
    """Every dict / Series cost input refuses a repeated feature (no last-wins)."""
    import lightgbm as lgb
    import pandas as pd

    from budget_extras import train_to_budget
    from budget_extras.budgetprune._setup import resolve_costs
    from budget_extras.cstc._features import _costs_iv

    twice = pd.Series([1.0, 2.0, 3.0], index=["a", "b", "a"])
    with pytest.raises(ValueError, match=r"'costs' argument of BudgetPrune gives feature 'a' twice"):
        resolve_costs(twice, ("a", "b"), 2)
    with pytest.raises(ValueError, match=r"'costs' argument of CSTC gives feature 'a' twice"):
        _costs_iv(twice, 2, ["a", "b"])
    with pytest.raises(ValueError, match=r"'costs' argument of train_to_budget gives feature '1' twice"):
        X = pd.DataFrame(np.random.default_rng(0).normal(size=(40, 2)), columns=["1", "b"])
        y = (X["1"] > 0).astype(int).to_numpy()
        train_to_budget({"objective": "binary"}, lgb.Dataset(X, y), budget=1.0, valid_set=(X, y),
                        costs={1: 1.0, "1": 2.0}, progress=False)


def test_to_cegb_params():
    """The fork's per-feature parameters: a group's cost is the lazy cost of each member."""
    c = FeatureCosts(
        {"a": 1.0, "b": 2.0, "c": 3.0},
        coupled={"c": 0.5},
        groups={"a": "lab", "b": "lab"},
        group_cost={"lab": 7.0},
        split={"b": 0.01},
        tree=4.0,
        feature_names=["a", "b", "c"],
    )
    assert c.to_cegb_params() == {
        "cegb_penalty_feature_lazy": {"a": 7.0, "b": 7.0, "c": 3.0},
        "cegb_penalty_feature_coupled": {"a": 0.0, "b": 0.0, "c": 0.5},
        "cegb_penalty_feature_split": {"a": 0.0, "b": 0.01, "c": 0.0},
        "cegb_feature_group": {"a": 0, "b": 0, "c": -1},
    }
    assert c.to_cegb_params(["c", "a", "b"]) == {
        "cegb_penalty_feature_lazy": [3.0, 7.0, 7.0],
        "cegb_penalty_feature_coupled": [0.5, 0.0, 0.0],
        "cegb_penalty_feature_split": [0.0, 0.0, 0.01],
        "cegb_feature_group": [-1, 0, 0],
    }
    unnamed = FeatureCosts([1.0, 2.0], groups=[None, "x"])
    assert unnamed.to_cegb_params()["cegb_feature_group"] == [-1, 0]
    with pytest.raises(ValueError, match="do not match the model's"):
        c.to_cegb_params(["a", "b"])


def test_from_csv_group_labels_are_text(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("feature,cost,group,group_cost\na,1,-1,5\nb,2,1,\nc,3,1.0,\nd,4,1,9\n")
    c = FeatureCosts.from_csv(path, feature_names=["a", "b", "c", "d"])
    assert c.group_labels == ("1", "1.0")
    np.testing.assert_array_equal(c.group, [-1, 0, 1, 0])
    np.testing.assert_array_equal(c.group_cost, [9.0, 3.0])  # the group_cost of 'a' (no group) is ignored
