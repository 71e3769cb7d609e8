"""Parse ab: the text of one ApacheBench 2.3 run -> WrkResult (tool "ab"), every required line checked.

ab prints a banner (`This is ApacheBench, Version 2.3 ...`), `Benchmarking HOST (be
patient)`, then its report: the server and document lines, the counters, the rates, the
`Connection Times (ms)` table and the `Percentage of the requests served within a
certain time (ms)` table (ab.c, output_results). Its progress lines (`Completed N
requests`, `Finished N requests`) go to stderr and may sit anywhere once stdout and
stderr are kept in one file: they are skipped, as are blank lines. Every other line from
`Server Software:` to `100% N (longest request)` must be the line ab prints there, or a
ParseError names the line and what was expected; nothing may follow but progress lines.
A run ab gave up on (`apr_socket_recv: Connection refused (111)`, `Test aborted after 10
failures`) printed no report: a ParseError on that line.

The record, field by field (docs/wrkreport.md, `wrkreport parse`):
- `connections` is ab's concurrency (-c); `threads` is 1 (ab runs one thread);
- `duration_s` and `elapsed_s` are both `Time taken for tests` (with -t ab stops at the
  time limit, with -n when the requests are done);
- `requests` is `Complete requests`, `bytes_read` is `Total transferred` (headers and
  bodies, exact bytes), so `bytes_per_response` is comparable with wrk's;
- `non_2xx_3xx` is `Non-2xx responses` (ab counts 3xx there too);
- `Failed requests` is `failed_requests`, split into `errors_connect` (Connect),
  `errors_read` (Receive), `failed_length` (a body length other than the first
  response's) and `failed_exceptions`; `errors_write` is `Write errors`; `errors_timeout`
  is 0 (a timeout ends an ab run: no report);
- `latency_avg_ms` is `Time per request (mean)` (concurrency x time / requests, 3
  decimals), `latency_stdev_ms` the `Total:` row's sd, `latency_max_ms` the longest request;
- the percentile table (whole milliseconds) gives `latency_p50_ms`, `_p75`, `_p90`, `_p99`
  and all nine rows in `percentiles_ms` ({"50": ms, "66": ..., "100": ms});
- `transfer_bytes_per_sec` is `Transfer rate` x 1024 (ab's Kbytes are 1024 bytes);
- `keepalive_requests` is `Keep-Alive requests` (None without -k).
Not supported (a ParseError says so): ab's -S table (`min avg max`) and -d (no
percentile table) variants, and -w (HTML) output.
"""

from __future__ import annotations

import re

from ..core.display import quote
from ..core.errors import ParseError
from ..core.records import WrkResult
from .cursor import Cursor, Line, first_line_is

# --- What each line looks like (matched whole, against the whitespace-collapsed line) ----

_INT = r"[0-9]{1,20}"
_DEC = r"[0-9]{1,20}(?:\.[0-9]{1,20})?"

BANNER_LINE = re.compile(r"This is ApacheBench, Version (?P<version>\S+)(?: <.*>)?", re.A)
COMPLAINT_LINE = re.compile(r"ab: .+", re.A)  # `ab: invalid URL`, then its usage text
PROGRESS_LINE = re.compile(
    rf"(?:Completed|Finished) {_INT} requests|Benchmarking \S+ \(be patient\)(?:\.*done)?|"
    r"Copyright 1996 Adam Twiss, Zeus Technology Ltd, .*|Licensed to The Apache Software Foundation, .*",
    re.A,
)
FAILURE_LINE = re.compile(
    r"(?P<call>apr_[a-z_]+(?:\(\))?): .*\([0-9]+\)|Test aborted after [0-9]+ failures|"
    r"ab: .+|Usage: ab \[options\].*|SSL read failed .*|Invalid .+|"
    r"socket: .*|Send request failed!|Broken pipe|Server timed out",
    re.A,
)
TOTAL_OF_LINE = re.compile(rf"Total of (?P<count>{_INT}) requests completed", re.A)
SERVER_SOFTWARE_LINE = re.compile(r"Server Software:(?: (?P<software>.*))?", re.A)
SERVER_HOSTNAME_LINE = re.compile(r"Server Hostname: (?P<host>\S+)", re.A)
SERVER_PORT_LINE = re.compile(rf"Server Port: (?P<port>{_INT})", re.A)
TLS_LINE = re.compile(r"(?:SSL/TLS Protocol|Server Temp Key|TLS Server Name): .*", re.A)
DOCUMENT_PATH_LINE = re.compile(r"Document Path: (?P<path>\S+)", re.A)
DOCUMENT_LENGTH_LINE = re.compile(rf"Document Length: (?:(?P<bytes>{_INT}) bytes|Variable)", re.A)
CONCURRENCY_LINE = re.compile(rf"Concurrency Level: (?P<concurrency>{_INT})", re.A)
TIME_TAKEN_LINE = re.compile(rf"Time taken for tests: (?P<seconds>{_DEC}) seconds", re.A)
COMPLETE_LINE = re.compile(rf"Complete requests: (?P<count>{_INT})", re.A)
FAILED_LINE = re.compile(rf"Failed requests: (?P<count>{_INT})", re.A)
FAILED_SPLIT_LINE = re.compile(
    rf"\(Connect: (?P<connect>{_INT}), Receive: (?P<receive>{_INT}), " rf"Length: (?P<length>{_INT}), Exceptions: (?P<exceptions>{_INT})\)",
    re.A,
)
WRITE_ERRORS_LINE = re.compile(rf"Write errors: (?P<count>{_INT})", re.A)
NON_2XX_LINE = re.compile(rf"Non-2xx responses: (?P<count>{_INT})", re.A)
KEEPALIVE_LINE = re.compile(rf"Keep-Alive requests: (?P<count>{_INT})", re.A)
TOTAL_TRANSFERRED_LINE = re.compile(rf"Total transferred: (?P<bytes>{_INT}) bytes", re.A)
BODY_SENT_LINE = re.compile(rf"Total body sent: (?P<bytes>{_INT})", re.A)
HTML_TRANSFERRED_LINE = re.compile(rf"HTML transferred: (?P<bytes>{_INT}) bytes", re.A)
REQUESTS_PER_SEC_LINE = re.compile(rf"Requests per second: (?P<value>{_DEC}) \[#/sec\] \(mean\)", re.A)
TIME_PER_REQUEST_LINE = re.compile(rf"Time per request: (?P<ms>{_DEC}) \[ms\] \(mean\)", re.A)
TIME_PER_REQUEST_ALL_LINE = re.compile(rf"Time per request: (?P<ms>{_DEC}) \[ms\] \(mean, across all concurrent requests\)", re.A)
TRANSFER_RATE_LINE = re.compile(rf"Transfer rate: (?P<kbytes>{_DEC}) \[Kbytes/sec\] received", re.A)
SENT_RATE_LINE = re.compile(rf"{_DEC} kb/s (?:sent|total)", re.A)
CONNECTION_TIMES_HEADING = re.compile(r"Connection Times \(ms\)", re.A)
CONNECTION_TIMES_COLUMNS = re.compile(r"min mean\[\+/-sd\] median max", re.A)
SHORT_TABLE_COLUMNS = re.compile(r"min avg max", re.A)  # ab -S
CONNECTION_TIMES_ROW = re.compile(
    rf"(?P<name>Connect|Processing|Waiting|Total): (?P<min>-?{_INT}) (?P<mean>-?{_INT}) "
    rf"(?P<sd>{_DEC}) (?P<median>-?{_INT}) (?P<max>-?{_INT})",
    re.A,
)
SANITY_WARNING_LINE = re.compile(
    r"(?:WARNING|ERROR): The median and mean for the .+|These results are (?:probably not that|NOT) reliable\.|"
    r"deviation apart\. These results are NOT reliable\.",
    re.A,
)
PERCENTAGE_HEADING = re.compile(r"Percentage of the requests served within a certain time \(ms\)", re.A)
PERCENTAGE_LINE = re.compile(rf"(?P<pct>[0-9]{{1,3}})% (?P<ms>-?{_INT})(?: \(longest request\))?", re.A)

AB_PERCENTILES = ("50", "66", "75", "80", "90", "95", "98", "99", "100")
CONNECTION_TIMES_ROWS = ("Connect", "Processing", "Waiting", "Total")
KBYTES = 1024  # ab's "Kbytes/sec": totalread / 1024 / seconds


class ProgressSkippingCursor(Cursor):
    """A Cursor that also skips ab's progress lines, wherever stderr put them."""

    def peek(self) -> Line | None:
        """Return the next line that is neither blank nor progress, without consuming it (None at the end)."""
        while self.pos < len(self.lines) and (not self.lines[self.pos].text or PROGRESS_LINE.fullmatch(self.lines[self.pos].text)):
            self.pos += 1
        return self.lines[self.pos] if self.pos < len(self.lines) else None


# --- Entry points --------------------------------------------------------------------


def is_ab(lines: list[Line]) -> bool:
    """Return True when the text is ab's: its banner (or its `ab: ...` complaint) is the first non-blank line.

    >>> from wrkreport.parsers.cursor import split_lines
    >>> is_ab(split_lines("\\nThis is ApacheBench, Version 2.3 <$Revision$>\\n"))
    True
    >>> is_ab(split_lines("ab: invalid URL\\nUsage: ab [options] [http[s]://]hostname[:port]/path\\n"))
    True
    >>> is_ab(split_lines("Running 2s test @ http://127.0.0.1:8080/\\n"))
    False
    """
    return first_line_is(lines, BANNER_LINE, COMPLAINT_LINE)


def parse_lines(lines: list[Line], source: str) -> WrkResult:
    """Parse the lines of one ab run (banner first) into a WrkResult; raise ParseError on a bad line."""
    banner = next(line for line in lines if line.text)
    if COMPLAINT_LINE.fullmatch(banner.text):
        raise ParseError(source, banner.number, f"ab rejected its arguments and printed no report: {quote(banner.text)}")
    version = BANNER_LINE.fullmatch(banner.text)["version"]
    cur = ProgressSkippingCursor(source, lines, lines.index(banner) + 1)
    report_start(cur)
    try:
        return parse_report(cur, version)
    except ValueError as exc:  # the record rejected a value (records.WrkResult)
        raise ParseError(source, None, f"impossible values: {exc}") from None


def report_start(cur: Cursor) -> None:
    """Stop at ab's failure line when the report never starts (ab gave up: no results)."""
    line = cur.peek()
    if line is None:
        raise ParseError(
            cur.source, cur.lines[-1].number, "ab output ends before its report: no 'Server Software:' line (ab still running, or cut off?)"
        )
    total = TOTAL_OF_LINE.fullmatch(line.text)
    if total:  # ab gave up mid-run: `Total of N requests completed`, then why
        cause = next((later for later in cur.lines[cur.pos + 1 :] if FAILURE_LINE.fullmatch(later.text)), line)
        raise cur.error(cause, f"ab failed after {total['count']} requests and printed no report: {quote(cause.text)}")
    if FAILURE_LINE.fullmatch(line.text):
        raise cur.error(line, f"ab failed and printed no report: {quote(line.text)}")


# --- The report, line kind by line kind ------------------------------------------------


def parse_report(cur: Cursor, version: str) -> WrkResult:
    """Parse from `Server Software:` to the longest request; nothing but progress may follow."""
    url = server_lines(cur)
    concurrency = int(cur.require(CONCURRENCY_LINE, "'Concurrency Level: <N>'")[1]["concurrency"])
    seconds = float(cur.require(TIME_TAKEN_LINE, "'Time taken for tests: <seconds> seconds'")[1]["seconds"])
    complete = int(cur.require(COMPLETE_LINE, "'Complete requests: <N>'")[1]["count"])
    failed = failed_lines(cur)
    write_errors = optional_count(cur, WRITE_ERRORS_LINE)
    non_2xx = optional_count(cur, NON_2XX_LINE)
    keepalive = optional_count(cur, KEEPALIVE_LINE, default=None)
    total_bytes = int(cur.require(TOTAL_TRANSFERRED_LINE, optional_or("'Total transferred: <N> bytes'", keepalive is None))[1]["bytes"])
    cur.take_if(BODY_SENT_LINE)
    cur.require(HTML_TRANSFERRED_LINE, "'HTML transferred: <N> bytes'")
    per_sec, mean_ms, transfer = rate_lines(cur, complete, seconds)
    total_sd, percentiles = tables(cur, complete)
    end_of_report(cur)
    return WrkResult(
        source=cur.source,
        tool="ab",
        url=url,
        duration_s=seconds,
        threads=1,
        connections=concurrency,
        latency_avg_ms=mean_ms,
        latency_stdev_ms=total_sd,
        latency_max_ms=percentiles.get("100"),
        latency_within_stdev_pct=None,
        req_per_thread_avg=None,
        req_per_thread_stdev=None,
        req_per_thread_max=None,
        latency_p50_ms=percentiles.get("50"),
        latency_p75_ms=percentiles.get("75"),
        latency_p90_ms=percentiles.get("90"),
        latency_p99_ms=percentiles.get("99"),
        latency_p999_ms=None,
        requests=complete,
        elapsed_s=seconds,
        bytes_read=float(total_bytes),
        errors_connect=failed["connect"],
        errors_read=failed["receive"],
        errors_write=write_errors,
        errors_timeout=0,
        non_2xx_3xx=non_2xx,
        requests_per_sec=per_sec,
        transfer_bytes_per_sec=transfer,
        failed_requests=failed["total"],
        failed_length=failed["length"],
        failed_exceptions=failed["exceptions"],
        keepalive_requests=keepalive,
        version=version,
        percentiles_ms=percentiles,
    )


def optional_or(expected: str, optional_left: bool) -> str:
    """Return what is expected next, naming the optional Keep-Alive line while it may still come."""
    return f"'Keep-Alive requests: <N>' or {expected}" if optional_left else expected


def server_lines(cur: Cursor) -> str:
    """Read the Server and Document lines -> the URL ab requested (`http://host:port/path`)."""
    cur.require(SERVER_SOFTWARE_LINE, "'Server Software: <name>' (the start of ab's report)")
    host = cur.require(SERVER_HOSTNAME_LINE, "'Server Hostname: <host>'")[1]["host"]
    line, match = cur.require(SERVER_PORT_LINE, "'Server Port: <port>'")
    port = int(match["port"])
    if not 0 < port < 65536:
        raise cur.error(line, f"Server Port {port} is not a TCP port (1-65535)")
    tls = False
    while cur.take_if(TLS_LINE):
        tls = True
    path = cur.require(DOCUMENT_PATH_LINE, "'Document Path: <path>'")[1]["path"]
    cur.require(DOCUMENT_LENGTH_LINE, "'Document Length: <N> bytes' or 'Document Length: Variable'")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address, as a URL writes it
    return f"{'https' if tls else 'http'}://{host}:{port}{path}"


def failed_lines(cur: Cursor) -> dict[str, int]:
    """Read `Failed requests: N` and, when N > 0, its `(Connect: .., Receive: .., Length: .., Exceptions: ..)` split."""
    line, match = cur.require(FAILED_LINE, "'Failed requests: <N>'")
    total = int(match["count"])
    split = dict.fromkeys(("connect", "receive", "length", "exceptions"), 0)
    if total > 0:
        _, found = cur.require(FAILED_SPLIT_LINE, "'(Connect: <N>, Receive: <N>, Length: <N>, Exceptions: <N>)' after failed requests")
        split = {key: int(found[key]) for key in split}
    return {"total": total, **split}


def optional_count(cur: Cursor, pattern: re.Pattern, default: int | None = 0) -> int | None:
    """Return the count of an optional `Name: N` line ab prints only when N > 0 (or with -k), else default."""
    found = cur.take_if(pattern)
    return int(found[1]["count"]) if found else default


def rate_lines(cur: Cursor, complete: int, seconds: float) -> tuple[float | None, float | None, float | None]:
    """Read Requests per second, the two Time per request lines and Transfer rate (printed when requests > 0)."""
    if complete == 0 or seconds == 0:
        return None, None, None
    per_sec = float(cur.require(REQUESTS_PER_SEC_LINE, "'Requests per second: <N> [#/sec] (mean)'")[1]["value"])
    mean_ms = float(cur.require(TIME_PER_REQUEST_LINE, "'Time per request: <ms> [ms] (mean)'")[1]["ms"])
    cur.require(TIME_PER_REQUEST_ALL_LINE, "'Time per request: <ms> [ms] (mean, across all concurrent requests)'")
    kbytes = float(cur.require(TRANSFER_RATE_LINE, "'Transfer rate: <N> [Kbytes/sec] received'")[1]["kbytes"])
    while cur.take_if(SENT_RATE_LINE):
        pass
    return per_sec, mean_ms, kbytes * KBYTES


def tables(cur: Cursor, complete: int) -> tuple[float | None, dict[str, float]]:
    """Read the Connection Times table and the percentile table -> (Total sd, {pct: ms}); absent with no requests."""
    if complete == 0:
        return None, {}
    cur.require(CONNECTION_TIMES_HEADING, "'Connection Times (ms)'")
    line = cur.take("the table's column header 'min mean[+/-sd] median max'")
    if SHORT_TABLE_COLUMNS.fullmatch(line.text):
        raise cur.error(line, "ab -S output (a 'min avg max' table) is not supported: run ab without -S")
    if not CONNECTION_TIMES_COLUMNS.fullmatch(line.text):
        raise cur.error(line, f"expected the table's column header 'min mean[+/-sd] median max', found {quote(line.text)}")
    rows = {}
    for name in CONNECTION_TIMES_ROWS:
        line, match = cur.require(CONNECTION_TIMES_ROW, f"the '{name}:' row (min, mean, [+/-sd], median, max)")
        if match["name"] != name:
            raise cur.error(line, f"expected the '{name}:' row, found {quote(line.text)}")
        rows[name] = match
    while cur.take_if(SANITY_WARNING_LINE):
        pass
    if complete == 1:
        return float(rows["Total"]["sd"]), {}  # ab prints no percentile table for one request
    cur.require(PERCENTAGE_HEADING, "'Percentage of the requests served within a certain time (ms)' (ab -d output is not supported)")
    return float(rows["Total"]["sd"]), percentage_lines(cur)


def percentage_lines(cur: Cursor) -> dict[str, float]:
    """Read ab's nine `  50%     14` rows, the last `100%  36 (longest request)` -> {pct: ms}."""
    found: dict[str, float] = {}
    for pct in AB_PERCENTILES:
        line, match = cur.require(PERCENTAGE_LINE, f"the {pct}% row")
        longest = line.text.endswith("(longest request)")
        if match["pct"] != pct or longest != (pct == "100"):
            suffix = " ... (longest request)" if pct == "100" else ""
            raise cur.error(line, f"expected the {pct}%{suffix} row, found {quote(line.text)}")
        found[pct] = float(match["ms"])
    return found


def end_of_report(cur: Cursor) -> None:
    """Require that nothing but progress lines follows the report."""
    line = cur.peek()
    if line is not None:
        raise cur.error(line, f"expected nothing after ab's percentile table, found {quote(line.text)}")
