"""budget_extras: prediction-cost tools for any LightGBM model.

The core (:mod:`budget_extras.core`): one tree-ensemble representation (:class:`TreeEnsemble`),
one cost model (:class:`FeatureCosts`), one exact cost accounting (:func:`cost_report`), export
back to LightGBM and lazy feature acquisition (:func:`predict_acquiring`). The methods, one
subpackage each, build on it: :class:`BudgetPrune` (:mod:`budget_extras.budgetprune`),
:class:`QWYC` (:mod:`budget_extras.qwyc`), :class:`AdaptGBRT` (:mod:`budget_extras.adapt`),
:class:`CSTC` (:mod:`budget_extras.cstc`) and :func:`train_to_budget`
(:mod:`budget_extras.cegb`). See docs/architecture.md.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from .adapt import AdaptGBRT, AdaptSweepResult
from .budgetprune import BudgetPrune
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
    "MethodResult",
    "ModelParseError",
    "QWYCPrediction",
    "Status",
    "TreeEnsemble",
    "cost_report",
    "features_used",
    "fits_budget",
    "predict_acquiring",
    "train_to_budget",
]

#: Names that lived at the top level before the subpackages; still importable, with a FutureWarning.
_MOVED = {
    "AdaptLin": "adapt",
    "L1GateBaseline": "adapt",
    "CSTCCostReport": "cstc",
    "CSTCResult": "cstc",
    "PruneProblem": "budgetprune",
    "PruneResult": "budgetprune",
    "build_problem": "budgetprune",
    "lp_highs": "budgetprune",
    "solve_primal_dual": "budgetprune",
    "QWYCPlan": "qwyc",
    "read_qwyc_plan": "qwyc",
    "write_qwyc_plan": "qwyc",
}


def __getattr__(name: str) -> Any:
    sub = _MOVED.get(name)
    if sub is None:
        raise AttributeError(f"module 'budget_extras' has no attribute {name!r}")
    warnings.warn(
        f"budget_extras.{name} moved to budget_extras.{sub}.{name}; the top-level name will be removed "
        "in the next release.",
        FutureWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(f"budget_extras.{sub}"), name)
