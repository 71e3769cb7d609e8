"""Tests of wrkreport.core.rate_result: exact percentiles by wrk's rank rule, the achieved rate, and a record that refuses impossible values."""

from __future__ import annotations

import random
import re

import pytest

from helpers import rate_result
from wrkreport.core.latency_histogram import percentile_us
from wrkreport.core.rate_result import RateResult


def test_percentiles_are_exact_by_the_rule_of_wrk_histograms():
    values = list(range(1_000_000, 11_000_000, 1_000_000))  # 1..10 ms
    r = rate_result(values)
    assert r.p50_ms == 6.0  # rank round(0.5 * 10 + 0.5) = 6, as wrk's stats_percentile
    assert r.p90_ms == 10.0 and r.p99_ms == 10.0 and r.max_ms == 10.0
    assert r.percentile_ms(40) == 5.0 and r.percentile_ms(0) == 1.0


def test_percentiles_agree_with_the_histogram_rule_on_random_data():
    rng = random.Random(7)
    values = [rng.randrange(50_000, 5_000_000) for _ in range(2345)]
    r = rate_result(values)
    pairs = sorted({v: values.count(v) for v in values}.items())
    for p in (50, 90, 99, 99.9, 100):
        assert r.percentile_ns(p) == percentile_us(pairs, p)
    assert r.max_ms == max(values) / 1e6


def test_the_achieved_rate_counts_intervals_between_starts():
    r = rate_result([100_000] * 101, span_s=1.0, offered=100)
    assert r.achieved_rps == pytest.approx(100.0) and r.achieved_share == pytest.approx(1.0)
    assert rate_result([1] * 51, span_s=1.0, offered=100).achieved_share == pytest.approx(0.5)
    assert rate_result([1], span_s=0.0, offered=100).achieved_rps is None


def test_to_dict_has_the_figures_and_not_the_latencies():
    d = rate_result([2_000_000, 1_000_000], offered=2, span_s=0.5).to_dict()
    assert d["p50_ms"] == 2.0 and d["max_ms"] == 2.0 and d["statuses"] == {"200": 2} and d["achieved_rps"] == 2.0
    assert "latencies_ns" not in d


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"requests": 5}, "requests is 5 but 3 latencies"),
        ({"statuses": ((200, 1),)}, "1 answered + 0 errors is not the 3 requests"),
        ({"timeouts": 1}, "timeouts must be between 0 and the errors (0)"),
        ({"body_bytes": ((12, 2),)}, "body sizes of 2 responses, but 3 were answered"),
        ({"span_s": 2.0, "duration_s": 1.0}, "span 2.0 s must be between 0 and the duration 1.0 s"),
        ({"offered_rps": 0}, "offered_rps must be > 0 or None"),
        ({"latencies_ns": (3, 2, 1)}, "latencies_ns must be sorted"),
    ],
)
def test_impossible_values_are_refused_with_the_value(changes, message):
    fields = dict(
        source="t",
        offered_rps=None,
        requests=3,
        span_s=0.5,
        duration_s=0.6,
        statuses=((200, 3),),
        errors=0,
        timeouts=0,
        error_messages=(),
        body_bytes=((12, 3),),
        latencies_ns=(1, 2, 3),
    )
    fields.update(changes)
    with pytest.raises(ValueError, match=re.escape(message)):
        RateResult(**fields)
