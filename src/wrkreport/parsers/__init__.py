"""Parsers: one load generator output (wrk, wrk2, ab, webbench, h2load) -> WrkResult, the format told by its first line.

One module per format (wrk, ab, webbench, h2load; histogram for wrkreport's .hist.json), each on
the shared line cursor (cursor.py); this module only reads the file and dispatches. The
ab, webbench and h2load parsers are imported only when a file needs them (about 20 ms a build).
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import ParseError, RefusedFile
from ..core.records import WrkResult
from . import wrk
from .cursor import decode, first_line_is, split_lines
from .rawfile import CAP_BYTES, read_bytes


def parse_file(path: str | Path, data: bytes | None = None) -> WrkResult:
    """Read (a regular file, at most 1 MiB) and parse one wrk output; every failure is a ParseError naming path."""
    source = str(path)
    if data is None:
        try:
            data = read_bytes(Path(path), CAP_BYTES["wrk"])
        except RefusedFile as exc:
            raise ParseError(source, None, exc.reason) from None
    return parse_text(decode(data, source), source)


def parse_text(text: str, source: str) -> WrkResult:
    """Parse the text of one wrk, wrk2, ab, webbench or h2load run into a WrkResult (source names it in errors; ab: parsers.ab, ...)."""
    if "\x00" in text:
        raise ParseError(source, None, "binary data (NUL bytes), not wrk output")
    lines = split_lines(text)
    if not any(line.text for line in lines):
        raise ParseError(source, None, "empty, expected wrk output")
    try:
        if not first_line_is(lines, wrk.RUNNING_LINE):  # ab, webbench and h2load: their own first line
            from . import ab, h2load, webbench  # imported only when needed (about 20 ms)

            if ab.is_ab(lines):
                return ab.parse_lines(lines, source)
            if webbench.is_webbench(lines):
                return webbench.parse_lines(lines, source)
            if h2load.is_h2load(lines):
                return h2load.parse_lines(lines, source)
        return wrk.parse_lines(lines, source)
    except ValueError as exc:  # a record that rejects itself (records.WrkResult): its value is impossible
        raise ParseError(source, None, f"impossible values: {exc}") from None
