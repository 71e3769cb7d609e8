"""Parse h2load: the text of one h2load (nghttp2 1.52) run -> WrkResult (tool "h2load"), every required line checked.

h2load prints `starting benchmark...`, one `spawning thread #i: ...` line per thread, the
negotiated protocol (`TLS Protocol:`, `Cipher:`, `Server Temp Key:`, `Application
protocol:`), then, after a blank line, its report (src/h2load.cc, main): `finished in`,
`requests:`, `status codes:`, `traffic:`, the `min max mean sd +/- sd` header and four
rows (time for request, time for connect, time to 1st byte, req/s per client). Its
progress and phase lines (`progress: 10% done`, `Main benchmark duration is over for
thread #0. Stopping all clients.`, `Process Request Failure:N`) and its stderr lines
(`client could not connect to host`, `-t: warning: ...`) may sit anywhere once stdout and
stderr are kept in one file: they are skipped. Every other line must be the line h2load
prints there, or a ParseError names the line and what was expected. docs/h2load-format.md
says what each line means, which can be absent and how units are printed.

The record, field by field (docs/wrkreport.md, `wrkreport parse`):
- `threads` is the number of `spawning thread` lines, `connections` the sum of their
  clients (-c); h2load does not print its streams per connection (-m) or its URL (`url` "");
- `duration_s` is -D's main duration (`Timing-based test with ... Ns of main duration`),
  or with -n the elapsed time; `elapsed_s` is `finished in` (warm-up included);
- `requests` is `succeeded` (2xx and 3xx answers), `requests_per_sec` and
  `transfer_bytes_per_sec` as printed (h2load divides by -D's duration, else the elapsed
  time); `bytes_read` is the exact traffic total, `header_bytes` and `data_bytes` its parts;
- `non_2xx_3xx` is the 4xx plus 5xx status codes; `failed_requests` is `failed` (those
  answers plus the errored requests), `errored_requests` is `errored` (no answer:
  refused, reset, not issued, timed out), `errors_timeout` is `timeout` (counted in
  errored too), `errors_read` the errored ones that did not time out (h2load does not
  tell a refused connection from a reset one), `errors_connect` and `errors_write` 0;
- `latency_*` is `time for request` (min, max, mean, sd, +/- sd: completed requests,
  sampled), `connect_*` and `ttfb_*` the two per-connection rows, `req_per_client_*` the
  req/s row (per client, not per thread: not wrk's req_per_thread).
"""

from __future__ import annotations

import math
import re

from ..core import units
from ..core.display import quote
from ..core.errors import ParseError
from ..core.records import WrkResult
from .cursor import Cursor, Line, first_line_is
from .wrk import RUNNING_LINE

# --- What each line looks like (matched whole, against the whitespace-collapsed line) ----

_INT = r"[0-9]{1,20}"
_FIXED = r"[0-9]{1,20}\.[0-9]{2}"  # std::fixed, setprecision(2); util::dtos
_TIME = rf"[0-9]{{1,20}}us|{_FIXED}(?:ms|s)"  # util::format_duration
_SIZE = rf"[0-9]{{1,20}}|{_FIXED}[KMG]"  # util::utos_funit, before its `B`
_DOUBLE = r"[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?"  # a double through operator<< (the -D seconds)

VERSION_LINE = re.compile(r"h2load nghttp2/(?P<version>\S+)", re.A)
STARTING_LINE = re.compile(r"starting benchmark\.\.\.", re.A)
COMPLAINT_LINE = re.compile(r"--?[A-Za-z0-9-]+(?:, --?[A-Za-z0-9-]+)*: .+", re.A)  # `-n: bad option value: x`
WARNING_LINE = re.compile(r"-t: warning: .+|Warning: .+", re.A)
SPAWNING_LINE = re.compile(
    rf"spawning thread #(?P<id>{_INT}): (?P<clients>{_INT}) total client\(s\)\. (?:"
    rf"Timing-based test with (?P<warmup>{_DOUBLE})s of warm-up time and (?P<duration>{_DOUBLE})s of main duration for measurements\.|"
    rf"(?:Up to {_INT} client\(s\) will be created every \S+ )?(?P<requests>{_INT}) total requests)",
    re.A,
)
NOISE_LINE = re.compile(
    rf"progress: {_INT}% (?:done|of clients started)|Process Request Failure:{_INT}|client could not connect to host|"
    rf"Warm-up started for thread #{_INT}\.|Warm-up phase is over for thread #{_INT}\.|"
    rf"Main benchmark duration is started for thread #{_INT}\.|"
    rf"Main benchmark duration is over for thread #{_INT}\. Stopping all clients\.|Stopped all clients for thread #{_INT}|"
    rf"-t: warning: .+|Warning: .+",
    re.A,
)
# h2load's worker threads print the progress and phase lines to one stream unsynchronised, so
# two can be spliced into one line and its rest left on another (seen in a run with -t2:
# 'Warm-up started for thread #progress: 30% of clients started', then '0.'). A line made of
# nothing but pieces of them (their phrases, numbers, '.') is that noise too.
NOISE_PIECES = re.compile(
    r"progress: |% (?:done|of clients started)|Warm-up started for thread #|Warm-up phase is over for thread #|"
    r"Main benchmark duration is (?:started|over) for thread #|\. Stopping all clients|Stopped all clients for thread #|[0-9]+|\.",
    re.A,
)
NOISE_START = re.compile(r"progress: |Warm-up |Main benchmark duration |Stopped all clients", re.A)
# A spliced line's rest: a thread number and its full stop, or a progress line's tail ('% of clients started' after
# 'progress: Main benchmark duration is started for thread #1.100'), or a phase line's ('1. Stopping all clients.' after
# 'Main benchmark duration is over for thread #Main benchmark duration is over for thread #0. Stopping all clients.'),
# each seen in a default `--setups h2` run.
FRAGMENT_LINE = re.compile(r"[0-9]{1,4}\.?|\.|[0-9]{0,4}\. Stopping all clients\.|[0-9]{0,3}% (?:done|of clients started)", re.A)


def is_noise(text: str) -> bool:
    """Return True for a progress or phase line, whole or spliced with another by h2load's threads.

    >>> is_noise("progress: 10% done"), is_noise("Warm-up started for thread #progress: 30% of clients started"), is_noise("0.")
    (True, True, True)
    >>> is_noise("progress: Main benchmark duration is started for thread #1.100"), is_noise("% of clients started")
    (True, True)
    >>> is_noise("Main benchmark duration is over for thread #Main benchmark duration is over for thread #0. Stopping all clients."), is_noise("1. Stopping all clients.")
    (True, True)
    >>> is_noise("Application protocol: h2"), is_noise("finished in 1.00s, 10.00 req/s, 1KB/s")
    (False, False)
    """
    if NOISE_LINE.fullmatch(text) or FRAGMENT_LINE.fullmatch(text):
        return True
    return bool(NOISE_START.search(text)) and NOISE_PIECES.sub("", text).strip() == ""


TLS_PROTOCOL_LINE = re.compile(r"TLS Protocol: (?P<protocol>\S+)", re.A)
# 'Server Temp Key: ' and the key ('X25519 253 bits', 'ECDH prime256v1 256 bits', 'DH 2048 bits') are two writes to an
# unsynchronised stream: another thread's output can fall between them, leaving the key on a line of its own (a -t2
# run in the suite wrote 'X25519 253 bits' alone on a line, after its 'Server Temp Key:' line).
INFO_LINE = re.compile(
    r"Cipher: \S+|Server Temp Key:(?: .+)?|(?:[A-Za-z0-9_-]+ ){1,2}[0-9]+ bits|No protocol negotiated\. Fallback behaviour may be activated|"
    r"Server does not support NPN/ALPN\. Falling back to HTTP/1\.1\.",
    re.A,
)
APPLICATION_PROTOCOL_LINE = re.compile(r"Application protocol: (?P<protocol>\S+)", re.A)
NO_PROTOCOL_LINE = re.compile(r"No supported protocol was negotiated\. Supported protocols were:", re.A)
PROTOCOL_NAME_LINE = re.compile(r"[A-Za-z0-9./-]{1,32}", re.A)  # the names listed after NO_PROTOCOL_LINE
FINISHED_LINE = re.compile(rf"finished in (?P<elapsed>{_TIME}), (?P<rps>{_FIXED}) req/s, (?P<bps>{_SIZE})B/s", re.A)
REQUESTS_LINE = re.compile(
    rf"requests: (?P<total>{_INT}) total, (?P<started>{_INT}) started, (?P<done>{_INT}) done, "
    rf"(?P<succeeded>{_INT}) succeeded, (?P<failed>{_INT}) failed, (?P<errored>{_INT}) errored, (?P<timeout>{_INT}) timeout",
    re.A,
)
STATUS_LINE = re.compile(rf"status codes: (?P<s2>{_INT}) 2xx, (?P<s3>{_INT}) 3xx, (?P<s4>{_INT}) 4xx, (?P<s5>{_INT}) 5xx", re.A)
TRAFFIC_LINE = re.compile(
    rf"traffic: (?P<total_unit>{_SIZE})B \((?P<total>{_INT})\) total, (?P<head_unit>{_SIZE})B \((?P<head>{_INT})\) headers "
    rf"\(space savings (?P<savings>-?{_FIXED})%\), (?P<data_unit>{_SIZE})B \((?P<data>{_INT})\) data",
    re.A,
)
UDP_LINE = re.compile(rf"UDP datagram: {_INT} sent, {_INT} received", re.A)  # HTTP/3 builds only
TABLE_HEADER = re.compile(r"min max mean sd \+/- sd", re.A)
TIME_ROW = re.compile(
    rf"(?P<name>time for request|time for connect|time to 1st byte): (?P<min>{_TIME}) (?P<max>{_TIME}) "
    rf"(?P<mean>{_TIME}) (?P<sd>{_TIME}) (?P<within>{_FIXED})%",
    re.A,
)
RPS_ROW = re.compile(rf"req/s : (?P<min>{_FIXED}) (?P<max>{_FIXED}) (?P<mean>{_FIXED}) (?P<sd>{_FIXED}) (?P<within>{_FIXED})%", re.A)

TIME_ROWS = ("time for request", "time for connect", "time to 1st byte")
WRAPPED = 2**63  # a count this large is a negative one h2load printed unsigned


class NoiseSkippingCursor(Cursor):
    """A Cursor that also skips h2load's progress, phase and stderr lines, wherever they are."""

    def peek(self) -> Line | None:
        """Return the next line that is neither blank nor noise, without consuming it (None at the end)."""
        while self.pos < len(self.lines) and (not self.lines[self.pos].text or is_noise(self.lines[self.pos].text)):
            self.pos += 1
        return self.lines[self.pos] if self.pos < len(self.lines) else None


# --- Entry points --------------------------------------------------------------------


def is_h2load(lines: list[Line]) -> bool:
    """Return True when the text is h2load's: it starts as only h2load starts.

    Its first non-blank line is `starting benchmark...` (or its version line); or one of its
    complaints or warnings (`-n: bad option value: x`) in a file without wrk's `Running` line,
    since wrk's parser skips whatever comes before that line.

    >>> from wrkreport.parsers.cursor import split_lines
    >>> is_h2load(split_lines("\\nstarting benchmark...\\nspawning thread #0: 1 total client(s). 1 total requests\\n"))
    True
    >>> is_h2load(split_lines("-n: bad option value: x\\n"))
    True
    >>> is_h2load(split_lines("Warning: from a shell\\nRunning 2s test @ http://127.0.0.1:8080/\\n"))
    False
    """
    if first_line_is(lines, STARTING_LINE, VERSION_LINE):
        return True
    return first_line_is(lines, COMPLAINT_LINE, WARNING_LINE) and not any(RUNNING_LINE.fullmatch(line.text) for line in lines)


def parse_lines(lines: list[Line], source: str) -> WrkResult:
    """Parse the lines of one h2load run into a WrkResult; raise ParseError on a bad or missing line."""
    cur = NoiseSkippingCursor(source, lines, 0)
    found = cur.take_if(VERSION_LINE)
    version = found[1]["version"] if found else None
    first = cur.peek()
    if first is not None and COMPLAINT_LINE.fullmatch(first.text):
        raise cur.error(first, f"h2load rejected its arguments and printed no report: {quote(first.text)}")
    cur.require(STARTING_LINE, "'starting benchmark...' (the start of h2load's output)")
    threads, clients, duration = spawning_lines(cur)
    protocols = protocol_lines(cur)
    try:
        return report(cur, threads, clients, duration, protocols, version)
    except ValueError as exc:  # the record rejected a value (records.WrkResult)
        raise ParseError(source, None, f"impossible values: {exc}") from None


# --- Before the report: threads, clients, mode; the negotiated protocol ------------------


def spawning_lines(cur: Cursor) -> tuple[int, int, float | None]:
    """Read the `spawning thread #i: ...` lines -> (threads, clients, -D's main duration or None with -n)."""
    line, match = cur.require(SPAWNING_LINE, "'spawning thread #0: <N> total client(s). ...'")
    matches = [(line, match)]
    while found := cur.take_if(SPAWNING_LINE):
        matches.append(found)
    for index, (line, match) in enumerate(matches):
        if int(match["id"]) != index:
            raise cur.error(line, f"expected 'spawning thread #{index}: ...', found {quote(line.text)}")
        if (match["duration"] is None) != (matches[0][1]["duration"] is None):
            raise cur.error(line, "one thread timing-based (-D) and another not: h2load runs every thread in one mode")
    clients = sum(int(match["clients"]) for _, match in matches)
    if clients < len(matches):
        raise cur.error(matches[0][0], f"{clients} clients for {len(matches)} threads: h2load refuses to run unless clients >= threads")
    duration = matches[0][1]["duration"]
    return len(matches), clients, None if duration is None else float(duration)


def protocol_lines(cur: Cursor) -> dict[str, str | None]:
    """Read the TLS and protocol lines up to `finished in` -> {"tls": ..., "application": ...} (None when not printed)."""
    found: dict[str, str | None] = {"tls": None, "application": None}
    while True:
        line = cur.peek()
        if line is None:
            last = cur.lines[-1].number
            raise ParseError(
                cur.source,
                last,
                "h2load output ends before its report: no 'finished in ...' line (h2load still running, killed, or cut off?)",
            )
        if line.text.startswith("finished in "):  # the report: finished_line reads it (or names what is wrong with it)
            return found
        cur.pos += 1
        if match := TLS_PROTOCOL_LINE.fullmatch(line.text):
            found["tls"] = match["protocol"]
        elif match := APPLICATION_PROTOCOL_LINE.fullmatch(line.text):
            found["application"] = match["protocol"]
        elif NO_PROTOCOL_LINE.fullmatch(line.text):
            while cur.take_if(PROTOCOL_NAME_LINE):
                pass
        elif not INFO_LINE.fullmatch(line.text):
            raise cur.error(
                line,
                f"expected a protocol line ('Application protocol: <name>') or 'finished in <time>, <N> req/s, <size>B/s', found {quote(line.text)}",
            )


# --- The report, line kind by line kind ------------------------------------------------


def report(cur: Cursor, threads: int, clients: int, duration: float | None, protocols: dict, version: str | None) -> WrkResult:
    """Parse from `finished in` to the req/s row; nothing but noise may follow."""
    elapsed_s, rps, bps = finished_line(cur)
    counts = requests_line(cur)
    statuses = status_line(cur)
    traffic = traffic_line(cur)
    cur.take_if(UDP_LINE)
    cur.require(TABLE_HEADER, "the table header 'min max mean sd +/- sd'")
    rows = {name: time_row(cur, name) for name in TIME_ROWS}
    per_client = rps_row(cur)
    end_of_report(cur)
    request, connect, ttfb = rows["time for request"], rows["time for connect"], rows["time to 1st byte"]
    return WrkResult(
        source=cur.source,
        tool="h2load",
        url="",
        duration_s=elapsed_s if duration is None else duration,
        threads=threads,
        connections=clients,
        latency_avg_ms=request[2],
        latency_stdev_ms=request[3],
        latency_max_ms=request[1],
        latency_within_stdev_pct=request[4],
        req_per_thread_avg=None,
        req_per_thread_stdev=None,
        req_per_thread_max=None,
        latency_p50_ms=None,
        latency_p75_ms=None,
        latency_p90_ms=None,
        latency_p99_ms=None,
        latency_p999_ms=None,
        requests=counts["succeeded"],
        elapsed_s=elapsed_s,
        bytes_read=float(traffic["total"]),
        errors_connect=0,
        errors_read=counts["errored"] - counts["timeout"],
        errors_write=0,
        errors_timeout=counts["timeout"],
        non_2xx_3xx=statuses["4xx"] + statuses["5xx"],
        requests_per_sec=rps,
        transfer_bytes_per_sec=bps,
        failed_requests=counts["failed"],
        requests_started=counts["started"],
        requests_done=counts["done"],
        errored_requests=counts["errored"],
        latency_min_ms=request[0],
        connect_min_ms=connect[0],
        connect_max_ms=connect[1],
        connect_avg_ms=connect[2],
        connect_stdev_ms=connect[3],
        ttfb_min_ms=ttfb[0],
        ttfb_max_ms=ttfb[1],
        ttfb_avg_ms=ttfb[2],
        ttfb_stdev_ms=ttfb[3],
        req_per_client_min=per_client[0],
        req_per_client_max=per_client[1],
        req_per_client_avg=per_client[2],
        req_per_client_stdev=per_client[3],
        header_bytes=traffic["head"],
        data_bytes=traffic["data"],
        header_space_savings_pct=traffic["savings"],
        application_protocol=protocols["application"],
        tls_protocol=protocols["tls"],
        version=version,
    )


def finished_line(cur: Cursor) -> tuple[float, float, float]:
    """Read `finished in 94.74ms, 10555.76 req/s, 819.41KB/s` -> (elapsed s, req/s, bytes/s)."""
    _, match = cur.require(FINISHED_LINE, "'finished in <time>, <N> req/s, <size>B/s'")
    return units.time_to_ms(match["elapsed"]) / 1000, float(match["rps"]), units.size_to_bytes(match["bps"] + "B")


def requests_line(cur: Cursor) -> dict[str, int]:
    """Read `requests: N total, N started, N done, N succeeded, N failed, N errored, N timeout`, its sums checked."""
    line, match = cur.require(
        REQUESTS_LINE, "'requests: <N> total, <N> started, <N> done, <N> succeeded, <N> failed, <N> errored, <N> timeout'"
    )
    counts = {key: int(value) for key, value in match.groupdict().items()}
    wrapped = [key for key, value in counts.items() if value >= WRAPPED]
    if wrapped:
        raise cur.error(
            line, f"{wrapped[0]} {counts[wrapped[0]]} is a negative count printed unsigned (h2load's counter wrapped); its value is unknown"
        )
    if counts["succeeded"] + counts["failed"] != counts["total"]:
        raise cur.error(
            line,
            f"{counts['succeeded']} succeeded + {counts['failed']} failed is not the {counts['total']} total: h2load counts every request as one or the other",
        )
    if not counts["timeout"] <= counts["errored"] <= counts["failed"]:
        raise cur.error(
            line,
            f"timeout {counts['timeout']}, errored {counts['errored']}, failed {counts['failed']}: h2load counts a timeout as errored and an errored request as failed",
        )
    if counts["succeeded"] > counts["done"]:
        raise cur.error(line, f"{counts['succeeded']} succeeded but {counts['done']} done: a request succeeds when it is done")
    return counts


def status_line(cur: Cursor) -> dict[str, int]:
    """Read `status codes: N 2xx, N 3xx, N 4xx, N 5xx` -> {"2xx": N, ...}."""
    _, match = cur.require(STATUS_LINE, "'status codes: <N> 2xx, <N> 3xx, <N> 4xx, <N> 5xx'")
    return {f"{digit}xx": int(match[f"s{digit}"]) for digit in "2345"}


def traffic_line(cur: Cursor) -> dict[str, float | int]:
    """Read `traffic: 77.63KB (79490) total, 47.85KB (49000) headers (space savings 50.51%), 11.72KB (12000) data`.

    Each part is printed twice, rounded and exact: they must agree (a garbled digit shows).
    """
    line, match = cur.require(
        TRAFFIC_LINE, "'traffic: <size>B (<N>) total, <size>B (<N>) headers (space savings <P>%), <size>B (<N>) data'"
    )
    found: dict[str, float | int] = {"savings": float(match["savings"])}
    for part in ("total", "head", "data"):
        exact = int(match[part])
        if funit(exact) != match[f"{part}_unit"]:
            raise cur.error(
                line, f"traffic {part} {match[f'{part}_unit']}B is not its exact {exact} bytes (h2load prints {funit(exact)}B for them)"
            )
        found[part] = exact
    return found


def time_row(cur: Cursor, name: str) -> tuple[float, float, float, float, float]:
    """Read one `time for request:  69us  13.61ms  634us  1.54ms  90.50%` row -> (min, max, mean, sd in ms, % within sd)."""
    line, match = cur.require(TIME_ROW, f"the '{name}:' row (min, max, mean, sd, +/- sd)")
    if match["name"] != name:
        raise cur.error(line, f"expected the '{name}:' row, found {quote(line.text)}")
    low, high, mean, sd = (units.time_to_ms(match[key]) for key in ("min", "max", "mean", "sd"))
    return checked_row(cur, line, name, (low, high, mean, sd, float(match["within"])))


def rps_row(cur: Cursor) -> tuple[float, float, float, float, float]:
    """Read the `req/s : 1063.33 1075.63 1068.83 4.02 80.00%` row (per client) -> (min, max, mean, sd, % within sd)."""
    line, match = cur.require(RPS_ROW, "the 'req/s :' row (min, max, mean, sd, +/- sd)")
    return checked_row(cur, line, "req/s", tuple(float(match[key]) for key in ("min", "max", "mean", "sd", "within")))


def checked_row(cur: Cursor, line: Line, name: str, row: tuple) -> tuple:
    """Return row when min <= mean <= max and the % is at most 100 (h2load rounds each to 2 decimals)."""
    low, high, mean, _, within = row
    if within > 100:
        raise cur.error(line, f"{name}: {within:.2f}% within the sd: a share is at most 100%")
    slack = 0.01 + 1e-9  # each printed value is rounded to 0.01 of its unit
    if not (low <= high and low - slack <= mean <= high + slack):
        raise cur.error(line, f"{name}: min {low:g}, max {high:g}, mean {mean:g}: the mean of a row lies between its min and max")
    return row


def end_of_report(cur: Cursor) -> None:
    """Require that nothing but noise (progress, stderr) follows the report."""
    line = cur.peek()
    if line is not None:
        raise cur.error(line, f"expected nothing after h2load's req/s row, found {quote(line.text)}")


def funit(n: int) -> str:
    """Return n bytes as h2load's util::utos_funit prints them (1024-based, 2 decimals, half away from zero).

    >>> funit(296), funit(79490), funit(1581320), funit(1024)
    ('296', '77.63K', '1.51M', '1.00K')
    """
    for letter, bits in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << bits:
            hundredths = math.floor(100.0 * (n / (1 << bits)) + 0.5)
            return f"{hundredths // 100}.{hundredths % 100:02d}{letter}"
    return str(n)
