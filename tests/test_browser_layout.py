"""The report and the compare page read anywhere, in real Chromium (Playwright driving the system browser): 390 px, 1400 px and on paper.

Set WRKREPORT_SCREENSHOT_DIR to keep the screenshots and the printed PDF for a look.
"""

from __future__ import annotations

import io
import re
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

import pytest

from browser_pages import BINARY, keep
from helpers import RUNS
from wrkreport.report import build_compare

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
pypdf = pytest.importorskip("pypdf", reason="pypdf is not installed (pip install -e '.[test]')")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(BINARY is None, reason="Chromium is not installed (apt-get install chromium); the page was not opened"),
]

RUN_NAMES = (
    "default-2cores",
    "default-blocks-2cores",
    "sweep-all-setups",
    "fcgi-unix-502",
    "quick-hist",
    "two-clients",
    "server-host",
    "tls-both-modes",
    "every-phase",
    "h2-quick",
)
# quick-hist: the latency CDF chart; two-clients, server-host: the Machines part (issue 12); tls-both-modes: the TLS part (issue 22);
# every-phase: a run with every phase the page has a section for (throughput blocks, CPU, TLS, --variant, fixed rates, capacity)
WIDTHS = (390, 1400)
MIN_CHART_TEXT_PX = 10
RATIO_HEADERS = ("group", "setup", "throughput ratio (95% CI)", "pairs", "what it says")

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
def compare_page(tmp_path_factory):
    """Return the compare.html of keepalive-on against keepalive-off (the fixture pair that differs in a setting)."""
    root = tmp_path_factory.mktemp("compare-layout")
    _, paths = build_compare(
        RUNS / "keepalive-on", RUNS / "keepalive-off", root / "reports", datetime(2026, 11, 22, 12, tzinfo=timezone.utc)
    )
    return paths["compare.html"]


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
@pytest.mark.parametrize(
    "name, titles",
    [
        ("two-clients", ["controller: this machine"]),
        ("server-host", ["controller: this machine", "target: root@10.231.0.2 (address 10.231.0.2)"]),
    ],
)
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

COMMON_TABLES = {
    "Throughput over Go alone",
    "Results per setup and GOMAXPROCS",
    "Measurements and their raw files",
    "Header captures (curl -sI)",
    "The 2013 article, for comparison",
}
GROUPED_TABLE_NAMES = {
    # every table of the page with a group column, by the heading above it (the reference table's is the 2013 article)
    "default-2cores": COMMON_TABLES,
    "default-blocks-2cores": COMMON_TABLES | {"Server CPU per request"},
    "sweep-all-setups": COMMON_TABLES | {"Server CPU per request"},
    "two-clients": COMMON_TABLES | {"Server CPU per request", "Exact latency percentiles at saturation"},
    "every-phase": COMMON_TABLES
    | {"Server CPU per request", "Exact latency percentiles at saturation", "TLS termination: nginx's OpenSSL or Go's crypto/tls"},
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
        assert (
            numbers and max(numbers) <= right
        ), f"{name} at {width} px, {table}: a number is off-screen ({max(numbers):.0f} > {right:.0f} px)"
    ratios = next(labels for table, labels, *_ in tables if table == "Throughput over Go alone")
    assert {text for text, _ in ratios} == (
        {"GOMAXPROCS=2, 10 connections", "GOMAXPROCS=2, 100 connections"}
        if name == "sweep-all-setups"
        else {"GOMAXPROCS=1", "GOMAXPROCS=2"}
        if name != "two-clients"
        else {text for text, _ in ratios}
    )


# --- Every section of the page, on a run with every phase ------------------------------------------------------------

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
# Sections the every-phase run cannot have, and the fixture runs whose pages the tests above check them on.
NOT_IN_EVERY_PHASE = {
    "machines": "a second machine: two-clients and server-host",
    "reference-2012": "node-http: the 2012 Go-vs-Node study",
    "h2": "h2-quick: the HTTP/2 setups (h2load loads a whole run: its own run)",
}
OTHER_RUN = {"machines": "two-clients", "reference-2012": None, "h2": "h2-quick"}  # where a section not in every-phase is tested here
# Per section at 390 px: what leaves the screen outside a box that scrolls (a .scroll table or a chart), table cells
# squeezed narrower than 3 characters (a heading set a letter per line), and tables with a group column that do not
# turn it into heading rows.
SECTION_LAYOUT = """(id) => {
  const start = document.getElementById(id);
  const inner = document.documentElement.clientWidth;
  const found = {wide: [], squeezed: [], ungrouped: [], elements: 0};
  for (let node = start; node && (node === start || node.tagName !== 'H2'); node = node.nextElementSibling) {
    for (const e of [node, ...node.querySelectorAll('*')]) {
      found.elements += 1;
      const box = e.getBoundingClientRect();
      if (box.width && box.right > inner + 1 && !e.closest('.scroll, .chart, pre, details:not([open])')) found.wide.push(e.tagName + ' ' + (e.textContent || '').trim().slice(0, 40));
    }
    for (const cell of node.querySelectorAll('th, td')) {
      const text = cell.textContent.trim(), box = cell.getBoundingClientRect();
      const em = parseFloat(getComputedStyle(cell).fontSize);
      if (box.width && text.length > 3 && cell.clientWidth - 12 < 3 * em * 0.55) found.squeezed.push(text.slice(0, 40) + ' ' + Math.round(box.width) + 'px');
    }
    for (const table of node.querySelectorAll('table')) {
      const head = table.querySelector('thead th');
      if (head && /^(group|GOMAXPROCS)/.test(head.textContent.trim()) && !table.classList.contains('grouped')) found.ungrouped.push(head.textContent.trim());
    }
  }
  return found;
}"""


def section_ids() -> list[str]:
    """Return the id of every section (h2) the report's templates can show, in the order of the page's template and its parts."""
    found = []
    for name in ("report.html", "fixed_rate.html", "variant.html"):
        found += re.findall(r'<h2 id="([^"]+)"', (TEMPLATES / name).read_text())
    return found


def test_the_every_phase_run_shows_every_section_a_page_can_have(browser, reports):
    """A new section of the page must be added to the every-phase run (or named here with the runs that have it)."""
    page = browser.new_page(viewport={"width": 390, "height": 900})
    page.goto(reports["every-phase"].as_uri())
    shown = page.evaluate("() => [...document.querySelectorAll('h2[id]')].map(h => h.id)")
    page.close()
    wanted = [s for s in section_ids() if s not in NOT_IN_EVERY_PHASE]
    assert len(wanted) >= 10 and set(wanted) <= set(
        shown
    ), f"sections missing from the every-phase page: {sorted(set(wanted) - set(shown))}"


@pytest.fixture(scope="module")
def phone_pages(browser):
    """Return a function of a built page giving it opened at 390 px, once per module: SECTION_LAYOUT only reads it, so every section's
    test reads the one load (a load of the every-phase page is about 2 s of Chromium's time, once per section before)."""
    opened = {}

    def phone_page(report: Path):
        if report not in opened:
            opened[report] = browser.new_page(viewport={"width": 390, "height": 900})
            opened[report].goto(report.as_uri())
        return opened[report]

    yield phone_page
    for page in opened.values():
        page.close()


@pytest.mark.parametrize("section", [s for s in section_ids() if s not in NOT_IN_EVERY_PHASE])
def test_each_section_of_the_every_phase_page_reads_on_a_phone(phone_pages, reports, section):
    assert_reads_on_a_phone(phone_pages(reports["every-phase"]), section)


def assert_reads_on_a_phone(page, section: str) -> None:
    """Fail when a section of a page opened at 390 px is empty, leaves the screen outside a scrolling box, squeezes cells or keeps a group column."""
    found = page.evaluate(SECTION_LAYOUT, section)
    assert found["elements"] > 1, f"{section}: nothing in the section"
    assert not found["wide"], f"{section} at 390 px: off the screen outside a scrolling box: {found['wide'][:4]}"
    assert not found["squeezed"], f"{section} at 390 px: cells squeezed to a letter or two per line: {found['squeezed'][:4]}"
    assert not found["ungrouped"], f"{section}: tables with a group column that stays a column on a phone: {found['ungrouped']}"


@pytest.mark.parametrize("section", [s for s, run in OTHER_RUN.items() if run])
def test_a_section_of_another_run_reads_on_a_phone(phone_pages, reports, section):
    assert_reads_on_a_phone(phone_pages(reports[OTHER_RUN[section]]), section)


def test_the_every_phase_page_prints_every_section(browser, reports):
    pdf, pages, text = printed(browser, reports["every-phase"])
    page = browser.new_page()
    page.goto(reports["every-phase"].as_uri())
    titles = page.evaluate("() => [...document.querySelectorAll('h2[id]')].map(h => h.textContent.trim())")
    page.close()
    on_paper = unicodedata.normalize("NFKC", text)  # the PDF's ligatures (ﬁ, ﬀ) as letters
    missing = [t for t in titles if re.sub(r"\s+", "", t) not in on_paper]
    assert not missing, f"sections not on paper: {missing}"
    print(f"printed every-phase report: {pages} pages (A4)")
    target = keep("every-phase.pdf")
    if target:
        target.write_bytes(pdf)


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
    shown = page.evaluate(
        "() => [...document.querySelectorAll('svg')].filter(s => s.getBoundingClientRect().width > 0).map(s => s.id || s.getAttribute('aria-labelledby'))"
    )
    assert shown == [
        ("changes-narrow" if width < 640 else "changes") + "-title " + ("changes-narrow" if width < 640 else "changes") + "-desc"
    ], shown
    chart = page.evaluate(
        "() => { const s = [...document.querySelectorAll('svg')].find(s => s.getBoundingClientRect().width > 0); return [s.getBoundingClientRect().right, s.parentElement.scrollWidth, s.parentElement.clientWidth]; }"
    )
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
