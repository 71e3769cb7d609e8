"""Compare (fixed rate): two runs' open-loop measurements -> the change of each setup's added latency over go-http, per GOMAXPROCS, rate and percentile.

For a setup other than go-http measured at the same GOMAXPROCS and offered rate in both
runs, with that cell and go-http's held in both (the runs' rate_cells, as their analysis has them), each
run's units are its blocks' mean added latencies (setup - go-http in the same block, the
units of the run's own interval); the change is B's mean minus A's, in ms, with Welch's
95% t-interval on the two sets of blocks (between_runs.welch_difference_interval), as compare/two_runs.py
does for the ratios on logs, widened by each run's own shift (RATE_RUN_SD, as two_runs.py's
RUN_SD). Flagged when the interval excludes 0. Pure functions.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ..analysis.rate_latency import ADDED, BASELINE, RateCell, added_pairs, rate_cells
from ..core.between_runs import welch_difference_interval
from ..core.setups import baseline_of, split_twin
from ..core.stats import Interval, block_difference_interval
from ..runs.rate_measurements import RateMeasurement

TOO_FEW_BLOCKS = "need at least 2 blocks in each run: no interval"
# Runs drift: a run's added latency carries a shift of its own, which its blocks
# do not show. RATE_RUN_SD is that shift's sd as a share of the added latency: the largest
# DerSimonian-Laird between-run sd over the 12 added latencies (3 nginx setups, GOMAXPROCS 1
# and 2, p50 and p99) of two same-settings runs at 4,000 req/s minutes apart on an idle 2-core
# machine, 0.022 ms of nginx-fcgi-tcp's 0.18 ms at p50 (GOMAXPROCS=2), rounded up; the other
# 11 were 0. benchmarks/rate_drift.py measures it, tests/fixtures/rate_drift.json keeps the
# runs' block means and tests/test_compare_rate_changes_calibration.py recomputes it.
RATE_RUN_SD = 0.13
RATE_METHOD = (
    "Added latency = a setup's latency minus go-http's at the same offered rate, GOMAXPROCS and block, open loop (vegeta); "
    "the change is run B's mean over blocks minus run A's, in ms, with Welch's 95% t interval on the two runs' block means, "
    f"widened by a run-to-run sd of {RATE_RUN_SD:.0%} of the added latency for each run (runs drift: measured on two "
    "same-settings runs minutes apart), flagged only when the interval excludes 0. Only cells that held the rate in both runs are compared."
)


def added_change_interval(units_a: list[float], units_b: list[float], run_sd: float = RATE_RUN_SD) -> Interval | None:
    """Return mean(B) - mean(A) of two runs' block means (ms) with Welch's 95% interval, widened by run_sd x the larger |mean| for each run; None with fewer than 2 blocks a side.

    >>> found = added_change_interval([0.16, 0.17, 0.15, 0.16], [0.17, 0.16, 0.18, 0.17])
    >>> round(found.estimate, 3), round(found.low, 3), round(found.high, 3)
    (0.01, -0.052, 0.072)
    >>> added_change_interval([0.16], [0.17, 0.16]) is None
    True
    """
    if len(units_a) < 2 or len(units_b) < 2:
        return None
    level = max(abs(statistics.mean(units_a)), abs(statistics.mean(units_b)))
    return welch_difference_interval(units_a, units_b, 2 * (run_sd * level) ** 2)


@dataclass(frozen=True)
class RateChange:
    """The added latency of one setup at one GOMAXPROCS, rate and percentile in runs A and B (ms), and B - A with its interval."""

    gomaxprocs: int
    offered_rps: int
    setup: str
    percentile: str  # "p50" | "p99"
    a_ms: float | None
    b_ms: float | None
    change_ms: float | None
    ci_low: float | None
    ci_high: float | None
    blocks_a: int
    blocks_b: int
    note: str | None = None  # why there is no change or no interval

    @property
    def flagged(self) -> bool:
        """Return True when the interval excludes 0: the added latency changed, not noise."""
        return self.ci_low is not None and self.ci_high is not None and not self.ci_low <= 0.0 <= self.ci_high

    def record(self) -> dict:
        """Return the compare.json record."""
        return {**{k: getattr(self, k) for k in self.__dataclass_fields__}, "flagged": self.flagged}


def cell_measurements(measurements: list[RateMeasurement], setup: str, gomaxprocs: int, rate: int) -> list[RateMeasurement]:
    """Return the measurements of one setup at one GOMAXPROCS and offered rate."""
    return [m for m in measurements if (m.setup, m.gomaxprocs, m.rate) == (setup, gomaxprocs, rate)]


def block_units(measurements: list[RateMeasurement], setup: str, gomaxprocs: int, rate: int, p: float) -> list[float]:
    """Return one run's per-block mean added latency (ms) of setup over its baseline (go-http, or go-https for nginx's TLS setups; a twin: its original's) at percentile p."""
    pairs = added_pairs(
        cell_measurements(measurements, setup, gomaxprocs, rate), cell_measurements(measurements, baseline_of(setup), gomaxprocs, rate), p
    )
    return [statistics.mean(a - b for a, b in block) for block in pairs]


def planned_only(measurements: list[RateMeasurement], cells: Sequence[RateCell]) -> tuple[list[RateMeasurement], list[RateCell]]:
    """Return the measurements and cells at the rates the run planned (RateCell.planned): the capacity search's steps, each measured once at a rate of its own, compare with nothing."""
    kept = [c for c in cells if c.planned]
    keys = {(c.setup, c.gomaxprocs, c.offered_rps) for c in kept}
    return [m for m in measurements if (m.setup, m.gomaxprocs, m.rate) in keys], kept


def held_cells(measurements: list[RateMeasurement], cells: Sequence[RateCell] | None) -> set[tuple[str, int, int]]:
    """Return (setup, GOMAXPROCS, rate) of the cells that held the rate: from cells (the run's analysis, Analysed.rates), else from the measurements."""
    return {(c.setup, c.gomaxprocs, c.offered_rps) for c in (rate_cells(measurements) if cells is None else cells) if c.held}


def rate_changes(
    a: list[RateMeasurement], b: list[RateMeasurement], cells_a: Sequence[RateCell] | None = None, cells_b: Sequence[RateCell] | None = None
) -> list[RateChange]:
    """Return the change of every added latency both runs can give (held in both), by GOMAXPROCS, rate, setup, percentile.

    cells_a and cells_b are the runs' fixed-rate cells as their analysis computed them
    (Analysed.rates: compare passes them); without them they are computed from a and b.
    """
    held_a, held_b = held_cells(a, cells_a), held_cells(b, cells_b)

    def base(key: tuple[str, int, int]) -> tuple[str, int, int]:
        return (baseline_of(key[0]), *key[1:])

    both = [key for key in held_a if key in held_b and key[0] != BASELINE and base(key) in held_a and base(key) in held_b]
    changes = []
    for setup, n, rate in sorted(both, key=lambda k: (k[1], k[2], k[0])):
        for name, p in ADDED:
            units_a, units_b = block_units(a, setup, n, rate, p), block_units(b, setup, n, rate, p)
            if not units_a or not units_b:
                continue
            mean_a, mean_b = statistics.mean(units_a), statistics.mean(units_b)
            found = added_change_interval(units_a, units_b)
            low, high = (None, None) if found is None else (found.low, found.high)
            note = TOO_FEW_BLOCKS if found is None else None
            changes.append(RateChange(n, rate, setup, name, mean_a, mean_b, mean_b - mean_a, low, high, len(units_a), len(units_b), note))
    return changes


VARIANT_RATE_METHOD = (
    "Added latency = a setup's latency minus go-http's at the same offered rate, GOMAXPROCS and block, open loop (vegeta). "
    "A is each nginx setup's, B its --variant twin's, both measured in the same blocks of the one run's fixed-rate phase; "
    "the change is B's latency minus A's in each block (go-http's cancels), with a Student-t 95% interval over the blocks "
    "(blocks - 1 degrees of freedom). Both were measured after the same server start and at the same time, so the run's "
    "drift cancels and, unlike two runs, nothing is added for it; flagged only when the interval excludes 0. "
    "Only cells that held the rate, with go-http's, are compared."
)


def variant_rate_changes(measurements: list[RateMeasurement], variant: str, cells: Sequence[RateCell] | None = None) -> list[RateChange]:
    """Return, for one run with --variant, each twin's added latency against its original's: B - A per block, a t-interval over blocks.

    A twin (ORIGINAL~NAME) and its original were measured in the same blocks of the phase, so
    each block gives one paired difference, twin - original at percentile p; with one block
    there is the estimate without an interval. cells: the run's fixed-rate cells as its
    analysis computed them (Analysed.rates), else computed here.
    """
    held = held_cells(measurements, cells)
    changes = []
    for twin, n, rate in sorted(held, key=lambda k: (k[1], k[2], k[0])):
        original, name = split_twin(twin)
        if name != variant or (original, n, rate) not in held or (baseline_of(original), n, rate) not in held:
            continue
        for label, p in ADDED:
            a_units, b_units = block_units(measurements, original, n, rate, p), block_units(measurements, twin, n, rate, p)  # over go-http
            paired = added_pairs(cell_measurements(measurements, twin, n, rate), cell_measurements(measurements, original, n, rate), p)
            if not a_units or not b_units or not paired:
                continue
            found = block_difference_interval(paired)
            low, high = (found.low, found.high) if found.blocks > 1 else (None, None)
            note = None if found.blocks > 1 else "one block: no interval"
            changes.append(
                RateChange(
                    n,
                    rate,
                    original,
                    label,
                    statistics.mean(a_units),
                    statistics.mean(b_units),
                    found.estimate,
                    low,
                    high,
                    len(a_units),
                    len(b_units),
                    note,
                )
            )
    return changes


def rate_only_lines(
    a: list[RateMeasurement], b: list[RateMeasurement], curves: dict[int, tuple[int, list[str], list[str]]] | None = None
) -> list[str]:
    """Return a line per GOMAXPROCS value whose offered rates differ between the runs: added latencies compare with an interval only at the same rate.

    A default run's rate is a share of its own slowest setup's req/s, so two default runs
    rarely offer the same rate; saying so keeps an empty comparison from reading as "no change".
    curves: per GOMAXPROCS, (the common rate, the setups read there on both runs' curves, those
    not covered) as common_rate.curve_coverage gives them; the line then says so, and the rerun
    stays the way to an interval.
    """

    def loads(measurements: list[RateMeasurement]) -> dict[int, set[int]]:
        found: dict[int, set[int]] = {}
        for m in measurements:
            found.setdefault(m.gomaxprocs, set()).add(m.rate)
        return found

    in_a, in_b = loads(a), loads(b)
    lines = []
    for n in sorted(set(in_a) | set(in_b)):
        only_a, only_b = in_a.get(n, set()) - in_b.get(n, set()), in_b.get(n, set()) - in_a.get(n, set())
        if only_a or only_b:
            said = "; ".join(
                f"only in {side}: {', '.join(f'{r:,}' for r in sorted(rates))} req/s"
                for side, rates in (("A", only_a), ("B", only_b))
                if rates
            )
            curve = (curves or {}).get(n)
            if curve is None:
                lines.append(
                    f"fixed rate GOMAXPROCS={n}: {said}; added latencies compare only at the same offered rate: {rerun_hint(only_a | only_b)}"
                )
                continue
            rate, covered, uncovered = curve
            missing = f"; not covered by both runs' curves there: {', '.join(uncovered)}" if uncovered else ""
            lines.append(
                f"fixed rate GOMAXPROCS={n}: {said}; {', '.join(covered)} read at {rate:,} req/s on each run's curve "
                f"(interpolated: no interval, not flagged){missing}; to compare with an interval, {rerun_hint(only_a | only_b)}"
            )
    return lines


def rerun_hint(rates: set[int]) -> str:
    """Return how to rerun both runs at one offered rate: the lowest of the rates measured in one run only, which both can more likely hold.

    >>> rerun_hint({6200, 5500})
    'run both with one rate, e.g. ./run_bench.sh --rates 5500'
    """
    return f"run both with one rate, e.g. ./run_bench.sh --rates {min(rates)}"


def rate_change_lines(changes: list[RateChange]) -> list[str]:
    """Return one terminal line per change: 'GOMAXPROCS=1 at 2,000 req/s offered, open loop: nginx-http added p99 0.38 -> 0.52 ms, +0.14 ms (0.05 to 0.23) WORSE'."""
    lines = []
    for c in changes:
        where = f"GOMAXPROCS={c.gomaxprocs} at {c.offered_rps:,} req/s offered, open loop: {c.setup} added {c.percentile}"
        shown = f"{c.a_ms:.3f} -> {c.b_ms:.3f} ms, {c.change_ms:+.3f} ms"
        interval = f" ({c.ci_low:+.3f} to {c.ci_high:+.3f})" if c.ci_low is not None else f" ({c.note})"
        verdict = (" WORSE" if c.change_ms > 0 else " BETTER") if c.flagged else ""
        lines.append(f"{where} {shown}{interval}{verdict}")
    return lines
