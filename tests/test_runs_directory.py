"""Tests of wrkreport.runs.directory: a run directory -> measurements table, header captures and problems."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from helpers import CAPTURED, RUNS
from wrkreport.analysis import analyze  # analyze.load_analysis: conftest's parsed_and_drawn_once_here keeps each analysis
from wrkreport.core.errors import NoUsableData
from wrkreport.runs.directory import COLUMNS, load_run, require_measurements, resolve_run_dir, table_rows

HEAD_200 = (
    b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n"
    b"Server: gophr\r\nDate: Sun, 22 Nov 2026 12:00:00 GMT\r\n\r\n"
)


def test_article_run_without_manifest_reads_identity_from_file_names(article_run):
    run = load_run(article_run)
    table = run.measurements
    assert list(table.columns) == list(COLUMNS)
    assert run.record is None and run.status is None and run.problems == ()
    assert list(zip(table["gomaxprocs"], table["setup"])) == [
        (1, "go-http"),
        (1, "nginx-http"),
        (1, "nginx-fcgi-tcp"),
        (1, "nginx-fcgi-unix"),
        (8, "go-http"),
        (8, "nginx-http"),
        (8, "nginx-fcgi-tcp"),
        (8, "nginx-fcgi-unix"),
    ]
    assert set(table["repeat"]) == {1} and set(table["connections"]) == {5000}
    row = table.iloc[6]
    assert row["requests_per_sec"] == pytest.approx(24026.50)
    assert (row["errors_write"], row["errors_timeout"]) == (176, 1343)
    assert row["file"] == "nginx-fcgi-tcp.gomaxprocs-8.run-1.wrk.txt" and row["source"] == row["file"]
    assert row["command"] is None and run.texts[row["file"]].startswith("Running 30s test @ http://go.fcgi.tcp/")


def test_manifest_supplies_command_and_exit_code(make_run):
    path = make_run(
        {"go-http.gomaxprocs-2.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt"},
        manifest={
            "schema": 1,
            "status": "complete",
            "parameters": {"expect_header_bytes": 141},
            "measurements": [{"file": "go-http.gomaxprocs-2.run-1.wrk.txt", "command": "wrk --latency -t2 -c20 -d3s URL", "exit_code": 0}],
        },
    )
    run = load_run(path)
    assert run.status == "complete" and dict(run.parameters.listed) == {"expect_header_bytes": 141}
    row = run.measurements.iloc[0]
    assert (row["command"], row["exit_code"], row["gomaxprocs"]) == ("wrk --latency -t2 -c20 -d3s URL", 0, 2)


def test_sweep_file_names_with_connection_level_are_read(make_run):
    path = make_run({"go-http.gomaxprocs-1.c20.run-3.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt"})
    row = load_run(path).measurements.iloc[0]
    assert (row["setup"], row["gomaxprocs"], row["connections"], row["repeat"]) == ("go-http", 1, 20, 3)


def test_unparseable_file_is_a_problem_and_the_rest_is_read(make_run):
    path = make_run(
        {
            "go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt",
            "nginx-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__refused.STDERR.txt",
        }
    )
    run = load_run(path)
    assert list(run.measurements["setup"]) == ["go-http"]
    (problem,) = run.problems
    assert (problem.name, problem.status, problem.setup, problem.repeat) == ("parse", "fail", "nginx-http", 1)
    assert problem.message.startswith(f"{path / 'nginx-http.gomaxprocs-1.run-1.wrk.txt'}:1: wrk could not connect")


def test_badly_named_wrk_file_is_ignored_with_a_warning(make_run):
    path = make_run(
        {"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt", "my-test.wrk.txt": CAPTURED / "wrk-4.1.0__basic.txt"}
    )
    run = load_run(path)
    assert len(run.measurements) == 1
    (problem,) = run.problems
    assert (problem.name, problem.status) == ("file-name", "warn")
    assert problem.message == "my-test.wrk.txt: name does not follow <setup>.gomaxprocs-<N>.run-<k>.wrk.txt; ignored"


def test_corrupt_manifest_is_a_warning_and_names_come_from_files(make_run):
    path = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt"}, manifest='{"schema": 1,')
    run = load_run(path)
    assert run.record is None and len(run.measurements) == 1
    (problem,) = run.problems
    assert problem.name == "manifest" and problem.status == "warn"
    assert problem.message.startswith("manifest.json: not readable JSON (line 1: Expecting property name")


def test_manifest_listing_a_missing_file_warns(make_run):
    path = make_run(
        {"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt"},
        manifest={"status": "interrupted", "measurements": [{"file": "go-http.gomaxprocs-1.run-2.wrk.txt"}]},
    )
    (problem,) = load_run(path).problems
    assert (problem.name, problem.status, problem.file) == ("missing-file", "warn", "go-http.gomaxprocs-1.run-2.wrk.txt")


def test_header_captures_are_read_byte_exact(make_run):
    path = make_run(
        {"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt", "go-http.gomaxprocs-1.headers.txt": HEAD_200}
    )
    (capture,) = load_run(path).headers
    assert (capture.setup, capture.gomaxprocs, capture.size_bytes) == ("go-http", 1, 141)
    assert (capture.status_line, capture.status_code) == ("HTTP/1.1 200 OK", 200)


def test_raw_directory_resolves_to_latest_symlink(make_run):
    older = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__basic.txt"}, name="20261122T110000Z")
    newer = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt"}, name="20261122T120000Z")
    raw = older.parent
    assert resolve_run_dir(raw) == newer  # no symlink: the newest id
    os.symlink(older.name, raw / "latest")
    assert resolve_run_dir(raw) == older.resolve()  # the symlink wins
    assert resolve_run_dir(newer) == newer


def test_same_second_suffixes_sort_after_the_plain_id(make_run):
    make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__basic.txt"}, name="20261122T120000Z")
    second = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__basic.txt"}, name="20261122T120000Z-2")
    assert resolve_run_dir(second.parent) == second


def test_missing_and_empty_directories_say_what_to_do(tmp_path):
    with pytest.raises(NoUsableData, match=r"no such directory \(run ./run_bench.sh first"):
        resolve_run_dir(tmp_path / "nope")
    with pytest.raises(NoUsableData, match="no run found"):
        resolve_run_dir(tmp_path)
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(NoUsableData, match="not a directory"):
        resolve_run_dir(tmp_path / "file.txt")


def test_run_where_nothing_parsed_is_not_usable(make_run):
    path = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__usage.txt"})
    run = load_run(path)
    with pytest.raises(NoUsableData, match="nothing could be measured, no wrk output parsed .*usage text"):
        require_measurements(run)


def test_hand_named_runs_go_by_modification_time(make_run):
    first = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__basic.txt"}, name="laptop")
    second = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__basic.txt"}, name="desktop")
    os.utime(first, (1_000_000, 1_000_000))
    os.utime(second, (2_000_000, 2_000_000))
    assert resolve_run_dir(first.parent) == second


CPU_RECORD = {
    "schema": 1,
    "file": "nginx-http.gomaxprocs-2.run-1.wrk.txt",
    "setup": "nginx-http",
    "gomaxprocs": 2,
    "connections": 20,
    "repeat": 1,
    "wall_s": 3.1,
    "clock_ticks_per_s": 100,
    "logical_cores": 2,
    "processes": {
        "go": {"user_s": 1.25, "system_s": 0.75, "pids": [11]},
        "fasthttp": None,
        "nginx": {"user_s": 0.5, "system_s": 1.0, "pids": [12, 13]},
        "wrk": {"user_s": 0.4, "system_s": 2.1, "pids": [14], "threads": 2},
    },
    "pinning": {"client": "0", "server": "1"},
}


def test_cpu_record_beside_a_wrk_file_is_read(make_run):
    import json

    path = make_run(
        {
            "nginx-http.gomaxprocs-2.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt",
            "nginx-http.gomaxprocs-2.run-1.cpu.json": json.dumps(CPU_RECORD),
        }
    )
    row = load_run(path).measurements.iloc[0]
    assert (row["cpu_go_s"], row["cpu_nginx_s"], row["cpu_wrk_s"]) == (2.0, 1.5, 2.5)
    assert pd.isna(row["cpu_fasthttp_s"]) and (row["cpu_wall_s"], row["cpu_cores"]) == (3.1, 2)
    assert (row["pin_client"], row["pin_server"]) == ("0", "1")


@pytest.mark.parametrize(
    "text, detail",
    [
        ("{", "not JSON: Expecting property name"),
        ('{"processes": {}}', "wall_s: missing; logical_cores: missing"),
        ('{"wall_s": 0, "logical_cores": 2, "processes": {}}', "wall_s: expected a number from 1e-06 to 1e+07, found 0"),
        (
            '{"wall_s": 3, "logical_cores": 2, "processes": {"go": {"user_s": "x", "system_s": 1}}}',
            "processes.go.user_s: expected a number, found 'x'",
        ),
        ('{"wall_s": Infinity, "logical_cores": 2, "processes": {}}', "wall_s: inf is not a finite number"),
        (
            '{"wall_s": 3, "logical_cores": 2, "processes": {"go": {"user_s": 1e308, "system_s": 1}}}',
            "processes.go.user_s: expected a number from 0 to 1e+07, found 1e+308",
        ),
        ('{"wall_s": 3, "logical_cores": 2, "processes": {}, "pinning": "x"}', "pinning: expected an object, found 'x'"),
        (
            '{"wall_s": 3, "logical_cores": 2, "processes": {}, "pinning": {"client": "abc"}}',
            "pinning.client: expected a CPU list such as '0-3,6', found 'abc'",
        ),
        (
            '{"wall_s": 3, "logical_cores": 2, "processes": {}, "pinning": {"client": "0-100000000"}}',
            "pinning.client: CPU list '0-100000000' names CPUs above 65535",
        ),
        ("[1, 2]", "expected a JSON object, found list"),
    ],
)
def test_broken_cpu_record_warns_and_leaves_cpu_out(make_run, text, detail):
    path = make_run(
        {"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt", "go-http.gomaxprocs-1.run-1.cpu.json": text}
    )
    run = load_run(path)
    (problem,) = run.problems
    assert problem.name == "cpu" and problem.status == "warn" and detail in problem.message
    assert problem.message.startswith("go-http.gomaxprocs-1.run-1.cpu.json: not a usable CPU record")
    assert pd.isna(run.measurements.iloc[0]["cpu_go_s"]) and len(run.measurements) == 1


@pytest.mark.parametrize("name", sorted(p.name for p in RUNS.iterdir() if p.is_dir()))
def test_table_rows_are_the_rows_itertuples_gives(parsed_and_drawn_once_here, name):
    table = analyze.load_analysis(RUNS / name).run.measurements  # the run as the report modules load it: kept once per session
    fast, slow = table_rows(table), list(table.itertuples(index=False))
    assert len(fast) == len(slow) and all(type(a)._fields == type(b)._fields for a, b in zip(fast, slow))
    assert [[(type(v), repr(v)) for v in row] for row in fast] == [[(type(v), repr(v)) for v in row] for row in slow]


def test_table_rows_of_a_table_with_odd_columns_are_itertuples_rows():
    table = pd.DataFrame({"a b": [1, 2], "class": ["x", None], "_c": [1.5, float("nan")]})
    assert [tuple(map(repr, r)) for r in table_rows(table)] == [tuple(map(repr, r)) for r in table.itertuples(index=False)]
    assert type(table_rows(table)[0])._fields == type(next(table.itertuples(index=False)))._fields
    assert table_rows(pd.DataFrame(index=[0, 1])) == list(pd.DataFrame(index=[0, 1]).itertuples(index=False))
