"""Synthetic-2 of Nan & Saligrama (2017), as reconstructed for the Adapt-GBRT tests.

Four equally likely clusters in two unit-cost features ``x1, x2``:

* A, around ``(-3, 0)``, label 0, and B, around ``(-1, 0)``, label 1: ``x1`` alone separates them;
* C and D, two parallel diagonal stripes ``x2 = x1 - 2 +/- offset`` for ``x1`` uniform in
  ``[1, 3]``, labels 0 and 1: they have the same ``x1`` distribution and only both features
  together separate them.

A gate on ``x1`` can send the easy half (A, B) to an ``x1``-only model and the hard half to the
full model, so the best adaptive system has average cost ``0.5 * 1 + 0.5 * 2 = 1.5`` at full
accuracy. The L1 baseline (L1 selection, then f1 and gate on the selected features) does not get
there: with ``x2`` alone nothing is separable at full accuracy, and with ``x1`` alone its f1 is a
logistic regression fit to *all* rows, whose threshold lies between the easy and the hard half
and so misclassifies B; a linear gate can then send only A to f1, for ``0.25 * 1 + 0.75 * 2 =
1.75``. Adapt-GBRT learns the gate and f1 jointly and finds the 1.5 system.
"""

from __future__ import annotations

import numpy as np

__all__ = ["make_four_clusters", "make_synthetic2"]


def _place(
    k: np.ndarray, rng: np.random.Generator, *, offset: float, noise: float, spread: float
) -> tuple[np.ndarray, np.ndarray]:
    """Lay out rows of clusters ``k`` (0, 1 easy blobs; 2, 3 hard stripes): ``X`` (n, 2), ``y`` = k % 2."""
    n = k.size
    X = np.zeros((n, 2))
    y = (k % 2).astype(int)
    X[k == 0] = (-3.0, 0.0)
    X[k == 1] = (-1.0, 0.0)
    easy = k < 2
    X[easy] += spread * rng.normal(size=(int(easy.sum()), 2))
    hard = ~easy
    x1 = rng.uniform(1.0, 3.0, int(hard.sum()))
    X[hard, 0] = x1
    X[hard, 1] = x1 - 2.0 + np.where(k[hard] == 2, offset, -offset) + noise * rng.normal(size=x1.size)
    return X, y


def make_synthetic2(
    n: int, *, rng: np.random.Generator, offset: float = 0.4, noise: float = 0.03, spread: float = 0.15
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` rows of Synthetic-2: ``X`` float64 ``(n, 2)`` and ``y`` int ``(n,)`` in {0, 1}."""
    k = rng.integers(0, 4, n)
    return _place(k, rng, offset=offset, noise=noise, spread=spread)


def make_four_clusters(
    n: int,
    *,
    rng: np.random.Generator,
    weights: tuple[float, float, float, float] = (0.25, 0.25, 0.25, 0.25),
    offset: float = 0.4,
    noise: float = 0.03,
    spread: float = 0.15,
) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic-2 with cluster shares ``weights`` (A, B, C, D); see :func:`make_synthetic2`.

    With feature costs ``c1, c2`` the cheapest fully accurate system gates on ``x1``, answers A
    and B with an ``x1``-only model and sends C and D to the full model: mean cost
    ``c1 + (w_C + w_D) * c2`` (``f0`` alone costs ``c1 + c2``).

    Parameters
    ----------
    n : int
        Rows to draw.
    rng : numpy.random.Generator
        Random source.
    weights : tuple of 4 float
        Relative shares of the clusters A, B (easy) and C, D (hard).
    offset, noise, spread : float
        Half-distance of the stripes C and D, their noise, and the spread of A and B.

    Returns
    -------
    X : ndarray of float64, shape (n, 2)
    y : ndarray of int, shape (n,)
    """
    w = np.asarray(weights, dtype=np.float64)
    k = rng.choice(4, size=n, p=w / w.sum())
    return _place(k, rng, offset=offset, noise=noise, spread=spread)
