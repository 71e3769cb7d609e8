#!/usr/bin/env python3
"""Find vegeta's own ceiling on this machine: the highest fixed rate it holds within 1% against nginx answering by itself; print it and its CPU per 1,000 requests; assert nothing.

Usage: python benchmarks/vegeta_ceiling.py [--duration S] [--start RATE] [--gomaxprocs N] [--max-connections N] [--precision PCT]

nginx runs the `nginx-static` setup's configuration (templates/nginx.conf.tmpl, rendered
as run_bench.sh renders it, `return 200 "Hello World\\n"`) on a free loopback port, so no
Go server sets the pace: what fails first is vegeta (or the two of them sharing the
machine's cores, as in a run on one machine). Each rate is one measurement of the
fixed-rate phase (wrkreport.bench.fixed_rate: the pinned vegeta, its per-request results,
CPU from its rusage and nginx's from /proc), read back by the phase's parser and judged
by its `rate-held` check. Rates go up by half from --start until one is not held, then
the gap is halved until it is within --precision percent; each rate starts once the
TIME_WAIT sockets of the one before have cleared (a rate not held leaves tens of
thousands, holding the ephemeral ports). Prints one line per rate
(achieved rate, p50/p99, cores used by vegeta and nginx, vegeta's CPU per 1,000
requests), then the ceiling and the load average before and after: the figures depend on
what else runs, so the test suite never asserts on them.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wrkreport.bench.cpu import read_cpu_record
from wrkreport.bench.fixed_rate import Attack, measure_rate
from wrkreport.bench.machine import command_output
from wrkreport.bench.nginx import nginx_flags, nginx_values, render_template
from wrkreport.bench.vegeta_build import VEGETA_VERSION, build_vegeta
from wrkreport.core.cpucost import ms_per_1k_requests
from wrkreport.core.rate_checks import rate_held_check
from wrkreport.parsers.vegeta import read_vegeta_file

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "templates" / "nginx.conf.tmpl"
BODY_BYTES = 12
SETTLED_TIME_WAIT = 2000


def free_port() -> int:
    """Return a loopback port nothing listens on (the kernel's pick)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_nginx_static(work: Path, gomaxprocs: int) -> tuple[subprocess.Popen, str]:
    """Render nginx-static's configuration into work and start nginx (worker_processes = gomaxprocs); return it and its URL."""
    port = free_port()
    nginx = "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else "nginx"
    manifest = {"nginx_V": command_output([nginx, "-V"]) or "", "parameters": {"ports": {"nginx-static": port}, "body_bytes": BODY_BYTES}}
    prefix = work / "nginx"
    (prefix / "temp").mkdir(parents=True)
    values = nginx_values(manifest, str(prefix), str(work / "go.sock"), None, None, 20000)
    text = render_template(TEMPLATE.read_text(), ["nginx-static"], values, nginx_flags(manifest))
    text = text.replace("worker_processes auto;", f"worker_processes {gomaxprocs};")  # as the driver's GOMAXPROCS pass
    (work / "nginx.conf").write_text(text)
    log = work / "nginx-error.log"
    proc = subprocess.Popen(
        [nginx, "-c", str(work / "nginx.conf"), "-p", f"{prefix}/", "-e", str(log), "-g", f'error_log "{log}" crit;'],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 10
    while subprocess.run(["curl", "-s", "-o", "/dev/null", url]).returncode != 0:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"vegeta_ceiling.py: nginx did not start: {log.read_text(errors='replace')[-300:] if log.exists() else ''}")
        time.sleep(0.1)
    return proc, url


def time_wait_sockets() -> int:
    """Return how many TCP sockets of this machine are in TIME_WAIT (/proc/net/tcp and tcp6, state 06)."""
    count = 0
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as table:
                count += sum(1 for row in table if row.split()[3:4] == ["06"])
        except OSError:
            pass
    return count


def settle(limit: int = SETTLED_TIME_WAIT, timeout_s: float = 180) -> float:
    """Wait until the TIME_WAIT sockets left by the last rate fall under limit (or timeout_s); return the seconds waited.

    A rate vegeta cannot hold makes it open a connection per waiting request: tens of
    thousands, which then hold the loopback's ephemeral ports in TIME_WAIT for a minute, and
    the next rate, even a low one, fails to connect. Each rate starts from a quiet machine.
    """
    began = time.monotonic()
    while time_wait_sockets() > limit and time.monotonic() - began < timeout_s:
        time.sleep(2)
    return time.monotonic() - began


def measure(vegeta: Path, url: str, rate: int, duration_s: float, work: Path, nginx_pid: int, max_connections: int | None) -> dict:
    """Run one fixed-rate measurement against nginx; return its figures."""
    stem = f"nginx-static.ceiling.rate-{rate}"
    ran = measure_rate(
        vegeta,
        Attack(url=url, rate=rate, duration_s=duration_s, expect_body_bytes=BODY_BYTES, max_connections=max_connections),
        work,
        work,
        stem,
        {"setup": "nginx-static"},
        {"nginx": nginx_pid},
    )
    if ran.problem:
        raise SystemExit(f"vegeta_ceiling.py: {rate} req/s: {ran.problem}")
    result = read_vegeta_file(work / ran.file, offered_rps=rate)
    cpu = read_cpu_record(work, ran.cpu_file)
    (work / ran.file).unlink()
    vegeta_s = cpu["processes"]["wrk"]["user_s"] + cpu["processes"]["wrk"]["system_s"]
    nginx = cpu["processes"]["nginx"] or {"user_s": 0.0, "system_s": 0.0}
    held = rate_held_check(result)
    return {
        "rate": rate,
        "held": held.status == "pass",
        "achieved": result.achieved_rps,
        "errors": result.errors,
        "p50_ms": result.p50_ms,
        "p99_ms": result.p99_ms,
        "vegeta_cores": vegeta_s / cpu["wall_s"],
        "nginx_cores": (nginx["user_s"] + nginx["system_s"]) / cpu["wall_s"],
        "vegeta_ms_per_1k": ms_per_1k_requests(vegeta_s, result.requests),
        "first_error": result.error_messages[0][0] if result.error_messages else None,
        "time_wait_after": time_wait_sockets(),
    }


def line(m: dict) -> str:
    """Return one measurement as a line."""
    return (
        f"{m['rate']:>7,} req/s  {'held' if m['held'] else 'NOT held':8}  achieved {m['achieved']:>9,.1f}  errors {m['errors']:>5}  "
        f"p50 {m['p50_ms']:7.3f} ms  p99 {m['p99_ms']:8.3f} ms  vegeta {m['vegeta_cores']:.2f} cores  nginx {m['nginx_cores']:.2f} cores  "
        f"vegeta CPU {m['vegeta_ms_per_1k']:6.1f} ms per 1,000 requests  TIME_WAIT after {m['time_wait_after']:,}"
        + (f"\n{'':17}first error: {m['first_error']}" if m["first_error"] else "")
    )


def search(probe, start: int, precision_pct: float) -> tuple[dict | None, list[dict]]:
    """Return (the highest measurement held, every measurement) of the search: up by half until a miss, then bisect."""
    seen: list[dict] = []
    held, missed, rate = None, None, start
    while missed is None:
        m = probe(rate)
        seen.append(m)
        if m["held"]:
            held, rate = m, int(rate * 1.5)
        else:
            missed = rate
    low = held["rate"] if held else 0
    while missed - low > low * precision_pct / 100 and missed - low > 1:
        rate = (low + missed) // 2
        m = probe(rate)
        seen.append(m)
        if m["held"]:
            held, low = m, rate
        else:
            missed = rate
    return held, seen


def main() -> int:
    """Find and print vegeta's ceiling against nginx-static."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per rate (5)")
    parser.add_argument("--start", type=int, default=5000, help="the first rate, req/s (5000)")
    parser.add_argument("--gomaxprocs", type=int, default=os.cpu_count(), help="nginx worker processes (the CPUs)")
    parser.add_argument("--max-connections", type=int, help="vegeta -max-connections (default: none, vegeta's)")
    parser.add_argument("--precision", type=float, default=5.0, help="stop when the held and missed rates are within this percent (5)")
    args = parser.parse_args()
    vegeta = build_vegeta(say=lambda text: print(text, file=sys.stderr))
    before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="wrkreport-vegeta-ceiling-") as tmp:
        proc, url = start_nginx_static(Path(tmp), args.gomaxprocs)
        try:

            def probe(rate: int) -> dict:
                waited = settle()
                if waited > 1:
                    print(f"{'':17}(waited {waited:.0f} s for the TIME_WAIT sockets of the last rate to clear)", flush=True)
                m = measure(vegeta, url, rate, args.duration, Path(tmp), proc.pid, args.max_connections)
                print(line(m), flush=True)
                return m

            limit = f", -max-connections {args.max_connections}" if args.max_connections else ", no connection limit"
            print(
                f"vegeta {VEGETA_VERSION} against nginx-static ({url}, {args.gomaxprocs} workers), {args.duration:g} s per rate{limit}, on {os.cpu_count()} CPUs"
            )
            held, _ = search(probe, args.start, args.precision)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if held is None:
        print(f"ceiling: below {args.start:,} req/s (no rate held; try --start lower)")
    else:
        print(
            f"ceiling: {held['rate']:,} req/s held within 1% (achieved {held['achieved']:,.1f}); there vegeta used {held['vegeta_cores']:.2f} cores, "
            f"{held['vegeta_ms_per_1k']:.1f} ms of CPU per 1,000 requests (nginx {held['nginx_cores']:.2f} cores)"
        )
    print(f"load average {before} before, {after} after ({os.cpu_count()} CPUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
