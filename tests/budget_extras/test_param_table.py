"""The parameter table: every public parameter of every estimator, checked by one rule.

Every estimator declares each constructor parameter once in ``_parameter_constraints``, and
``train_to_budget`` each scalar argument in ``_ARGUMENT_CONSTRAINTS``; the fit (the call) checks
them before any work. The same probe values get the same answer everywhere: a bool
is never a number, numpy integer and floating scalars are numbers (accepted where the Python
number is), NaN and infinity are refused, a string is refused unless it is one of the options.
"""

from __future__ import annotations

import inspect
import math
import numbers
import warnings
from typing import Any

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.base import BaseEstimator

import budget_extras
from budget_extras import CSTC, QWYC, AdaptGBRT, BudgetPrune, FeatureDropRefit, train_to_budget
from budget_extras.cegb import _train_to_budget as ttb
from budget_extras.core._params import Interval, Options, check_params, check_scalar

ESTIMATORS: list[type] = [BudgetPrune, FeatureDropRefit, QWYC, AdaptGBRT, CSTC]
#: Parameters an estimator needs that have no usable default (checked with these values).
REQUIRED: dict[type, dict[str, Any]] = {FeatureDropRefit: {"budget": 1.0}}
#: Parameters converted (and so checked) where they are used: models, costs, scorers.
# checked where they are converted, or (n_folds) only where the one setting that uses it is on
CONVERTED = {"model", "booster", "f0", "costs", "scoring", "n_folds"}


def _make(cls: type, **kw: Any) -> Any:
    return cls(**{**REQUIRED.get(cls, {}), **kw})


def _outcome(cls: type, name: str, value: Any) -> type[Exception] | None:
    """The exception type ``check_params`` raises for ``name=value`` (None: accepted)."""
    try:
        check_params(_make(cls, **{name: value}))
    except (ValueError, TypeError) as exc:
        assert f"The {name!r} parameter of {cls.__name__} must be " in str(exc)
        assert "Got " in str(exc)
        return type(exc)
    return None


PARAMS = [
    (cls, name)
    for cls in ESTIMATORS
    for name in cls._parameter_constraints  # type: ignore[attr-defined]
    if cls._parameter_constraints[name] != ["no_validation"]  # type: ignore[attr-defined]
]
IDS = [f"{cls.__name__}.{name}" for cls, name in PARAMS]


def test_the_table_lists_every_public_estimator() -> None:
    public = {
        obj
        for name in budget_extras.__all__
        if inspect.isclass(obj := getattr(budget_extras, name)) and issubclass(obj, BaseEstimator)
    }
    assert public == set(ESTIMATORS)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_parameter_is_declared_once(cls: type) -> None:
    table = cls._parameter_constraints  # type: ignore[attr-defined]
    assert set(table) == set(cls().get_params(deep=False))
    unchecked = {name for name, c in table.items() if c == ["no_validation"]}
    assert unchecked <= CONVERTED
    check_params(_make(cls))  # the defaults pass


#: train_to_budget's scalar arguments: their table, and a call's values that pass.
TTB_TABLE: dict[str, list[Any]] = ttb._ARGUMENT_CONSTRAINTS
TTB_VALUES = {n: p.default for n, p in inspect.signature(train_to_budget).parameters.items() if n in TTB_TABLE}
TTB_VALUES["budget"] = 1.0
#: Arguments of train_to_budget that are not scalars (data, costs, scorers, sequences: checked where used).
TTB_NOT_SCALAR = {"params", "train_set", "valid_set", "costs", "scoring", "k_grid", "budgets", "num_leaves_grid",
                  "search", "options", "client"}  # a strategy name, callable or Strategy; its knobs; a Client


def _ttb_outcome(name: str, value: Any) -> type[Exception] | None:
    """The exception type train_to_budget's argument check raises for ``name=value`` (None: accepted)."""
    try:
        ttb._check_arguments({**TTB_VALUES, name: value})
    except (ValueError, TypeError) as exc:
        assert f"The {name!r} argument of train_to_budget must be " in str(exc)
        assert "Got " in str(exc)
        return type(exc)
    return None


def _one_rule(outcome: Any, constraints: list[Any]) -> None:
    """The probes' answers for one parameter (``outcome(value)``) under its ``constraints``."""
    # a bool is never a number: accepted only where a bool is
    assert outcome(True) is (None if "boolean" in constraints else TypeError)
    # numpy scalars are numbers: the same answer as the Python number
    assert outcome(np.int64(3)) is outcome(3)
    assert outcome(np.float32(0.5)) is outcome(0.5)
    # NaN and infinity: refused (a wrong value where a real number fits, else a wrong type), except an
    # infinity an interval unbounded on that side declares (a time limit)
    real = [c for c in constraints if isinstance(c, Interval) and c.kind is numbers.Real]
    for bad in (math.nan, math.inf, -math.inf):
        accepted = any(bad in c for c in real)
        assert outcome(bad) is (None if accepted else ValueError if real else TypeError)
    # a string: refused unless it is an option
    options = [o for c in constraints if isinstance(c, Options) for o in c.options]
    assert outcome("not-an-option") is (ValueError if options else TypeError)
    for option in options:
        assert outcome(option) is None


def _numpy_in_range(outcome: Any, constraints: list[Any]) -> None:
    for c in (c for c in constraints if isinstance(c, Interval)):
        probes = (1, 2, 3, 0, 0.5, -1, 100)
        inside = next(v for v in probes if v in c and (c.kind is numbers.Real or isinstance(v, int)))
        typed = np.int64(inside) if isinstance(inside, int) else np.float64(inside)
        assert outcome(typed) is None
        if c.kind is numbers.Real:
            assert outcome(np.float32(inside)) is None


@pytest.mark.parametrize(("cls", "name"), PARAMS, ids=IDS)
def test_one_rule_for_every_parameter(cls: type, name: str) -> None:
    _one_rule(lambda v: _outcome(cls, name, v), cls._parameter_constraints[name])  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "name"), PARAMS, ids=IDS)
def test_numpy_scalars_are_accepted_in_range(cls: type, name: str) -> None:
    _numpy_in_range(lambda v: _outcome(cls, name, v), cls._parameter_constraints[name])  # type: ignore[attr-defined]


def test_train_to_budget_declares_every_scalar_argument_once() -> None:
    assert set(TTB_TABLE) | TTB_NOT_SCALAR == set(inspect.signature(train_to_budget).parameters)
    assert not set(TTB_TABLE) & TTB_NOT_SCALAR
    ttb._check_arguments(TTB_VALUES)  # the defaults pass


@pytest.mark.parametrize("name", list(TTB_TABLE))
def test_one_rule_for_every_train_to_budget_argument(name: str) -> None:
    _one_rule(lambda v: _ttb_outcome(name, v), TTB_TABLE[name])
    _numpy_in_range(lambda v: _ttb_outcome(name, v), TTB_TABLE[name])


def test_train_to_budget_refuses_a_bool_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    X = np.random.default_rng(0).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)

    def no_work(*args: Any) -> None:
        raise AssertionError("the training set was binned before the arguments were checked")

    monkeypatch.setattr(ttb, "_construct", no_work)
    for name in ("num_boost_round", "budget", "n_jobs", "time_limit"):
        with pytest.raises(TypeError, match=rf"'{name}' argument of train_to_budget must be .*Got True"):
            train_to_budget({"objective": "binary"}, lgb.Dataset(X, y), valid_set=(X, y), costs=[1.0, 1.0, 1.0],
                            progress=False, **{**{"budget": 1.0}, name: True})


def test_train_to_budget_accepts_numpy_scalars() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    params = {"objective": "binary", "num_leaves": 4, "min_data_in_leaf": 5, "verbose": -1, "num_threads": 1}
    kw: dict[str, Any] = dict(costs=[1.0, 2.0, 3.0], choose="valid", k_grid=[1], num_leaves_grid=None, progress=False)
    typed = dict(budget=np.float32(2.0), num_boost_round=np.int64(4), n_tradeoffs=np.int8(1), n_bisect=np.int64(0),
                 greedy=np.bool_(False), random_state=np.int32(3), max_fits=np.uint16(50))
    plain = {k: v.item() for k, v in typed.items()}
    a = train_to_budget(params, lgb.Dataset(X[:200], y[:200]), valid_set=(X[200:], y[200:]), **kw, **typed)
    b = train_to_budget(params, lgb.Dataset(X[:200], y[:200]), valid_set=(X[200:], y[200:]), **kw, **plain)
    assert a.booster.model_to_string() == b.booster.model_to_string() and a.nfev == b.nfev


@pytest.mark.parametrize(
    ("est", "exc", "match"),
    [
        (CSTC(depth=True), TypeError, r"'depth' parameter of CSTC must be an integer in \[1, 8\]\. Got True"),
        (CSTC(budget=True), TypeError, r"'budget' parameter of CSTC must be a finite number >= 0 or None"),
        (AdaptGBRT(n_trees=True), TypeError, r"'n_trees' parameter of AdaptGBRT must be an integer >= 1\. Got True"),
        (QWYC(decision_threshold=True), TypeError, r"'decision_threshold' parameter of QWYC must be a finite number"),
        (QWYC(alpha=np.nan), ValueError, r"'alpha' parameter of QWYC must be a number in \[0, 1\)\. Got nan"),
        (BudgetPrune(lam=np.inf), ValueError, r"'lam' parameter of BudgetPrune must be a finite number >= 0"),
        (AdaptGBRT(n_trees=5.0), TypeError, r"'n_trees' parameter of AdaptGBRT must be an integer >= 1\. Got 5\.0"),
    ],
)
def test_refusals_name_the_parameter_and_the_rule(est: Any, exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        check_params(est)


@pytest.mark.parametrize(
    "est",
    [BudgetPrune(bisect_steps=np.int64(3)), QWYC(alpha=np.float32(0.01)), AdaptGBRT(n_trees=np.int64(5)),
     CSTC(depth=np.int32(2), lam=np.float32(0.1)), FeatureDropRefit(budget=np.int64(2))],
)
def test_numpy_scalars_are_accepted(est: Any) -> None:
    check_params(est)


@pytest.fixture(scope="module")
def binary() -> tuple[lgb.Booster, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    params = {"objective": "binary", "num_leaves": 4, "min_data_in_leaf": 5, "verbose": -1, "seed": 0,
              "num_threads": 1}
    return lgb.train(params, lgb.Dataset(X, y), num_boost_round=4), X, y


def test_fit_refuses_a_bool_before_any_work(binary: tuple[lgb.Booster, np.ndarray, np.ndarray]) -> None:
    booster, X, y = binary
    with pytest.raises(TypeError, match=r"'depth' parameter of CSTC must be an integer in \[1, 8\]\. Got True"):
        CSTC(booster, depth=True, task="binary").fit(X, y)
    with pytest.raises(TypeError, match=r"'n_trees' parameter of AdaptGBRT must be an integer >= 1\. Got True"):
        AdaptGBRT(booster, n_trees=True).fit(X, y)
    qwyc = QWYC(booster, alpha=0.05, holdout=None).fit(X)
    with pytest.raises(TypeError, match=r"'alpha' parameter of QWYC must be a number in \[0, 1\)\. Got True"):
        qwyc.recalibrate(X, alpha=True)
    assert qwyc.alpha_ == 0.05


def test_fit_accepts_numpy_scalars(binary: tuple[lgb.Booster, np.ndarray, np.ndarray]) -> None:
    booster, X, y = binary
    kw: dict[str, Any] = {"budget": 1.0, "max_iter": 5, "min_score": None, "progress": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the solves stop at max_iter
        bp = BudgetPrune(booster, bisect_steps=np.int64(2), **kw).fit(X, y)
        ref = BudgetPrune(booster, bisect_steps=2, **kw).fit(X, y)
    assert [p[:3] for p in bp.path_] == [p[:3] for p in ref.path_]
    q = QWYC(booster, alpha=np.float32(0.01), holdout=None).fit(X)
    assert q.alpha_ == pytest.approx(0.01)


def test_interval_rule() -> None:
    real = Interval(numbers.Real, 0, None, closed="left")
    assert 0 in real and np.float32(2.5) in real and np.int8(1) in real
    assert True not in real and math.nan not in real and math.inf not in real and -1 not in real
    assert math.inf in Interval(numbers.Real, 0, None, closed="left", allow_inf=True)
    assert math.inf not in Interval(numbers.Real, 0, 10, closed="both", allow_inf=True)
    integer = Interval(numbers.Integral, 1, 8, closed="both")
    assert np.uint16(8) in integer and 3.0 not in integer and np.bool_(True) not in integer
    assert str(integer) == "an integer in [1, 8]"
    assert str(Interval(numbers.Real, 0, None, closed="neither")) == "a positive finite number"
    assert str(Interval(numbers.Real, 0, 1, closed="left")) == "a number in [0, 1)"
    assert str(Interval(numbers.Real, None, None, closed="neither")) == "a finite number"


def test_function_form_names_the_argument() -> None:
    check_scalar(np.int64(4), "n", [Interval(numbers.Integral, 2, None, closed="left")])
    with pytest.raises(TypeError, match=r"^The 'n' argument of f must be an integer >= 2 or None\. Got False"):
        check_scalar(False, "n", [Interval(numbers.Integral, 2, None, closed="left"), None], owner="f",
                     kind="argument")
    with pytest.raises(ValueError, match=r"^The 'how' parameter must be one of \('a', 'b'\)\. Got 'c' instead\.$"):
        check_scalar("c", "how", [Options(("a", "b"))])
