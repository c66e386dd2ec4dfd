"""The parameter table: every estimator declares its scalar parameters once, one rule checks them.

After scikit-learn's public ``_parameter_constraints`` pattern (without importing its private
modules): an estimator class maps each constructor parameter to a list of constraints, and
:func:`check_params` (called by :func:`~budget_extras.core._fit_state.fit_in_one_step` before
any work) refuses a value that meets none of them. Rules that tie several parameters together
stay in each ``fit``.

One rule for numbers everywhere: ``bool`` (and ``numpy.bool_``) is never a number; numpy
integer scalars are integers and numpy floating scalars are real numbers; NaN is in no
interval; infinity only in an interval that is unbounded on that side and declared
``allow_inf=True``.

A constraint is one of:

- :class:`Interval` ``(numbers.Integral or numbers.Real, low, high, closed=...)``;
- :class:`Options` ``(strings)``;
- ``None`` (the value ``None``);
- ``"boolean"`` (``bool`` or ``numpy.bool_``);
- ``"array-like"`` (a list, tuple, ``numpy.ndarray`` or other sized non-string sequence; its
  entries are checked where it is used);
- ``"callable"``;
- a class (an instance of it, e.g. ``dict``);
- ``"no_validation"`` (a model, costs or a scorer: converted, hence checked, where it is used).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

__all__ = ["Interval", "Options", "check_params", "check_scalar", "is_integer", "is_real"]

Closed = Literal["left", "right", "both", "neither"]


def is_integer(x: Any) -> bool:
    """Return True for an integer (Python or numpy), False for a bool and anything else.

    Parameters
    ----------
    x : object
        The value.

    Returns
    -------
    bool
    """
    return isinstance(x, numbers.Integral) and not isinstance(x, bool | np.bool_)


def is_real(x: Any) -> bool:
    """Return True for a real number (Python or numpy, integers included), False for a bool.

    Parameters
    ----------
    x : object
        The value.

    Returns
    -------
    bool
    """
    return isinstance(x, numbers.Real) and not isinstance(x, bool | np.bool_)


def _fmt(x: float) -> str:
    return repr(int(x)) if float(x).is_integer() else repr(float(x))


class Interval:
    """Numbers of one kind between two bounds.

    Parameters
    ----------
    kind : numbers.Integral or numbers.Real
        Integers only, or any real number (integers included).
    low, high : float or None
        The bounds (None: unbounded on that side).
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval.
    allow_inf : bool, default False
        Accept infinity on an unbounded side (never NaN).
    """

    def __init__(
        self, kind: type, low: float | None, high: float | None, *, closed: Closed, allow_inf: bool = False
    ) -> None:
        if kind not in (numbers.Integral, numbers.Real):
            raise TypeError(f"Interval kind must be numbers.Integral or numbers.Real. Got {kind!r}.")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"Interval closed must be 'left', 'right', 'both' or 'neither'. Got {closed!r}.")
        self.kind, self.low, self.high, self.closed, self.allow_inf = kind, low, high, closed, allow_inf

    def accepts_type(self, x: Any) -> bool:
        """Return True when ``x`` is a number of this interval's kind (in range or not)."""
        return is_integer(x) if self.kind is numbers.Integral else is_real(x)

    def __contains__(self, x: Any) -> bool:
        if not self.accepts_type(x):
            return False
        try:
            v = float(x)
        except OverflowError:  # an integer beyond the float range
            v = math.inf if x > 0 else -math.inf
        if math.isnan(v):
            return False
        if math.isinf(v):
            unbounded = self.high is None if v > 0 else self.low is None
            return self.allow_inf and unbounded
        left_ok = self.low is None or (v >= self.low if self.closed in ("left", "both") else v > self.low)
        right_ok = self.high is None or (v <= self.high if self.closed in ("right", "both") else v < self.high)
        return left_ok and right_ok

    def __str__(self) -> str:
        integer = self.kind is numbers.Integral
        noun = "an integer" if integer else ("a number" if self.allow_inf else "a finite number")
        lo_in, hi_in = self.closed in ("left", "both"), self.closed in ("right", "both")
        if self.low is not None and self.high is not None:
            noun = "an integer" if integer else "a number"
            return f"{noun} in {'[' if lo_in else '('}{_fmt(self.low)}, {_fmt(self.high)}{']' if hi_in else ')'}"
        if self.low is not None:
            if self.low == 0 and not lo_in:
                return "a positive integer" if integer else f"a positive {noun[2:]}"
            return f"{noun} {'>=' if lo_in else '>'} {_fmt(self.low)}"
        if self.high is not None:
            return f"{noun} {'<=' if hi_in else '<'} {_fmt(self.high)}"
        return noun


class Options:
    """One of a few strings.

    Parameters
    ----------
    options : iterable of str
        The accepted strings (their order is the one error messages list them in).
    """

    def __init__(self, options: Iterable[str]) -> None:
        self.options = tuple(options)

    def __contains__(self, x: Any) -> bool:
        return isinstance(x, str) and x in self.options

    def __str__(self) -> str:
        return repr(self.options[0]) if len(self.options) == 1 else f"one of {self.options}"


_MARKERS = {
    "boolean": "a bool",
    "array-like": "an array-like",
    "callable": "a callable",
}


def _is_array_like(x: Any) -> bool:
    if isinstance(x, str | bytes | Mapping):
        return False
    return isinstance(x, np.ndarray | Sequence) or (hasattr(x, "__len__") and hasattr(x, "__iter__"))


def _meets(x: Any, c: Any) -> bool:
    """Return True when ``x`` meets the constraint ``c``."""
    if c is None:
        return x is None
    if isinstance(c, Interval | Options):
        return x in c
    if c == "boolean":
        return isinstance(x, bool | np.bool_)
    if c == "array-like":
        return _is_array_like(x)
    if c == "callable":
        return callable(x)
    if isinstance(c, type):
        return isinstance(x, c)
    raise ValueError(f"Unknown parameter constraint {c!r}.")


def _same_type(x: Any, c: Any) -> bool:
    """Return True when ``x`` is of the type ``c`` takes, so that its refusal is a ValueError."""
    if isinstance(c, Interval):
        return c.accepts_type(x)
    if isinstance(c, Options):
        return isinstance(x, str)
    return False


def _describe(c: Any) -> str:
    if c is None:
        return "None"
    if isinstance(c, type):
        return f"a {c.__name__}"
    if isinstance(c, str):
        return _MARKERS[c]
    return str(c)


def _received(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape} and dtype {x.dtype}"
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


def check_scalar(
    x: Any, name: str, constraints: Sequence[Any], *, owner: str | None = None, kind: str = "parameter"
) -> None:
    """Refuse ``x`` unless it meets one of ``constraints`` (the function form of the table).

    Parameters
    ----------
    x : object
        The value given.
    name : str
        The parameter's name, for the message.
    constraints : sequence
        The constraints (see the module docstring); ``["no_validation"]`` accepts anything.
    owner : str, optional
        The class or function the parameter belongs to, for the message.
    kind : {"parameter", "argument"}, default "parameter"
        The word the message uses.

    Raises
    ------
    ValueError
        If ``x`` has a type some constraint takes (a number, a string where options are) but
        meets none (out of range, NaN, an unknown option).
    TypeError
        If no constraint takes a value of ``x``'s type (a bool where a number is expected).
    """
    if "no_validation" in [c for c in constraints if isinstance(c, str)]:
        return
    if any(_meets(x, c) for c in constraints):
        return
    descs = [_describe(c) for c in constraints]
    expected = descs[0] if len(descs) == 1 else f"{', '.join(descs[:-1])} or {descs[-1]}"
    where = f" of {owner}" if owner else ""
    msg = f"The {name!r} {kind}{where} must be {expected}. Got {_received(x)} instead."
    if any(_same_type(x, c) for c in constraints):
        raise ValueError(msg)
    raise TypeError(msg)


def check_params(est: Any) -> None:
    """Check the parameters of ``est`` against its class's ``_parameter_constraints``.

    Parameters
    ----------
    est : BaseEstimator
        A budget_extras estimator; parameters its class does not list are not checked.

    Raises
    ------
    ValueError, TypeError
        As :func:`check_scalar`, for the first parameter that meets none of its constraints.
    """
    table: Mapping[str, Sequence[Any]] = getattr(type(est), "_parameter_constraints", {})
    params = est.get_params(deep=False)
    for name, constraints in table.items():
        check_scalar(params[name], name, constraints, owner=type(est).__name__)
