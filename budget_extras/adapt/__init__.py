"""Adapt-GBRT (Nan and Saligrama, 2017): a cheap gate and model in front of an expensive one.

:class:`AdaptGBRT` is the estimator; :class:`AdaptLin` (linear gate and model) and
:class:`L1GateBaseline` are the paper's baselines.
"""

from ._estimator import AdaptGBRT
from ._linear import AdaptLin, L1GateBaseline
from ._sweep import AdaptSweepResult

__all__ = ["AdaptGBRT", "AdaptLin", "AdaptSweepResult", "L1GateBaseline"]
