"""Training to a prediction-cost budget with CEGB and feature-subset candidates."""

from ._result import BudgetTrainResult, Candidate
from ._train_to_budget import is_fork, train_to_budget

__all__ = ["BudgetTrainResult", "Candidate", "is_fork", "train_to_budget"]
