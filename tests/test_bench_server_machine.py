"""Tests of wrkreport.bench.server_machine and server_machine.sh: GOARCH, busy ports, /proc stat lines, the remote sh's commands (run here, for real), RTT, manifest record."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wrkreport.bench import server_machine as target
from wrkreport.bench.remote import FACTS_SCRIPT, parse_facts
from wrkreport.core.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "src" / "wrkreport" / "bench" / "server_machine.sh"
STOP_GRACE_S = 5  # the script's SIGTERM-to-SIGKILL grace (STOP_TIMEOUT_TENTHS / 10)
TEST_GRACE_S = 1  # the copies' in these tests


@pytest.mark.parametrize(
    ("machine", "expected"),
    [("x86_64", ("amd64", {})), ("aarch64", ("arm64", {})), ("armv7l", ("arm", {"GOARM": "7"})), ("i686", ("386", {}))],
)
def test_goarch_of_uname_m(machine, expected):
    assert target.goarch(machine) == expected


@pytest.mark.parametrize("machine", [None, "", "sparc64", "x86_64; rm -rf /"])
def test_goarch_refuses_an_unknown_machine_with_its_name(machine):
    with pytest.raises(UsageError, match="cannot build the Go servers for the target's architecture"):
        target.goarch(machine)


def proc_net_tcp() -> str:
    return Path("/proc/net/tcp").read_text() + (Path("/proc/net/tcp6").read_text() if Path("/proc/net/tcp6").exists() else "")


def test_listening_ports_finds_a_real_listener_and_not_a_closed_port():
    with socket.socket() as listener, socket.socket() as bound_only:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        bound_only.bind(("127.0.0.1", 0))  # bound, not listening: state 07, not 0A
        text = proc_net_tcp()
        ports = target.listening_ports(text)
        assert listener.getsockname()[1] in ports
        assert bound_only.getsockname()[1] not in ports
        needed = {"go-http": listener.getsockname()[1], "nginx-http": bound_only.getsockname()[1]}
        assert target.busy_port_lines(text, needed, "root@10.0.0.2") == [f"port {needed['go-http']} (go-http) is in use on root@10.0.0.2"]


def test_listening_ports_ignores_lines_that_are_not_sockets():
    assert target.listening_ports("garbage\n  0: 0100007F:ZZZZ 00000000:0000 0A\nsl local rem st\n") == set()


def test_stat_line_of_a_real_process_and_of_hostile_names():
    pid, ppid, user, system = target.stat_line(Path("/proc/self/stat").read_text())
    assert pid > 0 and ppid == os.getppid() and user >= 0 and system >= 0
    odd = "123 (a) b) c) S 1 " + " ".join(["0"] * 9) + " 7 8 0 0"
    assert target.stat_line(odd) == (123, 1, 7, 8)
    assert target.stat_line("not a stat line") is None
    assert target.stat_line("12 (x) S 1 2") is None


def test_snapshot_of_keeps_roots_and_only_nginx_and_node_children():
    lines = [
        "go 10 (gohello) S 1 " + " ".join(["0"] * 9) + " 5 6 0 0",
        "nginx 20 (nginx) S 1 " + " ".join(["0"] * 9) + " 1 2 0 0",
        "nginx 21 (nginx) S 20 " + " ".join(["0"] * 9) + " 30 40 0 0",
        "nginx 99 (other) S 7 " + " ".join(["0"] * 9) + " 1 1 0 0",  # neither the root nor its child
        "go 11 (child) S 10 " + " ".join(["0"] * 9) + " 9 9 0 0",  # Go's group is the one process
        "bogus line",
    ]
    assert target.snapshot_of(lines, {"go": 10, "nginx": 20}) == {"go": {10: (5, 6)}, "nginx": {20: (1, 2), 21: (30, 40)}}


def test_ssh_connection_gives_the_address_ssh_reached():
    assert target.ssh_connection("10.231.5.1 50514 10.231.5.2 22\n") == ("10.231.5.2", 22)
    assert target.ssh_connection("fe80::1 5 fe80::2%eth0 2222") == ("fe80::2", 2222)
    with pytest.raises(UsageError, match="give --server-address"):
        target.ssh_connection("")


def test_rtt_of_real_connects_to_a_local_listener():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        times = target.rtt_samples("127.0.0.1", listener.getsockname()[1], samples=5)
    assert len(times) == 5 and all(0 < t < 5 for t in times)
    record = target.rtt_record([0.0002, 0.0001, 0.0004], "local", "10.0.0.2")
    assert record == {
        "from": "local",
        "to": "10.0.0.2",
        "method": target.RTT_METHOD,
        "samples": 3,
        "min_ms": 0.1,
        "median_ms": 0.2,
        "max_ms": 0.4,
    }


def test_server_host_record_from_the_facts_of_this_machine():
    facts = parse_facts(subprocess.run(["sh", "-c", FACTS_SCRIPT], capture_output=True, text=True, check=True).stdout)
    record = target.server_host_record(facts, "root@10.0.0.2", "10.0.0.2", 65536, ["nginx"])
    assert set(record) == {"ssh", "address", "machine", "versions", "sysctl", "ulimit_n", "net_ns", "boot_id"}
    assert record["boot_id"] == open("/proc/sys/kernel/random/boot_id").read().strip()  # this machine's kernel
    assert record["ulimit_n"] == 65536 and record["machine"]["logical_cores"] == os.cpu_count()
    assert record["net_ns"] == os.readlink("/proc/self/ns/net")
    assert record["versions"] == {"nginx": facts["versions"]["nginx"]}


@pytest.mark.parametrize(
    ("setups", "tools"),
    [
        (["go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix"], ["nginx"]),
        (["go-http", "go-fasthttp"], []),  # the Go servers are built on the controller
        (["node-http", "nginx-static"], ["nginx", "node"]),
    ],
)
def test_the_target_records_the_versions_of_what_the_run_starts_there(setups, tools):
    assert target.target_tools(setups) == tools


# --- server_machine.sh, run here for real (as run_bench.sh runs it on the target) -----------------


@pytest.fixture
def work(tmp_path):
    """A copy of server_machine.sh in a dir named like run_bench.sh's (finish removes only such a dir), its stop grace
    1 s where the script's is 5 s: the tests of a server that ignores SIGTERM wait out the grace, not judge its length."""
    top = Path(tmp_path) / "wrkreport.test"
    top.mkdir()
    text, grace = SCRIPT.read_text(), f"\nSTOP_TIMEOUT_TENTHS={10 * STOP_GRACE_S}\n"
    assert grace in text
    (top / "server_machine.sh").write_text(text.replace(grace, f"\nSTOP_TIMEOUT_TENTHS={10 * TEST_GRACE_S}\n"))
    yield top
    subprocess.run(["sh", str(top / "server_machine.sh"), "finish"], check=False)


def sh(work: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", str(work / "server_machine.sh"), *args], capture_output=True, text=True, timeout=30, **kwargs)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def children_once_forked(pid: int, count: int, timeout: float = 10) -> list[int]:
    """Return pid's children (pgrep -P) once there are count of them; a fixed sleep raced a loaded machine."""
    deadline = time.monotonic() + timeout
    while True:
        kids = [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()]
        if len(kids) >= count or time.monotonic() > deadline:
            assert len(kids) == count, kids
            return kids
        time.sleep(0.02)


def test_start_records_the_servers_own_pid_in_its_session_with_the_environment(work):
    done = sh(
        work,
        "start",
        "go",
        str(work / "go.log"),
        "1024",
        "GOMAXPROCS=3",
        sys.executable,
        "-c",
        "import os, time; print(os.environ['GOMAXPROCS'], os.getsid(0) == os.getpid(), flush=True); print('x ready', flush=True); time.sleep(60)",
    )
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout)
    assert (work / "pids" / "go").read_text().strip() == str(pid)
    assert sh(work, "ready", str(pid), str(work / "go.log"), "5").returncode == 0
    assert (work / "go.log").read_text().splitlines()[0] == "3 True"
    assert Path(f"/proc/{pid}/cmdline").read_bytes().startswith(sys.executable.encode())
    assert sh(work, "running", str(pid)).returncode == 0
    sh(work, "stop", "go")
    assert not alive(pid) and not (work / "pids" / "go").exists()
    assert sh(work, "running", str(pid)).returncode == 1


def test_ready_fails_when_the_server_exits_first(work):
    pid = int(sh(work, "start", "go", str(work / "go.log"), "1024", "sh", "-c", "echo bind failed; exit 1").stdout)
    started = time.monotonic()
    assert sh(work, "ready", str(pid), str(work / "go.log"), "5").returncode == 1
    assert time.monotonic() - started < 4


def test_stop_kills_a_server_ignoring_sigterm_and_its_children_of_the_same_program(work):
    program = "trap '' TERM; sleep 60 & sleep 60 & wait"
    pid = int(sh(work, "start", "nginx", str(work / "n.log"), "1024", "sh", "-c", program).stdout)
    kids = children_once_forked(pid, 2)  # the trap is set before the first fork
    done = sh(work, "stop", "nginx")
    assert f"still running {TEST_GRACE_S}s after SIGTERM: SIGKILL" in done.stdout
    assert not alive(pid)
    time.sleep(0.2)
    assert all(alive(k) for k in kids), "other programs (sleep, not sh) are not killed by exe"
    for kid in kids:
        os.kill(kid, 9)


def test_finish_stops_every_recorded_server_and_removes_the_dir(work):
    pids = [int(sh(work, "start", name, str(work / f"{name}.log"), "1024", "sleep", "60").stdout) for name in ("go", "nginx")]
    assert sh(work, "finish").returncode == 0
    assert not any(alive(p) for p in pids)
    assert not work.exists()


def test_finish_ends_a_cpu_reader_left_waiting_on_a_lost_session(work):
    # The link dropped: the reader's stdin never closes. finish must end it, and only it.
    reader = subprocess.Popen(["sh", str(work / "server_machine.sh"), "cpu"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    bystander = subprocess.Popen(["sh", "-c", "read x"], stdin=subprocess.PIPE)  # another shell blocked in read
    try:
        deadline = time.monotonic() + 5
        while not (work / "reader.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert int((work / "reader.pid").read_text()) == reader.pid
        assert sh(work, "finish").returncode == 0
        assert reader.wait(timeout=5) != 0
        assert bystander.poll() is None
        assert not work.exists()
    finally:
        for proc in (reader, bystander):
            proc.kill()
            proc.wait()


def test_log_caps_what_is_fetched_and_says_how_much_was_cut(work):
    log = work / "big.log"
    log.write_text("line\n" * 100)
    assert sh(work, "log", "1000", str(log)).stdout == "line\n" * 100
    capped = sh(work, "log", "50", str(log)).stdout
    assert capped == "line\n" * 10 + "\n[wrkreport] log capped at 50 bytes: 450 bytes of later lines dropped\n"
    assert sh(work, "log", "50", str(work / "absent.log")).stdout == ""


def test_prepare_and_nofile(work):
    assert sh(work, "prepare", "nobody").returncode == 0
    assert (work / "nginx" / "temp").is_dir() and (work / "logs").is_dir()
    value = sh(work, "nofile", "1048576").stdout.strip()
    assert value == "unlimited" or int(value) >= 1024


def test_the_cpu_shell_answers_snapshots_children_and_liveness_of_real_processes(work):
    pid = int(sh(work, "start", "nginx", str(work / "n.log"), "1024", "sh", "-c", "sleep 60 & sleep 60 & wait").stdout)
    expected = children_once_forked(pid, 2)
    shell = target.TargetShell(["sh", str(work / "server_machine.sh"), "cpu"], "here")
    try:
        assert shell.ticks_per_s == os.sysconf("SC_CLK_TCK")
        kids = shell.children(pid)
        assert sorted(kids) == sorted(expected)
        snap = shell.snapshot({"nginx": pid, "go": None})
        assert set(snap) == {"nginx"} and set(snap["nginx"]) == {pid, *kids}
        assert shell.running([pid, *kids]) and not shell.running([pid, 999999999])
    finally:
        shell.close()
        sh(work, "finish")


def test_the_app_runs_in_its_own_session_its_cpu_counts_the_whole_session_and_stop_ends_it_all(work):
    """start-app: bash runs the command with GOMAXPROCS in a new session; `snap app:SID:session` reads every process of it, a
    grandchild and one that left the process group too; stop: SIGTERM to the group, then SIGKILL to what is left of the session."""
    escapee = f"{sys.executable} -c 'import os, time; os.setpgid(0, 0); time.sleep(60)'"  # its own group, still the session's
    command = f"trap '' TERM; echo GOMAXPROCS=$GOMAXPROCS sid $(ps -o sid= $$); (sleep 61 & wait) & {escapee} & wait"
    sid = int(sh(work, "start-app", str(work / "app.log"), "1024", "3", command).stdout)
    assert (work / "pids" / "app").read_text().split() == [str(sid), "session"]
    deadline = time.monotonic() + 10
    while len(members := [p for p in Path("/proc").iterdir() if p.name.isdigit() and session_of(p) == sid]) < 4:
        assert time.monotonic() < deadline, members
        time.sleep(0.02)
    assert (work / "app.log").read_text().split() == ["GOMAXPROCS=3", "sid", str(sid)]
    shell = target.TargetShell(["sh", str(work / "server_machine.sh"), "cpu"], "here")
    try:
        snap = shell.snapshot({"app": sid, "go": None})
        assert set(snap) == {"app"} and set(snap["app"]) == {int(p.name) for p in members}
    finally:
        shell.close()
    done = sh(work, "stop", "app")
    assert "app (session " in done.stdout and f"still running {TEST_GRACE_S}s after SIGTERM: SIGKILL" in done.stdout
    time.sleep(0.2)
    assert not any(alive(int(p.name)) for p in members) and not (work / "pids" / "app").exists()


def session_of(proc: Path) -> int | None:
    try:
        return int((proc / "stat").read_text().rsplit(") ", 1)[1].split()[3])
    except (OSError, IndexError, ValueError):
        return None


def test_a_shell_that_ends_is_reported_as_the_target_lost():
    shell = target.TargetShell(["sh", "-c", "read -r line; echo 100; echo @@end; exit 0"], "root@10.0.0.2")
    with pytest.raises(target.TargetLost, match="lost the ssh connection to root@10.0.0.2"):
        shell.ask("snap go:1")
    shell.close()


def target_facts(tmp_path: Path, setups: list[str], drop: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Run `target-facts` on this machine's real facts, with the lines of `drop` removed (a target lacking those tools)."""
    text = subprocess.run(["sh", "-c", FACTS_SCRIPT], capture_output=True, text=True, check=True).stdout
    kept = [line for line in text.splitlines() if not line.startswith(tuple(f"path.{tool}\t" for tool in drop))]
    (tmp_path / "facts").write_text("\n".join(kept) + "\n")
    (tmp_path / "plan.json").write_text(json.dumps({"setups": setups}))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "wrkreport.bench",
            "target-facts",
            "--plan",
            str(tmp_path / "plan.json"),
            "--facts",
            str(tmp_path / "facts"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )


def test_target_facts_name_what_the_target_lacks_for_the_chosen_setups(tmp_path):
    if not shutil.which("nginx") and not Path("/usr/sbin/nginx").exists():
        pytest.skip("needs nginx here to compare with")
    full = target_facts(tmp_path, ["go-http", "nginx-http"])
    assert full.returncode == 0 and "missing" not in full.stdout
    lines = dict(line.split(" ", 1) for line in full.stdout.splitlines())
    assert lines["goarch"] == target.goarch(os.uname().machine)[0] and lines["uid"] == str(os.getuid())
    lacking = target_facts(tmp_path, ["go-http", "nginx-http", "node-http"], drop=("nginx", "node"))
    assert lacking.stdout.splitlines()[-1] == "missing nginx node"
    assert target_facts(tmp_path, ["go-http"], drop=("nginx", "node")).stdout.count("missing") == 0  # go-http alone needs neither
