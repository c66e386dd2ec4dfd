"""A LightGBM process that loads model texts on request, so a crash is a test failure, not a dead pytest."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import textwrap
from typing import Any

_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import lightgbm as lgb
    for line in sys.stdin:
        req = json.loads(line)
        try:
            b = lgb.Booster(model_str=req["text"])
        except Exception as exc:  # LightGBMError, or e.g. JSON the package cannot read: not loaded
            out = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        else:
            try:
                kw = {"pred_early_stop": True} if req.get("early_stop") else {}
                out = {"ok": b.predict(np.array(req["X"], dtype=float), raw_score=True, **kw).tolist()}
            except Exception as exc:  # loaded, but cannot predict these rows
                out = {"predict_error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        print("@@" + json.dumps(out), flush=True)
""")


class LightGBMWorker:
    """Send a model text and rows; get LightGBM's raw predictions (``ok``), its refusal to load (``error``),
    its failure to predict a loaded model (``predict_error``), or a ``crash`` / ``hang`` verdict."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.buffer = b""

    def _start(self) -> subprocess.Popen[bytes]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, "-c", _SCRIPT], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
            self.buffer = b""
        return self.proc

    def load(self, text: str, X: Any, *, early_stop: bool = False, timeout: float = 60.0) -> dict[str, Any]:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write((json.dumps({"text": text, "X": X, "early_stop": early_stop}) + "\n").encode())
            proc.stdin.flush()
        except BrokenPipeError:
            return {"crash": proc.wait()}
        while True:  # LightGBM logs to stdout too: the answer is the line marked @@ (unbuffered reads)
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                if line.startswith(b"@@"):
                    return dict(json.loads(line[2:]))
            ready, _, _ = select.select([proc.stdout], [], [], timeout)
            if not ready:
                proc.kill()
                proc.wait()
                return {"hang": timeout}
            chunk = os.read(proc.stdout.fileno(), 1 << 20)
            if not chunk:
                return {"crash": proc.wait()}
            self.buffer += chunk

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
