"""The CI entry point (``.ci/run``) reports the suite's time and its 10 slowest tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_lists_the_slowest_tests_and_the_times(tmp_path: Path) -> None:
    """``.ci/run`` on a stand-in ``run.sh test`` that runs two tiny tests with the arguments CI gives."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    (tmp_path / "test_tiny.py").write_text("def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    (tmp_path / "run.sh").write_text(
        f'[ "$1" = test ] || exit 9\nshift\nexec {sys.executable} -m pytest test_tiny.py -q -p no:cacheprovider "$@"\n'
    )
    proc = subprocess.run(["bash", str(tmp_path / ".ci" / "run")], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "slowest 10 durations" in out
    assert "2 passed in " in out  # pytest's last line: the suite's time
    assert "ci: the job took " in out.splitlines()[-1]
