"""Benchmarks of the core cost accounting (cost_report): speed and memory."""
