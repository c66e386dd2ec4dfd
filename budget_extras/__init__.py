"""budget_extras: prediction-cost tools for any LightGBM model."""

# --- QWYC (qwyc branch) ---------------------------------------------------------
from ._qwyc import QWYC, QWYCPrediction
from ._qwyc_format import QWYCPlan, read_qwyc_plan, write_qwyc_plan

__all__ = ["QWYC", "QWYCPlan", "QWYCPrediction", "read_qwyc_plan", "write_qwyc_plan"]
# --- end QWYC -------------------------------------------------------------------
