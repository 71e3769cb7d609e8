"""End-to-end tests of ./run_bench.sh: real nginx, real wrk, the real Go server, on 127.0.0.1.

Each test picks its own free block of ports and writes into temporary directories (--out
and TMPDIR, where the script makes its private work dir), so it never meets a user's run
or another test. Slow tests skip with a reason when a tool is missing; under CI=true that
skip is a failure (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from wrkreport.drive import SETUP_IDS, shuffled_orders
from wrkreport.parse import parse_file

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "run_bench.sh"
PORT_NAMES = ("go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "go-fcgi-tcp")
USED_PORTS: set[int] = set()


def nginx_path() -> str | None:
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)


MISSING = [name for name, found in (("nginx", nginx_path()), *((t, shutil.which(t)) for t in ("wrk", "curl", "go"))) if not found]
needs_tools = pytest.mark.skipif(bool(MISSING), reason=f"needs nginx, wrk, curl and go; missing: {', '.join(MISSING)}")
slow = [pytest.mark.slow, needs_tools]


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports() -> dict[str, int]:
    """Return a free block of five ports in 18100-18999, none used by an earlier test here."""
    for _ in range(200):
        start = random.randrange(18100, 18995)
        block = range(start, start + len(PORT_NAMES))
        if not USED_PORTS.intersection(block) and all(port_is_free(p) for p in block):
            USED_PORTS.update(block)
            return dict(zip(PORT_NAMES, block))
    raise RuntimeError("no free block of 5 ports in 18100-18999")


def port_args(ports: dict[str, int]) -> list[str]:
    return [arg for name, port in ports.items() for arg in ("--port", f"{name}={port}")]


@pytest.fixture
def workdirs():
    """Yield (out, tmpdir): short paths under /tmp (the Unix socket path must stay short)."""
    top = Path(tempfile.mkdtemp(prefix="rbt", dir="/tmp"))
    top.chmod(0o711)  # as root, nginx's workers (nobody) must traverse it to the socket
    out, tmp = top / "out", top / "tmp"
    tmp.mkdir()
    yield out, tmp
    shutil.rmtree(top, ignore_errors=True)


def script_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    env["TMPDIR"] = str(tmp)
    return env


def run_script(args: list[str], tmp: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=script_env(tmp), timeout=timeout, check=False)


def processes_mentioning(needles: list[str]) -> list[str]:
    """Return 'pid: cmdline' of every process whose command line contains one of needles."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(needle in cmdline for needle in needles):
            found.append(f"{entry.name}: {cmdline}")
    return found


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
        assert not alive_as(pids["nginx"], "nginx"), f"nginx master {pids['nginx']} still running"
        for worker in pids["nginx_workers"]:
            assert not alive_as(worker, "nginx"), f"nginx worker {worker} still running"
    needles = [f"127.0.0.1:{port}" for port in ports.values()] + [f"-http-port {ports['go-http']}", str(tmp)]
    assert processes_mentioning(needles) == []
    assert all(port_is_free(port) for port in ports.values())
    assert list(tmp.iterdir()) == [], "work dir left behind"


def load_run(out: Path) -> tuple[Path, dict]:
    run = (out / "latest").resolve()
    assert not os.path.isabs(os.readlink(out / "latest")), "latest must be a relative symlink"
    return run, json.loads((run / "manifest.json").read_text())


# --- fast: options only, nothing started --------------------------------------------------


def test_help_documents_options_and_exit_statuses():
    done = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("Usage: ./run_bench.sh [options]")
    for text in ("--quick", "--profile NAME", "--tune", "Exit status:", "130", "143"):
        assert text in done.stdout


def test_bad_option_is_exit_2_with_a_message(workdirs):
    out, tmp = workdirs
    done = run_script(["--threads", "many", "--out", str(out)], tmp, timeout=30)
    assert done.returncode == 2
    assert "run_bench.sh: --threads must be a whole number, not 'many'" in done.stderr
    assert not out.exists() and list(tmp.iterdir()) == []


# --- slow: the real thing ----------------------------------------------------------------------


@pytest.mark.slow
@needs_tools
def test_quick_run_measures_all_four_setups_at_two_gomaxprocs(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    started = time.monotonic()
    done = run_script(["--quick", "--gomaxprocs", "1,2", "--seed", "11", "--out", str(out), *port_args(ports)], tmp)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert elapsed < 60, f"--quick took {elapsed:.0f}s"
    run, manifest = load_run(out)

    headers = sorted(run.glob("*.headers.txt"))
    assert len(headers) == 8
    for path in headers:
        data = path.read_bytes()
        assert data.startswith(b"HTTP/1.1 200 "), f"{path.name}: {data[:40]!r}"
        assert len(data) == 141, f"{path.name}: {len(data)} bytes"

    wrk_files = sorted(run.glob("*.wrk.txt"))
    assert len(wrk_files) == 8
    for path in wrk_files:
        result = parse_file(path)
        assert result.requests > 0, path.name
        assert result.non_2xx_3xx == 0 and "Non-2xx" not in path.read_text(), path.name

    assert manifest["status"] == "complete" and manifest["reason"] is None
    assert manifest["started_at"] and manifest["ended_at"]
    assert manifest["parameters"]["ports"] == ports and manifest["parameters"]["profile"] == "quick"
    assert manifest["versions"]["nginx"] and manifest["versions"]["wrk"] and manifest["versions"]["go"]
    assert manifest["nginx_V"].startswith("nginx version:")
    assert "net.core.somaxconn" in manifest["sysctl"] and manifest["sysctl_changes"] is None
    assert [p["gomaxprocs"] for p in manifest["passes"]] == [1, 2]
    for entry in manifest["passes"]:
        n = entry["gomaxprocs"]
        assert entry["go_reported_gomaxprocs"] == n
        assert entry["order"] == shuffled_orders(list(SETUP_IDS), 1, 11, n)
        for setup in SETUP_IDS:
            cell = entry["cells"][setup]
            assert cell["ready"] and cell["headers_captured"] and cell["error"] is None, cell
            assert cell["status_line"] == "HTTP/1.1 200 OK" and cell["header_bytes"] == 141
    measured = {(m["setup"], m["gomaxprocs"], m["repeat"]) for m in manifest["measurements"]}
    assert measured == {(s, n, 1) for s in SETUP_IDS for n in (1, 2)}
    assert all(m["exit_code"] == 0 and (run / m["file"]).is_file() for m in manifest["measurements"])
    conf = (run / "nginx.conf").read_text()
    assert f"listen 127.0.0.1:{ports['nginx-fcgi-unix']};" in conf
    for n in (1, 2):
        assert (run / "logs" / f"go.gomaxprocs-{n}.log").read_text().startswith(f"gohello: GOMAXPROCS={n} ")
        assert (run / "logs" / f"nginx-error.gomaxprocs-{n}.log").is_file()
    assert "[8/8] " in done.stderr and " req/s" in done.stderr
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@needs_tools
def test_go_only_run_starts_no_nginx(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    done = run_script(["--quick", "--setups", "go-http", "--gomaxprocs", "1", "--warmup", "0", "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    run, manifest = load_run(out)
    assert manifest["status"] == "complete"
    assert [p.name for p in sorted(run.glob("*.txt"))] == ["go-http.gomaxprocs-1.headers.txt", "go-http.gomaxprocs-1.run-1.wrk.txt"]
    assert not (run / "nginx.conf").exists() and manifest["passes"][0]["pids"]["nginx"] is None
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@needs_tools
def test_sigint_mid_measurement_stops_everything_and_keeps_completed_files(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    args = [str(SCRIPT), "--quick", "--duration", "4", "--gomaxprocs", "1", "--warmup", "0", "--out", str(out), *port_args(ports)]
    proc = subprocess.Popen(args, env=script_env(tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        in_progress = wait_for_second_measurement(out, proc)
        time.sleep(1)  # well inside the 4 s measurement
        proc.send_signal(signal.SIGINT)  # to the script only: it must stop its children itself
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    run, manifest = load_run(out)
    assert manifest["status"] == "interrupted", manifest["reason"]
    assert manifest["reason"].startswith("interrupted by SIGINT during ")
    assert manifest["ended_at"]
    completed = [m["file"] for m in manifest["measurements"]]
    assert len(completed) >= 1 and in_progress not in completed
    assert not (run / in_progress).exists(), "the interrupted measurement's partial output must go"
    assert sorted(p.name for p in run.glob("*.wrk.txt")) == sorted(completed)
    for name in completed:
        assert parse_file(run / name).requests > 0
    assert len(list(run.glob("*.headers.txt"))) == 4
    assert_nothing_left(manifest, ports, tmp)


def wait_for_second_measurement(out: Path, proc: subprocess.Popen, timeout: float = 60) -> str:
    """Wait until one measurement is recorded and the next one's file exists; return its name."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        manifest_path = out / "latest" / "manifest.json"
        if manifest_path.exists():
            manifest = json.loads(manifest_path.read_text())
            done = {m["file"] for m in manifest["measurements"]}
            running = [p.name for p in manifest_path.parent.glob("*.wrk.txt") if p.name not in done]
            if done and running:
                return running[0]
        time.sleep(0.1)
    raise AssertionError("the second measurement never started")


@pytest.mark.slow
@needs_tools
def test_busy_port_is_named_and_nothing_is_started(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", ports["nginx-fcgi-tcp"]))
        squatter.listen()
        done = run_script(["--quick", "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 2, done.stderr
    expected = f"port {ports['nginx-fcgi-tcp']} (nginx-fcgi-tcp) on 127.0.0.1 is in use by pid {os.getpid()} ("
    assert expected in done.stderr
    assert "nothing was started" in done.stderr
    assert not out.exists() or list(out.iterdir()) == []
    assert processes_mentioning([f"127.0.0.1:{p}" for p in ports.values()] + [str(tmp)]) == []
    assert list(tmp.iterdir()) == []


@pytest.mark.slow
@needs_tools
def test_connections_beyond_the_open_files_limit_are_refused(workdirs):
    out, tmp = workdirs
    done = run_script(["--quick", "--connections", "600000", "--out", str(out), *port_args(free_ports())], tmp)
    assert done.returncode == 2, done.stderr
    assert "--connections 600000 needs about 1200256 open files" in done.stderr
    assert not out.exists() and list(tmp.iterdir()) == []
