"""Parsers' cursor: a load generator's text -> numbered lines, walked one required line at a time (every parser shares it)."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from ..core.display import quote
from ..core.errors import ParseError

INVISIBLE = dict.fromkeys(map(ord, "\ufeff\u200b\u200c\u200d\u2060"))  # BOM, zero-width spaces


@dataclass(frozen=True)
class Line:
    """One line of the input: its 1-based number, raw text and whitespace-collapsed text."""

    number: int
    raw: str
    text: str


class Cursor:
    """Walk the lines after `Running`, skipping blank ones; every miss is a ParseError."""

    def __init__(self, source: str, lines: list[Line], start: int) -> None:
        self.source = source
        self.lines = lines
        self.pos = start

    def peek(self) -> Line | None:
        """Return the next non-blank line without consuming it (None at the end)."""
        while self.pos < len(self.lines) and not self.lines[self.pos].text:
            self.pos += 1
        return self.lines[self.pos] if self.pos < len(self.lines) else None

    def take_if(self, pattern: re.Pattern) -> tuple[Line, re.Match] | None:
        """Consume and return the next line and its match if it matches pattern."""
        line = self.peek()
        match = pattern.fullmatch(line.text) if line else None
        if match is None:
            return None
        self.pos += 1
        return line, match

    def take(self, expected: str) -> Line:
        """Consume the next line; at the end of the text raise a ParseError naming expected."""
        line = self.peek()
        if line is None:
            last = self.lines[-1].number if self.lines else None
            raise ParseError(self.source, last, f"output ends here, expected {expected} (file cut off?)")
        self.pos += 1
        return line

    def require(self, pattern: re.Pattern, expected: str) -> tuple[Line, re.Match]:
        """Consume the next line, which must match pattern."""
        line = self.take(expected)
        match = pattern.fullmatch(line.text)
        if match is None:
            raise self.error(line, f"expected {expected}, found {quote(line.text)}")
        return line, match

    def error(self, line: Line, message: str) -> ParseError:
        """Return a ParseError for line."""
        return ParseError(self.source, line.number, message)

    def rest(self) -> str:
        """Return every remaining line, raw, as text (the Lua done() output)."""
        remaining = [line.raw for line in self.lines[self.pos :]]
        return "".join(raw + "\n" for raw in remaining)


def decode(data: bytes, source: str) -> str:
    """Return the file's text: UTF-8 (BOM allowed) or UTF-16 with a BOM."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    elif b"\x00" in data:
        raise ParseError(source, None, "binary data (NUL bytes), not wrk output")
    else:
        encoding = "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        name = "UTF-16" if encoding == "utf-16" else "UTF-8"
        bad = data[exc.start : exc.start + 1].hex()
        raise ParseError(source, None, f"not {name} text (byte 0x{bad} at offset {exc.start}), not wrk output") from None


def split_lines(text: str) -> list[Line]:
    """Split text into numbered lines (LF or CRLF endings; a final line break ends the last line)."""
    raws = text.split("\n")
    if raws and raws[-1] == "":
        raws.pop()
    return [Line(n, raw.rstrip("\r"), loose(raw)) for n, raw in enumerate(raws, start=1)]


def first_line_is(lines: list[Line], *patterns: re.Pattern) -> bool:
    """Return True when the first non-blank line matches one of patterns: how each format is told by its first line."""
    first = next((line for line in lines if line.text), None)
    return first is not None and any(pattern.fullmatch(first.text) for pattern in patterns)


def loose(raw: str) -> str:
    """Return a line with invisible characters dropped and whitespace runs (tabs, NBSP) as one space."""
    return " ".join(raw.translate(INVISIBLE).split())
