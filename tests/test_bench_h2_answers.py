"""Tests of wrkreport.bench.h2_answers: an h2 setup's answer and handshake at a block's start."""

from __future__ import annotations

import shutil
import subprocess

import pytest

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
    note = record_h2_cell(
        manifest,
        entry,
        setup,
        cell,
        headers,
        str(tmp_path / "body"),
        str(tmp_path / "probe"),
        b"Hello World\n",
        None if setup == "go-h2" else baseline,
    )
    return manifest, cell, note


def test_an_h2_answer_is_checked_and_nginxs_changes_listed_but_date(tmp_path):
    manifest, cell, note = record(tmp_path, "nginx-h2", NGINX_H2)
    assert cell["error"] is None and note is None and cell["http_version"] == "HTTP/2" and cell["body_bytes"] == 12
    assert cell["headers_changed"] == ["Server (changed)"]  # Date differs too: not listed
    assert manifest["tls"]["setups"]["nginx-h2"]["alpn"] == "h2" and cell["tls"]["cipher"] == "TLS_AES_128_GCM_SHA256"
    assert (
        h2_note("nginx-h2", cell)
        == "HTTP/2 200, 12-byte body (no 141-byte rule over HTTP/2); header fields changed from go-h2's: Server (changed)"
    )


def test_a_fallback_to_http1_a_wrong_body_or_no_alpn_h2_is_an_error(tmp_path):
    assert "not HTTP/2" in record(tmp_path, "go-h2", b"HTTP/1.1 200 OK\r\nServer: gophr\r\n\r\n")[1]["error"]
    assert "not go-http's 12 bytes" in record(tmp_path, "go-h2", GO_H2, body=b"Hello\n")[1]["error"]
    assert "answered 'HTTP/2 502 ', not 200" in record(tmp_path, "nginx-h2", b"HTTP/2 502 \r\nserver: nginx\r\n\r\n")[1]["error"]
    _, cell, _ = record(tmp_path, "nginx-h2", NGINX_H2, alpn="No ALPN negotiated\n")
    assert cell["error"] == "the handshake negotiated no ALPN protocol, not h2: it would be measured as HTTP/1.1"
    assert "negotiated ALPN http/1.1, not h2" in record(tmp_path, "go-h2", GO_H2, alpn="ALPN protocol: http/1.1\n")[1]["error"]


def tls_server(tmp_path, protocols):
    """Start a real TLS server on 127.0.0.1 offering these ALPN protocols; return its port (it accepts two connections)."""
    import socket
    import ssl
    import threading

    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(tmp_path / "key.pem"),
            "-out",
            str(tmp_path / "cert.pem"),
        ],
        capture_output=True,
        check=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    context.set_alpn_protocols(protocols)
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        with listener:
            for _ in range(2):
                conn, _ = listener.accept()
                try:
                    with context.wrap_socket(conn, server_side=True) as tls:
                        tls.recv(1)
                except (OSError, ssl.SSLError):
                    pass

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def probe(port: int) -> str:
    """Return the driver's probe of an h2 setup (src/driver/tls.sh tls_probe): -brief offering h2, then the full report's ALPN line."""
    brief = subprocess.run(
        ["openssl", "s_client", "-brief", "-alpn", "h2", "-connect", f"127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=10,
    ).stderr
    full = subprocess.run(
        ["openssl", "s_client", "-alpn", "h2", "-connect", f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL, capture_output=True, timeout=10
    ).stdout.decode("latin-1")
    return brief + "".join(line + "\n" for line in full.splitlines() if line.startswith(("ALPN protocol: ", "No ALPN negotiated")))


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")
# A server offering http/1.1 only, or no ALPN at all (go-https), selects nothing of the probe's h2: no ALPN protocol.
@pytest.mark.parametrize(
    "protocols, error", [(["h2", "http/1.1"], None), (["http/1.1"], "no ALPN protocol, not h2"), ([], "no ALPN protocol, not h2")]
)
def test_a_real_server_falling_back_to_http1_is_caught_by_the_probe(tmp_path, protocols, error):
    report = probe(tls_server(tmp_path, protocols))
    (tmp_path / "probe.txt").write_text(report)
    (tmp_path / "body").write_bytes(b"Hello World\n")
    manifest, entry = {}, {"cells": {}}
    cell = entry["cells"]["go-h2"] = cell_from_headers(GO_H2, True, None)
    record_h2_cell(manifest, entry, "go-h2", cell, GO_H2, str(tmp_path / "body"), str(tmp_path / "probe.txt"), b"Hello World\n", None)
    assert (cell["error"] is None) if error is None else (error in cell["error"]), (report, cell["error"])
    assert manifest["tls"]["setups"]["go-h2"]["protocol"] == "TLSv1.3"
