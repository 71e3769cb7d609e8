"""Tests of wrkreport.app_checks: --app's setups judged by the app's own answer, not the hello world's 141 bytes."""

from __future__ import annotations

import pandas as pd

from wrkreport import checks
from wrkreport.app_checks import app_header_check, is_app
from wrkreport.run_files import HeaderCapture

HEADERS = "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 912\r\n\r\n"


def capture(text: str = HEADERS, setup: str = "nginx-app") -> HeaderCapture:
    return HeaderCapture(setup, 1, f"{setup}.gomaxprocs-1.headers.txt", text, len(text))


def test_is_app():
    assert is_app("app") and is_app("nginx-app") and not is_app("nginx-http") and not is_app("unknown")


def test_an_app_capture_passes_on_2xx_and_says_its_size_and_what_nginx_changed():
    cell = {"body_bytes": 912, "headers_changed": ["Server (changed)", "Connection (added)"]}
    check = app_header_check(capture(), cell, "nginx-app at GOMAXPROCS=1")
    assert check.status == "pass"
    assert check.message == (f"nginx-app at GOMAXPROCS=1: HTTP/1.1 200 OK, {len(HEADERS)} header bytes, 912-byte body (your app's own answer: "
                             "no 141-byte rule); changed from the app's: Server (changed), Connection (added)")
    failed = app_header_check(capture(HEADERS.replace("200 OK", "404 Not Found")), {}, "nginx-app at GOMAXPROCS=1")
    assert failed.status == "fail" and "not 2xx" in failed.message


def row(setup: str, bytes_read: float, requests: int = 100_000) -> dict:
    return dict(setup=setup, gomaxprocs=1, repeat=1, file=f"{setup}.txt", requests=requests, bytes_read=bytes_read, connections=100,
                errors_read=0, bytes_per_response=bytes_read / requests)


def test_the_app_setups_agree_on_their_own_response_size_beside_the_go_ones():
    table = pd.DataFrame([row("go-http", 153 * 100_000), row("nginx-http", 153 * 100_000), row("app", 1050 * 100_000), row("nginx-app", 1050 * 100_000)])
    agreed, found = checks.same_response_checks(table)
    assert agreed == 153 and {c.status for c in found} == {"pass"} and len(found) == 4
    agreed, found = checks.same_response_checks(table[table["setup"].isin(["app", "nginx-app"])])
    assert agreed == 1050 and {c.status for c in found} == {"pass"}
