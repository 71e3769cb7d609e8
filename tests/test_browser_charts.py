"""The report's charts in real Chromium (Playwright driving the system browser) at a phone's 390 px and a desktop's 1,300 px: whole, uncut, legible.

A reader found the charts scrolling sideways with no cue, the ratio chart showing 0-0.3 of
its axis at 390 px and the CPU chart's axis label cut ('95% interval of the') even at
1,300 px. Each run below is built once; each page is opened once per width and measured
in one pass (CHARTS), and the tests read those measurements.
Set WRKREPORT_SCREENSHOT_DIR to keep a full-page screenshot of each.
"""

from __future__ import annotations

import io

import pytest

from browser_pages import BINARY, keep
from wrkreport.charts.layout import MIN_TEXT_PX

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(BINARY is None, reason="Chromium is not installed (apt-get install chromium); the page was not opened"),
]

# every chart between them: throughput, ratios (ours, and beside the published ones), latency, CPU (all), latency CDF (quick-hist, quick-rates-slo, capacity-delay),
# the sweep charts (sweep-all-setups), the TLS ratios (tls-both-modes), the fixed-rate chart with capacities (quick-rates-slo, capacity-delay)
RUN_NAMES = ("default-run-6", "quick-rates-slo", "tls-both-modes", "sweep-all-setups", "quick-hist", "capacity-delay")
WIDTHS = (390, 1300)
EVERY_RUN = {"throughput", "ratios", "ratios-2013", "latency", "cpu"}  # the charts each run's page shows (by the id of their <title>)
EXPECTED = {
    "default-run-6": EVERY_RUN,
    "quick-rates-slo": EVERY_RUN | {"latency-cdf", "fixed-rate"},
    "tls-both-modes": EVERY_RUN | {"tls"},
    "sweep-all-setups": EVERY_RUN | {"sweep-throughput", "sweep-p99"},
    "quick-hist": EVERY_RUN | {"latency-cdf"},
    "capacity-delay": EVERY_RUN | {"latency-cdf", "fixed-rate"},
}
SLACK_PX = 0.5  # rounding of boxes

# Each chart shown (an SVG with a box: the other layout is hidden by CSS): its name, its width and its box's (the
# element it scrolls in), the box's visible part, whether the box carries the scroll cue, and every text: its
# content, its box, and its size on screen (font size in SVG units times the SVG's scale).
CHARTS = """() => [...document.querySelectorAll('svg[role="img"]')].filter(svg => svg.getBoundingClientRect().width > 0).map(svg => {
  const box = svg.getBoundingClientRect(), holder = svg.parentElement, shown = holder.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width, style = getComputedStyle(holder);
  return {
    name: svg.querySelector('title').id.replace(/(-narrow)?-title$/, ''),
    layout: svg.getAttribute('class'),
    svg: [box.left, box.right, box.top, box.bottom],
    holder: [shown.left, shown.left + holder.clientWidth, holder.scrollWidth, holder.clientWidth],
    cue: style.backgroundImage.includes('gradient') && style.backgroundAttachment.includes('local') && style.backgroundAttachment.includes('scroll'),
    hint: getComputedStyle(holder, '::before').display !== 'none' ? getComputedStyle(holder, '::before').content : null,
    texts: [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).map(t => {
      const r = t.getBoundingClientRect();
      return [t.textContent, r.left, r.right, r.top, r.bottom, parseFloat(getComputedStyle(t).fontSize) * scale];
    }),
  };
})"""


@pytest.fixture(scope="module")
def measured(browser, reports):
    """Return measure(run, width): the page's charts (CHARTS), each page opened once."""
    cache = {}

    def measure(name: str, width: int) -> list[dict]:
        if (name, width) not in cache:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(reports[name].as_uri())
            cache[name, width] = page.evaluate(CHARTS)
            shot = keep(f"charts-{name}-{width}.png")
            if shot:
                page.screenshot(path=str(shot), full_page=True)
            page.close()
        return cache[name, width]

    return measure


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_chart_is_shown_once_and_fits_its_box_without_scrolling(measured, name, width):
    charts = measured(name, width)
    assert sorted(c["name"] for c in charts) == sorted(EXPECTED[name]), f"{name} at {width} px: charts shown"
    wide = [
        (c["name"], round(c["svg"][1] - c["svg"][0]), c["holder"][3])
        for c in charts
        if c["holder"][2] > c["holder"][3] or c["svg"][1] > c["holder"][1] + SLACK_PX
    ]
    assert not wide, f"{name} at {width} px: charts wider than their box (chart, its width, the box's): {wide}"
    assert {c["layout"] for c in charts} == {"layout-narrow" if width < 720 else "layout-wide"}  # a phone's layout below 45rem


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", RUN_NAMES)
def test_no_chart_text_is_cut_by_its_svgs_edge(measured, name, width):
    cut = []
    for chart in measured(name, width):
        left, right, top, bottom = chart["svg"]
        for text, x0, x1, y0, y1, _ in chart["texts"]:
            if x0 < left - SLACK_PX or x1 > right + SLACK_PX or y0 < top - SLACK_PX or y1 > bottom + SLACK_PX:
                cut.append((chart["name"], text, round(max(left - x0, x1 - right, top - y0, y1 - bottom), 1)))
    assert not cut, f"{name} at {width} px: texts reaching past their chart's edge (chart, text, by px): {cut}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", RUN_NAMES)
def test_chart_text_stays_legible(measured, name, width):
    small = [(c["name"], text, round(px, 1)) for c in measured(name, width) for text, *_, px in c["texts"] if px < MIN_TEXT_PX]
    assert not small, f"{name} at {width} px: chart text under {MIN_TEXT_PX} px: {small[:5]}"


@pytest.mark.parametrize("name", ("default-run-6", "tls-both-modes"))
def test_the_ratio_charts_show_their_whole_axis_on_a_phone(measured, name):
    """At 390 px the ratio chart once showed 0-0.3 of its axis and scrolled for the rest: its 0 and a mark at or past 1.0 are now both on screen."""
    for chart in (c for c in measured(name, 390) if c["name"] in ("ratios", "ratios-2013", "tls")):
        left, right = chart["holder"][:2]
        seen = {text for text, x0, x1, *_ in chart["texts"] if x0 >= left - SLACK_PX and x1 <= right + SLACK_PX}
        numbers = [float(text) for text in seen if text.replace(".", "", 1).isdigit()]
        assert numbers and min(numbers) == 0 and max(numbers) >= 1.0, f"{name}, {chart['name']}: texts on screen: {sorted(seen)}"


# The right edge of a chart's box with the chart itself hidden (its layout kept): what a reader sees of the box's own
# background there, as the darkest pixel's brightness of a strip 6 px wide (255 = white: no cue).
def edge_brightness(page, index: int) -> int:
    """Return the darkest brightness (0-255) in the right 6 px of the index-th shown chart's box, the chart hidden."""
    from PIL import Image  # matplotlib's own dependency

    box = page.evaluate(
        """i => { const svg = [...document.querySelectorAll('svg[role="img"]')].filter(s => s.getBoundingClientRect().width > 0)[i];
        svg.style.visibility = 'hidden'; const h = svg.parentElement; h.scrollIntoView(); const r = h.getBoundingClientRect();
        return [r.left + h.clientWidth - 6, r.top + 20, 6, Math.min(r.height, 300) - 40]; }""",
        index,
    )
    image = Image.open(io.BytesIO(page.screenshot(clip=dict(zip(("x", "y", "width", "height"), box))))).convert("L")
    return image.getextrema()[0]


@pytest.mark.parametrize("width, overflows", [(300, True), (390, False), (1300, False)])
def test_a_chart_too_wide_for_its_box_shows_a_shadow_at_the_edge_it_scrolls_to(browser, reports, width, overflows):
    """Below the narrow layout's legible width (333 px) a chart scrolls: the box's right edge then shades and a line above says so; a chart that fits shows neither."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(reports["default-run-6"].as_uri())
    charts = page.evaluate(CHARTS)
    assert all(c["cue"] for c in charts)
    scrolls = [c["holder"][2] > c["holder"][3] for c in charts]
    assert scrolls == [overflows] * len(charts), f"at {width} px: charts scrolling: {scrolls}"
    hints = [c["hint"] for c in charts]
    assert all(h and "Scroll sideways" in h for h in hints) if overflows else hints == [None] * len(charts), hints
    darkest = edge_brightness(page, 0)
    page.close()
    assert (darkest < 235) == overflows, f"at {width} px: the right edge's darkest pixel is {darkest}"
