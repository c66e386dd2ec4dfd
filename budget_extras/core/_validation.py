"""Shared input checks.

Every public function validates its inputs in one place (a ``_*_iv`` function in its own
module) with the helpers below. Errors name the argument, what was expected and what was
received.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ._params import is_real

__all__ = [
    "align_columns",
    "check_array_2d",
    "check_bool_matrix",
    "check_booster",
    "check_finite_labels",
    "check_finite_nonnegative",
    "check_index_array",
    "check_mask_or_indices",
    "check_model_text",
    "check_n_trees",
    "check_nonnegative_scalar",
    "check_positive",
    "check_tree_order",
    "check_unique_items",
    "column_names",
    "pandas_categories",
]


def check_unique_items(
    x: Any, *, name: str, what: str = "feature", key: Any = None, owner: str | None = None
) -> dict[Any, Any]:
    """Return the ``key -> value`` pairs of a dict or pandas Series, refusing a key given twice.

    A Series with a repeated index (or keys equal after ``key``, e.g. ``1`` and ``"1"`` under
    ``str``) would otherwise resolve silently to the last value.

    Parameters
    ----------
    x : mapping or pandas.Series
    name : str
        Parameter name for the message.
    what : str, default "feature"
        What a key names ("feature", "group").
    key : callable, optional
        Normalization of the keys (e.g. ``str``) before the check.
    owner : str, optional
        Function name for the message.

    Raises
    ------
    ValueError
        Naming the parameter, the repeated key and both values.
    """
    where = f"The {name!r} " + ("parameter" if owner is None else f"argument of {owner}")
    seen: dict[Any, Any] = {}
    for k, v in x.items():
        kk = key(k) if key is not None else k
        if kk in seen:
            raise ValueError(
                f"{where} gives {what} {kk!r} twice ({seen[kk]!r} and {v!r}); give each {what} once."
            )
        seen[kk] = v
    return seen


def _describe(x: Any) -> str:
    """Short description of a received value for error messages."""
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape} and dtype {x.dtype}"
    text = repr(x)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} (type {type(x).__name__})"


def _first_non_number(X: Any) -> str:
    """Describe what keeps ``X`` from being numbers: its first non-numeric column and value if 2-D."""
    if isinstance(X, np.ndarray) and X.ndim == 2:
        for j in range(X.shape[1]):
            for v in X[:, j]:
                try:
                    float(v)
                except (TypeError, ValueError):
                    return f"{v!r:.40} (type {type(v).__name__}) in column {j}"
    return _describe(X)


def _pandas_to_array(
    X: Any, *, name: str, pandas_categorical: Sequence[Sequence[Any]] | None
) -> npt.NDArray[np.float64]:
    """Convert a DataFrame the way LightGBM does: categorical columns become their codes.

    With ``pandas_categorical`` (the category lists stored in the model), each categorical
    column is recoded to the stored categories, so unseen categories become NaN exactly as
    in ``Booster.predict``.
    """
    import pandas as pd

    cat_cols = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    if cat_cols:
        X = X.copy()
        if pandas_categorical is not None and len(pandas_categorical) != len(cat_cols):
            raise ValueError(
                f"The {name!r} DataFrame has {len(cat_cols)} categorical columns but the model was "
                f"trained with {len(pandas_categorical)}."
            )
        for j, col in enumerate(cat_cols):
            ser = X[col]
            if pandas_categorical is not None:
                ser = ser.cat.set_categories(list(pandas_categorical[j]))
            codes = ser.cat.codes.to_numpy().astype(np.float64)
            codes[codes < 0] = np.nan
            X[col] = codes
    bad = [
        c for c in X.columns if not (pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c]))
    ]
    if bad:
        raise TypeError(
            f"The {name!r} DataFrame must have numeric, bool or categorical columns. "
            f"Got non-numeric columns {bad[:5]!r}."
        )
    return np.asarray(X.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)


def _is_default_names(names: Sequence[str]) -> bool:
    """Return True for LightGBM's generated names ``Column_0, Column_1, ...`` (no real names)."""
    return all(str(f) == f"Column_{i}" for i, f in enumerate(names))


def _has_column_names(X: Any) -> bool:
    """Return True when a DataFrame's columns are names (not the integer positions 0, 1, ...)."""
    import pandas as pd

    cols = X.columns
    if isinstance(cols, pd.RangeIndex):
        return False
    return not all(isinstance(c, numbers.Integral) for c in cols)


def column_names(X: Any) -> tuple[str, ...] | None:
    """Return a DataFrame's column names as LightGBM stores them (None without names).

    Parameters
    ----------
    X : object
        Data; only a pandas DataFrame has column names.
    """
    import pandas as pd

    if not isinstance(X, pd.DataFrame) or not _has_column_names(X):
        return None
    return tuple(str(c).replace(" ", "_") for c in X.columns)


def pandas_categories(X: Any) -> list[list[Any]] | None:
    """Return the categories of a DataFrame's categorical columns, as LightGBM stores them.

    Returns None for anything else than a DataFrame with categorical columns. Passing the
    result as ``pandas_categorical`` to :func:`check_array_2d` maps later data exactly as the
    training data were mapped (unseen categories become NaN).

    Parameters
    ----------
    X : object
        Data; only a pandas DataFrame has categorical columns.
    """
    import pandas as pd

    if not isinstance(X, pd.DataFrame):
        return None
    cats = [X[c].cat.categories.tolist() for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    return cats or None


def align_columns(X: Any, feature_names: Sequence[str] | None, *, name: str = "X") -> Any:
    """Return the DataFrame ``X`` with its columns in the model's feature order, matched by name.

    The one column rule of ``budget_extras`` (docs/representation.md, "Input data"): when ``X``
    has column names and the model has feature names (not LightGBM's generated
    ``Column_0, Column_1, ...``), the columns are matched by name and reordered to the model's
    order; a column the model does not have, or a model feature ``X`` lacks, is an error
    naming them. Otherwise (no names on either side) columns are read by position. Names are
    compared as LightGBM stores them: ``str(column)`` with spaces replaced by ``_``.

    Parameters
    ----------
    X : pandas.DataFrame
        The data.
    feature_names : sequence of str or None
        The model's feature names.
    name : str, default "X"
        Argument name used in error messages.

    Returns
    -------
    pandas.DataFrame
        ``X`` itself when already in order (or read by position), else a reordered copy.

    Raises
    ------
    ValueError
        If the names do not match the model's (missing, extra or repeated columns).
    """
    if feature_names is None or _is_default_names(feature_names) or not _has_column_names(X):
        return X
    cols = [str(c).replace(" ", "_") for c in X.columns]
    wanted = [str(f) for f in feature_names]
    if cols == wanted:
        return X
    seen: set[str] = set()
    repeated = [c for c in cols if c in seen or seen.add(c)]  # type: ignore[func-returns-value]
    if repeated:
        raise ValueError(f"The {name!r} DataFrame names columns more than once: {repeated[:5]!r}.")
    have, want = set(cols), set(wanted)
    missing = [f for f in wanted if f not in have]
    extra = [str(c) for c, n in zip(X.columns, cols, strict=True) if n not in want]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing model features {missing[:6]!r}{' ...' if len(missing) > 6 else ''}")
        if extra:
            parts.append(f"columns not in the model {extra[:6]!r}{' ...' if len(extra) > 6 else ''}")
        raise ValueError(
            f"The {name!r} DataFrame's columns must be the model's {len(wanted)} features, matched "
            f"by name. Got {'; '.join(parts)}."
        )
    position = {c: j for j, c in enumerate(cols)}
    return X.iloc[:, [position[f] for f in wanted]]


def check_array_2d(
    X: Any,
    *,
    name: str = "X",
    n_features: int | None = None,
    pandas_categorical: Sequence[Sequence[Any]] | None = None,
    feature_names: Sequence[str] | None = None,
) -> npt.NDArray[np.float64]:
    """Return ``X`` as a C-contiguous float64 array of shape (n_rows, n_features).

    This is the one input path of every method: numpy arrays of any numeric dtype, scipy
    sparse matrices (densified), and pandas DataFrames (columns matched to the model by name,
    see :func:`align_columns`; categorical columns recoded as LightGBM recodes them).

    Parameters
    ----------
    X : array-like, scipy.sparse matrix or pandas.DataFrame
        The data. DataFrames with categorical columns are converted to category codes as
        LightGBM does (with the model's stored categories when given; unseen categories
        become NaN).
    name : str, optional
        Argument name used in error messages.
    n_features : int, optional
        Required number of columns.
    pandas_categorical : sequence of sequences, optional
        The category lists stored in the model (``pandas_categorical``).
    feature_names : sequence of str, optional
        The model's feature names: a DataFrame's columns are matched to them by name.

    Returns
    -------
    numpy.ndarray
        C-contiguous float64 array (``X`` itself when it already is one; callers never
        write to it).

    Raises
    ------
    TypeError
        If ``X`` cannot be converted to a float array.
    ValueError
        If ``X`` is not 2-D, has the wrong number of columns or columns that do not match
        the model's feature names.
    """
    try:
        import pandas as pd

        is_df = isinstance(X, pd.DataFrame)
    except ImportError:  # pragma: no cover - pandas is a dependency
        is_df = False
    if is_df:
        X = align_columns(X, feature_names, name=name)
        arr = _pandas_to_array(X, name=name, pandas_categorical=pandas_categorical)
    else:
        if hasattr(X, "toarray") and callable(X.toarray):
            X = X.toarray()
        if np.iscomplexobj(X):
            raise ValueError(f"The {name!r} argument must hold real numbers. Complex data not supported.")
        try:
            arr = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"The {name!r} argument must be a 2-D array of numbers. Got {_first_non_number(X)} instead."
            ) from exc
    if arr.ndim != 2:
        raise ValueError(
            f"The {name!r} argument must be 2-D (n_rows, n_features). Got shape {arr.shape}. "
            "Reshape your data with X.reshape(1, -1) for a single row."
        )
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(
            f"The {name!r} argument must have {n_features} columns (the model's number of features). "
            f"Got {arr.shape[1]} columns."
        )
    return np.ascontiguousarray(arr)


def check_nonnegative_scalar(x: Any, *, name: str) -> float:
    """Return ``x`` as a float after checking it is a finite number >= 0.

    Parameters
    ----------
    x : object
        The value given.
    name : str
        The argument's name, used in error messages.
    """
    return check_positive(x, name=name, allow_zero=True)


def check_positive(x: Any, *, name: str, owner: str | None = None, allow_zero: bool = False) -> float:
    """Return ``x`` as a float after checking it is a finite number > 0 (>= 0 with ``allow_zero``).

    Parameters
    ----------
    x : object
        The value.
    name : str
        Parameter name for the message.
    owner : str, optional
        Class or function name for the message ("The 'budget' parameter of BudgetPrune ...").
    allow_zero : bool, default False
        Accept 0.

    Returns
    -------
    float
    """
    what = f"The {name!r} parameter" + (f" of {owner}" if owner else "")
    expected = "a finite number >= 0" if allow_zero else "a positive finite number"
    if not is_real(x):
        raise TypeError(f"{what} must be {expected}. Got {_describe(x)} instead.")
    value = float(x)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{what} must be {expected}. Got {value!r} instead.")
    return value


def check_finite_nonnegative(x: Any, *, name: str, length: int | None = None) -> npt.NDArray[np.float64]:
    """Return ``x`` as a 1-D float64 array after checking every entry is finite and >= 0.

    Parameters
    ----------
    x : scalar or array-like
        The value given (a scalar is broadcast to ``length``).
    name : str
        The argument's name, used in error messages.
    length : int, optional
        The required number of entries.
    """
    try:
        arr = np.array(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"The {name!r} parameter must be a 1-D array of numbers. Got {_describe(x)}."
        ) from exc
    if arr.ndim != 1:
        raise ValueError(f"The {name!r} parameter must be 1-D. Got shape {arr.shape}.")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"The {name!r} parameter must have length {length}. Got length {arr.shape[0]}.")
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"The {name!r} parameter must contain finite numbers >= 0. Got {float(arr[i])!r} at position {i}."
        )
    return arr


def check_finite_labels(y: Any, *, name: str, owner: str | None = None) -> npt.NDArray[Any]:
    """Return labels ``y`` as an array after checking that numeric labels are all finite.

    The one label check of every fit: a NaN or infinite label is refused with the argument's
    name and how many there are (a NaN label would train or score silently on garbage). Labels
    that are not numbers (class names) are returned unchecked.

    Parameters
    ----------
    y : array-like
        The labels given.
    name : str
        The argument's name, used in error messages.
    owner : str, optional
        Function or class name for the message ("The 'y' argument of CSTC.fit ...").

    Returns
    -------
    numpy.ndarray
        ``numpy.asarray(y)``.

    Raises
    ------
    ValueError
        If a numeric label is NaN or infinite.
    """
    arr = np.asarray(y)
    if arr.dtype.kind not in "biufO":
        return arr
    try:
        values = arr.astype(np.float64)
    except (TypeError, ValueError):  # class names in an object array
        return arr
    bad = ~np.isfinite(values)
    if bad.any():
        what = f"The {name!r} argument" + (f" of {owner}" if owner else "")
        n_nan = int(np.isnan(values).sum())
        raise ValueError(
            f"{what} must hold finite labels. Got {n_nan} NaN and {int(bad.sum()) - n_nan} infinite "
            f"of {values.size} labels (the first at position {int(np.flatnonzero(bad.ravel())[0])})."
        )
    return arr


def check_index_array(x: Any, *, name: str, upper: int) -> npt.NDArray[np.int64]:
    """Return ``x`` as a 1-D int64 array with entries in ``[0, upper)``.

    Parameters
    ----------
    x : array-like of int
        The indices given.
    name : str
        The argument's name, used in error messages.
    upper : int
        One past the largest valid index.
    """
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"The {name!r} parameter must be a 1-D array of integers. Got shape {arr.shape}.")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"The {name!r} parameter must contain integers. Got dtype {arr.dtype}.")
    arr = arr.astype(np.int64)
    bad = (arr < 0) | (arr >= upper)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"The {name!r} parameter must contain integers in [0, {upper}). "
            f"Got {int(arr[i])} at position {i}."
        )
    return arr



def check_mask_or_indices(x: Any, *, name: str, n: int) -> npt.NDArray[np.int64]:
    """Return the indices ``x`` selects: a boolean mask of shape ``(n,)``, or indices in ``[0, n)``.

    Parameters
    ----------
    x : array-like of bool or int
        The mask or the indices given (indices of any shape are flattened).
    name : str
        The argument's name, used in error messages.
    n : int
        How many items there are to select from.
    """
    arr = np.asarray(x)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ValueError(f"The {name!r} mask must have shape ({n},). Got shape {arr.shape}.")
        return np.flatnonzero(arr)
    return check_index_array(arr.ravel(), name=name, upper=n)


def check_tree_order(tree_order: Any, n_trees: int) -> npt.NDArray[np.int64]:
    """Return the tree evaluation order (default: 0..n_trees-1); it must not repeat a tree.

    Parameters
    ----------
    tree_order : array-like of int or None
        The order given; None for model order.
    n_trees : int
        Number of trees of the model.
    """
    if tree_order is None:
        return np.arange(n_trees, dtype=np.int64)
    order = check_index_array(tree_order, name="tree_order", upper=n_trees)
    if np.unique(order).size != order.size:
        raise ValueError("The 'tree_order' parameter must not list a tree twice. Got repeated tree indices.")
    return order


def check_n_trees(n_trees: Any, *, n_rows: int, n_order: int) -> npt.NDArray[np.int64]:
    """Return the per-row number of evaluated trees (an int or one int per row) as int64 (n_rows,).

    Parameters
    ----------
    n_trees : int, array-like of int or None
        Trees evaluated per row; None for all of the order.
    n_rows : int
        Number of rows.
    n_order : int
        Length of the tree order.
    """
    if n_trees is None:
        return np.full(n_rows, n_order, dtype=np.int64)
    arr = np.asarray(n_trees)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(
            f"The 'n_trees' parameter must be an int or an array of ints. Got {_describe(n_trees)} instead."
        )
    if arr.ndim == 0:
        arr = np.full(n_rows, int(arr), dtype=np.int64)
    if arr.shape != (n_rows,):
        raise ValueError(f"The 'n_trees' parameter must have shape ({n_rows},). Got shape {arr.shape}.")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() > n_order):
        raise ValueError(
            f"The 'n_trees' parameter must be in [0, {n_order}] (the number of trees in the order). "
            f"Got values in [{arr.min()}, {arr.max()}]."
        )
    return arr


def check_bool_matrix(used: Any, *, name: str, n_features: int) -> Any:
    """Return a boolean (n_rows, n_features) matrix as scipy.sparse CSR (int8 data) or dense bool.

    Parameters
    ----------
    used : array-like or scipy.sparse matrix
        The matrix given.
    name : str
        The argument's name, used in error messages.
    n_features : int
        The required number of columns.
    """
    import scipy.sparse as sp

    if sp.issparse(used):
        m = sp.csr_matrix(used)
        if m.shape[1] != n_features:
            raise ValueError(f"The {name!r} matrix must have {n_features} columns. Got shape {m.shape}.")
        m = (m != 0).astype(np.int8)
        return m
    arr = np.asarray(used)
    if arr.ndim != 2 or arr.shape[1] != n_features:
        raise ValueError(
            f"The {name!r} matrix must have shape (n_rows, {n_features}). Got shape {arr.shape}."
        )
    return arr.astype(bool)


def check_model_text(model: Any, *, owner: str | None = None, parse: bool = False) -> str:
    """Return the LightGBM model text of ``model``.

    Parameters
    ----------
    model : lightgbm.Booster, LGBMModel, TreeEnsemble, str or os.PathLike
        A Booster, a fitted scikit-learn estimator, the core's ``TreeEnsemble``, a model file
        path or model text.
    owner : str, optional
        Function name for the messages ("The 'model' argument of BudgetPrune.fit ...").
    parse : bool, default False
        Also parse the text with the core loader (``core._parse``), so a truncated, cyclic or
        otherwise broken model is refused with ``ModelParseError`` before LightGBM's own
        loader (which can crash the process on such files) ever sees it. The CLI does this
        for every model file it reads.

    Returns
    -------
    str

    Raises
    ------
    ModelParseError
        If ``parse`` and the text is not a well-formed LightGBM model (the message names the
        file when ``model`` is a path).
    ValueError
        If a string is neither model text nor an existing file.
    TypeError
        If ``model`` is of another type.
    """
    text = _model_text(model, owner)
    if parse:
        from ._builder import ModelParseError
        from ._parse import parse_model_string

        try:
            parse_model_string(text)
        except ModelParseError as exc:
            if isinstance(model, str | os.PathLike) and "\n" not in os.fspath(model):
                raise ModelParseError(f"{os.fspath(model)}: {exc}") from None
            raise
    return text


def _model_text(model: Any, owner: str | None) -> str:
    what = "The 'model' argument" + (f" of {owner}" if owner else "")
    if isinstance(model, str | os.PathLike):
        s = os.fspath(model)
        if "\n" in s and "Tree=" in s:
            return s
        if not os.path.isfile(s):
            raise ValueError(
                f"{what} must be a LightGBM model, a model file or model text. "
                f"Got the string {s[:80]!r}, which is neither an existing file nor model text."
            )
        with open(s, encoding="utf-8", newline="") as fh:
            return fh.read()
    booster = getattr(model, "booster_", model)
    for name in ("model_to_string", "to_model_string"):
        fn = getattr(booster, name, None)
        if callable(fn):
            text = fn()
            if isinstance(text, str):
                return text
    raise TypeError(
        f"{what} must be a lightgbm.Booster, a fitted LGBMModel, a TreeEnsemble, "
        f"a model file path or model text. Got {type(model).__name__} instead."
    )


def is_model(x: Any) -> bool:
    """Return True for what a method accepts as a LightGBM model (not data).

    A ``lightgbm.Booster``, a fitted ``LGBMModel``, a ``TreeEnsemble``, a model file path or
    model text. The estimators use it to recognize the old call forms that passed the model
    to ``fit`` (deprecated: the model goes in the constructor).

    Parameters
    ----------
    x : object
        The value given.
    """
    if isinstance(x, str | os.PathLike):
        return True
    if hasattr(x, "model_to_string") or hasattr(x, "to_model_string"):
        return True
    return hasattr(getattr(x, "booster_", None), "model_to_string")


def check_booster(model: Any, *, owner: str | None = None) -> Any:
    """Return ``model`` as a ``lightgbm.Booster``.

    A Booster is returned as is and a fitted estimator's ``booster_`` as is; anything else is
    loaded from :func:`check_model_text` (same inputs and errors).

    Parameters
    ----------
    model : lightgbm.Booster, LGBMModel, TreeEnsemble, str or os.PathLike
        The model, a model file path or model text.
    owner : str, optional
        The class whose argument this is, used in error messages.
    """
    import lightgbm as lgb

    if isinstance(model, lgb.Booster):
        return model
    if isinstance(getattr(model, "booster_", None), lgb.Booster):
        return model.booster_
    return lgb.Booster(model_str=check_model_text(model, owner=owner))
