"""Capacity at a latency objective: the highest offered rate a setup holds with a percentile of latency within an objective (--slo).

The search, per setup, GOMAXPROCS value and block (one start of the servers): the
phase's planned rates are measured first (the light-load point); each measurement is a
step with a verdict (step_verdict): `pass` when the rate was held (rate_checks.rate_held_check),
every answer right, none lost and the objective's percentile within it; `generator` when
vegeta fell behind its schedule while the answers were right and within the objective (the
load generator, not the server, was the limit); `fail` otherwise. The bracket is the
highest passing rate and the lowest rate above it that did not pass (bracket); a step that
failed below a passing one bounds nothing (a pause fails a measurement at any rate).

The first block of a setup knows nothing yet: a bisection from the light-load rate to the
setup's closed-loop req/s whose cut is jittered, a random point between 30% and 70% of the
way on a log scale (next_rate), until the bracket's ends are within RESOLUTION or after its
steps. Every later block starts where the earlier ones ended (ladder_next): four rates
LADDER_STEP apart around the geometric mean of the earlier blocks' capacities, shifted by a
random share of a step per block (each block's rates its own), then one rate past an edge
when the bracket lies outside them (at most MAX_EDGE, the step doubling each time: a start
whose capacity lies 30-50% from the earlier blocks' is still bracketed, where steps of 10%
would end the search short of it and pull the block's value towards the others'). A pause at one rate moves a block's
bracket at most one step of the ladder down (nothing when a rung above it passes), where it could stop a
bisection far below the knee; and the
steps go where the capacity is, so more blocks fit in the same time. When nothing passed,
the search measures just above the lowest rate once more before it gives up.

A block's capacity is where the objective's percentile crosses the objective inside its
final bracket, log percentile interpolated on log rate (crossing_rate); a bound when the
search met an edge: `at_most` the lowest rate tried when nothing passed, `at_least` the
highest passing rate when nothing above it failed (the objective held at the highest rate
tried) or when what stopped it was the generator. It estimates the rate at which one 1-s
measurement meets the objective half the time: a typical second, not a margin. Over
blocks, the capacity is the geometric mean of the blocks' with a 95% Student-t interval on
their logs, blocks - 1 degrees of freedom (core.stats.ratio_interval), as every other
interval of the tool: the start-to-start spread and the search's own noise are both in the
spread of the blocks' values. A setup's ratio to its baseline pairs the two by block. The
coverage of both, with per-measurement noise, per-start effects, pauses and a knee like the
measured one, is simulated in tests/test_core_capacity_coverage.py, beside the
bisection in every block with the bracket's middle (the estimator before the ladder), and
benchmarks/capacity_designs.py prints the widths. Standard library only: the driver's
helper runs the search.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

from ..core.errors import UsageError
from ..core.rate_checks import RATE_TOLERANCE
from ..core.rate_result import RateResult
from ..core.records import Check
from ..core.stats import ratio_interval
from ..core.units import round_figures

PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99.9": 99.9}
# The default objective. The p99 of one 1-s measurement on a 2-core machine shared with vegeta
# wanders over 1.0-8.7 ms at loads below the knee (a quick run: 31 held measurements) and
# jumps to 33-169 ms past it, where a queue forms: 10 ms sits between the two, so the
# capacity found is where queueing starts, not where a chance pause happened to fall (at
# 5 ms, a quarter of the measurements below the knee missed it).
DEFAULT_SLO = "p99=10ms"
OFF = "off"
MAX_SLO_MS = 60_000.0
RESOLUTION = 1.10  # the search stops when its bracket's ends are within 10% of each other
MAX_STEPS = 6  # search steps per setup and block at most (besides the planned rates)
# The search's upper end is this much above the setup's closed-loop req/s: open loop at the
# connection cap can carry about what wrk carried with as many connections, and a search that
# stopped below wrk's figure would say "at least" for a capacity it could have bracketed.
HEADROOM = 1.2
JITTER = (0.3, 0.7)  # where between the bracket's ends (log scale) a bisection's next step falls, drawn uniformly
RETRY = 1.02  # the second look when nothing passed: this much above the lowest rate (a new rate: a new file name)
# A later block's ladder: rates LADDER_STEP apart at these offsets around the earlier blocks'
# capacity (plus the block's own random share of a step), then up to MAX_EDGE rates past an edge.
# At 10% apart the crossing is interpolated between neighbours where the p99 curve is nearly
# straight on a log-log scale; four rates hold a block's crossing (its own start's luck and
# the second's noise: about +/-10%) inside them most of the time (benchmarks/capacity_designs.py).
LADDER_STEP = 1.10
LADDER = (-1, 0, 1, 2)
MAX_EDGE = 3
FAILED_MS = 10_000.0  # the percentile a failed step without one counts with in the interpolation
PASS, FAIL, GENERATOR = "pass", "fail", "generator"
AT_LEAST, AT_MOST = "at_least", "at_most"
SLO_TEXT = re.compile(r"(?P<name>p[0-9.]+)=(?P<value>[0-9]+(?:\.[0-9]+)?)(?P<unit>ms|us)", re.A)


@dataclass(frozen=True)
class Slo:
    """A latency objective: this percentile of latency within this many milliseconds."""

    percentile: float
    ms: float

    @property
    def name(self) -> str:
        """Return the percentile's name: 'p99', 'p99.9'."""
        return f"p{self.percentile:g}"

    @property
    def label(self) -> str:
        """Return the objective as --slo takes it: 'p99=5ms', 'p50=500us'."""
        return f"{self.name}={self.ms:g}ms" if self.ms >= 1 else f"{self.name}={self.ms * 1000:g}us"

    @property
    def words(self) -> str:
        """Return the objective in words: 'p99 within 5 ms', 'p50 within 0.5 ms'."""
        return f"{self.name} within {self.ms:g} ms"

    def record(self) -> dict:
        """Return the objective for the manifest and results.json: {'percentile': 99, 'ms': 5}."""
        return {"percentile": int(self.percentile) if float(self.percentile).is_integer() else self.percentile, "ms": self.ms}


def parse_slo(text: str, source: str) -> Slo | None:
    """Return the objective of an --slo value, None for 'off'; a UsageError says what is wrong.

    >>> parse_slo("p99=5ms", "--slo"), parse_slo("p50=500us", "--slo").label, parse_slo("off", "--slo")
    (Slo(percentile=99.0, ms=5.0), 'p50=500us', None)
    >>> parse_slo("p101=5ms", "--slo")
    Traceback (most recent call last):
    wrkreport.core.errors.UsageError: --slo 'p101=5ms': the percentile must be one of p50, p90, p99, p99.9
    """
    if text == OFF:
        return None
    match = SLO_TEXT.fullmatch(text)
    if match is None:
        raise UsageError(f"{source} {text!r}: expected PERCENTILE=DURATION, e.g. {DEFAULT_SLO} or p50=500us (ms or us), or {OFF}")
    if match["name"] not in PERCENTILES:
        raise UsageError(f"{source} {text!r}: the percentile must be one of {', '.join(PERCENTILES)}")
    ms = float(match["value"]) / (1000 if match["unit"] == "us" else 1)
    if not 0 < ms <= MAX_SLO_MS:
        raise UsageError(f"{source} {text!r}: the duration must be above 0 and at most {MAX_SLO_MS / 1000:g} s")
    return Slo(PERCENTILES[match["name"]], ms)


def slo_of(record: object) -> Slo | None:
    """Return the objective a manifest recorded ({'percentile': 99, 'ms': 5}), None when it has none or it is not one."""
    if not isinstance(record, dict):
        return None
    percentile, ms = record.get("percentile"), record.get("ms")
    if percentile not in PERCENTILES.values() or isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 < ms <= MAX_SLO_MS:
        return None
    return Slo(float(percentile), float(ms))


@dataclass(frozen=True)
class Step:
    """One measurement of a setup in a block, as the search reads it."""

    rate: int
    verdict: str  # PASS, FAIL or GENERATOR
    value_ms: float | None = None  # the objective's percentile of latency
    achieved_rps: float | None = None
    seconds: int | None = None  # a capacity check judged by its seconds (capacity_check.check_step): its whole seconds
    seconds_met: int | None = None  # and those within the objective


def step_verdict(held: bool, behind: bool, clean: bool, value_ms: float | None, slo: Slo, within: bool | None = None) -> str:
    """Return a step's verdict: pass (held, clean, within), generator (vegeta behind, clean, within) or fail.

    held: the rate was sustained; behind: vegeta started fewer requests than asked; clean:
    every answer right and none lost.

    >>> objective = Slo(99, 5)
    >>> step_verdict(True, False, True, 4.9, objective), step_verdict(False, True, True, 1.0, objective)
    ('pass', 'generator')
    >>> step_verdict(True, False, True, 5.1, objective), step_verdict(False, True, True, 9.0, objective), step_verdict(True, False, False, 1.0, objective)
    ('fail', 'fail', 'fail')
    """
    if within is None:  # a step's: its percentile against the objective (a capacity check's is said by its seconds)
        within = value_ms is not None and value_ms <= slo.ms
    if not (clean and within):
        return FAIL
    if held:
        return PASS
    return GENERATOR if behind else FAIL


def bracket(steps: list[Step]) -> tuple[Step | None, Step | None]:
    """Return (the highest passing step, the lowest step above it that did not pass): either None when there is none.

    A step that failed below a passing one is noise on the way and bounds nothing.
    """
    passed = [s for s in steps if s.verdict == PASS]
    low = max(passed, key=lambda s: s.rate) if passed else None
    above = [s for s in steps if s.verdict != PASS and (low is None or s.rate > low.rate)]
    return low, (min(above, key=lambda s: s.rate) if above else None)


def search_steps(low: float, high: float) -> int:
    """Return the steps a search from low to high takes to bring its bracket within RESOLUTION (1 to MAX_STEPS).

    >>> search_steps(6200, 24500), search_steps(6200, 86000), search_steps(100, 101)
    (4, 5, 1)
    """
    if not 0 < low < high:
        return 1
    return max(1, min(MAX_STEPS, math.ceil(math.log2(math.log(high / low) / math.log(RESOLUTION)))))


def round_step(rate: float) -> int:
    """Return a search rate rounded to three significant figures (at least 1 req/s).

    >>> round_step(17345.2), round_step(987.6), round_step(42.4)
    (17300, 988, 42)
    """
    return round_figures(rate, 3)


def next_rate(steps: list[Step], high: int, left: int, rng: random.Random) -> int | None:
    """Return the next rate to measure, or None when the search is over.

    steps: the block's measurements of the setup so far (planned rates first); high: the
    rate above which the setup cannot hold (its closed-loop req/s), an untested upper end;
    left: search steps still allowed. Over when nothing passed in two steps (the capacity is
    below the lowest rate), no step is left, or the bracket is within RESOLUTION. When
    nothing passed, the lowest rate gets one more look, just above it (RETRY: a new rate,
    so a new file): a pause during the light-load point would otherwise end the block's
    search at a bound far below the knee; when the failure was real, the second look fails
    too and the bound stands.
    """
    low, above = bracket(steps)
    if left <= 0 or not steps:
        return None
    if low is None:
        return retry_rate(steps)
    top = min(above.rate, high) if above is not None else high
    if top <= low.rate * RESOLUTION:
        return None
    share = rng.uniform(*JITTER)
    rate = round_step(math.exp((1 - share) * math.log(low.rate) + share * math.log(top)))
    return rate if low.rate < rate < top else None


def retry_rate(steps: list[Step]) -> int | None:
    """Return the one more look when nothing passed: just above the lowest rate (RETRY, a new rate), None once it was taken (the bound stands)."""
    lowest = min(s.rate for s in steps)
    again = max(lowest + 1, round_step(lowest * RETRY))
    return None if any(lowest < s.rate <= again for s in steps) else again


def search_rng(seed: object, gomaxprocs: int, block: int, setup: str, step: int) -> random.Random:
    """Return the random draws of one search step, from the run's seed (a run can be replayed)."""
    return random.Random(f"{seed}:capacity:{gomaxprocs}:{block}:{setup}:{step}")


@dataclass(frozen=True)
class BlockCapacity:
    """One block's capacity of one setup: its estimate (req/s), or a bound, and what the search saw."""

    block: int
    rps: float
    bound: str | None  # None, AT_LEAST or AT_MOST
    low: int | None  # the bracket: the highest passing rate, the lowest one above it that did not pass
    high: int | None
    steps: int
    generator_rps: float | None = None  # the rate vegeta managed when it fell behind at the bracket's top


def crossing_rate(low: Step, above: Step, slo: Slo | None) -> float:
    """Return where the objective's percentile reaches the objective between a passing step and the step above it that did not pass.

    Log percentile interpolated on log rate; a step above without a percentile (no
    record) counts as FAILED_MS. The bracket's geometric middle without an objective, or
    when the step above was within it (it failed for another reason: an error, a rate not
    held).

    >>> objective = Slo(99, 10)
    >>> round(crossing_rate(Step(20000, PASS, 5.0), Step(22000, FAIL, 20.0), objective))
    20976
    >>> round(crossing_rate(Step(20000, PASS, 5.0), Step(22000, FAIL, 8.0), objective)), round(crossing_rate(Step(20000, PASS), Step(22000, FAIL), None))
    (20976, 20976)
    """
    middle = math.sqrt(low.rate * above.rate)
    if slo is None or low.value_ms is None or low.value_ms <= 0:
        return middle
    lower, upper = math.log(low.value_ms), math.log(above.value_ms if above.value_ms is not None else FAILED_MS)
    if upper <= max(lower, math.log(slo.ms)):
        return middle
    share = min(1.0, max(0.0, (math.log(slo.ms) - lower) / (upper - lower)))
    return math.exp(math.log(low.rate) + share * (math.log(above.rate) - math.log(low.rate)))


def block_capacity(block: int, steps: list[Step], high: int | None = None, slo: Slo | None = None) -> BlockCapacity | None:
    """Return a block's capacity from its steps (see the module's docstring), None without steps.

    high: the search's untested upper end (the setup's closed-loop req/s, as the driver
    recorded it); a bracket whose top lies above it was never narrowed below it, so the
    objective held at the highest rate tried: at least that rate. slo: the objective, for
    the crossing inside the bracket (crossing_rate); without it, the bracket's geometric middle.

    >>> block_capacity(1, [Step(6000, PASS), Step(12000, PASS), Step(16000, FAIL)]).rps
    13856.40...
    >>> block_capacity(1, [Step(6000, PASS, 1.0), Step(12000, PASS, 4.0), Step(16000, FAIL, 40.0)], slo=Slo(99, 10)).rps
    13455.48...
    >>> block_capacity(1, [Step(6000, FAIL)]).bound, block_capacity(1, [Step(6000, PASS), Step(9000, PASS)]).bound
    ('at_most', 'at_least')
    """
    if not steps:
        return None
    low, above = bracket(steps)
    if low is None:
        return BlockCapacity(block, min(s.rate for s in steps), AT_MOST, None, min(s.rate for s in steps), len(steps))
    if above is None or (high is not None and above.rate > high):
        return BlockCapacity(block, low.rate, AT_LEAST, low.rate, None, len(steps))
    if above.verdict == GENERATOR:
        return BlockCapacity(block, low.rate, AT_LEAST, low.rate, above.rate, len(steps), above.achieved_rps)
    return BlockCapacity(block, crossing_rate(low, above, slo), None, low.rate, above.rate, len(steps))


def ladder_centre(earlier: list[BlockCapacity]) -> float | None:
    """Return where a later block's ladder is centred: the geometric mean of the earlier blocks' capacities (a bound at its value); None without any."""
    values = [b.rps for b in earlier if b.rps > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def ladder_rates(centre: float, high: int, offset: float) -> list[int]:
    """Return a later block's ladder: rates LADDER_STEP apart around centre, shifted by offset (0-1) of a step, at most high (ascending).

    >>> ladder_rates(20000, 86000, 0.5), ladder_rates(20000, 21000, 0.5)
    ([18200, 20000, 22000, 24200], [18200, 20000])
    """
    rates = sorted({round_step(centre * LADDER_STEP ** (k + offset - 0.5)) for k in LADDER})
    return [r for r in rates if r <= high] or [max(1, min(round_step(centre), high))]


def ladder_next(steps: list[Step], planned: list[int], centre: float, high: int, offset: float) -> int | None:
    """Return a later block's next rate, or None when its search is over (see the module's docstring).

    steps: the block's measurements of the setup so far (its planned rates among them);
    centre: the earlier blocks' capacity (ladder_centre); offset: this block's random share
    of a step. The ladder's rates first, ascending; then, while the bracket is wider than
    a step, one rate past the ladder's edge it lies beyond (above its highest rate when
    nothing above failed, else below the lowest rate above the bracket), at most MAX_EDGE,
    the step past the ladder doubling (LADDER_STEP, its square, its fourth power), one step
    inside it (and the bracket's middle when a step would leave it);
    when nothing passed, one more look just above the lowest rate, as next_rate.
    """
    ladder = ladder_rates(centre, high, offset)
    measured = {s.rate for s in steps}
    for rate in ladder:
        if rate not in measured:
            return rate
    edges = sum(1 for s in steps if s.rate not in planned and s.rate not in ladder)
    if edges >= MAX_EDGE:
        return None
    low, above = bracket(steps)
    if low is None:
        return retry_rate(steps)
    if above is not None and above.verdict == GENERATOR:
        return None  # vegeta's ceiling, not the server's: nothing above it can be measured
    top = min(above.rate, high) if above is not None else high
    if top <= low.rate * LADDER_STEP * 1.05:
        return None
    if above is None or above.rate > high:  # nothing above failed: up, by a step that doubles past the ladder's top
        rate = round_step(low.rate * LADDER_STEP ** (2**edges if low.rate >= ladder[-1] else 1))
    else:  # down from the lowest rate above that failed, by a step that doubles past the ladder's bottom
        rate = round_step(above.rate / LADDER_STEP ** (2**edges if above.rate <= ladder[0] else 1))
        rate = rate if rate > low.rate else round_step(math.sqrt(low.rate * above.rate))
    return rate if low.rate < rate < top and rate not in measured else None


@dataclass(frozen=True)
class Estimate:
    """A capacity (or a ratio of two) over blocks: the estimate, its 95% interval (None: one block or a bound) and its bound."""

    value: float
    low: float | None
    high: float | None
    bound: str | None
    blocks: int


def combine(blocks: list[BlockCapacity]) -> Estimate | None:
    """Return the capacity over blocks: a bound when at least half the blocks' were that bound, else the geometric mean with its t-interval.

    `at_most` (nothing passed in those blocks) says at most the largest such rate; else
    `at_least` (the objective held at the top, or the generator stopped the search) says at
    least the smallest of all the blocks' values. Fewer bounded blocks than that count with
    their rate as their value: one start that failed the light load twice (a long pause, a
    bad start) widens the interval instead of turning the setup's capacity into its bound.
    """
    if not blocks:
        return None
    most = [b.rps for b in blocks if b.bound == AT_MOST]
    if 2 * len(most) >= len(blocks):
        return Estimate(max(most), None, None, AT_MOST, len(blocks))
    if 2 * sum(b.bound == AT_LEAST for b in blocks) >= len(blocks):
        return Estimate(min(b.rps for b in blocks), None, None, AT_LEAST, len(blocks))
    found = ratio_interval([(b.rps, 1.0) for b in blocks])
    return Estimate(found.estimate, found.low, found.high, None, len(blocks))


def combine_ratio(setup: list[BlockCapacity], baseline: list[BlockCapacity]) -> Estimate | None:
    """Return a setup's capacity over its baseline's: paired by block with a t-interval when neither is a bound, else the bound it implies.

    A setup that is at most (or at least) X over a baseline of Y is at most (at least) X/Y;
    over a baseline that is itself at least Y (at most Y), the bound turns: at most (at least).
    Both bounds the same way: nothing can be said (None).
    """
    base = {b.block: b for b in baseline}
    pairs = [(b, base[b.block]) for b in setup if b.block in base]
    if not pairs:
        return None
    mine, theirs = combine([a for a, _ in pairs]), combine([b for _, b in pairs])
    if mine.bound is None and theirs.bound is None:
        found = ratio_interval([(a.rps, b.rps) for a, b in pairs])
        return Estimate(found.estimate, found.low, found.high, None, len(pairs))
    turned = {AT_LEAST: AT_MOST, AT_MOST: AT_LEAST, None: None}[theirs.bound]
    if mine.bound is not None and turned is not None and mine.bound != turned:
        return None
    return Estimate(mine.value / theirs.value, None, None, mine.bound or turned, len(pairs))


def result_step(
    rate: int,
    result: RateResult | None,
    checks: list[Check] | tuple[Check, ...],
    slo: Slo,
    counted: tuple[int, int] | None = None,
    needed: int = 0,
) -> Step:
    """Return a measurement as a step of the search: its record and its fixed-rate checks (rate_checks.rate_checks) judged against the objective.

    counted: a capacity check judged by its seconds (capacity_check.check_step): (its whole seconds, those within the
    objective), within when at least `needed` were; else the whole attack's percentile says it. No record (vegeta failed,
    the file unreadable): a failed step.
    """
    if result is None:
        return Step(rate, FAIL)
    failed = {c.name for c in checks if c.status == "fail"}
    share = result.achieved_share
    behind = share is not None and share < 1 - RATE_TOLERANCE
    clean = not failed - {"rate-held"}
    value = result.percentile_ms(slo.percentile)
    within = None if counted is None else counted[1] >= needed
    seconds, met = counted if counted is not None else (None, None)
    return Step(rate, step_verdict("rate-held" not in failed, behind, clean, value, slo, within), value, result.achieved_rps, seconds, met)
