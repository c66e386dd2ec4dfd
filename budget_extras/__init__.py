"""budget_extras: prediction-cost tools for any LightGBM model."""

__all__: list[str] = []

# --- budgetprune (begin) ---
from ._budgetprune import BudgetPrune
from ._budgetprune_problem import PruneProblem, build_problem
from ._budgetprune_solver import PruneResult, lp_highs, solve_primal_dual

__all__ += ["BudgetPrune", "PruneProblem", "PruneResult", "build_problem", "lp_highs", "solve_primal_dual"]
# --- budgetprune (end) ---
