"""budget_extras: prediction-cost tools for any LightGBM model.

One tree-ensemble representation (:class:`TreeEnsemble`), one cost model, one exact cost
accounting, export back to LightGBM, and lazy feature acquisition.
"""

from ._acquire import AcquisitionResult, predict_acquiring
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

# --- QWYC (qwyc branch) ---
from ._qwyc import QWYC, QWYCPrediction
from ._qwyc_format import QWYCPlan, read_qwyc_plan, write_qwyc_plan

__all__ += ["QWYC", "QWYCPlan", "QWYCPrediction", "read_qwyc_plan", "write_qwyc_plan"]
# --- end QWYC ---
