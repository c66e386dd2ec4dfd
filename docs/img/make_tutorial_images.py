"""Draw the images of docs/tutorial.md (docs/img/tutorial_*.png) by running the tutorial itself.

    python docs/img/make_tutorial_images.py [--out docs/img]

Runs every ``python`` block of docs/tutorial.md in order, in one namespace, in a temporary
folder, and prints what the blocks print; the blocks save their figures there
(``tutorial_*.png``), and this script moves them to ``--out``. So the pictures are exactly those
of the code shown. Data: the embedded UCI thyroid data (``load_thyroid``, Turney's test costs).
About 20 seconds on one core.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

TUTORIAL = Path(__file__).resolve().parents[1] / "tutorial.md"
IMAGES = ("tutorial_cost_report.png", "tutorial_frontier.png", "tutorial_qwyc.png")


def blocks(path: Path = TUTORIAL) -> list[str]:
    """Return the tutorial's ``python`` blocks, in order."""
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), re.S | re.M)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=TUTORIAL.parent / "img", help="folder of the images (default docs/img)")
    args = p.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            namespace: dict[str, object] = {"__name__": "tutorial"}
            for i, code in enumerate(blocks()):
                print(f"--- block {i + 1}")
                exec(compile(code, f"{TUTORIAL}:block{i + 1}", "exec"), namespace)
                plt.close("all")
        finally:
            os.chdir(here)
        drawn = sorted(p.name for p in Path(tmp).glob("*.png"))
        if drawn != sorted(IMAGES):
            raise RuntimeError(f"docs/tutorial.md drew {drawn}, expected {sorted(IMAGES)}")
        for name in drawn:
            shutil.move(str(Path(tmp) / name), out / name)
    print(f"wrote {', '.join(IMAGES)} to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
