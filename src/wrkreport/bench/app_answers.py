"""The app's cells: each app setup's answer (status, body size and sha256, header block) against the app's own, captured at a block's start.

For --app the 141-byte header rule of the hello world does not apply: every app setup
must answer with the status and the body the app alone answers (`app`, captured first),
and what nginx changed in the header block is listed (Server, Date, Connection, ...).
With --app-b the second build alone (app~NAME) may answer another body (a new build may
change it): it need only answer 2xx, and nginx-app~NAME must answer what app~NAME answers.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..core.setups import APP_BASELINE, split_twin, twin_id

HEADER_SEPARATOR = b":"
VOLATILE = ("date",)  # a field whose value differs between any two captures a second apart: only its absence is a change


def header_fields(data: bytes) -> dict[str, str]:
    """Return a header block's fields by lowercase name (repeated ones joined by ', '): b'HTTP/1.1 200 OK\\r\\nServer: x\\r\\n' -> {'server': 'x'}."""
    fields: dict[str, str] = {}
    for raw in data.split(b"\n")[1:]:
        name, sep, value = raw.rstrip(b"\r").partition(HEADER_SEPARATOR)
        if sep and name.strip():
            key = name.strip().decode("latin-1").lower()
            text = value.strip().decode("latin-1")
            fields[key] = f"{fields[key]}, {text}" if key in fields else text
    return fields


def display_name(key: str) -> str:
    """Return a lowercase header name as usually written: 'content-length' -> 'Content-Length'."""
    return "-".join(part.capitalize() for part in key.split("-"))


def changed_headers(app: bytes, other: bytes) -> list[str]:
    """Return what other's header block changed in app's: 'Server (changed)', 'Connection (added)', 'X-Powered-By (removed)', in app's order then other's
    (a Date of another second is no change).

    >>> changed_headers(b"HTTP/1.1 200 OK\\r\\nDate: Fri, 27 Nov 2026 04:00:00 GMT\\r\\nServer: a\\r\\n", b"HTTP/1.1 200 OK\\r\\nDate: Fri, 27 Nov 2026 04:00:01 GMT\\r\\nServer: nginx\\r\\n")
    ['Server (changed)']
    """
    mine, theirs = header_fields(app), header_fields(other)
    found = [
        f"{display_name(k)} ({'changed' if k in theirs else 'removed'})"
        for k, v in mine.items()
        if theirs.get(k) != v and not (k in VOLATILE and k in theirs)
    ]
    found += [f"{display_name(k)} (added)" for k in theirs if k not in mine]
    return found


def body_facts(path: str | None) -> tuple[int, str] | None:
    """Return (size in bytes, sha256 hex) of a captured body, None when there is no file."""
    if not path or not Path(path).is_file():
        return None
    data = Path(path).read_bytes()
    return len(data), hashlib.sha256(data).hexdigest()


def reference_of(setup: str, setups) -> str | None:
    """Return the app setup whose answer setup's must equal: None for app and app~NAME (each build alone answers its own);
    nginx-app~NAME's is app~NAME when the run has it (--app-b), else app (a --variant twin); any other app setup's is app."""
    original, variant = split_twin(setup)
    if original == APP_BASELINE:
        return None
    if variant and twin_id(APP_BASELINE, variant) in setups:
        return twin_id(APP_BASELINE, variant)
    return APP_BASELINE


def alone_words(reference: str) -> str:
    """Return who answers alone, for messages: 'app' -> 'the app alone', 'app~b' -> "the app's build b alone"."""
    variant = split_twin(reference)[1]
    return f"the app's build {variant} alone" if variant else "the app alone"


def record_app_cell(
    setup: str,
    cell: dict,
    headers: bytes | None,
    body: str | None,
    app: dict | None,
    app_headers: bytes | None,
    reference: str | None = APP_BASELINE,
) -> None:
    """Add the body's size and sha256 to an app setup's cell; for a setup in front of an app (reference: which one, reference_of;
    app: its cell, app_headers its header block), what it changed, and an error when its status or body differs."""
    facts = body_facts(body)
    cell["body_bytes"], cell["body_sha256"] = facts if facts else (None, None)
    if reference is None or setup == APP_BASELINE or cell["error"] or headers is None:
        return
    alone = alone_words(reference)
    if not app or app.get("error") or not app.get("body_sha256") or app_headers is None:
        cell["error"] = f"{alone} gave no answer to compare this one with"
        return
    cell["headers_changed"] = changed_headers(app_headers, headers)
    if status_code(cell["status_line"]) != status_code(app["status_line"]):
        cell["error"] = f"answered {cell['status_line']!r} where {alone} answers {app['status_line']!r}"
    elif cell["body_sha256"] != app["body_sha256"]:
        cell["error"] = (
            f"answered a {cell['body_bytes']:,}-byte body (sha256 {cell['body_sha256'][:12]}) where {alone} answers "
            f"{app['body_bytes']:,} bytes (sha256 {app['body_sha256'][:12]})"
        )


def record_front_end_cell(
    cell: dict, headers: bytes | None, body: str | None, expected_body: bytes, go: dict | None, go_headers: bytes | None
) -> None:
    """Add the body's size and sha256 to another front end's cell (HAProxy, Caddy, Apache httpd: a GET captured like an app's),
    what it changed in go-http's header block (go: go-http's cell, go_headers its `curl -sI` block), and an error when its
    body is not the hello world's: its status must be 200 (cell_from_headers), its header block is its own."""
    raw = Path(body).read_bytes() if body and Path(body).is_file() else None
    chunked = headers is not None and "chunked" in header_fields(headers).get("transfer-encoding", "").lower()
    decoded = dechunked(raw) if chunked and raw is not None else raw
    facts = (len(decoded), hashlib.sha256(decoded).hexdigest()) if decoded is not None else None
    cell["body_bytes"], cell["body_sha256"] = facts if facts else (None, None)
    if raw is not None and headers is not None:  # on the wire: the header block and the body as sent (chunked: with its framing)
        cell["response_bytes"] = len(headers) + len(raw)
    if cell["error"] or headers is None:
        return
    if chunked and decoded is None:
        cell["error"] = "answered a chunked body that does not decode"
        return
    expected = hashlib.sha256(expected_body).hexdigest()
    if facts is None or facts[1] != expected:
        got = "no body" if facts is None else f"a {facts[0]:,}-byte body (sha256 {facts[1][:12]})"
        cell["error"] = f"answered {got} where go-http answers {len(expected_body):,} bytes (sha256 {expected[:12]})"
        return
    if go and not go.get("error") and go_headers is not None:
        cell["headers_changed"] = changed_headers(go_headers, headers)


def dechunked(data: bytes) -> bytes | None:
    r"""Return the body of a chunked transfer encoding (RFC 9112 7.1), None when data is not one whole chunked body.

    >>> dechunked(b"c\r\nHello World\n\r\n0\r\n\r\n"), dechunked(b"c\r\nHello")
    (b'Hello World\n', None)
    """
    body, rest = b"", data
    while True:
        line, sep, rest = rest.partition(b"\r\n")
        size_text = line.split(b";", 1)[0].strip()
        if not sep or not size_text or any(c not in b"0123456789abcdefABCDEF" for c in size_text):
            return None
        size = int(size_text, 16)
        if size == 0:
            return body if rest.endswith(b"\r\n") else None  # trailer fields, then the final CRLF
        if len(rest) < size + 2 or rest[size : size + 2] != b"\r\n":
            return None
        body, rest = body + rest[:size], rest[size + 2 :]


def status_code(status_line: str | None) -> str | None:
    """Return the code of a status line: 'HTTP/1.1 200 OK' -> '200'."""
    parts = (status_line or "").split()
    return parts[1] if len(parts) > 1 else None
