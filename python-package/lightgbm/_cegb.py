"""lightgbm-cegb: per-feature CEGB parameters given by feature name.

Every per-feature CEGB parameter (``cegb_penalty_feature_lazy``, ``cegb_penalty_feature_coupled``,
``cegb_penalty_feature_split``, ``cegb_feature_group``) accepts, besides a list with one value
per feature, a dict or a pandas Series keyed by feature name (a Series with a default
``RangeIndex`` counts as a positional list). Named values are passed to LightGBM as
``name:value`` pairs, which the C++ side resolves against the training data's feature names
(unknown names, duplicates, negative or non-finite values are errors there). Group ids, named
or positional, must be integers in 0..2**31-1 or -1 (no group); a Series naming a feature twice
is an error.
"""

import math
import numbers
from collections.abc import Mapping
from typing import Any

__all__: list[str] = []

CEGB_PER_FEATURE_PARAMS = (
    "cegb_penalty_feature_lazy",
    "cegb_penalty_feature_coupled",
    "cegb_penalty_feature_split",
    "cegb_feature_group",
)


def _is_1d_array(val: Any) -> bool:
    return type(val).__name__ == "ndarray" and getattr(val, "ndim", 0) == 1


def _is_pandas_series(val: Any) -> bool:
    return type(val).__name__ == "Series" and hasattr(val, "index") and hasattr(val, "to_dict")


def _format_name(key: Any, param: str) -> str:
    name = str(key).replace(" ", "_")
    bad = [c for c in ",:= \t\n" if c in name]
    if not name or bad:
        raise ValueError(
            f"The feature names in '{param}' must be non-empty and contain none of ',', ':', '=' or whitespace. "
            f"Got {key!r} instead."
        )
    return name


INT32_MAX = 2**31 - 1


def _format_group(value: Any, param: str, name: str) -> str:
    """Return the text of a group id: an integer in 0..2**31-1, or -1 for no group (C++ stores int32)."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()  # numpy scalar: checked and shown as the Python number
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, numbers.Real)):
        raise TypeError(
            f"The group of feature '{name}' in '{param}' must be an integer group id in 0..{INT32_MAX} "
            f"(or -1 for no group). Got {value!r} instead."
        )
    if isinstance(value, numbers.Integral):
        group = int(value)
    else:
        number = float(value)
        if not number.is_integer():  # 0.5, nan, inf
            raise ValueError(
                f"The group of feature '{name}' in '{param}' must be an integer group id in 0..{INT32_MAX} "
                f"(or -1 for no group). Got {value!r} instead."
            )
        group = int(number)
    if not -1 <= group <= INT32_MAX:
        raise ValueError(
            f"The group of feature '{name}' in '{param}' must be an integer group id in 0..{INT32_MAX} "
            f"(or -1 for no group). Got {value!r} instead."
        )
    return str(group)


def _format_value(value: Any, param: str, name: str) -> str:
    if param == "cegb_feature_group":
        return _format_group(value, param, name)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"The value of feature '{name}' in '{param}' must be a number. Got {value!r} instead."
        ) from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(
            f"The value of feature '{name}' in '{param}' must be a finite number >= 0. Got {value!r} instead."
        )
    return repr(number)


def cegb_param_to_str(key: str, val: Any) -> str | None:
    """Return the ``key=value`` text of a named per-feature CEGB parameter, or None if not one."""
    if key not in CEGB_PER_FEATURE_PARAMS:
        return None
    if _is_pandas_series(val):
        index = val.index
        if type(index).__name__ == "RangeIndex" and index.start == 0 and index.step == 1:
            val = val.to_numpy()  # positional: like a list
        else:
            if index.has_duplicates:  # to_dict() would keep the last value silently
                twice = sorted({str(name) for name in index[index.duplicated()]})
                raise ValueError(
                    f"'{key}' names feature(s) {', '.join(map(repr, twice))} more than once; "
                    "give each feature once."
                )
            val = val.to_dict()
    if not isinstance(val, Mapping):
        if key == "cegb_feature_group" and (isinstance(val, (list, tuple)) or _is_1d_array(val)):
            # positional group ids: checked here, since LightGBM's int parser reads 0.5 as 0
            groups = [_format_group(v, key, f"#{i}") for i, v in enumerate(val)]
            return f"{key}={','.join(groups)}"
        return None
    if not val:
        raise ValueError(f"'{key}' is an empty mapping: give at least one feature, or leave the parameter out.")
    pairs = []
    for name, value in val.items():
        formatted = _format_name(name, key)
        pairs.append(f"{formatted}:{_format_value(value, key, formatted)}")
    return f"{key}={','.join(pairs)}"
