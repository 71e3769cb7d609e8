"""End-to-end tests of ./run_bench.sh with HAProxy, Caddy and Apache httpd in nginx's place (issue 44): real front ends from
Debian's packages, real Go and wrk on 127.0.0.1, then `wrkreport build` on what they wrote.

Same rules as tests/test_driver.py: private ports, --out and TMPDIR per test; slow tests skip with a reason when a tool is
missing (a failure under CI=true).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from helpers import (
    BASE_PORT_NAMES,
    REPO,
    SCRIPT,
    USED_PORTS,
    alive_as,
    assert_in_its_own_group_beside,
    assert_nothing_left,
    copy_of_driver,
    default_sigint,
    free_port_block,
    group_members,
    latest_run,
    missing_tools,
    port_args,
    script_env,
    wait_for_wrk,
)
from wrkreport.core.setups import FRONT_END_SETUP_IDS, FRONT_ENDS

FRONT_MISSING = missing_tools("wrk", "curl", "go", "nginx", "haproxy", "caddy", "apache2")
needs_front_ends = pytest.mark.skipif(
    bool(FRONT_MISSING), reason=f"needs wrk, curl, go, nginx, haproxy, caddy and apache2; missing: {', '.join(FRONT_MISSING)}"
)
HELLO_SHA = hashlib.sha256(b"Hello World\n").hexdigest()
PROGRAMS = {"haproxy": "haproxy", "caddy": "caddy", "apache": "apache2"}


def free_ports(setups) -> dict[str, int]:
    """Return a free block of ports for the default four, Go's FastCGI port and the front ends' setups chosen."""
    return free_port_block((*BASE_PORT_NAMES, *setups), 20100, 20900, USED_PORTS)


def start(args: list[str], tmp: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [str(SCRIPT), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=script_env(tmp), preexec_fn=default_sigint
    )


def listening(pids: set[int]) -> list[str]:
    """Return `address:port` of every TCP socket listening in one of pids (ss -ltnp)."""
    text = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in text.splitlines():
        owners = {int(pid) for pid in re.findall(r"pid=(\d+)", line)}
        if owners & pids:
            found.append(line.split()[3])
    return found


def assert_no_front_end_left(manifest: dict) -> None:
    for entry in manifest["passes"]:
        for front in FRONT_ENDS:
            pid = entry["pids"].get(front)
            assert not alive_as(pid, PROGRAMS[front]), f"{front} {pid} still running"
            assert not group_members(pid) if pid else True, f"{front}'s process group {pid} still has processes"


@pytest.mark.slow
@needs_front_ends
def test_every_front_end_and_connection_answers_gos_body_listens_on_loopback_only_and_builds(workdirs, tmp_path):
    out, tmp = workdirs
    setups = ["nginx-http", *FRONT_END_SETUP_IDS]
    ports = free_ports(FRONT_END_SETUP_IDS)
    chosen = ",".join(["front-ends", *(s for s in FRONT_END_SETUP_IDS if "fcgi" in s)])
    proc = start(
        ["--quick", "--setups", chosen, "--rates", "off", "--gomaxprocs", "1,2", "--seed", "3", "--out", str(out), *port_args(ports)], tmp
    )
    try:
        wait_for_wrk(proc, ports["haproxy-http"], timeout=90)  # every server of the block is up: its measurements run
        run, manifest = latest_run(out)
        front_pids = {front: pid for front in FRONT_ENDS if (pid := manifest["passes"][-1]["pids"].get(front))}
        assert sorted(front_pids) == sorted(FRONT_ENDS)
        for front, pid in front_pids.items():  # every socket a front end listens on is one of its setups' ports on 127.0.0.1
            mine = {f"127.0.0.1:{ports[s]}" for s in FRONT_END_SETUP_IDS if s.startswith(front)}
            assert set(listening(set(group_members(pid)))) == mine, front
            # its own process group, in the scheduler's group of Go, nginx and the script (not a session of its own: an autogroup)
            assert_in_its_own_group_beside(pid, manifest["passes"][-1]["pids"]["go"], front)
            assert_in_its_own_group_beside(pid, proc.pid, front)
    finally:
        stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr
    assert "starting the Go server, nginx, HAProxy, Caddy and Apache httpd" in stderr
    run, manifest = latest_run(out)
    assert manifest["parameters"]["setups"] == ["go-http", *setups]
    assert manifest["front_ends"] == {
        "haproxy": {"config": "haproxy.cfg"},
        "caddy": {"config": "caddy.json"},
        "apache": {"config": "apache2.conf"},
    }
    assert all(manifest["versions"][front] for front in FRONT_ENDS) and manifest["version_lines"]["apache"].startswith(
        "Server version: Apache/"
    )
    assert "127.0.0.1:" in (run / "haproxy.cfg").read_text() and json.loads((run / "caddy.json").read_text())["admin"] == {"disabled": True}
    for entry in manifest["passes"]:
        for setup in FRONT_END_SETUP_IDS:
            cell = entry["cells"][setup]
            assert (cell["error"], cell["status_line"], cell["body_sha256"]) == (None, "HTTP/1.1 200 OK", HELLO_SHA), (setup, cell)
            assert isinstance(cell["headers_changed"], list) and cell["response_bytes"] >= cell["header_bytes"] + 12
        n = entry["gomaxprocs"]
        for setup in FRONT_END_SETUP_IDS:  # CPU per request counts the front end's whole process group and Go's
            cpu = json.loads((run / f"{setup}.gomaxprocs-{n}.block-1.run-1.cpu.json").read_text())["processes"]
            front = setup.split("-")[0]
            assert cpu[front]["user_s"] + cpu[front]["system_s"] > 0 and cpu["go"]["user_s"] + cpu["go"]["system_s"] > 0, (setup, cpu)
            assert len(cpu[front]["pids"]) >= (3 if front == "apache" else 1)  # Apache httpd: its parent and one child per CPU
    assert_no_front_end_left(manifest)
    assert_nothing_left(manifest, ports, tmp)
    done = subprocess.run(
        [sys.executable, "-m", "wrkreport", "build", str(run), "--out", str(tmp_path / "rep")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    results = json.loads((tmp_path / "rep" / "results.json").read_text())
    checks = [c for c in results["checks"] if c["setup"] in FRONT_END_SETUP_IDS and c["name"] in ("header-bytes", "same-response")]
    assert len(checks) == 2 * 2 * len(FRONT_END_SETUP_IDS) and all(c["status"] == "pass" for c in checks), [
        c for c in checks if c["status"] != "pass"
    ]
    assert all("changed from go-http's" in c["message"] for c in checks if c["name"] == "header-bytes")
    ratios = {(r["setup"], r["gomaxprocs"]) for r in results["ratios"]}
    assert {(s, n) for s in FRONT_END_SETUP_IDS for n in (1, 2)} <= ratios  # each over go-http, as nginx's


# gohello's -socket-mode values, as src/driver/servers.sh passes them: set after its chown to the workers' group
FINAL_SOCKET_MODES = tuple(
    int(mode, 8) for mode in re.findall(r"-socket-mode (0[0-7]{3})\b", (REPO / "src" / "driver" / "servers.sh").read_text())
)
assert FINAL_SOCKET_MODES, "src/driver/servers.sh passes gohello no -socket-mode"


def unlink_when_made(pattern: str, where: Path, stop: threading.Event, gone: list[Path]) -> None:
    """Unlink the first file matching pattern under where as soon as its maker has set its final mode (polling every
    millisecond), until stop: gohello chowns, then chmods the socket after binding it, and an unlink before that failed
    its start ("chown ...go.sock: no such file or directory") when the run was slowed beside other real runs."""
    while not stop.is_set():
        for path in where.glob(pattern):
            try:
                final = path.stat().st_mode & 0o777 in FINAL_SOCKET_MODES
            except FileNotFoundError:
                continue
            if final:
                path.unlink(missing_ok=True)
                gone.append(path)
                return
        time.sleep(0.001)


@pytest.mark.slow
@needs_front_ends
def test_a_front_end_that_cannot_reach_go_fails_its_check_with_its_answer_and_the_run_goes_on(workdirs, tmp_path):
    """Issue 44, point 3, with the real front ends: Go's FastCGI socket unlinked as soon as Go has made it (Go still listens on it,
    nobody reaches it by its path), so each front end answers the block's GET with an error: Caddy's 502 Bad Gateway, HAProxy's
    and Apache httpd's 503. Each setup is skipped with its answer, go-http is measured, the build fails the three by name, and
    no front end is left."""
    out, tmp = workdirs
    setups = ("caddy-fcgi-unix", "haproxy-fcgi-unix", "apache-fcgi-unix")
    ports = free_ports(setups)
    stop, gone = threading.Event(), []
    watcher = threading.Thread(target=unlink_when_made, args=("wrkreport.*/go.sock", tmp, stop, gone), daemon=True)
    watcher.start()
    proc = start(
        [
            "--quick",
            "--setups",
            ",".join(("go-http", *setups)),
            "--rates",
            "off",
            "--gomaxprocs",
            "1",
            "--out",
            str(out),
            *port_args(ports),
        ],
        tmp,
    )
    try:
        _, stderr = proc.communicate(timeout=180)
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and gone, stderr
    run, manifest = latest_run(out)
    answers = {s: manifest["passes"][0]["cells"][s]["error"] for s in setups}
    print(f"\nwith Go's FastCGI socket gone: {answers}")
    assert answers["caddy-fcgi-unix"] == "answered 'HTTP/1.1 502 Bad Gateway', not 200", answers
    assert all(re.fullmatch(r"answered 'HTTP/1\.1 50[23] [A-Za-z ]+', not 200", answer) for answer in answers.values()), answers
    for setup, answer in answers.items():
        assert f"warning: not measured: {setup} GOMAXPROCS=1 block 1: {answer}" in stderr
        assert not list(run.glob(f"{setup}.*.wrk.txt"))
    assert list(run.glob("go-http.gomaxprocs-1.block-1.run-1.wrk.txt"))
    assert_no_front_end_left(manifest)
    assert_nothing_left(manifest, ports, tmp)
    done = subprocess.run(
        [sys.executable, "-m", "wrkreport", "build", str(run), "--out", str(tmp_path / "rep")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr  # 1: a check failed
    failed = {
        c["setup"]: c["message"]
        for c in json.loads((tmp_path / "rep" / "results.json").read_text())["checks"]
        if c["name"] == "readiness" and c["status"] == "fail"
    }
    assert failed == {s: f"{s} at GOMAXPROCS=1 was not measured: {answers[s]}" for s in setups}, failed


@pytest.mark.slow
@needs_front_ends
def test_sigint_while_a_front_end_is_loaded_stops_every_front_ends_process_group(workdirs):
    out, tmp = workdirs
    setups = ("haproxy-http", "caddy-http", "apache-fcgi-unix")
    ports = free_ports(setups)
    proc = start(
        [
            "--quick",
            "--setups",
            ",".join(("go-http", *setups)),
            "--rates",
            "off",
            "--gomaxprocs",
            "1",
            "--duration",
            "20",
            "--out",
            str(out),
            *port_args(ports),
        ],
        tmp,
    )
    try:
        wait_for_wrk(proc, ports["caddy-http"], timeout=120)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    run, manifest = latest_run(out)
    assert manifest["status"] == "interrupted"
    assert_no_front_end_left(manifest)
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@needs_front_ends
def test_a_work_dir_a_front_ends_configuration_cannot_name_is_refused_in_one_line_and_leaves_nothing():
    top = Path(tempfile.mkdtemp(prefix="rbf x", dir="/tmp"))  # a space: HAProxy's, Caddy's and Apache's files take no such path
    try:
        top.chmod(0o711)
        tmp, out = top / "tmp", Path(tempfile.mkdtemp(prefix="rbfo", dir="/tmp"))
        tmp.mkdir()
        ports = free_ports(("caddy-http",))
        done = subprocess.run(
            [str(SCRIPT), "--quick", "--setups", "go-http,caddy-http", "--rates", "off", "--out", str(out), *port_args(ports)],
            capture_output=True,
            text=True,
            env=script_env(tmp),
            timeout=120,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        errors = [line for line in done.stderr.splitlines() if "error:" in line]
        assert len(errors) == 1 and "letters, digits and _ . / + - only; set TMPDIR" in errors[0], done.stderr
        assert "Traceback" not in done.stderr and list(tmp.iterdir()) == [] and list(out.iterdir()) == []  # nothing started or written
        shutil.rmtree(out)
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("setpriv"),
    reason="hides the installed front ends in a private mount namespace: needs root, unshare and setpriv",
)
def test_missing_front_ends_as_a_user_name_the_exact_apt_get_line_and_exit_2():
    top = Path(tempfile.mkdtemp(prefix="rbm", dir="/tmp"))
    try:
        top.chmod(0o755)
        script = copy_of_driver(top / "checkout")  # nobody may not reach the checkout itself
        bin_dir, tmp = top / "bin", top / "tmp"
        bin_dir.mkdir(mode=0o755)
        tmp.mkdir()
        tmp.chmod(0o1777)
        for tool in (
            "bash",
            "env",
            "dirname",
            "mktemp",
            "rm",
            "cat",
            "curl",
            "go",
            "grep",
            "sed",
            "head",
            "tail",
            "id",
            "apt-get",
            "wrk",
            "nginx",
        ):
            if found := shutil.which(tool) or shutil.which(tool, path="/usr/sbin"):
                (bin_dir / tool).symlink_to(found)
        (bin_dir / "python3").symlink_to(shutil.which("python3", path="/usr/bin:/bin") or sys.executable)
        # A package not installed: each front end's program is /dev/null (not executable) in this namespace only.
        hidden = [p for p in ("/usr/sbin/haproxy", "/usr/bin/caddy", "/usr/sbin/apache2") if Path(p).exists()]
        mounts = " && ".join(f"mount --bind /dev/null {p}" for p in hidden) or "true"
        as_nobody = [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "env",
            "-i",
            f"PATH={bin_dir}",
            f"TMPDIR={tmp}",
            "HOME=/tmp",
            str(script),
            "--quick",
            "--setups",
            "front-ends",
            f"--out={tmp}/out",
        ]
        done = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", f'{mounts} && exec "$@"', "sh", *as_nobody],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().endswith(
            "error: missing: haproxy caddy apache. Install with: sudo apt-get update && sudo apt-get install -y haproxy caddy apache2 "
            "(Apache httpd comes with apache2)"
        ), done.stderr
        assert not (tmp / "out").exists() and list(tmp.iterdir()) == []  # nothing started, the work dir removed
    finally:
        shutil.rmtree(top, ignore_errors=True)
