"""Tests of wrkreport.parsers.vegeta_bulk: the same record as the row reader on every real vegeta file kept, or no answer.

The bulk reader may only speed parse_vegeta up: on a file it reads, its record must be the
row reader's, field for field; on a file it cannot vouch for it must return None, so that
parse_vegeta_bulk raises the row reader's own error, naming the row. The real files are
every vegeta file under tests/fixtures (runs and single files); the broken ones are the
hand-made variants of tests/fixtures/vegeta/broken and one change at a time to a real file.
"""

from __future__ import annotations

import gzip

import pytest

from helpers import FIXTURES, VEGETA_HELD
from wrkreport.core.errors import ParseError
from wrkreport.parsers import vegeta_bulk
from wrkreport.parsers.vegeta import offered_rate_of, parse_vegeta

REAL = sorted(p for p in FIXTURES.rglob("*.vegeta.csv*") if "broken" not in p.parts)
BROKEN = sorted((FIXTURES / "vegeta" / "broken").glob("*.vegeta.*"))
# The real files the bulk reader leaves to the row reader: their errors are quoted ("Get ""http://..."": ...).
NOT_PLAIN = {"go-http-stalled.rate-200.vegeta.csv.gz", "refused.rate-100.vegeta.csv.gz"}


def outcome(path: str, data: bytes, bulk: bool):
    """Return the record parse_vegeta_bulk (bulk) or parse_vegeta makes, or ('error', its message) when it raises ParseError."""
    try:
        return (vegeta_bulk.parse_vegeta_bulk if bulk else parse_vegeta)(path, data)
    except ParseError as exc:
        return ("error", exc.message())


@pytest.mark.parametrize("path", REAL, ids=[str(p.relative_to(FIXTURES)) for p in REAL])
def test_a_real_file_read_in_bulk_has_the_row_readers_record(path):
    data = path.read_bytes()
    found = vegeta_bulk.bulk_result(str(path), data, offered_rate_of(path.name))
    if found is None:  # not plain (a quoted error text, ...): parse_vegeta reads it row by row
        assert path.name in NOT_PLAIN, path
    else:
        assert found == parse_vegeta(str(path), data), path  # every field: counts, every latency, the windows' medians


def test_every_real_file_but_the_few_with_quoted_errors_is_read_in_bulk():
    assert len(REAL) > 150 and len({p.name for p in REAL} & NOT_PLAIN) <= 0.1 * len(REAL)


@pytest.mark.parametrize("path", BROKEN, ids=[p.name for p in BROKEN])
def test_a_broken_file_gets_the_row_readers_error(path):
    data = path.read_bytes()
    assert vegeta_bulk.bulk_result(str(path), data, None) is None
    assert outcome(str(path), data, bulk=True) == outcome(str(path), data, bulk=False)


def held_text() -> str:
    return gzip.decompress(VEGETA_HELD.read_bytes()).decode()


def changed_line(change) -> bytes:
    """Return the held run's text with its third line changed by change(fields) (a list of its twelve cells)."""
    lines = held_text().split("\n")
    fields = lines[2].split(",")
    change(fields)
    lines[2] = ",".join(fields)
    return "\n".join(lines).encode()


def put(index: int, value: str):
    return lambda fields: fields.__setitem__(index, value)


# One change to one row of a real file: the bulk reader must refuse it (the row reader then names the row).
CHANGES = {
    "a plus sign": changed_line(put(8, "+" + held_text().split("\n")[2].split(",")[8])),
    "a space": changed_line(put(2, " 1000")),
    "a decimal point": changed_line(put(2, "1000.0")),
    "an exponent": changed_line(put(2, "1e3")),
    "a 20-digit count": changed_line(put(3, "1" + "0" * 19)),
    "past int64": changed_line(put(2, "9" * 19)),
    "status 50": changed_line(put(1, "50")),
    "status 600": changed_line(put(1, "600")),
    "no status, no error": changed_line(put(1, "0")),
    "padding inside the body": changed_line(put(6, "SGVs=G8gV29ybGQK")),
    "a body of the wrong size": changed_line(put(4, "13")),
    "a body off the alphabet": changed_line(put(6, "SGVsbG8gV29ybGQ!")),
    "another attack": changed_line(put(7, "other")),
    "a sequence number twice": changed_line(put(8, "0")),
    "a thirteenth column": changed_line(lambda fields: fields.append("x")),
    "an eleventh column only": changed_line(lambda fields: fields.pop()),
    "a quoted cell": changed_line(put(5, '"a, b"')),
    "a carriage return": changed_line(lambda fields: fields.__setitem__(11, fields[11] + "\r")),
    "a NUL byte": changed_line(put(10, "a\x00b")),
    "no newline at the end": held_text().rstrip("\n").encode(),
    "an empty line": (held_text() + "\n").encode(),
    "not UTF-8": held_text().encode().replace(b"GET", b"G\xe9T", 1),
    "two gzip members": gzip.compress(held_text().encode()) + gzip.compress(b""),
}


@pytest.mark.parametrize("case", list(CHANGES))
def test_a_changed_row_is_left_to_the_row_reader(case):
    data = CHANGES[case]
    name = "changed.rate-500.vegeta.csv"
    assert vegeta_bulk.bulk_result(name, data, None) is None
    assert outcome(name, data, bulk=True) == outcome(name, data, bulk=False)


def test_a_file_past_the_bulk_cap_is_read_row_by_row(monkeypatch):
    data = VEGETA_HELD.read_bytes()
    monkeypatch.setattr(vegeta_bulk, "BULK_MAX_BYTES", 1000)
    assert vegeta_bulk.bulk_result(str(VEGETA_HELD), data, None) is None
    assert vegeta_bulk.parse_vegeta_bulk(str(VEGETA_HELD), data) == parse_vegeta(str(VEGETA_HELD), data)


def test_uncompressed_text_is_read_in_bulk_too():
    text = gzip.decompress(VEGETA_HELD.read_bytes())
    found = vegeta_bulk.bulk_result("plain.rate-500.vegeta.csv", text, 500)
    assert found is not None and found == parse_vegeta("plain.rate-500.vegeta.csv", text)


def test_a_long_body_is_checked_in_one_pass():
    # --body-bytes 100: a 136-character base64 body, past SHORT_BODY: the pass over every body byte, same record
    body = "QUFB" * 34  # 102 bytes
    data = changed_line(lambda fields: (fields.__setitem__(6, body), fields.__setitem__(4, "102")))
    assert len(body) > vegeta_bulk.SHORT_BODY
    assert vegeta_bulk.bulk_result("long.rate-500.vegeta.csv", data, 500) == parse_vegeta("long.rate-500.vegeta.csv", data)
    bad = changed_line(lambda fields: (fields.__setitem__(6, "QU=B" + body[4:]), fields.__setitem__(4, "102")))
    assert vegeta_bulk.bulk_result("long.rate-500.vegeta.csv", bad, 500) is None
