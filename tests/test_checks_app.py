"""Tests of wrkreport.checks.app: --app's setups judged by the app's own answer, not the hello world's 141 bytes."""

from __future__ import annotations

import pandas as pd

from wrkreport.checks import measurements as checks
from wrkreport.checks.app import app_header_check, app_response_sizes
from wrkreport.core.setups import is_app
from wrkreport.runs.record import Cell, record_of
from wrkreport.runs.sidecars import HeaderCapture

HEADERS = "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 912\r\n\r\n"


def capture(text: str = HEADERS, setup: str = "nginx-app") -> HeaderCapture:
    return HeaderCapture(setup, 1, f"{setup}.gomaxprocs-1.headers.txt", text, len(text))


def test_is_app():
    assert is_app("app") and is_app("nginx-app") and not is_app("nginx-http") and not is_app("unknown")


def test_an_app_capture_passes_on_2xx_and_says_its_size_and_what_nginx_changed():
    cell = {"body_bytes": 912, "headers_changed": ["Server (changed)", "Connection (added)"]}
    check = app_header_check(capture(), Cell.of(cell), "nginx-app at GOMAXPROCS=1")
    assert check.status == "pass"
    assert check.message == (
        f"nginx-app at GOMAXPROCS=1: HTTP/1.1 200 OK, {len(HEADERS)} header bytes, 912-byte body (your app's own answer: "
        "no 141-byte rule); changed from the app's: Server (changed), Connection (added)"
    )
    failed = app_header_check(capture(HEADERS.replace("200 OK", "404 Not Found")), Cell.of({}), "nginx-app at GOMAXPROCS=1")
    assert failed.status == "fail" and "not 2xx" in failed.message


def row(setup: str, bytes_read: float, requests: int = 100_000) -> dict:
    return dict(
        setup=setup,
        gomaxprocs=1,
        repeat=1,
        file=f"{setup}.txt",
        requests=requests,
        bytes_read=bytes_read,
        connections=100,
        errors_read=0,
        bytes_per_response=bytes_read / requests,
    )


def test_each_app_setup_is_held_to_the_size_of_its_own_answer_beside_the_go_ones():
    table = pd.DataFrame(
        [row("go-http", 153 * 100_000), row("nginx-http", 153 * 100_000), row("app", 1044 * 100_000), row("nginx-app", 1060 * 100_000)]
    )
    sizes = {("app", 1): 1044, ("nginx-app", 1): 1060}  # nginx's header block is its own: Server, Connection
    agreed, found = checks.same_response_checks(table, sizes)
    assert agreed == 153 and [c.status for c in found] == ["pass"] * 4
    assert "which includes the 1060 B it answered at the block's start" in found[-1].message
    _, found = checks.same_response_checks(table[table["setup"].isin(["app", "nginx-app"])], {("app", 1): 1044, ("nginx-app", 1): 1044})
    assert [c.status for c in found] == ["pass", "fail"] and "not the 1044 B it answered at the block's start" in found[1].message
    _, found = checks.same_response_checks(table[table["setup"] == "app"], {})
    assert found[0].status == "warn" and "no capture" in found[0].message


def test_the_sizes_come_from_the_first_capture_of_each_cell():
    manifest = {
        "passes": [
            {"gomaxprocs": 1, "cells": {"app": {"header_bytes": 132, "body_bytes": 912}, "go-http": {"header_bytes": 141}}},
            {"gomaxprocs": 1, "cells": {"app": {"header_bytes": 999, "body_bytes": 1}}},
        ]
    }
    assert app_response_sizes(record_of(manifest)) == {("app", 1): 1044}
