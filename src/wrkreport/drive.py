"""Drive: run_bench.sh's helpers -- plan, manifest, nginx config, ports, sysctl, CPU, progress.

The shell script orchestrates processes; everything with JSON, arithmetic or text in it
lives here. Standard library only (plus `wrkreport.parse`, itself stdlib-only), so that
`PYTHONPATH=src python3 -m wrkreport.drive <subcommand> ...` works before the package is
installed. The raw/ layout and the manifest fields written here: docs/raw-format.md.

Exit statuses: 0 ok; 2 usage error (message on stderr, for the user); 3 "no" answer to a
question the script asked (a busy port, an unusable cell), explained on stdout.
"""

from __future__ import annotations

import argparse
import grp
import json
import os
import platform
import pwd
import random
import re
import secrets
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

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


# --- Tables: setups, backends, profiles, parameters, sysctl --------------------------


@dataclass(frozen=True)
class Setup:
    """One measured setup: who answers wrk, on which default port, and what it depends on."""

    id: str
    server: str  # the process wrk talks to: "go" (gohello), "nginx" or "fasthttp" (gofasthttp)
    default_port: int
    nginx_modules: tuple[str, ...] = ()  # modules this setup's server block uses
    needs: tuple[str, ...] = ("go",)  # processes that must run for it to answer
    default: bool = True  # measured without --setups (the article's four)


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
)
SETUP_IDS = tuple(s.id for s in SETUPS)
SETUP_BY_ID = {s.id: s for s in SETUPS}
DEFAULT_SETUP_IDS = tuple(s.id for s in SETUPS if s.default)
ALL_SETUPS = "all"  # --setups all: every setup in the table
# Ports the Go server always binds besides go-http's (which nginx-http proxies to).
BACKEND_PORTS = {"go-fcgi-tcp": 9001}
DEFAULT_PORTS = {**{s.id: s.default_port for s in SETUPS}, **BACKEND_PORTS}
# Processes whose CPU time each measurement records (docs/raw-format.md, the .cpu.json).
CPU_PROCESSES = ("go", "fasthttp", "nginx", "wrk")

PROFILES: dict[str, dict[str, int]] = {
    # Sized for a small machine: 40 measurements of 6 s on 2 cores take about 5 minutes.
    "default": {"threads": 2, "connections": 100, "duration_s": 6, "repeats": 5, "warmup_s": 2, "wrk_timeout_s": 2},
    # Every cell once, 2 s each: the whole matrix in well under a minute (tests, CI).
    "quick": {"threads": 2, "connections": 100, "duration_s": 2, "repeats": 1, "warmup_s": 1, "wrk_timeout_s": 2},
    # The article's load: wrk -t100 -c5000 -d30s, one run per cell.
    "article": {"threads": 100, "connections": 5000, "duration_s": 30, "repeats": 1, "warmup_s": 5, "wrk_timeout_s": 2},
}


@dataclass(frozen=True)
class Param:
    """One numeric run parameter: its manifest key, option, environment variable and floor."""

    key: str
    option: str
    env: str
    minimum: int
    seconds: bool = False  # accepts a trailing "s"


# Profile-dependent parameters. --connections also takes a list (the sweep): see
# connections_levels; its profile value is one level.
PARAMS: tuple[Param, ...] = (
    Param("threads", "--threads", "BENCH_THREADS", 1),
    Param("connections", "--connections", "BENCH_CONNECTIONS", 1),
    Param("duration_s", "--duration", "BENCH_DURATION", 1, seconds=True),
    Param("repeats", "--repeats", "BENCH_REPEATS", 1),
    Param("warmup_s", "--warmup", "BENCH_WARMUP", 0, seconds=True),
    Param("wrk_timeout_s", "--timeout", "BENCH_TIMEOUT", 1, seconds=True),
)
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

# The article's kernel settings, in its order. How --tune treats each:
#   "set"    write the article's value;
#   "raise"  a capacity limit: write it only when the current value is lower, never lower it
#            (a current kernel's fs.file-max default, 2^63-1, is far above the article's);
#   "skip"   not a performance setting: left alone (turning ip_forward off would cut off
#            containers and VMs routed through this machine).
ARTICLE_SYSCTL: tuple[tuple[str, str, str], ...] = (
    ("fs.file-max", "9999999", "raise"),
    ("fs.nr_open", "9999999", "raise"),
    ("net.core.netdev_max_backlog", "4096", "raise"),
    ("net.core.rmem_max", "16777216", "raise"),
    ("net.core.somaxconn", "65535", "raise"),
    ("net.core.wmem_max", "16777216", "raise"),
    ("net.ipv4.ip_forward", "0", "skip"),
    ("net.ipv4.ip_local_port_range", "1025 65535", "set"),
    ("net.ipv4.tcp_fin_timeout", "30", "set"),
    ("net.ipv4.tcp_keepalive_time", "30", "set"),
    ("net.ipv4.tcp_max_syn_backlog", "20480", "raise"),
    ("net.ipv4.tcp_max_tw_buckets", "400000", "raise"),
    ("net.ipv4.tcp_no_metrics_save", "1", "set"),
    ("net.ipv4.tcp_syn_retries", "2", "set"),
    ("net.ipv4.tcp_synack_retries", "2", "set"),
    ("net.ipv4.tcp_tw_recycle", "1", "set"),
    ("net.ipv4.tcp_tw_reuse", "1", "set"),
    ("vm.min_free_kbytes", "65536", "set"),
    ("vm.overcommit_memory", "1", "set"),
)

# Per-measurement and per-pass overheads used in time estimates (process starts, waits).
MEASUREMENT_OVERHEAD_S = 0.4
PASS_OVERHEAD_S = 2.0


class UsageError(Exception):
    """A bad option or value: shown as `run_bench.sh: message` with exit status 2."""


# --- Small pure helpers ---------------------------------------------------------------


def utc_now() -> datetime:
    """Return the current time in UTC, to the second."""
    return datetime.now(timezone.utc).replace(microsecond=0)


def iso(t: datetime) -> str:
    """Return '2026-11-22T16:47:00Z' for a UTC datetime."""
    return t.strftime(TIME_FORMAT)


def parse_int(text: str, what: str, minimum: int, seconds: bool = False) -> int:
    """Return text as an int >= minimum: '6' -> 6, and with seconds=True also '6s' -> 6."""
    value = text.strip()
    if seconds and value.endswith("s"):
        value = value[:-1]
    if not re.fullmatch(r"[0-9]+", value):
        unit = " (seconds, e.g. 6 or 6s)" if seconds else ""
        raise UsageError(f"{what} must be a whole number{unit}, not {text!r}")
    number = int(value)
    if number < minimum:
        raise UsageError(f"{what} must be at least {minimum}, not {number}")
    return number


def split_list(text: str) -> list[str]:
    """Split '1,2' or '1 2' into ['1', '2']."""
    return [item for item in re.split(r"[,\s]+", text.strip()) if item]


def dedupe(items: list) -> list:
    """Return items without repeats, first occurrence kept."""
    return list(dict.fromkeys(items))


def format_duration(seconds: float) -> str:
    """Return a short duration: 42 -> '42s', 190 -> '3m 10s', 3725 -> '1h 02m'."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


def format_rate(value: float) -> str:
    """Return a rate with thousands separators: 14812.4 -> '14,812'."""
    return f"{round(value):,}"


def url_for(port: int) -> str:
    """Return the loopback URL wrk and curl use for a setup's port."""
    return f"http://{LOOPBACK}:{port}/"


def usable_cpus() -> frozenset[int]:
    """Return the CPUs this process may run on (those `nproc` counts)."""
    try:
        return frozenset(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return frozenset(range(os.cpu_count() or 1))


def cpu_count() -> int:
    """Return how many CPUs this process may run on (what `nproc` prints)."""
    return len(usable_cpus())


CPU_RANGE = re.compile(r"(?P<first>[0-9]+)(?:-(?P<last>[0-9]+))?")


def parse_cpu_list(text: str, what: str) -> list[int]:
    """Return the CPUs of a taskset list, sorted: '0' -> [0], '0-2,5' -> [0, 1, 2, 5]."""
    cpus: set[int] = set()
    items = text.strip().split(",")
    for item in items:
        match = CPU_RANGE.fullmatch(item.strip())
        if not match:
            raise UsageError(f"{what} {text!r} is not a CPU list like 0, 1-3 or 0,2 (as taskset -c takes)")
        first = int(match["first"])
        last = int(match["last"]) if match["last"] is not None else first
        if last < first:
            raise UsageError(f"{what} {text!r}: range {item.strip()} runs backwards")
        cpus.update(range(first, last + 1))
    return sorted(cpus)


def format_cpu_list(cpus: list[int]) -> str:
    """Return the shortest taskset list for sorted CPUs: [0, 1, 2, 5] -> '0-2,5'."""
    parts, start = [], None
    for i, cpu in enumerate(cpus):
        if start is None:
            start = cpu
        if i + 1 == len(cpus) or cpus[i + 1] != cpu + 1:
            parts.append(str(cpu) if cpu == start else f"{start}-{cpu}")
            start = None
    return ",".join(parts)


def pin_list(text: str | None, what: str, available: frozenset[int]) -> list[int]:
    """Return the CPUs of a taskset list after checking each may be used; [] when not given."""
    if text is None or not text.strip():
        return []
    cpus = parse_cpu_list(text, what)
    missing = [cpu for cpu in cpus if cpu not in available]
    if missing:
        raise UsageError(
            f"{what} {text}: CPU {format_cpu_list(missing)} is not available here "
            f"(this machine lets the benchmark use CPU {format_cpu_list(sorted(available))})"
        )
    return cpus


DURATION = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]+)?)(?P<unit>ns|us|µs|ms|s)")
DURATION_UNITS_NS = {"ns": 1, "us": 1000, "µs": 1000, "ms": 10**6, "s": 10**9}


def parse_duration_ns(text: str, what: str) -> int:
    """Return a Go-style duration in nanoseconds: '1ms' -> 1000000, '500us' -> 500000, '0' -> 0."""
    value = text.strip()
    if value == "0":
        return 0
    match = DURATION.fullmatch(value)
    if not match:
        raise UsageError(f"{what} must be a duration like 1ms, 500us or 0, not {text!r}")
    ns = round(float(match["number"]) * DURATION_UNITS_NS[match["unit"]])
    if ns > MAX_HANDLER_DELAY_NS:
        raise UsageError(f"{what} {text} is longer than {MAX_HANDLER_DELAY_NS // 10**9}s")
    return ns


SWITCH_WORDS = {"1": True, "on": True, "yes": True, "true": True, "0": False, "off": False, "no": False, "false": False}


def parse_switch(text: str, what: str) -> bool:
    """Return an environment switch's value: '1', 'on', 'yes', 'true' -> True; '0', 'off', ... -> False."""
    value = SWITCH_WORDS.get(text.strip().lower())
    if value is None:
        raise UsageError(f"{what} must be 1 or 0 (on/off), not {text!r}")
    return value


def body_text(size: int) -> str:
    """Return the response body of `size` bytes: repeated 'Hello World\\n', cut to size (as the Go servers)."""
    return (HELLO_LINE * (size // len(HELLO_LINE) + 1))[:size]


def expect_header_bytes(body_bytes: int) -> int:
    """Return the HEAD header block size for a body size: 141 for 12 bytes, 143 for 4096.

    Only the Content-Length value changes with the body: 'Content-Length: 12' has two digits.
    """
    return EXPECT_HEADER_BYTES - len(str(len(HELLO_LINE))) + len(str(body_bytes))


# --- plan: options + environment + profile -> validated parameters -------------------


def plan_parser() -> argparse.ArgumentParser:
    """Return the parser of run_bench.sh's options (the script's --help documents them)."""
    p = argparse.ArgumentParser(prog=PROG, add_help=False)
    p.add_argument("--profile", choices=sorted(PROFILES))
    p.add_argument("--quick", action="store_true")
    for param in PARAMS:
        p.add_argument(param.option, dest=param.key)
    p.add_argument("--gomaxprocs")
    p.add_argument("--setups")
    p.add_argument("--port", action="append", default=[])
    p.add_argument("--out")
    p.add_argument("--seed")
    p.add_argument("--tune", action="store_true")
    p.add_argument("--pin-client")
    p.add_argument("--pin-server")
    p.add_argument("--no-upstream-keepalive", action="store_true")
    p.add_argument("--handler-delay")
    p.add_argument("--body-bytes")
    return p


def given_or_env(given: str | None, option: str, env: dict[str, str], name: str) -> tuple[str | None, str]:
    """Return (text, where it came from) of a setting: the option if given, else the variable."""
    if given is not None:
        return given, option
    return env.get(name), name


def build_plan(
    argv: list[str], env: dict[str, str], root: Path, nproc: int, euid: int, cpus: frozenset[int] | None = None
) -> dict:
    """Return the run's parameters from options (first), environment, then profile.

    cpus: the CPUs pinning may name (default: 0 .. nproc-1).
    """
    args = parse_options(argv)
    if args.quick and args.profile not in (None, "quick"):
        raise UsageError(f"--quick and --profile {args.profile} contradict each other")
    profile = "quick" if args.quick else args.profile or env.get(ENV_PROFILE) or "default"
    if profile not in PROFILES:
        raise UsageError(f"{ENV_PROFILE}={profile!r}: choose one of {', '.join(PROFILES)}")
    plan: dict = {"profile": profile, "warnings": []}
    for param in PARAMS:
        text, source = given_or_env(getattr(args, param.key), param.option, env, param.env)
        if text is None:
            plan[param.key] = PROFILES[profile][param.key]
        elif param.key == "connections":
            plan["connections_levels"] = connections_levels(text, source)
        else:
            plan[param.key] = parse_int(text, source, param.minimum, param.seconds)
    levels = plan.setdefault("connections_levels", [plan.get("connections")])
    # One level: the int, as before the sweep; several: no single value.
    plan["connections"] = levels[0] if len(levels) == 1 else None
    if min(levels) < plan["threads"]:
        raise UsageError(f"connections ({min(levels)}) must be >= threads ({plan['threads']}), as wrk requires")
    plan["gomaxprocs"] = gomaxprocs_list(args.gomaxprocs, env, nproc)
    plan["setups"] = setup_list(args.setups, env)
    plan["ports"] = port_map(args.port, env, plan["setups"])
    plan["needed_ports"] = needed_ports(plan["setups"], plan["ports"])
    plan["urls"] = {s: url_for(plan["ports"][s]) for s in plan["setups"]}
    plan.update(knobs(args, env))
    plan["expect_header_bytes"] = expect_header_bytes(plan["body_bytes"])
    available = cpus if cpus is not None else frozenset(range(nproc))
    pinned = {}
    for key, option, name in (("pin_client", "--pin-client", ENV_PIN_CLIENT), ("pin_server", "--pin-server", ENV_PIN_SERVER)):
        text, source = given_or_env(getattr(args, key), option, env, name)
        pinned[key] = pin_list(text, source, available)
        plan[key] = format_cpu_list(pinned[key]) or None  # normalised: '1,0' -> '0-1'
    shared = set(pinned["pin_client"]) & set(pinned["pin_server"])
    if shared:
        plan["warnings"].append(
            f"--pin-client {plan['pin_client']} and --pin-server {plan['pin_server']} share CPU "
            f"{format_cpu_list(sorted(shared))}: wrk and the servers compete there"
        )
    plan["seed"] = parse_int(args.seed or env.get(ENV_SEED) or str(secrets.randbits(32)), "--seed", 0)
    if args.tune and euid != 0:
        raise UsageError("--tune writes kernel settings (sysctl) and needs root")
    plan["tune"] = bool(args.tune)
    out = args.out or env.get(ENV_OUT) or str(root / "raw")
    if "\n" in out:
        raise UsageError("--out must not contain a line break")
    plan["out"] = os.path.abspath(out)
    plan["measurements"] = measurement_count(plan)
    plan["estimate_s"] = round(estimate_seconds(plan, 0, len(plan["gomaxprocs"])))
    # wrk holds one descriptor per connection; nginx one towards the client and one towards
    # Go; the Go server one per connection it serves. Plus room for logs, listeners, epoll.
    plan["needed_fds"] = 2 * max(levels) + 256
    return plan


def connections_levels(text: str, source: str) -> list[int]:
    """Return the connection levels of --connections: '100' -> [100], '10,100,1000' -> [10, 100, 1000]."""
    items = split_list(text)
    what = source if len(items) == 1 else f"{source} value"
    levels = dedupe([parse_int(item, what, 1) for item in items])
    if not levels:
        raise UsageError(f"{source} needs at least one value, e.g. 100 or 10,100,1000")
    return levels


def knobs(args: argparse.Namespace, env: dict[str, str]) -> dict:
    """Return upstream_keepalive, handler_delay_ns, handler_delay_ms and body_bytes."""
    if args.no_upstream_keepalive:
        keepalive = False
    else:
        text = env.get(ENV_UPSTREAM_KEEPALIVE)
        keepalive = True if text is None else parse_switch(text, ENV_UPSTREAM_KEEPALIVE)
    text, source = given_or_env(args.handler_delay, "--handler-delay", env, ENV_HANDLER_DELAY)
    delay_ns = 0 if text is None else parse_duration_ns(text, source)
    text, source = given_or_env(args.body_bytes, "--body-bytes", env, ENV_BODY_BYTES)
    body_bytes = len(HELLO_LINE) if text is None else parse_int(text, source, 1)
    if body_bytes > MAX_BODY_BYTES:
        raise UsageError(f"{source} must be at most {MAX_BODY_BYTES} (1 MiB), not {body_bytes}")
    return {
        "upstream_keepalive": keepalive,
        "handler_delay_ns": delay_ns,
        "handler_delay_ms": delay_ns // 10**6 if delay_ns % 10**6 == 0 else delay_ns / 10**6,
        "body_bytes": body_bytes,
    }


def measurement_count(parameters: dict) -> int:
    """Return how many measurements a run makes: GOMAXPROCS x levels x setups x repeats."""
    return len(parameters["gomaxprocs"]) * len(parameters["connections_levels"]) * len(parameters["setups"]) * parameters["repeats"]


def parse_options(argv: list[str]) -> argparse.Namespace:
    """Parse the options, turning argparse's complaints into UsageError."""
    parser = plan_parser()
    parser.error = lambda message: (_ for _ in ()).throw(UsageError(message))  # type: ignore[method-assign]
    args, extra = parser.parse_known_args(argv)
    if extra:
        raise UsageError(f"unknown option or argument {extra[0]!r}")
    return args


def gomaxprocs_list(given: str | None, env: dict[str, str], nproc: int) -> list[int]:
    """Return the GOMAXPROCS values: option, BENCH_GOMAXPROCS, else 1 and nproc (deduplicated)."""
    text = given if given is not None else env.get(ENV_GOMAXPROCS)
    if text is None:
        return dedupe([1, nproc])
    values = [parse_int(v, "--gomaxprocs value", 1) for v in split_list(text)]
    if not values:
        raise UsageError("--gomaxprocs needs at least one value, e.g. 1,2")
    return dedupe(values)


def setup_list(given: str | None, env: dict[str, str]) -> list[str]:
    """Return the selected setups in table order (option, BENCH_SETUPS, else the article's four).

    'all' selects every setup.
    """
    text = given if given is not None else env.get(ENV_SETUPS)
    if text is None:
        return list(DEFAULT_SETUP_IDS)
    chosen = split_list(text)
    if ALL_SETUPS in chosen:
        return list(SETUP_IDS)
    unknown = [s for s in chosen if s not in SETUP_BY_ID]
    if unknown:
        raise UsageError(f"unknown setup {unknown[0]!r}; choose from {', '.join(SETUP_IDS)} (or {ALL_SETUPS})")
    if not chosen:
        raise UsageError("--setups needs at least one setup")
    return [s for s in SETUP_IDS if s in chosen]


def port_map(given: list[str], env: dict[str, str], setups: list[str] | None = None) -> dict[str, int]:
    """Return the ports by name: defaults, then BENCH_PORTS, then each --port NAME=PORT.

    Kept: the article's four setups and Go's FastCGI port always, other setups when chosen.
    """
    ports = dict(DEFAULT_PORTS)
    items = [(f"{ENV_PORTS}", item) for item in split_list(env.get(ENV_PORTS, ""))]
    items += [("--port", item) for option in given for item in split_list(option)]
    for source, item in items:
        name, sep, number = item.partition("=")
        if not sep or name not in ports:
            raise UsageError(f"{source} {item!r}: expected NAME=PORT with NAME one of {', '.join(ports)}")
        ports[name] = parse_int(number, f"{source} {name}", 1)
        if ports[name] > 65535:
            raise UsageError(f"{source} {name}: port {ports[name]} is above 65535")
    kept = set(DEFAULT_SETUP_IDS) | set(BACKEND_PORTS) | set(setups or ())
    return {name: port for name, port in ports.items() if name in kept}


def needed_ports(setups: list[str], ports: dict[str, int]) -> dict[str, int]:
    """Return the ports this run binds: Go's two TCP ports always, plus each nginx or fasthttp setup's."""
    names = ["go-http", *BACKEND_PORTS, *(s for s in setups if SETUP_BY_ID[s].server != "go")]
    needed = {name: ports[name] for name in names}
    seen: dict[int, str] = {}
    for name, port in needed.items():
        if port in seen:
            raise UsageError(f"{seen[port]} and {name} are both given port {port}")
        seen[port] = name
    return needed


def estimate_seconds(parameters: dict, measurements_done: int, passes_left: int, levels_left: int = 0) -> float:
    """Return the expected time left: remaining measurements, plus the warm-ups not started.

    Warm-ups come before each connection level of a pass: those of the passes_left passes not
    started, and of the levels_left levels still to come in the current pass.
    """
    per_measurement = parameters["duration_s"] + MEASUREMENT_OVERHEAD_S
    per_level = len(parameters["setups"]) * (parameters["warmup_s"] + MEASUREMENT_OVERHEAD_S)
    per_pass = PASS_OVERHEAD_S + len(parameters["connections_levels"]) * per_level
    return (measurement_count(parameters) - measurements_done) * per_measurement + passes_left * per_pass + levels_left * per_level


def plan_lines(plan: dict) -> list[str]:
    """Return the plan as `key value` lines for the script (lists space-separated; unset keys left out)."""
    lines = []
    keys = ("profile", "threads", "duration_s", "repeats", "warmup_s", "wrk_timeout_s", "seed", "measurements", "needed_fds", "body_bytes")
    for key in keys:
        lines.append(f"{key} {plan[key]}")
    lines.append(f"connections {' '.join(map(str, plan['connections_levels']))}")
    lines.append(f"connections_max {max(plan['connections_levels'])}")
    lines.append(f"sweep {int(len(plan['connections_levels']) > 1)}")
    lines.append(f"tune {int(plan['tune'])}")
    lines.append(f"handler_delay {plan['handler_delay_ns']}ns")
    lines.append(f"gomaxprocs {' '.join(map(str, plan['gomaxprocs']))}")
    lines.append(f"setups {' '.join(plan['setups'])}")
    for server in ("nginx", "fasthttp"):
        chosen = [s for s in plan["setups"] if server in SETUP_BY_ID[s].needs]
        if chosen:
            lines.append(f"{server}_setups {' '.join(chosen)}")
    for setup in plan["setups"]:
        lines.append(f"server.{setup} {SETUP_BY_ID[setup].server}")
        lines.append(f"needs.{setup} {' '.join(SETUP_BY_ID[setup].needs)}")
    for key in ("pin_client", "pin_server"):
        if plan[key]:
            lines.append(f"{key} {plan[key]}")
    lines += [f"port.{name} {port}" for name, port in plan["ports"].items()]
    lines += [f"url.{name} {url}" for name, url in plan["urls"].items()]
    lines.append(f"estimate {format_duration(plan['estimate_s'])}")
    lines.append(f"out {plan['out']}")
    return lines


# --- Ports -----------------------------------------------------------------------------


def port_is_free(port: int) -> bool:
    """Return True when a server could listen on 127.0.0.1:port now (as nginx and Go do)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def socket_inodes(port: int, proc: Path = Path("/proc")) -> set[str]:
    """Return the inodes of TCP sockets bound to local port `port` (from /proc/net/tcp{,6})."""
    inodes = set()
    for table in ("tcp", "tcp6"):
        try:
            rows = (proc / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 9 and int(fields[1].rsplit(":", 1)[1], 16) == port and fields[9] != "0":
                inodes.add(fields[9])
    return inodes


def port_owners(port: int, proc: Path = Path("/proc")) -> list[str]:
    """Return 'pid 123 (nginx)' for each process holding a socket on the port, as far as visible."""
    inodes = socket_inodes(port, proc)
    owners = []
    if not inodes:
        return owners
    targets = {f"socket:[{inode}]" for inode in inodes}
    for pid_dir in proc.iterdir():
        if not pid_dir.name.isdigit():
            continue
        if fd_links(pid_dir) & targets:
            owners.append(f"pid {pid_dir.name} ({process_name(pid_dir)})")
    return owners


def fd_links(pid_dir: Path) -> set[str]:
    """Return what a process's open descriptors point at (empty when not visible to us)."""
    links = set()
    try:
        fds = list((pid_dir / "fd").iterdir())
    except OSError:
        return links
    for fd in fds:
        try:
            links.add(os.readlink(fd))
        except OSError:  # closed meanwhile (e.g. the listing's own descriptor)
            continue
    return links


def process_name(pid_dir: Path) -> str:
    """Return a process's command line (or name) for messages."""
    try:
        cmdline = (pid_dir / "cmdline").read_bytes().replace(b"\x00", b" ").decode(errors="replace").strip()
        return cmdline[:80] or (pid_dir / "comm").read_text().strip()
    except OSError:
        return "?"


def busy_port_messages(needed: dict[str, int], proc: Path = Path("/proc")) -> list[str]:
    """Return one message per needed port that is already in use, naming its owner."""
    messages = []
    for name, port in needed.items():
        if port_is_free(port):
            continue
        owners = port_owners(port, proc)
        owner = ", ".join(owners) if owners else "a process this user cannot see (try as root: ss -ltnp)"
        messages.append(f"port {port} ({name}) on {LOOPBACK} is in use by {owner}")
    return messages


# --- Machine, versions, sysctl ---------------------------------------------------------


def machine_info(proc: Path = Path("/proc"), os_release: Path = Path("/etc/os-release")) -> dict:
    """Return CPU model, logical cores, memory, kernel and OS of this machine."""
    cpu_model = None
    try:
        for line in (proc / "cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_bytes = None
    try:
        match = re.search(r"^MemTotal:\s+(\d+) kB", (proc / "meminfo").read_text(), re.M)
        memory_bytes = int(match.group(1)) * 1024 if match else None
    except OSError:
        pass
    os_name = None
    try:
        match = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', os_release.read_text(), re.M)
        os_name = match.group(1) if match else None
    except OSError:
        pass
    return {
        "cpu_model": cpu_model,
        "logical_cores": os.cpu_count(),
        "usable_cores": cpu_count(),
        "memory_bytes": memory_bytes,
        "kernel": platform.release(),
        "os": os_name,
    }


def command_output(argv: list[str]) -> str | None:
    """Return a command's stdout and stderr together, or None when it cannot run."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return (done.stdout + done.stderr).strip()


# Version number patterns, per tool: applied to that tool's version output.
VERSION_PATTERNS = {
    "nginx": re.compile(r"nginx/(\S+)"),
    "go": re.compile(r"\b(go[0-9][^\s]*)"),
    "wrk": re.compile(r"^wrk \S*?([0-9]+\.[0-9]+\.[0-9]+)"),
    "curl": re.compile(r"^curl (\S+)"),
}


def tool_versions(nginx: str | None) -> tuple[dict, dict]:
    """Return (versions, first version lines) of nginx, go, wrk and curl."""
    commands = {"nginx": [nginx, "-v"] if nginx else None, "go": ["go", "version"], "wrk": ["wrk", "-v"], "curl": ["curl", "--version"]}
    versions, raw = {}, {}
    for tool, argv in commands.items():
        text = command_output(argv) if argv else None
        first = text.splitlines()[0] if text else None
        raw[tool] = first
        match = VERSION_PATTERNS[tool].search(first) if first else None
        versions[tool] = match.group(1) if match else None
    return versions, raw


def sysctl_path(key: str, root: Path) -> Path:
    """Return the /proc/sys file of a sysctl key ('net.core.somaxconn' -> .../net/core/somaxconn)."""
    return root / key.replace(".", "/")


def read_sysctl(root: Path = Path("/proc/sys")) -> dict[str, str | None]:
    """Return each of the article's sysctl keys with its current value (None when absent)."""
    values = {}
    for key, _, _ in ARTICLE_SYSCTL:
        try:
            values[key] = " ".join(sysctl_path(key, root).read_text().split())
        except OSError:
            values[key] = None
    return values


def tune_actions(current: dict[str, str | None]) -> list[dict]:
    """Return what --tune does with each article key: its current value, target and decision."""
    actions = []
    for key, target, policy in ARTICLE_SYSCTL:
        now = current.get(key)
        if now is None:
            action = "absent"  # not on this kernel (e.g. tcp_tw_recycle, gone since 4.12)
        elif policy == "skip":
            action = "skip"
        elif now == target:
            action = "same"
        elif policy == "raise" and int(now.split()[0]) >= int(target.split()[0]):
            action = "keep-higher"
        else:
            action = "write"
        actions.append({"key": key, "from": now, "to": target, "action": action})
    return actions


def apply_tune(root: Path, say) -> list[dict]:
    """Write the article's values per tune_actions, announcing each before writing it."""
    actions = tune_actions(read_sysctl(root))
    for item in actions:
        key, old, new = item["key"], item["from"], item["to"]
        if item["action"] == "write":
            say(f"sysctl {key}: {old} -> {new}")
            try:
                sysctl_path(key, root).write_text(new + "\n")
                item["ok"] = True
            except OSError as exc:
                item["ok"] = False
                say(f"sysctl {key}: not changed ({exc.strerror or exc})")
        elif item["action"] == "keep-higher":
            say(f"sysctl {key}: kept at {old} (already above the article's {new})")
        elif item["action"] == "skip":
            say(f"sysctl {key}: left at {old} (the article's {new} is not a performance setting)")
        elif item["action"] == "absent":
            say(f"sysctl {key}: not on this kernel, skipped")
    return actions


# --- Manifest: create, read, update atomically -----------------------------------------


def write_json_atomic(path: Path, data: dict) -> None:
    """Write JSON to path via a temp file and rename, so readers never see half a file."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_manifest(run_dir: Path) -> dict:
    """Return the run's manifest."""
    return json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))


def save_manifest(run_dir: Path, manifest: dict) -> None:
    """Replace the run's manifest atomically."""
    write_json_atomic(run_dir / "manifest.json", manifest)


def create_run_dir(out: Path, started: datetime) -> Path:
    """Create out/<UTC id>, or <id>-2, <id>-3, ... when taken; never reuse a directory."""
    out.mkdir(parents=True, exist_ok=True)
    base = started.strftime(RUN_ID_FORMAT)
    for n in range(1, 1000):
        candidate = out / (base if n == 1 else f"{base}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise RuntimeError(f"{out}: 999 runs named {base}-*, refusing to go on")


def point_latest(out: Path, run_dir: Path) -> str | None:
    """Point out/latest at run_dir (relative symlink, replaced atomically); return a warning or None."""
    latest = out / "latest"
    if latest.exists() and not latest.is_symlink():
        return f"{latest} exists and is not a symlink; left alone"
    tmp = out / f".latest.tmp-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(run_dir.name)
    os.replace(tmp, latest)
    return None


def new_manifest(run_id: str, started: datetime, command: str, plan: dict, nginx: str | None, ulimit_n: int | None, tune: list[dict] | None) -> dict:
    """Return the manifest of a run that is starting (status 'running')."""
    versions, version_lines = tool_versions(nginx)
    parameters = {key: plan[key] for key in ("profile", *(p.key for p in PARAMS))}
    parameters.update(
        connections_levels=plan["connections_levels"],
        gomaxprocs=plan["gomaxprocs"],
        setups=plan["setups"],
        ports=plan["ports"],
        urls=plan["urls"],
        expect_header_bytes=plan["expect_header_bytes"],
        body_bytes=plan["body_bytes"],
        handler_delay_ms=plan["handler_delay_ms"],
        upstream_keepalive=plan["upstream_keepalive"],
        pin_client=plan["pin_client"],
        pin_server=plan["pin_server"],
        tune=plan["tune"],
        seed=plan["seed"],
    )
    return {
        "schema": SCHEMA,
        "run_id": run_id,
        "status": "running",
        "reason": None,
        "started_at": iso(started),
        "ended_at": None,
        "command": command,
        "parameters": parameters,
        "machine": machine_info(),
        "versions": versions,
        "version_lines": version_lines,
        "nginx_V": command_output([nginx, "-V"]) if nginx else None,
        "ulimit_n": ulimit_n,
        "sysctl": read_sysctl(),
        "sysctl_changes": tune,
        "passes": [],
        "measurements": [],
    }


def shuffled_orders(setups: list[str], repeats: int, seed: int, gomaxprocs: int) -> list[list[str]]:
    """Return one shuffled setup order per repeat, reproducible from (seed, GOMAXPROCS)."""
    rng = random.Random(f"{seed}:gomaxprocs-{gomaxprocs}")
    orders = []
    for _ in range(repeats):
        order = list(setups)
        rng.shuffle(order)
        orders.append(order)
    return orders


def find_pass(manifest: dict, gomaxprocs: int) -> dict:
    """Return the pass entry for a GOMAXPROCS value."""
    for entry in manifest["passes"]:
        if entry["gomaxprocs"] == gomaxprocs:
            return entry
    raise KeyError(f"no pass for GOMAXPROCS={gomaxprocs} in the manifest")


def levels_of(parameters: dict) -> list[int]:
    """Return a manifest's connection levels (a manifest from before the sweep has one)."""
    return parameters.get("connections_levels") or [parameters["connections"]]


def new_pass(manifest: dict, gomaxprocs: int) -> dict:
    """Append and return the pass entry for a GOMAXPROCS value, with its shuffled orders.

    The pass runs each connection level in turn and, within it, each repeat: `order` holds
    one shuffled setup order per (level, repeat) in that sequence, `order_connections` the
    level of each. With one level, `order` is one list per repeat, as before the sweep.
    """
    params = manifest["parameters"]
    levels = levels_of(params)
    entry = {
        "gomaxprocs": gomaxprocs,
        "go_reported_gomaxprocs": None,
        "order": shuffled_orders(params["setups"], params["repeats"] * len(levels), params["seed"], gomaxprocs),
        "order_connections": [c for c in levels for _ in range(params["repeats"])],
        "cells": {},
        "pids": {"go": None, "nginx": None, "nginx_workers": [], "fasthttp": None},
        "notes": [],
        "started_at": iso(utc_now()),
        "ended_at": None,
    }
    manifest["passes"].append(entry)
    return entry


GO_READY_LINE = re.compile(r"^gohello: GOMAXPROCS=(?P<n>[0-9]+) .* ready$", re.M)


def go_reported_gomaxprocs(log_text: str) -> int | None:
    """Return the GOMAXPROCS the Go server logged at start ('gohello: GOMAXPROCS=2 ... ready')."""
    match = GO_READY_LINE.search(log_text)
    return int(match.group("n")) if match else None


STATUS_LINE = re.compile(r"HTTP/\S+ (?P<code>[0-9]{3})\b.*")


def cell_from_headers(data: bytes | None, ready: bool, error: str | None) -> dict:
    """Return a cell record from its readiness and captured `curl -sI` bytes (None: not captured)."""
    cell = {"ready": ready, "headers_captured": bool(data), "status_line": None, "header_bytes": None, "error": error}
    if not data:
        if ready and error is None:
            cell["error"] = "no response to curl -sI"
        return cell
    first = data.split(b"\n", 1)[0].rstrip(b"\r").decode("latin-1")
    cell["status_line"] = first
    cell["header_bytes"] = len(data)
    match = STATUS_LINE.fullmatch(first)
    if cell["error"] is None and (match is None or match.group("code") != "200"):
        cell["error"] = f"answered {first!r}, not 200: not measured"
    return cell


def order_index(parameters: dict, connections: int, repeat: int) -> int:
    """Return the index in a pass's `order` of the (connection level, repeat) round."""
    return levels_of(parameters).index(connections) * parameters["repeats"] + repeat - 1


def progress_index(manifest: dict, gomaxprocs: int, connections: int, setup: str, repeat: int) -> tuple[int, int]:
    """Return (1-based position of this measurement in the whole run, total measurements)."""
    params = manifest["parameters"]
    per_round = len(params["setups"])
    per_pass = per_round * params["repeats"] * len(levels_of(params))
    pass_index = params["gomaxprocs"].index(gomaxprocs)
    round_index = order_index(params, connections, repeat)
    order = find_pass(manifest, gomaxprocs)["order"][round_index]
    index = pass_index * per_pass + round_index * per_round + order.index(setup) + 1
    return index, per_pass * len(params["gomaxprocs"])


def progress_start(manifest: dict, gomaxprocs: int, connections: int, setup: str, repeat: int) -> str:
    """Return the start of a progress line: '[5/40] nginx-fcgi-tcp GOMAXPROCS=2 run 2/5 (~3m 10s left) ... '.

    In a sweep, the connection level follows GOMAXPROCS: '... GOMAXPROCS=2 c=100 run 2/5 ...'.
    """
    params = manifest["parameters"]
    levels = levels_of(params)
    index, total = progress_index(manifest, gomaxprocs, connections, setup, repeat)
    passes_left = len(params["gomaxprocs"]) - params["gomaxprocs"].index(gomaxprocs) - 1
    levels_left = len(levels) - levels.index(connections) - 1
    left = estimate_seconds(params, index - 1, passes_left, levels_left)
    level = f" c={connections}" if len(levels) > 1 else ""
    return f"[{index}/{total}] {setup} GOMAXPROCS={gomaxprocs}{level} run {repeat}/{params['repeats']} (~{format_duration(left)} left) ... "


def progress_result(path: Path, exit_code: int) -> str:
    """Return the end of a progress line from a finished wrk file: '14,812 req/s' (+ problems)."""
    from .errors import ParseError
    from .parse import parse_file

    try:
        result = parse_file(path)
    except ParseError:
        text = path.read_text(errors="replace").strip() if path.exists() else ""
        last = text.splitlines()[-1] if text else "no output"
        return f"no result (wrk exit {exit_code}: {last})"
    if result.requests_per_sec is None:
        return f"no req/s (wrk exit {exit_code})"
    notes = []
    if result.non_2xx_3xx:
        notes.append(f"{result.non_2xx_3xx:,} non-2xx/3xx")
    if result.socket_errors:
        notes.append(f"{result.socket_errors:,} socket errors")
    if exit_code:
        notes.append(f"wrk exit {exit_code}")
    tail = f" ({', '.join(notes)})" if notes else ""
    return f"{format_rate(result.requests_per_sec)} req/s{tail}"


def summary_lines(run_dir: Path, manifest: dict) -> list[str]:
    """Return one line per cell: median req/s over its measurements, how many there were, and
    the median CPU time per 1,000 requests of each process the setup runs on."""
    from .errors import ParseError
    from .parse import parse_file

    params = manifest["parameters"]
    levels = levels_of(params)
    rates: dict[tuple, list[float]] = {}
    cpu: dict[tuple, dict[str, list[float]]] = {}
    for m in manifest["measurements"]:
        try:
            result = parse_file(run_dir / m["file"])
        except ParseError:
            continue
        key = (m["gomaxprocs"], m.get("connections", levels[0]), m["setup"])
        if result.requests_per_sec is not None:
            rates.setdefault(key, []).append(result.requests_per_sec)
        record = read_cpu_record(run_dir, m.get("cpu_file"))
        if record and result.requests:
            for name, ms in cpu_ms_per_1k_requests(record, result.requests).items():
                cpu.setdefault(key, {}).setdefault(name, []).append(ms)
    lines = []
    for n in params["gomaxprocs"]:
        for c in levels:
            level = f" c={c}" if len(levels) > 1 else ""
            for setup in params["setups"]:
                values = rates.get((n, c, setup))
                shown = f"{format_rate(statistics.median(values))} req/s (median of {len(values)})" if values else "no result"
                per_process = cpu.get((n, c, setup), {})
                used = [f"{name} {statistics.median(per_process[name]):.1f}" for name in SETUP_BY_ID[setup].needs if name in per_process]
                if values and used:
                    shown += f"; CPU ms per 1k requests: {', '.join(used)}"
                lines.append(f"GOMAXPROCS={n}{level} {setup:<16} {shown}")
    return lines


def read_cpu_record(run_dir: Path, name: str | None) -> dict | None:
    """Return a measurement's .cpu.json, or None when it has none or it cannot be read."""
    if not name:
        return None
    try:
        return json.loads((run_dir / name).read_text())
    except (OSError, ValueError):
        return None


def cpu_ms_per_1k_requests(record: dict, requests: int) -> dict[str, float]:
    """Return each measured process's CPU time (user + system) per 1,000 requests, in ms."""
    per = {}
    for name, usage in record["processes"].items():
        if usage is not None:
            per[name] = (usage["user_s"] + usage["system_s"]) * 1000 / (requests / 1000)
    return per


# --- nginx: modules and configuration --------------------------------------------------


def nginx_conf_dir(nginx_V: str) -> Path | None:
    """Return the directory of nginx's compiled-in configuration (where fastcgi_params is)."""
    match = re.search(r"--conf-path=(\S+)", nginx_V)
    return Path(match.group(1)).parent if match else None


def nginx_missing_modules(nginx_V: str, setups: list[str]) -> list[str]:
    """Return 'setup needs module' messages for modules this nginx was built without."""
    missing = []
    for setup in setups:
        for module in SETUP_BY_ID[setup].nginx_modules:
            if f"--without-{module}_module" in nginx_V:
                missing.append(f"{setup} needs nginx's {module} module, which this nginx was built without")
    return missing


SECTION_START = re.compile(r"^#@setup (?P<setup>\S+)\s*$")
SECTION_END = re.compile(r"^#@end\s*$")
IF_START = re.compile(r"^\s*#@if (?P<flag>[a-z_]+)\s*$")
IF_ELSE = re.compile(r"^\s*#@else\s*$")
IF_END = re.compile(r"^\s*#@endif\s*$")
TEMPLATE_COMMENT = re.compile(r"^#@(?:\s.*)?$")  # "#@ ..." or "#@": dropped from the output
PLACEHOLDER = re.compile(r"\{\{(?P<name>[a-z_]+)\}\}")
NGINX_UNSAFE = re.compile(r"[\s\"'\\;{}$#]")


def nginx_value(value: str) -> str:
    """Return a path or name fit for an nginx config; refuse characters needing quoting."""
    if not value or NGINX_UNSAFE.search(value):
        raise UsageError(f"{value!r} cannot be written into the nginx configuration unquoted")
    return value


def render_template(template: str, setups: list[str], values: dict[str, str], flags: dict[str, bool] | None = None) -> str:
    """Keep the sections of the selected setups and the `#@if` branches of the flags, drop
    `#@` comments, fill every {{name}}."""
    flags = flags or {}
    kept, current = [], None
    branch: tuple[str, bool] | None = None  # (flag, keep lines) inside #@if .. #@endif
    for number, line in enumerate(template.splitlines(), 1):
        if_start, if_else, if_end = IF_START.match(line), IF_ELSE.match(line), IF_END.match(line)
        if if_start:
            if branch is not None:
                raise ValueError(f"template line {number}: #@if inside #@if {branch[0]}")
            if if_start["flag"] not in flags:
                raise ValueError(f"template line {number}: unknown flag {if_start['flag']!r}")
            branch = (if_start["flag"], flags[if_start["flag"]])
            continue
        if if_else or if_end:
            if branch is None:
                raise ValueError(f"template line {number}: {line.strip()} without #@if")
            branch = (branch[0], not branch[1]) if if_else else None
            continue
        if branch is not None and not branch[1]:
            continue
        start = SECTION_START.match(line)
        if start:
            if current is not None:
                raise ValueError(f"template line {number}: section {start['setup']} inside {current}")
            if start["setup"] not in SETUP_BY_ID:
                raise ValueError(f"template line {number}: unknown setup {start['setup']!r}")
            current = start["setup"]
            continue
        if SECTION_END.match(line):
            if current is None:
                raise ValueError(f"template line {number}: #@end without #@setup")
            current = None
            continue
        if TEMPLATE_COMMENT.match(line):
            continue
        if current is None or current in setups:
            kept.append(line)
    if current is not None:
        raise ValueError(f"template: section {current} not closed with #@end")
    if branch is not None:
        raise ValueError(f"template: #@if {branch[0]} not closed with #@endif")

    def fill(match: re.Match) -> str:
        name = match["name"]
        if name not in values:
            raise ValueError(f"template: no value for {{{{{name}}}}}")
        return values[name]

    return PLACEHOLDER.sub(fill, "\n".join(kept) + "\n")


def nginx_values(
    manifest: dict, prefix: str, socket: str, user: str | None, group: str | None, rlimit: int, http_socket: str = ""
) -> dict[str, str]:
    """Return the template values for this run (ports, private paths, worker user, static body)."""
    nginx_V = manifest.get("nginx_V") or ""
    conf_dir = nginx_conf_dir(nginx_V)
    if conf_dir is None or not (conf_dir / "fastcgi_params").is_file():
        raise UsageError(f"cannot find nginx's stock fastcgi_params (nginx -V conf-path: {conf_dir})")
    if user:
        # Workers must connect to the Unix socket; the script makes it reachable to this
        # group only (socket 0660 and work dir 0710, group-owned), so name both explicitly.
        user_directive = f"user {nginx_value(user)} {nginx_value(group or user)};"
    else:
        user_directive = "# Not started as root: the workers run as the invoking user (no user directive)."
    optional = [
        f"    {module}_temp_path {prefix}/temp/{module};"
        for module in ("uwsgi", "scgi")
        if f"--without-http_{module}_module" not in nginx_V
    ]
    values = {
        "user_directive": user_directive,
        "worker_rlimit_nofile": str(rlimit),
        "prefix": nginx_value(prefix),
        "socket": nginx_value(socket),
        "http_socket": nginx_value(http_socket) if http_socket else "",
        "fastcgi_params": nginx_value(str(conf_dir / "fastcgi_params")),
        "optional_temp_paths": "\n".join(optional),
    }
    values.update(static_body_values(manifest["parameters"].get("body_bytes", len(HELLO_LINE))))
    for name, port in manifest["parameters"]["ports"].items():
        values["port_" + name.replace("-", "_")] = str(port)
    return values


def nginx_flags(manifest: dict) -> dict[str, bool]:
    """Return the template's #@if flags for this run."""
    return {"upstream_keepalive": manifest["parameters"].get("upstream_keepalive", True)}


# nginx reads its configuration through a 4096-byte buffer and refuses a longer token
# ("too long parameter"). A static body whose quoted text would be longer than
# STATIC_TOKEN_CHARS comes from map variables of STATIC_CHUNK_BYTES each instead.
STATIC_TOKEN_CHARS = 2000
STATIC_CHUNK_BYTES = 1800


def nginx_quote(text: str) -> str:
    """Return a body as the inside of an nginx double-quoted string: 'Hello World\\n' -> 'Hello World\\\\n'.

    Bodies are made of 'Hello World\\n' only, so a newline is the one character to escape.
    """
    return text.replace("\n", "\\n")


def static_body_values(body_bytes: int) -> dict[str, str]:
    """Return nginx-static's `return` text and the map blocks it needs for a body of that size.

    12 bytes: return 200 "Hello World\\n"; a body too long for one token comes from map
    variables with constant values ($static_body_0 ...), concatenated per request.
    """
    body = body_text(body_bytes)
    if len(nginx_quote(body)) <= STATIC_TOKEN_CHARS:
        return {"static_body_maps": "    # The body fits in one token: no map needed.", "static_return": f'"{nginx_quote(body)}"'}
    maps, names = [], []
    for i in range(0, len(body), STATIC_CHUNK_BYTES):
        name = f"static_body_{len(names)}"
        names.append(f"${name}")
        maps.append(f'    map $server_port ${name} {{ default "{nginx_quote(body[i : i + STATIC_CHUNK_BYTES])}"; }}')
    return {"static_body_maps": "\n".join(maps), "static_return": f'"{"".join(names)}"'}


def untraversable(path: Path, uid: int, gids: set[int]) -> str | None:
    """Return the first directory on the way to path (itself included) that uid with gids
    cannot search (x permission), as 'DIR (mode 0700, owner 0:0)'; None when all can be."""
    if uid == 0:
        return None
    for directory in [*reversed(path.parents), path]:
        st = directory.stat()
        if st.st_uid == uid:
            bit = 0o100
        elif st.st_gid in gids:
            bit = 0o010
        else:
            bit = 0o001
        if not st.st_mode & bit:
            return f"{directory} (mode {st.st_mode & 0o7777:04o}, owner {st.st_uid}:{st.st_gid})"
    return None


def user_ids(name: str) -> tuple[int, set[int]]:
    """Return a user's uid and every gid it has (primary and supplementary), as initgroups gives."""
    entry = pwd.getpwnam(name)
    gids = {entry.pw_gid} | {g.gr_gid for g in grp.getgrall() if name in g.gr_mem}
    return entry.pw_uid, gids


# --- Processes and their CPU time ----------------------------------------------------


def stat_fields(stat: str) -> list[str]:
    """Return the fields of a /proc/<pid>/stat line after the command name: [state, ppid, ...].

    The name is in parentheses and may hold spaces or parentheses itself, so split after
    the last ')'. Field n of proc(5) is at index n - 3.
    """
    return stat.rsplit(")", 1)[1].split()


def child_pids(pid: int, proc: Path = Path("/proc")) -> list[int]:
    """Return the PIDs whose parent is pid (nginx's workers, from the master's PID)."""
    try:  # the kernel's own list (CONFIG_PROC_CHILDREN), for a single-threaded parent
        text = (proc / str(pid) / "task" / str(pid) / "children").read_text()
        return sorted(int(child) for child in text.split())
    except (OSError, ValueError):
        pass
    children = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat_fields(stat)[1]) == pid:
            children.append(int(entry.name))
    return sorted(children)


def cpu_ticks(pid: int, proc: Path = Path("/proc")) -> tuple[int, int] | None:
    """Return (utime, stime) of a process, all its threads, in clock ticks; None when it is gone."""
    try:
        fields = stat_fields((proc / str(pid) / "stat").read_text())
    except (OSError, IndexError):
        return None
    return int(fields[11]), int(fields[12])  # proc(5) fields 14 and 15


def server_pids(pids: dict, proc: Path = Path("/proc")) -> dict[str, list[int]]:
    """Return the PIDs whose CPU time counts per server: go and fasthttp as started, nginx's
    master with its children (the workers it started); servers not in the pass are left out."""
    found = {}
    for name in ("go", "fasthttp"):
        if pids.get(name):
            found[name] = [pids[name]]
    if pids.get("nginx"):
        found["nginx"] = [pids["nginx"], *child_pids(pids["nginx"], proc)]
    return found


def cpu_snapshot(pids: dict[str, list[int]], proc: Path = Path("/proc")) -> dict[str, dict[int, tuple[int, int]]]:
    """Return the CPU ticks of each named group of PIDs (those still running)."""
    snapshot = {}
    for name, group in pids.items():
        ticks = {pid: cpu_ticks(pid, proc) for pid in group}
        snapshot[name] = {pid: value for pid, value in ticks.items() if value is not None}
    return snapshot


def cpu_delta(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]], ticks_per_s: int) -> dict | None:
    """Return {'user_s', 'system_s', 'pids'} consumed between two snapshots of one group.

    A PID seen only after (a process started meanwhile) counts from zero; one gone by the
    second snapshot cannot be read and is left out. None when nothing could be read.
    """
    if not after:
        return None
    user = sum(u - before.get(pid, (0, 0))[0] for pid, (u, _) in after.items())
    system = sum(t - before.get(pid, (0, 0))[1] for pid, (_, t) in after.items())
    return {"user_s": round(user / ticks_per_s, 3), "system_s": round(system / ticks_per_s, 3), "pids": sorted(after)}


def cpu_record(measurement: dict, before: dict, after: dict, wrk: dict, wall_s: float, pinning: dict | None) -> dict:
    """Return the .cpu.json of one measurement (docs/raw-format.md) from its two snapshots."""
    ticks_per_s = os.sysconf("SC_CLK_TCK")
    processes: dict[str, dict | None] = {name: None for name in CPU_PROCESSES}
    for name in after:
        processes[name] = cpu_delta(before.get(name, {}), after[name], ticks_per_s)
    processes["wrk"] = wrk
    return {
        "schema": SCHEMA,
        **measurement,
        "wall_s": round(wall_s, 3),
        "clock_ticks_per_s": ticks_per_s,
        "logical_cores": os.cpu_count(),
        "processes": processes,
        "pinning": pinning,
    }


def pinning_of(parameters: dict) -> dict | None:
    """Return the manifest's pinning as {'client', 'server'}, or None when nothing is pinned."""
    client, server = parameters.get("pin_client"), parameters.get("pin_server")
    return {"client": client, "server": server} if client or server else None


@dataclass(frozen=True)
class Measured:
    """How a measured command (wrk) ended."""

    status: int  # its exit status; 128 + N when it died of signal N
    pid: int | None  # None: not started (a signal came first)
    user_s: float  # its own CPU time, from the rusage of wait4
    system_s: float
    wall_s: float
    signal: int | None  # the last SIGINT/SIGTERM received meanwhile (passed on to it), or None


def run_measured(argv: list[str], stdout: Path, stderr: Path) -> Measured:
    """Run argv (wrk) with its output in files, passing SIGINT and SIGTERM on to it."""
    received: list[int] = []
    child: list[int] = []

    def forward(signum, _frame):
        received.append(signum)
        for pid in child:
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            if received:
                return Measured(128 + received[-1], None, 0.0, 0.0, 0.0, received[-1])
            started = time.monotonic()
            file_actions = [(os.POSIX_SPAWN_DUP2, out.fileno(), 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)]
            child.append(os.posix_spawnp(argv[0], argv, os.environ, file_actions=file_actions))
            if received:
                os.kill(child[0], received[-1])
            _, status, rusage = os.wait4(child[0], 0)
            wall_s = time.monotonic() - started
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    code = os.waitstatus_to_exitcode(status)
    return Measured(
        status=128 - code if code < 0 else code,
        pid=child[0],
        user_s=rusage.ru_utime,
        system_s=rusage.ru_stime,
        wall_s=wall_s,
        signal=received[-1] if received else None,
    )


# --- Subcommands -----------------------------------------------------------------------


def cmd_plan(args) -> int:
    """Validate the script's options and print the plan; save it as JSON for `init`."""
    options = args.options[1:] if args.options[:1] == ["--"] else args.options
    cpus = usable_cpus()
    plan = build_plan(options, dict(os.environ), Path(args.root), len(cpus), os.geteuid(), cpus)
    for warning in plan["warnings"]:
        print(f"[run_bench] warning: {warning}", file=sys.stderr)
    write_json_atomic(Path(args.save), plan)
    print("\n".join(plan_lines(plan)))
    return 0


def cmd_check_ports(args) -> int:
    """Print a message per needed port that is busy; exit 3 if any."""
    plan = json.loads(Path(args.plan).read_text())
    messages = busy_port_messages(plan["needed_ports"])
    for message in messages:
        print(message)
    return NO if messages else 0


def cmd_check_nginx(args) -> int:
    """Print which selected setups this nginx cannot serve; exit 3 if any."""
    plan = json.loads(Path(args.plan).read_text())
    nginx_V = command_output([args.nginx, "-V"]) or ""
    problems = nginx_missing_modules(nginx_V, plan["setups"])
    if nginx_conf_dir(nginx_V) is None:
        problems.append(f"cannot read --conf-path from `{args.nginx} -V`")
    for problem in problems:
        print(problem)
    return NO if problems else 0


def cmd_check_reach(args) -> int:
    """Print why a user cannot reach a directory (nginx workers -> work dir); exit 3 if so."""
    try:
        uid, gids = user_ids(args.user)
    except KeyError:
        print(f"no user {args.user!r} on this system")
        return NO
    blocked = untraversable(Path(args.path), uid, gids)
    if blocked:
        print(f"nginx workers (user {args.user}) cannot reach {args.path}: {blocked} is not searchable; set TMPDIR to a directory they can traverse, e.g. /tmp")
        return NO
    return 0


def cmd_tune(args) -> int:
    """Apply the article's sysctl values (see ARTICLE_SYSCTL) and save what was done."""
    actions = apply_tune(Path(args.proc_sys), lambda text: print(f"[run_bench] {text}", file=sys.stderr))
    write_json_atomic(Path(args.save), {"sysctl_changes": actions})
    return 0


def cmd_init(args) -> int:
    """Create the run directory and its 'running' manifest, point latest at it, print its path."""
    plan = json.loads(Path(args.plan).read_text())
    tune = json.loads(Path(args.tune_log).read_text())["sysctl_changes"] if args.tune_log else None
    started = utc_now()
    out = Path(plan["out"])
    run_dir = create_run_dir(out, started)
    (run_dir / "logs").mkdir()
    manifest = new_manifest(run_dir.name, started, args.command, plan, args.nginx or None, args.ulimit_n, tune)
    save_manifest(run_dir, manifest)
    warning = point_latest(out, run_dir)
    if warning:
        print(f"[run_bench] warning: {warning}", file=sys.stderr)
    print(run_dir)
    return 0


def cmd_render_nginx(args) -> int:
    """Render the nginx configuration of this run to --out."""
    manifest = load_manifest(Path(args.run))
    values = nginx_values(manifest, args.prefix, args.socket, args.user, args.group, args.rlimit, args.http_socket)
    nginx_setups = [s for s in manifest["parameters"]["setups"] if SETUP_BY_ID[s].server == "nginx"]
    text = render_template(Path(args.template).read_text(), nginx_setups, values, nginx_flags(manifest))
    Path(args.out).write_text(text)
    return 0


def cmd_pass_start(args) -> int:
    """Record a new pass and print its setup order, one line per repeat."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    entry = new_pass(manifest, args.gomaxprocs)
    save_manifest(run_dir, manifest)
    print("\n".join(" ".join(order) for order in entry["order"]))
    return 0


def cmd_pass_update(args) -> int:
    """Record the pass's PIDs, the GOMAXPROCS Go reports, a note, or its end."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    entry = find_pass(manifest, args.gomaxprocs)
    if args.go_log:
        entry["go_reported_gomaxprocs"] = go_reported_gomaxprocs(Path(args.go_log).read_text(errors="replace"))
    if args.go_pid is not None:
        entry["pids"]["go"] = args.go_pid
    if args.fasthttp_pid is not None:
        entry["pids"]["fasthttp"] = args.fasthttp_pid
    if args.nginx_pid is not None:
        entry["pids"]["nginx"] = args.nginx_pid
        entry["pids"]["nginx_workers"] = child_pids(args.nginx_pid)
        print(" ".join(map(str, entry["pids"]["nginx_workers"])))
    if args.note:
        entry["notes"].append(args.note)
    if args.ended:
        entry["ended_at"] = iso(utc_now())
    save_manifest(run_dir, manifest)
    return 0


def cmd_cell(args) -> int:
    """Record one cell's readiness and header capture; exit 3 (reason on stdout) if unusable."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    data = None
    if args.headers and Path(args.headers).is_file():
        data = Path(args.headers).read_bytes()
    cell = cell_from_headers(data, bool(args.ready), args.error)
    cell["url"] = manifest["parameters"]["urls"][args.setup]
    cell["headers_file"] = Path(args.headers).name if data else None
    find_pass(manifest, args.gomaxprocs)["cells"][args.setup] = cell
    save_manifest(run_dir, manifest)
    if cell["error"]:
        print(cell["error"])
        return NO
    expect = manifest["parameters"]["expect_header_bytes"]
    if cell["header_bytes"] != expect:
        print(f"note: {cell['header_bytes']}-byte header block, expected {expect}")
    return 0


def cmd_measure_start(args) -> int:
    """Print the start of this measurement's progress line."""
    manifest = load_manifest(Path(args.run))
    connections = args.connections or levels_of(manifest["parameters"])[0]
    print(progress_start(manifest, args.gomaxprocs, connections, args.setup, args.repeat), end="")
    return 0


def cmd_run_wrk(args) -> int:
    """Run wrk (the command after --) for one measurement and write its .cpu.json.

    Its stdout then stderr go to --out; the CPU time of the pass's servers is read from
    /proc just before and just after, wrk's own from its rusage. Exits with wrk's status;
    on SIGINT/SIGTERM (passed on to wrk) with 128 + N and no .cpu.json.
    """
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    params = manifest["parameters"]
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise UsageError("run-wrk needs the wrk command after --")
    started = find_pass(manifest, args.gomaxprocs)["pids"]
    out, stderr = Path(args.out), Path(args.stderr)
    before = cpu_snapshot(server_pids(started))
    wrk = run_measured(argv, out, stderr)
    after = cpu_snapshot(server_pids(started))  # nginx's children again: a worker may have been replaced
    with open(out, "ab") as f:
        f.write(stderr.read_bytes())
    if wrk.signal is not None:
        return wrk.status
    measurement = {
        "file": out.name,
        "setup": args.setup,
        "gomaxprocs": args.gomaxprocs,
        "connections": args.connections or levels_of(params)[0],
        "repeat": args.repeat,
    }
    usage = {"user_s": round(wrk.user_s, 3), "system_s": round(wrk.system_s, 3), "pids": [wrk.pid], "threads": params["threads"]}
    write_json_atomic(run_dir / args.cpu_file, cpu_record(measurement, before, after, usage, wrk.wall_s, pinning_of(params)))
    return wrk.status


def cmd_measure_end(args) -> int:
    """Record a finished measurement and print the end of its progress line."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    cpu_file = args.cpu_file if args.cpu_file and (run_dir / args.cpu_file).is_file() else None
    manifest["measurements"].append(
        {
            "setup": args.setup,
            "gomaxprocs": args.gomaxprocs,
            "connections": args.connections or levels_of(manifest["parameters"])[0],
            "repeat": args.repeat,
            "file": args.file,
            "cpu_file": cpu_file,
            "url": manifest["parameters"]["urls"][args.setup],
            "command": args.command,
            "exit_code": args.exit_code,
            "started_at": args.started_at,
            "ended_at": iso(utc_now()),
        }
    )
    save_manifest(run_dir, manifest)
    print(progress_result(run_dir / args.file, args.exit_code))
    return 0


def cmd_finish(args) -> int:
    """Set the run's final status, reason and end time."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    manifest["status"] = args.status
    manifest["reason"] = args.reason or None
    manifest["ended_at"] = iso(utc_now())
    save_manifest(run_dir, manifest)
    return 0


def cmd_summary(args) -> int:
    """Print the median req/s of each cell."""
    run_dir = Path(args.run)
    print("\n".join(summary_lines(run_dir, load_manifest(run_dir))))
    return 0


def main_parser() -> argparse.ArgumentParser:
    """Return the parser of the subcommands run_bench.sh calls."""
    p = argparse.ArgumentParser(prog="python3 -m wrkreport.drive", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    def add(name, func, *arguments):
        s = sub.add_parser(name, help=func.__doc__)
        s.set_defaults(func=func)
        for flags, kwargs in arguments:
            s.add_argument(*flags, **kwargs)
        return s

    run = (("--run",), {"required": True})
    n = (("--gomaxprocs",), {"required": True, "type": int})
    setup = (("--setup",), {"required": True, "choices": SETUP_IDS})
    repeat = (("--repeat",), {"required": True, "type": int})
    connections = (("--connections",), {"type": int})  # the level; default: the run's only one
    add("plan", cmd_plan, (("--root",), {"required": True}), (("--save",), {"required": True}), (("options",), {"nargs": argparse.REMAINDER}))
    add("check-ports", cmd_check_ports, (("--plan",), {"required": True}))
    add("check-nginx", cmd_check_nginx, (("--plan",), {"required": True}), (("--nginx",), {"required": True}))
    add("check-reach", cmd_check_reach, (("--path",), {"required": True}), (("--user",), {"required": True}))
    add("tune", cmd_tune, (("--save",), {"required": True}), (("--proc-sys",), {"default": "/proc/sys"}))
    add(
        "init",
        cmd_init,
        (("--plan",), {"required": True}),
        (("--command",), {"required": True}),
        (("--nginx",), {"default": ""}),
        (("--ulimit-n",), {"type": int}),
        (("--tune-log",), {}),
    )
    add(
        "render-nginx",
        cmd_render_nginx,
        run,
        (("--template",), {"required": True}),
        (("--prefix",), {"required": True}),
        (("--socket",), {"required": True}),
        (("--http-socket",), {"default": ""}),
        (("--user",), {}),
        (("--group",), {}),
        (("--rlimit",), {"type": int, "required": True}),
        (("--out",), {"required": True}),
    )
    add("pass-start", cmd_pass_start, run, n)
    add(
        "pass-update",
        cmd_pass_update,
        run,
        n,
        (("--go-log",), {}),
        (("--go-pid",), {"type": int}),
        (("--fasthttp-pid",), {"type": int}),
        (("--nginx-pid",), {"type": int}),
        (("--note",), {}),
        (("--ended",), {"action": "store_true"}),
    )
    add(
        "cell",
        cmd_cell,
        run,
        n,
        setup,
        (("--ready",), {"type": int, "choices": (0, 1), "required": True}),
        (("--headers",), {}),
        (("--error",), {}),
    )
    add("measure-start", cmd_measure_start, run, n, setup, repeat, connections)
    add(
        "run-wrk",
        cmd_run_wrk,
        run,
        n,
        setup,
        repeat,
        connections,
        (("--out",), {"required": True}),
        (("--stderr",), {"required": True}),
        (("--cpu-file",), {"required": True}),
        (("argv",), {"nargs": argparse.REMAINDER}),
    )
    add(
        "measure-end",
        cmd_measure_end,
        run,
        n,
        setup,
        repeat,
        connections,
        (("--file",), {"required": True}),
        (("--cpu-file",), {}),
        (("--command",), {"required": True}),
        (("--exit-code",), {"type": int, "required": True}),
        (("--started-at",), {"required": True}),
    )
    add(
        "finish",
        cmd_finish,
        run,
        (("--status",), {"required": True, "choices": ("complete", "interrupted", "failed")}),
        (("--reason",), {}),
    )
    add("summary", cmd_summary, run)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; a UsageError becomes `run_bench.sh: message` and exit status 2."""
    args = main_parser().parse_args(argv)
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"{PROG}: {exc} (see ./{PROG} --help)", file=sys.stderr)
        return 2
    except (ValueError, KeyError, OSError) as exc:  # a broken template, manifest or file
        print(f"wrkreport.drive {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
