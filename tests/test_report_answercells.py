"""Tests of wrkreport.report.answercells: the answer table's cells, one function per column, each figure with its interval or what it is over."""

from __future__ import annotations

from wrkreport.analysis.rate_latency import RateCell
from wrkreport.core.stats import Interval
from wrkreport.report.answercells import Figure, GroupContext, added_figure, fmt_us, in_front, latency_figure, ms, span


def rate_cell(setup: str, p50: Interval | None, p99: Interval | None = None) -> RateCell:
    return RateCell(setup, 1, 1000, 3, 3, 0, 900.0, 0.2, 1.0, 2.0, added_p50=p50, added_p99=p99, held_in=3)


def test_an_added_latency_across_zero_is_none_measurable_and_below_zero_is_less():
    across, above, below = Interval(0.17, -0.35, 0.68, 4), Interval(0.1, 0.05, 0.15, 4), Interval(-0.71, -0.9, -0.5, 4)
    assert added_figure(across) == Figure("none", "-0.35 to 0.68") and added_figure(above) == Figure("+0.1", "0.05-0.15")
    assert added_figure(below) == Figure("-0.71", "-0.9 to -0.5") and added_figure(None) == Figure("-")
    base = RateCell("go-http", 1, 1000, 3, 3, 0, 900.0, 0.1, 0.9, 1.5, held_in=3)
    context = GroupContext(None, 1, 100, (base, rate_cell("nginx-http", above, across)), ())
    assert latency_figure(context, "go-http", "p50") == Figure("0.1", "its own")
    assert latency_figure(context, "nginx-http", "p99") == Figure("none", "-0.35 to 0.68")
    unheld = RateCell("nginx-fcgi-tcp", 1, 1000, 3, 0, 3, None, None, None, None, held_in=0)
    assert latency_figure(GroupContext(None, 1, 100, (base, unheld), ()), "nginx-fcgi-tcp", "p50") == Figure("not held", "held in 0 of 3")


def test_an_interval_reads_without_a_minus_beside_a_dash_and_with_a_figure_more_when_its_ends_would_read_the_same():
    assert span(0.09, 0.19, ms) == "0.09-0.19" and span(-0.35, 0.68, ms) == "-0.35 to 0.68" and span(-0.9, -0.5, ms) == "-0.9 to -0.5"
    assert span(22.6, 23.4, fmt_us) == "22.6-23.4" and span(13.0, 18.0, fmt_us) == "13-18"


def test_only_a_setup_with_nginx_in_front_has_an_addition_in_its_cpu_figure():
    assert [in_front(s) for s in ("nginx-http", "nginx-https-new", "nginx-http~nokeep", "nginx-static", "go-fasthttp", "go-https")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
