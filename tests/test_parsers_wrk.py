"""Tests of wrkreport.parsers.wrk (read through wrkreport.parsers): every real fixture to its hand-written numbers, pasted-text variants,
wrk's truncated columns, and the exact message of every broken variant."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import assert_parse_error
from wrkreport.core.errors import ParseError
from wrkreport.core.records import FIELDS
from wrkreport.parsers import parse_file, parse_text

FIXTURES = Path(__file__).parent / "fixtures" / "wrk"
EXPECTS = sorted(FIXTURES.rglob("*.expect.json"))
SAMPLES = FIXTURES / "samples"
SHARED_SAMPLES = Path("/work/shared/wrk/samples")


def output_of(expect: Path) -> Path:
    """Return the wrk output a .expect.json describes."""
    return expect.with_name(expect.name.replace(".expect.json", ".txt"))


def assert_same(actual, expected, where: str) -> None:
    """Assert one expected value: floats approximately, dicts key by key, the rest exactly."""
    if isinstance(expected, dict):
        assert list(actual) == list(expected), where
        for key in expected:
            assert_same(actual[key], expected[key], f"{where}[{key}]")
    elif isinstance(expected, float) or (isinstance(expected, int) and isinstance(actual, float)):
        assert actual == pytest.approx(expected, rel=1e-9, abs=1e-12), where
    else:
        assert actual == expected and type(actual) is type(expected), where


def read_expect(path: Path) -> dict:
    """Return a fixture's expected values."""
    return json.loads(path.read_text())


def test_every_fixture_output_has_expected_values():
    outputs = {p for p in FIXTURES.rglob("*.txt") if "broken" not in p.parts}
    outputs.discard(SAMPLES / "SYNTHETIC__format-edge-rows.txt")  # rows, not a run: see the edge tests
    assert outputs == {output_of(p) for p in EXPECTS}
    assert len(EXPECTS) >= 45


@pytest.mark.parametrize("expect", EXPECTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_parses_to_its_expected_values(expect):
    expected = read_expect(expect)
    path = output_of(expect)
    if "error" in expected:
        with pytest.raises(ParseError) as info:
            parse_file(path)
        assert (info.value.path, info.value.line) == (str(path), expected["error"]["line"])
        assert expected["error"]["message"] in info.value.detail
        return
    result = parse_file(path)
    record = result.to_dict()
    assert list(record) == list(FIELDS)
    assert record["source"] == str(path)
    for key, value in expected.items():
        actual = record[key] if key in record else getattr(result, key)
        assert_same(actual, value, key)


@pytest.mark.skipif(not SHARED_SAMPLES.is_dir(), reason="shared reference samples not present on this machine")
def test_samples_are_byte_exact_copies():
    for original in SHARED_SAMPLES.iterdir():
        assert (SAMPLES / original.name).read_bytes() == original.read_bytes(), original.name


# --- Broken variants: each with its exact message ----------------------------------------

BROKEN = {
    "empty.txt": (None, "empty, expected wrk output"),
    "blank-lines-only.txt": (None, "empty, expected wrk output"),
    "binary.bin": (None, "binary data (NUL bytes), not wrk output"),
    "latin1.txt": (None, "not UTF-8 text (byte 0xe9 at offset 33), not wrk output"),
    "not-wrk.txt": (1, "expected 'Running <duration> test @ <url>', found no such line (first line 'hello')"),
    "wrk1-making.txt": (1, "wrk 1.x output ('Making N requests to URL') is not supported"),
    "missing-threads-line.txt": (2, "expected '<N> threads and <M> connections', found 'Thread Stats Avg Stdev Max +/- Stdev'"),
    "garbled-latency-row.txt": (4, "expected the Thread Stats 'Latency' row (Avg, Stdev, Max, +/- Stdev %), found 'Latency fast'"),
    "unknown-time-unit.txt": (4, "time '1.34xs' has unit 'xs' (expected us, ms, s, m or h)"),
    "latency-unit-cut-off.txt": (4, "Latency Avg '1000.00' was cut to fit wrk's 8-column field and lost its unit; its value is unknown"),
    "count-with-byte-unit.txt": (5, "count '20.68K' has unit 'K' (expected none, k, M, G or T)"),
    "unsuffixed-count-over-850.txt": (
        5,
        "Req/Sec Avg '1200.00' has no unit, but wrk adds k/M/G/T from 850 on: it was cut to fit its column",
    ),
    "unexpected-line.txt": (6, "expected '  Latency Distribution' or '<N> requests in <time>, <size> read', found 'something else'"),
    "missing-75-percentile.txt": (8, "expected the 75% latency line, found '90% 1.65ms'"),
    "cut-before-requests-per-sec.txt": (
        11,
        "output ends here, expected 'Socket errors: ...' or 'Non-2xx or 3xx responses: ...' or " "'Requests/sec: <number>' (file cut off?)",
    ),
    "transfer-without-B.txt": (13, "size '2.89M' has unit 'M' (expected B, KB, MB, GB or TB)"),
    "nan-bytes-read.txt": (24, "expected '<N> requests in <time>, <size> read' with numbers, found '0 requests in 6.06s, -nanB read'"),
    "wrk2-cut-in-spectrum.txt": (
        30,
        "output ends here, expected the spectrum footer '#[Mean = ..., StdDeviation = ...]' " "or another spectrum row (file cut off?)",
    ),
}


def test_every_broken_fixture_has_a_case():
    assert {p.name for p in (FIXTURES / "broken").iterdir()} == set(BROKEN)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_fixture_message(name):
    assert_parse_error(FIXTURES / "broken" / name, *BROKEN[name])


def test_missing_file_is_a_parse_error(tmp_path):
    path = tmp_path / "nope.txt"
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert info.value.message() == f"{path}: cannot read: No such file or directory"


def test_directory_is_a_parse_error(tmp_path):
    with pytest.raises(ParseError, match="a directory, not a regular file"):
        parse_file(tmp_path)


# --- Pasted and decorated text parses to the same numbers --------------------------------


def collapse(text: str) -> str:
    """Collapse runs of spaces and drop indentation, as a web page does."""
    return "\n".join(" ".join(line.split()) for line in text.splitlines()) + "\n"


VARIANTS = {
    "collapsed spaces, no indentation": collapse,
    "no-break spaces": lambda t: t.replace(" ", "\xa0"),
    "collapsed no-break spaces": lambda t: collapse(t).replace(" ", "\xa0"),
    "tabs": lambda t: re.sub(r" {2,}", "\t", t),
    "CRLF": lambda t: t.replace("\n", "\r\n"),
    "trailing spaces": lambda t: t.replace("\n", "   \n"),
    "no final newline": lambda t: t.rstrip("\n"),
    "shell prompt": lambda t: "$ wrk -t2 -c50 -d10s --latency http://127.0.0.1:18080/ok\n" + t,
    "root prompt": lambda t: "# wrk -t100 -c5000 -d30s http://127.0.0.1:8080/\n" + t,
    "Lua setup output and blank lines": lambda t: "thread 1 created\nthread 2 created\n\n" + t,
    "UTF-8 BOM": lambda t: "\ufeff" + t,
    "blank lines between": lambda t: t.replace("\n", "\n\n"),
}
VARIANT_SAMPLES = [
    "wrk-4.2.0__latency.txt",
    "wrk-4.2.0__55s-minutes-seconds-latency.txt",
    "wrk-3.1.2__connect-errors-non2xx.txt",
    "wrk2__u-latency-non2xx.txt",
    "wrk2__zero-requests-hang-latency.txt",
    "wrk-4.2.0__gigabytes.txt",
]


def comparable(result) -> dict:
    """Return everything a result holds except where it came from."""
    record = result.to_dict()
    record.pop("source")
    record.update(percentiles=result.percentiles_ms, uncorrected=result.uncorrected_percentiles_ms)
    return record


@pytest.mark.parametrize("sample", VARIANT_SAMPLES)
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_pasted_variant_parses_the_same(sample, variant):
    text = (SAMPLES / sample).read_text()
    original = parse_text(text, "original")
    changed = parse_text(VARIANTS[variant](text), "pasted")
    assert comparable(changed) == comparable(original)
    assert changed.source == "pasted"


def test_utf16_file_with_bom(tmp_path):
    path = tmp_path / "powershell.txt"
    path.write_bytes((SAMPLES / "wrk-4.2.0__basic.txt").read_text().encode("utf-16"))
    assert parse_file(path).requests == 508994


def test_version_line_and_script_output_are_kept_apart():
    result = parse_file(SAMPLES / "wrk-4.2.0__lua-done-trailer.txt")
    assert result.version is None
    assert result.script_output.splitlines() == ["-" * 30, "50%,246", "90%,354", "99%,12105", "99.999%,43611"]
    assert result.requests == 112226  # the trailer's numbers are not read as figures


def test_wrk2_uncorrected_block_is_never_mixed_into_recorded():
    result = parse_file(SAMPLES / "wrk2__u-latency-non2xx.txt")
    assert result.latency_p50_ms == pytest.approx(0.99) and result.uncorrected_percentiles_ms["50.000"] == 0.247
    assert result.latency_p999_ms == pytest.approx(3.11)
    assert result.latency_p99_ms == result.percentiles_ms["99.000"]


def test_old_wrk2_calibration_wording_and_macos_nan():
    text = (SAMPLES / "wrk2__latency.txt").read_text()
    text = text.replace(
        "  Thread calibration: mean lat.: 0.999ms, rate sampling interval: 10ms",
        "  Thread calibration: mean lat.: 999 usec, rate sampling interval: 10 msec",
    )
    assert parse_text(text, "old").tool == "wrk2"
    mac = (SAMPLES / "wrk-4.2.0__zero-requests-hang-latency.txt").read_text().replace("-nan%", " nan%")
    assert parse_text(mac, "mac").latency_within_stdev_pct is None


def test_text_after_a_report_that_looks_like_wrk_is_script_output():
    text = (SAMPLES / "wrk-4.2.0__basic.txt").read_text()
    result = parse_text(text + text, "twice")
    assert result.requests == 508994 and result.script_output == text


# --- wrk's fixed columns: truncated and touching cells (format.md §3) -------------------

BASE = (SAMPLES / "wrk-4.2.0__basic.txt").read_text()
LATENCY_ROW = "    Latency     0.99ms  376.45us  10.02ms   94.35%"
REQ_ROW = "    Req/Sec    25.57k     5.17k   35.11k    61.00%"
SYNTHETIC = (SAMPLES / "SYNTHETIC__format-edge-rows.txt").read_text().splitlines()


def with_row(old: str, new: str) -> str:
    """Return the base output with one Thread Stats row replaced."""
    assert old in BASE
    return BASE.replace(old, new)


@pytest.mark.parametrize("pasted", [False, True], ids=["columns", "collapsed"])
@pytest.mark.parametrize(
    ("row", "expected"),
    [
        # `1000.00m` in Avg is a cut `1000.00ms`; Max touches Stdev.
        (SYNTHETIC[1], (1000.0, 1000.0, 1000.0, 50.0)),
        (SYNTHETIC[2], (1.02 * 60_000, 0.1, 60 * 60_000, 99.99)),
        (SYNTHETIC[6], (0.0, 0.0, 0.0, None)),
        (SYNTHETIC[7], (None, None, 0.0, 0.0)),
    ],
)
def test_latency_edge_rows(row, expected, pasted):
    text = with_row(LATENCY_ROW, row)
    result = parse_text(collapse(text) if pasted else text, "edge")
    got = (result.latency_avg_ms, result.latency_stdev_ms, result.latency_max_ms, result.latency_within_stdev_pct)
    assert got == pytest.approx(expected)


@pytest.mark.parametrize("pasted", [False, True], ids=["columns", "collapsed"])
@pytest.mark.parametrize(
    ("row", "expected"),
    [(SYNTHETIC[4], (850.0, 12.3, 1_500_000.0)), (SYNTHETIC[5], (123_460_000.0, 1e12, 1000e12)), (SYNTHETIC[8], (None, None, 0.0))],
)
def test_req_sec_edge_rows(row, expected, pasted):
    text = with_row(REQ_ROW, row)
    result = parse_text(collapse(text) if pasted else text, "edge")
    assert (result.req_per_thread_avg, result.req_per_thread_stdev, result.req_per_thread_max) == pytest.approx(expected)


def test_the_synthetic_rows_are_the_ones_tested():
    assert SYNTHETIC[1] == "    Latency   1000.00m 1000.00ms1000.00ms   50.00%"
    assert SYNTHETIC[3] == "    Latency   1000.00 10000.00m 100000.0     0.00%"


def test_unit_cut_off_in_fixed_columns_is_an_error_not_a_guess():
    text = with_row(LATENCY_ROW, SYNTHETIC[3])
    with pytest.raises(ParseError, match=r"^.*Latency Avg '1000.00' was cut to fit wrk's 8-column field"):
        parse_text(text, "edge")


def test_minutes_cut_in_max_column_is_an_error():
    row = "    Latency     1.00m     1.00m 100000.0    50.00%"
    with pytest.raises(ParseError, match="Latency Max '100000.0' was cut to fit wrk's 9-column field"):
        parse_text(with_row(LATENCY_ROW, row), "edge")


def test_genuine_minutes_in_stdev_column_are_minutes():
    row = "    Latency     1.00m  1000.00m    1.00m    50.00%"
    result = parse_text(with_row(LATENCY_ROW, row), "edge")
    assert result.latency_stdev_ms == 1000 * 60_000.0


def test_edge_tail_lines():
    text = BASE.replace("  508994 requests in 10.01s, 37.86MB read", "  5 requests in 1000.00ms, 1.00KB read")
    text = text.replace("Transfer/sec:      3.78MB", SYNTHETIC[21])
    result = parse_text(text, "edge")
    assert (result.requests, result.elapsed_s, result.bytes_read) == (5, 1.0, 1024.0)
    assert result.requests_per_sec == 50872.57 and result.transfer_bytes_per_sec is None
    assert result.bytes_per_response == 1024.0 / 5


@pytest.mark.parametrize("line", [SYNTHETIC[19], SYNTHETIC[20]])
def test_requests_per_sec_that_is_not_a_number_is_an_error(line):
    # wrk divides completed requests by a positive elapsed time: it never prints inf or nan there.
    text = BASE.replace("Requests/sec:  50872.57", line)
    with pytest.raises(ParseError, match=r"Requests/sec is '-?(inf|nan)', not a number"):
        parse_text(text, "edge")


def test_percentile_lines_with_touching_and_trailing_space_units():
    lines = (SAMPLES / "wrk-4.2.0__latency.txt").read_text().splitlines()
    assert SYNTHETIC[9] == "     50% 1000.00ms" and lines[6] == "     50%  740.00us"
    lines[6:10] = SYNTHETIC[9:13]
    result = parse_text("\n".join(lines) + "\n", "edge")
    assert result.percentiles_ms == {"50": 1000.0, "75": 1000.0, "90": 1000.0, "99": 1000.0}


def test_wrk2_percentile_with_trailing_space_unit():
    text = (SAMPLES / "wrk2__latency.txt").read_text().replace(" 99.900%    3.40ms", SYNTHETIC[14])
    assert SYNTHETIC[14] == " 99.900%    1.50s "
    assert parse_text(text, "edge").latency_p999_ms == 1500.0


# --- Tool detection ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "tool"),
    [
        ("wrk2__short-no-calibration.txt", "wrk2"),  # only the `-nan` Req/Sec cells say wrk2
        ("wrk2__latency.txt", "wrk2"),
        ("wrk-4.2.0__zero-requests-hang-latency.txt", "wrk"),  # wrk prints 0.00 and -nan% here
        ("wrk-3.1.2__timeout-only.txt", "wrk"),
    ],
)
def test_tool_detection(sample, tool):
    assert parse_file(SAMPLES / sample).tool == tool


def test_error_names_the_source_given():
    with pytest.raises(ParseError) as info:
        parse_text("Running 5s test @ http://x/\n  garbage\n", "pasted.txt")
    assert info.value.message() == "pasted.txt:2: expected '<N> threads and <M> connections', found 'garbage'"
