"""CSTC, the cost-sensitive tree of classifiers (Xu, Kusner, Weinberger and Chen, 2013)."""

from ._estimator import CSTC, CSTCCostReport, CSTCResult

__all__ = ["CSTC", "CSTCCostReport", "CSTCResult"]
