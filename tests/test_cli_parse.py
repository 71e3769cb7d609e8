"""Tests of wrkreport.cli's `wrkreport parse`: summaries, --json, per-file errors, exit status; in-process and as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from wrkreport.cli import cli
from wrkreport.core.records import FIELDS

SAMPLES = Path(__file__).parent / "fixtures" / "wrk" / "samples"
GOOD = SAMPLES / "wrk-4.2.0__latency.txt"
WRK2 = SAMPLES / "wrk2__zero-requests-hang-latency.txt"
REFUSED = SAMPLES / "wrk-4.2.0__refused.STDERR.txt"
REFUSED_LINE = (
    f"wrkreport: {REFUSED}:1: wrk could not connect and printed no report: " "'unable to connect to 127.0.0.1:1 Connection refused'"
)


def invoke(*args: str):
    """Run the CLI in-process; return (result, the command's returned exit status)."""
    result = CliRunner().invoke(cli, ["parse", *map(str, args)], standalone_mode=False, catch_exceptions=False)
    return result, result.return_value


def test_summary_of_one_file():
    result, status = invoke(GOOD)
    assert status == 0 and result.stderr == ""
    out = result.stdout
    assert out.startswith(f"{GOOD}: wrk http://127.0.0.1:18080/ok, 10 s, 2 threads, 50 connections\n")
    assert "615183 in 10.01 s, 61455.9 req/s" in out
    assert "avg 0.815, stdev 0.239, max 8.52, p50 0.74, p75 0.815, p90 1.1, p99 1.38" in out
    assert "connect 0, read 0, write 0, timeout 0, non-2xx/3xx 0" in out


def test_summary_shows_absent_values_as_dash():
    result, status = invoke(WRK2)
    assert status == 0
    assert "avg -, stdev -, max 0," in result.stdout and "- bytes/response" in result.stdout
    assert "timeout 30" in result.stdout


def test_json_has_exactly_the_fields_in_order_for_each_file_in_argument_order():
    result, status = invoke("--json", WRK2, GOOD)
    assert status == 0
    records = json.loads(result.stdout)
    assert [r["source"] for r in records] == [str(WRK2), str(GOOD)]
    assert all(list(r) == [*FIELDS, "clients"] for r in records) and [r["clients"] for r in records] == [1, 1]
    assert records[0]["latency_avg_ms"] is None and records[0]["bytes_per_response"] is None
    assert records[1]["requests"] == 615183 and records[1]["latency_p99_ms"] == pytest.approx(1.38)


def test_a_failing_file_is_reported_and_the_others_still_printed():
    result, status = invoke("--json", GOOD, REFUSED, WRK2)
    assert status == 1
    assert result.stderr.splitlines() == [REFUSED_LINE]
    assert [r["source"] for r in json.loads(result.stdout)] == [str(GOOD), str(WRK2)]


def test_missing_file_gets_the_same_one_line_error(tmp_path):
    missing = tmp_path / "missing.wrk.txt"
    result, status = invoke(missing, GOOD)
    assert status == 1
    assert result.stderr == f"wrkreport: {missing}: cannot read: No such file or directory\n"
    assert f"{GOOD}: wrk" in result.stdout


def test_all_failing_with_json_prints_an_empty_array_and_exit_2():
    result, status = invoke("--json", REFUSED)
    assert status == 2 and json.loads(result.stdout) == []


def test_exit_status_is_0_all_parsed_1_some_failed_2_none_read(tmp_path):
    foreign = tmp_path / "notes.txt"
    foreign.write_text("my shopping list\n")
    assert [invoke(*files)[1] for files in ((GOOD, WRK2), (GOOD, foreign), (foreign, REFUSED))] == [0, 1, 2]


def test_help_has_an_example():
    result = CliRunner().invoke(cli, ["parse", "-h"], catch_exceptions=False)
    assert result.exit_code == 0 and "Example:" in result.output and "--json" in result.output


def run(*args: str) -> subprocess.CompletedProcess:
    """Run `python -m wrkreport` as a real process."""
    return subprocess.run([sys.executable, "-m", "wrkreport", *map(str, args)], capture_output=True, text=True, timeout=60)


def test_real_process_exit_status_and_stderr_line(tmp_path):
    binary = tmp_path / "binary.bin"
    binary.write_bytes(b"\x00\xff\xfe garbage")
    proc = run("parse", GOOD, REFUSED, binary)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [REFUSED_LINE, f"wrkreport: {binary}: binary data (NUL bytes), not wrk output"]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stdout.startswith(f"{GOOD}: wrk ")


def test_real_process_success_is_exit_0():
    proc = run("parse", "--json", GOOD)
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)[0]["requests"] == 615183


def test_real_process_without_files_is_a_usage_error_not_a_traceback():
    proc = run("parse")
    assert proc.returncode == 2
    assert proc.stderr.startswith("wrkreport: ") and "Traceback" not in proc.stderr


HIST = Path(__file__).parent / "fixtures" / "hist"


def test_a_histogram_file_prints_its_exact_percentiles():
    from wrkreport.parsers.histogram import parse_histogram

    path = HIST / "client-1.hist.json"
    histogram = parse_histogram(path, path.read_bytes())
    result, status = invoke(path, GOOD)
    assert status == 0 and result.stderr == ""
    first = result.stdout.split("\n")
    assert first[0] == f"{path}: wrk latency histogram, {histogram.count} latencies ({len(histogram.pairs)} distinct)"
    assert f"p99 {histogram.percentile_us(99) / 1000:.3f}," in first[2] and first[2].endswith("(exact)")
    assert f"{GOOD}: wrk http://127.0.0.1:18080/ok" in result.stdout  # a wrk file beside it is still a wrk file


def test_a_histogram_file_as_json_and_a_broken_one_on_stderr(tmp_path):
    broken = tmp_path / "broken.hist.json"
    broken.write_text('{"format": "wrkreport-latency-histogram", "version": 7}')
    result, status = invoke("--json", HIST / "client-2.hist.json", broken)
    assert status == 1
    assert result.stderr == f"wrkreport: {broken}: histogram version 7 is not one this wrkreport reads (1)\n"
    (record,) = json.loads(result.stdout)
    assert list(record) == [
        "source",
        "format",
        "duration_s",
        "requests",
        "bytes_read",
        "errors",
        "latencies",
        "distinct",
        "percentiles_ms",
        "max_ms",
    ]
    assert list(record["percentiles_ms"]) == ["50", "75", "90", "99", "99.9"] and record["requests"] > 0


def test_real_process_on_a_hostile_histogram_file_is_one_line_and_exit_2(tmp_path):
    fifo = tmp_path / "fifo.hist.json"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "wrkreport", "parse", str(fifo)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == f"wrkreport: {fifo}: a FIFO, not a regular file; not read\n"


VEGETA = Path(__file__).parent / "fixtures" / "vegeta"


def test_parse_reads_a_fixed_rate_file_and_says_its_load():
    held = str(VEGETA / "go-http.gomaxprocs-1.block-1.run-1.rate-500.vegeta.csv.gz")
    done = CliRunner().invoke(cli, ["parse", held], catch_exceptions=False)
    assert done.exit_code == 0
    assert done.output == (
        f"{held}: vegeta at 500 req/s offered, open loop: 1,000 requests, 500.1 req/s achieved; "
        "p50 0.156 ms, p90 0.211 ms, p99 0.328 ms, p99.9 1.469 ms, max 1.469 ms; 0 errors (0 timeouts)\n"
    )
    (record,) = json.loads(CliRunner().invoke(cli, ["parse", "--json", held], catch_exceptions=False).output)
    assert (record["format"], record["offered_rps"], record["requests"], record["p99_ms"]) == (
        "vegeta",
        500,
        1000,
        pytest.approx(0.328, abs=5e-4),
    )


def test_parse_of_a_broken_fixed_rate_file_is_one_line_and_exit_2():
    broken = str(VEGETA / "broken" / "json-lines.rate-500.vegeta.csv.gz")
    done = subprocess.run([sys.executable, "-m", "wrkreport", "parse", broken], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"wrkreport: {broken}:1: not vegeta's CSV: ',' expected after '\"'\n"
