"""Benchmarks of QWYC early exit: trees evaluated, calibration, native execution, exit scores."""
