"""Tests of wrkreport.report.terminal: the terminal summary, 80 columns for a default run, a warning count, the verdict last, failures grouped, no library warnings."""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from wrkreport.cli import cli
from wrkreport.report import build

from helpers import RUNS

WHEN = datetime(2026, 11, 22, 12, tzinfo=timezone.utc)


def run_build(name, tmp_path):
    """Run `wrkreport build` in-process on a fixture run; return (stdout lines, stderr lines, status)."""
    result = CliRunner().invoke(cli, ["build", str(RUNS / name), "--out", str(tmp_path / "out")], standalone_mode=False, catch_exceptions=False)
    return result.stdout.splitlines(), result.stderr.splitlines(), result.return_value


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # the terminal's lines; what drawing prints is test_build_leaks_no_library_warning's
def test_the_default_run_summary_fits_80_columns_and_ends_with_the_verdict(tmp_path):
    out, err, status = run_build("default-2cores", tmp_path)
    assert status == 0 and err == []
    table = [line for line in out if not line.startswith(("run: ", "report: "))]  # the two path lines aside
    assert max(len(line) for line in table) <= 80, [line for line in table if len(line) > 80]
    counts = out.index("16 warnings (details in the report)")
    # then the page's verdict in absolute units, one paragraph per GOMAXPROCS and the conditions, then the relative line
    after = " ".join(line.strip() for line in out[counts + 1:])
    # default-2cores predates CPU records: its absolute figure is req/s at saturation
    assert after.startswith("GOMAXPROCS=1: At saturation Go alone serves ") and "GOMAXPROCS=2: At saturation Go alone serves " in after
    assert "Conditions: a handler that does no work (a 12-byte Hello World); CPU use not recorded; throughput at saturation" in after
    assert all(ord(c) < 128 for c in after)  # 'us', not 'µs', for any terminal
    assert " ".join(out[-2:]) == (
        "nginx-http keeps 0.552x of go-http's throughput at GOMAXPROCS=1 (0.482-0.631) and 0.623x at GOMAXPROCS=2 (0.591-0.657): "
        "the best nginx setup here."
    )


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # the terminal's lines; what drawing prints is test_build_leaks_no_library_warning's
def test_the_warning_count_counts_noise_and_check_warnings(tmp_path):
    built = build(RUNS / "sweep-all-setups", tmp_path / "out", WHEN)
    from wrkreport.analysis.analyze import load_analysis

    done = load_analysis(RUNS / "sweep-all-setups")
    expected = len(done.analysis.noise) + sum(c.status == "warn" for c in done.checks.checks)
    assert built.closing.startswith(f"{expected} warnings")
    assert expected > 0


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # the terminal's lines; what drawing prints is test_build_leaks_no_library_warning's
def test_failures_are_grouped_per_setup_and_check(tmp_path):
    _, err, status = run_build("fcgi-unix-502", tmp_path)
    assert status == 1
    assert len(err) == 2  # 12 failed checks: non-2xx and same-response, each over 6 files of nginx-fcgi-unix
    assert all("and 5 more nginx-fcgi-unix files alike" in line for line in err)
    assert all(line.startswith("wrkreport: tests/fixtures/runs/fcgi-unix-502/") or str(RUNS) in line for line in err)


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # the terminal's lines; what drawing prints is test_build_leaks_no_library_warning's
def test_an_unmeasured_cell_is_not_printed_as_fail(tmp_path):
    out, _, _ = run_build("fcgi-unix-502-unmeasured", tmp_path)
    row = next(line for line in out if "nginx-fcgi-unix" in line)
    assert row.rstrip().endswith("not measured") and " fail" not in row


def test_build_leaks_no_library_warning(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUNS / "sweep-all-setups", run)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build(run, tmp_path / "out", WHEN)
    result = subprocess.run([sys.executable, "-W", "always", "-m", "wrkreport", "build", str(run), "--out", str(tmp_path / "out2")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "Warning" not in result.stderr, result.stderr


def test_a_quick_runs_widest_row_fits_80_columns():
    # A quick run on a fast machine: go-http past 100,000 req/s and nginx-fcgi-unix's one-repeat ratio made the table 81 wide.
    from wrkreport.report.terminal import terse, text_table

    header = ("GOMAXPROCS", "setup", "n", "req/s", "p99 ms", "ratio (95% CI)", "checks")
    rows = [("2", "nginx-fcgi-unix", "1", "100,512", "12.3", terse("0.328 (n=1, no interval)"), "pass")]
    assert terse("0.328 (n=1, no interval)") == "0.328 (n=1)" and terse("0.604 (0.568-0.643)") == "0.604 (0.568-0.643)"
    assert max(len(line) for line in text_table(header, rows, right={2, 3, 4}).splitlines()) <= 80
