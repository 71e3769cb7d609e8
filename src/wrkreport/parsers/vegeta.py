"""Parse vegeta: <stem>.rate-<R>.vegeta.csv.gz (vegeta's per-request results, `vegeta encode --to csv`, gzip'd) -> RateResult.

The file is untrusted input like the rest of a run directory. It is read whole (a regular
file under CAP_BYTES["vegeta"]), decompressed as a stream (at most MAX_TEXT_BYTES of
text: a small gzip can expand without end), decoded line by line (UTF-8) and read row by
row: a line with no quote, CR or NUL is split at its commas (what the csv module makes of
it, ~3x faster), and from the first line holding one on, the csv module reads the rest,
since vegeta quotes an error text holding a comma or a quote. Each row must have vegeta v12's
twelve columns (FIELDS, in vegeta's order: `vegeta encode -h`); every number is checked by
its column's rule; a row that breaks one raises ParseError naming the row's line and
column. Across rows: one attack, sequence numbers 0..n-1 each once (a file cut at a row
boundary, or two files pasted together, is caught here; vegeta writes rows in the order
requests finish, not in sequence order). Standard library only.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain
from operator import add as plus
from pathlib import Path

from ..core.display import cut, quote
from ..core.errors import ParseError, RefusedFile
from ..core.rate_result import RateResult, merge_results, rate_shares, second_percentiles, window_medians

SUFFIX = ".vegeta.csv.gz"
MAX_TEXT_BYTES = 1 << 30  # 1 GiB of CSV, about 4 million requests at ~260 bytes a row
MAX_INT64 = 2**63 - 1
MAX_UINT64 = 2**64 - 1
MAX_ERROR_MESSAGES = 5  # distinct error texts kept, the most frequent first
MAX_MESSAGE_CHARS = 160
MAX_KEPT_BODIES = 64  # distinct body texts whose size a file's reading keeps
GZIP_MAGIC = b"\x1f\x8b"
HEAD_BYTES = 4096
GOB_FIELDS = (b"Result", b"Timestamp", b"Latency", b"BytesIn")  # the type a gob stream of vegeta results describes first
# vegeta's timeout errors: `Client.Timeout exceeded while awaiting headers`, `context deadline exceeded`, `i/o timeout`.
TIMEOUT_ERROR = re.compile(r"Client\.Timeout exceeded|deadline exceeded|i/o timeout|timeout awaiting", re.A)
RATE_IN_NAME = re.compile(r"\.rate-(?P<rate>[1-9][0-9]{0,8})\.vegeta\.csv(?:\.gz)?$", re.A)
CLIENT_PART = re.compile(r"\.client-(?P<index>[1-9][0-9]{0,3})(?P<suffix>\.vegeta\.csv(?:\.gz)?)$", re.A)  # one of several clients' files
BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}", re.A)


@dataclass(frozen=True)
class Field:
    """One column of vegeta's CSV: its name and how its text becomes a value (a ValueError says why not)."""

    name: str
    convert: Callable[[str], object]


def digits(limit: int, width: int) -> Callable[[str], int]:
    """Return a converter of a plain decimal of at most width digits and at most limit (no sign, space or underscore).

    >>> digits(599, 3)("200")
    200
    >>> digits(599, 3)("+200")
    Traceback (most recent call last):
    ValueError: expected digits, found '+200'
    """

    def convert(text: str) -> int:
        if not (0 < len(text) <= width and text.isascii() and text.isdigit()):
            raise ValueError(f"expected digits, found {quote(text, 30)}")
        value = int(text)
        if value > limit:
            raise ValueError(f"{value} is above {limit}")
        return value

    return convert


def status_code(text: str) -> int:
    """Return an HTTP status: 0 (no answer) or 100-599.

    >>> status_code("0"), status_code("502")
    (0, 502)
    """
    value = digits(599, 3)(text)
    if 0 < value < 100:
        raise ValueError(f"{value} is not an HTTP status (0 or 100-599)")
    return value


def base64_size(text: str) -> int:
    """Return how many bytes a base64 text decodes to, without decoding it.

    >>> base64_size("SGVsbG8gV29ybGQK")
    12
    >>> base64_size("")
    0
    """
    if len(text) % 4 or not BASE64.fullmatch(text):
        raise ValueError(f"not base64: {quote(text, 30)}")
    return len(text) // 4 * 3 - (len(text) - len(text.rstrip("=")))


def text(value: str) -> str:
    """Return a text column as it is."""
    return value


# vegeta v12's CSV columns, in order (encode.go; lib/results.go NewCSVEncoder).
FIELDS = (
    Field("timestamp_ns", digits(MAX_INT64, 19)),  # the request's start, Unix ns
    Field("code", status_code),  # 0: no HTTP answer
    Field("latency_ns", digits(MAX_INT64, 19)),
    Field("bytes_out", digits(MAX_UINT64, 20)),
    Field("bytes_in", digits(MAX_UINT64, 20)),  # the response body's bytes (at most -max-body)
    Field("error", text),
    Field("body", base64_size),  # base64 of the body vegeta kept: its size must be bytes_in
    Field("attack", text),
    Field("seq", digits(MAX_UINT64, 20)),
    Field("method", text),
    Field("url", text),
    Field("headers", text),  # base64 of the response headers; not read
)
COLUMNS = len(FIELDS)
ERROR, ATTACK = 5, 7
CHECKED = tuple((index, field.convert) for index, field in enumerate(FIELDS) if field.convert is not text)  # 7 columns: ~2x faster


class CappedReader(io.RawIOBase):
    """A reader passing on at most cap bytes of another; past them it raises OverflowError."""

    def __init__(self, inner, cap: int) -> None:
        self.inner, self.cap, self.seen = inner, cap, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.inner.read(len(buffer))
        self.seen += len(data)
        if self.seen > self.cap:
            raise OverflowError(self.cap)
        buffer[: len(data)] = data
        return len(data)


# --- Reading a file -----------------------------------------------------------------------


def read_vegeta_file(path: str | Path, offered_rps: float | None = None) -> RateResult:
    """Read (a regular file under the vegeta cap) and parse one vegeta results file; every failure is a ParseError naming path."""
    from .rawfile import CAP_BYTES, read_bytes

    try:
        data = read_bytes(Path(path), CAP_BYTES["vegeta"])
    except RefusedFile as exc:
        raise ParseError(str(path), None, exc.reason) from None
    return parse_vegeta(path, data, offered_rps)


def client_part(name: str) -> tuple[str, int] | None:
    """Return (the measurement's own name, client index) of one client's file of several, None for any other name.

    >>> client_part("go-http.gomaxprocs-1.block-1.run-1.rate-2000.client-2.vegeta.csv.gz")
    ('go-http.gomaxprocs-1.block-1.run-1.rate-2000.vegeta.csv.gz', 2)
    """
    match = CLIENT_PART.search(name)
    return (name[: match.start()] + match["suffix"], int(match["index"])) if match else None


def read_client_files(paths: list[str | Path]) -> RateResult:
    """Read one measurement's client files (`<stem>.client-<i>.vegeta.csv.gz`, i = 1..n, each at its share of the rate in the stem) into one exact record."""
    names = [client_part(Path(path).name) for path in paths]
    if None in names or len({name for name, _ in names}) != 1:
        raise ParseError(str(paths[0]), None, "not the client files of one fixed-rate measurement (<stem>.client-<i>.vegeta.csv.gz)")
    order = sorted(zip(names, paths), key=lambda item: item[0][1])
    if [index for (_, index), _ in order] != list(range(1, len(order) + 1)):
        raise ParseError(
            str(order[0][1]),
            None,
            f"clients {', '.join(str(i) for (_, i), _ in order)} of a measurement: expected clients 1 to {len(order)}, every one",
        )
    rate = offered_rate_of(names[0][0])
    shares = rate_shares(rate, len(order)) if rate is not None and rate >= len(order) else [None] * len(order)
    parts = [read_vegeta_file(path, share) for (_, path), share in zip(order, shares)]
    return merge_results(parts, rate, str(order[0][1]))


def offered_rate_of(name: str) -> int | None:
    """Return the offered rate a file's name carries ('....rate-2000.vegeta.csv.gz' -> 2000), or None.

    >>> offered_rate_of("go-http.gomaxprocs-1.block-1.run-1.rate-2000.vegeta.csv.gz")
    2000
    """
    match = RATE_IN_NAME.search(name)
    return int(match["rate"]) if match else None


def parse_vegeta(source: str | Path, data: bytes, offered_rps: float | None = None, max_text_bytes: int = MAX_TEXT_BYTES) -> RateResult:
    """Return the RateResult of data (gzip'd or plain vegeta CSV); the offered rate from the caller, else from source's name."""
    source = str(source)
    if offered_rps is None:
        offered_rps = offered_rate_of(Path(source).name)
    if not data:
        raise ParseError(source, None, "empty file, expected vegeta's CSV results")
    raw = gzip.GzipFile(fileobj=io.BytesIO(data)) if data.startswith(GZIP_MAGIC) else io.BytesIO(data)
    buffered = io.BufferedReader(CappedReader(raw, max_text_bytes))
    rows = Rows(source)
    reader = CsvRows(text_lines(source, buffered))
    try:
        refuse_binary(source, buffered.peek(HEAD_BYTES)[:HEAD_BYTES])
        for row in reader:
            rows.add(reader.line_num, row)
    except csv.Error as exc:
        raise ParseError(source, reader.line_num or None, f"not vegeta's CSV: {exc}") from None
    except OverflowError:
        raise ParseError(
            source, reader.line_num or None, f"more than {max_text_bytes:,} bytes of text once decompressed; not read"
        ) from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ParseError(source, None, f"broken gzip data ({exc}): file cut off or damaged?") from None  # where, buffering hides
    try:
        return rows.result(offered_rps)
    except ValueError as exc:  # a record that rejects itself (core.rate_result.RateResult)
        raise ParseError(source, None, f"impossible values: {exc}") from None


def text_lines(source: str, lines) -> Iterator[str]:
    """Yield each line of a binary stream as text (its line break kept, as csv wants); a line that is not UTF-8 raises ParseError with its number."""
    for number, line in enumerate(lines, 1):
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(source, number, f"not UTF-8 text (byte 0x{line[exc.start:exc.start + 1].hex()})") from None


class CsvRows:
    """The rows csv.reader(lines, strict=True) gives, and its line_num: plain lines split here, the csv module from the first other one.

    A line with no quote, CR or NUL, shorter than the csv module's field limit, is one record
    whose fields are its text between commas (the excel dialect quotes with '"' alone and
    ends a line at CR or LF); such lines are split with str.split. The first line holding one of those characters starts a record at
    a line boundary, so a csv reader started there reads the rest exactly as one reading
    from the top would, its line numbers offset by the lines split before.
    """

    def __init__(self, lines: Iterator[str]) -> None:
        self.lines = lines
        self.split = 0  # lines split here
        self.reader = None  # the csv reader of the rest, once a line needs it
        self.longest = csv.field_size_limit()  # a longer line may hold a field the csv module refuses

    @property
    def line_num(self) -> int:
        """Return the number of lines read so far (csv.reader's line_num)."""
        return self.split + (self.reader.line_num if self.reader is not None else 0)

    def __iter__(self) -> Iterator[list[str]]:
        for line in self.lines:
            if '"' in line or "\r" in line or "\0" in line or len(line) > self.longest:
                self.reader = csv.reader(chain((line,), self.lines), strict=True)
                yield from self.reader
                return
            self.split += 1
            if line == "\n":
                yield []  # csv's empty row
            else:
                yield (line[:-1] if line.endswith("\n") else line).split(",")


def refuse_binary(source: str, head: bytes) -> None:
    """Raise ParseError when the text starts with binary data: vegeta's own gob results, or anything else."""
    if b"\x00" not in head:
        return
    if all(name in head for name in GOB_FIELDS):
        raise ParseError(source, None, "vegeta's binary (gob) results, not its CSV: keep `vegeta encode --to csv` of them")
    raise ParseError(source, None, "binary data (NUL bytes), not vegeta's CSV results")


class Rows:
    """The rows of one file as they are read: every row checked, the totals kept."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.latencies: list[int] = []
        self.starts: list[int] = []
        self.answered: list[tuple[int, int]] = []  # (status, body bytes) of every answered request
        self.errors: Counter = Counter()
        self.timeouts = 0
        self.seqs: set[int] = set()
        self.attack: str | None = None
        self.bodies: dict[str, int] = {}  # each body text's size (base64_size), for the first MAX_KEPT_BODIES texts

    def add(self, line: int, row: list[str]) -> None:
        """Check one row and add it to the totals."""
        if len(row) != COLUMNS:
            found = f"{len(row)} columns" if row else "an empty line"
            raise ParseError(self.source, line, f"expected vegeta's {COLUMNS} CSV columns (vegeta encode --to csv), found {found}")
        values = self.common(row)
        if values is None:
            try:
                values = [convert(row[index]) for index, convert in CHECKED]
            except ValueError:
                for index, field in enumerate(FIELDS):  # again, slowly, to name the column
                    self.value(line, index, field, row[index])
                raise  # unreachable: the same converters fail the same way
        start, code, latency, _, bytes_in, body, seq = values
        error, attack = row[ERROR], row[ATTACK]
        if body != bytes_in:
            raise ParseError(self.source, line, f"bytes_in is {bytes_in} but the body column holds {body} bytes")
        if code == 0 and not error:
            raise ParseError(
                self.source, line, "no HTTP status and no error: vegeta gives a reason for every request it could not complete"
            )
        if self.attack is None:
            self.attack = attack
        elif attack != self.attack:
            raise ParseError(self.source, line, f"attack {quote(attack, 40)} after {quote(self.attack, 40)}: one file holds one attack")
        if seq in self.seqs:
            raise ParseError(self.source, line, f"request {seq} appears twice")
        self.seqs.add(seq)
        self.latencies.append(latency)
        self.starts.append(start)
        if code:
            self.answered.append((code, bytes_in))
        else:
            self.errors[cut(error, MAX_MESSAGE_CHARS)] += 1
            self.timeouts += bool(TIMEOUT_ERROR.search(error))

    def common(self, row: list[str]) -> tuple | None:
        """Return CHECKED's values of a row whose columns all pass their rules in the common way, else None (CHECKED's converters decide).

        The six number columns are checked together (ASCII digits, each within its width, each
        within its ceiling); a body text already seen has its size kept (a server answers one
        body again and again).
        """
        start, code, latency, sent, received, _, body, _, seq = row[:9]
        numbers = start + code + latency + sent + received + seq
        if not (
            numbers.isdigit()
            and numbers.isascii()
            and 0 < len(start) <= 19
            and 0 < len(code) <= 3
            and 0 < len(latency) <= 19
            and 0 < len(sent) <= 20
            and 0 < len(received) <= 20
            and 0 < len(seq) <= 20
        ):
            return None
        size = self.bodies.get(body)
        if size is None:
            try:
                size = base64_size(body)
            except ValueError:
                return None
            if len(self.bodies) < MAX_KEPT_BODIES:
                self.bodies[body] = size
        values = int(start), int(code), int(latency), int(sent), int(received), size, int(seq)
        if (
            values[0] > MAX_INT64
            or values[2] > MAX_INT64
            or max(values[3], values[4], values[6]) > MAX_UINT64
            or not (values[1] == 0 or 100 <= values[1] <= 599)
        ):
            return None
        return values

    def value(self, line: int, index: int, field: Field, cell: str):
        """Return one cell converted by its column's rule, or raise ParseError naming the column."""
        try:
            return field.convert(cell)
        except ValueError as exc:
            raise ParseError(self.source, line, f"column {index + 1} ({field.name}): {exc}") from None

    def result(self, offered_rps: float | None) -> RateResult:
        """Return the record of every row read."""
        n = len(self.latencies)
        if n == 0:
            raise ParseError(self.source, None, "no requests: vegeta wrote no results")
        last = max(self.seqs)
        if last != n - 1:  # n distinct numbers from 0 are exactly 0..n-1 only when the largest is n - 1
            raise ParseError(
                self.source, None, f"{n} requests but numbered up to {last}: {last + 1 - n} of them are missing (file cut off?)"
            )
        first = min(self.starts)
        return RateResult(
            source=self.source,
            offered_rps=offered_rps,
            requests=n,
            span_s=(max(self.starts) - first) / 1e9,
            duration_s=(max(map(plus, self.starts, self.latencies)) - first) / 1e9,
            statuses=tuple(sorted(Counter(code for code, _ in self.answered).items())),
            errors=sum(self.errors.values()),
            timeouts=self.timeouts,
            error_messages=tuple(self.errors.most_common(MAX_ERROR_MESSAGES)),
            body_bytes=tuple(sorted(Counter(size for _, size in self.answered).items())),
            latencies_ns=tuple(sorted(self.latencies)),
            window_p50_ns=window_medians(self.starts, self.latencies),
            second_percentiles_ns=second_percentiles(self.starts, self.latencies),
        )
