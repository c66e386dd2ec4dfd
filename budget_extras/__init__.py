"""budget_extras: prediction-cost tools for any LightGBM model."""

# --- CSTC (branch cstc) -------------------------------------------------------------
from ._cstc import CSTC, CSTCCostReport, CSTCResult

# --- end CSTC ------------------------------------------------------------------------

__all__ = [
    # CSTC
    "CSTC",
    "CSTCCostReport",
    "CSTCResult",
]
