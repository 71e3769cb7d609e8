"""Tests of wrkreport.cli's `wrkreport build`: exit statuses, summary, stderr lines; in-process, as a real process, from a wheel."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import CAPTURED
from wrkreport.cli import cli

ROOT = Path(__file__).resolve().parents[1]


def invoke(*args):
    """Run `wrkreport build` in-process; return (result, exit status returned by the command)."""
    result = CliRunner().invoke(cli, ["build", *map(str, args)], standalone_mode=False, catch_exceptions=False)
    return result, result.return_value


def test_build_prints_summary_and_path(article_run, tmp_path):
    result, status = invoke(article_run, "--out", tmp_path / "out")
    assert status == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == f"run: {article_run}"
    assert lines[1].startswith("The HTTP proxy leads, from one repeat each (no interval): it serves ")  # the page's sentence
    header = next(i for i, line in enumerate(lines) if line.startswith("setup "))
    assert lines[header].split() == ["setup", "share"] and lines[header + 1] == "GOMAXPROCS=1"
    assert lines[header + 2].split()[:2] == ["go-http", "100%"]
    assert next(line for line in lines if line.startswith("nginx-http ")).split()[1] == "94%"  # the ratio 0.936, one repeat
    assert re.fullmatch(rf"report: {re.escape(str(tmp_path / 'out' / 'index.html'))} \(\d+ warnings?\)", lines[-1])


def test_raw_directory_means_its_newest_run(article_run, tmp_path):
    result, status = invoke(article_run.parent, "--out", tmp_path / "out")
    assert status == 0 and result.stdout.startswith(f"run: {article_run}")


def test_failed_check_exits_1_and_lists_it_on_stderr(make_run, tmp_path):
    path = make_run(
        {
            "go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt",
            "nginx-fcgi-unix.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__nginx-502-latency.txt",
        }
    )
    result, status = invoke(path, "--out", tmp_path / "out")
    assert status == 1
    errors = result.stderr.splitlines()
    unix = path / "nginx-fcgi-unix.gomaxprocs-1.run-1.wrk.txt"
    unix = unix.relative_to(Path.cwd()) if unix.is_relative_to(Path.cwd()) else unix
    assert errors[0].startswith(f"wrkreport: {unix}: check failed: non-2xx: 89,261 of 89,261 responses (100.0%) had status >= 400")
    assert errors[1].startswith(f"wrkreport: {unix}: check failed: same-response: 314.01 B per response")
    assert (tmp_path / "out" / "index.html").is_file()


def test_expect_header_bytes_option(make_run, tmp_path):
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"  # 39 bytes
    path = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt", "go-http.gomaxprocs-1.headers.txt": head})
    _, status = invoke(path, "--out", tmp_path / "a")
    assert status == 1
    _, status = invoke(path, "--out", tmp_path / "b", "--expect-header-bytes", len(head))
    assert status == 0


def test_help_has_an_example():
    result = CliRunner().invoke(cli, ["build", "--help"], catch_exceptions=False)
    assert result.exit_code == 0 and "Example:" in result.output and "--expect-header-bytes" in result.output


def run(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    """Run `python -m wrkreport` as a real process."""
    return subprocess.run(
        [sys.executable, "-m", "wrkreport", *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd, env=env
    )


def test_real_process_no_run_is_exit_2_with_one_line(tmp_path):
    proc = run("build", tmp_path / "raw", "--out", tmp_path / "out")
    assert proc.returncode == 2
    assert proc.stderr == f"wrkreport: {tmp_path / 'raw'}: no such directory (run ./run_bench.sh first, or name a run directory)\n"
    assert proc.stdout == "" and not (tmp_path / "out").exists()


def test_real_process_nothing_parsed_is_exit_2(make_run, tmp_path):
    path = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__refused.STDERR.txt"})
    proc = run("build", path, "--out", tmp_path / "out")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"wrkreport: {path}: nothing could be measured, no wrk output parsed (")
    assert len(proc.stderr.splitlines()) == 1


def test_real_process_unwritable_out_is_one_line(article_run, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = run("build", article_run, "--out", blocker / "sub")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"wrkreport: cannot write the report to {blocker / 'sub'}: ")


def test_real_process_success(article_run, tmp_path):
    proc = run("build", article_run, "--out", tmp_path / "out")
    assert proc.returncode == 0 and proc.stderr == ""
    assert (
        f"\nreport: {tmp_path / 'out' / 'index.html'} (" in proc.stdout
        and proc.stdout.endswith(" warnings)\n")
        and "Traceback" not in proc.stdout
    )


@pytest.mark.slow
def test_report_from_an_installed_wheel_is_the_same(article_run, tmp_path):
    """A plain (non-editable) install must find its templates and data and render the same page."""
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        check=True,
        timeout=300,
        cwd=tmp_path,
        capture_output=True,
    )
    (wheel,) = dist.glob("wrkreport-*.whl")
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    assert (target / "wrkreport" / "templates" / "report.html").is_file()
    assert (target / "wrkreport" / "data" / "article-2013.json").is_file()
    code = (
        "import sys, datetime; sys.path.insert(0, sys.argv[1]);"
        "import wrkreport, wrkreport.report as r;"
        "assert wrkreport.__file__.startswith(sys.argv[1]), wrkreport.__file__;"
        "r.build(sys.argv[2], sys.argv[3], datetime.datetime(2026, 11, 22, 12, tzinfo=datetime.timezone.utc))"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    subprocess.run(
        [sys.executable, "-c", code, str(target), str(article_run), str(tmp_path / "wheel-out")], check=True, cwd=elsewhere, timeout=120
    )
    from datetime import datetime, timezone

    from wrkreport.report import build

    build(article_run, tmp_path / "checkout-out", datetime(2026, 11, 22, 12, tzinfo=timezone.utc))
    wheel_html = (tmp_path / "wheel-out" / "index.html").read_text().replace("wheel-out", "OUT")
    checkout_html = (tmp_path / "checkout-out" / "index.html").read_text().replace("checkout-out", "OUT")
    assert wheel_html == checkout_html


ESCAPES = "\x1b]0;OWNED\x07\x1b[2J\x1b[31m\r\x9b1m\u202egnp.exe"


def test_control_characters_from_a_run_never_reach_the_terminal(tmp_path):
    """ESC sequences, bells, CR, C1 controls and bidi overrides from a run are stripped; each message stays one line."""
    import json
    import shutil

    from helpers import RUNS

    run = tmp_path / ("raw" + ESCAPES)
    shutil.copytree(RUNS / "quick-1-repeat", run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["passes"][0]["cells"]["nginx-http"].update(ready=False, error="port busy" + ESCAPES + "\nwrkreport: all checks passed")
    (run / "manifest.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(
        cli, ["build", str(run), "--out", str(tmp_path / "out")], standalone_mode=False, catch_exceptions=False, color=True
    )
    assert result.return_value == 1
    for text in (result.stdout, result.stderr):
        assert re.findall(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", text) == []
    clean = "raw]0;OWNED[2J[31m1mgnp.exe"
    assert result.stdout.startswith(f"run: {tmp_path / clean}\n")
    readiness = [line for line in result.stderr.splitlines() if "check failed: readiness" in line]
    assert readiness == [
        f"wrkreport: {tmp_path / clean}: check failed: readiness: nginx-http at GOMAXPROCS=1 did not become ready: "
        f"port busy]0;OWNED[2J[31m1mgnp.exe wrkreport: all checks passed"
    ]


def test_control_characters_are_stripped_from_a_real_process_too(tmp_path):
    """`wrkreport parse` of a file whose name holds ESC sequences: stdout and stderr carry none."""
    import shutil

    good = tmp_path / ("go\x1b[2J.txt")
    shutil.copyfile(CAPTURED / "wrk-4.1.0__latency.txt", good)
    bad = tmp_path / ("bad\x1b]0;x\x07.txt")
    bad.write_text("not wrk\n")
    proc = run("parse", good, bad)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stderr
    assert proc.stdout.startswith(f"{tmp_path / 'go[2J.txt'}: wrk ")
    assert proc.stderr.startswith(f"wrkreport: {tmp_path / 'bad]0;x.txt'}")
