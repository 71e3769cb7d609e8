"""Tests of wrkreport.report on a hostile run directory (issue 14): links no browser reads as a scheme, a CSP, a safe CSV."""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from helpers import RUNS
from wrkreport.cli import cli
from wrkreport.report import build, build_compare

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # builds copies of fixture runs, one field changed

WHEN = datetime(2026, 11, 22, 12, 0, 0, tzinfo=timezone.utc)
SCHEME = re.compile(r"^[a-z][a-z0-9+.\-]*:", re.I)  # RFC 3986 scheme, as a browser would read it
EVIL_FILE = "javascript:alert(document.domain);x.wrk.txt"
EVIL_LISTED = "javascript:alert(1)"
RESOURCE_ATTRIBUTES = ("src", "href", "xlink:href", "data", "poster", "srcset", "action", "formaction")


class Attributes(HTMLParser):
    """Collect (tag, attribute, value) of every start tag, and the head's meta tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.found.extend((tag, name, value or "") for name, value in attrs)


def attributes(page: str) -> list[tuple[str, str, str]]:
    """Return (tag, attribute, value) for every attribute in the page, character references decoded."""
    parser = Attributes()
    parser.feed(page)
    return parser.found


def hrefs(page: str) -> list[str]:
    """Return every href of the page as a browser reads it (entities decoded, outer spaces ignored)."""
    return [html.unescape(value).strip() for _, name, value in attributes(page) if name in ("href", "xlink:href")]


@pytest.fixture
def hostile_run(tmp_path) -> Path:
    """Return a copy of a real run with a wrk file named `javascript:...` and a manifest entry naming `javascript:alert(1)`."""
    run = tmp_path / "raw" / "quick-1-repeat"
    shutil.copytree(RUNS / "quick-1-repeat", run)
    shutil.copyfile(run / "go-http.gomaxprocs-1.run-1.wrk.txt", run / EVIL_FILE)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["measurements"].append({"setup": "go-http", "gomaxprocs": 1, "repeat": 2, "file": EVIL_LISTED, "command": "wrk"})
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def test_no_href_starts_with_a_scheme_when_out_is_the_run_directory(hostile_run):
    result = CliRunner().invoke(cli, ["build", str(hostile_run), "--out", str(hostile_run)], standalone_mode=False, catch_exceptions=False)
    assert result.return_value == 0, result.stderr
    page = (hostile_run / "index.html").read_text(encoding="utf-8")
    links = hrefs(page)
    assert links and [h for h in links if SCHEME.match(h)] == []
    assert [h for h in links if not h.startswith(("./", "../", "#"))] == []  # '#': the charts' in-page references
    # Both hostile names are still linked, percent-encoded, and the file's link still leads to the file.
    assert "./javascript%3Aalert%28document.domain%29%3Bx.wrk.txt" in links
    assert "./javascript%3Aalert%281%29" in links
    assert (hostile_run / unquote("./javascript%3Aalert%28document.domain%29%3Bx.wrk.txt")).read_bytes() == (
        hostile_run / EVIL_FILE
    ).read_bytes()
    # Ordinary links still resolve to the files they name.
    for link in links:
        if link.endswith(".wrk.txt") and "javascript" not in link:
            assert (hostile_run / unquote(link)).is_file(), link


def test_compare_page_links_are_relative_paths_too(tmp_path):
    evil = tmp_path / "javascript:alert(2)"
    shutil.copytree(RUNS / "quick-1-repeat", evil)
    _, paths = build_compare(RUNS / "default-2cores", evil, tmp_path, WHEN)
    every = hrefs(paths["compare.html"].read_text(encoding="utf-8"))
    links = [h for h in every if not h.startswith("#")]  # the rest are the chart's own references inside its SVG
    assert len(links) == 2 and [h for h in every if SCHEME.match(h)] == []
    assert links[1] == "./javascript%3Aalert%282%29/"
    assert (tmp_path / unquote(links[1])).resolve() == evil.resolve()


def test_pages_carry_a_policy_that_forbids_script_and_remote_loads(tmp_path):
    run = tmp_path / "raw" / "default-2cores"
    shutil.copytree(RUNS / "default-2cores", run)
    build(run, tmp_path / "reports", WHEN)
    _, paths = build_compare(run, RUNS / "quick-1-repeat", tmp_path / "reports", WHEN)
    for page in ((tmp_path / "reports" / "index.html").read_text(encoding="utf-8"), paths["compare.html"].read_text(encoding="utf-8")):
        head = page[: page.index("</head>")]
        policies = [value for tag, name, value in attributes(head) if tag == "meta" and name == "content" and "default-src" in value]
        assert len(policies) == 1 and head.index("Content-Security-Policy") < head.index("<style>")
        directives = {d.split()[0]: d.split()[1:] for d in policies[0].split(";") if d.strip()}
        assert directives["default-src"] == ["'none'"] and "script-src" not in directives  # so no script at all
        assert directives["base-uri"] == ["'none'"] and directives["form-action"] == ["'none'"]
        assert set(directives) <= {"default-src", "style-src", "img-src", "base-uri", "form-action"}
        assert directives["style-src"] == ["'unsafe-inline'"] and directives["img-src"] == ["data:"]
        # The page needs nothing the policy forbids: only in-page references and data: images load.
        for tag, name, value in attributes(page):
            if name in RESOURCE_ATTRIBUTES and tag != "a":
                assert value.startswith(("#", "data:")), (tag, name, value)
        assert re.findall(r"url\(\s*['\"]?(?!#|data:)", page) == []
        assert "<script" not in page.lower()


@pytest.mark.parametrize(
    "command, written",
    [
        ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
        ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
        ("@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("\t=1+2", "'\t=1+2"),
        ("-1.5", "-1.5"),  # a number stays a number
        ("wrk -t2 -c100 http://127.0.0.1:8080/", "wrk -t2 -c100 http://127.0.0.1:8080/"),
    ],
)
def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised(tmp_path, command, written):
    run = tmp_path / "raw" / "quick-1-repeat"
    shutil.copytree(RUNS / "quick-1-repeat", run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["command"] = command
    for entry in manifest["measurements"]:
        entry["command"] = command
    (run / "manifest.json").write_text(json.dumps(manifest))
    build(run, tmp_path / "out", WHEN)
    with open(tmp_path / "out" / "results.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 8 and {r["command"] for r in rows} == {written}
    # Numeric columns stay plain numbers, and results.json keeps the text as it was.
    assert all(float(r["requests_per_sec"]) > 0 and float(r["latency_p99_ms"]) > 0 for r in rows)
    data = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert {m["command"] for m in data["measurements"]} == {command} and data["environment"]["command"] == command
