"""Evidence: the report's checks grouped by kind, every measurement with its raw text, every header capture, and the one safe link to a raw file.

Everything here is for the reader who wants to see what a figure stands on: each row
links to its file in the run directory, relative and percent-encoded (see `link`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from ..checks.measurements import CheckReport
from ..core.records import STATUSES, Check, worst
from ..runs.directory import Run, real_path, relative_to, relative_to_real, table_rows
from .fmt import fmt_ms, fmt_number, group_name, none_if_nan
from .words import CHECK_TITLES


@dataclass(frozen=True)
class CheckRow:
    """One check on one subject."""

    status: str
    subject: str
    message: str
    link: str | None


@dataclass(frozen=True)
class CheckGroup:
    """All results of one check kind."""

    name: str
    title: str
    status: str
    counts: str
    rows: tuple[CheckRow, ...]


@dataclass(frozen=True)
class MeasurementRow:
    """One wrk run, traceable to its raw file."""

    anchor: str
    group: str
    setup: str
    repeat: int
    requests_per_sec: str
    latency_p99_ms: str
    bytes_per_response: str
    status: str
    excluded: str | None
    file: str
    link: str
    command: str
    raw_text: str


@dataclass(frozen=True)
class HeaderRow:
    """One header capture, as captured."""

    group: str
    setup: str
    size: str
    status_line: str
    file: str
    link: str
    text: str


def link(target: Path, out_dir: Path) -> str:
    """Return the href of target from a page in out_dir: relative, percent-encoded, never readable as a scheme.

    A run directory is untrusted: a file named `javascript:alert(1)` must stay a file name.

    >>> link(Path("/r/run/javascript:alert(1)"), Path("/r/run")), link(Path("/r/raw/a b"), Path("/r/reports"))
    ('./javascript%3Aalert%281%29', '../raw/a%20b')
    """
    return href(relative_to(target, out_dir))


def file_links(run: Run, files: Iterable[str], out_dir: Path) -> dict[str, str]:
    """Return {file: its link} for files of the run, each as `link` gives it; out_dir resolved once, not once per file."""
    start = real_path(out_dir)
    return {file: href(relative_to_real(run.path / file, start)) for file in set(files)}


def href(relative: str) -> str:
    """Return a relative path as an href: percent-encoded, and starting with ./ or ../ so no browser reads a scheme in it."""
    relative = quote(relative)
    return relative if relative == "." or relative.startswith("../") else "./" + relative


def check_groups(report: CheckReport, run: Run, out_dir: Path) -> list[CheckGroup]:
    """Return the checks grouped by kind, worst first within each."""
    groups: dict[str, list[Check]] = {}
    for check in report.checks:
        groups.setdefault(check.name, []).append(check)
    hrefs = file_links(run, (c.file for c in report.checks if c.file), out_dir)  # one per file, not per check
    found = []
    for name, checks in groups.items():
        checks = sorted(checks, key=lambda c: -STATUSES.index(c.status))  # fail, warn, pass
        counts = ", ".join(
            f"{sum(c.status == s for c in checks)} {s}" for s in ("pass", "warn", "fail") if any(c.status == s for c in checks)
        )
        rows = tuple(CheckRow(c.status, subject(c), c.message, hrefs[c.file] if c.file else None) for c in checks)
        found.append(CheckGroup(name, CHECK_TITLES.get(name, name), worst(c.status for c in checks), counts, rows))
    return found


def subject(check: Check) -> str:
    """Return what a check is about: 'nginx-http GOMAXPROCS=2 run 3', or 'the run'."""
    if check.setup is None:
        return "the run" if check.file is None else check.file
    text = f"{check.setup} GOMAXPROCS={check.gomaxprocs}"
    return text + (f" run {check.repeat}" if check.repeat is not None else "")


def measurement_rows(run: Run, table: pd.DataFrame, out_dir: Path, several: bool) -> list[MeasurementRow]:
    """Return every measurement with its raw text and a link to its file."""
    links = file_links(run, table["file"], out_dir)
    return [
        MeasurementRow(
            anchor="m-" + row.file.replace(".", "-"),
            group=group_name(row.gomaxprocs, row.connections, several),
            setup=row.setup,
            repeat=int(row.repeat),
            requests_per_sec=fmt_number(row.requests_per_sec),
            latency_p99_ms=fmt_ms(none_if_nan(row.latency_p99_ms)),
            bytes_per_response=fmt_number(none_if_nan(row.bytes_per_response), 2),
            status=row.check_status,
            excluded=none_if_nan(row.excluded),
            file=row.file,
            link=links[row.file],
            command=row.command or "unknown (not in a manifest)",
            raw_text=run.texts.get(row.file, ""),
        )
        for row in table_rows(table)
    ]


def header_rows(run: Run, out_dir: Path) -> list[HeaderRow]:
    """Return every header capture, verbatim (CRLFs shown as they are)."""
    links = file_links(run, (h.file for h in run.headers), out_dir)
    return [
        HeaderRow(
            group=f"GOMAXPROCS={h.gomaxprocs}",
            setup=h.setup,
            size=f"{h.size_bytes} bytes",
            status_line=h.status_line,
            file=h.file,
            link=links[h.file],
            text=h.text,
        )
        for h in sorted(run.headers, key=lambda h: (h.gomaxprocs, h.setup))
    ]
