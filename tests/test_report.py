"""Tests of wrkreport.report: results.json / results.csv numbers, exclusions, a self-contained and escaped page."""

from __future__ import annotations

import csv
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from helpers import CAPTURED
from wrkreport.report import CSV_COLUMNS, build, fmt_ms, fmt_number

WHEN = datetime(2026, 11, 22, 12, 0, 0, tzinfo=timezone.utc)
EXTERNAL = re.compile(
    r"""(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:|//|ftp:)|url\(\s*["']?(?:https?:|//)|@import|<link\b|<script\b|<iframe\b""",
    re.I,
)


def outputs(out: Path) -> tuple[str, dict, list[dict]]:
    """Return the page, results.json and results.csv rows written into out."""
    html = (out / "index.html").read_text(encoding="utf-8")
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    with open(out / "results.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return html, data, rows


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # reads the page's text and files; the drawing is test_same_input_same_report's
def test_article_run_report_numbers(article_run, tmp_path):
    built = build(article_run, tmp_path / "out", WHEN)
    assert built.exit_code == 0 and built.status == "warn"
    html, data, rows = outputs(tmp_path / "out")
    throughput = {(r["gomaxprocs"], r["setup"]): r for r in data["ratios"]}
    assert set(throughput) == {(g, s) for g in (1, 8) for s in ("go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix")}
    assert throughput[(1, "nginx-http")]["ratio"] == pytest.approx(39991.57 / 42745.15)
    assert throughput[(8, "nginx-fcgi-unix")]["ratio"] == pytest.approx(30324.77 / 128402.88)
    assert throughput[(8, "nginx-fcgi-unix")]["ci_low"] is None and throughput[(8, "nginx-fcgi-unix")]["n"] == 1
    assert all(list(r)[:7] == ["gomaxprocs", "setup", "ratio", "ci_low", "ci_high", "n", "excluded"] for r in data["ratios"])
    assert len(data["measurements"]) == 8 and data["response_bytes_agreed"] == 176
    assert data["environment"]["machine"] is None  # no manifest: unknown, not guessed
    assert [r["file"] for r in rows] == [m["file"] for m in data["measurements"]]
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert rows[0]["check_status"] == "warn" and rows[0]["excluded"] == ""
    assert float(rows[0]["requests_per_sec"]) == 42745.15
    assert "At GOMAXPROCS=1 with nginx in front, the HTTP proxy keeps 94% (one repeat, no interval)" in html
    assert "every cell has 1 repeat" in html


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # reads the page's text and files; the drawing is test_same_input_same_report's
def test_report_with_a_502_setup_excludes_it_and_exits_1(make_run, tmp_path):
    path = make_run(
        {
            "go-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__latency.txt",
            "nginx-http.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__basic.txt",
            "nginx-fcgi-unix.gomaxprocs-1.run-1.wrk.txt": CAPTURED / "wrk-4.1.0__nginx-502-latency.txt",
        },
        manifest={"schema": 1, "status": "complete"},
    )
    built = build(path, tmp_path / "out", WHEN)
    assert built.exit_code == 1
    assert {c.name for c in built.failures} == {"non-2xx", "same-response"}
    html, data, rows = outputs(tmp_path / "out")
    unix = next(r for r in data["ratios"] if r["setup"] == "nginx-fcgi-unix")
    assert unix["ratio"] is None and unix["excluded"].startswith("every repeat was excluded (non-2xx: 89,261 of 89,261")
    by_file = {r["setup"]: r for r in rows}
    assert by_file["nginx-fcgi-unix"]["check_status"] == "fail" and by_file["nginx-fcgi-unix"]["excluded"].startswith("non-2xx")
    assert "ratio for nginx-fcgi-unix: every repeat was excluded" in html
    assert "2 checks failed." in html


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # reads the page's text and files; the drawing is test_same_input_same_report's
def test_page_is_self_contained(article_run, tmp_path):
    build(article_run, tmp_path / "out", WHEN)
    html = (tmp_path / "out" / "index.html").read_text()
    assert EXTERNAL.search(html) is None, EXTERNAL.search(html)
    assert (
        html.count('class="layout-wide"') == 4 and "<style>" in html
    )  # throughput, ratios, saturation latency, ratios beside the 2013 article (each also narrow)
    assert "<script" not in html.lower()


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # reads the page's text and files; the drawing is test_same_input_same_report's
def test_hostile_text_from_raw_files_is_escaped(make_run, tmp_path):
    text = (CAPTURED / "wrk-4.1.0__latency.txt").read_text()
    hostile = text.replace("http://127.0.0.1:18090/ok", "http://127.0.0.1/<script>alert(1)</script>")
    hostile += "<img src=x onerror=alert(2)>\n"  # Lua done() output is kept verbatim
    path = make_run(
        {
            "go-http.gomaxprocs-1.run-1.wrk.txt": hostile,
            "go-http.gomaxprocs-1.headers.txt": b"HTTP/1.1 200 OK\r\nX-Evil: <b>bold</b>\r\n\r\n",
        }
    )
    build(path, tmp_path / "out", WHEN)
    html = (tmp_path / "out" / "index.html").read_text()
    assert "<script>" not in html and "<img src=x" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;img src=x onerror=alert(2)&gt;" in html


def test_same_input_same_report(article_run, tmp_path):
    build(article_run, tmp_path / "a", WHEN)
    build(article_run, tmp_path / "b", WHEN)
    for name in ("index.html", "results.csv", "results.json"):
        a = (tmp_path / "a" / name).read_text().replace(str(tmp_path / "a"), "OUT")
        b = (tmp_path / "b" / name).read_text().replace(str(tmp_path / "b"), "OUT")
        assert a == b, name


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # reads the page's text and files; the drawing is test_same_input_same_report's
def test_links_are_relative_to_the_report(article_run, tmp_path):
    out = tmp_path / "reports"
    build(article_run, out, WHEN)
    html = (out / "index.html").read_text()
    links = re.findall(r'href="([^"#]+)"', html)
    assert links and all(not link.startswith("/") for link in links)
    assert all((out / link).resolve().exists() for link in links), [link for link in links if not (out / link).resolve().exists()]
    assert '<a href="../raw/article-2013/go-http.gomaxprocs-1.run-1.wrk.txt">' in html


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # reads the page's text and files; the drawing is test_same_input_same_report's
def test_outputs_are_replaced_not_appended(article_run, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text("old")
    build(article_run, out, WHEN)
    assert (out / "index.html").read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "results.csv", "results.json"]


@pytest.mark.parametrize("value, text", [(None, "-"), (0.81495, "0.815"), (12.345, "12.3"), (999.4, "999"), (1210.0, "1,210")])
def test_fmt_ms(value, text):
    assert fmt_ms(value) == text


def test_fmt_number():
    assert (fmt_number(14812.346), fmt_number(14812.346, 2), fmt_number(float("nan"))) == ("14,812", "14,812.35", "-")


def test_fmt_ratio_names_what_a_ratio_of_one_is():
    from wrkreport.core.records import Ratio
    from wrkreport.report import fmt_ratio

    assert fmt_ratio(Ratio("requests_per_sec", 1, "go-http", 1.0, None, None, 5)) == "1 (baseline)"
    assert fmt_ratio(Ratio("requests_per_sec", 1, "nginx-static", 1.0, None, None, 5, baseline="nginx-static")) == "1 (the ceiling)"
    assert fmt_ratio(Ratio("requests_per_sec", 1, "go-http", 0.62, 0.6, 0.64, 5, baseline="nginx-static")) == "0.620 (0.600-0.640)"
    assert fmt_ratio(Ratio("requests_per_sec", 1, "nginx-http", 0.5, None, None, 1)) == "0.500 (n=1, no interval)"


def test_report_package_doctests_and_module_shape():
    """The examples in the report's docstrings hold; each module opens with its one-line job and stays small."""
    import doctest
    import importlib
    import pkgutil

    import wrkreport.cli
    import wrkreport.report

    names = [m.name for m in pkgutil.iter_modules(wrkreport.report.__path__)]
    assert {"fmt", "words", "page", "render", "files", "terminal", "compare_page"} <= set(names)
    tried = 0
    for module in [wrkreport.report, wrkreport.cli, *(importlib.import_module(f"wrkreport.report.{n}") for n in names)]:
        failures, count = doctest.testmod(module)
        assert failures == 0, module.__name__
        tried += count
        source = Path(module.__file__).read_text(encoding="utf-8")
        assert source.startswith('"""') and source.splitlines()[0].endswith((".", '"""')), module.__name__
        assert len(source.splitlines()) <= 500, module.__name__
    assert tried >= 7  # fmt 4, evidence.link, files.csv_cell, cli.printable


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # reads the page's text and files; the drawing is test_same_input_same_report's
def test_compiled_templates_are_cached_per_user_and_give_the_same_page(article_run, tmp_path, monkeypatch):
    """The second build reads report.html's compiled code from the cache (keyed by the template's text) and writes the same page."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    when = datetime(2026, 11, 22, 12, tzinfo=timezone.utc)
    build(article_run, tmp_path / "first", when)
    cached = sorted((tmp_path / "cache" / "wrkreport").glob("templates-*/*.cache"))
    assert len(cached) == 6, cached  # report.html, base.html, style.css, answer.html, fixed_rate.html, variant.html
    stamps = [p.stat().st_mtime_ns for p in cached]
    build(article_run, tmp_path / "second", when)
    assert [p.stat().st_mtime_ns for p in cached] == stamps  # read, not compiled and written again
    page = lambda folder: (tmp_path / folder / "index.html").read_text(encoding="utf-8").replace(str(tmp_path / folder), "")
    assert page("first") == page("second")
    monkeypatch.setenv("WRKREPORT_NO_TEMPLATE_CACHE", "1")
    build(article_run, tmp_path / "third", when)
    assert page("third") == page("first")


@pytest.mark.usefixtures("parsed_and_drawn_once_here")  # reads the page's text and files; the drawing is test_same_input_same_report's
def test_an_unwritable_cache_folder_only_costs_time(article_run, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a-file"))
    (tmp_path / "a-file").write_text("not a folder")
    build(article_run, tmp_path / "out", datetime(2026, 11, 22, 12, tzinfo=timezone.utc))
    assert (tmp_path / "out" / "index.html").is_file()
