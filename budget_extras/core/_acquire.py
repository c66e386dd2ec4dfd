"""Lazy feature acquisition at prediction time: fetch only what the paths reach."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ._costs import FeatureCosts
from ._ensemble import TreeEnsemble
from ._params import is_integer
from ._predict import K_ZERO_THRESHOLD, go_left, n_iterations
from ._report import _costs_iv, path_feature_counts
from ._validation import check_n_trees, check_tree_order

__all__ = ["AcquisitionResult", "predict_acquiring"]

Fetch = Callable[[npt.NDArray[np.int64], int], Any]


@dataclass(frozen=True, eq=False)
class AcquisitionResult:
    """Result of :func:`predict_acquiring`.

    Attributes
    ----------
    predictions : ndarray of float64, shape (n_rows,) or (n_rows, num_tree_per_iteration)
        Raw scores (as :meth:`TreeEnsemble.predict_raw` over the evaluated trees).
    acquired : scipy.sparse.csr_matrix of bool, shape (n_rows, n_features)
        Features fetched for each row (exactly the features its paths reached).
    acquisition_cost, eval_cost, total_cost : ndarray of float64, shape (n_rows,)
        Same accounting as :func:`cost_report`.
    log : list of (int, ndarray of int64)
        Every ``fetch`` call in order: (feature, rows).
    X : ndarray of float64, shape (n_rows, n_features)
        Fetched values; NaN where nothing was fetched.
    """

    predictions: npt.NDArray[np.float64]
    acquired: sp.csr_matrix
    acquisition_cost: npt.NDArray[np.float64]
    eval_cost: npt.NDArray[np.float64]
    total_cost: npt.NDArray[np.float64]
    log: list[tuple[int, npt.NDArray[np.int64]]]
    X: npt.NDArray[np.float64]

    @property
    def n_fetch_calls(self) -> int:
        """Number of calls made to ``fetch``."""
        return len(self.log)

    @property
    def n_values_fetched(self) -> int:
        """Number of (row, feature) values fetched."""
        return int(sum(rows.size for _, rows in self.log))


def _fetch_values(fetch: Fetch, rows: np.ndarray, feature: int) -> np.ndarray:
    got = fetch(rows.copy(), feature)
    try:
        vals = np.asarray(got, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"The 'fetch' callable must return numbers for feature {feature}. Got {type(got).__name__}."
        ) from exc
    if vals.shape != (rows.size,):
        raise ValueError(
            f"The 'fetch' callable must return one value per requested row: {rows.size} values for "
            f"feature {feature}. Got {np.asarray(got).size}."
        )
    vals = vals.copy()
    vals[np.abs(vals) <= K_ZERO_THRESHOLD] = 0.0
    return vals


def predict_acquiring(
    ensemble: TreeEnsemble,
    fetch: Fetch,
    n_rows: int,
    costs: FeatureCosts,
    *,
    tree_order: Any = None,
    n_trees: Any = None,
    average: bool = False,
) -> AcquisitionResult:
    """Predict while acquiring feature values lazily, only where some path needs them.

    All rows descend all their trees level by level. Before each step, every (row,
    feature) value that a row's current node splits on and that has not been fetched yet is
    requested, with ONE call ``fetch(rows, feature)`` per feature over all rows that need it.
    A value is fetched at most once per row, and never for a feature no path of that row
    reaches.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model.
    fetch : callable
        ``fetch(rows, feature) -> values``: ``rows`` is an int64 array of row indices,
        ``feature`` an int; returns one number per row (NaN allowed for missing).
    n_rows : int
        Number of rows.
    costs : FeatureCosts
        Cost model (same accounting as :func:`cost_report`).
    tree_order : array-like of int, optional
        Evaluation order of the trees (a subset means the others are never evaluated).
    n_trees : int or array-like of int of shape (n_rows,), optional
        Row ``i`` evaluates the first ``n_trees[i]`` trees of the order.
    average : bool, default False
        Random forests: average instead of LightGBM's raw sum (see ``predict_raw``).

    Returns
    -------
    AcquisitionResult
    """
    if not isinstance(ensemble, TreeEnsemble):
        raise TypeError(
            f"The 'ensemble' argument must be a budget_extras.TreeEnsemble. Got {type(ensemble).__name__}."
        )
    if not callable(fetch):
        raise TypeError(
            f"The 'fetch' argument must be callable fetch(rows, feature). Got {type(fetch).__name__}."
        )
    if not is_integer(n_rows) or n_rows < 0:
        raise ValueError(f"The 'n_rows' argument must be an int >= 0. Got {n_rows!r}.")
    n = int(n_rows)
    c = _costs_iv(ensemble, costs)
    order = check_tree_order(tree_order, ensemble.n_trees)
    nt = check_n_trees(n_trees, n_rows=n, n_order=order.size)
    n_feat = ensemble.n_features
    values = np.full((n, n_feat), np.nan, dtype=np.float64)
    have = np.zeros((n, n_feat), dtype=bool)
    log: list[tuple[int, np.ndarray]] = []

    pos_idx = np.arange(order.size)
    pair_row, pair_pos = np.nonzero(pos_idx[None, :] < nt[:, None])
    nodes = ensemble.tree_offset[order[pair_pos]].astype(np.int64)
    feature = ensemble.feature.astype(np.int64)
    left = ensemble.left_child.astype(np.int64)
    right = ensemble.right_child.astype(np.int64)
    active = np.flatnonzero(~ensemble.is_leaf[nodes])
    while active.size:
        r = pair_row[active]
        f = feature[nodes[active]]
        missing = ~have[r, f]
        if missing.any():
            need_r, need_f = r[missing], f[missing]
            for feat in np.unique(need_f):
                rows = np.unique(need_r[need_f == feat])
                values[rows, feat] = _fetch_values(fetch, rows, int(feat))
                have[rows, feat] = True
                log.append((int(feat), rows))
        nd = nodes[active]
        nxt = np.where(go_left(ensemble, nd, values[r, f]), left[nd], right[nd])
        nodes[active] = nxt
        active = active[~ensemble.is_leaf[nxt]]

    k = ensemble.num_tree_per_iteration
    pred = np.zeros((n, k), dtype=np.float64)
    out = np.zeros((n, order.size), dtype=np.float64)
    out[pair_row, pair_pos] = ensemble.value[nodes]
    cls = ensemble.tree_class[order]
    for p in range(order.size):  # model order of summation, as predict_raw
        pred[:, cls[p]] += out[:, p]
    if average and ensemble.average_output:
        pred /= max(n_iterations(ensemble), 1)
    leaf_cost = np.asarray(path_feature_counts(ensemble) @ c.split, dtype=np.float64).ravel()
    split_eval = np.zeros(n, dtype=np.float64)
    np.add.at(split_eval, pair_row, leaf_cost[nodes])
    acquired = sp.csr_matrix(have)
    acq_cost = c.row_cost(acquired)
    eval_cost = split_eval + c.tree * nt
    return AcquisitionResult(
        predictions=pred[:, 0].copy() if k == 1 else pred,
        acquired=acquired,
        acquisition_cost=acq_cost,
        eval_cost=eval_cost,
        total_cost=acq_cost + eval_cost,
        log=log,
        X=values,
    )
