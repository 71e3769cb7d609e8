"""Checks of --app's setups: the app's own answer, not the hello world's 141-byte header block.

The driver compares each app setup's status and body with the app alone's at every
block's start (a difference is the cell's error, failed by the readiness check); here each
capture's status must be 2xx, and its size and what nginx changed in the header block
(the cell's headers_changed) are said.
"""

from __future__ import annotations

from .core.records import Check
from .core.setups import SETUP_BY_ID


def is_app(setup: str) -> bool:
    """Return True for a setup of --app (app, nginx-app): judged against the app's own answer, not the hello world's."""
    known = SETUP_BY_ID.get(setup)
    return known is not None and known.app


def app_header_check(capture, cell: dict, where: str) -> Check:
    """Return the header-bytes check of an app setup's capture (run_files.HeaderCapture; cell: its manifest cell): 2xx, its size and what nginx changed said."""
    changed = cell.get("headers_changed")
    said = "" if changed is None else f"; changed from the app's: {', '.join(changed) or 'nothing'}"
    body = f", {cell['body_bytes']:,}-byte body" if isinstance(cell.get("body_bytes"), int) else ""
    if capture.status_code is None or not 200 <= capture.status_code < 300:
        return Check("header-bytes", "fail", f"{where} answered {capture.status_line!r}, not 2xx", capture.setup, capture.gomaxprocs, file=capture.file)
    message = f"{where}: {capture.status_line}, {capture.size_bytes} header bytes{body} (your app's own answer: no 141-byte rule){said}"
    return Check("header-bytes", "pass", message, capture.setup, capture.gomaxprocs, file=capture.file)


def app_conditions(app: dict) -> str:
    """Return the conditions' words for an --app run's handler: what was requested, and that only Go reads GOMAXPROCS."""
    path = app.get("path") or "/"
    return (f"your app's own handler ({path}); GOMAXPROCS was in its environment, but only Go reads it: another server chooses its "
            "own threads or workers, and --pin-server bounds the CPUs it may use")
