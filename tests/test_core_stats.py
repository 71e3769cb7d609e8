"""Tests of wrkreport.core.stats: the small statistics functions, against values worked out by hand or from tables."""

from __future__ import annotations

import doctest
import math
from statistics import NormalDist

import pytest

from wrkreport.core import between_runs, stats


def test_doctests():
    failures, tried = doctest.testmod(stats, optionflags=doctest.ELLIPSIS)
    assert tried > 5 and failures == 0


@pytest.mark.parametrize(
    "df, expected", [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (30, 2.042), (35, 2.030), (50, 2.009), (100, 1.984), (1000, 1.962)]
)
def test_t_975_matches_the_table_within_a_thousandth(df, expected):
    # Exact values (R: qt(0.975, df)) for the interpolated ones: 35 -> 2.0301, 50 -> 2.0086, 100 -> 1.9840, 1000 -> 1.9623.
    assert stats.t_975(df) == pytest.approx(expected, abs=0.0011)


def test_t_975_is_within_a_thousandth_of_scipy_at_every_degree_of_freedom_the_tool_meets():
    from scipy.stats import t

    worst = max(abs(stats.t_975(df) - t.ppf(0.975, df)) for df in range(1, 2001))
    assert worst <= 0.001, worst


def test_t_975_rejects_zero_degrees_of_freedom():
    with pytest.raises(ValueError, match="degrees of freedom must be >= 1, not 0"):
        stats.t_975(0)


def test_median_and_mad():
    assert stats.median([5.0]) == 5.0
    assert stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert stats.median_abs_dev([1.0, 1.0, 2.0, 2.0, 4.0, 6.0, 9.0]) == 1.0
    with pytest.raises(ValueError):
        stats.median([])


def test_mean_interval_by_hand():
    # mean 11, sd 1, n 3: half width = 4.303 * 1 / sqrt(3) = 2.4844
    found = stats.mean_interval([10.0, 11.0, 12.0])
    assert found.estimate == 11.0 and found.n == 3
    assert found.low == pytest.approx(11 - 4.303 / math.sqrt(3))
    assert found.high == pytest.approx(11 + 4.303 / math.sqrt(3))


def test_mean_interval_of_one_value_has_no_interval():
    found = stats.mean_interval([7.0])
    assert (found.estimate, found.low, found.high, found.n) == (7.0, None, None, 1)
    assert found.half_width_rel is None and not found.includes(7.0)


def test_ratio_interval_is_symmetric_on_the_log_scale():
    # Paired ratios 0.5, 0.6, 0.55 -> logs; the interval is exp(mean +/- t * sd / sqrt(n)).
    pairs = [(50.0, 100.0), (60.0, 100.0), (55.0, 100.0)]
    logs = [math.log(r) for r in (0.5, 0.6, 0.55)]
    centre = sum(logs) / 3
    sd = math.sqrt(sum((x - centre) ** 2 for x in logs) / 2)
    found = stats.ratio_interval(pairs)
    assert found.estimate == pytest.approx(math.exp(centre))
    assert found.low == pytest.approx(math.exp(centre - 4.303 * sd / math.sqrt(3)))
    assert found.high == pytest.approx(math.exp(centre + 4.303 * sd / math.sqrt(3)))
    assert found.estimate / found.low == pytest.approx(found.high / found.estimate)


def test_ratio_interval_of_identical_pairs_is_a_point():
    found = stats.ratio_interval([(90.0, 100.0), (45.0, 50.0)])
    assert found.estimate == pytest.approx(0.9)
    assert found.low == pytest.approx(0.9) and found.high == pytest.approx(0.9)


def test_ratio_interval_swapped_pairs_invert():
    pairs = [(50.0, 100.0), (61.0, 98.0), (55.0, 103.0), (58.0, 99.0)]
    forward = stats.ratio_interval(pairs)
    backward = stats.ratio_interval([(b, a) for a, b in pairs])
    assert backward.estimate == pytest.approx(1 / forward.estimate)
    assert backward.low == pytest.approx(1 / forward.high)


def test_ratio_interval_rejects_non_positive_values():
    with pytest.raises(ValueError, match="positive"):
        stats.ratio_interval([(0.0, 100.0)])


def test_interval_includes_and_half_width():
    found = stats.Interval(1.0, 0.96, 1.08, 5)
    assert found.includes(1.0) and not found.includes(1.09)
    assert found.half_width_rel == pytest.approx(0.08)


def test_modified_z_marks_only_the_outlier():
    values = [100.0, 101.0, 99.0, 100.5, 80.0]
    scores = {v: stats.modified_z(v, values) for v in values}
    assert abs(scores[80.0]) > 3.5
    assert all(abs(scores[v]) < 3.5 for v in values if v != 80.0)
    assert stats.modified_z(5.0, [5.0, 5.0, 5.0]) is None


def test_block_ratio_interval_is_a_t_interval_over_huber_block_summaries():
    blocks = [[(60.0, 100.0), (50.0, 100.0), (62.0, 100.0)], [(55.0, 100.0), (57.0, 100.0)], [(64.0, 100.0), (30.0, 100.0), (61.0, 100.0)]]
    logs = [[math.log(a / b) for a, b in block] for block in blocks]
    # The pooled scale: the median of the 7 within-block |differences| (0.182 here), as a normal sd.
    differences = sorted(abs(x - y) for block in logs for i, x in enumerate(block) for y in block[i + 1 :])
    scale = differences[3] / (NormalDist().inv_cdf(0.75) * math.sqrt(2))
    bound = 1.345 * scale
    # Blocks 1 and 2 have no round farther than the bound from their centre: their mean. In block 3
    # the 0.30 strays: at the fixed point its pull is worth exactly -bound, so the centre is
    # (log 0.64 + log 0.61 - bound) / 2 (a median would give log 0.61, a mean 0.1 lower).
    summaries = [sum(logs[0]) / 3, sum(logs[1]) / 2, (logs[2][0] + logs[2][2] - bound) / 2]
    assert all(abs(x - summaries[0]) <= bound for x in logs[0]) and abs(logs[2][1] - summaries[2]) > bound
    assert stats.block_summaries(logs) == pytest.approx(summaries, abs=1e-6)
    centre = sum(summaries) / 3
    sd = math.sqrt(sum((m - centre) ** 2 for m in summaries) / 2)
    found = stats.block_ratio_interval(blocks)
    assert (found.unit, found.blocks, found.n) == ("block", 3, 8)
    assert found.estimate == pytest.approx(math.exp(centre))
    assert found.low == pytest.approx(math.exp(centre - 4.303 * sd / math.sqrt(3)))
    assert found.high == pytest.approx(math.exp(centre + 4.303 * sd / math.sqrt(3)))


def test_huber_location_is_the_mean_for_agreeing_values_and_bounds_a_stray_one():
    assert stats.huber_location([1.0, 2.0, 3.0], 1.0) == pytest.approx(2.0)
    assert stats.huber_location([1.0, 2.0, 3.0], 0.0) == pytest.approx(2.0)  # no scale: the mean
    # One value 100 scales away moves the centre of four by k * scale / 3 (here 0.4483), not 25.
    assert stats.huber_location([0.0, 0.0, 0.0, 100.0], 1.0) == pytest.approx(1.345 / 3)
    assert stats.pooled_pair_scale([[0.0, 1.0], [5.0]]) == pytest.approx(1 / (NormalDist().inv_cdf(0.75) * math.sqrt(2)))


def test_one_block_falls_back_to_repeats_and_says_so():
    pairs = [(60.0, 100.0), (50.0, 100.0), (62.0, 100.0)]
    found = stats.block_ratio_interval([pairs, []])
    assert (found.unit, found.blocks) == ("repeat", 1)
    assert (found.low, found.high) == (stats.ratio_interval(pairs).low, stats.ratio_interval(pairs).high)


def test_interval_rejects_an_unknown_unit():
    with pytest.raises(ValueError, match="unit must be 'block' or 'repeat', not 'round'"):
        stats.Interval(1.0, None, None, 1, "round")


def test_stopping_rule_needs_blocks_and_every_interval_narrow():
    narrow = stats.Interval(0.6, 0.59, 0.61, 21, "block", 7)
    wide = stats.Interval(0.6, 0.5, 0.7, 21, "block", 7)
    repeats = stats.Interval(0.6, 0.59, 0.61, 21, "repeat", 1)
    assert stats.precision_met([narrow]) and not stats.precision_met([narrow, wide]) and not stats.precision_met([repeats])
    assert not stats.precision_met([])
    assert stats.worst_half_width([narrow, wide]) == pytest.approx(0.7 / 0.6 - 1)


def test_welch_interval_by_hand():
    a, b = [0.0, 0.1, -0.1], [0.2, 0.3, 0.1, 0.2]
    var = 0.01 / 3 + (0.02 / 3) / 4
    df = var**2 / ((0.01 / 3) ** 2 / 2 + ((0.02 / 3) / 4) ** 2 / 3)  # 3.86, rounded down to 3
    assert 3 < df < 4
    found = between_runs.welch_interval(a, b)
    assert found.low == pytest.approx(math.exp(0.2 - 3.182 * math.sqrt(var)))
    widened = between_runs.welch_interval(a, b, extra_variance=0.005, extra_df=4)
    df = (2 * var) ** 2 / ((0.01 / 3) ** 2 / 2 + ((0.02 / 3) / 4) ** 2 / 3 + 0.005**2 / 4)  # 7.7, rounded down to 7
    assert 7 < df < 8 and widened.low == pytest.approx(math.exp(0.2 - 2.365 * math.sqrt(2 * var)))
    assert between_runs.welch_interval([1.0], b) is None
