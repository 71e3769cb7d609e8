"""Remote clients' totals: a measurement's wrk files (one per client) added up, for the progress line, the summary and the stopping rule."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

CLIENT_FILE = re.compile(r"(?P<stem>.+?)(?P<suffix>\.wrk\.txt|\.ab\.txt|\.hist\.json)\Z")


@dataclass(frozen=True)
class Totals:
    """A measurement's figures added across its clients (what the progress line and the summary need)."""

    requests_per_sec: float | None
    requests: int
    non_2xx_3xx: int
    socket_errors: int


def measurement_files(measurement: dict) -> list[str]:
    """Return a measurement's wrk files: each client's, or its one file."""
    clients = measurement.get("clients")
    if isinstance(clients, list) and clients:
        return [c["file"] for c in clients]
    return [measurement["file"]]


def totals(paths: list[Path]) -> Totals:
    """Return the clients' results added up; raise ParseError when any file is missing or unparsable (never a sum of fewer)."""
    from ...core.errors import ParseError
    from ...parsers import parse_file

    results = []
    for path in paths:
        if not path.is_file():
            raise ParseError(path, None, "missing")
        results.append(parse_file(path))
    rates = [r.requests_per_sec for r in results]
    return Totals(
        requests_per_sec=None if None in rates else sum(rates),
        requests=sum(r.requests for r in results),
        non_2xx_3xx=sum(r.non_2xx_3xx for r in results),
        socket_errors=sum(r.socket_errors for r in results),
    )
