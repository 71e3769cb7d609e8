"""Tests of wrkreport.checks.tls (issue 22): the TLS setups' baselines, the negotiated-TLS and resumption checks, the page's TLS part.

Fixture: tests/fixtures/runs/tls-quick, a real --quick run of go-http and the three TLS setups.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from wrkreport.analysis.analyze import load_analysis
from wrkreport.checks.tls import answer, negotiated_checks, resumed_checks, share_text, tls_part
from wrkreport.core.setups import baseline_of
from wrkreport.report.fmt import fmt_share
from wrkreport.runs.record import Parameters, record_of

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
        "go-http",
        "go-http",
        "go-https",
        "go-https",
        "go-http",
    ]
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
    assert (
        "TLSv1.2" in message and "TLSv1.3" in message and "ECDHE-ECDSA-AES128-GCM-SHA256" in message and "TLS_AES_128_GCM_SHA256" in message
    )
    assert analysed.analysis.ratio(1, 100, "nginx-https").ratio is None  # left out of the comparison
    assert analysed.analysis.ratio(1, 100, "nginx-https-unix").ratio is not None


def test_a_failed_handshake_probe_fails_its_setup():
    manifest = {
        "tls": {"setups": {}},
        "passes": [
            {
                "gomaxprocs": 1,
                "cells": {
                    "go-https": {"tls": {"protocol": "TLSv1.3", "cipher": "A", "group": "X25519", "signature": "ECDSA", "error": None}},
                    "nginx-https": {
                        "tls": {
                            "protocol": None,
                            "cipher": None,
                            "group": None,
                            "signature": None,
                            "error": "no TLS handshake: connect:errno=111",
                        }
                    },
                },
            }
        ],
    }
    checks = {c.setup: c for c in negotiated_checks(record_of(manifest))}
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
    assert resumed_checks(record_of(json.loads((FIXTURE / "manifest.json").read_text())))[0].status == "pass"


def test_resumption_on_counts_are_not_a_failure():
    manifest = json.loads((FIXTURE / "manifest.json").read_text())
    manifest["tls"]["resumption"] = True
    manifest["measurements"][0]["tls"] = {"handshakes": None, "resumed": 900}
    assert resumed_checks(record_of(manifest)) == []


def test_the_tls_part_answers_first_with_nginx_https_share():
    analysed = load_analysis(FIXTURE)
    part = tls_part(analysed.run.record, analysed.analysis)
    text = answer(part)
    share = analysed.analysis.ratio(1, 100, "nginx-https").ratio
    assert text.startswith("Terminating TLS at nginx keeps ") and f"{share:.0%} at GOMAXPROCS=1" in text
    assert "throughput with keep-alive" in text
    assert {s for s, _ in part.negotiated} == {"go-https", "nginx-https", "nginx-https-unix"}
    per_request = tls_part(
        replace(analysed.run.record, parameters=Parameters.of({**dict(analysed.run.parameters.listed), "connection_per_request": True})),
        analysed.analysis,
    )
    assert "handshakes per second" in answer(per_request)


def test_a_run_without_tls_has_no_tls_part():
    analysed = load_analysis(Path(__file__).parent / "fixtures" / "runs" / "quick-hist")
    assert tls_part(analysed.run.record, analysed.analysis) is None
    assert negotiated_checks(analysed.run.record) == [] and resumed_checks(analysed.run.record) == []


BOTH = Path(__file__).parent / "fixtures" / "runs" / "tls-both-modes"


def test_one_run_answers_for_keep_alive_and_for_handshakes():
    analysed = load_analysis(BOTH)
    analysis = analysed.analysis
    part = tls_part(analysed.run.record, analysis)
    text = answer(part)
    assert text.startswith("Terminating TLS at nginx keeps ") and "Go crypto/tls's throughput with keep-alive" in text
    assert "of its handshakes per second (a new connection per request)" in text and "were not measured" not in text
    for n in (1, 2):
        keep, new = analysis.ratio(n, 100, "nginx-https"), analysis.ratio(n, 100, "nginx-https-new")
        assert (keep.baseline, new.baseline, analysis.ratio(n, 100, "go-https-new").baseline) == ("go-https", "go-https-new", "go-https")
        assert keep.has_interval and new.has_interval  # 2 blocks per GOMAXPROCS
        assert f"{share_text(keep)} at GOMAXPROCS={n}" in text
        assert text.index(share_text(new) + f" at GOMAXPROCS={n}") > text.index("throughput with keep-alive")
    rows = {(r.gomaxprocs, r.setup): r for r in part.rows}
    new_row, keep_row = rows[(1, "go-https-new")], rows[(1, "go-https")]
    from wrkreport.report.page_sections import cell_figure

    assert keep_row.requests_per_sec == pytest.approx(cell_figure(analysis.cell(1, 100, "go-https"), "requests_per_sec"))
    assert new_row.new_connection and not keep_row.new_connection and keep_row.handshakes_per_sec is None
    assert new_row.handshakes_per_sec == new_row.requests_per_sec < keep_row.requests_per_sec / 5
    assert new_row.handshakes > new_row.resumed > 0 and rows[(1, "nginx-https-new")].resumed > 0  # resumption on: wrk resumes


def test_new_connection_responses_agree_among_themselves():
    analysed = load_analysis(BOTH)
    same = [c for c in analysed.checks.checks if c.name == "same-response"]
    assert same and all(c.status == "pass" for c in same)
    new = [c for c in same if c.setup.endswith("-new")]
    sizes = {c.message.split("includes the ")[1].split(" B")[0] for c in new}
    keep = {c.message.split("includes the ")[1].split(" B")[0] for c in same if not c.setup.endswith("-new")}
    assert len(sizes) == len(keep) == 1 and sizes != keep  # Connection: close changes the header block


def test_compare_divides_each_tls_ratio_by_its_own_baseline_in_both_runs():
    from wrkreport.compare.two_runs import compare

    a = load_analysis(FIXTURE)  # one block: each run's ratio unit is the paired ratio itself
    result = compare(a, a)
    ratios = {(c.gomaxprocs, c.setup): c for c in result.changes if c.metric == "overhead_ratio"}
    for n in (1, 2):
        assert ratios[(n, "nginx-https")].baseline == "go-https" and ratios[(n, "nginx-https")].label == "ratio to go-https"
        assert ratios[(n, "nginx-https")].a == pytest.approx(a.analysis.ratio(n, 100, "nginx-https").ratio)
        assert ratios[(n, "go-https")].baseline == "go-http"
    both = compare(load_analysis(BOTH), load_analysis(BOTH))
    assert {c.setup: c.baseline for c in both.changes if c.metric == "overhead_ratio" and c.gomaxprocs == 1}[
        "nginx-https-unix-new"
    ] == "go-https-new"


def test_the_terminal_and_the_headline_name_go_crypto_tls_as_the_divisor():
    from wrkreport.report.answer import answer
    from wrkreport.report.terminal import answer_lines
    from wrkreport.report.words import headline

    analysed = load_analysis(BOTH)
    table = answer_lines(answer(analysed.analysis, [], [], analysed.run.parameters)).splitlines()
    row = next(i for i, x in enumerate(table) if x.startswith("nginx-https-new "))  # the share's line below its figure names its divisor
    assert table[row + 1].endswith("of go-https-new's") and "over go-https-new" in table[row + 1]
    row = next(i for i, x in enumerate(table) if x.startswith("go-https "))
    assert "go-http" not in table[row + 1]  # over go-http, as the plain setups: nothing named
    said = " ".join(headline(analysed.analysis))
    assert "no nginx setup was measured" not in said
    assert f"nginx-https keeps {fmt_share(analysed.analysis.ratio(1, 100, 'nginx-https'))} of go-https's throughput" in said
    assert "of go-https-new's handshakes per second" in said


def test_the_drivers_closing_summary_keeps_its_columns_with_the_long_tls_names():
    from wrkreport.bench.progress import summary_lines

    lines = summary_lines(BOTH, json.loads((BOTH / "manifest.json").read_text()))
    assert len(lines) == 14 and any(" nginx-https-unix-new " in line for line in lines)
    assert len({len(line.split(" req/s")[0]) - len(line.split()[2]) for line in lines}) == 1  # every rate starts in one column
