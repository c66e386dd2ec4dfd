"""Per-row validation costs of a search candidate without building its :class:`TreeEnsemble`.

A row's cost (:func:`budget_extras.cost_report`'s accounting) needs, per tree, only which leaf
the row reaches and which features split on that leaf's path. LightGBM routes the rows
(``Booster.predict(X, pred_leaf=True)``, its C++ predictor); the paths come from each tree's
``num_leaves``, ``split_feature``, ``left_child`` and ``right_child`` alone: copied out of the
booster by the fork's ``LGBM_BoosterGetTreeArrays`` (:func:`budget_extras._compat.tree_arrays`),
or, where the library lacks it (upstream LightGBM) or the caller has the text, read from the
model text's lines in one pass; both give the same numbers. Either is faster than the full
checked parse of :meth:`TreeEnsemble.from_booster` (about ten times slower, most of a
candidate's measuring time on tables of 10k-30k rows). The per-row arithmetic is
:func:`~budget_extras.core._leaf_cost.row_costs_from_leaves`'s, on the same tables, so the
costs are equal to the last bit. A model the one-pass reader does not expect (linear trees, a
tree whose child links do not form a tree, a feature outside the cost model) goes through the
full parse, which accepts or refuses it as before.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import lightgbm as lgb
import numpy as np

from .._compat import TreeArrays, param_aliases, tree_arrays
from ..core._costs import FeatureCosts
from ..core._ensemble import TreeEnsemble
from ..core._leaf_cost import row_costs_from_leaves
from ..core._parse_trees import child_links_ok
from ..core._report import ancestor_feature_counts, bits_to_bool, model_coupled_cost, path_feature_bits

__all__ = ["LeafPaths", "RawScores", "array_paths", "header", "leaf_paths", "measure_rows", "model_row_costs",
           "objective_line", "predict"]

_CHUNK = 8192


@dataclass(frozen=True)
class LeafPaths:
    """What a row's leaf in each tree costs: the tables of ``row_costs_from_leaves``, per leaf.

    ``lut[t, leaf]``: the leaf's row in ``bits`` / ``path_cost`` (-1: no such leaf);
    ``bits``: the features on each leaf's path as a bitset (one zero row more); ``path_cost``:
    the split evaluation cost of each leaf's path; ``used``: the features some split uses;
    ``value``: each leaf's output as the text writes it (None: the text's ``leaf_value`` lines do
    not match its leaves); ``per_iteration``: the trees of one boosting round (classes).
    """

    lut: np.ndarray
    bits: np.ndarray
    path_cost: np.ndarray
    used: np.ndarray
    value: np.ndarray | None = None
    per_iteration: int = 1


def _line_values(text: str, key: str) -> list[str]:
    """Return the whitespace-separated values of every ``key=`` line of ``text``, in order."""
    head = "\n" + key + "="
    parts = []
    start = text.find(head)
    while start >= 0:
        end = text.find("\n", start + len(head))
        parts.append(text[start + len(head) : end if end >= 0 else len(text)])
        start = text.find(head, start + len(head))
    return " ".join(parts).split()


def _int_lines(text: str, key: str) -> np.ndarray:
    """Return every ``key=`` line's integers of ``text``, concatenated in order."""
    values = _line_values(text, key)
    return np.array(values, dtype=np.int64) if values else np.zeros(0, dtype=np.int64)


def _float_lines(text: str, key: str) -> np.ndarray | None:
    """Return every ``key=`` line's numbers of ``text`` as float64 (each decimal read to the nearest double).

    None if a value is not a number.
    """
    try:
        return np.array(_line_values(text, key), dtype=np.float64)
    except ValueError:
        return None


def _per_iteration(text: str) -> int:
    """Return the header's ``num_tree_per_iteration`` (1 without one, 0 if unreadable)."""
    m = re.search(r"\nnum_tree_per_iteration=(\d+)\n", "\n" + text.split("\nTree=", 1)[0] + "\n")
    return 1 if m is None else int(m.group(1))


def _parents(left: np.ndarray, right: np.ndarray, n_leaves: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Return each internal node's and each leaf's parent (global ids; -1: a root), or None if not a tree.

    The links are checked by the model reader's own test (``core._parse_trees.child_links_ok``:
    in range, each node but the root named once); a cycle is found by :func:`leaf_paths`' walk.
    """
    n_int = n_leaves - 1
    int_off = np.concatenate([[0], np.cumsum(n_int)])
    if not child_links_ok(left, right, n_leaves, int_off):
        return None
    leaf_off = np.concatenate([[0], np.cumsum(n_leaves)])
    tree_of = np.repeat(np.arange(n_leaves.size), n_int)
    parent_int = np.full(int(int_off[-1]), -1, dtype=np.int64)
    parent_leaf = np.full(int(leaf_off[-1]), -1, dtype=np.int64)
    node = np.arange(int(int_off[-1]), dtype=np.int64)
    for child in (left, right):
        inner = child >= 0
        parent_int[int_off[tree_of[inner]] + child[inner]] = node[inner]
        parent_leaf[leaf_off[tree_of[~inner]] + ~child[~inner]] = node[~inner]
    return parent_int, parent_leaf


def leaf_paths(text: str, costs: FeatureCosts) -> LeafPaths | None:
    """Read the leaves' paths of a model text (``Booster.model_to_string()``); None: use the full parse.

    The text's trees must be constant-leaf trees on at most ``costs.n_features`` features
    (``max_feature_idx``) whose child links form trees; anything else gives None.
    """
    body = text.split("\nend of trees", 1)[0]
    if "\nis_linear=1" in body or f"\nmax_feature_idx={costs.n_features - 1}\n" not in body:
        return None
    n_leaves = _int_lines(body, "num_leaves")
    if n_leaves.size != body.count("\nTree="):
        return None
    feature, left, right = (_int_lines(body, k) for k in ("split_feature", "left_child", "right_child"))
    return _paths(n_leaves, feature, left, right, _float_lines(body, "leaf_value"), _per_iteration(body), costs)


def array_paths(arrays: TreeArrays, costs: FeatureCosts) -> LeafPaths | None:
    """Return :func:`leaf_paths` of the booster's model text, from its :func:`~budget_extras._compat.tree_arrays`.

    The same checks on the same numbers, so the same paths (or None) as from the text.
    """
    if arrays.linear or arrays.max_feature_idx != costs.n_features - 1:
        return None
    return _paths(arrays.num_leaves, arrays.split_feature, arrays.left_child, arrays.right_child,
                  arrays.leaf_value, arrays.per_iteration, costs)


def _paths(n_leaves: np.ndarray, feature: np.ndarray, left: np.ndarray, right: np.ndarray,
           value: np.ndarray | None, k: int, costs: FeatureCosts) -> LeafPaths | None:
    """Return the leaves' paths of the trees of ``n_leaves`` leaves and these split arrays (None: not trees).

    ``value``: the leaves' values (None or a wrong length: no values); ``k``: trees per iteration.
    """
    n_trees = n_leaves.size
    if n_trees == 0 or (n_leaves < 1).any():
        return None
    n_int = int((n_leaves - 1).sum())
    if not feature.size == left.size == right.size == n_int:
        return None
    if feature.size and (feature.min() < 0 or feature.max() >= costs.n_features):
        return None
    links = _parents(left, right, n_leaves)
    if links is None:
        return None
    parent_int, parent_leaf = links
    # the splits on each leaf's path (a path has fewer splits than its tree has leaves)
    P = ancestor_feature_counts(parent_leaf, parent_int, feature, costs.n_features, int(n_leaves.max()))
    if P is None:
        return None  # a cycle in the child links
    lut = np.full((n_trees, int(n_leaves.max())), -1, dtype=np.int64)
    leaf_off = np.concatenate([[0], np.cumsum(n_leaves)])
    tree_of = np.repeat(np.arange(n_trees), n_leaves)
    lut[tree_of, np.arange(parent_leaf.size) - leaf_off[tree_of]] = np.arange(parent_leaf.size)
    used = np.zeros(costs.n_features, dtype=bool)
    used[feature] = True
    path_cost = np.asarray(P @ np.asarray(costs.split, dtype=np.float64), dtype=np.float64).ravel()
    if value is None or value.size != parent_leaf.size or k < 1 or n_trees % k:
        value, k = None, 1
    return LeafPaths(lut, path_feature_bits(P), path_cost, used, value, k)


def row_costs(paths: LeafPaths, leaves: Any, costs: FeatureCosts) -> np.ndarray:
    """Return each row's cost from its leaf in every tree (``row_costs_from_leaves``'s arithmetic).

    Raises
    ------
    ValueError
        If ``leaves`` does not have one column per tree or names a leaf the model lacks.
    """
    return _from_leaves(paths, leaves, costs, with_raw=False)[0]


def _from_leaves(paths: LeafPaths, leaves: Any, costs: FeatureCosts,
                 with_raw: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """Return each row's cost and, with ``with_raw`` and leaf values, its raw scores (else None).

    A row's raw score of a class is the sum of its leaves' values over the class's trees, added
    in the order of the trees from 0.0, as LightGBM's ``predict(raw_score=True)`` adds them: the
    same doubles. Shape ``(n_rows,)``, or ``(n_rows, per_iteration)`` for several classes.
    """
    L = np.asarray(leaves)
    n_trees = paths.lut.shape[0]
    if L.ndim != 2 or L.shape[1] != n_trees:
        raise ValueError(f"The 'leaves' argument must have shape (n_rows, {n_trees}) (pred_leaf=True). Got {L.shape}.")
    if L.size and (L.min() < 0 or L.max() >= paths.lut.shape[1]):
        raise ValueError("The 'leaves' argument names a leaf the model does not have.")
    out = np.empty(L.shape[0], dtype=np.float64)
    k = paths.per_iteration
    raw = np.zeros((L.shape[0], k), dtype=np.float64) if with_raw and paths.value is not None else None
    cols = np.arange(n_trees)
    for a in range(0, L.shape[0], _CHUNK):
        nodes = paths.lut[cols, L[a : a + _CHUNK]]
        if (nodes < 0).any():
            raise ValueError("The 'leaves' argument names a leaf the model does not have.")
        words = np.bitwise_or.reduce(paths.bits[nodes], axis=1)
        used = bits_to_bool(words, costs.n_features)
        out[a : a + _CHUNK] = costs.row_cost(used) + paths.path_cost[nodes].sum(axis=1) + costs.tree * n_trees
        if raw is not None and paths.value is not None:
            vals = paths.value[nodes.T]  # (trees, rows): one tree's values contiguous
            part = raw[a : a + _CHUNK]
            for t in range(n_trees):
                part[:, t % k] += vals[t]
    if raw is None:
        return out, None
    return out, raw[:, 0] if k == 1 else raw


def predict(booster: lgb.Booster, X: Any, **kwargs: Any) -> Any:
    """Return ``booster.predict(X, **kwargs)`` on the threads the booster was trained with.

    LightGBM's ``predict`` does not read the booster's ``num_threads``: without one it runs
    OpenMP's default team, whose waiting threads spin. On a small table that made a
    candidate's two predictions cost several times their work (8 ms of CPU instead of 2 for 375
    rows on 2 cores), and the team it leaves behind runs the next ``model_to_string`` too. The
    ``num_threads`` of the training parameters (any alias) is passed unless ``kwargs`` sets one.
    """
    aliases = param_aliases("num_threads")
    params = getattr(booster, "params", None) or {}
    if not aliases & set(kwargs):
        threads = next((params[a] for a in sorted(aliases) if a in params), None)
        if threads is not None:
            kwargs["num_threads"] = threads
    return booster.predict(X, **kwargs)


def model_row_costs(booster: lgb.Booster, X: Any, costs: FeatureCosts,
                    text: str | None = None) -> tuple[np.ndarray, float]:
    """Return the rows' costs on ``X`` and the model's coupled cost (``model_coupled_cost``).

    The paths come from :func:`leaf_paths` of ``text``, the booster's model text (None: read
    from ``booster``); a text it does not read goes through :meth:`TreeEnsemble.from_booster`
    (which refuses what ``cost_report`` refuses).
    """
    row_cost, coupled, _ = measure_rows(booster, X, costs, text)
    return row_cost, coupled


def measure_rows(booster: lgb.Booster, X: Any, costs: FeatureCosts,
                 text: str | None = None) -> tuple[np.ndarray, float, RawScores | None]:
    """Return the rows' costs on ``X``, the coupled cost and the rows' raw scores, from one routing of the rows.

    As :func:`model_row_costs`; the raw scores (:class:`RawScores`, None where the full parse
    measures the model, the text's leaf values do not match its leaves or it is a random forest,
    `average_output`) are those of
    ``predict(X, raw_score=True)``, summed from the leaves the rows reached, so scoring them
    needs no second pass of LightGBM over the rows. ``text``: the booster's model text (None: the
    trees' arrays, :func:`budget_extras._compat.tree_arrays`, where the library has them, else the
    text read from ``booster``).
    """
    arrays = tree_arrays(booster) if text is None else None
    if arrays is not None:
        paths = array_paths(arrays, costs)
        objective, averaged = arrays.objective.strip(), arrays.average_output
    else:
        text = booster.model_to_string() if text is None else text
        paths = leaf_paths(text, costs)
        head = header(text)
        objective, averaged = objective_line(head), "\naverage_output" in head
    if paths is None:
        ens = TreeEnsemble.from_booster(booster)
        row_cost = row_costs_from_leaves(ens, predict(booster, X, pred_leaf=True), costs)
        return row_cost, model_coupled_cost(ens, costs)[1], None
    row_cost, raw = _from_leaves(paths, predict(booster, X, pred_leaf=True), costs, with_raw=True)
    coupled = float(np.asarray(costs.coupled)[paths.used].sum())
    if raw is None or averaged:
        return row_cost, coupled, None  # a random forest: LightGBM averages its trees; it predicts the scores
    return row_cost, coupled, RawScores(X, raw, objective)


def header(text: str) -> str:
    """Return a model text's header: everything before its first ``Tree=`` section."""
    end = text.find("\nTree=")
    return text if end < 0 else text[:end]


def objective_line(head: str) -> str:
    """Return the ``objective=`` line of a model text's header (:func:`header`; empty without one)."""
    m = re.search(r"^objective=(.*)$", head, flags=re.MULTILINE)
    return "" if m is None else m.group(1).strip()


def _libm_exp(a: np.ndarray) -> np.ndarray:
    """Return ``exp`` of every entry by the C library's ``exp`` (LightGBM's ``std::exp``; overflow: inf).

    numpy's own ``exp`` may differ from it in the last bit; ``math.exp`` calls the C library's.
    """
    def one(v: float) -> float:
        try:
            return math.exp(v)
        except OverflowError:
            return math.inf

    flat = np.fromiter((one(v) for v in np.asarray(a, dtype=np.float64).ravel().tolist()), dtype=np.float64,
                       count=int(np.size(a)))
    return flat.reshape(np.shape(a))


#: Objectives whose ``predict`` output is the raw score (LightGBM's ConvertOutput is the identity).
_IDENTITY = {"regression", "regression_l1", "huber", "fair", "quantile", "mape"}


@dataclass(frozen=True)
class RawScores:
    """A booster's raw scores on the rows ``X`` (those of ``predict(X, raw_score=True)``) and its objective line."""

    X: Any
    raw: np.ndarray
    objective: str

    def output(self) -> np.ndarray | None:
        """Return ``predict(X)`` to the last bit, where LightGBM's output transform is repeated exactly (else None).

        The identity objectives; ``binary`` with ``sigmoid:1`` (the text writes the sigmoid with
        six digits); ``multiclass`` (softmax: the row's largest raw score subtracted, the
        exponentials summed in class order). Exponentials by :func:`_libm_exp`.
        """
        tokens = self.objective.split()
        name = tokens[0] if tokens else ""
        if name in _IDENTITY and "sqrt" not in tokens:
            return self.raw
        if name == "binary" and "sigmoid:1" in tokens and self.raw.ndim == 1:
            return 1.0 / (1.0 + _libm_exp(-self.raw))
        if name == "multiclass" and self.raw.ndim == 2:
            e = _libm_exp(self.raw - self.raw.max(axis=1, keepdims=True))
            total = np.zeros(e.shape[0])
            for j in range(e.shape[1]):
                total += e[:, j]
            return e / total[:, None]
        return None
