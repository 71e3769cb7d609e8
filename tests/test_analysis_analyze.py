"""Tests of wrkreport.analysis.analyze: cells, paired ratios with intervals, exclusions and noise warnings.

The tables here are built by hand so each number can be checked by hand; the report
tests run the same code on real runs.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from wrkreport.analysis.analyze import analyze
from wrkreport.checks.measurements import annotate, check_run
from wrkreport.runs.directory import COLUMNS, load_run


def table(rows: list[dict]) -> pd.DataFrame:
    """Return an annotated measurements table from (setup, gomaxprocs, repeat, req/s, ...) dicts."""
    full = []
    for row in rows:
        full.append(
            dict.fromkeys(COLUMNS, float("nan"))
            | {
                "requests": row.get("requests", int(row["rps"] * 10)),
                "threads": row.get("threads", 2),
                "tool": row.get("tool", "wrk"),
                "setup": row["setup"],
                "gomaxprocs": row.get("gomaxprocs", 1),
                "connections": row.get("connections", 100),
                "repeat": row["repeat"],
                "file": f"{row['setup']}.gomaxprocs-{row.get('gomaxprocs', 1)}.run-{row['repeat']}.wrk.txt",
                "requests_per_sec": row["rps"],
                "latency_avg_ms": row.get("avg", 1.0),
                "latency_p50_ms": row.get("p50", 1.0),
                "latency_p75_ms": row.get("p75", 1.2),
                "latency_p90_ms": row.get("p90", 1.5),
                "latency_p99_ms": row.get("p99", 3.0),
                "latency_max_ms": row.get("max", 10.0),
                "errors_connect": 0,
                "errors_read": 0,
                "errors_write": 0,
                "errors_timeout": row.get("timeouts", 0),
                "non_2xx_3xx": 0,
                "excluded": row.get("excluded"),
            }
            | row.get("cpu", {})
        )
    return pd.DataFrame(full)


def series(setup: str, values: list[float], **extra) -> list[dict]:
    """Return one row per repeat with the given req/s."""
    return [{"setup": setup, "repeat": k, "rps": v, **extra} for k, v in enumerate(values, start=1)]


def test_paired_ratio_by_hand():
    go = [100.0, 110.0, 90.0, 105.0, 95.0]
    proxy = [60.0, 64.0, 56.0, 63.0, 57.0]
    analysis = analyze(table(series("go-http", go) + series("nginx-http", proxy)))
    ratio = analysis.ratio(1, 100, "nginx-http")
    logs = [math.log(p / g) for p, g in zip(proxy, go)]
    centre = sum(logs) / 5
    sd = math.sqrt(sum((x - centre) ** 2 for x in logs) / 4)
    half = 2.776 * sd / math.sqrt(5)
    assert ratio.ratio == pytest.approx(math.exp(centre))
    assert (ratio.ci_low, ratio.ci_high) == (pytest.approx(math.exp(centre - half)), pytest.approx(math.exp(centre + half)))
    assert ratio.n == 5 and ratio.excluded is None and not ratio.includes_one
    baseline = analysis.ratio(1, 100, "go-http")
    assert (baseline.ratio, baseline.ci_low, baseline.n) == (1.0, None, 5)


def test_pairing_is_by_repeat_not_by_sorted_value():
    # Drift: both slow down over the repeats; paired by repeat the ratio is exactly 0.5 each time.
    go = [100.0, 90.0, 80.0, 70.0]
    proxy = [50.0, 45.0, 40.0, 35.0]
    ratio = analyze(table(series("go-http", go) + series("nginx-http", proxy))).ratio(1, 100, "nginx-http")
    assert ratio.ratio == pytest.approx(0.5)
    assert ratio.ci_low == pytest.approx(0.5) and ratio.ci_high == pytest.approx(0.5)


def test_excluded_repeat_drops_its_pair_only():
    rows = series("go-http", [100.0, 100.0, 100.0]) + series("nginx-http", [50.0, 60.0, 55.0])
    rows[4]["excluded"] = "non-2xx: 10 of 10 responses"
    analysis = analyze(table(rows))
    ratio = analysis.ratio(1, 100, "nginx-http")
    assert ratio.n == 2 and ratio.ratio == pytest.approx(math.sqrt(0.5 * 0.55))
    cell = analysis.cell(1, 100, "nginx-http")
    assert cell.repeats == (1, 3) and cell.excluded == ((2, "non-2xx: 10 of 10 responses"),)


def test_fully_excluded_setup_and_baseline_give_reasons():
    rows = series("go-http", [100.0, 100.0]) + series("nginx-fcgi-unix", [30.0, 31.0], excluded="header-bytes: answered 502")
    analysis = analyze(table(rows))
    ratio = analysis.ratio(1, 100, "nginx-fcgi-unix")
    assert ratio.ratio is None and ratio.n == 0
    assert ratio.excluded == "every repeat was excluded (header-bytes: answered 502)"
    rows = series("go-http", [100.0], excluded="zero-requests: 0 requests") + series("nginx-http", [50.0])
    ratio = analyze(table(rows)).ratio(1, 100, "nginx-http")
    assert ratio.excluded == "every go-http repeat at GOMAXPROCS=1, 100 connections was excluded (zero-requests: 0 requests)"
    ratio = analyze(table(series("nginx-http", [50.0]))).ratio(1, 100, "nginx-http")
    assert ratio.excluded == "no go-http measurement at GOMAXPROCS=1, 100 connections to compare with"


def test_one_repeat_gives_a_ratio_without_interval(article_run):
    run = load_run(article_run)
    analysis = analyze(annotate(run.measurements, check_run(run)))
    published = {
        (1, "nginx-http"): 0.936,
        (1, "nginx-fcgi-tcp"): 0.224,
        (1, "nginx-fcgi-unix"): 0.273,
        (8, "nginx-http"): 0.580,
        (8, "nginx-fcgi-tcp"): 0.187,
        (8, "nginx-fcgi-unix"): 0.236,
    }
    for (gomaxprocs, setup), value in published.items():
        ratio = analysis.ratio(gomaxprocs, 5000, setup)
        assert round(ratio.ratio, 3) == value and ratio.ci_low is None and ratio.n == 1
    assert [w.kind for w in analysis.noise] == ["few-repeats"]
    assert analysis.noise[0].message == "every cell has 1 repeat (fewer than 3): no interval and no spread can be given"


def test_latency_ratios_and_missing_percentiles():
    rows = series("go-http", [100.0, 100.0], p50=1.0, p99=2.0) + series("nginx-http", [50.0, 50.0], p50=2.0, p99=8.0)
    analysis = analyze(table(rows))
    assert analysis.ratio(1, 100, "nginx-http", "latency_p50_ms").ratio == pytest.approx(2.0)
    assert analysis.ratio(1, 100, "nginx-http", "latency_p99_ms").ratio == pytest.approx(4.0)
    rows = series("go-http", [100.0], p50=None) + series("nginx-http", [50.0], p50=None)
    ratio = analyze(table(rows)).ratio(1, 100, "nginx-http", "latency_p50_ms")
    assert ratio.ratio is None and ratio.excluded == "no p50 latency in the wrk output (run without --latency?)"


def test_mechanisms_that_cannot_be_told_apart():
    go = [100.0, 101.0, 99.0, 100.0, 100.0]
    tcp = [30.0, 31.0, 29.0, 30.5, 29.5]
    unix = [30.2, 30.6, 29.4, 30.1, 29.9]
    http = [60.0, 61.0, 59.0, 60.0, 60.0]
    analysis = analyze(
        table(series("go-http", go) + series("nginx-http", http) + series("nginx-fcgi-tcp", tcp) + series("nginx-fcgi-unix", unix))
    )
    pairs = {(c.setup_a, c.setup_b): c for c in analysis.comparisons}
    assert pairs[("nginx-http", "nginx-fcgi-tcp")].distinguishable is True
    assert pairs[("nginx-http", "nginx-fcgi-tcp")].ratio == pytest.approx(2.0, rel=0.02)
    fcgi = pairs.get(("nginx-fcgi-unix", "nginx-fcgi-tcp")) or pairs[("nginx-fcgi-tcp", "nginx-fcgi-unix")]
    assert fcgi.distinguishable is False and fcgi.ratio >= 1


def test_interval_including_one_means_no_measurable_overhead():
    go = [100.0, 102.0, 98.0, 101.0]
    proxy = [101.0, 99.0, 99.0, 102.0]
    ratio = analyze(table(series("go-http", go) + series("nginx-http", proxy))).ratio(1, 100, "nginx-http")
    assert ratio.includes_one


def kinds(analysis) -> list[str]:
    """Return the kinds of noise warnings, in order."""
    return [w.kind for w in analysis.noise]


def test_noise_outlier_cold_start_spread_and_wide_interval():
    go = [100.0, 100.5, 99.5, 100.2, 99.8]
    steady = [50.0, 50.2, 49.8, 50.1, 49.9]
    analysis = analyze(table(series("go-http", go) + series("nginx-http", steady)))
    assert kinds(analysis) == []

    outlier = [50.0, 50.2, 38.0, 50.1, 49.9]
    analysis = analyze(table(series("go-http", go) + series("nginx-http", outlier)))
    warned = [w for w in analysis.noise if w.kind == "outlier"]
    assert [(w.setup, w.repeat) for w in warned] == [("nginx-http", 3)]
    assert warned[0].message.startswith(
        "nginx-http at GOMAXPROCS=1, repeat 3: 38 req/s is 24.0% from the cell's median 50 (modified z-score -80.9)"
    )
    assert "spread" in kinds(analysis) and "wide-interval" in kinds(analysis)

    cold = [40.0, 50.2, 49.8, 50.1, 49.9]
    warned = [w for w in analyze(table(series("go-http", go) + series("nginx-http", cold))).noise if w.kind == "cold-start"]
    assert [(w.setup, w.repeat) for w in warned] == [("nginx-http", 1)]
    assert "20.0% slower than the median of the others (40 vs 50 req/s)" in warned[0].message


def test_few_repeats_per_cell_when_only_some_cells_are_short():
    rows = series("go-http", [100.0, 100.0, 100.0]) + series("nginx-http", [50.0, 50.0])
    warned = [w for w in analyze(table(rows)).noise if w.kind == "few-repeats"]
    assert [(w.setup, w.message) for w in warned] == [("nginx-http", "nginx-http at GOMAXPROCS=1 has 2 usable repeats (fewer than 3)")]


def test_groups_are_gomaxprocs_and_connection_levels():
    rows = [dict(r, gomaxprocs=g, connections=c) for g in (1, 2) for c in (10, 100) for r in series("go-http", [100.0 * g])]
    analysis = analyze(table(rows))
    assert analysis.groups == ((1, 10), (1, 100), (2, 10), (2, 100))
    assert analysis.cell(2, 10, "go-http").median("requests_per_sec") == 200.0


def cpu(go: float, nginx: float | None, wrk: float, wall: float = 10.0, cores: int = 2, client=None, server=None) -> dict:
    """Return the CPU columns of one measurement (seconds)."""
    return {
        "cpu": {
            "cpu_go_s": go,
            "cpu_fasthttp_s": None,
            "cpu_nginx_s": nginx,
            "cpu_wrk_s": wrk,
            "cpu_wall_s": wall,
            "cpu_cores": cores,
            "pin_client": client,
            "pin_server": server,
        }
    }


def test_cpu_per_thousand_requests_by_hand():
    # 1,000 req/s for 10 s = 10,000 requests; Go used 2 s, nginx 3 s: 200 and 300 ms per 1,000 requests.
    rows = series("go-http", [1000.0, 1000.0], requests=10_000, **cpu(2.0, 0.0, 4.0))
    rows += series("nginx-http", [1000.0, 1000.0], requests=10_000, **cpu(2.0, 3.0, 4.0))
    analysis = analyze(table(rows))
    cell = analysis.cell(1, 100, "nginx-http")
    assert cell.median("cpu_go_ms_per_1k") == pytest.approx(200.0)
    assert cell.median("cpu_nginx_ms_per_1k") == pytest.approx(300.0)
    assert cell.median("cpu_server_ms_per_1k") == pytest.approx(500.0)
    assert cell.median("wrk_cpu_per_thread") == pytest.approx(4.0 / 10.0 / 2)
    assert cell.median("wrk_cpu_share") == pytest.approx(4.0 / 20.0)
    assert cell.median("server_cores_busy") == pytest.approx(0.5)
    sharing = analysis.sharing
    assert sharing.shared and not sharing.pinned and sharing.cores == 2
    assert sharing.wrk_share.median == pytest.approx(0.2)


def test_without_cpu_records_there_is_no_cpu_analysis():
    analysis = analyze(table(series("go-http", [100.0, 100.0])))
    assert analysis.sharing is None and analysis.cell(1, 100, "go-http").metrics["cpu_go_ms_per_1k"] is None


def test_busy_client_and_too_few_free_cores_warn():
    # wrk: 19 s of CPU in 10 s with 2 threads = 95% per thread; servers busy 1.5 cores of 2 -> 0.25 free per thread.
    rows = series("go-http", [1000.0, 1000.0, 1000.0], requests=10_000, **cpu(15.0, 0.0, 19.0))
    warned = {w.kind: w for w in analyze(table(rows)).noise}
    assert warned["client-saturated"].message.startswith("go-http at GOMAXPROCS=1: wrk used 95% of a CPU per thread")
    assert "(0.25 free cores per wrk thread, median)" in warned["client-cores"].message


def test_ab_is_one_thread_and_named_in_the_client_warnings():
    # ab: 9.5 s of CPU in 10 s on its one thread = 95%; the servers leave 0.5 cores free for it.
    rows = series("go-http", [1000.0, 1000.0, 1000.0], requests=10_000, threads=1, tool="ab", **cpu(15.0, 0.0, 9.5))
    warned = {w.kind: w for w in analyze(table(rows)).noise}
    assert warned["client-saturated"].message.startswith("go-http at GOMAXPROCS=1: ab used 95% of a CPU per thread")
    assert "(0.50 free cores per ab thread, median)" in warned["client-cores"].message
    idle = series("go-http", [1000.0, 1000.0, 1000.0], requests=10_000, threads=1, tool="ab", **cpu(5.0, 0.0, 5.0))
    assert [w.kind for w in analyze(table(idle)).noise if w.kind.startswith("client")] == []  # 50% of one thread, 1.5 cores free


def test_pinned_client_cores_come_from_its_cpu_list():
    rows = series("go-http", [1000.0, 1000.0, 1000.0], requests=10_000, **cpu(9.0, 0.0, 5.0, cores=4, client="0-1", server="2-3"))
    analysis = analyze(table(rows))
    assert analysis.cell(1, 100, "go-http").median("free_cores_per_thread") == pytest.approx(1.0)
    assert not analysis.sharing.shared and analysis.sharing.pinned
    assert [w.kind for w in analysis.noise if w.kind.startswith("client")] == []


def test_ceiling_ratios_and_the_near_ceiling_warning():
    rows = series("go-http", [95.0, 96.0, 94.0]) + series("nginx-http", [50.0, 51.0, 49.0]) + series("nginx-static", [100.0, 100.0, 100.0])
    analysis = analyze(table(rows))
    assert analysis.ceiling_ratio(1, 100, "go-http").ratio == pytest.approx((0.95 * 0.96 * 0.94) ** (1 / 3))
    assert analysis.ceiling_ratio(1, 100, "nginx-static").ratio == 1.0
    (warning,) = [w for w in analysis.noise if w.kind == "near-ceiling"]
    assert warning.message.startswith("go-http at GOMAXPROCS=1 reaches 95% of nginx-static's throughput")
    rows = series("go-http", [50.0, 50.0, 50.0]) + series("nginx-static", [100.0, 100.0, 100.0])
    assert not [w for w in analyze(table(rows)).noise if w.kind == "near-ceiling"]


def test_client_core_shortage_in_every_cell_is_one_warning():
    rows = series("go-http", [1000.0] * 3, requests=10_000, **cpu(15.0, 0.0, 5.0))
    rows += series("nginx-http", [500.0] * 3, requests=5_000, **cpu(8.0, 8.0, 3.0))
    warned = [w for w in analyze(table(rows)).noise if w.kind == "client-cores"]
    assert [w.setup for w in warned] == [None]
    assert warned[0].message.startswith(
        "In every one of the 2 cells wrk ran more threads than there were cores free of the servers (0.20-0.25 free"
    )


def test_client_core_shortage_names_the_runs_load_generator():
    """An h2load run's one warning says h2load, not wrk."""
    rows = series("go-h2", [1000.0] * 3, requests=10_000, tool="h2load", **cpu(15.0, 0.0, 5.0))
    rows += series("nginx-h2", [500.0] * 3, requests=5_000, tool="h2load", **cpu(8.0, 8.0, 3.0))
    (warned,) = [w for w in analyze(table(rows)).noise if w.kind == "client-cores"]
    assert warned.message.startswith("In every one of the 2 cells h2load ran more threads than there were cores free")
    assert "per h2load thread" in warned.message and "wrk" not in warned.message
