"""The parameter table: every public parameter of every estimator, checked by one rule.

Every estimator declares each constructor parameter once in ``_parameter_constraints``; the
fit checks them before any work. The same probe values get the same answer everywhere: a bool
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
from budget_extras import CSTC, QWYC, AdaptGBRT, BudgetPrune, FeatureDropRefit
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


@pytest.mark.parametrize(("cls", "name"), PARAMS, ids=IDS)
def test_one_rule_for_every_parameter(cls: type, name: str) -> None:
    constraints = cls._parameter_constraints[name]  # type: ignore[attr-defined]
    # a bool is never a number: accepted only where a bool is
    assert _outcome(cls, name, True) is (None if "boolean" in constraints else TypeError)
    # numpy scalars are numbers: the same answer as the Python number
    assert _outcome(cls, name, np.int64(3)) is _outcome(cls, name, 3)
    assert _outcome(cls, name, np.float32(0.5)) is _outcome(cls, name, 0.5)
    # NaN and infinity: refused everywhere (a wrong value where a real number fits, else a wrong type)
    real = any(isinstance(c, Interval) and c.kind is numbers.Real for c in constraints)
    for bad in (math.nan, math.inf, -math.inf):
        assert _outcome(cls, name, bad) is (ValueError if real else TypeError)
    # a string: refused unless it is an option
    options = [o for c in constraints if isinstance(c, Options) for o in c.options]
    assert _outcome(cls, name, "not-an-option") is (ValueError if options else TypeError)
    for option in options:
        assert _outcome(cls, name, option) is None


@pytest.mark.parametrize(("cls", "name"), PARAMS, ids=IDS)
def test_numpy_scalars_are_accepted_in_range(cls: type, name: str) -> None:
    intervals = [c for c in cls._parameter_constraints[name] if isinstance(c, Interval)]  # type: ignore[attr-defined]
    for c in intervals:
        inside = next(v for v in (1, 2, 3, 0, 0.5, -1) if v in c and (c.kind is numbers.Real or isinstance(v, int)))
        typed = np.int64(inside) if isinstance(inside, int) else np.float64(inside)
        assert _outcome(cls, name, typed) is None
        if c.kind is numbers.Real:
            assert _outcome(cls, name, np.float32(inside)) is None


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
