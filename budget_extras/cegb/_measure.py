"""Per-row validation costs of a search candidate without building its :class:`TreeEnsemble`.

A row's cost (:func:`budget_extras.cost_report`'s accounting) needs, per tree, only which leaf
the row reaches and which features split on that leaf's path. LightGBM routes the rows
(``Booster.predict(X, pred_leaf=True)``, its C++ predictor); the paths come from the model
text's ``num_leaves``, ``split_feature``, ``left_child`` and ``right_child`` lines alone, read
in one pass, instead of the full checked parse of :meth:`TreeEnsemble.from_booster` (about ten
times slower, most of a candidate's measuring time on tables of 10k-30k rows). The per-row
arithmetic is :func:`~budget_extras.core._leaf_cost.row_costs_from_leaves`'s, on the same
tables, so the costs are equal to the last bit. A text the one-pass reader does not expect
(linear trees, a tree whose child links do not form a tree, a feature outside the cost model)
goes through the full parse, which accepts or refuses it as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import lightgbm as lgb
import numpy as np

from .._compat import param_aliases
from ..core._costs import FeatureCosts
from ..core._ensemble import TreeEnsemble
from ..core._leaf_cost import row_costs_from_leaves
from ..core._parse_trees import child_links_ok
from ..core._report import ancestor_feature_counts, bits_to_bool, model_coupled_cost, path_feature_bits

__all__ = ["LeafPaths", "leaf_paths", "model_row_costs", "predict"]

_CHUNK = 8192


@dataclass(frozen=True)
class LeafPaths:
    """What a row's leaf in each tree costs: the tables of ``row_costs_from_leaves``, per leaf.

    ``lut[t, leaf]``: the leaf's row in ``bits`` / ``path_cost`` (-1: no such leaf);
    ``bits``: the features on each leaf's path as a bitset (one zero row more); ``path_cost``:
    the split evaluation cost of each leaf's path; ``used``: the features some split uses.
    """

    lut: np.ndarray
    bits: np.ndarray
    path_cost: np.ndarray
    used: np.ndarray


def _int_lines(text: str, key: str) -> np.ndarray:
    """Return every ``key=`` line's integers of ``text``, concatenated in order."""
    head = "\n" + key + "="
    parts = []
    start = text.find(head)
    while start >= 0:
        end = text.find("\n", start + len(head))
        parts.append(text[start + len(head) : end if end >= 0 else len(text)])
        start = text.find(head, start + len(head))
    joined = " ".join(parts).split()
    return np.array(joined, dtype=np.int64) if joined else np.zeros(0, dtype=np.int64)


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
    n_trees = n_leaves.size
    if n_trees == 0 or n_trees != body.count("\nTree=") or (n_leaves < 1).any():
        return None
    feature, left, right = (_int_lines(body, k) for k in ("split_feature", "left_child", "right_child"))
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
    return LeafPaths(lut, path_feature_bits(P), path_cost, used)


def row_costs(paths: LeafPaths, leaves: Any, costs: FeatureCosts) -> np.ndarray:
    """Return each row's cost from its leaf in every tree (``row_costs_from_leaves``'s arithmetic).

    Raises
    ------
    ValueError
        If ``leaves`` does not have one column per tree or names a leaf the model lacks.
    """
    L = np.asarray(leaves)
    n_trees = paths.lut.shape[0]
    if L.ndim != 2 or L.shape[1] != n_trees:
        raise ValueError(f"The 'leaves' argument must have shape (n_rows, {n_trees}) (pred_leaf=True). Got {L.shape}.")
    if L.size and (L.min() < 0 or L.max() >= paths.lut.shape[1]):
        raise ValueError("The 'leaves' argument names a leaf the model does not have.")
    out = np.empty(L.shape[0], dtype=np.float64)
    cols = np.arange(n_trees)
    for a in range(0, L.shape[0], _CHUNK):
        nodes = paths.lut[cols, L[a : a + _CHUNK]]
        if (nodes < 0).any():
            raise ValueError("The 'leaves' argument names a leaf the model does not have.")
        words = np.bitwise_or.reduce(paths.bits[nodes], axis=1)
        used = bits_to_bool(words, costs.n_features)
        out[a : a + _CHUNK] = costs.row_cost(used) + paths.path_cost[nodes].sum(axis=1) + costs.tree * n_trees
    return out


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
    paths = leaf_paths(booster.model_to_string() if text is None else text, costs)
    if paths is None:
        ens = TreeEnsemble.from_booster(booster)
        return row_costs_from_leaves(ens, predict(booster, X, pred_leaf=True), costs), model_coupled_cost(ens, costs)[1]
    leaves = predict(booster, X, pred_leaf=True)
    return row_costs(paths, leaves, costs), float(np.asarray(costs.coupled)[paths.used].sum())
