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
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..core._builder import ModelParseError

__all__ = ["QWYCPlan", "ScoreMaps", "lf_lines", "read_qwyc_plan", "validate_plan", "write_qwyc_plan"]

FORMAT_VERSION = 1  # version 2 = version 1 + per-position score maps (binary modes)
MAPS_VERSION = 2
MODES = ("binary_two_sided", "binary_negative_only", "multiclass_margin")
_TREE_LINE = re.compile(r"^Tree=\d+$", re.MULTILINE)


def lf_lines(text: str) -> str:
    """Return model text with Windows (CRLF) and old Mac (CR) line ends made LF, as LightGBM writes them.

    The QWYC readers (:func:`read_qwyc_plan`, :func:`split_model_text`, ``QWYC``) call it where
    the text comes in, so a file saved after a Windows checkout (git converts the line ends,
    not the ``tree_sizes``) reads as the file LightGBM wrote.

    Parameters
    ----------
    text : str
        LightGBM model text.

    Returns
    -------
    str
    """
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


@dataclass(frozen=True)
class ScoreMaps:
    """Knots of the per-position score maps: position ``r`` has ``x[offsets[r]:offsets[r + 1]]``.

    Within a position both ``x`` and ``y`` increase strictly; the map is linear between knots
    with slope 1 beyond the end knots (docs/qwyc_model_format.md, section 3).
    """

    offsets: npt.NDArray[np.int64]
    x: npt.NDArray[np.float64]
    y: npt.NDArray[np.float64]
    n_rows: npt.NDArray[np.int64] | None = None  # calibration pairs behind each map (not stored in files)

    def knots(self, r: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        a, b = int(self.offsets[r]), int(self.offsets[r + 1])
        return self.x[a:b], self.y[a:b]


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
    score_maps : ScoreMaps or None
        Binary modes: per-position maps of an exited row's partial score (``QWYC(scores=
        "calibrated")``); stored as a version-2 plan when it has at least one knot.
    """

    order: npt.NDArray[np.int64]
    eps_neg: npt.NDArray[np.float64]
    eps_pos: npt.NDArray[np.float64]
    eps_margin: npt.NDArray[np.float64] | None = None
    decision_threshold: float = 0.0
    mode: str = "binary_two_sided"
    alpha: float = math.nan
    extra: dict[str, str] = field(default_factory=dict)
    score_maps: ScoreMaps | None = None

    @property
    def n_positions(self) -> int:
        return int(self.order.size)


def _fmt(values: npt.ArrayLike) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(values, dtype=np.float64))


def split_model_text(text: str) -> tuple[list[str], list[str], str]:
    """Split model text into header lines, tree blocks (each from ``Tree=``) and the tail."""
    text = lf_lines(text)
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
    """Return the model text with the trees in ``plan.order`` and the plan in the header.

    Parameters
    ----------
    text : str
        LightGBM model text.
    plan : QWYCPlan
        The plan to store (validated against the model first).

    Returns
    -------
    str
    """
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
    validate_plan(plan, num_tree_per_iteration=k, num_trees=len(blocks))
    new_blocks = []
    for pos, it in enumerate(plan.order.tolist()):
        for c in range(k):
            block = blocks[it * k + c]
            body = block[block.index("\n") + 1 :]
            new_blocks.append(f"Tree={pos * k + c}\n{body}")
    maps = plan.score_maps if plan.score_maps is not None and plan.score_maps.x.size else None
    keys = [
        f"qwyc_version={MAPS_VERSION if maps is not None else FORMAT_VERSION}",
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
    if maps is not None:
        keys.append("qwyc_score_offsets=" + " ".join(str(int(v)) for v in maps.offsets))
        keys.append(f"qwyc_score_x={_fmt(maps.x)}")
        keys.append(f"qwyc_score_y={_fmt(maps.y)}")
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


# Tokens exactly as the fork's reader takes them (qwyc_plan.hpp): an integer is an optional sign and
# decimal digits, 18 characters at most; a number is a token std::strtod consumes completely.
_INT = re.compile(r"^[+-]?\d+$")
_DEC = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_HEX = re.compile(r"^[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?$")
_INF = re.compile(r"^[+-]?(?:inf|infinity)$", re.IGNORECASE)
_NAN = re.compile(r"^[+-]?nan(?:\([0-9A-Za-z_]*\))?$", re.IGNORECASE)
_COMMON_KEYS = ("qwyc_version", "qwyc_mode", "qwyc_num_positions", "qwyc_decision_threshold", "qwyc_alpha",
                "qwyc_original_iteration")
_MAP_KEYS = ("qwyc_score_offsets", "qwyc_score_x", "qwyc_score_y")
_MODE_KEYS = {"multiclass_margin": ("qwyc_eps_margin",), "binary_two_sided": ("qwyc_eps_neg", "qwyc_eps_pos"),
              "binary_negative_only": ("qwyc_eps_neg", "qwyc_eps_pos")}


def _bad(key: str, what: str) -> ModelParseError:
    return ModelParseError(f"Ill-formed QWYC plan: '{key}' {what}.")


def _int(token: str, key: str) -> int:
    if len(token) > 18 or not _INT.match(token):
        raise _bad(key, f"must hold integers (optional sign, decimal digits), got {token!r}")
    return int(token)


def _double(token: str, key: str, *, allow_nan: bool = False) -> float:
    """Read one number as ``std::strtod`` does when it must consume the whole token."""
    if _NAN.match(token):
        if allow_nan:
            return math.nan
        raise _bad(key, "contains NaN")
    if _DEC.match(token):
        return float(token)
    if _HEX.match(token):
        return float.fromhex(token)
    if _INF.match(token):
        return -math.inf if token.startswith("-") else math.inf
    raise _bad(key, f"has {token!r}, which is not a number (decimal or exponent notation, inf or -inf)")


def _tokens(value: str, key: str, n: int) -> list[str]:
    toks = [t.strip() for t in value.split(" ")]
    toks = [t for t in toks if t]
    if len(toks) != n:
        raise _bad(key, f"has {len(toks)} values, expected {n} (one per position, qwyc_num_positions)")
    return toks


def _floats(value: str, name: str, n: int) -> npt.NDArray[np.float64]:
    return np.array([_double(t, name) for t in _tokens(value, name, n)], dtype=np.float64)


def _header_values(header: list[str]) -> dict[str, str]:
    """Return the header's ``qwyc_*`` keys as LightGBM's header reader splits them; a repeated key is refused."""
    out: dict[str, str] = {}
    for line in header:
        if not line.startswith("qwyc_"):
            continue
        parts = [part for part in line.split("=") if part]
        key = parts[0]
        if key in out:
            raise _bad(key, f"appears twice in the model header; expected at most one {key}= line")
        if len(parts) > 2:
            raise _bad(key, f"has more than one '=' in its line {line[:60]!r}")
        out[key] = parts[1] if len(parts) == 2 else ""
    return out


def _model_shape(header: list[str], model_text: str) -> tuple[int, int]:
    """(trees per iteration, number of trees) of the model text."""
    raw = _header_get(header, "num_tree_per_iteration") or _header_get(header, "num_class") or "1"
    try:
        k = int(raw.strip())
    except ValueError:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: header 'num_tree_per_iteration' must be an integer, got {raw!r}."
        ) from None
    end = model_text.find("\nend of trees")
    n_trees = len(_TREE_LINE.findall(model_text[: end if end >= 0 else len(model_text)]))
    return k, n_trees


def validate_plan(plan: QWYCPlan, *, num_tree_per_iteration: int, num_trees: int) -> None:
    """Check a plan against its model: rules 5-10 of docs/qwyc_model_format.md, "What a valid plan is".

    Parameters
    ----------
    plan : QWYCPlan
        The plan.
    num_tree_per_iteration : int
        ``K`` of the model.
    num_trees : int
        Number of trees of the model.

    Raises
    ------
    ModelParseError
        Naming the ``qwyc_*`` key that breaks the rule.
    """
    k, r = num_tree_per_iteration, plan.n_positions
    if plan.mode not in MODES:
        raise _bad("qwyc_mode", f"must be one of {MODES}, got {plan.mode!r}")
    multiclass = plan.mode == "multiclass_margin"
    if multiclass and k < 2:
        raise _bad("qwyc_mode", f"is multiclass_margin, which needs num_tree_per_iteration >= 2; the model has {k}")
    if not multiclass and k != 1:
        raise _bad("qwyc_mode", f"is {plan.mode}, which needs num_tree_per_iteration=1; the model has {k}")
    if r < 1 or r * k != num_trees:
        raise _bad(
            "qwyc_num_positions",
            f"must be the model's number of iterations, {num_trees // max(k, 1)} ({num_trees} trees / {k} per "
            f"iteration), got {r}",
        )
    if not math.isfinite(plan.decision_threshold):
        raise _bad("qwyc_decision_threshold", f"must be a finite number, got {plan.decision_threshold!r}")
    if sorted(np.asarray(plan.order).tolist()) != list(range(r)):
        raise _bad("qwyc_original_iteration", f"must be a permutation of 0..{r - 1} (each iteration once)")
    t = plan.decision_threshold
    if multiclass:
        margin = plan.eps_margin
        if margin is None or np.shape(margin) != (r,):
            raise _bad("qwyc_eps_margin", f"must have {r} values (qwyc_num_positions)")
        bad = ~(np.asarray(margin) >= 0.0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _bad("qwyc_eps_margin", f"must be >= 0 (inf = never stop), got {margin[i]!r} at position {i}")
        if plan.score_maps is not None and plan.score_maps.x.size:
            raise _bad("qwyc_version", "is 2 (score maps), which is for the binary modes, not multiclass_margin")
        return
    for key, arr in (("qwyc_eps_neg", plan.eps_neg), ("qwyc_eps_pos", plan.eps_pos)):
        if np.shape(arr) != (r,):
            raise _bad(key, f"must have {r} values (qwyc_num_positions)")
    for i in range(r):
        if not plan.eps_neg[i] <= t:
            raise _bad("qwyc_eps_neg", f"must be <= qwyc_decision_threshold {t!r} (-inf = never stop), "
                       f"got {plan.eps_neg[i]!r} at position {i}")
        if not t <= plan.eps_pos[i]:
            raise _bad("qwyc_eps_pos", f"must be >= qwyc_decision_threshold {t!r} (inf = never stop), "
                       f"got {plan.eps_pos[i]!r} at position {i}")
        if plan.mode == "binary_negative_only" and not math.isinf(plan.eps_pos[i]):
            raise _bad("qwyc_eps_pos", f"must be inf at every position for binary_negative_only, "
                       f"got {plan.eps_pos[i]!r} at position {i}")
    if plan.score_maps is not None:
        _validate_maps(plan)


def _validate_maps(plan: QWYCPlan) -> None:
    """Rule 11 of docs/qwyc_model_format.md: knots only where rows exit, finite, strictly increasing."""
    maps = plan.score_maps
    assert maps is not None
    r = plan.n_positions
    off = np.asarray(maps.offsets)
    if off.shape != (r + 1,) or off[0] != 0 or np.any(np.diff(off) < 0) or off[-1] != maps.x.size:
        raise _bad("qwyc_score_offsets", f"must be {r + 1} non-decreasing integers from 0 to the number of knots")
    if maps.y.shape != maps.x.shape:
        raise _bad("qwyc_score_y", f"must have {maps.x.size} values (one per knot of qwyc_score_x)")
    for p in range(r):
        a, b = int(off[p]), int(off[p + 1])
        can_exit = p < r - 1 and (not math.isinf(plan.eps_neg[p]) or not math.isinf(plan.eps_pos[p]))
        if a < b and not can_exit:
            why = "the last position" if p == r - 1 else "both thresholds infinite"
            raise _bad("qwyc_score_offsets", f"gives position {p} {b - a} knots, but no row exits there ({why})")
        for i in range(a, b):
            xi, yi = float(maps.x[i]), float(maps.y[i])
            if not (math.isfinite(xi) and math.isfinite(yi)):
                key = "qwyc_score_x" if not math.isfinite(xi) else "qwyc_score_y"
                raise _bad(key, f"must hold finite knots, got {xi if key == 'qwyc_score_x' else yi!r} at knot {i}")
            if i > a and not xi > maps.x[i - 1]:
                raise _bad("qwyc_score_x", f"must increase strictly within a position, got {xi!r} at knot {i}")
            if i > a and not yi > maps.y[i - 1]:
                raise _bad("qwyc_score_y", f"must increase strictly within a position, got {yi!r} at knot {i}")


def read_qwyc_plan(model_text: str) -> QWYCPlan | None:
    """Read the QWYC plan from model text; ``None`` when the model has none.

    The plan is checked field by field against the model in the text, by exactly the rule of
    the fork's C++ reader (docs/qwyc_model_format.md, section 6 "What a valid plan is"), so both
    readers accept and refuse the same files.

    Parameters
    ----------
    model_text : str
        LightGBM model text.

    Returns
    -------
    QWYCPlan or None

    Raises
    ------
    ModelParseError
        A ``ValueError`` naming the ``qwyc_*`` key of an ill-formed plan.
    """
    model_text = lf_lines(model_text)
    m = _TREE_LINE.search(model_text)
    header = (model_text[: m.start()] if m else model_text).split("\n")
    kv = _header_values(header)
    if "qwyc_version" not in kv:  # rule 1
        if kv:
            key = next(iter(kv))
            raise _bad(key, "is in the model header, but there is no qwyc_version line")
        return None
    version = kv["qwyc_version"].strip()
    if version not in (str(FORMAT_VERSION), str(MAPS_VERSION)):  # rule 2
        raise ModelParseError(
            f"Unsupported QWYC plan version {version}; 'qwyc_version' must be {FORMAT_VERSION} or {MAPS_VERSION}."
        )
    has_maps = version == str(MAPS_VERSION)

    def need(key: str) -> str:
        if key not in kv:
            raise _bad(key, f"is missing: expected a {key}= line (the model header has qwyc_version)")
        return kv[key].strip()

    mode = need("qwyc_mode")  # rule 3
    if mode not in MODES:
        raise _bad("qwyc_mode", f"must be one of {MODES}, got {mode!r}")
    if has_maps and mode == "multiclass_margin":
        raise _bad("qwyc_version", "is 2 (score maps), which is for the binary modes, not multiclass_margin")
    for key in kv:  # rule 4
        if key in ("qwyc_eps_neg", "qwyc_eps_pos", "qwyc_eps_margin"):
            if key not in _MODE_KEYS[mode]:
                raise _bad(key, f"is not a key of qwyc_mode={mode} (expected {' and '.join(_MODE_KEYS[mode])})")
        elif key not in _COMMON_KEYS and not (has_maps and key in _MAP_KEYS):
            raise _bad(key, f"is not a key of QWYC plan version {version}")
    k, n_trees = _model_shape(header, model_text)
    if mode == "multiclass_margin" and k < 2:  # rule 5
        raise _bad("qwyc_mode", f"is multiclass_margin, which needs num_tree_per_iteration >= 2; the model has {k}")
    if mode != "multiclass_margin" and k != 1:
        raise _bad("qwyc_mode", f"is {mode}, which needs num_tree_per_iteration=1; the model has {k}")
    n = _int(need("qwyc_num_positions"), "qwyc_num_positions")  # rule 6
    if n < 1 or n * k != n_trees:
        raise _bad("qwyc_num_positions", f"must be the model's number of iterations, {n_trees // k} "
                   f"({n_trees} trees / {k} per iteration), got {n}")
    thr = _double(need("qwyc_decision_threshold"), "qwyc_decision_threshold")  # rule 7
    if not math.isfinite(thr):
        raise _bad("qwyc_decision_threshold", f"must be a finite number, got {thr!r}")
    alpha = _double(kv["qwyc_alpha"].strip(), "qwyc_alpha", allow_nan=True) if "qwyc_alpha" in kv else math.nan
    toks = _tokens(need("qwyc_original_iteration"), "qwyc_original_iteration", n)  # rule 9
    order = np.array([_int(t, "qwyc_original_iteration") for t in toks], dtype=np.int64)
    if sorted(order.tolist()) != list(range(n)):
        raise _bad("qwyc_original_iteration", f"must be a permutation of 0..{n - 1} (each iteration once)")
    if mode == "multiclass_margin":  # rule 10
        margin = _floats(need("qwyc_eps_margin"), "qwyc_eps_margin", n)
        plan = QWYCPlan(order, np.full(n, -np.inf), np.full(n, np.inf), margin, thr, mode, alpha)
    else:
        eps_neg = _floats(need("qwyc_eps_neg"), "qwyc_eps_neg", n)
        eps_pos = _floats(need("qwyc_eps_pos"), "qwyc_eps_pos", n)
        maps = _read_maps(need, n) if has_maps else None
        plan = QWYCPlan(order, eps_neg, eps_pos, None, thr, mode, alpha, score_maps=maps)
    validate_plan(plan, num_tree_per_iteration=k, num_trees=n_trees)
    return plan


def _read_maps(need: Callable[[str], str], n: int) -> ScoreMaps:
    """Version 2's ``qwyc_score_*`` values, token rules as the fork's ``ReadScoreMaps``."""
    offsets: list[int] = []
    for i, token in enumerate(_tokens(need("qwyc_score_offsets"), "qwyc_score_offsets", n + 1)):
        o = _int(token, "qwyc_score_offsets")
        if (i == 0 and o != 0) or o < (offsets[-1] if offsets else 0) or o > 100_000_000:
            raise _bad("qwyc_score_offsets", f"must be {n + 1} non-decreasing integers from 0 to 100000000, "
                       f"got {token!r} at index {i}")
        offsets.append(o)
    if offsets[-1] < 1:
        raise _bad("qwyc_score_offsets", "must give at least one knot in version 2 (a plan without maps is version 1)")
    x = _floats(need("qwyc_score_x"), "qwyc_score_x", offsets[-1])
    y = _floats(need("qwyc_score_y"), "qwyc_score_y", offsets[-1])
    return ScoreMaps(np.array(offsets, dtype=np.int64), x, y)


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
