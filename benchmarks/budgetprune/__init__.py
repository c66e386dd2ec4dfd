"""Benchmarks of BudgetPrune and of post-hoc pruning of boosted models (FeatureDropRefit)."""
