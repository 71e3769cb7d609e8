"""Checks of --app's setups and of the front ends in nginx's place: their own answer, not the hello world's 141-byte header block.

The driver compares each app setup's status and body with the app alone's at every
block's start (a difference is the cell's error, failed by the readiness check); here each
capture's status must be 2xx, and its size and what nginx changed in the header block
(the cell's headers_changed) are said. HAProxy, Caddy and Apache httpd answer go-http's
status and body with a header block of their own (case, order, Server, Connection), so
their setups are held likewise to their own size, what they changed from go-http's said.
"""

from __future__ import annotations

from ..core.records import Check
from ..core.setups import SETUP_BY_ID, is_app
from ..runs.directory import table_rows
from ..runs.record import Cell, RunRecord


def own_answer(setup: str) -> bool:
    """Return True for a setup answering with its own header block (an --app setup, HAProxy's, Caddy's or Apache httpd's): held to
    the size of its own answer at a block's start, what it changed from its reference's said."""
    known = SETUP_BY_ID.get(setup)
    return known is not None and known.own_answer


def app_header_check(capture, cell: Cell, where: str) -> Check:
    """Return the header-bytes check of an app's or another front end's setup's capture (runs.sidecars.HeaderCapture; cell: its manifest
    cell): 2xx for an app's (200 for a front end's), its size and what the front end changed said."""
    changed = cell.headers_changed
    front = not is_app(capture.setup)
    reference = "go-http's" if front else "the app's"
    said = "" if changed is None else f"; changed from {reference}: {', '.join(changed) or 'nothing'}"
    if front and capture.status_code != 200:
        return Check(
            "header-bytes",
            "fail",
            f"{where} answered {capture.status_line!r}, not 200",
            capture.setup,
            capture.gomaxprocs,
            file=capture.file,
        )
    body = f", {cell.body_bytes:,}-byte body" if isinstance(cell.body_bytes, int) else ""
    if capture.status_code is None or not 200 <= capture.status_code < 300:
        return Check(
            "header-bytes",
            "fail",
            f"{where} answered {capture.status_line!r}, not 2xx",
            capture.setup,
            capture.gomaxprocs,
            file=capture.file,
        )
    own = "its own header block, held to its own size" if front else "your app's own answer: no 141-byte rule"
    message = f"{where}: {capture.status_line}, {capture.size_bytes} header bytes{body} ({own}){said}"
    return Check("header-bytes", "pass", message, capture.setup, capture.gomaxprocs, file=capture.file)


def app_conditions(app: dict) -> str:
    """Return the conditions' words for an --app run's handler: what was requested, and that only Go reads GOMAXPROCS."""
    path = app.get("path") or "/"
    return (
        f"your app's own handler ({path}); GOMAXPROCS was in its environment, but only Go reads it: another server chooses its "
        "own threads or workers, and --pin-server bounds the CPUs it may use"
    )


def app_response_sizes(record: RunRecord | None) -> dict[tuple[str, int], int]:
    """Return (setup, GOMAXPROCS) -> the bytes of an app's or another front end's setup's whole answer (header block + body) as captured at its first block's start."""
    sizes: dict[tuple[str, int], int] = {}
    for entry in record.passes if record is not None else ():
        if not isinstance(entry.gomaxprocs, int):
            continue
        for setup, cell in entry.cells:
            if not own_answer(setup):
                continue
            if isinstance(cell.response_bytes, int):  # a front end's, as sent (a chunked body with its framing)
                sizes.setdefault((setup, entry.gomaxprocs), cell.response_bytes)
            elif isinstance(cell.header_bytes, int) and isinstance(cell.body_bytes, int):
                sizes.setdefault((setup, entry.gomaxprocs), cell.header_bytes + cell.body_bytes)
    return sizes


def app_response_checks(table, sizes: dict[tuple[str, int], int], bounds) -> list[Check]:
    """Return the same-response check of each app measurement (table rows; bounds: checks.response_size_bounds of a row):
    its byte total must allow the size of its setup's answer at the block's start (nginx changes the header block, so
    each setup has its own size; that the status and body are the app's is checked at the capture)."""
    found = []
    for row in table_rows(table):
        where = dict(setup=row.setup, gomaxprocs=row.gomaxprocs, repeat=row.repeat, file=row.file)
        size, bound = sizes.get((row.setup, row.gomaxprocs)), bounds(row) if row.requests else None
        if row.requests == 0:
            continue  # the zero-requests check fails it
        if size is None or bound is None:
            why = (
                "no capture of its answer at the block's start"
                if size is None
                else f"{row.requests:,} requests over {row.connections:,} connections"
            )
            found.append(Check("same-response", "warn", f"{why}: its response size was not checked", **where))
            continue
        lo, hi = bound
        measured = f"{row.bytes_per_response:.2f} B per response; its byte total allows {lo:.2f}-{hi:.2f} B"
        if lo <= size <= hi:
            found.append(
                Check("same-response", "pass", f"{measured}, which includes the {size} B it answered at the block's start", **where)
            )
        else:
            found.append(
                Check(
                    "same-response", "fail", f"{measured}, not the {size} B it answered at the block's start: its responses differ", **where
                )
            )
    return found
