"""Parse vegeta in bulk: the common results file checked and read column by column with numpy, not row by row.

A default run keeps ~180 vegeta files of ~3 million rows in all; read row by row with the
csv module (parsers/vegeta.py) they took ~90% of `wrkreport build`. Most files are plain:
no quoted error text, every line vegeta's twelve columns. For those, numpy finds every line's
commas, checks each column's bytes by its rule (digits within the column's width and ceiling;
the body base64 with its padding at the end), reads the numbers from their digits and applies
the rules parse_vegeta applies row by row to whole columns (status 0 or 100-599 with an
error when 0, bytes_in the size of the body, one attack, sequence numbers 0..n-1 once each).
The record is the one parse_vegeta makes of the same file (a test compares them on every
real file the project keeps, and on broken ones). Any file the bulk read cannot vouch for --
text that is not UTF-8, a quote, a CR or NUL, a line or a value off its column's rule, a rule
broken, a 20-digit count, more than BULK_MAX_BYTES of text -- gets None here, and
parse_vegeta reads it row by row, which names the first bad row and line (parse_vegeta_bulk
does both). Build side only: the driver's helper imports the standard library alone
(tests/test_bench_stdlib.py), so runs/rate_measurements.py loads this module when it reads a run.
"""

from __future__ import annotations

import zlib
from collections import Counter
from pathlib import Path

import numpy as np

from ..core.display import cut
from ..core.latency_histogram import rank_of
from ..core.rate_result import MIN_WINDOW_REQUESTS, WINDOWS, RateResult, ranked, whole_seconds
from .vegeta import (
    GZIP_MAGIC,
    MAX_ERROR_MESSAGES,
    MAX_INT64,
    MAX_MESSAGE_CHARS,
    MAX_TEXT_BYTES,
    TIMEOUT_ERROR,
    offered_rate_of,
    parse_vegeta,
)

BULK_MAX_BYTES = 256 << 20  # 256 MiB of text (about a million requests); a larger file is read as a stream, row by row
COMMAS = 11  # vegeta v12's twelve columns (vegeta.FIELDS)
START, CODE, LATENCY, BYTES_OUT, BYTES_IN, ERROR, BODY, ATTACK, SEQ = range(9)
# Numeric columns: their width in digits. The 20-digit ones (uint64) are read here up to 19
# digits (a 20-digit count is left to the row reader, which knows the ceiling); the 19-digit
# ones are checked against MAX_INT64 below.
WIDTHS = {START: 19, CODE: 3, LATENCY: 19, BYTES_OUT: 19, BYTES_IN: 19, SEQ: 19}
POWERS = np.uint64(10) ** np.arange(18, -1, -1, dtype=np.uint64)  # 10**18 .. 1
SHORT_BODY = 64  # base64 characters: a body up to 48 bytes is checked one offset at a time
BASE64_BYTES = np.zeros(256, dtype=bool)
BASE64_BYTES[np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", dtype=np.uint8)] = True


def parse_vegeta_bulk(
    source: str | Path, data: bytes, offered_rps: float | None = None, max_text_bytes: int = MAX_TEXT_BYTES
) -> RateResult:
    """Return parse_vegeta's record of data: read in bulk when the file is plain, else row by row by parse_vegeta (its errors)."""
    rate = offered_rps if offered_rps is not None else offered_rate_of(Path(str(source)).name)
    found = bulk_result(str(source), data, rate) if max_text_bytes >= MAX_TEXT_BYTES else None
    return found if found is not None else parse_vegeta(source, data, offered_rps, max_text_bytes)


def bulk_result(source: str, data: bytes, offered_rps: float | None) -> RateResult | None:
    """Return the RateResult of a plain vegeta file read in bulk, or None when parse_vegeta must read it row by row."""
    raw = plain_bytes(data)
    if raw is None:
        return None
    try:
        raw.decode("utf-8")  # the row reader refuses a file that is not UTF-8, naming its line
    except UnicodeDecodeError:
        return None
    text = np.frombuffer(raw, dtype=np.uint8)
    bounds = field_bounds(text)
    if bounds is None:
        return None
    begin, end = bounds
    values = {column: digits_of(text, begin[:, column], end[:, column], width) for column, width in WIDTHS.items()}
    if any(v is None for v in values.values()) or not rules_hold(text, raw, begin, end, values):
        return None
    return record(source, offered_rps, raw, begin, end, values)


def plain_bytes(data: bytes) -> bytes | None:
    """Return the file's text bytes (one gzip member decompressed, or the bytes as they are) within BULK_MAX_BYTES; else None."""
    if not data.startswith(GZIP_MAGIC):
        return data if len(data) <= BULK_MAX_BYTES else None
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        raw = inflate.decompress(data, BULK_MAX_BYTES + 1)
    except zlib.error:
        return None
    return None if len(raw) > BULK_MAX_BYTES or not inflate.eof or inflate.unused_data else raw  # too large, cut off, or several members


def field_bounds(text: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Return (begin, end): each line's twelve fields' byte offsets, (lines, 12) arrays; None unless every line has exactly 11 commas
    and ends with a newline, and the text holds no quote, CR or NUL (a quoted cell or a binary file is the row reader's)."""
    if text.size == 0 or text[-1] != 10 or (text == 34).any() or (text == 13).any() or (text == 0).any():
        return None
    newlines = np.flatnonzero(text == 10)
    commas = np.flatnonzero(text == 44)
    lines = newlines.size
    if commas.size != COMMAS * lines:
        return None
    commas = commas.reshape(lines, COMMAS)
    starts = np.concatenate(([0], newlines[:-1] + 1))
    if (commas[:, 0] < starts).any() or (commas[:, -1] > newlines).any():  # each line's 11 commas are its own
        return None
    begin = np.column_stack((starts, commas + 1))
    end = np.column_stack((commas, newlines))
    return begin, end


def digits_of(text: np.ndarray, begin: np.ndarray, end: np.ndarray, width: int) -> np.ndarray | None:
    """Return each field's number (uint64) when every field is 1 to width ASCII digits; else None.

    The fields' bytes are gathered right-aligned into one (fields, longest) matrix, so the
    last digit of each sits in the last column, and weighed by powers of ten (at most 19
    digits: below 10**19 < 2**64)."""
    length = end - begin
    if (length < 1).any() or (length > width).any():
        return None
    longest = int(length.max())
    at = end[:, None] - longest + np.arange(longest)
    inside = at >= begin[:, None]
    digit = np.where(inside, text[np.where(inside, at, 0)].astype(np.int16) - 48, 0)
    if ((digit < 0) | (digit > 9)).any():
        return None
    return (digit.astype(np.uint64) * POWERS[-longest:]).sum(axis=1, dtype=np.uint64)


def rules_hold(text: np.ndarray, raw: bytes, begin: np.ndarray, end: np.ndarray, values: dict[int, np.ndarray]) -> bool:
    """Return True when every row keeps parse_vegeta's rules (each column's, and across rows); False: read it row by row."""
    code, seq = values[CODE], values[SEQ]
    if values[START].max() > MAX_INT64 or values[LATENCY].max() > MAX_INT64 or ((code != 0) & ((code < 100) | (code > 599))).any():
        return False
    if ((code == 0) & (end[:, ERROR] == begin[:, ERROR])).any():  # no HTTP status and no error
        return False
    size = body_sizes(text, begin[:, BODY], end[:, BODY])
    if size is None or (size != values[BYTES_IN]).any():
        return False
    attack = end[:, ATTACK] - begin[:, ATTACK]
    if (attack != attack[0]).any() or (
        attack[0] and len({raw[b:e] for b, e in zip(begin[:, ATTACK].tolist(), end[:, ATTACK].tolist())}) > 1
    ):
        return False
    return bool((np.sort(seq) == np.arange(seq.size, dtype=np.uint64)).all())


def body_sizes(text: np.ndarray, begin: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """Return the bytes each base64 body decodes to (vegeta.base64_size, a column at a time); None when one is not base64:
    length a multiple of 4, the alphabet, '=' only as the last one or two characters."""
    length = end - begin
    if (length % 4).any():
        return None
    if length.max() > SHORT_BODY:  # long bodies (--body-bytes): a pass over their bytes, not one per offset
        return long_body_sizes(text, begin, end, length)
    padding = np.zeros(begin.size, dtype=np.int64)
    for offset in range(int(length.max())):
        inside = offset < length
        byte = text[np.where(inside, begin + offset, 0)]
        pad = inside & (byte == 61)
        if (inside & ~BASE64_BYTES[byte]).any() or (pad & (offset < length - 2)).any() or ((padding > 0) & inside & ~pad).any():
            return None
        padding += pad
    return (length // 4 * 3 - padding).astype(np.uint64)


def long_body_sizes(text: np.ndarray, begin: np.ndarray, end: np.ndarray, length: np.ndarray) -> np.ndarray | None:
    """Return body_sizes' answer by marking every body byte of the text at once (for bodies longer than SHORT_BODY)."""
    edges = np.bincount(begin, minlength=text.size + 1) - np.bincount(end, minlength=text.size + 1)  # +1 where a body starts, -1 past it
    body = np.cumsum(edges[:-1]) > 0
    if not BASE64_BYTES[text[body]].all():
        return None
    before = np.concatenate(([0], np.cumsum(body & (text == 61))))  # '=' within bodies before each offset
    padding = before[end] - before[begin]
    last = text[np.maximum(end - 1, 0)] == 61
    second = text[np.maximum(end - 2, 0)] == 61
    trailing = np.where(length >= 1, last, False).astype(np.int64) + np.where(length >= 2, last & second, False)
    if (padding != trailing).any():  # '=' only as the last one or two characters
        return None
    return (length // 4 * 3 - padding).astype(np.uint64)


def record(
    source: str, offered_rps: float | None, raw: bytes, begin: np.ndarray, end: np.ndarray, values: dict[int, np.ndarray]
) -> RateResult | None:
    """Return the RateResult of the checked columns, as the row reader makes it (Python ints; errors in row order)."""
    code, start, latency = values[CODE], values[START], values[LATENCY]
    answered = code != 0
    failed = [raw[b:e].decode("utf-8") for b, e in zip(begin[~answered, ERROR].tolist(), end[~answered, ERROR].tolist())]
    errors = Counter(cut(error, MAX_MESSAGE_CHARS) for error in failed)
    first, last = int(start.min()), int(start.max())
    try:
        return RateResult(
            source=source,
            offered_rps=offered_rps,
            requests=int(start.size),
            span_s=(last - first) / 1e9,
            duration_s=(int((start + latency).max()) - first) / 1e9,  # each at most 2**63 - 1: the sum fits uint64
            statuses=counts(code[answered]),
            errors=len(failed),
            timeouts=sum(bool(TIMEOUT_ERROR.search(error)) for error in failed),
            error_messages=tuple(errors.most_common(MAX_ERROR_MESSAGES)),
            body_bytes=counts(values[BYTES_IN][answered]),
            latencies_ns=tuple(np.sort(latency).tolist()),
            window_p50_ns=window_medians(start, latency),
            second_percentiles_ns=second_percentiles(start, latency),
        )
    except ValueError:  # a record that rejects itself: the row reader says why, in parse_vegeta's words
        return None


def window_medians(starts: np.ndarray, latencies: np.ndarray, windows: int = WINDOWS) -> tuple[int, ...]:
    """Return core.rate_result.window_medians of the columns, computed a column at a time (the same windows and ranks)."""
    count = min(windows, starts.size // MIN_WINDOW_REQUESTS)
    first, last = (int(starts.min()), int(starts.max())) if starts.size else (0, 0)
    if count < 2 or last <= first:
        return ()
    window = np.minimum(count - 1, (starts - np.uint64(first)) * np.uint64(count) // np.uint64(last - first))
    found = []
    for w in range(count):
        group = np.sort(latencies[window == w])
        found.append(int(group[rank_of(50, group.size) - 1]) if group.size else 0)
    return tuple(found)


def second_percentiles(starts: np.ndarray, latencies: np.ndarray) -> tuple[tuple[int, ...], ...]:
    """Return core.rate_result.second_percentiles of the columns, computed a column at a time (the same seconds and ranks)."""
    first = int(starts.min())
    count = whole_seconds((int(starts.max()) - first) / 1e9)
    second = np.minimum(count - 1, (starts - np.uint64(first)) // np.uint64(1_000_000_000))
    if count == 1:
        return (ranked(np.sort(latencies)),)
    return tuple(ranked(np.sort(group)) for k in range(count) if (group := latencies[second == k]).size)


def counts(values: np.ndarray) -> tuple[tuple[int, int], ...]:
    """Return ((value, how many rows have it), ...) in ascending value, as Counter items sorted: Python ints."""
    found, times = np.unique(values, return_counts=True)
    return tuple(zip(found.tolist(), times.tolist()))
