"""The h2 setups' cells: each one's answer over HTTP/2 (curl --http2, ALPN h2) and handshake (ALPN h2), captured at a block's start.

The hello world's 141-byte header rule is HTTP/1.1's: over HTTP/2 the header block is
HPACK-compressed, differently by each server and along a connection. Instead every h2
setup must answer 200 over HTTP/2 with go-http's body bytes, its handshake must have
negotiated h2 by ALPN, and the header fields nginx changed from go-h2's are listed (names
and values; Date left out, it changes every second).
"""

from __future__ import annotations

import hashlib

from ..core.setups import H2_BASELINE
from .app_answers import body_facts, changed_headers, status_code
from .handshake import record_probe

H2_STATUS = "HTTP/2"  # curl's status line of an HTTP/2 answer: 'HTTP/2 200 '
UNCOMPARED = ("Date (",)  # header changes not listed: the date differs from one second to the next


def record_h2_cell(
    manifest: dict,
    entry: dict,
    setup: str,
    cell: dict,
    headers: bytes | None,
    body: str | None,
    probe: str | None,
    expected_body: bytes,
    baseline_headers: bytes | None,
) -> str | None:
    """Check and record an h2 setup's answer and handshake in its cell (an error makes it skipped); return the handshake's note.

    headers, body: curl --http2's header block and body file; probe: the handshake report
    (openssl s_client -brief -alpn h2, plus the ALPN line); baseline_headers: go-h2's header
    block this block (None for go-h2 itself, or when it gave none).
    """
    facts = body_facts(body)
    cell["body_bytes"], cell["body_sha256"] = facts if facts else (None, None)
    cell["http_version"] = (cell["status_line"] or "").split(" ", 1)[0] or None
    if cell["error"] or headers is None:
        return None
    if cell["http_version"] != H2_STATUS:
        cell["error"] = f"answered over {cell['http_version']}, not HTTP/2 (curl --http2 offered h2 by ALPN)"
    elif status_code(cell["status_line"]) != "200":
        cell["error"] = f"answered {cell['status_line'].strip()!r}, not 200"
    elif cell["body_sha256"] != hashlib.sha256(expected_body).hexdigest():
        cell["error"] = (
            f"answered a {cell['body_bytes']:,}-byte body (sha256 {(cell['body_sha256'] or '')[:12]}), not go-http's {len(expected_body):,} bytes"
        )
    if setup != H2_BASELINE and baseline_headers is not None:
        cell["headers_changed"] = [c for c in changed_headers(baseline_headers, headers) if not c.startswith(UNCOMPARED)]
    if cell["error"] or probe is None:
        return None
    note = record_probe(manifest, entry, setup, probe)
    alpn = entry["cells"][setup]["tls"].get("alpn")
    if alpn != "h2":
        cell["error"] = (
            f"the handshake negotiated {'ALPN ' + alpn if alpn else 'no ALPN protocol'}, not h2: it would be measured as HTTP/1.1"
        )
    return note


def h2_note(setup: str, cell: dict) -> str:
    """Return what the driver says of a measured h2 setup: 'HTTP/2 200, 12-byte body; changed from go-h2's: Server (changed)'."""
    body = f", {cell['body_bytes']:,}-byte body" if isinstance(cell.get("body_bytes"), int) else ""
    changed = cell.get("headers_changed")
    said = "" if changed is None else f"; header fields changed from {H2_BASELINE}'s: {', '.join(changed) or 'none'}"
    return f"{(cell.get('status_line') or '').strip()}{body} (no 141-byte rule over HTTP/2){said}"
