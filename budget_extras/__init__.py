"""budget_extras: prediction-cost tools for any LightGBM model."""

# --- budgetprune (begin) ---
from ._budgetprune import BudgetPrune
from ._budgetprune_problem import PruneProblem, build_problem
from ._budgetprune_solver import PruneResult, lp_highs, solve_primal_dual

_BUDGETPRUNE_ALL = ["BudgetPrune", "PruneProblem", "PruneResult", "build_problem", "lp_highs", "solve_primal_dual"]
# --- budgetprune (end) ---

__all__ = [*_BUDGETPRUNE_ALL]
