"""Plain helpers shared by the test files: fixture paths, free ports, run_bench.sh, the lab, the driver's helper, fixed-rate runs.

No test file imports from another test file: what two of them share is here (fixtures are in
conftest.py; tests/README.md lists the other helper modules).
"""

from __future__ import annotations

import contextlib
import copyreg
import csv
import fcntl
import gzip
import hashlib
import html
import io
import json
import math
import os
import pickle
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

import netlab
from wrkreport.bench.cpu import stat_fields
from wrkreport.bench.nginx import nginx_flags, nginx_sections, nginx_values, render_template
from wrkreport.bench.parameters import build_plan
from wrkreport.bench.remote_clients.agent import AGENT
from wrkreport.core.rate_result import RateResult, ranked
from wrkreport.report import build
from wrkreport.runs.rate_measurements import read_rate_measurements
from wrkreport.runs.sidecars import read_manifest

# --- Paths: the repository and the fixtures ----------------------------------------------------

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
WRK = FIXTURES / "wrk"
CAPTURED = WRK / "captured"
ARTICLE = WRK / "article-2013"
RUNS = FIXTURES / "runs"


# --- Real servers: tools and free loopback ports ---------------------------------------------


def nginx_path() -> str | None:
    """Return nginx's path (Debian puts it in /usr/sbin, often not on a user's PATH)."""
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)


def missing_tools(*names: str) -> list[str]:
    """Return the names of the commands that are not installed."""
    return [name for name in names if not (nginx_path() if name == "nginx" else shutil.which(name))]


def port_is_free(port: int, address: str = "127.0.0.1") -> bool:
    """Return True when nothing holds address:port (a listener there or on 0.0.0.0)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((address, port))
        except OSError:
            return False
    return True


SESSION_VARIABLE = netlab.SESSION_VARIABLE  # set by ./run_tests.sh, else by conftest.py's pytest_configure in the session's first process


def port_reservations() -> Path | None:
    """Return the file where every process of this test session records the ports it took, or None outside a session.

    The session's first pytest process names it (conftest.pytest_configure) before pytest-xdist
    starts its workers, which inherit the name: a port one worker reserved is never handed to
    another, even before its server binds it (a probe alone cannot see that). A test session
    started inside another (the interrupted ./run_tests.sh test) shares its parent's file."""
    session = os.environ.get(SESSION_VARIABLE, "")
    return Path("/tmp") / f"wrkreport-test-ports.{session}" if session.isalnum() else None


def reserve_ports(choose, used: set[int]) -> dict[str, int]:
    """Return choose(taken) -- a {name: port} block avoiding the ports in taken -- and record its ports as taken.

    taken is used plus, within a test session, every port any of its processes reserved
    (port_reservations), read and written under an exclusive lock."""
    path = port_reservations()
    if path is None:
        block = choose(set(used))
    else:
        with open(path, "a+") as shared:
            fcntl.flock(shared, fcntl.LOCK_EX)
            shared.seek(0)
            block = choose(used | {int(word) for word in shared.read().split()})
            shared.write("".join(f"{port}\n" for port in block.values()))
            shared.flush()
    used.update(block.values())
    return block


def free_port_block(
    names: tuple[str, ...], low: int, high: int, used: set[int] | None = None, address: str = "127.0.0.1", offsets: tuple[int, ...] = ()
) -> dict[str, int]:
    """Return consecutive ports in [low, high) free on address, named by names, none reserved by this session (reserve_ports).

    offsets: each port + each offset must be free and is reserved too (a --variant or --app-b
    twin listens at its original's port + 100); the block returned names only names' ports.
    Keep [low, high) below the kernel's ephemeral range (32768 up): a port there can be
    taken by any outgoing connection between the probe and the server's bind."""
    assert high <= 32768, f"{low}-{high - 1} reaches into the ephemeral port range (32768 up)"

    def choose(taken: set[int]) -> dict[str, int]:
        for _ in range(200):
            start = random.randrange(low, high - len(names))
            block = {f"{name}+{offset}" if offset else name: start + i + offset for i, name in enumerate(names) for offset in (0, *offsets)}
            if not taken.intersection(block.values()) and all(port_is_free(p, address) for p in block.values()):
                return block
        raise RuntimeError(f"no free block of {len(names)} ports in {low}-{high - 1}")

    block = reserve_ports(choose, used if used is not None else set())
    return {name: block[name] for name in names}


# --- run_bench.sh end to end (tests/test_driver*.py): its ports, environment and leftovers -----------

SCRIPT = REPO / "run_bench.sh"
# The ports of the default four setups and Go's FastCGI port, then those of the setups
# chosen with --setups (the manifest lists these only when they are chosen).
BASE_PORT_NAMES = ("go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "go-fcgi-tcp")
PORT_NAMES = (*BASE_PORT_NAMES, "nginx-http-unix", "go-fasthttp", "nginx-static")
USED_PORTS: set[int] = set()


DRIVER_MISSING = missing_tools("nginx", "wrk", "curl", "go")
needs_tools = pytest.mark.skipif(bool(DRIVER_MISSING), reason=f"needs nginx, wrk, curl and go; missing: {', '.join(DRIVER_MISSING)}")
slow = [pytest.mark.slow, needs_tools]


def free_ports() -> dict[str, int]:
    """Return a free block of eight ports in 18100-18999, none used by an earlier test here."""
    return free_port_block(PORT_NAMES, 18100, 19000, USED_PORTS)


def port_args(ports: dict[str, int]) -> list[str]:
    return [arg for name, port in ports.items() for arg in ("--port", f"{name}={port}")]


def default_sigint() -> None:
    """Give the script SIGINT back (run in the child before exec): a suite started in the
    background (`cmd &`, nohup) ignores SIGINT, and bash cannot trap a signal ignored on entry."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def script_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    env["TMPDIR"] = str(tmp)
    env["BENCH_SLO"] = "off"  # no capacity search (about a minute more per run) unless a test asks for it: --slo beats BENCH_SLO
    # no warm-up (1 s of wrk per setup, block and level: 20 s of a quick run of front ends at two GOMAXPROCS) unless a test
    # asks for one (--warmup beats BENCH_WARMUP): what a test judges of a warm-up is in the tests that pass it
    env["BENCH_WARMUP"] = "0"
    return env


def run_script(args: list[str], tmp: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=script_env(tmp), timeout=timeout, check=False)


def copy_of_driver(dest: Path) -> Path:
    """Copy what run_bench.sh runs from its checkout (the script, src/driver, src/wrkreport, templates) into dest, readable
    by every user, and return the copy's run_bench.sh: for a test that runs the script as another user, who may not
    reach the checkout itself (a clone under a mode-700 home)."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("src/driver", "src/wrkreport", "templates"):
        shutil.copytree(REPO / part, dest / part, ignore=skip)
    shutil.copy2(SCRIPT, dest / SCRIPT.name)
    for path in (dest, *dest.rglob("*")):
        path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
    return dest / SCRIPT.name


def processes_mentioning(needles: list[str], tmp: Path | None = None) -> list[str]:
    """Return 'pid: cmdline' of every process whose command line contains one of needles; with tmp, only those a run of
    this test started (TMPDIR=tmp in its environment, as script_env sets it) or that name tmp: a program every test runs
    (tests/app_server.py) is then this test's alone, so tests that run it can run side by side."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if not any(needle in cmdline for needle in needles):
                continue
            if (
                tmp is not None
                and str(tmp) not in cmdline
                and f"TMPDIR={tmp}".encode() not in (entry / "environ").read_bytes().split(b"\0")
            ):
                continue  # another test's
        except OSError:
            continue
        found.append(f"{entry.name}: {cmdline}")
    return found


def members(index: int, of: int) -> dict[int, str]:
    """Return {pid: cmdline} of every process still running (not a zombie) whose /proc/PID/stat field index (after the name:
    state, ppid, pgrp, session) is of."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = stat_fields((entry / "stat").read_text())
            if fields[index] == str(of) and fields[0] != "Z":
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
    return found


def group_members(pgid: int) -> dict[int, str]:
    """Return {pid: cmdline} of every process of process group pgid still running (an app's or a front end's, here)."""
    return members(2, pgid)


def session_members(sid: int) -> dict[int, str]:
    """Return {pid: cmdline} of every process of session sid still running (an app's on a --server-host target, started with setsid)."""
    return members(3, sid)


def scheduling_group(pid: int) -> tuple[str, str | None]:
    """Return (pid's session ID, its autogroup as /proc/PID/autogroup names it, None without autogroups: a kernel built without them, or
    with them off, where the file reads empty): where the scheduler groups it."""
    session = stat_fields(Path(f"/proc/{pid}/stat").read_text())[3]
    try:
        autogroup = Path(f"/proc/{pid}/autogroup").read_text().split()  # "/autogroup-123 nice 0"; empty where autogroups are off
    except OSError:  # a kernel built without them
        autogroup = []
    return session, autogroup[0] if autogroup else None


def assert_in_its_own_group_beside(pid: int, beside: int, who: str) -> None:
    """pid leads a process group of its own (stopped whole), in the session and autogroup of beside (the script, or Go): not setsid's own
    autogroup, which the scheduler would give as much CPU as wrk, nginx and Go together."""
    assert pid in group_members(pid), f"{who} {pid} leads no process group of its own"
    assert scheduling_group(pid) == scheduling_group(
        beside
    ), f"{who} {pid}: {scheduling_group(pid)}, not {beside}'s {scheduling_group(beside)}"


def alive_as(pid: int | None, marker: str) -> bool:
    """Return True if pid runs and its command line contains marker (guards against PID reuse)."""
    if pid is None:
        return False
    try:
        return marker in Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False


def assert_nothing_left(manifest: dict, ports: dict[str, int], tmp: Path) -> None:
    """No process the run started is alive, its ports are free and its work dir is gone."""
    for entry in manifest["passes"]:
        pids = entry["pids"]
        assert not alive_as(pids["go"], "gohello"), f"Go server {pids['go']} still running"
        assert not alive_as(pids.get("fasthttp"), "gofasthttp"), f"fasthttp server {pids['fasthttp']} still running"
        assert not alive_as(pids["nginx"], "nginx"), f"nginx master {pids['nginx']} still running"
        for worker in pids["nginx_workers"]:
            assert not alive_as(worker, "nginx"), f"nginx worker {worker} still running"
    needles = [f"127.0.0.1:{port}" for port in ports.values()] + [f"-http-port {ports['go-http']}", str(tmp)]
    assert processes_mentioning(needles) == []
    assert all(port_is_free(port) for port in ports.values())
    assert list(tmp.iterdir()) == [], "work dir left behind"


def latest_run(out: Path) -> tuple[Path, dict]:
    """Return the run directory out/latest points to (a relative link) and its manifest."""
    run = (out / "latest").resolve()
    assert not os.path.isabs(os.readlink(out / "latest")), "latest must be a relative symlink"
    return run, json.loads((run / "manifest.json").read_text())


def wait_for_wrk(proc: subprocess.Popen, port: int, timeout: float = 60) -> None:
    """Wait until a wrk loading 127.0.0.1:port runs (not the header check's curl), while proc, the script, still does."""
    deadline = time.monotonic() + timeout
    url = f"127.0.0.1:{port}/"
    while not [p for p in processes_mentioning([url]) if Path(p.split(": ", 1)[1].split(" ", 1)[0]).name == "wrk"]:
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, f"no wrk loading {url} started"
        time.sleep(0.02)


# --- Clients on the lab's hosts (tests/test_driver_clients*.py, benchmarks/clients.py) -------------

HIST_SCRIPT = REPO / "src" / "wrkreport" / "bench" / "histogram.lua"
HTTP_PORT, FCGI_PORT = 18180, 19101  # gohello's, in the controller namespace only


class Bench:
    """The lab, gohello and its relay in the controller namespace, and ssh masters to the two clients."""

    def __init__(self, lab: netlab.Lab, work: Path):
        self.lab, self.work = lab, work
        self.control = work / "ssh"
        self.clients = lab.hosts[1:]
        self.url = f"http://{lab.controller_address}:{HTTP_PORT}/"
        self.procs: list[subprocess.Popen] = []

    def ssh_options(self) -> list[str]:
        """Return run_bench.sh's ssh_cmd options (ControlPath in the work dir, BatchMode, -F)."""
        return [
            "-o",
            f"ControlPath={self.control}/%C",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=3",
            "-F",
            str(self.lab.ssh_config),
        ]

    def start(self) -> None:
        binary = self.work / "gohello"
        subprocess.run(
            ["go", "build", "-buildvcs=false", "-o", str(binary), "."], cwd=REPO / "src" / "gohello", check=True, capture_output=True
        )
        log = open(self.work / "gohello.log", "wb")
        self.procs.append(
            subprocess.Popen(
                self.lab.in_controller(str(binary), "-http-port", str(HTTP_PORT), "-fcgi-port", str(FCGI_PORT)),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
        relay = subprocess.Popen(
            self.lab.in_controller(
                sys.executable, str(Path(__file__).parent / "tcp_relay.py"), self.lab.controller_address, str(HTTP_PORT), str(HTTP_PORT)
            ),
            stdout=subprocess.PIPE,
        )
        self.procs.append(relay)
        assert relay.stdout.readline().strip() == b"ready"
        deadline = time.monotonic() + 10
        while b" ready" not in (self.work / "gohello.log").read_bytes():
            assert time.monotonic() < deadline, (self.work / "gohello.log").read_text()
            time.sleep(0.05)
        self.control.mkdir(mode=0o700)
        for host in self.clients:  # run_bench.sh's ssh_open
            done = subprocess.run(
                self.lab.in_controller(
                    "ssh", *self.ssh_options(), "-o", "ControlMaster=yes", "-o", "ControlPersist=no", "-f", "-N", "--", host.ssh
                ),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=30,
            )
            assert done.returncode == 0, done.stderr

    @property
    def go_pid(self) -> int:
        return self.procs[0].pid  # `ip netns exec` execs the server: its own PID

    def stop(self) -> None:
        for host in self.clients:  # run_bench.sh's ssh_close_all
            subprocess.run(
                self.lab.in_controller("ssh", *self.ssh_options(), "-O", "exit", "--", host.ssh), capture_output=True, timeout=30
            )
        for proc in reversed(self.procs):
            proc.terminate()
            proc.wait(timeout=10)

    def helper(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        return subprocess.run(
            self.lab.in_controller(sys.executable, "-m", "wrkreport.bench", *args), capture_output=True, text=True, env=env, timeout=timeout
        )

    def helper_bg(self, *args: str) -> subprocess.Popen:
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        return subprocess.Popen(
            self.lab.in_controller(sys.executable, "-m", "wrkreport.bench", *args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    def prepared_run(self, tmp_path: Path) -> tuple[Path, Path]:
        """Return (run directory with pass 1 ready, clients state file) made as run_bench.sh makes them."""
        plan = tmp_path / "plan.json"
        hosts = ",".join(h.ssh for h in self.clients)
        done = self.helper(
            "plan",
            "--root",
            str(REPO),
            "--save",
            str(plan),
            "--",
            "--quick",
            "--setups",
            "go-http",
            "--port",
            f"go-http={HTTP_PORT}",
            "--server-host",
            self.lab.hosts[0].ssh,
            "--server-address",
            self.lab.controller_address,
            "--client-hosts",
            hosts,
            "--ssh-config",
            str(self.lab.ssh_config),
            "--out",
            str(tmp_path / "raw"),
        )
        assert done.returncode == 0, done.stderr
        state = tmp_path / "clients.json"
        done = self.helper(
            "clients-preflight",
            "--plan",
            str(plan),
            "--control-path",
            f"{self.control}/%C",
            "--hist-script",
            str(HIST_SCRIPT),
            "--target",
            self.lab.controller_address,
            "--save",
            str(state),
        )
        assert done.returncode == 0, done.stderr
        run = Path(self.helper("init", "--plan", str(plan), "--command-line", "test").stdout.strip())
        # In this layer the servers run here, in the controller namespace (the plan needed --server-host for remote
        # clients); the manifest says so, as a run without a target. test_end_to_end_* runs them on the target.
        manifest = json.loads((run / "manifest.json").read_text())
        manifest["parameters"].update(server_host=None, server_address=None)
        (run / "manifest.json").write_text(json.dumps(manifest))
        assert self.helper("clients-record", "--run", str(run), "--state", str(state)).returncode == 0
        assert self.helper("pass-start", "--run", str(run), "--gomaxprocs", "1").returncode == 0
        assert self.helper("pass-ready", "--run", str(run), "--gomaxprocs", "1", "--go-pid", str(self.go_pid)).returncode == 0
        return run, state

    def wrk(self, seconds: int = 1) -> list[str]:
        return ["wrk", "--latency", "-s", str(HIST_SCRIPT), "-t2", "-c50", f"-d{seconds}s", "--timeout", "2s", self.url]

    def measure(self, run: Path, state: Path, repeat: int, tmp_path: Path, seconds: int = 1) -> list[str]:
        stem = f"go-http.gomaxprocs-1.run-{repeat}"
        return [
            "measure",
            "--run",
            str(run),
            "--gomaxprocs",
            "1",
            "--setup",
            "go-http",
            "--repeat",
            str(repeat),
            "--file",
            f"{stem}.wrk.txt",
            "--cpu-file",
            f"{stem}.cpu.json",
            "--hist-file",
            f"{stem}.hist.json",
            "--stderr",
            str(tmp_path / "wrk.stderr"),
            "--clients",
            str(state),
            "--",
            *self.wrk(seconds),
        ]

    def leftovers(self) -> dict[str, list[str]]:
        """Return lab.leftovers() without this fixture's own processes (gohello, the relay, the ssh masters)."""
        ours = {p.pid for p in self.procs}
        found = {}
        for ns, items in self.lab.leftovers().items():
            kept = [i for i in items if int(i.split()[0]) not in ours and f"ControlPath={self.control}/" not in i]
            if kept:
                found[ns] = kept
        return found

    def agent_pids(self) -> dict[str, list[int]]:
        """Return the clients' agents (sh running agent_script) in each client's namespace."""
        return {h.name: [p for p in self.lab.pids(h.netns) if netlab.command_line(p).startswith(f"sh -c # {AGENT}")] for h in self.clients}

    def wrk_pids(self) -> dict[str, list[int]]:
        """Return the wrk processes running in each client's namespace."""
        return {h.name: [p for p in self.lab.pids(h.netns) if netlab.command_line(p).startswith("wrk ")] for h in self.clients}


class Serve:
    """One `serve` helper in the controller namespace, asked one command at a time (run_bench.sh's protocol)."""

    def __init__(self, bench: Bench, run: Path):
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        self.proc = subprocess.Popen(
            bench.lab.in_controller(sys.executable, "-m", "wrkreport.bench", "serve", "--run", str(run)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )

    def send(self, command: list[str]) -> None:
        """Send one command (its arguments without --run)."""
        self.proc.stdin.write(b"".join(a.encode() + b"\0" for a in command) + b"\x1e\0")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60) -> int:
        """Return the status of the command sent, read from its `@@done STATUS` line."""
        deadline = time.monotonic() + timeout
        while True:
            assert select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))[0], "no answer from serve"
            line = self.proc.stdout.readline()
            assert line, f"serve ended: {self.proc.stderr.read().decode()}"
            if line.startswith(b"@@done "):
                return int(line.split()[1])

    def ask(self, command: list[str], timeout: float = 60) -> int:
        self.send(command)
        return self.answer(timeout)

    def close(self) -> int:
        """Close its input (it ends there) and return its exit status."""
        if self.proc.poll() is None:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def wait_for(what, timeout: float = 15) -> None:
    """Wait until what() is true."""
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# --- The driver's helper (python3 -m wrkreport.bench): its plan, nginx.conf and subcommands ---------

NGINX_TEMPLATE = REPO / "templates" / "nginx.conf.tmpl"


def plan(*argv: str, env: dict | None = None, nproc: int = 2, euid: int = 1000, cpus: frozenset | None = None) -> dict:
    """Return build_plan for these options with a fixed seed unless one is given."""
    env = {"BENCH_SEED": "7", **(env or {})}
    return build_plan(list(argv), env, Path("/repo"), nproc, euid, cpus)


def fake_nginx_V(tmp_path: Path, extra: str = "") -> str:
    """Return an `nginx -V` text whose conf-path points at a dir with a stock fastcgi_params."""
    (tmp_path / "fastcgi_params").write_text("fastcgi_param  QUERY_STRING $query_string;\n")
    return f"nginx version: nginx/1.22.1\nconfigure arguments: --conf-path={tmp_path}/nginx.conf {extra}"


def render_manifest(tmp_path: Path, *argv: str) -> dict:
    """Return a manifest of the plan of these options, with a fake `nginx -V`."""
    return {"nginx_V": fake_nginx_V(tmp_path), "parameters": plan(*argv)}


def render_with(tmp_path: Path, *argv: str) -> str:
    """Return the nginx.conf rendered for the plan of these options (its paths under /tmp/w)."""
    manifest = render_manifest(tmp_path, *argv)
    values = nginx_values(manifest, "/tmp/w/nginx", "/tmp/w/go.sock", None, None, 1024, "/tmp/w/gohttp.sock")
    return render_template(NGINX_TEMPLATE.read_text(), nginx_sections(manifest["parameters"]["setups"]), values, nginx_flags(manifest))


def run_wrkreport(*args: str) -> subprocess.CompletedProcess:
    """Run `wrkreport ARGS` in this process, through the same edge as the command (cli.main: errors to one line and an exit
    status); return its status and output as subprocess.run would. Warnings are shown on its stderr as a new process shows
    them (Python's default filters: each once per place, deprecations hidden); an exception main lets through propagates,
    so the traceback a user would see fails the test. A real process costs 0.5 s of imports; test_cli_build, test_cli_parse
    and test_report_terminal start real ones."""
    import io
    import warnings
    from contextlib import redirect_stderr, redirect_stdout
    from unittest import mock

    from wrkreport.cli import main

    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.object(sys, "argv", ["wrkreport", *args]),
        redirect_stdout(out),
        redirect_stderr(err),
        warnings.catch_warnings(record=True) as shown,
    ):
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for hidden in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.filterwarnings("ignore", category=hidden)
        try:
            main()
            status = 0
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    lines = [warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line) for w in shown]
    return subprocess.CompletedProcess(["wrkreport", *args], status, out.getvalue(), err.getvalue() + "".join(lines))


def run_helper(*args: str) -> subprocess.CompletedProcess:
    """Run `python3 -m wrkreport.bench ARGS` from this tree's src/; return the finished process, whatever its status."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "wrkreport.bench", *args], capture_output=True, text=True, env=env, check=False)


# A stand-in for wrk: prints a real wrk output and burns a little CPU.
FAKE_WRK = (
    "import os, shutil, sys, time\n"
    "end = time.process_time() + 0.2\n"
    "while time.process_time() < end: pass\n"
    "sys.stdout.write(open(sys.argv[1]).read()); print('stderr line', file=sys.stderr)\n"
    "hist = os.environ.get('WRKREPORT_HIST_FILE')\n"  # what histogram.lua's done() reads
    "if hist and len(sys.argv) > 2: shutil.copyfile(sys.argv[2], hist)\n"
)
CLIENT_1_HIST = FIXTURES / "hist" / "client-1.hist.json"  # a real histogram.lua file


def started_run(tmp_path: Path, *options: str) -> Path:
    """Return a run directory made by `plan` and `init` as the script does, with pass 1 started."""
    plan_file = tmp_path / "plan.json"
    done = run_helper("plan", "--root", str(tmp_path), "--save", str(plan_file), "--", "--out", str(tmp_path / "raw"), *options)
    assert done.returncode == 0, done.stderr
    run = Path(run_helper("init", "--plan", str(plan_file), "--command-line", "x").stdout.strip())
    assert run_helper("pass-start", "--run", str(run), "--gomaxprocs", "1").returncode == 0
    return run


# --- Fixed-rate records and run directories (real vegeta files from tests/fixtures/vegeta) ----------


def rate_result(latencies, span_s=1.0, offered=None, statuses=None, errors=0, timeouts=0, body=None, **kw) -> RateResult:
    """Return a RateResult of the given latencies (ns), all answered 200 with 12 bytes unless told otherwise; a span under 1.5 s is one second."""
    n = len(latencies)
    statuses = ((200, n - errors),) if statuses is None else statuses
    answered = sum(c for _, c in statuses)
    return RateResult(
        source="t",
        offered_rps=offered,
        requests=n,
        span_s=span_s,
        duration_s=kw.pop("duration_s", span_s + 0.001),
        statuses=statuses,
        errors=errors,
        timeouts=timeouts,
        error_messages=kw.pop("error_messages", ()),
        body_bytes=((12, answered),) if body is None else body,
        latencies_ns=tuple(sorted(latencies)),
        second_percentiles_ns=kw.pop("second_percentiles_ns", (ranked(sorted(latencies)),) if latencies and span_s < 1.5 else ()),
        **kw,
    )


VEGETA_HELD = FIXTURES / "vegeta" / "go-http.gomaxprocs-1.block-1.run-1.rate-500.vegeta.csv.gz"  # 500 req/s held, 12-byte bodies
VEGETA_BEHIND = FIXTURES / "vegeta" / "fell-behind.rate-200.vegeta.csv.gz"  # 48 req/s of 200: not held at any rate here


def rate_file_name(setup: str, block: int, rate: int = 500) -> str:
    """Return the file name the driver gives this setup's fixed-rate measurement in this block (GOMAXPROCS=1)."""
    return f"{setup}.gomaxprocs-1.block-{block}.run-{block}.rate-{rate}.vegeta.csv.gz"


def rate_entry(setup: str, block: int, rate: int = 500, **extra) -> dict:
    """Return its manifest entry (fixed_rate_measurements), with extra fields."""
    return {
        "setup": setup,
        "gomaxprocs": 1,
        "block": block,
        "repeat": block,
        "rate": rate,
        "file": rate_file_name(setup, block, rate),
        **extra,
    }


def shifted_vegeta(by_us: int) -> bytes:
    """Return the real 500 req/s fixture with every latency by_us microseconds longer (the same starts: still held)."""
    rows = list(csv.reader(io.StringIO(gzip.decompress(VEGETA_HELD.read_bytes()).decode())))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([r[:2] + [str(int(r[2]) + by_us * 1000)] + r[3:] for r in rows])
    return gzip.compress(out.getvalue().encode())


def make_rate_run(run_dir: Path, entries: list, files: dict[str, Path | bytes]) -> Path:
    """Write a run directory: a manifest listing entries as fixed_rate_measurements, and files (name -> fixture or bytes)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    for file_name, source in files.items():
        (run_dir / file_name).write_bytes(source if isinstance(source, bytes) else source.read_bytes())
    manifest = {"parameters": {"body_bytes": 12, "setups": ["go-http", "nginx-http"]}, "fixed_rate_measurements": entries}
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    return run_dir


def read_rate_run(run_dir: Path):
    """Return (measurements, every problem: the manifest's and the measurements')."""
    problems: list = []
    manifest = read_manifest(run_dir, problems)
    found, rate_problems = read_rate_measurements(run_dir, manifest)
    return found, problems + rate_problems


def problem_messages(problems) -> list[str]:
    """Return the problems' one-line messages."""
    return [p.message for p in problems]


# --- Runs measured in blocks: default-2cores' real outputs renamed as a blocked run names them ------

BLOCKS_SOURCE = RUNS / "default-2cores"  # real wrk outputs: 4 setups x GOMAXPROCS 1, 2 x 5 repeats
BLOCKS_SETUPS = ("go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix")
BLOCK_OF_ROUND = {1: 1, 2: 1, 3: 1, 4: 2, 5: 2}  # two server starts: rounds 1-3 (a median of 3), 4-5


def block_files(block_in_name: bool = True) -> dict:
    """Return default-2cores' wrk outputs and header captures, renamed as a blocked run names them."""
    files = {}
    for gomaxprocs in (1, 2):
        for setup in BLOCKS_SETUPS:
            files[f"{setup}.gomaxprocs-{gomaxprocs}.headers.txt"] = BLOCKS_SOURCE / f"{setup}.gomaxprocs-{gomaxprocs}.headers.txt"
            for k, b in BLOCK_OF_ROUND.items():
                name = (
                    f"{setup}.gomaxprocs-{gomaxprocs}.block-{b}.run-{k}.wrk.txt"
                    if block_in_name
                    else f"{setup}.gomaxprocs-{gomaxprocs}.run-{k}.wrk.txt"
                )
                files[name] = BLOCKS_SOURCE / f"{setup}.gomaxprocs-{gomaxprocs}.run-{k}.wrk.txt"
    return files


# --- Runs with a latency objective: quick-rates-slo and variants of it made in a test's tmp_path ------

SLO_RUN = RUNS / "quick-rates-slo"  # a real quick run (4 rates x 4 setups x GOMAXPROCS 1, 2, one block) with parameters.slo added
SEARCH_RUN = RUNS / "capacity-delay"  # a real run of the capacity search: 3 blocks, p99 within 10 ms, go-http and nginx-http
CAPACITY_LADDER = RUNS / "capacity-ladder"  # the search since issue 42: a bisection, then 3 ladder blocks, then the checks


def slo_variant(dest: Path, slo: object = "keep", plan: list[int] | None = None, two_blocks: bool = False) -> Path:
    """Copy quick-rates-slo to dest and change its manifest: slo (None: --slo off; "drop": no key), the planned rates, or two blocks.

    plan: the rates of fixed_rate_plan at every GOMAXPROCS (the others become search steps).
    two_blocks: the GOMAXPROCS=2 fixed-rate measurements become block 2 (run 2) of GOMAXPROCS=1,
    their files renamed: real vegeta files, arranged as a two-block phase at one GOMAXPROCS.
    """
    shutil.copytree(SLO_RUN, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    if slo == "drop":
        del manifest["parameters"]["slo"]
    elif slo != "keep":
        manifest["parameters"]["slo"] = slo
    if plan is not None:
        for entry in manifest["fixed_rate_plan"]:
            entry["rates"] = list(plan)
    if two_blocks:
        manifest["fixed_rate_plan"] = [p for p in manifest["fixed_rate_plan"] if p["gomaxprocs"] == 1]
        for entry in manifest["fixed_rate_measurements"]:
            if entry["gomaxprocs"] != 2:
                continue
            for key in ("file", "cpu_file"):
                new = entry[key].replace(".gomaxprocs-2.block-1.run-1.", ".gomaxprocs-1.block-2.run-2.")
                (dest / entry[key]).rename(dest / new)
                entry[key] = new
            entry.update(gomaxprocs=1, block=2, repeat=2)
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return dest


def crossing_between(low: int, high: int, p99_low_ms: float, p99_high_ms: float | None, within_ms: float) -> float:
    """Return a block's capacity written out again: where the p99 reaches within_ms between the highest rate met (low) and the lowest rate above it not met (high).

    Its log interpolated on the log of the rate (a rate above without a p99: 10 s); the
    bracket's geometric middle when the rate above was within the objective (it failed for another reason).
    """
    p99_high_ms = 10_000.0 if p99_high_ms is None else p99_high_ms
    if p99_high_ms <= within_ms:
        return math.sqrt(low * high)
    share = (math.log(within_ms) - math.log(p99_low_ms)) / (math.log(p99_high_ms) - math.log(p99_low_ms))
    return math.exp(math.log(low) + share * (math.log(high) - math.log(low)))


def measured_p99(measurements, setup: str, gomaxprocs: int, rate: int, block: int = 1) -> float | None:
    """Return the p99 (ms) of one fixed-rate measurement, read from its file (None: no record)."""
    m = next(m for m in measurements if (m.setup, m.gomaxprocs, m.rate, m.block) == (setup, gomaxprocs, rate, block))
    return None if m.result is None else m.result.percentile_ms(99)


# --- Percentiles worked out by brute force from histogram files ------------------------------------

# The percentiles a merged record carries, and the field of each.
PERCENTILE_FIELDS = {
    50: "latency_p50_ms",
    75: "latency_p75_ms",
    90: "latency_p90_ms",
    99: "latency_p99_ms",
    Decimal("99.9"): "latency_p999_ms",
}


def brute_percentile_ms(hist_files, p) -> float:
    """Return wrk's percentile (rank round(p/100 * N + 0.5)) over every latency of all files, each written out one by one."""
    every = sorted(value for path in hist_files for value, count in json.loads(Path(path).read_text())["histogram"] for _ in range(count))
    rank = int((Decimal(p) * len(every) / 100 + Decimal("0.5")).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return every[min(rank, len(every)) - 1] / 1000.0


# --- Simulated fixed-rate latency (the calibrations of compare.rate_changes) -------------------------

# (added ms, per-start sd ms, measurement noise scale ms): p50-like and p99-like shapes, as measured
# on two same-settings runs at 4,000 req/s (tests/test_compare_rate_changes_calibration.py).
RATE_P50 = (0.17, 0.012, 0.015)
RATE_P99 = (0.70, 0.08, 0.15)


def heavy_noise(rng: random.Random, scale: float) -> float:
    """Return noise with heavy tails: Student t(3) times scale, plus a stall (3% of blocks) of 4 x scale, centred."""
    t3 = rng.gauss(0, 1) / ((sum(rng.gauss(0, 1) ** 2 for _ in range(3)) / 3) ** 0.5)
    stall = 4 * scale if rng.random() < 0.03 else 0.0
    return scale * t3 + stall - 0.03 * 4 * scale


# --- Pages built from the fixture runs (tests/test_report_*_words.py) -------------------------------


def built_fixture_page(name: str, root: Path, when) -> str:
    """Return index.html of the fixture run RUNS/name, copied under root/raw and built into root/out at `when`."""
    run = shutil.copytree(RUNS / name, root / "raw" / name)
    build(run, root / "out", when)
    return (root / "out" / "index.html").read_text()


def visible_text(page: str) -> str:
    """Return a page's words outside its charts and styles, tags removed, spaces collapsed."""
    page = re.sub(r"<(svg|style)\b.*?</\1>", " ", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


# --- Work a build repeats on the same input, done once per session (conftest's parsed_and_drawn_once) ------
#
# A build of a fixture run spends most of its time reading and analysing it (app-flask: 1.8 s;
# quick-rates-slo: 690,000 vegeta rows, ~1 s) and drawing charts (~2/3 of a wrk run's build);
# the tests that build the same run again, or a copy of it with one field changed, get the same
# analysis, records and SVGs. All are pure functions of their input, so a result kept under an
# exact key of that input is the one a new call would return: the tests still read every page,
# record and file a build writes, and every distinct input is still analysed, parsed or drawn
# once per session. The analyses and charts are also kept in files under the session's shared
# directory (session_root), so a pytest-xdist worker reads what another made; the parses stay in
# the process. A call that raises is not kept.


def session_root(tmp_path_factory) -> Path:
    """Return a directory of this test session that its pytest-xdist workers share (the parent of their base temps)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def mapping_proxy(items: dict):
    """Return a read-only view of items: how a pickled MappingProxyType (runs.record's) is made again."""
    from types import MappingProxyType

    return MappingProxyType(items)


class Shared:
    """Pickled results kept under exact keys: in this process and, once `root` is set, in files there that other processes read.

    A file is written whole under a temporary name and renamed into place, so a reader sees it
    whole or not at all; two workers that miss together both compute it and write the same bytes."""

    def __init__(self):
        self.here: dict[tuple[str, bytes], bytes] = {}
        self.root: Path | None = None

    def kept(self, kind: str, key: bytes | None):
        """Return the value kept under key (a new copy: unpickled again), or None when none is (key None: never kept)."""
        if key is None:
            return None
        if (kind, key) not in self.here and self.root is not None:
            with contextlib.suppress(FileNotFoundError):
                self.here[kind, key] = (self.root / kind / key.hex()).read_bytes()
        return pickle.loads(self.here[kind, key]) if (kind, key) in self.here else None

    def keep(self, kind: str, key: bytes | None, value) -> None:
        """Keep value under key, here and in root's file."""
        if key is None:
            return
        data = self.here[kind, key] = pickle.dumps(value, protocol=5)
        if self.root is not None:
            path = self.root / kind / key.hex()
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.name}.{os.getpid()}")
            partial.write_bytes(data)
            os.replace(partial, path)

    def get(self, kind: str, key: bytes, make):
        """Return make()'s value for key, made at most once per session (each call a new copy)."""
        value = self.kept(kind, key)
        if value is None:
            value = make()
            self.keep(kind, key, value)
        return value


SHARED = Shared()
copyreg.pickle(type(mapping_proxy({})), lambda proxy: (mapping_proxy, (dict(proxy),)))


def parse_vegeta_once(real):
    """Return parse_vegeta keeping each result under (the bytes' digest, the offered rate, the text cap): the source
    only names the record (RateResult.source) and the errors, so a kept record is returned with the caller's source."""
    from dataclasses import replace

    from wrkreport.parsers.vegeta import MAX_TEXT_BYTES, offered_rate_of

    def parse(source, data, offered_rps=None, max_text_bytes=MAX_TEXT_BYTES):
        rate = offered_rps if offered_rps is not None else offered_rate_of(Path(str(source)).name)
        key = (hashlib.sha256(data).digest(), len(data), rate, max_text_bytes)
        if key not in PARSED:
            PARSED[key] = real(source, data, offered_rps, max_text_bytes)
        kept = PARSED[key]
        return kept if kept.source == str(source) else replace(kept, source=str(source))

    return parse


PARSED: dict[tuple, RateResult] = {}


def run_all_once(real):
    """Return charts.parallel.run_all keeping each chart's SVG under the digest of its job's code and the values it
    closes over (the analysis, the rates, ...); jobs whose values cannot be pickled, and every new one, are drawn by real."""

    def key_of(job) -> bytes | None:
        code = job.__code__
        try:
            values = pickle.dumps(tuple(cell.cell_contents for cell in job.__closure__ or ()), protocol=5)
        except Exception:  # an unpicklable value: draw it every time
            return None
        return hashlib.sha256(repr((code.co_filename, code.co_firstlineno, code.co_code, code.co_names)).encode() + values).digest()

    def run_all(jobs, workers=None):
        keys = {name: key_of(job) for name, job in jobs.items()}
        kept = {name: SHARED.kept("drawn", keys[name]) for name in jobs}
        new = {name: job for name, job in jobs.items() if kept[name] is None}
        drawn = real(new, workers) if new else {}
        for name, svg in drawn.items():
            if keys[name] is not None:
                SHARED.keep("drawn", keys[name], svg)
        return {name: drawn[name] if name in drawn else kept[name] for name in jobs}

    return run_all


def load_analysis_once(real):
    """Return analysis.analyze.load_analysis keeping each Analysed under the run's path, the header size asked and the
    name and bytes of every file under the path (an edited copy is a new key); each call gets its own unpickled copy."""

    def load_analysis(raw, expect_header_bytes=None):
        return SHARED.get("analysed", content_key(Path(raw), expect_header_bytes), lambda: real(raw, expect_header_bytes))

    return load_analysis


def content_key(raw: Path, *asked) -> bytes:
    """Return the digest of raw's resolved path, what was asked of it, and the name, size and bytes of every file under
    it (of raw itself when it is a file; nothing when it does not exist, which the real call then reports)."""
    path = raw.resolve()
    digest = hashlib.sha256(repr((str(path), asked)).encode())
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [p for p in (path,) if p.is_file()]
    for file in files:
        digest.update(repr((file.relative_to(path).as_posix(), file.stat().st_size)).encode())
        digest.update(file.read_bytes())
    return digest.digest()


# --- Parser properties ------------------------------------------------------------------


def parses_or_parse_error(text: str):
    """Return the result, or None when the parser raised ParseError (anything else propagates)."""
    from wrkreport.core.errors import ParseError
    from wrkreport.parsers import parse_text

    try:
        return parse_text(text, "prop")
    except ParseError as exc:
        assert exc.path == "prop" and (exc.line is None or exc.line >= 1)
        return None


def assert_parse_error(path: Path, line: int | None, message: str) -> None:
    """Assert that parsing the file at path raises ParseError naming it, the line (None: the whole file) and message, in one line."""
    from wrkreport.core.errors import ParseError
    from wrkreport.parsers import parse_file

    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert (info.value.path, info.value.line, info.value.detail) == (str(path), line, message)
    assert info.value.message() == (str(path) if line is None else f"{path}:{line}") + f": {message}"
