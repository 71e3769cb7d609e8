"""Fixed-rate analysis: the open-loop measurements -> per setup, GOMAXPROCS and rate, latencies and the latency added over go-http.

Per cell (setup, GOMAXPROCS, rate): the offered rate, the median achieved rate and the
median p50, p99 and p99.9 of its usable measurements (rate held, every answer right, no
errors: core/rate_checks.py). A cell where the rate was not held in some measurement is
reported as not held, its figures left out (not averaged in): its latencies are those of
a queue, not of the rate. For every setup but go-http, the added latency at p50 and p99
over its baseline, the setup its ratios divide by (records.baseline_of: go-http; for
nginx's TLS setups go-https, so that TLS at nginx is set against TLS in Go):
each block's rounds paired with the baseline's round in the same block and at the same rate,
the mean difference per block, and a 95% t-interval over blocks
(stats.block_difference_interval). Each cell's p50 and p99 also have a 95% interval when
it has two measurements or more: the geometric mean of its blocks' values with a Student-t
interval on their logs, blocks - 1 degrees of freedom (stats.ratio_interval, as the
capacities): a latency's spread over blocks is skewed (p99 1.3-7.2 ms at one rate), and an
interval on the raw values would reach below zero. Each cell also has the servers' CPU at
its rate (median over its usable measurements): the cores they kept busy and their CPU ms
per 1,000 requests, the unit of the saturation part. A cell is `planned` when its rate is
one the run planned at its GOMAXPROCS (the manifest's fixed_rate_plan: the light-load
points), not a step of the capacity search (core/capacity.py); without a plan every
cell is. Pure functions; pandas is not needed.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..core.cpucost import ms_per_1k_requests
from ..core.setups import BASELINE, baseline_of
from ..core.stats import BLOCK, Interval, block_difference_interval, ratio_interval
from ..runs.rate_measurements import RateMeasurement

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
    planned: bool = True  # a rate the run planned (the light-load point), not a step of the capacity search
    p50_interval: Interval | None = None  # geometric mean over blocks with its 95% interval (None: fewer than 2 usable measurements)
    p99_interval: Interval | None = None
    server_cores: float | None = None  # the servers' CPU seconds per second of the attack (Go and nginx), median
    cpu_ms_per_1k: float | None = None  # the servers' CPU ms per 1,000 requests at this rate, median

    @property
    def baseline(self) -> str:
        """Return the setup its added latency is over: go-http, or for nginx's TLS setups go-https (records.baseline_of)."""
        return baseline_of(self.setup)

    @property
    def is_baseline(self) -> bool:
        """Return True for go-http (or --app's app), which nothing is added over."""
        return self.setup == baseline_of(self.setup)

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
            "planned": self.planned,
        }
        for name in ("p50", "p99"):
            interval = getattr(self, f"{name}_interval")
            found[f"{name}_ci_low"] = None if interval is None or interval.low is None else round(interval.low, 4)
            found[f"{name}_ci_high"] = None if interval is None or interval.high is None else round(interval.high, 4)
        found["server_cores_busy"] = None if self.server_cores is None else round(self.server_cores, 3)
        found["cpu_server_ms_per_1k"] = None if self.cpu_ms_per_1k is None else round(self.cpu_ms_per_1k, 3)
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


def latency_interval(used: list[RateMeasurement], p: float) -> Interval | None:
    """Return the latency at percentile p over the usable measurements: the geometric mean of the blocks' (each block's own geometric mean) with a 95% t-interval on the logs.

    Over blocks when there are two or more; over the measurements of one block when it has
    two or more; None for a single measurement (or a latency of 0, which has no logarithm).
    """
    by_block: dict[int, list[float]] = {}
    for m in used:
        by_block.setdefault(m.block, []).append(m.result.percentile_ms(p))
    values = [v for block in by_block.values() for v in block]
    if len(values) < 2 or any(v is None or v <= 0 for v in values):
        return None
    if len(by_block) < 2:
        return ratio_interval([(v, 1.0) for v in values])
    means = [statistics.geometric_mean(by_block[b]) for b in sorted(by_block)]
    found = ratio_interval([(v, 1.0) for v in means])
    return Interval(found.estimate, found.low, found.high, len(values), BLOCK, len(means))


def server_cpu(used: list[RateMeasurement]) -> tuple[float | None, float | None]:
    """Return (cores the servers kept busy, their CPU ms per 1,000 requests): medians over the measurements with a CPU record."""
    cores, per_1k = [], []
    for m in used:
        seconds, wall = m.server_cpu_s, m.cpu_wall_s
        if seconds is None:
            continue
        if wall:
            cores.append(seconds / wall)
        if m.result.requests:
            per_1k.append(ms_per_1k_requests(seconds, m.result.requests))
    return median_or_none(cores), median_or_none(per_1k)


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


def setup_rank(setup: str, order: list[str]) -> tuple:
    """Return where a setup sorts among others: by order (its setups first, as given), then the baseline first, then by name."""
    return order.index(setup) if setup in order else len(order), setup != BASELINE, setup


def is_planned(plan: dict[int, frozenset[int]] | None, gomaxprocs: int, rate: int) -> bool:
    """Return True when rate is one the run planned at gomaxprocs (reading.planned_rates), or the run has no plan there."""
    return plan is None or gomaxprocs not in plan or rate in plan[gomaxprocs]


def rate_cells(
    measurements: list[RateMeasurement], setup_order: list[str] | None = None, plan: dict[int, frozenset[int]] | None = None
) -> list[RateCell]:
    """Return one RateCell per (setup, GOMAXPROCS, rate), by GOMAXPROCS, rate, then setup (setup_order, else go-http first).

    plan: the planned rates per GOMAXPROCS (reading.planned_rates); the other rates are the capacity search's steps.
    """
    groups: dict[tuple[str, int, int], list[RateMeasurement]] = {}
    for m in measurements:
        groups.setdefault((m.setup, m.gomaxprocs, m.rate), []).append(m)
    order = list(setup_order or [])

    def key(item: tuple[str, int, int]) -> tuple:
        setup, n, rate = item
        return n, rate, *setup_rank(setup, order)

    cells = []
    for setup, n, rate in sorted(groups, key=key):
        group = groups[(setup, n, rate)]
        used = [m for m in group if m.usable]
        not_held = sum(1 for m in group if m.result is not None and not m.held)
        figures = {
            f"{name}_ms": median_or_none([m.result.percentile_ms(p) for m in used])
            for name, p in (("p50", 50), ("p99", 99), ("p999", 99.9))
        }
        achieved = median_or_none([m.result.achieved_rps for m in used if m.result.achieved_rps is not None])
        # Held in some blocks only: p50 and p99 are the held ones' (what was measured at the rate), said as such;
        # no added latency, since the blocks left are the kinder ones.
        added = {}
        base = groups.get((baseline_of(setup), n, rate), [])
        base_held = base and not any(m.result is not None and not m.held for m in base)
        if setup != baseline_of(setup) and not not_held and base_held:
            added = {f"added_{name}": added_interval(group, base, p) for name, p in ADDED}
        reasons = tuple(m.failed[0].message for m in group if m.failed)
        held_in = sum(1 for m in group if m.result is not None and m.held)
        intervals = {f"{name}_interval": latency_interval(used, p) for name, p in ADDED}
        cores, per_1k = server_cpu(used)
        cells.append(
            RateCell(
                setup,
                n,
                rate,
                len(group),
                len(used),
                not_held,
                achieved,
                **figures,
                **added,
                reasons=reasons,
                held_in=held_in,
                planned=is_planned(plan, n, rate),
                **intervals,
                server_cores=cores,
                cpu_ms_per_1k=per_1k,
            )
        )
    return cells
