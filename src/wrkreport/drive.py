"""Drive: run_bench.sh's helpers -- plan, manifest, nginx config, ports, sysctl, progress.

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
import statistics
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

SCHEMA = 1
PROG = "run_bench.sh"
LOOPBACK = "127.0.0.1"
EXPECT_HEADER_BYTES = 141  # the article's `curl -sI URL | wc -c` (see docs/raw-format.md)
RUN_ID_FORMAT = "%Y%m%dT%H%M%SZ"
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
NO = 3  # exit status of a "no" answer (busy port, unusable cell, missing nginx module)


# --- Tables: setups, backends, profiles, parameters, sysctl --------------------------


@dataclass(frozen=True)
class Setup:
    """One measured setup: who answers wrk, on which default port, and what nginx needs."""

    id: str
    server: str  # "go" (wrk talks to Go directly) or "nginx"
    default_port: int
    nginx_modules: tuple[str, ...] = ()  # modules this setup's server block uses


# Order = display order. A new setup is a row here, a block in templates/nginx.conf.tmpl
# (for nginx setups) and, for a new backend, a flag of the Go server.
SETUPS: tuple[Setup, ...] = (
    Setup("go-http", "go", 8080),
    Setup("nginx-http", "nginx", 8081, ("http_proxy", "http_upstream_keepalive")),
    Setup("nginx-fcgi-tcp", "nginx", 8082, ("http_fastcgi", "http_upstream_keepalive")),
    Setup("nginx-fcgi-unix", "nginx", 8083, ("http_fastcgi", "http_upstream_keepalive")),
)
SETUP_IDS = tuple(s.id for s in SETUPS)
SETUP_BY_ID = {s.id: s for s in SETUPS}
# Ports the Go server always binds besides go-http's (which nginx-http proxies to).
BACKEND_PORTS = {"go-fcgi-tcp": 9001}
DEFAULT_PORTS = {**{s.id: s.default_port for s in SETUPS}, **BACKEND_PORTS}

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


def cpu_count() -> int:
    """Return the CPUs this process may run on (what `nproc` prints)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


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
    return p


def build_plan(argv: list[str], env: dict[str, str], root: Path, nproc: int, euid: int) -> dict:
    """Return the run's parameters from options (first), environment, then profile."""
    args = parse_options(argv)
    if args.quick and args.profile not in (None, "quick"):
        raise UsageError(f"--quick and --profile {args.profile} contradict each other")
    profile = "quick" if args.quick else args.profile or env.get(ENV_PROFILE) or "default"
    if profile not in PROFILES:
        raise UsageError(f"{ENV_PROFILE}={profile!r}: choose one of {', '.join(PROFILES)}")
    plan: dict = {"profile": profile}
    for param in PARAMS:
        given = getattr(args, param.key)
        source = param.option if given is not None else param.env
        text = given if given is not None else env.get(param.env)
        plan[param.key] = (
            PROFILES[profile][param.key] if text is None else parse_int(text, source, param.minimum, param.seconds)
        )
    if plan["connections"] < plan["threads"]:
        raise UsageError(f"connections ({plan['connections']}) must be >= threads ({plan['threads']}), as wrk requires")
    plan["gomaxprocs"] = gomaxprocs_list(args.gomaxprocs, env, nproc)
    plan["setups"] = setup_list(args.setups, env)
    plan["ports"] = port_map(args.port, env)
    plan["needed_ports"] = needed_ports(plan["setups"], plan["ports"])
    plan["urls"] = {s: url_for(plan["ports"][s]) for s in plan["setups"]}
    plan["expect_header_bytes"] = EXPECT_HEADER_BYTES
    plan["seed"] = parse_int(args.seed or env.get(ENV_SEED) or str(secrets.randbits(32)), "--seed", 0)
    if args.tune and euid != 0:
        raise UsageError("--tune writes kernel settings (sysctl) and needs root")
    plan["tune"] = bool(args.tune)
    out = args.out or env.get(ENV_OUT) or str(root / "raw")
    if "\n" in out:
        raise UsageError("--out must not contain a line break")
    plan["out"] = os.path.abspath(out)
    plan["measurements"] = len(plan["gomaxprocs"]) * len(plan["setups"]) * plan["repeats"]
    plan["estimate_s"] = round(estimate_seconds(plan, 0, len(plan["gomaxprocs"])))
    # wrk holds one descriptor per connection; nginx one towards the client and one towards
    # Go; the Go server one per connection it serves. Plus room for logs, listeners, epoll.
    plan["needed_fds"] = 2 * plan["connections"] + 256
    return plan


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
    """Return the selected setups in table order (option, BENCH_SETUPS, else all)."""
    text = given if given is not None else env.get(ENV_SETUPS)
    if text is None:
        return list(SETUP_IDS)
    chosen = split_list(text)
    unknown = [s for s in chosen if s not in SETUP_BY_ID]
    if unknown:
        raise UsageError(f"unknown setup {unknown[0]!r}; choose from {', '.join(SETUP_IDS)}")
    if not chosen:
        raise UsageError("--setups needs at least one setup")
    return [s for s in SETUP_IDS if s in chosen]


def port_map(given: list[str], env: dict[str, str]) -> dict[str, int]:
    """Return every port by name: defaults, then BENCH_PORTS, then each --port NAME=PORT."""
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
    return ports


def needed_ports(setups: list[str], ports: dict[str, int]) -> dict[str, int]:
    """Return the ports this run binds: Go's two TCP ports always, plus each nginx setup's."""
    names = ["go-http", *BACKEND_PORTS, *(s for s in setups if SETUP_BY_ID[s].server == "nginx")]
    needed = {name: ports[name] for name in names}
    seen: dict[int, str] = {}
    for name, port in needed.items():
        if port in seen:
            raise UsageError(f"{seen[port]} and {name} are both given port {port}")
        seen[port] = name
    return needed


def estimate_seconds(parameters: dict, measurements_done: int, passes_left: int) -> float:
    """Return the expected time left: remaining measurements, plus warm-ups of passes not started."""
    per_measurement = parameters["duration_s"] + MEASUREMENT_OVERHEAD_S
    total = len(parameters["gomaxprocs"]) * len(parameters["setups"]) * parameters["repeats"]
    per_pass = PASS_OVERHEAD_S + len(parameters["setups"]) * (parameters["warmup_s"] + MEASUREMENT_OVERHEAD_S)
    return (total - measurements_done) * per_measurement + passes_left * per_pass


def plan_lines(plan: dict) -> list[str]:
    """Return the plan as `key value` lines for the script (lists space-separated)."""
    lines = []
    for key in ("profile", *(p.key for p in PARAMS), "seed", "measurements", "needed_fds"):
        lines.append(f"{key} {plan[key]}")
    lines.append(f"tune {int(plan['tune'])}")
    lines.append(f"gomaxprocs {' '.join(map(str, plan['gomaxprocs']))}")
    lines.append(f"setups {' '.join(plan['setups'])}")
    nginx = [s for s in plan["setups"] if SETUP_BY_ID[s].server == "nginx"]
    lines.append(f"nginx_setups {' '.join(nginx)}")
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
        gomaxprocs=plan["gomaxprocs"],
        setups=plan["setups"],
        ports=plan["ports"],
        urls=plan["urls"],
        expect_header_bytes=plan["expect_header_bytes"],
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


def new_pass(manifest: dict, gomaxprocs: int) -> dict:
    """Append and return the pass entry for a GOMAXPROCS value, with its shuffled orders."""
    params = manifest["parameters"]
    entry = {
        "gomaxprocs": gomaxprocs,
        "go_reported_gomaxprocs": None,
        "order": shuffled_orders(params["setups"], params["repeats"], params["seed"], gomaxprocs),
        "cells": {},
        "pids": {"go": None, "nginx": None, "nginx_workers": []},
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


def progress_index(manifest: dict, gomaxprocs: int, setup: str, repeat: int) -> tuple[int, int]:
    """Return (1-based position of this measurement in the whole run, total measurements)."""
    params = manifest["parameters"]
    per_repeat = len(params["setups"])
    per_pass = per_repeat * params["repeats"]
    pass_index = params["gomaxprocs"].index(gomaxprocs)
    order = find_pass(manifest, gomaxprocs)["order"][repeat - 1]
    index = pass_index * per_pass + (repeat - 1) * per_repeat + order.index(setup) + 1
    return index, per_pass * len(params["gomaxprocs"])


def progress_start(manifest: dict, gomaxprocs: int, setup: str, repeat: int) -> str:
    """Return the start of a progress line: '[5/40] nginx-fcgi-tcp GOMAXPROCS=2 run 2/5 (~3m 10s left) ... '."""
    params = manifest["parameters"]
    index, total = progress_index(manifest, gomaxprocs, setup, repeat)
    passes_left = len(params["gomaxprocs"]) - params["gomaxprocs"].index(gomaxprocs) - 1
    left = estimate_seconds(params, index - 1, passes_left)
    return f"[{index}/{total}] {setup} GOMAXPROCS={gomaxprocs} run {repeat}/{params['repeats']} (~{format_duration(left)} left) ... "


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
    """Return one line per cell: median req/s over its measurements, and how many there were."""
    from .errors import ParseError
    from .parse import parse_file

    rates: dict[tuple[int, str], list[float]] = {}
    for m in manifest["measurements"]:
        try:
            value = parse_file(run_dir / m["file"]).requests_per_sec
        except ParseError:
            value = None
        if value is not None:
            rates.setdefault((m["gomaxprocs"], m["setup"]), []).append(value)
    lines = []
    for n in manifest["parameters"]["gomaxprocs"]:
        for setup in manifest["parameters"]["setups"]:
            values = rates.get((n, setup))
            shown = f"{format_rate(statistics.median(values))} req/s (median of {len(values)})" if values else "no result"
            lines.append(f"GOMAXPROCS={n} {setup:<16} {shown}")
    return lines


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
TEMPLATE_COMMENT = re.compile(r"^#@(?:\s.*)?$")  # "#@ ..." or "#@": dropped from the output
PLACEHOLDER = re.compile(r"\{\{(?P<name>[a-z_]+)\}\}")
NGINX_UNSAFE = re.compile(r"[\s\"'\\;{}$#]")


def nginx_value(value: str) -> str:
    """Return a path or name fit for an nginx config; refuse characters needing quoting."""
    if not value or NGINX_UNSAFE.search(value):
        raise UsageError(f"{value!r} cannot be written into the nginx configuration unquoted")
    return value


def render_template(template: str, setups: list[str], values: dict[str, str]) -> str:
    """Keep the sections of the selected setups, drop `#@` comments, fill every {{name}}."""
    kept, current = [], None
    for number, line in enumerate(template.splitlines(), 1):
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

    def fill(match: re.Match) -> str:
        name = match["name"]
        if name not in values:
            raise ValueError(f"template: no value for {{{{{name}}}}}")
        return values[name]

    return PLACEHOLDER.sub(fill, "\n".join(kept) + "\n")


def nginx_values(manifest: dict, prefix: str, socket: str, user: str | None, group: str | None, rlimit: int) -> dict[str, str]:
    """Return the template values for this run (ports, private paths, worker user)."""
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
        "fastcgi_params": nginx_value(str(conf_dir / "fastcgi_params")),
        "optional_temp_paths": "\n".join(optional),
    }
    for name, port in manifest["parameters"]["ports"].items():
        values["port_" + name.replace("-", "_")] = str(port)
    return values


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


# --- Processes -------------------------------------------------------------------------


def child_pids(pid: int, proc: Path = Path("/proc")) -> list[int]:
    """Return the PIDs whose parent is pid (nginx's workers, from the master's PID)."""
    children = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            children.append(int(entry.name))
    return sorted(children)


# --- Subcommands -----------------------------------------------------------------------


def cmd_plan(args) -> int:
    """Validate the script's options and print the plan; save it as JSON for `init`."""
    options = args.options[1:] if args.options[:1] == ["--"] else args.options
    plan = build_plan(options, dict(os.environ), Path(args.root), cpu_count(), os.geteuid())
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
    values = nginx_values(manifest, args.prefix, args.socket, args.user, args.group, args.rlimit)
    nginx_setups = [s for s in manifest["parameters"]["setups"] if SETUP_BY_ID[s].server == "nginx"]
    text = render_template(Path(args.template).read_text(), nginx_setups, values)
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
    print(progress_start(manifest, args.gomaxprocs, args.setup, args.repeat), end="")
    return 0


def cmd_measure_end(args) -> int:
    """Record a finished measurement and print the end of its progress line."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    manifest["measurements"].append(
        {
            "setup": args.setup,
            "gomaxprocs": args.gomaxprocs,
            "repeat": args.repeat,
            "file": args.file,
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
    add("measure-start", cmd_measure_start, run, n, setup, repeat)
    add(
        "measure-end",
        cmd_measure_end,
        run,
        n,
        setup,
        repeat,
        (("--file",), {"required": True}),
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
