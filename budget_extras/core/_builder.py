"""The pre-order node builder both model readers share, and the error they raise.

Both readers (``_parse`` for LightGBM's model text, ``_parse_dump`` for ``dump_model()``)
lay every tree out in pre-order (node, left subtree, right subtree) with an explicit stack
through :class:`_Builder`, so leaf-wise trees of any depth are fine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["ModelParseError"]

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
