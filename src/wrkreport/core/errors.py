"""Errors: every failure the library reports, typed; the CLI turns them into messages."""

from __future__ import annotations


class WrkreportError(Exception):
    """Base of every error the library raises on purpose."""

    exit_code = 2

    def message(self) -> str:
        """Return the one-line message shown to the user (without the program name)."""
        return str(self)


class ParseError(WrkreportError):
    """A file is not wrk output, or a line where one is required is not understood."""

    exit_code = 1

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.detail = message
        super().__init__(self.message())

    def message(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.detail}"


class RefusedFile(WrkreportError):
    """A file was not read: not a regular file, outside the run directory, or over its size cap."""

    exit_code = 1

    def __init__(self, path: str, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(self.message())

    def message(self) -> str:
        return f"{self.path}: {self.reason}"


class NoUsableData(WrkreportError):
    """Nothing could be measured from the input: no run, or nothing parsed."""

    exit_code = 2


class NothingToCompare(WrkreportError):
    """Two runs have no cell (setup, GOMAXPROCS, connections) in common."""

    exit_code = 2


class OutputError(WrkreportError):
    """The report cannot be written where asked."""

    exit_code = 2


class UsageError(Exception):
    """A bad option or value: shown as `run_bench.sh: message` with exit status 2."""
