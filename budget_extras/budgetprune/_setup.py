"""What a BudgetPrune fit prepares before it solves: costs per feature group, labels, the pruning program.

:func:`prepare` reads the model, checks the labels and builds the :class:`PruneProblem` with the
error terms of the chosen source; :class:`Progress` is the fit's one progress bar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core._costs import as_feature_costs
from ..core._ensemble import TreeEnsemble
from ..core._validation import check_booster, check_finite_labels
from ._error_terms import (
    forest_error,
    gbdt_surrogate_error,
    inbag_counts,
    objective_name,
    subtree_sum,
    train_counts,
)
from ._leaves import leaf_nodes
from ._problem import PruneProblem, build_problem

__all__ = ["BudgetPruneSetup", "Progress", "labels_iv", "prepare", "resolve_costs"]

ERROR_SOURCES = ("train", "inbag", "oob")


def resolve_costs(
    costs: Any, feature_names: tuple[str, ...], n_features: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-feature group, per-group acquisition cost and per-feature split cost.

    Parameters
    ----------
    costs : FeatureCosts, array-like, dict, pandas.Series, CSV path or None
        Through the core's one cost input (:func:`budget_extras.core.as_feature_costs`;
        ``None``: every feature costs 1). The acquisition units ``unit``/``unit_cost`` (groups
        bought once per row) and the per-split cost ``split`` enter the program; ``coupled``
        and ``tree`` costs do not depend on the pruning's per-row choices and are not part of it.
    feature_names : tuple of str
    n_features : int

    Returns
    -------
    feature_group : ndarray of int64, shape (n_features,)
    group_cost : ndarray of float64, shape (n_groups,)
    split_cost : ndarray of float64, shape (n_features,)
    """
    fc = as_feature_costs(
        costs, n_features=n_features, feature_names=feature_names or None, owner="BudgetPrune"
    )
    split_cost = np.broadcast_to(np.asarray(fc.split, dtype=np.float64), (n_features,)).copy()
    return np.asarray(fc.unit, dtype=np.int64), np.asarray(fc.unit_cost, dtype=np.float64), split_cost


@dataclass(frozen=True)
class BudgetPruneSetup:
    """Everything derived from a model, data and costs, reused across lambdas.

    Attributes
    ----------
    ensemble : TreeEnsemble
        The model (the core's representation: global node ids in pre-order).
    booster : lightgbm.Booster
        The same model in LightGBM, which routes rows (``pred_leaf``).
    problem : PruneProblem
    valid_leaves : ndarray of int64, shape (n_valid, n_trees)
    counts : ndarray of float64, shape (n_nodes, 2) or None
        Class counts per node (random forests).
    """

    ensemble: TreeEnsemble
    booster: Any
    problem: PruneProblem
    valid_leaves: np.ndarray
    counts: np.ndarray | None
    train_leaves: np.ndarray | None = None
    y_train: np.ndarray | None = None


def prepare(
    model: Any,
    X_train: Any,
    y_train: Any,
    X_valid: Any,
    costs: Any = None,
    *,
    error_source: str = "train",
    error: str = "misclassification",
    eval_cost: bool = False,
    arg_names: tuple[str, str, str] = ("X_train", "y_train", "X_valid"),
) -> BudgetPruneSetup:
    """Build BudgetPrune's program for a LightGBM model (see :class:`BudgetPrune`).

    ``arg_names`` are the names of the rows, labels and validation rows in error messages.
    """
    if error_source not in ERROR_SOURCES:
        raise ValueError(
            f"The 'error_source' parameter must be one of {ERROR_SOURCES}. Got {error_source!r} instead."
        )
    booster = check_booster(model, owner="BudgetPrune.fit")
    forest = TreeEnsemble.from_booster(booster)
    x_name, y_name, v_name = arg_names
    X_train = forest.check_X(X_train, name=x_name)
    X_valid = forest.check_X(X_valid, name=v_name)
    y = labels_iv(forest, y_train, n_rows=X_train.shape[0], name=y_name, x_name=x_name)
    counts = None
    if error not in ("misclassification", "loss"):
        raise ValueError(
            f"The 'error' parameter must be 'misclassification' or 'loss'. Got {error!r} instead."
        )
    if forest.average_output:
        if error_source == "inbag":
            counts = inbag_counts(forest, y)
        else:
            tr = leaf_nodes(forest, booster, X_train)
            if tr.shape[0] != y.shape[0]:
                raise ValueError(f"X_train has {tr.shape[0]} rows but y_train has {y.shape[0]}.")
            counts = train_counts(forest, tr, y)
            if error_source == "oob":
                inbag = inbag_counts(forest, y)
                counts = counts - inbag
                if np.any(counts < -0.5):
                    raise ValueError(
                        "error_source='oob' needs X_train/y_train to be the training set of the forest: "
                        "some node has more in-bag rows than rows passed."
                    )
        node_error = forest_error(forest, counts)
        if error == "loss":
            if error_source != "train":
                raise ValueError("error='loss' uses the training rows passed: it needs error_source='train'.")
            node_error = gbdt_surrogate_error(forest, booster, X_train, y, tr)
    else:
        if error_source != "train":
            raise ValueError(
                "For boosted models only error_source='train' is available (GBDT surrogate error)."
            )
        tr = leaf_nodes(forest, booster, X_train)
        node_error = gbdt_surrogate_error(forest, booster, X_train, y, tr)
    valid = leaf_nodes(forest, booster, X_valid)
    feature_group, group_cost, split_cost = resolve_costs(costs, forest.feature_names, forest.n_features)
    node_group = np.where(forest.feature >= 0, feature_group[np.maximum(forest.feature, 0)], -1)
    node_eval = None
    if eval_cost:
        reach = subtree_sum(forest.parent, np.bincount(valid.ravel(), minlength=forest.n_nodes))
        path = np.zeros(forest.n_nodes)
        for h in range(forest.n_nodes):
            p = forest.parent[h]
            if p >= 0:
                path[h] = path[p] + split_cost[forest.feature[p]]
        node_eval = reach * path / max(valid.shape[0], 1)
    problem = build_problem(
        tree_offset=forest.tree_offset,
        parent=forest.parent,
        node_group=node_group,
        node_error=node_error,
        leaf_nodes=valid,
        group_cost=group_cost,
        node_eval=node_eval,
    )
    return BudgetPruneSetup(
        ensemble=forest,
        booster=booster,
        problem=problem,
        valid_leaves=valid,
        counts=counts,
        train_leaves=None if forest.average_output and error_source == "inbag" else tr,
        y_train=y,
    )


_PROGRESS_AFTER_S = 2.0  # progress=None: show a bar once a fit has run this long (or on a TTY)


class Progress:
    """One tqdm bar per fit, over dual iterations, created lazily.

    ``enabled``: True (always), False (never) or None (auto: at once when stderr is a terminal,
    otherwise as soon as the fit has run ``_PROGRESS_AFTER_S`` seconds).
    """

    def __init__(self, enabled: bool | None, desc: str) -> None:
        import sys
        import time

        self.enabled, self.desc, self.bar = enabled, desc, None
        self.t0 = time.perf_counter()
        self.tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self.count = 0

    def tick(self, **postfix: Any) -> None:
        import time

        self.count += 1
        if self.bar is None and self.enabled is not False:
            late = time.perf_counter() - self.t0 > _PROGRESS_AFTER_S
            if self.enabled or self.tty or late:
                from tqdm.auto import tqdm

                # not a terminal (a log file): refresh at most every 5 s
                self.bar = tqdm(
                    desc=self.desc, unit="it", leave=False, initial=self.count - 1,
                    mininterval=0.1 if self.tty else 5.0,
                )
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(postfix, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def labels_iv(
    forest: TreeEnsemble, y_train: Any, *, n_rows: int, name: str = "y_train", x_name: str = "X_train"
) -> np.ndarray:
    """``y_train`` as float64, checked against the rows and the model's classes."""
    y = np.asarray(y_train)
    if y.ndim != 1:
        raise ValueError(f"The {name!r} argument must be one-dimensional. Got shape {y.shape} instead.")
    if y.shape[0] != n_rows:
        raise ValueError(
            f"The {name!r} argument must have one label per row of {x_name} ({n_rows}). Got {y.shape[0]}."
        )
    if y.dtype == bool:
        y = y.astype(np.float64)
    if not np.issubdtype(y.dtype, np.number):
        raise ValueError(
            f"The {name!r} argument must hold numeric labels as the model was trained on them "
            f"(0/1 or class indices). Got dtype {y.dtype} (e.g. {y[:3].tolist()!r})."
        )
    y = check_finite_labels(y.astype(np.float64), name=name)
    objective = objective_name(forest)
    if objective in ("binary", "multiclass", "multiclassova"):
        n_classes = 2 if objective == "binary" else forest.num_tree_per_iteration
        bad = (y != np.round(y)) | (y < 0) | (y >= n_classes)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"The {name!r} argument must hold the model's classes 0..{n_classes - 1} "
                f"(objective {objective!r}). Got {float(y[i])!r} at position {i}."
            )
    return y
