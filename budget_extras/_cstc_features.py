"""The boosted-tree feature map of CSTC and its cost model.

CSTC (Xu et al., 2013) learns linear classifiers on the outputs of the weak
learners of a gradient-boosted regression tree ensemble,
``phi(x) = [h_1(x), ..., h_T(x)]``. This module builds that map from a LightGBM
booster and describes what each weak learner costs:

* ``tree_features`` ``F`` (bool, ``n_features x n_trees``): ``F[a, t]`` is True when
  a split of tree ``t`` uses feature ``a`` (the paper's feature-usage matrix);
* ``eval_cost`` ``e`` (float, ``n_trees``): expected evaluation cost of tree ``t``
  (cost per tree plus the split costs along the paths, averaged over training rows);
* per leaf of every tree, the features on its root-to-leaf path and the sum of the
  split costs along it, for exact per-row accounting at test time.

The private reader below walks ``Booster.dump_model()`` once. It is a stand-in for
the core's ``TreeEnsemble`` (``tree_outputs`` and the per-node ``feature`` arrays)
and will be replaced by it when the core is merged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__: list[str] = []


@dataclass(frozen=True)
class _WeakLearners:
    """Flat description of the trees of a LightGBM model (private).

    Attributes
    ----------
    n_features : int
        Number of input features.
    n_trees : int
        Number of trees ``T``.
    leaf_offset : ndarray of int64, shape (n_trees + 1,)
        Leaves of tree ``t`` are rows ``leaf_offset[t]:leaf_offset[t+1]`` of the per-leaf
        arrays, ordered by LightGBM's leaf index (what ``pred_leaf=True`` returns).
    leaf_value : ndarray of float64, shape (n_leaves,)
        Output of each leaf (shrinkage included).
    leaf_features : ndarray of bool, shape (n_leaves, n_features)
        Features tested on the path from the root of the tree to the leaf.
    leaf_depth : ndarray of int64, shape (n_leaves,)
        Number of splits on that path.
    leaf_count : ndarray of float64, shape (n_leaves,)
        Training rows that reached the leaf (LightGBM's ``leaf_count``).
    leaf_split_features : tuple of ndarray
        Feature index of every split on the path to leaf ``j`` (for split costs).
    tree_features : ndarray of bool, shape (n_features, n_trees)
        ``F[a, t]``: tree ``t`` splits on feature ``a`` somewhere.
    """

    n_features: int
    n_trees: int
    leaf_offset: npt.NDArray[np.int64]
    leaf_value: npt.NDArray[np.float64]
    leaf_features: npt.NDArray[np.bool_]
    leaf_depth: npt.NDArray[np.int64]
    leaf_count: npt.NDArray[np.float64]
    leaf_split_features: tuple[npt.NDArray[np.int64], ...]
    tree_features: npt.NDArray[np.bool_]


def _read_weak_learners(booster: Any) -> _WeakLearners:
    """Read the trees of a LightGBM ``Booster`` from ``dump_model()``.

    Parameters
    ----------
    booster : lightgbm.Booster
        A trained booster (upstream LightGBM or the lightgbm-cegb fork).

    Returns
    -------
    _WeakLearners
        The per-leaf arrays described in that class.
    """
    dump = booster.dump_model()
    n_features = int(dump["max_feature_idx"]) + 1
    offsets = [0]
    values: list[float] = []
    feats: list[npt.NDArray[np.bool_]] = []
    depths: list[int] = []
    counts: list[float] = []
    split_feats: list[npt.NDArray[np.int64]] = []
    tree_features = []
    for t, info in enumerate(dump["tree_info"]):
        root = info["tree_structure"]
        n_leaves = int(info.get("num_leaves", 1))
        t_values = np.zeros(n_leaves)
        t_feats = np.zeros((n_leaves, n_features), dtype=bool)
        t_depth = np.zeros(n_leaves, dtype=np.int64)
        t_count = np.zeros(n_leaves)
        t_split: list[npt.NDArray[np.int64]] = [np.zeros(0, dtype=np.int64)] * n_leaves
        used = np.zeros(n_features, dtype=bool)
        stack: list[tuple[dict[str, Any], list[int]]] = [(root, [])]
        while stack:
            node, path = stack.pop()
            if "split_feature" in node:
                f = int(node["split_feature"])
                used[f] = True
                for key in ("left_child", "right_child"):
                    if key not in node:
                        raise ValueError(
                            f"Ill-formed LightGBM model: tree {t} has a split without '{key}'."
                        )
                    stack.append((node[key], [*path, f]))
            elif "leaf_value" in node:
                j = int(node.get("leaf_index", 0))
                if not 0 <= j < n_leaves:
                    raise ValueError(
                        f"Ill-formed LightGBM model: tree {t} has leaf_index {j} "
                        f"outside [0, {n_leaves})."
                    )
                t_values[j] = float(node["leaf_value"])
                t_feats[j, path] = True
                t_depth[j] = len(path)
                t_count[j] = float(node.get("leaf_count", 0.0))
                t_split[j] = np.asarray(path, dtype=np.int64)
            else:
                raise ValueError(
                    f"Ill-formed LightGBM model: tree {t} has a node with neither "
                    "'split_feature' nor 'leaf_value'."
                )
        offsets.append(offsets[-1] + n_leaves)
        values.extend(t_values.tolist())
        feats.append(t_feats)
        depths.extend(t_depth.tolist())
        counts.extend(t_count.tolist())
        split_feats.extend(t_split)
        tree_features.append(used)
    n_trees = len(tree_features)
    return _WeakLearners(
        n_features=n_features,
        n_trees=n_trees,
        leaf_offset=np.asarray(offsets, dtype=np.int64),
        leaf_value=np.asarray(values, dtype=np.float64),
        leaf_features=(np.vstack(feats) if feats else np.zeros((0, n_features), dtype=bool)),
        leaf_depth=np.asarray(depths, dtype=np.int64),
        leaf_count=np.asarray(counts, dtype=np.float64),
        leaf_split_features=tuple(split_feats),
        tree_features=(
            np.stack(tree_features, axis=1) if tree_features else np.zeros((n_features, 0), dtype=bool)
        ),
    )


def _leaf_rows(booster: Any, wl: _WeakLearners, X: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Global leaf row (into the per-leaf arrays) reached by each row in each tree.

    Returns
    -------
    ndarray of int64, shape (n_rows, n_trees)
    """
    leaf = np.asarray(booster.predict(X, pred_leaf=True), dtype=np.int64).reshape(X.shape[0], -1)
    if leaf.shape[1] != wl.n_trees:
        raise ValueError(
            f"The booster returned {leaf.shape[1]} trees from pred_leaf; its dump has {wl.n_trees}."
        )
    return leaf + wl.leaf_offset[:-1][None, :]


def _tree_outputs(booster: Any, wl: _WeakLearners, X: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Return the outputs ``h_t(x)`` of every tree: the feature map ``phi(X)``, (n_rows, n_trees)."""
    return wl.leaf_value[_leaf_rows(booster, wl, X)]


@dataclass(frozen=True)
class _CostModel:
    """Per-feature acquisition costs with groups, and per-tree evaluation costs (private).

    Attributes
    ----------
    group : ndarray of int64, shape (n_features,)
        Unit (group) of each feature, ``0..n_groups-1``; features of one group are bought together.
    group_cost : ndarray of float64, shape (n_groups,)
        Cost of acquiring a group once per row.
    split : ndarray of float64, shape (n_features,)
        Cost of evaluating one split on that feature.
    tree : float
        Cost per tree evaluated.
    source : object or None
        The user's ``FeatureCosts`` object when one was given; its ``row_cost`` is then the
        accounting rule for acquisition costs.
    """

    group: npt.NDArray[np.int64]
    group_cost: npt.NDArray[np.float64]
    split: npt.NDArray[np.float64]
    tree: float
    source: Any = None

    def acquisition_cost(self, used: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
        """Acquisition cost per row of a boolean usage matrix (n_rows, n_features)."""
        if self.source is not None:
            return np.asarray(self.source.row_cost(used), dtype=np.float64)
        n_groups = self.group_cost.shape[0]
        g_used = np.zeros((used.shape[0], n_groups), dtype=bool)
        for g in range(n_groups):
            g_used[:, g] = used[:, self.group == g].any(axis=1)
        return g_used.astype(np.float64) @ self.group_cost


def _costs_iv(costs: Any, n_features: int, feature_names: list[str] | None) -> _CostModel:
    """Validate ``costs`` and turn it into a ``_CostModel``.

    ``costs`` may be None (every feature costs 1), an array of per-feature costs, a dict or
    pandas Series keyed by feature name, or a ``FeatureCosts``-like object with a
    ``row_cost(used)`` method (the core's ``FeatureCosts``). For the latter the cost of every
    feature alone and the groups are read through ``row_cost`` itself, so that training sees
    exactly the accounting rule used at test time.
    """
    if costs is None:
        lazy = np.ones(n_features)
        return _CostModel(np.arange(n_features), lazy, np.zeros(n_features), 0.0)
    if hasattr(costs, "row_cost"):
        eye = np.eye(n_features, dtype=bool)
        alone = np.asarray(costs.row_cost(eye), dtype=np.float64).reshape(-1)
        # features a and b share a group when buying both costs less than the sum
        group = -np.ones(n_features, dtype=np.int64)
        n_groups = 0
        for a in range(n_features):
            if group[a] >= 0:
                continue
            group[a] = n_groups
            rest = np.flatnonzero(group < 0)
            if rest.size:
                pair = np.zeros((rest.size, n_features), dtype=bool)
                pair[:, a] = True
                pair[np.arange(rest.size), rest] = True
                both = np.asarray(costs.row_cost(pair), dtype=np.float64).reshape(-1)
                shared = both < alone[a] + alone[rest] - 1e-12 * (1 + alone[a] + alone[rest])
                group[rest[shared]] = n_groups
            n_groups += 1
        group_cost = np.array([alone[group == g].max() for g in range(n_groups)])
        split = np.broadcast_to(np.asarray(getattr(costs, "split", 0.0), dtype=np.float64), (n_features,))
        tree = float(np.asarray(getattr(costs, "tree", 0.0), dtype=np.float64))
        return _CostModel(group, group_cost, np.array(split, dtype=np.float64), tree, source=costs)
    if isinstance(costs, dict) or hasattr(costs, "index"):
        if feature_names is None:
            raise ValueError(
                "The 'costs' argument of CSTC.fit is keyed by feature name, but X has no "
                "column names; pass a pandas DataFrame or an array of per-feature costs."
            )
        mapping = dict(costs.items())
        missing = [f for f in feature_names if f not in mapping]
        if missing:
            raise ValueError(
                f"The 'costs' argument of CSTC.fit must give a cost for every feature. "
                f"Missing: {missing[:5]}."
            )
        lazy = np.array([float(mapping[f]) for f in feature_names])
    else:
        lazy = np.asarray(costs, dtype=np.float64).reshape(-1)
        if lazy.shape[0] != n_features:
            raise ValueError(
                f"The 'costs' argument of CSTC.fit must have one entry per feature "
                f"({n_features}). Got {lazy.shape[0]} instead."
            )
    if not np.all(np.isfinite(lazy)) or np.any(lazy < 0):
        raise ValueError(
            f"The 'costs' argument of CSTC.fit must hold finite non-negative numbers. Got {lazy} instead."
        )
    return _CostModel(np.arange(n_features), lazy, np.zeros(n_features), 0.0)


def _tree_eval_costs(
    wl: _WeakLearners, cm: _CostModel
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Compute the evaluation cost of each tree.

    Returns
    -------
    leaf_eval : ndarray of float64, shape (n_leaves,)
        Cost of evaluating the tree for a row that reaches this leaf: cost per tree plus the
        split costs along the path.
    expected : ndarray of float64, shape (n_trees,)
        ``e_t``: ``leaf_eval`` averaged over the training rows (weights ``leaf_count``).
    """
    leaf_eval = np.array([cm.tree + float(cm.split[p].sum()) for p in wl.leaf_split_features])
    expected = np.zeros(wl.n_trees)
    for t in range(wl.n_trees):
        s = slice(wl.leaf_offset[t], wl.leaf_offset[t + 1])
        w = wl.leaf_count[s]
        expected[t] = float(np.average(leaf_eval[s], weights=w)) if w.sum() > 0 else float(leaf_eval[s].max())
    return leaf_eval, expected


def _group_usage(wl: _WeakLearners, cm: _CostModel) -> npt.NDArray[np.float64]:
    """``G[g, t] = 1`` when tree ``t`` uses a feature of group ``g`` (float, n_groups x n_trees)."""
    n_groups = cm.group_cost.shape[0]
    G = np.zeros((n_groups, wl.n_trees))
    for g in range(n_groups):
        G[g] = wl.tree_features[cm.group == g].any(axis=0)
    return G
