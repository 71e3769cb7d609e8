"""Tests of wrkreport.fixedrate.summary: what a setup does to latency is said as its interval allows ('adds' only above 0), and a rate held in some blocks says so."""

from __future__ import annotations

import doctest

import pytest

from wrkreport.core.stats import Interval
from wrkreport.fixedrate import summary
from wrkreport.fixedrate.analysis import RateCell
from wrkreport.fixedrate.summary import added_phrase, added_words, not_held_words


def test_the_doctests_hold():
    assert doctest.testmod(summary).failed == 0


@pytest.mark.parametrize("interval, said", [
    (Interval(0.17, -0.35, 0.68, 4), "no measurable difference at p99 (-0.350 to 0.680 ms)"),  # across 0: never 'adds'
    (Interval(-0.71, -0.95, -0.47, 4), "takes 0.710 ms off at p99 (0.470 to 0.950)"),  # below 0: never a negative 'adds'
    (Interval(0.0, 0.0, 0.0, 4), "no measurable difference at p99 (0 to 0 ms)"),
    (Interval(2.5, 1.9, 3.1, 4), "adds 2.50 ms at p99 (1.90 to 3.10)"),
    (None, "no figure at p99"),
])
def test_only_an_interval_above_zero_adds(interval, said):
    phrase = added_phrase(interval, "p99")
    assert phrase == said
    assert not phrase.startswith("adds -") and ("adds" not in phrase or interval.low > 0)


def cell(p50, p99, not_held=0, usable=4, held_in=4) -> RateCell:
    """Return an nginx-http cell at 1,000 req/s with these added latencies."""
    return RateCell("nginx-http", 1, 1000, 4, usable, not_held, 1000.0, 0.2, 0.5, 0.9, p50, p99, held_in=held_in)


def test_a_clause_per_setup():
    both = cell(Interval(0.1, 0.05, 0.15, 4), Interval(0.3, 0.1, 0.5, 4))
    assert added_words(both) == "nginx-http adds 0.100 ms at p50 (0.0500 to 0.150) and 0.300 ms at p99 (0.100 to 0.500)"
    mixed = cell(Interval(0.1, 0.05, 0.15, 4), Interval(0.17, -0.35, 0.68, 4))
    assert added_words(mixed) == "nginx-http: adds 0.100 ms at p50 (0.0500 to 0.150); no measurable difference at p99 (-0.350 to 0.680 ms)"


def test_a_rate_held_in_some_blocks_is_said_with_what_was_measured():
    assert not_held_words(cell(None, None, not_held=2, usable=2, held_in=2)) == (
        "nginx-http held it in 2 of 4 blocks (p50 0.200 ms, p99 0.500 ms there; nothing added)")
    assert not_held_words(cell(None, None, not_held=4, usable=0, held_in=0)) == "nginx-http held it in none of its 4 blocks"
    assert not_held_words(cell(None, None, usable=0, held_in=0)) == "nginx-http has no usable measurement"
