"""Tests of wrkreport.bench.app_answers: an app setup's answer against the app's own (status, body, what nginx changed)."""

from __future__ import annotations

from wrkreport.bench.app_answers import changed_headers, header_fields, record_app_cell, reference_of
from wrkreport.bench.manifest import cell_from_headers

APP = b"HTTP/1.1 200 OK\r\nServer: app/1\r\nDate: Fri, 27 Nov 2026 01:00:00 GMT\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n"
NGINX = b"HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Fri, 27 Nov 2026 01:00:01 GMT\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n"


def test_header_fields_and_what_nginx_changed():
    assert header_fields(APP)["content-length"] == "2"
    assert changed_headers(APP, NGINX) == ["Server (changed)", "Date (changed)", "Connection (added)"]


def cells(tmp_path, app_body: bytes, nginx_body: bytes, nginx_headers: bytes = NGINX):
    (tmp_path / "a").write_bytes(app_body)
    (tmp_path / "n").write_bytes(nginx_body)
    app = cell_from_headers(APP, True, None, any_2xx=True)
    record_app_cell("app", app, APP, str(tmp_path / "a"), None, None)
    proxied = cell_from_headers(nginx_headers, True, None, any_2xx=True)
    record_app_cell("nginx-app", proxied, nginx_headers, str(tmp_path / "n"), app, APP)
    return app, proxied


def test_the_same_status_and_body_pass(tmp_path):
    app, proxied = cells(tmp_path, b"{}", b"{}")
    assert app["error"] is None and proxied["error"] is None and proxied["body_sha256"] == app["body_sha256"] and app["body_bytes"] == 2


def test_another_body_or_status_is_the_cells_error(tmp_path):
    _, proxied = cells(tmp_path, b"{}", b"[]")
    assert "a 2-byte body (sha256" in proxied["error"] and "where the app alone answers 2 bytes" in proxied["error"]
    _, proxied = cells(tmp_path, b"{}", b"{}", NGINX.replace(b"200 OK", b"502 Bad Gateway"))
    assert proxied["error"] == "answered 'HTTP/1.1 502 Bad Gateway', not 2xx"
    _, proxied = cells(tmp_path, b"{}", b"{}", NGINX.replace(b"200 OK", b"204 No Content"))
    assert proxied["error"] == "answered 'HTTP/1.1 204 No Content' where the app alone answers 'HTTP/1.1 200 OK'"


def test_each_build_alone_answers_its_own_and_nginx_in_front_of_it_is_compared_with_it():
    ab = ["app", "app~b", "nginx-app", "nginx-app~b"]
    assert [reference_of(s, ab) for s in ab] == [None, None, "app", "app~b"]
    assert reference_of("nginx-app~v", ["app", "nginx-app", "nginx-app~v"]) == "app"  # a --variant twin: the same app behind another nginx


def test_a_second_build_may_answer_another_body_but_nginx_in_front_of_it_must_answer_its_own(tmp_path):
    for name, body in (("a", b"{}"), ("b", b"[1]"), ("n", b"[1]"), ("x", b"[2]")):
        (tmp_path / name).write_bytes(body)
    app = cell_from_headers(APP, True, None, any_2xx=True)
    record_app_cell("app", app, APP, str(tmp_path / "a"), None, None, None)
    build_b = cell_from_headers(APP, True, None, any_2xx=True)
    record_app_cell("app~b", build_b, APP, str(tmp_path / "b"), app, APP, reference_of("app~b", ["app", "app~b"]))
    assert build_b["error"] is None and build_b["body_sha256"] != app["body_sha256"] and build_b["body_bytes"] == 3
    proxied = cell_from_headers(NGINX, True, None, any_2xx=True)
    record_app_cell("nginx-app~b", proxied, NGINX, str(tmp_path / "n"), build_b, APP, "app~b")
    assert proxied["error"] is None and proxied["headers_changed"] == ["Server (changed)", "Date (changed)", "Connection (added)"]
    proxied = cell_from_headers(NGINX, True, None, any_2xx=True)
    record_app_cell("nginx-app~b", proxied, NGINX, str(tmp_path / "x"), build_b, APP, "app~b")
    assert "where the app's build b alone answers 3 bytes" in proxied["error"]
