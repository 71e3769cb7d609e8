"""Parse histogram: <stem>.hist.json (written by histogram.lua beside each wrk output) -> LatencyHistogram, every value checked.

The file is untrusted input like the rest of a run directory: every value is checked
here, and a file that breaks a rule raises ParseError naming it. Standard library only.
"""

from __future__ import annotations

import json
import math
import operator
import re
from pathlib import Path

from ..core.display import show
from ..core.errors import ParseError, RefusedFile
from ..core.latency_histogram import ERROR_KINDS, FORMAT, SUFFIX, VERSION, LatencyHistogram, merge
from .schema import MAX_DIGITS

MAX_COUNT = 2**53  # a count or byte total beyond this is not what one wrk run records
MAX_LATENCY_US = 10**12  # ~11.6 days: far above any wrk --timeout
MAX_DURATION_US = 10**13
LONG_NUMBER = re.compile(rb"[0-9]{%d}" % (MAX_DIGITS + 1))


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
