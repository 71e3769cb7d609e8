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


def rate_summary_lines(cells: list[RateCell]) -> list[str]:
    """Return one wrapped line per GOMAXPROCS and rate: each setup's added p50 and p99 over go-http, or that it did not hold the rate."""
    lines = []
    for n, rate in dict.fromkeys((c.gomaxprocs, c.offered_rps) for c in cells):
        here = [c for c in cells if (c.gomaxprocs, c.offered_rps) == (n, rate)]
        named = baselines_named(here)
        parts = [f"{c.setup} adds p50 {fmt_interval(c.added_p50)}, p99 {fmt_interval(c.added_p99)}" + over(c, named)
                 for c in here if not c.is_baseline and c.held and c.added_p50 is not None]
        missing = [c.setup for c in here if not c.held]
        if missing:
            parts.append(f"not held by {', '.join(missing)} (left out)" if any(c.not_held for c in here if not c.held) else f"no usable measurement of {', '.join(missing)}")
        if not parts:
            parts = [f"{BASELINE} only, nothing to add over"]
        lead = f"GOMAXPROCS={n} at {rate:,} req/s offered, open loop, latency added over {added_over(named)}: "
        lines.append(textwrap.fill(lead + "; ".join(parts), WIDTH, subsequent_indent="  ", break_on_hyphens=False))
    return lines

