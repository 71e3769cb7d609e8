"""One fixed-rate measurement: `vegeta attack` at R req/s against one URL, its per-request results kept (CSV, gzip'd) and its CPU time beside them.

The open-loop counterpart of `measure` (commands/blocks.py), for the fixed-rate phase.
In order:

1. the servers' CPU time is read from /proc (cpu.py, as for wrk);
2. `vegeta attack -rate R/1s -duration Ds ...` runs with its results (vegeta's binary gob)
   going to a file in the work directory; its own CPU time comes from its rusage;
3. the servers' CPU time is read again;
4. `vegeta encode --to csv` turns the gob into CSV, gzip'd by Python into
   `<stem>.vegeta.csv.gz` in the run directory (written under a hidden name, then
   renamed: never half a file under the pattern), and the gob is deleted. The encoding
   runs after the measurement, so it costs the servers nothing and is not counted;
5. `<stem>.cpu.json` is written beside it: the cpu.json of a wrk measurement, with vegeta
   as the load generator (`processes.wrk`, as ab is with --load-generator ab).

Why CSV and not the gob: Python reads it without vegeta (parsers/vegeta.py) and so can
recompute every percentile; `zcat FILE | vegeta report` still reads it. gzip because a row
is ~260 bytes (the body and headers, base64) but only ~15 once compressed.

`-max-body` is the expected body size + 1: a body of the expected size is kept whole, a
longer one shows as one byte more (so the same-response check still fails it) and a
large response cannot swell the file. `-http2=false`: HTTP/1.1 with keep-alive, as wrk; an h2
setup's attack says `-http2=true` (Go's HTTP/2 client, h2 offered by ALPN: the h2load runs' fixed-rate phase).

Standard library only (plus wrkreport.parsers' file names), like the rest of wrkreport.bench.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..core.cpus import cpu_count
from ..parsers.vegeta import SUFFIX
from .cpu import cpu_record, cpu_snapshot, run_measured, server_pids
from .manifest import write_json_atomic
from .values import iso_ms, now_ms, parse_cpu_list

ENCODE_TIMEOUT_S = 600
CHUNK = 1 << 20
# vegeta binds its connections' local address before connecting (its -laddr, 0.0.0.0 by
# default), so a port held in TIME_WAIT on 127.0.0.1 is taken for every destination. After
# the -new setups' throughput blocks (Connection: close, about 1,600 handshakes/s) 11,000-
# 28,000 such ports were left, and at GOMAXPROCS=2 every setup failed the fixed-rate phase
# with "bind: address already in use". On Linux the whole of 127.0.0.0/8 is this machine,
# so a target on 127.0.0.1 is attacked from 127.0.0.2, whose ports nothing else holds.
LOOPBACK = "127.0.0.1"
LOOPBACK_SOURCE = "127.0.0.2"


@dataclass(frozen=True)
class Attack:
    """What one fixed-rate measurement asks of vegeta."""

    url: str
    rate: int  # requests per second, offered whatever the answers
    duration_s: float
    connections: int = 10000  # vegeta -connections: idle connections kept per host (its default)
    max_connections: int | None = None  # vegeta -max-connections: open connections at most (None: no limit, its default)
    timeout_s: float = 2.0  # vegeta -timeout: a request unanswered after this is an error (wrk's --timeout)
    expect_body_bytes: int | None = None  # the body every response should have; None: bodies kept whole
    client_pin: str | None = None  # taskset CPU list for vegeta, e.g. "0"
    headers: tuple[str, ...] = ()  # --app-header: 'Name: value' sent with every request
    http2: bool = False  # an h2 setup's: vegeta -http2=true, h2 offered by ALPN over TLS (HTTP/1.1 keep-alive otherwise, as wrk)

    @property
    def target(self) -> str:
        """Return vegeta's targets text: 'GET URL', then one line per header."""
        return "".join(f"{line}\n" for line in (f"GET {self.url}", *self.headers))

    def __post_init__(self) -> None:
        if not (isinstance(self.rate, int) and self.rate > 0):
            raise ValueError(f"rate must be a positive whole number of requests per second, not {self.rate!r}")
        if not self.duration_s > 0 or not self.timeout_s > 0 or self.connections < 1 or (self.max_connections or 1) < 1:
            raise ValueError(
                f"duration ({self.duration_s!r} s), timeout ({self.timeout_s!r} s) and connections ({self.connections!r}) must be positive"
            )


@dataclass(frozen=True)
class RateRun:
    """How one fixed-rate measurement went: its files (names in the run directory; None when not written) and vegeta's end."""

    file: str | None  # <stem>.vegeta.csv.gz
    cpu_file: str | None
    command: str
    exit_code: int  # vegeta attack's exit status (128 + N after signal N)
    signal: int | None  # SIGINT/SIGTERM received meanwhile: the partial files were removed, nothing kept
    started_at: str
    ended_at: str
    generator_cpu_s: float  # vegeta attack's user + system time
    wall_s: float
    problem: str | None  # why no results were kept (vegeta's or the encoder's last words), else None

    def entry(self, ids: dict, attack: Attack) -> dict:
        """Return the manifest entry of this measurement: ids (setup, gomaxprocs, block, round, repeat) then what ran."""
        return {
            **ids,
            "rate": attack.rate,
            "file": self.file,
            "cpu_file": self.cpu_file,
            "url": attack.url,
            "command": self.command,
            "exit_code": self.exit_code,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            **({"problem": self.problem} if self.problem else {}),
        }


def rate_stem(setup: str, gomaxprocs: int, block: int, repeat: int, rate: int, connections: int | None = None) -> str:
    """Return a fixed-rate measurement's stem, named like the wrk files (docs/raw-format.md) plus its rate.

    >>> rate_stem("nginx-http", 2, 1, 3, 5000)
    'nginx-http.gomaxprocs-2.block-1.run-3.rate-5000'
    """
    level = f".c{connections}" if connections is not None else ""
    return f"{setup}.gomaxprocs-{gomaxprocs}{level}.block-{block}.run-{repeat}.rate-{rate}"


def attack_argv(vegeta: str | Path, attack: Attack, targets: Path) -> list[str]:
    """Return the vegeta attack command (after taskset when the client is pinned); results go to its stdout."""
    argv = ["taskset", "-c", attack.client_pin] if attack.client_pin else []
    argv += [
        str(vegeta),
        "attack",
        "-targets",
        str(targets),
        "-rate",
        f"{attack.rate}/1s",
        "-duration",
        f"{attack.duration_s:g}s",
        "-timeout",
        f"{attack.timeout_s:g}s",
        "-connections",
        str(attack.connections),
        "-keepalive=true",
        f"-http2={'true' if attack.http2 else 'false'}",
    ]
    if attack.url.startswith("https://"):
        argv.append("-insecure")  # the run's own self-signed certificate, as wrk and curl -k take it
    if urlsplit(attack.url).hostname == LOOPBACK:
        argv += ["-laddr", LOOPBACK_SOURCE]
    if attack.max_connections is not None:
        argv += ["-max-connections", str(attack.max_connections)]
    if attack.expect_body_bytes is not None:
        argv += ["-max-body", str(attack.expect_body_bytes + 1)]
    return argv


def generator_threads(attack: Attack) -> int:
    """Return the CPUs vegeta may run on (its GOMAXPROCS is runtime.NumCPU(): those of its affinity)."""
    return len(parse_cpu_list(attack.client_pin, "--pin-client")) if attack.client_pin else cpu_count()


def measure_rate(
    vegeta: str | Path,
    attack: Attack,
    run_dir: Path,
    work_dir: Path,
    stem: str,
    ids: dict,
    servers: dict | None = None,
    pinning: dict | None = None,
    snapshot: Callable[[], dict] | None = None,
    target: tuple[int, int | None] | None = None,
) -> RateRun:
    """Run one fixed-rate measurement; keep <stem>.vegeta.csv.gz and <stem>.cpu.json in run_dir (see the module's docstring).

    servers: the pass's PIDs as in the manifest ({"go": pid, "nginx": pid, ...}) whose CPU
    time is read around the attack; ids: the measurement's identity for the .cpu.json.
    With --server-host, snapshot reads them on the target (target.TargetShell.snapshot)
    and target is its (clock ticks per second, logical cores), as for wrk (cpu.cpu_record).
    """
    targets, gob, err = (work_dir / f"{stem}.{kind}" for kind in ("targets", "vegeta.gob", "vegeta.err"))
    targets.write_text(attack.target)
    argv = attack_argv(vegeta, attack, targets)
    if snapshot is None:
        pids = server_pids(servers or {})
        snapshot = lambda: cpu_snapshot(pids)  # noqa: E731
    before = snapshot()
    started = now_ms()
    attacked = run_measured(argv, gob, err)
    ended = now_ms()
    after = snapshot()
    common = {
        "command": " ".join(argv),
        "exit_code": attacked.status,
        "signal": attacked.signal,
        "started_at": iso_ms(started),
        "ended_at": iso_ms(ended),
        "generator_cpu_s": round(attacked.user_s + attacked.system_s, 3),
        "wall_s": attacked.wall_s,
    }
    results = run_dir / f"{stem}{SUFFIX}"
    try:
        if attacked.signal is not None:
            return RateRun(None, None, problem="interrupted", **common)
        problem = encode_csv_gz(vegeta, gob, results) if gob.stat().st_size else "vegeta wrote no results"
        if problem and attacked.status:
            problem = f"vegeta attack exit {attacked.status}: {last_words(err) or problem}"
        if problem:
            return RateRun(None, None, problem=problem, **common)
        usage = {
            "user_s": round(attacked.user_s, 3),
            "system_s": round(attacked.system_s, 3),
            "pids": [attacked.pid],
            "threads": generator_threads(attack),
        }
        cpu_file = run_dir / f"{stem}.cpu.json"
        write_json_atomic(cpu_file, cpu_record({"file": results.name, **ids}, before, after, usage, attacked.wall_s, pinning, target))
        return RateRun(results.name, cpu_file.name, problem=None, **common)
    finally:
        for path in (targets, gob, err):
            path.unlink(missing_ok=True)


def warm_up(vegeta: str | Path, attack: Attack, work_dir: Path) -> tuple[int | None, str | None]:
    """Run a warm-up attack here with the measurement's own command, results discarded; return (signal received or None, why it failed or None)."""
    targets, results, err = (work_dir / f"warm-up.{kind}" for kind in ("targets", "gob", "err"))
    targets.write_text(attack.target)
    try:
        ran = run_measured(attack_argv(vegeta, attack, targets), results, err)
        return ran.signal, (f"vegeta exit {ran.status}: {last_words(err)}" if ran.status and ran.signal is None else None)
    finally:
        for path in (targets, results, err):
            path.unlink(missing_ok=True)


def encode_csv_gz(vegeta: str | Path, gob: Path, out: Path) -> str | None:
    """Write `vegeta encode --to csv gob`, gzip'd, to out (atomically); return why not, or None when written."""
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    err = gob.with_name(gob.name + ".encode-err")
    try:
        with (
            open(tmp, "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as packed,
            open(err, "wb") as stderr,
        ):
            encoder = subprocess.Popen([str(vegeta), "encode", "--to", "csv", str(gob)], stdout=subprocess.PIPE, stderr=stderr)
            shutil.copyfileobj(encoder.stdout, packed, CHUNK)
            encoder.stdout.close()
            status = encoder.wait(timeout=ENCODE_TIMEOUT_S)
        if status != 0:
            return f"vegeta encode exit {status}: {last_words(err)}"
        os.replace(tmp, out)
        return None
    except (OSError, subprocess.SubprocessError) as exc:
        return f"could not encode the results: {exc}"
    finally:
        tmp.unlink(missing_ok=True)
        err.unlink(missing_ok=True)


def last_words(path: Path, limit: int = 300) -> str:
    """Return the end of a command's stderr file on one line ('' when it has none)."""
    try:
        return " ".join(path.read_text(errors="replace").split())[-limit:]
    except OSError:
        return ""
