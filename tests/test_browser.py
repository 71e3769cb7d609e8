"""The report in real headless Chromium (Playwright driving the system browser): it loads from disk with no error and no network, and a screenshot is taken.

Chromium's own command line (--dump-dom, --screenshot) was used here before; under the
side-by-side tier's load its --screenshot once never returned (CI, 120 s), so the page is
driven through Playwright like the other browser modules, which waits on the page's load
event and bounds every step.
"""

from __future__ import annotations

import os
import shutil
import struct
from datetime import datetime, timezone
from pathlib import Path

import pytest

from browser_pages import BINARY
from helpers import RUNS
from wrkreport.report import build

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(BINARY is None, reason="Chromium is not installed (apt-get install chromium); the page was not opened"),
]

STEP_MS = 60_000  # each load or screenshot; a page of this size takes well under a second


def built_page(tmp_path: Path) -> Path:
    """Build the default-2cores fixture's report under tmp_path and return its index.html."""
    run = tmp_path / "raw" / "default-2cores"
    shutil.copytree(RUNS / "default-2cores", run)
    build(run, tmp_path / "reports", datetime(2026, 11, 22, 12, tzinfo=timezone.utc))
    return tmp_path / "reports" / "index.html"


def opened(browser, path: Path, viewport: dict):
    """Open a file in a fresh page; return (page, console messages, failed or off-disk requests), recorded from before the load."""
    page = browser.new_page(viewport=viewport)
    page.set_default_timeout(STEP_MS)
    console, requests = [], []
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: console.append(f"pageerror: {error}"))
    page.on("requestfailed", lambda request: requests.append(f"failed: {request.url}"))
    page.on("request", lambda request: requests.append(request.url) if not request.url.startswith(("file:", "data:")) else None)
    page.goto(path.as_uri(), wait_until="load")
    return page, console, requests


def png_size(data: bytes) -> tuple[int, int]:
    """Return (width, height) from a PNG header."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_report_loads_in_chromium_and_is_screenshotted(browser, tmp_path):
    page, console, requests = opened(browser, built_page(tmp_path), {"width": 1280, "height": 2400})
    dom = page.content()
    assert "At GOMAXPROCS=1 with nginx in front, the HTTP proxy keeps 55%" in dom
    assert (
        dom.count('class="layout-wide"') == 4
    )  # throughput, ratios, saturation latency, ratios beside the 2013 article (each also narrow)
    assert console == [] and requests == [], (console, requests)
    shot = page.screenshot()
    page.close()
    assert png_size(shot) == (1280, 2400) and len(shot) > 50_000  # a rendered page, not a blank one
    keep = os.environ.get("WRKREPORT_SCREENSHOT")
    if keep:
        Path(keep).write_bytes(shot)


def test_the_pages_policy_blocks_an_injected_script_and_remote_image(browser, tmp_path):
    """Were escaping ever to fail, the page's CSP still stops script and remote loads: Chromium refuses both."""
    index = built_page(tmp_path)
    injected = index.with_name("injected.html")
    injected.write_text(
        index.read_text(encoding="utf-8").replace(
            "</body>", '<script>document.body.setAttribute("data-ran", "yes")</script><img src="http://127.0.0.1:9/x.png"></body>'
        ),
        encoding="utf-8",
    )
    page, console, _ = opened(browser, injected, {"width": 1280, "height": 900})
    ran = page.evaluate("() => document.body.getAttribute('data-ran')")
    svgs = page.evaluate("() => document.querySelectorAll('svg').length")
    page.close()
    assert svgs > 0 and ran is None
    refused = [line for line in console if "Content Security Policy" in line]
    assert any("inline script" in line for line in refused) and any("http://127.0.0.1:9/x.png" in line for line in refused), console
