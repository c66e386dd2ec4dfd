"""Error terms ``e_h`` of BudgetPrune: class counts of training rows per node, or a GBDT surrogate.

Random forests (``average_output``): ``e_h`` is the number of training rows at ``h``
misclassified by the majority class at ``h`` (paper, section 3), divided by the tree's number of
rows and by the number of trees, so the error term is the average training error rate of the
trees. For multiclass LightGBM forests each tree scores one class (one-vs-rest), so its counts
are "class c" versus "other".

Which training rows count (``error_source``):

* ``"train"``: the rows passed to ``fit`` (exact; in-bag and out-of-bag together when they are
  the training set);
* ``"inbag"``: the rows each tree was grown on. LightGBM does not expose bagging membership per
  row, but for binary forests it is recoverable exactly *per node*: every in-bag row has the same
  gradient ``p0 - y`` and hessian ``p0 (1 - p0)`` (``p0`` = sigmoid of the boost-from-average
  score), so a leaf of ``n`` rows with output ``v`` holds ``n1 = n p0 + (v - init) n p0 (1 - p0)``
  positives. The recovered counts are checked to be integers (else an error explains why:
  regularization, sample weights or a different training set);
* ``"oob"``: ``"train"`` minus ``"inbag"`` (requires the rows passed to be the training set).

GBDT (``average_output`` false) has no class counts: the surrogate ``e_h`` is the training loss of
the full model when tree ``t`` alone is collapsed at ``h`` (its other nodes and all other trees
unchanged), summed over the rows reaching ``h``, divided by the number of rows. The same
surrogate is available for random forests (``error="loss"``; the forest's output is the average
of its trees): unlike the 0-1 majority error it values splits that refine leaf probabilities,
which a forest that averages leaf outputs (as LightGBM's does) uses. It is additive over
a tree's leaves, hence fits the program exactly, but ignores interactions between trees: the
pruning is exact for this surrogate, heuristic for the true loss.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core._ensemble import TreeEnsemble

__all__ = [
    "forest_error",
    "gbdt_surrogate_error",
    "inbag_counts",
    "mean_loss",
    "objective_name",
    "subtree_sum",
    "train_counts",
]


def objective_name(forest: TreeEnsemble) -> str:
    """Return the objective's name: the first word of the objective string (``"binary sigmoid:1"``)."""
    return forest.objective.split(" ")[0]


def subtree_sum(parent: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sum ``values`` over every node's subtree (nodes in pre-order, ``parent[h] < h``)."""
    out = np.array(values, dtype=np.float64, copy=True)
    depth = np.zeros(parent.shape[0], dtype=np.int64)
    for h in range(1, parent.shape[0]):
        if parent[h] >= 0:
            depth[h] = depth[parent[h]] + 1
    for d in range(int(depth.max(initial=0)), 0, -1):
        nodes = np.flatnonzero(depth == d)
        np.add.at(out, parent[nodes], out[nodes])
    return out


def _positive(forest: TreeEnsemble, y: np.ndarray) -> np.ndarray:
    """(n_rows, n_trees) bool: the row is of the class the tree scores."""
    if forest.num_tree_per_iteration > 1:
        return y[:, None] == forest.tree_class[None, :]
    return np.broadcast_to((y > 0.5)[:, None], (y.shape[0], forest.n_trees))


def train_counts(forest: TreeEnsemble, leaves: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Count ``[negatives, positives]`` of the given rows at every node.

    Parameters
    ----------
    forest : TreeEnsemble
    leaves : ndarray of int, shape (n_rows, n_trees)
        Global leaf reached by each row in each tree.
    y : ndarray, shape (n_rows,)
        Labels (0/1 for binary, class ids for multiclass).

    Returns
    -------
    ndarray of float64, shape (n_nodes, 2)
    """
    pos = _positive(forest, np.asarray(y))
    flat = leaves.ravel()
    n_all = np.bincount(flat, minlength=forest.n_nodes).astype(np.float64)
    n_pos = np.bincount(flat, weights=pos.ravel().astype(np.float64), minlength=forest.n_nodes)
    counts = np.stack([n_all - n_pos, n_pos], axis=1)
    return np.stack(
        [subtree_sum(forest.parent, counts[:, 0]), subtree_sum(forest.parent, counts[:, 1])], axis=1
    )


def inbag_counts(forest: TreeEnsemble, y: np.ndarray, *, tol: float = 1e-3) -> np.ndarray:
    """In-bag class counts ``[negatives, positives]`` per node, recovered from a binary forest.

    Parameters
    ----------
    forest : TreeEnsemble
        A binary LightGBM random forest (``objective=binary``, ``boosting=rf``).
    y : ndarray, shape (n_rows,)
        The training labels (their mean gives the boost-from-average score).
    tol : float
        Largest accepted distance of a recovered count from an integer.

    Returns
    -------
    ndarray of float64, shape (n_nodes, 2)
    """
    objective = objective_name(forest)
    if not (forest.average_output and forest.num_tree_per_iteration == 1 and objective == "binary"):
        raise ValueError(
            "error_source='inbag' (and 'oob') needs a binary LightGBM random forest (boosting='rf', "
            f"objective='binary'); got objective={objective!r} with "
            f"num_tree_per_iteration={forest.num_tree_per_iteration}. Use error_source='train'."
        )

    def param(name: str) -> float:
        value = forest.parameters.get(name)
        return float(value) if value else 0.0

    if param("lambda_l1") != 0.0 or param("path_smooth") != 0.0 or param("max_delta_step") > 0.0:
        raise ValueError(
            "Could not recover in-bag class counts: the forest was trained with lambda_l1, path_smooth or "
            "max_delta_step, which change leaf outputs. Use error_source='train'."
        )
    l2, cat_l2 = param("lambda_l2"), param("cat_l2")
    leaves = np.flatnonzero(forest.is_leaf)
    n = forest.count[leaves].astype(np.float64)
    par = forest.parent[leaves]
    # leaves made by a categorical split may have been regularized by cat_l2 as well
    cat_parent = (par >= 0) & forest.is_categorical[np.maximum(par, 0)]
    mean = float(np.mean(np.asarray(y) > 0.5))
    candidates = [0.0]
    if 0.0 < mean < 1.0:
        candidates.insert(0, float(np.log(mean / (1 - mean))))
    best, best_err = None, np.inf
    for init in candidates:
        p0 = 1.0 / (1.0 + np.exp(-init))
        hess = n * p0 * (1 - p0)
        n1 = n * p0 + (forest.value[leaves] - init) * (hess + l2)
        n1_cat = n * p0 + (forest.value[leaves] - init) * (hess + l2 + cat_l2)
        off = np.abs(n1 - np.round(n1))
        use_cat = cat_parent & (np.abs(n1_cat - np.round(n1_cat)) < off)
        n1 = np.where(use_cat, n1_cat, n1)
        err = float(np.max(np.abs(n1 - np.round(n1)), initial=0.0))
        if err < best_err:
            best, best_err = n1, err
    if best is None or best_err > tol or np.any(best < -tol) or np.any(best > n + tol):
        raise ValueError(
            "Could not recover in-bag class counts from the model (recovered counts are off an "
            f"integer by up to {best_err:.3g}). This needs no sample weights and y_train equal to the "
            "labels the forest was trained on. Use error_source='train'."
        )
    counts = np.zeros((forest.n_nodes, 2))
    counts[leaves, 1] = np.round(best)
    counts[leaves, 0] = n - counts[leaves, 1]
    return np.stack(
        [subtree_sum(forest.parent, counts[:, 0]), subtree_sum(forest.parent, counts[:, 1])], axis=1
    )


def forest_error(forest: TreeEnsemble, counts: np.ndarray) -> np.ndarray:
    """Compute the normalized error term of a random forest from per-node class counts.

    ``e_h = (n_h - max_class n_{h,c}) / (n_root(t) * n_trees)``.
    """
    err = counts.sum(axis=1) - counts.max(axis=1)
    roots = forest.tree_offset[:-1]
    n_root = np.maximum(counts[roots].sum(axis=1), 1.0)
    return err / (n_root[forest.node_tree] * forest.n_trees)


def _loss(
    objective: str, y: np.ndarray, raw: np.ndarray, cls: int | None, raw_all: np.ndarray | None
) -> np.ndarray:
    if objective in ("binary", "cross_entropy", "xentropy"):
        return np.logaddexp(0.0, raw) - y * raw
    if objective in ("regression", "regression_l2", "l2", "mean_squared_error", "mse", ""):
        return 0.5 * (y - raw) ** 2
    if objective in ("multiclass", "softmax") and raw_all is not None and cls is not None:
        picked = np.take_along_axis(raw_all, y[:, None].astype(np.int64), axis=1)[:, 0]
        return np.logaddexp.reduce(raw_all, axis=1) - picked
    raise ValueError(
        "The GBDT surrogate error supports objectives binary, regression (l2) and multiclass; "
        f"got {objective!r}."
    )


def gbdt_surrogate_error(
    forest: TreeEnsemble,
    booster: Any,
    X: Any,
    y: np.ndarray,
    leaves: np.ndarray,
    *,
    raw: np.ndarray | None = None,
    own: np.ndarray | None = None,
) -> np.ndarray:
    """Surrogate error per node for boosted trees (see the module docstring).

    Parameters
    ----------
    forest : TreeEnsemble
    booster : lightgbm.Booster
    X : array-like, shape (n_rows, n_features)
        Training rows.
    y : ndarray, shape (n_rows,)
        Training labels.
    leaves : ndarray of int, shape (n_rows, n_trees)
        Global leaves of the training rows.

    raw : ndarray, shape (n_rows,) or (n_rows, n_classes), optional
        Raw scores of the model to linearize around (default: the full model's). With ``own``
        this re-linearizes the surrogate around a pruning: ``e_h`` is then the loss of that
        pruned model with tree ``t`` alone changed to end at ``h``.
    own : ndarray, shape (n_rows, n_trees), optional
        Each row's output of each tree in that model (default: the full model's leaves).

    Returns
    -------
    ndarray of float64, shape (n_nodes,)
    """
    y = np.asarray(y, dtype=np.float64)
    if raw is None:
        raw = np.asarray(booster.predict(X, raw_score=True), dtype=np.float64)
    # a random forest's raw score is the sum of its trees; LightGBM transforms the average
    scale = forest.n_trees // forest.num_tree_per_iteration if forest.average_output else 1
    n_rows = y.shape[0]
    err = np.zeros(forest.n_nodes)
    for t in range(forest.n_trees):
        cls = int(forest.tree_class[t])
        node = leaves[:, t].copy()
        mine = forest.value[node] if own is None else own[:, t]
        if raw.ndim == 2:
            base = raw[:, cls] - mine
        else:
            base = raw - mine
        while True:
            live = node >= 0
            if not np.any(live):
                break
            v = forest.value[node[live]]
            raw_all = None
            if raw.ndim == 2:
                raw_all = raw[live].copy()
                raw_all[:, cls] = base[live] + v
            if raw_all is not None:
                raw_all = raw_all / scale
            loss = _loss(
                objective_name(forest), y[live], (base[live] + v) / scale, cls if raw.ndim == 2 else None, raw_all
            )
            err += np.bincount(node[live], weights=loss, minlength=forest.n_nodes)
            node[live] = forest.parent[node[live]]
    return err / max(n_rows, 1)


def row_loss(forest: TreeEnsemble, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """Training loss of each row's raw scores ``raw`` (the model's objective; as the surrogate uses it)."""
    scale = forest.n_trees // forest.num_tree_per_iteration if forest.average_output else 1
    raw = np.asarray(raw, dtype=np.float64) / scale
    if raw.ndim == 2:
        return _loss(objective_name(forest), np.asarray(y, dtype=np.float64), raw[:, 0], 0, raw)
    return _loss(objective_name(forest), np.asarray(y, dtype=np.float64), raw, None, None)


def mean_loss(forest: TreeEnsemble, y: np.ndarray, raw: np.ndarray) -> float:
    """Mean training loss of raw scores ``raw`` (the model's objective; as the surrogate uses it)."""
    return float(np.mean(row_loss(forest, y, raw)))
