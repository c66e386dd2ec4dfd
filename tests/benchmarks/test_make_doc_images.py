"""docs/img/make_doc_images.py draws the three images of docs/plotting.md (into a temporary folder)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "img"))

import make_doc_images


def test_writes_the_doc_images(tmp_path):
    assert make_doc_images.main(["--out", str(tmp_path)]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["plotting_cost_report.png", "plotting_frontier.png", "plotting_qwyc.png"]
    doc = (Path(__file__).resolve().parents[2] / "docs" / "plotting.md").read_text()
    assert all(f"img/{n}" in doc for n in names)
    assert all((tmp_path / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in names)
