"""Profiles and limits: what the driver measures with -- the profiles, the fixed-rate phase, run parameters and their ceilings, the environment variables, and the response the servers give. The setups are the table in core/setups.py."""

from __future__ import annotations

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


# --load-generator: what loads each setup. ab (ApacheBench) is single-threaded and stops at
# -t seconds or -n requests, whichever comes first: -n is sized so the time limit always
# comes first (AB_MAX_REQUESTS_PER_S per second of the measurement), and ab allocates its
# per-request statistics for -n up front, so it is not made larger than needed.
LOAD_GENERATORS = ("wrk", "ab", "h2load")  # h2load (nghttp2): the h2 setups' (wrk speaks no HTTP/2)
ENV_LOAD_GENERATOR = "BENCH_LOAD_GENERATOR"
AB_MAX_REQUESTS_PER_S = 500_000
AB_MAX_CONCURRENCY = 20_000  # ab's own limit on -c (MAX_CONCURRENCY in ab.c)
RAW_SUFFIX = {"wrk": ".wrk.txt", "ab": ".ab.txt", "h2load": ".h2load.txt"}


PROFILES: dict[str, dict[str, int | None]] = {
    # The block design: 1 s measurements, 3 rounds per server start (block), blocks until
    # every ratio's interval is within --precision or --max-time is near (repeats and
    # blocks None: decided by the stopping rule, at least stats.MIN_BLOCKS per GOMAXPROCS).
    "default": {
        "threads": 2,
        "connections": 100,
        "duration_s": 1,
        "repeats": None,
        "warmup_s": 1,
        "wrk_timeout_s": 2,
        "rounds_per_block": 3,
        "blocks": None,
    },
    # A smoke test: every cell once, 1 s each, one block, no interval claims (1m09s with the build, the fixed-rate phase included).
    "quick": {
        "threads": 2,
        "connections": 100,
        "duration_s": 1,
        "repeats": None,
        "warmup_s": 1,
        "wrk_timeout_s": 2,
        "rounds_per_block": 1,
        "blocks": 1,
    },
    # The article's load: wrk -t100 -c5000 -d30s, one run per cell (one block).
    "article": {
        "threads": 100,
        "connections": 5000,
        "duration_s": 30,
        "repeats": None,
        "warmup_s": 5,
        "wrk_timeout_s": 2,
        "rounds_per_block": 1,
        "blocks": 1,
    },
}


# --max-time of the profiles with a stopping rule, when not given: the time the precision
# targets are expected to need here (parameters.plan: the throughput blocks a verdict is
# expected to take, or the precision rule's least, and the fixed-rate phase at RATE_PHASE's
# rate_blocks_expected), times this, so that a run whose ratios or capacities scatter more
# still meets its targets; a run stops as soon as both are met. No floor: a run that is
# decided early is not held back (the 460 s floor went with the verdict rule). Never below DEFAULT_MAX_TIME_FLOOR_S.
DEFAULT_MAX_TIME_FACTOR = 1.25
# The verdict rule's target (no --precision given): the cheapest connection's throughput and CPU-cost ratios within +/-10%,
# enough to say what it costs in µs; the other ratios keep the precision they reached.
VERDICT_PRECISION_PCT = 10.0
# The throughput blocks per GOMAXPROCS value a verdict is expected to take, for the plan's time (at least the first look's):
# 5 and 5 in the default run of 2026-12-07 on the 2-core machine (AMD EPYC), decided at the first look and one block of the
# cheapest connection alone for its +/-10%.
VERDICT_BLOCKS_EXPECTED = 5


# The fixed-rate phase (bench/fixed_rate.py): per profile, its blocks per GOMAXPROCS
# (one round each: every setup once per rate in a shuffled order), the seconds of one
# measurement and of its vegeta warm-up, and the rates without --rates, as shares of the
# slowest setup's measured req/s at that GOMAXPROCS. 0 blocks: no phase unless --rates.
# The default phase (the light-load point and the capacity search) takes ~5 min of the default
# run's --max-time (rate_options.rate_phase_seconds): 4 blocks of 1-s measurements. The capacity
# intervals need them: in the coverage test's model (tests/test_core_capacity_coverage.py)
# the ladder's median half-width is +/-18-24% at 3 blocks (t(0.975, 2) = 4.30), +/-12-15% at 4
# (3.18); a ratio's +/-27-30% and +/-17-18%. It was 3 blocks with a bisection in each, and 4
# blocks of 2 s for the light-load point alone before the search.
# The default share is a quarter of the slowest setup's closed-loop req/s: at half, on a
# 2-core machine where vegeta takes its own share of the CPU, FastCGI fell behind the rate
# in 5 of 8 measurements at GOMAXPROCS=1 of a default run (12,000 of its 23,143 req/s), so
# the report had no added latency for it. A quarter is also nearer the load a service runs at.
DEFAULT_RATE_SHARES = [0.25]
# search_steps: a first block's bisection steps per setup at most (capacity.MAX_STEPS by
# default). --quick is a smoke test: 2 steps show the search and the check work (a bracket or
# a bound); the 4-6 a bracket within capacity.RESOLUTION needs took 23 of its 55 measurements.
# rate_blocks is the phase's least blocks per GOMAXPROCS; with the stopping rule (the default
# profile without --blocks) more follow, up to rate_blocks_max, while a capacity or capacity
# ratio's interval is wider than --capacity-precision (bench/capacity_rule.py) and --max-time
# allows; rate_blocks_expected is what the run's plan counts on. Three default runs of
# 2026-11-28 (4 blocks) had capacity half-widths of +/-3% to +/-35% and ratio half-widths of
# +/-3% to +/-31%: at their per-block spread t(b-1) * sd / sqrt(b) reaches +/-15% at 6 blocks
# for a 4-block +/-20% and at 7 for +/-25% (stopping_rule.blocks_for).
# check_duration_s, check_tries: the capacity check after the last block's search (Nighthawk's
# testing stage) is a longer attack than a search step, and one that misses the objective is
# measured again at capacity_check.CHECK_STEP (0.9) of its rate, check_tries in all. The search's
# capacity is where a typical second meets the objective, and a 1-s step cannot see a backlog
# that builds over seconds. Go alone at GOMAXPROCS=1 on the 2-core machine (2026-11-29, 20-s
# attacks from 127.0.0.2 as the driver's, one start) kept p99 within 10 ms in 19 of 19 seconds
# at 30,000 req/s, 17 of 19 at 34,000 (p99 of all its requests 8.1 ms), 11 of 19 at 38,000
# (35.7 ms) and none at 42,000 (a backlog, 29 ms in its first second, 1.3 s by its 19th), where
# a 1-s search of the same setting put its capacity at about 38,000. A 5-s check there shows
# what an SLO window would; 0.9 of it is where most seconds met the objective. Since 2026-12-07 a
# check lasts 10 s and is judged second by second (core/capacity_check.py, check_share): met when
# the objective held in at least 8 of its 10 seconds, so the rate a check held is one that held
# in about 9 seconds of 10 (the 5-s check judged the whole attack's p99, which one slow second
# could fail and a backlog's early seconds could pass).
# rate_blocks_max is 12: a setup whose block capacities scatter as HAProxy's FastCGI did
# (CAPACITY_SPREAD) needs 11 blocks for +/-15%; at 8 the FastCGI run of 2026-11-29 stopped at
# +/-15.0% and +/-17.9%. The optional stopping up to 12 keeps the coverage
# (tests/test_core_capacity_coverage.py, a setup with that spread).
RATE_PHASE: dict[str, dict] = {
    "default": {
        "rate_blocks": 4,
        "rate_blocks_max": 12,
        "rate_blocks_expected": 6,
        "rate_duration_s": 1,
        "rate_warmup_s": 0.5,
        "rate_shares": DEFAULT_RATE_SHARES,
        "search_steps": 6,
        "check_duration_s": 10,
        "check_tries": 3,
        "check_share": 0.9,  # core/capacity_check.py: a check is met when the objective held in 8 of its 10 seconds
    },
    "quick": {
        "rate_blocks": 1,
        "rate_blocks_max": 1,
        "rate_blocks_expected": 1,
        "rate_duration_s": 1,
        "rate_warmup_s": 0.5,
        "rate_shares": DEFAULT_RATE_SHARES,
        "search_steps": 2,
        "check_duration_s": 1,
        "check_tries": 1,
        "check_share": 0.9,  # core/capacity_check.py: a 1-s check is met when its one second held the objective
    },
    "article": {
        "rate_blocks": 0,
        "rate_blocks_max": 0,
        "rate_blocks_expected": 0,
        "rate_duration_s": 5,
        "rate_warmup_s": 1,
        "rate_shares": DEFAULT_RATE_SHARES,
        "search_steps": 6,
        "check_duration_s": 10,
        "check_tries": 3,
        "check_share": 0.9,  # core/capacity_check.py: a check is met when the objective held in 8 of its 10 seconds
    },
}
# The spread of a setup's block capacities: the standard deviation over blocks of the log of
# its capacity, or of its capacity ratio to its baseline (paired by block) where that is
# larger, measured on the 2-core machine at GOMAXPROCS 1 and 2 (the larger). A plan counts
# on the blocks the most scattered of its setups needs for --capacity-precision
# (rate_options.expected_rate_blocks): the default four scattered by 0.02-0.19 over eight
# default runs (median 0.07), and DEFAULT_CAPACITY_SPREAD is what rate_blocks_expected (6)
# allows; the others were measured wider: the front ends in the runs of 2026-11-29 and 30 with
# them in the script's session (a --setups front-ends run, 6 fixed-rate blocks, and one of every
# FastCGI setup, 11-12; before, each in an autogroup of its own, they scattered less: 0.119-0.197),
# the h2 setups in the --setups h2 runs of 2026-11-28 (8 blocks); the HTTP proxies pooled over the
# runs that had them (caddy-http 0.315 over 6 blocks, 0.173 and 0.214 over 12; apache-http 0.186
# and 0.132; haproxy-http 0.116 and 0.182: one run's sd over 6 blocks is uncertain by about +/-30%).
# nginx-http scattered by 0.148-0.151 in those runs, beside four front ends; it stays out, as in
# the default runs it scatters less. benchmarks/capacity_spread.py prints these figures, pooled.
DEFAULT_CAPACITY_SPREAD = 0.115
CAPACITY_SPREAD: dict[str, float] = {
    "haproxy-fcgi-tcp": 0.217,
    "haproxy-fcgi-unix": 0.310,
    "haproxy-http": 0.164,
    "caddy-http": 0.221,
    "caddy-fcgi-tcp": 0.204,
    "caddy-fcgi-unix": 0.208,
    "apache-http": 0.151,
    "apache-fcgi-tcp": 0.199,
    "apache-fcgi-unix": 0.220,
    "go-h2": 0.144,
    "nginx-h2": 0.213,
    "nginx-h2-unix": 0.148,
}
# Capacity checks per setup and GOMAXPROCS a plan counts on when it may take more than one. Judged by their seconds (8 of 10
# within), the first check at the capacity (the rate a typical second meets the objective) mostly misses: in two --slo runs
# of 2026-12-07 (2-core machine) 13 of 16 first checks held 0-7 of their 10 seconds, and of the 12 setups whose checks ended
# with one met, 9 met it lower (0.9 or 0.81 of the rate); 1.5 (the 5-s checks' count) left no time for the first run's
# GOMAXPROCS=2 lower checks before --max-time.
CHECKS_EXPECTED = 2.0
ENV_RATES = "BENCH_RATES"
ENV_SLO = "BENCH_SLO"
ENV_CAPACITY_PRECISION = "BENCH_CAPACITY_PRECISION"
CAPACITY_PRECISION_PCT = 15.0  # --capacity-precision's default: every capacity and capacity ratio within +/-15%
# The capacity search's measurements per setup and block, for the phase's time estimate: three
# default runs on 2026-11-28 made 4.3 on average (a bisection's 4-5 in a setup's first block,
# the ladder's 4 and an edge now and then after it); their phases took 247 s where 5 said 315.
SEARCH_STEPS_EXPECTED = 4
MAX_RATE = 10_000_000  # req/s; the file name's .rate-<R> takes at most 9 digits
RATE_OVERHEAD_S = 0.4  # per fixed-rate measurement: vegeta's start and encoding its results


# Ceilings. The file names carry GOMAXPROCS, the connection level and the repeat, and the
# reader (wrkreport.runs.sidecars.WRK_FILE) takes at most 4, 7 and 4 digits of them.
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
ENV_READY_TIMEOUT = "BENCH_READY_TIMEOUT"
# How long a server (Go, nginx, an --app) may take to answer after its start: 10 s by default,
# as before the option; --ready-timeout sets it, for an app that starts slower (a JVM) or a test
# of one that never answers (which need not wait 10 s to see it refused).
READY_TIMEOUT_S, MAX_READY_TIMEOUT_S = 10, 3_600


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
