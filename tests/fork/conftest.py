"""Fixtures for the fork's tests: the fork is imported in-process, upstream runs in its own venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _upstream_python() -> Path:
    env = os.environ.get("LGBM_UPSTREAM_PYTHON")
    return Path(env) if env else ROOT / ".venv-upstream" / "bin" / "python"


@pytest.fixture(scope="session")
def lgb() -> Any:
    """The fork's lightgbm module (fails clearly if upstream's is installed instead)."""
    import lightgbm

    assert "+cegb" in lightgbm.__version__, (
        f"these tests need the lightgbm-cegb fork, found lightgbm {lightgbm.__version__}: "
        "run `bash run.sh test` (it builds and installs the fork)")
    return lightgbm


@pytest.fixture(scope="session")
def upstream_python() -> Path:
    """Interpreter of the virtual environment holding the upstream LightGBM 4.7.0 wheel."""
    py = _upstream_python()
    if not py.exists():
        pytest.fail(f"upstream LightGBM venv not found at {py}: `bash run.sh test` creates it "
                    "(or set LGBM_UPSTREAM_PYTHON)")
    version = subprocess.run([str(py), "-c", "import lightgbm; print(lightgbm.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version == "4.7.0", f"upstream venv has lightgbm {version}, expected 4.7.0"
    return py


@pytest.fixture(scope="session")
def run_upstream(upstream_python: Path) -> Callable[[str], tuple[int, Any]]:
    """Run a scenario of scenarios.py under upstream; return (exit code, parsed JSON or None)."""

    def run(name: str) -> tuple[int, Any]:
        proc = subprocess.run([str(upstream_python), str(HERE / "scenarios.py"), name],
                              capture_output=True, text=True, timeout=600, cwd=HERE)
        lines = proc.stdout.strip().splitlines()
        result = json.loads(lines[-1]) if proc.returncode == 0 and lines else None
        return proc.returncode, result

    return run


@pytest.fixture(scope="session")
def scenarios() -> Any:
    sys.path.insert(0, str(HERE))
    import scenarios as mod

    return mod
