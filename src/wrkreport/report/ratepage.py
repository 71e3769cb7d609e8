"""The fixed-rate part of the page: the answer's sentences, one row per cell, and the saturation latencies' Little's-law figure, as strings."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..fixedrate.analysis import BASELINE, RateCell
from ..core.stats import Interval
from ..fixedrate.summary import added_over, added_words, baselines_named, fmt_interval, not_held_words, over
from .fmt import fmt_ms


@dataclass(frozen=True)
class RateSection:
    """What the template shows of the fixed-rate phase."""

    sentences: tuple[str, ...]  # one per GOMAXPROCS and rate, for the answer box
    rows: tuple[tuple[str, ...], ...]  # group, setup, offered, achieved, p50, p99, p99.9, added p50, added p99
    settings: str
    saturation: str  # the closed-loop latencies' Little's-law figure: they are queueing at saturation
    added_over: str = BASELINE  # the table's header: what the added latencies are over


def fmt_added(interval: Interval | None) -> str:
    """Return '0.142 ms (0.121 to 0.163)' as the summary writes it, '-' without a figure."""
    return "-" if interval is None else fmt_interval(interval)


def sentences(cells: list[RateCell], several_gomaxprocs: bool) -> list[str]:
    """Return one sentence per GOMAXPROCS and rate: what each setup adds to go-http's latency there, or that it did not hold the rate."""
    found = []
    for n, rate in dict.fromkeys((c.gomaxprocs, c.offered_rps) for c in cells):
        where = f"At {rate:,} req/s" + (f" (GOMAXPROCS={n})" if several_gomaxprocs else "")
        parts, here = [], [c for c in cells if (c.gomaxprocs, c.offered_rps) == (n, rate)]
        named = baselines_named(here)
        for c in here:
            if not c.held:
                parts.append(not_held_words(c))
            elif not c.is_baseline and c.added_p50 is not None:
                parts.append(added_words(c) + over(c, named))
        if parts:
            found.append(f"{where}, open loop, over {added_over(named)}: " + "; ".join(parts) + ".")
    return found


def littles_law(analysis) -> str:
    """Return the sentence labelling wrk's latencies: per cell, mean latency / (connections / throughput), near 1 when they are queueing."""
    figures = []
    for cell in analysis.cells:
        mean, rate = (cell.metrics.get(m) for m in ("latency_avg_ms", "requests_per_sec"))
        if mean and rate and mean.values and rate.values:
            queue_ms = 1000 * cell.connections / statistics.median(rate.values)
            figures.append(f"{cell.setup} GOMAXPROCS={cell.gomaxprocs} {statistics.median(mean.values) / queue_ms:.2f}")
    said = "; ".join(figures[:12]) or "not known"
    return ("Closed-loop latencies (wrk): at saturation, mostly queueing. By Little's law a closed loop's mean latency is connections / throughput; "
            f"mean latency / (connections / throughput) per cell: {said} (near 1: the latency restates the throughput). "
            "The latency a service sees at its load is in Latency at a fixed load.")


def added_cells(cell: RateCell, named: bool) -> tuple[str, str]:
    """Return the row's added p50 and p99: 'baseline', the figures, or why there are none (the rate not held by the cell or by its baseline)."""
    if cell.is_baseline:
        return "baseline", "baseline"
    if cell.held and cell.added_p50 is None:
        why = f"- ({cell.baseline} did not hold the rate)"
        return why, why
    return fmt_added(cell.added_p50) + over(cell, named), fmt_added(cell.added_p99) + over(cell, named)


def rate_section(cells: list[RateCell], parameters: dict, analysis) -> RateSection:
    """Return the fixed-rate section's strings (no rows when the run has no fixed-rate measurement) and the saturation label."""
    if not cells:
        return RateSection((), (), "", littles_law(analysis))
    several = len({c.gomaxprocs for c in cells}) > 1
    rows, named = [], baselines_named(cells)
    for c in cells:
        status = "" if c.held else (f" (held in {c.held_in} of {c.measurements})" if c.not_held else " (no usable measurement)")
        rows.append((f"GOMAXPROCS={c.gomaxprocs}, {c.offered_rps:,} req/s", c.setup + status, f"{c.offered_rps:,}",
                     "-" if c.achieved_rps is None else f"{c.achieved_rps:,.0f}", fmt_ms(c.p50_ms), fmt_ms(c.p99_ms), fmt_ms(c.p999_ms),
                     *added_cells(c, named)))
    blocks = max((c.measurements for c in cells), default=0)
    settings = (f"vegeta offers each rate open loop (requests start on schedule whatever the answers, so a stall is not under-sampled), "
                f"{parameters.get('rate_duration_s', '?')} s per measurement, at most {parameters.get('rate_max_connections', '?')} connections, "
                f"every setup once per block in a shuffled order, {blocks} block(s); added latency is setup - go-http in the same block "
                "(nginx's TLS setups: - go-https, as their ratios), "
                "mean over blocks with a 95% t-interval. A rate is held when vegeta started the requests within 1% of it and no backlog grew over the attack (latency climbing from each tenth of it to the next); a pause shows in the percentiles, and the measurement counts.")
    return RateSection(tuple(sentences(cells, several)), tuple(rows), settings, littles_law(analysis), added_over(named))
