"""Tests of wrkreport.analysis.capacities: a run's fixed-rate measurements read as the search read them, per setup and GOMAXPROCS its capacity, its ratio to the baseline's, the generator's ceiling and the results.json record."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import CAPACITY_LADDER, rate_result, read_rate_run
from wrkreport.analysis.capacities import Capacity, block_steps, capacities, generator_ceiling
from wrkreport.core.capacity import (
    AT_LEAST,
    FAIL,
    PASS,
    Slo,
    block_capacity,
    combine,
    combine_ratio,
    next_rate,
    result_step,
    search_rng,
    search_steps,
)
from wrkreport.core.rate_checks import Expected, rate_checks
from wrkreport.parsers.vegeta import read_vegeta_file
from wrkreport.report.rate_summary import check_words
from wrkreport.runs.rate_measurements import RateMeasurement

HELLO = Expected(200, 12)  # the hello world's answer: 200 with a 12-byte body

OBJECTIVE = Slo(99.0, 5.0)
OBJECTIVE_10MS = Slo(99.0, 10.0)  # capacity-ladder's


def measured(setup: str, block: int, rate: int, p99_ms: float, share: float = 1.0, gomaxprocs: int = 1) -> RateMeasurement:
    """Return a measurement at rate whose every latency is p99_ms, vegeta starting share of the rate (checks from rate_checks)."""
    requests = max(2, round(rate * share)) + 1
    result = rate_result([int(p99_ms * 1e6)] * requests, span_s=1.0, offered=rate)
    return RateMeasurement(setup, gomaxprocs, block, rate, f"{setup}.{block}.{rate}", result, tuple(rate_checks(result, HELLO)))


def knee_run(setups: dict[str, int], blocks: int, gomaxprocs: int = 1) -> list[RateMeasurement]:
    """Return the measurements of the search per setup and block, from 100 to 1,000 req/s: p99 1 ms up to the setup's capacity (setups; 2% higher each block), 9 ms above."""
    found = []
    for block in range(1, blocks + 1):
        for setup, capacity in setups.items():
            steps, ran = [], []
            left = search_steps(100, 1000)
            rate = 100
            while rate is not None:
                m = measured(setup, block, rate, 1.0 if rate <= capacity * (1 + 0.02 * block) else 9.0, gomaxprocs=gomaxprocs)
                ran.append(m)
                steps.append(result_step(m.rate, m.result, m.checks, OBJECTIVE))
                rate = next_rate(steps, 1000, left, search_rng("knee", gomaxprocs, block, setup, len(steps)))
                left -= 1
            found += ran
    return found


def test_capacities_recomputes_the_search_from_the_measurements():
    run = knee_run({"nginx-http": 300, "go-http": 600}, blocks=3) + knee_run({"go-http": 500}, blocks=3, gomaxprocs=2)
    found = capacities(run, OBJECTIVE)
    assert [(c.setup, c.gomaxprocs) for c in found] == [("go-http", 1), ("nginx-http", 1), ("go-http", 2)]
    steps = block_steps(run, OBJECTIVE)
    for c in found:
        blocks = [block_capacity(b, steps[(c.setup, c.gomaxprocs)][b], slo=OBJECTIVE) for b in (1, 2, 3)]
        assert list(c.blocks) == blocks and c.estimate == combine(blocks)
        capacity = {"nginx-http": 300, "go-http": 600 if c.gomaxprocs == 1 else 500}[c.setup]
        assert all(b.bound is None and b.low <= capacity * (1 + 0.02 * b.block) < b.high for b in blocks)
    go, nginx = found[0], found[1]
    assert go.ratio is None and go.baseline is None and nginx.baseline == "go-http"
    assert nginx.ratio == combine_ratio(list(nginx.blocks), list(go.blocks))
    assert capacities(run, None) == []
    assert [c.setup for c in capacities(run, OBJECTIVE, setup_order=["nginx-http", "go-http"])][:2] == ["nginx-http", "go-http"]


def test_block_steps_keep_the_order_measured_per_block():
    run = [
        measured("go-http", 2, 100, 1.0),
        measured("go-http", 1, 100, 1.0),
        measured("go-http", 2, 400, 9.0),
        measured("go-http", 2, 200, 1.0),
    ]
    steps = block_steps(run, OBJECTIVE)
    assert [s.rate for s in steps[("go-http", 1)][2]] == [100, 400, 200] and [s.verdict for s in steps[("go-http", 1)][2]] == [
        PASS,
        FAIL,
        PASS,
    ]
    assert [s.rate for s in steps[("go-http", 1)][1]] == [100]


def test_the_generator_ceiling_is_the_median_of_what_vegeta_managed_within_the_objective():
    run = [
        measured("go-http", 3, 100, 1.0),
        measured("go-http", 3, 1000, 9.0, share=0.2),  # behind but over the objective: a fail
        measured("go-http", 1, 100, 1.0),
        measured("go-http", 1, 1000, 1.0, share=0.5),  # behind, within: 500 req/s
        measured("go-http", 4, 100, 1.0),
        measured("go-http", 4, 1000, 1.0, share=0.95),
        measured("go-http", 2, 100, 1.0),
        measured("go-http", 2, 1000, 1.0, share=0.6),
    ]
    blocks = block_steps(run, OBJECTIVE)[("go-http", 1)]
    managed = generator_ceiling(blocks)
    assert sorted(managed) == pytest.approx([500.0, 600.0, 950.0])
    (found,) = capacities(run, OBJECTIVE)
    assert found.generator_rps == pytest.approx(600.0)  # the median, not the mean (683)
    assert [b.block for b in found.blocks] == [1, 2, 3, 4]  # by block, whatever order they ran in
    assert [b.bound for b in found.blocks] == [AT_LEAST, AT_LEAST, None, AT_LEAST] and found.estimate.bound == AT_LEAST
    assert found.blocks[0].generator_rps == pytest.approx(500.0)


def test_a_capacity_record():
    run = knee_run({"nginx-http": 300, "go-http": 600}, blocks=3)
    go, nginx = capacities(run, OBJECTIVE)
    record = nginx.record()
    assert record["setup"] == "nginx-http" and record["slo"] == {"percentile": 99, "ms": 5.0} and record["baseline"] == "go-http"
    assert record["capacity_rps"] == round(nginx.estimate.value) and record["ci_low"] == round(nginx.estimate.low)
    assert record["ratio"] == round(nginx.ratio.value, 4) and record["ratio_ci_high"] == round(nginx.ratio.high, 4)
    assert [b["bracket"] for b in record["block_capacities"]] == [[b.low, b.high] for b in nginx.blocks]
    assert "ratio" not in go.record() and go.record()["bound"] is None
    assert json.loads(json.dumps(record)) == record
    assert Capacity("nginx-https", 1, OBJECTIVE, go.estimate, go.blocks).baseline == "go-https"


def test_the_check_is_the_measurement_at_the_capacity_read_from_its_file_and_not_a_step():
    measurements, _ = read_rate_run(CAPACITY_LADDER)
    checks = [m for m in measurements if m.capacity_check]
    found = {c.setup: c for c in capacities(measurements, OBJECTIVE_10MS)}
    assert {m.setup for m in checks} == set(found) == {"go-http", "nginx-http"}
    for m in checks:
        c = found[m.setup]
        p99 = m.result.percentile_ms(99)
        assert (c.check.offered_rps, c.check.percentile_ms, c.check.held) == (m.rate, p99, m.held)
        assert c.check.met == (m.held and p99 <= 10.0 and not [f for f in m.failed if f.name != "rate-held"])
        assert c.check.record() == {
            "offered_rps": m.rate,
            "percentile_ms": round(p99, 3),
            "held": m.held,
            "met": c.check.met,
            "span_s": round(m.result.span_s, 3),
            "seconds": None,  # a run before 2026-12-07 (no check_share): judged by the whole attack
            "seconds_met": None,
        }
        assert c.record()["checks"] == [c.check.record()] and c.record()["sustained_rps"] == (m.rate if c.check.met else None)
        # not a step of the search: the blocks' capacities are those of the measurements without it
        without = capacities([x for x in measurements if x is not m], OBJECTIVE_10MS)
        assert next(x for x in without if x.setup == m.setup).blocks == c.blocks and c.record()["check"] == c.check.record()
    # this run's: go-http fell behind at its capacity (a backlog), nginx-http met the objective there
    assert not found["go-http"].check.held and check_words(found["go-http"]).startswith("at 3,700 req/s: not held (p99 ")
    assert found["nginx-http"].check.met and check_words(found["nginx-http"]) == "at 3,280 req/s: p99 4.88 ms, within"


def test_checks_after_a_miss_are_kept_in_order_and_the_highest_that_met_is_the_sustained_rate():
    # The run's go-http check (3,700 req/s, not held) followed by two lower ones made from its real measurements: a miss
    # (block 4's 3,540 step, as measured) and a pass (its 970 light-load point); a check of an earlier block is left out.
    measurements, _ = read_rate_run(CAPACITY_LADDER)
    go = [m for m in measurements if m.setup == "go-http"]
    first = next(m for m in go if m.capacity_check)
    lower = [replace(next(m for m in go if (m.block, m.rate) == (4, rate)), capacity_check=True, search_high=None) for rate in (3540, 970)]
    earlier = replace(next(m for m in go if (m.block, m.rate) == (3, 970)), capacity_check=True, search_high=None)
    kept = [m for m in measurements if not (m.setup == "go-http" and m.block == 4 and m.rate in (3540, 970))]
    found = next(c for c in capacities([earlier, *kept, *lower], OBJECTIVE_10MS) if c.setup == "go-http")
    assert [c.offered_rps for c in found.checks] == [3700, 3540, 970] and found.check.offered_rps == first.rate
    assert [c.met for c in found.checks] == [False, found.checks[1].met, True]
    assert (
        found.sustained.offered_rps == (3540 if found.checks[1].met else 970)
        and found.record()["sustained_rps"] == found.sustained.offered_rps
    )
    assert check_words(found).startswith("at 3,700 req/s: not held (p99 ") and "; at 970: p99 " in check_words(found)


TEN_SECONDS = Path(__file__).parent / "fixtures" / "vegeta" / "ten-seconds.rate-500.vegeta.csv.gz"


@pytest.mark.parametrize("within", [10, 9, 8, 7])
def test_a_check_of_ten_seconds_is_met_when_the_objective_held_in_eight_of_them(within):
    """A real 10-s attack as go-http's capacity check: with the run's check_share (0.9) it is met when its percentile was within the
    objective in at least 8 of its 10 seconds (capacity_check.seconds_needed), whatever the whole attack's; the words say how many."""
    result = read_vegeta_file(TEN_SECONDS)
    p99s = sorted(values[2] for values in result.second_percentiles_ns)
    objective = Slo(99.0, (p99s[within - 1] if within == 10 else (p99s[within - 1] + p99s[within]) / 2) / 1e6)
    measurements, _ = read_rate_run(CAPACITY_LADDER)
    check = replace(next(m for m in measurements if m.setup == "go-http" and m.capacity_check), result=result, rate=500)
    check = replace(check, checks=tuple(rate_checks(result, HELLO)))
    runs = [m for m in measurements if not (m.setup == "go-http" and m.capacity_check)] + [check]
    found = next(c for c in capacities(runs, objective, check_share=0.9) if c.setup == "go-http")
    assert (found.check.seconds, found.check.seconds_met, found.check.met) == (10, within, within >= 8)
    assert found.record()["checks"][0]["seconds_met"] == within and found.record()["checks"][0]["seconds"] == 10
    assert check_words(found).startswith(f"at 500 req/s for 10 s: {within} of 10 seconds within {objective.ms:g} ms (p99 of all ")
    assert check_words(found).endswith("met" if within >= 8 else "missed")
    old = next(c for c in capacities(runs, objective) if c.setup == "go-http")  # no check_share: the whole attack's p99
    assert old.check.seconds is None and old.check.met == (result.percentile_ms(99) <= objective.ms)
