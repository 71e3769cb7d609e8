"""Runs: one raw/<run-id>/ directory read safely -> a table of its measurements, their CPU, histograms and header captures, and its problems."""
