"""Tests of wrkreport.charts.changes: the compare chart's x tick labels never overlap, at either layout and any range of B / A, in the SVG and in the browser."""

from __future__ import annotations

import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextPath

from helpers import RUNS
from wrkreport.charts.changes import ChangeMark, change_chart, change_ticks, spaced
from wrkreport.report import build_compare

XTICK = re.compile(r'<g id="[a-z-]+-xtick_\d+">.*?<text style="([^"]*)" x="([0-9.]+)"[^>]*>([^<]+)</text>', re.S)
FONT_SIZE = re.compile(r"font-size:\s*([0-9.]+)px")
# B / A ranges a comparison meets: the same code (0.88-1.15), a wide req/s interval, the p99 intervals of default-run-1 against
# default-run-4 (0.35-2.67: the issue's "0.80.9 1 1.11.25", which overlapped at both widths before), a tenfold change.
RANGES = {"same-code": (0.88, 1.15), "wide": (0.61, 1.57), "real-p99": (0.35, 2.67), "tenfold": (0.08, 1.3), "both-ways": (0.3, 4.0)}


def marks(low: float, high: float) -> list[ChangeMark]:
    """Return chart rows whose intervals span low-high: a few cells, three figures each."""
    found = []
    for cell in ("nginx-http, GOMAXPROCS=1", "nginx-fcgi-tcp, GOMAXPROCS=2"):
        for figure, (a, b) in zip(("req/s", "ratio to go-http", "p99 latency at saturation"), ((low, 1.0), (0.95, 1.05), (1.0, high))):
            centre = (a * b) ** 0.5
            found.append(ChangeMark(cell, figure, centre, a, b, "inconclusive"))
    return found


def text_width(text: str, size_px: float) -> float:
    """Return the width of text in DejaVu Sans (matplotlib's font, and the widest common sans-serif digits) at size_px."""
    return TextPath((0, 0), text, size=size_px, prop=FontProperties(family="DejaVu Sans")).get_extents().width


def tick_labels(svg: str) -> list[tuple[float, float, str]]:
    """Return the x tick labels of an SVG chart as (left, right, text) in SVG units, in order along the axis."""
    found = []
    for style, x, text in XTICK.findall(svg):
        size = float(FONT_SIZE.search(style).group(1))
        width = text_width(text, size)
        assert "text-anchor: middle" in style
        found.append((float(x) - width / 2, float(x) + width / 2, text))  # centred on the tick
    return sorted(found)


@pytest.mark.parametrize("narrow", [False, True], ids=["wide", "narrow"])
@pytest.mark.parametrize("name", RANGES)
def test_no_two_x_tick_labels_overlap_in_the_svg(name, narrow):
    low, high = RANGES[name]
    svg = change_chart(marks(low, high), (0.95, 1.05), "test", narrow=narrow)
    labels = tick_labels(svg)
    assert len(labels) >= 2 and "1" in [t for _, _, t in labels], labels  # 1.0, no change, is always labelled
    for (_, right, first), (left, _, second) in zip(labels, labels[1:]):
        assert (
            left - right >= 2.0
        ), f"{name}, {'narrow' if narrow else 'wide'}: '{first}' and '{second}' overlap or touch ({right:.1f} > {left:.1f})"


def test_the_issues_crowded_axis_keeps_fewer_ticks_on_a_phone_than_on_a_screen():
    # "0.80.9 1 1.11.25": all five fine ticks at a width that fits three.
    wanted = change_ticks(0.7, 1.6)
    assert sorted(wanted) == [0.8, 0.9, 1.0, 1.1, 1.25]
    phone, screen = spaced(wanted, 0.7, 1.6, 150, 9), spaced(wanted, 0.7, 1.6, 600, 9)
    assert 1.0 in phone and len(phone) < len(screen) == 5


# --- the same in the browser: the compare page at a phone's and a laptop's width -------------------

BINARY = next(
    (
        p
        for p in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or "")
        if p and Path(p).is_file()
    ),
    None,
)
TICK_BOXES = """() => {
  const svg = [...document.querySelectorAll('svg')].find(s => s.getBoundingClientRect().width > 0);
  return [...svg.querySelectorAll('g[id*="xtick"] text')].map(t => { const r = t.getBoundingClientRect(); return [r.left, r.right, t.textContent]; });
}"""


@pytest.mark.browser
@pytest.mark.skipif(BINARY is None, reason="Chromium is not installed (apt-get install chromium); the page was not opened")
@pytest.mark.parametrize("width", [390, 1300])
def test_no_two_x_tick_labels_overlap_in_the_browser(tmp_path, width):
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
    _, paths = build_compare(RUNS / "default-run-1", RUNS / "default-run-4", tmp_path, datetime(2026, 11, 25, 12, tzinfo=timezone.utc))
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=BINARY, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(paths["compare.html"].as_uri())
        boxes = sorted(page.evaluate(TICK_BOXES))
        browser.close()
    assert len(boxes) >= 2, boxes
    for (_, right, first), (left, _, second) in zip(boxes, boxes[1:]):
        assert left > right, f"at {width} px: '{first}' ends at {right:.1f} px, '{second}' starts at {left:.1f} px"
