"""Tests of wrkreport.parsers.webbench: the hand copies of webbench 1.5 output to their expected numbers,
the 2012 study's bytes per response, the exact message of every broken variant, every
truncation, and the CLI on webbench files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from properties import examples
from wrkreport.core.errors import ParseError
from wrkreport.core.records import FIELDS
from wrkreport.parsers import parse_file, parse_text

FIXTURES = Path(__file__).parent / "fixtures" / "webbench"
EXPECTS = sorted(FIXTURES.glob("*.expect.json"))
GO = FIXTURES / "webbench-1.5__2012-go-1cpu-run1.txt"
NODE = FIXTURES / "webbench-1.5__2012-node-1cpu-run1-stdout-only.txt"


def output_of(expect: Path) -> Path:
    """Return the webbench output a .expect.json describes."""
    return expect.with_name(expect.name.replace(".expect.json", ".txt"))


def test_every_fixture_has_expected_values():
    assert set(FIXTURES.glob("*.txt")) == {output_of(p) for p in EXPECTS} and len(EXPECTS) == 3


@pytest.mark.parametrize("expect", EXPECTS, ids=lambda p: p.name)
def test_fixture_parses_to_its_expected_values(expect):
    record = parse_file(output_of(expect)).to_dict()
    assert list(record) == list(FIELDS)
    for key, value in json.loads(expect.read_text()).items():
        assert record[key] == (pytest.approx(value) if isinstance(value, float) else value), key


def test_the_2012_figures_give_its_bytes_per_response():
    # The reference's own arithmetic: 849060 / (463124 / 60) and 634453 / (432582 / 60).
    go, node = parse_file(GO), parse_file(NODE)
    assert (go.tool, go.version, node.version) == ("webbench", "1.5", None)  # the Node copy has no banner (stderr)
    assert go.requests_per_sec == pytest.approx(463124 / 60) and node.requests_per_sec == pytest.approx(432582 / 60)
    assert round(go.bytes_per_response) == 110 and round(node.bytes_per_response) == 88
    assert (go.connections, go.duration_s, go.requests, go.failed_requests) == (200, 30.0, 231562, 0)
    assert go.latency_p99_ms is None and go.latency_avg_ms is None  # webbench measures no latency


def test_optional_parts_and_failures():
    result = parse_file(FIXTURES / "webbench-1.5__force-reload-failures.txt")
    assert (result.connections, result.duration_s, result.requests, result.failed_requests) == (1, 5.0, 90, 10)
    assert result.requests_per_sec == pytest.approx(20.0)  # (90 + 10) / 5 s: webbench counts failures in its Speed
    assert result.bytes_per_response == 0


BROKEN = {
    "cut-before-speed.txt": (5, "output ends here, expected 'Speed=<N> pages/min, <N> bytes/sec.' (file cut off?)"),
    "cut-before-requests.txt": (7, "output ends here, expected 'Requests: <N> susceed, <N> failed.' (file cut off?)"),
    "requests-spelled-succeed.txt": (8, "expected 'Requests: <N> susceed, <N> failed.', found 'Requests: 231562 succeed, 0 failed.'"),
    "running-0-sec.txt": (5, "running 0 sec: webbench measured nothing (its -t must be at least 1)"),
    "negative-bytes-per-sec.txt": (7, "negative bytes/sec -1294967296: webbench's int overflowed (too many bytes for its counter)"),
    "shell-prompt-after-result.txt": (9, "unexpected line after webbench's result: '$'"),
    "speed-with-comma.txt": (7, "expected 'Speed=<N> pages/min, <N> bytes/sec.', found 'Speed=463,124 pages/min, 849060 bytes/sec.'"),
}


def test_every_broken_fixture_has_a_case():
    assert {p.name for p in (FIXTURES / "broken").glob("*.txt")} == set(BROKEN)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_fixture_message(name):
    path = FIXTURES / "broken" / name
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert (info.value.line, info.value.detail) == BROKEN[name]


def test_a_wrk_or_ab_text_is_not_taken_for_webbench():
    with pytest.raises(ParseError) as info:
        parse_text("Benchmarking 127.0.0.1 (be patient)\n", "x")
    assert "webbench" not in info.value.detail


@pytest.mark.parametrize("path", [GO, NODE], ids=lambda p: p.name)
def test_every_truncation_raises_only_parse_error(path):
    text = path.read_text()
    for end in range(len(text)):
        try:
            parse_text(text[:end], "cut")
        except ParseError:
            pass


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet="Benchmarking: GET http1.0 clients,running sec.Speed=pages/min bytes/sec Requests:susceed failed\n-", max_size=200))
def test_webbench_like_text_raises_only_parse_error(tail):
    try:
        parse_text("Benchmarking: GET http://127.0.0.1:8080/\n" + tail, "fuzz")
    except ParseError:
        pass


def test_cli_subprocess_exit_status_and_no_traceback(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "wrkreport", "parse", "--json", str(GO)], capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and json.loads(ok.stdout)[0]["tool"] == "webbench"
    bad = FIXTURES / "broken" / "cut-before-speed.txt"
    failed = subprocess.run([sys.executable, "-m", "wrkreport", "parse", str(bad)], capture_output=True, text=True, check=False)
    assert failed.returncode == 2 and "Traceback" not in failed.stderr  # its one file could not be read: bad input
    assert failed.stderr.strip() == f"wrkreport: {bad}:5: output ends here, expected 'Speed=<N> pages/min, <N> bytes/sec.' (file cut off?)"
