"""Model access for QWYC: model text, per-tree outputs and a per-tree vectorized evaluator.

Private stand-in until QWYC is switched to the core's ``TreeEnsemble`` (which offers the
same ``tree_outputs``): it reads any LightGBM model (Booster, scikit-learn estimator,
model file, model text, or an object with ``to_model_string()``) and evaluates single
trees on subsets of rows with LightGBM's decision semantics, so that the early-exit
predictor only walks the trees each row really evaluates.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

__all__: list[str] = []

_K_ZERO = 1e-35  # LightGBM's kZeroThreshold


def model_text_of(model: Any) -> str:
    """LightGBM model text of ``model`` (Booster, LGBMModel, path, text, or TreeEnsemble)."""
    if isinstance(model, str | os.PathLike):
        s = os.fspath(model)
        if "\n" in s and "Tree=" in s:
            return s
        if not os.path.isfile(s):
            raise ValueError(
                f"The 'model' argument must be a LightGBM model, a model file or model text. "
                f"Got the string {s[:80]!r}, which is neither an existing file nor model text."
            )
        with open(s, encoding="utf-8") as fh:
            return fh.read()
    booster = getattr(model, "booster_", model)
    for name in ("model_to_string", "to_model_string"):
        fn = getattr(booster, name, None)
        if callable(fn):
            text = fn()
            if isinstance(text, str):
                return text
    raise TypeError(
        f"The 'model' argument must be a lightgbm.Booster, a fitted LGBMModel, a TreeEnsemble, "
        f"a model file path or model text. Got {type(model).__name__} instead."
    )


def booster_from_text(text: str) -> Any:
    """Load a ``lightgbm.Booster`` from model text."""
    import lightgbm

    return lightgbm.Booster(model_str=text)


@dataclass(frozen=True)
class FlatTrees:
    """Flat arrays of a LightGBM ensemble, node ``i`` of tree ``t`` at ``offset[t] + i``.

    ``left``/``right``: int64 local child index, or ``-(leaf + 1)`` for a leaf (LightGBM's
    own encoding); ``leaf_value``: float64 per tree at ``leaf_offset[t] + leaf``.
    """

    offset: npt.NDArray[np.int64]
    leaf_offset: npt.NDArray[np.int64]
    feature: npt.NDArray[np.int64]
    threshold: npt.NDArray[np.float64]
    left: npt.NDArray[np.int64]
    right: npt.NDArray[np.int64]
    default_left: npt.NDArray[np.bool_]
    missing_type: npt.NDArray[np.int8]  # 0 None, 1 Zero, 2 NaN
    is_cat: npt.NDArray[np.bool_]
    cat_sets: tuple[frozenset[int] | None, ...]
    leaf_value: npt.NDArray[np.float64]
    num_tree_per_iteration: int
    _cat_row: npt.NDArray[np.int64] = field(init=False, repr=False)
    _cat_table: npt.NDArray[np.bool_] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        rows = np.full(self.feature.size, 0, np.int64)
        cat_nodes = np.flatnonzero(self.is_cat)
        width = 1 + max((max(c) for c in self.cat_sets if c), default=0)
        table = np.zeros((max(cat_nodes.size, 1), width), bool)
        for i, node in enumerate(cat_nodes):
            rows[node] = i
            cs = self.cat_sets[node]
            if cs:
                table[i, sorted(cs)] = True
        object.__setattr__(self, "_cat_row", rows)
        object.__setattr__(self, "_cat_table", table)

    @property
    def n_trees(self) -> int:
        return int(self.offset.size - 1)

    @classmethod
    def from_dump(cls, dump: dict[str, Any]) -> FlatTrees:
        """Build from ``Booster.dump_model()``."""
        feats: list[int] = []
        thr: list[float] = []
        left: list[int] = []
        right: list[int] = []
        dleft: list[bool] = []
        mtype: list[int] = []
        iscat: list[bool] = []
        cats: list[frozenset[int] | None] = []
        offset = [0]
        leaf_offset = [0]
        leaf_values: list[float] = []
        mt = {"None": 0, "Zero": 1, "NaN": 2}
        for info in dump["tree_info"]:
            root = info["tree_structure"]
            n_leaves = int(info["num_leaves"])
            vals = [0.0] * n_leaves
            if "split_index" not in root:
                vals[int(root.get("leaf_index", 0))] = float(root["leaf_value"])
            else:
                stack = [root]
                while stack:
                    node = stack.pop()
                    idx = int(node["split_index"])
                    while len(feats) <= offset[-1] + idx:
                        feats.append(0)
                        thr.append(0.0)
                        left.append(0)
                        right.append(0)
                        dleft.append(False)
                        mtype.append(0)
                        iscat.append(False)
                        cats.append(None)
                    g = offset[-1] + idx
                    feats[g] = int(node["split_feature"])
                    dleft[g] = bool(node["default_left"])
                    mtype[g] = mt[str(node["missing_type"])]
                    if node["decision_type"] == "==":
                        iscat[g] = True
                        cats[g] = frozenset(int(v) for v in str(node["threshold"]).split("||"))
                        thr[g] = np.nan
                    else:
                        thr[g] = float(node["threshold"])
                    for side, arr in (("left_child", left), ("right_child", right)):
                        child = node[side]
                        if "split_index" in child:
                            arr[g] = int(child["split_index"])
                            stack.append(child)
                        else:
                            leaf = int(child["leaf_index"])
                            arr[g] = -(leaf + 1)
                            vals[leaf] = float(child["leaf_value"])
            offset.append(len(feats) if n_leaves > 1 else offset[-1])
            leaf_values.extend(vals)
            leaf_offset.append(len(leaf_values))
        return cls(
            np.asarray(offset, np.int64),
            np.asarray(leaf_offset, np.int64),
            np.asarray(feats, np.int64),
            np.asarray(thr, np.float64),
            np.asarray(left, np.int64),
            np.asarray(right, np.int64),
            np.asarray(dleft, bool),
            np.asarray(mtype, np.int8),
            np.asarray(iscat, bool),
            tuple(cats),
            np.asarray(leaf_values, np.float64),
            int(dump.get("num_tree_per_iteration", 1)),
        )

    def tree_output(self, t: int, X: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Output of tree ``t`` for every row of ``X`` (LightGBM decision semantics)."""
        base, lbase = int(self.offset[t]), int(self.leaf_offset[t])
        n = X.shape[0]
        if self.offset[t + 1] == base:
            return np.full(n, self.leaf_value[lbase])
        node = np.zeros(n, np.int64)
        rows = np.arange(n)
        out = np.empty(n)
        while rows.size:
            g = node + base
            x = X[rows, self.feature[g]]
            mtype = self.missing_type[g]
            go_left = np.empty(rows.size, bool)
            cat = self.is_cat[g]
            num = ~cat
            if num.any():
                xv = x[num]
                mt = mtype[num]
                nan = np.isnan(xv)
                xv = np.where(nan & (mt != 2), 0.0, xv)
                miss = ((mt == 1) & (np.abs(xv) <= _K_ZERO)) | ((mt == 2) & nan)
                go_left[num] = np.where(miss, self.default_left[g[num]], xv <= self.threshold[g[num]])
            if cat.any():
                xv = x[cat]
                nan = np.isnan(xv)
                with np.errstate(invalid="ignore"):
                    iv = np.where(nan, 0, np.trunc(np.where(nan, 0.0, xv)))  # C++ static_cast<int>
                table = self._cat_table
                inside = (iv >= 0) & (iv < table.shape[1])
                row = self._cat_row[g[cat]]
                col = np.where(inside, iv, 0).astype(np.int64)
                hit = table[row, col] & inside & ~(nan & (mtype[cat] == 2))
                go_left[cat] = hit
            child = np.where(go_left, self.left[g], self.right[g])
            leaf = child < 0
            if leaf.any():
                out[rows[leaf]] = self.leaf_value[lbase - child[leaf] - 1]
            rows, node = rows[~leaf], child[~leaf]
        return out


def tree_output_matrix(
    booster: Any, X: Any, leaf_values: list[npt.NDArray[np.float64]] | None = None
) -> npt.NDArray[np.float64]:
    """Per-tree outputs ``(n_rows, n_trees)`` via LightGBM's ``pred_leaf`` (exact)."""
    leaves = np.asarray(booster.predict(X, pred_leaf=True), dtype=np.int64)
    if leaves.ndim == 1:
        leaves = leaves[:, None]
    if leaf_values is None:
        flat = FlatTrees.from_dump(booster.dump_model())
        leaf_values = [
            flat.leaf_value[flat.leaf_offset[t] : flat.leaf_offset[t + 1]] for t in range(flat.n_trees)
        ]
    out = np.empty(leaves.shape, dtype=np.float64)
    for t, vals in enumerate(leaf_values):
        out[:, t] = vals[leaves[:, t]]
    return out
