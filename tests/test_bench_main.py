"""Tests of wrkreport.bench.__main__ (`python3 -m wrkreport.bench`): the subcommands together, as run_bench.sh calls them (docs/driver.md)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import CLIENT_1_HIST, FAKE_WRK, run_helper, started_run
from wrkreport.bench.cpu import child_pids, cpu_ticks
from wrkreport.bench.manifest import shuffled_orders
from wrkreport.checks.measurements import readiness_checks
from wrkreport.core.setups import DEFAULT_SETUP_IDS
from wrkreport.runs.directory import load_run

REPO = Path(__file__).resolve().parent.parent
CAPTURED = Path(__file__).parent / "fixtures" / "wrk" / "captured"
HEADERS_200 = (
    b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n"
    b"Server: gophr\r\nDate: Sun, 22 Nov 2026 16:47:00 GMT\r\n\r\n"
)
HEADERS_502 = (
    b"HTTP/1.1 502 Bad Gateway\r\nServer: nginx\r\nDate: Sun, 22 Nov 2026 16:47:00 GMT\r\n"
    b"Content-Type: text/html\r\nContent-Length: 150\r\nConnection: keep-alive\r\n\r\n"
)


# --- the subcommands together, as the script calls them; checked against the contract -------


def documented_manifest() -> dict:
    """Return the manifest example of docs/raw-format.md, comments stripped."""
    text = (REPO / "docs" / "raw-format.md").read_text()
    block = text.split("## manifest.json", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    return json.loads(re.sub(r"\s+//.*$", "", block, flags=re.M))


def test_manifest_lifecycle_follows_the_documented_contract(tmp_path):
    out = tmp_path / "raw"
    plan_file = tmp_path / "plan.json"
    done = run_helper(
        "plan", "--root", str(tmp_path), "--save", str(plan_file), "--", "--quick", "--out", str(out), "--seed", "3", "--gomaxprocs", "1,2"
    )
    assert done.returncode == 0, done.stderr
    done = run_helper("init", "--plan", str(plan_file), "--command-line", "./run_bench.sh --quick", "--ulimit-n", "4096")
    assert done.returncode == 0, done.stderr
    run = Path(done.stdout.strip())
    assert run.parent == out and (out / "latest").resolve() == run.resolve()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "running" and manifest["ended_at"] is None

    order = run_helper("pass-start", "--run", str(run), "--gomaxprocs", "1").stdout.split("\n")
    assert order[0].split() == shuffled_orders(list(DEFAULT_SETUP_IDS), 1, 3, 1)[0]
    (run / "go.log").write_text("gohello: GOMAXPROCS=1 http=127.0.0.1:1 fcgi-tcp=127.0.0.1:2 pid=5 ready\n")
    (run / "go-http.gomaxprocs-1.headers.txt").write_bytes(HEADERS_200)
    (run / "nginx-fcgi-unix.gomaxprocs-1.headers.txt").write_bytes(HEADERS_502)
    (run / "nginx-fcgi-tcp.gomaxprocs-1.headers.txt").write_bytes(HEADERS_200.replace(b"Server: gophr", b"Server: go"))
    ready = run_helper(
        "pass-ready", "--run", str(run), "--gomaxprocs", "1", "--go-pid", "5", "--go-log", str(run / "go.log"),
        "--cell", "go-http", "1", str(run / "go-http.gomaxprocs-1.headers.txt"), "",
        "--cell", "nginx-fcgi-unix", "1", str(run / "nginx-fcgi-unix.gomaxprocs-1.headers.txt"), "",
        "--cell", "nginx-fcgi-tcp", "1", str(run / "nginx-fcgi-tcp.gomaxprocs-1.headers.txt"), "",
        "--cell", "nginx-http", "0", "", "no HTTP answer from http://127.0.0.1:8081/ within 10s",
    )  # fmt: skip
    assert ready.returncode == 0, ready.stderr
    assert ready.stdout.splitlines() == [
        "nginx_workers",
        "node_workers",
        "measure go-http",
        "skip nginx-fcgi-unix answered 'HTTP/1.1 502 Bad Gateway', not 200",
        "measure nginx-fcgi-tcp note: 138-byte header block, expected 141",
        "skip nginx-http no HTTP answer from http://127.0.0.1:8081/ within 10s",
    ]
    name = "go-http.gomaxprocs-1.block-1.run-1.wrk.txt"
    measured = run_helper(
        "measure", "--run", str(run), "--gomaxprocs", "1", "--setup", "go-http", "--repeat", "1", "--block", "1", "--round", "1", "--file", name,
        "--cpu-file", name.replace(".wrk.txt", ".cpu.json"), "--hist-file", name.replace(".wrk.txt", ".hist.json"), "--stderr", str(tmp_path / "wrk.stderr"),
        "--", sys.executable, "-c", FAKE_WRK, str(CAPTURED / "wrk-4.1.0__latency.txt"), str(CLIENT_1_HIST),
    )  # fmt: skip
    assert measured.returncode == 0, measured.stderr
    assert re.fullmatch(r"\[run_bench\] \[\d/8\] go-http GOMAXPROCS=1 run 1/1 \(~\d+s left\) \.\.\. 60,042 req/s\n", measured.stderr)
    assert run_helper("pass-note", "--run", str(run), "--gomaxprocs", "1", "--note", "x: y").returncode == 0
    assert run_helper("pass-end", "--run", str(run), "--gomaxprocs", "1").returncode == 0
    finished = run_helper("finish", "--run", str(run), "--status", "complete")
    assert finished.returncode == 0 and finished.stdout.splitlines()[0].startswith(
        "GOMAXPROCS=1 go-http          60,042 req/s (median of 1); CPU ms per 1k requests: go "
    )

    manifest = json.loads((run / "manifest.json").read_text())
    doc = documented_manifest()
    assert set(doc) <= set(manifest), "a documented key is missing"
    assert set(doc["parameters"]) <= set(manifest["parameters"])
    assert set(doc["machine"]) <= set(manifest["machine"])
    assert set(doc["versions"]) == set(manifest["versions"])
    assert set(doc["sysctl"]) - {"..."} <= set(manifest["sysctl"])
    assert set(doc["passes"][0]) <= set(manifest["passes"][0])
    assert set(doc["passes"][0]["cells"]["go-http"]) <= set(manifest["passes"][0]["cells"]["go-http"])
    assert set(doc["measurements"][0]) == set(manifest["measurements"][0])
    assert manifest["status"] == "complete" and manifest["reason"] is None and manifest["ended_at"]
    assert manifest["command"] == "./run_bench.sh --quick" and manifest["ulimit_n"] == 4096
    assert manifest["parameters"]["seed"] == 3 and manifest["parameters"]["profile"] == "quick"
    first = manifest["passes"][0]
    assert first["go_reported_gomaxprocs"] == 1 and first["pids"]["go"] == 5 and first["notes"] == ["x: y"]
    assert first["cells"]["go-http"]["header_bytes"] == 141 and first["cells"]["go-http"]["error"] is None
    assert first["cells"]["nginx-fcgi-unix"]["header_bytes"] == 150 and first["ended_at"]
    assert first["cells"]["nginx-http"] == {
        "ready": False, "headers_captured": False, "status_line": None, "header_bytes": None,
        "error": "no HTTP answer from http://127.0.0.1:8081/ within 10s", "url": "http://127.0.0.1:8081/", "headers_file": None,
    }  # fmt: skip
    entry = manifest["measurements"][0]
    assert entry["file"] == name and entry["exit_code"] == 0 and entry["cpu_file"] == name.replace(".wrk.txt", ".cpu.json")
    assert entry["command"] == f"{sys.executable} -c {FAKE_WRK} {CAPTURED / 'wrk-4.1.0__latency.txt'} {CLIENT_1_HIST}"
    assert entry["hist_file"] == name.replace(".wrk.txt", ".hist.json")  # the path reached wrk through its environment
    assert (run / entry["hist_file"]).read_bytes() == CLIENT_1_HIST.read_bytes()
    # The report's readiness check says "not measured" once, as the script's warning does.
    readiness = {c.setup: c.message for c in readiness_checks(load_run(run))}
    assert readiness["nginx-fcgi-unix"] == "nginx-fcgi-unix at GOMAXPROCS=1 was not measured: answered 'HTTP/1.1 502 Bad Gateway', not 200"


def documented_cpu_file() -> dict:
    """Return the .cpu.json example of docs/raw-format.md, comments stripped."""
    text = (REPO / "docs" / "raw-format.md").read_text()
    block = text.split("## The CPU file", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    return json.loads(re.sub(r"\s+//.*$", "", block, flags=re.M))


def measure_args(run: Path, name: str, tmp_path: Path, *ids: str) -> list[str]:
    """Return the arguments of `measure` for the wrk file name, as the script passes them."""
    return [
        "measure",
        "--run",
        str(run),
        *ids,
        "--file",
        name,
        "--cpu-file",
        name.replace(".wrk.txt", ".cpu.json"),
        "--stderr",
        str(tmp_path / "wrk.stderr"),
    ]


def test_measure_writes_the_output_the_documented_cpu_file_and_the_manifest_entry(tmp_path):
    run = started_run(tmp_path, "--connections", "10,50", "--setups", "go-http,nginx-http", "--pin-client", "0", "--pin-server", "1")
    server = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.001)"])  # "Go"
    name = "nginx-http.gomaxprocs-1.c50.run-1.wrk.txt"
    ids = ("--gomaxprocs", "1", "--connections", "50", "--setup", "nginx-http")
    fixture = CAPTURED / "wrk-4.1.0__latency.txt"
    try:
        assert run_helper("pass-ready", "--run", str(run), "--gomaxprocs", "1", "--go-pid", str(server.pid)).returncode == 0
        done = run_helper(*measure_args(run, name, tmp_path, *ids, "--repeat", "1"), "--", sys.executable, "-c", FAKE_WRK, str(fixture))
        assert done.returncode == 0, done.stderr
    finally:
        server.kill()
        server.wait()
    assert (run / name).read_bytes() == fixture.read_bytes() + b"stderr line\n"
    cpu = json.loads((run / name.replace(".wrk.txt", ".cpu.json")).read_text())
    doc = documented_cpu_file()
    assert list(cpu) == list(doc) and list(cpu["processes"]) == list(doc["processes"])
    assert (cpu["file"], cpu["setup"], cpu["gomaxprocs"], cpu["connections"], cpu["repeat"]) == (name, "nginx-http", 1, 50, 1)
    assert cpu["processes"]["go"]["pids"] == [server.pid] and set(cpu["processes"]["go"]) == set(doc["processes"]["go"])
    assert cpu["processes"]["nginx"] is None and cpu["processes"]["fasthttp"] is None  # not started in this pass
    wrk = cpu["processes"]["wrk"]
    assert set(wrk) == set(doc["processes"]["wrk"]) and wrk["threads"] == 2 and wrk["pids"][0] != server.pid
    assert wrk["user_s"] + wrk["system_s"] >= 0.15  # the stand-in's own CPU, not the wrapper's
    assert cpu["wall_s"] >= 0.15 and cpu["clock_ticks_per_s"] == os.sysconf("SC_CLK_TCK")
    assert cpu["pinning"] == {"client": "0", "server": "1"}

    name2 = name.replace("run-1", "run-2")
    failed = run_helper(
        *measure_args(run, name2, tmp_path, *ids, "--repeat", "2"), "--", sys.executable, "-c", FAKE_WRK + "sys.exit(1)\n", str(fixture)
    )
    assert failed.returncode == 0, failed.stderr  # wrk's own failure is recorded, not the helper's
    assert failed.stderr.endswith("... 60,042 req/s (wrk exit 1)\n")
    measurements = json.loads((run / "manifest.json").read_text())["measurements"]
    assert [(m["connections"], m["repeat"], m["exit_code"]) for m in measurements] == [(50, 1, 0), (50, 2, 1)]
    assert [m["cpu_file"] for m in measurements] == [name.replace(".wrk.txt", ".cpu.json"), name2.replace(".wrk.txt", ".cpu.json")]
    summary = run_helper("summary", "--run", str(run)).stdout.splitlines()
    assert "GOMAXPROCS=1 c=50 nginx-http       60,042 req/s (median of 2); CPU ms per 1k requests: go " in "\n".join(summary)
    assert summary[0] == "GOMAXPROCS=1 c=10 go-http          no result"


def test_measure_passes_sigterm_on_removes_its_partial_files_and_records_nothing(tmp_path):
    run = started_run(tmp_path, "--setups", "go-http")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    marker = tmp_path / "started"
    child = f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\nprint('partial', flush=True)\ntime.sleep(30)"
    args = [
        sys.executable,
        "-m",
        "wrkreport.bench",
        *measure_args(run, "x.wrk.txt", tmp_path, "--gomaxprocs", "1", "--setup", "go-http", "--repeat", "1"),
    ]
    proc = subprocess.Popen([*args, "--", sys.executable, "-c", child], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not marker.exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        stand_in = child_pids(proc.pid)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    assert len(stand_in) == 1 and cpu_ticks(stand_in[0]) is None, "the measured command must be stopped too"
    assert not (run / "x.cpu.json").exists() and not (run / "x.wrk.txt").exists()
    assert json.loads((run / "manifest.json").read_text())["measurements"] == []


def test_second_init_in_the_same_second_gets_a_suffix(tmp_path):
    plan_file = tmp_path / "plan.json"
    run_helper("plan", "--root", str(tmp_path), "--save", str(plan_file), "--", "--out", str(tmp_path / "raw"))
    runs = [Path(run_helper("init", "--plan", str(plan_file), "--command-line", "x").stdout.strip()) for _ in range(2)]
    assert runs[0] != runs[1] and runs[0].is_dir() and runs[1].is_dir()
    if runs[0].name[:16] == runs[1].name[:16]:
        assert runs[1].name == runs[0].name + "-2"


def test_usage_error_message_and_status(tmp_path):
    done = run_helper("plan", "--root", "/r", "--save", str(tmp_path / "plan.json"), "--", "--threads", "x")
    assert done.returncode == 2
    assert done.stderr == "run_bench.sh: --threads must be a whole number, not 'x' (see ./run_bench.sh --help)\n"


@pytest.mark.parametrize(
    "options",
    [
        ["--threads", "9" * 5000],
        ["--connections", "1," + "9" * 5000],
        ["--handler-delay", "9" * 5000 + "ms"],
        ["--pin-server", "0-" + "9" * 5000],
        ["--gomaxprocs", "12345"],
        ["--repeats", "10000"],
        ["--handler-delay", "-1ms"],
        ["--setups", "x" * 5000],
        ["--port", "x" * 5000],
        ["--" + "x" * 5000],
        ["--pin-client", "0\n" * 2500],
    ],
)
def test_every_bad_option_is_exit_2_with_one_line(tmp_path, options):
    done = run_helper("plan", "--root", "/r", "--save", str(tmp_path / "plan.json"), "--", *options)
    assert done.returncode == 2 and done.stdout == "" and not (tmp_path / "plan.json").exists()
    assert done.stderr.startswith("run_bench.sh: ") and done.stderr.count("\n") == 1 and len(done.stderr) < 300


@pytest.mark.parametrize(("make", "problem"), [("/proc/1/x", "cannot create a directory in /proc/1 ("), ("FILE/raw", "is not a directory")])
def test_an_out_where_no_run_can_be_written_is_exit_2_before_anything(tmp_path, make, problem):
    (tmp_path / "FILE").write_text("a file, not a directory\n")
    out = make.replace("FILE", str(tmp_path / "FILE"))
    done = run_helper("plan", "--root", str(tmp_path), "--save", str(tmp_path / "plan.json"), "--", "--out", out)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"run_bench.sh: --out {out}: ") and problem in done.stderr
    assert not (tmp_path / "plan.json").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


def test_an_init_failure_names_run_bench_sh_and_the_subcommand_not_the_command_line(tmp_path):
    plan_file = tmp_path / "plan.json"
    assert run_helper("plan", "--root", str(tmp_path), "--save", str(plan_file), "--", "--out", str(tmp_path / "out")).returncode == 0
    (tmp_path / "out").write_text("made a file after the plan was checked\n")
    done = run_helper("init", "--plan", str(plan_file), "--command-line", "./run_bench.sh --quick")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("run_bench.sh: init: ") and "--quick" not in done.stderr and done.stderr.count("\n") == 1


def test_tune_records_its_changes_in_the_run_manifest(tmp_path):
    run = started_run(tmp_path, "--setups", "go-http")
    proc_sys = tmp_path / "proc-sys"
    for key, value in {"net/core/somaxconn": "4096", "net/ipv4/tcp_fin_timeout": "60", "fs/file-max": "100"}.items():
        (proc_sys / key).parent.mkdir(parents=True, exist_ok=True)
        (proc_sys / key).write_text(value + "\n")
    done = run_helper("tune", "--run", str(run), "--proc-sys", str(proc_sys))
    assert done.returncode == 0, done.stderr
    assert "[run_bench] sysctl net.core.somaxconn: 4096 -> 65535\n" in done.stderr
    manifest = json.loads((run / "manifest.json").read_text())
    changes = {c["key"]: c for c in manifest["sysctl_changes"]}
    assert changes["net.core.somaxconn"] == {"key": "net.core.somaxconn", "from": "4096", "to": "65535", "action": "write", "ok": True}
    assert changes["fs.file-max"]["from"] == "100" and changes["net.ipv4.tcp_tw_recycle"]["action"] == "absent"
    assert manifest["sysctl"]["net.core.somaxconn"] == "65535" and manifest["sysctl"]["fs.file-max"] == "9999999"  # as measured
    assert (proc_sys / "net/ipv4/tcp_fin_timeout").read_text() == "30\n"


def test_a_save_path_that_is_not_a_regular_file_is_never_replaced(tmp_path):
    fifo, link = tmp_path / "fifo", tmp_path / "link"
    os.mkfifo(fifo)
    link.symlink_to(tmp_path / "elsewhere.json")
    for target in (fifo, link, tmp_path):
        done = run_helper("plan", "--root", str(tmp_path), "--save", str(target), "--", "--out", str(tmp_path / "raw"))
        assert done.returncode == 1 and done.stderr == f"run_bench.sh: plan: {target} exists and is not a regular file; not replaced\n"
    assert fifo.is_fifo() and link.is_symlink() and not (tmp_path / "elsewhere.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link"]


def test_serve_answers_each_command_with_its_output_and_status_and_keeps_the_manifest_written(tmp_path):
    out = tmp_path / "raw"
    plan_file = tmp_path / "plan.json"
    assert (
        run_helper(
            "plan",
            "--root",
            str(tmp_path),
            "--save",
            str(plan_file),
            "--",
            "--blocks",
            "2",
            "--rounds-per-block",
            "2",
            "--out",
            str(out),
            "--seed",
            "3",
            "--gomaxprocs",
            "1",
        ).returncode
        == 0
    )
    run = Path(run_helper("init", "--plan", str(plan_file), "--command-line", "x").stdout.strip())
    name = "go-http.gomaxprocs-1.block-2.run-3.wrk.txt"
    commands = [
        ["pass-start", "--gomaxprocs", "1", "--block", "2", "--first-round", "3", "--rounds", "2"],
        ["measure", "--gomaxprocs", "1", "--setup", "go-http", "--repeat", "3", "--block", "2", "--round", "1", "--file", name,
         "--cpu-file", name.replace(".wrk.txt", ".cpu.json"), "--stderr", str(tmp_path / "wrk.stderr"),
         "--", sys.executable, "-c", FAKE_WRK, str(CAPTURED / "wrk-4.1.0__latency.txt")],
        ["pass-note", "--gomaxprocs", "1", "--note", "a note with spaces\nand a newline"],
        ["pass-end", "--gomaxprocs", "1"],
        ["pass-note", "--gomaxprocs", "9", "--note", "no such pass"],
        ["no-such-subcommand"],
        ["finish", "--status", "complete"],
    ]  # fmt: skip
    stdin = b"".join(b"".join(arg.encode() + b"\0" for arg in [*command, "\x1e"]) for command in commands)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "wrkreport.bench", "serve", "--run", str(run)],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = done.stdout.decode().split("@@done ")
    statuses = [int(answer.split("\n", 1)[0]) for answer in answers[1:]]
    assert statuses == [0, 0, 0, 0, 1, 2, 0]
    assert answers[0].splitlines() == [" ".join(order) for order in shuffled_orders(list(DEFAULT_SETUP_IDS), 2, 3, 1, 2)]
    assert "GOMAXPROCS=1 go-http          60,042 req/s (median of 1)" in answers[-2]
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete" and (run / name).is_file()
    entry = manifest["passes"][0]
    assert (entry["block"], entry["rounds"], entry["notes"]) == (2, [3, 4], ["a note with spaces\nand a newline"])
    m = manifest["measurements"][0]
    assert (m["block"], m["round"], m["repeat"]) == (2, 1, 3)
    assert re.fullmatch(r"[0-9T:-]+\.[0-9]{3}Z", m["started_at"]) and m["ended_at"] >= m["started_at"]
    assert "no pass for GOMAXPROCS=9" in done.stderr.decode()


@pytest.mark.parametrize(
    "manifest, command",
    [
        ({"passes": "x", "measurements": 3, "parameters": []}, ["pass-end", "--gomaxprocs", "1"]),
        ({"passes": [], "measurements": 3, "parameters": []}, ["finish", "--status", "complete"]),
        ({"passes": [], "measurements": [], "parameters": []}, ["summary"]),
    ],
)
def test_a_manifest_edited_into_the_wrong_shape_is_one_line_exit_1(tmp_path, manifest, command):
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    done = run_helper(*command, "--run", str(tmp_path))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0
    assert f"{tmp_path}/manifest.json has an unexpected shape" in done.stderr


def test_the_helpers_help_lists_every_subcommand_without_a_traceback():
    # decide's docstring says "in %": argparse formats help text with %, so it must be escaped.
    done = run_helper("--help")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "worst half-width in %" in " ".join(done.stdout.split()) and "summary" in done.stdout
