"""Shared test settings: in CI, end-to-end and browser tests must run, not skip."""

from __future__ import annotations

import os

import pytest

STRICT_MARKERS = ("slow", "browser")


def in_ci() -> bool:
    """Return True when running under CI (CI=true), where skips of real tests are failures."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Turn a skip of a slow or browser test into a failure under CI."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and in_ci() and any(item.get_closest_marker(m) for m in STRICT_MARKERS):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"CI requires this test to run, but it was skipped: {reason}"
