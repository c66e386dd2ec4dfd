"""Tests, benchmarks, the package and the docs describe behaviour, not the project's tracker numbers.

A reader cannot look up a tracker number ("issue N item M"); upstream references keep their repository
(``microsoft/LightGBM#4591``, "related upstream issue #4286") and are not matched.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    [ROOT / "README.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").glob("*.md")]
    + [p for d in ("tests", "benchmarks", "budget_extras", "docs") for p in (ROOT / d).rglob("*.py")]
)
SOURCES.remove(Path(__file__).resolve())  # its examples below are tracker numbers on purpose
#: "issue N", "issues N", "hardening, items N", and a docstring or comment opening with "Item N".
TRACKER = re.compile(r"\bissues? \d+|\bhardening, items? \d|(?:\"\"\"|#)\s*items? \d+[a-z]?\b", re.IGNORECASE)


def _tracker_lines(text: str) -> list[str]:
    return [f"{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if TRACKER.search(line)]


def test_sources_are_found() -> None:
    names = {p.relative_to(ROOT).parts[0] for p in SOURCES}
    assert {"README.md", "CHANGELOG.md", "docs", "tests", "benchmarks", "budget_extras"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_tracker_numbers(path: Path) -> None:
    found = _tracker_lines(path.read_text(encoding="utf-8"))
    assert found == [], f"{path.relative_to(ROOT)}: describe the behaviour instead of the tracker number: {found}"


@pytest.mark.parametrize(
    "text,hits",
    [
        ('"""Issue 16 (BudgetPrune): GBDT collapse refused."""', 1),
        ("# issue 16 item 10: with the defaults", 1),
        ('    """Item 5: at a small gamma"""', 1),
        ("Hostile values (hostile-input hardening, items 4, 5, 6).", 1),
        ("related upstream issue microsoft/LightGBM#5056 and #4286", 0),
        ("questionnaire items 1.00; the same plan", 0),
        ("a docstring of 3 items 2 each", 0),
    ],
)
def test_tracker_rule_finds_numbers_and_keeps_upstream_references(text: str, hits: int) -> None:
    assert len(_tracker_lines(text)) == hits
