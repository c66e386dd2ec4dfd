"""Modify ensembles (collapse subtrees, select trees) and write LightGBM model text."""

from __future__ import annotations

import json
import os
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ._representation import EnsembleArrays
from ._validation import check_mask_or_indices

_E = TypeVar("_E", bound=EnsembleArrays)

__all__ = ["collapse", "save_model", "select_trees", "to_model_string"]


def _preorder_leaf_ids(ens: EnsembleArrays, is_leaf: np.ndarray, node_tree: np.ndarray) -> np.ndarray:
    """Rank of each leaf among its tree's leaves in pre-order (0, 1, ...); -1 for internal nodes."""
    leaf_pos = np.flatnonzero(is_leaf)
    t = node_tree[leaf_pos]
    first = np.searchsorted(t, t, side="left")  # index (in leaf_pos) of the tree's first leaf
    out = np.full(is_leaf.size, -1, dtype=np.int64)
    out[leaf_pos] = np.arange(leaf_pos.size) - first
    return out


def kept_layout(
    ens: EnsembleArrays, kept: np.ndarray, node_tree: np.ndarray, is_cat: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``tree_offset``, ``cat_offsets`` and ``cat_values`` of an ensemble reduced to the nodes ``kept``.

    ``kept`` are old node indices in increasing order, ``node_tree`` their trees, ``is_cat`` which
    of them keep a categorical split (their category lists are carried over, in order).
    """
    tree_offset = np.zeros(ens.n_trees + 1, dtype=np.int64)
    np.cumsum(np.bincount(node_tree, minlength=ens.n_trees), out=tree_offset[1:])
    lens = np.diff(ens.cat_offsets)[kept] * is_cat
    starts = ens.cat_offsets[:-1][kept]
    cat_values = (
        np.concatenate([ens.cat_values[s : s + k] for s, k in zip(starts[is_cat], lens[is_cat], strict=True)])
        if is_cat.any()
        else np.zeros(0, dtype=np.int32)
    )
    cat_offsets = np.zeros(kept.size + 1, dtype=np.int64)
    np.cumsum(lens, out=cat_offsets[1:])
    return tree_offset, cat_offsets, cat_values


def collapse(ens: _E, nodes: Any) -> _E:
    """Return a new ensemble where each listed internal node becomes a leaf.

    The new leaf's output is the node's internal value (what LightGBM's model text records);
    its subtree is dropped and node numbering is rebuilt. Leaves in ``nodes`` are ignored,
    and so are nodes inside another collapsed subtree. Leaf ids (``leaf_index``) of the trees
    that change are renumbered in pre-order; other trees keep theirs.

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    nodes : array-like of int or bool mask of shape (n_nodes,)
        Global node indices to collapse.

    Returns
    -------
    TreeEnsemble
    """
    idx = check_mask_or_indices(nodes, name="nodes", n=ens.n_nodes)
    idx = np.unique(idx[~ens.is_leaf[idx]])
    if idx.size == 0:
        return ens
    bad = idx[np.isnan(ens.value[idx])]
    if bad.size:
        raise ValueError(
            f"Cannot collapse node {int(bad[0])}: its internal value is unknown (NaN) in this model."
        )
    n = ens.n_nodes
    delta = np.zeros(n + 1, dtype=np.int64)
    np.add.at(delta, idx + 1, 1)
    np.add.at(delta, ens.subtree_end[idx], -1)
    removed = np.cumsum(delta[:-1]) > 0
    keep = ~removed
    new_leaf = np.zeros(n, dtype=bool)
    new_leaf[idx] = True
    new_leaf &= keep
    old_to_new = np.cumsum(keep) - 1
    kept = np.flatnonzero(keep)
    is_leaf = (ens.is_leaf | new_leaf)[kept]

    def remap(child: np.ndarray) -> np.ndarray:
        c = child[kept].astype(np.int64)
        out = np.where(c >= 0, old_to_new[np.maximum(c, 0)], -1)
        out[is_leaf] = -1
        return out

    node_tree = ens.node_tree[kept]
    changed_trees = np.zeros(ens.n_trees, dtype=bool)
    changed_trees[ens.node_tree[idx]] = True
    leaf_index = np.where(is_leaf, ens.leaf_index[kept], -1).astype(np.int64)
    renum = _preorder_leaf_ids(ens, is_leaf, node_tree)
    leaf_index = np.where(changed_trees[node_tree] & is_leaf, renum, leaf_index)
    is_cat = ens.is_categorical[kept] & ~is_leaf
    tree_offset, cat_offsets, cat_values = kept_layout(ens, kept, node_tree, is_cat)
    return ens.replace(
        left_child=remap(ens.left_child),
        right_child=remap(ens.right_child),
        feature=np.where(is_leaf, -1, ens.feature[kept]),
        threshold=np.where(is_leaf, np.nan, ens.threshold[kept]),
        is_categorical=is_cat,
        cat_offsets=cat_offsets,
        cat_values=cat_values,
        default_left=ens.default_left[kept] & ~is_leaf,
        missing_type=np.where(is_leaf, 0, ens.missing_type[kept]),
        value=ens.value[kept],
        count=ens.count[kept],
        weight=ens.weight[kept],
        split_gain=np.where(is_leaf, np.nan, ens.split_gain[kept]),
        leaf_index=leaf_index,
        tree_offset=tree_offset,
    )


def select_trees(ens: _E, indices: Any) -> _E:
    """Return a new ensemble with the trees ``indices``, in that order (keep, drop, reorder).

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    indices : array-like of int or bool mask of shape (n_trees,)
        Trees to keep, in the new order.

    Returns
    -------
    TreeEnsemble
        Each tree keeps its class (``tree_class``). LightGBM's model text assigns classes by
        position; see :func:`to_model_string` for how other orders are written.
    """
    sel = check_mask_or_indices(indices, name="indices", n=ens.n_trees)
    off = ens.tree_offset
    sizes = off[sel + 1] - off[sel]
    new_off = np.zeros(sel.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=new_off[1:])
    old_nodes = (
        np.concatenate([np.arange(off[t], off[t + 1]) for t in sel]) if sel.size else np.zeros(0, np.int64)
    )
    shift = np.repeat(new_off[:-1] - off[sel], sizes)

    def move(child: np.ndarray) -> np.ndarray:
        c = child[old_nodes].astype(np.int64)
        return np.where(c >= 0, c + shift, -1)

    lens = np.diff(ens.cat_offsets)[old_nodes]
    cat_values = (
        np.concatenate(
            [ens.cat_values[ens.cat_offsets[i] : ens.cat_offsets[i + 1]] for i in old_nodes[lens > 0]]
        )
        if (lens > 0).any()
        else np.zeros(0, dtype=np.int32)
    )
    cat_offsets = np.zeros(old_nodes.size + 1, dtype=np.int64)
    np.cumsum(lens, out=cat_offsets[1:])
    per_node = {
        name: getattr(ens, name)[old_nodes]
        for name in (
            "feature",
            "threshold",
            "is_categorical",
            "default_left",
            "missing_type",
            "value",
            "count",
            "weight",
            "split_gain",
            "leaf_index",
        )
    }
    return ens.replace(
        **per_node,
        left_child=move(ens.left_child),
        right_child=move(ens.right_child),
        cat_offsets=cat_offsets,
        cat_values=cat_values,
        tree_offset=new_off,
        shrinkage=ens.shrinkage[sel],
        tree_class=ens.tree_class[sel],
    )


# ----------------------------------------------------------------------------- writing


def _fmt(values: npt.ArrayLike) -> str:
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size and np.isnan(arr).all():
        return ""  # unknown (e.g. leaf_weight of a single-leaf tree): LightGBM writes nothing
    return " ".join(repr(float(v)) for v in np.nan_to_num(arr))


def _fmt_int(values: npt.ArrayLike) -> str:
    return " ".join(str(int(v)) for v in np.asarray(values).ravel())


def _tree_text(ens: EnsembleArrays, t: int) -> str:
    lo, hi = int(ens.tree_offset[t]), int(ens.tree_offset[t + 1])
    nodes = np.arange(lo, hi)
    leaf = ens.is_leaf[lo:hi]
    internal = nodes[~leaf]
    leaves = nodes[leaf]
    n_leaves = leaves.size
    lid = ens.leaf_index[leaves].astype(np.int64)
    if not np.array_equal(np.sort(lid), np.arange(n_leaves)):
        lid = np.arange(n_leaves)  # not a permutation: renumber in pre-order
    leaf_id = np.full(hi - lo, -1, dtype=np.int64)
    leaf_id[leaves - lo] = lid
    int_id = np.full(hi - lo, -1, dtype=np.int64)
    int_id[internal - lo] = np.arange(internal.size)

    def child_code(child: np.ndarray) -> np.ndarray:
        c = child.astype(np.int64) - lo
        return np.where(leaf[c], ~leaf_id[c], int_id[c])

    order = np.argsort(lid)
    leaf_nodes = leaves[order]
    lines = [f"num_leaves={n_leaves}"]
    cat_nodes = internal[ens.is_categorical[internal]]
    threshold = ens.threshold[internal].copy()
    bounds = [0]
    words: list[int] = []
    for k, node in enumerate(cat_nodes):
        cats = ens.cat_values[ens.cat_offsets[node] : ens.cat_offsets[node + 1]].astype(np.int64)
        n_words = int(cats.max()) // 32 + 1 if cats.size else 1
        bits = [0] * n_words
        for c in cats.tolist():
            bits[c >> 5] |= 1 << (c & 31)
        words.extend(bits)
        bounds.append(len(words))
        threshold[np.flatnonzero(internal == node)[0]] = k
    lines.append(f"num_cat={cat_nodes.size}")
    if internal.size:
        dt = (
            ens.is_categorical[internal].astype(np.int64)
            | (ens.default_left[internal].astype(np.int64) << 1)
            | (ens.missing_type[internal].astype(np.int64) << 2)
        )
        thr_text = " ".join(
            str(int(v)) if c else repr(float(v))
            for v, c in zip(threshold, ens.is_categorical[internal], strict=True)
        )
        lines += [
            f"split_feature={_fmt_int(ens.feature[internal])}",
            f"split_gain={_fmt(ens.split_gain[internal])}",
            f"threshold={thr_text}",
            f"decision_type={_fmt_int(dt)}",
            f"left_child={_fmt_int(child_code(ens.left_child[internal]))}",
            f"right_child={_fmt_int(child_code(ens.right_child[internal]))}",
        ]
    else:
        lines += [
            "split_feature=",
            "split_gain=",
            "threshold=",
            "decision_type=",
            "left_child=",
            "right_child=",
        ]
    lines += [
        f"leaf_value={_fmt(ens.value[leaf_nodes])}",
        f"leaf_weight={_fmt(ens.weight[leaf_nodes])}",
        f"leaf_count={_fmt_int(ens.count[leaf_nodes])}",
        f"internal_value={_fmt(ens.value[internal])}",
        f"internal_weight={_fmt(ens.weight[internal])}",
        f"internal_count={_fmt_int(ens.count[internal])}",
    ]
    if cat_nodes.size:
        lines += [f"cat_boundaries={_fmt_int(bounds)}", f"cat_threshold={_fmt_int(words)}"]
    lines += ["is_linear=0", f"shrinkage={float(ens.shrinkage[t])!r}"]
    return "\n".join(lines) + "\n\n"


_ZERO_TREE = (
    "num_leaves=1\nnum_cat=0\nsplit_feature=\nsplit_gain=\nthreshold=\ndecision_type=\nleft_child=\n"
    "right_child=\nleaf_value=0\nleaf_weight=\nleaf_count=0\ninternal_value=\ninternal_weight=\n"
    "internal_count=\nis_linear=0\nshrinkage=1\n\n"
)


def _iteration_layout(ens: EnsembleArrays) -> list[int]:
    """Tree written at each position of the model text (-1: a zero-output single-leaf tree).

    LightGBM assigns position ``p`` to class ``p % num_tree_per_iteration``. Trees already in
    that pattern are written as they are; otherwise each class's trees keep their relative
    order and missing slots are filled with zero trees (which changes no raw score).
    """
    k = ens.num_tree_per_iteration
    n = ens.n_trees
    if n % k == 0 and np.array_equal(ens.tree_class, np.arange(n) % k):
        return list(range(n))
    if ens.average_output:
        raise ValueError(
            "LightGBM model text assigns tree t to class t % num_tree_per_iteration; this random forest's "
            f"trees (num_tree_per_iteration={k}, n_trees={n}) do not follow that pattern, and padding with "
            "zero trees would change the average. Select whole iterations (all classes, in class order)."
        )
    queues = [np.flatnonzero(ens.tree_class == c).tolist() for c in range(k)]
    n_iter = max(len(q) for q in queues)
    return [queues[c][it] if it < len(queues[c]) else -1 for it in range(n_iter) for c in range(k)]


def to_model_string(ens: EnsembleArrays) -> str:
    """LightGBM model text for ``ens`` (loadable by upstream LightGBM and the fork).

    Parameters
    ----------
    ens : TreeEnsemble

    Returns
    -------
    str

    Notes
    -----
    LightGBM assigns tree ``t`` of the text to class ``t % num_tree_per_iteration``. When this
    ensemble's trees do not follow that pattern (trees of a multiclass model dropped or
    reordered), each class keeps its trees in order and empty slots get zero-output
    single-leaf trees, so the raw scores are unchanged (``pred_leaf`` then has extra columns).

    Raises
    ------
    ValueError
        For a random forest (``average_output``) whose trees are not in the positional
        pattern: padding would change the average.
    """
    k = ens.num_tree_per_iteration
    layout = _iteration_layout(ens)
    blocks = []
    for pos, t in enumerate(layout):
        body = _tree_text(ens, t) if t >= 0 else _ZERO_TREE
        blocks.append(f"Tree={pos}\n" + body + "\n")
    head = [
        "tree",
        f"version={ens.version or 'v4'}",
        f"num_class={ens.num_class}",
        f"num_tree_per_iteration={k}",
        "label_index=0",
        f"max_feature_idx={ens.max_feature_idx}",
    ]
    if ens.objective:
        head.append(f"objective={ens.objective}")
    if ens.average_output:
        head.append("average_output")
    head += [
        f"feature_names={' '.join(ens.feature_names)}",
        f"feature_infos={' '.join(ens.feature_infos)}",
        f"tree_sizes={' '.join(str(len(b.encode('utf-8'))) for b in blocks)}",
    ]
    text = "\n".join(head) + "\n\n" + "".join(blocks) + "end of trees\n"
    if ens.parameters:  # LightGBM's own layout; Booster(model_str=...) reads it back as .params
        text += "\nparameters:\n" + "".join(f"[{k}: {v}]\n" for k, v in ens.parameters.items())
        text += "\nend of parameters\n"
    text += "\npandas_categorical:" + json.dumps(ens.pandas_categorical, default=str) + "\n"
    return text


def save_model(ens: EnsembleArrays, path: str | os.PathLike[str]) -> None:
    """Write :func:`to_model_string` to ``path`` (UTF-8).

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    path : str or os.PathLike
        Where to write the model text.
    """
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(to_model_string(ens))
