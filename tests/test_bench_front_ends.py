"""Tests of wrkreport.bench.front_ends: HAProxy's, Caddy's and Apache httpd's configurations, and their setups' answers and checks.

The programs' own syntax checks of these configurations, and real runs, are in tests/test_driver_front_ends.py.
"""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from helpers import plan
from wrkreport.bench.app_answers import dechunked, record_front_end_cell
from wrkreport.bench.commands.blocks import cell_verdict
from wrkreport.bench.front_ends import (
    CONFIG_FILES,
    apache_config,
    apache_threads,
    caddy_config,
    front_ends_of,
    haproxy_config,
    render_front_ends,
)
from wrkreport.bench.manifest import cell_from_headers
from wrkreport.bench.option_values import setup_list
from wrkreport.bench.parameters import plan_lines
from wrkreport.core.errors import UsageError
from wrkreport.core.setups import FRONT_END_SETUP_IDS, SETUP_BY_ID, braced

PORTS = {"go-http": 8080, "go-fcgi-tcp": 9001, **{s: SETUP_BY_ID[s].default_port for s in FRONT_END_SETUP_IDS}}
ALL = ["go-http", *FRONT_END_SETUP_IDS]
GO = b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 12\r\nContent-Type: text/plain\r\nServer: gophr\r\nDate: Sun, 29 Nov 2026 06:08:18 GMT\r\n\r\n"
HELLO = b"Hello World\n"


def listen_addresses(text: str) -> list[str]:
    """Return every address a configuration's text binds (bind, Listen, listen)."""
    return re.findall(r"^\s*(?:bind|Listen)\s+(\S+)", text, flags=re.M) + re.findall(r'"listen": \["([^"]+)"\]', text)


def test_the_front_ends_group_and_all_select_them_in_the_tables_order():
    assert setup_list("front-ends", {}) == ["go-http", "nginx-http", "haproxy-http", "caddy-http", "apache-http"]
    assert setup_list("front-ends,apache-fcgi-unix", {})[-1] == "apache-fcgi-unix"
    assert set(FRONT_END_SETUP_IDS) <= set(setup_list("all", {}))
    assert front_ends_of(["go-http", "apache-http", "haproxy-fcgi-unix"]) == ["haproxy", "apache"] and front_ends_of(["nginx-http"]) == []
    assert braced(FRONT_END_SETUP_IDS) == "{haproxy,caddy,apache}-{http,fcgi-tcp,fcgi-unix}"
    for setup in FRONT_END_SETUP_IDS:  # each divides by go-http, needs Go and its front end, answers with its own header block
        known = SETUP_BY_ID[setup]
        assert (known.baseline, known.needs, known.own_answer, known.default) == ("go-http", (known.server, "go"), True, False)


def test_the_plan_names_each_front_end_and_its_first_setup_and_refuses_them_with_server_host():
    lines = plan_lines(plan("--setups", "go-http,caddy-fcgi-unix,haproxy-http,caddy-http"))
    assert "front_ends haproxy caddy" in lines and "first_setup.caddy caddy-http" in lines and "first_setup.haproxy haproxy-http" in lines
    assert "needs.caddy-fcgi-unix caddy go" in lines and "server.haproxy-http haproxy" in lines
    assert not any(line.startswith("front_ends") for line in plan_lines(plan("--setups", "go-http,nginx-http")))
    with pytest.raises(UsageError, match="^haproxy-http: HAProxy, Caddy and Apache httpd run on this machine only"):
        plan("--setups", "go-http,haproxy-http", "--server-host", "bench@10.0.0.2")


def test_haproxy_binds_only_its_setups_on_loopback_with_every_cpu_and_keeps_connections_to_go():
    text = haproxy_config(["go-http", "haproxy-http", "haproxy-fcgi-unix"], PORTS, "/w/go.sock", 2, 20000, None, None)
    assert listen_addresses(text) == ["127.0.0.1:8093", "127.0.0.1:8095"]  # haproxy-fcgi-tcp is not measured: not bound
    assert "nbthread 2" in text and "maxconn 9968" in text and "http-reuse always" in text and "timeout http-keep-alive 300s" in text
    assert "server go 127.0.0.1:8080\n" in text and "server go /w/go.sock proto fcgi" in text and "9001" not in text
    assert "user " not in text and not re.search(r"^\s*(log|stats)\b", text, flags=re.M)  # no log, no stats socket
    as_root = haproxy_config(["haproxy-fcgi-tcp"], PORTS, "/w/go.sock", 4, 1000, "nobody", "nogroup")
    assert "    user nobody\n    group nogroup\n" in as_root and "nbthread 4" in as_root and "maxconn 468" in as_root
    assert "server go 127.0.0.1:9001 proto fcgi" in as_root and "use-fcgi-app go" in as_root


def test_caddy_has_no_admin_endpoint_no_automatic_https_and_only_its_setups_ports():
    config = caddy_config(["caddy-http", "caddy-fcgi-tcp", "caddy-fcgi-unix"], PORTS, "/w/go.sock", "/w/caddy/storage")
    assert config["admin"] == {"disabled": True} and config["storage"]["root"] == "/w/caddy/storage"
    servers = config["apps"]["http"]["servers"]
    assert sorted(s["listen"][0] for s in servers.values()) == ["127.0.0.1:8096", "127.0.0.1:8097", "127.0.0.1:8098"]
    assert all(s["automatic_https"] == {"disable": True} and s["idle_timeout"] == "300s" for s in servers.values())
    handlers = {name: s["routes"][0]["handle"][0] for name, s in servers.items()}
    assert handlers["caddy_http"]["upstreams"] == [{"dial": "127.0.0.1:8080"}] and handlers["caddy_http"]["transport"]["protocol"] == "http"
    assert (
        handlers["caddy_fcgi_unix"]["upstreams"] == [{"dial": "unix//w/go.sock"}]
        and handlers["caddy_fcgi_unix"]["transport"]["protocol"] == "fastcgi"
    )
    assert "logs" not in json.dumps(handlers)  # no access log


def test_apache_runs_the_event_mpm_one_process_per_cpu_without_access_log_or_comments_after_a_directive():
    text = apache_config(["apache-http", "apache-fcgi-unix"], PORTS, "/w/go.sock", "/w/apache", "/w/apache/error.log", 2, 100, None, None)
    assert listen_addresses(text) == ["127.0.0.1:8099", "127.0.0.1:8101"] and "<VirtualHost 127.0.0.1:8099>" in text
    assert "StartServers 2\nServerLimit 2\nThreadLimit 66\nThreadsPerChild 66\nMaxRequestWorkers 132\n" in text
    assert "ProxyPass / http://127.0.0.1:8080/\n" in text and "ProxyPass / unix:/w/go.sock|fcgi://localhost/ enablereuse=on\n" in text
    directives = [line for line in text.splitlines() if not line.startswith("#")]
    assert not any(line.startswith(("CustomLog", "TransferLog", "User ")) for line in directives)
    assert "KeepAliveTimeout 300\n" in text and "MaxKeepAliveRequests 10000\n" in text
    assert all("#" not in line for line in directives)  # httpd refuses a comment after a directive
    as_root = apache_config(["apache-fcgi-tcp"], PORTS, "/w/go.sock", "/w/apache", "/w/e.log", 1, 5000, "nobody", "nogroup")
    assert "User nobody\nGroup nogroup\n" in as_root and "ThreadsPerChild 5016\n" in as_root and apache_threads(5000, 1) == 5016


@pytest.mark.parametrize("bad", ["/tmp/with space/go.sock", '/tmp/q"uote', "/tmp/new\nline"])
def test_a_path_a_configuration_could_misread_is_refused_in_one_line(bad):
    with pytest.raises(UsageError, match="^--socket .*letters, digits"):
        haproxy_config(["haproxy-fcgi-unix"], PORTS, bad, 2, 20000, None, None)
    with pytest.raises(UsageError, match="^--socket "):
        caddy_config(["caddy-fcgi-unix"], PORTS, bad, "/w/s")
    with pytest.raises(UsageError, match="^--prefix "):
        apache_config(["apache-http"], PORTS, "/w/go.sock", bad, "/w/e.log", 2, 100, None, None)


def test_render_writes_each_needed_front_ends_file_and_no_other(tmp_path):
    manifest = {"parameters": {"setups": ["go-http", "caddy-http", "apache-fcgi-tcp"], "ports": PORTS, "connections_levels": [100]}}
    assert render_front_ends(manifest, tmp_path, "/w", "/w/go.sock", 2, 20000, None, None) == ["caddy", "apache"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([CONFIG_FILES["caddy"], CONFIG_FILES["apache"]])
    assert json.loads((tmp_path / "caddy.json").read_text())["admin"] == {"disabled": True}
    assert "ErrorLog /w/apache/error.log" in (tmp_path / "apache2.conf").read_text()
    with pytest.raises(UsageError, match="^--user "):
        render_front_ends(manifest, tmp_path, "/w", "/w/go.sock", 2, 20000, "no body", None)


def front_cell(headers: bytes, body: bytes | None, tmp_path, go_cell=None) -> dict:
    cell = cell_from_headers(headers, True, None, False, "curl -s -D -")
    path = None
    if body is not None:
        path = tmp_path / "body"
        path.write_bytes(body)
    record_front_end_cell(cell, headers, str(path) if path else None, HELLO, go_cell or {"error": None}, GO)
    return cell


def test_a_front_ends_answer_keeps_its_own_header_block_and_lists_what_it_changed(tmp_path):
    haproxy = (
        b"HTTP/1.1 200 OK\r\ncontent-length: 12\r\ncontent-type: text/plain\r\nserver: gophr\r\ndate: Sun, 29 Nov 2026 06:08:20 GMT\r\n\r\n"
    )
    cell = front_cell(haproxy, HELLO, tmp_path)
    assert cell["error"] is None and cell["headers_changed"] == ["Connection (removed)"]  # lower case names are the same fields
    assert (cell["body_bytes"], cell["response_bytes"], cell["body_sha256"]) == (12, 117 + 12, hashlib.sha256(HELLO).hexdigest())
    assert cell_verdict("haproxy-http", cell, 141) == "measure haproxy-http note: 117-byte header block; changed: Connection (removed)"


def test_a_chunked_answer_is_decoded_for_the_body_and_counted_as_sent(tmp_path):
    apache = (
        b"HTTP/1.1 200 OK\r\nDate: Sun, 29 Nov 2026 06:08:45 GMT\r\nServer: gophr\r\nConnection: keep-alive\r\n"
        b"Transfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
    )
    wire = b"c\r\nHello World\n\r\n0\r\n\r\n"
    cell = front_cell(apache, wire, tmp_path)
    assert cell["error"] is None and cell["body_bytes"] == 12 and cell["response_bytes"] == len(apache) + len(wire)
    assert cell["headers_changed"] == ["Content-Length (removed)", "Transfer-Encoding (added)"]
    broken = front_cell(apache, b"c\r\nHello", tmp_path)
    assert broken["error"] == "answered a chunked body that does not decode"
    assert dechunked(b"5;ext=1\r\nHello\r\n7\r\n World\n\r\n0\r\nX-Trailer: 1\r\n\r\n") == b"Hello World\n"


def test_another_body_a_502_or_no_answer_is_the_cells_error(tmp_path):
    headers = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
    other = front_cell(headers, b"Hello", tmp_path)
    assert other["error"].startswith("answered a 5-byte body (sha256 ") and "where go-http answers 12 bytes" in other["error"]
    assert cell_verdict("caddy-http", other, 141).startswith("skip caddy-http answered a 5-byte body")
    bad_gateway = front_cell(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 107\r\n\r\n", b"<html>", tmp_path)
    assert bad_gateway["error"] == "answered 'HTTP/1.1 502 Bad Gateway', not 200"
    silent = cell_from_headers(None, True, None, False, "curl -s -D -")
    assert silent["error"] == "no response to curl -s -D -"
