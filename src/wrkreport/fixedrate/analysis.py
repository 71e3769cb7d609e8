"""Fixed-rate analysis: the open-loop measurements -> per setup, GOMAXPROCS and rate, latencies and the latency added over go-http.

Per cell (setup, GOMAXPROCS, rate): the offered rate, the median achieved rate and the
median p50, p99 and p99.9 of its usable measurements (rate held, every answer right, no
errors: fixedrate/rate_checks.py). A cell where the rate was not held in some measurement is
reported as not held, its figures left out (not averaged in): its latencies are those of
a queue, not of the rate. For every setup but go-http, the added latency at p50 and p99
over its baseline, the setup its ratios divide by (records.baseline_of: go-http; for
nginx's TLS setups go-https, so that TLS at nginx is set against TLS in Go):
each block's rounds paired with the baseline's round in the same block and at the same rate,
the mean difference per block, and a 95% t-interval over blocks
(stats.block_difference_interval). Pure functions; pandas is not needed.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..core.setups import BASELINE, baseline_of
from .reading import RateMeasurement
from ..core.stats import Interval, block_difference_interval

ADDED = (("p50", 50.0), ("p99", 99.0))  # the added latencies reported, with their percentiles


@dataclass(frozen=True)
class RateCell:
    """One setup at one GOMAXPROCS value and one offered rate; latencies in ms; None: not known or not held."""

    setup: str
    gomaxprocs: int
    offered_rps: int
    measurements: int  # every measurement of the cell
    usable: int  # those whose latencies count
    not_held: int  # those in which the rate was not held
    achieved_rps: float | None
    p50_ms: float | None
    p99_ms: float | None
    p999_ms: float | None
    added_p50: Interval | None = None  # setup - its baseline, ms
    added_p99: Interval | None = None
    reasons: tuple[str, ...] = ()  # why measurements were left out (the first failed check of each)
    held_in: int = 0  # measurements in which the rate was held (its p50, p99 are theirs when some were not)

    @property
    def baseline(self) -> str:
        """Return the setup its added latency is over: go-http, or for nginx's TLS setups go-https (records.baseline_of)."""
        return baseline_of(self.setup)

    @property
    def is_baseline(self) -> bool:
        """Return True for go-http, which nothing is added over."""
        return self.setup == BASELINE

    @property
    def held(self) -> bool:
        """Return True when the rate was held in every measurement of the cell and one counts."""
        return self.not_held == 0 and self.usable > 0

    @property
    def held_in_some(self) -> bool:
        """Return True when the rate was held in some measurements and not in others: its latencies are those of the held ones."""
        return self.not_held > 0 and self.usable > 0

    def record(self) -> dict:
        """Return the results.json record (docs/wrkreport.md, `fixed_rate`)."""
        found = {
            "setup": self.setup,
            "gomaxprocs": self.gomaxprocs,
            "offered_rps": self.offered_rps,
            "achieved_rps": None if self.achieved_rps is None else round(self.achieved_rps, 1),
            "held": self.held,
            "held_in": self.held_in,
            "measurements": self.measurements,
            "usable": self.usable,
            "p50_ms": self.p50_ms,
            "p99_ms": self.p99_ms,
            "p999_ms": self.p999_ms,
        }
        if not self.is_baseline:
            found["baseline"] = self.baseline
            for name, _ in ADDED:
                interval = getattr(self, f"added_{name}")
                found[f"added_{name}_ms"] = None if interval is None else round(interval.estimate, 4)
                found[f"added_{name}_ci_low"] = None if interval is None or interval.low is None else round(interval.low, 4)
                found[f"added_{name}_ci_high"] = None if interval is None or interval.high is None else round(interval.high, 4)
                found[f"added_{name}_blocks"] = None if interval is None else interval.blocks
        return found


def median_or_none(values: list[float]) -> float | None:
    """Return the median, None for no values."""
    return statistics.median(values) if values else None


def added_interval(cell: list[RateMeasurement], base: list[RateMeasurement], p: float) -> Interval | None:
    """Return the added latency at percentile p (ms) over blocks: cell's usable rounds paired with base's in the same block; None without a pair."""
    blocks = added_pairs(cell, base, p)
    return block_difference_interval(blocks) if blocks else None


def added_pairs(cell: list[RateMeasurement], base: list[RateMeasurement], p: float) -> list[list[tuple[float, float]]]:
    """Return per block (ascending) the (setup, go-http mean) latency pairs at percentile p (ms) of cell's usable rounds; [] without a pair."""
    by_block: dict[int, list[float]] = {}
    for m in base:
        if m.usable:
            by_block.setdefault(m.block, []).append(m.result.percentile_ms(p))
    blocks: dict[int, list[tuple[float, float]]] = {}
    for m in cell:
        if m.usable and by_block.get(m.block):
            blocks.setdefault(m.block, []).append((m.result.percentile_ms(p), statistics.mean(by_block[m.block])))
    return [blocks[b] for b in sorted(blocks)]


def rate_cells(measurements: list[RateMeasurement], setup_order: list[str] | None = None) -> list[RateCell]:
    """Return one RateCell per (setup, GOMAXPROCS, rate), by GOMAXPROCS, rate, then setup (setup_order, else go-http first)."""
    groups: dict[tuple[str, int, int], list[RateMeasurement]] = {}
    for m in measurements:
        groups.setdefault((m.setup, m.gomaxprocs, m.rate), []).append(m)
    order = list(setup_order or [])

    def key(item: tuple[str, int, int]) -> tuple:
        setup, n, rate = item
        return n, rate, order.index(setup) if setup in order else len(order), setup != BASELINE, setup

    cells = []
    for setup, n, rate in sorted(groups, key=key):
        group = groups[(setup, n, rate)]
        used = [m for m in group if m.usable]
        not_held = sum(1 for m in group if m.result is not None and not m.held)
        figures = {f"{name}_ms": median_or_none([m.result.percentile_ms(p) for m in used]) for name, p in (("p50", 50), ("p99", 99), ("p999", 99.9))}
        achieved = median_or_none([m.result.achieved_rps for m in used if m.result.achieved_rps is not None])
        # Held in some blocks only: p50 and p99 are the held ones' (what was measured at the rate), said as such;
        # no added latency, since the blocks left are the kinder ones.
        added = {}
        base = groups.get((baseline_of(setup), n, rate), [])
        base_held = base and not any(m.result is not None and not m.held for m in base)
        if setup != BASELINE and not not_held and base_held:
            added = {f"added_{name}": added_interval(group, base, p) for name, p in ADDED}
        reasons = tuple(m.failed[0].message for m in group if m.failed)
        held_in = sum(1 for m in group if m.result is not None and m.held)
        cells.append(RateCell(setup, n, rate, len(group), len(used), not_held, achieved, **figures, **added, reasons=reasons, held_in=held_in))
    return cells
