"""docs/img/make_tutorial_images.py runs docs/tutorial.md and draws its three images (into a temporary folder)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "img"))

import make_tutorial_images

ROOT = Path(__file__).resolve().parents[2]


def test_writes_the_tutorial_images(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "img"
    assert make_tutorial_images.main(["--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["tutorial_cost_report.png", "tutorial_frontier.png", "tutorial_qwyc.png"]
    assert [p.name for p in tmp_path.iterdir()] == ["img"]  # the blocks ran in a folder of their own
    doc = (ROOT / "docs" / "tutorial.md").read_text()
    assert all(f"(img/{n})" in doc for n in names)
    assert "(docs/img/tutorial_frontier.png)" in (ROOT / "README.md").read_text()
    for n in names:
        assert (out / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (ROOT / "docs" / "img" / n).exists()  # committed
