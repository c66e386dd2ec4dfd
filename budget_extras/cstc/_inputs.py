"""The checks of CSTC's inputs: the rows, the targets and the ``lams`` of the budget search."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core._validation import check_array_2d, check_finite_labels, column_names, pandas_categories
from ._features import _read_weak_learners

__all__: list[str] = []

FloatArray = npt.NDArray[np.float64]


def check_X(
    X: Any,
    name: str,
    n_features: int | None = None,
    feature_names: Any = None,
    pandas_categorical: Any = None,
) -> FloatArray:
    """Return the rows ``X`` as float64 (the core's input path); at least one row and one column."""
    arr = check_array_2d(
        X, name=name, n_features=n_features, feature_names=feature_names, pandas_categorical=pandas_categorical
    )
    if arr.shape[0] == 0:
        raise ValueError(f"The {name!r} argument of CSTC must have at least one row. Got shape {arr.shape}.")
    if arr.shape[1] == 0:
        raise ValueError(
            f"The {name!r} argument of CSTC has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    return arr


def check_lams(lams: Any) -> None:
    """Validate what the parameter table cannot: the entries of ``lams``."""
    if lams is not None:
        arr = np.asarray(lams, dtype=np.float64).reshape(-1) if _is_numeric_seq(lams) else None
        if arr is None or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError(
                f"The 'lams' parameter of CSTC must be a non-empty sequence of non-negative finite numbers "
                f"or None. Got {lams!r} instead."
            )


def _is_numeric_seq(v: Any) -> bool:
    try:
        np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return not isinstance(v, str | bytes)


def encode_y(
    y: npt.NDArray[Any], task: str, classes: npt.NDArray[Any] | None
) -> tuple[npt.NDArray[Any] | None, FloatArray, FloatArray]:
    """Return ``(classes, targets of the GBRT (squared loss), targets of the CSTC loss)``.

    ``classes``: None while fitting (read from ``y`` for ``task="binary"``), else the fitted ones.
    """
    if task == "regression":
        try:
            yf = y.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError("The 'y' argument of CSTC.fit must be numeric for task='regression'.") from exc
        if not np.all(np.isfinite(yf)):
            raise ValueError("The 'y' argument of CSTC.fit must be finite for task='regression'.")
        return classes, yf, yf
    if classes is None:
        classes = np.unique(y)
        if classes.shape[0] != 2:
            raise ValueError(
                f"The 'y' argument of CSTC.fit must hold exactly two classes for task='binary'. "
                f"Got {classes.shape[0]} classes instead."
            )
    pos = y == classes[1]
    if not np.all(pos | (y == classes[0])):
        raise ValueError(f"The labels of CSTC must be among the fitted classes {classes.tolist()}.")
    return classes, pos.astype(np.float64), np.where(pos, 1.0, -1.0)


def check_targets(
    y: Any, n_rows: int, task: str, classes: npt.NDArray[Any] | None, name: str = "y"
) -> tuple[npt.NDArray[Any] | None, FloatArray, FloatArray]:
    """Check ``y`` (``name``: ``"y"`` or ``"y_valid"``) against the rows, then :func:`encode_y` it."""
    raw = check_finite_labels(y, name=name, owner="CSTC.fit").reshape(-1)
    if name == "y" and raw.shape[0] != n_rows:
        raise ValueError(
            f"The 'y' argument of CSTC.fit must have one entry per row of X ({n_rows}). "
            f"Got {raw.shape[0]} instead."
        )
    out = encode_y(raw, task, classes)
    if name != "y" and out[2].shape[0] != n_rows:
        raise ValueError(f"The {name!r} argument of CSTC.fit must have {n_rows} entries. Got {out[2].shape[0]}.")
    return out


@dataclass(frozen=True)
class FitData:
    """The checked data of one fit (private).

    ``y_gbrt``: targets of the weak learners' squared loss; ``y_int``, ``y_valid``: targets of
    the CSTC loss (regression values, or -1/+1); ``feature_names`` and ``pandas_categorical``:
    those of the given booster when it names its features, else those of ``X``.
    """

    X: FloatArray
    y_gbrt: FloatArray
    y_int: FloatArray
    X_valid: FloatArray | None
    y_valid: FloatArray | None
    classes: npt.NDArray[Any] | None
    feature_names: tuple[str, ...] | None
    pandas_categorical: list[list[Any]] | None


def check_fit_data(X: Any, y: Any, X_valid: Any, y_valid: Any, booster: Any, task: str) -> FitData:
    """Check the training and validation data of a fit against each other and the given ``booster``."""
    names_x, cats = column_names(X), pandas_categories(X)
    n_model: int | None = None
    if booster is not None:
        wl = _read_weak_learners(booster)
        n_model, cats = wl.n_features, wl.ensemble.pandas_categorical
        model_names = wl.ensemble.feature_names
        if not all(f == f"Column_{i}" for i, f in enumerate(model_names)):
            names_x = model_names
    Xa = check_X(X, "X", n_model, names_x, cats)
    classes, y_gbrt, y_int = check_targets(y, Xa.shape[0], task, None)
    Xv = yv = None
    if X_valid is not None:
        if y_valid is None:
            raise ValueError("The 'y_valid' argument of CSTC.fit is required with 'X_valid'. Got None.")
        Xv = check_X(X_valid, "X_valid", Xa.shape[1], names_x, cats)
        yv = check_targets(y_valid, Xv.shape[0], task, classes, name="y_valid")[2]
    return FitData(Xa, y_gbrt, y_int, Xv, yv, classes, names_x, cats)
