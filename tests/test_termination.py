"""The TLS setups in wrkreport (issue 22): their baselines, the negotiated-TLS and resumption checks, the page's TLS part.

Fixture: tests/fixtures/runs/tls-quick, a real --quick run of go-http and the three TLS setups.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wrkreport.analyze import load_analysis
from wrkreport.model import baseline_of
from wrkreport.termination import answer, negotiated_checks, resumed_checks, tls_part

FIXTURE = Path(__file__).parent / "fixtures" / "runs" / "tls-quick"


def copy_with(tmp_path: Path, change) -> Path:
    """Return a copy of the fixture whose manifest `change` edited."""
    run = tmp_path / FIXTURE.name
    shutil.copytree(FIXTURE, run)
    manifest = json.loads((run / "manifest.json").read_text())
    change(manifest)
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def test_tls_setups_divide_by_go_https_and_go_https_by_go_http():
    assert [baseline_of(s) for s in ("go-http", "go-https", "nginx-https", "nginx-https-unix", "nginx-http")] == [
        "go-http", "go-http", "go-https", "go-https", "go-http"]
    analysed = load_analysis(FIXTURE)
    manifest = json.loads((FIXTURE / "manifest.json").read_text())
    rate = {(m["gomaxprocs"], m["setup"]): m for m in manifest["measurements"]}
    for n in (1, 2):
        ratio = analysed.analysis.ratio(n, 100, "nginx-https")
        assert ratio.baseline == "go-https"
        cells = {s: analysed.analysis.cell(n, 100, s).metrics["requests_per_sec"].median for s in ("go-https", "nginx-https")}
        assert ratio.ratio == pytest.approx(cells["nginx-https"] / cells["go-https"])
        assert analysed.analysis.ratio(n, 100, "go-https").baseline == "go-http"
        assert rate[(n, "go-https")]["tls"]["handshakes"] == 100
    assert all(c.status == "pass" for c in analysed.checks.checks if c.name.startswith("tls"))


def test_setups_that_negotiated_differently_fail_with_both_values(tmp_path):
    def tls12_at_nginx(manifest):
        for entry in manifest["passes"]:
            entry["cells"]["nginx-https"]["tls"].update(protocol="TLSv1.2", cipher="ECDHE-ECDSA-AES128-GCM-SHA256")

    run = copy_with(tmp_path, tls12_at_nginx)
    analysed = load_analysis(run)
    failed = [c for c in analysed.checks.checks if c.name == "tls" and c.status == "fail"]
    assert {(c.setup, c.gomaxprocs) for c in failed} == {("nginx-https", 1), ("nginx-https", 2)}
    message = failed[0].message
    assert "TLSv1.2" in message and "TLSv1.3" in message and "ECDHE-ECDSA-AES128-GCM-SHA256" in message and "TLS_AES_128_GCM_SHA256" in message
    assert analysed.analysis.ratio(1, 100, "nginx-https").ratio is None  # left out of the comparison
    assert analysed.analysis.ratio(1, 100, "nginx-https-unix").ratio is not None


def test_a_failed_handshake_probe_fails_its_setup():
    manifest = {"tls": {"setups": {}}, "passes": [{"gomaxprocs": 1, "cells": {
        "go-https": {"tls": {"protocol": "TLSv1.3", "cipher": "A", "group": "X25519", "signature": "ECDSA", "error": None}},
        "nginx-https": {"tls": {"protocol": None, "cipher": None, "group": None, "signature": None, "error": "no TLS handshake: connect:errno=111"}}}}]}
    checks = {c.setup: c for c in negotiated_checks(manifest)}
    assert checks["go-https"].status == "pass" and checks["nginx-https"].status == "fail"
    assert "errno=111" in checks["nginx-https"].message


def test_resumed_connections_with_resumption_off_fail_the_measurement(tmp_path):
    def resumed(manifest):
        entry = next(m for m in manifest["measurements"] if m["setup"] == "nginx-https" and m["gomaxprocs"] == 2)
        entry["tls"]["resumed"] = 37

    run = copy_with(tmp_path, resumed)
    analysed = load_analysis(run)
    failed = [c for c in analysed.checks.checks if c.name == "tls-resumed"]
    assert len(failed) == 1 and failed[0].status == "fail" and "37 resumed" in failed[0].message
    assert failed[0].file in analysed.checks.excluded
    assert resumed_checks(json.loads((FIXTURE / "manifest.json").read_text()))[0].status == "pass"


def test_resumption_on_counts_are_not_a_failure():
    manifest = json.loads((FIXTURE / "manifest.json").read_text())
    manifest["tls"]["resumption"] = True
    manifest["measurements"][0]["tls"] = {"handshakes": None, "resumed": 900}
    assert resumed_checks(manifest) == []


def test_the_tls_part_answers_first_with_nginx_https_share():
    analysed = load_analysis(FIXTURE)
    part = tls_part(analysed.run.manifest, analysed.analysis)
    text = answer(part)
    share = analysed.analysis.ratio(1, 100, "nginx-https").ratio
    assert text.startswith("Terminating TLS at nginx keeps ") and f"{share:.0%} at GOMAXPROCS=1" in text
    assert "throughput with keep-alive" in text
    assert {s for s, _ in part.negotiated} == {"go-https", "nginx-https", "nginx-https-unix"}
    per_request = tls_part({**analysed.run.manifest, "parameters": {**analysed.run.manifest["parameters"], "connection_per_request": True}},
                           analysed.analysis)
    assert "handshakes per second" in answer(per_request)


def test_a_run_without_tls_has_no_tls_part():
    analysed = load_analysis(Path(__file__).parent / "fixtures" / "runs" / "quick-hist")
    assert tls_part(analysed.run.manifest, analysed.analysis) is None
    assert negotiated_checks(analysed.run.manifest) == [] and resumed_checks(analysed.run.manifest) == []
