"""BudgetPrune estimator: prune a LightGBM forest to a feature-cost budget, exactly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core._ensemble import TreeEnsemble
from ..core._validation import check_booster, check_unique_items
from ._error_terms import forest_error, gbdt_surrogate_error, inbag_counts, subtree_sum, train_counts
from ._problem import PruneProblem, build_problem
from ._solver import PruneResult, solve_primal_dual

__all__ = [
    "BudgetPrune",
    "BudgetPruneSetup",
    "leaf_nodes",
    "prepare",
    "pruned_leaf_map",
    "raw_from_leaves",
    "resolve_costs",
]

_ERROR_SOURCES = ("train", "inbag", "oob")


def resolve_costs(
    costs: Any, feature_names: tuple[str, ...], n_features: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-feature group, per-group acquisition cost and per-feature split cost.

    Parameters
    ----------
    costs : FeatureCosts, array-like, dict, pandas.Series or None
        ``None``: every feature costs 1. A :class:`FeatureCosts` (its acquisition units
        ``unit``/``unit_cost``, so groups are bought once per row, and its per-split cost
        ``split``; ``coupled`` and ``tree`` costs do not depend on the pruning's per-row
        choices and are not part of the program), any object with ``lazy`` (and optionally
        ``groups``) attributes, per-feature costs as an array, or a mapping from feature name
        to cost.
    feature_names : tuple of str
    n_features : int

    Returns
    -------
    feature_group : ndarray of int64, shape (n_features,)
    group_cost : ndarray of float64, shape (n_groups,)
    split_cost : ndarray of float64, shape (n_features,)
    """
    groups = None
    group_cost_map: Any = None
    split: Any = 0.0
    if costs is None:
        lazy = np.ones(n_features)
    elif hasattr(costs, "unit") and hasattr(costs, "unit_cost"):  # the core's FeatureCosts
        if getattr(costs, "feature_names", None) is not None and feature_names:
            costs = costs.aligned(list(feature_names))
        if costs.n_features != n_features:
            raise ValueError(
                f"The 'costs' argument describes {costs.n_features} features but the model has {n_features}."
            )
        split_cost = np.broadcast_to(np.asarray(costs.split, dtype=np.float64), (n_features,)).copy()
        unit = np.asarray(costs.unit, dtype=np.int64)
        return unit, np.asarray(costs.unit_cost, dtype=np.float64), split_cost
    elif hasattr(costs, "lazy"):
        lazy = np.asarray(costs.lazy, dtype=np.float64)
        groups = getattr(costs, "groups", None)
        group_cost_map = getattr(costs, "group_cost", None)
        split = getattr(costs, "split", 0.0)
    elif isinstance(costs, dict) or hasattr(costs, "reindex"):
        mapping = check_unique_items(costs, name="costs", owner="BudgetPrune.fit")
        missing = [f for f in feature_names if f not in mapping]
        if missing:
            raise ValueError(
                f"The 'costs' mapping must give a cost for every feature. Missing: {missing[:5]}."
            )
        lazy = np.array([float(mapping[f]) for f in feature_names])
    else:
        lazy = np.asarray(costs, dtype=np.float64).ravel()
    if lazy.shape != (n_features,) or not np.all(np.isfinite(lazy)) or np.any(lazy < 0):
        raise ValueError(
            f"The 'costs' argument must give {n_features} finite non-negative feature costs. "
            f"Got shape {lazy.shape} with values {lazy[:5]}."
        )
    if groups is None:
        feature_group = np.arange(n_features, dtype=np.int64)
        group_cost = lazy.copy()
    else:
        g = np.asarray(groups)
        _, feature_group = np.unique(g, return_inverse=True)
        feature_group = feature_group.astype(np.int64)
        n_groups = int(feature_group.max()) + 1
        group_cost = np.zeros(n_groups)
        np.maximum.at(group_cost, feature_group, lazy)
        if isinstance(group_cost_map, dict):
            labels = np.unique(g)
            for j, lab in enumerate(labels):
                if lab in group_cost_map:
                    group_cost[j] = float(group_cost_map[lab])
    split_cost = np.broadcast_to(np.asarray(split, dtype=np.float64), (n_features,)).copy()
    return feature_group, group_cost, split_cost


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
) -> BudgetPruneSetup:
    """Build BudgetPrune's program for a LightGBM model (see :class:`BudgetPrune`)."""
    if error_source not in _ERROR_SOURCES:
        raise ValueError(
            f"The 'error_source' parameter must be one of {_ERROR_SOURCES}. Got {error_source!r} instead."
        )
    booster = check_booster(model, owner="BudgetPrune.fit")
    forest = TreeEnsemble.from_booster(booster)
    y = np.asarray(y_train)
    if y.ndim != 1:
        raise ValueError(f"The 'y_train' argument must be one-dimensional. Got shape {y.shape} instead.")
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
        ensemble=forest, booster=booster, problem=problem, valid_leaves=valid, counts=counts
    )


def _progress_bar(total: int, desc: str, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)


class BudgetPrune:
    """Prune a LightGBM random forest (or GBDT) for prediction on a feature-cost budget.

    Solves the 0-1 program of Nan, Wang and Saligrama (NeurIPS 2016) exactly by its primal-dual
    method (see :func:`solve_primal_dual`), for a given trade-off ``lam`` or for the smallest
    ``lam`` whose pruned forest meets an average validation cost ``budget`` (bisection).

    Parameters
    ----------
    lam : float, optional
        Trade-off between error and average feature cost. Exactly one of ``lam`` and ``budget``.
    budget : float, optional
        Target average acquisition (plus evaluation, with ``eval_cost``) cost per validation row.
    error_source : {"train", "inbag", "oob"}, default "train"
        Which training rows define the error terms (see ``_budgetprune_errors``).
    error : {"misclassification", "loss"}, default "misclassification"
        Random forests: the paper's 0-1 majority error per node, or the loss surrogate (training
        loss of the forest's averaged output with one tree collapsed at the node; needs
        ``error_source="train"``). Boosted models always use the loss surrogate.
    eval_cost : bool, default False
        Add the split-evaluation cost of the costs object (``split``) to the cost term.
    gap_tol : float, default 1e-4
        Relative duality gap at which the solver stops.
    max_iter : int, default 500
        Dual iterations per solve.
    time_limit : float, optional
        Seconds per solve.
    bisect_steps : int, default 30
        Bisection steps on ``log(lam)`` when a budget is given.
    progress : bool, optional
        Show tqdm progress bars; by default only for large problems (over 10 million triples).

    Attributes
    ----------
    result_ : PruneResult
        The solver's result at ``lam_``.
    lam_ : float
        The lambda used.
    collapsed_ : ndarray of int64
        Internal nodes (pre-order global indices) turned into leaves.
    model_string_ : str
        The pruned model as LightGBM model text (``ensemble_.to_model_string()``).
    booster_ : lightgbm.Booster
        The pruned model loaded in LightGBM.
    ensemble_ : TreeEnsemble
        The pruned model: ``TreeEnsemble.from_booster(model).collapse(collapsed_)``.
    setup_ : BudgetPruneSetup
        The program and routing, for re-solving at other lambdas.
    path_ : list of tuple
        ``(lam, average cost, error term, status)`` of each solve (bisection history).
    """

    def __init__(
        self,
        lam: float | None = None,
        *,
        budget: float | None = None,
        error_source: str = "train",
        error: str = "misclassification",
        eval_cost: bool = False,
        gap_tol: float = 1e-4,
        max_iter: int = 500,
        time_limit: float | None = None,
        bisect_steps: int = 30,
        progress: bool | None = None,
    ) -> None:
        self.lam = lam
        self.budget = budget
        self.error_source = error_source
        self.error = error
        self.eval_cost = eval_cost
        self.gap_tol = gap_tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.bisect_steps = bisect_steps
        self.progress = progress

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Parameters of this estimator (scikit-learn convention)."""
        del deep
        return {
            k: getattr(self, k)
            for k in (
                "lam",
                "budget",
                "error_source",
                "error",
                "eval_cost",
                "gap_tol",
                "max_iter",
                "time_limit",
                "bisect_steps",
                "progress",
            )
        }

    def set_params(self, **params: Any) -> BudgetPrune:
        """Set parameters (scikit-learn convention)."""
        valid = self.get_params()
        for k, v in params.items():
            if k not in valid:
                raise ValueError(
                    f"Invalid parameter {k!r} for BudgetPrune. Valid parameters: {sorted(valid)}."
                )
            setattr(self, k, v)
        return self

    def _params_iv(self) -> None:
        if (self.lam is None) == (self.budget is None):
            raise ValueError(
                "BudgetPrune needs exactly one of 'lam' and 'budget'. "
                f"Got lam={self.lam!r}, budget={self.budget!r}."
            )
        for name in ("lam", "budget"):
            value = getattr(self, name)
            if value is not None and not _finite_nonneg(value):
                raise ValueError(
                    f"The {name!r} parameter of BudgetPrune must be a finite number >= 0. "
                    f"Got {value!r} instead."
                )
        if not (isinstance(self.bisect_steps, int) and self.bisect_steps >= 1):
            raise ValueError(
                f"The 'bisect_steps' parameter must be an integer >= 1. Got {self.bisect_steps!r} instead."
            )

    def fit(self, model: Any, X_train: Any, y_train: Any, X_valid: Any, costs: Any = None) -> BudgetPrune:
        """Prune ``model``.

        Parameters
        ----------
        model : lightgbm.Booster, LGBMModel, TreeEnsemble, path or model text
            A LightGBM random forest (binary or multiclass) or GBDT.
        X_train, y_train : array-like
            Training rows and labels (define the error terms).
        X_valid : array-like
            Validation rows (define which features each row would acquire); labels not needed.
        costs : FeatureCosts, array-like, dict or None
            Feature costs (None: uniform).

        Returns
        -------
        self : BudgetPrune
        """
        self._params_iv()
        setup = prepare(
            model,
            X_train,
            y_train,
            X_valid,
            costs,
            error_source=self.error_source,
            error=self.error,
            eval_cost=self.eval_cost,
        )
        self.setup_ = setup
        show = self.progress if self.progress is not None else setup.problem.n_triples > 10_000_000
        self.path_: list[tuple[float, float, float, int]] = []
        if self.lam is not None:
            result = self._solve(setup.problem, float(self.lam), None, show)
        else:
            result = self._bisect(setup.problem, float(self.budget), show)  # type: ignore[arg-type]
        self.result_ = result
        self.lam_ = result.lam
        self.collapsed_ = result.collapsed
        self.ensemble_ = setup.ensemble.collapse(result.collapsed)
        self.model_string_ = self.ensemble_.to_model_string()
        import lightgbm as lgb

        self.booster_ = lgb.Booster(model_str=self.model_string_)
        return self

    def _solve(self, problem: PruneProblem, lam: float, beta0: np.ndarray | None, show: bool) -> PruneResult:
        bar = _progress_bar(self.max_iter, f"BudgetPrune lam={lam:.3g}", show)

        def tick(it: int, upper: float, lower: float) -> None:
            if bar is not None:
                bar.update(1)
                bar.set_postfix(gap=f"{(upper - lower) / max(abs(upper), 1e-300):.2e}")

        try:
            res = solve_primal_dual(
                problem,
                lam,
                gap_tol=self.gap_tol,
                max_iter=self.max_iter,
                time_limit=self.time_limit,
                beta0=beta0,
                progress=tick,
            )
        finally:
            if bar is not None:
                bar.close()
        self.path_.append((lam, res.acquisition_term + res.evaluation_term, res.error_term, res.status))
        return res

    def _bisect(self, problem: PruneProblem, budget: float, show: bool) -> PruneResult:
        """Smallest lambda (to ``bisect_steps`` halvings of ``log lam``) whose cost is <= budget."""

        def cost(r: PruneResult) -> float:
            return r.acquisition_term + r.evaluation_term

        res = self._solve(problem, 0.0, None, show)
        if cost(res) <= budget:
            return res
        total = float(problem.pair_cost.sum() + problem.node_eval.max(initial=0.0))
        lam_hi = 1.0 / max(total, 1e-12)
        hi = self._solve(problem, lam_hi, None, show)
        if cost(hi) <= budget:  # bracket from above: shrink lambda until the budget is missed
            lam_lo = lam_hi / 4.0
            for _ in range(60):
                lo = self._solve(problem, lam_lo, hi.beta, show)
                if cost(lo) > budget:
                    break
                lam_hi, hi, lam_lo = lam_lo, lo, lam_lo / 4.0
            else:
                return hi
        else:  # bracket from below: grow lambda until the budget is met
            for _ in range(200):
                lam_lo, lam_hi = lam_hi, lam_hi * 4.0
                hi = self._solve(problem, lam_hi, hi.beta, show)
                if cost(hi) <= budget:
                    break
        for _ in range(self.bisect_steps):
            mid = float(np.sqrt(lam_lo * lam_hi))
            r = self._solve(problem, mid, hi.beta, show)
            if cost(r) <= budget:
                lam_hi, hi = mid, r
            else:
                lam_lo = mid
            if lam_hi / lam_lo - 1.0 < 1e-6:
                break
        return hi

    def predict_raw(self, X: Any) -> np.ndarray:
        """Raw scores of the pruned model, as ``booster_.predict(X, raw_score=True)``."""
        setup = self.setup_
        leaves = leaf_nodes(setup.ensemble, setup.booster, X)
        return raw_from_leaves(setup.ensemble, pruned_leaf_map(setup.ensemble, self.collapsed_)[leaves])

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities as the average of the pruned leaves' class distributions (paper, step 6).

        Random forests only; for multiclass each tree's positive share votes for its class and the
        votes are normalized.
        """
        setup = self.setup_
        if setup.counts is None:
            raise ValueError("predict_proba needs a random forest (class counts); use predict_raw for GBDT.")
        leaves = pruned_leaf_map(setup.ensemble, self.collapsed_)[leaf_nodes(setup.ensemble, setup.booster, X)]
        share = setup.counts[:, 1] / np.maximum(setup.counts.sum(axis=1), 1.0)
        votes = share[leaves]
        forest = setup.ensemble
        if forest.num_tree_per_iteration == 1:
            p = votes.mean(axis=1)
            return np.stack([1 - p, p], axis=1)
        out = np.zeros((votes.shape[0], forest.num_tree_per_iteration))
        for c in range(forest.num_tree_per_iteration):
            out[:, c] = votes[:, forest.tree_class == c].mean(axis=1)
        return out / np.maximum(out.sum(axis=1, keepdims=True), 1e-300)


def _finite_nonneg(value: Any) -> bool:
    numeric = isinstance(value, int | float | np.integer | np.floating)
    return numeric and bool(np.isfinite(value) and value >= 0)


def raw_from_leaves(forest: TreeEnsemble, leaves: np.ndarray) -> np.ndarray:
    """Raw scores from the (pruned) leaf of every row in every tree.

    As ``Booster.predict(raw_score=True)``: the sum of the trees' outputs per class, also for
    random forests (LightGBM averages a forest's outputs only when it transforms them).
    """
    vals = forest.value[leaves]
    k = forest.num_tree_per_iteration
    if k == 1:
        return vals.sum(axis=1)
    return np.stack([vals[:, forest.tree_class == c].sum(axis=1) for c in range(k)], axis=1)


def leaf_nodes(forest: TreeEnsemble, booster: Any, X: Any) -> np.ndarray:
    """Global leaf node reached by every row in every tree, routed by LightGBM itself.

    ``booster.predict(X, pred_leaf=True)`` gives LightGBM's leaf id per tree; the core's
    ``leaf_index`` maps it to the global node id, so missing values and categorical splits
    follow LightGBM's semantics by construction.

    Parameters
    ----------
    forest : TreeEnsemble
        The model ``booster`` holds.
    booster : lightgbm.Booster
    X : array-like of shape (n_rows, n_features)

    Returns
    -------
    ndarray of int64, shape (n_rows, n_trees)
    """
    leaf = np.asarray(booster.predict(X, pred_leaf=True), dtype=np.int64)
    if leaf.ndim == 1:
        leaf = leaf[:, None]
    leaves = np.flatnonzero(forest.is_leaf)
    tree = forest.node_tree[leaves]
    width = int(np.bincount(tree, minlength=forest.n_trees).max(initial=1))
    table = np.full((forest.n_trees, width), -1, dtype=np.int64)
    table[tree, forest.leaf_index[leaves]] = leaves
    return table[np.arange(forest.n_trees)[None, :], leaf]


def pruned_leaf_map(forest: TreeEnsemble, collapsed: np.ndarray) -> np.ndarray:
    """Map every node to the node that is its leaf after collapsing ``collapsed`` (itself if none).

    A node inside the subtree of a collapsed node maps to its top-most collapsed ancestor.
    """
    target = np.arange(forest.n_nodes, dtype=np.int64)
    # deepest first, so that an enclosing collapsed subtree (smaller pre-order index) wins
    for c in np.unique(np.asarray(collapsed, dtype=np.int64))[::-1]:
        target[c : forest.subtree_end[c]] = c
    return target
