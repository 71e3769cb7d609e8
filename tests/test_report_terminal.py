"""Tests of wrkreport.report.terminal: the terminal summary (the page's sentence and table), 80 columns for a default run, the warnings counted in the last line, failures grouped, no library warnings."""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from helpers import RUNS
from wrkreport.cli import cli
from wrkreport.report import build

WHEN = datetime(2026, 11, 22, 12, tzinfo=timezone.utc)


def run_build(name, tmp_path):
    """Run `wrkreport build` in-process on a fixture run; return (stdout lines, stderr lines, status)."""
    result = CliRunner().invoke(
        cli, ["build", str(RUNS / name), "--out", str(tmp_path / "out")], standalone_mode=False, catch_exceptions=False
    )
    return result.stdout.splitlines(), result.stderr.splitlines(), result.return_value


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # the terminal's lines; what drawing prints is test_build_leaks_no_library_warning's
def test_the_default_run_summary_is_the_pages_sentence_and_table_in_80_columns_and_the_warnings_in_one_line(tmp_path):
    out, err, status = run_build("default-2cores", tmp_path)
    assert status == 0 and err == []
    assert max(len(line) for line in out if not line.startswith(("run: ", "report: "))) <= 80  # the two path lines aside
    # the sentence first: default-2cores predates CPU records, so its absolute figure is the req/s at saturation
    assert out[1].startswith("The cheapest connection is the HTTP proxy: it serves ")
    header = next(i for i, line in enumerate(out) if line.startswith("setup "))
    assert out[header].split() == ["setup", "share"] and out[header + 1] == "GOMAXPROCS=1"
    assert out[header + 2].split()[:2] == ["go-http", "100%"]
    after = " ".join(line.strip() for line in out[header:])
    assert "Conditions: a handler doing no work (12-byte body); CPU use not recorded; saturated at 100 connections" in after
    assert all(ord(c) < 128 for c in after)  # 'us', not 'µs', for any terminal
    assert out[-1] == f"report: {tmp_path / 'out' / 'index.html'} (16 warnings)" and len(out) <= 25


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
    result = subprocess.run(
        [sys.executable, "-W", "always", "-m", "wrkreport", "build", str(run), "--out", str(tmp_path / "out2")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and "Warning" not in result.stderr, result.stderr


def test_a_quick_runs_widest_row_fits_80_columns(tmp_path):
    # A quick run with every column: CPU, the fixed load's added p50 and p99, the capacity with its bounds, the share.
    out, _, _ = run_build("quick-rates-slo", tmp_path)
    table = out[out.index(next(line for line in out if line.startswith("setup "))) : -1]
    assert table[0].split() == ["setup", "CPU", "us/req", "+p50", "ms", "+p99", "ms", "capacity", "share"]
    assert max(len(line) for line in table) <= 80, [line for line in table if len(line) > 80]
    assert any(">= 32,000" in line for line in table) and any("<= 12,000" in line for line in table)


def test_a_default_runs_widest_possible_row_fits_80_columns():
    # What a loaded machine gave CI: the fixed load not held (its two columns 'not held' over 'held in 0 of 1') and a capacity
    # at the search's edge ('highest rate held'), in the longest default setup's row, with the widest CPU and share cells.
    from wrkreport.report.answer import Answer, AnswerGroup, AnswerRow, Column
    from wrkreport.report.answercells import Figure
    from wrkreport.report.terminal import answer_lines

    columns = tuple(
        Column(k, k, "", short, k)
        for k, short in (("cpu", "CPU us/req"), ("p50", "+p50 ms"), ("p99", "+p99 ms"), ("capacity", "capacity"), ("share", "share"))
    )
    worst = (
        Figure("177 (+none)", "159-185"),
        Figure("not held", "held in 0 of 1"),
        Figure("not held", "held in 10 of 12"),
        Figure("≥ 132,000 ✗", "highest rate held"),
        Figure("not measured", "156,200 req/s"),
    )
    lowest = worst[:3] + (Figure("≤ 1,000 ✗", "lowest rate missed"),) + worst[4:]
    rows = tuple(
        AnswerRow(setup, setup, figures) for setup, figures in (("go-http", worst), ("nginx-fcgi-unix", worst), ("nginx-fcgi-tcp", lowest))
    )
    answer = Answer("A sentence.", "Conditions.", columns, (AnswerGroup("GOMAXPROCS=2", rows, "fixed load 4,400 req/s"),))
    lines = answer_lines(answer).splitlines()
    assert any("held 0/1" in line for line in lines) and any("lowest missed" in line for line in lines)
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]


def test_a_default_front_ends_runs_widest_row_fits_80_columns():
    # The default --setups front-ends run of 2026-11-29 printed 84 columns: 'haproxy-http' and 'caddy-http', CPU '118 (+107)', a
    # p50 read to three figures ('0.228-0.235'), a p99 interval across zero ('-0.0017 to 0.82'), capacities of five figures and
    # go-http's '117,000 req/s' below its share. Its cells, as the page has them (span as the answer forms it):
    from wrkreport.report.answer import Answer, AnswerGroup, AnswerRow, Column
    from wrkreport.report.answercells import Figure, ms, span
    from wrkreport.report.terminal import answer_lines

    columns = tuple(
        Column(k, k, "", short, k)
        for k, short in (("cpu", "CPU us/req"), ("p50", "+p50 ms"), ("p99", "+p99 ms"), ("capacity", "capacity"), ("share", "share"))
    )
    rows = (
        AnswerRow(
            "go-http",
            "go-http",
            (
                Figure("10", "9.9-11"),
                Figure("0.12", "its own"),
                Figure("0.74", "its own"),
                Figure("33,000 ✗", "31,400-34,700"),
                Figure("100%", "117,000 req/s"),
            ),
        ),
        AnswerRow(
            "nginx-http",
            "nginx-http",
            (
                Figure("24 (+14)", "23-25"),
                Figure("+0.13", "0.12-0.14"),
                Figure("none", span(-0.0017, 0.82, ms)),
                Figure("25,900 ✓", "24,900-26,900"),
                Figure("54%", "54-55%"),
            ),
        ),
        AnswerRow(
            "haproxy-http",
            "haproxy-http",
            (
                Figure("26 (+14)", "24-27"),
                Figure("+0.12", "0.12-0.13"),
                Figure("none", span(-0.0764, 0.583, ms)),
                Figure("20,900 ✗", "19,100-22,800"),
                Figure("58%", "55-61%"),
            ),
        ),
        AnswerRow(
            "caddy-http",
            "caddy-http",
            (
                Figure("118 (+107)", "113-123"),
                Figure("+0.23", span(0.228, 0.235, ms)),
                Figure("+2.7", "0.7-4.7"),
                Figure("8,140 ✓", "7,490-8,850"),
                Figure("13%", "12-13%"),
            ),
        ),
    )
    answer = Answer("A sentence.", "Conditions.", columns, (AnswerGroup("GOMAXPROCS=2", rows, "fixed load 3,700 req/s"),))
    lines = answer_lines(answer).splitlines()
    assert any("117,000/s" in line for line in lines) and any("-0.00 to 0.82" in line for line in lines)
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
