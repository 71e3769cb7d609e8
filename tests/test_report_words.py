"""Tests of wrkreport.report.words: the page's words follow one rule set, 'no measurable overhead' only inside the stated band, 'inconclusive' otherwise."""

from __future__ import annotations

import math
import re

import pytest

from helpers import RUNS
from wrkreport.analysis import analyze  # analyze.load_analysis: conftest's parsed_and_drawn_once keeps each analysis
from wrkreport.core import stats
from wrkreport.core.records import Ratio
from wrkreport.core.setups import BASELINE
from wrkreport.report import words
from wrkreport.report.words import BAND_TEXT, SAME_HIGH, SAME_LOW, comparison_verdict, headline, judge, ratio_verdict

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # analyses fixture runs again for each of their tests

FIXTURE_RUNS = sorted(p.name for p in RUNS.iterdir() if p.is_dir())


@pytest.fixture(scope="module", params=FIXTURE_RUNS)
def analysis(request, parsed_and_drawn_once):
    """Return the analysis of one fixture run."""
    return analyze.load_analysis(RUNS / request.param).analysis


def measured(analysis):
    """Return the throughput ratios of a run that have a figure and are not the baseline."""
    return [r for r in analysis.ratios if r.ratio is not None and r.setup != BASELINE]


# --- Each rule, per fixture run ---------------------------------------------------------------


def test_no_measurable_overhead_only_when_the_whole_interval_lies_in_the_band(analysis):
    for ratio in measured(analysis):
        verdict = ratio_verdict(ratio)
        inside = ratio.has_interval and SAME_LOW <= ratio.ci_low <= 1.0 <= ratio.ci_high <= SAME_HIGH
        assert ("no measurable overhead" in verdict) == inside, (ratio, verdict)
        if inside:
            assert BAND_TEXT in verdict


def test_an_interval_through_one_but_outside_the_band_reads_inconclusive_with_repeats_to_settle_it(analysis):
    for ratio in measured(analysis):
        verdict = ratio_verdict(ratio)
        through_one = ratio.has_interval and ratio.ci_low <= 1.0 <= ratio.ci_high
        inside = ratio.has_interval and SAME_LOW <= ratio.ci_low and ratio.ci_high <= SAME_HIGH
        assert verdict.startswith("inconclusive") == (through_one and not inside), (ratio, verdict)
        if through_one and not inside:
            assert re.search(r"about \d+ more repeats? would settle it|more than 1,000 more repeats would be needed", verdict), verdict


def test_an_interval_below_one_reads_as_overhead_and_above_as_faster(analysis):
    for ratio in measured(analysis):
        verdict = ratio_verdict(ratio)
        plain = ratio.baseline == "go-http"  # the TLS setups name their divisor (go-https, go-https-new)
        if ratio.has_interval and ratio.ci_high < 1.0:
            assert verdict == f"costs {1 - ratio.ratio:.0%} of {'Go' if plain else ratio.baseline}'s throughput"
        elif ratio.has_interval and ratio.ci_low > 1.0:
            assert verdict == f"{ratio.ratio - 1:.0%} faster than {'Go standalone' if plain else ratio.baseline}"
        elif not ratio.has_interval:
            assert verdict.startswith("one repeat: no interval")


def test_head_to_heads_with_an_interval_through_one_are_inconclusive_never_alike(analysis):
    for c in analysis.comparisons:
        verdict = comparison_verdict(c)
        assert "cannot be told apart" not in verdict
        if c.ci_low is not None and c.ci_low <= 1.0 <= c.ci_high and not (SAME_LOW <= c.ci_low and c.ci_high <= SAME_HIGH):
            assert verdict.startswith("inconclusive"), verdict
        if c.ci_low is not None and not c.ci_low <= 1.0 <= c.ci_high:
            assert verdict == f"{c.setup_a} is faster (the interval excludes 1.0)"


def test_the_answer_says_no_overhead_only_inside_the_band_and_never_garbles_names(analysis):
    text = " ".join(headline(analysis))
    by_name = {words.MECHANISM.get(r.setup, r.setup): r for r in measured(analysis)}
    for name, ratio in by_name.items():
        if f"{name}: no measurable overhead" in text:
            assert SAME_LOW <= ratio.ci_low and ratio.ci_high <= SAME_HIGH
        if f"{name}: inconclusive" in text:
            assert ratio.ci_low <= 1.0 <= ratio.ci_high
    assert "cannot be told apart" not in text
    assert " and the HTTP proxy and " not in text
    assert "Nginx-" not in text  # a setup id keeps its case at the start of a sentence


# --- The rules themselves, on hand-made intervals ------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "kind"),
    [
        (0.96, 1.04, "same"),
        (0.95, 1.05, "same"),
        (0.36, 1.07, "inconclusive"),  # the issue's 36-107%: never "no measurable overhead"
        (0.94, 1.01, "inconclusive"),
        (0.48, 0.63, "lower"),
        (0.97, 0.99, "lower"),  # inside the band but excluding 1.0: a small overhead, measured
        (1.10, 1.30, "higher"),
    ],
)
def test_judge_sorts_intervals_by_the_band(low, high, kind):
    assert judge(math.sqrt(low * high), low, high, 5).kind == kind


def test_the_wide_head_to_head_of_the_issue_is_inconclusive():
    from wrkreport.analysis.cells import Comparison

    c = Comparison(2, 10, "nginx-http", "nginx-fcgi-unix", 2.580, 0.919, 7.246, 3)
    assert comparison_verdict(c).startswith("inconclusive")


def test_more_repeats_is_what_the_t_interval_needs_for_the_same_spread():
    """After the suggested repeats the interval, at the same spread, settles; one fewer and it would not."""
    low, high, n = 0.90, 1.11, 5
    estimate = math.sqrt(low * high)
    more = judge(estimate, low, high, n).more_repeats
    half = (math.log(high) - math.log(low)) / 2
    spread = half * math.sqrt(n) / stats.t_975(n - 1)
    needed = math.log(SAME_HIGH) - abs(math.log(estimate))

    def width(total: int) -> float:
        return stats.t_975(total - 1) * spread / math.sqrt(total)

    assert width(n + more) < needed <= width(n + more - 1)


def test_ratio_verdict_states_the_band_and_the_baseline_and_exclusions():
    base = Ratio("requests_per_sec", 1, "nginx-http", 1.0, 0.97, 1.03, 5)
    assert ratio_verdict(base) == f"no measurable overhead: the whole interval lies within {BAND_TEXT}"
    assert ratio_verdict(Ratio("requests_per_sec", 1, "nginx-http", None, None, None, 0, "every repeat was excluded")).startswith(
        "excluded"
    )
    assert ratio_verdict(Ratio("requests_per_sec", 1, "nginx-http", 0.5, None, None, 1)).startswith("one repeat")


def test_a_front_ends_run_names_the_front_end_of_every_share_and_the_cheapest_of_all():
    from wrkreport.report.words import headline

    paragraphs = headline(analyze.load_analysis(RUNS / "front-ends-quick").analysis)
    first = paragraphs[0]
    assert first.startswith("At GOMAXPROCS=1 with a front end in front, nginx's HTTP proxy keeps ")
    for name in ("HAProxy's HTTP proxy keeps", "Caddy's HTTP proxy keeps", "Apache httpd's FastCGI over TCP keeps"):
        assert name in first
    assert "The cheapest front end and connection here is " in first and "Go's and the front end's CPU time per request" in first
    plain = headline(analyze.load_analysis(RUNS / "default-run-4").analysis)[0]  # a run of nginx alone keeps its words
    assert "with nginx in front, the HTTP proxy keeps" in plain and "front end" not in plain
