"""The boosted-tree feature map of CSTC and its cost model.

CSTC (Xu et al., 2013) learns linear classifiers on the outputs of the weak
learners of a gradient-boosted regression tree ensemble,
``phi(x) = [h_1(x), ..., h_T(x)]``. This module builds that map from a LightGBM
booster and describes what each weak learner costs:

* ``tree_features`` ``F`` (bool, ``n_features x n_trees``): ``F[a, t]`` is True when
  a split of tree ``t`` uses feature ``a`` (the paper's feature-usage matrix);
* ``eval_cost`` ``e`` (float, ``n_trees``): expected evaluation cost of tree ``t``
  (cost per tree plus the split costs along the paths, averaged over training rows);
* per leaf of every tree, the split costs along its root-to-leaf path, for exact per-row
  evaluation costs at test time.

The trees are read through the core's ``TreeEnsemble`` (``tree_outputs``, ``apply`` and the
per-node ``feature`` / ``parent`` arrays); the features a row acquires are counted by the
core's ``features_used`` and priced by ``FeatureCosts.row_cost``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core._costs import FeatureCosts, as_feature_costs
from ..core._ensemble import TreeEnsemble

__all__: list[str] = []


@dataclass(frozen=True)
class _WeakLearners:
    """The trees of a LightGBM model as CSTC's weak learners (private).

    Built on the core's :class:`~budget_extras.TreeEnsemble`; per-node arrays are indexed by
    the ensemble's global node index (what ``TreeEnsemble.apply`` returns for leaves).

    Attributes
    ----------
    ensemble : TreeEnsemble
        The trees.
    n_features, n_trees : int
    path_split_features : tuple of ndarray of int64
        Feature of every split on that path (for split costs).
    tree_features : ndarray of bool, shape (n_features, n_trees)
        ``F[a, t]``: tree ``t`` splits on feature ``a`` somewhere.
    """

    ensemble: TreeEnsemble
    n_features: int
    n_trees: int
    path_split_features: tuple[npt.NDArray[np.int64], ...]
    tree_features: npt.NDArray[np.bool_]


def _read_weak_learners(booster: Any) -> _WeakLearners:
    """Describe the trees of a LightGBM model (``Booster``, fitted ``LGBMModel`` or ``TreeEnsemble``).

    Returns
    -------
    _WeakLearners
    """
    if isinstance(booster, TreeEnsemble):
        ens = booster
    else:
        ens = TreeEnsemble.from_booster(booster, num_iteration=-1)
    n, d = ens.n_nodes, ens.n_features
    splits: list[npt.NDArray[np.int64]] = [np.zeros(0, dtype=np.int64)] * n
    for i in range(n):  # pre-order: a parent precedes its children
        p = int(ens.parent[i])
        if p >= 0:
            splits[i] = np.append(splits[p], int(ens.feature[p]))
    tree_features = np.zeros((d, ens.n_trees), dtype=bool)
    internal = ~ens.is_leaf
    tree_features[ens.feature[internal], ens.node_tree[internal]] = True
    return _WeakLearners(ens, d, ens.n_trees, tuple(splits), tree_features)


def _leaf_rows(wl: _WeakLearners, X: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Global node index of the leaf each row reaches in each tree, shape (n_rows, n_trees)."""
    return wl.ensemble.apply(X)


def _tree_outputs(wl: _WeakLearners, X: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Return the outputs ``h_t(x)`` of every tree: the feature map ``phi(X)``, (n_rows, n_trees)."""
    return wl.ensemble.tree_outputs(X)


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

    def acquisition_cost(self, used: Any) -> npt.NDArray[np.float64]:
        """Acquisition cost per row of a boolean usage matrix (n_rows, n_features), dense or sparse."""
        if self.source is not None and isinstance(self.source, FeatureCosts):
            return np.asarray(self.source.row_cost(used), dtype=np.float64).reshape(-1)
        if hasattr(used, "toarray"):
            used = used.toarray()
        used = np.asarray(used, dtype=bool)
        if self.source is not None:  # a user's row_cost may only know dense arrays
            return np.asarray(self.source.row_cost(used), dtype=np.float64).reshape(-1)
        n_groups = self.group_cost.shape[0]
        g_used = np.zeros((used.shape[0], n_groups), dtype=bool)
        for g in range(n_groups):
            g_used[:, g] = used[:, self.group == g].any(axis=1)
        return g_used.astype(np.float64) @ self.group_cost


def _costs_iv(costs: Any, n_features: int, feature_names: list[str] | None) -> _CostModel:
    """Validate ``costs`` and turn it into a ``_CostModel``.

    ``costs`` may be None (every feature costs 1), an array of per-feature costs, a dict or
    pandas Series keyed by feature name, the core's ``FeatureCosts`` (its acquisition units,
    groups included, become the relaxation's units; it is aligned to X's column names when both
    have names), or any other object with a ``row_cost(used)`` method. For the latter the cost
    of every feature alone and the groups are read through ``row_cost`` itself by probing (a
    pair of features costing less than the sum of their costs shares a group), so that
    training sees the accounting rule used at test time.
    """
    if isinstance(costs, FeatureCosts) or not hasattr(costs, "row_cost"):
        # the one cost input (None, list, dict, Series, CSV path, FeatureCosts)
        costs = as_feature_costs(costs, n_features=n_features, feature_names=feature_names, owner="CSTC")
        # the acquisition units (groups, then single features) are the relaxation's units
        return _CostModel(
            np.asarray(costs.unit, dtype=np.int64),
            np.asarray(costs.unit_cost, dtype=np.float64),
            np.asarray(costs.split, dtype=np.float64),
            float(costs.tree),
            source=costs,
        )
    # any other object with row_cost(used): probe it
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
    split_attr = getattr(costs, "split", None)
    split = np.broadcast_to(
        np.asarray(0.0 if split_attr is None else split_attr, dtype=np.float64), (n_features,)
    )
    tree_attr = getattr(costs, "tree", None)
    tree = 0.0 if tree_attr is None else float(tree_attr)
    return _CostModel(group, group_cost, np.array(split, dtype=np.float64), tree, source=costs)


def _tree_eval_costs(
    wl: _WeakLearners, cm: _CostModel
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Compute the evaluation cost of each tree.

    Returns
    -------
    leaf_eval : ndarray of float64, shape (n_nodes,)
        Cost of evaluating the tree for a row that reaches this node (used for leaves): cost
        per tree plus the split costs along the path.
    expected : ndarray of float64, shape (n_trees,)
        ``e_t``: ``leaf_eval`` averaged over the training rows (weights: leaf counts).
    """
    ens = wl.ensemble
    leaf_eval = np.array([cm.tree + float(cm.split[p].sum()) for p in wl.path_split_features])
    expected = np.zeros(wl.n_trees)
    for t in range(wl.n_trees):
        s = np.arange(ens.tree_offset[t], ens.tree_offset[t + 1])
        s = s[ens.is_leaf[s]]
        w = ens.count[s].astype(np.float64)
        expected[t] = float(np.average(leaf_eval[s], weights=w)) if w.sum() > 0 else float(leaf_eval[s].max())
    return leaf_eval, expected


def _group_usage(wl: _WeakLearners, cm: _CostModel) -> npt.NDArray[np.float64]:
    """``G[g, t] = 1`` when tree ``t`` uses a feature of group ``g`` (float, n_groups x n_trees)."""
    n_groups = cm.group_cost.shape[0]
    G = np.zeros((n_groups, wl.n_trees))
    for g in range(n_groups):
        G[g] = wl.tree_features[cm.group == g].any(axis=0)
    return G


def train_weak_learners(
    X: npt.NDArray[np.float64], y: npt.NDArray[np.float64], *, n_weak: int, max_depth: int, learning_rate: float,
    random_state: int | None, params: dict[str, Any] | None,
) -> Any:
    """Train the LightGBM regression ensemble (squared loss) whose tree outputs form ``phi(x)``.

    ``params`` (the estimator's ``weak_params``) override the defaults; the training is
    deterministic and single-threaded.
    """
    import lightgbm as lgb

    p: dict[str, Any] = {
        "objective": "regression",
        "learning_rate": float(learning_rate),
        "max_depth": int(max_depth),
        "num_leaves": 2 ** int(max_depth),
        "min_data_in_leaf": 5,
        "verbose": -1,
        "seed": 0 if random_state is None else int(random_state),
        "deterministic": True,
        "num_threads": 1,
    }
    p.update(params or {})
    return lgb.train(p, lgb.Dataset(X, y), num_boost_round=int(n_weak))


def feature_map(
    booster: Any, n_features: int, costs: Any, feature_names: list[str] | None
) -> tuple[_WeakLearners, _CostModel, npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Return the weak learners of ``booster``, the cost model and the trees' evaluation costs.

    Returns
    -------
    wl : _WeakLearners
    cm : _CostModel
        ``costs`` checked against the ``n_features`` columns (:func:`_costs_iv`).
    leaf_eval, tree_costs : ndarray of float64
        :func:`_tree_eval_costs`.

    Raises
    ------
    ValueError
        If the booster does not use ``n_features`` features, or the costs are refused.
    """
    wl = _read_weak_learners(booster)
    if wl.n_features != n_features:
        raise ValueError(f"The 'booster' of CSTC.fit uses {wl.n_features} features; X has {n_features}.")
    cm = _costs_iv(costs, n_features, feature_names)
    leaf_eval, tree_costs = _tree_eval_costs(wl, cm)
    return wl, cm, leaf_eval, tree_costs
