"""The cost-parts benchmark counts a cross-validated search's trainings by kind and leaves the search unchanged."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")

from benchmarks.train_to_budget import small_cost_parts as scp  # noqa: E402
from budget_extras import train_to_budget  # noqa: E402
from budget_extras.cegb import _cv, _measure, _search  # noqa: E402

ROUNDS = 10


def _search_run(instrument: bool, model_text: bool = False) -> tuple[object, scp.Parts, float]:
    """The lean one-budget search with its cross-validated choice on 1,200 synthetic rows (5 folds)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1600, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.logistic(size=1600) > 0).astype(int)
    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1, "seed": 0, "num_threads": 1}
    parts = scp.Parts()
    kw = dict(budget=2.5, valid_set=(X[800:1200], y[800:1200]), costs=[1.0, 2.0, 1.0, 3.0, 1.0],
              num_boost_round=ROUNDS, progress=False, choose="cv", search="lean")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        if instrument:
            with scp.instrumented(parts, ROUNDS, model_text):
                r = train_to_budget(params, lgb.Dataset(X[:800], y[:800]), **kw)
        else:
            r = train_to_budget(params, lgb.Dataset(X[:800], y[:800]), **kw)
    return r, parts, time.process_time() - t0


def test_every_fold_fit_refit_and_the_plain_model_are_counted_by_kind() -> None:
    r, parts, cpu = _search_run(instrument=True)
    cvs = [c for c in r.frontier if c.folds > 0]
    assert cvs and all(c.folds == 5 for c in cvs)
    fold_fits = sum(n for k, n in parts.calls.items() if k.startswith("fold fit "))
    assert fold_fits == sum(c.folds for c in cvs)
    assert parts.calls["plain"] == 1
    assert parts.calls["cv refit"] >= 1
    assert sum(n for k, n in parts.calls.items() if k.startswith("proxy: ")) == sum(
        1 for c in r.frontier if c.folds == 0 and c.family != "all")
    assert "other training" not in parts.calls
    assert sum(parts.cpu.values()) <= cpu + 1e-3  # exclusive parts never count a second twice


def test_the_instrumented_search_returns_the_same_model_and_restores_the_functions() -> None:
    originals = (lgb.train, _search.Search.measure, _cv._fit_fold, _cv.refit, lgb.Booster.model_to_string)
    plain, _, _ = _search_run(instrument=False)
    timed, _, _ = _search_run(instrument=True)
    assert timed.booster.model_to_string() == plain.booster.model_to_string()
    assert (lgb.train, _search.Search.measure, _cv._fit_fold, _cv.refit, lgb.Booster.model_to_string) == originals


def test_model_text_measures_the_fold_fits_from_their_texts_with_the_same_model() -> None:
    """``--model-text``: no tree arrays are read, every fold fit writes its text; the same model; restored after."""
    original = _measure.tree_arrays
    arrays, arrays_parts, _ = _search_run(instrument=True)
    text, text_parts, _ = _search_run(instrument=True, model_text=True)
    assert text.booster.model_to_string() == arrays.booster.model_to_string()
    assert not any(k.endswith("LGBM_BoosterGetTreeArrays)") for k in text_parts.calls)
    assert text_parts.calls["fold fits: model texts"] == sum(c.folds for c in text.frontier)
    if hasattr(lgb.basic._LIB, "LGBM_BoosterGetTreeArrays"):  # the fork
        assert "fold fits: model texts" not in arrays_parts.calls
    assert _measure.tree_arrays is original


def test_the_floor_is_the_folds_times_two_fits_and_a_constant_one_and_the_refit() -> None:
    row = {"folds": 5, "plain_cpu": 1.0, "search_trainings": 20.0, "n_cv": 3,
           "parts": {"fold fit (every round)": {"calls": 10, "cpu": 5.0},
                     "fold fit (stopped early)": {"calls": 5, "cpu": 1.0},
                     "fold fits: model texts": {"calls": 15, "cpu": 1.5},
                     "cv refit": {"calls": 1, "cpu": 1.2}, "cv refits: model texts": {"calls": 3, "cpu": 0.3}}}
    f = scp.floor([row])
    assert f["fold_fit"] == pytest.approx(0.5)
    assert f["fold_fit_measured"] == pytest.approx(0.6)
    assert f["cv_floor_training"] == pytest.approx(5 * (2 * 0.5 + 0.2))
    assert f["cv_floor"] == pytest.approx(5 * (2 * 0.6 + 0.2 + 0.1))
    assert f["floor"] == pytest.approx(f["cv_floor"] + 1.5)
