"""Benchmark and corpus scripts for flake8-tensorcopy (not part of the package).

Nothing in here is imported by the package or its tests.  See README.md.
"""
