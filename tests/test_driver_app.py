"""End-to-end tests of ./run_bench.sh --app: a real app that is not the project's Go code (tests/app_server.py,
Python's standard library, with worker processes and an API key; as FastCGI under flup) through every app setup
(app, nginx-app, nginx-app-unix, nginx-app-fcgi-unix) in one run, then `wrkreport build`; each bad --app, --app-unix
or --app-fcgi input exits 2 with one line and leaves nothing running (checked by the app processes' process groups).

Same rules as tests/test_driver.py: private ports, --out and TMPDIR per test.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from helpers import (
    SCRIPT,
    USED_PORTS,
    assert_in_its_own_group_beside,
    default_sigint,
    free_port_block,
    group_members,
    latest_run,
    needs_tools,
    port_args,
    port_is_free,
    processes_mentioning,
    script_env,
)

APP = Path(__file__).parent / "app_server.py"
KEY = "s3cr3t-Key-4711"  # the API key: must appear nowhere under raw/ or reports/
KEY_ENV = "APP_SERVER_KEY"
TOKEN = "tok-0815-geheim"
HEADERS = ["--app-header", f"Authorization: Bearer {KEY}", "--app-header", f"X-Api-Token: {TOKEN}"]
PORT_NAMES = ("app", "nginx-app", "nginx-app-unix", "nginx-app-fcgi-tcp", "nginx-app-fcgi-unix", "app-fcgi")
APP_PROCESSES = ("app", "app-unix", "app-fcgi")

# Both modules run the one tests/app_server.py and check that no process of it is left: their own, found by the
# TMPDIR their run was given (helpers.processes_mentioning), so they run beside the other real runs, judging no timing.


def app_command(*extra: str, where: str = "{port}") -> str:
    """Return the --app command line of the test app (its port as {port}; --unix {socket} for --app-unix, --fcgi {socket} for --app-fcgi)."""
    return " ".join([sys.executable, str(APP), where, *extra])


def run_app(args: list[str], out: Path, tmp: Path, ports: dict[str, int], timeout: float = 240) -> subprocess.CompletedProcess:
    argv = [str(SCRIPT), "--quick", "--gomaxprocs", "1", "--out", str(out), *port_args(ports), *args]
    env = {**script_env(tmp), KEY_ENV: KEY}  # the app's key: in its environment, not on its recorded command line
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False)


PGID = re.compile(r"\bpgid ([0-9]+)\b")


def assert_nothing_left(out: Path, tmp: Path, ports: dict[str, int]) -> None:
    """No process of the app's process groups runs (the manifest's, and those its log names: a run stopped before recording
    them), no app mentions the run's paths, its ports are free, the work dir is gone."""
    if (out / "latest").exists():
        run, manifest = latest_run(out)
        groups = {entry["pids"].get(name) for entry in manifest["passes"] for name in APP_PROCESSES} - {None}
        groups |= {int(m[1]) for log in (run / "logs").glob("app*.log") for m in PGID.finditer(log.read_text(errors="replace"))}
        assert groups, "no process group of the app found"
        for pgid in groups:
            assert group_members(pgid) == {}, f"the app's process group {pgid} still runs"
    assert processes_mentioning([str(APP), str(tmp)], tmp) == []  # this test's app: the others may run beside it
    assert all(port_is_free(port) for port in ports.values())
    assert list(tmp.iterdir()) == [], "work dir left behind"


@pytest.fixture()
def dirs():
    top = Path(tempfile.mkdtemp(prefix="rba", dir="/tmp"))
    top.chmod(0o711)  # as root, nginx's workers (nobody) must traverse it
    (top / "tmp").mkdir()
    yield top / "out", top / "tmp"
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="module")
def app_run():
    """Run --app, --app-unix and --app-fcgi (on a socket) once (workers, key, quick profile with its fixed-rate phase) and build its report;
    yield (done, run, manifest, built, report dir, ports)."""
    top = Path(tempfile.mkdtemp(prefix="rba", dir="/tmp"))
    top.chmod(0o711)
    out, tmp, reports = top / "out", top / "tmp", top / "reports"
    tmp.mkdir()
    ports = free_port_block(PORT_NAMES, 19900, 20900, USED_PORTS)
    done = run_app(
        [
            "--app",
            app_command("--workers", "2", "--key-env", KEY_ENV),
            "--app-path",
            "/data.json",
            *HEADERS,
            "--app-unix",
            app_command("--workers", "2", "--key-env", KEY_ENV, where="--unix {socket}"),
            "--app-fcgi",
            app_command("--key-env", KEY_ENV, where="--fcgi {socket}"),
            "--app-version",
            f"echo app_server 1.0 {TOKEN}",
        ],
        out,
        tmp,
        ports,
    )
    run, manifest = latest_run(out) if (out / "latest").exists() else (None, None)
    built = (
        subprocess.run(
            [sys.executable, "-m", "wrkreport", "build", str(run), "--out", str(reports)], capture_output=True, text=True, check=False
        )
        if run
        else None
    )
    yield done, run, manifest, built, reports, ports, (out, tmp)
    shutil.rmtree(top, ignore_errors=True)


@pytest.mark.slow
@needs_tools
def test_an_app_through_every_app_setup_then_build(app_run):
    done, run, manifest, built, reports, ports, (out, tmp) = app_run
    assert done.returncode == 0, done.stderr
    assert manifest["parameters"]["setups"] == ["app", "nginx-app", "nginx-app-unix", "nginx-app-fcgi-unix"]
    assert manifest["parameters"]["urls"]["app"] == f"http://127.0.0.1:{ports['app']}/data.json"
    app = manifest["parameters"]["app"]
    assert app["path"] == "/data.json" and app["headers"] == ["Authorization: <redacted>", "X-Api-Token: <redacted>"]
    assert (
        app["version"] == "app_server 1.0 <redacted>" and app["version_command"] == "echo app_server 1.0 <redacted>"
    )  # a secret value redacted there too
    assert "GOMAXPROCS=1" in (run / "logs" / "app.gomaxprocs-1.log").read_text()  # in its environment
    assert app["unix_command"].endswith("--unix {socket} --workers 2 --key-env APP_SERVER_KEY") and "--fcgi {socket}" in app["fcgi_command"]
    cells = manifest["passes"][0]["cells"]
    for setup in ("nginx-app", "nginx-app-unix", "nginx-app-fcgi-unix"):  # the same status and body as the app alone: checks passed
        assert cells[setup]["error"] is None and cells[setup]["body_sha256"] == cells["app"]["body_sha256"], (setup, cells[setup])
        assert "Server (changed)" in cells[setup]["headers_changed"], (setup, cells[setup])
    assert cells["app"]["body_bytes"] > 500
    cpu = json.loads((run / "app.gomaxprocs-1.block-1.run-1.cpu.json").read_text())
    assert len(cpu["processes"]["app"]["pids"]) == 3  # the app and its 2 worker processes
    assert cpu["processes"]["app"]["user_s"] + cpu["processes"]["app"]["system_s"] > 0
    pids = manifest["passes"][0]["pids"]
    serving = {
        "nginx-app": ("app", 3),
        "nginx-app-unix": ("app-unix", 3),
        "nginx-app-fcgi-unix": ("app-fcgi", 1),
    }  # flup: one process, threads
    for setup, (process, count) in serving.items():  # each setup's CPU: nginx and the one app process serving it, not the idle others
        proxied = json.loads((run / f"{setup}.gomaxprocs-1.block-1.run-1.cpu.json").read_text())["processes"]
        assert proxied["nginx"]["user_s"] + proxied["nginx"]["system_s"] > 0, setup
        assert len(proxied["app"]["pids"]) == count and pids[process] in proxied["app"]["pids"], (setup, proxied["app"])
        assert proxied["app"]["user_s"] + proxied["app"]["system_s"] > 0, setup
    assert len({pids[name] for name in APP_PROCESSES}) == 3  # three process groups
    measured = {m["setup"] for m in manifest["measurements"]}
    assert measured == set(manifest["parameters"]["setups"])
    assert built.returncode == 0 and "Traceback" not in built.stderr, built.stderr
    results = json.loads((reports / "results.json").read_text())
    text = json.dumps(results)
    assert '"excluded": "' not in text, text[:2000]
    for setup in ("nginx-app", "nginx-app-unix", "nginx-app-fcgi-unix"):
        ratios = [r for r in results["ratios"] if r["setup"] == setup]
        assert ratios and ratios[0]["baseline"] == "app" and 0 < ratios[0]["ratio"] < 10, (
            setup,
            ratios,
        )  # one short repeat on a shared machine: a plausible figure, not a tight one
    page = (reports / "index.html").read_text()
    assert "What nginx in front of your app costs" in page and "only Go reads it" in page and "of your app&#39;s throughput alone" in page
    assert "nginx FastCGI to your app over a Unix socket" in page
    assert_nothing_left(out, tmp, ports)


@pytest.mark.slow
@needs_tools
def test_a_secret_header_appears_nowhere_under_the_run_or_the_report(app_run):
    done, run, manifest, built, reports, ports, _ = app_run
    assert done.returncode == 0, done.stderr
    assert manifest["fixed_rate_measurements"], "the fixed-rate phase (vegeta, with the headers) ran"
    for top in (run, reports):
        for path in top.rglob("*"):
            if path.is_file():
                data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()  # vegeta's results too
                assert KEY.encode() not in data and TOKEN.encode() not in data, path
    assert "<redacted>" in manifest["command"] and KEY not in manifest["command"]
    assert any("Authorization: <redacted>" in m["command"] for m in manifest["measurements"])


BAD = {
    "exits at once": (["--app", "echo boom pgid $$ {port} >&2; exit 3"], "exited with status 3", "boom"),
    # --ready-timeout 2: it is refused when the wait ends, so the test need not wait the default 10 s to see it
    "never listens": (["--app", "echo waiting pgid $$; sleep 300 # {port}", "--ready-timeout", "2"], "did not answer", "waiting"),
    "listens elsewhere": (
        ["--app", app_command().replace("{port}", "OTHER") + " # {port}", "--ready-timeout", "2s"],
        "did not answer",
        "app_server: port",
    ),
    "answers non-2xx": (
        ["--app", app_command(), "--app-path", "/missing.json"],
        "answered 'HTTP/1.1 404 Not Found', not 2xx",
        "app_server: port",
    ),
    "answers otherwise behind nginx": (
        ["--app", app_command("--echo-peer"), "--app-path", "/data.json"],
        "nginx-app (nginx in front of your app",
        "app_server",
    ),
}


@pytest.mark.slow
@needs_tools
@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_app_input_exits_2_with_one_line_and_leaves_nothing_running(dirs, case):
    out, tmp = dirs
    ports = free_port_block(PORT_NAMES, 19900, 20900, USED_PORTS)
    other = free_port_block(("other",), 19900, 20900, USED_PORTS)["other"]
    args, reason, log_text = BAD[case]
    args = [a.replace("OTHER", str(other)) for a in args]
    done = run_app(args, out, tmp, ports)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    assert reason in errors[0] and "--app '" in errors[0] and "the last lines of logs/app.gomaxprocs-1.log" in errors[0], errors[0]
    assert log_text in errors[0], errors[0]
    assert "--ready-timeout" not in args or "within 2s" in errors[0], errors[0]  # the wait it was given, said
    assert "Traceback" not in done.stderr
    assert_nothing_left(out, tmp, {**ports, "other": other})


# --app-unix and --app-fcgi: (their args beside a good --app, what the one error line says, the option named, the log named, its text).
BAD_BESIDE = {
    "unix exits at once": (
        ["--app-unix", "echo boom pgid $$ {socket} >&2; exit 3"],
        "exited with status 3 before answering on its Unix socket",
        "your app (--app-unix '",
        "app-unix",
        "boom",
    ),
    "fcgi never listens": (
        ["--app-fcgi", "echo waiting pgid $$; sleep 300 # {port}", "--ready-timeout", "2"],
        "did not answer on 127.0.0.1:",
        "your app (--app-fcgi '",
        "app-fcgi",
        "waiting",
    ),
    "unix answers otherwise behind nginx": (
        ["--app-unix", app_command("--echo-peer", where="--unix {socket}")],
        "where the app alone answers",
        "nginx-app-unix (nginx in front of your app, --app-unix '",
        "app-unix",
        "app_server",
    ),
    "fcgi over TCP answers otherwise behind nginx": (
        ["--app-fcgi", app_command("--key-env", KEY_ENV, where="--fcgi {port}")],
        "401",
        "nginx-app-fcgi-tcp (nginx in front of your app, --app-fcgi '",
        "app-fcgi",
        "FastCGI on",
    ),
}


@pytest.mark.slow
@needs_tools
@pytest.mark.parametrize("case", sorted(BAD_BESIDE))
def test_bad_app_unix_or_fcgi_input_exits_2_with_one_line_naming_it_and_leaves_nothing_running(dirs, case):
    out, tmp = dirs
    ports = free_port_block(PORT_NAMES, 19900, 20900, USED_PORTS)
    args, reason, who, log_name, log_text = BAD_BESIDE[case]
    done = run_app(["--app", app_command(), "--app-path", "/data.json", *args], out, tmp, ports)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    assert reason in errors[0] and who in errors[0] and f"the last lines of logs/{log_name}.gomaxprocs-1.log" in errors[0], errors[0]
    assert log_text in errors[0] and "Traceback" not in done.stderr, errors[0]
    assert_nothing_left(out, tmp, ports)
    assert not list(tmp.rglob("*.sock"))


def test_app_unix_without_its_socket_or_without_app_is_refused_before_anything_starts(dirs):
    out, tmp = dirs
    for args, said in (
        (["--app", app_command(), "--app-unix", app_command(where="--unix /tmp/x.sock")], "no {socket} in it"),
        (["--app-fcgi", app_command(where="--fcgi {port}")], "--app-fcgi starts your app beside --app 'CMD' ({port}), which is not given"),
    ):
        done = subprocess.run(
            [str(SCRIPT), "--quick", *args, "--out", str(out)], capture_output=True, text=True, env=script_env(tmp), timeout=60, check=False
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
        assert not out.exists() and list(tmp.iterdir()) == []


def test_an_app_command_without_its_port_is_refused_before_anything_starts(dirs):
    out, tmp = dirs
    done = subprocess.run(
        [str(SCRIPT), "--quick", "--app", "python3 -m http.server 8000", "--out", str(out)],
        capture_output=True,
        text=True,
        env=script_env(tmp),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no {port} in it" in done.stderr, done.stderr
    assert not out.exists() and list(tmp.iterdir()) == []


def test_an_app_setup_without_app_is_a_usage_error(dirs):
    out, tmp = dirs
    done = subprocess.run(
        [str(SCRIPT), "--quick", "--setups", "go-http,nginx-app", "--out", str(out)],
        capture_output=True,
        text=True,
        env=script_env(tmp),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "give its command line with --app" in done.stderr, done.stderr


def recorded_app(out: Path) -> int | None:
    """Return the app's PID as the latest pass recorded it (None: no manifest, no pass or no pass-ready yet)."""
    try:
        passes = latest_run(out)[1]["passes"]
    except (OSError, ValueError, KeyError, IndexError):
        return None
    return passes[-1]["pids"].get("app") if passes else None


@pytest.mark.slow
@needs_tools
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_measurement_stops_the_apps_whole_process_group(dirs, signum, status):
    out, tmp = dirs
    ports = free_port_block(PORT_NAMES, 19900, 20900, USED_PORTS)
    argv = [
        str(SCRIPT),
        "--quick",
        "--duration",
        "4",
        "--gomaxprocs",
        "1",
        "--warmup",
        "0",
        "--out",
        str(out),
        *port_args(ports),
        "--app",
        app_command("--workers", "2"),
        "--app-path",
        "/data.json",
    ]
    proc = subprocess.Popen(argv, env=script_env(tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 60
        # pass-ready has recorded the app (after the header capture's curl) and wrk is loading it, or nginx in front of it
        while not (
            (app := recorded_app(out))
            and processes_mentioning([f"127.0.0.1:{ports['app']}/data.json", f"127.0.0.1:{ports['nginx-app']}/data.json"])
        ):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1]
            time.sleep(0.05)
        time.sleep(0.5)
        assert processes_mentioning([str(APP)], tmp), "this run's app, as assert_nothing_left looks for it, not found"
        assert_in_its_own_group_beside(app, proc.pid, "the app")  # the script's session: its autogroup, as nginx's and Go's
        assert len(group_members(app)) >= 3, group_members(app)  # bash, the app, its 2 workers: stopped whole
        proc.send_signal(signum)  # to the script only: it must stop the app's process group itself
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == status, stderr
    _, manifest = latest_run(out)
    assert manifest["status"] == "interrupted", manifest["reason"]
    assert_nothing_left(out, tmp, ports)
