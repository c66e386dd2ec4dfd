"""LightGBM model text <-> the flat arrays BudgetPrune needs (private, until the core's TreeEnsemble).

Nodes of all trees are concatenated, each tree in pre-order (left child first), exactly as the
core's ``TreeEnsemble`` numbers them, so node indices can be handed to ``TreeEnsemble.collapse``.
Rows are routed by LightGBM itself (``predict(pred_leaf=True)``), so the routing semantics
(missing values, categorical splits) are LightGBM's by construction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Forest",
    "export_collapsed",
    "forest_from_booster",
    "leaf_nodes",
    "model_parameter",
    "pruned_leaf_map",
]

_TREE_KEYS_INTERNAL = (
    "split_feature",
    "split_gain",
    "threshold",
    "decision_type",
    "internal_value",
    "internal_weight",
    "internal_count",
)
_TREE_KEYS_LEAF = ("leaf_value", "leaf_weight", "leaf_count")


@dataclass(frozen=True)
class Forest:
    """Flat arrays of a LightGBM model and its text (for faithful export).

    Attributes
    ----------
    tree_offset : ndarray of int64, shape (n_trees + 1,)
    parent, left, right : ndarray of int64, shape (n_nodes,)
        Global indices, -1 where absent.
    feature : ndarray of int64, shape (n_nodes,)
        Split feature, -1 for leaves.
    value : ndarray of float64, shape (n_nodes,)
        Leaf value for leaves, internal value for internal nodes.
    count : ndarray of int64, shape (n_nodes,)
        Training (in-bag) rows reaching the node, from the model.
    decision_type : ndarray of int64, shape (n_nodes,)
        LightGBM's decision type bits (bit 0: categorical), -1 for leaves.
    lgb_index : ndarray of int64, shape (n_nodes,)
        LightGBM's index of the node within its tree: leaf index for leaves, split index for
        internal nodes.
    tree_class : ndarray of int64, shape (n_trees,)
        Class of each tree (tree index % num_tree_per_iteration).
    objective : str
    num_class, num_tree_per_iteration, n_features : int
    average_output : bool
        Random forest (outputs averaged).
    feature_names : tuple of str
    text_header, text_footer : str
    text_trees : tuple of dict
        Per tree, the key=value lines of its ``Tree=`` block.
    """

    tree_offset: np.ndarray
    parent: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    value: np.ndarray
    count: np.ndarray
    decision_type: np.ndarray
    lgb_index: np.ndarray
    tree_class: np.ndarray
    objective: str
    num_class: int
    num_tree_per_iteration: int
    n_features: int
    average_output: bool
    feature_names: tuple[str, ...]
    text_header: str
    text_footer: str
    text_trees: tuple[dict[str, str], ...]

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return int(self.parent.shape[0])

    @property
    def n_trees(self) -> int:
        """Number of trees."""
        return int(self.tree_offset.shape[0] - 1)

    @property
    def is_leaf(self) -> np.ndarray:
        """Bool (n_nodes,): node is a leaf."""
        return self.left < 0


def _split_model_text(text: str) -> tuple[str, list[dict[str, str]], str]:
    head, sep, rest = text.partition("\nTree=")
    if not sep:
        raise ValueError("The model text has no 'Tree=' block; is it a LightGBM model?")
    body, sep2, footer = ("Tree=" + rest).partition("end of trees")
    if not sep2:
        raise ValueError("The model text has no 'end of trees' line; is it a complete LightGBM model?")
    trees = []
    for block in body.split("Tree=")[1:]:
        kv: dict[str, str] = {}
        lines = block.strip().splitlines()
        kv["Tree"] = lines[0].strip()
        for line in lines[1:]:
            if "=" in line:
                k, v = line.split("=", 1)
                kv[k.strip()] = v.strip()
        trees.append(kv)
    return head + "\n", trees, "end of trees" + footer


def _header_value(head: str, key: str) -> str | None:
    for line in head.splitlines():
        if line == key:
            return ""
        if line.startswith(key + "="):
            return line[len(key) + 1 :]
    return None


def forest_from_booster(booster: Any) -> Forest:
    """Read a LightGBM ``Booster`` (or model text) into a :class:`Forest`.

    Parameters
    ----------
    booster : lightgbm.Booster or str
        The model, or its text (``model_to_string()`` / a model file's content).

    Returns
    -------
    Forest
    """
    text = booster if isinstance(booster, str) else booster.model_to_string()
    head, trees, footer = _split_model_text(text)
    num_class = int(_header_value(head, "num_class") or 1)
    ntpi = int(_header_value(head, "num_tree_per_iteration") or 1)
    max_feature_idx = int(_header_value(head, "max_feature_idx") or -1)
    names = tuple((_header_value(head, "feature_names") or "").split())
    objective = (_header_value(head, "objective") or "").split(" ")[0]
    average_output = _header_value(head, "average_output") is not None
    parent: list[int] = []
    left: list[int] = []
    right: list[int] = []
    feature: list[int] = []
    value: list[float] = []
    count: list[int] = []
    lgb_index: list[int] = []
    dtype: list[int] = []
    offsets = [0]
    for t, kv in enumerate(trees):
        n_leaves = int(kv.get("num_leaves", "0"))
        if n_leaves < 1:
            raise ValueError(f"Ill-formed LightGBM model text: tree {t} needs num_leaves >= 1.")

        def arr(key: str, dtype: type, size: int, kv: dict[str, str] = kv, t: int = t) -> np.ndarray:
            if size == 0:
                return np.zeros(0, dtype=dtype)
            if key not in kv:
                raise ValueError(f"Ill-formed LightGBM model text: tree {t} needs {key}.")
            out: np.ndarray = np.array(kv[key].split(), dtype=dtype)
            if out.shape[0] != size:
                raise ValueError(
                    f"Ill-formed LightGBM model text: tree {t}, {key} has {out.shape[0]} entries, "
                    f"expected {size}."
                )
            return out

        sf = arr("split_feature", np.int64, n_leaves - 1)
        lc = arr("left_child", np.int64, n_leaves - 1)
        rc = arr("right_child", np.int64, n_leaves - 1)
        iv = arr("internal_value", np.float64, n_leaves - 1)
        dts = arr("decision_type", np.int64, n_leaves - 1)
        ic = arr("internal_count", np.int64, n_leaves - 1)
        lv = arr("leaf_value", np.float64, n_leaves)
        lcnt = arr("leaf_count", np.int64, n_leaves) if "leaf_count" in kv else np.zeros(n_leaves, np.int64)
        base = offsets[-1]
        # pre-order walk with an explicit stack; code >= 0 internal, < 0 leaf ~code
        stack: list[tuple[int, int]] = [(0 if n_leaves > 1 else -1, -1)]
        local_ids: list[int] = []
        while stack:
            code, par = stack.pop()
            me = base + len(local_ids)
            local_ids.append(code)
            parent.append(par)
            if par >= 0:
                if left[par] == -2:
                    left[par] = me
                else:
                    right[par] = me
            if code >= 0:
                left.append(-2)
                right.append(-2)
                feature.append(int(sf[code]))
                value.append(float(iv[code]))
                count.append(int(ic[code]))
                lgb_index.append(code)
                dtype.append(int(dts[code]))
                stack.append((int(rc[code]), me))
                stack.append((int(lc[code]), me))
            else:
                leaf = ~code
                left.append(-1)
                right.append(-1)
                feature.append(-1)
                value.append(float(lv[leaf]))
                count.append(int(lcnt[leaf]))
                lgb_index.append(leaf)
                dtype.append(-1)
        offsets.append(base + len(local_ids))
    tree_class = np.arange(len(trees), dtype=np.int64) % max(ntpi, 1)
    return Forest(
        tree_offset=np.array(offsets, dtype=np.int64),
        parent=np.array(parent, dtype=np.int64),
        left=np.array(left, dtype=np.int64),
        right=np.array(right, dtype=np.int64),
        feature=np.array(feature, dtype=np.int64),
        value=np.array(value, dtype=np.float64),
        count=np.array(count, dtype=np.int64),
        decision_type=np.array(dtype, dtype=np.int64),
        lgb_index=np.array(lgb_index, dtype=np.int64),
        tree_class=tree_class,
        objective=objective,
        num_class=num_class,
        num_tree_per_iteration=ntpi,
        n_features=max_feature_idx + 1,
        average_output=average_output,
        feature_names=names,
        text_header=head,
        text_footer=footer,
        text_trees=tuple(trees),
    )


def model_parameter(forest: Forest, name: str) -> str | None:
    """Value of a training parameter from the model text's ``parameters:`` section, or None."""
    key = f"[{name}: "
    for line in forest.text_footer.splitlines():
        if line.startswith(key) and line.endswith("]"):
            return line[len(key) : -1]
    return None


def _leaf_table(forest: Forest) -> tuple[np.ndarray, np.ndarray]:
    """Per tree, LightGBM leaf index -> global node (padded table) and its row offsets."""
    leaves = np.flatnonzero(forest.is_leaf)
    tree = np.searchsorted(forest.tree_offset, leaves, side="right") - 1
    n_per = np.bincount(tree, minlength=forest.n_trees)
    width = int(n_per.max()) if n_per.size else 0
    table = np.full((forest.n_trees, max(width, 1)), -1, dtype=np.int64)
    table[tree, forest.lgb_index[leaves]] = leaves
    return table, n_per


def leaf_nodes(forest: Forest, booster: Any, X: Any) -> np.ndarray:
    """Global leaf node reached by every row in every tree (LightGBM's own routing).

    Parameters
    ----------
    forest : Forest
    booster : lightgbm.Booster
        The model ``forest`` was read from.
    X : array-like of shape (n_rows, n_features)

    Returns
    -------
    ndarray of int64, shape (n_rows, n_trees)
    """
    leaf = np.asarray(booster.predict(X, pred_leaf=True), dtype=np.int64)
    if leaf.ndim == 1:
        leaf = leaf[:, None]
    table, _ = _leaf_table(forest)
    return table[np.arange(forest.n_trees)[None, :], leaf]


def pruned_leaf_map(forest: Forest, collapsed: np.ndarray) -> np.ndarray:
    """Map every node to the node that is its leaf after collapsing ``collapsed`` (itself if none)."""
    target = np.arange(forest.n_nodes, dtype=np.int64)
    is_col = np.zeros(forest.n_nodes, dtype=bool)
    is_col[np.asarray(collapsed, dtype=np.int64)] = True
    for h in range(forest.n_nodes):  # parent before child (pre-order)
        p = forest.parent[h]
        if p >= 0 and (is_col[p] or target[p] != p):
            target[h] = target[p]
    return target


def _rebuild_tree(kv: dict[str, str], forest: Forest, root: int, is_col: np.ndarray) -> dict[str, str]:
    """Key=value lines of one tree with the nodes marked in ``is_col`` turned into leaves."""
    split = {k: kv[k].split() for k in _TREE_KEYS_INTERNAL if k in kv}
    leafv = {k: kv[k].split() for k in _TREE_KEYS_LEAF if k in kv}
    from_internal = {
        "leaf_value": "internal_value",
        "leaf_weight": "internal_weight",
        "leaf_count": "internal_count",
    }
    lc = [int(v) for v in kv["left_child"].split()]
    rc = [int(v) for v in kv["right_child"].split()]
    cat_b = [int(v) for v in kv.get("cat_boundaries", "0").split()]
    cat_t = kv.get("cat_threshold", "").split()
    new_int: dict[str, list[str]] = {k: [] for k in split}
    new_leaf: dict[str, list[str]] = {k: [] for k in leafv}
    new_l: list[int] = []
    new_r: list[int] = []
    new_cat_b, new_cat_t = [0], []
    n_new_leaves = 0
    # pre-order with an explicit stack: (LightGBM code, global node, new parent, is right child)
    stack: list[tuple[int, int, int, bool]] = [(0, root, -1, False)]
    while stack:
        code, node, par, is_right = stack.pop()
        if code < 0 or is_col[node]:
            for k in new_leaf:
                new_leaf[k].append(leafv[k][~code] if code < 0 else split[from_internal[k]][code])
            me = ~n_new_leaves
            n_new_leaves += 1
        else:
            me = len(new_l)
            new_l.append(0)
            new_r.append(0)
            for k in new_int:
                new_int[k].append(split[k][code])
            if int(split["decision_type"][code]) & 1:  # categorical: threshold indexes cat_boundaries
                ci = int(float(split["threshold"][code]))
                new_int["threshold"][-1] = str(len(new_cat_b) - 1)
                new_cat_t.extend(cat_t[cat_b[ci] : cat_b[ci + 1]])
                new_cat_b.append(len(new_cat_t))
            stack.append((rc[code], int(forest.right[node]), me, True))
            stack.append((lc[code], int(forest.left[node]), me, False))
        if par >= 0:
            (new_r if is_right else new_l)[par] = me
    new_kv = dict(kv)
    new_kv["num_leaves"] = str(n_new_leaves)
    new_kv["num_cat"] = str(len(new_cat_b) - 1)
    for k, v in (*new_int.items(), *new_leaf.items()):
        new_kv[k] = " ".join(v)
    new_kv["left_child"] = " ".join(str(v) for v in new_l)
    new_kv["right_child"] = " ".join(str(v) for v in new_r)
    new_kv.pop("cat_boundaries", None)
    new_kv.pop("cat_threshold", None)
    if len(new_cat_b) > 1:
        new_kv["cat_boundaries"] = " ".join(str(v) for v in new_cat_b)
        new_kv["cat_threshold"] = " ".join(new_cat_t)
    return new_kv


def export_collapsed(forest: Forest, collapsed: np.ndarray) -> str:
    """LightGBM model text of ``forest`` with each node in ``collapsed`` turned into a leaf.

    A collapsed node becomes a leaf carrying its internal value, weight and count; its subtree
    is dropped; categorical sets are re-indexed; ``tree_sizes`` is recomputed. The
    ``feature_importances`` section is copied unchanged (it describes the original model).

    Parameters
    ----------
    forest : Forest
    collapsed : array-like of int
        Global indices of internal nodes to collapse.

    Returns
    -------
    str
        Model text that ``lightgbm.Booster(model_str=...)`` loads.
    """
    is_col = np.zeros(forest.n_nodes, dtype=bool)
    is_col[np.asarray(collapsed, dtype=np.int64)] = True
    blocks = []
    for t, kv in enumerate(forest.text_trees):
        if int(kv["num_leaves"]) == 1:
            blocks.append(_tree_block(kv, single=True))
            continue
        new_kv = _rebuild_tree(kv, forest, int(forest.tree_offset[t]), is_col)
        blocks.append(_tree_block(new_kv, single=new_kv["num_leaves"] == "1"))
    head = "\n".join(line for line in forest.text_header.splitlines() if not line.startswith("tree_sizes="))
    sizes = " ".join(str(len(b)) for b in blocks)
    head = head.rstrip("\n") + f"\ntree_sizes={sizes}\n\n"
    return head + "".join(blocks) + forest.text_footer


_ORDER = (
    "num_leaves",
    "num_cat",
    "split_feature",
    "split_gain",
    "threshold",
    "decision_type",
    "left_child",
    "right_child",
    "leaf_value",
    "leaf_weight",
    "leaf_count",
    "internal_value",
    "internal_weight",
    "internal_count",
    "cat_boundaries",
    "cat_threshold",
    "is_linear",
    "shrinkage",
)


def _tree_block(kv: dict[str, str], *, single: bool) -> str:
    if single:  # a single leaf: LightGBM writes only these keys
        keys = ["num_leaves", "num_cat", "leaf_value", "is_linear", "shrinkage"]
        kv = dict(kv)
        kv["num_cat"] = "0"
        kv["num_leaves"] = "1"
    else:
        keys = [k for k in _ORDER if k in kv] + [k for k in kv if k not in _ORDER and k != "Tree"]
    lines = [f"Tree={kv['Tree']}"] + [f"{k}={kv[k]}" for k in keys if k in kv]
    return "\n".join(lines) + "\n\n\n"
