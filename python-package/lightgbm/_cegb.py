"""lightgbm-cegb: per-feature CEGB parameters given by feature name.

Every per-feature CEGB parameter (``cegb_penalty_feature_lazy``, ``cegb_penalty_feature_coupled``,
``cegb_penalty_feature_split``, ``cegb_feature_group``) accepts, besides a list with one value
per feature, a dict or a pandas Series keyed by feature name (a Series with a default
``RangeIndex`` counts as a positional list). Named values are passed to LightGBM as
``name:value`` pairs, which the C++ side resolves against the training data's feature names
(unknown names, duplicates, negative or non-finite values are errors there). Group ids, named
or positional, must be integers in 0..2**31-1 or -1 (no group); a Series naming a feature twice
is an error.

``cegb_cost_file`` accepts a path (``str`` or ``os.PathLike``) or a cost object: any object with
a ``to_cegb_params()`` method returning these per-feature parameters (``budget_extras``'
``FeatureCosts`` has one; this package does not import ``budget_extras``). The object is
expanded into its parameters before LightGBM sees them; a per-feature parameter given both
by the object and on its own is an error, as with a cost file.
"""

import math
import numbers
import os
from collections.abc import Mapping
from typing import Any, Dict

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
    bad = [c for c in ',:= \t\n"' if c in name]
    if not name or bad:
        raise ValueError(
            f"The feature names in '{param}' must be non-empty and contain none of ',', ':', '=', '\"' or "
            "whitespace. "
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


def _quoted_path(path: str) -> str:
    """Return ``path`` in double quotes if it holds whitespace (the C API splits parameters at whitespace)."""
    if '"' in path:
        raise ValueError(f"The 'cegb_cost_file' parameter must be a path without '\"'. Got {path!r} instead.")
    return f'"{path}"' if any(c.isspace() for c in path) else path


def expand_cegb_cost_file(params: Dict[str, Any]) -> Dict[str, Any]:
    """Return ``params`` with ``cegb_cost_file`` as a path (quoted if it holds whitespace) or a cost object expanded.

    A cost object (one with a ``to_cegb_params()`` method, e.g. ``budget_extras.FeatureCosts``)
    is replaced by the per-feature parameters it returns.
    """
    val = params.get("cegb_cost_file")
    if val is None:
        return params
    if isinstance(val, (str, os.PathLike)):
        return {**params, "cegb_cost_file": _quoted_path(os.fspath(val))}
    to_params = getattr(val, "to_cegb_params", None)
    if not callable(to_params):
        raise TypeError(
            "The 'cegb_cost_file' parameter must be the path of a costs CSV (str or os.PathLike) or a cost "
            "object with a to_cegb_params() method (budget_extras.FeatureCosts). "
            f"Got {type(val).__name__} instead."
        )
    expanded = to_params()
    if not isinstance(expanded, Mapping) or not set(expanded) <= set(CEGB_PER_FEATURE_PARAMS):
        raise TypeError(
            f"The 'cegb_cost_file' parameter's {type(val).__name__}.to_cegb_params() must return a dict whose keys "
            f"are among {', '.join(CEGB_PER_FEATURE_PARAMS)}. Got {expanded!r} instead."
        )
    twice = [key for key in expanded if params.get(key) is not None]
    if twice:
        raise ValueError(
            f"'{twice[0]}' is given more than once: by its own parameter and by cegb_cost_file="
            f"{type(val).__name__}: give it once."
        )
    out = {key: value for key, value in params.items() if key != "cegb_cost_file"}
    out.update(expanded)
    return out


def continued_params(loaded: Dict[str, Any], params: Dict[str, Any]) -> Dict[str, Any]:
    """Return ``dict(loaded, **params)``: a model's parameters updated with those of its continued training.

    When ``params`` gives costs (``cegb_cost_file`` or a per-feature cost parameter), the loaded
    model's own cost parameters are left out: a model read from a file carries its costs as
    trained, as per-feature parameters, and with a ``cegb_cost_file`` cost object in ``params``
    they would be given twice.
    """
    cost_keys = {"cegb_cost_file", *CEGB_PER_FEATURE_PARAMS}
    if any(params.get(key) is not None for key in cost_keys):
        loaded = {key: value for key, value in loaded.items() if key not in cost_keys}
    return dict(loaded, **params)
