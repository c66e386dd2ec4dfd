"""LightGBM's private API, used in one place (as LightGBM's own ``compat.py`` collects workarounds).

Everything here reads something LightGBM does not promise to keep. Each entry says when it can
go. The rest of the package imports these functions, never ``lightgbm.basic._*`` itself.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from lightgbm import basic as _basic

__all__ = ["TreeArrays", "construct_dataset", "has_param", "lightgbm_network", "param_aliases", "param_value",
           "tree_arrays"]


# Remove when LightGBM exposes its parameter table publicly: as of 4.7.0 the only reader of
# LGBM_DumpParamAliases is the private lightgbm.basic._ConfigAliases.
@functools.cache
def _all_param_aliases() -> dict[str, frozenset[str]]:
    table = _basic._ConfigAliases._get_all_param_aliases()
    return {name: frozenset([name, *aliases]) for name, aliases in table.items()}


def param_aliases(name: str) -> set[str]:
    """Return ``name`` and every alias the loaded LightGBM library accepts for it.

    Parameters
    ----------
    name : str
        A parameter's main name, e.g. ``"num_leaves"``.

    Returns
    -------
    set of str
        ``{"num_leaves", "num_leaf", "max_leaves", ...}``; ``{name}`` for a name the library
        does not know.
    """
    return set(_all_param_aliases().get(name, frozenset([name])))


def param_value(params: dict[str, Any], name: str, default: Any) -> Any:
    """Return the value ``params`` gives the parameter ``name`` under any alias, else ``default``.

    Where several aliases are set, the first in sorted order (the same key on every call).

    Parameters
    ----------
    params : dict
        LightGBM parameters.
    name : str
        A parameter's main name, e.g. ``"learning_rate"``.
    default : object
        The value when no alias is set (LightGBM's default, as the caller knows it).

    Returns
    -------
    object
    """
    return next((params[a] for a in sorted(param_aliases(name)) if a in params), default)


def has_param(name: str) -> bool:
    """Return True if the loaded LightGBM library knows the parameter ``name`` (a main name or an alias).

    The fork's parameters (``cegb_tradeoff_scale``, ...) are known only to the builds that have them.

    Parameters
    ----------
    name : str
        Parameter name.

    Returns
    -------
    bool
    """
    table = _all_param_aliases()
    return name in table or any(name in aliases for aliases in table.values())


# Remove when LightGBM's Python package can start and stop its network by itself outside
# lgb.train (as of 4.7.0 only the private _LIB handle reaches LGBM_NetworkInit).
@contextmanager
def lightgbm_network(machines: str, *, port: int, timeout_minutes: int, num_machines: int) -> Iterator[None]:
    """Initialize LightGBM's socket network for the calls in the ``with`` block, then free it.

    Parameters
    ----------
    machines : str
        ``"ip1:port1,ip2:port2"``, as LightGBM's ``machines`` parameter.
    port : int
        This machine's listening port.
    timeout_minutes : int
        LightGBM's ``time_out`` (minutes to wait for the other machines).
    num_machines : int
        Number of machines in the network.

    Yields
    ------
    None
    """
    _basic._safe_call(
        _basic._LIB.LGBM_NetworkInit(
            _basic._c_str(machines), ctypes.c_int(port), ctypes.c_int(timeout_minutes), ctypes.c_int(num_machines)
        )
    )
    try:
        yield
    finally:
        _basic._safe_call(_basic._LIB.LGBM_NetworkFree())


# Remove when lightgbm offers a public call that merges training parameters into a Dataset
# (as of 4.7.0 lightgbm.train does it through the private Dataset._update_params).
def construct_dataset(train_set: Any, params: dict[str, Any]) -> Any:
    """Bin ``train_set`` with ``params`` exactly as ``lightgbm.train`` does, without training.

    Parameters
    ----------
    train_set : lightgbm.Dataset
        The (not yet constructed) training set.
    params : dict
        The training parameters.

    Returns
    -------
    lightgbm.Dataset
        ``train_set``, constructed.
    """
    return train_set._update_params(params).construct()


@dataclass(frozen=True)
class TreeArrays:
    """A booster's trees as the model text's per-tree lines write them, concatenated in tree order.

    ``num_leaves`` per tree; ``split_feature`` (real feature indices), ``left_child`` and
    ``right_child`` per internal node (``num_leaves - 1`` per tree); ``leaf_value`` per leaf;
    ``objective``: the header's ``objective=`` value (empty without one); ``max_feature_idx`` and
    ``per_iteration`` (``num_tree_per_iteration``) as the header writes them; ``linear``: some
    tree is a linear tree; ``average_output``: the trees are averaged (a random forest).
    """

    num_leaves: np.ndarray
    split_feature: np.ndarray
    left_child: np.ndarray
    right_child: np.ndarray
    leaf_value: np.ndarray
    objective: str
    max_feature_idx: int
    per_iteration: int
    linear: bool
    average_output: bool


_TREE_ARRAYS = "LGBM_BoosterGetTreeArrays"


@functools.cache
def _has_tree_arrays() -> bool:
    return hasattr(_basic._LIB, _TREE_ARRAYS)


def _pointer(a: np.ndarray, ctype: Any) -> Any:
    return a.ctypes.data_as(ctypes.POINTER(ctype))


# Remove never: LGBM_BoosterGetTreeArrays is the lightgbm-cegb fork's own C API (patch 0033); the
# Booster's handle is private to lightgbm.
def tree_arrays(booster: Any) -> TreeArrays | None:
    """Return the trees of ``booster.model_to_string()`` as arrays, without writing the text; None on upstream.

    The trees are those the text holds: every iteration, or the first ``best_iteration`` ones
    where the booster has one. The numbers are those the text's lines read back as (the leaf
    values are written with 17 significant digits).

    Parameters
    ----------
    booster : lightgbm.Booster
        A booster of the loaded LightGBM library.

    Returns
    -------
    TreeArrays or None
        None where the library has no ``LGBM_BoosterGetTreeArrays`` (upstream LightGBM).
    """
    if not _has_tree_arrays():
        return None
    fn = getattr(_basic._LIB, _TREE_ARRAYS)
    sizes = [ctypes.c_int64(0) for _ in range(4)]
    flags = ctypes.c_int(0)
    null = [None] * 6
    _basic._safe_call(fn(booster._handle, *(ctypes.c_int64(0),) * 4, *map(ctypes.byref, sizes),
                         ctypes.byref(flags), *null))
    n_trees, n_nodes, n_leaves, n_name = (max(1, s.value) for s in sizes)
    num_leaves = np.empty(n_trees, dtype=np.int32)
    feature, left, right = (np.empty(n_nodes, dtype=np.int32) for _ in range(3))
    value = np.empty(n_leaves, dtype=np.float64)
    name = ctypes.create_string_buffer(n_name)
    _basic._safe_call(fn(booster._handle, ctypes.c_int64(n_trees), ctypes.c_int64(n_nodes), ctypes.c_int64(n_leaves),
                         ctypes.c_int64(n_name), *map(ctypes.byref, sizes), ctypes.byref(flags),
                         _pointer(num_leaves, ctypes.c_int32), _pointer(feature, ctypes.c_int32),
                         _pointer(left, ctypes.c_int32), _pointer(right, ctypes.c_int32),
                         _pointer(value, ctypes.c_double), name))
    k = booster.num_model_per_iteration()
    used = sizes[0].value if booster.best_iteration <= 0 else min(sizes[0].value, booster.best_iteration * k)
    num_leaves = num_leaves[:used].astype(np.int64)
    nodes, leaves = int((num_leaves - 1).sum()), int(num_leaves.sum())
    return TreeArrays(num_leaves, feature[:nodes].astype(np.int64), left[:nodes].astype(np.int64),
                      right[:nodes].astype(np.int64), value[:leaves].copy(), name.value.decode(),
                      booster.num_feature() - 1, k, bool(flags.value & 1), bool(flags.value & 2))
