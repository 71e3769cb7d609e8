"""Records: the typed results every later step of the pipeline works on (standard library only)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from .setups import BASELINE

# JSON key order of one parsed wrk output (`wrkreport parse --json`, results.csv columns).
FIELDS: tuple[str, ...] = (
    "source",
    "tool",
    "url",
    "duration_s",
    "threads",
    "connections",
    "latency_avg_ms",
    "latency_stdev_ms",
    "latency_max_ms",
    "latency_within_stdev_pct",
    "req_per_thread_avg",
    "req_per_thread_stdev",
    "req_per_thread_max",
    "latency_p50_ms",
    "latency_p75_ms",
    "latency_p90_ms",
    "latency_p99_ms",
    "latency_p999_ms",
    "requests",
    "elapsed_s",
    "bytes_read",
    "errors_connect",
    "errors_read",
    "errors_write",
    "errors_timeout",
    "non_2xx_3xx",
    "requests_per_sec",
    "transfer_bytes_per_sec",
    "bytes_per_response",
    # ab and webbench only (null for wrk): their failed requests (Connect and Receive are errors_connect and
    # errors_read), its length and exception failures, and its Keep-Alive requests (with -k).
    "failed_requests",
    "failed_length",
    "failed_exceptions",
    "keepalive_requests",
    # h2load only (null for the others; parsers/h2load.py): its request counts, the min of its time for request,
    # its per-connection time to connect and to the first byte, its req/s per client, its header and data bytes
    # and HPACK's header space savings, the protocol it negotiated. h2load does not print -m (streams).
    "requests_started",
    "requests_done",
    "errored_requests",
    "latency_min_ms",
    "connect_min_ms",
    "connect_max_ms",
    "connect_avg_ms",
    "connect_stdev_ms",
    "ttfb_min_ms",
    "ttfb_max_ms",
    "ttfb_avg_ms",
    "ttfb_stdev_ms",
    "req_per_client_min",
    "req_per_client_max",
    "req_per_client_avg",
    "req_per_client_stdev",
    "header_bytes",
    "data_bytes",
    "header_space_savings_pct",
    "application_protocol",
    "tls_protocol",
)

_COUNTERS = ("errors_connect", "errors_read", "errors_write", "errors_timeout", "non_2xx_3xx")
_AB_COUNTERS = ("failed_requests", "failed_length", "failed_exceptions", "keepalive_requests")
_H2LOAD_COUNTERS = ("requests_started", "requests_done", "errored_requests", "header_bytes", "data_bytes")
TOOLS = ("wrk", "wrk2", "ab", "webbench", "h2load")  # the load generators whose output parse reads (webbench: parse only)


@dataclass(frozen=True)
class WrkResult:
    """One wrk, wrk2, ab, webbench or h2load output, every number normalised (ms, bytes, seconds); None = not printed."""

    source: str
    tool: str  # "wrk", "wrk2", "ab", "webbench" or "h2load"
    url: str
    duration_s: float
    threads: int
    connections: int
    latency_avg_ms: float | None
    latency_stdev_ms: float | None
    latency_max_ms: float | None
    latency_within_stdev_pct: float | None
    req_per_thread_avg: float | None
    req_per_thread_stdev: float | None
    req_per_thread_max: float | None
    latency_p50_ms: float | None
    latency_p75_ms: float | None
    latency_p90_ms: float | None
    latency_p99_ms: float | None
    latency_p999_ms: float | None
    requests: int
    elapsed_s: float
    bytes_read: float
    errors_connect: int
    errors_read: int
    errors_write: int
    errors_timeout: int
    non_2xx_3xx: int
    requests_per_sec: float | None
    transfer_bytes_per_sec: float | None
    failed_requests: int | None = None  # ab only, as the three below
    failed_length: int | None = None
    failed_exceptions: int | None = None
    keepalive_requests: int | None = None
    requests_started: int | None = None  # h2load only, as every field down to tls_protocol
    requests_done: int | None = None
    errored_requests: int | None = None
    latency_min_ms: float | None = None
    connect_min_ms: float | None = None
    connect_max_ms: float | None = None
    connect_avg_ms: float | None = None
    connect_stdev_ms: float | None = None
    ttfb_min_ms: float | None = None
    ttfb_max_ms: float | None = None
    ttfb_avg_ms: float | None = None
    ttfb_stdev_ms: float | None = None
    req_per_client_min: float | None = None
    req_per_client_max: float | None = None
    req_per_client_avg: float | None = None
    req_per_client_stdev: float | None = None
    header_bytes: int | None = None
    data_bytes: int | None = None
    header_space_savings_pct: float | None = None
    application_protocol: str | None = None
    tls_protocol: str | None = None
    # Not in FIELDS: kept for provenance, never mixed into the figures above.
    version: str | None = None
    percentiles_ms: dict[str, float | None] = field(default_factory=dict)
    uncorrected_percentiles_ms: dict[str, float | None] = field(default_factory=dict)
    script_output: str = ""

    def __post_init__(self) -> None:
        if self.tool not in TOOLS:
            raise ValueError(f"tool must be one of {', '.join(TOOLS)}, not {self.tool!r}")
        for name in ("threads", "connections", "requests", *_COUNTERS):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{name} must be an int, not {value!r}")
        for name in ("threads", "connections", "requests"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, not {getattr(self, name)!r}")
        for name in (*_AB_COUNTERS, *_H2LOAD_COUNTERS):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise ValueError(f"{name} must be None or an int >= 0, not {value!r}")
        if self.bytes_read < 0 or math.isnan(self.bytes_read):
            raise ValueError(f"bytes_read must be >= 0, not {self.bytes_read!r}")

    @property
    def bytes_per_response(self) -> float | None:
        """Return bytes read per completed response (None when nothing completed)."""
        if self.requests == 0:
            return None
        return self.bytes_read / self.requests

    @property
    def socket_errors(self) -> int:
        """Return the sum of the four socket error counters."""
        return self.errors_connect + self.errors_read + self.errors_write + self.errors_timeout

    def to_dict(self) -> dict:
        """Return the record as a dict with exactly the FIELDS keys, in order."""
        return {name: getattr(self, name) for name in FIELDS}


assert set(FIELDS) - {"bytes_per_response"} <= {f.name for f in fields(WrkResult)}


# --- Records produced after parsing: checks, ratios, noise warnings -------------------

STATUSES = ("pass", "warn", "fail")
THROUGHPUT = "requests_per_sec"  # the metric every overhead ratio is about
# Server CPU per request (Go's or its stand-in's, plus nginx's, CPU time / requests): the
# capacity-planning figure. Its ratio to go-http's pairs rounds and blocks as the throughput ratio does.
CPU_METRIC = "cpu_server_ms_per_1k"


def worst(statuses) -> str:
    """Return the worst of some check statuses ('pass' for none)."""
    found = set(statuses)
    return next((status for status in reversed(STATUSES) if status in found), "pass")


@dataclass(frozen=True)
class Check:
    """One check's verdict on one subject (a measurement, a cell, a setup or the run)."""

    name: str  # header-bytes, same-response, non-2xx, socket-errors, zero-requests, run-status, parse
    status: str  # pass | warn | fail
    message: str  # a sentence a person understands, with the figures
    setup: str | None = None
    gomaxprocs: int | None = None
    repeat: int | None = None
    file: str | None = None  # relative to the run directory

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {self.status!r}")


@dataclass(frozen=True)
class Ratio:
    """setup / go-http at one GOMAXPROCS for one metric, with a 95% interval over blocks (or repeats in one start)."""

    metric: str  # requests_per_sec | latency_p50_ms | latency_p99_ms
    gomaxprocs: int
    setup: str
    ratio: float | None
    ci_low: float | None
    ci_high: float | None
    n: int  # paired repeats used
    excluded: str | None = None  # reason the ratio was not computed, or None
    connections: int | None = None  # wrk's -c of the cell (several with a sweep)
    baseline: str = BASELINE  # the setup divided by: go-http, or nginx-static for the ceiling share
    blocks: int = 0  # server starts behind the ratio (1 for runs recorded before blocks)
    measurements: int = 0  # wrk measurements behind the ratio: the setup's paired ones and their baseline partners
    unit: str = "repeat"  # unit of replication of the interval: "block", or "repeat" (one start only)

    @property
    def has_interval(self) -> bool:
        """Return True when an interval could be computed (n >= 2, not excluded)."""
        return self.ci_low is not None and self.ci_high is not None

    @property
    def includes_one(self) -> bool:
        """Return True when the interval includes 1.0 (no measurable difference from Go)."""
        return self.has_interval and self.ci_low <= 1.0 <= self.ci_high


@dataclass(frozen=True)
class NoiseWarning:
    """A reason to distrust a figure: outlier repeat, cold first repeat, wide spread ..."""

    kind: str  # outlier | cold-start | spread | few-repeats | wide-interval
    message: str
    setup: str | None = None
    gomaxprocs: int | None = None
    repeat: int | None = None
    connections: int | None = None
