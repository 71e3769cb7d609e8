"""Latency: the measurements kept of each cell with a histogram -> one merged histogram per cell, its exact percentiles.

A cell (GOMAXPROCS, connections, setup) pools its repeats the way several wrk clients of
one measurement merge (histogram.merge): counts add per latency, so its p99 is the p99 of
every request the cell's kept measurements recorded, not a mean of p99s. A cell is shown
only when every kept measurement has a histogram: a partial pool would mix in fewer
repeats than the rest of the page counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..core.latency_histogram import SHOWN_PERCENTILES, LatencyHistogram, merge
from ..core.setups import setup_order


@dataclass(frozen=True)
class CellLatency:
    """One cell's kept measurements merged into one latency histogram."""

    gomaxprocs: int
    connections: int
    setup: str
    histogram: LatencyHistogram
    measurements: int
    percentiles: tuple[tuple[float, float | None], ...] = ()  # (p, ms) of SHOWN_PERCENTILES, exact, computed once by cell_latencies
    max_ms: float | None = None  # the longest latency recorded

    def percentiles_ms(self, ps=SHOWN_PERCENTILES) -> dict[float, float | None]:
        """Return {p: latency in ms} for each p, exact from the merged histogram (the shown ones as cell_latencies computed them)."""
        found = dict(self.percentiles)
        return {p: found[p] if p in found else self.histogram.percentile_ms(p) for p in ps}


def cell_latencies(table: pd.DataFrame, histograms: dict[str, LatencyHistogram]) -> tuple[CellLatency, ...]:
    """Return one CellLatency per cell whose kept measurements (no `excluded` reason) all have a histogram."""
    if table.empty or not histograms:
        return ()
    kept = table[table["excluded"].isna()] if "excluded" in table else table
    found = []
    for (gomaxprocs, connections, setup), rows in kept.groupby(["gomaxprocs", "connections", "setup"], sort=False):
        files = list(rows["file"])
        if not files or any(name not in histograms for name in files):
            continue
        merged = merge([histograms[name] for name in files], source=f"{setup} GOMAXPROCS={gomaxprocs} c={connections}")
        if merged.count:
            shown = tuple((p, merged.percentile_ms(p)) for p in SHOWN_PERCENTILES)
            found.append(
                CellLatency(int(gomaxprocs), int(connections), str(setup), merged, len(files), shown, merged.pairs[-1][0] / 1000.0)
            )
    return tuple(sorted(found, key=lambda c: (c.gomaxprocs, c.connections, setup_order(c.setup), c.setup)))
