"""``Booster.dump_model()`` dict -> flat pre-order node arrays.

Anything this module does not know how to represent exactly is refused with an error naming
the tree, the node and the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ._builder import _MISSING_NAMES, ModelParseError, _Builder

__all__ = ["parse_dump"]

def _feature_info_text(info: Any) -> str:
    if isinstance(info, str):
        return info
    if not isinstance(info, Mapping):
        return "none"
    values = info.get("values") or []
    if values:
        return ":".join(str(int(v)) for v in values)
    lo, hi = info.get("min_value"), info.get("max_value")
    if lo is None or hi is None:
        return "none"
    return f"[{float(lo)!r}:{float(hi)!r}]"


def _need(d: Mapping[str, Any], key: str, tree: int, where: str) -> Any:
    if key not in d:
        raise ModelParseError(f"Ill-formed LightGBM dump: tree {tree}: {where}: need {key!r}.")
    return d[key]


def _dump_size(root: Any) -> int:
    """Return the number of distinct node dicts reachable from ``root`` (each counted once).

    A tree of ``n`` nodes has ``n`` distinct node dicts; a dump whose child links revisit a dict
    (a cycle, a dict that contains itself, a shared child) makes the layout walk reach more
    nodes than this, so it bounds that walk for a tree that states no ``num_leaves``.
    """
    seen: set[int] = set()
    stack = [root]
    while stack:
        ref = stack.pop()
        if not isinstance(ref, Mapping) or id(ref) in seen:
            continue
        seen.add(id(ref))
        if "leaf_value" not in ref:
            stack.extend(ref.get(k) for k in ("left_child", "right_child"))
    return max(len(seen), 1)


def _add_dump_tree(builder: _Builder, info: Mapping[str, Any], tree: int) -> None:
    root = _need(info, "tree_structure", tree, "tree_info")
    shrinkage = float(info.get("shrinkage", 1.0))

    def children(ref: Mapping[str, Any]) -> tuple[Any, Any] | None:
        if "leaf_value" in ref:
            return None
        return (
            _need(ref, "left_child", tree, f"node {ref.get('split_index')}"),
            _need(ref, "right_child", tree, f"node {ref.get('split_index')}"),
        )

    def fill(ref: Mapping[str, Any], depth: int) -> None:
        if not isinstance(ref, Mapping):
            raise ModelParseError(f"Ill-formed LightGBM dump: tree {tree}: a node is not a dict.")
        if "leaf_value" in ref:
            if "leaf_coeff" in ref or "leaf_features" in ref:
                raise ModelParseError(
                    f"Unsupported LightGBM model: tree {tree} is a linear tree (leaf_coeff in the dump). "
                    "budget_extras represents constant-leaf trees only."
                )
            weight = ref.get("leaf_weight")
            builder.add_leaf(
                float(ref["leaf_value"]),
                int(ref.get("leaf_count", 0) or 0),
                float("nan") if weight is None else float(weight),
                int(ref.get("leaf_index", 0)),
            )
            return
        where = f"node {ref.get('split_index')}"
        dtype = _need(ref, "decision_type", tree, where)
        thr = _need(ref, "threshold", tree, where)
        cats: list[int] | None = None
        if dtype == "==":
            try:
                cats = [int(v) for v in str(thr).split("||") if v != ""]
            except ValueError as exc:
                raise ModelParseError(
                    f"Ill-formed LightGBM dump: tree {tree}: {where}: bad categorical threshold {thr!r}."
                ) from exc
            thr_f = float("nan")
        elif dtype == "<=":
            thr_f = float(thr)
        else:
            raise ModelParseError(
                f"Unsupported LightGBM dump: tree {tree}: {where}: "
                f"decision_type {dtype!r} (expected '<=' or '==')."
            )
        mt = ref.get("missing_type", "None")
        if mt not in _MISSING_NAMES:
            raise ModelParseError(f"Ill-formed LightGBM dump: tree {tree}: {where}: missing_type {mt!r}.")
        weight = ref.get("internal_weight")
        builder.add_split(
            feature=int(_need(ref, "split_feature", tree, where)),
            threshold=thr_f,
            cats=cats,
            default_left=bool(ref.get("default_left", False)),
            missing_type=_MISSING_NAMES[mt],
            value=float(ref.get("internal_value", float("nan"))),
            count=int(ref.get("internal_count", 0) or 0),
            weight=float("nan") if weight is None else float(weight),
            gain=float(ref.get("split_gain", float("nan"))),
        )

    n_leaves = info.get("num_leaves")
    if isinstance(n_leaves, int) and not isinstance(n_leaves, bool) and n_leaves >= 1:
        max_nodes = 2 * n_leaves - 1
    else:  # no count to check against: bound the walk by the dump's own size (a dict may contain itself)
        max_nodes = _dump_size(root)
    builder.add_tree(root, children, fill, shrinkage, max_nodes=max_nodes, tree=tree)


def parse_dump(dump: Mapping[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Parse the dict of ``Booster.dump_model()``; same outputs as :func:`parse_model_string`.

    Parameters
    ----------
    dump : mapping
        The dict of ``Booster.dump_model()``.
    """
    if not isinstance(dump, Mapping):
        raise TypeError(f"The dump must be a dict (Booster.dump_model()). Got {type(dump).__name__}.")
    for key in ("num_class", "max_feature_idx", "tree_info"):
        if key not in dump:
            raise ModelParseError(f"Ill-formed LightGBM dump: need {key!r}.")
    num_class = int(dump["num_class"])
    max_feature_idx = int(dump["max_feature_idx"])
    n_features = max_feature_idx + 1
    names = list(dump.get("feature_names") or [f"Column_{i}" for i in range(n_features)])
    if len(names) != n_features:
        raise ModelParseError(
            f"Ill-formed LightGBM dump: {len(names)} feature_names for max_feature_idx={max_feature_idx}."
        )
    raw_infos = dump.get("feature_infos") or {}
    infos = [
        _feature_info_text(raw_infos.get(n)) if isinstance(raw_infos, Mapping) else "none" for n in names
    ]
    builder = _Builder()
    for pos, info in enumerate(dump["tree_info"]):
        _add_dump_tree(builder, info, pos)
    meta: dict[str, Any] = {
        "version": str(dump.get("version", "v4")),
        "num_class": num_class,
        "num_tree_per_iteration": int(dump.get("num_tree_per_iteration", num_class)),
        "max_feature_idx": max_feature_idx,
        "objective": str(dump.get("objective", "") or ""),
        "average_output": bool(dump.get("average_output", False)),
        "feature_names": tuple(str(n) for n in names),
        "feature_infos": tuple(infos),
        "pandas_categorical": dump.get("pandas_categorical"),
        "parameters": {},  # dump_model() has no parameters section
    }
    return builder.arrays(), meta
