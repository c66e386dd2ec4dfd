"""Benchmarks of train_to_budget and the accuracy-cost frontier harness (helpers: _adapters, _data)."""
