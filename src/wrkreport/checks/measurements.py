"""Checks: is every measurement of a run comparable? Each verdict is a Check with a sentence.

The article's rule is "to be fair, all requests must be of the same size": the header
block of every setup is the same number of bytes (141), and wrk's bytes per response
agree across all measurements. A setup answering 502 is fast and wrong; these checks
exist to catch it. A measurement that fails a check is excluded from every ratio, with
the reason kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.records import Check, worst
from ..core.setups import BASELINE, NEW_CONNECTION_SETUPS
from ..runs.directory import Run, table_rows
from ..runs.record import Cell, RunRecord
from .app import app_header_check, app_response_checks, app_response_sizes, own_answer
from .duplicates import duplicate_checks
from .h2 import h2_header_check, h2_response_checks, is_h2
from .tls import negotiated_checks, resumed_checks

DEFAULT_HEADER_BYTES = 141
BYTES_UNIT_SCALE = 1024  # wrk's format_binary: B, KB, MB, GB, TB, base 1024
BYTES_UNIT_SWITCH = 0.85 * BYTES_UNIT_SCALE  # it moves to the next unit from 870.4 (format.md §4)
CHECK_NAMES = (
    "run-status",
    "readiness",
    "header-bytes",
    "tls",
    "tls-resumed",
    "parse",
    "clients",
    "duplicate",
    "zero-requests",
    "non-2xx",
    "same-response",
    "socket-errors",
    "wrk-exit",
    "cpu",
    "histogram",
    "manifest",
    "machines",
    "missing-file",
    "file-name",
    "refused",
)
CELL_LEVEL = ("readiness", "header-bytes", "tls")
# wrk keeps its error counters in uint32_t and prints them with %d (shared/wrk/format.md §4).
WRAPPED = "negative, so wrk's 32-bit counter passed 2,147,483,647 and printed wrapped; the true count is unknown"  # a failure excludes every repeat of the cell


@dataclass(frozen=True)
class CheckReport:
    """Every check's verdict on one run, and the measurements excluded because of them."""

    checks: tuple[Check, ...]
    excluded: dict[str, str]  # wrk file name -> the first failing check's message
    expected_header_bytes: int
    response_bytes: int | None  # the response size (bytes) the most measurements agree on
    unmeasured: dict[tuple[str, int], str]  # (setup, gomaxprocs) known to the run but not measured -> why

    @property
    def status(self) -> str:
        """Return the worst status of all checks."""
        return worst(check.status for check in self.checks)

    @property
    def failures(self) -> tuple[Check, ...]:
        """Return the failed checks."""
        return tuple(check for check in self.checks if check.status == "fail")


def check_run(run: Run, expect_header_bytes: int | None = None) -> CheckReport:
    """Run every check on a run; expect_header_bytes overrides the manifest's and the default 141."""
    expected = expected_header_bytes(run, expect_header_bytes)
    table = run.measurements
    response_range, same = same_response_checks(table, app_response_sizes(run.record))
    checks = [
        run_status_check(run),
        *readiness_checks(run),
        *header_checks(run, expected),
        *negotiated_checks(run.record),
        *resumed_checks(run.record),
        *run.problems,
        *duplicate_checks(run),
        *per_measurement_checks(table),
        *same,
    ]
    checks.sort(key=lambda c: CHECK_NAMES.index(c.name) if c.name in CHECK_NAMES else len(CHECK_NAMES))
    return CheckReport(tuple(checks), exclusions(table, checks), expected, response_range, unmeasured_cells(run, checks))


def expected_header_bytes(run: Run, override: int | None) -> int:
    """Return the header block size every setup must answer with."""
    if override is not None:
        return override
    value = run.parameters.expect_header_bytes
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else DEFAULT_HEADER_BYTES


# --- The run as a whole ---------------------------------------------------------------------


def run_status_check(run: Run) -> Check:
    """Warn when the run has no manifest or did not complete."""
    if run.record is None:
        return Check(
            "run-status",
            "warn",
            "no usable manifest.json: setup, GOMAXPROCS and repeat come from the file names; "
            "the environment and the wrk commands are unknown",
        )
    status = run.status
    if status == "complete":
        return Check("run-status", "pass", "the run completed")
    reason = run.record.reason
    why = f" ({reason})" if reason else ""
    return Check(
        "run-status",
        "warn",
        f"the run's status is {status!r}{why}: its finished measurements are used, but cells or repeats may be missing",
    )


def readiness_checks(run: Run) -> list[Check]:
    """Fail each cell the driver recorded as not ready or in error."""
    found = []
    for gomaxprocs, setup, cell in manifest_cells(run.record):
        error = cell.error
        where = f"{setup} at GOMAXPROCS={gomaxprocs}"
        if cell.ready is False:
            found.append(Check("readiness", "fail", f"{where} did not become ready" + (f": {error}" if error else ""), setup, gomaxprocs))
        elif error:
            found.append(Check("readiness", "fail", f"{where} was not measured: {error}", setup, gomaxprocs))
    return found


def unmeasured_cells(run: Run, checks: list[Check]) -> dict[tuple[str, int], str]:
    """Return the cells the run knows of (manifest, header captures, unreadable files) with no measurement, and why."""
    measured = set(zip(run.measurements["setup"], run.measurements["gomaxprocs"]))
    known = {(setup, gomaxprocs) for gomaxprocs, setup, _ in manifest_cells(run.record)}
    known |= {(capture.setup, capture.gomaxprocs) for capture in run.headers}
    known |= {(c.setup, c.gomaxprocs) for c in checks if c.name == "parse"}
    found = {}
    for cell in sorted(known - measured, key=lambda cell: (cell[1], cell[0])):
        reasons = [c for c in checks if (c.setup, c.gomaxprocs) == cell and c.status == "fail"]
        found[cell] = f"{reasons[0].name}: {reasons[0].message}" if reasons else "no wrk output for this cell"
    return found


def manifest_cells(record: RunRecord | None):
    """Yield (gomaxprocs, setup, cell) for every cell recorded in the manifest's passes."""
    for entry in record.passes if record is not None else ():
        for setup, cell in entry.cells:
            if isinstance(entry.gomaxprocs, int):
                yield entry.gomaxprocs, setup, cell


def header_checks(run: Run, expected: int) -> list[Check]:
    """Check each cell's `curl -sI` capture: status 200 and exactly the expected header bytes."""
    captures = {(c.setup, c.gomaxprocs): c for c in run.headers}
    cells = set(captures) | set(zip(run.measurements["setup"], run.measurements["gomaxprocs"]))
    found = []
    for setup, gomaxprocs in sorted(cells, key=lambda cell: (cell[1], cell[0])):
        capture = captures.get((setup, gomaxprocs))
        where = f"{setup} at GOMAXPROCS={gomaxprocs}"
        if capture is None:
            found.append(
                Check("header-bytes", "warn", f"{where}: no header capture, so its response size was not checked", setup, gomaxprocs)
            )
            continue
        if own_answer(setup) or is_h2(setup):  # --app, other front ends, HTTP/2: their own answer, checked by the driver (readiness)
            cell = next((c for n, s, c in manifest_cells(run.record) if (s, n) == (setup, gomaxprocs)), Cell())
            found.append((h2_header_check if is_h2(setup) else app_header_check)(capture, cell, where))
            continue
        status = "pass"
        if capture.status_code != 200:
            status, message = "fail", f"{where} answered {capture.status_line!r}, not 200 ({capture.size_bytes} header bytes)"
        elif capture.size_bytes != expected:
            status, message = "fail", f"{where}: header block is {capture.size_bytes} bytes, expected {expected}"
        else:
            message = f"{where}: {capture.status_line}, {capture.size_bytes} header bytes as expected"
        found.append(Check("header-bytes", status, message, setup, gomaxprocs, file=capture.file))
    return found


# --- Two files for one measurement -------------------------------------------------------------


# --- One measurement at a time -------------------------------------------------------------


def per_measurement_checks(table: pd.DataFrame) -> list[Check]:
    """Return the zero-requests, non-2xx, socket-errors and wrk-exit checks of every measurement."""
    found = []
    for row in table_rows(table):
        where = where_of(row)
        found.append(zero_requests_check(row, where))
        if row.requests > 0:
            found.append(non_2xx_check(row, where))
        found.append(socket_errors_check(row, where))
        if row.exit_code is not None and not pd.isna(row.exit_code) and int(row.exit_code) != 0:
            found.append(Check("wrk-exit", "warn", f"wrk exited with status {int(row.exit_code)}", **where))
    return found


def zero_requests_check(row, where: dict) -> Check:
    """Fail a measurement in which not one response completed."""
    if row.requests == 0:
        return Check("zero-requests", "fail", "0 requests completed: nothing was measured", **where)
    return Check("zero-requests", "pass", f"{row.requests:,} requests completed", **where)


def non_2xx_check(row, where: dict) -> Check:
    """Fail a measurement with any response of status 400 or more (wrk's 'Non-2xx or 3xx')."""
    if row.non_2xx_3xx < 0:
        return Check("non-2xx", "fail", f"non-2xx/3xx count {row.non_2xx_3xx:,}: {WRAPPED}", **where)
    if row.non_2xx_3xx > 0:
        share = row.non_2xx_3xx / row.requests
        return Check(
            "non-2xx",
            "fail",
            f"{row.non_2xx_3xx:,} of {row.requests:,} responses ({share:.1%}) had status >= 400: this setup answered errors, not the page",
            **where,
        )
    return Check("non-2xx", "pass", "every response was 2xx/3xx", **where)


def socket_errors_check(row, where: dict) -> Check:
    """Warn on any socket error, with its share of requests."""
    counts = {k: int(getattr(row, f"errors_{k}")) for k in ("connect", "read", "write", "timeout")}
    wrapped = ", ".join(f"{k} {v:,}" for k, v in counts.items() if v < 0)
    if wrapped:
        return Check("socket-errors", "fail", f"socket errors: {wrapped}: {WRAPPED}", **where)
    total = sum(counts.values())
    if total == 0:
        return Check("socket-errors", "pass", "no socket errors", **where)
    listed = ", ".join(f"{k} {v:,}" for k, v in counts.items() if v)
    share = f"{total / row.requests:.2%} of {row.requests:,} requests" if row.requests else "with 0 requests"
    return Check("socket-errors", "warn", f"socket errors: {listed} ({share})", **where)


# --- All measurements together: the same response everywhere ---------------------------------


def bytes_resolution(bytes_read: float) -> float:
    """Return half the last printed digit of wrk's byte total (2 decimals of its unit).

    >>> bytes_resolution(500.0)
    0.005
    >>> bytes_resolution(14.46 * 1024**2) == 0.005 * 1024**2
    True
    """
    unit, amount = 1, bytes_read
    while amount >= BYTES_UNIT_SWITCH and unit < BYTES_UNIT_SCALE**4:
        amount /= BYTES_UNIT_SCALE
        unit *= BYTES_UNIT_SCALE
    return 0.005 * unit


def response_size_bounds(bytes_read: float, requests: int, connections: int, errors_read: int) -> tuple[float, float] | None:
    """Return the response sizes S one wrk byte total allows, None when it allows any size.

    The printed total B is rounded to 2 decimals of its unit (+/- r), and it can differ
    from N*S by the partly read responses when the run stops: at most one per connection
    and one per broken connection, P = connections + read errors. wrk 4 counts bytes
    before it counts the response, so B >= N*S there, but the article's wrk 3.0.4
    figures fall below it (374.64 MB for 2,232,068 responses of 176 B), so the bound is
    taken both ways: |B - N*S| <= r + P*S, i.e. S in [(B - r) / (N + P), (B + r) / (N - P)].
    """
    r = bytes_resolution(bytes_read)
    partial = connections + errors_read
    if requests <= partial:
        return None
    return max(bytes_read - r, 0.0) / (requests + partial), (bytes_read + r) / (requests - partial)


def same_response_checks(table: pd.DataFrame, app_sizes: dict[tuple[str, int], int] | None = None) -> tuple[int | None, list[Check]]:
    """Find the response size (whole bytes) most measurements allow; fail those that cannot have it.

    A new connection per request (go-https-new ...) changes the response's headers
    (Connection: close), so those setups agree among themselves; the size returned is the
    keep-alive measurements' (else theirs). --app's setups are each held to the size of
    their own answer at the block's start (app_sizes: app.app_response_sizes); the h2
    setups' sizes are not compared (HPACK), their h2 is (h2.h2_response_checks).
    """
    h2 = table["setup"].map(is_h2).astype(bool) if "setup" in table else pd.Series(False, index=table.index)
    if h2.any():  # HTTP/2: HPACK makes the sizes differ; h2 negotiated instead
        agreed, others = same_response_checks(table[~h2], app_sizes) if not h2.all() else (None, [])
        return agreed, others + h2_response_checks(table[h2])
    app = table["setup"].map(own_answer).astype(bool) if "setup" in table else pd.Series(False, index=table.index)
    if app.any():
        bounds = lambda row: response_size_bounds(row.bytes_read, row.requests, row.connections, row.errors_read)  # noqa: E731
        found = app_response_checks(table[app], app_sizes or {}, bounds)
        agreed, others = same_response_checks(table[~app]) if not app.all() else (None, [])
        return agreed, others + found
    new = table["setup"].isin(NEW_CONNECTION_SETUPS) if "setup" in table else pd.Series(False, index=table.index)
    if not new.any() or new.all():
        return agreed_response(table)
    agreed, found = agreed_response(table[~new])
    agreed_new, found_new = agreed_response(table[new], " new-connection")
    return (agreed if agreed is not None else agreed_new), found + found_new


def agreed_response(table: pd.DataFrame, which: str = "") -> tuple[int | None, list[Check]]:
    """Return the response size most of these measurements allow and each one's same-response check (which: how 'the other ... measurements' are named)."""
    found = []
    rows, bounds = [], []
    for row in table_rows(table):
        if row.requests == 0:
            continue  # the zero-requests check fails it
        bound = response_size_bounds(row.bytes_read, row.requests, row.connections, row.errors_read)
        if bound is None:
            found.append(
                Check(
                    "same-response",
                    "warn",
                    f"{row.requests:,} requests over {row.connections:,} connections: too few to tell the response size",
                    **where_of(row),
                )
            )
            continue
        rows.append(row)
        bounds.append(bound)
    ceiling = min(((r.bytes_read + bytes_resolution(r.bytes_read)) / r.requests for r in rows), default=None)
    agreed = most_agreed(bounds, [r.setup == BASELINE for r in rows], ceiling)
    if agreed is None:
        return None, found
    for row, (lo, hi) in zip(rows, bounds):
        where = where_of(row)
        measured = f"{row.bytes_per_response:.2f} B per response; its byte total allows {lo:.2f}-{hi:.2f} B"
        if lo <= agreed <= hi:
            found.append(Check("same-response", "pass", f"{measured}, which includes the {agreed} B the others agree on", **where))
        else:
            found.append(
                Check(
                    "same-response",
                    "fail",
                    f"{measured}, not the {agreed} B the other{which} measurements agree on: its responses differ",
                    **where,
                )
            )
    return agreed, found


def where_of(row) -> dict:
    """Return the Check fields naming one measurement."""
    return dict(setup=row.setup, gomaxprocs=row.gomaxprocs, repeat=row.repeat, file=row.file)


def most_agreed(bounds: list[tuple[float, float]], baseline: list[bool], ceiling: float | None = None) -> int | None:
    """Return the whole byte count inside the most intervals (ties: the one most go-http intervals hold, then see below).

    A response is a whole number of bytes, which is what makes the check sharp: 153 B
    and 154 B are told apart once N is large. (The article's nginx-http at GOMAXPROCS=8,
    374.64 MB in 2,232,068 requests, allows only 175.995-175.9999 B by rounding alone, no
    whole number; the partial responses of its 5,000 connections bring 176 in.)

    >>> most_agreed([(152.9, 153.1), (153.0, 153.4), (299.0, 301.0)], [True, False, False])
    153
    >>> most_agreed([(153.0, 153.1), (300.0, 300.2)], [False, True])
    300
    >>> most_agreed([(10.2, 10.8)], [True]) is None
    True

    Short runs (1-second measurements, 100 connections) allow two or three whole sizes in
    every interval. wrk 4 counts a response's bytes before the response, so S <= B/N for
    every measurement: the tie goes to the largest size at or below `ceiling`, the smallest
    (B + r)/N (else to the smallest size, as wrk 3 may count fewer bytes).

    >>> most_agreed([(151.8, 154.4), (151.9, 154.5)], [True, False], ceiling=153.04)
    153
    >>> most_agreed([(151.8, 154.4), (151.9, 154.5)], [True, False])  # no ceiling: the smallest
    152
    """
    if not bounds:
        return None
    lows, highs = np.array(bounds, dtype=float).T
    is_baseline = np.array(baseline, dtype=bool)
    whole = [np.arange(math.ceil(lo), math.floor(hi) + 1) for lo, hi in zip(lows, highs)]
    candidates = np.unique(np.concatenate(whole)) if whole else np.array([])
    if candidates.size == 0:
        return None
    inside = (lows[None, :] <= candidates[:, None]) & (candidates[:, None] <= highs[None, :])
    counts, on_baseline = inside.sum(axis=1), (inside & is_baseline).sum(axis=1)
    below = candidates <= (ceiling if ceiling is not None else -math.inf)
    best = max(range(len(candidates)), key=lambda i: (counts[i], on_baseline[i], below[i], candidates[i] if below[i] else -candidates[i]))
    return int(candidates[best])


# --- What the checks exclude -------------------------------------------------------------------


def exclusions(table: pd.DataFrame, checks: list[Check]) -> dict[str, str]:
    """Return wrk file -> reason for every measurement a failed check excludes from the ratios."""
    excluded: dict[str, str] = {}
    for check in checks:
        if check.status != "fail":
            continue
        if check.name in CELL_LEVEL:
            cell = table[(table["setup"] == check.setup) & (table["gomaxprocs"] == check.gomaxprocs)]
            for name in cell["file"]:
                excluded.setdefault(name, f"{check.name}: {check.message}")
        elif check.file is not None and check.repeat is not None:
            excluded.setdefault(check.file, f"{check.name}: {check.message}")
    return excluded


def annotate(table: pd.DataFrame, report: CheckReport) -> pd.DataFrame:
    """Return the measurements with `check_status` (worst check touching each) and `excluded` (reason; NaN when kept)."""
    status = {}
    for check in report.checks:
        if check.name in CELL_LEVEL:
            mask = (table["setup"] == check.setup) & (table["gomaxprocs"] == check.gomaxprocs)
            names = table.loc[mask, "file"]
        elif check.repeat is not None and check.file is not None:
            names = [check.file]
        else:
            continue
        for name in names:
            status[name] = worst([status.get(name, "pass"), check.status])
    return table.assign(
        check_status=[status.get(name, "pass") for name in table["file"]], excluded=[report.excluded.get(name) for name in table["file"]]
    )
