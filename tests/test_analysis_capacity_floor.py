"""The machine's own floor (analysis/capacity_floor.py): light-load seconds of a real run, and runs made by hand whose light load pauses."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from helpers import CAPACITY_LADDER, rate_result, read_rate_run
from wrkreport.analysis.capacities import capacities
from wrkreport.analysis.capacity_floor import FLOOR_SHARE, LIGHT_SHARE, machine_floor, round_up
from wrkreport.core.capacity import Slo
from wrkreport.core.rate_checks import Expected, rate_checks
from wrkreport.report.files import floor_records
from wrkreport.report.rate_summary import capacity_lines, capacity_sentences
from wrkreport.report.ratepage import capacity_rows, floor_sentences
from wrkreport.runs.rate_measurements import RateMeasurement

HELLO = Expected(200, 12)
OBJECTIVE = Slo(99.0, 10.0)


def real() -> tuple[list[RateMeasurement], dict[str, float]]:
    """Return the real ladder run's measurements and its capacities at p99 within 10 ms (go-http's and nginx-http's)."""
    measurements, _ = read_rate_run(CAPACITY_LADDER)
    return measurements, {c.setup: c.estimate.value for c in capacities(measurements, OBJECTIVE)}


def test_the_floor_counts_every_second_at_or_below_half_a_setups_capacity_in_a_real_run():
    measurements, found = real()
    floor = machine_floor(measurements, found, 1, OBJECTIVE)
    light = [m for m in measurements if not m.capacity_check and m.rate <= LIGHT_SHARE * found[m.setup]]
    assert light and floor.seconds == sum(len(m.result.second_percentiles_ns) for m in light)
    assert (floor.low_rps, floor.high_rps) == (min(m.rate for m in light), max(m.rate for m in light))
    p99s = sorted(row[2] / 1e6 for m in light for row in m.result.second_percentiles_ns)
    assert floor.missed == sum(p > 10.0 for p in p99s) == 0 and not floor.inside and floor.suggested == ()
    # an objective half of those seconds miss: inside, with objectives that clear the worst second by half again
    middle = Slo(99.0, p99s[len(p99s) // 2])
    inside = machine_floor(measurements, found, 1, middle)
    assert inside.missed == sum(p > middle.ms for p in p99s) >= 2 and inside.inside
    assert inside.suggested[0] == Slo(99.0, round_up(1.5 * p99s[-1])) and inside.suggested[1].percentile == 90.0
    assert "a capacity at this objective measures the machine; p99=" in inside.words()


def light_run(paused: int, of: int = 20) -> list[RateMeasurement]:
    """Return a hand-made run: go-http's light-load seconds at 1,000 req/s (`paused` of `of` with a p99 of 15 ms, the rest 1 ms), and
    its search steps near its knee at 8,000 (within) and 9,000 req/s (over), one block each."""
    found = []
    for block in range(1, of + 1):
        slow = block <= paused
        light = [1_000_000] * 980 + [15_000_000 if slow else 1_000_000] * 21
        found.append(
            RateMeasurement("go-http", 1, block, 1000, f"l{block}", r := rate_result(light, offered=1000), tuple(rate_checks(r, HELLO)))
        )
        for rate, ms in ((8000, 6.0), (9000, 14.0)):
            r = rate_result([int(ms * 1e6)] * (rate + 1), offered=rate)
            found.append(RateMeasurement("go-http", 1, block, rate, f"s{block}.{rate}", r, tuple(rate_checks(r, HELLO)), search_high=12000))
    return found


@pytest.mark.parametrize("paused", [0, 1, 2, 8])
def test_the_objective_is_inside_the_floor_when_a_tenth_of_the_light_seconds_miss_it(paused):
    run = light_run(paused)
    (go,) = capacities(run, OBJECTIVE)
    floor = go.floor
    assert (floor.seconds, floor.missed) == (20, paused) and floor.p50_ms == pytest.approx(1.0)
    assert floor.inside == (paused >= 2 and paused >= FLOOR_SHARE * 20)
    record = floor_records([go])[0]
    assert record["inside"] == floor.inside and record["missed"] == paused and json.loads(json.dumps(record)) == record
    sentence, line = capacity_sentences([go])[0], " ".join(capacity_lines([go]))
    row = capacity_rows([go])[0][2]
    if floor.inside:  # said before the capacity, and the capacity marked; p99=30ms clears the 15-ms seconds by half again
        assert sentence.startswith(f"Warning: this machine's own pauses put p99 above 10 ms in {paused} of 20 seconds at 1,000 req/s")
        assert "p99=30ms or p90=2ms would measure the setups" in sentence and line.startswith("Warning: this machine's own pauses")
        assert row.endswith("(inside this machine's floor: it measures the machine)") and floor_sentences([go]) == ""
    else:  # said after the objective's sentence, as a floor it sits above
        assert sentence.startswith("With p99 within 10 ms") and "Warning" not in line and "floor" not in row
        assert (
            floor_sentences([go])
            == f" At light load (1,000 req/s) p99 was within 10 ms in {20 - paused} of 20 seconds: the objective sits above this machine's own pauses."
        )


def test_a_rate_not_held_at_light_load_misses_every_second_and_wrong_answers_are_not_the_machines():
    run = light_run(0)
    first = run[0]
    behind = rate_result([1_000_000] * 600, offered=1000)  # 600 of 1,000 requests: not held
    wrong = rate_result([1_000_000] * 1001, offered=1000, statuses=((500, 1001),))
    run[0] = replace(first, result=behind, checks=tuple(rate_checks(behind, HELLO)))
    run[3] = replace(run[3], result=wrong, checks=tuple(rate_checks(wrong, HELLO)))
    floor = capacities(run, OBJECTIVE)[0].floor
    assert not run[0].held and (floor.seconds, floor.missed) == (19, 1)  # block 2's answers were wrong: left out


def test_round_up_gives_the_next_round_objective():
    assert [round_up(v) for v in (0.9, 1.0, 1.01, 2.5, 4.0, 7.5, 28.5, 120.0)] == [1.0, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 200.0]
