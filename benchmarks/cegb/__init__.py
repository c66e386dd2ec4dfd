"""Benchmarks of the fork's cost-efficient gradient boosting: accuracy vs test cost, training speed, distributed."""
