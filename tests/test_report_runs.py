"""Tests of wrkreport.report on real runs of run_bench.sh (tests/fixtures/runs/): numbers, exclusions, exit codes, gold page.

The gold page is tests/fixtures/gold/default-2cores.html: the page with its variable
parts scrubbed (generation time and the SVG charts, whose bytes depend on the
matplotlib version). To refresh it after a deliberate change of the page:

    WRKREPORT_REFRESH_GOLD=1 pytest tests/test_report_runs.py -k gold

then read the diff (git diff tests/fixtures/gold/) before committing it.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from helpers import RUNS
from wrkreport.parsers import parse_file
from wrkreport.report import build

WHEN = datetime(2026, 11, 22, 12, 0, 0, tzinfo=timezone.utc)
pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # builds fixture runs the other report modules build too

GOLD = Path(__file__).parent / "fixtures" / "gold" / "default-2cores.html"
T_975_DF4 = 2.776


@pytest.fixture
def built(tmp_path):
    """Return a function: build a fixture run (in place, unless files are dropped or the page's link to raw/ is read: then a copy in
    tmp raw/; the analysis of the fixture itself is the one the other modules make), return (Built, html, results.json)."""

    def make(name: str, drop: tuple[str, ...] = (), copy: bool = False):
        run = RUNS / name
        if drop or copy:
            run = Path(shutil.copytree(RUNS / name, tmp_path / "raw" / name, ignore=shutil.ignore_patterns(*drop)))
        result = build(run, tmp_path / "reports", WHEN)
        html = (tmp_path / "reports" / "index.html").read_text(encoding="utf-8")
        data = json.loads((tmp_path / "reports" / "results.json").read_text(encoding="utf-8"))
        return result, html, data

    return make


def ratios_of(data: dict) -> dict:
    """Return the throughput ratios by (gomaxprocs, setup)."""
    return {(r["gomaxprocs"], r["setup"]): r for r in data["ratios"]}


def test_default_run_ratios_are_the_paired_geometric_means_of_the_raw_files(built):
    result, html, data = built("default-2cores")
    assert result.exit_code == 0 and result.status == "pass"
    assert len(data["measurements"]) == 40 and data["response_bytes_agreed"] == 153
    assert {c["status"] for c in data["checks"]} == {"pass"}
    rps = {}
    for path in (RUNS / "default-2cores").glob("*.wrk.txt"):
        setup, gomaxprocs, repeat, *_ = path.name.split(".")
        rps[(setup, int(gomaxprocs.split("-")[1]), int(repeat.split("-")[1]))] = parse_file(path).requests_per_sec
    for (gomaxprocs, setup), ratio in ratios_of(data).items():
        logs = [math.log(rps[(setup, gomaxprocs, k)] / rps[("go-http", gomaxprocs, k)]) for k in range(1, 6)]
        mean = sum(logs) / 5
        half = T_975_DF4 * math.sqrt(sum((x - mean) ** 2 for x in logs) / 4) / math.sqrt(5)
        assert ratio["ratio"] == pytest.approx(math.exp(mean)) and ratio["n"] == 5
        if setup != "go-http":
            assert ratio["ci_low"] == pytest.approx(math.exp(mean - half))
            assert ratio["ci_high"] == pytest.approx(math.exp(mean + half))
    assert ratios_of(data)[(1, "nginx-http")]["ci_low"] == pytest.approx(0.482, abs=5e-4)
    assert "At GOMAXPROCS=1 with nginx in front, the HTTP proxy keeps 55% (48\u201163%)" in html
    assert data["environment"]["versions"] == {"nginx": "1.22.1", "go": "go1.26.8", "wrk": "4.1.0", "curl": "7.88.1"}


def test_default_run_cells_use_medians_of_the_raw_files(built):
    _, _, data = built("default-2cores")
    cell = next(c for c in data["cells"] if (c["gomaxprocs"], c["setup"]) == (1, "go-http"))
    # The five go-http GOMAXPROCS=1 files say 79522.14, 77992.64, 77556.36, 77183.98, 78649.48 (in repeat order).
    assert cell["metrics"]["requests_per_sec"]["values"] == [79522.14, 77992.64, 77556.36, 77183.98, 78649.48]
    assert cell["metrics"]["requests_per_sec"]["median"] == 77992.64
    assert cell["metrics"]["requests_per_sec"]["min"] == 77183.98


def test_default_run_noise_warnings_name_real_spread(built):
    _, html, data = built("default-2cores")
    kinds = {w["kind"] for w in data["noise"]}
    assert {"spread", "wide-interval"} <= kinds
    assert "nginx-http at GOMAXPROCS=1: req/s ranges over 26.6% of its median (37,889-48,952), more than 10%" in html


def test_measured_502_setup_is_excluded_everywhere(built):
    result, html, data = built("fcgi-unix-502")
    assert result.exit_code == 1
    failed = sorted((c.name, c.setup, c.gomaxprocs, c.repeat) for c in result.failures)
    assert failed == sorted((name, "nginx-fcgi-unix", g, k) for name in ("non-2xx", "same-response") for g in (1, 2) for k in (1, 2, 3))
    assert data["response_bytes_agreed"] == 153
    for gomaxprocs in (1, 2):
        unix = ratios_of(data)[(gomaxprocs, "nginx-fcgi-unix")]
        assert unix["ratio"] is None and unix["n"] == 0
        assert unix["excluded"].startswith("every repeat was excluded (non-2xx: ")
        assert ratios_of(data)[(gomaxprocs, "nginx-http")]["ratio"] is not None
    rows = [m for m in data["measurements"] if m["setup"] == "nginx-fcgi-unix"]
    assert len(rows) == 6 and all(m["excluded"] and m["check_status"] == "fail" for m in rows)
    go = [m["requests_per_sec"] for m in data["measurements"] if m["setup"] == "nginx-http"]
    assert min(m["requests_per_sec"] for m in rows) > max(go)  # faster than the real proxy: 502s are cheap
    assert "ratio for nginx-fcgi-unix: every repeat was excluded (non-2xx:" in html
    assert "12 checks failed." in html


def test_unmeasured_502_setup_shows_as_not_measured(built):
    result, html, data = built("fcgi-unix-502-unmeasured")
    assert result.exit_code == 1
    assert {(c.name, c.setup) for c in result.failures} == {("readiness", "nginx-fcgi-unix"), ("header-bytes", "nginx-fcgi-unix")}
    unix = ratios_of(data)[(1, "nginx-fcgi-unix")]
    assert unix["ratio"] is None
    assert unix["excluded"] == (
        "not measured: readiness: nginx-fcgi-unix at GOMAXPROCS=1 was not measured: "
        "answered 'HTTP/1.1 502 Bad Gateway', not 200: not measured"
    )
    assert "not measured" in html and "ratio for nginx-fcgi-unix: not measured" in html
    assert ratios_of(data)[(1, "nginx-fcgi-tcp")]["ratio"] == pytest.approx(25987.93 / 81614.56, rel=1e-9)


def test_single_repeat_run_says_there_is_no_interval(built):
    result, html, data = built("quick-1-repeat")
    assert result.exit_code == 0
    assert all(r["ci_low"] is None and r["n"] == 1 for r in data["ratios"])
    assert "one repeat, no interval" in html
    assert [w["kind"] for w in data["noise"]] == ["few-repeats"]


def test_run_without_manifest_is_read_from_file_names(built):
    result, html, data = built("quick-1-repeat", drop=("manifest.json",))
    assert result.exit_code == 0 and result.status == "warn"
    assert len(data["measurements"]) == 8 and all(m["command"] is None for m in data["measurements"])
    assert data["environment"]["versions"] is None
    assert "unknown: the run has no manifest.json" in html
    run_status = next(c for c in data["checks"] if c["name"] == "run-status")
    assert run_status["status"] == "warn"


def scrub(html: str) -> str:
    """Remove what varies between builds of the same run: the charts' SVG bytes and the build time."""
    html = re.sub(r"<svg\b.*?</svg>", "<svg>[chart]</svg>", html, flags=re.S)
    return html.replace(WHEN.strftime("%Y-%m-%d %H:%M:%S UTC"), "[generated]")


def test_gold_page(built):
    _, html, _ = built("default-2cores", copy=True)  # the page links ../raw/default-2cores
    page = scrub(html)
    if os.environ.get("WRKREPORT_REFRESH_GOLD"):
        GOLD.parent.mkdir(parents=True, exist_ok=True)
        GOLD.write_text(page, encoding="utf-8")
    assert page == GOLD.read_text(encoding="utf-8"), "the page changed; see this module's docstring to refresh the gold file"
