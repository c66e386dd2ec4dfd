"""Random CEGB configurations never crash, and the incremental lazy charge equals the reference scan.

Each draw combines the CEGB penalties (lazy, coupled, split,
per-feature split, groups, GreedyMiser) with the parts of LightGBM that move rows between trees
and leaves (bagging, GOSS, multiclass, a categorical feature, monotone and interaction
constraints). The oracle is the fork's own row-by-row reference scan
(``cegb_lazy_reference_scan=true``), which recounts every leaf's unpaid rows from scratch: the
two models must have identical trees.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

lgb = pytest.importorskip("lightgbm")
if "+cegb" not in lgb.__version__:  # pragma: no cover - the suite runs on the fork
    pytest.skip("needs the lightgbm-cegb fork", allow_module_level=True)

from tests.fork.scenarios import _tree_signatures  # noqa: E402

N_FEATURES = 6
CAT = 5  # column 5 holds integer categories 0..4
SETTINGS = settings(deadline=None, max_examples=150, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure prints its draws
                    suppress_health_check=[HealthCheck.too_slow])

_rng = np.random.default_rng(5)
X = _rng.normal(size=(400, N_FEATURES))
X[:, CAT] = _rng.integers(0, 5, size=400)
SIGNAL = X[:, 0] + 0.7 * X[:, 1] * X[:, 2] + 0.5 * (X[:, CAT] == 2) + 0.2 * _rng.normal(size=400)

costs = st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 5.0]), min_size=N_FEATURES, max_size=N_FEATURES)


@st.composite
def configs(draw: st.DrawFn) -> dict:
    p: dict = {
        "verbose": -1, "num_threads": 1, "deterministic": True, "seed": 3, "force_row_wise": True,
        "num_leaves": draw(st.integers(2, 15)), "min_data_in_leaf": draw(st.integers(1, 20)),
        "learning_rate": 0.2,
        "cegb_tradeoff": draw(st.sampled_from([1e-3, 1e-2, 0.05, 0.3, 1.0])),
        "cegb_penalty_feature_lazy": draw(costs),
    }
    objective = draw(st.sampled_from(["regression", "binary", "multiclass"]))
    p["objective"] = objective
    if objective == "multiclass":
        p["num_class"] = 3
    if draw(st.booleans()):
        p["cegb_penalty_feature_coupled"] = [10.0 * c for c in draw(costs)]
    if draw(st.booleans()):
        p["cegb_penalty_split"] = draw(st.sampled_from([1e-4, 1e-2]))
    if draw(st.booleans()):
        p["cegb_penalty_feature_split"] = [0.01 * c for c in draw(costs)]
    if draw(st.booleans()):
        p["cegb_feature_group"] = draw(st.lists(st.integers(-1, 2), min_size=N_FEATURES, max_size=N_FEATURES))
    if draw(st.booleans()):
        p["cegb_independent_branches"] = True
    sampling = draw(st.sampled_from(["none", "bagging", "goss"]))
    if sampling == "bagging":
        p.update(bagging_fraction=draw(st.sampled_from([0.3, 0.7])), bagging_freq=1)
    elif sampling == "goss":
        p["data_sample_strategy"] = "goss"
    if draw(st.booleans()):
        p["monotone_constraints"] = [*draw(st.lists(st.integers(-1, 1), min_size=5, max_size=5)), 0]
    if draw(st.booleans()):
        p["interaction_constraints"] = [[0, 1, 2], [3, 4, 5]]
    return p


def _labels(objective: str) -> np.ndarray:
    if objective == "binary":
        return (SIGNAL > np.median(SIGNAL)).astype(float)
    if objective == "multiclass":
        return np.digitize(SIGNAL, np.quantile(SIGNAL, [0.33, 0.66])).astype(float)
    return SIGNAL


@SETTINGS
@given(params=configs())
def test_random_cegb_config_trains_and_matches_the_reference_scan(params: dict) -> None:
    y = _labels(params["objective"])
    fast = lgb.train(params, lgb.Dataset(X, y, categorical_feature=[CAT]), num_boost_round=4)
    reference = lgb.train(dict(params, cegb_lazy_reference_scan=True), lgb.Dataset(X, y, categorical_feature=[CAT]),
                          num_boost_round=4)
    assert _tree_signatures(fast) == _tree_signatures(reference), params
    pred = fast.predict(X)
    assert np.all(np.isfinite(pred))
