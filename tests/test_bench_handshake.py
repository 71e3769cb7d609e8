"""Tests of wrkreport.bench.handshake: the negotiated-TLS check on real handshakes, two real go-https servers made to negotiate differently (TLS 1.3 and 1.2), probed as the driver probes them (openssl s_client -brief)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from helpers import free_port_block, missing_tools
from wrkreport.bench.handshake import parse_probe, record_probe

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(missing_tools("go", "openssl")), reason="needs go and openssl")]


def make_key_and_cert(where: Path) -> tuple[Path, Path]:
    """Return (key, certificate): ECDSA P-256, self-signed, as the driver makes them."""
    key, cert = where / "key.pem", where / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return key, cert


def probe(port: int, out: Path) -> Path:
    """Run one handshake as the driver's tls_probe does, its report into out."""
    with open(out, "wb") as f:
        subprocess.run(
            ["openssl", "s_client", "-brief", "-connect", f"127.0.0.1:{port}"],
            stdin=subprocess.DEVNULL,
            stdout=f,
            stderr=subprocess.STDOUT,
            timeout=10,
            check=False,
        )
    return out


@pytest.fixture
def two_versions(tmp_path):
    """Yield {version: TLS port} of two real gohello servers offering only TLS 1.3 and only TLS 1.2, with the same key."""
    binary = tmp_path / "gohello"
    subprocess.run(
        ["go", "build", "-buildvcs=false", "-o", str(binary), "."], cwd=ROOT / "src" / "gohello", check=True, capture_output=True
    )
    key, cert = make_key_and_cert(tmp_path)
    used: set[int] = set()
    procs, ports = [], {}
    try:
        for version in ("1.3", "1.2"):
            p = free_port_block(("http", "fcgi", "tls"), 28000, 32000, used)
            procs.append(
                subprocess.Popen(
                    [
                        str(binary),
                        "-http-port",
                        str(p["http"]),
                        "-fcgi-port",
                        str(p["fcgi"]),
                        "-tls-port",
                        str(p["tls"]),
                        "-tls-cert",
                        str(cert),
                        "-tls-key",
                        str(key),
                        "-tls-version",
                        version,
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            ports[version] = p["tls"]
        deadline = time.monotonic() + 10
        for version, port in ports.items():
            while parse_probe(probe(port, tmp_path / "ready.txt").read_text(errors="replace"))["error"]:
                assert time.monotonic() < deadline and all(p.poll() is None for p in procs), f"go-https at TLS {version} did not start"
                time.sleep(0.1)
        yield ports
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)


def test_sides_that_really_negotiated_differently_fail_with_both_values(two_versions, tmp_path):
    manifest, entry = {"tls": {"setups": {}}}, {"cells": {}}
    same = record_probe(manifest, entry, "go-https", str(probe(two_versions["1.3"], tmp_path / "go-https.txt")))
    assert same is None and manifest["tls"]["setups"]["go-https"]["protocol"] == "TLSv1.3"
    note = record_probe(manifest, entry, "nginx-https", str(probe(two_versions["1.2"], tmp_path / "nginx-https.txt")))
    assert note is not None and note.startswith("negotiated protocol TLSv1.2 (go-https: TLSv1.3)")
    cipher = manifest["tls"]["setups"]["nginx-https"]["cipher"]
    assert f"cipher {cipher} (go-https: {manifest['tls']['setups']['go-https']['cipher']})" in note
    assert entry["cells"]["nginx-https"]["tls"]["protocol"] == "TLSv1.2"


def test_sides_that_negotiated_alike_pass(two_versions, tmp_path):
    manifest, entry = {"tls": {"setups": {}}}, {"cells": {}}
    assert record_probe(manifest, entry, "go-https", str(probe(two_versions["1.3"], tmp_path / "a.txt"))) is None
    assert record_probe(manifest, entry, "nginx-https", str(probe(two_versions["1.3"], tmp_path / "b.txt"))) is None


@pytest.mark.alone  # counts the requests vegeta sent at 500 req/s: a rate held
def test_the_fixed_rate_phase_reaches_a_tls_setup_with_the_runs_own_certificate(two_versions, tmp_path):
    # vegeta verifies certificates unless told not to; against the run's self-signed one
    # every request failed ("x509: certificate signed by unknown authority") until -insecure.
    from rate_servers import vegeta_or_skip
    from wrkreport.bench.fixed_rate import Attack, measure_rate, rate_stem
    from wrkreport.parsers.vegeta import read_vegeta_file

    vegeta = vegeta_or_skip()
    run_dir, work = tmp_path / "run", tmp_path / "work"
    run_dir.mkdir()
    work.mkdir()
    stem = rate_stem("go-https", 1, 1, 1, 500)
    attack = Attack(url=f"https://127.0.0.1:{two_versions['1.3']}/", rate=500, duration_s=1, expect_body_bytes=12)
    ran = measure_rate(vegeta, attack, run_dir, work, stem, {"setup": "go-https", "gomaxprocs": 1, "block": 1, "round": 1, "repeat": 1})
    result = read_vegeta_file(run_dir / ran.file)
    assert ran.problem is None and result.requests == 500
    assert result.statuses == ((200, 500),) and result.errors == 0, (result.statuses, result.errors)
