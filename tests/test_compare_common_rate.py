"""Tests of wrkreport.compare.common_rate: two runs at different offered rates read at one common rate on each run's curve; and `wrkreport compare` showing it on a real pair."""

from __future__ import annotations

import doctest
import json
import math
from datetime import datetime, timezone

import pytest

from helpers import RUNS
from wrkreport.analysis.rate_latency import RateCell
from wrkreport.compare import common_rate
from wrkreport.compare.common_rate import NOT_FLAGGED, curve_change_lines, curve_changes, curve_coverage, curve_value, log_interpolate
from wrkreport.compare.common_rate import common_rate as pick_rate
from wrkreport.compare.gate import gate
from wrkreport.report import build_compare
from wrkreport.report.terminal import compare_table

WHEN = datetime(2026, 11, 27, 12, tzinfo=timezone.utc)


def cell(
    setup: str, rate: int, p50: float | None, p99: float | None = None, planned: bool = False, held: bool = True, n: int = 1
) -> RateCell:
    """Return a cell of one run's curve: held (one usable measurement) or not (none usable)."""
    p99 = p99 if p99 is not None else (None if p50 is None else 2 * p50)
    return RateCell(
        setup,
        n,
        rate,
        1,
        1 if held else 0,
        0 if held else 1,
        rate if held else None,
        p50 if held else None,
        p99 if held else None,
        None,
        planned=planned,
        held_in=1 if held else 0,
    )


def run(planned: int, steps: dict[str, list[tuple[int, float]]], base_ms: float = 2.0, added_ms: float = 0.1) -> list[RateCell]:
    """Return a run's cells: go-http and nginx-http at the planned rate, then each setup's search steps (rate, p50)."""
    cells = [cell("go-http", planned, base_ms, planned=True), cell("nginx-http", planned, base_ms + added_ms, planned=True)]
    return cells + [cell(setup, rate, p50) for setup, points in steps.items() for rate, p50 in points]


def test_the_doctests_pass():
    assert doctest.testmod(common_rate).failed == 0


def test_log_interpolation_is_a_straight_line_in_log_log_and_exact_at_its_ends():
    assert log_interpolate(1000, (1000, 2.0), (4000, 8.0)) == pytest.approx(2.0)
    assert log_interpolate(4000, (1000, 2.0), (4000, 8.0)) == pytest.approx(8.0)
    assert log_interpolate(2000, (1000, 2.0), (4000, 32.0)) == pytest.approx(8.0)  # halfway in log rate: the geometric mean
    assert log_interpolate(1500, (1000, 3.0), (2000, 3.0)) == pytest.approx(3.0)


def test_a_run_reads_its_own_cell_at_a_rate_it_measured_and_its_curve_between_the_nearest_held_rates_elsewhere():
    cells = run(1000, {"go-http": [(1500, 2.4), (3000, 4.0)], "nginx-http": [(1200, 2.2), (2000, 2.6)]})
    measured = curve_value(cells, "go-http", 1, 1000, "p50")
    assert (measured.latency_ms, measured.measured, measured.source) == (2.0, True, "measured at 1,000 req/s")
    read = curve_value(cells, "nginx-http", 1, 1500, "p50")  # the nearest held rates: 1,200 and 2,000, not 1,000
    assert (read.low_rps, read.high_rps, read.source) == (1200, 2000, "interpolated from 1,200 and 2,000 req/s")
    assert read.latency_ms == pytest.approx(math.exp(math.log(2.2) + math.log(1500 / 1200) / math.log(2000 / 1200) * math.log(2.6 / 2.2)))
    assert curve_value(cells, "nginx-http", 1, 2500, "p50") is None  # beyond its highest held rate: never extrapolated
    assert curve_value(cells, "go-http", 1, 900, "p50") is None  # below its lowest


def test_a_rate_not_held_between_the_two_around_it_or_at_the_rate_itself_gives_no_figure():
    cells = run(1000, {"go-http": [(1500, 2.4), (3000, 4.0)]}) + [
        cell("go-http", 2000, None, held=False),
        cell("go-http", 1200, None, held=False),
    ]
    assert curve_value(cells, "go-http", 1, 1800, "p50") is None  # 2,000 not held lies between 1,500 and 3,000
    assert curve_value(cells, "go-http", 1, 1200, "p50") is None  # measured there, not held
    assert curve_value(cells, "go-http", 1, 1400, "p50") is None  # 1,200 not held lies between 1,000 and 1,500


def test_the_common_rate_is_the_lowest_planned_rate_the_other_run_covers_and_both_added_latencies_are_read_there():
    a = run(1000, {"go-http": [(1800, 2.4)], "nginx-http": [(1800, 2.6)]})  # A's curve: 1,000-1,800
    b = run(1500, {"go-http": [(2500, 2.8)], "nginx-http": [(2500, 3.0)]}, base_ms=2.2, added_ms=0.2)  # B's: 1,500-2,500; 1,000 is below it
    assert pick_rate(a, b, 1) == 1500
    changes = curve_changes(a, b)
    assert [(c.setup, c.offered_rps, c.percentile) for c in changes] == [("nginx-http", 1500, "p50"), ("nginx-http", 1500, "p99")]
    p50 = changes[0]
    own, base = log_interpolate(1500, (1000, 2.1), (1800, 2.6)), log_interpolate(1500, (1000, 2.0), (1800, 2.4))
    assert p50.a_ms == pytest.approx(own - base) and p50.a_latency_ms == pytest.approx(own) and p50.a_baseline_ms == pytest.approx(base)
    assert p50.b_ms == pytest.approx(0.2) and p50.change_ms == pytest.approx(0.2 - (own - base))
    assert (p50.a_from, p50.b_from) == ("interpolated from 1,000 and 1,800 req/s", "measured at 1,500 req/s")
    assert not p50.flagged and p50.note == NOT_FLAGGED
    record = p50.record()
    assert record["interpolated"] is True and record["flagged"] is False and record["ci_low"] is None and record["offered_rps"] == 1500
    assert curve_change_lines(changes)[0] == (
        f"GOMAXPROCS=1 at 1,500 req/s offered, open loop, interpolated: nginx-http added p50 {own - base:.3f} -> 0.200 ms, "
        f"{0.2 - (own - base):+.3f} ms (A interpolated from 1,000 and 1,800 req/s; B measured at 1,500 req/s; no interval, not flagged)"
    )


def test_curves_that_do_not_meet_give_no_figure_and_runs_sharing_a_planned_rate_are_left_to_the_same_rate_comparison():
    a = run(1000, {"go-http": [(1400, 2.4)], "nginx-http": [(1400, 2.6)]})
    b = run(2000, {"go-http": [(3000, 2.8)], "nginx-http": [(3000, 3.0)]})
    assert curve_changes(a, b) == [] and curve_coverage(a, b) == {}
    shared = run(1000, {"go-http": [(3000, 2.8)], "nginx-http": [(3000, 3.0)]}) + [
        cell("go-http", 2000, 2.5, planned=True),
        cell("nginx-http", 2000, 2.7, planned=True),
    ]
    assert pick_rate(a, shared, 1) is None  # 1,000 req/s was planned in both: compared as measured, with its interval


def test_a_setup_one_run_does_not_cover_is_named_and_the_rerun_sentence_stays():
    a = run(1000, {"go-http": [(1800, 2.4)], "nginx-http": [(1800, 2.6)]}) + [cell("nginx-fcgi-tcp", 1000, 2.3, planned=True)]
    b = run(1500, {"go-http": [(2500, 2.8)], "nginx-http": [(2500, 3.0)]}) + [cell("nginx-fcgi-tcp", 1500, 2.5, planned=True)]
    assert curve_coverage(a, b) == {1: (1500, ["nginx-http"], ["nginx-fcgi-tcp"])}  # A's nginx-fcgi-tcp has no step above 1,000


def test_the_real_pair_every_phase_and_capacity_delay_compares_nginx_http_at_960_req_s_read_on_every_phase_s_curve(tmp_path):
    # every-phase planned 710 and 1,400 req/s (GOMAXPROCS 1 and 2), capacity-delay 960 (GOMAXPROCS 1, 3 blocks): 710 lies below
    # capacity-delay's curve, 960 within every-phase's (go-http 710-1,400, nginx-http's search steps 902 and 977).
    result, paths = build_compare(RUNS / "every-phase", RUNS / "capacity-delay", tmp_path, WHEN)
    changes = result.curve_changes
    assert [(c.gomaxprocs, c.offered_rps, c.setup, c.percentile) for c in changes] == [
        (1, 960, "nginx-http", "p50"),
        (1, 960, "nginx-http", "p99"),
    ]
    p50, p99 = changes
    assert p50.a_from == "interpolated from 902 and 977 req/s; its baseline interpolated from 710 and 1,400 req/s"
    assert p50.b_from == "measured at 960 req/s"
    assert (round(p50.a_ms, 3), round(p50.b_ms, 3), round(p50.change_ms, 3)) == (0.055, 0.103, 0.048)
    # A's p99 leans on one measurement: nginx-http's p99 at 977 req/s was 55.9 ms (a pause), so 960 reads 34.9 ms
    assert (round(p99.a_latency_ms, 1), round(p99.a_ms, 1), round(p99.b_ms, 3)) == (34.9, 28.4, -0.070)
    assert gate(result, "change") == []  # never flagged
    data = json.loads(paths["compare.json"].read_text())
    assert [r["percentile"] for r in data["fixed_rate_interpolated"]] == ["p50", "p99"]
    assert data["fixed_rate_interpolated"][0]["b_from"] == "measured at 960 req/s" and data["fixed_rate"] == []
    assert data["fixed_rate_only"][0] == (
        "fixed rate GOMAXPROCS=1: only in A: 710, 1,400 req/s; only in B: 960 req/s; nginx-http read at 960 req/s on each run's curve "
        "(interpolated: no interval, not flagged); to compare with an interval, run both with one rate, e.g. ./run_bench.sh --rates 710"
    )
    assert data["fixed_rate_only"][1].endswith(
        "added latencies compare only at the same offered rate: run both with one rate, e.g. ./run_bench.sh --rates 690"
    )
    assert (
        "GOMAXPROCS=1 at 960 req/s offered, open loop, interpolated: nginx-http added p50 0.055 -> 0.103 ms, +0.048 ms (A interpolated "
        "from 902 and 977 req/s; its baseline interpolated from 710 and 1,400 req/s; B measured at 960 req/s; no interval, not flagged)"
    ) in compare_table(result)
    page = (tmp_path / "compare.html").read_text()
    assert 'id="fixed-rate-interpolated"' in page and "interpolated from 902 and 977 req/s" in page and "no interval, not flagged" in page
