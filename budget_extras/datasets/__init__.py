"""Small real datasets with real feature costs, embedded in the package.

* :func:`load_thyroid`: UCI thyroid ("ann" version), 21 features, 3 classes, Turney's test costs.
* :func:`load_heart`: UCI heart disease (Cleveland), 13 features, binary, Turney's test costs.

Both are CC BY 4.0 (UCI); see ``budget_extras/datasets/data/SOURCE.txt`` for attribution.
"""

from ._loaders import load_heart, load_thyroid

__all__ = ["load_heart", "load_thyroid"]
