"""run_bench.sh with the TLS setups (issue 22): real nginx, wrk, openssl and Go on 127.0.0.1.

Same rules as tests/test_driver.py: private ports, --out and TMPDIR per test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import (
    BASE_PORT_NAMES,
    SCRIPT,
    USED_PORTS,
    assert_nothing_left,
    free_port_block,
    latest_run,
    missing_tools,
    port_args,
    script_env,
)

KEEPALIVE = ("go-https", "nginx-https", "nginx-https-unix")
NEW = ("go-https-new", "nginx-https-new", "nginx-https-unix-new")  # the same servers, a new connection per request
PORT_NAMES = (*BASE_PORT_NAMES, *KEEPALIVE)  # a -new setup has its server's port
MISSING = missing_tools("nginx", "wrk", "curl", "go", "openssl")
needs_tools = pytest.mark.skipif(bool(MISSING), reason=f"needs nginx, wrk, curl, go and openssl; missing: {', '.join(MISSING)}")


def run_script(args: list[str], tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=script_env(tmp), timeout=240, check=False)


def private_key_files(*tops: Path) -> list[str]:
    """Return every file under tops holding a PEM private key."""
    return [str(p) for top in tops for p in top.rglob("*") if p.is_file() and b"PRIVATE KEY" in p.read_bytes()]


@pytest.mark.slow
@pytest.mark.alone  # counts the handshakes of a 1-s measurement: a floor on throughput
@needs_tools
@pytest.mark.parametrize(
    "extra",
    [
        ["--setups", "tls"],
        ["--setups", "go-http," + ",".join(KEEPALIVE), "--connection-per-request", "--tls-key", "rsa2048", "--tls-resumption", "on"],
    ],
    ids=["both-modes", "per-request-rsa-resumed"],
)
def test_tls_setups_answer_141_bytes_negotiate_alike_and_leave_no_key(workdirs, tmp_path, extra):
    out, tmp = workdirs
    ports = free_port_block(PORT_NAMES, 19100, 19900, USED_PORTS)
    args = ["--quick", "--gomaxprocs", "1", "--seed", "3", "--warmup", "1"]  # the quick profile's warm-up (script_env's runs have none)
    done = run_script([*args, "--out", str(out), *port_args(ports), *extra], tmp)
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    per_request = "--connection-per-request" in extra
    tls_setups = KEEPALIVE if per_request else (*KEEPALIVE, *NEW)
    for setup in ("go-http", *tls_setups):
        data = (run / f"{setup}.gomaxprocs-1.headers.txt").read_bytes()
        assert len(data) == 141 and data.startswith(b"HTTP/1.1 200 OK\r\n"), setup
    tls = manifest["tls"]
    negotiated = {(p["protocol"], p["cipher"], p["group"]) for p in tls["setups"].values()}
    assert set(tls["setups"]) == set(tls_setups) and negotiated == {("TLSv1.3", "TLS_AES_128_GCM_SHA256", "X25519")}
    assert len(tls["cert_sha256"].split(":")) == 32
    assert tls["key"] == ("rsa2048" if per_request else "ecdsa-p256") and tls["resumption"] is per_request
    assert set(tls["counters"]) == set(tls_setups) and str(tmp) not in json.dumps(tls), "private paths in the manifest"
    counts = {m["setup"]: m.get("tls") for m in manifest["measurements"]}
    closing = {m["setup"] for m in manifest["measurements"] if "-H Connection: close" in m["command"]}
    if per_request:
        assert closing == {"go-http", *KEEPALIVE}
        assert counts["go-https"]["resumed"] > 0 and counts["nginx-https"]["resumed"] > 0  # wrk resumes when the servers let it
    else:
        assert closing == set(NEW)
        assert all(counts[s]["resumed"] == 0 for s in tls_setups)
        assert counts["go-https"]["handshakes"] == 100  # one per wrk connection
        assert counts["go-https-new"]["handshakes"] > 1000  # one per request
    assert private_key_files(out) == []
    assert not list(tmp.glob("wrkreport.*")), "the private work dir (and the key in it) outlived the run"
    assert_nothing_left(manifest, ports, tmp)

    report = tmp_path / "report"
    built = subprocess.run(
        [sys.executable, "-m", "wrkreport", "build", str(run), "--out", str(report)], capture_output=True, text=True, check=False
    )
    assert "Traceback" not in built.stderr and built.returncode == 0, built.stderr
    results = json.loads((report / "results.json").read_text())
    baselines = {r["setup"]: r["baseline"] for r in results["ratios"] if r["metric"] == "requests_per_sec"}
    expected = {"go-http": "go-http", "go-https": "go-http", "nginx-https": "go-https", "nginx-https-unix": "go-https"}
    if not per_request:
        expected.update({"go-https-new": "go-https", "nginx-https-new": "go-https-new", "nginx-https-unix-new": "go-https-new"})
    assert baselines == expected
    page = (report / "index.html").read_text()
    assert "Terminating TLS at nginx keeps" in page and "did not measure TLS" in page
    assert "handshakes per second" in page and ("throughput with keep-alive" in page) is not per_request
    assert "of go-https's" in built.stdout  # the terminal names the divisor
    assert private_key_files(report) == []
