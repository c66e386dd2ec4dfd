"""Model loading for QWYC: the LightGBM model text of any model object, and a Booster from it.

Tree evaluation uses the core (``TreeEnsemble``, ``_predict``); LightGBM's ``pred_leaf``
gives the per-tree leaves when all trees are evaluated.
"""

from __future__ import annotations

import os
from typing import Any

__all__: list[str] = []


def model_text_of(model: Any) -> str:
    """LightGBM model text of ``model`` (Booster, LGBMModel, path, text, or TreeEnsemble)."""
    if isinstance(model, str | os.PathLike):
        s = os.fspath(model)
        if "\n" in s and "Tree=" in s:
            return s
        if not os.path.isfile(s):
            raise ValueError(
                f"The 'model' argument must be a LightGBM model, a model file or model text. "
                f"Got the string {s[:80]!r}, which is neither an existing file nor model text."
            )
        with open(s, encoding="utf-8") as fh:
            return fh.read()
    booster = getattr(model, "booster_", model)
    for name in ("model_to_string", "to_model_string"):
        fn = getattr(booster, name, None)
        if callable(fn):
            text = fn()
            if isinstance(text, str):
                return text
    raise TypeError(
        f"The 'model' argument must be a lightgbm.Booster, a fitted LGBMModel, a TreeEnsemble, "
        f"a model file path or model text. Got {type(model).__name__} instead."
    )


def booster_from_text(text: str) -> Any:
    """Load a ``lightgbm.Booster`` from model text."""
    import lightgbm

    return lightgbm.Booster(model_str=text)
