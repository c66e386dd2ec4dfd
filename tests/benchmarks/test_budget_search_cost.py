"""The search-cost benchmark's proxy-path cuts and its test AUC standard error."""

from __future__ import annotations

import warnings

import lightgbm as lgb
import numpy as np
import pytest

from benchmarks.train_to_budget.budget_search_cost import auc_se, cut_strategy
from budget_extras import train_to_budget


def _search(search: object) -> list[tuple[str, float, float, bool]]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=3000) > 0).astype(int)
    Xv = rng.normal(size=(1000, 5))
    yv = (Xv[:, 0] + Xv[:, 1] * Xv[:, 2] + rng.normal(size=1000) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = train_to_budget({"objective": "binary", "verbosity": -1, "num_threads": 1}, lgb.Dataset(X, y),
                            budget=3.0, budgets=[6.0], valid_set=(Xv, yv), costs=np.arange(1.0, 6.0),
                            num_boost_round=10, progress=False, proxy_rows=1000, choose="valid", search=search)
    return [(c.family, c.score, c.cost, c.proxy) for c in r.frontier]


def test_no_cut_is_the_default_search_and_a_cut_trains_fewer_proxies() -> None:
    default = _search("full")
    assert _search(cut_strategy({})) == default
    cut = _search(cut_strategy({"greedy_steps": 1, "valid_share": 0.5, "rounds_share": 0.5, "n_k": 1}))
    assert sum(c[3] for c in cut) < sum(c[3] for c in default)


def test_an_unknown_cut_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown keys \\['steps'\\]"):
        cut_strategy({"steps": 4})


def test_auc_standard_error_is_hanley_and_mcneils() -> None:
    # AUC 0.5 on 100 + 100 rows: Q1 = 1/3, Q2 = 1/3, variance (0.25 + 2 * 99 / 12) / 10,000
    assert auc_se(0.5, 100, 100) == pytest.approx(np.sqrt((0.25 + 2 * 99 / 12) / 10_000))
    assert auc_se(1.0, 50, 50) == 0.0
