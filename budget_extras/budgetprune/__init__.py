"""BudgetPrune (Nan, Wang and Saligrama, 2016): prune a tree ensemble to a feature-cost budget.

:class:`BudgetPrune` is the estimator; :class:`FeatureDropRefit` makes a boosted model cheaper by
dropping features and refitting its leaf values. The pruning program (:func:`build_problem`), its exact
primal-dual solver (:func:`solve_primal_dual`), the HiGHS LP used as an oracle
(:func:`lp_highs`) and the baselines (``budget_extras.budgetprune._baselines``) are importable
from here for people who work with the program directly.
"""

from ._estimator import BudgetPrune
from ._feature_drop import FeatureDropRefit, FeatureDropResult
from ._problem import PruneProblem, build_problem
from ._solver import PruneResult, lp_highs, solve_primal_dual

__all__ = [
    "BudgetPrune",
    "FeatureDropRefit",
    "FeatureDropResult",
    "PruneProblem",
    "PruneResult",
    "build_problem",
    "lp_highs",
    "solve_primal_dual",
]
