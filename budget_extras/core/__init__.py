"""The core every method builds on.

One tree-ensemble representation (:class:`TreeEnsemble`, parsed from LightGBM model text),
one cost model (:class:`FeatureCosts`), one exact cost accounting (:func:`cost_report`),
export back to LightGBM model text, and lazy feature acquisition (:func:`predict_acquiring`).
Nothing here imports a method: dependencies point from the methods to the core.
"""

from ._acquire import AcquisitionResult, predict_acquiring
from ._budget_scorer import BudgetScorer, make_budget_scorer
from ._builder import ModelParseError
from ._costs import FeatureCosts, as_feature_costs
from ._ensemble import TreeEnsemble
from ._report import CostReport, cost_report, features_used
from ._status import MethodResult, Status, fits_budget

__all__ = [
    "AcquisitionResult",
    "BudgetScorer",
    "CostReport",
    "FeatureCosts",
    "MethodResult",
    "ModelParseError",
    "Status",
    "TreeEnsemble",
    "as_feature_costs",
    "cost_report",
    "features_used",
    "fits_budget",
    "make_budget_scorer",
    "predict_acquiring",
]
