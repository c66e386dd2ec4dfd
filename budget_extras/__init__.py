"""budget_extras: prediction-cost tools for any LightGBM model.

One tree-ensemble representation (:class:`TreeEnsemble`), one cost model
(:class:`FeatureCosts`), one exact cost accounting (:func:`cost_report`), export back to
LightGBM, lazy feature acquisition (:func:`predict_acquiring`), and the budgeted-prediction
methods built on them: :class:`BudgetPrune`, :class:`QWYC`, :class:`AdaptGBRT` and :class:`CSTC`.
"""

from ._acquire import AcquisitionResult, predict_acquiring
from ._adapt import AdaptGBRT, AdaptSweepResult
from ._adapt_linear import AdaptLin, L1GateBaseline
from ._budgetprune import BudgetPrune
from ._budgetprune_problem import PruneProblem, build_problem
from ._budgetprune_solver import PruneResult, lp_highs, solve_primal_dual
from ._costs import FeatureCosts
from ._cstc import CSTC, CSTCCostReport, CSTCResult
from ._ensemble import TreeEnsemble
from ._parse import ModelParseError
from ._qwyc import QWYC, QWYCPrediction
from ._qwyc_format import QWYCPlan, read_qwyc_plan, write_qwyc_plan
from ._report import CostReport, cost_report, features_used
from .cegb import BudgetTrainResult, train_to_budget

__version__ = "0.1.0"

__all__ = [
    "CSTC",
    "QWYC",
    "AcquisitionResult",
    "AdaptGBRT",
    "AdaptLin",
    "AdaptSweepResult",
    "BudgetPrune",
    "BudgetTrainResult",
    "CSTCCostReport",
    "CSTCResult",
    "CostReport",
    "FeatureCosts",
    "L1GateBaseline",
    "ModelParseError",
    "PruneProblem",
    "PruneResult",
    "QWYCPlan",
    "QWYCPrediction",
    "TreeEnsemble",
    "build_problem",
    "cost_report",
    "features_used",
    "lp_highs",
    "predict_acquiring",
    "read_qwyc_plan",
    "solve_primal_dual",
    "train_to_budget",
    "write_qwyc_plan",
]
