"""Tests of wrkreport.report: reports and comparisons of real runs made with the driver's newer options (tests/fixtures/runs/README.md):
a concurrency sweep over all seven setups with CPU records, a pinned run, keep-alive on and off."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import pytest

from helpers import RUNS
from wrkreport.analysis import analyze  # analyze.load_analysis: conftest's parsed_and_drawn_once keeps each analysis
from wrkreport.compare.two_runs import compare
from wrkreport.report import build, compare_summary

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # builds fixture runs

WHEN = datetime(2026, 11, 22, 12, tzinfo=timezone.utc)


@pytest.fixture
def built(tmp_path):
    """Return a function: build a fixture run (read in place: its analysis is the one the other modules make), return (html, results.json)."""

    def make(name: str):
        result = build(RUNS / name, tmp_path / "reports", WHEN)
        assert result.exit_code == 0, [c.message for c in result.failures]
        return (tmp_path / "reports" / "index.html").read_text(), json.loads((tmp_path / "reports" / "results.json").read_text())

    return make


def cpu_seconds(record: dict, process: str) -> float:
    """Return user + system seconds of one process group of a .cpu.json."""
    found = record["processes"][process]
    return found["user_s"] + found["system_s"]


def test_sweep_report_has_sweep_charts_and_levels(built):
    html, data = built("sweep-all-setups")
    assert (
        html.count('class="layout-wide"') == 7
    )  # throughput, ratios, latency, throughput and p99 against connections, CPU, ratios beside the 2013 article (each also narrow)
    assert {(r["gomaxprocs"], r["connections"]) for r in data["ratios"]} == {(2, 10), (2, 100)}
    assert "GOMAXPROCS=2, 10 connections" in html and "wrk connections (log scale)" in html
    assert len({r["setup"] for r in data["ratios"]}) == 7


def test_sweep_cpu_per_thousand_requests_is_the_cpu_files_over_the_requests(built):
    _, data = built("sweep-all-setups")
    for cell in data["cells"]:
        values = []
        for repeat in cell["repeats"]:
            stem = f"{cell['setup']}.gomaxprocs-{cell['gomaxprocs']}.c{cell['connections']}.run-{repeat}"
            record = json.loads((RUNS / "sweep-all-setups" / f"{stem}.cpu.json").read_text())
            requests = int(re.search(r"(\d+) requests in", (RUNS / "sweep-all-setups" / f"{stem}.wrk.txt").read_text())[1])
            values.append(cpu_seconds(record, "nginx") * 1e6 / requests)
        assert cell["metrics"]["cpu_nginx_ms_per_1k"]["values"] == pytest.approx(values)
    proxy = next(c for c in data["cells"] if (c["setup"], c["connections"]) == ("nginx-http", 100))
    go = next(c for c in data["cells"] if (c["setup"], c["connections"]) == ("go-http", 100))
    # nginx in front costs server CPU per request: nginx's own plus Go's.
    assert proxy["metrics"]["cpu_server_ms_per_1k"]["median"] > go["metrics"]["cpu_server_ms_per_1k"]["median"]


def test_sweep_ceiling_shares_and_standalone_setups_in_the_answer(built):
    html, data = built("sweep-all-setups")
    assert "1 (the ceiling)" in html and "share of nginx-static req/s" in html
    assert "For scale, fasthttp standalone does" in html and "nginx answering by itself (the ceiling here) does" in html
    answer = html[html.index('aria-label="The answer"') : html.index("</section>")]
    assert "cheapest nginx connection here is nginx answering" not in answer


def test_unpinned_run_says_client_and_servers_shared_the_cpus(built):
    html, _ = built("sweep-all-setups")
    assert "Client and servers shared the same CPUs (not pinned) of this 2-CPU machine: wrk itself used" in html


def test_pinned_run_says_where_each_ran(built):
    html, data = built("pinned-quick")
    assert "wrk ran on CPUs 0 and the servers on CPUs 1 (pinned, no overlap)" in html
    assert {m["pin_client"] for m in data["measurements"]} == {"0"} and {m["pin_server"] for m in data["measurements"]} == {"1"}


def test_keepalive_off_run_says_so(built):
    html, _ = built("keepalive-off")
    assert "Measured with upstream keep-alive off (nginx opens a new connection to Go per request)." in html


def test_compare_keepalive_off_flags_the_nginx_setups_not_go():
    result = compare(analyze.load_analysis(RUNS / "keepalive-on"), analyze.load_analysis(RUNS / "keepalive-off"))
    flagged = {(c.setup, c.metric) for c in result.flagged}
    assert flagged == {(s, m) for s in ("nginx-http", "nginx-fcgi-tcp") for m in ("requests_per_sec", "overhead_ratio", "latency_p99_ms")}
    proxy = next(c for c in result.changes if (c.setup, c.metric) == ("nginx-http", "overhead_ratio"))
    assert proxy.ci_high < 0.5  # without upstream keep-alive the proxy keeps less than half its ratio
    assert ("parameter upstream_keepalive", "True", "False") in result.differences


def test_compare_two_runs_of_the_same_settings_changes_no_ratio():
    result = compare(analyze.load_analysis(RUNS / "keepalive-on"), analyze.load_analysis(RUNS / "keepalive-on-again"))
    assert [c for c in result.flagged if c.metric == "overhead_ratio"] == []
    assert [d[0] for d in result.differences] == ["parameter seed"]
    # A minute apart, this machine ran go-http itself 8% slower; with one server start per
    # run that is within the 5% start-to-start spread, so compare does not call it a change.
    go = next(c for c in result.changes if (c.setup, c.metric) == ("go-http", "requests_per_sec"))
    assert not go.flagged and go.change == pytest.approx(0.916, abs=0.001) and go.ci_low < 0.85
    assert result.flagged == () and compare_summary(result)[0].startswith("No figure changed measurably")
