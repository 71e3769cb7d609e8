"""Tests of wrkreport.checks.measurements: each check's pass and fail side on real captured wrk outputs and header blocks."""

from __future__ import annotations

import doctest

import pandas as pd
import pytest

from helpers import CAPTURED
from wrkreport.checks import measurements as checks
from wrkreport.checks.measurements import annotate, check_run, response_size_bounds
from wrkreport.runs.directory import load_run

GO_HEAD = (
    b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n"
    b"Server: gophr\r\nDate: Sun, 22 Nov 2026 12:00:00 GMT\r\n\r\n"
)
NGINX_HEAD = (
    b"HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Sun, 22 Nov 2026 12:00:00 GMT\r\nContent-Type: text/plain\r\n"
    b"Content-Length: 12\r\nConnection: keep-alive\r\n\r\n"
)
BAD_GATEWAY_HEAD = (
    b"HTTP/1.1 502 Bad Gateway\r\nServer: nginx\r\nDate: Sun, 22 Nov 2026 12:00:00 GMT\r\nContent-Type: text/html\r\n"
    b"Content-Length: 150\r\nConnection: keep-alive\r\n\r\n"
)
COMPLETE = {"schema": 1, "status": "complete"}


def by_name(report, name):
    """Return the checks of one kind."""
    return [c for c in report.checks if c.name == name]


def test_header_blocks_used_here_have_the_article_sizes():
    assert (len(GO_HEAD), len(NGINX_HEAD), len(BAD_GATEWAY_HEAD)) == (141, 141, 150)


def test_doctests():
    failures, tried = doctest.testmod(checks)
    assert tried >= 4 and failures == 0


# --- header bytes ---------------------------------------------------------------------------


def test_header_check_passes_at_141_and_fails_on_502_and_on_size(make_run):
    path = make_run(
        {
            "go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt",
            "go-http.gomaxprocs-1.headers.txt": GO_HEAD,
            "nginx-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__basic.txt",
            "nginx-http.gomaxprocs-1.headers.txt": NGINX_HEAD.replace(b"nginx", b"nginx/1.22.1"),
            "nginx-fcgi-unix.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__nginx-502-latency.txt",
            "nginx-fcgi-unix.gomaxprocs-1.headers.txt": BAD_GATEWAY_HEAD,
        },
        manifest=COMPLETE,
    )
    report = check_run(load_run(path))
    found = {c.setup: c for c in by_name(report, "header-bytes")}
    assert found["go-http"].status == "pass"
    assert found["go-http"].message == "go-http at GOMAXPROCS=1: HTTP/1.1 200 OK, 141 header bytes as expected"
    assert found["nginx-http"].status == "fail"
    assert found["nginx-http"].message == "nginx-http at GOMAXPROCS=1: header block is 148 bytes, expected 141"
    assert found["nginx-fcgi-unix"].status == "fail"
    assert (
        found["nginx-fcgi-unix"].message
        == "nginx-fcgi-unix at GOMAXPROCS=1 answered 'HTTP/1.1 502 Bad Gateway', not 200 (150 header bytes)"
    )
    assert set(report.excluded) == {"nginx-http.gomaxprocs-1.run-1.wrk.txt", "nginx-fcgi-unix.gomaxprocs-1.run-1.wrk.txt"}


def test_missing_header_capture_warns(make_run):
    path = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt"}, manifest=COMPLETE)
    (check,) = by_name(check_run(load_run(path)), "header-bytes")
    assert check.status == "warn" and "no header capture" in check.message


def test_expected_header_bytes_from_manifest_then_option(make_run):
    files = {"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt", "go-http.gomaxprocs-1.headers.txt": GO_HEAD}
    path = make_run(files, manifest={"status": "complete", "parameters": {"expect_header_bytes": 143}})
    run = load_run(path)
    assert check_run(run).expected_header_bytes == 143
    assert by_name(check_run(run), "header-bytes")[0].status == "fail"
    assert by_name(check_run(run, expect_header_bytes=141), "header-bytes")[0].status == "pass"


# --- same response everywhere ------------------------------------------------------------------


def test_502_setup_fails_same_response_and_non_2xx(make_run):
    path = make_run(
        {
            "go-http.gomaxprocs-2.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt",
            "nginx-http.gomaxprocs-2.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__basic.txt",
            "nginx-fcgi-tcp.gomaxprocs-2.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__timeouts-latency.txt",
            "nginx-fcgi-unix.gomaxprocs-2.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__nginx-502-latency.txt",
        },
        manifest=COMPLETE,
    )
    report = check_run(load_run(path))
    assert report.response_bytes == 78
    same = {c.setup: c for c in by_name(report, "same-response")}
    assert [same[s].status for s in ("go-http", "nginx-http", "nginx-fcgi-tcp")] == ["pass"] * 3
    assert same["nginx-fcgi-unix"].status == "fail"
    assert same["nginx-fcgi-unix"].message.startswith("314.01 B per response; its byte total allows 313.88-314.13 B, not the 78 B")
    non_2xx = {c.setup: c for c in by_name(report, "non-2xx")}
    assert non_2xx["nginx-fcgi-unix"].status == "fail" and non_2xx["go-http"].status == "pass"
    assert non_2xx["nginx-fcgi-unix"].message.startswith("89,261 of 89,261 responses (100.0%) had status >= 400")
    assert report.excluded["nginx-fcgi-unix.gomaxprocs-2.run-1.wrk.txt"].startswith("non-2xx: 89,261 of 89,261")
    assert report.status == "fail" and len(report.failures) == 2


def test_go_http_wins_a_tie_between_two_response_sizes(make_run):
    path = make_run(
        {
            "go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__nginx-502-latency.txt",
            "nginx-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt",
        }
    )
    report = check_run(load_run(path))
    assert report.response_bytes == 314
    assert {c.setup: c.status for c in by_name(report, "same-response")} == {"go-http": "pass", "nginx-http": "fail"}


def test_article_cells_agree_on_176_bytes_only_with_the_partial_response_bound(article_run):
    run = load_run(article_run)
    report = check_run(run)
    assert report.response_bytes == 176
    assert [c.status for c in by_name(report, "same-response")] == ["pass"] * 8
    # Rounding alone (no partly read responses): 374.64 MB / 2,232,068 cannot be 176 B.
    row = run.measurements[(run.measurements["setup"] == "nginx-http") & (run.measurements["gomaxprocs"] == 8)].iloc[0]
    low, high = response_size_bounds(row["bytes_read"], row["requests"], 0, 0)
    assert high < 176 and low > 175.99
    low, high = response_size_bounds(row["bytes_read"], row["requests"], row["connections"], 0)
    assert low < 176 < high


def test_too_few_requests_for_the_connections_cannot_be_sized(make_run):
    path = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt"})
    run = load_run(path)
    table = run.measurements.assign(requests=15)  # 15 responses over 20 connections
    _, found = checks.same_response_checks(table)
    (check,) = found
    assert check.status == "warn" and check.message == "15 requests over 20 connections: too few to tell the response size"


# --- per measurement ---------------------------------------------------------------------------


def test_zero_requests_fails_and_socket_errors_warn_with_their_share(make_run):
    path = make_run(
        {
            "go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__zero-requests-hang-latency.txt",
            "nginx-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__timeouts-latency.txt",
            "nginx-fcgi-tcp.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__connect-errors.txt",
        },
        manifest=COMPLETE,
    )
    report = check_run(load_run(path))
    zero = {c.setup: c for c in by_name(report, "zero-requests")}
    assert zero["go-http"].status == "fail" and zero["go-http"].message == "0 requests completed: nothing was measured"
    assert zero["nginx-http"].status == "pass" and zero["nginx-http"].message == "1,762 requests completed"
    errors = {c.setup: c for c in by_name(report, "socket-errors")}
    assert errors["go-http"].status == "pass"
    assert errors["nginx-http"].status == "warn"
    assert errors["nginx-http"].message == "socket errors: timeout 857 (48.64% of 1,762 requests)"
    assert errors["nginx-fcgi-tcp"].message == "socket errors: connect 42 (0.03% of 130,973 requests)"
    assert set(report.excluded) == {"go-http.gomaxprocs-1.run-1.wrk.txt"}


def test_nonzero_wrk_exit_code_warns(make_run):
    path = make_run(
        {"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt"},
        manifest={"status": "complete", "measurements": [{"file": "go-http.gomaxprocs-1.run-1.wrk.txt", "exit_code": 1}]},
    )
    (check,) = by_name(check_run(load_run(path)), "wrk-exit")
    assert (check.status, check.message) == ("warn", "wrk exited with status 1")


# --- the run ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "manifest, status, start",
    [
        (None, "warn", "no usable manifest.json"),
        ({"status": "complete"}, "pass", "the run completed"),
        ({"status": "interrupted", "reason": "SIGINT"}, "warn", "the run's status is 'interrupted' (SIGINT): its finished"),
        ({"status": "failed", "reason": "nginx exited"}, "warn", "the run's status is 'failed' (nginx exited)"),
    ],
)
def test_run_status(make_run, manifest, status, start):
    path = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt"}, manifest=manifest)
    (check,) = by_name(check_run(load_run(path)), "run-status")
    assert check.status == status and check.message.startswith(start)


def test_readiness_failure_in_manifest_fails_the_cell(make_run):
    manifest = {
        "status": "complete",
        "passes": [{"gomaxprocs": 1, "cells": {"nginx-fcgi-unix": {"ready": False, "error": "no answer within 10 s"}}}],
    }
    path = make_run({"go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt"}, manifest=manifest)
    (check,) = by_name(check_run(load_run(path)), "readiness")
    assert (check.status, check.setup) == ("fail", "nginx-fcgi-unix")
    assert check.message == "nginx-fcgi-unix at GOMAXPROCS=1 did not become ready: no answer within 10 s"


def test_parse_failures_are_failed_checks(make_run):
    path = make_run(
        {
            "go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt",
            "go-http.gomaxprocs-1.run-2.wrk.txt": CAPTURED / "wrk-4.1.0__usage.txt",
        }
    )
    report = check_run(load_run(path))
    (check,) = by_name(report, "parse")
    assert check.status == "fail" and check.repeat == 2 and "usage text" in check.message
    assert report.status == "fail"


# --- exclusions and annotation -----------------------------------------------------------------


def test_annotate_marks_each_measurement_with_its_worst_check_and_exclusion(make_run):
    path = make_run(
        {
            "go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt",
            "go-http.gomaxprocs-1.run-2.wrk.txt": CAPTURED / "wrk-4.1.0__basic.txt",
            "go-http.gomaxprocs-1.headers.txt": GO_HEAD,
            "nginx-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__timeouts-latency.txt",
            "nginx-http.gomaxprocs-1.run-2.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt",
            "nginx-http.gomaxprocs-1.headers.txt": BAD_GATEWAY_HEAD,
        },
        manifest=COMPLETE,
    )
    run = load_run(path)
    report = check_run(run)
    table = annotate(run.measurements, report)
    status = dict(zip(table["file"], table["check_status"]))
    excluded = dict(zip(table["file"], table["excluded"]))
    assert status["go-http.gomaxprocs-1.run-1.wrk.txt"] == "pass"
    assert pd.isna(excluded["go-http.gomaxprocs-1.run-1.wrk.txt"])
    # The 502 header capture fails the whole cell: both repeats are excluded, with the reason.
    for repeat in (1, 2):
        name = f"nginx-http.gomaxprocs-1.run-{repeat}.wrk.txt"
        assert status[name] == "fail"
        assert excluded[name] == "header-bytes: nginx-http at GOMAXPROCS=1 answered 'HTTP/1.1 502 Bad Gateway', not 200 (150 header bytes)"
