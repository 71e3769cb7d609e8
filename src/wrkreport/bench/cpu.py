"""CPU: the PIDs of a pass, their CPU time from /proc, wrk run and timed, the .cpu.json record."""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.cpucost import ms_per_1k_requests
from ..core.setups import APP_PROCESSES, CPU_PROCESSES, FRONT_ENDS, SETUP_BY_ID, split_twin
from .profiles import SCHEMA


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
    return {
        name: ms_per_1k_requests(usage["user_s"] + usage["system_s"], requests)
        for name, usage in record["processes"].items()
        if usage is not None and usage["user_s"] is not None and usage["system_s"] is not None  # a client's wrk CPU unread: null
    }


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
    """Return the PIDs whose CPU time counts per server: go and fasthttp as started; nginx's
    master and node's process with their children (nginx's workers, node's cluster workers);
    the app's and each other front end's whole process group (--app; HAProxy, Caddy, Apache httpd); servers not in the pass are left out."""
    found = {}
    for name in ("go", "fasthttp"):
        if pids.get(name):
            found[name] = [pids[name]]
    for name in ("nginx", "node"):
        if pids.get(name):
            found[name] = [pids[name], *child_pids(pids[name], proc)]
    if pids.get("app"):  # --app: every process of its process group, however deep (a server's worker processes)
        found["app"] = group_pids(pids["app"], proc)
    for name in FRONT_ENDS:  # started in a process group of its own: every process and thread group it runs (Apache's children)
        if pids.get(name):
            found[name] = group_pids(pids[name], proc)
    return found


def group_pids(pgid: int, proc: Path = Path("/proc")) -> list[int]:
    """Return the PIDs of process group pgid (an app or a front end, started in a group of its own, and every process it started), pgid first."""
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = stat_fields((entry / "stat").read_text())
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid):  # proc(5) field 5: the process group ID
            found.append(int(entry.name))
    return sorted(found, key=lambda pid: (pid != pgid, pid))


def pids_for(pids: dict, setup: str) -> dict:
    """Return the pass's PIDs as a measurement of setup counts them: a --variant twin's nginx is the variant's master and workers,
    and with --app-b a twin's app is the second build's session.

    The other nginx (and app) is idle meanwhile and left out, so a twin's and its original's
    server CPU per request each count one nginx and one app.
    """
    pids = app_pids_for(pids, setup)
    if split_twin(setup)[1] is None:
        return pids
    app = {"app": pids["app_b"]} if pids.get("app_b") else {}
    return {**pids, "nginx": pids.get("variant_nginx"), "nginx_workers": list(pids.get("variant_nginx_workers") or []), **app}


def app_pids_for(pids: dict, setup: str) -> dict:
    """Return the pass's PIDs with "app" the session of the app process that serves setup: nginx-app-unix's is --app-unix's.

    The other app processes are idle meanwhile and left out, so each app setup's server CPU
    per request counts nginx (if in front) and the one app process it talks to; a setup
    serving no app counts none.
    """
    known = SETUP_BY_ID.get(setup)
    serving = known.app_process if known is not None else None
    if serving is None and not any(name in APP_PROCESSES for name in pids):
        return pids  # no app in the run: the pass's PIDs as they are
    kept = {name: pid for name, pid in pids.items() if name not in APP_PROCESSES}
    if serving and pids.get(serving):
        kept["app"] = pids[serving]
    return pids if kept == pids else kept


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


def cpu_record(
    measurement: dict,
    before: dict,
    after: dict,
    wrk: dict,
    wall_s: float,
    pinning: dict | None,
    target: tuple[int, int | None] | None = None,
) -> dict:
    """Return the .cpu.json of one measurement (docs/raw-format.md) from its two snapshots.

    target: (clock ticks per second, logical cores) of the machine the snapshots were read
    on when it is the --server-host target; the record then says `"host": "target"`.
    """
    ticks_per_s, cores = target if target else (os.sysconf("SC_CLK_TCK"), os.cpu_count())
    processes: dict[str, dict | None] = {
        name: None for name in CPU_PROCESSES if name not in ("app", *FRONT_ENDS)
    }  # those only in a run with them
    for name in after:
        processes[name] = cpu_delta(before.get(name, {}), after[name], ticks_per_s)
    processes["wrk"] = wrk
    return {
        "schema": SCHEMA,
        **measurement,
        "wall_s": round(wall_s, 3),
        "clock_ticks_per_s": ticks_per_s,
        "logical_cores": cores,
        "processes": processes,
        "pinning": pinning,
        **({"host": "target"} if target else {}),
    }


def pinning_of(parameters: dict, variant: dict | None = None) -> dict | None:
    """Return the manifest's pinning as {'client', 'server'}, or None when nothing is pinned.

    variant: the manifest's `variant` for a twin's measurement; its nginx's own CPUs, when
    they differ from the servers', are added as 'variant_nginx'.
    """
    client, server = parameters.get("pin_client"), parameters.get("pin_server")
    nginx = (variant or {}).get("pin_server")
    found = {"client": client, "server": server} if client or server or nginx else None
    if found is not None and nginx and nginx != server:
        found["variant_nginx"] = nginx
    return found


@dataclass(frozen=True)
class Measured:
    """How a measured command (wrk) ended."""

    status: int  # its exit status; 128 + N when it died of signal N
    pid: int | None  # None: not started (a signal came first)
    user_s: float  # its own CPU time, from the rusage of wait4
    system_s: float
    wall_s: float
    signal: int | None  # the last SIGINT/SIGTERM received meanwhile (passed on to it), or None


def exit_status(wait_status: int) -> int:
    """Return a wait status as the shell reports it: the exit code, or 128 + the signal that ended the process."""
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code


def run_measured(argv: list[str], stdout: Path, stderr: Path, env: dict[str, str] | None = None) -> Measured:
    """Run argv (wrk) with its output in files and env added to the environment, passing SIGINT and SIGTERM on to it."""
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
            child.append(os.posix_spawnp(argv[0], argv, {**os.environ, **(env or {})}, file_actions=file_actions))
            if received:
                os.kill(child[0], received[-1])
            _, status, rusage = os.wait4(child[0], 0)
            wall_s = time.monotonic() - started
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return Measured(
        status=exit_status(status),
        pid=child[0],
        user_s=rusage.ru_utime,
        system_s=rusage.ru_stime,
        wall_s=wall_s,
        signal=received[-1] if received else None,
    )
