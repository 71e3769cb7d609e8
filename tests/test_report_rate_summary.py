"""Tests of wrkreport.report.rate_summary: what a setup does to latency is said as its interval allows ('adds' only above 0), a rate held in some blocks says so, only planned rates have a line, and each setup's capacity at the objective is said with its interval or as the bound it is."""

from __future__ import annotations

import doctest
import json
import math
from dataclasses import replace

import pytest

from helpers import SLO_RUN, crossing_between, measured_p99, read_rate_run, slo_variant
from wrkreport.analysis.capacities import Capacity, capacities
from wrkreport.analysis.rate_latency import RateCell, rate_cells
from wrkreport.core.capacity import AT_LEAST, BlockCapacity, Estimate, Slo, slo_of
from wrkreport.core.stats import Interval
from wrkreport.report import rate_summary as summary
from wrkreport.report.rate_summary import added_phrase, added_words, capacity_lines, capacity_sentences, not_held_words, rate_summary_lines
from wrkreport.runs.rate_measurements import planned_rates

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # reads quick-rates-slo and variants of it

OBJECTIVE = Slo(99.0, 5.0)
T_975_DF1 = 12.706


def test_the_doctests_hold():
    assert doctest.testmod(summary, optionflags=doctest.ELLIPSIS).failed == 0


@pytest.mark.parametrize(
    "interval, said",
    [
        (Interval(0.17, -0.35, 0.68, 4), "no measurable difference at p99 (-0.350 to 0.680 ms)"),  # across 0: never 'adds'
        (Interval(-0.71, -0.95, -0.47, 4), "takes 0.710 ms off at p99 (0.470 to 0.950)"),  # below 0: never a negative 'adds'
        (Interval(0.0, 0.0, 0.0, 4), "no measurable difference at p99 (0 to 0 ms)"),
        (Interval(2.5, 1.9, 3.1, 4), "adds 2.50 ms at p99 (1.90 to 3.10)"),
        (None, "no figure at p99"),
    ],
)
def test_only_an_interval_above_zero_adds(interval, said):
    phrase = added_phrase(interval, "p99")
    assert phrase == said
    assert not phrase.startswith("adds -") and ("adds" not in phrase or interval.low > 0)


def cell(p50, p99, not_held=0, usable=4, held_in=4) -> RateCell:
    """Return an nginx-http cell at 1,000 req/s with these added latencies."""
    return RateCell("nginx-http", 1, 1000, 4, usable, not_held, 1000.0, 0.2, 0.5, 0.9, p50, p99, held_in=held_in)


def test_a_clause_per_setup():
    both = cell(Interval(0.1, 0.05, 0.15, 4), Interval(0.3, 0.1, 0.5, 4))
    assert added_words(both) == "nginx-http adds 0.100 ms at p50 (0.0500 to 0.150) and 0.300 ms at p99 (0.100 to 0.500)"
    mixed = cell(Interval(0.1, 0.05, 0.15, 4), Interval(0.17, -0.35, 0.68, 4))
    assert added_words(mixed) == "nginx-http: adds 0.100 ms at p50 (0.0500 to 0.150); no measurable difference at p99 (-0.350 to 0.680 ms)"


def test_a_rate_held_in_some_blocks_is_said_with_what_was_measured():
    assert not_held_words(cell(None, None, not_held=2, usable=2, held_in=2)) == (
        "nginx-http held it in 2 of 4 blocks (p50 0.200 ms, p99 0.500 ms there; nothing added)"
    )
    assert not_held_words(cell(None, None, not_held=4, usable=0, held_in=0)) == "nginx-http held it in none of its 4 blocks"
    assert not_held_words(cell(None, None, usable=0, held_in=0)) == "nginx-http has no usable measurement"


# --- Only the planned rates have a light-load line -------------------------------------------


def test_the_search_steps_have_no_light_load_line(tmp_path):
    run = slo_variant(tmp_path / "run", plan=[12000])
    measurements, _ = read_rate_run(run)
    cells = rate_cells(measurements, None, planned_rates(json.loads((run / "manifest.json").read_text())))
    lines = rate_summary_lines(cells)
    assert [line.split(" open loop")[0] for line in lines] == [
        "GOMAXPROCS=1 at 12,000 req/s offered,",
        "GOMAXPROCS=2 at 12,000 req/s offered,",
    ]
    assert len(rate_summary_lines([replace(c, planned=True) for c in cells])) == 8  # without a plan: every rate


# --- Capacity at the objective ------------------------------------------------------------------


@pytest.fixture(scope="module")
def quick_capacities(parsed_and_drawn_once):
    """Return the capacities of quick-rates-slo (one block: a capacity without interval, or a bound), by (setup, GOMAXPROCS)."""
    measurements, _ = read_rate_run(SLO_RUN)
    slo = slo_of(json.loads((SLO_RUN / "manifest.json").read_text())["parameters"]["slo"])
    return measurements, capacities(measurements, slo, ["go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix"])


def rps(value: float) -> str:
    """Return a rate as the sentences write it: three significant figures, thousands separated."""
    return f"{round(value, 2 - math.floor(math.log10(value))):,.0f}"


def p99_within(measurements, setup, gomaxprocs, rate) -> bool:
    """Return True when the measurement met the objective: rate held, every answer right, p99 within 5 ms (read from its file)."""
    m = next(m for m in measurements if (m.setup, m.gomaxprocs, m.rate) == (setup, gomaxprocs, rate))
    return m.usable and m.result.percentile_ms(99) <= 5


def test_one_block_is_said_without_an_interval_and_a_search_at_an_edge_as_a_bound(quick_capacities):
    measurements, found = quick_capacities
    lines = capacity_lines(found)
    assert len(lines) == 2 and max(len(row) for line in lines for row in line.splitlines()) <= 80
    said = " ".join(" ".join(lines).split())
    # nginx-http at GOMAXPROCS=1 met the objective at 12,000 and not at 18,000: where its p99 crosses 5 ms between them, one block.
    assert p99_within(measurements, "nginx-http", 1, 12000) and not p99_within(measurements, "nginx-http", 1, 18000)
    crossed = crossing_between(12000, 18000, *(measured_p99(measurements, "nginx-http", 1, r) for r in (12000, 18000)), 5.0)
    assert 12000 < crossed < 18000 and f"nginx-http carries {rps(crossed)} req/s (one block: no interval), " in said
    # nginx-fcgi-tcp missed it at 12,000, the lowest rate tried: at most.
    assert not p99_within(measurements, "nginx-fcgi-tcp", 1, 12000)
    go = crossing_between(
        24000, 32000, *(measured_p99(measurements, "go-http", 1, r) for r in (24000, 32000)), 5.0
    )  # go-http's, GOMAXPROCS=1
    assert f"nginx-fcgi-tcp carries at most 12,000 req/s (missed at the lowest rate tried), at most {12000 / go:.2f} of go-http's" in said
    # go-http at GOMAXPROCS=2 met it at every rate up to 32,000: at least.
    assert all(p99_within(measurements, "go-http", 2, r) for r in (12000, 18000, 24000, 32000))
    assert said.endswith("go-http carries at least 32,000 req/s (the objective held at the highest rate tried)")
    assert said.startswith(
        "GOMAXPROCS=1, capacity with p99 within 5 ms: nginx-http carries"
    )  # the objective, then the setups, the baseline last


def test_the_page_sentence_names_the_objective_and_each_gomaxprocs(quick_capacities):
    _, found = quick_capacities
    first, second = capacity_sentences(found)
    assert first.startswith("With p99 within 5 ms (GOMAXPROCS=1), nginx-http carries ") and first.endswith(".")
    assert second.startswith("With p99 within 5 ms (GOMAXPROCS=2), ")
    assert capacity_sentences([c for c in found if c.gomaxprocs == 1], several_gomaxprocs=False)[0].startswith(
        "With p99 within 5 ms, nginx-http"
    )


def test_two_blocks_give_an_interval_and_a_bound_met_in_some_blocks_says_in_how_many(tmp_path):
    measurements, _ = read_rate_run(slo_variant(tmp_path / "run", two_blocks=True))
    said = " ".join(" ".join(capacity_lines(capacities(measurements, OBJECTIVE))).split())
    # nginx-http's bracket: 12,000-18,000 in block 1, 18,000-24,000 in block 2 (each its crossing); the geometric mean with a t-interval on the logs.
    logs = [
        math.log(crossing_between(low, high, *(measured_p99(measurements, "nginx-http", 1, r, block) for r in (low, high)), 5.0))
        for block, (low, high) in ((1, (12000, 18000)), (2, (18000, 24000)))
    ]
    centre, half = sum(logs) / 2, T_975_DF1 * abs(logs[0] - logs[1]) / math.sqrt(2) / math.sqrt(2)
    assert f"nginx-http carries {rps(math.exp(centre))} req/s ({rps(math.exp(centre - half))}-{rps(math.exp(centre + half))})" in said
    assert "nginx-fcgi-tcp carries at most 12,000 req/s (missed at the lowest rate tried in 1 of 2 blocks)" in said
    # go-http held it up to 32,000 in one block (at least) and crossed between 24,000 and 32,000 in the other: at least the smaller
    go = crossing_between(24000, 32000, *(measured_p99(measurements, "go-http", 1, r, 1) for r in (24000, 32000)), 5.0)
    assert f"go-http carries at least {rps(go)} req/s (the objective held at the highest rate tried in 1 of 2 blocks)" in said


def made(setup: str, estimate: Estimate, blocks: tuple[BlockCapacity, ...], ratio: Estimate | None = None) -> Capacity:
    """Return a capacity at GOMAXPROCS=1 under p99 within 5 ms."""
    return Capacity(setup, 1, OBJECTIVE, estimate, blocks, ratio)


def test_a_ratio_with_its_interval_and_the_generators_ceiling_are_said_as_such():
    four = tuple(BlockCapacity(b, 18000.0, None, 17000, 19000, 5) for b in range(1, 5))
    nginx = made("nginx-http", Estimate(18412.0, 17105.0, 19820.0, None, 4), four, Estimate(0.8404, 0.7992, 0.8837, None, 4))
    behind = tuple(BlockCapacity(b, 24000.0, AT_LEAST, 24000, 25000, 3, 24600.0) for b in range(1, 5))
    go = made("go-http", Estimate(24000.0, None, None, AT_LEAST, 4), behind)
    assert capacity_sentences([go, nginx], several_gomaxprocs=False) == [
        "With p99 within 5 ms, nginx-http carries 18,400 req/s (17,100-19,800), 0.84 of go-http's (0.80-0.88); "
        "go-http carries at least 24,000 req/s (vegeta's ceiling here: it fell behind at 25,000)."
    ]


def test_a_ratio_that_cannot_be_told_says_why():
    one = (BlockCapacity(1, 6200.0, "at_most", None, 6200, 1),)
    fcgi = made("nginx-fcgi-tcp", Estimate(6200.0, None, None, "at_most", 1), one)
    assert capacity_sentences([fcgi], several_gomaxprocs=False) == [
        "With p99 within 5 ms, nginx-fcgi-tcp carries at most 6,200 req/s (missed at the lowest rate tried), "
        "no ratio to go-http's (no block measured both it and go-http)."
    ]
    go = made("go-http", Estimate(9000.0, None, None, "at_most", 1), (BlockCapacity(1, 9000.0, "at_most", None, 9000, 1),))
    assert capacity_sentences([go, fcgi], several_gomaxprocs=False) == [
        "With p99 within 5 ms, nginx-fcgi-tcp carries at most 6,200 req/s (missed at the lowest rate tried), "
        "no ratio to go-http's (the two bounds say nothing together); go-http carries at most 9,000 req/s (missed at the lowest rate tried)."
    ]


def test_no_objective_no_capacity_no_line(quick_capacities):
    measurements, _ = quick_capacities
    assert capacities(measurements, None) == [] and capacity_lines([]) == [] and capacity_sentences([]) == []
