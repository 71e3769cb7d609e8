"""The failure box: failed checks grouped per setup and check, each with its likely cause from nginx's error log."""

from __future__ import annotations

from ..checks.measurements import CheckReport
from ..core.errors import RefusedFile
from ..core.records import Check
from ..parsers.rawfile import read_head
from ..runs.directory import Run
from .words import CHECK_TITLES

LOG_PEEK_BYTES = 65536  # the first errors say what went wrong; the log may be large
SOCKET_DENIED = "(13: Permission denied)"


def failure_lines(report: CheckReport, run: Run) -> list[str]:
    """Return the failed checks grouped per setup and check: who, at which GOMAXPROCS, how many, the first message, the likely cause."""
    groups: dict[tuple, list[Check]] = {}
    for check in report.failures:
        groups.setdefault((check.setup, check.name), []).append(check)
    lines, explained = [], set()
    for (setup, name), checks in groups.items():
        values = sorted({c.gomaxprocs for c in checks if c.gomaxprocs is not None})
        where = f"{setup} at GOMAXPROCS={', '.join(map(str, values))}" if setup else "the run"
        count = f"{len(checks)} measurement{'s' if len(checks) != 1 else ''}" if any(c.repeat is not None for c in checks) else ""
        line = f"{where}: check '{CHECK_TITLES.get(name, name)}' failed" + (f" in {count}" if count else "") + f". {checks[0].message}."
        cause = likely_cause(name, setup, checks, run) if setup not in explained else ""
        if cause:
            explained.add(setup)
        line += cause
        lines.append(line.replace("..", "."))
    return lines


def likely_cause(name: str, setup: str | None, checks: list[Check], run: Run) -> str:
    """Return a sentence naming the likely cause of a failure, from the check and nginx's error log ('' when none is known)."""
    errors = name == "non-2xx" or "502" in " ".join(c.message for c in checks)
    if not errors or setup is None or not setup.startswith("nginx-"):
        return ""
    cause = " nginx answers 502 Bad Gateway when it cannot reach its Go backend."
    for gomaxprocs in sorted({c.gomaxprocs for c in checks if c.gomaxprocs is not None}):
        log = run.path / "logs" / f"nginx-error.gomaxprocs-{gomaxprocs}.log"
        try:
            head = read_head(log, LOG_PEEK_BYTES, run.path).decode("utf-8", "replace")
        except RefusedFile:  # absent, or not a regular file inside the run (a FIFO would hang the build)
            continue
        if SOCKET_DENIED in head and setup.endswith("-unix"):
            return cause + (
                f" Its error log (logs/{log.name}) says connect() to the Unix socket failed with (13: Permission denied): "
                "nginx's workers cannot open Go's socket; see README, Pitfalls, 'Unix socket permissions'."
            )
    if setup.endswith("-unix"):
        return cause + " Over a Unix socket the usual cause is the socket's permissions: see README, Pitfalls, 'Unix socket permissions'."
    return cause + " The nginx error log in logs/ says why."
