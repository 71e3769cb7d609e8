"""Histogram: <stem>.hist.json (wrk's full latency histogram) -> LatencyHistogram; exact percentiles; clients merged.

The driver runs every measurement's wrk with `-s histogram.lua` (package data), whose
`done()` writes every distinct latency wrk recorded with its count, in microseconds,
beside the text output (docs/raw-format.md). From it any percentile is exact, by wrk's own
rule, and several wrk clients of one measurement merge exactly: counts add per value, so
the merged percentiles are those of all requests together, never an average of the
clients' percentiles. The file is untrusted input like the rest of a run directory:
every value is checked here, and a file that breaks a rule raises ParseError naming it.
Standard library only.
"""

from __future__ import annotations

import json
import math
import operator
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from .errors import ParseError, RefusedFile
from .schema import MAX_DIGITS

FORMAT = "wrkreport-latency-histogram"
VERSION = 1
SUFFIX = ".hist.json"
MAX_COUNT = 2**53  # a count or byte total beyond this is not what one wrk run records
MAX_LATENCY_US = 10**12  # ~11.6 days: far above any wrk --timeout
MAX_DURATION_US = 10**13
LONG_NUMBER = re.compile(rb"[0-9]{%d}" % (MAX_DIGITS + 1))
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
        values = [value for value, _ in self.pairs]
        if not all(map(operator.lt, values, values[1:])) or any(count < 1 for _, count in self.pairs):
            raise ValueError(f"{self.source}: histogram pairs must have increasing values and positive counts")

    @property
    def count(self) -> int:
        """Return the number of latencies recorded (wrk's corrected count: may exceed requests)."""
        return sum(count for _, count in self.pairs)

    def percentile_us(self, p: float) -> int | None:
        """Return the latency at percentile p, by wrk's rule (None when nothing was recorded)."""
        return percentile_us(self.pairs, p)

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


def percentile_us(pairs, p: float) -> int | None:
    """Return the first value whose cumulative count reaches wrk's rank for p (None for an empty histogram).

    >>> percentile_us([(100, 5), (200, 5)], 50)
    200
    >>> percentile_us([(100, 5), (200, 5)], 40)
    100
    """
    if not 0 <= p <= 100:
        raise ValueError(f"percentile {p} outside 0-100")
    total = sum(count for _, count in pairs)
    if total == 0:
        return None
    rank, seen = rank_of(p, total), 0
    for value, count in pairs:
        seen += count
        if seen >= rank:
            return value
    return None  # unreachable: rank <= total


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


def merge_files(paths) -> LatencyHistogram:
    """Return the histogram of one measurement from its clients' .hist.json files (one per wrk), merged exactly.

    requests, bytes and every error count add; requests_per_sec is the sum of each
    client's rate; percentiles come from the added counts. A file that cannot be used
    raises ParseError naming it: a measurement missing a client is not a measurement.
    """
    paths = list(paths)
    return merge([read_histogram_file(p) for p in paths], source=" + ".join(str(p) for p in paths))


# --- Reading a file -----------------------------------------------------------------------


def hist_file_name(wrk_name: str) -> str:
    """Return the histogram file written beside a wrk file: same stem, .hist.json.

    >>> hist_file_name("go-http.gomaxprocs-1.block-1.run-1.wrk.txt")
    'go-http.gomaxprocs-1.block-1.run-1.hist.json'
    """
    return wrk_name.removesuffix(".wrk.txt") + SUFFIX


def read_histogram_file(path: str | Path) -> LatencyHistogram:
    """Read (a regular file, at most 16 MiB) and parse one .hist.json; every failure is a ParseError naming path."""
    from .rawfile import CAP_BYTES, read_bytes

    try:
        data = read_bytes(Path(path), CAP_BYTES["hist"])
    except RefusedFile as exc:
        raise ParseError(str(path), None, exc.reason) from None
    return parse_histogram(path, data)


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


def parse_histogram(source: str | Path, data: bytes) -> LatencyHistogram:
    """Return the histogram in data (the bytes of a .hist.json file); raise ParseError naming source and the problem."""
    name = str(source)
    if LONG_NUMBER.search(data):  # json.loads would spend time on int() of thousands of digits (Python < 3.11)
        raise ParseError(name, None, f"not a latency histogram: a number of more than {MAX_DIGITS} digits")
    try:
        doc = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ParseError(name, None, "not a latency histogram: nested too deeply") from None
    except ValueError as exc:
        raise ParseError(name, None, f"not a latency histogram: not JSON ({' '.join(str(exc).split())})") from None
    if not isinstance(doc, dict):
        raise ParseError(name, None, f"not a latency histogram: expected a JSON object, found {type(doc).__name__}")
    header = (doc.get("format"), doc.get("version"), doc.get("unit"))
    if header[0] != FORMAT:
        raise ParseError(name, None, f"not a latency histogram: format is {show(header[0])}, expected {FORMAT!r}")
    if header[1] != VERSION or isinstance(header[1], bool):
        raise ParseError(name, None, f"histogram version {show(header[1])} is not one this wrkreport reads (1)")
    if header[2] != "us":
        raise ParseError(name, None, f"unit is {show(header[2])}, expected 'us' (microseconds)")

    def field(key: str, value, low: int, high: int) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ParseError(name, None, f"{key}: expected an integer from {low} to {high}, found {show(value)}")
        return value

    duration = field("duration_us", doc.get("duration_us"), 0, MAX_DURATION_US)
    requests = field("requests", doc.get("requests"), 0, MAX_COUNT)
    bytes_read = field("bytes", doc.get("bytes"), 0, MAX_COUNT)
    errors_doc = doc.get("errors")
    if not isinstance(errors_doc, dict):
        raise ParseError(name, None, f"errors: expected an object, found {show(errors_doc)}")
    errors = {kind: field(f"errors.{kind}", errors_doc.get(kind), 0, MAX_COUNT) for kind in ERROR_KINDS}
    pairs = read_pairs(name, doc.get("histogram"))
    check_summary(name, doc.get("latency"), pairs)
    return LatencyHistogram(
        source=name,
        duration_us=duration,
        requests=requests,
        bytes_read=bytes_read,
        errors=errors,
        pairs=pairs,
        requests_per_sec=requests / (duration / 1e6) if duration else 0.0,
        wrk_percentiles_us=read_wrk_percentiles(name, doc.get("percentiles")),
    )


def read_pairs(name: str, value) -> tuple[tuple[int, int], ...]:
    """Return the checked [value, count] pairs: integers, values strictly increasing, counts positive."""
    if not isinstance(value, list):
        raise ParseError(name, None, f"histogram: expected a list of [latency_us, count] pairs, found {show(value)}")
    if not value:
        return ()
    # The common case checked in bulk, with builtins that loop in C: a real file has ~10,000 pairs.
    if set(map(type, value)) == {list} and set(map(len, value)) == {2}:
        latencies, counts = zip(*value)
        if set(map(type, latencies)) | set(map(type, counts)) == {int}:
            in_order = all(map(operator.lt, latencies, latencies[1:]))
            if in_order and 0 <= latencies[0] and latencies[-1] <= MAX_LATENCY_US and 1 <= min(counts) and max(counts) <= MAX_COUNT:
                return tuple(zip(latencies, counts))
    return pairs_one_by_one(name, value)


def pairs_one_by_one(name: str, value: list) -> tuple[tuple[int, int], ...]:
    """Return the pairs, checked one at a time: raise ParseError at the first that breaks a rule."""
    pairs, previous = [], -1
    for i, pair in enumerate(value):
        ok = isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
        if not ok:
            raise ParseError(name, None, f"histogram[{i}]: expected a [latency_us, count] pair of integers, found {show(pair)}")
        latency, count = pair
        if not 0 <= latency <= MAX_LATENCY_US:
            raise ParseError(name, None, f"histogram[{i}]: latency {latency} us outside 0-{MAX_LATENCY_US}")
        if latency <= previous:
            raise ParseError(name, None, f"histogram[{i}]: latency {latency} us does not follow {previous} (values must increase)")
        if not 1 <= count <= MAX_COUNT:
            raise ParseError(name, None, f"histogram[{i}]: count {count} outside 1-{MAX_COUNT}")
        pairs.append((latency, count))
        previous = latency
    return tuple(pairs)


def check_summary(name: str, latency, pairs) -> None:
    """Raise ParseError unless wrk's min, max and number of distinct values agree with the pairs."""
    if not isinstance(latency, dict):
        raise ParseError(name, None, f"latency: expected an object, found {show(latency)}")
    expected = {"distinct": len(pairs), "min": pairs[0][0] if pairs else None, "max": pairs[-1][0] if pairs else None}
    for key, want in expected.items():
        if latency.get(key) != want or isinstance(latency.get(key), bool):
            raise ParseError(name, None, f"latency.{key} is {show(latency.get(key))} but the histogram says {want}")


def read_wrk_percentiles(name: str, value) -> dict[float, int] | None:
    """Return wrk's own percentiles ({p: latency_us}) when the file has them; a bad entry raises ParseError."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ParseError(name, None, f"percentiles: expected an object, found {show(value)}")
    found = {}
    for key, latency in value.items():
        try:
            p = float(key)
        except ValueError:
            p = math.nan
        if not 0 <= p <= 100:
            raise ParseError(name, None, f"percentiles: key {show(key)} is not a percentile from 0 to 100")
        if not isinstance(latency, int) or isinstance(latency, bool) or not 0 <= latency <= MAX_LATENCY_US:
            raise ParseError(name, None, f"percentiles.{key}: expected a latency in us, found {show(latency)}")
        found[p] = latency
    return found


def show(value, limit: int = 40) -> str:
    """Return a value for a message: repr, shortened; lists and objects by kind."""
    text = repr(value) if not isinstance(value, (dict, list)) else ("an object" if isinstance(value, dict) else "a list")
    return text if len(text) <= limit else text[: limit - 3] + "..."
