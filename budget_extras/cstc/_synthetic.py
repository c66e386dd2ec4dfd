"""The synthetic quadrant data of Xu et al. (2013), section 5.1, for the CSTC tests and benchmark.

Four quadrants of ``[-1, 1]^2``, Gaussian labels (variance 1) with quadrant-specific means
(-6, -2, 2, 6); two cheap features ``sign(x)``, ``sign(z)`` (cost 1 each) and four expensive
ones (cost 10 each), the exact label in their own quadrant and noise elsewhere. The optimal
cost-sensitive tree reads the two signs, then only its quadrant's expert: cost 12 per row.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["QUADRANT_COSTS", "make_quadrants"]

#: Acquisition cost of the six features: sign(x), sign(z), then the four quadrant experts.
QUADRANT_COSTS = np.array([1.0, 1.0, 10.0, 10.0, 10.0, 10.0])


def make_quadrants(
    n: int, rng: np.random.Generator
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Draw ``n`` rows: ``X`` float64 ``(n, 6)``, labels ``y`` float64 ``(n,)``, quadrant ``q`` int ``(n,)``."""
    x, z = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    sx, sz = np.where(x > 0, 1.0, -1.0), np.where(z > 0, 1.0, -1.0)
    q = (2 * (sx > 0) + (sz > 0)).astype(np.int64)
    y = rng.normal(np.array([-6.0, -2.0, 2.0, 6.0])[q], 1.0)
    expensive = 3.0 * rng.normal(size=(n, 4))
    expensive[np.arange(n), q] = y
    return np.column_stack([sx, sz, expensive]), y, q
