"""budget_extras: prediction-cost tools for any LightGBM model.

One tree-ensemble representation (:class:`TreeEnsemble`), one cost model, one exact cost
accounting, export back to LightGBM, and lazy feature acquisition.
"""

from ._acquire import AcquisitionResult, predict_acquiring
from ._adapt import AdaptGBRT, AdaptSweepResult
from ._adapt_linear import AdaptLin, L1GateBaseline
from ._costs import FeatureCosts
from ._ensemble import TreeEnsemble
from ._parse import ModelParseError
from ._report import CostReport, cost_report, features_used

__version__ = "0.1.0"

# --- core (branch core) ---
__all__ = [
    "AcquisitionResult",
    "CostReport",
    "FeatureCosts",
    "ModelParseError",
    "TreeEnsemble",
    "cost_report",
    "features_used",
    "predict_acquiring",
]
# --- end core ---

# --- adapt (branch adapt) ---
__all__ += ["AdaptGBRT", "AdaptLin", "AdaptSweepResult", "L1GateBaseline"]
# --- end adapt ---
