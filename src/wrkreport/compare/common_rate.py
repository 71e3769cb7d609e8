"""Compare (fixed rate, different rates): two runs that offered different rates -> each run's latency curve read at one common rate.

A default run's light-load rate is a share of its own slowest setup's req/s, so two default
runs rarely offer the same rate (6,200 and 5,500 req/s). Each run's curve is its held cells
at one GOMAXPROCS: the planned rates and the capacity search's steps (RateCell.planned
False, each measured once). Per GOMAXPROCS the common rate is the lowest rate planned in
one run only that the other run's curve covers for go-http and at least one other setup;
each run's p50 and p99 of a setup there are its cell's when it measured that rate, else read
on its curve (interpolate): linear in log(rate)-log(latency) between the two nearest held
rates bracketing it, with no rate left unheld between them; never extrapolated. A setup
whose curve (or its baseline's) does not cover the rate in a run gives no figure, and the
rerun sentence stays.

The change is B's added latency (the setup's latency minus its baseline's, both at the
common rate) minus A's, in ms, as for runs at the same rate (compare/rate_changes.py), but
with no interval and never flagged: the interpolated side rests on two single measurements
of each setup, search steps in one block each, whose spread the run cannot show, and on the
curve's shape between them (convex near the knee), which no interval here covers; see
docs/comparing.md. Pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..analysis.rate_latency import ADDED, RateCell
from ..core.setups import BASELINE, baseline_of

NOT_FLAGGED = (
    "interpolated on a run's curve: no interval, never flagged (the interpolated side rests on single "
    "search-step measurements whose spread the run cannot show)"
)
CURVE_METHOD = (
    "Runs at different offered rates: both read at one common rate, the lowest rate planned in one run only that the "
    "other run's curve covers (its held rates, planned and the capacity search's steps, on both sides of it). A run "
    "that did not measure that rate has its p50 and p99 read on its curve: linear in log(rate) and log(latency) between "
    "the two nearest held rates around it, never beyond them. B - A of the added latency in ms, shown without an "
    "interval and never flagged: the curve's points above the light load are single measurements, so their spread "
    "and the curve's bend between them are unknown. To compare with an interval, rerun both at one rate."
)


@dataclass(frozen=True)
class CurvePoint:
    """One run's latency of one setup at one rate and percentile (ms): measured there, or read on its curve between two held rates."""

    latency_ms: float
    low_rps: int  # the rates it was read from (both the rate itself when measured there)
    high_rps: int

    @property
    def measured(self) -> bool:
        """Return True when the run measured this rate itself (no interpolation)."""
        return self.low_rps == self.high_rps

    @property
    def source(self) -> str:
        """Return where the figure comes from: 'measured at 960 req/s' or 'interpolated from 710 and 1,400 req/s'."""
        return f"measured at {self.low_rps:,} req/s" if self.measured else f"interpolated from {self.low_rps:,} and {self.high_rps:,} req/s"


def log_interpolate(rate: float, low: tuple[float, float], high: tuple[float, float]) -> float:
    """Return the latency at rate on the straight line through two (rate, latency) points in log(rate)-log(latency).

    >>> round(log_interpolate(2000, (1000, 2.0), (4000, 8.0)), 6)
    4.0
    """
    (r1, y1), (r2, y2) = low, high
    w = (math.log(rate) - math.log(r1)) / (math.log(r2) - math.log(r1))
    return math.exp(math.log(y1) + w * (math.log(y2) - math.log(y1)))


def curve_value(cells: Sequence[RateCell], setup: str, gomaxprocs: int, rate: int, percentile: str) -> CurvePoint | None:
    """Return one run's latency of setup at rate (percentile 'p50' or 'p99'): its held cell there, else read between the nearest held rates around it.

    None when the rate lies outside the setup's held rates (no extrapolation), when the cell
    at the rate itself did not hold, or when a rate not held lies between the two around it
    (the curve is not one curve there: the knee, or a pause).
    """
    mine = [c for c in cells if c.setup == setup and c.gomaxprocs == gomaxprocs]
    at = [c for c in mine if c.offered_rps == rate]
    if at:
        value = getattr(at[0], f"{percentile}_ms")
        return CurvePoint(value, rate, rate) if at[0].held and value and value > 0 else None
    held = [c for c in mine if c.held and getattr(c, f"{percentile}_ms") and getattr(c, f"{percentile}_ms") > 0]
    below = max((c for c in held if c.offered_rps < rate), key=lambda c: c.offered_rps, default=None)
    above = min((c for c in held if c.offered_rps > rate), key=lambda c: c.offered_rps, default=None)
    if below is None or above is None:
        return None
    if any(not c.held and below.offered_rps < c.offered_rps < above.offered_rps for c in mine):
        return None
    low, high = (below.offered_rps, getattr(below, f"{percentile}_ms")), (above.offered_rps, getattr(above, f"{percentile}_ms"))
    return CurvePoint(log_interpolate(rate, low, high), below.offered_rps, above.offered_rps)


@dataclass(frozen=True)
class CurveChange:
    """One setup's added latency at one GOMAXPROCS, common rate and percentile in runs A and B (ms), at least one of them read on its curve; B - A without an interval."""

    gomaxprocs: int
    offered_rps: int  # the common rate
    setup: str
    percentile: str  # "p50" | "p99"
    a_ms: float  # added latency in A: setup - baseline at the common rate
    b_ms: float
    change_ms: float
    a_latency_ms: float  # the setup's own latency (and its baseline's) in each run at the common rate
    b_latency_ms: float
    a_baseline_ms: float
    b_baseline_ms: float
    a_from: str  # where A's figures come from: 'measured at 960 req/s' or 'interpolated from 710 and 1,400 req/s'
    b_from: str
    baseline: str = BASELINE
    note: str = NOT_FLAGGED

    flagged = False  # no interval: never flagged (see the module's docstring)

    def record(self) -> dict:
        """Return the compare.json record (`fixed_rate_interpolated`)."""
        found = {k: getattr(self, k) for k in self.__dataclass_fields__}
        return {
            **{k: round(v, 4) if isinstance(v, float) else v for k, v in found.items()},
            "interpolated": True,
            "flagged": False,
            "ci_low": None,
            "ci_high": None,
        }


def point_pair(cells: Sequence[RateCell], setup: str, gomaxprocs: int, rate: int, percentile: str) -> tuple[CurvePoint, CurvePoint] | None:
    """Return (setup's, its baseline's) latency at rate in one run, None unless both are measured or covered there."""
    own, base = (
        curve_value(cells, setup, gomaxprocs, rate, percentile),
        curve_value(cells, baseline_of(setup), gomaxprocs, rate, percentile),
    )
    return None if own is None or base is None else (own, base)


def source_of(own: CurvePoint, base: CurvePoint) -> str:
    """Return where a run's added latency comes from, once when the setup and its baseline share it."""
    if own.source == base.source:
        return own.source
    return f"{own.source}; its baseline {base.source}"


def planned_by_gomaxprocs(cells: Sequence[RateCell]) -> dict[int, set[int]]:
    """Return the planned rates (RateCell.planned) per GOMAXPROCS value."""
    found: dict[int, set[int]] = {}
    for c in cells:
        if c.planned:
            found.setdefault(c.gomaxprocs, set()).add(c.offered_rps)
    return found


def covered_setups(cells_a: Sequence[RateCell], cells_b: Sequence[RateCell], gomaxprocs: int, rate: int) -> list[str]:
    """Return the setups (not baselines) whose p50 and p99, and their baseline's, both runs give at rate, measured or on their curve."""
    setups = {c.setup for c in cells_a if c.gomaxprocs == gomaxprocs} & {c.setup for c in cells_b if c.gomaxprocs == gomaxprocs}
    return sorted(
        s
        for s in setups
        if s != BASELINE
        and all(point_pair(cells, s, gomaxprocs, rate, name) is not None for cells in (cells_a, cells_b) for name, _ in ADDED)
    )


def common_rate(cells_a: Sequence[RateCell], cells_b: Sequence[RateCell], gomaxprocs: int) -> int | None:
    """Return the lowest rate planned in one run only at gomaxprocs at which some setup and its baseline are covered in both runs; None when none is, or when the runs planned a rate in common."""
    plan_a, plan_b = planned_by_gomaxprocs(cells_a).get(gomaxprocs, set()), planned_by_gomaxprocs(cells_b).get(gomaxprocs, set())
    if plan_a & plan_b:  # a rate both planned is compared as measured, with its interval (compare/rate_changes.py)
        return None
    for rate in sorted(plan_a ^ plan_b):
        if covered_setups(cells_a, cells_b, gomaxprocs, rate):
            return rate
    return None


def curve_coverage(cells_a: Sequence[RateCell], cells_b: Sequence[RateCell]) -> dict[int, tuple[int, list[str], list[str]]]:
    """Return per GOMAXPROCS with a common rate: (the rate, the setups both runs' curves cover there, the setups of both runs they do not)."""
    found = {}
    for n in sorted({c.gomaxprocs for c in cells_a} & {c.gomaxprocs for c in cells_b}):
        rate = common_rate(cells_a, cells_b, n)
        if rate is None:
            continue
        covered = covered_setups(cells_a, cells_b, n, rate)
        both = {c.setup for c in cells_a if c.gomaxprocs == n} & {c.setup for c in cells_b if c.gomaxprocs == n}
        found[n] = (rate, covered, sorted(both - set(covered) - {BASELINE}))
    return found


def curve_changes(cells_a: Sequence[RateCell], cells_b: Sequence[RateCell]) -> list[CurveChange]:
    """Return, per GOMAXPROCS value whose planned rates differ between the runs, each covered setup's added p50 and p99 at the common rate, B - A in ms."""
    changes = []
    for n, (rate, covered, _) in curve_coverage(cells_a, cells_b).items():
        for setup in covered:
            for name, _ in ADDED:
                (own_a, base_a), (own_b, base_b) = point_pair(cells_a, setup, n, rate, name), point_pair(cells_b, setup, n, rate, name)
                added_a, added_b = own_a.latency_ms - base_a.latency_ms, own_b.latency_ms - base_b.latency_ms
                changes.append(
                    CurveChange(
                        n,
                        rate,
                        setup,
                        name,
                        added_a,
                        added_b,
                        added_b - added_a,
                        own_a.latency_ms,
                        own_b.latency_ms,
                        base_a.latency_ms,
                        base_b.latency_ms,
                        source_of(own_a, base_a),
                        source_of(own_b, base_b),
                        baseline_of(setup),
                    )
                )
    return changes


def curve_change_lines(changes: Sequence[CurveChange]) -> list[str]:
    """Return one terminal line per interpolated change: 'GOMAXPROCS=1 at 960 req/s offered, open loop, interpolated: nginx-http added p50 0.103 -> 0.195 ms, +0.092 ms (A measured at 960 req/s; B interpolated from 902 and 977 req/s; no interval, not flagged)'."""
    return [
        f"GOMAXPROCS={c.gomaxprocs} at {c.offered_rps:,} req/s offered, open loop, interpolated: {c.setup} added {c.percentile} "
        f"{c.a_ms:.3f} -> {c.b_ms:.3f} ms, {c.change_ms:+.3f} ms (A {c.a_from}; B {c.b_from}; no interval, not flagged)"
        for c in changes
    ]
