"""Interaction constraints: the learner builds histograms only for the features a constraint names.

The trees are upstream's (the ``interaction*`` cases of ``parity_cases.py`` compare the model
files with upstream LightGBM 4.7.0); here, the work skipped.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np


def _cpu_seconds(lgb: Any, params: dict[str, Any], data: Any, rounds: int, repeats: int = 3) -> float:
    """Return the least CPU time of ``repeats`` trainings (the machine's other jobs only add to it)."""
    best = np.inf
    for _ in range(repeats):
        t0 = time.process_time()
        lgb.train(params, data, num_boost_round=rounds)
        best = min(best, time.process_time() - t0)
    return float(best)


def test_a_constraint_on_two_of_sixty_features_costs_a_fraction_of_free_training(lgb):
    """Histograms of 2 features instead of 60: well under half the CPU time of the unconstrained training."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6000, 60))
    y = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=6000)
    params = {"objective": "l2", "num_leaves": 31, "verbose": -1, "num_threads": 1, "force_col_wise": True,
              "seed": 0}
    data = lgb.Dataset(X, y, params=params).construct()
    free = _cpu_seconds(lgb, params, data, 60)
    constrained = _cpu_seconds(lgb, {**params, "interaction_constraints": [[0, 1]]}, data, 60)
    assert constrained < 0.5 * free, (constrained, free)


def test_constrained_trees_split_only_on_named_features_and_match_the_columns_alone(lgb):
    """The constraint's features alone: the same splits as a Dataset holding only those columns."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 12))
    y = X[:, 3] - X[:, 7] + 0.1 * rng.normal(size=3000)
    params = {"objective": "l2", "num_leaves": 15, "verbose": -1, "num_threads": 1, "seed": 0,
              "enable_bundle": False}
    full = lgb.train({**params, "interaction_constraints": [[3, 7]]}, lgb.Dataset(X, y), num_boost_round=20)
    alone = lgb.train(params, lgb.Dataset(X[:, [3, 7]], y), num_boost_round=20)
    used = {int(f) for f in np.flatnonzero(full.feature_importance("split"))}
    assert used <= {3, 7}
    np.testing.assert_array_equal(full.predict(X), alone.predict(X[:, [3, 7]]))
