"""Latency histogram: wrk's full latency histogram as a record; exact percentiles by wrk's rule; clients merged.

The driver runs every measurement's wrk with `-s histogram.lua` (package data), whose
`done()` writes every distinct latency wrk recorded with its count, in microseconds,
beside the text output (docs/raw-format.md; read by parsers/histogram.py). From it any
percentile is exact, by wrk's own rule, and several wrk clients of one measurement merge
exactly: counts add per value, so the merged percentiles are those of all requests
together, never an average of the clients' percentiles. Standard library only.
"""

from __future__ import annotations

import math
import operator
from bisect import bisect_left
from dataclasses import dataclass
from fractions import Fraction
from itertools import accumulate

FORMAT = "wrkreport-latency-histogram"
VERSION = 1
SUFFIX = ".hist.json"
ERROR_KINDS = ("connect", "read", "write", "status", "timeout")
# The percentiles the page and results.json show (wrk --latency prints the first four).
SHOWN_PERCENTILES = (50.0, 75.0, 90.0, 99.0, 99.9)


@dataclass(frozen=True)
class LatencyHistogram:
    """One wrk run's (or several merged runs') latency histogram and totals; latencies in microseconds."""

    source: str
    duration_us: int  # the longest of the merged runs
    requests: int
    bytes_read: int
    errors: dict[str, int]  # connect, read, write, status (non-2xx/3xx), timeout
    pairs: tuple[tuple[int, int], ...]  # (latency_us, count), values strictly increasing, counts >= 1
    requests_per_sec: float  # the sum of each run's requests / its duration
    clients: int = 1
    wrk_percentiles_us: dict[float, int] | None = None  # what wrk's own latency:percentile(p) said (one run only)

    def __post_init__(self) -> None:
        values, counts = tuple(zip(*self.pairs)) or ((), ())
        if not all(map(operator.lt, values, values[1:])) or (counts and min(counts) < 1):
            raise ValueError(f"{self.source}: histogram pairs must have increasing values and positive counts")
        object.__setattr__(self, "_reached", tuple(accumulate(counts)))  # latencies at or below each value: percentiles by bisection

    @property
    def count(self) -> int:
        """Return the number of latencies recorded (wrk's corrected count: may exceed requests)."""
        return self._reached[-1] if self._reached else 0

    def percentile_us(self, p: float) -> int | None:
        """Return the latency at percentile p, by wrk's rule (None when nothing was recorded): percentile_us(self.pairs, p).

        >>> LatencyHistogram("h", 1, 10, 0, dict.fromkeys(ERROR_KINDS, 0), ((100, 5), (200, 5)), 10.0).percentile_us(50)
        200
        """
        return percentile_us(self.pairs, p, self._reached)

    def percentile_ms(self, p: float) -> float | None:
        """Return the latency at percentile p in milliseconds (None when nothing was recorded)."""
        value = self.percentile_us(p)
        return None if value is None else value / 1000.0


# --- Exact percentiles and merging ------------------------------------------------------


def rank_of(p: float, total: int) -> int:
    """Return the 1-based rank wrk's stats_percentile looks for: round(p/100 * total + 0.5), at most total.

    >>> rank_of(50, 10)
    6
    >>> rank_of(99, 100)
    100
    >>> rank_of(100, 7)
    7
    """
    exact = Fraction(p) * total / 100 + Fraction(1, 2)
    return min(total, math.floor(exact + Fraction(1, 2)))  # C round(): halves away from zero


def percentile_us(pairs, p: float, reached: tuple[int, ...] | None = None) -> int | None:
    """Return the first value whose cumulative count reaches wrk's rank for p (None for an empty histogram); reached: the
    pairs' running counts when the caller keeps them (LatencyHistogram), else counted here.

    >>> percentile_us([(100, 5), (200, 5)], 50)
    200
    >>> percentile_us([(100, 5), (200, 5)], 40)
    100
    """
    if not 0 <= p <= 100:
        raise ValueError(f"percentile {p} outside 0-100")
    reached = tuple(accumulate(count for _, count in pairs)) if reached is None else reached
    if not reached or reached[-1] == 0:
        return None
    return pairs[bisect_left(reached, rank_of(p, reached[-1]))][0]


def cdf_points(pairs) -> tuple[list[float], list[float]]:
    """Return (latency in ms, share of latencies at or below it) at every distinct value."""
    total = sum(count for _, count in pairs)
    xs, ys, seen = [], [], 0
    for value, count in pairs:
        seen += count
        xs.append(value / 1000.0)
        ys.append(seen / total)
    return xs, ys


def merge_pairs(*histograms) -> tuple[tuple[int, int], ...]:
    """Return the value/count pairs of several histograms added per value."""
    counts: dict[int, int] = {}
    for pairs in histograms:
        for value, count in pairs:
            counts[value] = counts.get(value, 0) + count
    return tuple(sorted(counts.items()))


def merge(histograms, source: str | None = None) -> LatencyHistogram:
    """Return one histogram for several wrk clients of one measurement: counts, requests, bytes and errors added."""
    histograms = list(histograms)
    if not histograms:
        raise ValueError("merge needs at least one histogram")
    return LatencyHistogram(
        source=source or " + ".join(h.source for h in histograms),
        duration_us=max(h.duration_us for h in histograms),
        requests=sum(h.requests for h in histograms),
        bytes_read=sum(h.bytes_read for h in histograms),
        errors={kind: sum(h.errors[kind] for h in histograms) for kind in ERROR_KINDS},
        pairs=merge_pairs(*(h.pairs for h in histograms)),
        requests_per_sec=sum(h.requests_per_sec for h in histograms),
        clients=sum(h.clients for h in histograms),
        wrk_percentiles_us=histograms[0].wrk_percentiles_us if len(histograms) == 1 else None,
    )


def histogram_record(histogram: LatencyHistogram) -> dict:
    """Return what `wrkreport parse --json` prints for a histogram file."""
    return {
        "source": histogram.source,
        "format": FORMAT,
        "duration_s": histogram.duration_us / 1e6,
        "requests": histogram.requests,
        "bytes_read": histogram.bytes_read,
        "errors": dict(histogram.errors),
        "latencies": histogram.count,
        "distinct": len(histogram.pairs),
        "percentiles_ms": {f"{p:g}": histogram.percentile_ms(p) for p in SHOWN_PERCENTILES},
        "max_ms": histogram.pairs[-1][0] / 1000.0 if histogram.pairs else None,
    }
