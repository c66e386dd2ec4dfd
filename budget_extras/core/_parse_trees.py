"""The trees of a LightGBM model text read at once: every tree key converted in one pass over all trees.

``_parse`` reads each tree key by key and lays each tree out node by node (``_Builder``), which
costs a few microseconds per key and per node: on a 200-tree model of small trees, longer than
training it. Here each key is checked and converted for all trees together (one pattern match,
one ``float``/``int`` per number) and the pre-order layout gathers the node fields with numpy.
This is only a faster road to the same arrays: on anything it does not accept at once (a missing
or malformed key, a value out of range, child links that are not a tree, a linear tree, a
category set it cannot place) it answers ``None`` and the caller reads the trees the reference
way, which gives the exact verdict and message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["INTERNAL_KEYS", "child_links_ok", "decode_bitset", "read_trees_at_once"]

_INT32 = 2**31
#: (key, integer, required, default) of the internal-node keys: both readers (this one and
#: ``_parse``'s tree-by-tree reader) read them by this table.
INTERNAL_KEYS = (
    ("left_child", True, True, 0),
    ("right_child", True, True, 0),
    ("split_feature", True, True, 0),
    ("threshold", False, True, np.nan),
    ("split_gain", False, False, np.nan),
    ("decision_type", True, False, 0),
    ("internal_value", False, False, np.nan),
    ("internal_weight", False, False, np.nan),
    ("internal_count", True, False, 0),
)


def decode_bitset(words: np.ndarray) -> list[int]:
    """Return the set bits of a category set's 32-bit words, ascending (the categories it sends left)."""
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


def _words(value: str) -> list[str]:
    return [w for w in value.split(" ") if w]


def _key_values(
    trees: Sequence[Mapping[str, str]], key: str, counts: Sequence[int], patterns: tuple[Any, Any], *,
    integer: bool = False, required: bool = False, default: float = np.nan,
    bounds: tuple[int, int] = (-_INT32, _INT32),
) -> np.ndarray | None:
    """All trees' values of ``key`` concatenated (``counts[t]`` of tree ``t``, ``default`` if absent); None if off.

    A tree with ``counts[t]`` 0 is not read (the caller checks a key that must then be empty).
    """
    words: list[str] = []
    present: list[tuple[int, int]] = []
    pos = 0
    for kv, n in zip(trees, counts, strict=True):
        if n:
            raw = kv.get(key)
            if raw is None:
                if required:
                    return None
            else:
                w = _words(raw)
                if len(w) != n:
                    return None
                words += w
                present.append((pos, n))
        pos += n
    if words and not patterns[integer].fullmatch(" ".join(words)):
        return None
    values = list(map(int if integer else float, words))
    if integer and values and not (bounds[0] <= min(values) and max(values) < bounds[1]):
        return None
    out = np.full(pos, default, dtype=np.int64 if integer else np.float64)
    if len(values) == pos:
        out[:] = values
    else:
        start = 0
        for p, n in present:
            out[p : p + n] = values[start : start + n]
            start += n
    return out


def _one_leaf_weight(kv: Mapping[str, str], float_pattern: Any) -> str:
    """Return a one-leaf tree's ``leaf_weight``: its one number if it holds one, else NaN (never refused)."""
    words = _words(kv.get("leaf_weight", ""))
    return words[0] if len(words) == 1 and float_pattern.fullmatch(words[0]) else "nan"


def _preorder(left: list[int], right: list[int], n_leaves: int) -> tuple[list[int], list[int], list[int]] | None:
    """Refs (internal ``i`` >= 0, leaf ``~l``) in pre-order, each one's parent position and depth; None: not a tree."""
    refs: list[int] = []
    parent: list[int] = []
    depth: list[int] = []
    stack = [(0 if n_leaves > 1 else -1, -1, 0)]
    limit = 2 * n_leaves - 1
    while stack:
        ref, par, d = stack.pop()
        if len(refs) >= limit:
            return None
        pos = len(refs)
        refs.append(ref)
        parent.append(par)
        depth.append(d)
        if ref >= 0:
            stack.append((right[ref], pos, d + 1))
            stack.append((left[ref], pos, d + 1))
    return (refs, parent, depth) if len(refs) == limit else None


def _category_values(
    trees: Sequence[Mapping[str, str]], n_cat: list[int], patterns: tuple[Any, Any]
) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Each tree's ``cat_boundaries`` and ``cat_threshold`` words (empty without categorical splits)."""
    empty = (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    out = [empty] * len(n_cat)
    idx = [t for t, k in enumerate(n_cat) if k]
    sub = [trees[t] for t in idx]
    if any("cat_boundaries" not in kv or "cat_threshold" not in kv for kv in sub):
        return None
    counts = [n_cat[t] + 1 for t in idx]
    b_all = _key_values(sub, "cat_boundaries", counts, patterns, integer=True, required=True, default=0)
    if b_all is None:
        return None
    cuts = np.cumsum([0, *counts]).tolist()
    bounds = [b_all[cuts[j] : cuts[j + 1]] for j in range(len(idx))]
    if any(b[0] != 0 or (np.diff(b) < 0).any() for b in bounds):
        return None
    sizes = [int(b[-1]) for b in bounds]
    if any(not size and _words(kv["cat_threshold"]) for kv, size in zip(sub, sizes, strict=True)):
        return None  # no words expected, some written
    w_all = _key_values(sub, "cat_threshold", sizes, patterns, integer=True, required=True, default=0,
                        bounds=(0, 2**32))
    if w_all is None:
        return None
    cuts = np.cumsum([0, *sizes]).tolist()
    for j, t in enumerate(idx):
        out[t] = (bounds[j], w_all[cuts[j] : cuts[j + 1]])
    return out


def _layout(
    n_leaves: list[int], left: np.ndarray, right: np.ndarray, int_off: np.ndarray, leaf_off: np.ndarray
) -> dict[str, np.ndarray] | None:
    """Pre-order positions of every tree's nodes: for each output node, its tree's internal / leaf index."""
    refs_all: list[int] = []
    parent_all: list[int] = []
    depth_all: list[int] = []
    tree_offset = [0]
    lefts, rights = left.tolist(), right.tolist()
    for t, n in enumerate(n_leaves):
        a, b = int(int_off[t]), int(int_off[t + 1])
        walk = _preorder(lefts[a:b], rights[a:b], n)
        if walk is None:
            return None
        refs, parent, depth = walk
        base = tree_offset[-1]
        refs_all += refs
        parent_all += [p + base if p >= 0 else -1 for p in parent]
        depth_all += depth
        tree_offset.append(base + len(refs))
    refs_arr = np.array(refs_all, dtype=np.int64)
    tree_of = np.repeat(np.arange(len(n_leaves)), np.diff(tree_offset))
    is_leaf = refs_arr < 0
    return {
        "is_leaf": is_leaf, "tree_of": tree_of, "parent": np.array(parent_all, dtype=np.int64),
        "depth": np.array(depth_all, dtype=np.int32), "tree_offset": np.array(tree_offset, dtype=np.int64),
        "internal": np.where(is_leaf, -1, refs_arr + int_off[tree_of]),
        "leaf": np.where(is_leaf, ~refs_arr + leaf_off[tree_of], -1), "local_leaf": np.where(is_leaf, ~refs_arr, -1),
    }


def child_links_ok(left: np.ndarray, right: np.ndarray, n_leaves: np.ndarray, int_off: np.ndarray) -> bool:
    """Every tree's child links in range and naming each node but the root exactly once (``_check_child_links``).

    ``left``, ``right``: every tree's links concatenated; ``int_off``: each tree's first internal
    node in them (cumulative ``n_leaves - 1`` with a leading 0). Cycles are not looked for.
    """
    n_int = np.repeat(n_leaves - 1, n_leaves - 1)
    for arr in (left, right):
        if arr.size and ((arr >= n_int) | (arr < -np.repeat(n_leaves, n_leaves - 1))).any():
            return False
    if not left.size:
        return True
    tree_slot = np.repeat(int_off[:-1] + np.cumsum(np.concatenate([[0], n_leaves[:-1]])), n_leaves - 1)
    refs = np.concatenate([left, right])
    base, width = np.concatenate([tree_slot, tree_slot]), np.concatenate([n_int, n_int])
    slots = base + np.where(refs >= 0, refs, width + (-refs - 1))
    seen = np.bincount(slots, minlength=int(int_off[-1] + n_leaves.sum()))
    roots = (int_off[:-1] + np.cumsum(np.concatenate([[0], n_leaves[:-1]])))[n_leaves > 1]
    expect = np.ones(seen.size, dtype=np.int64)
    expect[roots] = 0
    single = np.flatnonzero(n_leaves == 1)  # a one-leaf tree: its leaf is no node's child
    expect[(int_off[single] + np.cumsum(np.concatenate([[0], n_leaves[:-1]]))[single])] = 0
    return bool((seen == expect).all())


def _cats(
    lay: dict[str, np.ndarray], dt: np.ndarray, threshold: np.ndarray, num_cat: list[int],
    sets: list[tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Categorical flags, category offsets and values per output node (:func:`decode_bitset` of each set)."""
    node = lay["internal"]
    is_cat = np.zeros(node.size, dtype=bool)
    inner = node >= 0
    is_cat[inner] = (dt[node[inner]] & 1).astype(bool)
    lengths = np.zeros(node.size, dtype=np.int64)
    flat: list[int] = []
    for i in np.flatnonzero(is_cat).tolist():
        t = int(lay["tree_of"][i])
        x = float(threshold[node[i]])
        if not (np.isfinite(x) and 0 <= int(x) < num_cat[t]):
            return None
        b, w = sets[t]
        c = int(x)
        values = sorted(set(decode_bitset(w[b[c] : b[c + 1]])))
        lengths[i] = len(values)
        flat += values
    offsets = np.zeros(node.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return is_cat, offsets, np.array(flat, dtype=np.int32)


def read_trees_at_once(
    trees: Sequence[Mapping[str, str]], max_feature_idx: int, patterns: tuple[Any, Any], int_pattern: Any
) -> dict[str, np.ndarray] | None:
    """Return the flat pre-order arrays of ``trees`` (``_Builder.arrays()``'s), or None to read them one by one.

    ``patterns``: the compiled all-words patterns (floats, integers); ``int_pattern``: one integer.
    """
    head = []
    for kv in trees:
        n_raw, c_raw = kv.get("num_leaves", ""), kv.get("num_cat", "")
        if not (int_pattern.fullmatch(n_raw) and int_pattern.fullmatch(c_raw)) or "leaf_value" not in kv:
            return None
        if kv.get("is_linear", "0") != "0":
            return None
        head.append((int(n_raw), int(c_raw)))
    n_leaves = np.array([h[0] for h in head], dtype=np.int64)
    if n_leaves.size and (n_leaves.min() < 1 or n_leaves.max() >= _INT32):
        return None
    nl = n_leaves.tolist()
    n_cat = [k if n > 1 else 0 for n, k in head]
    if any(not 0 <= k <= n for n, k in head):
        return None
    n_int = [n - 1 for n in nl]
    weights = [kv if n > 1 else {"leaf_weight": _one_leaf_weight(kv, patterns[False])}
               for kv, n in zip(trees, nl, strict=True)]
    got = {
        "leaf_value": _key_values(trees, "leaf_value", nl, patterns, required=True),
        "leaf_count": _key_values(trees, "leaf_count", nl, patterns, integer=True, default=0),
        "leaf_weight": _key_values(weights, "leaf_weight", nl, patterns),
        "shrinkage": _key_values(trees, "shrinkage", [1] * len(nl), patterns, default=1.0),
        **{key: _key_values(trees, key, n_int, patterns, integer=i, required=r, default=d)
           for key, i, r, d in INTERNAL_KEYS},
    }
    values = {k: v for k, v in got.items() if v is not None}
    if len(values) < len(got):
        return None
    leaf = {k: values[k] for k in ("leaf_value", "leaf_count", "leaf_weight")}
    inner = {k: values[k] for k, *_ in INTERNAL_KEYS}
    shrink = values["shrinkage"]
    sets = _category_values(trees, n_cat, patterns)
    feat = inner["split_feature"]
    if sets is None or (feat.size > 0 and bool(((feat < 0) | (feat > max_feature_idx)).any())):
        return None
    int_off = np.concatenate([[0], np.cumsum(n_int)]).astype(np.int64)
    leaf_off = np.concatenate([[0], np.cumsum(nl)]).astype(np.int64)
    left, right = inner["left_child"], inner["right_child"]
    if not child_links_ok(left, right, n_leaves, int_off):
        return None
    lay = _layout(nl, left, right, int_off, leaf_off)
    if lay is None:
        return None
    return _arrays(lay, leaf, inner, shrink, n_cat, sets)


def _arrays(
    lay: dict[str, np.ndarray], leaf: dict[str, Any], inner: dict[str, Any], shrink: np.ndarray, n_cat: list[int],
    sets: list[tuple[np.ndarray, np.ndarray]],
) -> dict[str, np.ndarray] | None:
    """Gather the node fields in pre-order (leaves from the leaf keys, internal nodes from the others)."""
    is_leaf, node, lf = lay["is_leaf"], np.maximum(lay["internal"], 0), np.maximum(lay["leaf"], 0)
    inner = {k: v if v.size else np.zeros(1, v.dtype) for k, v in inner.items()}  # only leaves: read, then masked
    dt = inner["decision_type"]
    cats = _cats(lay, dt, inner["threshold"], n_cat, sets)
    if cats is None:
        return None
    is_cat, cat_offsets, cat_values = cats
    pos = np.arange(is_leaf.size)
    parent = lay["parent"]
    left = np.full(is_leaf.size, -1, dtype=np.int32)
    right = np.full(is_leaf.size, -1, dtype=np.int32)
    has_parent = parent >= 0
    child, par = pos[has_parent], parent[has_parent]
    first = child == par + 1  # the left child comes right after its parent in pre-order
    left[par[first]] = child[first]
    right[par[~first]] = child[~first]

    def pick(leaf_key: str, inner_key: str, dtype: Any) -> np.ndarray:
        return np.where(is_leaf, leaf[leaf_key][lf], inner[inner_key][node]).astype(dtype)

    dtn = dt[node]
    return {
        "left_child": left, "right_child": right, "parent": parent.astype(np.int32),
        "feature": np.where(is_leaf, -1, inner["split_feature"][node]).astype(np.int32),
        "threshold": np.where(is_leaf | is_cat, np.nan, inner["threshold"][node]),
        "is_categorical": is_cat, "cat_offsets": cat_offsets, "cat_values": cat_values,
        "default_left": ~is_leaf & ((dtn & 2) != 0),
        "missing_type": np.where(is_leaf, 0, (dtn >> 2) & 3).astype(np.int8),
        "value": pick("leaf_value", "internal_value", np.float64),
        "count": pick("leaf_count", "internal_count", np.int64),
        "weight": pick("leaf_weight", "internal_weight", np.float64), "depth": lay["depth"],
        "split_gain": np.where(is_leaf, np.nan, inner["split_gain"][node]),
        "leaf_index": np.where(is_leaf, lay["local_leaf"], -1).astype(np.int32),
        "tree_offset": lay["tree_offset"], "shrinkage": shrink.astype(np.float64),
    }
