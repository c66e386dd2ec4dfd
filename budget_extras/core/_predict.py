"""Vectorized predictor with LightGBM's exact decision semantics, and a slow reference.

LightGBM's rules (``include/LightGBM/tree.h`` and the C API's dense-row reader):

* Input values with ``|x| <= kZeroThreshold`` (``1e-35f``) are read as exactly 0.
* Numerical split: NaN becomes 0 unless the node's ``missing_type`` is NaN. A value is
  *missing* if (missing_type Zero and ``|x| <= kZeroThreshold``) or (missing_type NaN and x
  is NaN); missing values go to the default child (left iff ``default_left``); all others go
  left iff ``x <= threshold``.
* Categorical split: NaN goes right; otherwise ``c = int(x)`` (truncation toward zero; values
  outside the int32 range behave as negative) and negative ``c`` goes right; ``c`` goes left
  iff it is in the node's category set.

The vectorized :func:`apply` walks all (row, tree) pairs one depth level per step with numpy
fancy indexing (rows are processed in chunks to bound memory).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ._representation import EnsembleArrays
from ._routing import RoutingTables, routing_tables

__all__ = [
    "K_ZERO_THRESHOLD",
    "apply",
    "apply_prepared",
    "decision_path",
    "go_left",
    "n_iterations",
    "predict_raw",
    "prepare_values",
    "reference_leaf",
    "staged_predict_raw",
    "tree_outputs",
]

#: LightGBM's ``kZeroThreshold`` (a float literal ``1e-35f`` widened to double).
K_ZERO_THRESHOLD = float(np.float32(1e-35))

_CHUNK_PAIRS = 1 << 16  # (row, tree) pairs routed at once (small: cache-friendly)


def prepare_values(X: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Return a copy of ``X`` with values ``|x| <= kZeroThreshold`` set to exactly 0.

    Parameters
    ----------
    X : ndarray of float64, shape (n_rows, n_features)
        Rows converted by ``TreeEnsemble.check_X`` (not modified).
    """
    out = np.array(X, dtype=np.float64, order="C", copy=True)
    out[np.abs(out) <= K_ZERO_THRESHOLD] = 0.0
    return out


def _categorical_left(
    tab: RoutingTables, nodes: npt.NDArray[np.intp], x: npt.NDArray[np.float64]
) -> npt.NDArray[np.bool_]:
    """LightGBM's categorical decision for categorical ``nodes`` with values ``x``."""
    res = np.zeros(nodes.size, dtype=bool)
    valid = np.flatnonzero((x > -1.0) & (x < 2147483648.0))
    c = np.trunc(x[valid]).astype(np.int64)
    nd = nodes[valid]
    off, nwords, bits = tab.cat_word_offset, tab.cat_n_words, tab.cat_bits
    word = c >> 5
    inside = word < nwords[nd]
    w = np.where(inside, off[nd] + np.minimum(word, np.maximum(nwords[nd] - 1, 0)), 0)
    res[valid] = inside & (((bits[w] >> (c & 31).astype(np.uint32)) & np.uint32(1)) == 1)
    return res


def _step(
    tab: RoutingTables, nodes: np.ndarray, base: np.ndarray, flat: np.ndarray, has_nan: bool
) -> np.ndarray:
    """Route every (row, tree) pair one level down; returns the new nodes."""
    f = np.take(tab.feature, nodes)
    f += base
    x = np.take(flat, f)
    res = x <= np.take(tab.threshold, nodes)
    if has_nan:
        nan = np.flatnonzero(np.isnan(x))
        if nan.size:
            res[nan] = tab.nan_left[nodes[nan]]
    if tab.zero_differs:
        zero = np.flatnonzero(x == 0.0)
        if zero.size:
            res[zero] = tab.zero_left[nodes[zero]]
    if tab.has_cat:
        cat = np.flatnonzero(np.take(tab.is_cat, nodes))
        if cat.size:
            res[cat] = _categorical_left(tab, nodes[cat], x[cat])
    nxt = np.take(tab.right, nodes)
    np.add(nodes, 1, out=nxt, where=res)
    return nxt


def go_left(
    ens: EnsembleArrays, nodes: npt.NDArray[np.int64], x: npt.NDArray[np.float64]
) -> npt.NDArray[np.bool_]:
    """Decide, for internal ``nodes`` and their (prepared) feature values ``x``, who goes left.

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    nodes : ndarray of int64, shape (n,)
        Global indices of internal nodes.
    x : ndarray of float64, shape (n,)
        The value of each node's split feature, prepared by :func:`prepare_values`.
    """
    tab = routing_tables(ens)
    nodes = np.asarray(nodes, dtype=np.intp)
    x = np.asarray(x, dtype=np.float64)
    res = x <= tab.threshold[nodes]
    nan = np.isnan(x)
    res[nan] = tab.nan_left[nodes[nan]]
    zero = x == 0.0
    res[zero] = tab.zero_left[nodes[zero]]
    cat = np.flatnonzero(tab.is_cat[nodes])
    if cat.size:
        res[cat] = _categorical_left(tab, nodes[cat], x[cat])
    return res


def apply_prepared(
    ens: EnsembleArrays,
    Xp: npt.NDArray[np.float64],
    *,
    trees: npt.NDArray[np.int64] | None = None,
    n_eval: npt.NDArray[np.int64] | None = None,
) -> npt.NDArray[np.int64]:
    """Leaf (global node index) reached by each row in each tree; ``Xp`` already prepared.

    ``trees`` selects (and orders) the trees routed (default all); with ``n_eval``, row ``i``
    is routed through the first ``n_eval[i]`` of them only and the rest of its entries are -1.
    Returns int64 (n_rows, len(trees)).

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    Xp : ndarray of float64, shape (n_rows, n_features)
        Rows prepared by :func:`prepare_values`.
    trees : ndarray of int64, optional
        The trees routed, in this order (default: all, in model order).
    n_eval : ndarray of int64, shape (n_rows,), optional
        Route row ``i`` through the first ``n_eval[i]`` trees of ``trees`` only.
    """
    n, n_feat = Xp.shape
    sel = np.arange(ens.n_trees) if trees is None else np.asarray(trees, dtype=np.int64)
    roots = ens.tree_offset[sel].astype(np.intp)
    n_trees = int(roots.size)
    out = np.empty((n, n_trees), dtype=np.int64)
    if n == 0 or n_trees == 0:
        return out
    tab = routing_tables(ens)
    max_depth = int(tab.max_depth[sel].max())
    min_depth = int(tab.min_leaf_depth[sel].min())
    chunk = max(1, _CHUNK_PAIRS // n_trees)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        m = stop - start
        Xc = Xp[start:stop]
        flat = Xc.ravel()
        has_nan = bool(np.isnan(Xc).any())
        nodes = np.tile(roots, m)
        base = np.repeat(np.arange(m, dtype=np.intp) * n_feat, n_trees)
        res = nodes  # the full (m * n_trees) result, updated through `pos` after compaction
        pos: np.ndarray | None = None
        if n_eval is not None:
            keep = np.flatnonzero((np.arange(n_trees)[None, :] < n_eval[start:stop, None]).ravel())
            res = np.full(m * n_trees, -1, dtype=np.intp)
            pos, nodes, base = keep, nodes[keep], base[keep]
        for level in range(max_depth):
            if nodes.size == 0:
                break
            nodes = _step(tab, nodes, base, flat, has_nan)
            if level + 1 >= min_depth and level + 1 < max_depth:
                act = np.flatnonzero(~tab.is_leaf[nodes])
                if act.size < nodes.size // 2:
                    if pos is None:
                        pos = np.arange(nodes.size, dtype=np.intp)
                        res = nodes.copy()
                    else:
                        res[pos] = nodes
                    pos, nodes, base = pos[act], nodes[act], base[act]
        if pos is None:
            res = nodes
        else:
            res[pos] = nodes
        out[start:stop] = res.reshape(m, n_trees)
    return out


def apply(ens: EnsembleArrays, X: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Leaf (global node index) reached by each row in each tree, int64 (n_rows, n_trees).

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    X : ndarray of float64, shape (n_rows, n_features)
        Rows converted by ``TreeEnsemble.check_X``.
    """
    return apply_prepared(ens, prepare_values(X))


def tree_outputs(ens: EnsembleArrays, X: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Each tree's output per row, float64 (n_rows, n_trees).

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    X : ndarray of float64, shape (n_rows, n_features)
        Rows converted by ``TreeEnsemble.check_X``.
    """
    return ens.value[apply(ens, X)]


def _class_sums(ens: EnsembleArrays, outputs: npt.NDArray[np.float64], n_iter: int) -> npt.NDArray[np.float64]:
    """Sum tree outputs per class in model order (as LightGBM does, so sums agree bitwise).

    ``n_iter > 0`` divides by it (random-forest averaging); pass 0 for the plain sum.
    """
    n = outputs.shape[0]
    k = ens.num_tree_per_iteration
    res = np.zeros((n, k), dtype=np.float64)
    cls = ens.tree_class
    for t in range(outputs.shape[1]):
        res[:, cls[t]] += outputs[:, t]
    if n_iter > 0:
        res /= n_iter
    return res


def _shape(res: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return res[:, 0].copy() if res.shape[1] == 1 else res


def n_iterations(ens: EnsembleArrays) -> int:
    """Return the number of iterations (LightGBM's divisor for random-forest averaging).

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    """
    return ens.n_trees // max(ens.num_tree_per_iteration, 1)


def predict_raw(
    ens: EnsembleArrays, X: npt.NDArray[np.float64], *, average: bool = False
) -> npt.NDArray[np.float64]:
    """Raw score, float64 (n_rows,) or (n_rows, num_tree_per_iteration).

    LightGBM's raw score (``predict(raw_score=True)``) is the plain sum of tree outputs, also
    for random forests; with ``average=True`` a random forest's sum is divided by the number
    of iterations, as LightGBM does before its output transformation.

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    X : ndarray of float64, shape (n_rows, n_features)
        Rows converted by ``TreeEnsemble.check_X``.
    average : bool, default False
        Divide a random forest's sum by the number of iterations.
    """
    n_iter = n_iterations(ens) if (average and ens.average_output) else 0
    return _shape(_class_sums(ens, tree_outputs(ens, X), n_iter))


def staged_predict_raw(
    ens: EnsembleArrays, X: npt.NDArray[np.float64], *, average: bool = False
) -> Iterator[npt.NDArray[np.float64]]:
    """Yield the raw score after each iteration (1, 2, ..., n_iterations); see :func:`predict_raw`.

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    X : ndarray of float64, shape (n_rows, n_features)
        Rows converted by ``TreeEnsemble.check_X``.
    average : bool, default False
        Divide a random forest's sums by the number of iterations so far.
    """
    out = tree_outputs(ens, X)
    k = ens.num_tree_per_iteration
    n_iter = ens.n_trees // k
    acc = np.zeros((out.shape[0], k), dtype=np.float64)
    cls = ens.tree_class
    for it in range(n_iter):
        for t in range(it * k, (it + 1) * k):
            acc[:, cls[t]] += out[:, t]
        yield _shape(acc / (it + 1) if (average and ens.average_output) else acc.copy())


def decision_path(ens: EnsembleArrays, X: npt.NDArray[np.float64]) -> sp.csr_matrix:
    """Nodes visited by each row: boolean CSR (n_rows, n_nodes).

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    X : ndarray of float64, shape (n_rows, n_features)
        Rows converted by ``TreeEnsemble.check_X``.
    """
    leaves = apply(ens, X)
    n = leaves.shape[0]
    rows_parts = []
    cols_parts = []
    cur = leaves.ravel()
    rows = np.repeat(np.arange(n, dtype=np.int64), ens.n_trees)
    parent = ens.parent.astype(np.int64)
    while cur.size:
        rows_parts.append(rows)
        cols_parts.append(cur)
        cur = parent[cur]
        keep = cur >= 0
        cur, rows = cur[keep], rows[keep]
    r = np.concatenate(rows_parts) if rows_parts else np.zeros(0, np.int64)
    c = np.concatenate(cols_parts) if cols_parts else np.zeros(0, np.int64)
    m = sp.csr_matrix((np.ones(r.size, dtype=bool), (r, c)), shape=(n, ens.n_nodes))
    m.sum_duplicates()
    m.sort_indices()
    return m


def reference_leaf(ens: EnsembleArrays, x: npt.ArrayLike, tree: int) -> int:
    """Slow, obvious reference: global leaf index reached by one row in one tree.

    Written directly from LightGBM's ``tree.h``, one node at a time; the test oracle for the
    vectorized :func:`apply`.

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    x : array-like of float, shape (n_features,)
        One row, as given (the function applies LightGBM's zero threshold itself).
    tree : int
        Tree index.
    """
    row = [float(v) for v in np.asarray(x, dtype=np.float64)]
    node = int(ens.tree_offset[tree])
    while ens.left_child[node] >= 0:
        fval = row[int(ens.feature[node])]
        if abs(fval) <= K_ZERO_THRESHOLD:
            fval = 0.0
        if ens.is_categorical[node]:
            if math.isnan(fval) or not (-1.0 < fval < 2147483648.0):
                left = False
            else:
                cats = ens.cat_values[ens.cat_offsets[node] : ens.cat_offsets[node + 1]]
                left = int(fval) in set(cats.tolist())
        else:
            mt = int(ens.missing_type[node])
            if math.isnan(fval) and mt != 2:
                fval = 0.0
            if (mt == 1 and abs(fval) <= K_ZERO_THRESHOLD) or (mt == 2 and math.isnan(fval)):
                left = bool(ens.default_left[node])
            else:
                left = fval <= ens.threshold[node]
        node = int(ens.left_child[node] if left else ens.right_child[node])
    return node
