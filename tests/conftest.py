"""Markers of the whole suite: what needs the fork, what is slow.

``fork``: the test needs the lightgbm-cegb fork's C++ features (its parameters, its model-file
fields, its behaviour where it differs from upstream). Every test under ``tests/fork/`` is marked
here; elsewhere a module or test says ``pytest.mark.fork`` itself. When the imported
``lightgbm`` is not the fork (no ``+cegb`` in its version), these tests are skipped, not failed.

``slow``: the test takes more than about 20 s on 2 cores.

``python -m pytest tests -m "not slow and not fork" -q`` runs the Python-only part in a few
minutes, with upstream LightGBM or the fork (README.md, "Tests").
"""

from __future__ import annotations

from pathlib import Path

import lightgbm
import pytest

FORK_DIR = Path(__file__).resolve().parent / "fork"
HAS_FORK = "+cegb" in str(getattr(lightgbm, "__version__", ""))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests under ``tests/fork/`` ``fork``; skip every ``fork`` test without the fork."""
    skip = pytest.mark.skip(reason=f"needs the lightgbm-cegb fork (found lightgbm {lightgbm.__version__})")
    for item in items:
        if FORK_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.fork)
        if not HAS_FORK and item.get_closest_marker("fork") is not None:
            item.add_marker(skip)
