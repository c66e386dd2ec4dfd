"""Benchmarks of Adapt-GBRT, ADAPT-LIN and the L1 gate baseline."""
