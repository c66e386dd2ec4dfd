"""QWYC, "Quit When You Can" (Wang, Gupta and You, 2018): evaluate trees in an optimized order and stop early.

:class:`QWYC` is the estimator; a fitted plan is stored in LightGBM model text
(:func:`write_qwyc_plan`, :func:`read_qwyc_plan`), where the fork's predictor runs it natively.
"""

from ._estimator import QWYC, QWYCPrediction, QWYCResult
from ._format import QWYCPlan, read_qwyc_plan, write_qwyc_plan

__all__ = ["QWYC", "QWYCPlan", "QWYCPrediction", "QWYCResult", "read_qwyc_plan", "write_qwyc_plan"]
