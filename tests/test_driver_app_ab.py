"""End-to-end tests of ./run_bench.sh --app with an in-run A/B: --app-b (a second build of the app, tests/app_server.py with
fewer items per answer) as twins app~b and nginx-app~b, then `wrkreport build`'s A/B section; --app with --variant
(nginx-app~NAME: the variant's nginx in front of the same app); a bad --app-b exits 2 with one line, nothing left running.

Same rules as tests/test_driver_app.py: private ports (the twins' too: + 100), --out and TMPDIR per test; short runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers import USED_PORTS, free_port_block, group_members, latest_run, needs_tools, port_is_free, processes_mentioning
from test_driver_app import APP, PGID, PORT_NAMES, app_command, run_app

OFFSET = 100  # core.setups.VARIANT_PORT_OFFSET: a twin's port is its original's + 100
SHORT = ["--blocks", "2", "--rates", "off"]  # two blocks: the smallest run whose A/B figure has an interval

# Both modules run the one tests/app_server.py and check that no process of it is left: their own, found by the
# TMPDIR their run was given (helpers.processes_mentioning), so they run beside the other real runs, judging no timing.


def ports_with_twins() -> dict[str, int]:
    """Return free ports for app and nginx-app whose twins' ports (+ OFFSET) are free and reserved too."""
    return free_port_block(PORT_NAMES, 19900, 20800, USED_PORTS, offsets=(OFFSET,))


def assert_nothing_left(out: Path, tmp: Path, ports: dict[str, int]) -> None:
    """No process of either build's process groups runs (the manifest's, and those the logs name), no app mentions the run's
    paths, the ports (the twins' too) are free, the work dir is gone."""
    if (out / "latest").exists():
        run, manifest = latest_run(out)
        groups = {entry["pids"].get(key) for entry in manifest["passes"] for key in ("app", "app_b")} - {None}
        groups |= {int(m[1]) for log in (run / "logs").glob("app*.log") for m in PGID.finditer(log.read_text(errors="replace"))}
        assert groups, "no process group of the app found"
        for pgid in groups:
            assert group_members(pgid) == {}, f"the app's process group {pgid} still runs"
    assert processes_mentioning([str(APP), str(tmp)], tmp) == []  # this test's app: the others may run beside it
    assert all(port_is_free(port) and port_is_free(port + OFFSET) for port in ports.values())
    assert list(tmp.iterdir()) == [], "work dir left behind"


@pytest.fixture()
def dirs():
    top = Path(tempfile.mkdtemp(prefix="rbab", dir="/tmp"))
    top.chmod(0o711)  # as root, nginx's workers (nobody) must traverse it
    (top / "tmp").mkdir()
    yield top / "out", top / "tmp", top / "reports"
    shutil.rmtree(top, ignore_errors=True)


def build(run: Path, reports: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "wrkreport", "build", str(run), "--out", str(reports)], capture_output=True, text=True, check=False
    )


@pytest.mark.slow
@needs_tools
def test_app_b_measures_a_second_build_alone_and_behind_nginx_in_the_same_rounds_then_build(dirs):
    out, tmp, reports = dirs
    ports = ports_with_twins()
    done = run_app(
        ["--app", app_command("--workers", "1"), "--app-path", "/data.json", "--app-b", app_command("--items", "5"), *SHORT],
        out,
        tmp,
        ports,
    )
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    assert manifest["parameters"]["setups"] == ["app", "app~b", "nginx-app", "nginx-app~b"]
    assert manifest["parameters"]["urls"]["app~b"] == f"http://127.0.0.1:{ports['app'] + OFFSET}/data.json"
    assert manifest["variant"]["app_b"] is True and manifest["parameters"]["app"]["b"]["name"] == "b"
    assert "--items 5" in manifest["parameters"]["app"]["b"]["command"]
    assert "GOMAXPROCS=1" in (run / "logs" / "app-b.gomaxprocs-1.log").read_text()  # B's own log, GOMAXPROCS in its environment
    for entry in manifest["passes"]:  # each block: both builds started, each in a session of its own
        assert entry["pids"]["app"] and entry["pids"]["app_b"] and entry["pids"]["app"] != entry["pids"]["app_b"]
        cells = entry["cells"]
        assert all(cells[s]["error"] is None for s in manifest["parameters"]["setups"]), cells
        # B answers another body (5 items, not 20): allowed; behind nginx each build answers what it answers alone
        assert cells["app~b"]["body_sha256"] != cells["app"]["body_sha256"] and cells["app~b"]["body_bytes"] < cells["app"]["body_bytes"]
        assert cells["nginx-app~b"]["body_sha256"] == cells["app~b"]["body_sha256"]
        assert cells["nginx-app"]["body_sha256"] == cells["app"]["body_sha256"]
    measured = {m["setup"] for m in manifest["measurements"] if m.get("exit_code") == 0}
    assert measured == {"app", "app~b", "nginx-app", "nginx-app~b"}
    # the B build's CPU is its own session's: app~b's record counts B's processes (2: it and its worker), not A's
    cpu = json.loads((run / "app~b.gomaxprocs-1.block-1.run-1.cpu.json").read_text())["processes"]["app"]
    assert cpu["pids"][0] == manifest["passes"][0]["pids"]["app_b"] and cpu["user_s"] + cpu["system_s"] > 0
    built = build(run, reports)
    assert built.returncode == 0 and "Traceback" not in built.stderr, built.stderr
    results = json.loads((reports / "results.json").read_text())
    figures = {r["twin"]: r for r in results["variant_ratios"]}
    assert set(figures) == {"app~b", "nginx-app~b"}
    for figure in figures.values():
        assert figure["blocks"] == 2 and figure["ci_low"] is not None and figure["ci_low"] <= figure["ratio"] <= figure["ci_high"]
    # nginx in front of build B divides by build B alone, not by build A: the overhead ratio compares one build with itself
    divides = {(r["setup"], r["baseline"]) for r in results["ratios"] if r["setup"] in ("nginx-app", "nginx-app~b", "app~b")}
    assert divides == {("nginx-app", "app"), ("nginx-app~b", "app~b"), ("app~b", "app")}, divides
    page = (reports / "index.html").read_text()
    assert "Your app&#39;s build b (--app-b" in page and "against build A (--app)" in page
    assert "Your app&#39;s build b alone: its throughput is" in page and "behind nginx (nginx-app): its throughput is" in page
    assert "µs for build b" in page and "different bodies" in page and "Student-t interval over blocks" in page
    assert "Your app's build b alone: its throughput is" in built.stdout  # the terminal says it too
    assert_nothing_left(out, tmp, ports)


@pytest.mark.slow
@needs_tools
def test_app_with_variant_puts_the_variants_nginx_in_front_of_the_same_app(dirs):
    out, tmp, reports = dirs
    ports = ports_with_twins()
    done = run_app(
        ["--app", app_command(), "--app-path", "/data.json", "--variant", "nokeep:no-upstream-keepalive", "--rates", "off"], out, tmp, ports
    )
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    assert manifest["parameters"]["setups"] == ["app", "nginx-app", "nginx-app~nokeep"]
    cells = manifest["passes"][0]["cells"]
    assert cells["nginx-app~nokeep"]["error"] is None and cells["nginx-app~nokeep"]["body_sha256"] == cells["app"]["body_sha256"]
    proxied = json.loads((run / "nginx-app~nokeep.gomaxprocs-1.block-1.run-1.cpu.json").read_text())["processes"]
    assert (
        proxied["nginx"]["pids"][0] == manifest["passes"][0]["pids"]["variant_nginx"]
        and proxied["app"]["user_s"] + proxied["app"]["system_s"] > 0
    )
    built = build(run, reports)
    assert built.returncode == 0 and "Traceback" not in built.stderr, built.stderr
    assert "the throughput of nginx in front of your app (nginx-app) is" in built.stdout
    assert "Variant nokeep (no-upstream-keepalive)" in (reports / "index.html").read_text()
    assert_nothing_left(out, tmp, ports)


BAD_B = {
    "exits at once": (["--app-b", "echo boom sid $$ {port} >&2; exit 3"], "your app's build b (--app-b '", "exited with status 3", "boom"),
    "answers otherwise behind nginx": (
        ["--app-b", app_command("--echo-peer")],
        "nginx-app~b (nginx in front of build b (--app-b '",
        "where the app's build b alone answers",
        "app_server",
    ),
}


@pytest.mark.slow
@needs_tools
@pytest.mark.parametrize("case", sorted(BAD_B))
def test_bad_app_b_input_exits_2_with_one_line_and_leaves_nothing_running(dirs, case):
    out, tmp, _ = dirs
    ports = ports_with_twins()
    args, who, reason, log_text = BAD_B[case]
    done = run_app(["--app", app_command(), "--app-path", "/data.json", *args, "--rates", "off"], out, tmp, ports)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    assert who in errors[0] and reason in errors[0] and "the last lines of logs/app-b.gomaxprocs-1.log" in errors[0], errors[0]
    assert log_text in errors[0] and "Traceback" not in done.stderr
    assert_nothing_left(out, tmp, ports)
