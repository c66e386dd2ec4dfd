"""Recorded results and docs name no path of the machine that produced them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# An absolute path into a home, a scratch or a work folder: what a results file's recorded command
# or a doc's example picks up when it is run from one machine's checkout.
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|tmp|home|Users|root)/[\w.-]+")
FILES = sorted([*ROOT.glob("benchmarks/results/*.json*"), *ROOT.glob("docs/*.md"), *ROOT.glob("*.md"),
                *ROOT.glob("benchmarks/*.md")])


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_machine_path(path: Path) -> None:
    found = sorted(set(MACHINE_PATH.findall(path.read_text(errors="replace"))))
    assert not found, f"{path.relative_to(ROOT)} names paths of one machine: {found[:5]}"


def test_the_pattern_catches_a_machine_path_and_spares_relative_ones() -> None:
    assert MACHINE_PATH.search("--data-dir /work/shared/data --out /tmp/x/y.json")
    assert not MACHINE_PATH.search("--data-dir ../shared/data --out benchmarks/results/quick/a.json")
