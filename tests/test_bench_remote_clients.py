"""Tests of wrkreport.bench.remote_clients without other machines: names, the sh scripts run here with sh, RTT and times parsing, a local client."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wrkreport.bench.remote_clients.agent import END_MARK, READY, RTT_PY, STDERR_MARK, agent_script, down_script, stop_script
from wrkreport.bench.remote_clients.measuring import ClientRun, client_argv, read_answer, run_line, times_delta, wrk_duration_s
from wrkreport.bench.remote_clients.state import Client, Clients, client_file, rtt_record, save_clients
from wrkreport.bench.remote_clients.totals import totals
from wrkreport.core.errors import UsageError

REPO = Path(__file__).resolve().parent.parent
CAPTURED = Path(__file__).parent / "fixtures" / "wrk" / "captured"


def test_client_file_names_follow_the_contract():
    assert client_file("go-http.gomaxprocs-1.block-2.run-3.wrk.txt", "client-2") == "go-http.gomaxprocs-1.block-2.run-3.client-2.wrk.txt"
    assert client_file("a.gomaxprocs-1.c100.run-1.hist.json", "client-10") == "a.gomaxprocs-1.c100.run-1.client-10.hist.json"
    with pytest.raises(UsageError, match="x.json: expected a name ending in"):
        client_file("x.json", "client-1")


def test_remote_wrk_reads_the_script_copied_into_its_work_dir():
    argv = ["wrk", "--latency", "-s", "/checkout/src/wrkreport/bench/histogram.lua", "-t2", "http://10.0.0.2:8080/"]
    assert client_argv(argv, Client("client-1", "root@h", "/tmp/wrkreport-client.abc"))[3] == "/tmp/wrkreport-client.abc/histogram.lua"
    assert client_argv(argv, Client("client-1", "local")) == argv


def test_each_client_runs_its_share_of_the_level_so_the_server_sees_the_level():
    argv = ["wrk", "--latency", "-t2", "-c100", "-d1s", "http://10.0.0.2:8080/"]
    shares = [client_argv(argv, Client(f"client-{i + 1}", "local"), i, 3)[3] for i in range(3)]
    assert shares == ["-c34", "-c33", "-c33"]
    assert client_argv(argv, Client("client-1", "local"), 0, 1) == argv


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("method python3\nms 0.12\nms 0.10\nms 0.30\n", ("TCP connect to 10.0.0.2:22", 3, 0.1, 0.12, 0.3)),
        ("method ping\nms 0.051\nms 0.049\n", ("ICMP echo (ping)", 2, 0.049, 0.05, 0.051)),
        ("method none\n", ("not measured: neither python3 nor ping on client-1", 0, None, None, None)),
        ("method python3\nerror [Errno 113] No route to host\n", ("not measured: [Errno 113] No route to host", 0, None, None, None)),
        ("", ("not measured: neither python3 nor ping", 0, None, None, None)),
    ],
)
def test_rtt_record_reads_each_method(text, expected):
    entry = rtt_record("client-1", "10.0.0.2", text)
    method, samples, low, median, high = expected
    assert method in entry["method"] and (entry["from"], entry["to"]) == ("client-1", "10.0.0.2")
    assert (entry["samples"], entry["min_ms"], entry["median_ms"], entry["max_ms"]) == (samples, low, median, high)


def test_the_client_rtt_script_times_after_one_connect_it_does_not_count():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        port = listener.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-c", RTT_PY, "127.0.0.1", str(port), "3"], capture_output=True, text=True, timeout=30, check=True
        )
        listener.settimeout(1)
        accepted = 0
        try:
            while True:
                listener.accept()[0].close()
                accepted += 1
        except TimeoutError:
            pass
    samples = [line for line in done.stdout.splitlines() if line.startswith("ms ")]
    assert (accepted, len(samples)) == (4, 3)
    assert "not counted" in rtt_record("client-1", "127.0.0.1", "method python3\n" + done.stdout)["method"]


def test_times_delta_reads_dash_and_bash_and_refuses_garbage():
    dash0, dash1 = "0m0.000000s 0m0.000000s 0m0.010000s 0m0.000000s", "0m0.000000s 0m0.000000s 1m2.510000s 0m0.430000s"
    assert times_delta(dash0, dash1) == (62.5, 0.43)
    assert times_delta("0m0.001s 0m0.000s\n0m0.000s 0m0.000s", "0m0.001s 0m0.000s\n0m1.250s 0m0.500s") == (1.25, 0.5)
    assert times_delta("", dash1) is None and times_delta("nonsense", "0m1s") is None


def run_sh(script: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", script], input=stdin, capture_output=True, timeout=30)


FAKE_WRK = "import os, sys\nsys.stdout.write(open(sys.argv[1]).read()); print('to stderr', file=sys.stderr)\nh = os.environ.get('WRKREPORT_HIST_FILE')\nh and open(h, 'w').write('{}')\nsys.exit(int(sys.argv[2]))\n"
ECHO_ARGV = "import json, sys\nprint(json.dumps(sys.argv[1:]))\nsys.stderr.write('no newline at the end')\n"
HOSTILE = [
    "a b",
    "it's",
    '"$(touch pwned)"',
    "`touch pwned`",
    "back\\slash",
    "*",
    "two\nlines",
    "",
    "$NL",
    "'\"'",
    "tab\there",
    "ünï",
    "run x 1 y",
    "go",
]


def answers(stdout: bytes) -> list[tuple[bytes, int]]:
    """Return an agent's answers (what came before each end marker) and their statuses."""
    found, rest = [], stdout
    while (match := END_MARK.search(rest)) is not None:
        found.append((rest[: match.start()], int(match[1])))
        rest = rest[match.end() :]
    assert rest == b"", rest
    return found


def remote_run(tmp_path: Path, name: str, argv: list[str], hist: bool) -> ClientRun:
    out = tmp_path / f"{name}.local.wrk.txt"
    return ClientRun(
        Client("client-1", "root@h", str(tmp_path / "work")),
        name,
        argv,
        out,
        tmp_path / f"{name}.err",
        tmp_path / f"{name}.local.hist.json" if hist else None,
    )


@pytest.mark.parametrize("status", [0, 3])
def test_one_agent_runs_measurements_one_line_each_and_answers_with_output_record_histogram_and_stderr(tmp_path, status):
    work = tmp_path / "work"
    work.mkdir()
    fixture = CAPTURED / "wrk-4.1.0__latency.txt"
    first = remote_run(tmp_path, "m.run-1", [sys.executable, "-c", FAKE_WRK, str(fixture), str(status)], hist=True)
    second = remote_run(tmp_path, "m.run-2", [sys.executable, "-c", ECHO_ARGV, *HOSTILE], hist=False)
    stdin = "".join(f"{run_line(r)}\ngo\n" for r in (first, second)).encode()
    done = run_sh(agent_script(str(work)), stdin)
    assert done.returncode == 0, done.stderr  # it ends at end of input
    (one, one_status), (two, two_status) = answers(done.stdout)
    assert (one_status, two_status) == (status, 0)
    assert one.startswith(READY) and two.startswith(READY)
    for run, answer in ((first, one), (second, two)):
        read_answer(run, answer[len(READY) :])
    assert first.out.read_bytes() == fixture.read_bytes(), "the raw file is wrk's stdout alone"
    assert first.err.read_bytes() == b"to stderr\n"
    assert first.hist.read_text() == "{}"
    assert first.started_ms is not None and first.ended_ms >= first.started_ms >= time.time() * 1000 - 60_000
    assert first.user_s is not None and first.user_s + first.system_s >= 0  # python's start, from `times` around it
    assert json.loads(second.out.read_text()) == HOSTILE, "every argument arrives as it was, none evaluated"
    assert second.err.read_bytes() == b"no newline at the end"
    assert list(work.iterdir()) == [], "the measurements' files and the agent's PID file are removed"


def test_a_lost_answer_leaves_clock_cpu_and_histogram_unknown(tmp_path):
    run = remote_run(tmp_path, "x", [], hist=True)
    run.hist.write_text("stale")
    read_answer(run, STDERR_MARK + b"wrkreport: client-1 (root@h): its ssh session ended\n")
    assert run.out.read_bytes() == b"" and run.err.read_bytes().endswith(b"session ended\n") and not run.hist.exists()
    assert (run.started_ms, run.user_s, run.system_s) == (None, None, None)


def test_an_agent_told_stop_or_seeing_a_stop_file_never_starts_wrk_and_answers_143(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    marker = tmp_path / "started"
    a, b, c = (remote_run(tmp_path, n, ["touch", str(marker)], hist=False) for n in "abc")
    assert run_sh(stop_script(str(work), "b")).returncode == 0
    done = run_sh(agent_script(str(work)), f"{run_line(a)}\nstop\n{run_line(b)}\n{run_line(c)}\n".encode())
    assert [(answer, code) for answer, code in answers(done.stdout)] == [(READY, 143), (b"", 143), (READY, 143)]
    assert not marker.exists(), "c's end of input is a stop too"


@pytest.mark.parametrize(
    ("argv", "seconds"),
    [
        (["wrk", "-t2", "-d30s", "u"], 30),
        (["wrk", "-d", "2m", "u"], 120),
        (["wrk", "--duration=1h", "u"], 3600),
        (["wrk", "--duration", "5", "u"], 5),
        (["wrk", "-c10", "u"], 10),
    ],
)
def test_wrk_duration_reads_every_form_of_d(argv, seconds):
    assert wrk_duration_s(argv) == seconds


def test_stop_and_down_scripts_kill_only_a_recorded_wrk_and_agent_then_remove_the_dir(tmp_path):
    work = tmp_path / "client"
    work.mkdir()
    other = subprocess.Popen(["sleep", "30"])  # recorded, but neither wrk nor an agent: left alone
    (work / "x.pid").write_text(f"{other.pid}\n")
    (work / "agent.1.pid").write_text(f"{other.pid}\n")
    agent = subprocess.Popen(["sh", "-c", agent_script(str(work))], stdin=subprocess.PIPE)  # its input never ends: a lost session
    try:
        deadline = time.monotonic() + 10
        while not (work / f"agent.{agent.pid}.pid").exists():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert run_sh(stop_script(str(work), "x")).returncode == 0
        assert other.poll() is None and (work / "x.stop").exists()
        assert run_sh(down_script(str(work))).returncode == 0
        assert agent.wait(timeout=10) == -signal.SIGTERM
        assert other.poll() is None and not work.exists()
    finally:
        for proc in (other, agent):
            proc.kill()
            proc.wait()


def test_measure_on_a_local_client_keeps_the_single_client_names_and_records_where(tmp_path):
    from helpers import CLIENT_1_HIST, run_helper, started_run
    from helpers import FAKE_WRK as BENCH_FAKE_WRK

    run = started_run(tmp_path, "--setups", "go-http", "--client-hosts", "local")
    state = tmp_path / "clients.json"
    save_clients(state, Clients(str(tmp_path / "ssh" / "%C"), None, [Client("client-1", "local")]))
    fixture = CAPTURED / "wrk-4.1.0__latency.txt"
    name = "go-http.gomaxprocs-1.run-1.wrk.txt"
    done = run_helper(
        "measure",
        "--run",
        str(run),
        "--gomaxprocs",
        "1",
        "--setup",
        "go-http",
        "--repeat",
        "1",
        "--file",
        name,
        "--cpu-file",
        "c.cpu.json",
        "--hist-file",
        "go-http.gomaxprocs-1.run-1.hist.json",
        "--stderr",
        str(tmp_path / "err"),
        "--clients",
        str(state),
        "--",
        sys.executable,
        "-c",
        BENCH_FAKE_WRK,
        str(fixture),
        str(CLIENT_1_HIST),
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads((run / "manifest.json").read_text())["measurements"][0]
    assert (entry["file"], entry["hist_file"], entry["client"], entry["host"], entry["exit_code"]) == (
        name,
        "go-http.gomaxprocs-1.run-1.hist.json",
        "client-1",
        "local",
        0,
    )
    assert "clients" not in entry
    assert (run / name).read_bytes() == fixture.read_bytes() + b"stderr line\n"
    wrk = json.loads((run / "c.cpu.json").read_text())["processes"]["wrk"]
    assert wrk["user_s"] + wrk["system_s"] >= 0.15 and len(wrk["pids"]) == 1 and "clients" not in wrk


def test_warm_up_on_a_local_client_passes_sigterm_on(tmp_path):
    state = tmp_path / "clients.json"
    save_clients(state, Clients(str(tmp_path / "%C"), None, [Client("client-1", "local")]))
    marker = tmp_path / "started"
    child = f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(30)"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wrkreport.bench",
            "warm-up",
            "--run",
            str(tmp_path),
            "--clients",
            str(state),
            "--stderr",
            str(tmp_path / "err"),
            "--",
            sys.executable,
            "-c",
            child,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 10
        while not marker.exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 128 + signal.SIGTERM
        assert time.monotonic() - started < 5
    finally:
        proc.kill()
        proc.wait()


def test_totals_add_the_clients_and_refuse_a_missing_one(tmp_path):
    from wrkreport.core.errors import ParseError
    from wrkreport.parsers import parse_file

    fixture = CAPTURED / "wrk-4.1.0__latency.txt"
    one = parse_file(fixture)
    total = totals([fixture, fixture])
    assert total.requests == 2 * one.requests and total.requests_per_sec == pytest.approx(2 * one.requests_per_sec)
    with pytest.raises(ParseError, match="missing"):
        totals([fixture, tmp_path / "absent.wrk.txt"])
