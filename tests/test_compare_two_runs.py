"""Tests of wrkreport.compare.two_runs: two runs side by side, changes with Welch intervals on the logs, flagged only outside 1.0."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from helpers import RUNS, run_wrkreport
from wrkreport.analysis import analyze  # analyze.load_analysis: conftest's parsed_and_drawn_once keeps each analysis
from wrkreport.compare.two_runs import compare
from wrkreport.report import build_compare

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # compares fixture runs, the same ones in several tests

WHEN = datetime(2026, 11, 22, 12, tzinfo=timezone.utc)


def test_a_run_against_itself_changes_nothing():
    a = analyze.load_analysis(RUNS / "default-2cores")
    result = compare(a, a)
    assert result.flagged == () and result.differences == () and result.only_in_a == result.only_in_b == ()
    assert len(result.changes) == 8 + 6 + 8  # req/s of 8 cells, ratios of the 6 nginx cells, p99 of 8 cells
    for change in result.changes:
        assert change.change == pytest.approx(1.0) and change.ci_low < 1.0 < change.ci_high
        assert (change.n_a, change.n_b) == (5, 5)


def test_single_repeat_run_gives_changes_without_intervals():
    result = compare(analyze.load_analysis(RUNS / "default-2cores"), analyze.load_analysis(RUNS / "quick-1-repeat"))
    go = next(c for c in result.changes if (c.setup, c.gomaxprocs, c.metric) == ("go-http", 1, "requests_per_sec"))
    assert go.ci_low is None and go.note == "need at least 2 blocks (or repeats) in each run: no interval" and not go.flagged
    geometric = math.exp(sum(math.log(v) for v in (79522.14, 77992.64, 77556.36, 77183.98, 78649.48)) / 5)
    assert go.change == pytest.approx(79503.49 / geometric, rel=1e-6) and go.a == pytest.approx(geometric, rel=1e-6)
    assert ("parameter profile", "default", "quick") in result.differences
    assert ("parameter repeats", "5", "1") in result.differences


def test_excluded_setup_has_no_change_and_says_why():
    result = compare(analyze.load_analysis(RUNS / "default-2cores"), analyze.load_analysis(RUNS / "fcgi-unix-502"))
    unix = [c for c in result.changes if c.setup == "nginx-fcgi-unix"]
    assert len(unix) == 6 and all(c.change is None and c.note == "nothing usable in B (excluded or not measured)" for c in unix)


def test_same_settings_a_minute_apart_are_not_flagged():
    # keepalive-on-again repeats keepalive-on: the bootstrap flagged nginx-http's ratio here.
    result = compare(analyze.load_analysis(RUNS / "keepalive-on"), analyze.load_analysis(RUNS / "keepalive-on-again"))
    assert not [c for c in result.flagged if c.metric == "overhead_ratio"]
    assert all(c.unit == "repeat" for c in result.changes if c.ci_low is not None)


def test_a_known_change_is_flagged():
    # keepalive-off: nginx-http fell from about 44k to 14k req/s.
    result = compare(analyze.load_analysis(RUNS / "keepalive-on"), analyze.load_analysis(RUNS / "keepalive-off"))
    http = {c.metric: c for c in result.changes if c.setup == "nginx-http"}
    assert http["requests_per_sec"].flagged and http["overhead_ratio"].flagged and http["overhead_ratio"].change < 0.5


def test_interval_is_reproducible():
    a, b = analyze.load_analysis(RUNS / "default-2cores"), analyze.load_analysis(RUNS / "fcgi-unix-502")
    first, second = compare(a, b), compare(a, b)
    assert [(c.ci_low, c.ci_high) for c in first.changes] == [(c.ci_low, c.ci_high) for c in second.changes]


def test_compare_page_and_json(tmp_path):
    result, paths = build_compare(RUNS / "default-2cores", RUNS / "quick-1-repeat", tmp_path / "out", WHEN)
    html = paths["compare.html"].read_text()
    data = json.loads(paths["compare.json"].read_text())
    assert "<script" not in html and "<style>" in html
    assert "parameter profile" in html and "need at least 2 blocks (or repeats) in each run" in html and "Welch" in html
    assert len(data["changes"]) == len(result.changes) and data["a"]["run_id"] == "default-2cores"
    assert all(
        set(c) >= {"setup", "gomaxprocs", "connections", "metric", "change", "ci_low", "ci_high", "flagged"} for c in data["changes"]
    )


def test_compare_cli_as_a_real_process(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "wrkreport", "compare", str(RUNS / "default-2cores"), str(RUNS / "default-2cores"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert "WORSE" not in done.stdout and "BETTER" not in done.stdout and "No figure changed measurably" in done.stdout
    assert done.stdout.endswith(f"comparison: {tmp_path / 'compare.html'}\n")


def test_compare_cli_with_a_missing_run_is_exit_2(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "wrkreport", "compare", str(RUNS / "default-2cores"), str(tmp_path / "nope"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == f"wrkreport: {tmp_path / 'nope'}: no such directory (run ./run_bench.sh first, or name a run directory)\n"


def test_runs_with_no_common_cell_are_nothing_to_compare_exit_2(tmp_path):
    """pinned-quick measured GOMAXPROCS=1 only, keepalive-on GOMAXPROCS=2 only: one line, exit 2, no page."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "wrkreport",
            "compare",
            str(RUNS / "pinned-quick"),
            str(RUNS / "keepalive-on"),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr == (
        f"wrkreport: {RUNS / 'pinned-quick'} and {RUNS / 'keepalive-on'}: nothing to compare, no setup was measured at the same "
        "GOMAXPROCS and connections in both runs (A: go-http GOMAXPROCS=1 c100, nginx-http GOMAXPROCS=1 c100; "
        "B: go-http GOMAXPROCS=2 c100, nginx-fcgi-tcp GOMAXPROCS=2 c100, nginx-http GOMAXPROCS=2 c100)\n"
    )
    assert "no measurable change" not in done.stderr and not (tmp_path / "out").exists()


def test_common_cells_with_nothing_usable_do_not_read_as_no_change():
    """When every common figure is excluded, the summary says nothing could be compared, not 'no change for all 0'."""
    from dataclasses import replace

    from wrkreport.report import compare_summary

    result = compare(analyze.load_analysis(RUNS / "default-2cores"), analyze.load_analysis(RUNS / "fcgi-unix-502"))
    unusable = replace(result, changes=tuple(c for c in result.changes if c.setup == "nginx-fcgi-unix"))
    assert unusable.changes and all(c.change is None for c in unusable.changes)
    assert compare_summary(unusable) == (
        "No figure could be compared: every cell both runs measured was excluded or not measured in one of them.",
    )
    # The usable figures still count: 16 compared (req/s, ratio and p99; Welch on logs flags none of them).
    assert compare_summary(result)[0].startswith(
        "No figure changed measurably between A (default-2cores) and B (fcgi-unix-502): of the 16 figures compared, 16 are inconclusive"
    )


@pytest.mark.parametrize(
    ("a", "b", "fail_on", "status"),
    [
        ("keepalive-on", "keepalive-off", "worse", 3),  # nginx-http and nginx-fcgi-tcp lost 60-66% of their req/s
        ("keepalive-off", "keepalive-on", "worse", 0),  # the same changes, better in B
        ("keepalive-off", "keepalive-on", "change", 3),
        ("keepalive-on", "keepalive-off", "never", 0),
        ("default-run-1", "default-run-4", "worse", 0),  # the same code an hour apart
    ],
)
def test_fail_on_is_a_regression_gate_for_ci(tmp_path, a, b, fail_on, status):
    done = run_wrkreport("compare", str(RUNS / a), str(RUNS / b), "--out", str(tmp_path), "--fail-on", fail_on)
    assert done.returncode == status and "Traceback" not in done.stderr, done.stderr
    result = compare(analyze.load_analysis(RUNS / a), analyze.load_analysis(RUNS / b))
    if status == 3:
        counted = [c for c in result.flagged if fail_on == "change" or not c.better]
        assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"wrkreport: --fail-on {fail_on}: {len(counted)} figures ")
        assert "nginx-http GOMAXPROCS=2 c100 ratio to go-http 0.353 (0.286-0.436)" in done.stderr or fail_on == "change"
    else:
        assert done.stderr == ""
    assert (tmp_path / "compare.json").is_file()  # the gate decides the status, the page is written either way


def test_fail_on_with_a_bad_choice_is_one_line_and_exit_2(tmp_path):
    done = run_wrkreport("compare", str(RUNS / "keepalive-on"), str(RUNS / "keepalive-off"), "--fail-on", "slower")
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert done.stderr.startswith("wrkreport: ") and "'slower' is not one of 'never', 'worse', 'change'" in done.stderr


def test_the_help_documents_the_gates_exit_status():
    from click.testing import CliRunner

    from wrkreport.cli import cli

    shown = " ".join(CliRunner().invoke(cli, ["compare", "--help"], catch_exceptions=False).output.split())
    assert "--fail-on [never|worse|change]" in shown and "3 when --fail-on worse (or change) found a figure" in shown


def test_compare_json_gives_every_change_its_detectable_change_and_the_drift(tmp_path):
    result, paths = build_compare(RUNS / "default-run-3", RUNS / "default-run-4", tmp_path, WHEN)
    data = json.loads(paths["compare.json"].read_text())
    assert all("detectable_change" in c for c in data["changes"])
    assert [c["detectable_change"] for c in data["changes"]] == [c.detectable_change for c in result.changes]
    assert all(0 < c["detectable_change"] < 5 for c in data["changes"] if c["ci_low"] is not None)
    assert {c["metric"] for c in data["changes"]} == {"requests_per_sec", "overhead_ratio", "latency_p99_ms", "cpu_server_ms_per_1k"}
    drift = data["machine_drift"]
    assert drift["named"] == result.drift.named and drift["sentence"] == result.drift.sentence and drift["figures"] == 8
