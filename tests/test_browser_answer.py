"""The answer box in real Chromium (Playwright driving the system browser): on a phone's first screen, the sentence and the cheapest connection's every figure under its column's name.

Set WRKREPORT_SCREENSHOT_DIR to keep the screenshots for a look.
"""

from __future__ import annotations

import pytest

from browser_pages import BINARY, keep

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(BINARY is None, reason="Chromium is not installed (apt-get install chromium); the page was not opened"),
]

# A default run (CPU, blocks), the fixed load and the capacity, every phase, an --app run, TLS, one without CPU records.
RUN_NAMES = ("default-run-1", "capacity-ladder", "quick-rates-slo", "every-phase", "app-flask", "tls-both-modes", "default-2cores")
PHONE = {"width": 390, "height": 844}

# Where the sentence and each figure of the first marked row (with its column's name above it) are drawn.
BOXES = """() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width}; };
  const row = document.querySelector('table.answer-table tr.cheapest');
  return {
    scrollWidth: document.documentElement.scrollWidth,
    sentence: box(document.querySelector('.answer p.lead')),
    setup: row ? box(row.querySelector('th.setup')) : null,
    figures: row ? [...row.querySelectorAll('td')].map(td => ({figure: box(td.querySelector('.figure')), label: box(td.querySelector('.label')),
                                                               text: td.querySelector('.label').textContent})) : [],
  };
}"""


def on_screen(box: dict, width: int, height: int) -> bool:
    """Return True when a box is drawn, wholly within the first screen."""
    return box["width"] > 0 and box["top"] >= 0 and box["bottom"] <= height and box["left"] >= 0 and box["right"] <= width


@pytest.mark.parametrize("name", RUN_NAMES)
def test_a_phones_first_screen_shows_the_sentence_and_the_cheapest_connections_every_figure_with_its_column_name(browser, reports, name):
    page = browser.new_page(viewport=PHONE)
    page.goto(reports[name].as_uri())
    found = page.evaluate(BOXES)
    if (path := keep(f"answer-{name}-390.png")) is not None:
        page.screenshot(path=str(path))
    page.close()
    width, height = PHONE["width"], PHONE["height"]
    assert found["scrollWidth"] == width, found["scrollWidth"]
    assert on_screen(found["sentence"], width, height), found["sentence"]
    if name == "default-2cores" or found["setup"] is not None:
        assert found["setup"] is not None and on_screen(found["setup"], width, height), found["setup"]
        assert found["figures"], "no figure in the marked row"
        for cell in found["figures"]:
            assert cell["text"].strip() and on_screen(cell["label"], width, height), cell  # the column's name, above its figure
            assert on_screen(cell["figure"], width, height) and cell["label"]["bottom"] <= cell["figure"]["top"] + 1, cell


@pytest.mark.parametrize("name", ["default-run-1", "every-phase", "quick-rates-slo"])
def test_a_wide_screen_shows_the_answer_as_one_table_with_its_heads(browser, reports, name):
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(reports[name].as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") == 1300  # the heads' units wrap; quick-rates-slo's once made it 1,314
    heads = page.evaluate(
        "() => [...document.querySelectorAll('table.answer-table thead th')].map(th => th.getBoundingClientRect().height)"
    )
    labels = page.evaluate(
        "() => [...document.querySelectorAll('table.answer-table .label')].filter(e => e.getBoundingClientRect().width > 0).length"
    )
    rows = page.evaluate(
        "() => new Set([...document.querySelector('table.answer-table tr.cheapest').querySelectorAll('td')].map(td => Math.round(td.getBoundingClientRect().top))).size"
    )
    if (path := keep(f"answer-{name}-1300.png")) is not None:
        page.screenshot(path=str(path))
    page.close()
    assert heads and all(h > 0 for h in heads) and labels == 0  # the heads above the columns; no label beside each figure
    assert rows == 1  # a setup's figures side by side on one row
