"""Runs: one raw/<run-id>/ directory read safely -> a table of its measurements, their CPU, histograms and header captures, and its problems.

Its manifest.json is read once, into runs/record.py's frozen dataclasses (RunRecord): every later stage reads the run's record by attribute, never the manifest as a dict.
"""
