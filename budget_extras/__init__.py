"""budget_extras: prediction-cost tools for any LightGBM model."""

# --- adapt (Adapt-GBRT) exports: begin ---
from ._adapt import AdaptGBRT, AdaptSweepResult
from ._adapt_linear import AdaptLin, L1GateBaseline

_ADAPT_ALL = ["AdaptGBRT", "AdaptLin", "AdaptSweepResult", "L1GateBaseline"]
# --- adapt (Adapt-GBRT) exports: end ---

__all__ = ["AdaptGBRT", "AdaptLin", "AdaptSweepResult", "L1GateBaseline"]
