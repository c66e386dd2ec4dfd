"""TreeEnsemble: one immutable, flat-array representation of any LightGBM model."""

from __future__ import annotations

import os
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from . import _export, _predict
from ._parse import ModelParseError, parse_dump, parse_model_string
from ._validation import check_array_2d

__all__ = ["TreeEnsemble"]

_NODE_ARRAYS = (
    ("left_child", np.int32),
    ("right_child", np.int32),
    ("feature", np.int32),
    ("threshold", np.float64),
    ("is_categorical", np.bool_),
    ("default_left", np.bool_),
    ("missing_type", np.int8),
    ("value", np.float64),
    ("count", np.int64),
    ("weight", np.float64),
    ("split_gain", np.float64),
    ("leaf_index", np.int32),
)


def _frozen(a: Any, dtype: Any) -> np.ndarray:
    arr = np.array(a, dtype=dtype, copy=True)
    arr.flags.writeable = False
    return arr


def _rebuild(kwargs: dict[str, Any]) -> TreeEnsemble:
    """Unpickle a TreeEnsemble."""
    return TreeEnsemble(**kwargs)


class TreeEnsemble:
    """An immutable LightGBM tree ensemble stored as flat numpy arrays.

    Nodes of all trees are concatenated: node ``i`` is at index ``i`` of every per-node
    array. Tree ``t`` owns nodes ``tree_offset[t]:tree_offset[t+1]``, its root first, in
    pre-order (node, left subtree, right subtree), so the subtree of node ``i`` is the range
    ``i:subtree_end[i]`` and an internal node's left child is ``i + 1``. Every array is
    read-only; methods that modify return a new ensemble. See ``docs/representation.md``.

    Build one with :meth:`from_booster`, :meth:`from_model_file`, :meth:`from_model_string`
    or :meth:`from_dump`. The keyword constructor below is for code that builds modified
    ensembles; it validates the structure.

    Attributes
    ----------
    left_child, right_child : ndarray of int32, shape (n_nodes,)
        Global index of the left / right child; -1 for a leaf.
    parent : ndarray of int32, shape (n_nodes,)
        Global index of the parent; -1 for a root.
    feature : ndarray of int32, shape (n_nodes,)
        Feature index of the split; -1 for a leaf.
    threshold : ndarray of float64, shape (n_nodes,)
        Numerical threshold (go left iff ``x <= threshold``); NaN for leaves and
        categorical splits.
    is_categorical : ndarray of bool, shape (n_nodes,)
        True for categorical splits.
    cat_offsets : ndarray of int64, shape (n_nodes + 1,)
        CSR offsets into ``cat_values``.
    cat_values : ndarray of int32, shape (n_cat_values,)
        ``cat_values[cat_offsets[i]:cat_offsets[i+1]]``: sorted categories that go LEFT at
        categorical node ``i`` (empty for other nodes).
    default_left : ndarray of bool, shape (n_nodes,)
        Where missing values go (LightGBM's default-left bit).
    missing_type : ndarray of int8, shape (n_nodes,)
        0 None, 1 Zero, 2 NaN (LightGBM's missing type of the split).
    value : ndarray of float64, shape (n_nodes,)
        Leaf output (shrinkage already applied, as in the model text) for leaves; the
        internal value (output if the node were collapsed into a leaf) for internal nodes.
    count : ndarray of int64, shape (n_nodes,)
        Training rows reaching the node (leaf_count / internal_count; 0 if unknown).
    weight : ndarray of float64, shape (n_nodes,)
        Sum of hessians of those rows (leaf_weight / internal_weight; NaN if unknown).
    depth : ndarray of int32, shape (n_nodes,)
        Depth of the node (root 0). For a leaf, the number of splits on its path.
    split_gain : ndarray of float64, shape (n_nodes,)
        Split gain; NaN for leaves.
    leaf_index : ndarray of int32, shape (n_nodes,)
        LightGBM's leaf id within its tree for leaves (what ``pred_leaf=True`` returns); -1
        for internal nodes.
    subtree_end : ndarray of int64, shape (n_nodes,)
        One past the last node of the subtree rooted at ``i``.
    node_tree : ndarray of int32, shape (n_nodes,)
        Tree index owning each node.
    tree_offset : ndarray of int64, shape (n_trees + 1,)
        First node of each tree; ``tree_offset[-1] == n_nodes``.
    tree_class : ndarray of int32, shape (n_trees,)
        Class (output column) each tree adds to.
    shrinkage : ndarray of float64, shape (n_trees,)
        Shrinkage recorded for each tree (informative; ``value`` already includes it).
    n_features, max_feature_idx, num_class, num_tree_per_iteration : int
        Model metadata.
    feature_names, feature_infos : tuple of str
        Feature names and LightGBM's feature info strings (``"none"`` if unknown).
    objective : str
        Objective string of the model text (may be "").
    average_output : bool
        True for random forests (``boosting=rf``): the raw score is the average per iteration.
    pandas_categorical : list or None
        Category lists LightGBM stored for pandas categorical columns.
    parameters : mapping of str to str
        Training parameters of the model text's ``parameters:`` section (``lambda_l2``,
        ``cat_l2``, ...), as LightGBM wrote them (text); empty if unknown (``from_dump``: the
        JSON dump has none). Read-only; written back by :meth:`to_model_string`.
    """

    left_child: npt.NDArray[np.int32]
    right_child: npt.NDArray[np.int32]
    feature: npt.NDArray[np.int32]
    threshold: npt.NDArray[np.float64]
    is_categorical: npt.NDArray[np.bool_]
    default_left: npt.NDArray[np.bool_]
    missing_type: npt.NDArray[np.int8]
    value: npt.NDArray[np.float64]
    count: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]
    split_gain: npt.NDArray[np.float64]
    leaf_index: npt.NDArray[np.int32]

    def __init__(
        self,
        *,
        left_child: npt.ArrayLike,
        right_child: npt.ArrayLike,
        feature: npt.ArrayLike,
        threshold: npt.ArrayLike,
        is_categorical: npt.ArrayLike,
        cat_offsets: npt.ArrayLike,
        cat_values: npt.ArrayLike,
        default_left: npt.ArrayLike,
        missing_type: npt.ArrayLike,
        value: npt.ArrayLike,
        count: npt.ArrayLike,
        weight: npt.ArrayLike,
        split_gain: npt.ArrayLike,
        leaf_index: npt.ArrayLike,
        tree_offset: npt.ArrayLike,
        shrinkage: npt.ArrayLike,
        num_class: int,
        num_tree_per_iteration: int,
        max_feature_idx: int,
        feature_names: Sequence[str],
        tree_class: npt.ArrayLike | None = None,
        objective: str = "",
        average_output: bool = False,
        feature_infos: Sequence[str] | None = None,
        pandas_categorical: Any = None,
        version: str = "v4",
        parameters: Mapping[str, str] | None = None,
    ) -> None:
        local = dict(locals())
        for name, dtype in _NODE_ARRAYS:
            object.__setattr__(self, name, _frozen(local[name], dtype))
        self.cat_offsets = _frozen(cat_offsets, np.int64)
        self.cat_values = _frozen(cat_values, np.int32)
        self.tree_offset = _frozen(tree_offset, np.int64)
        self.shrinkage = _frozen(shrinkage, np.float64)
        self.num_class = int(num_class)
        self.num_tree_per_iteration = int(num_tree_per_iteration)
        self.max_feature_idx = int(max_feature_idx)
        self.n_features = self.max_feature_idx + 1
        self.feature_names = tuple(str(f) for f in feature_names)
        self.feature_infos = (
            tuple(feature_infos) if feature_infos is not None else ("none",) * self.n_features
        )
        self.objective = str(objective)
        self.average_output = bool(average_output)
        self.pandas_categorical = pandas_categorical
        self.version = str(version)
        self.parameters: Mapping[str, str] = types.MappingProxyType(
            {str(k): str(v) for k, v in (parameters or {}).items()}
        )
        n_trees = self.tree_offset.size - 1
        if tree_class is None:
            tree_class = np.arange(n_trees) % max(self.num_tree_per_iteration, 1)
        self.tree_class = _frozen(tree_class, np.int32)
        self._validate_and_derive()
        self._cat_cache: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._tables_cache: _predict._Tables | None = None

    # ------------------------------------------------------------------ structure

    def _validate_and_derive(self) -> None:
        n = self.left_child.size
        for name, _ in _NODE_ARRAYS:
            if getattr(self, name).shape != (n,):
                raise ValueError(
                    f"TreeEnsemble: {name!r} must have shape ({n},) like 'left_child'. "
                    f"Got {getattr(self, name).shape}."
                )
        off = self.tree_offset
        n_trees = off.size - 1
        if off.ndim != 1 or off.size < 1 or off[0] != 0 or off[-1] != n or (np.diff(off) < 1).any():
            raise ValueError(
                f"TreeEnsemble: 'tree_offset' must start at 0, increase strictly and end at n_nodes={n}."
            )
        if self.shrinkage.shape != (n_trees,) or self.tree_class.shape != (n_trees,):
            raise ValueError(f"TreeEnsemble: 'shrinkage' and 'tree_class' must have shape ({n_trees},).")
        if self.num_tree_per_iteration < 1 or (
            n_trees and (self.tree_class.min() < 0 or self.tree_class.max() >= self.num_tree_per_iteration)
        ):
            raise ValueError("TreeEnsemble: 'tree_class' must be in [0, num_tree_per_iteration).")
        if len(self.feature_names) != self.n_features or len(self.feature_infos) != self.n_features:
            raise ValueError(
                f"TreeEnsemble: need {self.n_features} feature names and infos (max_feature_idx + 1)."
            )
        if (
            self.cat_offsets.shape != (n + 1,)
            or self.cat_offsets[0] != 0
            or self.cat_offsets[-1] != self.cat_values.size
        ):
            raise ValueError(
                "TreeEnsemble: 'cat_offsets' must have n_nodes + 1 entries from 0 to len(cat_values)."
            )
        node_tree = np.repeat(np.arange(n_trees, dtype=np.int32), np.diff(off))
        leaf = self.left_child < 0
        internal = np.flatnonzero(~leaf)
        if ((self.right_child < 0) != leaf).any():
            raise ValueError(
                "TreeEnsemble: a node has exactly one child (left_child/right_child must both be -1)."
            )
        lc = self.left_child[internal].astype(np.int64)
        rc = self.right_child[internal].astype(np.int64)
        if (lc != internal + 1).any() or (rc <= lc).any() or (rc >= n).any():
            raise ValueError("TreeEnsemble: nodes must be in pre-order (left child of node i is i + 1).")
        if (node_tree[rc] != node_tree[internal]).any():
            raise ValueError("TreeEnsemble: a child belongs to another tree.")
        parent = np.full(n, -1, dtype=np.int64)
        parent[lc] = internal
        parent[rc] = internal
        hits = np.bincount(np.concatenate([lc, rc]), minlength=n)
        is_root = np.zeros(n, dtype=bool)
        is_root[off[:-1]] = True
        if (hits[~is_root] != 1).any() or (hits[is_root] != 0).any():
            raise ValueError("TreeEnsemble: every non-root node must have exactly one parent.")
        feat = self.feature
        if (
            (feat[internal] < 0).any()
            or (feat[internal] > self.max_feature_idx).any()
            or (feat[leaf] != -1).any()
        ):
            raise ValueError(
                f"TreeEnsemble: 'feature' must be in [0, "
                f"{self.max_feature_idx}] for splits and -1 for leaves."
            )
        if (self.is_categorical & leaf).any():
            raise ValueError("TreeEnsemble: a leaf is marked categorical.")
        if (np.diff(self.cat_offsets)[~self.is_categorical] != 0).any():
            raise ValueError("TreeEnsemble: only categorical nodes may have categories.")
        if self.cat_values.size and self.cat_values.min() < 0:
            raise ValueError("TreeEnsemble: categories in 'cat_values' must be >= 0.")
        # depth (parents precede children in pre-order) and subtree ends, level by level
        depth = np.zeros(n, dtype=np.int64)
        cur = parent.copy()
        while True:
            m = cur >= 0
            if not m.any():
                break
            depth[m] += 1
            cur[m] = parent[cur[m]]
        end = np.arange(1, n + 1, dtype=np.int64)
        for d in range(int(depth.max()) if n else 0, -1, -1):
            at = internal[depth[internal] == d]
            end[at] = end[self.right_child[at]]
        if n and ((end[lc] != rc).any() or (end[off[:-1]] != off[1:]).any()):
            raise ValueError(
                "TreeEnsemble: nodes must be in pre-order (right child follows the left subtree)."
            )
        self.parent = _frozen(parent, np.int32)
        self.depth = _frozen(depth, np.int32)
        self.subtree_end = _frozen(end, np.int64)
        self.node_tree = _frozen(node_tree, np.int32)
        self.is_leaf = _frozen(leaf, np.bool_)

    def _cat_bitsets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(word offset per node, number of words per node, uint32 words) of the left sets."""
        if self._cat_cache is None:
            n = self.n_nodes
            nwords = np.zeros(n, dtype=np.int64)
            cat_nodes = np.flatnonzero(self.is_categorical)
            lens = np.diff(self.cat_offsets)
            for i in cat_nodes:
                if lens[i]:
                    nwords[i] = int(self.cat_values[self.cat_offsets[i + 1] - 1]) // 32 + 1
            woff = np.zeros(n, dtype=np.int64)
            np.cumsum(nwords[:-1], out=woff[1:])
            bits = np.zeros(int(nwords.sum()), dtype=np.uint32)
            for i in cat_nodes:
                cats = self.cat_values[self.cat_offsets[i] : self.cat_offsets[i + 1]].astype(np.int64)
                np.bitwise_or.at(bits, woff[i] + (cats >> 5), (np.uint32(1) << (cats & 31).astype(np.uint32)))
            for a in (woff, nwords, bits):
                a.flags.writeable = False
            object.__setattr__(self, "_cat_cache", (woff, nwords, bits))
        assert self._cat_cache is not None
        return self._cat_cache

    def _tables(self) -> _predict._Tables:
        """Routing tables of the vectorized predictor (built once)."""
        if self._tables_cache is None:
            object.__setattr__(self, "_tables_cache", _predict._Tables(self))
        assert self._tables_cache is not None
        return self._tables_cache

    def __setattr__(self, name: str, val: Any) -> None:
        if name in self.__dict__ and name not in ("_cat_cache", "_tables_cache"):
            raise AttributeError(
                f"TreeEnsemble is immutable; cannot set {name!r}. Build a new ensemble instead."
            )
        object.__setattr__(self, name, val)

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        # rebuild through the validating constructor: arrays come back read-only
        return (_rebuild, (self._arrays(),))

    def _arrays(self) -> dict[str, Any]:
        """Keyword arguments that rebuild this ensemble (arrays are shared, read-only)."""
        out: dict[str, Any] = {name: getattr(self, name) for name, _ in _NODE_ARRAYS}
        out.update(
            cat_offsets=self.cat_offsets,
            cat_values=self.cat_values,
            tree_offset=self.tree_offset,
            shrinkage=self.shrinkage,
            tree_class=self.tree_class,
            num_class=self.num_class,
            num_tree_per_iteration=self.num_tree_per_iteration,
            max_feature_idx=self.max_feature_idx,
            feature_names=self.feature_names,
            objective=self.objective,
            average_output=self.average_output,
            feature_infos=self.feature_infos,
            pandas_categorical=self.pandas_categorical,
            version=self.version,
            parameters=dict(self.parameters),
        )
        return out

    @property
    def n_nodes(self) -> int:
        """Number of nodes over all trees."""
        return int(self.left_child.size)

    @property
    def n_trees(self) -> int:
        """Number of trees."""
        return int(self.tree_offset.size - 1)

    @property
    def n_leaves(self) -> npt.NDArray[np.int64]:
        """Number of leaves of each tree, int64 (n_trees,)."""
        return (
            np.add.reduceat(self.is_leaf.astype(np.int64), self.tree_offset[:-1])
            if self.n_trees
            else np.zeros(0, np.int64)
        )

    def __repr__(self) -> str:
        return (
            f"TreeEnsemble(n_trees={self.n_trees}, n_nodes={self.n_nodes}, n_features={self.n_features}, "
            f"num_tree_per_iteration={self.num_tree_per_iteration}, objective={self.objective!r}"
            f"{', average_output=True' if self.average_output else ''})"
        )

    # ------------------------------------------------------------------ constructors

    @classmethod
    def _from_parsed(cls, parsed: tuple[dict[str, np.ndarray], dict[str, Any]]) -> TreeEnsemble:
        arrays, meta = parsed
        kwargs: dict[str, Any] = {name: arrays[name] for name, _ in _NODE_ARRAYS}
        kwargs.update(
            cat_offsets=arrays["cat_offsets"],
            cat_values=arrays["cat_values"],
            tree_offset=arrays["tree_offset"],
            shrinkage=arrays["shrinkage"],
        )
        kwargs.update(meta)
        return cls(**kwargs)

    @classmethod
    def from_model_string(cls, model_str: str) -> TreeEnsemble:
        """Build from LightGBM model text (``Booster.model_to_string()``).

        Parameters
        ----------
        model_str : str
            The model text.

        Returns
        -------
        TreeEnsemble

        Raises
        ------
        ValueError
            If the text is not a LightGBM model or uses a feature that cannot be represented
            exactly (e.g. linear trees); the message names the tree, node and key.
        """
        return cls._from_parsed(parse_model_string(model_str))

    @classmethod
    def from_model_file(cls, path: str | os.PathLike[str]) -> TreeEnsemble:
        """Build from a LightGBM model file (``Booster.save_model(path)``).

        Parameters
        ----------
        path : str or os.PathLike
            Path of the model text file.

        Returns
        -------
        TreeEnsemble
        """
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise ValueError(
                f"The 'path' argument must name a readable LightGBM model file. Got {str(path)!r}: {exc}."
            ) from exc
        try:
            return cls.from_model_string(text)
        except ModelParseError as exc:
            raise ModelParseError(f"{os.fspath(path)}: {exc}") from None

    @classmethod
    def from_dump(cls, dump: Mapping[str, Any]) -> TreeEnsemble:
        """Build from the dict returned by ``Booster.dump_model()``.

        Parameters
        ----------
        dump : dict
            The JSON dump.

        Returns
        -------
        TreeEnsemble
        """
        return cls._from_parsed(parse_dump(dump))

    @classmethod
    def from_booster(cls, booster: Any, *, num_iteration: int | None = None) -> TreeEnsemble:
        """Build from a ``lightgbm.Booster`` (or a fitted ``LGBMModel``) via ``model_to_string``.

        Parameters
        ----------
        booster : lightgbm.Booster or lightgbm.LGBMModel
            The model. Works with upstream LightGBM and the lightgbm-cegb fork.
        num_iteration : int, optional
            Passed to ``model_to_string``: ``None`` (the default) keeps the best iteration if
            one was recorded, as ``Booster.predict`` does; ``-1`` keeps all iterations.

        Returns
        -------
        TreeEnsemble
        """
        if hasattr(booster, "booster_") and not hasattr(booster, "model_to_string"):
            booster = booster.booster_
        if not hasattr(booster, "model_to_string"):
            raise TypeError(
                f"The 'booster' argument must be a lightgbm.Booster or a "
                f"fitted LGBMModel. Got {type(booster).__name__}."
            )
        return cls.from_model_string(booster.model_to_string(num_iteration=num_iteration))

    # ------------------------------------------------------------------ prediction

    def _X(self, X: Any, *, name: str = "X") -> npt.NDArray[np.float64]:
        """``X`` through the one input path, checked against this model (docs/representation.md)."""
        return check_array_2d(
            X,
            name=name,
            n_features=self.n_features,
            pandas_categorical=self.pandas_categorical,
            feature_names=self.feature_names,
        )

    def apply(self, X: Any) -> npt.NDArray[np.int64]:
        """Global node index of the leaf each row reaches in each tree.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Data (NaN and +-inf allowed; pandas categorical columns are recoded like LightGBM).

        Returns
        -------
        ndarray of int64, shape (n_rows, n_trees)
        """
        return _predict.apply(self, self._X(X))

    def apply_leaf_index(self, X: Any) -> npt.NDArray[np.int32]:
        """LightGBM's leaf ids per row and tree (equal to ``Booster.predict(pred_leaf=True)``).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)

        Returns
        -------
        ndarray of int32, shape (n_rows, n_trees)
        """
        return self.leaf_index[self.apply(X)]

    def tree_outputs(self, X: Any) -> npt.NDArray[np.float64]:
        """Output of each tree for each row (before averaging for random forests).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)

        Returns
        -------
        ndarray of float64, shape (n_rows, n_trees)
        """
        return _predict.tree_outputs(self, self._X(X))

    def predict_raw(self, X: Any, *, average: bool = False) -> npt.NDArray[np.float64]:
        """Raw score, equal to ``Booster.predict(X, raw_score=True)``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
        average : bool, default False
            LightGBM's raw score of a random forest (``average_output``) is the SUM of the
            tree outputs; ``average=True`` divides it by the number of iterations (what
            LightGBM does before its output transformation). No effect on other models.

        Returns
        -------
        ndarray of float64, shape (n_rows,) or (n_rows, num_tree_per_iteration)
        """
        return _predict.predict_raw(self, self._X(X), average=average)

    def staged_predict_raw(self, X: Any, *, average: bool = False) -> Iterator[npt.NDArray[np.float64]]:
        """Yield the raw score after each iteration 1, 2, ..., ``n_trees // num_tree_per_iteration``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
        average : bool, default False
            Random forests: divide by the number of iterations so far (see :meth:`predict_raw`).

        Yields
        ------
        ndarray of float64, shape (n_rows,) or (n_rows, num_tree_per_iteration)
        """
        return _predict.staged_predict_raw(self, self._X(X), average=average)

    def decision_path(self, X: Any) -> sp.csr_matrix:
        """Nodes each row visits (all trees).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)

        Returns
        -------
        scipy.sparse.csr_matrix of bool, shape (n_rows, n_nodes)
        """
        return _predict.decision_path(self, self._X(X))

    # ------------------------------------------------------------------ modification / export

    def collapse(self, nodes: Any) -> TreeEnsemble:
        """Return a new ensemble with each listed internal node turned into a leaf.

        Parameters
        ----------
        nodes : array-like of int, or bool mask of shape (n_nodes,)
            Global node indices. The new leaf's value is the node's internal value.

        Returns
        -------
        TreeEnsemble
        """
        return _export.collapse(self, nodes)

    def select_trees(self, indices: Any) -> TreeEnsemble:
        """Return a new ensemble with the trees ``indices`` in that order (keep / drop / reorder).

        Parameters
        ----------
        indices : array-like of int, or bool mask of shape (n_trees,)

        Returns
        -------
        TreeEnsemble
        """
        return _export.select_trees(self, indices)

    def to_model_string(self) -> str:
        """LightGBM model text that upstream LightGBM and the fork load (``Booster(model_str=...)``).

        Returns
        -------
        str
        """
        return _export.to_model_string(self)

    def save_model(self, path: str | os.PathLike[str]) -> None:
        """Write the LightGBM model text to ``path``.

        Parameters
        ----------
        path : str or os.PathLike
        """
        _export.save_model(self, path)
