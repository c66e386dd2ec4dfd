"""TreeEnsemble: the public face of the representation, with prediction and export as methods.

The representation itself (arrays, validation, constructors, :meth:`~EnsembleArrays.replace`)
is :class:`~budget_extras.core._representation.EnsembleArrays`; prediction (``_predict``) and
export (``_export``) are functions over it that never import this module. This class sits on
top of all three and adds them as methods, so the import graph of ``core`` has no cycle.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from . import _export, _predict
from ._representation import EnsembleArrays

__all__ = ["TreeEnsemble"]


def _rebuild(kwargs: dict[str, Any]) -> TreeEnsemble:
    """Unpickle a TreeEnsemble."""
    return TreeEnsemble(**kwargs)


class TreeEnsemble(EnsembleArrays):
    """An immutable LightGBM tree ensemble stored as flat numpy arrays.

    Nodes of all trees are concatenated, node ``i`` at index ``i`` of every per-node array,
    each tree in pre-order; every array is read-only and methods that modify return a new
    ensemble. ``docs/representation.md`` describes every array and attribute (dtype, shape,
    meaning of element ``i``) and the input path; that page is the one full description.

    Build one with :meth:`from_booster`, :meth:`from_model_file`, :meth:`from_model_string`
    or :meth:`from_dump`. The keyword constructor and :meth:`replace` are for code that builds
    modified ensembles; they validate the structure.

    The prediction methods are thin shells over the functions of
    ``budget_extras.core._predict`` (which take the converted input of :meth:`check_X`), the
    modification and export methods over ``budget_extras.core._export``.

    Parameters
    ----------
    **arrays
        The keyword arguments of :class:`~budget_extras.core._representation.EnsembleArrays`
        (the arrays and metadata of ``docs/representation.md``).
    """

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuild through the validating constructor: arrays come back read-only
        return (_rebuild, (self._fields(),))

    # ------------------------------------------------------------------ prediction

    def apply(self, X: Any) -> npt.NDArray[np.int64]:
        """Global node index of the leaf each row reaches in each tree.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Data (NaN and +-inf allowed; pandas categorical columns are recoded like LightGBM).

        Returns
        -------
        ndarray of int64, shape (n_rows, n_trees)
        """
        return _predict.apply(self, self.check_X(X))

    def apply_leaf_index(self, X: Any) -> npt.NDArray[np.int32]:
        """LightGBM's leaf ids per row and tree (equal to ``Booster.predict(pred_leaf=True)``).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Data, as for :meth:`apply`.

        Returns
        -------
        ndarray of int32, shape (n_rows, n_trees)
        """
        return self.leaf_index[self.apply(X)]

    def tree_outputs(self, X: Any) -> npt.NDArray[np.float64]:
        """Output of each tree for each row (before averaging for random forests).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Data, as for :meth:`apply`.

        Returns
        -------
        ndarray of float64, shape (n_rows, n_trees)
        """
        return _predict.tree_outputs(self, self.check_X(X))

    def predict_raw(self, X: Any, *, average: bool = False) -> npt.NDArray[np.float64]:
        """Raw score, equal to ``Booster.predict(X, raw_score=True)``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Data, as for :meth:`apply`.
        average : bool, default False
            LightGBM's raw score of a random forest (``average_output``) is the SUM of the
            tree outputs; ``average=True`` divides it by the number of iterations (what
            LightGBM does before its output transformation). No effect on other models.

        Returns
        -------
        ndarray of float64, shape (n_rows,) or (n_rows, num_tree_per_iteration)
        """
        return _predict.predict_raw(self, self.check_X(X), average=average)

    def staged_predict_raw(self, X: Any, *, average: bool = False) -> Iterator[npt.NDArray[np.float64]]:
        """Yield the raw score after each iteration 1, 2, ..., ``n_trees // num_tree_per_iteration``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Data, as for :meth:`apply`.
        average : bool, default False
            Random forests: divide by the number of iterations so far (see :meth:`predict_raw`).

        Yields
        ------
        ndarray of float64, shape (n_rows,) or (n_rows, num_tree_per_iteration)
        """
        return _predict.staged_predict_raw(self, self.check_X(X), average=average)

    def decision_path(self, X: Any) -> sp.csr_matrix:
        """Nodes each row visits (all trees).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_rows, n_features)
            Data, as for :meth:`apply`.

        Returns
        -------
        scipy.sparse.csr_matrix of bool, shape (n_rows, n_nodes)
        """
        return _predict.decision_path(self, self.check_X(X))

    # ------------------------------------------------------------------ modification / export

    def collapse(self, nodes: Any) -> TreeEnsemble:
        """Return a new ensemble with each listed internal node turned into a leaf.

        Parameters
        ----------
        nodes : array-like of int, or bool mask of shape (n_nodes,)
            Global node indices. The new leaf's value is the node's internal value.

        Returns
        -------
        TreeEnsemble
        """
        return _export.collapse(self, nodes)

    def select_trees(self, indices: Any) -> TreeEnsemble:
        """Return a new ensemble with the trees ``indices`` in that order (keep / drop / reorder).

        Parameters
        ----------
        indices : array-like of int, or bool mask of shape (n_trees,)
            Trees to keep, in the new order.

        Returns
        -------
        TreeEnsemble
        """
        return _export.select_trees(self, indices)

    def to_model_string(self) -> str:
        """LightGBM model text that upstream LightGBM and the fork load (``Booster(model_str=...)``).

        Returns
        -------
        str
        """
        return _export.to_model_string(self)

    def save_model(self, path: str | os.PathLike[str]) -> None:
        """Write the LightGBM model text to ``path``.

        Parameters
        ----------
        path : str or os.PathLike
            Where to write the model text.
        """
        _export.save_model(self, path)
