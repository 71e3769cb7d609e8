"""Capacities: a run's fixed-rate measurements -> per setup and GOMAXPROCS, the capacity at the run's objective, with its interval or bound, and its ratio to the baseline's.

Each block's measurements of a setup (the planned rates and the search's steps, in the
order they ran) are read as the search read them (capacity.result_step), so the report
recomputes what the driver found from the raw files alone; capacity.block_capacity and
capacity.combine do the rest. The generator's ceiling at a GOMAXPROCS value is what
vegeta managed where it fell behind its schedule with the answers within the objective
(None when it never did). Pure functions.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from ..analysis.capacity_floor import Floor, machine_floor
from ..analysis.rate_latency import setup_rank
from ..core.capacity import (
    AT_MOST,
    GENERATOR,
    PASS,
    BlockCapacity,
    Estimate,
    Slo,
    Step,
    block_capacity,
    combine,
    combine_ratio,
    result_step,
)
from ..core.capacity_check import check_step
from ..core.setups import baseline_of
from ..runs.rate_measurements import RateMeasurement


@dataclass(frozen=True)
class CapacityCheck:
    """A measurement at the capacity found, after the search (Nighthawk's testing stage), or lower after a miss: what the objective's percentile was there."""

    offered_rps: int
    percentile_ms: float | None  # the objective's percentile of its latencies (None: no record)
    held: bool  # the rate was sustained
    met: bool  # held, every answer right, none lost and within the objective: a passing step
    span_s: float | None = None  # its first request's start to its last's (None: no record)
    seconds: int | None = None  # judged by its seconds (core/capacity_check.py; runs before 2026-12-07: None): its whole seconds
    seconds_met: int | None = None  # and those whose percentile was within the objective

    def record(self) -> dict:
        """Return the results.json record: {'offered_rps', 'percentile_ms', 'held', 'met', 'span_s', 'seconds', 'seconds_met'}."""
        return {
            "offered_rps": self.offered_rps,
            "percentile_ms": None if self.percentile_ms is None else round(self.percentile_ms, 3),
            "held": self.held,
            "met": self.met,
            "span_s": None if self.span_s is None else round(self.span_s, 3),
            "seconds": self.seconds,
            "seconds_met": self.seconds_met,
        }


@dataclass(frozen=True)
class Capacity:
    """One setup's capacity at one GOMAXPROCS value under the run's objective."""

    setup: str
    gomaxprocs: int
    slo: Slo
    estimate: Estimate
    blocks: tuple[BlockCapacity, ...]
    ratio: Estimate | None = None  # over the baseline's (None for the baseline, or when nothing can be said)
    generator_rps: float | None = None  # vegeta's ceiling at this GOMAXPROCS, when it was met
    checks: tuple[CapacityCheck, ...] = ()  # the measurements after the search: at the capacity, then lower after each miss
    floor: Floor | None = None  # the machine's own floor at its GOMAXPROCS (capacity_floor.py), None without a light-load second

    @property
    def check(self) -> CapacityCheck | None:
        """Return the check at the capacity itself (the first), None when none was made."""
        return self.checks[0] if self.checks else None

    @property
    def sustained(self) -> CapacityCheck | None:
        """Return the highest check that met the objective (the rate a check held for its whole attack), None when none did."""
        met = [c for c in self.checks if c.met]
        return max(met, key=lambda c: c.offered_rps) if met else None

    @property
    def baseline(self) -> str | None:
        """Return the setup its ratio divides by (core.setups.baseline_of), None for a baseline."""
        return None if self.setup == baseline_of(self.setup) else baseline_of(self.setup)

    def record(self) -> dict:
        """Return the results.json record (docs/wrkreport.md, `capacity`)."""
        rounded = lambda value, digits=0: None if value is None else round(value, digits) if digits else round(value)  # noqa: E731
        found = {
            "setup": self.setup,
            "gomaxprocs": self.gomaxprocs,
            "slo": self.slo.record(),
            "capacity_rps": rounded(self.estimate.value),
            "ci_low": rounded(self.estimate.low),
            "ci_high": rounded(self.estimate.high),
            "bound": self.estimate.bound,
            "blocks": self.estimate.blocks,
            "block_capacities": [
                {"block": b.block, "capacity_rps": round(b.rps), "bound": b.bound, "bracket": [b.low, b.high], "steps": b.steps}
                for b in self.blocks
            ],
            "generator_ceiling_rps": rounded(self.generator_rps),
            "check": None if self.check is None else self.check.record(),
            "checks": [c.record() for c in self.checks],
            "sustained_rps": None if self.sustained is None else self.sustained.offered_rps,
        }
        if self.baseline is not None:
            ratio = self.ratio
            found.update(
                {
                    "baseline": self.baseline,
                    "ratio": None if ratio is None else round(ratio.value, 4),
                    "ratio_ci_low": None if ratio is None else rounded(ratio.low, 4),
                    "ratio_ci_high": None if ratio is None else rounded(ratio.high, 4),
                    "ratio_bound": None if ratio is None else ratio.bound,
                }
            )
        return found


def measurement_step(m: RateMeasurement, slo: Slo) -> Step:
    """Return a measurement as a step of the search (no record: a failed step)."""
    return result_step(m.rate, m.result, m.checks, slo)


def block_steps(measurements: list[RateMeasurement], slo: Slo) -> dict[tuple[str, int], dict[int, list[Step]]]:
    """Return the steps of each (setup, GOMAXPROCS), per block, in the order measured (a capacity check is not a step)."""
    found: dict[tuple[str, int], dict[int, list[Step]]] = {}
    for m in measurements:
        if m.capacity_check:
            continue
        found.setdefault((m.setup, m.gomaxprocs), {}).setdefault(m.block, []).append(measurement_step(m, slo))
    return found


def capacity_checks(
    measurements: list[RateMeasurement], slo: Slo, share: object = None
) -> dict[tuple[str, int], tuple[CapacityCheck, ...]]:
    """Return each (setup, GOMAXPROCS)'s capacity checks of its last checked block, in the order measured, each judged by its seconds
    (the run's check_share: capacity_check.check_step), or for runs before 2026-12-07 as a step of the search."""
    found: dict[tuple[str, int], list[tuple[int, CapacityCheck]]] = {}
    for m in measurements:
        if m.capacity_check:
            step = check_step(m.rate, m.result, m.checks, slo, share)
            span = m.result.span_s if m.result is not None else None
            check = CapacityCheck(m.rate, step.value_ms, m.held, step.verdict == PASS, span, step.seconds, step.seconds_met)
            kept = found.setdefault((m.setup, m.gomaxprocs), [])
            if kept and kept[-1][0] != m.block:
                kept.clear()  # a later block's checks: the last ones stand
            kept.append((m.block, check))
    return {key: tuple(c for _, c in kept) for key, kept in found.items()}


def generator_ceiling(steps: dict[int, list[Step]]) -> list[float]:
    """Return the rates vegeta managed in the steps where it fell behind with the answers within the objective."""
    return [s.achieved_rps for block in steps.values() for s in block if s.verdict == GENERATOR and s.achieved_rps]


def capacities(
    measurements: list[RateMeasurement], slo: Slo | None, setup_order: list[str] | None = None, check_share: object = None
) -> list[Capacity]:
    """Return one Capacity per (setup, GOMAXPROCS) measured, by GOMAXPROCS then setup (setup_order, else the baseline first); [] without
    an objective. check_share: the run's (its checks judged by their seconds), None before 2026-12-07."""
    if slo is None:
        return []
    steps = block_steps(measurements, slo)
    checks = capacity_checks(measurements, slo, check_share)
    highs: dict[tuple[str, int, int], int] = {}
    for m in measurements:
        if m.search_high is not None:
            highs[(m.setup, m.gomaxprocs, m.block)] = max(m.search_high, highs.get((m.setup, m.gomaxprocs, m.block), 0))
    per_block = {
        key: [c for b in sorted(blocks) if (c := block_capacity(b, blocks[b], highs.get((*key, b)), slo)) is not None]
        for key, blocks in steps.items()
    }
    ceilings: dict[int, list[float]] = {}
    for (_, n), blocks in steps.items():
        ceilings.setdefault(n, []).extend(generator_ceiling(blocks))
    order = list(setup_order or [])

    def key(item: tuple[str, int]) -> tuple:
        setup, n = item
        return n, *setup_rank(setup, order)

    found = []
    for setup, n in sorted(per_block, key=key):
        blocks = per_block[(setup, n)]
        estimate = combine(blocks)
        if estimate is None:
            continue
        base = baseline_of(setup)
        ratio = combine_ratio(blocks, per_block.get((base, n), [])) if base != setup else None
        ceiling = statistics.median(ceilings[n]) if ceilings.get(n) else None
        found.append(Capacity(setup, n, slo, estimate, tuple(blocks), ratio, ceiling, checks.get((setup, n), ())))
    return with_floors(found, measurements, slo)


def with_floors(found: list[Capacity], measurements: list[RateMeasurement], slo: Slo) -> list[Capacity]:
    """Return the capacities, each with its GOMAXPROCS value's machine floor (capacity_floor.machine_floor)."""
    floors = {}
    for n in dict.fromkeys(c.gomaxprocs for c in found):
        here = {c.setup: c.estimate.value for c in found if c.gomaxprocs == n and c.estimate.bound != AT_MOST}
        floors[n] = machine_floor([m for m in measurements if m.gomaxprocs == n], here, n, slo)
    return [replace(c, floor=floors[c.gomaxprocs]) for c in found]
