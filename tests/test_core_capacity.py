"""Tests of wrkreport.core.capacity: the objective (--slo), step verdicts, the bracket and the search's next rate, a block's capacity or bound, and over blocks the estimate, its interval and its ratio.

The coverage of the intervals is simulated in test_core_capacity_coverage.py; a run's
measurements read into capacities in test_analysis_capacities.py.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import statistics
from pathlib import Path

import pytest
from scipy.stats import t as student_t

from helpers import rate_result
from wrkreport.core.capacity import (
    AT_LEAST,
    AT_MOST,
    DEFAULT_SLO,
    FAIL,
    GENERATOR,
    JITTER,
    MAX_SLO_MS,
    MAX_STEPS,
    OFF,
    PASS,
    PERCENTILES,
    RESOLUTION,
    RETRY,
    BlockCapacity,
    Slo,
    Step,
    block_capacity,
    bracket,
    combine,
    combine_ratio,
    next_rate,
    parse_slo,
    result_step,
    round_step,
    search_rng,
    search_steps,
    slo_of,
    step_verdict,
)
from wrkreport.core.errors import UsageError
from wrkreport.core.rate_checks import RATE_TOLERANCE, Expected, rate_checks
from wrkreport.parsers.vegeta import read_vegeta_file

HELLO = Expected(200, 12)  # the hello world's answer: 200 with a 12-byte body

VEGETA = Path(__file__).parent / "fixtures" / "vegeta"
OBJECTIVE = Slo(99, 5.0)


# --- the objective -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,percentile,ms",
    [
        ("p99=5ms", 99, 5.0),
        ("p50=500us", 50, 0.5),
        ("p99.9=2ms", 99.9, 2.0),
        ("p90=1.5ms", 90, 1.5),
        (f"p99={MAX_SLO_MS:g}ms", 99, MAX_SLO_MS),
    ],
)
def test_parse_slo_reads_a_percentile_and_a_duration(text, percentile, ms):
    found = parse_slo(text, "--slo")
    assert found == Slo(float(percentile), ms)
    assert parse_slo(found.label, "--slo") == found  # its label reads back as itself


def test_parse_slo_off_is_no_objective_and_the_default_is_one():
    assert parse_slo(OFF, "--slo") is None
    assert parse_slo(DEFAULT_SLO, "--slo") == Slo(99.0, 10.0)


@pytest.mark.parametrize(
    "text,says",
    [
        ("p101=5ms", "the percentile must be one of p50, p90, p99, p99.9"),
        ("p95=5ms", "the percentile must be one of"),
        ("p99=fast", "expected PERCENTILE=DURATION"),
        ("p99=-1ms", "expected PERCENTILE=DURATION"),
        ("p99=5", "expected PERCENTILE=DURATION"),
        ("p99=5s", "expected PERCENTILE=DURATION"),
        ("P99=5ms", "expected PERCENTILE=DURATION"),
        ("p99=0ms", "the duration must be above 0 and at most"),
        ("p99=0us", "the duration must be above 0 and at most"),
        (f"p99={MAX_SLO_MS + 1:g}ms", "the duration must be above 0 and at most"),
        ("", "expected PERCENTILE=DURATION"),
        (" p99=5ms", "expected PERCENTILE=DURATION"),
    ],
)
def test_parse_slo_refuses_with_one_line_naming_the_value(text, says):
    with pytest.raises(UsageError) as caught:
        parse_slo(text, "--slo")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"--slo {text!r}: ") and says in message


def test_label_words_and_record_of_an_objective():
    assert Slo(99, 5).label == "p99=5ms" and Slo(99, 5).words == "p99 within 5 ms"
    assert Slo(50, 0.5).label == "p50=500us" and Slo(50, 0.5).words == "p50 within 0.5 ms"
    assert Slo(99.9, 2).label == "p99.9=2ms" and Slo(99.9, 2).name == "p99.9"
    assert Slo(99, 5).record() == {"percentile": 99, "ms": 5} and isinstance(Slo(99, 5).record()["percentile"], int)
    assert Slo(99.9, 2).record() == {"percentile": 99.9, "ms": 2}
    for name, percentile in PERCENTILES.items():  # every objective survives the manifest (JSON) and --slo
        for ms in (0.25, 1.0, 7.5, 250.0):
            slo = Slo(percentile, ms)
            assert slo.name == name
            assert slo_of(json.loads(json.dumps(slo.record()))) == slo
            assert parse_slo(slo.label, "--slo") == slo


@pytest.mark.parametrize(
    "record",
    [
        None,
        "p99=5ms",
        [99, 5],
        {},
        {"percentile": 99},
        {"ms": 5},
        {"percentile": 98, "ms": 5},
        {"percentile": "99", "ms": 5},
        {"percentile": 99, "ms": "5"},
        {"percentile": 99, "ms": True},
        {"percentile": 99, "ms": 0},
        {"percentile": 99, "ms": -1},
        {"percentile": 99, "ms": MAX_SLO_MS + 1},
        {"percentile": 99, "ms": float("nan")},
        {"percentile": 99, "ms": None},
    ],
)
def test_slo_of_refuses_what_is_not_an_objective(record):
    assert slo_of(record) is None


def test_slo_of_reads_a_recorded_objective():
    assert slo_of({"percentile": 99, "ms": 5}) == Slo(99.0, 5.0)
    assert slo_of({"percentile": 99.9, "ms": 0.5, "other": 1}) == Slo(99.9, 0.5)
    assert slo_of({"percentile": 50.0, "ms": MAX_SLO_MS}) == Slo(50.0, MAX_SLO_MS)


# --- a step's verdict ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("held,behind,clean", list(itertools.product([True, False], repeat=3)))
@pytest.mark.parametrize("value_ms", [None, 0.1, OBJECTIVE.ms, OBJECTIVE.ms * 1.0001, 500.0])
def test_step_verdict_follows_the_rule(held, behind, clean, value_ms):
    within = value_ms is not None and value_ms <= OBJECTIVE.ms
    expected = PASS if held and clean and within else GENERATOR if not held and behind and clean and within else FAIL
    assert step_verdict(held, behind, clean, value_ms, OBJECTIVE) == expected


def test_step_verdict_at_the_objective_passes_and_just_above_fails():
    assert step_verdict(True, False, True, 5.0, Slo(99, 5.0)) == PASS
    assert step_verdict(True, False, True, math.nextafter(5.0, 6), Slo(99, 5.0)) == FAIL
    assert step_verdict(False, True, True, 5.0, Slo(99, 5.0)) == GENERATOR


# --- the bracket and the next rate ---------------------------------------------------------------------------------


def test_bracket_is_the_highest_pass_and_the_lowest_non_pass_above_it():
    assert bracket([]) == (None, None)
    steps = [Step(6000, PASS), Step(20000, FAIL), Step(12000, PASS), Step(16000, GENERATOR), Step(18000, FAIL)]
    low, above = bracket(steps)
    assert (low.rate, above.rate, above.verdict) == (12000, 16000, GENERATOR)
    assert bracket([Step(6000, PASS), Step(9000, PASS)]) == (Step(9000, PASS), None)
    assert bracket([Step(9000, FAIL), Step(6000, FAIL)]) == (None, Step(6000, FAIL))


def test_a_fail_below_a_pass_bounds_nothing():
    steps = [Step(6000, PASS), Step(8000, FAIL), Step(12000, PASS), Step(16000, FAIL)]
    low, above = bracket(steps)
    assert (low.rate, above.rate) == (12000, 16000)
    assert bracket(steps) == bracket([s for s in steps if s.rate != 8000])
    found = block_capacity(1, steps)
    assert found.bound is None and (found.low, found.high) == (12000, 16000)


def test_next_rate_falls_inside_the_bracket_at_the_jittered_point():
    for steps, high in (
        ([Step(6000, PASS)], 86000),
        ([Step(6000, PASS), Step(20000, FAIL)], 86000),
        ([Step(6000, PASS), Step(12000, PASS), Step(16000, GENERATOR), Step(30000, FAIL)], 50000),
    ):
        low, above = bracket(steps)
        top = above.rate if above is not None else high
        rates = set()
        for seed in range(200):
            draw = random.Random(seed).uniform(*JITTER)  # the draw next_rate makes
            rate = next_rate(steps, high, 3, random.Random(seed))
            assert low.rate < rate < top
            assert rate == round_step(math.exp((1 - draw) * math.log(low.rate) + draw * math.log(top)))
            share, rounding = math.log(rate / low.rate) / math.log(top / low.rate), math.log(1.005) / math.log(top / low.rate)
            assert JITTER[0] - rounding <= share <= JITTER[1] + rounding  # three significant figures move it by 0.5% at most
            rates.add(rate)
        assert len(rates) >= 10  # jittered, not one grid point


def test_next_rate_is_over_when_the_bracket_is_within_the_resolution():
    low = 10000
    inside = math.floor(low * RESOLUTION)
    assert next_rate([Step(low, PASS), Step(inside, FAIL)], 50000, 3, random.Random(1)) is None
    assert next_rate([Step(low, PASS), Step(inside + 2, FAIL)], 50000, 3, random.Random(1)) is not None
    assert next_rate([Step(low, PASS)], inside, 3, random.Random(1)) is None  # the untested upper end counts too


def test_next_rate_is_over_when_no_step_is_left():
    assert next_rate([Step(6000, PASS)], 86000, 1, random.Random(1)) is not None
    assert next_rate([Step(6000, PASS)], 86000, 0, random.Random(1)) is None
    assert next_rate([Step(6000, FAIL)], 86000, 0, random.Random(1)) is None
    assert next_rate([], 86000, 3, random.Random(1)) is None


def test_next_rate_looks_once_more_just_above_the_lowest_rate_when_nothing_passed():
    # a pause fails a measurement at any rate: the light load gets a second look (a new rate, so a new file) before the search gives up
    again = round_step(6200 * RETRY)
    assert 6200 < again <= 6200 * 1.05
    assert next_rate([Step(6200, FAIL)], 86000, 3, random.Random(1)) == again
    assert next_rate([Step(6200, GENERATOR)], 86000, 3, random.Random(1)) == again
    assert next_rate([Step(9000, FAIL), Step(6200, FAIL)], 86000, 3, random.Random(1)) == again
    assert next_rate([Step(6200, FAIL), Step(again, FAIL)], 86000, 3, random.Random(1)) is None  # failed twice: below it
    assert block_capacity(1, [Step(6200, FAIL), Step(again, FAIL)]).bound == AT_MOST
    assert next_rate([Step(10, FAIL)], 86000, 3, random.Random(1)) == 11  # a new rate even where 2% rounds away
    # passed the second time: the first fail is below a pass and the search goes on above it
    steps = [Step(6200, FAIL), Step(again, PASS)]
    assert again < next_rate(steps, 86000, 3, random.Random(1)) < 86000
    assert block_capacity(1, steps).bound == AT_LEAST


def test_next_rate_is_deterministic_with_a_seeded_rng():
    steps = [Step(6000, PASS), Step(20000, FAIL)]
    draws = [next_rate(steps, 86000, 3, search_rng("run-1", 1, block, "nginx-http", 1)) for block in range(1, 30)]
    again = [next_rate(steps, 86000, 3, search_rng("run-1", 1, block, "nginx-http", 1)) for block in range(1, 30)]
    assert draws == again
    assert len(set(draws)) > 10  # each block its own cut
    other_run = [next_rate(steps, 86000, 3, search_rng("run-2", 1, block, "nginx-http", 1)) for block in range(1, 30)]
    assert other_run != draws
    assert search_rng("s", 1, 1, "go-http", 1).random() != search_rng("s", 1, 1, "go-http", 2).random()
    assert search_rng("s", 1, 1, "go-http", 1).random() != search_rng("s", 2, 1, "go-http", 1).random()


@pytest.mark.parametrize(
    "low,high",
    [
        (6200, 24500),
        (6200, 36000),
        (6200, 51000),
        (6200, 86000),
        (100, 101),
        (100, 110),
        (100, 111),
        (1000, 1500),
        (10, 10_000_000),
        (1, 2),
    ],
)
def test_search_steps_are_the_halvings_of_the_log_bracket_to_the_resolution(low, high):
    steps = search_steps(low, high)
    width = math.log(high / low)
    enough = lambda n: width / 2**n <= math.log(RESOLUTION)  # noqa: E731
    assert 1 <= steps <= MAX_STEPS
    if steps < MAX_STEPS:
        assert enough(steps)
    assert steps == 1 or not enough(steps - 1)


def test_search_steps_of_no_range_is_one():
    assert search_steps(6200, 6200) == 1 and search_steps(9000, 6200) == 1 and search_steps(0, 6200) == 1 and search_steps(-5, 10) == 1


def test_a_search_on_a_sharp_capacity_ends_within_the_resolution_around_it():
    """The whole search on a setup that passes exactly below a capacity: its final bracket holds it, within RESOLUTION."""

    def search(capacity: float, block: int) -> BlockCapacity:
        steps, left = [Step(6200, PASS)], search_steps(6200, 86000)
        while (rate := next_rate(steps, 86000, left, search_rng("sharp", 1, block, "x", len(steps)))) is not None:
            left -= 1
            steps.append(Step(rate, PASS if rate <= capacity else FAIL))
        return block_capacity(block, steps)

    for capacity in (7000, 9100, 15000, 33333, 60000):
        for block in range(1, 21):
            found = search(capacity, block)
            assert found.bound is None and found.low <= capacity < found.high
            assert found.high <= found.low * RESOLUTION or found.steps == 1 + search_steps(6200, 86000)  # within it, or out of steps
    above = search(1e9, 1)  # the objective held at every rate tried: at least the highest
    assert above.bound == AT_LEAST and 6200 < above.rps == above.low < 86000


# --- a block's capacity, and over blocks ---------------------------------------------------------------------------


def test_block_capacity_is_the_geometric_middle_of_the_final_bracket():
    assert block_capacity(1, []) is None
    found = block_capacity(2, [Step(6000, PASS), Step(20000, FAIL), Step(12000, PASS), Step(16000, FAIL)])
    assert found == BlockCapacity(2, math.sqrt(12000 * 16000), None, 12000, 16000, 4)


def test_block_capacity_bounds():
    at_most = block_capacity(1, [Step(6200, FAIL), Step(6200, FAIL)])
    assert (at_most.bound, at_most.rps, at_most.low, at_most.high, at_most.steps) == (AT_MOST, 6200, None, 6200, 2)
    assert block_capacity(1, [Step(9000, FAIL), Step(6200, GENERATOR)]).rps == 6200  # the lowest rate tried
    at_top = block_capacity(1, [Step(6200, PASS), Step(30000, PASS), Step(60000, PASS)])
    assert (at_top.bound, at_top.rps, at_top.low, at_top.high) == (AT_LEAST, 60000, 60000, None)
    behind = block_capacity(1, [Step(6200, PASS), Step(30000, GENERATOR, 1.0, 24123.0), Step(20000, PASS)])
    assert (behind.bound, behind.rps, behind.low, behind.high, behind.generator_rps) == (AT_LEAST, 20000, 20000, 30000, 24123.0)
    # a generator step above a fail bounds nothing: the fail is the bracket's top
    failed = block_capacity(1, [Step(6200, PASS), Step(30000, GENERATOR), Step(20000, FAIL)])
    assert failed.bound is None and failed.rps == math.sqrt(6200 * 20000)


def blocks_of(*values, bound=None) -> list[BlockCapacity]:
    """Return block capacities 1, 2, ... of these values (all with this bound)."""
    return [BlockCapacity(i, v, bound, None, None, 5) for i, v in enumerate(values, 1)]


def t_interval_on_logs(values: list[float]) -> tuple[float, float, float]:
    """Return the geometric mean and its 95% Student t interval on the logs, computed here with scipy."""
    logs = [math.log(v) for v in values]
    centre, half = statistics.mean(logs), student_t.ppf(0.975, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(centre), math.exp(centre - half), math.exp(centre + half)


def test_combine_is_the_geometric_mean_with_a_t_interval_on_logs():
    assert combine([]) is None
    values = [18000.0, 21000.0, 19500.0, 16000.0]
    found = combine(blocks_of(*values))
    expected = t_interval_on_logs(values)
    assert (found.bound, found.blocks) == (None, 4)
    assert (found.value, found.low, found.high) == pytest.approx(expected, rel=1e-3)  # the module's t table, to 3 digits
    one = combine(blocks_of(17000.0))
    assert one.value == pytest.approx(17000.0) and (one.low, one.high, one.bound, one.blocks) == (None, None, None, 1)


def test_combine_of_bounds():
    mixed = blocks_of(18000.0, 21000.0, 19500.0)
    most = mixed[:1] + [BlockCapacity(2, 6200, AT_MOST, None, 6200, 2), BlockCapacity(3, 9000, AT_MOST, None, 9000, 2)]
    found = combine(most)
    assert (found.value, found.low, found.high, found.bound, found.blocks) == (9000, None, None, AT_MOST, 3)  # the largest at_most
    least = mixed[:1] + [BlockCapacity(2, 40000, AT_LEAST, 40000, None, 5), BlockCapacity(3, 30000, AT_LEAST, 30000, None, 5)]
    assert (combine(least).value, combine(least).bound) == (18000.0, AT_LEAST)  # the smallest of all the blocks' values
    both = [BlockCapacity(1, 40000, AT_LEAST, 40000, None, 5), BlockCapacity(2, 6200, AT_MOST, None, 6200, 2)]
    assert (combine(both).value, combine(both).bound) == (6200, AT_MOST)
    assert combine([BlockCapacity(1, 6200, AT_MOST, None, 6200, 2)]).bound == AT_MOST  # one block: its bound


def test_a_minority_of_bounded_blocks_widens_the_interval_instead_of_making_a_bound():
    # one start that failed the light load twice (a long pause) is one low value among three, not the setup's answer
    values = [18000.0, 21000.0, 6200.0]
    found = combine(blocks_of(18000.0, 21000.0) + [BlockCapacity(3, 6200, AT_MOST, None, 6200, 2)])
    assert found.bound is None and (found.value, found.low, found.high) == pytest.approx(t_interval_on_logs(values), rel=1e-3)
    assert found.high / found.low > combine(blocks_of(18000.0, 21000.0, 19500.0)).high / combine(blocks_of(18000.0, 21000.0, 19500.0)).low
    high = combine(blocks_of(18000.0, 21000.0) + [BlockCapacity(3, 40000, AT_LEAST, 40000, None, 5)])
    assert high.bound is None and high.value == pytest.approx(t_interval_on_logs([18000.0, 21000.0, 40000.0])[0], rel=1e-3)


def test_combine_ratio_pairs_by_block():
    mine = blocks_of(12000.0, 15000.0, 11000.0, 14000.0)
    theirs = list(reversed(blocks_of(20000.0, 24000.0, 19000.0, 23000.0, 99999.0)))  # any order; block 5 has no pair
    found = combine_ratio(mine, theirs)
    expected = t_interval_on_logs([12000 / 20000, 15000 / 24000, 11000 / 19000, 14000 / 23000])
    assert (found.bound, found.blocks) == (None, 4)
    assert (found.value, found.low, found.high) == pytest.approx(expected, rel=1e-3)
    # paired, the interval is narrower than the two sides' spreads allow: the block's luck cancels
    unpaired = t_interval_on_logs([12000 / 24000, 15000 / 19000, 11000 / 23000, 14000 / 20000])
    assert found.high / found.low < unpaired[2] / unpaired[1]
    assert combine_ratio(mine, []) is None
    assert combine_ratio(mine[:1], [BlockCapacity(7, 1.0, None, None, None, 1)]) is None  # no block in common


SIDES = {
    None: lambda value: blocks_of(value, value),
    AT_MOST: lambda value: [BlockCapacity(1, value, AT_MOST, None, value, 2), BlockCapacity(2, value * 3, None, None, None, 5)],
    AT_LEAST: lambda value: [BlockCapacity(1, value, AT_LEAST, value, None, 5), BlockCapacity(2, value * 3, None, None, None, 5)],
}


def possible(bound, value: float) -> list[float]:
    """Return true values a side with this estimate and bound allows (exactly it when no bound)."""
    return {None: [value], AT_MOST: [value / 4, value / 2, value], AT_LEAST: [value, value * 2, value * 4]}[bound]


@pytest.mark.parametrize("mine,theirs", list(itertools.product(SIDES, repeat=2)))
def test_combine_ratio_says_only_what_its_sides_bounds_imply(mine, theirs):
    setup, baseline = SIDES[mine](12000.0), SIDES[theirs](20000.0)
    found = combine_ratio(setup, baseline)
    ratios = [
        a / b
        for a in possible(combine(setup).bound, combine(setup).value)
        for b in possible(combine(baseline).bound, combine(baseline).value)
    ]
    point = combine(setup).value / combine(baseline).value
    if mine is None and theirs is None:
        assert found.bound is None and found.value == pytest.approx(12000 / 20000)
    elif min(ratios) < point < max(ratios):  # both sides bound it the same way: the ratio could be anything
        assert found is None
    else:
        assert found.value == pytest.approx(point) and (found.low, found.high, found.blocks) == (None, None, 2)
        assert found.bound == (AT_MOST if max(ratios) == pytest.approx(point) else AT_LEAST)


# --- result_step: real vegeta records and their checks ---------------------------------------------------------------


def fixture(name: str):
    """Return (record, its checks with a 12-byte body expected, its expect.json) of a real vegeta fixture."""
    result = read_vegeta_file(VEGETA / f"{name}.vegeta.csv.gz")
    return result, rate_checks(result, HELLO), json.loads((VEGETA / f"{name}.expect.json").read_text())


def test_result_step_of_a_rate_held_with_right_answers():
    result, checks, expect = fixture("go-http.gomaxprocs-1.block-1.run-1.rate-500")
    step = result_step(500, result, checks, OBJECTIVE)
    assert (step.rate, step.verdict) == (500, PASS)
    assert step.value_ms == pytest.approx(expect["p99_ms"]) and step.achieved_rps == pytest.approx(expect["achieved_rps"])
    # the objective's own percentile decides: just below this record's p99 fails, at it passes
    assert result_step(500, result, checks, Slo(99, expect["p99_ms"] * 0.99)).verdict == FAIL
    assert result_step(500, result, checks, Slo(99, result.p99_ms)).verdict == PASS
    p50 = result_step(500, result, checks, Slo(50, expect["p99_ms"] * 0.99))
    assert p50.verdict == PASS and p50.value_ms == pytest.approx(expect["p50_ms"])


def test_result_step_of_a_generator_that_fell_behind():
    result, checks, expect = fixture("fell-behind.rate-200")
    assert expect["achieved_rps"] / expect["offered_rps"] < 1 - RATE_TOLERANCE
    within = result_step(200, result, checks, Slo(99, 50))  # answers right, within: vegeta was the limit
    assert within.verdict == GENERATOR and within.achieved_rps == pytest.approx(expect["achieved_rps"])
    assert result_step(200, result, checks, Slo(99, expect["p99_ms"] * 0.9)).verdict == FAIL


@pytest.mark.parametrize("name", ["go-http-stalled.rate-200", "nginx-502.rate-100", "refused.rate-100"])
def test_result_step_fails_wrong_or_lost_answers_however_fast(name):
    result, checks, expect = fixture(name)
    assert expect["p99_ms"] < MAX_SLO_MS
    step = result_step(expect["offered_rps"], result, checks, Slo(99, MAX_SLO_MS))
    assert step.verdict == FAIL and step.value_ms == pytest.approx(expect["p99_ms"])


def test_result_step_of_a_backlog_or_no_record():
    growing = tuple(int(ms * 1e6) for ms in (1, 3, 6, 9, 12, 15, 18, 21, 24, 27))  # started at the rate, but a queue grew
    result = rate_result([1_000_000] * 1001, span_s=1.0, duration_s=1.2, offered=1000, window_p50_ns=growing)
    checks = rate_checks(result, HELLO)
    assert [c.name for c in checks if c.status == "fail"] == ["rate-held"]
    assert result_step(1000, result, checks, OBJECTIVE).verdict == FAIL  # not behind: the server's backlog, not the generator
    assert result_step(1000, None, (), OBJECTIVE) == Step(1000, FAIL)
    held = rate_result([1] * 1001, 1.0, 1000)
    warned = rate_checks(held, HELLO)  # no CPU record: the generator check warns
    assert [c.status for c in warned] == ["pass", "pass", "pass", "warn"]
    assert result_step(1000, held, warned, OBJECTIVE).verdict == PASS  # a warning is no fail
