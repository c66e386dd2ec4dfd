"""Benchmarks of the fork and of budget_extras, one folder per area (index: benchmarks/README.md).

Run a script as a module from the repository root, e.g. ``python -m benchmarks.qwyc.qwyc --help``.
"""
