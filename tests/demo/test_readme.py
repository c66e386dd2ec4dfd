"""The README's CEGB quick start runs as written and pays less than plain LightGBM."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_quick_start_runs(capsys):
    lgb = pytest.importorskip("lightgbm")
    if "+cegb" not in lgb.__version__:
        pytest.skip("the quick start uses the fork's cegb_feature_group")
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)
    accuracy, mean_cost = (float(v) for v in capsys.readouterr().out.split())
    assert accuracy > 0.98
    # plain LightGBM on the same data pays about 63 per patient (docs/benchmarks.md)
    assert 0 < mean_cost < 40
    assert namespace["report"].acquisition_cost.shape == (namespace["d"].X_test.shape[0],)
