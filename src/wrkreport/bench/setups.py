"""What the driver measures and with what: the setups, ports, profiles, parameters, limits and UsageError."""

from __future__ import annotations

import re
from dataclasses import dataclass



SCHEMA = 1


PROG = "run_bench.sh"


LOOPBACK = "127.0.0.1"


EXPECT_HEADER_BYTES = 141  # the article's `curl -sI URL | wc -c` (see docs/raw-format.md)


HELLO_LINE = "Hello World\n"  # the article's body; --body-bytes repeats or cuts it


MAX_BODY_BYTES = 1 << 20  # as the Go servers' -body-bytes bound


MAX_HANDLER_DELAY_NS = 60 * 10**9


RUN_ID_FORMAT = "%Y%m%dT%H%M%SZ"


TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


NO = 3  # exit status of a "no" answer (busy port, unusable cell, missing nginx module)


@dataclass(frozen=True)
class Setup:
    """One measured setup: who answers wrk, on which default port, and what it depends on."""

    id: str
    server: str  # the process the load generator talks to: "go" (gohello), "nginx", "fasthttp" (gofasthttp) or "node" (nodehello)
    default_port: int
    nginx_modules: tuple[str, ...] = ()  # modules this setup's server block uses
    needs: tuple[str, ...] = ("go",)  # processes that must run for it to answer
    default: bool = True  # measured without --setups (the article's four)
    tls: bool = False  # speaks TLS (https): selected by --setups tls, with go-http
    # A new connection per request (wrk sends "Connection: close"): the same server, port and
    # nginx server block as `serves`, loaded otherwise. The TLS ones measure handshakes.
    new_connection: bool = False
    serves: str | None = None  # the setup whose server answers it (its port, its nginx block); None: itself

    @property
    def served_by(self) -> str:
        """Return the setup whose server, port and nginx server block this one uses: 'nginx-https-new' -> 'nginx-https'."""
        return self.serves or self.id

    @property
    def baseline(self) -> str:
        """Return the setup this one's ratios divide by (BASELINES; go-http for every other; a twin: its original's)."""
        return BASELINES.get(split_twin(self.id)[0], "go-http")

    @property
    def variant(self) -> str | None:
        """Return the variant this setup is a twin for ('nginx-http~nokeep' -> 'nokeep'), None for a setup of the table."""
        return split_twin(self.id)[1]


# Order = display order. A new setup is a row here, a block in templates/nginx.conf.tmpl
# (for nginx setups) and, for a new backend, a flag of the Go server.
SETUPS: tuple[Setup, ...] = (
    Setup("go-http", "go", 8080),
    Setup("nginx-http", "nginx", 8081, ("http_proxy", "http_upstream_keepalive"), ("nginx", "go")),
    Setup("nginx-fcgi-tcp", "nginx", 8082, ("http_fastcgi", "http_upstream_keepalive"), ("nginx", "go")),
    Setup("nginx-fcgi-unix", "nginx", 8083, ("http_fastcgi", "http_upstream_keepalive"), ("nginx", "go")),
    Setup("nginx-http-unix", "nginx", 8084, ("http_proxy", "http_upstream_keepalive"), ("nginx", "go"), default=False),
    Setup("go-fasthttp", "fasthttp", 8085, (), ("fasthttp",), default=False),
    # `return` is the rewrite module's; a body too long for one nginx token also needs map.
    Setup("nginx-static", "nginx", 8086, ("http_rewrite", "http_map"), ("nginx",), default=False),
    # Node's http module (src/nodehello): one process at GOMAXPROCS=1, a cluster of N workers at N.
    Setup("node-http", "node", 8087, (), ("node",), default=False),
    # TLS termination (issue 22): Go's crypto/tls alone, and nginx's OpenSSL in front of Go
    # net/http on TCP and on a Unix socket. "+http_ssl": a module nginx is only built with on request.
    Setup("go-https", "go", 8443, (), ("go",), default=False, tls=True),
    Setup("nginx-https", "nginx", 8444, ("+http_ssl", "http_proxy", "http_upstream_keepalive"), ("nginx", "go"), default=False, tls=True),
    Setup("nginx-https-unix", "nginx", 8445, ("+http_ssl", "http_proxy", "http_upstream_keepalive"), ("nginx", "go"), default=False, tls=True),
    # The same three with a new connection per request: every request a TLS handshake.
    Setup("go-https-new", "go", 8443, (), ("go",), default=False, tls=True, new_connection=True, serves="go-https"),
    Setup("nginx-https-new", "nginx", 8444, ("+http_ssl", "http_proxy", "http_upstream_keepalive"), ("nginx", "go"), default=False, tls=True,
          new_connection=True, serves="nginx-https"),
    Setup("nginx-https-unix-new", "nginx", 8445, ("+http_ssl", "http_proxy", "http_upstream_keepalive"), ("nginx", "go"), default=False, tls=True,
          new_connection=True, serves="nginx-https-unix"),
)


# What each setup's ratios divide by when not go-http: nginx's TLS over Go's crypto/tls in
# the same connection mode; go-https-new over go-https (what a handshake per request costs
# Go); go-https over go-http (what TLS costs Go). As wrkreport.model.BASELINES.
BASELINES = {
    "nginx-https": "go-https",
    "nginx-https-unix": "go-https",
    "go-https-new": "go-https",
    "nginx-https-new": "go-https-new",
    "nginx-https-unix-new": "go-https-new",
}


SETUP_IDS = tuple(s.id for s in SETUPS)


# --variant (issue 20): every nginx setup of a run gets a twin served by the variant's own
# nginx, named ORIGINAL~NAME ('nginx-http~nokeep'): '~' is in no setup id of the table, is
# unreserved in URLs and plain in file names and shell words, and NAME is a short
# lowercase word, so a twin id matches TWIN_ID (and wrkreport.schema.SETUP_NAME) and
# nothing else. The variant's nginx listens on each setup's port + VARIANT_PORT_OFFSET.
TWIN_SEPARATOR = "~"
VARIANT_NAME = re.compile(r"[a-z][a-z0-9]{0,15}")
TWIN_ID = re.compile(r"(?P<original>[a-z0-9-]{1,64})~(?P<variant>[a-z][a-z0-9]{0,15})")
VARIANT_PORT_OFFSET = 100
VARIANT_SERVER = "vnginx"  # the variant's nginx among the servers a pass starts (SERVERS)


def split_twin(setup: str) -> tuple[str, str | None]:
    """Return (original, variant) of a twin id, (setup, None) for any other: 'nginx-http~nokeep' -> ('nginx-http', 'nokeep')."""
    match = TWIN_ID.fullmatch(setup)
    return (match["original"], match["variant"]) if match else (setup, None)


def twin_id(setup: str, variant: str) -> str:
    """Return the id of a setup's twin for a variant: ('nginx-http', 'nokeep') -> 'nginx-http~nokeep'."""
    return f"{setup}{TWIN_SEPARATOR}{variant}"


def twin_of(original: Setup, variant: str) -> Setup:
    """Return the twin of an nginx setup for a variant: the same server block, served by the variant's nginx on port + offset."""
    return Setup(
        twin_id(original.id, variant),
        VARIANT_SERVER,
        original.default_port + VARIANT_PORT_OFFSET,
        original.nginx_modules,
        tuple(VARIANT_SERVER if need == "nginx" else need for need in original.needs),
        default=False,
        tls=original.tls,
        new_connection=original.new_connection,
        serves=twin_id(original.serves, variant) if original.serves else None,
    )


class SetupTable(dict):
    """The setups by id: those of SETUPS, and the twin of any nginx setup for any well-formed variant name, made on demand."""

    def twin(self, key) -> Setup | None:
        """Return the twin key names, None when key is not a twin of an nginx setup."""
        original, variant = split_twin(key) if isinstance(key, str) else (key, None)
        known = dict.get(self, original)
        return twin_of(known, variant) if variant and known is not None and known.server == "nginx" else None

    def __missing__(self, key):
        found = self.twin(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or self.twin(key) is not None

    def get(self, key, default=None):
        """Return the setup of key (a twin too), default when there is none."""
        return self[key] if key in self else default


SETUP_BY_ID = SetupTable((s.id, s) for s in SETUPS)


DEFAULT_SETUP_IDS = tuple(s.id for s in SETUPS if s.default)


def baseline_of(setup: str) -> str:
    """Return what a setup's ratios divide by: 'nginx-https' -> 'go-https', 'go-https' -> 'go-http' (unknown setups: go-http)."""
    known = SETUP_BY_ID.get(setup)
    return known.baseline if known else "go-http"


ALL_SETUPS = "all"  # --setups all: every setup in the table but the TLS ones (those need openssl: --setups all,tls)


TLS_GROUP = "tls"  # --setups tls: go-http and every TLS setup


TLS_BASELINE = "go-https"  # what the TLS setups divide by (itself divided by go-http)


TLS_SETUP_IDS = tuple(s.id for s in SETUPS if s.tls)


PLAIN_SETUP_IDS = tuple(s.id for s in SETUPS if not s.tls)  # what --setups all selects


# --tls-key: the key types of the run's one certificate (openssl req -newkey arguments).
TLS_KEYS = {"ecdsa-p256": ("ec", "-pkeyopt", "ec_paramgen_curve:P-256"), "rsa2048": ("rsa:2048",)}
TLS_VERSIONS = ("1.3", "1.2")
# The one cipher suite both servers use (OpenSSL's names, as the handshake probe reports them):
# TLS 1.3 by version, TLS 1.2 by version and key type.
TLS_CIPHERS = {
    ("1.3", "ecdsa-p256"): "TLS_AES_128_GCM_SHA256",
    ("1.3", "rsa2048"): "TLS_AES_128_GCM_SHA256",
    ("1.2", "ecdsa-p256"): "ECDHE-ECDSA-AES128-GCM-SHA256",
    ("1.2", "rsa2048"): "ECDHE-RSA-AES128-GCM-SHA256",
}
TLS_GROUP_NAME = "X25519"  # the one key exchange group both servers offer
ENV_TLS_KEY, ENV_TLS_VERSION, ENV_TLS_RESUMPTION, ENV_CONNECTION_PER_REQUEST = (
    "BENCH_TLS_KEY",
    "BENCH_TLS_VERSION",
    "BENCH_TLS_RESUMPTION",
    "BENCH_CONNECTION_PER_REQUEST",
)


# Ports the Go server always binds besides go-http's (which nginx-http proxies to).
BACKEND_PORTS = {"go-fcgi-tcp": 9001}


DEFAULT_PORTS = {**{s.id: s.default_port for s in SETUPS if s.serves is None}, **BACKEND_PORTS}  # a new-connection setup has its server's


# Processes whose CPU time each measurement records (docs/raw-format.md, the .cpu.json).
CPU_PROCESSES = ("go", "fasthttp", "node", "nginx", "wrk")  # "wrk": the load generator, wrk or ab


# The servers a pass may start, in start order (each started only when a chosen setup needs it).
SERVERS = ("go", "nginx", "fasthttp", "node", VARIANT_SERVER)  # VARIANT_SERVER: the --variant nginx


# --load-generator: what loads each setup. ab (ApacheBench) is single-threaded and stops at
# -t seconds or -n requests, whichever comes first: -n is sized so the time limit always
# comes first (AB_MAX_REQUESTS_PER_S per second of the measurement), and ab allocates its
# per-request statistics for -n up front, so it is not made larger than needed.
LOAD_GENERATORS = ("wrk", "ab")
ENV_LOAD_GENERATOR = "BENCH_LOAD_GENERATOR"
AB_MAX_REQUESTS_PER_S = 500_000
AB_MAX_CONCURRENCY = 20_000  # ab's own limit on -c (MAX_CONCURRENCY in ab.c)
RAW_SUFFIX = {"wrk": ".wrk.txt", "ab": ".ab.txt"}


PROFILES: dict[str, dict[str, int | None]] = {
    # The block design: 1 s measurements, 3 rounds per server start (block), blocks until
    # every ratio's interval is within --precision or --max-time is near (repeats and
    # blocks None: decided by the stopping rule, at least stats.MIN_BLOCKS per GOMAXPROCS).
    "default": {"threads": 2, "connections": 100, "duration_s": 1, "repeats": None, "warmup_s": 1, "wrk_timeout_s": 2, "rounds_per_block": 3, "blocks": None},
    # A smoke test: every cell once, 1 s each, one block; well under a minute, no interval claims.
    "quick": {"threads": 2, "connections": 100, "duration_s": 1, "repeats": None, "warmup_s": 1, "wrk_timeout_s": 2, "rounds_per_block": 1, "blocks": 1},
    # The article's load: wrk -t100 -c5000 -d30s, one run per cell (one block).
    "article": {"threads": 100, "connections": 5000, "duration_s": 30, "repeats": None, "warmup_s": 5, "wrk_timeout_s": 2, "rounds_per_block": 1, "blocks": 1},
}


DEFAULT_MAX_TIME_S = {"default": 420}  # 7 minutes in all: the throughput blocks get what the fixed-rate phase leaves  # --max-time of the profiles with a stopping rule


# The fixed-rate phase (issue 21, bench/fixed_rate.py): per profile, its blocks per GOMAXPROCS
# (one round each: every setup once per rate in a shuffled order), the seconds of one
# measurement and of its vegeta warm-up, and the rates without --rates, as shares of the
# slowest setup's measured req/s at that GOMAXPROCS. 0 blocks: no phase unless --rates.
# The default phase takes ~1m50s of the default run's --max-time (bench/plan.rate_phase_seconds).
# The default share is a quarter of the slowest setup's closed-loop req/s: at half, on a
# 2-core machine where vegeta takes its own share of the CPU, FastCGI fell behind the rate
# in 5 of 8 measurements at GOMAXPROCS=1 of a default run (12,000 of its 23,143 req/s), so
# the report had no added latency for it. A quarter is also nearer the load a service runs at.
DEFAULT_RATE_SHARES = [0.25]
RATE_PHASE: dict[str, dict] = {
    "default": {"rate_blocks": 4, "rate_duration_s": 2, "rate_warmup_s": 0.5, "rate_shares": DEFAULT_RATE_SHARES},
    "quick": {"rate_blocks": 1, "rate_duration_s": 1, "rate_warmup_s": 0.5, "rate_shares": DEFAULT_RATE_SHARES},
    "article": {"rate_blocks": 0, "rate_duration_s": 5, "rate_warmup_s": 1, "rate_shares": DEFAULT_RATE_SHARES},
}
ENV_RATES = "BENCH_RATES"
MAX_RATE = 10_000_000  # req/s; the file name's .rate-<R> takes at most 9 digits
RATE_OVERHEAD_S = 0.4  # per fixed-rate measurement: vegeta's start and encoding its results


# Ceilings. The file names carry GOMAXPROCS, the connection level and the repeat, and the
# reader (wrkreport.run_files.WRK_FILE) takes at most 4, 7 and 4 digits of them.
MAX_GOMAXPROCS = 9999
MAX_CONNECTIONS = 9_999_999
MAX_REPEATS = 9999
MAX_THREADS = 100_000
MAX_SECONDS = 86_400  # a day per measurement, warm-up or wrk timeout
MAX_PORT = 65535
MAX_SEED = 2**64 - 1
MAX_CPU = 65535  # above any kernel's CPU numbers: a CPU list is checked before it is expanded
MAX_WHOLE = 2**63 - 1  # any other whole number


@dataclass(frozen=True)
class Param:
    """One numeric run parameter: its manifest key, option, environment variable, floor and ceiling."""

    key: str
    option: str
    env: str
    minimum: int
    maximum: int
    seconds: bool = False  # accepts a trailing "s"


# Profile-dependent parameters. --connections also takes a list (the sweep): see
# connections_levels; its profile value is one level.
PARAMS: tuple[Param, ...] = (
    Param("threads", "--threads", "BENCH_THREADS", 1, MAX_THREADS),
    Param("connections", "--connections", "BENCH_CONNECTIONS", 1, MAX_CONNECTIONS),
    Param("duration_s", "--duration", "BENCH_DURATION", 1, MAX_SECONDS, seconds=True),
    Param("repeats", "--repeats", "BENCH_REPEATS", 1, MAX_REPEATS),
    Param("warmup_s", "--warmup", "BENCH_WARMUP", 0, MAX_SECONDS, seconds=True),
    Param("wrk_timeout_s", "--timeout", "BENCH_TIMEOUT", 1, MAX_SECONDS, seconds=True),
    Param("rounds_per_block", "--rounds-per-block", "BENCH_ROUNDS_PER_BLOCK", 1, MAX_REPEATS),
    Param("blocks", "--blocks", "BENCH_BLOCKS", 1, MAX_REPEATS),
)


ENV_PRECISION, ENV_MAX_TIME = "BENCH_PRECISION", "BENCH_MAX_TIME"


ENV_PROFILE, ENV_GOMAXPROCS, ENV_SETUPS, ENV_PORTS, ENV_OUT, ENV_SEED = (
    "BENCH_PROFILE",
    "BENCH_GOMAXPROCS",
    "BENCH_SETUPS",
    "BENCH_PORTS",
    "BENCH_OUT",
    "BENCH_SEED",
)


ENV_PIN_CLIENT, ENV_PIN_SERVER, ENV_UPSTREAM_KEEPALIVE, ENV_HANDLER_DELAY, ENV_BODY_BYTES = (
    "BENCH_PIN_CLIENT",
    "BENCH_PIN_SERVER",
    "BENCH_UPSTREAM_KEEPALIVE",
    "BENCH_HANDLER_DELAY",
    "BENCH_BODY_BYTES",
)


# Per-measurement and per-pass overheads used in time estimates (process starts, waits).
MEASUREMENT_OVERHEAD_S = 0.1  # one long-lived helper does the bookkeeping (serve)


PASS_OVERHEAD_S = 2.0


class UsageError(Exception):
    """A bad option or value: shown as `run_bench.sh: message` with exit status 2."""


def url_for(port: int, tls: bool = False) -> str:
    """Return the loopback URL wrk and curl use for a setup's port (https for a TLS setup)."""
    return f"{'https' if tls else 'http'}://{LOOPBACK}:{port}/"


def body_text(size: int) -> str:
    """Return the response body of `size` bytes: repeated 'Hello World\\n', cut to size (as the Go servers)."""
    return (HELLO_LINE * (size // len(HELLO_LINE) + 1))[:size]


def expect_header_bytes(body_bytes: int) -> int:
    """Return the HEAD header block size for a body size: 141 for 12 bytes, 143 for 4096.

    Only the Content-Length value changes with the body: 'Content-Length: 12' has two digits.
    """
    return EXPECT_HEADER_BYTES - len(str(len(HELLO_LINE))) + len(str(body_bytes))
