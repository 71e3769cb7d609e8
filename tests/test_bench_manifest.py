"""Tests of wrkreport.bench.manifest: the run directory, manifest, passes and cells."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from helpers import plan
from wrkreport.bench.manifest import (
    cell_from_headers,
    create_run_dir,
    go_reported_gomaxprocs,
    new_pass,
    point_latest,
    shuffled_orders,
    write_json_atomic,
)
from wrkreport.bench.progress import progress_result, progress_start
from wrkreport.core.setups import DEFAULT_SETUP_IDS

CAPTURED = Path(__file__).parent / "fixtures" / "wrk" / "captured"
HEADERS_200 = (
    b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n"
    b"Server: gophr\r\nDate: Sun, 22 Nov 2026 16:47:00 GMT\r\n\r\n"
)
HEADERS_502 = (
    b"HTTP/1.1 502 Bad Gateway\r\nServer: nginx\r\nDate: Sun, 22 Nov 2026 16:47:00 GMT\r\n"
    b"Content-Type: text/html\r\nContent-Length: 150\r\nConnection: keep-alive\r\n\r\n"
)


# --- run directory and manifest ------------------------------------------------------------


def test_run_ids_never_collide(tmp_path):
    t = datetime(2026, 11, 22, 16, 47, 0, tzinfo=timezone.utc)
    names = [create_run_dir(tmp_path / "raw", t).name for _ in range(3)]
    assert names == ["20261122T164700Z", "20261122T164700Z-2", "20261122T164700Z-3"]


def test_latest_is_a_relative_symlink_replaced_each_run(tmp_path):
    first = tmp_path / "20261122T164700Z"
    second = tmp_path / "20261122T164800Z"
    first.mkdir()
    second.mkdir()
    assert point_latest(tmp_path, first) is None
    assert os.readlink(tmp_path / "latest") == "20261122T164700Z"
    point_latest(tmp_path, second)
    assert os.readlink(tmp_path / "latest") == "20261122T164800Z"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["20261122T164700Z", "20261122T164800Z", "latest"]


def test_latest_that_is_a_real_directory_is_left_alone(tmp_path):
    (tmp_path / "latest").mkdir()
    run = tmp_path / "20261122T164700Z"
    run.mkdir()
    assert "is not a symlink" in point_latest(tmp_path, run)
    assert (tmp_path / "latest").is_dir() and not (tmp_path / "latest").is_symlink()


def test_atomic_write_leaves_no_temp_file(tmp_path):
    write_json_atomic(tmp_path / "manifest.json", {"a": 1})
    write_json_atomic(tmp_path / "manifest.json", {"a": 2})
    assert json.loads((tmp_path / "manifest.json").read_text()) == {"a": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_cell_200_with_141_bytes_is_usable():
    cell = cell_from_headers(HEADERS_200, True, None)
    assert len(HEADERS_200) == 141
    assert cell == {"ready": True, "headers_captured": True, "status_line": "HTTP/1.1 200 OK", "header_bytes": 141, "error": None}


def test_cell_502_is_recorded_and_not_measured():
    cell = cell_from_headers(HEADERS_502, True, None)
    assert len(HEADERS_502) == 150
    assert cell["header_bytes"] == 150 and cell["status_line"] == "HTTP/1.1 502 Bad Gateway"
    assert cell["error"] == "answered 'HTTP/1.1 502 Bad Gateway', not 200"  # the readers say "not measured"


def test_cell_not_ready_or_silent():
    assert cell_from_headers(None, False, "no HTTP answer")["error"] == "no HTTP answer"
    silent = cell_from_headers(b"", True, None)
    assert silent["headers_captured"] is False and silent["error"] == "no response to curl -sI"


def test_go_reported_gomaxprocs():
    log = "gohello: GOMAXPROCS=2 http=127.0.0.1:8080 fcgi-tcp=127.0.0.1:9001 pid=9 ready\ngohello: stopped\n"
    assert go_reported_gomaxprocs(log) == 2
    assert go_reported_gomaxprocs("gohello: FastCGI TCP: address already in use\n") is None


@pytest.mark.parametrize(
    ("fixture", "exit_code", "text"),
    [
        ("wrk-4.1.0__latency.txt", 0, "60,042 req/s"),
        ("wrk-4.1.0__nginx-502-latency.txt", 0, "28,797 req/s (89,261 non-2xx/3xx)"),
        ("wrk-4.1.0__refused.STDERR.txt", 1, "no result (wrk exit 1: unable to connect to 127.0.0.1:18099 Connection refused)"),
    ],
)
def test_progress_result_reads_the_finished_file(fixture, exit_code, text):
    assert progress_result(CAPTURED / fixture, exit_code) == text


def test_progress_result_of_an_ab_file_names_ab(tmp_path):
    ab = Path(__file__).parent / "fixtures" / "ab" / "captured"
    ok = tmp_path / "go-http.gomaxprocs-1.block-1.run-1.ab.txt"
    ok.write_bytes((ab / "ab-2.3__go-keepalive-t2.txt").read_bytes())
    assert progress_result(ok, 0).endswith(" req/s")
    refused = tmp_path / "go-http.gomaxprocs-1.block-1.run-2.ab.txt"
    refused.write_bytes((ab / "ab-2.3__closed-port.txt").read_bytes())
    assert progress_result(refused, 111) == "no result (ab exit 111: apr_socket_recv: Connection refused (111))"


def test_progress_start_names_position_and_time_left():
    manifest = {"parameters": plan("--blocks", "1", "--rounds-per-block", "5"), "passes": [], "measurements": [{}] * 26}
    new_pass(manifest, 1)
    second = new_pass(manifest, 2)
    setup = second["order"][1][2]  # repeat 2, third in its order
    line = progress_start(manifest, 2, 100, setup, 2)
    assert line.startswith(f"[27/40] {setup} GOMAXPROCS=2 run 2/5 (~")
    assert line.endswith(" left) ... ")


def test_progress_names_the_block_and_with_the_stopping_rule_the_precision_so_far():
    fixed = {"parameters": plan("--blocks", "3"), "passes": [], "measurements": [{}] * 30, "started_at": "2026-11-22T16:47:00Z"}
    new_pass(fixed, 1, block=2, first_round=4, rounds=3)
    assert progress_start(fixed, 1, 100, "go-http", 5).startswith("[31/72] go-http GOMAXPROCS=1 block 2/3 run 5/9 (~")
    adaptive = {**fixed, "parameters": plan(), "precision": {"worst_half_width_pct": 7.5}}
    line = progress_start(adaptive, 1, 100, "go-http", 5)
    assert line.startswith("[31] go-http GOMAXPROCS=1 block 2 run 5 (+/-7.5% so far, <= ")


def test_progress_in_a_sweep_names_the_level():
    manifest = {
        "parameters": plan("--connections", "10,50", "--blocks", "1", "--rounds-per-block", "2"),
        "passes": [],
        "measurements": [{}] * 28,
    }
    new_pass(manifest, 1)
    second = new_pass(manifest, 2)
    assert second["order_connections"] == [10, 10, 50, 50]
    setup = second["order"][3][0]  # level 50, repeat 2, first in its order
    line = progress_start(manifest, 2, 50, setup, 2)
    assert line.startswith(f"[29/32] {setup} GOMAXPROCS=2 c=50 run 2/2 (~")


def test_pass_orders_one_per_level_and_repeat_and_unchanged_for_one_level():
    single = {"parameters": plan("--repeats", "3"), "passes": [], "measurements": []}
    entry = new_pass(single, 2)
    assert entry["order"] == shuffled_orders(list(DEFAULT_SETUP_IDS), 3, 7, 2)
    assert entry["order_connections"] == [100, 100, 100]
    assert entry["pids"] == {"go": None, "nginx": None, "nginx_workers": [], "fasthttp": None, "node": None, "node_workers": []}
    sweep = {"parameters": plan("--repeats", "3", "--connections", "100,200"), "passes": [], "measurements": []}
    orders = new_pass(sweep, 2)["order"]
    assert orders[:3] == entry["order"] and len(orders) == 6  # the first level draws as a single one would
