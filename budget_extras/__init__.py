"""budget_extras: prediction-cost tools for any LightGBM model.

One tree-ensemble representation (:class:`TreeEnsemble`), one cost model, one exact cost
accounting, export back to LightGBM, and lazy feature acquisition.
"""

from ._acquire import AcquisitionResult, predict_acquiring
from ._costs import FeatureCosts

# --- CSTC (branch cstc) ---
from ._cstc import CSTC, CSTCCostReport, CSTCResult
from ._ensemble import TreeEnsemble
from ._parse import ModelParseError
from ._report import CostReport, cost_report, features_used

# --- end CSTC ---

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
    # --- CSTC (branch cstc) ---
    "CSTC",
    "CSTCCostReport",
    "CSTCResult",
    # --- end CSTC ---
]
# --- end core ---

# --- budgetprune (begin) ---
from ._budgetprune import BudgetPrune
from ._budgetprune_problem import PruneProblem, build_problem
from ._budgetprune_solver import PruneResult, lp_highs, solve_primal_dual

__all__ += ["BudgetPrune", "PruneProblem", "PruneResult", "build_problem", "lp_highs", "solve_primal_dual"]
# --- budgetprune (end) ---

# --- QWYC (qwyc branch) ---
from ._qwyc import QWYC, QWYCPrediction
from ._qwyc_format import QWYCPlan, read_qwyc_plan, write_qwyc_plan

__all__ += ["QWYC", "QWYCPlan", "QWYCPrediction", "read_qwyc_plan", "write_qwyc_plan"]
# --- end QWYC ---
