"""EnsembleArrays: the one immutable, flat-array representation of any LightGBM model.

This module holds the data and its invariants only: the arrays, their validation, the
constructors from LightGBM's model text / dump, :meth:`EnsembleArrays.replace` and the input
check :meth:`EnsembleArrays.check_X`. Prediction (``_predict``, over the routing tables of
``_routing``) and export (``_export``) are functions that import this module, never the other
way round; :class:`~budget_extras.core.TreeEnsemble` (``_ensemble``) adds them as methods.
The layout is described once, in ``docs/representation.md``.
"""

from __future__ import annotations

import os
import types
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ._builder import ModelParseError
from ._parse import parse_model_string
from ._parse_dump import parse_dump
from ._validation import check_array_2d

__all__ = ["NODE_ARRAYS", "EnsembleArrays", "readonly_copy"]

NODE_ARRAYS = (
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


def readonly_copy(a: Any, dtype: Any) -> np.ndarray:
    """Return a read-only copy of ``a`` as an array of ``dtype`` (the arrays of core's objects).

    Parameters
    ----------
    a : array-like
        The values.
    dtype : numpy dtype
        The array's dtype.

    Returns
    -------
    ndarray
    """
    arr = np.array(a, dtype=dtype, copy=True)
    arr.flags.writeable = False
    return arr


#: Keyword arguments of the constructor that :meth:`EnsembleArrays.replace` accepts.
_FIELDS = (
    *(name for name, _ in NODE_ARRAYS),
    "cat_offsets",
    "cat_values",
    "tree_offset",
    "shrinkage",
    "tree_class",
    "num_class",
    "num_tree_per_iteration",
    "max_feature_idx",
    "feature_names",
    "objective",
    "average_output",
    "feature_infos",
    "pandas_categorical",
    "version",
    "parameters",
)

_E = TypeVar("_E", bound="EnsembleArrays")


def _rebuild_as(cls: type[_E], kwargs: dict[str, Any]) -> _E:
    """Unpickle an ensemble of class ``cls``."""
    return cls(**kwargs)


class EnsembleArrays:
    """An immutable LightGBM tree ensemble stored as flat numpy arrays.

    Node ``i`` of the concatenated trees is at index ``i`` of every per-node array; tree ``t``
    owns nodes ``tree_offset[t]:tree_offset[t+1]`` in pre-order, leaves have child -1,
    categorical sets are CSR (``cat_offsets``, ``cat_values``). Every array is read-only;
    :meth:`replace` returns a new ensemble. Each array (dtype, shape, meaning of element ``i``)
    and each metadata attribute is described in ``docs/representation.md``, the one full
    description of this layout.

    Build one with :meth:`from_booster`, :meth:`from_model_file`, :meth:`from_model_string`
    or :meth:`from_dump`. The keyword constructor is for code that builds ensembles from
    arrays; it validates the structure and derives ``parent``, ``depth``, ``subtree_end``,
    ``node_tree`` and ``is_leaf``.

    Parameters
    ----------
    left_child, right_child, feature, threshold, is_categorical, default_left, missing_type, \
value, count, weight, split_gain, leaf_index : array-like of shape (n_nodes,)
        Per-node arrays (``docs/representation.md``), copied and made read-only.
    cat_offsets : array-like of int, shape (n_nodes + 1,)
        CSR offsets into ``cat_values``.
    cat_values : array-like of int, shape (n_cat_values,)
        Sorted categories that go left, per categorical node.
    tree_offset : array-like of int, shape (n_trees + 1,)
        First node of each tree, ending with ``n_nodes``.
    shrinkage : array-like of float, shape (n_trees,)
        Shrinkage recorded for each tree.
    num_class, num_tree_per_iteration, max_feature_idx : int
        Model metadata.
    feature_names : sequence of str
        One name per feature (``max_feature_idx + 1``).
    tree_class : array-like of int, shape (n_trees,), optional
        Class each tree adds to; default ``tree % num_tree_per_iteration``.
    objective : str, default ""
        Objective string of the model text.
    average_output : bool, default False
        True for random forests.
    feature_infos : sequence of str, optional
        LightGBM's feature info strings; default ``"none"`` for each feature.
    pandas_categorical : list, optional
        Category lists LightGBM stored for pandas categorical columns.
    version : str, default "v4"
        Model text version.
    parameters : mapping of str to str, optional
        The model text's ``parameters:`` section.
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
        for name, dtype in NODE_ARRAYS:
            object.__setattr__(self, name, readonly_copy(local[name], dtype))
        self.cat_offsets = readonly_copy(cat_offsets, np.int64)
        self.cat_values = readonly_copy(cat_values, np.int32)
        self.tree_offset = readonly_copy(tree_offset, np.int64)
        self.shrinkage = readonly_copy(shrinkage, np.float64)
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
        self.tree_class = readonly_copy(tree_class, np.int32)
        self._validate_and_derive()

    # ------------------------------------------------------------------ structure

    def _validate_and_derive(self) -> None:
        n = self.left_child.size
        for name, _ in NODE_ARRAYS:
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
        self.parent = readonly_copy(parent, np.int32)
        self.depth = readonly_copy(depth, np.int32)
        self.subtree_end = readonly_copy(end, np.int64)
        self.node_tree = readonly_copy(node_tree, np.int32)
        self.is_leaf = readonly_copy(leaf, np.bool_)

    def __setattr__(self, name: str, val: Any) -> None:
        if name in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__} is immutable; cannot set {name!r}. Build a new ensemble instead."
            )
        object.__setattr__(self, name, val)

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuild through the validating constructor: arrays come back read-only
        return (_rebuild_as, (type(self), self._fields()))

    def replace(self: _E, **changes: Any) -> _E:
        """Return a new ensemble with the given constructor arguments replaced.

        Like :func:`dataclasses.replace`: every argument not named keeps this ensemble's value;
        the result goes through the validating constructor (which copies every array into a
        read-only one), so derived arrays (``parent``, ``depth``, ...) are rebuilt.

        Parameters
        ----------
        **changes
            Constructor arguments (``value=..., tree_offset=..., parameters=...``).

        Returns
        -------
        EnsembleArrays
            A new ensemble of the same class.

        Raises
        ------
        TypeError
            If a name is not a constructor argument (derived arrays cannot be replaced).
        """
        unknown = sorted(set(changes) - set(_FIELDS))
        if unknown:
            raise TypeError(
                f"replace() takes the constructor arguments {list(_FIELDS)}. Got {unknown} "
                "(derived arrays such as 'parent' or 'depth' are recomputed, not replaced)."
            )
        return type(self)(**{**self._fields(), **changes})

    def _fields(self) -> dict[str, Any]:
        """Keyword arguments that rebuild this ensemble (this ensemble's read-only arrays)."""
        out: dict[str, Any] = {name: getattr(self, name) for name, _ in NODE_ARRAYS}
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
            f"{type(self).__name__}(n_trees={self.n_trees}, n_nodes={self.n_nodes}, n_features={self.n_features}, "
            f"num_tree_per_iteration={self.num_tree_per_iteration}, objective={self.objective!r}"
            f"{', average_output=True' if self.average_output else ''})"
        )

    # ------------------------------------------------------------------ constructors

    @classmethod
    def _from_parsed(cls: type[_E], parsed: tuple[dict[str, np.ndarray], dict[str, Any]]) -> _E:
        arrays, meta = parsed
        kwargs: dict[str, Any] = {name: arrays[name] for name, _ in NODE_ARRAYS}
        kwargs.update(
            cat_offsets=arrays["cat_offsets"],
            cat_values=arrays["cat_values"],
            tree_offset=arrays["tree_offset"],
            shrinkage=arrays["shrinkage"],
        )
        kwargs.update(meta)
        return cls(**kwargs)

    @classmethod
    def from_model_string(cls: type[_E], model_str: str) -> _E:
        """Build from LightGBM model text (``Booster.model_to_string()``).

        Parameters
        ----------
        model_str : str
            The model text.

        Returns
        -------
        EnsembleArrays
            An ensemble of the class it is called on (:class:`TreeEnsemble` for the public one).

        Raises
        ------
        ValueError
            If the text is not a LightGBM model or uses a feature that cannot be represented
            exactly (e.g. linear trees); the message names the tree, node and key.
        """
        return cls._from_parsed(parse_model_string(model_str))

    @classmethod
    def from_model_file(cls: type[_E], path: str | os.PathLike[str]) -> _E:
        """Build from a LightGBM model file (``Booster.save_model(path)``).

        Parameters
        ----------
        path : str or os.PathLike
            Path of the model text file.

        Returns
        -------
        EnsembleArrays
            An ensemble of the class it is called on (:class:`TreeEnsemble` for the public one).
        """
        try:
            with open(path, encoding="utf-8", newline="") as fh:
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
    def from_dump(cls: type[_E], dump: Mapping[str, Any]) -> _E:
        """Build from the dict returned by ``Booster.dump_model()``.

        Parameters
        ----------
        dump : dict
            The JSON dump.

        Returns
        -------
        EnsembleArrays
            An ensemble of the class it is called on (:class:`TreeEnsemble` for the public one).
        """
        return cls._from_parsed(parse_dump(dump))

    @classmethod
    def from_booster(cls: type[_E], booster: Any, *, num_iteration: int | None = None) -> _E:
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
        EnsembleArrays
            An ensemble of the class it is called on (:class:`TreeEnsemble` for the public one).
        """
        if hasattr(booster, "booster_") and not hasattr(booster, "model_to_string"):
            booster = booster.booster_
        if not hasattr(booster, "model_to_string"):
            raise TypeError(
                f"The 'booster' argument must be a lightgbm.Booster or a "
                f"fitted LGBMModel. Got {type(booster).__name__}."
            )
        return cls.from_model_string(booster.model_to_string(num_iteration=num_iteration))

    def check_X(self, X: Any, *, name: str = "X") -> npt.NDArray[np.float64]:
        """Convert ``X`` through the one input path, checked against this model's features.

        Every prediction and cost function reads its input through this method
        (``docs/representation.md``, "Input").

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or pandas.DataFrame of shape (n_rows, n_features)
            Data (NaN and +-inf allowed; pandas categorical columns are recoded like LightGBM).
        name : str, default "X"
            Name of the argument, used in error messages.

        Returns
        -------
        ndarray of float64, shape (n_rows, n_features)
        """
        return check_array_2d(
            X,
            name=name,
            n_features=self.n_features,
            pandas_categorical=self.pandas_categorical,
            feature_names=self.feature_names,
        )
