"""QWYC plans inside LightGBM model text (grammar in docs/qwyc_model_format.md).

The trees are physically reordered (whole iterations for multiclass) and renumbered,
``tree_sizes`` is recomputed, and the plan is stored as ``qwyc_*=value`` lines in the
model header. LightGBM's loader (``GBDT::LoadModelFromString``) reads every header line
before the first ``Tree=`` line into a key/value map and only looks up the keys it
knows, so upstream LightGBM loads the file and predicts the full ensemble.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

__all__ = ["QWYCPlan", "read_qwyc_plan", "write_qwyc_plan"]

FORMAT_VERSION = 1
MODES = ("binary_two_sided", "binary_negative_only", "multiclass_margin")
_TREE_LINE = re.compile(r"^Tree=\d+$", re.MULTILINE)


@dataclass(frozen=True)
class QWYCPlan:
    """An early-exit plan: evaluation order and per-position thresholds.

    Attributes
    ----------
    order : ndarray of int64, shape (n_positions,)
        Original iteration index evaluated at each position (position ``r`` evaluates
        the ``num_tree_per_iteration`` trees of iteration ``order[r]``).
    eps_neg, eps_pos : ndarray of float64, shape (n_positions,)
        Binary modes: stop negative if the partial raw score is ``< eps_neg[r]``, stop
        positive if it is ``> eps_pos[r]`` (``-inf``/``+inf`` = never). Always
        ``eps_neg[r] <= decision_threshold <= eps_pos[r]``.
    eps_margin : ndarray of float64, shape (n_positions,) or None
        Multiclass: stop when the top-1 minus top-2 partial raw score is ``> eps_margin[r]``.
    decision_threshold : float
        Binary: raw-score threshold of the full ensemble's label (``score > threshold``).
    mode : str
        One of ``binary_two_sided``, ``binary_negative_only``, ``multiclass_margin``.
    alpha : float
        The disagreement target the plan was fit for (informational).
    """

    order: npt.NDArray[np.int64]
    eps_neg: npt.NDArray[np.float64]
    eps_pos: npt.NDArray[np.float64]
    eps_margin: npt.NDArray[np.float64] | None = None
    decision_threshold: float = 0.0
    mode: str = "binary_two_sided"
    alpha: float = math.nan
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def n_positions(self) -> int:
        return int(self.order.size)


def _fmt(values: npt.ArrayLike) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(values, dtype=np.float64))


def split_model_text(text: str) -> tuple[list[str], list[str], str]:
    """Split model text into header lines, tree blocks (each from ``Tree=``) and the tail."""
    m = _TREE_LINE.search(text)
    if m is None:
        raise ValueError("The model text contains no 'Tree=' line; expected a LightGBM model text.")
    header = text[: m.start()].split("\n")
    end = text.find("end of trees", m.start())
    if end < 0:
        raise ValueError(
            "The model text has no 'end of trees' line; expected a complete LightGBM model text."
        )
    body = text[m.start() : end]
    starts = [mm.start() for mm in _TREE_LINE.finditer(body)]
    blocks = [body[a:b] for a, b in zip(starts, [*starts[1:], len(body)], strict=True)]
    return header, blocks, text[end:]


def _header_get(header: list[str], key: str) -> str | None:
    prefix = key + "="
    for line in header:
        if line.startswith(prefix):
            return line[len(prefix) :]
    return None


def write_qwyc_plan(text: str, plan: QWYCPlan) -> str:
    """Model text with the trees in ``plan.order`` and the plan in the header."""
    header, blocks, tail = split_model_text(text)
    k = int(_header_get(header, "num_tree_per_iteration") or _header_get(header, "num_class") or 1)
    n_iter = len(blocks) // k
    if n_iter * k != len(blocks) or plan.n_positions != n_iter:
        raise ValueError(
            f"The plan has {plan.n_positions} positions but the model has {len(blocks)} trees "
            f"in iterations of {k}; expected one position per iteration."
        )
    if sorted(plan.order.tolist()) != list(range(n_iter)):
        raise ValueError("The plan's order must be a permutation of the model's iterations.")
    new_blocks = []
    for pos, it in enumerate(plan.order.tolist()):
        for c in range(k):
            block = blocks[it * k + c]
            body = block[block.index("\n") + 1 :]
            new_blocks.append(f"Tree={pos * k + c}\n{body}")
    keys = [
        f"qwyc_version={FORMAT_VERSION}",
        f"qwyc_mode={plan.mode}",
        f"qwyc_num_positions={plan.n_positions}",
        f"qwyc_decision_threshold={float(plan.decision_threshold)!r}",
        f"qwyc_alpha={float(plan.alpha)!r}",
    ]
    if plan.mode == "multiclass_margin":
        assert plan.eps_margin is not None
        keys.append(f"qwyc_eps_margin={_fmt(plan.eps_margin)}")
    else:
        keys.append(f"qwyc_eps_neg={_fmt(plan.eps_neg)}")
        keys.append(f"qwyc_eps_pos={_fmt(plan.eps_pos)}")
    keys.append("qwyc_original_iteration=" + " ".join(str(int(v)) for v in plan.order))
    out_header = []
    inserted = False
    for line in header:
        if line.startswith("qwyc_"):
            continue
        if line.startswith("tree_sizes="):
            out_header.extend(keys)
            inserted = True
            line = "tree_sizes=" + " ".join(str(len(b.encode("utf-8"))) for b in new_blocks)
        out_header.append(line)
    if not inserted:  # no tree_sizes: insert before the trailing blank line(s)
        while out_header and out_header[-1] == "":
            out_header.pop()
        out_header.extend([*keys, "", ""])
    return "\n".join(out_header) + "".join(new_blocks) + tail


def _floats(value: str, name: str, n: int) -> npt.NDArray[np.float64]:
    toks = value.split()
    if len(toks) != n:
        raise ValueError(f"Ill-formed QWYC plan: '{name}' has {len(toks)} values, expected {n}.")
    try:
        arr = np.array([float(t) for t in toks], dtype=np.float64)
    except ValueError as exc:
        raise ValueError(
            f"Ill-formed QWYC plan: '{name}' has a value that is not a number ({exc})."
        ) from None
    if np.isnan(arr).any():
        raise ValueError(f"Ill-formed QWYC plan: '{name}' contains NaN.")
    return arr


def read_qwyc_plan(model_text: str) -> QWYCPlan | None:
    """Read the QWYC plan from model text; ``None`` when the model has none."""
    m = _TREE_LINE.search(model_text)
    header = (model_text[: m.start()] if m else model_text).split("\n")
    if _header_get(header, "qwyc_version") is None:
        return None
    version = int(_header_get(header, "qwyc_version") or 0)
    if version != FORMAT_VERSION:
        raise ValueError(
            f"Unsupported QWYC plan version {version}; this reader knows version {FORMAT_VERSION}."
        )
    mode = _header_get(header, "qwyc_mode") or ""
    if mode not in MODES:
        raise ValueError(f"Ill-formed QWYC plan: 'qwyc_mode' must be one of {MODES}, got {mode!r}.")

    def need(key: str) -> str:
        v = _header_get(header, key)
        if v is None:
            raise ValueError(f"Ill-formed QWYC plan: missing '{key}'.")
        return v

    n = int(need("qwyc_num_positions"))
    order = np.array([int(t) for t in need("qwyc_original_iteration").split()], dtype=np.int64)
    if order.size != n:
        raise ValueError(
            f"Ill-formed QWYC plan: 'qwyc_original_iteration' has {order.size} values, expected {n}."
        )
    thr = float(need("qwyc_decision_threshold"))
    alpha = float(_header_get(header, "qwyc_alpha") or "nan")
    if mode == "multiclass_margin":
        margin = _floats(need("qwyc_eps_margin"), "qwyc_eps_margin", n)
        return QWYCPlan(order, np.full(n, -np.inf), np.full(n, np.inf), margin, thr, mode, alpha)
    eps_neg = _floats(need("qwyc_eps_neg"), "qwyc_eps_neg", n)
    eps_pos = _floats(need("qwyc_eps_pos"), "qwyc_eps_pos", n)
    return QWYCPlan(order, eps_neg, eps_pos, None, thr, mode, alpha)


def original_model_text(model_text: str) -> str:
    """Undo :func:`write_qwyc_plan`: trees back in training order, plan keys removed."""
    plan = read_qwyc_plan(model_text)
    if plan is None:
        return model_text
    header, blocks, tail = split_model_text(model_text)
    inverse = np.empty_like(plan.order)
    inverse[plan.order] = np.arange(plan.n_positions)
    undo = QWYCPlan(inverse, plan.eps_neg, plan.eps_pos, plan.eps_margin, plan.decision_threshold, plan.mode)
    text = write_qwyc_plan("\n".join(header) + "".join(blocks) + tail, undo)
    header2, blocks2, tail2 = split_model_text(text)
    header2 = [h for h in header2 if not h.startswith("qwyc_")]
    return "\n".join(header2) + "".join(blocks2) + tail2
