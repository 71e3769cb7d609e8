"""Checks of the h2 setups (go-h2, nginx-h2, nginx-h2-unix): their answer over HTTP/2, not the hello world's 141-byte header block.

Over HTTP/2 the header block is HPACK-compressed, differently by each server and along a
connection (a field sent once is indexed after), so neither the 141-byte rule nor the
byte total per response can be compared across setups. Instead the driver checks each h2
setup's answer at every block's start (curl --http2: 200, go-http's body, the handshake's
ALPN h2; a difference is the cell's error, failed by the readiness check) and lists the
header fields nginx changed from go-h2's; here every h2load measurement of an h2 setup
must have negotiated h2, and its header bytes per response are said.
"""

from __future__ import annotations

from .core.records import Check
from .core.setups import H2_BASELINE, SETUP_BY_ID

H2_ALPN = "h2"


def is_h2(setup: str) -> bool:
    """Return True for an HTTP/2 setup (go-h2, nginx-h2, nginx-h2-unix, their twins)."""
    known = SETUP_BY_ID.get(setup)
    return known is not None and known.h2


def h2_header_check(capture, cell: dict, where: str) -> Check:
    """Return the header-bytes check of an h2 setup's capture (run_files.HeaderCapture; cell: its manifest cell): 200 over HTTP/2, and what nginx changed said."""
    fail = lambda text: Check("header-bytes", "fail", f"{where} {text}", capture.setup, capture.gomaxprocs, file=capture.file)  # noqa: E731
    if not (capture.status_line or "").startswith("HTTP/2"):
        return fail(f"answered {capture.status_line!r} over HTTP/1.x: curl --http2 was not given h2 by ALPN")
    if capture.status_code != 200:
        return fail(f"answered {capture.status_line!r}, not 200")
    changed = cell.get("headers_changed")
    said = "" if changed is None else f"; header fields changed from {H2_BASELINE}'s: {', '.join(changed) or 'none'} (Date not compared)"
    body = f", {cell['body_bytes']:,}-byte body" if isinstance(cell.get("body_bytes"), int) else ""
    alpn = (cell.get("tls") or {}).get("alpn")
    negotiated = f", ALPN {alpn}" if alpn else ""
    message = f"{where}: {capture.status_line.strip()}{body}{negotiated} (HTTP/2: HPACK, no 141-byte rule){said}"
    return Check("header-bytes", "pass", message, capture.setup, capture.gomaxprocs, file=capture.file)


def h2_response_checks(table) -> list[Check]:
    """Return the same-response check of each h2 measurement (table rows): h2load must have negotiated h2; its header bytes per response are said, not compared (HPACK)."""
    found = []
    for row in table.itertuples(index=False):
        where = dict(setup=row.setup, gomaxprocs=row.gomaxprocs, repeat=row.repeat, file=row.file)
        if not row.requests:
            continue  # the zero-requests check fails it
        protocol = getattr(row, "application_protocol", None)
        if protocol != H2_ALPN:
            said = f"negotiated {protocol}" if isinstance(protocol, str) else "printed no application protocol"
            found.append(Check("same-response", "fail", f"h2load {said}, not h2: not an HTTP/2 measurement", **where))
            continue
        headers = getattr(row, "header_bytes", None)
        per = f"{headers / row.requests:.1f} B of HPACK header per response" if isinstance(headers, (int, float)) and headers == headers else "no header bytes printed"
        found.append(Check("same-response", "pass", f"h2 negotiated; {per} (HPACK: sizes differ by server and along a connection, so not compared)", **where))
    return found
