"""The machine's own floor: how often this host's seconds miss the latency objective with no queue, from the fixed-rate measurements well below every knee.

A capacity at an objective measures the setups only while the objective sits above what the
host itself does to a second at light load. On a shared 2-core host a scheduler pause of 10
ms fails a 1-s p99 at any rate: go-http alone at GOMAXPROCS=1 (2026-12-06) had a 1-s p99 of
4-19 ms at 5,000-9,000 req/s with its p50 at 0.25 ms, and a capacity at p99 within 10 ms
found there measured how often the host paused, not where the server's queue began.

The floor at one GOMAXPROCS value counts the seconds of every measurement at or below
LIGHT_SHARE of its setup's capacity there (the planned light-load rate of each block, and
search steps that low), each second judged by the objective's percentile of the requests
started in it (RateResult.second_percentiles_ns); a measurement not held there counts all its
seconds as missed, one whose answers were wrong is left out (not the host's doing). The
objective is inside the floor when at least FLOOR_SHARE of those seconds missed it (and at
least two did): then a capacity at it measures the machine, and the run says so before the
capacities, with objectives that would clear the floor (the same percentile, or p90, at the
next round value above MARGIN times the worst light-load second's). Pure functions.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from ..core.capacity import Slo
from ..core.rate_result import NS_PER_MS, SHOWN_PERCENTILES
from ..runs.rate_measurements import RateMeasurement

LIGHT_SHARE = 0.5  # a measurement counts for the floor at or below this share of its setup's capacity
FLOOR_SHARE = 0.1  # the objective is inside the floor when this share of the light-load seconds missed it
MARGIN = 1.5  # a suggested objective sits this far above the worst light-load second
ROUND = (1, 2, 3, 5)  # suggested objectives: these times a power of ten, in ms


@dataclass(frozen=True)
class Floor:
    """The light-load seconds of one GOMAXPROCS value and how many missed the objective."""

    gomaxprocs: int
    slo: Slo
    seconds: int
    missed: int
    low_rps: int
    high_rps: int
    p50_ms: float | None  # the median over those seconds of their p50
    suggested: tuple[Slo, ...] = ()  # objectives above the worst light-load second (none when it is not inside)

    @property
    def inside(self) -> bool:
        """Return True when the objective sits inside the floor: FLOOR_SHARE or more of the light-load seconds, and two or more, missed it."""
        return self.missed >= 2 and self.missed >= FLOOR_SHARE * self.seconds

    def words(self) -> str:
        """Return the floor in words, a warning when the objective sits inside it.

        >>> f = Floor(1, Slo(99.0, 10.0), 40, 12, 6200, 12000, 0.25, (Slo(99.0, 30.0), Slo(90.0, 2.0)))
        >>> f.words()
        "this machine's own pauses put p99 above 10 ms in 12 of 40 seconds at 6,200-12,000 req/s, well below every capacity, with p50 at 0.25 ms: a capacity at this objective measures the machine; p99=30ms or p90=2ms would measure the setups"
        >>> Floor(1, Slo(99.0, 10.0), 40, 1, 6200, 6200, 0.25).words()
        "at light load (6,200 req/s) p99 was within 10 ms in 39 of 40 seconds: the objective sits above this machine's own pauses"
        """
        at = f"{self.low_rps:,}" if self.low_rps == self.high_rps else f"{self.low_rps:,}-{self.high_rps:,}"
        if not self.inside:
            return (
                f"at light load ({at} req/s) {self.slo.name} was within {self.slo.ms:g} ms in {self.seconds - self.missed} of {self.seconds}"
                " seconds: the objective sits above this machine's own pauses"
            )
        median = f", with p50 at {self.p50_ms:.2g} ms" if self.p50_ms is not None else ""
        better = " or ".join(s.label for s in self.suggested)
        return (
            f"this machine's own pauses put {self.slo.name} above {self.slo.ms:g} ms in {self.missed} of {self.seconds} seconds at {at} req/s,"
            f" well below every capacity{median}: a capacity at this objective measures the machine"
            + (f"; {better} would measure the setups" if better else "")
        )

    def record(self) -> dict:
        """Return the results.json record (docs/wrkreport.md, `capacity_floor`)."""
        return {
            "gomaxprocs": self.gomaxprocs,
            "slo": self.slo.record(),
            "seconds": self.seconds,
            "missed": self.missed,
            "low_rps": self.low_rps,
            "high_rps": self.high_rps,
            "p50_ms": None if self.p50_ms is None else round(self.p50_ms, 3),
            "inside": self.inside,
            "suggested": [s.label for s in self.suggested],
        }


def round_up(ms: float) -> float:
    """Return the least of 1, 2, 3, 5 times a power of ten (ms) at or above ms.

    >>> round_up(28.5), round_up(1.8), round_up(0.31), round_up(50.0)
    (30.0, 2.0, 0.5, 50.0)
    """
    power = 10.0 ** math.floor(math.log10(ms))
    return next(round(r * p, 6) for p in (power, power * 10) for r in ROUND if r * p >= ms * (1 - 1e-9))


def light_measurements(measurements: list[RateMeasurement], capacity_rps: dict[str, float]) -> list[RateMeasurement]:
    """Return the measurements the floor counts: at or below LIGHT_SHARE of their setup's capacity (capacity_rps: per setup at one
    GOMAXPROCS value), not checks, with a record that has its seconds and every answer right (wrong answers are not the host's)."""
    return [
        m
        for m in measurements
        if not m.capacity_check
        and m.setup in capacity_rps
        and m.rate <= LIGHT_SHARE * capacity_rps[m.setup]
        and m.result is not None
        and m.result.second_percentiles_ns
        and not [c for c in m.failed if c.name != "rate-held"]
    ]


def second_values(m: RateMeasurement, column: int) -> list[float]:
    """Return each whole second's value (ms) of one percentile column of a measurement (infinite for every second of a rate not held)."""
    values = [row[column] / NS_PER_MS for row in m.result.second_percentiles_ns]
    return values if m.held else [math.inf] * len(values)


def machine_floor(measurements: list[RateMeasurement], capacity_rps: dict[str, float], gomaxprocs: int, slo: Slo) -> Floor | None:
    """Return the floor of one GOMAXPROCS value (its measurements, its setups' capacities), None without a light-load second to count."""
    light = light_measurements(measurements, capacity_rps)
    if slo.percentile not in SHOWN_PERCENTILES or not light:
        return None
    column = SHOWN_PERCENTILES.index(slo.percentile)
    seconds = [v for m in light for v in second_values(m, column)]
    missed = sum(v > slo.ms for v in seconds)
    median = SHOWN_PERCENTILES.index(50.0)
    medians = [row[median] / NS_PER_MS for m in light for row in m.result.second_percentiles_ns]
    found = Floor(gomaxprocs, slo, len(seconds), missed, min(m.rate for m in light), max(m.rate for m in light), statistics.median(medians))
    if not found.inside:
        return found
    suggested = []
    for percentile in dict.fromkeys([slo.percentile, 90.0 if slo.percentile > 90 else slo.percentile]):
        index = SHOWN_PERCENTILES.index(percentile)
        worst = max((v for m in light if m.held for v in second_values(m, index)), default=None)
        if worst is not None and worst > 0:
            suggested.append(Slo(percentile, round_up(MARGIN * worst)))
    return Floor(found.gomaxprocs, slo, found.seconds, missed, found.low_rps, found.high_rps, found.p50_ms, tuple(suggested))
