"""The page of an --app run speaks of the app: its method sentences divide by `app`, its CPU note counts the app's session,
and the 2013 article's hello world is not set beside it (a real run: tests/fixtures/runs/app-flask, Flask under gunicorn)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from helpers import RUNS, built_fixture_page, visible_text
from wrkreport.analysis import analyze  # analyze.load_analysis: conftest's parsed_and_drawn_once keeps each analysis
from wrkreport.core.setups import divisor_words, said_over
from wrkreport.report.answer import answer
from wrkreport.report.terminal import answer_lines

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # builds app-flask

WHEN = datetime(2026, 11, 27, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def app_page(tmp_path_factory, parsed_and_drawn_once) -> str:
    return built_fixture_page("app-flask", tmp_path_factory.mktemp("app-words"), WHEN)


def test_no_sentence_of_an_app_run_divides_by_go_http(app_page):
    words = visible_text(app_page.split('id="environment"')[0])  # the parameters list every port the driver knows: not a sentence
    said = words.replace(
        "at light load go-http alone answers with p99 about", ""
    )  # how the default objective was set: a fact about go-http
    assert not re.findall(r".{60}\bgo-https?\b.{60}", said)
    assert "paired with app's round k" in words
    assert "Overhead ratio = setup's req/s / app's req/s" in words
    assert "of your app's whole session (its command and every process it started)" in words
    assert "÷ app's (95% CI)" in words


def test_an_app_run_has_no_2013_article_section(app_page):
    assert 'id="reference"' not in app_page and "Benchmarking Nginx with Go" not in app_page


def app_answer():
    done = analyze.load_analysis(RUNS / "app-flask")
    return answer(done.analysis, list(done.rates), list(done.capacities), done.run.parameters, "your app")


def test_the_answer_says_your_app_alone_where_a_hello_world_run_says_go_alone():
    said = app_answer()
    assert said.sentence.startswith("nginx in front of your app, the only nginx connection measured: it adds ")
    assert " of server CPU per request over your app alone at GOMAXPROCS=1 and " in said.sentence and " over app" not in said.sentence
    for group in said.groups:
        assert [(r.setup, r.name) for r in group.rows] == [("app", "your app alone"), ("nginx-app", "nginx in front of your app")]
    assert [c.head for c in said.columns if c.key == "share"] == ["share of your app's req/s"]


def test_a_hello_world_runs_sentences_are_unchanged_and_a_mixed_run_names_both_divisors():
    text = "Within a block each setup's round k is paired with go-http's round k."
    assert said_over(text, ["go-http", "nginx-http"]) == text
    assert said_over(text, ["app", "nginx-app", "go-http"]) == (
        "Within a block each setup's round k is paired with go-http's (app's for your app's setups) round k."
    )
    assert divisor_words(["nginx-https", "go-https"]) == "go-http's"  # TLS setups say their own divisor where they are shown


def test_the_terminal_table_of_an_app_run_divides_by_app_without_naming_go_http():
    said = answer_lines(app_answer())
    assert "go-http" not in said and "Go alone" not in said
    rows = [line.split() for line in said.splitlines() if line.startswith(("app ", "nginx-app "))]
    assert [row[0] for row in rows] == ["app", "nginx-app"] * 2 and rows[0][-1] == "100%"  # your app is the 100%
