"""LightGBM's private API, used in one place (as LightGBM's own ``compat.py`` collects workarounds).

Everything here reads something LightGBM does not promise to keep. Each entry says when it can
go. The rest of the package imports these functions, never ``lightgbm.basic._*`` itself.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lightgbm import basic as _basic

__all__ = ["construct_dataset", "has_param", "lightgbm_network", "param_aliases", "param_value"]


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
