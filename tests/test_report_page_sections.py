"""Tests of wrkreport.report.page_sections: each section builder on real fixture runs, what it computes and that together they are the page.

build_page is the list page.SECTIONS; each builder is a function of the analysed run (and the
output directory, for links) returning its part of the page's fields. Each test reads a
fixture run once per module (functools.cache; about 0.3 s a run) and checks one builder
against the run's own analysis, records and checks, not against numbers written here.
"""

from __future__ import annotations

import functools
from dataclasses import fields
from pathlib import Path

import pytest

from wrkreport.analysis import (
    analyze,  # analyze.load_analysis: conftest's parsed_and_drawn_once keeps each analysis
    reference,
)
from wrkreport.core.latency_histogram import SHOWN_PERCENTILES
from wrkreport.report import page_sections as sections
from wrkreport.report.page import SECTIONS, Page

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # analyses the fixture runs the other report modules analyse too

RUNS = Path(__file__).parent / "fixtures" / "runs"
OUT = RUNS.parent / "reports-out"  # links are made relative to it; nothing is written


@functools.cache
def analysed(name: str):
    """Return a fixture run's analysis (read once per process)."""
    return analyze.load_analysis(RUNS / name)


def test_the_sections_together_are_the_page_each_field_given_once():
    done = analysed("default-2cores")
    given = [key for builder in SECTIONS for key in builder(done, OUT)]
    assert sorted(given) == sorted(set(given))  # no field from two builders
    assert set(given) | {"generated_at", "version", "charts", "article"} == {f.name for f in fields(Page)}  # article: with_charts


def test_the_heading_names_the_run_front_end_and_backend_and_its_status_with_the_precision_badge():
    done = analysed("default-2cores")
    part = sections.heading(done, OUT)
    assert part["run_id"] == done.run.run_id and part["title"].endswith(f"run {done.run.run_id}")
    assert part["front"] == "nginx" and part["backend"] == "Go" and "nginx in front of Go" in part["title"]
    assert part["status"] == done.checks.status
    assert part["badge"] == sections.header_badge(done.checks.status, part["precision_badge"])
    assert part["status_counts"].startswith(f"{len(done.checks.failures)} check")


def test_the_heading_of_an_app_run_says_the_app_is_behind_the_front_end():
    part = sections.heading(analysed("app-flask"), OUT)
    assert part["backend"] == "your app" and "in front of your app" in part["title"]


def test_the_answer_section_gives_the_sentence_the_precision_note_and_the_settings():
    done = analysed("verdict-default")
    part = sections.answer_section(done, OUT)
    assert part["precision"] == done.analysis.precision_note and part["precision"]
    assert part["answer"].sentence.startswith("The cheapest connection is ") and part["answer"].groups
    assert isinstance(part["settings"], str)


def test_the_throughput_section_has_a_row_per_cell_a_ratio_per_non_baseline_cell_and_each_comparison():
    done = analysed("default-2cores")
    part = sections.throughput_section(done, OUT)
    assert len(part["results"]) == len(done.analysis.cells)
    assert {(r.setup, r.group) for r in part["ratios"]} >= {(r.setup, r.group) for r in part["ratios"] if r.setup != "go-http"}
    assert len(part["comparisons"]) == len(done.analysis.comparisons)
    assert all(" - " in line for line in part["comparisons"])


def test_the_latency_section_has_one_row_per_histogram_cell_and_the_fixed_rate_part():
    done = analysed("quick-rates-slo")
    part = sections.latency_section(done, OUT)
    assert part["latency_percentiles"] == tuple(f"p{p:g}" for p in SHOWN_PERCENTILES)
    assert len(part["latency_rows"]) == len(done.latencies)
    assert part["rate"].rows  # the run measured at fixed rates


def test_the_cpu_section_names_the_load_generator_and_has_a_row_per_cell_with_cpu():
    done = analysed("verdict-default")
    part = sections.cpu_section(done, OUT)
    assert part["client"] == "wrk" and part["sharing"]
    assert [(r.setup, r.group) for r in part["cpu"]] == [
        (c.setup, sections.group_name(c.gomaxprocs, c.connections, False)) for c in done.analysis.cells
    ]
    assert sections.cpu_section(analysed("quick-1-repeat"), OUT)["cpu"] == ()  # no CPU recorded: no table


def test_the_checks_section_lists_every_measurement_and_every_check():
    done = analysed("fcgi-unix-502")
    part = sections.checks_section(done, OUT)
    assert len(part["measurements"]) == len(done.table)
    assert sum(len(group.rows) for group in part["checks"]) == len(done.checks.checks)
    assert len(part["headers"]) == len(done.run.headers)


def test_the_method_section_sets_the_run_beside_the_2013_article_and_only_a_node_run_beside_the_2012_study():
    part = sections.method_section(analysed("default-2cores"), OUT)
    assert len(part["reference_rows"]) == len(reference.article_ratios())
    assert part["reference_note"].startswith(reference.article()["title"])
    assert part["study_rows"] == () and part["study_note"] == ""
    assert [s for s, _ in part["setups"]] == list(analysed("default-2cores").analysis.setups)


def test_the_conditions_section_lists_the_parameters_in_the_manifests_order_and_sysctl_sorted():
    done = analysed("default-2cores")
    part = sections.conditions_section(done, OUT)
    assert [k for k, _ in part["parameters"]] == list(done.run.parameters.names)
    assert [k for k, _ in part["sysctl"]] == sorted(done.run.record.sysctl or {})
    assert part["environment"][0][0] == "run status" and part["machines"] == ()  # one machine: no machine tables
    assert part["nginx_v"] == (done.run.record.nginx_v or "")


def test_the_conditions_of_a_two_machine_run_have_a_table_per_machine_and_the_round_trips():
    done = analysed("lab-two-clients")
    part = sections.conditions_section(done, OUT)
    assert len(part["machines"]) >= 2 and part["machines"][0].title == "controller: this machine"
    assert len(part["network"]) == len(done.run.record.rtt)


@pytest.mark.parametrize(
    ("name", "tls", "h2", "variant"),
    [
        ("default-2cores", False, False, False),
        ("tls-quick", True, False, False),
        ("h2-quick", False, True, False),
        ("variant-nokeep", False, False, True),
    ],
)
def test_the_setup_sections_appear_only_for_a_run_that_measured_those_setups(name, tls, h2, variant):
    part = sections.setup_sections(analysed(name), OUT)
    assert (part["tls"] is not None, part["h2"] is not None, part["variant"] is not None) == (tls, h2, variant)
