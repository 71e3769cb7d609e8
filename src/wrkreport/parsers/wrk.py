"""Parse wrk: the text of one wrk 3.x/4.x or wrk2 run -> WrkResult, every required line checked.

The output is read top-down as wrk prints it (see shared/wrk/format.md §1). Anything before
`Running ... test @ ...` is skipped (a shell prompt or command line, wrk's `-v` version
line, Lua setup output); anything after `Transfer/sec:` is kept as `script_output`.
Between the two, every non-blank line must be the line wrk prints there, or a ParseError
names the line and what was expected; blank lines are ignored.

Lines are matched with their whitespace collapsed (runs of spaces, tabs and no-break
spaces become one space; leading/trailing space and CR are dropped), so text pasted from a
web page parses. The Thread Stats rows are first sliced by wrk's fixed columns (format.md
§3) when the row has wrk's exact 50-character layout, because wrk truncates long values
and lets them touch (`1000.00ms1000.00ms`); otherwise they are split by a token regex.

Truncated values (format.md §3), decided here:
- Latency Avg `1000.00m` (8 chars, filling the field) is read as 1000.00 ms: it is
  `1000.00ms` (999 995-999 999 us) cut to the 8-column field. A real 1000 minutes would
  have lost its whole unit there instead (`1000.00`), and Avg is the only column narrower
  than the longest time wrk prints (`1000.00ms`).
- A value that lost its whole unit to the cut (over 999 minutes; counts beyond 1000T),
  detected from wrk's padding rule in the columns and by content in pasted rows, cannot
  be read: ParseError saying so, never a guess.

`tool` is "wrk2" when the output has wrk2's `Thread calibration` lines, an HdrHistogram
block, or a NaN Avg/Stdev cell (wrk 3.x/4.x print 0.00 there; wrk2 prints `-nan`);
otherwise "wrk". A short wrk2 run without `-L` and with every statistic present cannot
be told from wrk and reads as "wrk".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core import units
from ..core.display import quote
from ..core.errors import ParseError
from ..core.records import WrkResult
from .cursor import Cursor, Line

# --- What each line looks like (matched whole, against the whitespace-collapsed line) ----

_NUM = r"[-+]?(?:[0-9]+(?:\.[0-9]+)?|(?i:nan|inf))"
_VALUE = _NUM + r"[A-Za-z]*"
_GAP = r"(?: |(?<=[A-Za-z]))"  # one space, or none when the left value ends in a letter

VERSION_LINE = re.compile(r"wrk (?P<version>\S+) \[(?P<api>\w+)\] Copyright \(C\) 2012 Will Glozer", re.A)
RUNNING_LINE = re.compile(r"Running (?P<duration>[0-9]+(?:\.[0-9]+)?[a-z]+) test @ (?P<url>.+)", re.A)
MAKING_LINE = re.compile(r"Making [0-9]+ requests to .+", re.A)  # wrk 1.x, not supported
USAGE_LINE = re.compile(r"Usage: wrk\b.*", re.A)
UNABLE_TO_CONNECT_LINE = re.compile(r"unable to connect to .*", re.A)
THREADS_LINE = re.compile(r"(?P<threads>[0-9]{1,20}) threads and (?P<connections>[0-9]{1,20}) connections", re.A)
CALIBRATION_LINE = re.compile(r"Thread calibration: mean lat\.: [0-9.]+ ?(?:ms|usec), rate sampling interval: [0-9]+ ?(?:ms|msec)", re.A)
THREAD_STATS_HEADER = re.compile(r"Thread Stats Avg Stdev Max \+/- Stdev", re.A)
# The canonical row: 4 spaces, name in %-10s, Avg 8, Stdev 10, Max 9, %8.2Lf and '%' = 50 chars.
STATS_ROW_FIXED = re.compile(r"    (?P<name>Latency|Req/Sec)   (?P<avg>.{8})(?P<stdev>.{10})(?P<max>.{9})(?P<pct>.{8})%", re.A)
FIXED_PCT = re.compile(rf" *{_NUM}", re.A)  # %8.2Lf: right-aligned
STATS_ROW_TOKENS = re.compile(
    rf"(?P<name>Latency|Req/Sec) (?P<avg>{_VALUE}){_GAP}(?P<stdev>{_VALUE}){_GAP}(?P<max>{_VALUE}) ?(?P<pct>{_NUM})%", re.A
)
CUT_MS_TOKEN = re.compile(r"[0-9.]+m", re.A)  # `1000.00m`: a `1000.00ms` cut to the Avg field
LATENCY_DISTRIBUTION_HEADING = re.compile(r"Latency Distribution", re.A)
HDR_HEADING = re.compile(
    r"Latency Distribution \(HdrHistogram - (?P<kind>Recorded Latency|"
    r"Uncorrected Latency \(measured without taking delayed starts into account\))\)",
    re.A,
)
PERCENTILE_LINE = re.compile(rf"(?P<pct>[0-9]+(?:\.[0-9]+)?)% ?(?P<value>{_VALUE})", re.A)
SPECTRUM_HEADING = re.compile(r"Detailed Percentile spectrum:", re.A)
SPECTRUM_COLUMNS = re.compile(r"Value Percentile TotalCount 1/\(1-Percentile\)", re.A)
SPECTRUM_ROW = re.compile(r"[0-9]+\.[0-9]{3} [0-9]\.[0-9]{6} -?[0-9]+ (?:[0-9]+\.[0-9]{2}|inf)", re.A)
HDR_MEAN_FOOTER = re.compile(rf"#\[Mean = {_NUM}, StdDeviation = {_NUM}\]", re.A)
HDR_MAX_FOOTER = re.compile(rf"#\[Max = {_NUM}, Total count = -?[0-9]+\]", re.A)
HDR_BUCKETS_FOOTER = re.compile(r"#\[Buckets = [0-9]+, SubBuckets = [0-9]+\]", re.A)
HDR_RULE = re.compile(r"-{58}", re.A)
REQUESTS_LINE = re.compile(rf"(?P<requests>[0-9]{{1,20}}) requests in (?P<elapsed>{_VALUE}), (?P<bytes>{_VALUE}) read", re.A)
SOCKET_ERRORS_LINE = re.compile(
    r"Socket errors: connect (?P<connect>-?[0-9]{1,20}), read (?P<read>-?[0-9]{1,20}), "
    r"write (?P<write>-?[0-9]{1,20}), timeout (?P<timeout>-?[0-9]{1,20})",
    re.A,
)
NON_2XX_LINE = re.compile(r"Non-2xx or 3xx responses: (?P<count>-?[0-9]{1,20})", re.A)
REQUESTS_PER_SEC_LINE = re.compile(rf"Requests/sec: (?P<value>{_NUM})", re.A)
TRANSFER_PER_SEC_LINE = re.compile(rf"Transfer/sec: (?P<value>{_VALUE})", re.A)

WRK_PERCENTILES = ("50", "75", "90", "99")
WRK2_PERCENTILES = ("50.000", "75.000", "90.000", "99.000", "99.900", "99.990", "99.999", "100.000")
STATS_COLUMN_WIDTHS = {"Avg": 8, "Stdev": 10, "Max": 9}
RECORDED = "Recorded Latency"
REQUESTS_OR_DISTRIBUTION = "'  Latency Distribution' or '<N> requests in <time>, <size> read'"
MAX_UNSUFFIXED_COUNT = 850.0  # wrk switches to `k` from 850 (format.md §4)


@dataclass(frozen=True)
class StatsRow:
    """One Thread Stats row in its units (ms or count); None where wrk printed nan."""

    avg: float | None
    stdev: float | None
    max: float | None
    within_stdev_pct: float | None


@dataclass(frozen=True)
class Tail:
    """The lines from `N requests in ...` to `Transfer/sec:`, converted."""

    requests: int
    elapsed_s: float
    bytes_read: float
    errors: dict[str, int]
    non_2xx_3xx: int
    requests_per_sec: float | None
    transfer_bytes_per_sec: float | None
    script_output: str


def parse_lines(lines: list[Line], source: str) -> WrkResult:
    """Parse the lines of one wrk or wrk2 output (anything before `Running` skipped)."""
    start = find_running_line(lines, source)
    version = find_version(lines[:start])
    return parse_run(Cursor(source, lines, start), version)


# --- Before the report: find `Running`, or say what the file is instead -----------------


def find_running_line(lines: list[Line], source: str) -> int:
    """Return the index of the `Running ... test @ ...` line, or raise saying what was found."""
    for index, line in enumerate(lines):
        if RUNNING_LINE.fullmatch(line.text):
            return index
    for line in lines:
        if UNABLE_TO_CONNECT_LINE.fullmatch(line.text):
            raise ParseError(source, line.number, f"wrk could not connect and printed no report: {quote(line.text)}")
        if USAGE_LINE.fullmatch(line.text):
            raise ParseError(source, line.number, "this is wrk's usage text (wrk rejected its arguments), not a report")
        if MAKING_LINE.fullmatch(line.text):
            raise ParseError(source, line.number, "wrk 1.x output ('Making N requests to URL') is not supported")
    first = next(line for line in lines if line.text)
    raise ParseError(
        source, first.number, f"expected 'Running <duration> test @ <url>', found no such line (first line {quote(first.text)})"
    )


def find_version(preamble: list[Line]) -> str | None:
    """Return the version from wrk's `-v` line before `Running`, if any."""
    version = None
    for line in preamble:
        match = VERSION_LINE.fullmatch(line.text)
        if match:
            version = match["version"]
    return version


# --- The report, line kind by line kind ------------------------------------------------


def parse_run(cur: Cursor, version: str | None) -> WrkResult:
    """Parse from `Running` to `Transfer/sec`; pick the wrk or wrk2 latency block."""
    duration_s, url = running_line(cur)
    threads, connections = threads_line(cur)
    calibrated = calibration_lines(cur)
    cur.require(THREAD_STATS_HEADER, "the 'Thread Stats   Avg      Stdev     Max   +/- Stdev' header")
    latency = stats_row(cur, "Latency", units.time_to_ms)
    req = stats_row(cur, "Req/Sec", units.count)
    if cur.take_if(LATENCY_DISTRIBUTION_HEADING):
        percentiles, uncorrected, hdr = wrk_latency_distribution(cur), {}, False
    else:
        percentiles, uncorrected, hdr = wrk2_latency_distributions(cur)
    tail = tail_lines(cur, "'<N> requests in <time>, <size> read'" if percentiles else REQUESTS_OR_DISTRIBUTION)
    nan_cells = None in (latency.avg, latency.stdev, req.avg, req.stdev)
    return WrkResult(
        source=cur.source,
        tool="wrk2" if calibrated or hdr or nan_cells else "wrk",
        url=url,
        duration_s=duration_s,
        threads=threads,
        connections=connections,
        latency_avg_ms=latency.avg,
        latency_stdev_ms=latency.stdev,
        latency_max_ms=latency.max,
        latency_within_stdev_pct=latency.within_stdev_pct,
        req_per_thread_avg=req.avg,
        req_per_thread_stdev=req.stdev,
        req_per_thread_max=req.max,
        latency_p50_ms=percentile(percentiles, 50),
        latency_p75_ms=percentile(percentiles, 75),
        latency_p90_ms=percentile(percentiles, 90),
        latency_p99_ms=percentile(percentiles, 99),
        latency_p999_ms=percentile(percentiles, 99.9),
        requests=tail.requests,
        elapsed_s=tail.elapsed_s,
        bytes_read=tail.bytes_read,
        errors_connect=tail.errors["connect"],
        errors_read=tail.errors["read"],
        errors_write=tail.errors["write"],
        errors_timeout=tail.errors["timeout"],
        non_2xx_3xx=tail.non_2xx_3xx,
        requests_per_sec=tail.requests_per_sec,
        transfer_bytes_per_sec=tail.transfer_bytes_per_sec,
        version=version,
        percentiles_ms=percentiles,
        uncorrected_percentiles_ms=uncorrected,
        script_output=tail.script_output,
    )


def running_line(cur: Cursor) -> tuple[float, str]:
    """Read `Running 30s test @ URL` -> (duration in s, URL)."""
    line, match = cur.require(RUNNING_LINE, "'Running <duration> test @ <url>'")
    return convert(cur, line, units.duration_to_s, match["duration"]), match["url"]


def threads_line(cur: Cursor) -> tuple[int, int]:
    """Read `  2 threads and 50 connections` -> (threads, connections); wrk runs 1 <= threads <= connections."""
    line, match = cur.require(THREADS_LINE, "'<N> threads and <M> connections'")
    threads, connections = int(match["threads"]), int(match["connections"])
    if not 1 <= threads <= connections:
        raise cur.error(line, f"{threads} threads and {connections} connections: wrk refuses to run unless 1 <= threads <= connections")
    return threads, connections


def calibration_lines(cur: Cursor) -> int:
    """Skip wrk2's `Thread calibration: ...` lines; return how many there were."""
    found = 0
    while cur.take_if(CALIBRATION_LINE):
        found += 1
    return found


def stats_row(cur: Cursor, name: str, to_number) -> StatsRow:
    """Read one Thread Stats row (`Latency` in ms, `Req/Sec` as a count)."""
    expected = f"the Thread Stats '{name}' row (Avg, Stdev, Max, +/- Stdev %)"
    line = cur.take(expected)
    row = fixed_cells(line.raw, name) or token_cells(line.text, name)
    if row is None:
        raise cur.error(line, f"expected {expected}, found {quote(line.text)}")
    cells, pct = row
    values = [stats_cell(cur, line, name, column, token, cut, to_number) for column, token, cut in cells]
    return StatsRow(*values, within_stdev_pct=convert(cur, line, units.number, pct))


def fixed_cells(raw: str, name: str) -> tuple[list[tuple[str, str, bool]], str] | None:
    """Slice a canonical 50-char row into (column, token, cut) cells and the % token, or None."""
    match = STATS_ROW_FIXED.fullmatch(raw.replace("\xa0", " ").rstrip())
    if match is None or match["name"] != name or not FIXED_PCT.fullmatch(match["pct"]):
        return None
    cells = []
    for column in STATS_COLUMN_WIDTHS:
        cell = match[column.lower()]
        token = cell.strip(" ")
        if not units.VALUE_TOKEN.fullmatch(token):
            return None
        trailing = len(cell) - len(cell.rstrip(" "))
        cells.append((column, token, trailing != column_pad(token)))
    return cells, match["pct"].strip()


def token_cells(text: str, name: str) -> tuple[list[tuple[str, str, bool]], str] | None:
    """Split a row that lost wrk's columns into (column, token, cut) cells and the % token, or None."""
    match = STATS_ROW_TOKENS.fullmatch(text)
    if match is None or match["name"] != name:
        return None
    cells = [(column, match[column.lower()], len(match[column.lower()]) > width) for column, width in STATS_COLUMN_WIDTHS.items()]
    return cells, match["pct"]


def column_pad(token: str) -> int:
    """Return the spaces wrk's print_units puts after token: 2, minus 1 per letter among its last two."""
    return 2 - token[-1:].isalpha() - token[-2:-1].isalpha()


def stats_cell(cur: Cursor, line: Line, name: str, column: str, token: str, cut: bool, to_number) -> float | None:
    """Convert one cell, repairing or rejecting a value wrk cut to fit its column."""
    width = STATS_COLUMN_WIDTHS[column]
    # Only Avg is narrower than the longest time wrk prints there (`1000.00ms`, 9 chars).
    lost_second_letter = column == "Avg" and len(token) == width and CUT_MS_TOKEN.fullmatch(token)
    if to_number is units.time_to_ms and lost_second_letter:
        token += "s"  # `1000.00m` in Avg is a cut `1000.00ms` (see the module docstring)
    elif cut:
        raise cur.error(
            line, f"{name} {column} {token!r} was cut to fit wrk's {width}-column field and lost its unit; its value is unknown"
        )
    value = convert(cur, line, to_number, token)
    if to_number is units.count and value is not None and token[-1:].isdigit() and value > MAX_UNSUFFIXED_COUNT:
        raise cur.error(line, f"{name} {column} {token!r} has no unit, but wrk adds k/M/G/T from 850 on: it was cut to fit its column")
    return value


def wrk_latency_distribution(cur: Cursor) -> dict[str, float | None]:
    """Read wrk's 50/75/90/99% lines after `Latency Distribution` -> {"50": ms, ...}."""
    return percentile_lines(cur, WRK_PERCENTILES)


def wrk2_latency_distributions(cur: Cursor) -> tuple[dict, dict, bool]:
    """Read wrk2's Recorded and optional Uncorrected blocks -> (recorded, uncorrected, found)."""
    first = cur.take_if(HDR_HEADING)
    if first is None:
        return {}, {}, False
    blocks = {first[1]["kind"]: hdr_block(cur)}
    if first[1]["kind"] == RECORDED:
        second = cur.take_if(HDR_HEADING)
        if second is not None:
            if second[1]["kind"] == RECORDED:
                raise cur.error(second[0], "a second Recorded Latency block; expected the Uncorrected one")
            blocks[second[1]["kind"]] = hdr_block(cur)
    recorded = blocks.pop(RECORDED, {})
    uncorrected = next(iter(blocks.values()), {})
    return recorded, uncorrected, True


def hdr_block(cur: Cursor) -> dict[str, float | None]:
    """Read one HdrHistogram block after its heading: 8 percentiles, spectrum, footers, rule."""
    percentiles = percentile_lines(cur, WRK2_PERCENTILES)
    cur.require(SPECTRUM_HEADING, "'Detailed Percentile spectrum:'")
    cur.require(SPECTRUM_COLUMNS, "the spectrum's column header 'Value   Percentile   TotalCount 1/(1-Percentile)'")
    cur.require(SPECTRUM_ROW, "a spectrum row '<value> <percentile> <count> <1/(1-p)>'")
    while cur.take_if(SPECTRUM_ROW):
        pass
    cur.require(HDR_MEAN_FOOTER, "the spectrum footer '#[Mean = ..., StdDeviation = ...]' or another spectrum row")
    cur.require(HDR_MAX_FOOTER, "the spectrum footer '#[Max = ..., Total count = ...]'")
    cur.require(HDR_BUCKETS_FOOTER, "the spectrum footer '#[Buckets = ..., SubBuckets = ...]'")
    cur.require(HDR_RULE, "the 58-dash rule closing the HdrHistogram block")
    return percentiles


def percentile_lines(cur: Cursor, expected: tuple[str, ...]) -> dict[str, float | None]:
    """Read one `  50%    1.20ms` line per expected percentile, in order -> {pct: ms}."""
    found: dict[str, float | None] = {}
    for pct in expected:
        line, match = cur.require(PERCENTILE_LINE, f"the {pct}% latency line")
        if match["pct"] != pct:
            raise cur.error(line, f"expected the {pct}% latency line, found {quote(line.text)}")
        found[pct] = convert(cur, line, units.time_to_ms, match["value"])
    return found


def tail_lines(cur: Cursor, expected: str) -> Tail:
    """Read `N requests in T, B read`, the optional error lines, Requests/sec and Transfer/sec."""
    line, match = cur.require(REQUESTS_LINE, expected)
    requests = int(match["requests"])
    elapsed_ms = convert(cur, line, units.time_to_ms, match["elapsed"])
    bytes_read = convert(cur, line, units.size_to_bytes, match["bytes"])
    if elapsed_ms is None or bytes_read is None:
        raise cur.error(line, f"expected '<N> requests in <time>, <size> read' with numbers, found {quote(line.text)}")
    errors = dict.fromkeys(("connect", "read", "write", "timeout"), 0)
    optional = ["'Socket errors: ...'", "'Non-2xx or 3xx responses: ...'"]
    found = cur.take_if(SOCKET_ERRORS_LINE)
    if found:
        errors = {key: int(found[1][key]) for key in errors}
        optional.pop(0)
    found = cur.take_if(NON_2XX_LINE)
    non_2xx = int(found[1]["count"]) if found else 0
    if found:
        optional.clear()
    expected = " or ".join([*optional, "'Requests/sec: <number>'"])
    line, match = cur.require(REQUESTS_PER_SEC_LINE, expected)
    per_sec = convert(cur, line, units.number, match["value"])
    if per_sec is None:
        raise cur.error(line, f"Requests/sec is {match['value']!r}, not a number: wrk divides the requests by the elapsed time here")
    line, match = cur.require(TRANSFER_PER_SEC_LINE, "'Transfer/sec: <size>'")
    transfer = convert(cur, line, units.size_to_bytes, match["value"])
    return Tail(requests, elapsed_ms / 1000, bytes_read, errors, non_2xx, per_sec, transfer, cur.rest())


def convert(cur: Cursor, line: Line, to_number, token: str):
    """Apply a units converter; its ValueError becomes a ParseError on line."""
    try:
        return to_number(token)
    except ValueError as exc:
        raise cur.error(line, str(exc)) from None


def percentile(percentiles: dict[str, float | None], pct: float) -> float | None:
    """Return the latency printed for pct (key "99" or "99.000"), or None."""
    for key, value in percentiles.items():
        if float(key) == pct:
            return value
    return None
