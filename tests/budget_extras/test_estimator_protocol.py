"""What every estimator (BudgetPrune, QWYC, AdaptGBRT, CSTC) guarantees about its fitted state.

A fit pickles (fitted and unfitted) with identical predictions after the round trip; a refit
that is refused leaves the earlier fit untouched (every fitted attribute the same object, the
same predictions); ``clone`` gives an unfitted copy with the same parameters; an unfitted
estimator's methods raise ``NotFittedError``.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from budget_extras import CSTC, QWYC, AdaptGBRT, BudgetPrune, FeatureCosts
from budget_extras.core._fit_state import fitted_state

NAMES = ["a", "b", "c", "d"]
COSTS = FeatureCosts({"a": 1.0, "b": 2.0, "c": 4.0, "d": 8.0}, feature_names=NAMES, split=0.1, tree=0.5)
PARAMS = {"objective": "binary", "num_leaves": 6, "min_data_in_leaf": 5, "verbose": -1, "seed": 0, "num_threads": 1}


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    rng = np.random.default_rng(2404)
    X = pd.DataFrame(rng.normal(size=(400, 4)), columns=NAMES)
    y = (X["a"] + 0.5 * X["c"] - 0.3 * X["d"] > 0).astype(int).to_numpy()
    booster = lgb.train(PARAMS, lgb.Dataset(X[:300], y[:300]), num_boost_round=6)
    # a second model of the same kind (other trees) and one of the wrong kind (regression)
    other = lgb.train(dict(PARAMS, num_leaves=4), lgb.Dataset(X[:300], y[:300]), num_boost_round=4)
    reg = lgb.train(dict(PARAMS, objective="regression"), lgb.Dataset(X[:300], X["a"][:300]), num_boost_round=3)
    return {"X": X[:300], "y": y[:300], "Xv": X[300:], "yv": y[300:], "booster": booster, "other": other,
            "reg": reg}


MAKE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "BudgetPrune": lambda d: BudgetPrune(d["booster"], lam=0.02, costs=COSTS, progress=False),
    "QWYC": lambda d: QWYC(d["booster"], alpha=0.05, costs=COSTS, random_state=0),
    "AdaptGBRT": lambda d: AdaptGBRT(d["booster"], p_full=0.4, costs=COSTS, n_trees=3, max_em_iter=1),
    "CSTC": lambda d: CSTC(d["booster"], costs=COSTS, depth=2, task="binary", n_cycles=1, max_iter=5),
}

FIT: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "BudgetPrune": lambda est, d: est.fit(d["X"], d["y"], X_valid=d["Xv"]),
    "QWYC": lambda est, d: est.fit(d["X"], X_valid=d["Xv"]),
    "AdaptGBRT": lambda est, d: est.fit(d["X"], d["y"]),
    "CSTC": lambda est, d: est.fit(d["X"], d["y"], X_valid=d["Xv"], y_valid=d["yv"]),
}

#: A refit each method refuses, after a parameter change that would alter the fit: another model
#: with a budget nothing meets (the reported bug), a model of the wrong kind, a budget without
#: validation data, costs of the wrong length.
REFUSED: dict[str, tuple[dict[str, Any], Callable[[Any, dict[str, Any]], Any], str]] = {
    "BudgetPrune": (
        {"model": "other", "lam": None, "budget": 0.0},
        FIT["BudgetPrune"],
        "budget=0",
    ),
    "QWYC": ({"model": "reg", "alpha": 0.1}, FIT["QWYC"], "binary or multiclass classifier"),
    "AdaptGBRT": ({"f0": "other", "budget": 1.0}, FIT["AdaptGBRT"], "needs validation data"),
    "CSTC": ({"booster": "other", "costs": [1.0, 2.0]}, FIT["CSTC"], "costs"),
}

METHODS = list(MAKE)


def _predictions(est: Any, X: Any) -> list[np.ndarray]:
    """Everything the fitted estimator predicts for ``X``."""
    if isinstance(est, QWYC):
        p = est.predict(X)
        return [p.scores, p.labels, p.trees_evaluated, est.predict_proba(X)]
    out = [np.asarray(est.predict(X)), est.cost_report(X).total_cost]
    if isinstance(est, AdaptGBRT):
        return [*out, est.predict_proba(X), est.decision_function_gate(X), est.row_cost(X)]
    out.append(est.decision_function(X))
    if isinstance(est, CSTC):
        out.append(est.predict_proba(X))
    return out


def _assert_same(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.fixture(scope="module")
def fitted(data: dict[str, Any]) -> dict[str, Any]:
    return {name: FIT[name](MAKE[name](data), data) for name in METHODS}


@pytest.mark.parametrize("method", METHODS)
def test_fitted_estimator_pickles_with_identical_predictions(
    data: dict[str, Any], fitted: dict[str, Any], method: str
) -> None:
    est = fitted[method]
    again = pickle.loads(pickle.dumps(est))
    assert type(again) is type(est)
    assert again.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    assert fitted_state(again).keys() == fitted_state(est).keys()
    _assert_same(_predictions(again, data["Xv"]), _predictions(est, data["Xv"]))


@pytest.mark.parametrize("method", METHODS)
def test_unfitted_estimator_pickles_and_fits_the_same(data: dict[str, Any], method: str) -> None:
    est = MAKE[method](data)
    again = pickle.loads(pickle.dumps(est))
    assert fitted_state(again) == {}
    _assert_same(
        _predictions(FIT[method](again, data), data["Xv"]),
        _predictions(FIT[method](est, data), data["Xv"]),
    )


@pytest.mark.parametrize("method", METHODS)
def test_refused_refit_leaves_the_previous_fit_untouched(data: dict[str, Any], method: str) -> None:
    est = FIT[method](MAKE[method](data), data)
    before = fitted_state(est)
    predictions = _predictions(est, data["Xv"])
    changes, refit, match = REFUSED[method]
    est.set_params(**{k: data[v] if isinstance(v, str) and v in data else v for k, v in changes.items()})
    with pytest.raises(ValueError, match=match):
        refit(est, data)
    after = fitted_state(est)
    assert after.keys() == before.keys()
    changed = sorted(k for k in before if after[k] is not before[k])
    assert changed == [], f"a refused fit replaced {changed}"
    _assert_same(_predictions(est, data["Xv"]), predictions)


@pytest.mark.parametrize("method", METHODS)
def test_clone_is_unfitted_with_the_same_parameters(data: dict[str, Any], fitted: dict[str, Any], method: str) -> None:
    est = fitted[method]
    copy = clone(est)
    assert fitted_state(copy) == {}
    assert copy.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    for k, v in est.get_params(deep=False).items():
        assert type(copy.get_params(deep=False)[k]) is type(v), k
    with pytest.raises(NotFittedError):
        copy.predict(data["Xv"])


#: Every public method that needs a fit, with its arguments.
UNFITTED_CALLS: dict[str, list[tuple[str, Callable[[dict[str, Any]], tuple[Any, ...]]]]] = {
    "BudgetPrune": [
        ("predict", lambda d: (d["Xv"],)),
        ("predict_raw", lambda d: (d["Xv"],)),
        ("predict_proba", lambda d: (d["Xv"],)),
        ("decision_function", lambda d: (d["Xv"],)),
        ("cost_report", lambda d: (d["Xv"],)),
        ("save_model", lambda d: ("never-written.txt",)),
    ],
    "QWYC": [
        ("predict", lambda d: (d["Xv"],)),
        ("predict_proba", lambda d: (d["Xv"],)),
        ("decision_function", lambda d: (d["Xv"],)),
        ("cost_report", lambda d: (d["Xv"],)),
        ("recalibrate", lambda d: (d["Xv"],)),
        ("recalibrate_outputs", lambda d: (np.zeros((2, 6, 1)),)),
        ("predict_outputs", lambda d: (np.zeros((2, 6, 1)),)),
        ("full_labels_outputs", lambda d: (np.zeros((2, 6, 1)),)),
        ("to_model_string", lambda d: ()),
        ("save_model", lambda d: ("never-written.txt",)),
    ],
    "AdaptGBRT": [
        ("predict", lambda d: (d["Xv"],)),
        ("predict_proba", lambda d: (d["Xv"],)),
        ("decision_function_gate", lambda d: (d["Xv"],)),
        ("route", lambda d: (d["Xv"],)),
        ("features_used", lambda d: (d["Xv"],)),
        ("row_cost", lambda d: (d["Xv"],)),
        ("cost_report", lambda d: (d["Xv"],)),
        ("evaluate", lambda d: (d["Xv"], d["yv"])),
        ("save", lambda d: ("never-written.json",)),
    ],
    "CSTC": [
        ("predict", lambda d: (d["Xv"],)),
        ("predict_proba", lambda d: (d["Xv"],)),
        ("decision_function", lambda d: (d["Xv"],)),
        ("apply", lambda d: (d["Xv"],)),
        ("path", lambda d: (d["Xv"],)),
        ("cost_report", lambda d: (d["Xv"],)),
        ("save", lambda d: ("never-written.npz",)),
    ],
}


@pytest.mark.parametrize(
    ("method", "call"), [(m, c) for m in METHODS for c, _ in UNFITTED_CALLS[m]], ids=lambda v: str(v)
)
def test_unfitted_methods_raise_not_fitted(data: dict[str, Any], method: str, call: str, tmp_path: Any,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = dict(UNFITTED_CALLS[method])[call](data)
    with pytest.raises(NotFittedError, match="not fitted"):
        getattr(MAKE[method](data), call)(*args)
    assert not list(tmp_path.iterdir())
