"""The answer's table, cell by cell: one function per column returns a setup's figure in one group, and below it its interval.

Each Figure is read from the analysis, the fixed load's cells and the capacities, and is one
the page shows again in its own table: the CPU table's means, the fixed-rate table's added
latencies (the rule of report.rate_summary.added_kind), the capacity table's estimates, the
ratios table's shares. Below a figure: its interval, or what it is over. Pure functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.analyze import CPU_METRIC, THROUGHPUT, Analysis
from ..analysis.capacities import Capacity
from ..analysis.noise import CEILING
from ..analysis.rate_latency import RateCell
from ..core import stats
from ..core.capacity import AT_LEAST, AT_MOST
from ..core.setups import APP_BASELINE, BASELINE, FRONT_END_SETUP_IDS, baseline_of, split_twin
from ..report.rate_summary import added_kind, fmt_rps


@dataclass(frozen=True)
class Figure:
    """One cell of the answer's table: the figure, and below it its interval or what it is over ('' for none)."""

    main: str
    detail: str = ""


NO_FIGURE = Figure("-")


@dataclass(frozen=True)
class GroupContext:
    """What a group's figures are read from: the analysis at one (GOMAXPROCS, connections), the fixed load's cells and the capacities."""

    analysis: Analysis
    gomaxprocs: int
    connections: int
    light: tuple[
        RateCell, ...
    ]  # every setup at the light load (the lowest planned rate Go alone held); () in a later group of the same GOMAXPROCS
    capacities: tuple[Capacity, ...]


# One table drives the columns: key -> (does the run have it, its figure). Heads come from column_heads.


def in_front(setup: str) -> bool:
    """Return True for a setup with a front end in front of a server (every nginx- setup but nginx-static, which answers by itself;
    HAProxy's, Caddy's and Apache httpd's).

    >>> in_front("nginx-https-new"), in_front("nginx-static"), in_front("go-https"), in_front("caddy-fcgi-tcp")
    (True, False, False, True)
    """
    return (setup.startswith("nginx-") and split_twin(setup)[0] != CEILING) or setup in FRONT_END_SETUP_IDS


def fmt_us(value: float) -> str:
    """Return microseconds to two significant figures, at least whole ones: 16.3 -> '16', 4.27 -> '4.3', 0.81 -> '0.81'.

    >>> fmt_us(16.3), fmt_us(4.27), fmt_us(0.812), fmt_us(123.4)
    ('16', '4.3', '0.81', '123')
    """
    if abs(value) >= 10:
        return f"{value:,.0f}"
    return f"{value:.2g}"


def ms(value: float) -> str:
    """Return milliseconds to two significant figures: '0.088', '1.2', '12'.

    >>> ms(0.0876), ms(1.234), ms(12.4), ms(-0.71)
    ('0.088', '1.2', '12', '-0.71')
    """
    return f"{value:.2g}" if abs(value) < 10 else f"{value:.0f}"


def span(low: float, high: float, fmt: Callable[[float], str]) -> str:
    """Return an interval as 'low-high', or 'low to high' when a bound is negative (a minus sign beside a dash misreads); a
    figure more when both ends would read the same; across zero, the end nearer it at most to the other's decimals (at least
    one), as its figures past them say nothing the other end's precision allows.

    >>> span(0.09, 0.19, ms), span(-0.35, 0.68, ms), span(22.6, 23.4, fmt_us), span(-0.0017, 0.82, ms), span(-0.3, 12, ms)
    ('0.09-0.19', '-0.35 to 0.68', '22.6-23.4', '-0.00 to 0.82', '-0.3 to 12')
    >>> span(-12.04, 36, ms), span(-0.0764, 0.583, ms), span(-0.82, 0.0017, ms)
    ('-12 to 36', '-0.08 to 0.58', '-0.82 to 0.00')
    """
    if fmt(low) == fmt(high) and low != high:
        fmt = lambda value: f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"  # noqa: E731
    if low < 0 < high:
        places = max(1, decimals(fmt(max(low, high, key=abs))))
        trimmed = lambda value: f"{value:.{places}f}" if decimals(fmt(value)) > places else fmt(value)  # noqa: E731
        return f"{trimmed(low)} to {trimmed(high)}"
    return f"{fmt(low)} to {fmt(high)}" if low < 0 or high < 0 else f"{fmt(low)}-{fmt(high)}"


def decimals(text: str) -> int:
    """Return how many decimals a figure is written with: '0.0017' -> 4, '36' -> 0, '1.2e+03' -> 1."""
    return len(text.partition(".")[2].partition("e")[0])


# --- Figures: one function per column --------------------------------------------------------


def cpu_us(analysis: Analysis, gomaxprocs: int, connections: int, setup: str) -> float | None:
    """Return a cell's server CPU per request in microseconds: the CPU table's mean of ms per 1,000 requests (the same number)."""
    cell = analysis.cell(gomaxprocs, connections, setup)
    spread = cell.metrics.get(CPU_METRIC) if cell is not None else None
    return spread.interval.estimate if spread is not None and spread.n else None


def cpu_added(analysis: Analysis, gomaxprocs: int, connections: int, setup: str) -> tuple[str, float | None]:
    """Return what a setup adds to its baseline's server CPU per request: ('adds' | 'less' | 'none' | 'one', us), or ('missing', None).

    'none' when the CPU ratio's interval includes 1.0; 'one' without an interval (one repeat).
    """
    mine, base = cpu_us(analysis, gomaxprocs, connections, setup), cpu_us(analysis, gomaxprocs, connections, baseline_of(setup))
    ratio = analysis.ratio(gomaxprocs, connections, setup, CPU_METRIC)
    if mine is None or base is None or ratio is None or ratio.ratio is None:
        return "missing", None
    if not ratio.has_interval:
        return "one", mine - base
    if ratio.includes_one:
        return "none", mine - base
    return ("adds" if mine >= base else "less"), mine - base


def cpu_figure(context: GroupContext, setup: str) -> Figure:
    """Return the servers' CPU per request in us, with what nginx adds over its baseline: '39 (+24)', its 95% interval below."""
    cell = context.analysis.cell(context.gomaxprocs, context.connections, setup)
    spread = cell.metrics.get(CPU_METRIC) if cell is not None else None
    if spread is None or not spread.n:
        return NO_FIGURE
    interval = spread.interval
    detail = span(max(interval.low, 0.0), interval.high, fmt_us) if interval.low is not None else ""  # one repeat: no interval
    if setup == baseline_of(setup) or not in_front(
        setup
    ):  # a baseline, or a server in Go's place (fasthttp, nginx-static): nothing in front
        return Figure(fmt_us(interval.estimate), detail)
    kind, extra = cpu_added(context.analysis, context.gomaxprocs, context.connections, setup)
    added = {
        "adds": f" (+{fmt_us(extra or 0)})",
        "one": f" ({'+' if (extra or 0) >= 0 else '-'}{fmt_us(abs(extra or 0))})",
        "less": f" (-{fmt_us(-(extra or 0))})",
        "none": " (+none)",
        "missing": "",
    }[kind]
    over = baseline_of(setup)
    said = [detail] if detail else []
    return Figure(
        fmt_us(interval.estimate) + added,
        "; ".join(said + ([f"over {over}"] if over not in (BASELINE, APP_BASELINE) and kind != "missing" else [])),
    )


def added_figure(interval: stats.Interval | None) -> Figure:
    """Return an added latency as the table says it, by added_kind's rule: '+0.14' with '0.09-0.19' below, 'none measurable', '0.71 less'.

    >>> added_figure(stats.Interval(0.142, 0.09, 0.19, 4)), added_figure(stats.Interval(0.17, -0.35, 0.68, 4))
    (Figure(main='+0.14', detail='0.09-0.19'), Figure(main='none', detail='-0.35 to 0.68'))
    >>> added_figure(stats.Interval(-0.71, -0.9, -0.5, 4)), added_figure(stats.Interval(0.05, None, None, 1))
    (Figure(main='-0.71', detail='-0.9 to -0.5'), Figure(main='+0.05', detail=''))
    """
    kind = added_kind(interval)
    if kind == "missing":
        return NO_FIGURE
    sign = "+" if interval.estimate >= 0 else ""
    if kind == "one":
        return Figure(f"{sign}{ms(interval.estimate)}")  # one block: no interval (the group's title says 1 start)
    between = span(interval.low, interval.high, ms)
    return Figure("none", between) if kind == "none" else Figure(f"{sign}{ms(interval.estimate)}", between)


def latency_figure(context: GroupContext, setup: str, percentile: str) -> Figure:
    """Return a setup's latency added at the fixed load (Go alone's row: its own, 'its own' below), or why there is none."""
    cell = next((c for c in context.light if c.setup == setup), None)
    if cell is None:
        return NO_FIGURE
    if not cell.held:
        return Figure("not held", f"held in {cell.held_in} of {cell.measurements}")
    if cell.is_baseline:
        own = getattr(cell, f"{percentile}_ms")
        return Figure(ms(own), "its own") if own is not None else NO_FIGURE
    return added_figure(getattr(cell, f"added_{percentile}"))


def capacity_figure(context: GroupContext, setup: str) -> Figure:
    """Return a setup's capacity at the objective: '3,280 ✓' (✓ met, ✗ missed when measured again at it) with '3,000-3,580'
    below, or a bound ('≥ 32,000') with the edge the search met."""
    found = next((c for c in context.capacities if c.setup == setup), None)
    if found is None:
        return NO_FIGURE
    value = found.estimate
    bound = {AT_LEAST: "≥ ", AT_MOST: "≤ "}.get(value.bound, "")
    if value.bound is not None:
        detail = {AT_LEAST: "highest rate held", AT_MOST: "lowest rate missed"}[value.bound]  # the edge the search met
    elif value.low is None or value.high is None:
        detail = ""  # one block: no interval
    else:
        detail = span(value.low, value.high, fmt_rps)
    if found.floor is not None and found.floor.inside:
        detail = f"{detail}; inside the machine's floor".lstrip("; ")
    return Figure(bound + fmt_rps(value.value) + check_mark(found), detail)


def check_mark(found: Capacity) -> str:
    """Return the capacity check as a mark after the figure: ' ✓' met when measured again at it, ' ✗' missed or not held, '' without one."""
    check = found.check
    return "" if check is None else " ✓" if check.met else " ✗"


def share_figure(context: GroupContext, setup: str) -> Figure:
    """Return a setup's throughput at saturation as a share of its baseline's: '55%' with '51-60%' below; Go alone's row: its req/s."""
    analysis = context.analysis
    if setup == baseline_of(setup):
        cell = analysis.cell(context.gomaxprocs, context.connections, setup)
        spread = cell.metrics.get(THROUGHPUT) if cell is not None else None
        found = spread.geometric if spread is not None else None
        return Figure("100%", f"{fmt_rps(found.estimate)} req/s") if found is not None else NO_FIGURE
    cell = analysis.cell(context.gomaxprocs, context.connections, setup)
    if cell is not None and cell.not_measured:
        return Figure("not measured")  # the run has no measurement of it: the failed checks say why
    ratio = analysis.ratio(context.gomaxprocs, context.connections, setup)
    if ratio is None or ratio.ratio is None:
        return Figure("excluded", "a check failed") if ratio is not None and ratio.excluded else NO_FIGURE
    over = "" if ratio.baseline in (BASELINE, APP_BASELINE) else f" of {ratio.baseline}'s"
    if not ratio.has_interval:
        return Figure(f"{ratio.ratio:.0%}", over.strip())  # one repeat: no interval (the conditions say 1 server start)
    return Figure(f"{ratio.ratio:.0%}", f"{percent_span(ratio.ci_low, ratio.ci_high)}{over}")


def percent_span(low: float, high: float) -> str:
    """Return a share's interval in whole percent, a decimal more when both ends would read the same ('15-15%' says nothing).

    >>> percent_span(0.51, 0.60), percent_span(0.148, 0.154), percent_span(0.0912, 0.0949)
    ('51-60%', '14.8-15.4%', '9.1-9.5%')
    """
    places = 1 if f"{low:.0%}" == f"{high:.0%}" and low != high else 0
    return f"{100 * low:.{places}f}-{100 * high:.{places}f}%"
