"""Tests of wrkreport.parsers.vegeta: real vegeta 12.13.0 results (tests/fixtures/vegeta, README there) to figures computed apart
(vegeta report, sort and awk), the exact message of every broken variant, and hostile input raising nothing but ParseError."""

from __future__ import annotations

import csv
import doctest
import gzip
import json
import re
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from properties import examples
from wrkreport.core.errors import ParseError
from wrkreport.parsers import rawfile, vegeta
from wrkreport.parsers.vegeta import parse_vegeta, read_vegeta_file

FIXTURES = Path(__file__).parent / "fixtures" / "vegeta"
EXPECTS = sorted(FIXTURES.glob("*.expect.json"))
BROKEN = FIXTURES / "broken"
GOOD = FIXTURES / "go-http.gomaxprocs-1.block-1.run-1.rate-500.vegeta.csv.gz"


def results_of(expect: Path) -> Path:
    """Return the results file an .expect.json describes."""
    return expect.with_name(expect.name.replace(".expect.json", ".vegeta.csv.gz"))


def test_the_doctests_hold():
    assert doctest.testmod(vegeta).failed == 0


def test_there_are_real_fixtures():
    assert len(EXPECTS) >= 5 and all(results_of(e).is_file() for e in EXPECTS)


@pytest.mark.parametrize("expect", EXPECTS, ids=lambda p: p.name.removesuffix(".expect.json"))
def test_real_results_give_the_figures_computed_apart(expect):
    expected = json.loads(expect.read_text())
    result = read_vegeta_file(results_of(expect))
    got = result.to_dict()
    assert got["source"] == str(results_of(expect))
    for key, value in expected.items():
        if isinstance(value, float):
            assert got[key] == pytest.approx(value, rel=1e-9), key
        else:
            assert got[key] == value, key


def test_the_offered_rate_comes_from_the_caller_before_the_name():
    data = GOOD.read_bytes()
    assert parse_vegeta(GOOD, data).offered_rps == 500
    assert parse_vegeta(GOOD, data, offered_rps=400).offered_rps == 400
    assert parse_vegeta("results.csv.gz", data).offered_rps is None


def test_plain_csv_reads_as_the_gzip_does():
    plain = gzip.decompress(GOOD.read_bytes())
    assert parse_vegeta("x.rate-500.vegeta.csv", plain).to_dict() | {"source": None} == parse_vegeta(GOOD, GOOD.read_bytes()).to_dict() | {
        "source": None
    }


# --- Broken variants, each with its exact message ----------------------------------------------------

BROKEN_MESSAGES = {
    "truncated-gzip.rate-500.vegeta.csv.gz": ": broken gzip data (Compressed file ended before the end-of-stream marker was reached): file cut off or damaged?",
    "rows-missing.rate-500.vegeta.csv.gz": ": 990 requests but numbered up to 999: 10 of them are missing (file cut off?)",
    "bad-latency.rate-500.vegeta.csv": ":3: column 3 (latency_ns): expected digits, found '1.5e6'",
    "negative-latency.rate-500.vegeta.csv": ":2: column 3 (latency_ns): expected digits, found '-1234'",
    "huge-number.rate-500.vegeta.csv": ":1: column 1 (timestamp_ns): 9999999999999999999 is above 9223372036854775807",
    "bad-status.rate-500.vegeta.csv": ":4: column 2 (code): 42 is not an HTTP status (0 or 100-599)",
    "wrong-columns.rate-500.vegeta.csv": ":1: expected vegeta's 12 CSV columns (vegeta encode --to csv), found 7 columns",
    "json-lines.rate-500.vegeta.csv.gz": ":1: not vegeta's CSV: ',' expected after '\"'",
    "gob.rate-500.vegeta.bin": ": vegeta's binary (gob) results, not its CSV: keep `vegeta encode --to csv` of them",
    "two-attacks.rate-500.vegeta.csv": ":{second}: request 0 appears twice",
    "body-mismatch.rate-500.vegeta.csv": ":2: bytes_in is 13 but the body column holds 12 bytes",
    "no-status-no-error.rate-500.vegeta.csv": ":1: no HTTP status and no error: vegeta gives a reason for every request it could not complete",
    "empty.rate-500.vegeta.csv.gz": ": no requests: vegeta wrote no results",
    "latin1.rate-500.vegeta.csv": ":1: not UTF-8 text (byte 0xe9)",
    "unclosed-quote.rate-500.vegeta.csv": ":{lines}: not vegeta's CSV: unexpected end of data",
}


def test_every_broken_variant_is_known():
    assert sorted(p.name for p in BROKEN.iterdir() if p.name != "README.md") == sorted(BROKEN_MESSAGES)


@pytest.mark.parametrize("name", sorted(BROKEN_MESSAGES))
def test_a_broken_variant_raises_its_exact_message(name):
    path = BROKEN / name
    facts = json.loads((BROKEN / "README.md").read_text().split("```json", 1)[1].split("```", 1)[0])
    with pytest.raises(ParseError) as caught:
        read_vegeta_file(path)
    assert caught.value.message() == str(path) + BROKEN_MESSAGES[name].format(**facts)


def test_an_empty_file_and_a_file_over_the_cap_are_refused(tmp_path, monkeypatch):
    empty = tmp_path / "x.vegeta.csv.gz"
    empty.write_bytes(b"")
    with pytest.raises(ParseError, match=r"empty file, expected vegeta's CSV results$"):
        read_vegeta_file(empty)
    monkeypatch.setitem(rawfile.CAP_BYTES, "vegeta", 1000)
    with pytest.raises(ParseError, match=r"larger than the 0 KiB a file of this kind may have; not read$"):
        read_vegeta_file(GOOD)
    with pytest.raises(ParseError, match=r"a directory, not a regular file; not read$"):
        read_vegeta_file(tmp_path)


def test_a_small_gzip_that_expands_past_the_text_cap_is_refused():
    bomb = gzip.compress(b"0" * (3 << 20))  # 3 MiB of one character: about 3 KB compressed
    assert len(bomb) < 10_000
    with pytest.raises(ParseError, match=r"more than 1,048,576 bytes of text once decompressed; not read$"):
        parse_vegeta("bomb.vegeta.csv.gz", bomb, max_text_bytes=1 << 20)


# --- Hostile input: nothing but ParseError -------------------------------------------------------------

GOOD_TEXT = gzip.decompress(GOOD.read_bytes())


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_raise_nothing_but_parse_error(data):
    for blob in (data, gzip.compress(data)):
        try:
            parse_vegeta("fuzz.vegeta.csv.gz", blob)
        except ParseError:
            pass


@settings(max_examples=examples(200), deadline=None)
@given(
    st.integers(min_value=0, max_value=len(GOOD_TEXT)),
    st.integers(min_value=0, max_value=255),
    st.integers(min_value=0, max_value=len(GOOD_TEXT) - 1),
)
def test_every_truncation_and_byte_change_of_a_real_file_raises_nothing_but_parse_error(cut, byte, where):
    changed = GOOD_TEXT[:where] + bytes([byte]) + GOOD_TEXT[where + 1 :]
    packed = GOOD.read_bytes()
    for blob in (GOOD_TEXT[:cut], changed, packed[: cut * len(packed) // len(GOOD_TEXT)], zlib.compress(changed)):
        try:
            result = parse_vegeta("fuzz.rate-500.vegeta.csv.gz", blob)
        except ParseError:
            continue
        assert result.requests >= 1 and result.latencies_ns == tuple(sorted(result.latencies_ns))


TEN_SECONDS = FIXTURES / "ten-seconds.rate-500.vegeta.csv.gz"


def test_each_second_of_a_ten_second_attack_keeps_its_own_percentiles():
    """A capacity check is judged second by second: each whole second's p50/p90/p99/p99.9 of the requests started in it, computed
    here apart from the reader (csv rows, the second by integer division from the first start, wrk's rank floor(p x n / 100) + 1)."""
    rows = [line.split(",") for line in gzip.decompress(TEN_SECONDS.read_bytes()).decode().splitlines()]
    starts, latencies = [int(r[0]) for r in rows], [int(r[2]) for r in rows]
    first = min(starts)
    seconds: dict[int, list[int]] = {}
    for start, latency in zip(starts, latencies):
        seconds.setdefault(min(9, (start - first) // 10**9), []).append(latency)
    expected = []
    for k in sorted(seconds):
        group = sorted(seconds[k])
        expected.append(tuple(group[min(len(group), int(p * len(group) // 100) + 1) - 1] for p in (50, 90, 99, 99.9)))
    found = read_vegeta_file(TEN_SECONDS)
    assert len(found.second_percentiles_ns) == 10 and list(found.second_percentiles_ns) == expected
    assert sum(len(g) for g in seconds.values()) == 5000
    objective = sorted(e[2] for e in expected)[6] / 1e6  # the p99 of the 7th-best second: seven seconds within, three over
    assert found.seconds_within(99.0, objective) == (10, 7)
    assert found.seconds_within(99.0, 10_000.0) == (10, 10) and found.seconds_within(42.0, 1.0) is None


def test_a_one_second_attack_is_one_second_whose_percentiles_are_the_attacks():
    found = read_vegeta_file(GOOD)
    assert found.span_s < 2.5 and len(found.second_percentiles_ns) == round(found.span_s)
    whole = read_vegeta_file(FIXTURES / "refused.rate-100.vegeta.csv.gz")
    assert whole.second_percentiles_ns == (
        (whole.percentile_ns(50), whole.percentile_ns(90), whole.percentile_ns(99), whole.percentile_ns(99.9)),
    )


# --- Plain lines split, the rest read by the csv module: the csv module's rows either way ------------------------


def rows_and_end(reader) -> tuple[list, tuple]:
    """Return every (line_num, row) a reader gives and how it ended: ('end', line_num) or ('csv.Error', its text, line_num)."""
    rows = []
    try:
        for row in reader:
            rows.append((reader.line_num, row))
    except csv.Error as exc:
        return rows, ("csv.Error", str(exc), reader.line_num)
    return rows, ("end", reader.line_num)


def stream_lines(text: str) -> list[str]:
    """Return text's lines as a binary stream's iteration gives them once decoded: each ends at LF, the last maybe without one."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


@settings(max_examples=examples(400), deadline=None)
@given(st.text(alphabet='a1,"\r\n\x00 ', max_size=60))
def test_split_lines_give_the_csv_modules_rows_line_numbers_and_errors(text):
    lines = stream_lines(text)
    assert rows_and_end(vegeta.CsvRows(iter(lines))) == rows_and_end(csv.reader(iter(lines), strict=True))


@pytest.mark.parametrize(
    "text",
    [
        "a,b\n\nc,,d\n",  # an empty line: csv's empty row
        'a,b\n"q,1",2\nc,d\n',  # a quoted field: csv from there on, its line numbers offset
        'a\n"x\ny",z\nw\n',  # a quoted line break: one record over two lines
        "a,b\nc\rd,e\n",  # CR inside a line: csv's error at its line
        "a,b\nc\x00d\n",  # NUL: csv's error
        "a," + "x" * 131_073 + "\nb\n",  # a field past the csv module's limit: csv's error
        "a,b\nlast,line",  # no LF at the end
    ],
    ids=["empty-line", "quoted", "quoted-line-break", "cr", "nul", "field-limit", "no-final-lf"],
)
def test_each_kind_of_line_reads_as_the_csv_module_reads_it(text):
    lines = stream_lines(text)
    assert rows_and_end(vegeta.CsvRows(iter(lines))) == rows_and_end(csv.reader(iter(lines), strict=True))


NUMBER_TEXTS = st.one_of(
    st.integers(min_value=0, max_value=2**65).map(str),
    st.sampled_from(
        ["", "0", "00", "0000", "0100", "099", "100", "599", "600", "+1", " 1", "1_0", "١", str(2**63 - 1), str(2**63), str(2**64)]
    ),
    st.text(alphabet="0123456789", min_size=18, max_size=21),
)
BODY_TEXTS = st.sampled_from(["", "SGVsbG8gV29ybGQK", "SGVsbG8=", "SGVsbA==", "SGV=sbA=", "abc", "a===", "+/+/"])


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.tuples(NUMBER_TEXTS, NUMBER_TEXTS, NUMBER_TEXTS, NUMBER_TEXTS, NUMBER_TEXTS, BODY_TEXTS, NUMBER_TEXTS), max_size=6))
def test_the_common_check_gives_the_converters_values_or_leaves_the_row_to_them(cells):
    rows = vegeta.Rows("prop")
    for start, code, latency, sent, received, body, seq in cells:
        row = [start, code, latency, sent, received, "", body, "", seq, "GET", "http://x/", ""]
        try:
            expected = [convert(row[index]) for index, convert in vegeta.CHECKED]
        except ValueError:
            expected = None
        found = rows.common(row)
        assert found is None or list(found) == expected, row
