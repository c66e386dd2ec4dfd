"""Drop features from a boosted model and refit its leaf values: the mechanics.

Dropping feature ``f`` forces every split on ``f`` to send all rows to one child (the child with
more training rows, LightGBM's ``internal_count`` / ``leaf_count``; ties go left), so the split
and the other child's subtree disappear. A *forcing* is an int8 array over the original model's
nodes: -1 (route as usual), 0 (all rows left), 1 (all rows right).

Refitting re-estimates every reachable leaf value in tree order on training rows with one
Newton step on the model's loss, as LightGBM's ``Booster.refit(decay_rate=0)`` does:
``value = -ThresholdL1(G, lambda_l1) / (H + lambda_l2) * shrinkage`` (clipped to
``max_delta_step`` when set), where ``G``/``H`` sum the gradients/hessians of the rows reaching
the leaf at the raw score of the already refitted trees. One difference, on purpose: LightGBM's
refit starts every row from a raw score of 0 and refits the first tree with its recorded
shrinkage, 1 when training with ``boost_from_average`` folded the initial score into it, so that
tree becomes a full Newton step from 0; here the first iteration starts from ``bias`` (the
initial score, one per class), takes the learning-rate step and keeps ``bias`` in its leaves,
so that refitting the unpruned model on its training rows gives the model back.

The kernels (numba) route rows exactly as :func:`budget_extras.core._predict.reference_leaf`
does, through the core's routing tables, with the forcing applied.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from ..core._ensemble import TreeEnsemble
from ..core._export import _preorder_leaf_ids, kept_layout
from ..core._predict import K_ZERO_THRESHOLD
from ..core._routing import routing_tables

__all__ = [
    "OBJECTIVES",
    "RefitSpec",
    "copy_rows",
    "drop_forcing",
    "forced_ensemble",
    "initial_score",
    "leaf_sum",
    "merge_columns",
    "nan_forcing",
    "prepare_rows",
    "refit_values",
    "route",
]

#: Objective name (first word of the model text's ``objective``) to kernel code.
OBJECTIVES = {
    "binary": 0,
    "regression": 1,
    "regression_l2": 1,
    "l2": 1,
    "mean_squared_error": 1,
    "mse": 1,
    "multiclass": 2,
    "softmax": 2,
}


@njit(cache=True)
def _route_kernel(  # type: ignore[no-untyped-def]
    XT, roots, feature, threshold, right, is_leaf, nan_left, zero_left, is_cat, has_cat, woff, nwords, bits, forced,
    leaves, entry, full, value, tree_class, raw, touched,
):
    """Route rows (``full``) or re-route the (row, tree) pairs from ``entry[leaf]`` (if >= 0), updating ``raw``.

    Re-routing skips the trees whose ``touched`` is false (no node of theirs changed).
    """
    n = XT.shape[1]
    for t in range(roots.size):  # tree-major: one tree's nodes stay in cache, the rows stream by
        if not full and not touched[t]:
            continue
        r = roots[t]
        k = tree_class[t]
        for i in range(n):
            node = r
            if not full:
                old = leaves[t, i]
                node = entry[old]
                if node < 0:
                    continue
            while not is_leaf[node]:
                d = forced[node]
                if d < 0:
                    x = XT[feature[node], i]
                    if has_cat and is_cat[node]:  # written out here: a call per node costs twice the routing
                        left = False
                        if not math.isnan(x) and -1.0 < x < 2147483648.0:
                            c = int(x)
                            w = c >> 5
                            if w < nwords[node]:
                                left = ((bits[woff[node] + w] >> np.uint32(c & 31)) & np.uint32(1)) == np.uint32(1)
                    elif x == 0.0:
                        left = zero_left[node]
                    elif x <= threshold[node]:
                        left = True
                    elif math.isnan(x):
                        left = nan_left[node]
                    else:
                        left = False
                else:
                    left = d == 0
                node = node + 1 if left else right[node]
            if not full:
                raw[i, k] += value[node] - value[old]
            leaves[t, i] = node


@njit(cache=True)
def _entry_kernel(starts, restart, subtree_end, n_nodes):  # type: ignore[no-untyped-def]
    """Node to re-route from for every node in a subtree ``[starts[j], subtree_end[starts[j]])``, else -1.

    ``starts`` ascend (pre-order); subtrees nest or are disjoint, and the outermost one's
    ``restart`` (the node from which the path can change) wins.
    """
    entry = np.full(n_nodes, -1, dtype=np.int64)
    end = -1
    for j in range(starts.size):
        s = starts[j]
        if s < end:  # inside the last outermost subtree
            continue
        end = subtree_end[s]
        for v in range(s, end):
            entry[v] = restart[j]
    return entry


@njit(cache=True)
def _grad_hess(code, y, score, n_class, sigmoid, g, h):  # type: ignore[no-untyped-def]
    """Gradients and hessians of every class at ``score`` (LightGBM's formulas), into ``g``, ``h``."""
    n = y.size
    factor = n_class / (n_class - 1.0) if n_class > 1 else 1.0
    for i in range(n):
        if code == 0:
            p = 1.0 / (1.0 + math.exp(-sigmoid * score[i, 0]))
            g[0, i] = sigmoid * (p - y[i])
            h[0, i] = sigmoid * sigmoid * p * (1.0 - p)
        elif code == 1:
            g[0, i] = score[i, 0] - y[i]
            h[0, i] = 1.0
        else:
            m = score[i, 0]
            for c in range(1, n_class):
                m = max(m, score[i, c])
            s = 0.0
            for c in range(n_class):
                e = math.exp(score[i, c] - m)
                g[c, i] = e
                s += e
            label = int(y[i])
            for c in range(n_class):
                p = g[c, i] / s
                g[c, i] = p - (1.0 if label == c else 0.0)
                h[c, i] = factor * p * (1.0 - p)


@njit(cache=True)
def _refit_kernel(  # type: ignore[no-untyped-def]
    leaves, y, w, tree_class, tree_offset, is_leaf, n_class, code, sigmoid, l1, l2, max_delta, shrinkage, bias,
    value, start,
):
    n_trees, n = leaves.shape
    n_nodes = value.size
    out = value.copy()
    count = np.zeros(n_nodes)
    hess = np.zeros(n_nodes)
    grad = np.zeros(n_nodes)
    score = np.zeros((n, n_class))
    for i in range(n):
        for c in range(n_class):
            score[i, c] = bias[c]
    gs = np.zeros((n_class, n))
    hs = np.zeros((n_class, n))
    for t in range(n_trees):
        k = tree_class[t]
        first = t < n_class
        add = bias[k] if first else 0.0
        if t < start:  # before the first changed tree: the values of ``value`` stand
            for i in range(n):
                node = leaves[t, i]
                count[node] += 1.0
                score[i, k] += out[node] - add
            continue
        if t % n_class == 0 or t == start:  # gradients at the start of the iteration (LightGBM)
            if t % n_class == 0:
                _grad_hess(code, y, score, n_class, sigmoid, gs, hs)
            else:  # entering mid-iteration: gradients at the iteration's starting score
                s0 = score.copy()
                for tt in range(t - t % n_class, t):
                    for i in range(n):
                        s0[i, tree_class[tt]] -= out[leaves[tt, i]] - (bias[tree_class[tt]] if tt < n_class else 0.0)
                _grad_hess(code, y, s0, n_class, sigmoid, gs, hs)
        for i in range(n):  # LightGBM weights each row's gradient and hessian
            node = leaves[t, i]
            count[node] += 1.0
            hess[node] += hs[k, i] * w[i]
            grad[node] += gs[k, i] * w[i]
        for node in range(tree_offset[t], tree_offset[t + 1]):
            if not is_leaf[node]:
                continue
            gsum = grad[node]
            reg = max(abs(gsum) - l1, 0.0) * (1.0 if gsum > 0 else -1.0)
            o = -reg / (hess[node] + 1e-15 + l2)
            if max_delta > 0.0 and abs(o) > max_delta:
                o = max_delta if o > 0 else -max_delta
            out[node] = o * shrinkage[t] + add
        for i in range(n):
            score[i, k] += out[leaves[t, i]] - add
    return out, count, hess


@njit(cache=True)
def _leaf_sum_kernel(value, leaves, tree_class, n_class):  # type: ignore[no-untyped-def]
    n_trees, n = leaves.shape
    raw = np.zeros((n, n_class))
    for t in range(n_trees):
        k = tree_class[t]
        for i in range(n):
            raw[i, k] += value[leaves[t, i]]
    return raw


@njit(cache=True)
def _copy_rows_kernel(dst, src, rows):  # type: ignore[no-untyped-def]
    for r in rows:
        for i in range(dst.shape[1]):
            dst[r, i] = src[r, i]


def copy_rows(dst: np.ndarray, src: np.ndarray, rows: np.ndarray) -> None:
    """Copy the rows ``rows`` of ``src`` into ``dst`` in place (one pass, no temporary).

    Parameters
    ----------
    dst, src : ndarray of int32, shape (n_trees, n_rows)
        Leaves (C-contiguous).
    rows : ndarray of int64
        Row indices (trees).
    """
    _copy_rows_kernel(dst, src, np.ascontiguousarray(rows, dtype=np.int64))


@njit(cache=True)
def _merge_columns_kernel(a, cols_a, b, cols_b, out):  # type: ignore[no-untyped-def]
    for t in range(out.shape[0]):
        for j in range(cols_a.size):
            out[t, cols_a[j]] = a[t, j]
        for j in range(cols_b.size):
            out[t, cols_b[j]] = b[t, j]


def merge_columns(a: np.ndarray, cols_a: np.ndarray, b: np.ndarray, cols_b: np.ndarray) -> np.ndarray:
    """Leaves of all rows from two disjoint row sets: column ``cols_a[j]`` is ``a[:, j]``, ``cols_b[j]`` is ``b[:, j]``.

    Parameters
    ----------
    a, b : ndarray of int32, shape (n_trees, len(cols_a)) and (n_trees, len(cols_b))
        Leaves of the two row sets.
    cols_a, cols_b : ndarray of int
        Their positions among all rows (together every position once).

    Returns
    -------
    ndarray of int32, shape (n_trees, len(cols_a) + len(cols_b))
    """
    out = np.empty((a.shape[0], cols_a.size + cols_b.size), dtype=np.int32)
    _merge_columns_kernel(np.ascontiguousarray(a), np.asarray(cols_a, dtype=np.int64), np.ascontiguousarray(b),
                          np.asarray(cols_b, dtype=np.int64), out)
    return out


def leaf_sum(value: np.ndarray, leaves: np.ndarray, tree_class: np.ndarray, n_class: int) -> np.ndarray:
    """Raw scores from tree-major leaves: ``raw[i, k]`` sums ``value`` over row ``i``'s leaves in class ``k``'s trees.

    Parameters
    ----------
    value : ndarray of float64, shape (n_nodes,)
        Leaf values.
    leaves : ndarray of int32, shape (n_trees, n_rows)
        From :func:`route`.
    tree_class : ndarray of int64, shape (n_trees,)
        Class of each tree.
    n_class : int
        Trees per iteration.

    Returns
    -------
    ndarray of float64, shape (n_rows, n_class)
    """
    return _leaf_sum_kernel(
        np.asarray(value, dtype=np.float64), np.ascontiguousarray(leaves), tree_class, int(n_class)
    )


class RefitSpec:
    """What the refit needs of a model: objective code, regularization, shrinkage per tree.

    Parameters
    ----------
    ensemble : TreeEnsemble
        A boosted model (``average_output`` false) with objective binary, regression (l2) or
        multiclass (softmax).
    """

    def __init__(self, ensemble: TreeEnsemble) -> None:
        words = (ensemble.objective or "regression").split()
        name = words[0] if words else "regression"
        if name not in OBJECTIVES:
            raise ValueError(
                f"Dropping features and refitting supports the objectives binary, regression (l2) and "
                f"multiclass (softmax); the model's objective is {ensemble.objective!r}."
            )
        if ensemble.average_output:
            raise ValueError("Dropping features and refitting is for boosted models; this is a random forest.")
        self.name = name
        self.code = OBJECTIVES[name]
        sig = [w.split(":")[1] for w in words[1:] if w.startswith("sigmoid:")]
        self.sigmoid = float(sig[0]) if sig else 1.0
        p = ensemble.parameters

        def num(key: str, default: float) -> float:
            raw = str(p.get(key, default)).strip("[]").split(",")[0].strip()
            try:
                return float(raw)
            except ValueError:
                return default

        self.l1, self.l2, self.max_delta = num("lambda_l1", 0.0), num("lambda_l2", 0.0), num("max_delta_step", 0.0)
        unbalanced = str(p.get("is_unbalance", "0")).lower() in ("1", "true")
        if self.code == 0 and (unbalanced or num("scale_pos_weight", 1.0) != 1.0):
            raise ValueError("Refitting a model trained with is_unbalance or scale_pos_weight is not supported.")
        _refuse_unrefittable(ensemble, words, num)
        self.boost_from_average = str(p.get("boost_from_average", "1")).lower() not in ("0", "false")
        self.n_class = int(ensemble.num_tree_per_iteration)
        self.shrinkage = np.asarray(ensemble.shrinkage, dtype=np.float64)
        #: LightGBM's own refit uses the recorded shrinkage (1 for a first tree holding the initial score)
        self.recorded_shrinkage = self.shrinkage
        lr = num("learning_rate", np.nan)
        if np.isfinite(lr):  # LightGBM records shrinkage 1 for a first tree that holds the initial score
            self.shrinkage = np.where(self.shrinkage == 1.0, lr, self.shrinkage)


def _refuse_unrefittable(ensemble: TreeEnsemble, words: list[str], num: Any) -> None:
    """Refuse a model whose leaf values are not one Newton step on its loss at the training labels.

    Each of these options makes LightGBM's leaf values something the refit cannot reproduce, so
    refitting even the unpruned model on its own rows would not give it back.
    """
    p = ensemble.parameters
    flag = {k: str(p.get(k, "0")).strip().lower() in ("1", "true") for k in
            ("reg_sqrt", "use_quantized_grad", "quant_train_renew_leaf")}
    why = None
    if "sqrt" in words[1:] or flag["reg_sqrt"]:
        why = ("reg_sqrt=true (objective 'regression sqrt'): its leaves fit sqrt(|y|) * sign(y) and "
               "LightGBM squares the raw score to predict")
    elif num("path_smooth", 0.0) > 0:
        why = (f"path_smooth={p.get('path_smooth')}: LightGBM shrinks each leaf toward its parent's "
               "output, which a Newton step per leaf does not reproduce")
    elif str(p.get("boosting", "gbdt")).strip().lower() == "dart":
        why = "boosting=dart: DART rescales earlier trees whenever it drops them"
    elif any(c.strip("+-0.") for c in str(p.get("monotone_constraints", "")).replace(",", " ").split()):
        why = (f"monotone_constraints={p.get('monotone_constraints')}: LightGBM clips the leaf values "
               "to the constraints")
    elif flag["use_quantized_grad"] and not flag["quant_train_renew_leaf"]:
        why = ("use_quantized_grad=true (without quant_train_renew_leaf): its leaf values come from "
               "quantized gradients")
    if why is not None:
        raise ValueError(
            f"FeatureDropRefit cannot refit a model trained with {why}; refitting even the unpruned "
            "model would not give it back. Retrain without it, or prune with BudgetPrune(method='program')."
        )


def initial_score(spec: RefitSpec, y: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
    """LightGBM's ``boost_from_average`` initial score per class from the training labels.

    Parameters
    ----------
    spec : RefitSpec
        The model's refit parameters (0 for every class if it was trained without
        ``boost_from_average``).
    y : ndarray of float64, shape (n_rows,)
        Training labels.
    weight : ndarray of float64, shape (n_rows,), optional
        Row weights: LightGBM's initial score is the weighted label mean (class shares).

    Returns
    -------
    ndarray of float64, shape (n_class,)
    """
    if not spec.boost_from_average:
        return np.zeros(spec.n_class)
    w = np.ones(y.size) if weight is None else np.asarray(weight, dtype=np.float64)
    total = max(float(w.sum()), 1e-300)
    if spec.code == 0:
        p = float(np.clip(np.dot(w, y) / total, 1e-15, 1 - 1e-15))
        return np.array([math.log(p / (1 - p)) / spec.sigmoid])
    if spec.code == 1:
        return np.array([float(np.dot(w, y) / total)])
    prior = np.bincount(y.astype(np.int64), weights=w, minlength=spec.n_class) / total
    return np.log(np.maximum(prior, 1e-15))


def prepare_rows(ensemble: TreeEnsemble, X: Any, *, name: str = "X") -> np.ndarray:
    """Rows through the core's one input path, zero threshold applied, transposed (feature-major).

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model the rows are for.
    X : array-like or pandas.DataFrame of shape (n_rows, n_features)
        The rows.
    name : str, default "X"
        The argument's name in error messages.

    Returns
    -------
    ndarray of float64, shape (n_features, n_rows)
        C-contiguous: one feature's values over the rows are adjacent.
    """
    A = ensemble.check_X(X, name=name)
    return np.ascontiguousarray(np.where(np.abs(A) <= K_ZERO_THRESHOLD, 0.0, A).T)


def drop_forcing(ensemble: TreeEnsemble, dropped: Any) -> np.ndarray:
    """Return the forcing of every split on ``dropped`` toward its child with more training rows.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The original model.
    dropped : array-like of int
        Feature indices to drop.

    Returns
    -------
    ndarray of int8, shape (n_nodes,)
        -1 for nodes routed as usual, 0 (left) or 1 (right) for splits on a dropped feature.
    """
    forced = np.full(ensemble.n_nodes, -1, dtype=np.int8)
    mask = np.zeros(max(ensemble.n_features, 1), dtype=bool)
    mask[np.asarray(list(dropped), dtype=np.int64)] = True
    internal = ~ensemble.is_leaf
    nodes = np.flatnonzero(internal & mask[np.maximum(ensemble.feature, 0)])
    left = ensemble.count[ensemble.left_child[nodes]]
    right = ensemble.count[ensemble.right_child[nodes]]
    forced[nodes] = np.where(left >= right, 0, 1)
    return forced


def nan_forcing(ensemble: TreeEnsemble, dropped: Any) -> np.ndarray:
    """Return the forcing of every split on ``dropped`` toward the child a missing value (NaN) goes to.

    This is the model LightGBM evaluates when the dropped features are set to NaN (the hand
    recipe's masking): numerical splits follow their missing-value rule (``nan_left`` of the
    routing tables), categorical splits send NaN right.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The original model.
    dropped : array-like of int
        Feature indices to mask.

    Returns
    -------
    ndarray of int8, shape (n_nodes,)
        -1 for nodes routed as usual, 0 (left) or 1 (right) for splits on a masked feature.
    """
    tab = routing_tables(ensemble)
    forced = np.full(ensemble.n_nodes, -1, dtype=np.int8)
    mask = np.zeros(max(ensemble.n_features, 1), dtype=bool)
    mask[np.asarray(list(dropped), dtype=np.int64)] = True
    nodes = np.flatnonzero(~ensemble.is_leaf & mask[np.maximum(ensemble.feature, 0)])
    left = np.asarray(tab.nan_left)[nodes] & ~np.asarray(tab.is_cat)[nodes]
    forced[nodes] = np.where(left, 0, 1)
    return forced


def route(
    ensemble: TreeEnsemble,
    Xp: np.ndarray,
    forced: np.ndarray,
    *,
    base: np.ndarray | None = None,
    base_forced: np.ndarray | None = None,
    value: np.ndarray | None = None,
    raw: np.ndarray | None = None,
    out: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Route prepared rows through the original model with a forcing.

    With ``base`` (the leaves under another forcing ``base_forced``), only the (row, tree) pairs
    whose path meets a node whose forcing differs can change: those whose leaf lies in the child
    that a newly forced node discards, or below a node no longer forced. Only they are re-routed,
    from the outermost such node (the path above it is unchanged); the others keep their leaf.
    With ``value`` and ``raw`` (the raw scores of ``base`` under leaf values ``value``), the raw
    scores are updated for the re-routed pairs.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The original model.
    Xp : ndarray of float64, shape (n_features, n_rows)
        Rows from :func:`prepare_rows`.
    forced : ndarray of int8, shape (n_nodes,)
        The forcing (:func:`drop_forcing`).
    base : ndarray of int32, shape (n_trees, n_rows), optional
        Leaves under ``base_forced`` (not modified).
    base_forced : ndarray of int8, shape (n_nodes,), optional
        The forcing ``base`` was routed under.
    value : ndarray of float64, shape (n_nodes,), optional
        Leaf values for the raw-score update.
    raw : ndarray of float64, shape (n_rows, n_class), optional
        Raw scores of ``base`` under ``value`` (not modified).
    out : ndarray of int32, shape (n_trees, n_rows), optional
        With ``base``: a buffer equal to ``base``, updated in place and returned as ``leaves``
        (instead of a copy of ``base``: only the re-routed pairs are written).

    Returns
    -------
    leaves : ndarray of int32, shape (n_trees, n_rows)
        Original global node id of the leaf each row reaches in each tree (tree-major).
    raw : ndarray of float64, shape (n_rows, n_class) or None
        The updated raw scores (with ``base``, ``value`` and ``raw``).
    """
    tab = routing_tables(ensemble)
    roots = np.ascontiguousarray(ensemble.tree_offset[:-1], dtype=np.int64)
    forced = np.ascontiguousarray(forced, dtype=np.int8)
    tree_class = np.asarray(ensemble.tree_class, dtype=np.int64)
    touched = np.ones(ensemble.n_trees, dtype=np.bool_)
    if base is None:
        leaves = np.empty((ensemble.n_trees, Xp.shape[1]), dtype=np.int32)
        entry = np.zeros(1, dtype=np.int64)
    else:
        assert base_forced is not None
        leaves = base.copy() if out is None else out
        bf = np.asarray(base_forced)
        new = np.flatnonzero((forced >= 0) & (bf < 0))  # newly forced: rows in the discarded child move
        freed = np.flatnonzero((forced != bf) & (bf >= 0))  # un-forced (or turned): rows below may move
        other = np.where(forced[new] == 0, ensemble.right_child[new], ensemble.left_child[new]).astype(np.int64)
        starts = np.concatenate([other, freed]).astype(np.int64)
        restart = np.concatenate([new, freed]).astype(np.int64)  # the path above these is unchanged
        order = np.argsort(starts, kind="stable")
        touched = np.zeros(ensemble.n_trees, dtype=np.bool_)
        touched[np.asarray(ensemble.node_tree)[restart]] = True
        entry = _entry_kernel(starts[order], restart[order], np.asarray(ensemble.subtree_end, dtype=np.int64),
                              ensemble.n_nodes)
    update = base is not None and value is not None and raw is not None
    out = raw.copy() if update else np.zeros((1, 1))  # type: ignore[union-attr]
    _route_kernel(
        Xp, roots, tab.feature, tab.threshold, tab.right, tab.is_leaf, tab.nan_left, tab.zero_left,
        tab.is_cat, tab.has_cat, tab.cat_word_offset, tab.cat_n_words, tab.cat_bits,
        forced, leaves, entry, base is None,
        np.asarray(value if update else np.zeros(ensemble.n_nodes), dtype=np.float64), tree_class,
        out if out.ndim == 2 else out[:, None], touched,
    )
    return leaves, (out if update else None)


def refit_values(
    ensemble: TreeEnsemble,
    spec: RefitSpec,
    leaves: np.ndarray,
    y: np.ndarray,
    bias: np.ndarray,
    *,
    value: np.ndarray | None = None,
    start: int = 0,
    weight: np.ndarray | None = None,
    lightgbm: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Refit the leaf values reached by ``leaves`` in tree order (one Newton step per tree).

    Parameters
    ----------
    ensemble : TreeEnsemble
        The original model (its node ids index ``leaves``).
    spec : RefitSpec
        Objective and regularization of the model.
    leaves : ndarray of int32 or int64, shape (n_trees, n_rows)
        Leaf of every training row in every tree under the forcing (:func:`route`).
    y : ndarray of float64, shape (n_rows,)
        Training labels.
    bias : ndarray of float64, shape (n_class,)
        Initial score the first iteration starts from and keeps (:func:`initial_score`).
    value : ndarray of float64, shape (n_nodes,), optional
        Leaf values to start from (default: the model's). With ``start``, the values of the
        trees before ``start`` are kept: they must be the refit of the same routing (a refit
        depends only on the trees before it, so a change that leaves them alone keeps them).
    start : int, default 0
        First tree to refit.
    weight : ndarray of float64, shape (n_rows,), optional
        Row weights (the model's training weights): each row's gradient and hessian count
        ``weight`` times, as in LightGBM. Default 1 per row.
    lightgbm : bool, default False
        Refit as ``Booster.refit(decay_rate=0)`` does: every tree with its recorded shrinkage (1
        for a first tree that holds the initial score), so with ``bias`` 0 the first tree becomes
        a full Newton step from 0.

    Returns
    -------
    value : ndarray of float64, shape (n_nodes,)
        The model's values with every leaf replaced by its refit value (a leaf no training row
        reaches gets 0, plus ``bias`` in the first iteration, as in LightGBM's refit).
    count, hess : ndarray of float64, shape (n_nodes,)
        Training rows and summed hessians per leaf.
    """
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(y.size) if weight is None else np.ascontiguousarray(weight, dtype=np.float64)
    return _refit_kernel(
        np.ascontiguousarray(leaves), y, w,
        np.asarray(ensemble.tree_class, dtype=np.int64), np.asarray(ensemble.tree_offset, dtype=np.int64),
        np.asarray(ensemble.is_leaf), spec.n_class, spec.code, spec.sigmoid, spec.l1, spec.l2, spec.max_delta,
        spec.recorded_shrinkage if lightgbm else spec.shrinkage, np.asarray(bias, dtype=np.float64),
        np.asarray(ensemble.value if value is None else value, dtype=np.float64), int(start),
    )


def forced_ensemble(
    ensemble: TreeEnsemble,
    forced: np.ndarray,
    value: np.ndarray | None = None,
    count: np.ndarray | None = None,
    hess: np.ndarray | None = None,
) -> TreeEnsemble:
    """Return the model with every forced split removed (replaced by its kept child's subtree).

    Parameters
    ----------
    ensemble : TreeEnsemble
        The original model (not modified).
    forced : ndarray of int8, shape (n_nodes,)
        The forcing (:func:`drop_forcing`).
    value : ndarray of float64, shape (n_nodes,), optional
        Leaf values to use (refit); default the model's.
    count, hess : ndarray of float64, shape (n_nodes,), optional
        Training rows and hessian sums per leaf (refit); internal nodes get their subtree's sums.

    Returns
    -------
    TreeEnsemble
        Leaves renumbered in pre-order in every tree.
    """
    n = ensemble.n_nodes
    forced = np.asarray(forced, dtype=np.int8)
    left_c, right_c = ensemble.left_child.astype(np.int64), ensemble.right_child.astype(np.int64)
    fn = np.flatnonzero(forced >= 0)
    other = np.where(forced[fn] == 0, right_c[fn], left_c[fn])
    delta = np.zeros(n + 1, dtype=np.int64)
    np.add.at(delta, fn, 1)
    np.add.at(delta, fn + 1, -1)
    np.add.at(delta, other, 1)
    np.add.at(delta, ensemble.subtree_end[other], -1)
    keep = np.cumsum(delta[:-1]) == 0
    redirect = np.arange(n, dtype=np.int64)
    for i in fn[::-1]:  # children after parents: resolve chains of forced nodes bottom-up
        redirect[i] = redirect[left_c[i] if forced[i] == 0 else right_c[i]]
    old_to_new = np.cumsum(keep) - 1
    kept = np.flatnonzero(keep)
    is_leaf = ensemble.is_leaf[kept]

    def remap(child: np.ndarray) -> np.ndarray:
        c = child[kept]
        return np.where(c >= 0, old_to_new[redirect[np.maximum(c, 0)]], -1)

    node_tree = ensemble.node_tree[kept]
    is_cat = ensemble.is_categorical[kept]
    tree_offset, cat_offsets, cat_values = kept_layout(ensemble, kept, node_tree, is_cat)
    vals = np.asarray(ensemble.value if value is None else value, dtype=np.float64)[kept]
    cnt = ensemble.count[kept].astype(np.int64)
    wgt = ensemble.weight[kept].astype(np.float64)
    if count is not None and hess is not None:
        parent_new = np.full(kept.size, -1, dtype=np.int64)
        lc, rc = remap(left_c), remap(right_c)
        parent_new[lc[lc >= 0]] = np.flatnonzero(lc >= 0)
        parent_new[rc[rc >= 0]] = np.flatnonzero(rc >= 0)
        c2 = np.where(is_leaf, count[kept], 0.0)
        h2 = np.where(is_leaf, hess[kept], 0.0)
        for i in range(kept.size - 1, -1, -1):  # children after parents in pre-order
            p = parent_new[i]
            if p >= 0:
                c2[p] += c2[i]
                h2[p] += h2[i]
        cnt, wgt = np.rint(c2).astype(np.int64), h2
    return ensemble.replace(
        left_child=remap(left_c),
        right_child=remap(right_c),
        feature=ensemble.feature[kept],
        threshold=ensemble.threshold[kept],
        is_categorical=is_cat,
        cat_offsets=cat_offsets,
        cat_values=cat_values,
        default_left=ensemble.default_left[kept],
        missing_type=ensemble.missing_type[kept],
        value=vals,
        count=cnt,
        weight=wgt,
        split_gain=ensemble.split_gain[kept],
        leaf_index=_preorder_leaf_ids(ensemble, is_leaf, node_tree),
        tree_offset=tree_offset,
    )
