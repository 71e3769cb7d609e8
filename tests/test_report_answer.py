"""Tests of wrkreport.report.verdict: the top of the page in absolute units, on real runs (tests/fixtures/runs/)."""

from __future__ import annotations

import html as htmllib
import re
import shutil
from datetime import datetime, timezone

import pytest

from wrkreport.analysis.analyze import load_analysis
from wrkreport.core.stats import Interval
from wrkreport.fixedrate.analysis import RateCell
from wrkreport.report import build
from wrkreport.report.verdict import fmt_cores, fmt_us, latency_sentence, percentile_phrase, verdict

from helpers import RUNS

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # builds seven fixture runs, quick-rates-slo's 690,000 vegeta rows among them

WHEN = datetime(2026, 11, 27, tzinfo=timezone.utc)
DEFAULT_RUNS = [f"default-run-{i}" for i in range(1, 7)]
# Words a deployer should not meet before "How it was measured" (issue 32): estimators and their authors.
JARGON = ("Huber", "Welch", "Satterthwaite", "DerSimonian", "z-score", "Little's law", "Little&#39;s law", "coordinated omission",
          "M-estimate", "Student-t", "1.345 within-block")


def analysed(name: str):
    done = load_analysis(RUNS / name)
    return done, verdict(done.analysis, list(done.rates), list(done.capacities), done.run.parameters)


def text(html: str) -> str:
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.fixture(scope="module")
def pages(tmp_path_factory, parsed_and_drawn_once):
    """Return {run: its built index.html} for the runs the page tests read."""
    root = tmp_path_factory.mktemp("verdict")
    found = {}
    for name in ("default-run-1", "every-phase", "capacity-delay", "quick-rates-slo", "tls-both-modes", "sweep-all-setups", "variant-nokeep"):
        run = shutil.copytree(RUNS / name, root / "raw" / name)
        build(run, root / "out" / name, WHEN)
        found[name] = (root / "out" / name / "index.html").read_text()
    return found


@pytest.mark.parametrize("name", DEFAULT_RUNS)
def test_a_default_run_says_what_nginx_costs_in_microseconds_and_cores_in_about_80_words(name):
    done, said = analysed(name)
    assert [title for title, _ in said.paragraphs] == ["GOMAXPROCS=1", "GOMAXPROCS=2"]
    for title, paragraph in said.paragraphs:
        assert len(paragraph.split()) <= 90, (title, len(paragraph.split()), paragraph)
        assert paragraph.startswith("Added server CPU per request: the HTTP proxy ") and " core per 10,000 req/s)" in paragraph
        gomaxprocs = int(title.split("=")[1])
        cpu = {c.setup: c.metrics["cpu_server_ms_per_1k"].interval.estimate for c in done.analysis.cells if c.gomaxprocs == gomaxprocs}
        # the figure per setup is its mean server CPU per request (ms per 1,000 = us per request) minus go-http's
        assert f"the HTTP proxy {fmt_us(cpu['nginx-http'] - cpu['go-http'])} µs" in paragraph
        assert f"Go alone uses {fmt_us(cpu['go-http'])} µs" in paragraph
        assert f"({fmt_cores(cpu['nginx-http'] - cpu['go-http'])} core per 10,000 req/s)" in paragraph
    assert said.conditions.startswith("Conditions: a handler that does no work (a 12-byte Hello World); wrk and the servers sharing this machine's 2 CPUs")
    assert "CPU and throughput at saturation (100 connections," in said.conditions


def test_the_verdict_figures_are_the_cpu_tables_figures(pages):
    """One figure per fact: the verdict's us per request are the CPU table's means (ms per 1,000 requests), not a second estimate."""
    page = pages["default-run-1"]
    table = page.split('<h2 id="cpu">')[1].split("</table>")[0]
    rows = re.findall(r'<tr><td class="group">GOMAXPROCS=1</td><td class="setup">([^<]+)</td><td class="num">[^<]*</td><td class="num">[^<]*</td>'
                      r'<td class="num">([0-9.]+)', table)
    totals = {setup: float(total) for setup, total in rows}
    answer = text(page.split('aria-label="The answer"')[1].split("</section>")[0])
    first = answer.split("GOMAXPROCS=2.")[0]
    for setup, words in (("nginx-fcgi-tcp", "FastCGI over TCP"), ("nginx-fcgi-unix", "FastCGI over a Unix socket")):
        shown = float(re.search(rf"{words} ([0-9.]+) µs", first).group(1))
        assert shown == pytest.approx(totals[setup] - totals["go-http"], abs=1.0), (setup, shown, totals)


def test_the_answer_leads_with_absolute_units_and_the_conditions_then_the_relative_figures(pages):
    for name in ("default-run-1", "every-phase", "capacity-delay"):
        answer = pages[name].split('aria-label="The answer"')[1].split("</section>")[0]
        assert answer.index('class="verdict"') < answer.index('class="conditions"') < answer.index("Relative to Go alone"), name
        assert "µs" in text(answer).split("Relative to Go alone")[0] and "keeps" in text(answer).split("Relative to Go alone")[1]


def test_a_run_with_a_fixed_load_and_an_objective_gives_the_added_latency_and_the_capacity_up_top():
    _, said = analysed("capacity-ladder")
    ((title, paragraph),) = said.paragraphs
    assert "At 970 req/s (a fixed load), nginx adds 0.14 ms at p50 and nothing measurable at p99." in paragraph
    # the capacities with their intervals; the ratio only because its interval (0.81-0.97) excludes 1.0
    assert "Keeping p99 within 10 ms, Go alone carries 3,700 req/s (3,620-3,780), the HTTP proxy 3,280 (3,000-3,580; 0.89 of Go's)." in paragraph
    assert said.conditions.startswith("Conditions: a handler that sleeps 2 ms (a 12-byte Hello World)")
    assert "latency at a fixed load, open loop (vegeta, 4 starts)" in said.conditions


def test_a_capacity_ratio_whose_interval_includes_one_is_not_said_up_top():
    done, said = analysed("every-phase")
    for c in done.capacities:
        if c.ratio is not None and c.ratio.low is not None and c.ratio.low <= 1.0 <= c.ratio.high:
            assert f"{c.ratio.value:.2f} of" not in " ".join(p for _, p in said.paragraphs), c
    assert "~" not in " ".join(p for _, p in said.paragraphs)  # the --variant twins are the A/B section's


def rate_cell(setup: str, p50: Interval | None, p99: Interval | None = None) -> RateCell:
    return RateCell(setup, 1, 1000, 3, 3, 0, 900.0, 0.2, 1.0, 2.0, added_p50=p50, added_p99=p99, held_in=3)


def test_an_added_latency_across_zero_is_nothing_measurable_and_below_zero_is_less():
    across, above, below = Interval(0.17, -0.35, 0.68, 4), Interval(0.1, 0.05, 0.15, 4), Interval(-0.71, -0.9, -0.5, 4)
    assert percentile_phrase([rate_cell("nginx-http", across)], "added_p50", "p50") == "adds nothing measurable at p50"
    assert percentile_phrase([rate_cell("nginx-http", above), rate_cell("nginx-fcgi-tcp", Interval(0.2, 0.1, 0.3, 4))], "added_p50", "p50") == \
        "adds 0.1-0.2 ms at p50"
    mixed = percentile_phrase([rate_cell("nginx-http", above), rate_cell("nginx-fcgi-tcp", below)], "added_p50", "p50")
    assert mixed == "at p50 adds 0.1 ms through the HTTP proxy and 0.71 ms less through FastCGI over TCP"
    quiet = Interval(0.2, -0.1, 0.5, 4)
    said = latency_sentence([RateCell("go-http", 1, 1000, 3, 3, 0, 900.0, 0.1, 0.9, 1.5, held_in=3),
                             rate_cell("nginx-http", above, quiet), rate_cell("nginx-fcgi-tcp", below, quiet)], 1)
    assert said == ("At 1,000 req/s (a fixed load), nginx at p50 adds 0.1 ms through the HTTP proxy and 0.71 ms less through "
                    "FastCGI over TCP, and adds nothing measurable at p99.")
    base = RateCell("go-http", 1, 1000, 3, 3, 0, 900.0, 0.1, 0.9, 1.5, held_in=3)
    said = latency_sentence([base, rate_cell("nginx-http", across, across)], 1)
    assert said == "At 1,000 req/s (a fixed load), nginx adds nothing measurable at p50 or p99."
    assert "adds -" not in said and "adds nothing measurable" in said


def test_what_nginx_adds_at_a_fixed_load_leaves_gos_own_protocols_out():
    """In an h2 run go-h2 is measured over go-http too: its added latency is Go's h2, not nginx's, and is not said as nginx's."""
    base = RateCell("go-http", 1, 1000, 3, 3, 0, 900.0, 0.1, 0.9, 1.5, held_in=3)
    above = Interval(0.1, 0.05, 0.15, 4)
    said = latency_sentence([base, rate_cell("go-h2", Interval(0.5, 0.4, 0.6, 4)), rate_cell("nginx-h2", above)], 1)
    assert said.startswith("At 1,000 req/s (a fixed load), nginx adds 0.1 ms at p50") and "go-h2" not in said and "0.5" not in said


def test_no_estimator_is_named_before_how_it_was_measured(pages):
    for name, page in pages.items():
        reading = page.split('<h2 id="method">')[0]
        found = [word for word in JARGON if word in reading]
        assert not found, (name, found)
        method = page.split('<h2 id="method">')[1]
        assert "Huber" in method or "Student-t" in method or name.startswith("quick"), name  # the method is there, below


def test_the_header_has_one_badge_and_it_is_not_green_when_the_precision_target_was_missed(pages):
    for name, page in pages.items():
        header = page.split("</header>")[0]
        badges = re.findall(r'<span class="status status-(\w+)">([^<]+)</span>', header)
        assert len(badges) == 1, (name, badges)
        status, words = badges[0]
        if "precision target NOT met" in words:
            assert status != "pass", (name, badges)


def test_a_run_without_cpu_records_gives_each_setups_req_s_at_saturation():
    done, said = analysed("default-2cores")
    for (title, paragraph), gomaxprocs in zip(said.paragraphs, (1, 2)):
        go = done.analysis.cell(gomaxprocs, 100, "go-http").metrics["requests_per_sec"].geometric.estimate
        assert paragraph.startswith(f"At saturation Go alone serves {round(go, -2):,.0f} req/s, the HTTP proxy "), paragraph
    assert "CPU use not recorded; throughput at saturation" in said.conditions
