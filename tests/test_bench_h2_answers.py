"""Tests of wrkreport.bench.h2_answers: an h2 setup's answer and handshake at a block's start."""

from __future__ import annotations

from wrkreport.bench.h2_answers import h2_note, record_h2_cell
from wrkreport.bench.manifest import cell_from_headers

GO_H2 = b"HTTP/2 200 \r\ncontent-type: text/plain\r\nserver: gophr\r\ncontent-length: 12\r\ndate: Fri, 27 Nov 2026 04:32:27 GMT\r\n\r\n"
NGINX_H2 = b"HTTP/2 200 \r\nserver: nginx\r\ndate: Fri, 27 Nov 2026 04:32:28 GMT\r\ncontent-type: text/plain\r\ncontent-length: 12\r\n\r\n"
PROBE = "CONNECTION ESTABLISHED\nProtocol version: TLSv1.3\nCiphersuite: TLS_AES_128_GCM_SHA256\nSignature type: ECDSA\nServer Temp Key: X25519, 253 bits\n"


def record(tmp_path, setup, headers, body=b"Hello World\n", alpn="ALPN protocol: h2\n", baseline=GO_H2):
    (tmp_path / "body").write_bytes(body)
    (tmp_path / "probe").write_text(PROBE + alpn)
    manifest, entry = {}, {"cells": {}}
    cell = cell_from_headers(headers, True, None)
    entry["cells"][setup] = cell
    note = record_h2_cell(manifest, entry, setup, cell, headers, str(tmp_path / "body"), str(tmp_path / "probe"), b"Hello World\n",
                          None if setup == "go-h2" else baseline)
    return manifest, cell, note


def test_an_h2_answer_is_checked_and_nginxs_changes_listed_but_date(tmp_path):
    manifest, cell, note = record(tmp_path, "nginx-h2", NGINX_H2)
    assert cell["error"] is None and note is None and cell["http_version"] == "HTTP/2" and cell["body_bytes"] == 12
    assert cell["headers_changed"] == ["Server (changed)"]  # Date differs too: not listed
    assert manifest["tls"]["setups"]["nginx-h2"]["alpn"] == "h2" and cell["tls"]["cipher"] == "TLS_AES_128_GCM_SHA256"
    assert h2_note("nginx-h2", cell) == "HTTP/2 200, 12-byte body (no 141-byte rule over HTTP/2); header fields changed from go-h2's: Server (changed)"


def test_a_fallback_to_http1_a_wrong_body_or_no_alpn_h2_is_an_error(tmp_path):
    assert "not HTTP/2" in record(tmp_path, "go-h2", b"HTTP/1.1 200 OK\r\nServer: gophr\r\n\r\n")[1]["error"]
    assert "not go-http's 12 bytes" in record(tmp_path, "go-h2", GO_H2, body=b"Hello\n")[1]["error"]
    assert "answered 'HTTP/2 502 ', not 200" in record(tmp_path, "nginx-h2", b"HTTP/2 502 \r\nserver: nginx\r\n\r\n")[1]["error"]
    _, cell, _ = record(tmp_path, "nginx-h2", NGINX_H2, alpn="No ALPN negotiated\n")
    assert cell["error"] == "the handshake negotiated no ALPN protocol, not h2: it would be measured as HTTP/1.1"
    assert "negotiated ALPN http/1.1, not h2" in record(tmp_path, "go-h2", GO_H2, alpn="ALPN protocol: http/1.1\n")[1]["error"]
