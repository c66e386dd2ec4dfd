"""FeatureCosts: the one cost model every method uses.

The accounting rule (see ``docs/costs.md``): a row pays

* for every *acquisition unit* it needs, once: a unit is a feature group (all features of the
  group are acquired together at the group's cost) or a single ungrouped feature (at its
  ``lazy`` cost). A row needs a unit when any split on its evaluated paths uses one of the
  unit's features;
* ``split[f]`` for every split on feature ``f`` it evaluates and ``tree`` for every tree it
  evaluates (evaluation cost);

and the model pays ``coupled[f]`` once for every feature ``f`` its evaluated trees use.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ._params import is_integer
from ._representation import readonly_copy
from ._validation import (
    check_bool_matrix,
    check_finite_nonnegative,
    check_nonnegative_scalar,
    check_unique_items,
)

__all__ = ["FeatureCosts", "as_feature_costs"]

# The costs CSV format (shared with the fork's cegb_cost_file reader, cegb_costs.hpp)
_CSV_COLUMNS = frozenset({"feature", "cost", "lazy", "coupled", "split", "group", "group_cost", "tree"})
_CSV_BLANKS = " \f\n\r\t\v"  # what the fork's reader strips from a cell
_CSV_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_CSV_INDEX = re.compile(r"[0-9]{1,12}")


def _csv_cells(line: str) -> list[str]:
    """Return the comma-separated cells of a line, stripped (no quoting, as in the fork's reader)."""
    return [cell.strip(_CSV_BLANKS) for cell in line.split(",")]

def _csv_read_lines(where: str) -> list[str]:
    """Return the lines of the costs CSV ``where`` (UTF-8, a BOM skipped)."""
    if os.path.isdir(where):
        raise ValueError(f"The costs CSV {where!r} is a directory, not a file.")
    try:
        with open(where, encoding="utf-8-sig", newline="") as fh:
            text = fh.read()
    except OSError as exc:
        raise ValueError(
            f"The 'path' argument must name a readable CSV file. Got {where!r}: {exc.strerror or exc}."
        ) from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"The costs CSV {where!r} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc
    return text.split("\n")


def _csv_header(where: str, line: str) -> tuple[list[str], dict[str, int]]:
    """Return the header cells and each known column's position (``cost`` read as ``lazy``)."""
    header = _csv_cells(line)
    if not any(header):
        raise ValueError(f"The costs CSV {where!r} is empty; it needs a header row such as 'feature,cost'.")
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated:
        raise ValueError(f"The costs CSV {where!r} repeats the column {repeated[0]!r}.")
    if "cost" in header and "lazy" in header:
        raise ValueError(f"The costs CSV {where!r} has both 'cost' and 'lazy' columns; they are synonyms, give one.")
    unknown_cols = [h for h in header if h not in _CSV_COLUMNS]
    if unknown_cols:
        raise ValueError(
            f"The costs CSV {where!r} has the unknown column {unknown_cols[0]!r}; the columns are "
            "feature, cost (or lazy), coupled, split, group, group_cost and tree."
        )
    if "feature" not in header:
        raise ValueError(f"The costs CSV {where!r} must have a 'feature' column. Got columns {header!r}.")
    return header, {("lazy" if h == "cost" else h): j for j, h in enumerate(header)}


def _csv_rows(where: str, lines: list[str], header: list[str], col: dict[str, int]) -> list[tuple[str, list[str]]]:
    """Return ``(feature cell, cells)`` per non-blank data line."""
    rows: list[tuple[str, list[str]]] = []
    for line_no, line in enumerate(lines[1:], start=2):
        if not line.strip(_CSV_BLANKS):
            continue
        cells = _csv_cells(line)
        if len(cells) != len(header):
            raise ValueError(
                f"The costs CSV {where!r} line {line_no} has {len(cells)} cells; the header has {len(header)}."
            )
        if not cells[col["feature"]]:
            raise ValueError(f"The costs CSV {where!r} has an empty 'feature' value (line {line_no}).")
        rows.append((cells[col["feature"]], cells))
    return rows


def _csv_features(
    where: str, rows: list[tuple[str, list[str]]], feature_names: Sequence[str] | None
) -> tuple[list[str], list[str]]:
    """Return the model's feature names and the feature each row names (a 0-based index resolved)."""
    feats = [f for f, _ in rows]
    if feature_names is None:
        names = list(dict.fromkeys(feats))
    else:  # a 0-based index names a feature, as in the fork's reader
        names = list(feature_names)
        known = set(names)
        feats = [
            names[int(f)] if f not in known and _CSV_INDEX.fullmatch(f) and int(f) < len(names) else f for f in feats
        ]
    _feature_positions(feats, names, f"The costs CSV {where!r}")
    return names, feats


def _csv_number(where: str, cname: str, feat: str, cell: str) -> float | None:
    """Return a cost cell's value (None for an empty cell: 0, no group cost, no tree cost)."""
    if not cell:
        return None
    if not _CSV_NUMBER.fullmatch(cell):
        raise ValueError(f"The costs CSV {where!r} column {cname!r} must be numeric: feature {feat!r} has {cell!r}.")
    value = float(cell)
    if not math.isfinite(value) or value < 0:
        raise ValueError(
            f"The costs CSV {where!r} column {cname!r} must be a finite number >= 0: feature {feat!r} has {cell!r}."
        )
    return value


def _csv_values(
    where: str, header: list[str], col: dict[str, int], feats: list[str], rows: list[tuple[str, list[str]]]
) -> tuple[dict[str, dict[str, float]], dict[str, str | None], dict[Hashable, float], float]:
    """Return the per-feature costs by column, the group labels, the group costs and the tree cost."""
    values: dict[str, dict[str, float]] = {c: {} for c in ("lazy", "coupled", "split")}
    groups: dict[str, str | None] = {}
    group_cost: dict[Hashable, float] = {}
    trees: list[float] = []
    for feat, (_, cells) in zip(feats, rows, strict=True):
        for cname in ("lazy", "coupled", "split"):
            if cname in col:
                values[cname][feat] = _csv_number(where, header[col[cname]], feat, cells[col[cname]]) or 0.0
        label = cells[col["group"]] if "group" in col else ""
        groups[feat] = None if label in ("", "-1") else label
        gc = _csv_number(where, "group_cost", feat, cells[col["group_cost"]]) if "group_cost" in col else None
        if gc is not None and groups[feat] is not None:  # ignored on a feature in no group
            previous = group_cost.setdefault(label, gc)
            if previous != gc:
                raise ValueError(
                    f"The costs CSV {where!r} gives group {label!r} several group_cost values {[previous, gc]!r}."
                )
        tv = _csv_number(where, "tree", feat, cells[col["tree"]]) if "tree" in col else None
        if tv is not None and tv not in trees:
            trees.append(tv)
    if len(trees) > 1:
        raise ValueError(f"The costs CSV {where!r} column 'tree' must hold one value. Got {trees!r}.")
    return values, groups, group_cost, trees[0] if trees else 0.0


def _is_named(x: Any) -> bool:
    try:
        import pandas as pd

        if isinstance(x, pd.Series):
            return not pd.api.types.is_integer_dtype(x.index) or x.index.dtype == object
    except ImportError:  # pragma: no cover
        pass
    return isinstance(x, Mapping)


def _named_items(x: Any, *, name: str, what: str = "feature") -> dict[Any, Any]:
    """Return the ``key -> value`` pairs of a dict or Series, refusing a key given twice (no last-wins)."""
    return check_unique_items(x, name=name, what=what)


def _feature_positions(keys: Sequence[str], names: Sequence[str], where: str) -> list[int]:
    """Return the position in ``names`` of each feature that ``keys`` names: the one name check of every cost input.

    A feature named twice (a dict's ``1`` and ``"1"``, a Series' repeated index, a costs CSV's
    repeated line) or a name that is not a feature is an error starting with ``where``, so a
    dict, a Series and a costs CSV, from Python or the CLI, are refused in the same words.
    """
    seen: set[str] = set()
    for k in keys:
        if k in seen:
            raise ValueError(f"{where} gives feature {k!r} twice; give each feature once.")
        seen.add(k)
    index = {n: i for i, n in enumerate(names)}
    unknown = [k for k in keys if k not in index]
    if unknown:
        raise ValueError(
            f"{where} names unknown features {unknown[:5]!r}; known features are "
            f"{list(names)[:8]!r}{'...' if len(names) > 8 else ''}."
        )
    return [index[k] for k in keys]


def _named_vector(x: Any, *, name: str, names: Sequence[str], default: float, where: str) -> npt.NDArray[np.float64]:
    """Return the per-feature vector of a dict or Series keyed by feature name (features not listed: ``default``).

    Keys are compared as text (``1`` and ``"1"`` name the same feature).
    """
    pairs = list(x.items())
    out = np.full(len(names), default, dtype=np.float64)
    for i, (k, v) in zip(_feature_positions([str(k) for k, _ in pairs], names, where), pairs, strict=True):
        out[i] = check_nonnegative_scalar(v, name=f"{name}[{k!r}]")
    return out


def _per_feature(
    x: Any,
    *,
    name: str,
    n_features: int,
    names: Sequence[str] | None,
    default: float,
) -> npt.NDArray[np.float64]:
    """Per-feature float vector from None / scalar / array-like / dict or Series keyed by name."""
    if x is None:
        return np.full(n_features, default, dtype=np.float64)
    if _is_named(x):
        if names is None:
            raise ValueError(
                f"The {name!r} parameter is keyed by feature name, so 'feature_names' is required. "
                "Got feature_names=None."
            )
        return _named_vector(x, name=name, names=names, default=default, where=f"The {name!r} parameter")
    if np.ndim(x) == 0:
        return np.full(n_features, check_nonnegative_scalar(x, name=name), dtype=np.float64)
    return check_finite_nonnegative(x, name=name, length=n_features)


class FeatureCosts:
    """Prediction-cost model: feature acquisition (lazy, grouped), coupled and evaluation costs.

    Parameters
    ----------
    lazy : array-like of shape (n_features,), dict, pandas.Series or scalar, optional
        Acquisition cost of each feature, paid once per row the first time the row's paths
        need the feature. Dicts / Series are keyed by feature name (features not listed
        cost 0). Default 0.
    coupled : same forms as ``lazy``, optional
        One-time cost per model for each feature the model uses (CEGB's coupled penalty).
    groups : array-like of shape (n_features,) or dict, optional
        Group label of each feature (``None`` or -1: no group). One acquisition of a group
        pays for every feature in it (a lab panel, an exercise test, ...).
    group_cost : dict, optional
        Cost of each group, keyed by group label. Groups not listed cost the MAX of their
        members' ``lazy`` costs (one test yields all its measurements).
    split : float or same forms as ``lazy``, default 0.0
        Evaluation cost of one split, uniform or per feature of the split.
    tree : float, default 0.0
        Evaluation cost of one tree.
    feature_names : sequence of str, optional
        Feature names (required when any argument is keyed by name).
    n_features : int, optional
        Number of features (inferred from ``feature_names`` or ``lazy`` when omitted).

    Attributes
    ----------
    lazy, coupled, split : ndarray of float64, shape (n_features,)
    tree : float
    group : ndarray of int64, shape (n_features,)
        Index into ``group_labels`` of each feature's group, -1 if ungrouped.
    group_labels : tuple
        Group labels, in order of first appearance.
    group_cost : ndarray of float64, shape (n_groups,)
    unit : ndarray of int64, shape (n_features,)
        Acquisition unit of each feature (groups first, then one unit per ungrouped feature).
    unit_cost : ndarray of float64, shape (n_units,)
    feature_names : tuple of str or None
    n_features : int

    Examples
    --------
    >>> costs = FeatureCosts({"TSH": 22.78, "T3": 11.41}, feature_names=["TSH", "T3", "age"])
    >>> costs.row_cost([[True, False, True], [True, True, False]]).tolist()
    [22.78, 34.19]
    """

    def __init__(
        self,
        lazy: Any = None,
        *,
        coupled: Any = None,
        groups: Any = None,
        group_cost: Mapping[Hashable, float] | None = None,
        split: Any = 0.0,
        tree: float = 0.0,
        feature_names: Sequence[str] | None = None,
        n_features: int | None = None,
    ) -> None:
        names = None if feature_names is None else tuple(str(n) for n in feature_names)
        if names is not None and len(set(names)) != len(names):
            raise ValueError("The 'feature_names' parameter must not repeat a name.")
        n = self._infer_n_features(lazy, names, n_features)
        self.n_features = n
        self.feature_names = names
        self.lazy = readonly_copy(
            _per_feature(lazy, name="lazy", n_features=n, names=names, default=0.0), np.float64
        )
        self.coupled = readonly_copy(
            _per_feature(coupled, name="coupled", n_features=n, names=names, default=0.0), np.float64
        )
        self.split = readonly_copy(
            _per_feature(split, name="split", n_features=n, names=names, default=0.0), np.float64
        )
        self.tree = check_nonnegative_scalar(tree, name="tree")
        labels, group = self._groups_iv(groups, names, n)
        self.group_labels = tuple(labels)
        self.group = readonly_copy(group, np.int64)
        gcost = np.zeros(len(labels), dtype=np.float64)
        explicit = _named_items(group_cost, name="group_cost", what="group") if group_cost is not None else {}
        unknown = [g for g in explicit if g not in labels]
        if unknown:
            raise ValueError(
                f"The 'group_cost' parameter names unknown groups {unknown[:5]!r}; groups are {labels[:8]!r}."
            )
        for gi, lab in enumerate(labels):
            if lab in explicit:
                gcost[gi] = check_nonnegative_scalar(explicit[lab], name=f"group_cost[{lab!r}]")
            else:
                gcost[gi] = float(self.lazy[group == gi].max())
        self.group_cost = readonly_copy(gcost, np.float64)
        unit = np.where(group >= 0, group, 0)
        ungrouped = np.flatnonzero(group < 0)
        unit[ungrouped] = len(labels) + np.arange(ungrouped.size)
        self.unit = readonly_copy(unit, np.int64)
        self.unit_cost = readonly_copy(np.concatenate([gcost, self.lazy[ungrouped]]), np.float64)
        self._group_cost_arg = explicit

    @staticmethod
    def _infer_n_features(lazy: Any, names: tuple[str, ...] | None, n_features: int | None) -> int:
        candidates = []
        if names is not None:
            candidates.append(("feature_names", len(names)))
        if n_features is not None:
            if not is_integer(n_features) or n_features < 0:
                raise ValueError(f"The 'n_features' parameter must be an int >= 0. Got {n_features!r}.")
            candidates.append(("n_features", int(n_features)))
        if lazy is not None and not _is_named(lazy) and np.ndim(lazy) == 1:
            candidates.append(("lazy", len(lazy)))
        if not candidates and lazy is not None and _is_named(lazy):
            raise ValueError(
                "The 'lazy' parameter is keyed by feature name, so 'feature_names' is required. "
                "Got feature_names=None."
            )
        if not candidates:
            raise ValueError(
                "FeatureCosts needs the number of features: give 'lazy' as an array, 'feature_names' "
                "or 'n_features'."
            )
        sizes = {v for _, v in candidates}
        if len(sizes) > 1:
            desc = ", ".join(f"{k}: {v}" for k, v in candidates)
            raise ValueError(f"FeatureCosts got inconsistent numbers of features ({desc}).")
        return candidates[0][1]

    @staticmethod
    def _groups_iv(groups: Any, names: tuple[str, ...] | None, n: int) -> tuple[list[Hashable], np.ndarray]:
        group = np.full(n, -1, dtype=np.int64)
        labels: list[Hashable] = []
        if groups is None:
            return labels, group
        if _is_named(groups):
            if names is None:
                raise ValueError(
                    "The 'groups' parameter is keyed by feature name, so 'feature_names' is required."
                )
            pairs = list(groups.items())
            per = [None] * n
            for i, (_, v) in zip(_feature_positions([str(k) for k, _ in pairs], names, "The 'groups' parameter"),
                                 pairs, strict=True):
                per[i] = v
        else:
            per = list(groups)
            if len(per) != n:
                raise ValueError(f"The 'groups' parameter must have length {n}. Got length {len(per)}.")
        for i, g in enumerate(per):
            if (
                g is None
                or (isinstance(g, float) and np.isnan(g))
                or (isinstance(g, int | np.integer) and g == -1)
            ):
                continue
            if g == "":
                continue
            if g not in labels:
                labels.append(g)
            group[i] = labels.index(g)
        return labels, group

    def __repr__(self) -> str:
        return (
            f"FeatureCosts(n_features={self.n_features}, total_lazy={float(self.lazy.sum()):g}, "
            f"n_groups={len(self.group_labels)}, tree={self.tree:g})"
        )

    # ----------------------------------------------------------------- constructors

    @classmethod
    def uniform(cls, n_features: int, *, feature_names: Sequence[str] | None = None) -> FeatureCosts:
        """Every feature costs 1 to acquire.

        Parameters
        ----------
        n_features : int
            Number of features.
        feature_names : sequence of str, optional
            Feature names.

        Returns
        -------
        FeatureCosts
        """
        return cls(np.ones(int(n_features)), feature_names=feature_names)

    @classmethod
    def from_csv(
        cls, path: str | os.PathLike[str], *, feature_names: Sequence[str] | None = None
    ) -> FeatureCosts:
        """Read costs from a costs CSV: a header line, then one line per feature.

        The format is the fork's ``cegb_cost_file`` format (docs/cegb.md): both readers accept
        the same files and give them the same meaning. Columns, in any order, each at most once:

        * ``feature`` (required): a feature name or, when it names none of ``feature_names``, a
          0-based feature index;
        * ``lazy`` or its synonym ``cost``: acquisition cost;
        * ``coupled``: once-per-model cost;
        * ``split``: evaluation cost of a split on the feature;
        * ``group``: a text label; features with the same label are acquired together (empty or
          ``-1``: no group);
        * ``group_cost``: the cost of the feature's group (default: the max of the members'
          ``lazy`` costs); one value per group; ignored on a feature in no group;
        * ``tree``: the per-tree evaluation cost, one value.

        Cells are separated by commas and stripped of blanks; blank lines are skipped. An empty
        cost cell is 0; a cost is a decimal number (``3``, ``0.5``, ``1e-3``), finite and >= 0.
        A UTF-8 byte-order mark is ignored. Unknown or repeated columns (``cost`` with
        ``lazy`` included), a line with another number of cells than the header, an unknown or
        repeated feature are errors naming the file.

        Parameters
        ----------
        path : str or os.PathLike
            CSV file.
        feature_names : sequence of str, optional
            The model's feature names, in model order; every feature of the file must be
            one of them (features not in the file cost 0). Default: the file's order.

        Returns
        -------
        FeatureCosts
        """
        where = str(os.fspath(path))
        lines = _csv_read_lines(where)
        header, col = _csv_header(where, lines[0])
        rows = _csv_rows(where, lines, header, col)
        names, feats = _csv_features(where, rows, feature_names)
        values, groups, group_cost, tree = _csv_values(where, header, col, feats, rows)
        return cls(
            values["lazy"] if "lazy" in col else None,
            coupled=values["coupled"] if "coupled" in col else None,
            split=values["split"] if "split" in col else 0.0,
            groups=groups if "group" in col else None,
            group_cost=group_cost or None,
            tree=tree,
            feature_names=names,
        )

    def to_cegb_params(self, feature_names: Sequence[str] | None = None) -> dict[str, Any]:
        """Return the fork's per-feature CEGB parameters that train with these costs.

        ``lgb.train(params={"cegb_cost_file": costs, ...})`` uses them (the fork's
        ``cegb_cost_file`` takes a ``FeatureCosts``). A group's cost is given as the lazy cost of
        each of its members (the fork charges a group the max of its members' lazy costs), so an
        explicit ``group_cost`` trains as in a cost file. ``tree`` is an evaluation cost that
        training does not use: it has no parameter.

        Parameters
        ----------
        feature_names : sequence of str, optional
            The training data's feature names: the values are then lists in that order (these
            costs aligned to them). Default: dicts keyed by these costs' feature names (lists in
            column order when they have none).

        Returns
        -------
        dict
            ``cegb_penalty_feature_lazy``, ``cegb_penalty_feature_coupled``,
            ``cegb_penalty_feature_split`` and ``cegb_feature_group`` (integer group ids, -1 for
            no group).
        """
        costs = self if feature_names is None else self.aligned(feature_names)
        lazy = costs.unit_cost[costs.unit]  # each feature bought alone (its group's cost if grouped)
        per_feature = {
            "cegb_penalty_feature_lazy": lazy.tolist(),
            "cegb_penalty_feature_coupled": costs.coupled.tolist(),
            "cegb_penalty_feature_split": costs.split.tolist(),
            "cegb_feature_group": [int(g) for g in costs.group],
        }
        if feature_names is not None or costs.feature_names is None:
            return per_feature
        return {k: dict(zip(costs.feature_names, v, strict=True)) for k, v in per_feature.items()}

    def aligned(self, feature_names: Sequence[str]) -> FeatureCosts:
        """Return these costs reordered to ``feature_names`` (e.g. a model's feature order).

        Parameters
        ----------
        feature_names : sequence of str
            Target feature order; must contain exactly this object's feature names.

        Returns
        -------
        FeatureCosts
        """
        target = tuple(str(n) for n in feature_names)
        if self.feature_names is None:
            if len(target) != self.n_features:
                raise ValueError(
                    f"The costs have {self.n_features} features but the model has {len(target)}."
                )
            return FeatureCosts(
                self.lazy,
                coupled=self.coupled,
                groups=[self.group_labels[g] if g >= 0 else None for g in self.group],
                group_cost=self._group_cost_arg,
                split=self.split,
                tree=self.tree,
                feature_names=target,
            )
        if target == self.feature_names:
            return self
        missing = sorted(set(target) - set(self.feature_names))
        extra = sorted(set(self.feature_names) - set(target))
        if missing or extra:
            raise ValueError(
                f"The costs' feature names do not match the model's: missing {missing[:5]!r}, "
                f"unknown {extra[:5]!r}."
            )
        pos = [self.feature_names.index(n) for n in target]
        return FeatureCosts(
            self.lazy[pos],
            coupled=self.coupled[pos],
            groups=[self.group_labels[self.group[p]] if self.group[p] >= 0 else None for p in pos],
            group_cost=self._group_cost_arg,
            split=self.split[pos],
            tree=self.tree,
            feature_names=target,
        )

    # ----------------------------------------------------------------- accounting

    def unit_matrix(self) -> sp.csr_matrix:
        """Feature-to-acquisition-unit incidence, CSR int8 (n_features, n_units)."""
        n_units = self.unit_cost.size
        return sp.csr_matrix(
            (np.ones(self.n_features, dtype=np.int8), (np.arange(self.n_features), self.unit)),
            shape=(self.n_features, n_units),
        )

    def units_used(self, used: Any) -> Any:
        """Acquisition units a usage matrix needs: bool (n_rows, n_units), sparse if ``used`` is.

        Parameters
        ----------
        used : array-like or scipy.sparse matrix of bool, shape (n_rows, n_features)
            ``used[i, f]``: row ``i``'s evaluated paths split on feature ``f``.
        """
        m = check_bool_matrix(used, name="used", n_features=self.n_features)
        if sp.issparse(m):
            return (m.astype(np.int32) @ self.unit_matrix().astype(np.int32)) > 0
        singles, groups = self._unit_columns()
        out = np.empty((m.shape[0], self.unit_cost.size), dtype=bool)
        out[:, self.unit[singles]] = m[:, singles]
        for u, members in groups:
            out[:, u] = m[:, members].any(axis=1)
        return out

    def _unit_columns(self) -> tuple[npt.NDArray[np.int64], list[tuple[int, npt.NDArray[np.int64]]]]:
        """Return the ungrouped features and each group's (unit, member features), built once.

        A row needs an ungrouped feature's unit where it uses the feature, and a group's unit where
        it uses any member: column copies and ORs instead of a product with :meth:`unit_matrix`
        (a search costs hundreds of usage matrices; the integer product took most of their time).
        """
        cols = self.__dict__.get("_unit_cols")
        if cols is None:
            sizes = np.bincount(self.unit, minlength=self.unit_cost.size)
            singles = np.flatnonzero(sizes[self.unit] == 1)
            groups = [(int(u), np.flatnonzero(self.unit == u)) for u in np.flatnonzero(sizes > 1)]
            cols = (singles, groups)
            self.__dict__["_unit_cols"] = cols
        return cols

    def row_cost(self, used: Any) -> npt.NDArray[np.float64]:
        """Acquisition cost of each row: THE accounting rule, with groups.

        Parameters
        ----------
        used : array-like or scipy.sparse matrix of bool, shape (n_rows, n_features)
            ``used[i, f]``: row ``i``'s evaluated paths split on feature ``f``.

        Returns
        -------
        ndarray of float64, shape (n_rows,)
            Sum of the costs of the acquisition units (groups / single features) needed.
        """
        units = self.units_used(used)
        if sp.issparse(units):
            return np.asarray(units.astype(np.float64) @ self.unit_cost).ravel()
        return units.astype(np.float64) @ self.unit_cost

    def acquired_features(self, used: Any) -> Any:
        """Features a row holds after acquiring what it used: its groups' other members included.

        Parameters
        ----------
        used : array-like or scipy.sparse matrix of bool, shape (n_rows, n_features)

        Returns
        -------
        same kind as ``used``, bool, shape (n_rows, n_features)
        """
        units = self.units_used(used)
        back = self.unit_matrix().T.astype(np.int32)
        if sp.issparse(units):
            return sp.csr_matrix((units.astype(np.int32) @ back) > 0)
        return (units.astype(np.int32) @ back.toarray()) > 0


def as_feature_costs(
    costs: Any,
    *,
    n_features: int,
    feature_names: Sequence[str] | None = None,
    owner: str | None = None,
    name: str = "costs",
) -> FeatureCosts:
    """Return ``costs`` as a :class:`FeatureCosts` for a model or data of ``n_features`` features.

    The one cost input of ``budget_extras``: every method, ``cost_report`` and
    ``train_to_budget`` accept costs through this function (docs/costs.md).

    Parameters
    ----------
    costs : FeatureCosts, array-like, dict, pandas.Series, str, os.PathLike or None
        ``None``: every feature costs 1. A list or array: one acquisition (lazy) cost per
        feature, in model order. A dict or Series keyed by feature name: acquisition costs
        (features not listed cost 0; an unknown name is an error). A str or path: a costs CSV
        read by :meth:`FeatureCosts.from_csv`. A ``FeatureCosts``: used as it is, aligned to
        ``feature_names`` when both have names.
    n_features : int
        Number of features of the model (or of the data).
    feature_names : sequence of str, optional
        The model's (or the data's) feature names, in order.
    owner : str, optional
        Function or class named in error messages ("The 'costs' argument of BudgetPrune ...").
    name : str, default "costs"
        Argument name in error messages.

    Returns
    -------
    FeatureCosts
        With ``n_features`` features (and ``feature_names`` when given).

    Raises
    ------
    TypeError
        If ``costs`` is of another type.
    ValueError
        If ``costs`` does not fit the features (count, names, negative or non-finite values).
    """
    what = f"The {name!r} argument" + (f" of {owner}" if owner else "")
    names = None if feature_names is None else tuple(str(f) for f in feature_names)
    if costs is None:
        return FeatureCosts.uniform(n_features, feature_names=names)
    if isinstance(costs, str | os.PathLike):
        where = str(os.fspath(costs))
        if os.path.isdir(where):
            raise ValueError(f"{what} must be the path of a costs CSV file. Got {where[:200]!r}, which is a directory.")
        if not os.path.isfile(where):
            raise ValueError(
                f"{what} is a string, so it must be the path of a costs CSV. Got {where[:200]!r}, "
                "which is not a file (it must name a readable CSV file)."
            )
        costs = FeatureCosts.from_csv(where, feature_names=names)
    elif isinstance(costs, FeatureCosts):
        pass
    elif _is_named(costs):
        if names is None:
            raise ValueError(
                f"{what} is keyed by feature name, but the data have no feature names. "
                f"Pass a DataFrame, or a list of {n_features} costs in column order."
            )
        costs = FeatureCosts(_named_vector(costs, name=name, names=names, default=0.0, where=what), feature_names=names)
    elif isinstance(costs, Sequence | np.ndarray) or hasattr(costs, "__array__"):
        arr = np.asarray(costs)
        if arr.ndim != 1 or arr.shape[0] != n_features:
            raise ValueError(
                f"{what} must hold one cost per feature ({n_features}). Got shape {arr.shape}."
            )
        costs = FeatureCosts(check_finite_nonnegative(arr, name=name), feature_names=names)
    else:
        raise TypeError(
            f"{what} must be a FeatureCosts, a list or array (one cost per feature), a dict or "
            f"pandas.Series keyed by feature name, or the path of a costs CSV. Got {type(costs).__name__}."
        )
    if names is not None and costs.feature_names is not None and costs.feature_names != names:
        costs = costs.aligned(names)
    if costs.n_features != n_features:
        raise ValueError(f"{what} describes {costs.n_features} features; the model has {n_features}.")
    return costs
