"""The CSTC model file: one JSON document, format ``budget_extras.CSTC/1`` (docs/cstc.md, "Model file").

:func:`dump_model` turns a fitted CSTC into the document's text; :func:`parse_model` reads a
document back and validates every field (types, shapes, value ranges, node indices and the
tree's shape, the embedded LightGBM model through the core's parser) before anything is
built from it, so that a file from elsewhere is either read exactly or refused with a
``ValueError`` naming the field; :func:`restore_fitted` gives an estimator built from the
file's parameters its fitted state.

The tree of classifiers is stored in heap order: the children of node ``k`` are ``2k+1`` and
``2k+2``. Only the active nodes are listed; a file therefore cannot describe a cycle or a node
with two parents, and every listed node must have its parent listed.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core._costs import FeatureCosts
from ..core._ensemble import TreeEnsemble
from ..core._params import is_integer
from ..core._status import Status
from ._features import feature_map
from ._objective import _Structure
from ._results import CSTCResult

__all__: list[str] = []

FORMAT_NAME = "budget_extras.CSTC"
FORMAT_VERSION = 1
FORMAT = f"{FORMAT_NAME}/{FORMAT_VERSION}"

_TOP_KEYS = {
    "format", "params", "n_features", "feature_names", "pandas_categorical", "classes", "classes_dtype",
    "costs", "weak_learners", "nodes", "result",
}
_COST_KEYS = {"feature_names", "lazy", "coupled", "split", "tree", "group", "group_labels", "group_cost"}
_NODE_KEYS = {"id", "intercept", "threshold", "trees", "weights"}
_RESULT_KEYS = {"status", "success", "message", "fun", "nit", "history", "n_pruned", "lam", "path", "scoring"}
_PATH_KEYS = {"lam", "cost", "score", "constant"}
_CLASS_DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
    "str", "object",
)
# the hyperparameters a file may carry (booster and costs are stored as their own fields)
_PARAM_TYPES: dict[str, str] = {
    "depth": "int", "lam": "real", "rho": "real", "task": "str", "sharpness": "real", "risk": "str",
    "n_weak": "int", "weak_max_depth": "int", "weak_learning_rate": "real", "weak_params": "dict?",
    "n_cycles": "int", "n_alternations": "int", "max_iter": "int", "tol": "real", "eps": "real",
    "prune": "bool", "fine_tune": "bool", "random_state": "int?", "budget": "real?", "scoring": "str?",
    "lams": "reals?",
}


# ----------------------------------------------------------------------------- writing


def _plain(v: Any) -> Any:
    """``v`` with numpy arrays and scalars turned into Python lists and scalars."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _finite(v: Any) -> bool:
    """Return whether ``v`` is an int or float that is a finite double (huge integers are not)."""
    if not isinstance(v, int | float):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def _finite_or_none(v: Any) -> float | None:
    f = float(v)
    return f if math.isfinite(f) else None


def _json_scalar(v: Any, what: str) -> Any:
    v = _plain(v)
    if isinstance(v, bool | str) or _finite(v):
        return v
    raise TypeError(
        f"CSTC.save cannot store {what} {v!r} ({type(v).__name__}): a model file holds strings, integers, "
        "finite floats and booleans only."
    )


def _costs_document(costs: Any, n_features: int) -> dict[str, Any]:
    if not isinstance(costs, FeatureCosts):
        raise TypeError(
            "CSTC.save needs the model's costs as a FeatureCosts (costs given as None, a list, dict, pandas "
            f"Series, CSV path or FeatureCosts). Got a custom cost object of type {type(costs).__name__}: "
            "fit with its costs as a FeatureCosts, or pass costs= to CSTC.load."
        )
    labels = [_json_scalar(lab, "the group label") for lab in costs.group_labels]
    return {
        "feature_names": None if costs.feature_names is None else list(costs.feature_names),
        "lazy": costs.lazy.tolist(),
        "coupled": costs.coupled.tolist(),
        "split": costs.split.tolist(),
        "tree": float(costs.tree),
        "group": costs.group.tolist(),
        "group_labels": labels,
        "group_cost": costs.group_cost.tolist(),
    }


def _model_text(booster: Any, ensemble: TreeEnsemble) -> str:
    """Return the LightGBM model text that defines ``phi`` (the booster's own text where it has one)."""
    if hasattr(booster, "booster_") and not hasattr(booster, "model_to_string"):
        booster = booster.booster_
    if hasattr(booster, "model_to_string"):
        return str(booster.model_to_string(num_iteration=-1))
    return ensemble.to_model_string()


def dump_model(est: Any) -> str:
    """Return the model file text of a fitted CSTC ``est``.

    Raises
    ------
    TypeError
        If the costs are a custom object (not a ``FeatureCosts``) or the classes or the
        pandas categories are not strings, integers, finite floats or booleans.
    """
    params = {}
    for k, v in est.get_params(deep=False).items():
        if k in _PARAM_TYPES and _jsonable(_plain(v)):
            params[k] = _plain(v)
    classes = None
    classes_dtype = None
    if est.task == "binary":
        c = np.asarray(est.classes_)
        classes = [_json_scalar(x, "the class") for x in c.tolist()]
        kind = c.dtype.kind
        classes_dtype = c.dtype.name if kind in "biuf" else "str" if kind == "U" else "object"
    cats = est._pandas_categorical
    if cats is not None:
        cats = [[_json_scalar(x, "the pandas category") for x in col] for col in cats]
    nodes = []
    for k in np.flatnonzero(est.active_):
        trees = np.flatnonzero(est.coef_[k] != 0)
        nodes.append({
            "id": int(k),
            "intercept": float(est.intercept_[k]),
            "threshold": float(est.threshold_[k]),
            "trees": trees.tolist(),
            "weights": est.coef_[k, trees].tolist(),
        })
    r = est.result_
    result = {
        "status": int(r.status), "success": bool(r.success), "message": str(r.message),
        "fun": _finite_or_none(r.fun), "nit": int(r.nit), "history": [_finite_or_none(h) for h in r.history],
        "n_pruned": int(r.n_pruned), "lam": None if r.lam is None else _finite_or_none(r.lam),
        "path": [{k: _finite_or_none(p[k]) for k in ("lam", "cost", "score", "constant")} for p in r.path],
        "scoring": None if r.scoring is None else str(r.scoring),
    }
    doc = {
        "format": FORMAT,
        "params": params,
        "n_features": int(est.n_features_in_),
        "feature_names": None if est._feature_names is None else [str(f) for f in est._feature_names],
        "pandas_categorical": cats,
        "classes": classes,
        "classes_dtype": classes_dtype,
        "costs": _costs_document(est._cm.source, int(est.n_features_in_)),
        "weak_learners": _model_text(est.booster_, est._wl.ensemble),
        "nodes": nodes,
        "result": result,
    }
    return json.dumps(doc, allow_nan=False, indent=1)


# ----------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class ParsedModel:
    """The validated content of a model file (private)."""

    params: dict[str, Any]
    n_features: int
    feature_names: tuple[str, ...] | None
    pandas_categorical: list[list[Any]] | None
    classes: npt.NDArray[Any] | None
    costs: FeatureCosts
    model_text: str
    ensemble: TreeEnsemble
    coef: npt.NDArray[np.float64]
    intercept: npt.NDArray[np.float64]
    threshold: npt.NDArray[np.float64]
    active: npt.NDArray[np.bool_]
    result: dict[str, Any]


class _Reader:
    """Field checks that name the file and the field in every message."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, field: str, expected: str, got: Any) -> ValueError:
        shown = repr(got)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return ValueError(f"{self.source}: field {field!r} must be {expected}. Got {shown} instead.")

    def obj(self, v: Any, field: str, keys: set[str], required: set[str]) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise self.fail(field, "a JSON object", _kind(v))
        unknown = sorted(set(v) - keys)
        if unknown:
            raise ValueError(f"{self.source}: field {field!r} has unknown keys {unknown[:5]!r}.")
        missing = sorted(required - set(v))
        if missing:
            raise ValueError(f"{self.source}: field {field!r} lacks the keys {missing!r}.")
        return v

    def integer(self, v: Any, field: str, lo: int, hi: int | None = None) -> int:
        ok = isinstance(v, int) and not isinstance(v, bool) and v >= lo and (hi is None or v < hi)
        if not ok:
            rng = f">= {lo}" if hi is None else f"in [{lo}, {hi})"
            raise self.fail(field, f"an integer {rng}", v)
        return int(v)

    def number(self, v: Any, field: str, *, nullable: bool = False) -> float:
        if v is None and nullable:
            return math.nan
        if isinstance(v, bool) or not _finite(v):
            raise self.fail(field, "a finite number" + (" or null" if nullable else ""), v)
        return float(v)

    def array(self, v: Any, field: str, length: int | None = None) -> list[Any]:
        if not isinstance(v, list):
            raise self.fail(field, "a JSON array", _kind(v))
        if length is not None and len(v) != length:
            raise self.fail(field, f"an array of {length} entries", f"{len(v)} entries")
        return v

    def numbers(self, v: Any, field: str, length: int | None = None) -> npt.NDArray[np.float64]:
        items = self.array(v, field, length)
        return np.array([self.number(x, f"{field}[{i}]") for i, x in enumerate(items)], dtype=np.float64)

    def string(self, v: Any, field: str) -> str:
        if not isinstance(v, str):
            raise self.fail(field, "a string", v)
        return v

    def scalar(self, v: Any, field: str) -> Any:
        if isinstance(v, bool | str) or _finite(v):
            return v
        raise self.fail(field, "a string, an integer, a finite number or a boolean", v)


def _kind(v: Any) -> Any:
    """Return what to show of a value of the wrong type: containers by their type, scalars as they are."""
    return f"a JSON {'object' if isinstance(v, dict) else 'array'}" if isinstance(v, dict | list) else v


def _params(r: _Reader, v: Any) -> dict[str, Any]:
    doc = r.obj(v, "params", set(_PARAM_TYPES), {"depth", "task"})
    out: dict[str, Any] = {}
    for k, x in doc.items():
        kind, field = _PARAM_TYPES[k], f"params.{k}"
        if kind.endswith("?") and x is None:
            out[k] = None
            continue
        kind = kind.rstrip("?")
        if kind == "int":
            out[k] = r.integer(x, field, -(2**63))
        elif kind == "real":
            out[k] = r.number(x, field)
        elif kind == "reals":
            out[k] = r.numbers(x, field).tolist()
        elif kind == "bool":
            if not isinstance(x, bool):
                raise r.fail(field, "true or false", x)
            out[k] = x
        elif kind == "dict":
            out[k] = r.obj(x, field, set(x) if isinstance(x, dict) else set(), set())
        else:
            out[k] = r.string(x, field)
    return out


def _classes(r: _Reader, values: Any, dtype: Any, task: str) -> npt.NDArray[Any] | None:
    if task == "regression":
        if values is not None or dtype is not None:
            raise r.fail("classes", "null for params.task='regression'", values if values is not None else dtype)
        return None
    items = [r.scalar(x, f"classes[{i}]") for i, x in enumerate(r.array(values, "classes", 2))]
    if items[0] == items[1]:
        raise r.fail("classes", "two different classes", items)
    if dtype not in _CLASS_DTYPES:
        raise r.fail("classes_dtype", f"one of {list(_CLASS_DTYPES)}", dtype)
    if dtype == "object":
        out = np.empty(2, dtype=object)
        out[:] = items
        return out
    want: Any = {"bool": bool, "str": str}.get(dtype, int if dtype[0] in "iu" else (int, float))
    for i, x in enumerate(items):
        if not isinstance(x, want) or (want is not bool and isinstance(x, bool)):
            raise r.fail(f"classes[{i}]", f"a value of dtype {dtype}", x)
    try:
        with np.errstate(over="raise"):
            arr = np.array(items, dtype=dtype)
    except (OverflowError, ValueError, FloatingPointError) as exc:
        raise r.fail("classes", f"values that fit dtype {dtype}", items) from exc
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise r.fail("classes", f"values that fit dtype {dtype}", items)
    if arr[0] == arr[1]:
        raise r.fail("classes", "two different classes", items)
    return arr


def _feature_names(r: _Reader, v: Any, field: str, n: int) -> tuple[str, ...] | None:
    if v is None:
        return None
    names = tuple(r.string(x, f"{field}[{i}]") for i, x in enumerate(r.array(v, field, n)))
    if len(set(names)) != n:
        raise r.fail(field, "distinct names", list(names))
    return names


def _pandas_categorical(r: _Reader, v: Any) -> list[list[Any]] | None:
    if v is None:
        return None
    return [
        [r.scalar(x, f"pandas_categorical[{i}][{j}]") for j, x in enumerate(r.array(col, f"pandas_categorical[{i}]"))]
        for i, col in enumerate(r.array(v, "pandas_categorical"))
    ]


def _costs(r: _Reader, v: Any, n: int) -> FeatureCosts:
    doc = r.obj(v, "costs", _COST_KEYS, _COST_KEYS)
    names = _feature_names(r, doc["feature_names"], "costs.feature_names", n)
    lazy = r.numbers(doc["lazy"], "costs.lazy", n)
    coupled = r.numbers(doc["coupled"], "costs.coupled", n)
    split = r.numbers(doc["split"], "costs.split", n)
    tree = r.number(doc["tree"], "costs.tree")
    labels = [r.scalar(x, f"costs.group_labels[{i}]") for i, x in enumerate(r.array(doc["group_labels"],
                                                                                       "costs.group_labels"))]
    for i, lab in enumerate(labels):
        if not (isinstance(lab, str) or is_integer(lab)) or lab in ("", -1):
            raise r.fail(f"costs.group_labels[{i}]", "a non-empty string or an integer other than -1", lab)
    if len(set(labels)) != len(labels):
        raise r.fail("costs.group_labels", "distinct labels", labels)
    n_groups = len(labels)
    group = [
        r.integer(x, f"costs.group[{i}]", -1, n_groups) for i, x in enumerate(r.array(doc["group"], "costs.group", n))
    ]
    empty = sorted(set(range(n_groups)) - set(group))
    if empty:
        raise r.fail("costs.group", f"a group index for every feature, each group used (group {empty[0]} is not)",
                     group)
    gcost = r.numbers(doc["group_cost"], "costs.group_cost", n_groups)
    try:
        return FeatureCosts(
            lazy,
            coupled=coupled,
            groups=[labels[g] if g >= 0 else None for g in group],
            group_cost={lab: float(c) for lab, c in zip(labels, gcost, strict=True)},
            split=split,
            tree=tree,
            feature_names=names,
            n_features=n,
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{r.source}: field 'costs': {exc}") from None


def _ensemble(r: _Reader, v: Any, n_features: int) -> TreeEnsemble:
    text = r.string(v, "weak_learners")
    try:
        ens = TreeEnsemble.from_model_string(text)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{r.source}: field 'weak_learners' is not a LightGBM model the core can read: {exc}"
        ) from None
    if ens.n_features != n_features:
        raise r.fail("weak_learners", f"a LightGBM model of n_features={n_features} features",
                     f"a model of {ens.n_features} features")
    if ens.n_trees < 1:
        raise r.fail("weak_learners", "a LightGBM model with at least one tree", "a model with no tree")
    return ens


def _nodes(
    r: _Reader, v: Any, depth: int, n_trees: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    K = 2**depth - 1
    items = r.array(v, "nodes")
    if not 1 <= len(items) <= K:
        raise r.fail("nodes", f"an array of 1 to {K} nodes (params.depth={depth})", f"{len(items)} nodes")
    coef = np.zeros((K, n_trees))
    intercept = np.zeros(K)
    threshold = np.zeros(K)
    active = np.zeros(K, dtype=bool)
    for i, node in enumerate(items):
        f = f"nodes[{i}]"
        node = r.obj(node, f, _NODE_KEYS, _NODE_KEYS)
        k = r.integer(node["id"], f"{f}.id", 0, K)
        if active[k]:
            raise r.fail(f"{f}.id", "a node id not listed before", k)
        active[k] = True
        intercept[k] = r.number(node["intercept"], f"{f}.intercept")
        threshold[k] = r.number(node["threshold"], f"{f}.threshold")
        listed = r.array(node["trees"], f"{f}.trees")
        trees = [r.integer(t, f"{f}.trees[{j}]", 0, n_trees) for j, t in enumerate(listed)]
        if len(set(trees)) != len(trees):
            raise r.fail(f"{f}.trees", "distinct tree indices", trees)
        coef[k, trees] = r.numbers(node["weights"], f"{f}.weights", len(trees))
    if not active[0]:
        raise r.fail("nodes", "an array that lists the root (id 0)", sorted(np.flatnonzero(active).tolist()))
    listed = (np.flatnonzero(active[1:]) + 1).tolist()
    for k in listed:
        if not active[(k - 1) // 2]:
            raise r.fail("nodes", f"a tree: node {k} is listed, its parent {(k - 1) // 2} is not",
                         sorted(np.flatnonzero(active).tolist()))
    for k in listed:
        sibling = k + 1 if k % 2 else k - 1
        if not active[sibling]:
            raise r.fail("nodes", f"a tree of nodes with 0 or 2 children: node {k} is listed, its sibling "
                         f"{sibling} is not", sorted(np.flatnonzero(active).tolist()))
    return coef, intercept, threshold, active


def _result(r: _Reader, v: Any) -> dict[str, Any]:
    doc = r.obj(v, "result", _RESULT_KEYS, _RESULT_KEYS)
    success = doc["success"]
    if not isinstance(success, bool):
        raise r.fail("result.success", "true or false", success)
    path = []
    for i, p in enumerate(r.array(doc["path"], "result.path")):
        p = r.obj(p, f"result.path[{i}]", _PATH_KEYS, _PATH_KEYS)
        path.append({k: r.number(p[k], f"result.path[{i}].{k}", nullable=True) for k in ("lam", "cost", "score",
                                                                                        "constant")})
    status = Status(r.integer(doc["status"], "result.status", 0, len(Status)))
    if success != (status == Status.SUCCESS):
        raise r.fail("result.success", f"{str(status == Status.SUCCESS).lower()} (status {int(status)})", success)
    return {
        "status": status,
        "message": r.string(doc["message"], "result.message"),
        "fun": r.number(doc["fun"], "result.fun", nullable=True),
        "nit": r.integer(doc["nit"], "result.nit", 0),
        "history": tuple(r.number(h, f"result.history[{i}]", nullable=True)
                         for i, h in enumerate(r.array(doc["history"], "result.history"))),
        "n_pruned": r.integer(doc["n_pruned"], "result.n_pruned", 0),
        "lam": None if doc["lam"] is None else r.number(doc["lam"], "result.lam"),
        "path": tuple(path),
        "scoring": None if doc["scoring"] is None else r.string(doc["scoring"], "result.scoring"),
    }


def read_text(path: str | os.PathLike[str]) -> str:
    """Return the file's text; ``ValueError`` for a directory or content that is not UTF-8 text."""
    p = os.fspath(path)
    if os.path.isdir(p):
        raise ValueError(f"{p!r}: is a directory, not a CSTC model file.")
    with open(p, "rb") as fh:
        raw = fh.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{p!r}: not a CSTC model file (not UTF-8 text: {exc.reason} at byte {exc.start}).") from None


def parse_model(text: str, source: str) -> ParsedModel:
    """Validate a model file's text; ``source`` starts every error message (the file's name).

    Raises
    ------
    ValueError
        If the text is not a version-1 CSTC model file or any field is missing, of the wrong
        type or shape, not finite, out of range or inconsistent with another field.
    """
    r = _Reader(source)
    try:
        doc = json.loads(text)
    except ValueError as exc:  # JSONDecodeError, or an integer of more digits than Python converts
        raise ValueError(f"{source}: not a CSTC model file (invalid JSON: {exc}).") from None
    except RecursionError:
        raise ValueError(f"{source}: not a CSTC model file (JSON nested too deeply).") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: not a CSTC model file (a JSON object is expected, got {_kind(doc)!r}).")
    fmt = doc.get("format")
    if not isinstance(fmt, str) or not fmt.startswith(FORMAT_NAME + "/"):
        raise ValueError(f"{source}: not a CSTC model file: field 'format' is {fmt!r}, expected {FORMAT!r}.")
    if fmt != FORMAT:
        raise ValueError(
            f"{source}: field 'format' is {fmt!r}: this release reads format version {FORMAT_VERSION} "
            f"({FORMAT!r}) only."
        )
    doc = r.obj(doc, "(top level)", _TOP_KEYS, _TOP_KEYS)
    params = _params(r, doc["params"])
    depth = params["depth"]
    if not 1 <= depth <= 8:
        raise r.fail("params.depth", "an integer in [1, 8]", depth)
    if params["task"] not in ("regression", "binary"):
        raise r.fail("params.task", "'regression' or 'binary'", params["task"])
    n = r.integer(doc["n_features"], "n_features", 1)
    names = _feature_names(r, doc["feature_names"], "feature_names", n)
    cats = _pandas_categorical(r, doc["pandas_categorical"])
    classes = _classes(r, doc["classes"], doc["classes_dtype"], params["task"])
    costs = _costs(r, doc["costs"], n)
    if names is not None and costs.feature_names is not None and costs.feature_names != names:
        raise r.fail("costs.feature_names", "null or the model's feature_names, in their order",
                     list(costs.feature_names))
    ens = _ensemble(r, doc["weak_learners"], n)
    coef, intercept, threshold, active = _nodes(r, doc["nodes"], depth, ens.n_trees)
    result = _result(r, doc["result"])
    return ParsedModel(params, n, names, cats, classes, costs, doc["weak_learners"], ens, coef, intercept,
                       threshold, active, result)


def restore_fitted(est: Any, pm: ParsedModel, source: str, costs: Any = None) -> None:
    """Set the fitted attributes of ``est`` (a CSTC built from ``pm.params``) from a parsed model file.

    ``costs``: the costs to report with instead of the saved ones (None: the saved costs).

    Raises
    ------
    ValueError
        If LightGBM cannot load the weak learners (the message names ``source`` and the field).
    """
    import lightgbm as lgb

    try:
        est.booster_ = lgb.Booster(model_str=pm.model_text)
    except lgb.basic.LightGBMError as exc:
        raise ValueError(f"{source}: field 'weak_learners': LightGBM cannot load it: {exc}") from None
    est.costs = pm.costs if costs is None else costs
    est._feature_names = pm.feature_names
    est._pandas_categorical = pm.pandas_categorical
    est.n_features_in_ = pm.n_features
    est.feature_names_in_ = None if pm.feature_names is None else list(pm.feature_names)
    if pm.classes is not None:
        est.classes_ = pm.classes
    est._wl, est._cm, est._leaf_eval, est.tree_costs_ = feature_map(
        pm.ensemble, pm.n_features, est.costs, est.feature_names_in_
    )
    est.tree_features_ = est._wl.tree_features.copy()
    est.coef_, est.intercept_, est.threshold_ = pm.coef, pm.intercept, pm.threshold
    est.active_ = pm.active
    est.is_leaf_ = _Structure(int(est.depth), est.active_).is_leaf
    est.result_ = CSTCResult(**pm.result)
