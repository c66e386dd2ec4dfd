"""Benchmarks of CSTC against CEGB and a cost-penalized booster."""
