"""Modules one can read in one sitting, and estimator modules that are only the facade.

A module's size is counted in code lines: lines that are not blank, not comments and not
docstrings (the docstrings are the user's documentation and do not make a module harder to
change). Every module of budget_extras stays under ``MODULE_LIMIT`` code lines and
``TOTAL_LIMIT`` lines in all; an ``_estimator.py`` is the scikit-learn facade (parameters,
``fit`` calling the solver, prediction and reporting methods) and stays under
``ESTIMATOR_LIMIT`` code lines: solvers, persistence, calibration and sweeps live beside it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "budget_extras"
MODULE_LIMIT = 550
TOTAL_LIMIT = 800
ESTIMATOR_LIMIT = 400


def code_lines(source: str) -> int:
    """Return the number of lines of ``source`` that are code (not blank, comment or docstring)."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                docstrings.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return sum(
        1
        for number, line in enumerate(source.splitlines(), 1)
        if line.strip() and not line.strip().startswith("#") and number not in docstrings
    )


def test_code_lines_counts_neither_docstrings_nor_comments():
    source = '"""Module.\n\nMore."""\n\n# a comment\nx = 1\n\n\ndef f():\n    """Doc."""\n    return x\n'
    assert code_lines(source) == 3


def _sizes() -> list[tuple[str, int, int]]:
    return [
        (str(path.relative_to(PKG)), code_lines(path.read_text()), len(path.read_text().splitlines()))
        for path in sorted(PKG.rglob("*.py"))
    ]


def test_no_module_longer_than_the_limits():
    long = [f"{name}: {code} code lines, {total} in all" for name, code, total in _sizes()
            if code > MODULE_LIMIT or total > TOTAL_LIMIT]
    assert long == [], long


@pytest.mark.parametrize("name", [n for n, _, _ in _sizes() if n.endswith("_estimator.py")])
def test_an_estimator_module_is_the_facade(name):
    code = code_lines((PKG / name).read_text())
    assert code <= ESTIMATOR_LIMIT, f"{name}: {code} code lines (limit {ESTIMATOR_LIMIT})"
