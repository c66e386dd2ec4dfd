"""Exact cost accounting: which features each row's paths use and what the row pays."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ._costs import FeatureCosts, as_feature_costs
from ._ensemble import TreeEnsemble
from ._predict import apply_prepared, prepare_values
from ._validation import check_index_array, check_n_trees, check_tree_order

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CostReport",
    "ancestor_feature_counts",
    "bits_to_bool",
    "cost_report",
    "features_used",
    "model_coupled_cost",
    "path_feature_bits",
    "path_feature_counts",
]

_CHUNK_PAIRS = 1 << 20
_PERCENTILES = (50, 90, 99)


def path_feature_counts(ens: TreeEnsemble) -> sp.csr_matrix:
    """Count splits per feature on the path to each node, CSR int32 (n_nodes, n_features).

    Row ``i`` counts, for every feature, the splits on the path from the root down to node
    ``i`` (node ``i`` itself excluded). Rows of leaves are what a row reaching the leaf
    evaluates in that tree.

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (not modified).
    """
    parent = ens.parent.astype(np.int64)
    m = ancestor_feature_counts(parent, parent, ens.feature.astype(np.int64), ens.n_features, ens.n_nodes)
    assert m is not None  # a checked ensemble's parent links have no cycle
    return m


def ancestor_feature_counts(first: np.ndarray, parent: np.ndarray, feature: np.ndarray, n_features: int,
                            max_steps: int) -> sp.csr_matrix | None:
    """Count, for each start, the split features of its ancestors: CSR int32 (len(first), n_features).

    Start ``i``'s walk begins at internal node ``first[i]`` (-1: no ancestor) and goes up
    through ``parent`` (internal node -> its parent, -1 at the root), counting ``feature`` of
    every internal node it passes. None if some walk is longer than ``max_steps`` (a cycle).
    """
    node, cur = np.arange(first.size, dtype=np.int64), first
    rows, cols = [], []
    for _ in range(max_steps + 1):
        keep = cur >= 0
        if not keep.any():
            break
        node, cur = node[keep], cur[keep]
        rows.append(node)
        cols.append(feature[cur])
        cur = parent[cur]
    else:
        return None
    r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    m = sp.csr_matrix((np.ones(r.size, dtype=np.int32), (r, c)), shape=(first.size, n_features))
    m.sum_duplicates()
    return m


_ROW_CHUNK: int | None = None  # rows per chunk; None: _CHUNK_PAIRS // number of trees (tests force tiny ones)
_MAX_PREALLOC = 1 << 33  # bytes of address space reserved for the output indices before falling back to parts

RowSource = Callable[[int, int], npt.NDArray[np.float64]]


def _iv(ens: Any, X: Any, tree_order: Any, n_trees: Any) -> tuple[RowSource, int, np.ndarray, np.ndarray]:
    """Check the arguments; X is returned as a source of float64 row chunks (converted on demand).

    A 2-D ndarray, a DataFrame or a sparse matrix is converted chunk by chunk through the one
    input path (``TreeEnsemble.check_X``), so the whole float64 copy of the input never exists at once;
    anything else (lists) is converted once.
    """
    if not isinstance(ens, TreeEnsemble):
        raise TypeError(
            f"The 'ensemble' argument must be a budget_extras.TreeEnsemble. Got {type(ens).__name__}; "
            "use TreeEnsemble.from_booster(booster)."
        )
    rows: Any = None
    if isinstance(X, np.ndarray) and X.ndim == 2:
        rows = X
    elif sp.issparse(X) and X.ndim == 2:
        rows = X if X.format in ("csr", "csc", "lil", "dok") else X.tocsr()
    elif type(X).__name__ == "DataFrame" and hasattr(X, "iloc"):
        rows = X.iloc
    source: RowSource
    if rows is None:
        Xv = ens.check_X(X)
        n = int(Xv.shape[0])

        def source(a: int, b: int) -> npt.NDArray[np.float64]:
            return Xv[a:b]
    else:
        n = int(X.shape[0])
        ens.check_X(rows[: min(n, 1)])  # column checks once, also for 0 rows

        def source(a: int, b: int) -> npt.NDArray[np.float64]:
            return ens.check_X(rows[a:b])
    order = check_tree_order(tree_order, ens.n_trees)
    nt = check_n_trees(n_trees, n_rows=n, n_order=order.size)
    return source, n, order, nt


def path_feature_bits(P: sp.csr_matrix) -> npt.NDArray[np.uint64]:
    """Bitset of the features on each node's path: uint64 (n_nodes + 1, n_words); last row zero.

    Parameters
    ----------
    P : scipy.sparse.csr_matrix, shape (n_nodes, n_features)
        :func:`path_feature_counts` of the ensemble.

    Returns
    -------
    ndarray of uint64, shape (n_nodes + 1, ceil(n_features / 64))
        Bit ``f % 64`` of word ``f // 64`` of row ``i`` is set when feature ``f`` splits on
        the path to node ``i``; row ``n_nodes`` (a sentinel for "no node") is zero.
    """
    n_nodes, n_feat = P.shape
    n_words = max(1, (n_feat + 63) // 64)
    bits = np.zeros((n_nodes + 1, n_words), dtype=np.uint64)
    coo = P.tocoo()
    f = coo.col.astype(np.int64)
    np.bitwise_or.at(bits, (coo.row, f >> 6), np.left_shift(np.uint64(1), (f & 63).astype(np.uint64)))
    return bits


def bits_to_bool(bits: npt.NDArray[np.uint64], n_feat: int) -> npt.NDArray[np.bool_]:
    """Unpack rows of feature bitsets (:func:`path_feature_bits`) to a bool matrix.

    Parameters
    ----------
    bits : ndarray of uint64, shape (n_rows, n_words)
        One bitset per row.
    n_feat : int
        The number of features (columns of the result).

    Returns
    -------
    ndarray of bool, shape (n_rows, n_feat)
    """
    as_bytes = np.ascontiguousarray(bits.astype("<u8")).view(np.uint8)
    return np.unpackbits(as_bytes, axis=1, bitorder="little")[:, :n_feat].astype(bool)


def _walk(
    ens: TreeEnsemble,
    source: RowSource,
    n: int,
    order: np.ndarray,
    nt: np.ndarray,
    *,
    split_cost: npt.NDArray[np.float64] | None = None,
    with_counts: bool = False,
    costs: FeatureCosts | None = None,
) -> tuple[sp.csr_matrix, sp.csr_matrix | None, np.ndarray, np.ndarray, np.ndarray | None, sp.csr_matrix | None]:
    """Route the rows through their evaluated trees and account for them, one row chunk at a time.

    Returns the used-feature matrix (CSR bool), the split counts per feature (CSR int32 with the
    same sparsity pattern and the same ``indices``/``indptr`` arrays as ``used``, or None without
    ``with_counts``), the number of splits evaluated per row, the split evaluation cost per row
    (``sum of split_cost[feature]`` over the evaluated splits) and, with ``costs``, the
    acquisition cost per row and the acquired-feature matrix.

    Memory: each chunk's float64 rows, leaves and intermediate matrices are freed before the
    next; the outputs' index arrays are written in place into buffers sized by an upper bound
    on their length, whose untouched pages never become resident.
    """
    n_feat = ens.n_features
    P = path_feature_counts(ens)
    bits = path_feature_bits(P)
    sentinel = ens.n_nodes  # zero row of `bits`
    splits = np.zeros(n, dtype=np.int64)
    split_eval = np.zeros(n, dtype=np.float64)
    acq = np.zeros(n, dtype=np.float64) if costs is not None else None
    grouped = costs is not None and bool((np.asarray(costs.group) >= 0).any())
    acquired_parts: list[sp.csr_matrix] = []
    depth = np.append(ens.depth.astype(np.int64), 0)
    sc = np.zeros(n_feat) if split_cost is None else split_cost
    leaf_cost = np.append(np.asarray(P @ sc, dtype=np.float64).ravel(), 0.0)
    width = max(int(order.size), 1)
    chunk = _ROW_CHUNK if _ROW_CHUNK is not None else max(1, _CHUNK_PAIRS // width)
    n_split_feats = int(np.unique(ens.feature[~ens.is_leaf]).size) if ens.n_nodes else 0
    cap = n * min(n_feat, max(n_split_feats, 1))
    prealloc = cap * (8 if with_counts else 4) <= _MAX_PREALLOC
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices = np.empty(cap if prealloc else 0, dtype=np.int32)
    counts_data = np.empty(cap if prealloc and with_counts else 0, dtype=np.int32)
    index_parts: list[np.ndarray] = []
    count_parts: list[np.ndarray] = []
    pos = 0
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        leaves = apply_prepared(ens, prepare_values(source(start, stop)), trees=order, n_eval=nt[start:stop])
        leaves[leaves < 0] = sentinel
        splits[start:stop] = depth[leaves].sum(axis=1)
        split_eval[start:stop] = leaf_cost[leaves].sum(axis=1)
        u = sp.csr_matrix(bits_to_bool(np.bitwise_or.reduce(bits[leaves], axis=1), n_feat))
        k = int(u.nnz)
        if with_counts:
            mask = leaves != sentinel
            idx = leaves[mask]
            ip = np.zeros(stop - start + 1, dtype=np.int64)
            np.cumsum(nt[start:stop], out=ip[1:])
            L = sp.csr_matrix((np.ones(idx.size, dtype=np.int32), idx, ip), shape=(stop - start, ens.n_nodes))
            cnt = sp.csr_matrix(L @ P, dtype=np.int32)
            cnt.eliminate_zeros()
            cnt.sort_indices()
            # a feature is used exactly when it has a positive count: one sparsity pattern
            if not (np.array_equal(cnt.indptr, u.indptr) and np.array_equal(cnt.indices, u.indices)):
                raise AssertionError("cost_report: split counts and used features disagree")  # pragma: no cover
            if prealloc:
                counts_data[pos : pos + k] = cnt.data
            else:
                count_parts.append(cnt.data)
        if prealloc:
            indices[pos : pos + k] = u.indices
        else:
            index_parts.append(u.indices.astype(np.int32))
        indptr[start + 1 : stop + 1] = pos + u.indptr[1:]
        if costs is not None and acq is not None:
            acq[start:stop] = costs.row_cost(u)
            if grouped:
                acquired_parts.append(sp.csr_matrix(costs.acquired_features(u)))
        pos += k
    if prealloc:
        indices = indices[:pos]
        counts_data = counts_data[:pos]
    else:
        indices = np.concatenate(index_parts) if index_parts else np.zeros(0, np.int32)
        counts_data = np.concatenate(count_parts) if count_parts else np.zeros(0, np.int32)
    if pos < 2**31:
        indptr = indptr.astype(np.int32)
    else:  # pragma: no cover - more than 2**31 used (row, feature) pairs
        indices = indices.astype(np.int64)
    shape = (n, n_feat)
    used = sp.csr_matrix((np.ones(pos, dtype=bool), indices, indptr), shape=shape)
    counts = sp.csr_matrix((counts_data, indices, indptr), shape=shape) if with_counts else None
    acquired: sp.csr_matrix | None = None
    if costs is not None:
        if grouped:
            acquired = (sp.vstack(acquired_parts, format="csr") if acquired_parts
                        else sp.csr_matrix(shape, dtype=bool))
            acquired = sp.csr_matrix(acquired, dtype=bool)
        else:  # no groups: a row acquires exactly what it uses (same arrays, no copy)
            acquired = sp.csr_matrix((used.data, used.indices, used.indptr), shape=shape)
    return used, counts, splits, split_eval, acq, acquired


def features_used(
    ensemble: TreeEnsemble, X: Any, *, tree_order: Any = None, n_trees: Any = None
) -> sp.csr_matrix:
    """Features on each row's evaluated paths.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model.
    X : array-like or pandas.DataFrame of shape (n_rows, n_features)
        The rows.
    tree_order : array-like of int, optional
        Order in which trees are evaluated (a subset is allowed: other trees are never
        evaluated). Default: model order, all trees.
    n_trees : int or array-like of int of shape (n_rows,), optional
        Row ``i`` evaluates only the first ``n_trees[i]`` trees of the order (early exit).

    Returns
    -------
    scipy.sparse.csr_matrix of bool, shape (n_rows, n_features)
    """
    source, n, order, nt = _iv(ensemble, X, tree_order, n_trees)
    return _walk(ensemble, source, n, order, nt)[0]


def model_coupled_cost(
    ensemble: TreeEnsemble, costs: FeatureCosts | None, trees: Any = None
) -> tuple[npt.NDArray[np.bool_], float]:
    """Return the one-time (per-model) cost: THE coupled-cost rule.

    A feature's ``costs.coupled`` is paid once for the model when any split of the trees it
    evaluates uses the feature, however many rows or splits use it.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model.
    costs : FeatureCosts or None
        The cost model (None: a cost object without coupled costs; the cost is 0).
    trees : array-like of int, optional
        The trees some row evaluates (default: every tree).

    Returns
    -------
    features : ndarray of bool, shape (n_features,)
        The features paid for.
    cost : float
        ``costs.coupled`` summed over them.
    """
    internal = ~ensemble.is_leaf
    in_trees = internal if trees is None else np.isin(ensemble.node_tree, trees) & internal
    features = np.zeros(ensemble.n_features, dtype=bool)
    features[ensemble.feature[in_trees]] = True
    cost = 0.0 if costs is None else float(np.asarray(costs.coupled)[features].sum())
    return features, cost


def _per_row(x: Any, name: str, n: int, *, integer: bool) -> np.ndarray:
    """``x`` as a 1-D array of ``n`` entries >= 0, not NaN (int64 or float64; no copy when it is one).

    Infinity passes: costs near the float64 maximum are finite and their sums overflow.
    """
    want = np.int64 if integer else np.float64
    arr = np.asarray(x)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer)
                                 or (not integer and np.issubdtype(arr.dtype, np.floating))):
        kind = "integers" if integer else "numbers"
        raise TypeError(f"The {name!r} argument of CostReport.from_usage must hold {kind}. Got dtype {arr.dtype}.")
    if arr.shape != (n,):
        raise ValueError(
            f"The {name!r} argument of CostReport.from_usage must have shape ({n},) (one entry per row of "
            f"'used'). Got shape {arr.shape}."
        )
    arr = arr if arr.dtype == want else arr.astype(want)
    bad = np.isnan(arr) | (arr < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"The {name!r} argument of CostReport.from_usage must hold values >= 0. Got {arr[i]!r} at row {i}."
        )
    return arr


def _usage_matrix(m: Any, name: str, shape: tuple[int, int] | None, n_features: int) -> sp.csr_matrix:
    """``m`` as a CSR matrix of ``n_features`` columns (and ``shape`` when given): bool, or integer counts."""
    if not sp.issparse(m) and not isinstance(m, np.ndarray):
        raise TypeError(
            f"The {name!r} argument of CostReport.from_usage must be a scipy.sparse matrix or a 2-D ndarray. "
            f"Got {type(m).__name__}."
        )
    counts = name == "feature_counts"
    if (m.dtype == bool) == counts or (counts and not np.issubdtype(m.dtype, np.integer)):
        want = "integer" if counts else "bool"
        raise TypeError(f"The {name!r} argument of CostReport.from_usage must be of dtype {want}. Got {m.dtype}.")
    if m.ndim != 2 or m.shape[1] != n_features or (shape is not None and m.shape != shape):
        want_shape = shape if shape is not None else f"(n_rows, {n_features})"
        raise ValueError(
            f"The {name!r} argument of CostReport.from_usage must have shape {want_shape}. Got shape {m.shape}."
        )
    return m if sp.issparse(m) and m.format == "csr" else sp.csr_matrix(m)


@dataclass(frozen=True, eq=False)
class CostReport:
    """Per-row and per-model prediction cost of an ensemble on some rows.

    Attributes
    ----------
    used : scipy.sparse.csr_matrix of bool, shape (n_rows, n_features)
        Features some split on the row's evaluated paths uses.
    acquired : scipy.sparse.csr_matrix of bool, shape (n_rows, n_features)
        Features the row holds after paying: ``used`` plus the other members of every group
        it acquired.
    feature_counts : scipy.sparse.csr_matrix of int32, shape (n_rows, n_features), or None
        Number of evaluated splits on each feature (None if not requested).
    acquisition_cost : ndarray of float64, shape (n_rows,)
        ``costs.row_cost(used)``: each needed group / ungrouped feature paid once.
    splits_evaluated, trees_evaluated : ndarray of int64, shape (n_rows,)
    eval_cost : ndarray of float64, shape (n_rows,)
        ``sum_f feature_counts[i, f] * costs.split[f] + costs.tree * trees_evaluated[i]``.
    total_cost : ndarray of float64, shape (n_rows,)
        ``acquisition_cost + eval_cost``.
    coupled_cost : float
        One-time model cost: ``costs.coupled`` summed over the features used by any split of
        the trees any row evaluates.
    coupled_features : ndarray of bool, shape (n_features,)
        Those features.
    tree_order : ndarray of int64
        Evaluation order used.
    feature_names : tuple of str
    costs : FeatureCosts
    """

    used: sp.csr_matrix
    acquired: sp.csr_matrix
    feature_counts: sp.csr_matrix | None
    acquisition_cost: npt.NDArray[np.float64]
    splits_evaluated: npt.NDArray[np.int64]
    trees_evaluated: npt.NDArray[np.int64]
    eval_cost: npt.NDArray[np.float64]
    total_cost: npt.NDArray[np.float64]
    coupled_cost: float
    coupled_features: npt.NDArray[np.bool_]
    tree_order: npt.NDArray[np.int64]
    feature_names: tuple[str, ...]
    costs: FeatureCosts = field(repr=False)

    @classmethod
    def from_usage(
        cls,
        ensemble: TreeEnsemble,
        costs: FeatureCosts | None,
        used: Any,
        *,
        eval_cost: Any,
        splits_evaluated: Any,
        trees_evaluated: Any,
        tree_order: Any = None,
        coupled_trees: Any = None,
        acquisition_cost: Any = None,
        acquired: Any = None,
        feature_counts: Any = None,
        feature_names: Sequence[str] | None = None,
    ) -> CostReport:
        """Build a report from what each row used and evaluated: the one place the cost rules are applied.

        Acquisition (per row): ``costs.row_cost(used)``, each group / ungrouped feature paid
        once; ``acquired`` is ``used`` plus the other members of the groups bought. Coupled
        (per model, :func:`model_coupled_cost`): ``costs.coupled`` of every feature a split of
        the evaluated trees uses, paid once. ``total_cost`` is acquisition plus evaluation.

        Parameters
        ----------
        ensemble : TreeEnsemble
            The model whose trees the rows evaluated.
        costs : FeatureCosts or None
            The cost model; None for a cost object that is not a ``FeatureCosts`` (then
            ``acquisition_cost`` is required, nothing is acquired beyond ``used`` and the
            coupled cost is 0).
        used : scipy.sparse matrix or ndarray of bool, shape (n_rows, n_features)
            Features some split on each row's evaluated paths uses.
        eval_cost : array-like of float, shape (n_rows,)
            Evaluation cost of each row (per-tree and per-split costs), >= 0.
        splits_evaluated, trees_evaluated : array-like of int, shape (n_rows,)
            Splits and trees each row evaluated, >= 0.
        tree_order : array-like of int, optional
            The evaluation order (default: model order, every tree).
        coupled_trees : array-like of int, optional
            The trees some row evaluates, whose features pay the coupled cost (default:
            ``tree_order``).
        acquisition_cost : array-like of float, shape (n_rows,), optional
            Per-row acquisition cost already priced by the caller (default:
            ``costs.row_cost(used)``).
        acquired : scipy.sparse matrix or ndarray of bool, shape (n_rows, n_features), optional
            Features held after paying, already computed by the caller (default:
            ``costs.acquired_features(used)``).
        feature_counts : scipy.sparse matrix or ndarray of int, shape (n_rows, n_features), optional
            Evaluated splits per feature and row.
        feature_names : sequence of str, optional
            Default: the ensemble's.

        Returns
        -------
        CostReport

        Raises
        ------
        TypeError, ValueError
            If an argument is of the wrong type, dtype or shape, or a per-row quantity is
            negative or NaN; the message names the argument.
        """
        if not isinstance(ensemble, TreeEnsemble):
            raise TypeError(
                "The 'ensemble' argument of CostReport.from_usage must be a budget_extras.TreeEnsemble. "
                f"Got {type(ensemble).__name__}."
            )
        d = ensemble.n_features
        if costs is not None and (not isinstance(costs, FeatureCosts) or np.asarray(costs.lazy).shape != (d,)):
            got = type(costs).__name__ if not isinstance(costs, FeatureCosts) else f"{costs.lazy.shape[0]} features"
            raise TypeError(
                f"The 'costs' argument of CostReport.from_usage must be a FeatureCosts of the model's {d} features "
                f"or None. Got {got}."
            )
        used = _usage_matrix(used, "used", None, d)
        n = used.shape[0]
        if acquisition_cost is None and costs is None:
            raise ValueError("The 'acquisition_cost' argument of CostReport.from_usage is required when costs is None.")
        acq = _per_row(costs.row_cost(used) if acquisition_cost is None else acquisition_cost,  # type: ignore[union-attr]
                       "acquisition_cost", n, integer=False)
        if acquired is None:
            acquired = used if costs is None else sp.csr_matrix(costs.acquired_features(used))
        order = check_tree_order(tree_order, ensemble.n_trees)
        coupled = order if coupled_trees is None else check_index_array(
            coupled_trees, name="coupled_trees", upper=ensemble.n_trees
        )
        coupled_features, coupled_cost = model_coupled_cost(ensemble, costs, coupled)
        names = ensemble.feature_names if feature_names is None else tuple(str(f) for f in feature_names)
        if len(names) != d:
            raise ValueError(
                f"The 'feature_names' argument of CostReport.from_usage must name the model's {d} features. "
                f"Got {len(names)} names."
            )
        ev = _per_row(eval_cost, "eval_cost", n, integer=False)
        counts = None if feature_counts is None else _usage_matrix(feature_counts, "feature_counts", (n, d), d)
        return cls(
            used=used,
            acquired=_usage_matrix(acquired, "acquired", (n, d), d),
            feature_counts=counts,
            acquisition_cost=acq,
            splits_evaluated=_per_row(splits_evaluated, "splits_evaluated", n, integer=True),
            trees_evaluated=_per_row(trees_evaluated, "trees_evaluated", n, integer=True),
            eval_cost=ev,
            total_cost=acq + ev,
            coupled_cost=coupled_cost,
            coupled_features=coupled_features,
            tree_order=order,
            feature_names=names,
            costs=costs,  # type: ignore[arg-type]
        )

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.total_cost.size)

    def summary(self, percentiles: tuple[float, ...] = _PERCENTILES) -> dict[str, Any]:
        """Mean, percentiles and max of every per-row quantity, plus the coupled cost.

        Parameters
        ----------
        percentiles : tuple of float, default (50, 90, 99)

        Returns
        -------
        dict
            ``{"n_rows", "coupled_cost", "acquisition_cost": {"mean", "p50", ...}, ...}``,
            plain Python numbers (JSON-serializable).
        """
        out: dict[str, Any] = {"n_rows": self.n_rows, "coupled_cost": float(self.coupled_cost)}
        quantities = {
            "acquisition_cost": self.acquisition_cost,
            "eval_cost": self.eval_cost,
            "total_cost": self.total_cost,
            "features_used": np.asarray(self.used.sum(axis=1)).ravel().astype(np.float64),
            "splits_evaluated": self.splits_evaluated.astype(np.float64),
            "trees_evaluated": self.trees_evaluated.astype(np.float64),
        }
        for key, v in quantities.items():
            stats: dict[str, float] = {"mean": float(v.mean()) if v.size else float("nan")}
            for p in percentiles:
                stats[f"p{p:g}"] = float(np.percentile(v, p)) if v.size else float("nan")
            stats["max"] = float(v.max()) if v.size else float("nan")
            out[key] = stats
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per row of X: what the row pays and what it evaluates.

        Returns
        -------
        pandas.DataFrame
            Index ``row`` (0 .. n_rows - 1); columns ``acquisition_cost``, ``eval_cost``,
            ``total_cost`` (float), ``features_used`` (features some evaluated split uses),
            ``splits_evaluated`` and ``trees_evaluated`` (int).
        """
        import pandas as pd

        return pd.DataFrame(
            {
                "acquisition_cost": self.acquisition_cost,
                "eval_cost": self.eval_cost,
                "total_cost": self.total_cost,
                "features_used": np.asarray(self.used.sum(axis=1)).ravel().astype(np.int64),
                "splits_evaluated": self.splits_evaluated,
                "trees_evaluated": self.trees_evaluated,
            },
            index=pd.RangeIndex(self.n_rows, name="row"),
        )

    def feature_frame(self) -> pd.DataFrame:
        """One row per feature: the share of rows using it and paying for it, and its costs.

        Returns
        -------
        pandas.DataFrame
            Index: feature names. Columns ``share_used`` (rows some evaluated split of which
            uses the feature), ``share_paying`` (rows that acquired the feature: its own use or
            a use of another member of its group), ``group`` (the group label, None when
            ungrouped), ``lazy_cost`` (``costs.lazy``), ``unit_cost`` (cost of the feature's
            acquisition unit: its group's cost, or its own), ``mean_cost`` (``share_paying *
            unit_cost``: what the feature's unit adds to the mean per-row cost; members of one
            group repeat their group's share, so sum over ``unit_cost`` units, not features) and
            ``coupled`` (the feature is in ``coupled_features``).
        """
        import pandas as pd

        n = max(self.n_rows, 1)
        c = self.costs
        unit_cost = np.asarray(c.unit_cost, dtype=np.float64)[np.asarray(c.unit)]
        paying = np.asarray(self.acquired.sum(axis=0), dtype=np.float64).ravel() / n
        index = pd.Index(self.feature_names, name="feature")
        return pd.DataFrame(
            {
                "share_used": np.asarray(self.used.sum(axis=0), dtype=np.float64).ravel() / n,
                "share_paying": paying,
                "group": pd.Series(
                    [c.group_labels[g] if g >= 0 else None for g in np.asarray(c.group)], index=index, dtype=object
                ),
                "lazy_cost": np.asarray(c.lazy, dtype=np.float64),
                "unit_cost": unit_cost,
                "mean_cost": paying * unit_cost,
                "coupled": np.asarray(self.coupled_features, dtype=bool),
            },
            index=index,
        )

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the share of rows paying per feature and the per-row cost histogram.

        Delegates to :func:`budget_extras.plotting.plot_cost_report` (matplotlib:
        ``pip install budget-extras[plot]``).

        Parameters
        ----------
        ax : sequence of two matplotlib.axes.Axes, optional
            A new figure when None.
        **kwargs
            ``top`` and ``bins`` of :func:`~budget_extras.plotting.plot_cost_report`.

        Returns
        -------
        numpy.ndarray of two matplotlib.axes.Axes
        """
        from ..plotting import plot_cost_report

        return plot_cost_report(self, ax, **kwargs)

    def feature_usage(self) -> pd.DataFrame:
        """Share of rows that use each feature 0 times, 1-7 times and more than 7 times.

        A "use" is one evaluated split on the feature (as in BudgetPrune's Table 1).

        Returns
        -------
        pandas.DataFrame
            Index: feature names; columns ``never``, ``1-7``, ``>7`` (shares in [0, 1]),
            ``mean_uses`` and ``lazy_cost``.
        """
        import pandas as pd

        c = self.feature_counts
        if c is None:
            raise ValueError(
                "feature_usage() needs split counts: call cost_report(..., feature_counts=True)."
            )
        n = max(self.n_rows, 1)
        ge1 = np.bincount(c.indices, minlength=c.shape[1]).astype(np.float64)
        gt7 = np.bincount(c.indices[c.data > 7], minlength=c.shape[1]).astype(np.float64)
        total = np.asarray(c.sum(axis=0)).ravel().astype(np.float64)
        return pd.DataFrame(
            {
                "never": 1.0 - ge1 / n,
                "1-7": (ge1 - gt7) / n,
                ">7": gt7 / n,
                "mean_uses": total / n,
                "lazy_cost": np.asarray(self.costs.lazy),
            },
            index=pd.Index(self.feature_names, name="feature"),
        )


def _costs_iv(ens: TreeEnsemble, costs: Any) -> FeatureCosts:
    return as_feature_costs(costs, n_features=ens.n_features, feature_names=ens.feature_names)


def cost_report(
    ensemble: TreeEnsemble,
    X: Any,
    costs: FeatureCosts,
    *,
    tree_order: Any = None,
    n_trees: Any = None,
    feature_counts: bool = True,
) -> CostReport:
    """Exact prediction cost of ``ensemble`` on the rows of ``X``.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model.
    X : array-like or pandas.DataFrame of shape (n_rows, n_features)
        The rows (values decide the paths, hence the features acquired).
    costs : FeatureCosts, list, dict, pandas.Series, str or os.PathLike
        Cost model, through the one cost input :func:`as_feature_costs` (a list: one cost per
        feature; a dict or Series by feature name; a CSV path). Costs with names are aligned
        to the model's feature names.
    tree_order : array-like of int, optional
        Evaluation order of the trees (a subset means the others are never evaluated).
    n_trees : int or array-like of int of shape (n_rows,), optional
        Row ``i`` evaluates the first ``n_trees[i]`` trees of the order, then exits early.
    feature_counts : bool, default True
        Also count the evaluated splits per feature and row (``CostReport.feature_counts``,
        needed by ``feature_usage()``); ``False`` is faster.

    Returns
    -------
    CostReport
    """
    source, n, order, nt = _iv(ensemble, X, tree_order, n_trees)
    c = _costs_iv(ensemble, costs)
    used, counts, splits, split_eval, acq_or_none, acquired = _walk(
        ensemble, source, n, order, nt, split_cost=np.asarray(c.split), with_counts=feature_counts, costs=c
    )
    assert acq_or_none is not None and acquired is not None
    acq = acq_or_none
    eval_cost = split_eval + c.tree * nt
    for a in (acq, eval_cost, splits, nt):
        a.flags.writeable = False
    report = CostReport.from_usage(
        ensemble,
        c,
        used,
        eval_cost=eval_cost,
        splits_evaluated=splits,
        trees_evaluated=nt,
        tree_order=order,
        coupled_trees=order[: int(nt.max())] if nt.size else order[:0],  # the trees some row reaches
        acquisition_cost=acq,
        acquired=acquired,
        feature_counts=counts,
    )
    report.coupled_features.flags.writeable = False
    return report
