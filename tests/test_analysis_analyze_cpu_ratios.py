"""Tests of wrkreport.analysis.analyze's CPU ratios (issue 20): CPU cost per request as a headline figure, setup / go-http server CPU per request, with the block interval.

On the real default-blocks-2cores run (its .cpu.json files were read from /proc by the
driver): the figures worked out here from the raw files, the page's answer box, the CPU
table, the terminal summary, results.json's cpu_ratios, and the driver's stopping rule
all agree. A run without CPU records shows no CPU figure at all.
"""

from __future__ import annotations

import html
import json
import math
from datetime import datetime, timezone

import pytest

from helpers import RUNS
from wrkreport.analysis.analyze import CPU_METRIC, load_analysis
from wrkreport.bench import stopping_rule as precision
from wrkreport.core import stats
from wrkreport.parsers import parse_file
from wrkreport.report import build
from wrkreport.report.answercells import fmt_us

pytestmark = pytest.mark.usefixtures(
    "parsed_and_drawn_once"
)  # its builds read the session's analyses and charts of a run; its own load_analysis calls are real

WHEN = datetime(2026, 11, 23, 12, tzinfo=timezone.utc)
BLOCKED = RUNS / "default-blocks-2cores"


def cpu_per_request_by_hand(name: str) -> float:
    """Return one measurement's server CPU seconds per request: Go's and nginx's user + system over wrk's requests."""
    record = json.loads((BLOCKED / name.replace(".wrk.txt", ".cpu.json")).read_text())["processes"]
    busy = sum(record[p]["user_s"] + record[p]["system_s"] for p in ("go", "nginx") if record.get(p))
    return busy / parse_file(BLOCKED / name).requests


def expected(setup: str, gomaxprocs: int) -> stats.Interval:
    """Return the CPU ratio worked out from the raw files, paired by round within each block."""
    manifest = json.loads((BLOCKED / "manifest.json").read_text())
    rounds = {(m["setup"], m["block"], m["repeat"]): m["file"] for m in manifest["measurements"] if m["gomaxprocs"] == gomaxprocs}
    blocks: dict[int, list[tuple[float, float]]] = {}
    for (name, block, k), file in sorted(rounds.items()):
        if name == setup and ("go-http", block, k) in rounds:
            blocks.setdefault(block, []).append((cpu_per_request_by_hand(file), cpu_per_request_by_hand(rounds["go-http", block, k])))
    return stats.block_ratio_interval([blocks[b] for b in sorted(blocks)])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("cpu")
    done = build(BLOCKED, out, WHEN)
    return done, json.loads((out / "results.json").read_text()), html.unescape((out / "index.html").read_text())


def test_cpu_ratios_are_block_intervals_of_the_raw_figures(built):
    ratios = {(r.setup, r.gomaxprocs): r for r in load_analysis(BLOCKED).analysis.cpu_ratios}
    assert len(ratios) == 8 and ratios["go-http", 1].ratio == 1.0
    for (setup, gomaxprocs), ratio in ratios.items():
        if setup == "go-http":
            continue
        found = expected(setup, gomaxprocs)
        assert (ratio.metric, ratio.unit, ratio.blocks) == (CPU_METRIC, stats.BLOCK, 10)
        assert (ratio.ratio, ratio.ci_low, ratio.ci_high) == pytest.approx((found.estimate, found.low, found.high), rel=1e-9)
        assert ratio.ratio > 1.5  # nginx in front costs CPU per request: 1.85-4.51x here


def test_results_json_page_and_summary_carry_the_cpu_ratios(built):
    done, data, page = built
    records = {(r["setup"], r["gomaxprocs"]): r for r in data["cpu_ratios"]}
    http = records["nginx-http", 1]
    assert {"setup", "gomaxprocs", "ratio", "ci_low", "ci_high", "blocks"} <= set(http) and http["blocks"] == 10
    times = f"{http['ratio']:.2f}\u00d7 ({http['ci_low']:.2f}\u2011{http['ci_high']:.2f})"
    relative = page.split('<h2 id="throughput">')[1].split("<h2")[0]
    assert "Server CPU per request" in page and f"the HTTP proxy {times}" in relative  # under Throughput at saturation
    assert f"{http['ratio']:.3f} ({http['ci_low']:.3f}-{http['ci_high']:.3f})" in page  # the CPU table
    # the answer (page and terminal): the µs per request the ratio stands for, and what nginx adds over go-http's
    cells = {c.setup: c for c in load_analysis(BLOCKED).analysis.cells if c.gomaxprocs == 1}
    cpu = {s: cells[s].metrics["cpu_server_ms_per_1k"].interval.estimate for s in ("go-http", "nginx-http")}
    row = next(line for line in done.summary.splitlines() if line.startswith("nginx-http "))
    assert row.split()[1:3] == [fmt_us(cpu["nginx-http"]), f"(+{fmt_us(cpu['nginx-http'] - cpu['go-http'])})"], (row, cpu)


def test_the_driver_stops_on_the_same_cpu_intervals_the_page_shows():
    manifest = json.loads((BLOCKED / "manifest.json").read_text())
    driver = precision.ratio_intervals(BLOCKED, manifest, {}, precision.cpu_per_request_of)
    page = {(r.gomaxprocs, r.connections, r.setup): r for r in load_analysis(BLOCKED).analysis.cpu_ratios}
    assert set(driver) == {key for key, r in page.items() if r.setup != "go-http"}
    for key, interval in driver.items():
        assert (interval.estimate, interval.low, interval.high) == pytest.approx(
            (page[key].ratio, page[key].ci_low, page[key].ci_high), rel=1e-9
        )
    worst = stats.worst_half_width(list(driver.values()))
    assert 0 < worst < 0.05 and not math.isinf(worst)  # +/-4.4% at worst on this run


def test_a_run_without_cpu_records_has_no_cpu_figure(tmp_path):
    done = build(RUNS / "default-2cores", tmp_path, WHEN)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["cpu_ratios"] == [] and "CPU us/req" not in done.summary and "server CPU" not in done.summary
    assert "Server CPU per request" not in (tmp_path / "index.html").read_text()
