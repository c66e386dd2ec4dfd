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
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

if TYPE_CHECKING:
    from ._ensemble import TreeEnsemble

__all__ = [
    "K_ZERO_THRESHOLD",
    "apply",
    "decision_path",
    "predict_raw",
    "reference_leaf",
    "staged_predict_raw",
    "tree_outputs",
]

#: LightGBM's ``kZeroThreshold`` (a float literal ``1e-35f`` widened to double).
K_ZERO_THRESHOLD = float(np.float32(1e-35))

_CHUNK_PAIRS = 1 << 21  # (row, tree) pairs routed at once


def prepare_values(X: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Return a copy of ``X`` with values ``|x| <= kZeroThreshold`` set to exactly 0."""
    out = np.array(X, dtype=np.float64, order="C", copy=True)
    out[np.abs(out) <= K_ZERO_THRESHOLD] = 0.0
    return out


def go_left(
    ens: TreeEnsemble, nodes: npt.NDArray[np.int64], x: npt.NDArray[np.float64]
) -> npt.NDArray[np.bool_]:
    """Decide, for internal ``nodes`` and their (prepared) feature values ``x``, who goes left."""
    mt = ens.missing_type[nodes]
    isnan = np.isnan(x)
    has_nan = bool(isnan.any())
    x0 = np.where(isnan & (mt != 2), 0.0, x) if has_nan else x
    res = x0 <= ens.threshold[nodes]
    missing = (mt == 1) & (np.abs(x0) <= K_ZERO_THRESHOLD)
    if has_nan:
        missing |= (mt == 2) & isnan
    if missing.any():
        res = np.where(missing, ens.default_left[nodes], res)
    cat = ens.is_categorical[nodes]
    if cat.any():
        sub = np.flatnonzero(cat)
        xc = x[sub]
        valid = (xc > -1.0) & (xc < 2147483648.0)
        res[sub] = False
        vsub = sub[valid]
        c = np.trunc(xc[valid]).astype(np.int64)
        nd = nodes[vsub]
        off, nwords, bits = ens._cat_bitsets()
        word = c >> 5
        inside = word < nwords[nd]
        w = np.where(inside, off[nd] + np.minimum(word, np.maximum(nwords[nd] - 1, 0)), 0)
        hit = inside & (((bits[w] >> (c & 31).astype(np.uint32)) & np.uint32(1)) == 1)
        res[vsub] = hit
    return res


def apply_prepared(ens: TreeEnsemble, Xp: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Leaf (global node index) reached by each row in each tree; ``Xp`` already prepared."""
    n, n_feat = Xp.shape
    n_trees = ens.n_trees
    out = np.empty((n, n_trees), dtype=np.int64)
    if n == 0 or n_trees == 0:
        return out
    roots = ens.tree_offset[:-1]
    is_leaf = ens.is_leaf
    left = ens.left_child.astype(np.int64)
    right = ens.right_child.astype(np.int64)
    feature = ens.feature.astype(np.int64)
    flat = Xp.ravel()
    chunk = max(1, _CHUNK_PAIRS // n_trees)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        m = stop - start
        nodes = np.tile(roots, m)
        base = np.repeat(np.arange(start, stop, dtype=np.int64) * n_feat, n_trees)
        active = np.flatnonzero(~is_leaf[nodes])
        while active.size:
            nd = nodes[active]
            x = flat[base[active] + feature[nd]]
            nxt = np.where(go_left(ens, nd, x), left[nd], right[nd])
            nodes[active] = nxt
            active = active[~is_leaf[nxt]]
        out[start:stop] = nodes.reshape(m, n_trees)
    return out


def apply(ens: TreeEnsemble, X: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Leaf (global node index) reached by each row in each tree, int64 (n_rows, n_trees)."""
    return apply_prepared(ens, prepare_values(X))


def tree_outputs(ens: TreeEnsemble, X: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Each tree's output per row, float64 (n_rows, n_trees)."""
    return ens.value[apply(ens, X)]


def _class_sums(ens: TreeEnsemble, outputs: npt.NDArray[np.float64], n_iter: int) -> npt.NDArray[np.float64]:
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


def n_iterations(ens: TreeEnsemble) -> int:
    """Return the number of iterations (LightGBM's divisor for random-forest averaging)."""
    return ens.n_trees // max(ens.num_tree_per_iteration, 1)


def predict_raw(
    ens: TreeEnsemble, X: npt.NDArray[np.float64], *, average: bool = False
) -> npt.NDArray[np.float64]:
    """Raw score, float64 (n_rows,) or (n_rows, num_tree_per_iteration).

    LightGBM's raw score (``predict(raw_score=True)``) is the plain sum of tree outputs, also
    for random forests; with ``average=True`` a random forest's sum is divided by the number
    of iterations, as LightGBM does before its output transformation.
    """
    n_iter = n_iterations(ens) if (average and ens.average_output) else 0
    return _shape(_class_sums(ens, tree_outputs(ens, X), n_iter))


def staged_predict_raw(
    ens: TreeEnsemble, X: npt.NDArray[np.float64], *, average: bool = False
) -> Iterator[npt.NDArray[np.float64]]:
    """Yield the raw score after each iteration (1, 2, ..., n_iterations); see :func:`predict_raw`."""
    out = tree_outputs(ens, X)
    k = ens.num_tree_per_iteration
    n_iter = ens.n_trees // k
    acc = np.zeros((out.shape[0], k), dtype=np.float64)
    cls = ens.tree_class
    for it in range(n_iter):
        for t in range(it * k, (it + 1) * k):
            acc[:, cls[t]] += out[:, t]
        yield _shape(acc / (it + 1) if (average and ens.average_output) else acc.copy())


def decision_path(ens: TreeEnsemble, X: npt.NDArray[np.float64]) -> sp.csr_matrix:
    """Nodes visited by each row: boolean CSR (n_rows, n_nodes)."""
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


def reference_leaf(ens: TreeEnsemble, x: npt.ArrayLike, tree: int) -> int:
    """Slow, obvious reference: global leaf index reached by one row in one tree.

    Written directly from LightGBM's ``tree.h``, one node at a time; the test oracle for the
    vectorized :func:`apply`.
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
