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
        parts = [f"{c.setup} adds p50 {fmt_interval(c.added_p50)}, p99 {fmt_interval(c.added_p99)}" + over(c, named)
                 for c in here if not c.is_baseline and c.held and c.added_p50 is not None]
        parts += [not_held_words(c) for c in here if not c.held]
        if not parts:
            parts = [f"{BASELINE} only, nothing to add over"]
        lead = f"GOMAXPROCS={n} at {rate:,} req/s offered, open loop, latency added over {added_over(named)}: "
        lines.append(textwrap.fill(lead + "; ".join(parts), WIDTH, subsequent_indent="  ", break_on_hyphens=False))
    return lines

