"""lightgbm-cegb: per-feature CEGB parameters given by feature name.

Every per-feature CEGB parameter (``cegb_penalty_feature_lazy``, ``cegb_penalty_feature_coupled``,
``cegb_penalty_feature_split``, ``cegb_feature_group``) accepts, besides a list with one value
per feature, a dict or a pandas Series keyed by feature name (a Series with a default
``RangeIndex`` counts as a positional list). Named values are passed to LightGBM as
``name:value`` pairs, which the C++ side resolves against the training data's feature names
(unknown names, duplicates, negative or non-finite values are errors there).
"""

import math
from collections.abc import Mapping
from typing import Any

__all__: list[str] = []

CEGB_PER_FEATURE_PARAMS = (
    "cegb_penalty_feature_lazy",
    "cegb_penalty_feature_coupled",
    "cegb_penalty_feature_split",
    "cegb_feature_group",
)


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


def _format_value(value: Any, param: str, name: str) -> str:
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
    if param == "cegb_feature_group":
        if number != int(number):
            raise ValueError(
                f"The group of feature '{name}' in '{param}' must be an integer >= 0. Got {value!r} instead."
            )
        return str(int(number))
    return repr(number)


def cegb_param_to_str(key: str, val: Any) -> str | None:
    """Return the ``key=value`` text of a named per-feature CEGB parameter, or None if not one."""
    if key not in CEGB_PER_FEATURE_PARAMS:
        return None
    if _is_pandas_series(val):
        index = val.index
        if type(index).__name__ == "RangeIndex" and index.start == 0 and index.step == 1:
            return None  # positional: handled like a list by the caller
        val = val.to_dict()
    if not isinstance(val, Mapping):
        return None
    if not val:
        raise ValueError(f"'{key}' is an empty mapping: give at least one feature, or leave the parameter out.")
    pairs = []
    for name, value in val.items():
        formatted = _format_name(name, key)
        pairs.append(f"{formatted}:{_format_value(value, key, formatted)}")
    return f"{key}={','.join(pairs)}"
