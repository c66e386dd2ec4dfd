"""LightGBM model text / ``dump_model()`` dict -> flat pre-order node arrays.

Both readers go through one builder that lays every tree out in pre-order (node, left
subtree, right subtree) with an explicit stack, so leaf-wise trees of any depth are fine.
Anything this module does not know how to represent exactly is refused with an error naming
the tree, the node and the key.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["ModelParseError", "parse_dump", "parse_model_string"]

_MISSING_NAMES = {"None": 0, "Zero": 1, "NaN": 2}


class ModelParseError(ValueError):
    """Raised when a LightGBM model cannot be represented exactly."""


class _Builder:
    """Accumulates nodes of all trees in pre-order."""

    def __init__(self) -> None:
        self.left: list[int] = []
        self.right: list[int] = []
        self.parent: list[int] = []
        self.feature: list[int] = []
        self.threshold: list[float] = []
        self.is_categorical: list[bool] = []
        self.cats: list[Sequence[int]] = []
        self.default_left: list[bool] = []
        self.missing_type: list[int] = []
        self.value: list[float] = []
        self.count: list[int] = []
        self.weight: list[float] = []
        self.depth: list[int] = []
        self.split_gain: list[float] = []
        self.leaf_index: list[int] = []
        self.tree_offset: list[int] = [0]
        self.shrinkage: list[float] = []

    def add_tree(
        self,
        root: Any,
        children: Callable[[Any], tuple[Any, Any] | None],
        fill: Callable[[Any, int], None],
        shrinkage: float,
        *,
        max_nodes: int,
        tree: int,
    ) -> None:
        """Lay out one tree in pre-order; ``fill(ref, depth)`` appends the node's own fields.

        The walk stops with a ModelParseError after ``max_nodes`` nodes, so child links that
        form a cycle can never make it run forever.
        """
        stack: list[tuple[Any, int, int, bool]] = [(root, -1, 0, False)]
        start = len(self.left)
        while stack:
            ref, parent, depth, is_right = stack.pop()
            idx = len(self.left)
            if idx - start >= max_nodes:
                raise ModelParseError(
                    f"Ill-formed LightGBM model: tree {tree}: child links reach more than {max_nodes} nodes "
                    "(a cycle, or a node with two parents)."
                )
            self.left.append(-1)
            self.right.append(-1)
            self.parent.append(parent)
            self.depth.append(depth)
            if parent >= 0:
                if is_right:
                    self.right[parent] = idx
                else:
                    self.left[parent] = idx
            fill(ref, depth)
            kids = children(ref)
            if kids is not None:
                stack.append((kids[1], idx, depth + 1, True))
                stack.append((kids[0], idx, depth + 1, False))
        self.tree_offset.append(len(self.left))
        self.shrinkage.append(shrinkage)

    def add_leaf(self, value: float, count: int, weight: float, leaf_index: int) -> None:
        """Append the fields of a leaf."""
        self.feature.append(-1)
        self.threshold.append(np.nan)
        self.is_categorical.append(False)
        self.cats.append(())
        self.default_left.append(False)
        self.missing_type.append(0)
        self.value.append(value)
        self.count.append(count)
        self.weight.append(weight)
        self.split_gain.append(np.nan)
        self.leaf_index.append(leaf_index)

    def add_split(
        self,
        *,
        feature: int,
        threshold: float,
        cats: Sequence[int] | None,
        default_left: bool,
        missing_type: int,
        value: float,
        count: int,
        weight: float,
        gain: float,
    ) -> None:
        """Append the fields of an internal node (``cats`` given for a categorical split)."""
        self.feature.append(feature)
        self.threshold.append(np.nan if cats is not None else threshold)
        self.is_categorical.append(cats is not None)
        self.cats.append(tuple(sorted(set(cats))) if cats is not None else ())
        self.default_left.append(default_left)
        self.missing_type.append(missing_type)
        self.value.append(value)
        self.count.append(count)
        self.weight.append(weight)
        self.split_gain.append(gain)
        self.leaf_index.append(-1)

    def arrays(self) -> dict[str, np.ndarray]:
        """Return the flat arrays."""
        lengths = np.array([len(c) for c in self.cats], dtype=np.int64)
        cat_offsets = np.zeros(len(self.cats) + 1, dtype=np.int64)
        np.cumsum(lengths, out=cat_offsets[1:])
        flat = [v for c in self.cats for v in c]
        return {
            "left_child": np.array(self.left, dtype=np.int32),
            "right_child": np.array(self.right, dtype=np.int32),
            "parent": np.array(self.parent, dtype=np.int32),
            "feature": np.array(self.feature, dtype=np.int32),
            "threshold": np.array(self.threshold, dtype=np.float64),
            "is_categorical": np.array(self.is_categorical, dtype=bool),
            "cat_offsets": cat_offsets,
            "cat_values": np.array(flat, dtype=np.int32),
            "default_left": np.array(self.default_left, dtype=bool),
            "missing_type": np.array(self.missing_type, dtype=np.int8),
            "value": np.array(self.value, dtype=np.float64),
            "count": np.array(self.count, dtype=np.int64),
            "weight": np.array(self.weight, dtype=np.float64),
            "depth": np.array(self.depth, dtype=np.int32),
            "split_gain": np.array(self.split_gain, dtype=np.float64),
            "leaf_index": np.array(self.leaf_index, dtype=np.int32),
            "tree_offset": np.array(self.tree_offset, dtype=np.int64),
            "shrinkage": np.array(self.shrinkage, dtype=np.float64),
        }


# ----------------------------------------------------------------------------- model text


def _split_sections(text: str) -> tuple[list[str], list[tuple[int, list[str]]], str]:
    """Split model text into header lines, per-tree line blocks and the text after the trees."""
    lines = text.splitlines()
    header: list[str] = []
    trees: list[tuple[int, list[str]]] = []
    i = 0
    while i < len(lines) and not lines[i].startswith("Tree="):
        if lines[i].strip() == "end of trees":
            break
        header.append(lines[i])
        i += 1
    current: list[str] | None = None
    while i < len(lines):
        line = lines[i]
        if line.strip() == "end of trees":
            i += 1
            break
        if line.startswith("Tree="):
            try:
                tid = int(line[5:])
            except ValueError as exc:
                raise ModelParseError(f"Ill-formed LightGBM model text: bad tree header {line!r}.") from exc
            current = []
            trees.append((tid, current))
        elif line.strip() and current is not None:
            current.append(line)
        i += 1
    else:
        raise ModelParseError(
            "Ill-formed LightGBM model text: missing 'end of trees' line (is the file truncated?)."
        )
    tail = "\n".join(lines[i:])
    stripped = [t.strip() for t in lines[i:]]
    for begin, end in (("parameters:", "end of parameters"), ("parser:", "end of parser")):
        if begin in stripped and end not in stripped[stripped.index(begin) :]:
            raise ModelParseError(
                f"Ill-formed LightGBM model text: the {begin!r} section has no {end!r} line "
                "(is the file truncated?)."
            )
    return header, trees, tail


def _kv(lines: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        key, sep, val = line.partition("=")
        out[key.strip()] = val.strip() if sep else ""
    return out


def _num_list(kv: Mapping[str, str], key: str, n: int, tree: int, dtype: type, *, default: Any = None) -> Any:
    raw = kv.get(key)
    if raw is None or raw == "":
        if n == 0:
            return np.zeros(0, dtype=dtype)
        if default is not None:
            return np.full(n, default, dtype=dtype)
        raise ModelParseError(f"Ill-formed LightGBM model text: tree {tree}: need {key!r} with {n} values.")
    try:
        arr = np.array([float(v) for v in raw.split()], dtype=np.float64)
    except ValueError as exc:
        raise ModelParseError(f"Ill-formed LightGBM model text: tree {tree}: bad number in {key!r}.") from exc
    if arr.size != n:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: tree {tree}: {key!r} must have {n} values, got {arr.size}."
        )
    if np.issubdtype(dtype, np.integer):
        bad = ~np.isfinite(arr) | (arr != np.round(arr)) | (np.abs(arr) > 2**53)
        if bad.any():
            raise ModelParseError(
                f"Ill-formed LightGBM model text: tree {tree}: {key!r} must hold integers, "
                f"got {raw.split()[int(np.flatnonzero(bad)[0])]!r}."
            )
    return arr.astype(dtype)


def _decode_bitset(words: np.ndarray) -> list[int]:
    out: list[int] = []
    for i, w in enumerate(words.tolist()):
        w = int(w)
        b = 0
        while w:
            if w & 1:
                out.append(32 * i + b)
            w >>= 1
            b += 1
    return out


def _check_child_links(left: np.ndarray, right: np.ndarray, n_leaves: int, tree: int) -> None:
    """Refuse child links that do not form one binary tree rooted at internal node 0.

    Every internal node but the root and every leaf must be the child of exactly one node, and
    the root of none; then the links form a tree and no walk from the root can loop.
    """
    refs = np.concatenate([left, right])
    if refs.size == 0:
        return
    # internal node i -> slot i, leaf l (written ~l = -l-1) -> slot n_int + l
    n_int = n_leaves - 1
    slots = np.where(refs >= 0, refs, n_int + (-refs - 1))
    seen = np.bincount(slots, minlength=n_int + n_leaves)
    if seen[0]:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: tree {tree}: the root (node 0) is the child of another node "
            "(a cycle in left_child/right_child)."
        )
    bad = np.flatnonzero(seen[1:] != 1) + 1
    if bad.size:
        s = int(bad[0])
        what = f"node {s}" if s < n_int else f"leaf {s - n_int}"
        raise ModelParseError(
            f"Ill-formed LightGBM model text: tree {tree}: {what} is the child of {int(seen[s])} nodes "
            "in left_child/right_child (expected exactly 1)."
        )


def _add_text_tree(builder: _Builder, kv: Mapping[str, str], tree: int) -> None:
    if "num_leaves" not in kv:
        raise ModelParseError(f"Ill-formed LightGBM model text: tree {tree}: need 'num_leaves'.")
    if kv.get("is_linear", "0").strip() not in ("0", ""):
        raise ModelParseError(
            f"Unsupported LightGBM model: tree {tree} is a linear tree (is_linear=1, linear_tree=true). "
            "budget_extras represents constant-leaf trees only."
        )
    n_leaves = _tree_number(kv, "num_leaves", tree, "", int)
    if not 1 <= n_leaves < 2**31:
        raise ModelParseError(f"Ill-formed LightGBM model text: tree {tree}: 'num_leaves'={n_leaves}.")
    n_int = n_leaves - 1
    num_cat = _tree_number(kv, "num_cat", tree, "0", int)
    if not 0 <= num_cat <= n_int:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: tree {tree}: 'num_cat'={num_cat}, expected 0..{n_int}."
        )
    shrinkage = _tree_number(kv, "shrinkage", tree, "1", float)
    leaf_value = _num_list(kv, "leaf_value", n_leaves, tree, np.float64)
    leaf_weight = _num_list(kv, "leaf_weight", n_leaves, tree, np.float64, default=np.nan)
    leaf_count = _num_list(kv, "leaf_count", n_leaves, tree, np.int64, default=0)
    split_feature = _num_list(kv, "split_feature", n_int, tree, np.int64)
    split_gain = _num_list(kv, "split_gain", n_int, tree, np.float64, default=np.nan)
    threshold = _num_list(kv, "threshold", n_int, tree, np.float64)
    decision_type = _num_list(kv, "decision_type", n_int, tree, np.int64, default=0)
    left = _num_list(kv, "left_child", n_int, tree, np.int64)
    right = _num_list(kv, "right_child", n_int, tree, np.int64)
    internal_value = _num_list(kv, "internal_value", n_int, tree, np.float64, default=np.nan)
    internal_weight = _num_list(kv, "internal_weight", n_int, tree, np.float64, default=np.nan)
    internal_count = _num_list(kv, "internal_count", n_int, tree, np.int64, default=0)
    if num_cat > 0:
        bounds = _num_list(kv, "cat_boundaries", num_cat + 1, tree, np.int64)
        words_raw = kv.get("cat_threshold", "")
        try:
            words = np.array([int(v) for v in words_raw.split()], dtype=np.int64)
        except (ValueError, OverflowError):
            raise ModelParseError(
                f"Ill-formed LightGBM model text: tree {tree}: 'cat_threshold' must hold 32-bit words."
            ) from None
        if words.size and (words.min() < 0 or words.max() >= 2**32):
            raise ModelParseError(
                f"Ill-formed LightGBM model text: tree {tree}: 'cat_threshold' must hold 32-bit words."
            )
        if bounds[0] != 0 or (np.diff(bounds) < 0).any():
            raise ModelParseError(
                f"Ill-formed LightGBM model text: tree {tree}: 'cat_boundaries' must start at 0 and not decrease."
            )
        if bounds[-1] != words.size:
            raise ModelParseError(
                f"Ill-formed LightGBM model text: tree {tree}: cat_boundaries end at {bounds[-1]} but "
                f"cat_threshold has {words.size} words."
            )
    for name, arr in (("left_child", left), ("right_child", right)):
        if arr.size and ((arr >= n_int) | (arr < -n_leaves)).any():
            raise ModelParseError(f"Ill-formed LightGBM model text: tree {tree}: {name!r} out of range.")
    _check_child_links(left, right, n_leaves, tree)

    def children(ref: int) -> tuple[int, int] | None:
        if ref < 0:
            return None
        return int(left[ref]), int(right[ref])

    def fill(ref: int, depth: int) -> None:
        if ref < 0:
            leaf = ~ref
            builder.add_leaf(float(leaf_value[leaf]), int(leaf_count[leaf]), float(leaf_weight[leaf]), leaf)
            return
        dt = int(decision_type[ref])
        cats: list[int] | None = None
        if dt & 1:
            cat_idx = int(threshold[ref])
            if not 0 <= cat_idx < num_cat:
                raise ModelParseError(
                    f"Ill-formed LightGBM model text: tree {tree}: node {ref}: categorical threshold "
                    f"{threshold[ref]} is not a category-set index in [0, {num_cat})."
                )
            cats = _decode_bitset(words[bounds[cat_idx] : bounds[cat_idx + 1]])
        feat = int(split_feature[ref])
        builder.add_split(
            feature=feat,
            threshold=float(threshold[ref]),
            cats=cats,
            default_left=bool(dt & 2),
            missing_type=(dt >> 2) & 3,
            value=float(internal_value[ref]),
            count=int(internal_count[ref]),
            weight=float(internal_weight[ref]),
            gain=float(split_gain[ref]),
        )

    root = 0 if n_leaves > 1 else ~0
    n_before = len(builder.left)
    builder.add_tree(root, children, fill, shrinkage, max_nodes=2 * n_leaves - 1, tree=tree)
    if len(builder.left) - n_before != 2 * n_leaves - 1:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: tree {tree}: child links "
            f"do not form a tree with {n_leaves} leaves."
        )


def _header_int(head: Mapping[str, str], key: str, low: int, *, default: int | None = None) -> int:
    """Return an integer header value in [low, 2**31); ModelParseError names the key."""
    raw = head.get(key, "")
    if raw == "" and default is not None:
        return default
    try:
        v = int(raw)
    except ValueError:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: header {key!r} must be an integer, got {raw!r}."
        ) from None
    if not low <= v < 2**31:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: header {key!r} must be in [{low}, 2**31), got {v}."
        )
    return v


def _tree_number(kv: Mapping[str, str], key: str, tree: int, default: str, cast: Callable[[str], Any]) -> Any:
    """Return a scalar tree value; ModelParseError names the tree and the key."""
    raw = kv.get(key, default) or default
    try:
        return cast(raw)
    except ValueError:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: tree {tree}: {key!r} must be a number, got {raw!r}."
        ) from None


#: The objective names LightGBM writes into model text (``ObjectiveFunction::ToString``); its loader
#: refuses any other.
_OBJECTIVES = frozenset(
    "binary cross_entropy cross_entropy_lambda custom fair gamma huber lambdarank mape multiclass "
    "multiclassova poisson quantile rank_xendcg regression regression_l1 tweedie".split()
)


def parse_model_string(text: str) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Parse LightGBM model text (``Booster.model_to_string()`` / a saved model file).

    Parameters
    ----------
    text : str
        The model text.

    Returns
    -------
    arrays : dict of str to numpy.ndarray
        Flat pre-order node arrays and per-tree arrays (see ``TreeEnsemble``).
    meta : dict
        num_class, num_tree_per_iteration, max_feature_idx, objective, average_output,
        feature_names, feature_infos, pandas_categorical, version, parameters.
    """
    if not isinstance(text, str):
        raise TypeError(f"The model text must be a str. Got {type(text).__name__}.")
    if "\0" in text:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: a NUL byte at offset {text.index(chr(0))} (not a model text)."
        )
    header_lines, trees, tail = _split_sections(text)
    if not header_lines or header_lines[0].strip() != "tree":
        raise ModelParseError(
            "Ill-formed LightGBM model text: the first line must be 'tree' (is this a LightGBM model file?)."
        )
    head = _kv(header_lines[1:])
    for key in ("num_class", "max_feature_idx"):
        if key not in head:
            raise ModelParseError(f"Ill-formed LightGBM model text: need {key!r} in the header.")
    objective = head.get("objective", "").split()
    if objective and objective[0] not in _OBJECTIVES:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: 'objective'={objective[0]!r} is not an objective LightGBM "
            f"writes (one of {', '.join(sorted(_OBJECTIVES))})."
        )
    num_class = _header_int(head, "num_class", 1)
    ntpi = _header_int(head, "num_tree_per_iteration", 1, default=num_class)
    max_feature_idx = _header_int(head, "max_feature_idx", 0)
    n_features = max_feature_idx + 1
    names = head.get("feature_names", "").split()
    if not names:
        if n_features > 1_000_000:
            raise ModelParseError(
                f"Ill-formed LightGBM model text: 'max_feature_idx'={max_feature_idx} without "
                "'feature_names'; expected the feature_names line LightGBM writes."
            )
        names = [f"Column_{i}" for i in range(n_features)]
    if len(names) != n_features:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: {len(names)} "
            f"feature_names for max_feature_idx={max_feature_idx}."
        )
    infos = head.get("feature_infos", "").split()
    if infos and len(infos) != n_features:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: header 'feature_infos' has {len(infos)} entries for "
            f"max_feature_idx={max_feature_idx}, expected {n_features}."
        )
    if not infos:
        infos = ["none"] * n_features
    if len(trees) % ntpi:
        raise ModelParseError(
            f"Ill-formed LightGBM model text: {len(trees)} trees do not form whole iterations of "
            f"num_tree_per_iteration={ntpi}."
        )
    builder = _Builder()
    for pos, (tid, lines) in enumerate(trees):
        if tid != pos:
            raise ModelParseError(f"Ill-formed LightGBM model text: tree {pos} is labelled 'Tree={tid}'.")
        _add_text_tree(builder, _kv(lines), tid)
    pandas_categorical = None
    marker = "pandas_categorical:"
    at = tail.rfind(marker)
    if at >= 0:
        rest = tail[at + len(marker) :]
        raw = rest.splitlines()[0] if rest.strip() else ""
        try:
            pandas_categorical = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ModelParseError(
                f"Ill-formed LightGBM model text: 'pandas_categorical' must be JSON, got {raw[:60]!r} "
                "(is the file truncated?)."
            ) from exc
    meta = {
        "version": head.get("version", "v4"),
        "num_class": num_class,
        "num_tree_per_iteration": ntpi,
        "max_feature_idx": max_feature_idx,
        "objective": head.get("objective", ""),
        "average_output": "average_output" in head,
        "feature_names": tuple(names),
        "feature_infos": tuple(infos),
        "pandas_categorical": pandas_categorical,
        "parameters": _parameters(tail),
    }
    return builder.arrays(), meta


def _parameters(tail: str) -> dict[str, str]:
    """Training parameters of the ``parameters:`` section (``[key: value]`` lines), as text."""
    out: dict[str, str] = {}
    inside = False
    for line in tail.splitlines():
        line = line.strip()
        if line == "parameters:":
            inside = True
        elif line == "end of parameters":
            break
        elif inside and line.startswith("[") and line.endswith("]") and ": " in line:
            key, value = line[1:-1].split(": ", 1)
            out[key] = value
    return out


# ----------------------------------------------------------------------------- dump dict


def _feature_info_text(info: Any) -> str:
    if isinstance(info, str):
        return info
    if not isinstance(info, Mapping):
        return "none"
    values = info.get("values") or []
    if values:
        return ":".join(str(int(v)) for v in values)
    lo, hi = info.get("min_value"), info.get("max_value")
    if lo is None or hi is None:
        return "none"
    return f"[{float(lo)!r}:{float(hi)!r}]"


def _need(d: Mapping[str, Any], key: str, tree: int, where: str) -> Any:
    if key not in d:
        raise ModelParseError(f"Ill-formed LightGBM dump: tree {tree}: {where}: need {key!r}.")
    return d[key]


def _dump_size(root: Any) -> int:
    """Return the number of distinct node dicts reachable from ``root`` (each counted once).

    A tree of ``n`` nodes has ``n`` distinct node dicts; a dump whose child links revisit a dict
    (a cycle, a dict that contains itself, a shared child) makes the layout walk reach more
    nodes than this, so it bounds that walk for a tree that states no ``num_leaves``.
    """
    seen: set[int] = set()
    stack = [root]
    while stack:
        ref = stack.pop()
        if not isinstance(ref, Mapping) or id(ref) in seen:
            continue
        seen.add(id(ref))
        if "leaf_value" not in ref:
            stack.extend(ref.get(k) for k in ("left_child", "right_child"))
    return max(len(seen), 1)


def _add_dump_tree(builder: _Builder, info: Mapping[str, Any], tree: int) -> None:
    root = _need(info, "tree_structure", tree, "tree_info")
    shrinkage = float(info.get("shrinkage", 1.0))

    def children(ref: Mapping[str, Any]) -> tuple[Any, Any] | None:
        if "leaf_value" in ref:
            return None
        return (
            _need(ref, "left_child", tree, f"node {ref.get('split_index')}"),
            _need(ref, "right_child", tree, f"node {ref.get('split_index')}"),
        )

    def fill(ref: Mapping[str, Any], depth: int) -> None:
        if not isinstance(ref, Mapping):
            raise ModelParseError(f"Ill-formed LightGBM dump: tree {tree}: a node is not a dict.")
        if "leaf_value" in ref:
            if "leaf_coeff" in ref or "leaf_features" in ref:
                raise ModelParseError(
                    f"Unsupported LightGBM model: tree {tree} is a linear tree (leaf_coeff in the dump). "
                    "budget_extras represents constant-leaf trees only."
                )
            weight = ref.get("leaf_weight")
            builder.add_leaf(
                float(ref["leaf_value"]),
                int(ref.get("leaf_count", 0) or 0),
                float("nan") if weight is None else float(weight),
                int(ref.get("leaf_index", 0)),
            )
            return
        where = f"node {ref.get('split_index')}"
        dtype = _need(ref, "decision_type", tree, where)
        thr = _need(ref, "threshold", tree, where)
        cats: list[int] | None = None
        if dtype == "==":
            try:
                cats = [int(v) for v in str(thr).split("||") if v != ""]
            except ValueError as exc:
                raise ModelParseError(
                    f"Ill-formed LightGBM dump: tree {tree}: {where}: bad categorical threshold {thr!r}."
                ) from exc
            thr_f = float("nan")
        elif dtype == "<=":
            thr_f = float(thr)
        else:
            raise ModelParseError(
                f"Unsupported LightGBM dump: tree {tree}: {where}: "
                f"decision_type {dtype!r} (expected '<=' or '==')."
            )
        mt = ref.get("missing_type", "None")
        if mt not in _MISSING_NAMES:
            raise ModelParseError(f"Ill-formed LightGBM dump: tree {tree}: {where}: missing_type {mt!r}.")
        weight = ref.get("internal_weight")
        builder.add_split(
            feature=int(_need(ref, "split_feature", tree, where)),
            threshold=thr_f,
            cats=cats,
            default_left=bool(ref.get("default_left", False)),
            missing_type=_MISSING_NAMES[mt],
            value=float(ref.get("internal_value", float("nan"))),
            count=int(ref.get("internal_count", 0) or 0),
            weight=float("nan") if weight is None else float(weight),
            gain=float(ref.get("split_gain", float("nan"))),
        )

    n_leaves = info.get("num_leaves")
    if isinstance(n_leaves, int) and not isinstance(n_leaves, bool) and n_leaves >= 1:
        max_nodes = 2 * n_leaves - 1
    else:  # no count to check against: bound the walk by the dump's own size (a dict may contain itself)
        max_nodes = _dump_size(root)
    builder.add_tree(root, children, fill, shrinkage, max_nodes=max_nodes, tree=tree)


def parse_dump(dump: Mapping[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Parse the dict of ``Booster.dump_model()``; same outputs as :func:`parse_model_string`.

    Parameters
    ----------
    dump : mapping
        The dict of ``Booster.dump_model()``.
    """
    if not isinstance(dump, Mapping):
        raise TypeError(f"The dump must be a dict (Booster.dump_model()). Got {type(dump).__name__}.")
    for key in ("num_class", "max_feature_idx", "tree_info"):
        if key not in dump:
            raise ModelParseError(f"Ill-formed LightGBM dump: need {key!r}.")
    num_class = int(dump["num_class"])
    max_feature_idx = int(dump["max_feature_idx"])
    n_features = max_feature_idx + 1
    names = list(dump.get("feature_names") or [f"Column_{i}" for i in range(n_features)])
    if len(names) != n_features:
        raise ModelParseError(
            f"Ill-formed LightGBM dump: {len(names)} feature_names for max_feature_idx={max_feature_idx}."
        )
    raw_infos = dump.get("feature_infos") or {}
    infos = [
        _feature_info_text(raw_infos.get(n)) if isinstance(raw_infos, Mapping) else "none" for n in names
    ]
    builder = _Builder()
    for pos, info in enumerate(dump["tree_info"]):
        _add_dump_tree(builder, info, pos)
    meta: dict[str, Any] = {
        "version": str(dump.get("version", "v4")),
        "num_class": num_class,
        "num_tree_per_iteration": int(dump.get("num_tree_per_iteration", num_class)),
        "max_feature_idx": max_feature_idx,
        "objective": str(dump.get("objective", "") or ""),
        "average_output": bool(dump.get("average_output", False)),
        "feature_names": tuple(str(n) for n in names),
        "feature_infos": tuple(infos),
        "pandas_categorical": dump.get("pandas_categorical"),
        "parameters": {},  # dump_model() has no parameters section
    }
    return builder.arrays(), meta
