"""Compare: two analysed runs -> per cell, the change in req/s, in the overhead ratio and in p99 latency, with intervals.

The runs are independent (two machines, two nginx versions, pinned or not), so their
measurements cannot be paired: each run contributes its own units and the change B / A is
exp(mean of B's log units - mean of A's), with Welch's 95% t interval on the logs
(Welch-Satterthwaite degrees of freedom, rounded down). A change is flagged only where
the interval excludes 1.0 ("no change"). Within a run, the overhead ratio keeps its
round pairing with go-http.

Units: a run measured in blocks (at least 2 server starts) contributes one value per block
(the block's Huber estimate of log req/s, or of log ratios: stats.block_summaries), so start-to-start variation is in the
spread. A run recorded before blocks has one server start per GOMAXPROCS pass: all its
repeats share that start, and the start-to-start effect is confounded with the run
itself. Refusing to flag such runs would leave every recorded run uncomparable, so the
difference's variance is widened instead by START_SD**2 for each such run: the
start-to-start spread measured on the recorded runs (see START_SD), entered in the
Welch-Satterthwaite degrees of freedom with the 4 it was estimated with. The simulation
in tests/test_compare_two_runs_calibration.py (no true change; start effects of 5%, 10% heavy-tailed
measurement noise, 2% outliers) shows the false-change rate of both at 3, 5 and 10
repeats or blocks, and the percentile bootstrap used before flagging far more often.

req/s and p99 latency move more from start to start than the ratio does (both sides of a
ratio move together), so their runs without blocks are widened by THROUGHPUT_START_SD and
LATENCY_START_SD instead (measured the same way, see there).
Higher req/s and a higher ratio are better; lower latency is better (FIGURES).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..analysis.analyze import CPU_METRIC, THROUGHPUT, Analysed, paired_blocks, paired_by_repeat
from ..analysis.cells import Cell
from ..compare.common_rate import CurveChange, curve_changes, curve_coverage
from ..compare.rate_changes import RateChange, planned_only, rate_changes, rate_only_lines
from ..core import between_runs, stats
from ..core.setups import BASELINE, baseline_of, setup_order
from .settings import raw_differences, show

# Start-to-start sd of a log figure between runs without blocks: the DerSimonian-Laird
# between-run sd (DerSimonian & Laird, Controlled Clinical Trials 7, 1986) of nginx-http's
# log ratio at GOMAXPROCS=2 across the five recorded runs with it (default-2cores,
# keepalive-on, keepalive-on-again, quick-1-repeat, sweep-all-setups) is 0.048, rounded up.
# tests/test_compare_two_runs_calibration.py recomputes it from tests/fixtures/runs.
START_SD = 0.05
START_DF = 4  # five runs
# The same DerSimonian-Laird between-run sd of log p99 latency at GOMAXPROCS=2 over the same
# five runs: 0.083 (go-http), 0.165 (nginx-http), 0.132 (nginx-fcgi-tcp); the largest, rounded up.
LATENCY_START_SD = 0.17
# The same DerSimonian-Laird between-run sd of log req/s at GOMAXPROCS=2 over the same five
# runs: 0.076 (go-http), 0.130 (nginx-http), 0.134 (nginx-fcgi-tcp); the largest, rounded up.
# Widened by the ratio's 0.05 instead, one-start runs at 3 repeats flagged 22.8% of
# simulated comparisons with no true change (tests/test_compare_two_runs_calibration.py).
THROUGHPUT_START_SD = 0.14
# Runs drift: two default runs of the same code minutes apart moved every ratio by
# 1.6-5%, beyond their intervals. A run measured in blocks averages over its own starts, but
# not over its own day: its whole figure carries a run-level shift. RUN_SD, THROUGHPUT_RUN_SD
# and LATENCY_RUN_SD are the DerSimonian-Laird between-run sds of the log figure over the
# recorded same-settings default runs (tests/fixtures/runs/default-run-1..6: 1-3 minutes
# apart, 4-6 the same an hour later),
# each run's units its block summaries; the largest over the setups and GOMAXPROCS values,
# rounded up. tests/test_compare_two_runs_calibration.py recomputes them.
RUN_SD = 0.05  # measured 0.046 (nginx-http's ratio at GOMAXPROCS=2: 0.597, 0.565, 0.571, 0.556, 0.619, 0.635)
THROUGHPUT_RUN_SD = 0.13  # measured 0.127: this machine's own speed moved more than any ratio
LATENCY_RUN_SD = 0.21  # measured 0.206
CPU_RUN_SD = 0.05  # server CPU per request: measured 0.048 (nginx-fcgi-unix at GOMAXPROCS=1; go-http's 0.000-0.014)
# A capacity at the latency objective: no recorded same-settings runs measured it yet, so its run-to-run sd is
# req/s's (it is a rate the machine's own speed moves as much): an assumption, said on the page.
CAPACITY_RUN_SD = THROUGHPUT_RUN_SD
CAPACITY = "capacity_rps"
RUN_DF = 5  # six runs
P99 = "latency_p99_ms"


METHOD = (
    "Change = run B / run A, on the log scale: for req/s and p99 latency, the geometric mean of each run's kept measurements; "
    "for the overhead ratio, of each run's round-paired setup/go-http ratios. A run measured in blocks (server "
    "starts) counts one value per block (the block's Huber estimate); a run without blocks counts its repeats. The 95% "
    "interval is Welch's t interval on the difference of the log means (Welch-Satterthwaite degrees of freedom). "
    "A run without blocks started its servers once, so its repeats cannot show how much a restart moves the "
    f"figures: for each such run the interval is widened by a start-to-start sd of {START_SD:.0%} for the ratio (the "
    f"spread of the nginx-http ratio across this project's recorded runs), {THROUGHPUT_START_SD:.0%} for req/s and "
    f"{LATENCY_START_SD:.0%} for p99 latency, which move more. A run in blocks covers its own starts but not its "
    f"own time: runs drift, so each is widened by a run-to-run sd of {RUN_SD:.1%} for the ratio, {THROUGHPUT_RUN_SD:.0%} "
    f"for req/s and {LATENCY_RUN_SD:.0%} for p99 latency, estimated (DerSimonian-Laird) from six default runs of the "
    "same settings within an hour on a 2-core machine; runs on different days drifted more, so compare two runs of one "
    "day, or measure both variants in one run. A change is flagged only when the interval "
    "excludes 1.0; with fewer than 2 blocks (or repeats) in a run there is no interval. A capacity at the latency objective "
    "counts one value per block (that block's capacity) and is widened like req/s (no run-to-run sd of its own is measured yet); "
    "a bound, or two objectives, give no interval."
)


@dataclass(frozen=True)
class Figure:
    """What one compared figure is: its name on the page, which way is better, its start-to-start sd (runs without blocks) and run-to-run sd (runs in blocks)."""

    label: str
    higher_is_better: bool
    start_sd: float | None  # None: no between-run sd measured, so only one run's in-run A/B compares this figure
    run_sd: float | None


FIGURES = {
    THROUGHPUT: Figure("req/s", True, THROUGHPUT_START_SD, THROUGHPUT_RUN_SD),
    "overhead_ratio": Figure("ratio to go-http", True, START_SD, RUN_SD),
    P99: Figure("p99 latency at saturation", False, LATENCY_START_SD, LATENCY_RUN_SD),  # wrk's: closed loop, mostly queueing
    # CPU per request: no start-to-start sd (too few recorded runs without blocks measured it), so between two runs
    # only runs in blocks give it an interval; lower is better.
    CPU_METRIC: Figure("server CPU ms per 1,000 requests", False, None, CPU_RUN_SD),
    # The capacity at the run's latency objective (analysis/capacities.py): one unit per block, its log capacity;
    # runs are compared only when both have one objective and neither's capacity is a bound.
    CAPACITY: Figure("capacity at the latency objective", True, None, CAPACITY_RUN_SD),
}
NO_START_SD = "a run without blocks: no start-to-start sd measured for this figure, so no interval (measure both runs in blocks)"
MIN_UNITS = 2
TOO_FEW = "need at least 2 blocks (or repeats) in each run: no interval"


@dataclass(frozen=True)
class Change:
    """One figure of one cell in both runs: b / a with its interval."""

    gomaxprocs: int
    connections: int
    setup: str
    metric: str  # requests_per_sec | overhead_ratio | latency_p99_ms | cpu_server_ms_per_1k (FIGURES)
    a: float | None
    b: float | None
    change: float | None
    ci_low: float | None
    ci_high: float | None
    n_a: int
    n_b: int
    note: str | None = None  # why there is no change figure or no interval
    unit: str | None = None  # "block" when both runs had blocks, else "repeat" (widened by the figure's start sd)
    baseline: str | None = None  # overhead_ratio: the setup divided by in both runs (go-http; go-https for nginx's TLS)
    detectable_change: float | None = (
        None  # the smallest true change flagged in 80% of comparisons, relative (0.12: 12%); None without an interval
    )

    @property
    def label(self) -> str:
        """Return the figure's name: 'req/s', 'p99 latency', 'ratio to go-http' or the ratio's own divisor ('ratio to go-https')."""
        if self.metric == "overhead_ratio" and self.baseline:
            return f"ratio to {self.baseline}"
        return FIGURES[self.metric].label

    @property
    def flagged(self) -> bool:
        """Return True when the interval excludes 1.0: a change, not noise."""
        return self.ci_low is not None and self.ci_high is not None and not self.ci_low <= 1.0 <= self.ci_high

    @property
    def better(self) -> bool | None:
        """Return True when B is measurably better than A (higher req/s or ratio, lower latency), False when worse, None when not flagged."""
        if not self.flagged:
            return None
        return (self.change > 1.0) == FIGURES[self.metric].higher_is_better


@dataclass(frozen=True)
class Drift:
    """What the machine-drift rule found (machine_drift): every req/s figure moved one way together while the ratios held."""

    named: bool
    figures: int  # req/s figures the rule looked at: 2 or more units in both runs
    low: float | None  # the smallest and largest B / A among them
    high: float | None
    shift: float | None  # their shared shift: exp(mean of log B / A)
    bound: float | None  # the shift their scatter allows: exp(t_.975(k - 1) x sd / sqrt(k)) - 1
    ratios: int  # overhead ratios compared with an interval
    ratios_flagged: int
    reason: str  # why it is or is not named

    @property
    def sentence(self) -> str:
        """Return the words for the top of the page and the terminal ('' when not named)."""
        if not self.named:
            return ""
        down = self.shift < 1.0
        least, most = sorted(round(abs(v - 1.0) * 100) for v in (self.low, self.high))
        return (
            f"Every req/s moved {'down' if down else 'up'} {least}{f'-{most}' if most != least else ''}% together ({self.figures} of {self.figures} figures, "
            f"{abs(self.shift - 1.0):.0%} on average, beyond the {self.bound:.0%} their scatter allows) while the ratios held "
            f"(none of the {self.ratios} flagged): the machine was {'slower' if down else 'faster'} during B (drift), not nginx."
        )


@dataclass(frozen=True)
class RunComparison:
    """Two runs side by side."""

    a: Analysed
    b: Analysed
    changes: tuple[Change, ...]
    only_in_a: tuple[tuple[int, int, str], ...]
    only_in_b: tuple[tuple[int, int, str], ...]
    differences: tuple[tuple[str, str, str], ...]  # (what, in A, in B) of parameters and environment
    differing: tuple[tuple[str, str, object, object], ...] = ()  # (section, key, value in A, value in B), raw values
    method: str = METHOD
    rate_changes: tuple[RateChange, ...] = ()  # the fixed-rate phase's added latencies (compare/rate_changes.py)
    rate_only: tuple[str, ...] = ()  # offered rates measured in one run only (compare.rate_changes.rate_only_lines)
    curve_changes: tuple[
        CurveChange, ...
    ] = ()  # runs at different rates: added latencies read at a common rate on each run's curve, no interval
    labels: tuple[str, str] | None = None  # what A and B are when not two runs: one run's nginx and its --variant (variants.py)
    variant: object = None  # that variant (variant_ratio.Variant), None for two runs
    drift: Drift | None = None  # whether every req/s moved together while the ratios held (machine_drift); None for one run's A/B

    @property
    def in_run(self) -> bool:
        """Return True when A and B are one run's nginx setups and their --variant twins, measured in the same rounds."""
        return self.labels is not None

    @property
    def names(self) -> tuple[str, str]:
        """Return how the page names A and B: the run ids, or (one run) its nginx and its variant."""
        return self.labels or (self.a.run.run_id, self.b.run.run_id)

    @property
    def flagged(self) -> tuple[Change, ...]:
        """Return the changes whose interval excludes 1.0."""
        return tuple(c for c in self.changes if c.flagged)


def compare(a: Analysed, b: Analysed) -> RunComparison:
    """Compare every cell both runs measured."""
    cells_a = {(c.gomaxprocs, c.connections, c.setup): c for c in a.analysis.cells}
    cells_b = {(c.gomaxprocs, c.connections, c.setup): c for c in b.analysis.cells}
    common = sorted(set(cells_a) & set(cells_b), key=lambda k: (k[0], k[1], setup_order(k[2]), k[2]))
    changes, throughput = [], []
    for key in common:
        changes.append(throughput_change(cells_a[key], cells_b[key]))
        throughput.append((throughput_units(cells_a[key]), throughput_units(cells_b[key])))
        if key[2] != BASELINE:  # each ratio over its own divisor in both runs: nginx-https over go-https
            base = key[:2] + (baseline_of(key[2]),)
            changes.append(replace(ratio_change(cells_a[key], cells_b[key], cells_a.get(base), cells_b.get(base)), baseline=base[2]))
        changes.append(latency_change(cells_a[key], cells_b[key]))
        if cells_a[key].metrics.get(CPU_METRIC) is not None or cells_b[key].metrics.get(CPU_METRIC) is not None:
            changes.append(
                change_of(cells_a[key], CPU_METRIC, metric_units(cells_a[key], CPU_METRIC), metric_units(cells_b[key], CPU_METRIC))
            )
    changes += capacity_changes(
        a.capacities, b.capacities, max((c.connections for c in a.analysis.cells), default=0)
    )  # after the cells' figures
    raw = raw_differences(a, b)
    (rates_a, planned_a), (rates_b, planned_b) = planned_only(list(a.run.rates), a.rates), planned_only(list(b.run.rates), b.rates)
    return RunComparison(
        a,
        b,
        tuple(changes),
        tuple(sorted(set(cells_a) - set(cells_b))),
        tuple(sorted(set(cells_b) - set(cells_a))),
        tuple((f"{section} {key}", show(value_a), show(value_b)) for section, key, value_a, value_b in raw),
        tuple(raw),
        rate_changes=tuple(rate_changes(rates_a, rates_b, planned_a, planned_b)),  # held: as each run's analysis says; planned rates only
        rate_only=tuple(rate_only_lines(rates_a, rates_b, curve_coverage(a.rates, b.rates))),
        curve_changes=tuple(curve_changes(a.rates, b.rates)),  # every held cell: planned rates and the capacity search's steps
        drift=machine_drift(throughput, [c for c in changes if c.metric == "overhead_ratio"]),
    )


def capacity_changes(a, b, connections: int) -> list[Change]:
    """Return each capacity both runs found at one objective: B / A over their blocks' capacities (change_of, a run-to-run sd per run); a bound or another objective gives no figure, said why.

    connections: where the capacities sit in the page's groups (vegeta's connection cap, the run's connection level).
    """
    found = []
    by_a = {(c.setup, c.gomaxprocs): c for c in a}
    for c in b:
        other = by_a.get((c.setup, c.gomaxprocs))
        if other is None:
            continue
        where = (c.gomaxprocs, connections, c.setup, CAPACITY)
        if other.slo != c.slo:
            found.append(
                Change(
                    *where,
                    other.estimate.value,
                    c.estimate.value,
                    None,
                    None,
                    None,
                    other.estimate.blocks,
                    c.estimate.blocks,
                    f"another objective: {other.slo.words} in A, {c.slo.words} in B",
                )
            )
            continue
        if other.estimate.bound or c.estimate.bound:
            found.append(
                Change(
                    *where,
                    other.estimate.value,
                    c.estimate.value,
                    c.estimate.value / other.estimate.value,
                    None,
                    None,
                    other.estimate.blocks,
                    c.estimate.blocks,
                    "a bound in one run: the search met an edge, no interval",
                )
            )
            continue
        units = [([math.log(block.rps) for block in run.blocks], True) for run in (other, c)]
        found.append(change_of(where[:3], CAPACITY, *units))
    return found


MIN_DRIFT_FIGURES = 3  # all of 3 independent figures on one side of 1.0 by chance: 25%


def machine_drift(throughput: list[tuple[tuple[list[float], bool], tuple[list[float], bool]]], ratios: list[Change]) -> Drift:
    """Return whether the machine drifted between the runs: every req/s moved one way together while the ratios held.

    throughput: each req/s figure's (units, blocked) in A and in B. The rule, on the figures
    with at least 2 units in both runs (k of them, at least MIN_DRIFT_FIGURES):
    1. every B / A of req/s lies on the same side of 1.0;
    2. their mean log B / A is beyond t_.975(k - 1) x their sd / sqrt(k): a shift shared by
       the figures, larger than their scatter about it (a one-sample t test over the figures);
    3. the ratios held: at least one overhead ratio has an interval and none is flagged.
    With no shared shift, 8 independent figures land on one side of 1.0 in 2 of 256 cases, and
    pass 2 as well in fewer; tests/test_compare_two_runs_drift.py simulates the false alarms and the power.
    """
    ratios_with = [c for c in ratios if c.ci_low is not None]
    flagged = sum(c.flagged for c in ratios_with)
    logs = [stats.mean(ub) - stats.mean(ua) for (ua, _), (ub, _) in throughput if len(ua) >= MIN_UNITS and len(ub) >= MIN_UNITS]

    def found(named: bool, reason: str, shift=None, bound=None) -> Drift:
        return Drift(
            named,
            len(logs),
            math.exp(min(logs)) if logs else None,
            math.exp(max(logs)) if logs else None,
            shift,
            bound,
            len(ratios_with),
            flagged,
            reason,
        )

    if len(logs) < MIN_DRIFT_FIGURES:
        return found(False, f"fewer than {MIN_DRIFT_FIGURES} req/s figures with 2 or more blocks (or repeats) in both runs")
    shift = stats.mean(logs)
    bound = stats.t_975(len(logs) - 1) * stats.stdev(logs) / math.sqrt(len(logs))
    said = {"shift": math.exp(shift), "bound": math.exp(bound) - 1}
    if not (all(v < 0 for v in logs) or all(v > 0 for v in logs)):
        return found(False, "the req/s figures moved both ways", **said)
    if abs(shift) <= bound:
        return found(False, "the req/s figures' shared shift is within their scatter", **said)
    if not ratios_with or flagged:
        return found(False, "no overhead ratio to hold" if not ratios_with else f"{flagged} overhead ratio(s) changed too", **said)
    return found(True, "every req/s moved together while the ratios held", **said)


def throughput_change(a: Cell, b: Cell) -> Change:
    """Return the change of req/s (geometric means) from run A to run B for one cell."""
    return change_of(a, THROUGHPUT, throughput_units(a), throughput_units(b))


def latency_change(a: Cell, b: Cell) -> Change:
    """Return the change of p99 latency (geometric means) from run A to run B for one cell."""
    return change_of(a, P99, metric_units(a, P99), metric_units(b, P99))


def ratio_change(a: Cell, b: Cell, base_a: Cell | None, base_b: Cell | None) -> Change:
    """Return the change of the overhead ratio (setup / its baseline: go-http, go-https ...) from run A to run B for one cell."""
    return change_of(a, "overhead_ratio", ratio_units(a, base_a), ratio_units(b, base_b))


def throughput_units(cell: Cell) -> tuple[list[float], bool]:
    """Return a cell's units of log req/s and whether they are blocks."""
    return metric_units(cell, THROUGHPUT)


def metric_units(cell: Cell, metric: str) -> tuple[list[float], bool]:
    """Return a cell's units of the log of one metric (req/s, p99 ms) and whether they are blocks."""
    spread = cell.metrics.get(metric)
    items = [(k, math.log(v)) for k, v in spread.by_repeat if v > 0] if spread else []
    return units_of(cell.by_block(items), [v for _, v in items])


def ratio_units(cell: Cell, base: Cell | None) -> tuple[list[float], bool]:
    """Return a cell's units of log(setup / base), paired by round, and whether they are blocks."""
    if base is None:
        return [], False
    groups = paired_blocks(cell, base, THROUGHPUT)
    by_block = [[math.log(x / y) for x, y in group] for group in groups] if groups is not None else None
    return units_of(by_block, [math.log(x / y) for _, x, y in paired_by_repeat(cell, base, THROUGHPUT)])


def units_of(logs_by_block: list[list[float]] | None, logs: list[float]) -> tuple[list[float], bool]:
    """Return one run's units: block summaries when it has 2 or more blocks, else the logs of its repeats."""
    if logs_by_block is not None and len([b for b in logs_by_block if b]) >= MIN_UNITS:
        return stats.block_summaries(logs_by_block), True
    return list(logs), False


def change_interval(
    a: tuple[list[float], bool], b: tuple[list[float], bool], start_sd: float | None = START_SD, run_sd: float = RUN_SD
) -> stats.Interval | None:
    """Return B / A from two runs' (units, blocked) with Welch's interval, widened by start_sd per run without blocks and run_sd per run in blocks; None with too few units, or a run without blocks and no start_sd."""
    (units_a, blocked_a), (units_b, blocked_b) = a, b
    if len(units_a) < MIN_UNITS or len(units_b) < MIN_UNITS:
        return None
    unblocked = (not blocked_a) + (not blocked_b)
    if unblocked and start_sd is None:
        return None
    extra = unblocked * (start_sd or 0.0) ** 2 + (2 - unblocked) * run_sd**2
    df = min(([START_DF] if unblocked else []) + ([RUN_DF] if unblocked < 2 and run_sd > 0 else []), default=math.inf)
    found = between_runs.welch_interval(units_a, units_b, extra, df)
    unit = stats.BLOCK if blocked_a and blocked_b else stats.REPEAT
    return stats.Interval(found.estimate, found.low, found.high, found.n, unit, 1, found.se, found.df)


def detectable_change(found: stats.Interval | None, units: int | None = None) -> float | None:
    """Return the smallest true change B / A that an interval like this one flags in 80% of comparisons, as a relative change (0.12: 12%).

    From the interval's own standard error and degrees of freedom on the log scale:
    exp((t_.975 + t_.80) x se) - 1 (stats.detectable_shift); None without an interval.
    The degrees of freedom are at most units - 2 (both runs' blocks): with 2 blocks a side,
    Welch-Satterthwaite's estimate from four heavy-tailed block values runs high, and a
    change of the size reported was flagged in 59-76% of simulated comparisons at 2 and 4
    blocks without the cap (tests/test_compare_two_runs_detectable.py). A drop of the same log size
    reads smaller: 1 - 1 / (1 + the figure).

    >>> round(detectable_change(stats.Interval(1.0, 0.8, 1.25, 10, se=0.05, df=8)), 4), round(detectable_change(stats.Interval(1.0, 0.8, 1.25, 4, se=0.05, df=8), 4), 4)
    (0.1732, 0.3076)
    """
    if found is None or found.se is None:
        return None
    df = found.df if units is None else min(found.df or math.inf, max(units - 2, 1))
    return math.exp(stats.detectable_shift(found.se, None if df == math.inf else df)) - 1


def change_of(cell: Cell | tuple[int, int, str], metric: str, a: tuple[list[float], bool], b: tuple[list[float], bool]) -> Change:
    """Return B / A for one figure with its interval and the smallest change it could have flagged, or why there is none.

    cell: the cell, or where the figure sits (GOMAXPROCS, connections, setup) when it is not a cell's (a capacity).
    """
    where = (*(cell if isinstance(cell, tuple) else (cell.gomaxprocs, cell.connections, cell.setup)), metric)
    units_a, units_b = a[0], b[0]
    level_a = math.exp(stats.mean(units_a)) if units_a else None
    level_b = math.exp(stats.mean(units_b)) if units_b else None
    if not units_a or not units_b:
        side = "either run" if not units_a and not units_b else "A" if not units_a else "B"
        return Change(
            *where, level_a, level_b, None, None, None, len(units_a), len(units_b), f"nothing usable in {side} (excluded or not measured)"
        )
    change = level_b / level_a
    figure = FIGURES[metric]
    found = change_interval(a, b, figure.start_sd, figure.run_sd)
    if found is None:
        few = len(units_a) < MIN_UNITS or len(units_b) < MIN_UNITS
        return Change(*where, level_a, level_b, change, None, None, len(units_a), len(units_b), TOO_FEW if few else NO_START_SD)
    return Change(
        *where,
        level_a,
        level_b,
        found.estimate,
        found.low,
        found.high,
        len(units_a),
        len(units_b),
        None,
        found.unit,
        detectable_change=detectable_change(found, len(units_a) + len(units_b)),
    )
