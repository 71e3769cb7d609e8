"""Records: the typed results every later step of the pipeline works on."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields

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
)

_COUNTERS = ("errors_connect", "errors_read", "errors_write", "errors_timeout", "non_2xx_3xx")
_AB_COUNTERS = ("failed_requests", "failed_length", "failed_exceptions", "keepalive_requests")
TOOLS = ("wrk", "wrk2", "ab", "webbench")  # the load generators whose output parse reads (webbench: parse only)


@dataclass(frozen=True)
class WrkResult:
    """One wrk, wrk2 or ab output, every number normalised (ms, bytes, seconds); None = not printed."""

    source: str
    tool: str  # "wrk", "wrk2", "ab" or "webbench"
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
        for name in _AB_COUNTERS:
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
BASELINE = "go-http"
THROUGHPUT = "requests_per_sec"  # the metric every overhead ratio is about
# Every setup the driver knows, in display order, with what it is. The first four are the
# article's; the others are off by default.
SETUP_DESCRIPTIONS: dict[str, str] = {
    "go-http": "Go net/http standalone (the control group)",
    "nginx-http": "nginx reverse proxy to Go net/http over TCP",
    "nginx-fcgi-tcp": "nginx FastCGI to Go over TCP",
    "nginx-fcgi-unix": "nginx FastCGI to Go over a Unix socket",
    "nginx-http-unix": "nginx reverse proxy to Go net/http over a Unix socket",
    "go-fasthttp": "Go fasthttp standalone",
    "nginx-static": "nginx answering by itself (return 200): the ceiling",
    "node-http": "Node.js http module standalone (src/nodehello): one process at GOMAXPROCS=1, a cluster of N workers at GOMAXPROCS=N",
    "go-https": "Go net/http over crypto/tls standalone (the control group of the TLS setups)",
    "nginx-https": "nginx terminating TLS, reverse proxy to Go net/http over TCP",
    "nginx-https-unix": "nginx terminating TLS, reverse proxy to Go net/http over a Unix socket",
    "go-https-new": "go-https with a new connection per request (Connection: close): every request a TLS handshake",
    "nginx-https-new": "nginx-https with a new connection per request: every request a TLS handshake at nginx",
    "nginx-https-unix-new": "nginx-https-unix with a new connection per request: every request a TLS handshake at nginx",
}
SETUPS = tuple(SETUP_DESCRIPTIONS)[:4]
NGINX_SETUPS = ("nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-http-unix")
TLS_BASELINE = "go-https"  # the TLS setups divide by it; it divides by go-http
TLS_SETUPS = ("go-https", "nginx-https", "nginx-https-unix", "go-https-new", "nginx-https-new", "nginx-https-unix-new")
NEW_CONNECTION_SETUPS = ("go-https-new", "nginx-https-new", "nginx-https-unix-new")  # a TLS handshake per request
# What a setup's ratios divide by when not go-http: nginx's TLS over Go's crypto/tls in the
# same connection mode; go-https-new over go-https (what a handshake per request costs Go).
# As the driver's wrkreport.bench.setups.BASELINES.
BASELINES = {
    "nginx-https": TLS_BASELINE,
    "nginx-https-unix": TLS_BASELINE,
    "go-https-new": TLS_BASELINE,
    "nginx-https-new": "go-https-new",
    "nginx-https-unix-new": "go-https-new",
}


# A --variant twin (issue 20): the nginx setup ORIGINAL measured through the variant's own
# nginx, named ORIGINAL~NAME (as wrkreport.bench.setups.TWIN_ID: NAME a short lowercase word).
TWIN = re.compile(r"(?P<original>[A-Za-z0-9][A-Za-z0-9_-]{0,63})~(?P<variant>[a-z][a-z0-9]{0,15})")


def split_twin(setup: str) -> tuple[str, str | None]:
    """Return (original, variant) of a twin's id, (setup, None) for any other: 'nginx-http~nokeep' -> ('nginx-http', 'nokeep')."""
    match = TWIN.fullmatch(setup)
    return (match["original"], match["variant"]) if match else (setup, None)


def setup_description(setup: str) -> str:
    """Return what a setup is ('' when unknown); a twin: 'nginx-http served by the --variant nokeep nginx'."""
    original, variant = split_twin(setup)
    if variant:
        return f"{original} served by the --variant {variant} nginx (its twin, measured in the same rounds)"
    return SETUP_DESCRIPTIONS.get(setup, "")


def baseline_of(setup: str) -> str:
    """Return the setup a setup's ratios divide by: 'nginx-https' -> 'go-https', 'nginx-https-new' -> 'go-https-new'; others (go-https too) -> 'go-http'; a twin: its original's."""
    return BASELINES.get(split_twin(setup)[0], BASELINE)


def setup_order(setup: str) -> float:
    """Return a setup's position for display: known setups in their order, a twin just after its original, others after."""
    known = list(SETUP_DESCRIPTIONS)
    original, variant = split_twin(setup)
    place = known.index(original) if original in known else len(known)
    return place + 0.5 if variant else place


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
