"""The report in real headless Chromium: it loads from disk with no error and no network, and a screenshot is taken."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from wrkreport.report import build

from helpers import RUNS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium); the page was not opened"),
]


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess:
    """Run headless Chromium with a fresh profile."""
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=120)


def png_size(path: Path) -> tuple[int, int]:
    """Return (width, height) from a PNG header."""
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_report_loads_in_chromium_and_is_screenshotted(tmp_path):
    run = tmp_path / "raw" / "default-2cores"
    shutil.copytree(RUNS / "default-2cores", run)
    build(run, tmp_path / "reports", datetime(2026, 11, 22, 12, tzinfo=timezone.utc))
    page = (tmp_path / "reports" / "index.html").as_uri()
    dom = chromium("--dump-dom", page, profile=tmp_path / "profile-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "At GOMAXPROCS=1 with nginx in front, the HTTP proxy keeps 55%" in dom.stdout
    assert dom.stdout.count('class="layout-wide"') == 4  # throughput, ratios, saturation latency, ratios beside the 2013 article (each also narrow)
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line or "Failed to load" in line or "net::ERR" in line]
    assert console == [], console
    shot = tmp_path / "report.png"
    result = chromium("--window-size=1280,2400", f"--screenshot={shot}", page, profile=tmp_path / "profile-shot")
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    assert png_size(shot) == (1280, 2400) and shot.stat().st_size > 50_000  # a rendered page, not a blank one
    keep = os.environ.get("WRKREPORT_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)


def test_the_pages_policy_blocks_an_injected_script_and_remote_image(tmp_path):
    """Were escaping ever to fail, the page's CSP still stops script and remote loads: Chromium refuses both."""
    run = tmp_path / "raw" / "default-2cores"
    shutil.copytree(RUNS / "default-2cores", run)
    build(run, tmp_path / "reports", datetime(2026, 11, 22, 12, tzinfo=timezone.utc))
    page = (tmp_path / "reports" / "index.html").read_text(encoding="utf-8")
    injected = tmp_path / "reports" / "injected.html"
    injected.write_text(
        page.replace("</body>", '<script>document.body.setAttribute("data-ran", "yes")</script><img src="http://127.0.0.1:9/x.png"></body>'),
        encoding="utf-8",
    )
    dom = chromium("--dump-dom", injected.as_uri(), profile=tmp_path / "profile-csp")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "<svg" in dom.stdout and 'data-ran="yes"' not in dom.stdout
    refused = [line for line in dom.stderr.splitlines() if "Content Security Policy" in line]
    assert any("inline script" in line for line in refused) and any("http://127.0.0.1:9/x.png" in line for line in refused), dom.stderr[-2000:]
