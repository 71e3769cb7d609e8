"""The page of an HTTP/2 run speaks of h2load and of nginx over Go's own h2 (a real run: tests/fixtures/runs/h2-quick,
`./run_bench.sh --quick --setups h2`): no sentence says nginx was not measured, none names wrk as its load generator."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from helpers import built_fixture_page, visible_text

WHEN = datetime(2026, 11, 27, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def h2_page(tmp_path_factory) -> str:
    return built_fixture_page("h2-quick", tmp_path_factory.mktemp("h2-words"), WHEN)


def test_the_answer_sends_the_reader_to_the_http2_sentence_instead_of_saying_no_nginx_was_measured(h2_page):
    said = visible_text(h2_page)
    assert "no nginx setup was measured beside go-http" not in said
    assert (
        said.count("nginx was measured only in front of Go's own HTTP/2 (go-h2): what it keeps is in the HTTP/2 sentence below.") == 1
    )  # one GOMAXPROCS value
    assert "nginx terminating h2 keeps" in said or "nginx terminating h2 serves" in said


def test_the_cpu_table_names_h2load_not_wrk(h2_page):
    head = re.search(r'<th class="num">([^<]*) CPU per thread</th><th class="num">([^<]*) share of machine</th>', h2_page)
    assert head and head.groups() == ("h2load", "h2load")
    assert "wrk CPU per thread" not in h2_page and "wrk ran more threads" not in h2_page


def test_littles_law_counts_every_stream_in_flight_so_multiplexed_setups_are_near_one_too(h2_page):
    said = visible_text(h2_page)
    sentence = said[said.index("Closed-loop latencies (h2load)") :].split("(near 1")[0]
    assert "requests in flight (connections x streams per connection)" in sentence
    figures = dict(re.findall(r"([a-z0-9-]+) GOMAXPROCS=1 ([0-9.]+)", sentence))
    assert {"go-http", "go-h2", "nginx-h2", "go-h2-mux", "nginx-h2-mux"} <= set(figures)
    assert all(0.5 < float(v) < 2 for v in figures.values()), figures  # -m 10 counted as 1 would put the -mux ones near 10


def test_the_saturation_latencies_are_said_to_be_h2loads(h2_page):
    said = visible_text(h2_page)
    assert "each repeat's own h2load figure" in said and "(h2load, closed loop)" in said
    assert "h2load's bytes per response must agree" in said and "wrk's bytes per response" not in said
