"""Capacity at a latency objective: the highest offered rate a setup holds with a percentile of latency within an objective (--slo).

The search, per setup, GOMAXPROCS value and block (one start of the servers): the
phase's planned rates are measured first (the light-load point); each measurement is a
step with a verdict (step_verdict): `pass` when the rate was held (rate_checks.rate_held_check),
every answer right, none lost and the objective's percentile within it; `generator` when
vegeta fell behind its schedule while the answers were right and within the objective (the
load generator, not the server, was the limit); `fail` otherwise. The bracket is the
highest passing rate and the lowest rate above it that did not pass (bracket). The next
step is inside it, at a random point between 30% and 70% of the way on a log scale
(next_rate): a bisection whose cut is jittered, so that each block's final bracket falls
at its own place around the capacity rather than on one grid that every block shares. It
stops once the bracket's ends are within RESOLUTION of each other or after its steps.
When nothing passed, the search measures just above the lowest rate once more before it
gives up: a pause fails a measurement at any rate, and one pause at the light load would
otherwise make the block's capacity "at most" the light-load rate.

A block's capacity is the geometric middle of its final bracket (block_capacity); a bound
when the search met an edge: `at_most` the lowest rate tried when nothing passed, `at_least`
the highest passing rate when nothing above it failed (the objective held at the highest
rate tried) or when what stopped it was the generator. Over blocks, the capacity is the
geometric mean of the blocks' with a 95% Student-t interval on their logs, blocks - 1
degrees of freedom (core.stats.ratio_interval), as every other interval of the tool: the
start-to-start spread and the search's own noise are both in the spread of the blocks'
values. A setup's ratio to its baseline pairs the two blocks by block. The coverage of
both, with per-measurement noise, per-start effects, pauses and a knee like the measured
one, is simulated in tests/test_fixedrate_capacity_coverage.py. Standard library only:
the driver's helper runs the search.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

from ..core.errors import UsageError
from ..core.records import Check
from ..core.stats import ratio_interval
from ..core.units import round_figures
from .rate_checks import RATE_TOLERANCE
from .record import RateResult

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
JITTER = (0.3, 0.7)
RETRY = 1.02  # the second look when nothing passed: this much above the lowest rate (a new rate: a new file name)  # where between the bracket's ends (log scale) the next step falls, drawn uniformly
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


def step_verdict(held: bool, behind: bool, clean: bool, value_ms: float | None, slo: Slo) -> str:
    """Return a step's verdict: pass (held, clean, within), generator (vegeta behind, clean, within) or fail.

    held: the rate was sustained; behind: vegeta started fewer requests than asked; clean:
    every answer right and none lost.

    >>> objective = Slo(99, 5)
    >>> step_verdict(True, False, True, 4.9, objective), step_verdict(False, True, True, 1.0, objective)
    ('pass', 'generator')
    >>> step_verdict(True, False, True, 5.1, objective), step_verdict(False, True, True, 9.0, objective), step_verdict(True, False, False, 1.0, objective)
    ('fail', 'fail', 'fail')
    """
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
    if low is None:  # nothing passed: one more look just above the lowest rate, then the bound stands
        lowest = min(s.rate for s in steps)
        again = max(lowest + 1, round_step(lowest * RETRY))
        return None if any(lowest < s.rate <= again for s in steps) else again
    top = min(above.rate, high) if above is not None else high
    if top <= low.rate * RESOLUTION:
        return None
    share = rng.uniform(*JITTER)
    rate = round_step(math.exp((1 - share) * math.log(low.rate) + share * math.log(top)))
    return rate if low.rate < rate < top else None


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


def block_capacity(block: int, steps: list[Step], high: int | None = None) -> BlockCapacity | None:
    """Return a block's capacity from its steps (see the module's docstring), None without steps.

    high: the search's untested upper end (the setup's closed-loop req/s, as the driver
    recorded it); a bracket whose top lies above it was never narrowed below it, so the
    objective held at the highest rate tried: at least that rate.

    >>> block_capacity(1, [Step(6000, PASS), Step(12000, PASS), Step(16000, FAIL)]).rps
    13856.40...
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
    return BlockCapacity(block, math.sqrt(low.rate * above.rate), None, low.rate, above.rate, len(steps))


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


def result_step(rate: int, result: RateResult | None, checks: list[Check] | tuple[Check, ...], slo: Slo) -> Step:
    """Return a measurement as a step of the search: its record and its fixed-rate checks (rate_checks.rate_checks) judged against the objective.

    No record (vegeta failed, the file unreadable): a failed step.
    """
    if result is None:
        return Step(rate, FAIL)
    failed = {c.name for c in checks if c.status == "fail"}
    share = result.achieved_share
    behind = share is not None and share < 1 - RATE_TOLERANCE
    clean = not failed - {"rate-held"}
    return Step(rate, step_verdict("rate-held" not in failed, behind, clean, result.percentile_ms(slo.percentile), slo),
                result.percentile_ms(slo.percentile), result.achieved_rps)
