"""The page of an --app run speaks of the app: its method sentences divide by `app`, its CPU note counts the app's session,
and the 2013 article's hello world is not set beside it (a real run: tests/fixtures/runs/app-flask, Flask under gunicorn)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from wrkreport.analysis.analyze import load_analysis
from wrkreport.core.setups import divisor_words, said_over
from wrkreport.report.terminal import summary_table
from wrkreport.report.verdict import verdict

from helpers import RUNS, built_fixture_page, visible_text

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # builds app-flask

WHEN = datetime(2026, 11, 27, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def app_page(tmp_path_factory, parsed_and_drawn_once) -> str:
    return built_fixture_page("app-flask", tmp_path_factory.mktemp("app-words"), WHEN)


def test_no_sentence_of_an_app_run_divides_by_go_http(app_page):
    words = visible_text(app_page.split('id="environment"')[0])  # the parameters list every port the driver knows: not a sentence
    said = words.replace("at light load go-http alone answers with p99 about", "")  # how the default objective was set: a fact about go-http
    assert not re.findall(r".{60}\bgo-https?\b.{60}", said)
    assert "paired with app's round k" in words
    assert "Overhead ratio = setup's req/s / app's req/s" in words
    assert "of your app's whole session (its command and every process it started)" in words
    assert "÷ app's (95% CI)" in words


def test_an_app_run_has_no_2013_article_section(app_page):
    assert 'id="reference"' not in app_page and "Benchmarking Nginx with Go" not in app_page


def test_the_verdict_says_your_app_alone_where_a_hello_world_run_says_go_alone():
    done = load_analysis(RUNS / "app-flask")
    said = verdict(done.analysis, list(done.rates), list(done.capacities), done.run.parameters)
    for _, paragraph in said.paragraphs:
        assert paragraph.startswith("Added server CPU per request over your app alone: nginx in front of your app ")
        assert "; your app alone uses " in paragraph and " over app" not in paragraph and paragraph.count("over your app alone") == 1


def test_a_hello_world_runs_sentences_are_unchanged_and_a_mixed_run_names_both_divisors():
    text = "Within a block each setup's round k is paired with go-http's round k."
    assert said_over(text, ["go-http", "nginx-http"]) == text
    assert said_over(text, ["app", "nginx-app", "go-http"]) == (
        "Within a block each setup's round k is paired with go-http's (app's for your app's setups) round k.")
    assert divisor_words(["nginx-https", "go-https"]) == "go-http's"  # TLS setups say their own divisor where they are shown


def test_the_terminal_table_of_an_app_run_divides_by_app_without_naming_go_http():
    done = load_analysis(RUNS / "app-flask")
    said = summary_table(done.analysis, done.table)
    assert "go-http" not in said and "/ app" not in said
    assert "CPU per request vs app at 1: nginx-app " in said
