"""Embedded datasets: shapes, labels, Turney's costs and the group modelling."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest

import budget_extras
from budget_extras import TreeEnsemble, cost_report
from budget_extras.datasets import load_heart, load_thyroid


def test_thyroid_shapes_labels_costs():
    d = load_thyroid()
    assert d.X_train.shape == (3772, 21) and d.X_test.shape == (3428, 21)
    np.testing.assert_array_equal(np.bincount(d.y_train), [93, 191, 3488])
    assert d.feature_names[-1] == "FTI" and len(d.raw_costs) == 20 and "FTI" not in d.raw_costs
    c = d.costs
    assert c.feature_names == tuple(d.feature_names)
    assert c.lazy[d.feature_names.index("TSH")] == 22.78
    np.testing.assert_array_equal(c.lazy[:16], np.ones(16))
    idx = [d.feature_names.index(n) for n in ("TT4", "T4U", "FTI")]
    used = np.zeros((3, 21), dtype=bool)
    used[0, idx[2]] = True  # FTI alone: pays TT4 + T4U
    used[1, idx] = True  # all three: paid once
    used[2, [0, idx[0]]] = True  # age + TT4: the whole panel (documented upper bound)
    np.testing.assert_allclose(c.row_cost(used), [25.92, 25.92, 26.92])


def test_thyroid_fti_sum_option():
    c = load_thyroid(fti="sum").costs
    assert c.lazy[-1] == pytest.approx(25.92) and len(c.group_labels) == 0
    with pytest.raises(ValueError, match="'fti' parameter must be 'group' or 'sum'"):
        load_thyroid(fti="free")


def test_heart_frame_and_array():
    d = load_heart()
    assert d.X.shape == (303, 13) and d.y.shape == (303,)
    assert set(np.unique(d.y)) == {0, 1}
    for col in d.categorical_features:
        assert str(d.X[col].dtype) == "category"
    assert d.costs.lazy.sum() == pytest.approx(600.57)
    ex = [d.feature_names.index(n) for n in ("exang", "oldpeak", "slope")]
    used = np.zeros((1, 13), dtype=bool)
    used[0, ex] = True
    assert d.costs.row_cost(used)[0] == pytest.approx(87.3)
    a = load_heart(as_frame=False, exercise_group=False)
    assert a.X.dtype == np.float64 and a.X.shape == (303, 13)
    assert a.costs.row_cost(used)[0] == pytest.approx(3 * 87.3)


def test_models_on_embedded_data_cost_report():
    d = load_heart()
    booster = lgb.train({"verbose": -1, "num_leaves": 4, "min_data_in_leaf": 10}, lgb.Dataset(d.X, d.y), 10)
    ens = TreeEnsemble.from_booster(booster)
    np.testing.assert_allclose(ens.predict_raw(d.X), booster.predict(d.X, raw_score=True), rtol=1e-12)
    rep = cost_report(ens, d.X, d.costs)
    assert (rep.acquisition_cost <= d.costs.unit_cost.sum() + 1e-9).all()
    assert rep.acquisition_cost.mean() > 0


def test_data_files_are_declared_as_package_data():
    root = Path(budget_extras.__file__).parent
    files = [p.relative_to(root).as_posix() for p in (root / "datasets" / "data").iterdir()]
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if not pyproject.exists():  # pragma: no cover - installed without the source tree
        pytest.skip("pyproject.toml not found next to the tests")
    # [tool.setuptools.package-data]; read as text (tomllib is Python 3.11+)
    patterns = re.findall(r'"(datasets/data/[^"]*)"', pyproject.read_text())
    assert patterns
    for f in files:
        assert any(fnmatch.fnmatch(f, p) for p in patterns), f
    assert "SOURCE.txt" in {Path(f).name for f in files}
