"""matplotlib stays optional: importing budget_extras does not import it; a plot without it names the extra."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import budget_extras

PKG = Path(budget_extras.__file__).parent


def _module_level_imports(path: Path) -> list[str]:
    names = []
    for node in ast.parse(path.read_text()).body:  # top-level statements only
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


@pytest.mark.parametrize("path", sorted(PKG.rglob("*.py")), ids=lambda p: str(p.relative_to(PKG)))
def test_no_module_level_matplotlib_import(path):
    assert not [n for n in _module_level_imports(path) if n.split(".")[0] == "matplotlib"]


def test_import_does_not_load_matplotlib():
    code = (
        "import sys, budget_extras, budget_extras.plotting, budget_extras.cli._main; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_without_matplotlib_plots_name_the_extra(monkeypatch):
    from budget_extras.plotting import plot_cost_report, plot_frontier

    for name in [m for m in sys.modules if m.split(".")[0] == "matplotlib"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    fake = SimpleNamespace(frontier=[], chosen=None, budget=1.0)
    with pytest.raises(ImportError, match=r"pip install budget-extras\[plot\]"):
        plot_frontier(fake)
    report = SimpleNamespace(total_cost=[1.0], feature_frame=lambda: None)
    with pytest.raises(ImportError, match=r"pip install budget-extras\[plot\]"):
        plot_cost_report(report)
