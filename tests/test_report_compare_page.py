"""Tests of wrkreport.report.compare_page: the compare page from real fixture runs, a title naming the difference, better/worse badges, a chart, links to reports."""

from __future__ import annotations

import html
import json
import re
import shutil
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import unquote

import pytest

from helpers import RUNS, run_wrkreport
from wrkreport.analysis import analyze  # analyze.load_analysis: conftest's parsed_and_drawn_once keeps each analysis
from wrkreport.compare.two_runs import compare
from wrkreport.report import build, build_compare
from wrkreport.report.compare_words import change_kind, compare_title

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # compares fixture runs, the same ones in several tests

WHEN = datetime(2026, 11, 22, 12, tzinfo=timezone.utc)
ROW = re.compile(
    r'<tr class="change-([a-z-]+)"><td class="setup">([^<]+)<br><span class="group">([^<]+)</span></td><td class="figure">([^<]+)</td>(.*?)</tr>',
    re.S,
)
HREF = re.compile(r'href="([^"#][^"]*)"')


def page_of(tmp_path: Path, a: str, b: str) -> str:
    """Return the compare.html of fixture runs a and b."""
    _, paths = build_compare(RUNS / a, RUNS / b, tmp_path / f"{a}-{b}", WHEN)
    return paths["compare.html"].read_text(encoding="utf-8")


def rows_of(page: str) -> dict[tuple[str, str], tuple[str, str]]:
    """Return {(setup, figure): (kind, rest of the row)} of the changes table."""
    return {(setup, figure): (kind, rest) for kind, setup, _, figure, rest in ROW.findall(page)}


def h1(page: str) -> str:
    """Return the page's heading, unescaped."""
    return html.unescape(re.search(r"<h1>(.*?)</h1>", page).group(1))


@pytest.mark.parametrize(
    ("a", "b", "title"),
    [
        ("keepalive-on", "keepalive-off", "Upstream keep-alive on vs off"),
        ("keepalive-off", "keepalive-on", "Upstream keep-alive off vs on"),
        ("default-2cores", "quick-1-repeat", "Profile default vs quick; repeats 5 vs 1 (and 2 more differences)"),
        # only the seed differs: not a setting, so the title says so and names the runs
        ("keepalive-on", "keepalive-on-again", "keepalive-on vs keepalive-on-again: the same settings"),
    ],
)
def test_the_title_names_what_differs(tmp_path, a, b, title):
    page = page_of(tmp_path, a, b)
    assert h1(page) == title
    assert f"<title>{html.escape(title)}</title>" in page


def test_title_falls_back_to_a_recorded_key_and_skips_values_not_recorded():
    # default-2cores has no upstream_keepalive in its manifest (recorded before the option): not 'None vs on'.
    result = compare(analyze.load_analysis(RUNS / "default-2cores"), analyze.load_analysis(RUNS / "sweep-all-setups"))
    assert ("parameter", "upstream_keepalive", None, True) in result.differing
    assert compare_title(result.differing, "x", "y") == "GOMAXPROCS 1, 2 vs 2; repeats 5 vs 3 (and 3 more differences)"


def test_an_improvement_wears_a_better_badge_for_throughput_up_and_latency_down(tmp_path):
    page = page_of(tmp_path, "keepalive-off", "keepalive-on")
    rows = rows_of(page)
    kind, rest = rows[("nginx-http", "req/s (geometric mean)")]
    assert kind == "better" and '<span class="badge badge-better">better</span><br><strong>2.973 (1.679-5.263)</strong>' in rest
    assert "3.0x higher in B (1.7-5.3x); higher is better" in rest
    kind, rest = rows[("nginx-http", "p99 latency at saturation (geometric mean)")]
    assert kind == "better" and "2.7x lower in B (1.3-5.3x); lower is better" in rest
    assert rows[("nginx-fcgi-tcp", "ratio to go-http")][0] == "better"
    # go-http itself did not measurably change: not better, not worse, and not 'no change' either
    assert rows[("go-http", "req/s (geometric mean)")][0] == "inconclusive"
    body = page.split("</style>")[1]
    assert "status-warn" not in body and "badge-worse" not in body  # no warning badge on an improvement
    assert (
        '<span class="badge badge-better">better</span> nginx-http at GOMAXPROCS=2: 3.0x faster (1.7-5.3x) in B: 14,470 req/s in A, 43,017 in B.'
        in page
    )


def test_a_regression_wears_a_worse_badge_for_throughput_down_and_latency_up(tmp_path):
    rows = rows_of(page_of(tmp_path, "keepalive-on", "keepalive-off"))
    assert rows[("nginx-http", "req/s (geometric mean)")][0] == "worse"
    kind, rest = rows[("nginx-http", "p99 latency at saturation (geometric mean)")]
    assert kind == "worse" and "2.7x higher in B (1.3-5.3x); lower is better" in rest
    assert {kind for kind, _ in rows.values()} == {"worse", "inconclusive", "no-interval"}  # CPU per request: one-start runs, no start sd


def test_the_headline_is_a_sentence_with_numbers(tmp_path):
    page = page_of(tmp_path, "keepalive-on", "keepalive-off")
    answer = html.unescape(re.search(r'<section class="answer"[^>]*>\s*<p>(.*?)</p>', page, re.S).group(1))
    assert answer == (
        "B (keepalive-off) measured worse than A (keepalive-on) on 6 of the 11 figures compared and better on none; "
        "the largest change: nginx-http at GOMAXPROCS=2, 3.0x slower (1.7-5.3x)."
    )


def test_no_change_case_says_inconclusive_not_the_same(tmp_path):
    """keepalive-on-again repeats keepalive-on: nothing is flagged, and with one server start per run nothing is called 'no change' either."""
    page = page_of(tmp_path, "keepalive-on", "keepalive-on-again")
    rows = rows_of(page)
    assert len(rows) == 11 and {kind for kind, _ in rows.values()} == {
        "inconclusive",
        "no-interval",
    }  # CPU per request: no start sd, no interval
    body = page.split("</style>")[1]
    assert "badge-better" not in body and "badge-worse" not in body and '<ul class="changes">' not in body
    answer = re.search(r'<section class="answer"[^>]*>\s*<p>(.*?)</p>', page, re.S).group(1)
    assert answer.startswith(
        "No figure changed measurably between A (keepalive-on) and B (keepalive-on-again): of the 11 figures compared, 8 are inconclusive"
    )
    assert "no measurable change" not in page.lower()


def test_a_change_whose_interval_fits_the_band_is_no_change():
    """The rule set of the page: 'no change' only when the whole interval lies within 0.95-1.05."""
    result = compare(analyze.load_analysis(RUNS / "keepalive-on"), analyze.load_analysis(RUNS / "keepalive-on-again"))
    ratio = next(c for c in result.changes if (c.setup, c.metric) == ("nginx-http", "overhead_ratio"))
    assert change_kind(ratio) == "inconclusive"
    assert change_kind(replace(ratio, change=1.0, ci_low=0.97, ci_high=1.03)) == "same"
    assert change_kind(replace(ratio, change=1.0, ci_low=0.94, ci_high=1.03)) == "inconclusive"
    assert change_kind(replace(ratio, ci_low=None, ci_high=None)) == "no-interval"
    assert change_kind(replace(ratio, change=None, ci_low=None, ci_high=None)) == "none"


def test_the_chart_is_an_accessible_svg_with_one_row_per_figure(tmp_path):
    page = page_of(tmp_path, "keepalive-on", "keepalive-off")
    svgs = re.findall(r"<svg [^>]*>.*?</svg>", page, re.S)
    assert len(svgs) == 2  # the wide layout and the phone layout; CSS shows one
    for svg, name in zip(svgs, ("changes", "changes-narrow")):
        assert 'role="img"' in svg and f'aria-labelledby="{name}-title {name}-desc"' in svg
        assert f'<title id="{name}-title">Change from run A to run B, per setup and figure</title>' in svg
        desc = html.unescape(re.search(rf'<desc id="{name}-desc">(.*?)</desc>', svg, re.S).group(1))
        assert "11 figures" in desc and "6 worse, 2 inconclusive, 3 no interval" in desc and "3.0x slower (1.7-5.3x) in B" in desc
        for label in (
            "nginx-http, GOMAXPROCS=2: req/s",
            "nginx-fcgi-tcp, GOMAXPROCS=2: p99 latency at saturation",
            "1.0 = no change",
            "worse in B",
        ):
            assert label in svg, label
    assert 'class="chart chart-wide"' in page and 'class="chart chart-narrow"' in page
    assert "<script" not in page


def test_a_missing_figure_is_a_row_that_says_why(tmp_path):
    page = page_of(tmp_path, "default-2cores", "fcgi-unix-502")
    rows = rows_of(page)
    assert rows[("nginx-fcgi-unix", "p99 latency at saturation (geometric mean)")][0] == "none"
    assert "nothing usable in B (excluded or not measured)" in re.findall(r"<svg [^>]*>.*?</svg>", page, re.S)[0]


@pytest.fixture
def laid_out(tmp_path):
    """Return a folder as a user has it: raw/ with three runs, reports/ with two reports built, one of them for a decoy."""
    for name in ("keepalive-on", "keepalive-off", "keepalive-on-again"):
        shutil.copytree(RUNS / name, tmp_path / "raw" / name)
    build(tmp_path / "raw" / "keepalive-on", tmp_path / "reports" / "keepalive-on", WHEN)
    # A folder named after keepalive-off that holds another run's report must not be taken for its report.
    build(tmp_path / "raw" / "keepalive-on-again", tmp_path / "reports" / "keepalive-off", WHEN)
    return tmp_path


def test_links_go_to_existing_reports_else_to_the_raw_folder(laid_out):
    out = laid_out / "reports" / "compare"
    build_compare(laid_out / "raw" / "keepalive-on", laid_out / "raw" / "keepalive-off", out, WHEN)
    page = (out / "compare.html").read_text(encoding="utf-8")
    header = re.search(r"<header>.*?</header>", page, re.S).group(0)
    hrefs = HREF.findall(header)
    assert hrefs == ["../keepalive-on/index.html", "../../raw/keepalive-on/", "../../raw/keepalive-off/"]
    assert "no report built for it yet" in header
    for href in HREF.findall(page):
        assert ":" not in href.split("/")[0] and (out / unquote(href)).exists(), href  # relative, and there


def test_a_report_in_the_output_folder_and_one_beside_raw_are_found(laid_out):
    build(laid_out / "raw" / "keepalive-off", laid_out / "out", WHEN)  # `wrkreport build raw/<id> --out out`
    out = laid_out / "out"
    build_compare(laid_out / "raw" / "keepalive-on", laid_out / "raw" / "keepalive-off", out, WHEN)
    header = re.search(r"<header>.*?</header>", (out / "compare.html").read_text(encoding="utf-8"), re.S).group(0)
    assert HREF.findall(header) == ["../reports/keepalive-on/index.html", "../raw/keepalive-on/", "./index.html", "../raw/keepalive-off/"]


def test_compare_json_says_which_way_each_change_went(tmp_path):
    _, paths = build_compare(RUNS / "keepalive-off", RUNS / "keepalive-on", tmp_path, WHEN)
    data = json.loads(paths["compare.json"].read_text())
    p99 = next(c for c in data["changes"] if (c["setup"], c["metric"]) == ("nginx-http", "latency_p99_ms"))
    assert p99["change"] < 1 and p99["flagged"] and p99["better"] is True and p99["kind"] == "better"
    assert data["title"] == "Upstream keep-alive off vs on"


def test_the_terminal_says_better_or_worse_and_ends_with_the_headline(tmp_path):
    done = run_wrkreport("compare", str(RUNS / "keepalive-off"), str(RUNS / "keepalive-on"), "--out", str(tmp_path))
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert [line.split()[-1] for line in lines if "nginx-http" in line and "(" in line] == ["BETTER"] * 3
    assert "WORSE" not in done.stdout and max(len(line) for line in lines[2:-1]) <= 80
    assert (
        "p99 ms: wrk's at saturation (closed loop, mostly queueing), not at a fixed load." in lines
    )  # issue 21: no unlabelled saturation latency
    assert "B (keepalive-on) measured better than A (keepalive-off) on 6 of the 11 figures" in done.stdout.replace("\n", " ")
