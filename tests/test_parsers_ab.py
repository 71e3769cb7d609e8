"""Tests of wrkreport.parsers.ab: every real ab 2.3 capture to its expected numbers, the dispatch from
wrkreport.parsers, the exact message of every broken variant, and the CLI on ab files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import assert_parse_error
from wrkreport.cli import cli
from wrkreport.core.errors import ParseError
from wrkreport.core.records import FIELDS
from wrkreport.parsers import parse_file, parse_text

FIXTURES = Path(__file__).parent / "fixtures" / "ab"
CAPTURED = FIXTURES / "captured"
EXPECTS = sorted(CAPTURED.glob("*.expect.json"))
GO_K = CAPTURED / "ab-2.3__go-keepalive-t2.txt"


def output_of(expect: Path) -> Path:
    """Return the ab output a .expect.json describes."""
    return expect.with_name(expect.name.replace(".expect.json", ".txt"))


def test_every_capture_has_expected_values():
    assert {p for p in CAPTURED.glob("*.txt")} == {output_of(p) for p in EXPECTS}
    assert len(EXPECTS) == 12


@pytest.mark.parametrize("expect", EXPECTS, ids=lambda p: p.name)
def test_capture_parses_to_its_expected_values(expect):
    expected = json.loads(expect.read_text())
    path = output_of(expect)
    if "error" in expected:
        with pytest.raises(ParseError) as info:
            parse_file(path)
        assert (info.value.path, info.value.line, info.value.detail) == (str(path), expected["error"]["line"], expected["error"]["message"])
        return
    result = parse_file(path)
    record = result.to_dict()
    assert list(record) == list(FIELDS)
    for key, value in expected.items():
        actual = record[key] if key in record else getattr(result, key)
        assert actual == (pytest.approx(value) if isinstance(value, float) else value), key


def printed(text: str, label: str) -> str:
    """Return the value ab printed after `label:` (a test-side reading, independent of the parser)."""
    return re.search(rf"^{re.escape(label)}:\s+(\S+)", text, re.M)[1]


@pytest.mark.parametrize("expect", [e for e in EXPECTS if "error" not in json.loads(e.read_text())], ids=lambda p: p.name)
def test_record_agrees_with_the_printed_counters(expect):
    text = output_of(expect).read_text()
    result = parse_file(output_of(expect))
    complete, total = int(printed(text, "Complete requests")), int(printed(text, "Total transferred"))
    assert (result.requests, result.bytes_read, result.connections) == (complete, total, int(printed(text, "Concurrency Level")))
    assert result.bytes_per_response == total / complete
    assert result.duration_s == result.elapsed_s == float(printed(text, "Time taken for tests"))
    assert result.latency_max_ms == float(re.search(r"100%\s+(\d+) \(longest request\)", text)[1])
    assert result.transfer_bytes_per_sec == pytest.approx(float(printed(text, "Transfer rate")) * 1024)


def test_the_same_bytes_figures():
    """gohello and nodehello answer ab with the same bytes: 153 with keep-alive, 129 without."""
    per_response = {p.name: parse_file(p).bytes_per_response for p in CAPTURED.glob("*-n5000.txt")}
    assert per_response["ab-2.3__go-keepalive-n5000.txt"] == 153
    assert per_response["ab-2.3__go-nokeepalive-n5000.txt"] == per_response["ab-2.3__node-nokeepalive-n5000.txt"] == 129
    assert parse_file(CAPTURED / "ab-2.3__node-keepalive-t2.txt").bytes_per_response == 153


def test_failure_split_and_non_2xx():
    varlength = parse_file(CAPTURED / "ab-2.3__nginx-varlength-keepalive-n5000.txt")
    assert (
        varlength.failed_requests,
        varlength.errors_connect,
        varlength.errors_read,
        varlength.failed_length,
        varlength.failed_exceptions,
    ) == (4910, 0, 0, 4910, 0)
    bad_gateway = parse_file(CAPTURED / "ab-2.3__nginx-502-keepalive-t2.txt")
    assert bad_gateway.non_2xx_3xx == bad_gateway.requests == 19246
    assert bad_gateway.keepalive_requests == 19246 and bad_gateway.failed_requests == 0
    without_k = parse_file(CAPTURED / "ab-2.3__go-nokeepalive-t2.txt")
    assert without_k.keepalive_requests is None


def test_percentiles_keep_all_nine_rows():
    result = parse_file(GO_K)
    assert result.percentiles_ms == {"50": 4, "66": 5, "75": 6, "80": 7, "90": 8, "95": 10, "98": 13, "99": 14, "100": 115}
    assert (result.latency_p50_ms, result.latency_p75_ms, result.latency_p90_ms, result.latency_p99_ms) == (4, 6, 8, 14)
    assert result.latency_p999_ms is None and result.tool == "ab" and result.threads == 1 and result.version == "2.3"


# --- Variants of real text -----------------------------------------------------------------


def test_progress_lines_anywhere_and_crlf_are_ignored():
    text = GO_K.read_text()
    moved = text.replace("Finished 42550 requests\n", "").replace("Concurrency Level:", "Completed 10000 requests\nConcurrency Level:")
    assert parse_text(moved.replace("\n", "\r\n"), "x").to_dict() | {"source": None} == parse_file(GO_K).to_dict() | {"source": None}


def test_a_run_with_no_completed_request_has_no_rates():
    lines = GO_K.read_text().splitlines()
    head = "\n".join(lines[:16]) + "\nComplete requests: 0\nFailed requests: 0\nTotal transferred: 0 bytes\nHTML transferred: 0 bytes\n"
    result = parse_text(head, "zero")
    assert (result.requests, result.requests_per_sec, result.latency_p50_ms, result.bytes_per_response) == (0, None, None, None)


def test_ipv6_host_and_tls_lines_make_the_url():
    text = (
        GO_K.read_text()
        .replace("Server Hostname:        127.0.0.1", "Server Hostname:        ::1")
        .replace(
            "Server Port:            18180\n",
            "Server Port:            18180\nSSL/TLS Protocol:       TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256\n",
        )
    )
    assert parse_text(text, "x").url == "https://[::1]:18180/"


def test_wrk_text_still_goes_to_the_wrk_parser():
    wrk_fixtures = Path(__file__).parent / "fixtures" / "wrk" / "captured"
    for expect in wrk_fixtures.glob("*.expect.json"):
        if "tool" in json.loads(expect.read_text()):
            assert parse_file(output_of(expect)).tool == json.loads(expect.read_text())["tool"]


# --- Broken variants: each with its exact message -------------------------------------------

BROKEN = {
    "ab-S-table.txt": (28, "ab -S output (a 'min avg max' table) is not supported: run ab without -S"),
    "banner-only.txt": (5, "ab output ends before its report: no 'Server Software:' line (ab still running, or cut off?)"),
    "cut-after-complete-requests.txt": (17, "output ends here, expected 'Failed requests: <N>' (file cut off?)"),
    "decimal-comma.txt": (16, "expected 'Time taken for tests: <seconds> seconds', found 'Time taken for tests: 2,000 seconds'"),
    "failed-without-split.txt": (
        19,
        "expected '(Connect: <N>, Receive: <N>, Length: <N>, Exceptions: <N>)' after failed requests, found 'Keep-Alive requests: 42550'",
    ),
    "longest-request-unmarked.txt": (43, "expected the 100% ... (longest request) row, found '100% 115'"),
    "missing-66-percent.txt": (36, "expected the 66% row, found '75% 6'"),
    "missing-hostname.txt": (9, "expected 'Server Hostname: <host>', found 'Server Port: 18180'"),
    "port-zero.txt": (10, "Server Port 0 is not a TCP port (1-65535)"),
    "aborted-after-10-failures.txt": (7, "ab failed and printed no report: 'Test aborted after 10 failures'"),
    "shell-prompt-after-report.txt": (45, "expected nothing after ab's percentile table, found 'user@host:~$'"),
    "total-transferred-in-mb.txt": (20, "expected 'Total transferred: <N> bytes', found 'Total transferred: 6.2 MB'"),
}


def test_every_broken_fixture_has_a_case():
    assert {p.name for p in (FIXTURES / "broken").iterdir()} == set(BROKEN)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_fixture_message(name):
    assert_parse_error(FIXTURES / "broken" / name, *BROKEN[name])


# --- The 2012 study's one ab run, as its reference gives it ---------------------------------


def test_the_2012_ab_run_figures_fit_the_record():
    """The study's figures (go-vs-node-2012.md) put in ab's layout give its 110 B per response."""
    lines = GO_K.read_text().splitlines()
    layout = (
        "\n".join(lines[:15])
        + (
            "\nTime taken for tests: 0.593 seconds\nComplete requests: 5000\nFailed requests: 0\n"
            "Total transferred: 550000 bytes\nHTML transferred: 65000 bytes\n"
            "Requests per second: 8427.78 [#/sec] (mean)\nTime per request: 11.866 [ms] (mean)\n"
            "Time per request: 0.119 [ms] (mean, across all concurrent requests)\nTransfer rate: 905.33 [Kbytes/sec] received\n"
        )
        + "\n".join(lines[25:43])
    )
    result = parse_text(layout, "2012")
    assert (result.requests_per_sec, result.latency_avg_ms, result.bytes_per_response) == (8427.78, 11.866, 110)


# --- The CLI on ab files -------------------------------------------------------------------------


def test_cli_parse_json_and_failed_run():
    closed = CAPTURED / "ab-2.3__closed-port.txt"
    done = CliRunner().invoke(cli, ["parse", "--json", str(GO_K), str(closed)], standalone_mode=False, catch_exceptions=False)
    assert done.return_value == 1
    records = json.loads(done.stdout)
    assert [r["tool"] for r in records] == ["ab"] and records[0]["keepalive_requests"] == 42550
    assert f"wrkreport: {closed}:6: ab failed and printed no report" in done.stderr


def test_real_subprocess_exit_status_and_no_traceback():
    closed = CAPTURED / "ab-2.3__closed-port.txt"
    done = subprocess.run([sys.executable, "-m", "wrkreport", "parse", str(GO_K), str(closed)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr == f"wrkreport: {closed}:6: ab failed and printed no report: 'apr_socket_recv: Connection refused (111)'\n"
    assert done.stdout.startswith(f"{GO_K}: ab http://127.0.0.1:18180/, 2 s, 1 threads, 100 connections\n")
