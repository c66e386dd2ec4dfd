"""The one place that reads LightGBM's private API.

Remove when LightGBM exposes parameter aliases publicly (``lightgbm.basic._ConfigAliases`` is
private in 4.x).
"""

from __future__ import annotations

from typing import Any

from lightgbm.basic import _ConfigAliases

__all__ = ["has_param", "param_aliases"]


def param_aliases(name: str) -> set[str]:
    """Return ``name`` and every alias LightGBM knows for it."""
    return set(_ConfigAliases.get(name)) | {name}


def has_param(name: str) -> bool:
    """Return True if the imported LightGBM knows the parameter ``name``."""
    return name in _ConfigAliases._get_all_param_aliases()


def construct_dataset(train_set: Any, params: dict[str, Any]) -> Any:
    """Bin ``train_set`` with ``params`` exactly as ``lightgbm.train`` does, without training.

    ``lightgbm.train`` merges its parameters into the Dataset's before constructing it; there is
    no public call for that step (``Dataset._update_params``).
    """
    return train_set._update_params(params).construct()
