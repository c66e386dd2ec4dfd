"""budget_extras: prediction-cost tools for any LightGBM model.

One tree-ensemble representation (:class:`TreeEnsemble`), one cost model, one exact cost
accounting, export back to LightGBM, and lazy feature acquisition.
"""

from ._ensemble import TreeEnsemble
from ._parse import ModelParseError

# --- CSTC (branch cstc) ---
from ._cstc import CSTC, CSTCCostReport, CSTCResult

# --- end CSTC ---

__version__ = "0.1.0"

# --- core (branch core) ---
__all__ = [
    "ModelParseError",
    "TreeEnsemble",
    # --- CSTC (branch cstc) ---
    "CSTC",
    "CSTCCostReport",
    "CSTCResult",
    # --- end CSTC ---
]
# --- end core ---
