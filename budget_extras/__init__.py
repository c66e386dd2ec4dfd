"""budget_extras: prediction-cost tools for any LightGBM model.

The core (:mod:`budget_extras.core`): one tree-ensemble representation (:class:`TreeEnsemble`),
one cost model (:class:`FeatureCosts`), one exact cost accounting (:func:`cost_report`), export
back to LightGBM and lazy feature acquisition (:func:`predict_acquiring`). The methods, one
subpackage each, build on it: :class:`BudgetPrune` and :class:`FeatureDropRefit`
(:mod:`budget_extras.budgetprune`),
:class:`QWYC` (:mod:`budget_extras.qwyc`), :class:`AdaptGBRT` (:mod:`budget_extras.adapt`),
:class:`CSTC` (:mod:`budget_extras.cstc`) and :func:`train_to_budget`
(:mod:`budget_extras.cegb`). See docs/architecture.md.
"""

from __future__ import annotations

from .adapt import AdaptGBRT, AdaptSweepResult
from .budgetprune import BudgetPrune, FeatureDropRefit
from .cegb import BudgetTrainResult, train_to_budget
from .core import (
    AcquisitionResult,
    CostReport,
    FeatureCosts,
    MethodResult,
    ModelParseError,
    Status,
    TreeEnsemble,
    cost_report,
    features_used,
    fits_budget,
    make_budget_scorer,
    predict_acquiring,
)
from .cstc import CSTC
from .qwyc import QWYC, QWYCPrediction

__version__ = "0.1.0"

__all__ = [
    "CSTC",
    "QWYC",
    "AcquisitionResult",
    "AdaptGBRT",
    "AdaptSweepResult",
    "BudgetPrune",
    "BudgetTrainResult",
    "CostReport",
    "FeatureCosts",
    "FeatureDropRefit",
    "MethodResult",
    "ModelParseError",
    "QWYCPrediction",
    "Status",
    "TreeEnsemble",
    "cost_report",
    "features_used",
    "fits_budget",
    "make_budget_scorer",
    "predict_acquiring",
    "train_to_budget",
]
