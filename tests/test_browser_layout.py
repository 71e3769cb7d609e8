"""The report and the compare page read anywhere, in real Chromium (Playwright driving the system browser): 390 px, 1400 px and on paper.

Set WRKREPORT_SCREENSHOT_DIR to keep the screenshots and the printed PDF for a look.
"""

from __future__ import annotations

import io
import os
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from wrkreport.report import build, build_compare

from helpers import RUNS

BINARY = next((p for p in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or "") if p and Path(p).is_file()), None)
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
pypdf = pytest.importorskip("pypdf", reason="pypdf is not installed (pip install -e '.[test]')")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(BINARY is None, reason="Chromium is not installed (apt-get install chromium); the page was not opened"),
]

RUN_NAMES = ("default-2cores", "default-blocks-2cores", "sweep-all-setups", "fcgi-unix-502", "quick-hist", "two-clients", "server-host", "tls-both-modes")
# quick-hist: the latency CDF chart; two-clients, server-host: the Machines part (issue 12); tls-both-modes: the TLS part (issue 22)
WIDTHS = (390, 1400)
MIN_CHART_TEXT_PX = 10
RATIO_HEADERS = ("group", "setup", "throughput ratio (95% CI)", "p50 latency ratio", "p99 latency ratio", "pairs", "what it says",
                 "2013 article (at its GOMAXPROCS)")

# The rendered size of every text of every chart shown: its font size in SVG units times the SVG's scale on screen
# (a chart hidden by CSS, the compare page's other layout, has no box).
CHART_TEXT_PX = """() => {
  const sizes = [];
  for (const svg of document.querySelectorAll('svg')) {
    if (svg.getBoundingClientRect().width === 0) continue;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    for (const text of svg.querySelectorAll('text')) {
      sizes.push(parseFloat(getComputedStyle(text).fontSize) * scale);
    }
  }
  return sizes;
}"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Return {run name: index.html path} for the three runs."""
    root = tmp_path_factory.mktemp("layout")
    found = {}
    for name in RUN_NAMES:
        run = root / "raw" / name
        shutil.copytree(RUNS / name, run)
        build(run, root / "reports" / name, datetime(2026, 11, 22, 12, tzinfo=timezone.utc))
        found[name] = root / "reports" / name / "index.html"
    return found


@pytest.fixture(scope="module")
def compare_page(tmp_path_factory):
    """Return the compare.html of keepalive-on against keepalive-off (the fixture pair that differs in a setting)."""
    root = tmp_path_factory.mktemp("compare-layout")
    _, paths = build_compare(RUNS / "keepalive-on", RUNS / "keepalive-off", root / "reports", datetime(2026, 11, 22, 12, tzinfo=timezone.utc))
    return paths["compare.html"]


@pytest.fixture(scope="module")
def browser():
    """Return a headless Chromium (the system one) driven by Playwright."""
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=BINARY, args=["--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


def keep(name: str) -> Path | None:
    """Return where to keep an artefact when WRKREPORT_SCREENSHOT_DIR is set."""
    folder = os.environ.get("WRKREPORT_SCREENSHOT_DIR")
    if not folder:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    return Path(folder) / name


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", RUN_NAMES)
def test_nothing_forces_the_page_wider_than_the_screen_and_chart_text_stays_legible(browser, reports, name, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(reports[name].as_uri())
    scroll_width, inner_width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert scroll_width <= inner_width, f"{name} at {width} px: the page is {scroll_width} px wide"
    sizes = page.evaluate(CHART_TEXT_PX)
    assert sizes and min(sizes) >= MIN_CHART_TEXT_PX, f"{name} at {width} px: chart text down to {min(sizes):.1f} px"
    # the number that matters sits next to the setup name, on screen without scrolling
    cells = page.evaluate("""() => [...document.querySelectorAll('#ratios ~ .scroll table tbody tr')].slice(0, 3).map(
        tr => tr.children[2] ? tr.children[2].getBoundingClientRect().right : 0)""")
    assert cells and max(cells) <= inner_width, f"{name} at {width} px: the ratio column is off-screen"
    shot = keep(f"{name}-{width}.png")
    if shot:
        page.screenshot(path=str(shot), full_page=False)
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name, titles", [
    ("two-clients", ["controller: this machine"]),
    ("server-host", ["controller: this machine", "target: root@10.231.0.2 (address 10.231.0.2)"]),
])
def test_the_machines_part_shows_each_machine_and_the_round_trip_within_the_screen(browser, reports, name, titles, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(reports[name].as_uri())
    shown = page.evaluate("""() => { const found = []; let node = document.getElementById('machines').nextElementSibling;
        while (node && node.tagName !== 'H2') { if (node.tagName === 'H3') found.push(node.textContent); node = node.nextElementSibling; }
        return found; }""")
    assert shown == [*titles, "Network between them"]
    boxes = page.evaluate("""() => { const out = []; let node = document.getElementById('machines').nextElementSibling;
        while (node && node.tagName !== 'H2') { const r = node.getBoundingClientRect(); if (r.width) out.push([r.right, r.height]); node = node.nextElementSibling; }
        return out; }""")
    inner = page.evaluate("() => window.innerWidth")
    assert boxes and all(right <= inner and height > 0 for right, height in boxes), f"{name} at {width} px: {boxes}"
    assert "round trip median" in page.inner_text("#machines ~ ul")
    shot = keep(f"{name}-machines-{width}.png")
    if shot:
        page.locator("#machines").scroll_into_view_if_needed()
        page.screenshot(path=str(shot), full_page=False)
    page.close()


# Every table with a group column (its first heading reads "group"): each visible label of a group (a column cell,
# or a heading row on a phone) with the height of that text (not of its cell, which grows with the row) in lines of its
# line height; and the right edge of the cell after each setup's name (the number that matters), and of the table's box.
GROUPED_TABLES = """() => [...document.querySelectorAll('table')]
  .filter(t => t.querySelector('thead th') && t.querySelector('thead th').textContent.trim() === 'group' && t.getBoundingClientRect().height > 0)
  .map(table => {
    let name = '?';
    for (let n = table.closest('.scroll').previousElementSibling; n; n = n.previousElementSibling) {
      if (/^H[23]$/.test(n.tagName)) { name = n.textContent.trim(); break; }
    }
    const labels = [...table.querySelectorAll('tbody td, tbody th')]
      .filter(e => /^GOMAXPROCS=/.test(e.textContent.trim()) && e.getBoundingClientRect().height > 0)
      .map(e => { const text = document.createRange(); text.selectNodeContents(e);
                  return [e.textContent.trim(), text.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight)]; });
    const numbers = [...table.querySelectorAll('tbody td.setup')].map(td => td.nextElementSibling.getBoundingClientRect().right);
    return [name, labels, numbers, table.parentElement.getBoundingClientRect().right];
  })"""

GROUPED_TABLE_NAMES = {
    # every table of the page with a group column, by the heading above it (the reference table's is the 2013 article)
    "default-2cores": {"Overhead ratios", "Results per cell", "Measurements and their raw files", "Header captures (curl -sI)",
                       "The 2013 article, for comparison"},
    "default-blocks-2cores": {"Overhead ratios", "Server CPU per 1,000 requests", "Results per cell", "Measurements and their raw files",
                              "Header captures (curl -sI)", "The 2013 article, for comparison"},
    "sweep-all-setups": {"Overhead ratios", "Server CPU per 1,000 requests", "Results per cell", "Measurements and their raw files",
                         "Header captures (curl -sI)", "The 2013 article, for comparison"},
    "two-clients": {"Overhead ratios", "Server CPU per 1,000 requests", "Exact latency percentiles", "Results per cell",
                    "Measurements and their raw files", "Header captures (curl -sI)", "The 2013 article, for comparison"},
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(GROUPED_TABLE_NAMES))
def test_every_grouped_table_names_each_group_in_a_line_or_two_with_the_number_next_to_the_setup(browser, reports, name, width):
    """At 390 px a group column once broke "GOMAXPROCS=2" one letter per line (12 lines), at 1400 px into 8; the screen now shows a heading row per group."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(reports[name].as_uri())
    tables = page.evaluate(GROUPED_TABLES)
    page.close()
    assert {table for table, *_ in tables} >= GROUPED_TABLE_NAMES[name], f"{name}: grouped tables found: {[t for t, *_ in tables]}"
    for table, labels, numbers, right in tables:
        assert labels, f"{name} at {width} px, {table}: no group named"
        tall = [(text, round(lines, 1)) for text, lines in labels if lines > 3]
        assert not tall, f"{name} at {width} px, {table}: group labels taller than 3 lines: {tall[:3]}"
        assert all(text.startswith("GOMAXPROCS=") for text, _ in labels)
        assert numbers and max(numbers) <= right, f"{name} at {width} px, {table}: a number is off-screen ({max(numbers):.0f} > {right:.0f} px)"
    ratios = next(labels for table, labels, *_ in tables if table == "Overhead ratios")
    assert {text for text, _ in ratios} == ({"GOMAXPROCS=2, 10 connections", "GOMAXPROCS=2, 100 connections"} if name == "sweep-all-setups"
                                            else {"GOMAXPROCS=1", "GOMAXPROCS=2"} if name != "two-clients" else {text for text, _ in ratios})


def printed(browser, report: Path) -> tuple[bytes, int, str]:
    """Return a report printed to A4: the PDF, its page count, and its text without whitespace."""
    page = browser.new_page()
    page.goto(report.as_uri())
    page.emulate_media(media="print")
    pdf = page.pdf(format="A4", print_background=True)
    page.close()
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    text = re.sub(r"\s+", "", "".join(p.extract_text() for p in reader.pages))
    for header in RATIO_HEADERS:
        assert re.sub(r"\s+", "", header) in text, header  # every column of the ratio table is on paper
    return pdf, len(reader.pages), text


def test_the_printed_default_report_has_every_ratio_column_and_expanded_warnings(browser, reports):
    pdf, pages, text = printed(browser, reports["default-2cores"])
    assert "statussubjectdetail" in text  # the checks, all passed and so collapsed on screen, print expanded
    assert "Runningtest@" not in text.replace("6s", "")  # raw wrk captures stay in their files, not on paper
    print(f"printed default report: {pages} pages (A4)")
    target = keep("default-2cores.pdf")
    if target:
        target.write_bytes(pdf)


def test_a_blocked_run_prints_the_answer_not_hundreds_of_passing_rows(browser, reports):
    """240 measurements: their rows and the passing checks' rows stay on screen; paper says where they are."""
    _, pages, text = printed(browser, reports["default-blocks-2cores"])
    assert "The240measurementrows(oneperwrkrun)areleftoffpaper" in text.replace("ﬀ", "ff")
    assert "go-http.gomaxprocs-1.block-1.run-1.wrk.txt" not in text  # no measurement row printed
    assert "NOTmet" in text  # the precision target's outcome is on paper
    assert pages <= 12, pages  # 51 pages before the rows were left off
    print(f"printed blocked default report: {pages} pages (A4)")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_compare_page_fits_the_screen_with_one_legible_chart_and_its_answer_column_visible(browser, compare_page, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(compare_page.as_uri())
    scroll_width, inner_width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert scroll_width <= inner_width, f"compare at {width} px: the page is {scroll_width} px wide"
    shown = page.evaluate("() => [...document.querySelectorAll('svg')].filter(s => s.getBoundingClientRect().width > 0).map(s => s.id || s.getAttribute('aria-labelledby'))")
    assert shown == [("changes-narrow" if width < 640 else "changes") + "-title " + ("changes-narrow" if width < 640 else "changes") + "-desc"], shown
    chart = page.evaluate("() => { const s = [...document.querySelectorAll('svg')].find(s => s.getBoundingClientRect().width > 0); return [s.getBoundingClientRect().right, s.parentElement.scrollWidth, s.parentElement.clientWidth]; }")
    assert chart[0] <= inner_width and chart[1] <= chart[2], f"compare at {width} px: the chart needs sideways scrolling ({chart})"
    sizes = page.evaluate(CHART_TEXT_PX)
    assert sizes and min(sizes) >= MIN_CHART_TEXT_PX, f"compare at {width} px: chart text down to {min(sizes):.1f} px"
    # B / A and its badge sit next to the setup name, on screen without scrolling the table
    cells = page.evaluate("""() => [...document.querySelectorAll('table.changes tbody tr')].slice(0, 4).map(
        tr => tr.children[2].getBoundingClientRect().right)""")
    assert cells and max(cells) <= inner_width, f"compare at {width} px: the B / A column is off-screen"
    shot = keep(f"compare-keepalive-{width}.png")
    if shot:
        page.screenshot(path=str(shot), full_page=True)
    page.close()

