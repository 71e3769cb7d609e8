#!/usr/bin/env python3
"""Time wrk on several clients (--client-hosts) on the test lab's hosts; print figures, assert nothing.

Usage (as root, like the lab tests): python benchmarks/clients.py [--measurements 6]

Makes a tests/netlab.py lab (host-2 and host-3 the clients, gohello in the controller
namespace behind tests/tcp_relay.py, as tests/test_driver_clients.py does with tests/helpers.py's Bench), then:
1. whether a remote wrk outlives its ssh session (the reason clients are killed by PID);
2. through one `serve` helper, as run_bench.sh drives it: MEASUREMENTS measurements of 1 s
   with one remote client, then with two, printing the gap between measurements
   (gaps_s: the last wrk ending to the first of the next starting: the helper's
   bookkeeping and one line each way to every client's agent, whose ssh session stays
   open for the whole serve) and the clients' start skew (their own clocks; one kernel
   here, so no clock offset). A new ssh session per measurement ran the login shell's rc
   files (root's ~/.bashrc here: 0.2-0.7 s), which was most of the gap before the agents;
3. how long `measure` takes to stop after SIGINT with two clients.
Run by hand; machines are noisy, so the test suite never asserts on these numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import netlab  # noqa: E402
from helpers import Bench  # noqa: E402
from wrkreport.bench.remote_clients.state import load_clients, save_clients  # noqa: E402
from wrkreport.bench.values import parse_iso  # noqa: E402


def outlives_session(bench: Bench) -> str:
    """Start wrk over a session of the master, kill the local ssh, report whether wrk still runs there."""
    host = bench.clients[0]
    ssh = subprocess.Popen(
        bench.lab.in_controller("ssh", *bench.ssh_options(), "--", host.ssh, f"wrk -t1 -c10 -d20s {bench.url}"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not bench.wrk_pids()[host.name] and time.monotonic() < deadline:
        time.sleep(0.05)
    ssh.kill()
    ssh.wait()
    time.sleep(1.0)
    left = bench.wrk_pids()[host.name]
    for pid in left:
        bench.lab.ssh(host, f"kill -TERM {pid}")
    return f"still running 1 s after its ssh session was killed (pid {left[0]}): killed by PID" if left else "ended with its ssh session"


def serve(bench: Bench, run: Path, commands: list[list[str]]) -> list[int]:
    """Send commands to one `serve` helper (run_bench.sh's protocol); return their statuses."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        bench.lab.in_controller(sys.executable, "-m", "wrkreport.bench", "serve", "--run", str(run)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    data = b"".join(b"".join(a.encode() + b"\0" for a in c) + b"\x1e\0" for c in commands)
    out, _ = proc.communicate(data, timeout=600)
    return [int(line.split()[1]) for line in out.decode().splitlines() if line.startswith("@@done ")]


def series(bench: Bench, tmp: Path, hosts: int, count: int) -> None:
    """Run count measurements with the first `hosts` clients through one serve; print gaps and skews."""
    work = tmp / f"{hosts}-clients"
    work.mkdir()
    run, state = bench.prepared_run(work)
    full = load_clients(state)
    one = work / "state-used.json"
    full.clients = full.clients[:hosts]
    save_clients(one, full)
    commands = [bench.measure(run, one, k, work)[:1] + bench.measure(run, one, k, work)[3:] for k in range(1, count + 1)]
    started = time.monotonic()
    statuses = serve(bench, run, commands + [["finish", "--status", "complete"]])
    wall = time.monotonic() - started
    bench.helper("clients-down", "--state", str(state))
    manifest = json.loads((run / "manifest.json").read_text())
    gaps = manifest.get("gaps_s") or {}
    skews = []
    for m in manifest["measurements"]:
        starts = [parse_iso(c["started_at"]) for c in m.get("clients", [])]
        if len(starts) > 1:
            skews.append((max(starts) - min(starts)).total_seconds() * 1000)
    shown = f"; start skew median {statistics.median(skews):.0f} ms, max {max(skews):.0f} ms" if skews else ""
    print(
        f"{hosts} client(s): {len(manifest['measurements'])} measurements of 1 s in {wall:.1f} s (statuses {sorted(set(statuses))}); "
        f"gap median {gaps.get('median')} s, max {gaps.get('max')} s ({gaps.get('count')} gaps){shown}"
    )


def stop_time(bench: Bench, tmp: Path) -> None:
    """Print how long measure takes to stop two clients after SIGINT."""
    work = tmp / "stop"
    work.mkdir()
    run, state = bench.prepared_run(work)
    proc = bench.helper_bg(*bench.measure(run, state, 1, work, seconds=30))
    while not all(bench.wrk_pids().values()):
        time.sleep(0.02)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    print(
        f"SIGINT to measure with 2 clients: exited {proc.returncode} after {time.monotonic() - started:.2f} s, wrk left: {bench.wrk_pids()}"
    )
    bench.helper("clients-down", "--state", str(state))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measurements", type=int, default=6)
    args = parser.parse_args()
    why = netlab.missing()
    if why:
        print(f"clients.py: {why}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, netlab.Lab(count=3, hide=(str(ROOT),)) as lab:
        bench = Bench(lab, Path(tmp))
        try:
            bench.start()
            print(f"a remote wrk {outlives_session(bench)}")
            for hosts in (1, 2):
                series(bench, Path(tmp), hosts, args.measurements)
            stop_time(bench, Path(tmp))
        finally:
            bench.stop()
        print(f"left in the lab's namespaces: {lab.leftovers()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
