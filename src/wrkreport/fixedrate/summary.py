"""Summary (fixed rate): the terminal lines of the open-loop phase, one per GOMAXPROCS and rate, for `wrkreport build` and the driver's closing summary.

Each line says the load it was measured at ('at 2,000 req/s offered, open loop') and, per
setup other than go-http, the latency it adds over go-http (nginx's TLS setups: over go-https,
each then named) at p50 and p99 with the 95%
interval over blocks; a setup that could not hold the rate is named as such, its figures
left out. Standard library only: the driver's helper prints these lines too.
"""

from __future__ import annotations

import textwrap

from .analysis import BASELINE, RateCell
from ..core.stats import Interval
from ..core.units import fmt_ms

WIDTH = 80


def fmt_interval(interval: Interval | None) -> str:
    """Return '0.142 ms (0.121 to 0.163)', '0.142 ms (one block: no interval)' or 'no figure' (core.units.fmt_ms: 3 significant digits)."""
    if interval is None:
        return "no figure"
    if interval.low is None or interval.high is None:
        return f"{fmt_ms(interval.estimate)} ms (one block: no interval)"
    return f"{fmt_ms(interval.estimate)} ms ({fmt_ms(interval.low)} to {fmt_ms(interval.high)})"


def added_phrase(interval: Interval | None, percentile: str) -> str:
    """Return what a setup does to latency at one percentile, in words that follow its interval.

    Only an interval wholly above 0 'adds'; one across 0 is 'no measurable difference'; one
    wholly below 0 'takes ... off'. One block has no interval: its sign is said, nothing more.

    >>> added_phrase(Interval(0.142, 0.121, 0.163, 4), "p50")
    'adds 0.142 ms at p50 (0.121 to 0.163)'
    >>> added_phrase(Interval(0.17, -0.35, 0.68, 4), "p99")
    'no measurable difference at p99 (-0.350 to 0.680 ms)'
    >>> added_phrase(Interval(-0.71, -0.9, -0.5, 4), "p99"), added_phrase(Interval(-0.05, None, None, 1), "p50")
    ('takes 0.710 ms off at p99 (0.500 to 0.900)', 'takes 0.0500 ms off at p50 (one block: no interval)')
    """
    if interval is None:
        return f"no figure at {percentile}"
    estimate, low, high = interval.estimate, interval.low, interval.high
    if low is None or high is None:
        verb = f"adds {fmt_ms(estimate)} ms" if estimate >= 0 else f"takes {fmt_ms(-estimate)} ms off"
        return f"{verb} at {percentile} (one block: no interval)"
    if low > 0:
        return f"adds {fmt_ms(estimate)} ms at {percentile} ({fmt_ms(low)} to {fmt_ms(high)})"
    if high < 0:
        return f"takes {fmt_ms(-estimate)} ms off at {percentile} ({fmt_ms(-high)} to {fmt_ms(-low)})"
    return f"no measurable difference at {percentile} ({fmt_ms(low)} to {fmt_ms(high)} ms)"


def added_words(cell: RateCell) -> str:
    """Return what a held cell does to latency over its baseline at p50 and p99 (added_phrase), as one clause.

    'nginx-http adds 0.142 ms at p50 (0.121 to 0.163) and 0.350 ms at p99 (0.200 to 0.500)' when both add;
    otherwise 'nginx-http: adds 0.142 ms at p50 (...); no measurable difference at p99 (...)'.
    """
    p50, p99 = added_phrase(cell.added_p50, "p50"), added_phrase(cell.added_p99, "p99")
    if p50.startswith("adds ") and p99.startswith("adds "):
        return f"{cell.setup} {p50} and {p99.removeprefix('adds ')}"
    return f"{cell.setup}: {p50}; {p99}"


def baselines_named(cells: list[RateCell]) -> bool:
    """Return True when the added latencies among cells are not all over go-http (nginx's TLS setups are over go-https): then each names its own."""
    return any(c.baseline != BASELINE for c in cells if not c.is_baseline)


def over(cell: RateCell, named: bool) -> str:
    """Return ' over go-https' (the cell's baseline) when baselines are named, else ''."""
    return f" over {cell.baseline}" if named else ""


def added_over(named: bool) -> str:
    """Return what the added latencies of a line are over: 'go-http', or each setup's own baseline."""
    return "each setup's baseline" if named else BASELINE


def not_held_words(cell: RateCell) -> str:
    """Return what a cell that did not hold the rate in every block measured: in how many it held it, and its latencies there.

    'nginx-http held it in 2 of 4 blocks (p50 0.210 ms, p99 4.10 ms there; nothing added)', 'nginx-fcgi-tcp
    held it in none of its 4 blocks', or 'go-http has no usable measurement'.
    """
    if cell.usable and cell.not_held:
        return (f"{cell.setup} held it in {cell.held_in} of {cell.measurements} blocks "
                f"(p50 {fmt_ms(cell.p50_ms)} ms, p99 {fmt_ms(cell.p99_ms)} ms there; nothing added)")
    if cell.not_held:
        return f"{cell.setup} held it in none of its {cell.measurements} blocks"
    return f"{cell.setup} has no usable measurement"


def rate_summary_lines(cells: list[RateCell]) -> list[str]:
    """Return one wrapped line per GOMAXPROCS and rate: each setup's added p50 and p99 over go-http, or that it did not hold the rate."""
    lines = []
    for n, rate in dict.fromkeys((c.gomaxprocs, c.offered_rps) for c in cells):
        here = [c for c in cells if (c.gomaxprocs, c.offered_rps) == (n, rate)]
        named = baselines_named(here)
        parts = [added_words(c) + over(c, named) for c in here if not c.is_baseline and c.held and c.added_p50 is not None]
        parts += [not_held_words(c) for c in here if not c.held]
        if not parts:
            parts = [f"{BASELINE} only, nothing to add over"]
        lead = f"GOMAXPROCS={n} at {rate:,} req/s offered, open loop, latency added over {added_over(named)}: "
        lines.append(textwrap.fill(lead + "; ".join(parts), WIDTH, subsequent_indent="  ", break_on_hyphens=False))
    return lines

