"""Parse webbench: the text of one webbench 1.5 run -> WrkResult (tool "webbench"), every required line checked.

webbench 1.5 (webbench.c) prints its banner on stderr (`Webbench - Simple Web Benchmark
1.5`, a copyright line), then on stdout `Benchmarking: GET URL`, `N clients, running T
sec.` and, at the end, its only two result lines:

    Speed=463124 pages/min, 849060 bytes/sec.
    Requests: 231562 susceed, 0 failed.

(`susceed` sic). It is not packaged by Debian or Ubuntu, so the driver never runs it: this
reader exists for the figures of the 2012 Go-vs-Node study, which come from it. The banner
is optional (stderr may not be kept); the Benchmarking, clients and both result lines are
required, in that order, and nothing else may follow.

The record, field by field:
- `connections` is webbench's clients (-c); `threads` is the same (one forked process per
  client); `duration_s` and `elapsed_s` are its `running T sec`;
- `requests` is `susceed`, `failed_requests` is `failed` (a connect, write or read failure);
- `requests_per_sec` is `Speed` pages/min / 60: webbench counts failed requests in it
  ((susceed + failed) / minutes), as printed;
- `transfer_bytes_per_sec` is `bytes/sec` (webbench truncates it to an integer) and
  `bytes_read` that rate times the seconds, so `bytes_per_response` is webbench's own
  bytes per response (about 110 for the 2012 study's Go, 88 for its Node);
- webbench reads no status line, no latency and no error kinds: those fields are None or 0.
"""

from __future__ import annotations

import re

from ..core.display import quote
from ..core.records import WrkResult
from .cursor import Cursor, Line, first_line_is

_INT = r"[0-9]{1,20}"

BANNER_LINE = re.compile(r"Webbench - Simple Web Benchmark (?P<version>[0-9][0-9.]*)", re.A)
COPYRIGHT_LINE = re.compile(r"Copyright \(c\) Radim Kolar .*", re.A)
BENCHMARKING_LINE = re.compile(r"Benchmarking: (?P<method>GET|HEAD|OPTIONS|TRACE) (?P<url>\S+)(?: \(using HTTP/(?:0\.9|1\.1)\))?", re.A)
CLIENTS_LINE = re.compile(rf"(?P<clients>{_INT}) clients?, running (?P<seconds>{_INT}) sec(?P<extras>(?:, [^,.]+)*)\.", re.A)
SPEED_LINE = re.compile(rf"Speed=(?P<pages>{_INT}) pages/min, (?P<bytes>-?{_INT}) bytes/sec\.", re.A)
REQUESTS_LINE = re.compile(rf"Requests: (?P<ok>{_INT}) susceed, (?P<failed>{_INT}) failed\.", re.A)


def is_webbench(lines: list[Line]) -> bool:
    """Return True when the text is webbench's: its banner or its `Benchmarking:` line comes first.

    >>> from wrkreport.parsers.cursor import split_lines
    >>> is_webbench(split_lines("Webbench - Simple Web Benchmark 1.5\\n"))
    True
    >>> is_webbench(split_lines("\\nBenchmarking: GET http://127.0.0.1:8080/\\n"))
    True
    >>> is_webbench(split_lines("Running 2s test @ http://127.0.0.1:8080/\\n"))
    False
    """
    return first_line_is(lines, BANNER_LINE, BENCHMARKING_LINE)


def parse_lines(lines: list[Line], source: str) -> WrkResult:
    """Parse the lines of one webbench run into a WrkResult; raise ParseError on a bad or missing line."""
    cur = Cursor(source, lines, 0)
    version = None
    banner = cur.take_if(BANNER_LINE)
    if banner:
        version = banner[1]["version"]
        cur.take_if(COPYRIGHT_LINE)
    url = cur.require(BENCHMARKING_LINE, "'Benchmarking: GET <url>'")[1]["url"]
    line, clients = cur.require(CLIENTS_LINE, "'<N> clients, running <T> sec.'")
    seconds = int(clients["seconds"])
    if seconds == 0:
        raise cur.error(line, "running 0 sec: webbench measured nothing (its -t must be at least 1)")
    line, speed = cur.require(SPEED_LINE, "'Speed=<N> pages/min, <N> bytes/sec.'")
    if speed["bytes"].startswith("-"):
        raise cur.error(line, f"negative bytes/sec {speed['bytes']}: webbench's int overflowed (too many bytes for its counter)")
    counts = cur.require(REQUESTS_LINE, "'Requests: <N> susceed, <N> failed.'")[1]
    extra = cur.peek()
    if extra is not None:
        raise cur.error(extra, f"unexpected line after webbench's result: {quote(extra.text)}")
    ok, failed, rate = int(counts["ok"]), int(counts["failed"]), int(speed["bytes"])
    return WrkResult(
        source=source,
        tool="webbench",
        url=url,
        duration_s=float(seconds),
        threads=int(clients["clients"]),
        connections=int(clients["clients"]),
        latency_avg_ms=None,
        latency_stdev_ms=None,
        latency_max_ms=None,
        latency_within_stdev_pct=None,
        req_per_thread_avg=None,
        req_per_thread_stdev=None,
        req_per_thread_max=None,
        latency_p50_ms=None,
        latency_p75_ms=None,
        latency_p90_ms=None,
        latency_p99_ms=None,
        latency_p999_ms=None,
        requests=ok,
        elapsed_s=float(seconds),
        bytes_read=float(rate * seconds),
        errors_connect=0,
        errors_read=0,
        errors_write=0,
        errors_timeout=0,
        non_2xx_3xx=0,
        requests_per_sec=int(speed["pages"]) / 60,
        transfer_bytes_per_sec=float(rate),
        failed_requests=failed,
        version=version,
    )
