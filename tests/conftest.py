"""Shared test settings: in CI, end-to-end and browser tests (and modules skipped at import) must run, not skip."""

from __future__ import annotations

import os

import pytest

from properties import load_profile

STRICT_MARKERS = ("slow", "browser")


def in_ci() -> bool:
    """Return True when running under CI (CI=true), where skips of real tests are failures."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


load_profile()  # before any test module is imported: every @settings inherits derandomize from it


def pytest_collection_modifyitems(items):
    """Mark every Hypothesis test `property` (what ./run_tests.sh --explore runs)."""
    for item in items:
        if hasattr(getattr(item, "obj", None), "hypothesis"):
            item.add_marker(pytest.mark.property)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Turn a skip of a slow or browser test into a failure under CI."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and in_ci() and any(item.get_closest_marker(m) for m in STRICT_MARKERS):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"CI requires this test to run, but it was skipped: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Turn a whole module skipped at import (pytest.importorskip: playwright, pypdf) into a failure under CI."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and in_ci() and isinstance(collector, pytest.Module):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"CI requires this module's tests to run, but it was skipped: {reason}"


# --- Run directories assembled from real captured wrk outputs ----------------------------

import json  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
WRK = FIXTURES / "wrk"
CAPTURED = WRK / "captured"
ARTICLE = WRK / "article-2013"
RUNS = FIXTURES / "runs"


@pytest.fixture
def make_run(tmp_path):
    """Return a function that lays out a run directory: {name: source path, bytes or str}, optional manifest."""

    def make(files: dict, manifest: dict | str | None = None, name: str = "20261122T120000Z") -> Path:
        run = tmp_path / "raw" / name
        run.mkdir(parents=True)
        for file_name, content in files.items():
            target = run / file_name
            if isinstance(content, Path):
                shutil.copyfile(content, target)
            elif isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)
        if manifest is not None:
            text = manifest if isinstance(manifest, str) else json.dumps(manifest)
            (run / "manifest.json").write_text(text)
        return run

    return make


@pytest.fixture
def article_run(make_run):
    """Return a run directory holding the article's eight wrk 3.0.4 outputs, named as a user would, no manifest."""
    files = {}
    for path in sorted(ARTICLE.glob("*.txt")):
        stem = path.name.removesuffix(".txt")  # wrk-3.0.4__gomaxprocs-1__go-http
        _, gomaxprocs, setup = stem.split("__")
        files[f"{setup}.{gomaxprocs}.run-1.wrk.txt"] = path
    return make_run(files, name="article-2013")


# --- Real servers: tools and free loopback ports ---------------------------------------------


import random  # noqa: E402
import socket  # noqa: E402


def nginx_path() -> str | None:
    """Return nginx's path (Debian puts it in /usr/sbin, often not on a user's PATH)."""
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)


def missing_tools(*names: str) -> list[str]:
    """Return the names of the commands that are not installed."""
    return [name for name in names if not (nginx_path() if name == "nginx" else shutil.which(name))]


def port_is_free(port: int) -> bool:
    """Return True when nothing listens on 127.0.0.1:port."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port_block(names: tuple[str, ...], low: int, high: int, used: set[int] | None = None) -> dict[str, int]:
    """Return consecutive free ports in [low, high) named by names, avoiding (and adding to) used."""
    used = used if used is not None else set()
    for _ in range(200):
        start = random.randrange(low, high - len(names))
        block = range(start, start + len(names))
        if not used.intersection(block) and all(port_is_free(p) for p in block):
            used.update(block)
            return dict(zip(names, block))
    raise RuntimeError(f"no free block of {len(names)} ports in {low}-{high - 1}")
