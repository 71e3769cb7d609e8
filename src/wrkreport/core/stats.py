"""Statistics: small pure functions on lists of floats, for the analysis step and the driver's stopping rule.

Intervals are Student-t intervals, which stay honest at the 3-10 units a load test can
afford (a bootstrap needs far more samples to cover at its nominal rate). Ratios are
intervals on the mean of log ratios, back-transformed: a ratio of 0.5 and one of 2 are
symmetric on that scale, and the result is the geometric mean of the paired ratios.

The unit of replication is the block (one start of the servers), not the measurement:
measurements after one start share that start's luck (memory layout, which CPU each
process landed on, nginx's worker balance), so they are not independent and a
measurement-level interval understates the run-to-run spread (about 5% on the fixtures'
nginx-http ratio). Within a block, a setup's round k is paired with go-http's round k;
the block contributes a Huber M-estimate of the centre of its log ratios, with one
within-block scale pooled over the blocks (block_summaries): the mean when the rounds
agree, pulling in only a round that strays past 1.345 scales, so it is nearly as narrow
as the block mean on normal noise and as robust as the block median under heavy tails
(the simulation in tests/test_core_stats_coverage.py chose it over both, and over trimmed
means); the interval is a Student-t interval over the block summaries with
blocks - 1 degrees of freedom. This is the "analysis of cluster means" of a two-level
(nested) design: Snedecor & Cochran, "Statistical Methods", 8th ed., 1989, ch. 13
(nested classifications), and Kalibera & Jones, "Rigorous Benchmarking in Reasonable
Time", ISMM 2013 (repeat the level with the largest variance, here the server start).
Runs recorded before blocks have one start per GOMAXPROCS pass: their interval is over
repeats within that one start (unit "repeat") and does not cover start-to-start spread.
Runs that stop by themselves read every interval as a repeated interval (core/sequential.py);
coverage under the stopping is shown by simulation (tests/test_core_sequential_coverage.py).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from statistics import NormalDist

# Two-sided 95% critical values of Student's t, t(0.975, df), from the standard table
# (a table, not scipy.stats.t.ppf: the driver's stopping rule runs this module before any
# pip install, with the standard library only; tests/test_core_stats.py checks it against scipy)
# (e.g. NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2). Between entries,
# interpolated linearly in 1/df, which is within 0.001 of the exact value over this range.
T_975 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    11: 2.201,
    12: 2.179,
    13: 2.160,
    14: 2.145,
    15: 2.131,
    16: 2.120,
    17: 2.110,
    18: 2.101,
    19: 2.093,
    20: 2.086,
    21: 2.080,
    22: 2.074,
    23: 2.069,
    24: 2.064,
    25: 2.060,
    26: 2.056,
    27: 2.052,
    28: 2.048,
    29: 2.045,
    30: 2.042,
    40: 2.021,
    60: 2.000,
    120: 1.980,
}
Z_975 = 1.960
# One-sided 80% quantiles of Student's t, t(0.80, df), from the same table (R: qt(0.8, df)):
# with T_975 they give the smallest true change a t interval flags in 80% of runs (power).
T_80 = {
    1: 1.376,
    2: 1.061,
    3: 0.978,
    4: 0.941,
    5: 0.920,
    6: 0.906,
    7: 0.896,
    8: 0.889,
    9: 0.883,
    10: 0.879,
    11: 0.876,
    12: 0.873,
    13: 0.870,
    14: 0.868,
    15: 0.866,
    16: 0.865,
    17: 0.863,
    18: 0.862,
    19: 0.861,
    20: 0.860,
    21: 0.859,
    22: 0.858,
    23: 0.858,
    24: 0.857,
    25: 0.856,
    26: 0.856,
    27: 0.855,
    28: 0.855,
    29: 0.854,
    30: 0.854,
    40: 0.851,
    60: 0.848,
    120: 0.845,
}
Z_80 = 0.8416
MAD_TO_SIGMA = 1.4826  # MAD * 1.4826 estimates sigma for normal data
# Huber's tuning constant: 95% of the mean's efficiency when the noise is normal (Huber &
# Ronchetti, "Robust Statistics", 2nd ed., 2009, sec. 4.6).
HUBER_K = 1.345
# Two normal draws differ by N(0, 2 sigma^2): the median of |x_i - x_j| is 0.6745 * sqrt(2) * sigma.
PAIR_DIFF_TO_SIGMA = 1 / (NormalDist().inv_cdf(0.75) * math.sqrt(2))

BLOCK, REPEAT = "block", "repeat"  # units of replication of an Interval
# Fewest blocks of the stopping rule before repeated intervals (core/sequential.py), whose plain 95% intervals covered 94.7%
# with 7 at least under its optional stopping (93.5% with 5, 80% for the early stops): what runs recorded then planned by.
MIN_BLOCKS = 7
PRECISION_TARGET = 0.05  # default --precision: every ratio within +/-5%


@dataclass(frozen=True)
class Interval:
    """A point estimate with its 95% interval (low/high None when n < 2 units)."""

    estimate: float
    low: float | None
    high: float | None
    n: int  # values behind the estimate (measurements, or measurement pairs for a ratio)
    unit: str = REPEAT  # what was replicated: "block" (server starts) or "repeat" (measurements in one start)
    blocks: int = 1  # server starts behind the estimate
    se: float | None = field(
        default=None, repr=False
    )  # the standard error the interval was built from (Welch intervals), on the estimate's scale (log for ratios)
    df: int | None = field(default=None, repr=False)  # its degrees of freedom (None: normal, or not recorded)

    def __post_init__(self) -> None:
        if self.unit not in (BLOCK, REPEAT):
            raise ValueError(f"unit must be {BLOCK!r} or {REPEAT!r}, not {self.unit!r}")

    @property
    def half_width_rel(self) -> float | None:
        """Return the larger distance from estimate to an end, relative to the estimate."""
        if self.low is None or self.high is None or self.estimate == 0:
            return None
        return max(self.high / self.estimate - 1, 1 - self.low / self.estimate)

    def includes(self, value: float) -> bool:
        """Return True when value lies inside the interval (False without one)."""
        return self.low is not None and self.high is not None and self.low <= value <= self.high


def t_975(df: int) -> float:
    """Return the two-sided 95% critical value of Student's t with df degrees of freedom.

    >>> t_975(4)
    2.776
    >>> round(t_975(50), 3)  # exact: 2.0086
    2.008
    >>> t_975(10_000) < 1.961
    True
    """
    return t_from_table(T_975, Z_975, df)


def t_80(df: int) -> float:
    """Return the one-sided 80% quantile of Student's t with df degrees of freedom (the power term of a sample-size formula).

    >>> t_80(5), round(t_80(50), 3)  # exact: 0.8489
    (0.92, 0.849)
    """
    return t_from_table(T_80, Z_80, df)


def t_from_table(table: dict[int, float], limit: float, df: int) -> float:
    """Return a t quantile from its table, interpolated linearly in 1/df between entries and towards the normal's `limit` past the last."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, not {df}")
    if df in table:
        return table[df]
    keys = sorted(table)
    if df > keys[-1]:
        lo_df, lo_t, hi_inv, hi_t = keys[-1], table[keys[-1]], 0.0, limit
    else:
        lo_df = max(k for k in keys if k < df)
        hi_df = min(k for k in keys if k > df)
        lo_t, hi_inv, hi_t = table[lo_df], 1 / hi_df, table[hi_df]
    share = (1 / lo_df - 1 / df) / (1 / lo_df - hi_inv)
    return lo_t + share * (hi_t - lo_t)


def detectable_shift(se: float, df: int | None) -> float:
    """Return the smallest true shift a two-sided 95% t interval with this standard error excludes 0 for in 80% of runs: (t_.975 + t_.80) x se.

    The usual sample-size approximation (e.g. Cohen, "Statistical Power Analysis", 1988,
    ch. 2): the estimate lands past the interval's edge when it is t_.975 standard errors
    from 0, and a true shift (t_.975 + t_.80) se away puts it there 80% of the time.

    >>> round(detectable_shift(0.1, 5), 4), round(detectable_shift(0.1, None), 4)
    (0.3491, 0.2802)
    """
    if df is None:
        return (Z_975 + Z_80) * se
    return (t_975(df) + t_80(df)) * se


def median(values: list[float]) -> float:
    """Return the median.

    >>> median([3.0, 1.0, 2.0])
    2.0
    >>> median([1.0, 2.0, 3.0, 10.0])
    2.5
    """
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def median_abs_dev(values: list[float]) -> float:
    """Return the median absolute deviation from the median.

    >>> median_abs_dev([1.0, 2.0, 3.0, 4.0, 100.0])
    1.0
    """
    centre = median(values)
    return median([abs(v - centre) for v in values])


def mean(values: list[float]) -> float:
    """Return the arithmetic mean."""
    if not values:
        raise ValueError("mean of no values")
    return math.fsum(values) / len(values)


def stdev(values: list[float]) -> float | None:
    """Return the sample standard deviation (n - 1), None for fewer than 2 values.

    >>> stdev([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])
    2.138089935299395
    """
    if len(values) < 2:
        return None
    centre = mean(values)
    return math.sqrt(math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1))


def mean_interval(values: list[float], critical: float | None = None) -> Interval:
    """Return the mean with its 95% t-interval (critical: another t multiplier, a repeated interval's: core/sequential.py).

    >>> found = mean_interval([10.0, 12.0, 11.0])
    >>> found.estimate, round(found.low, 3), round(found.high, 3), found.n
    (11.0, 8.516, 13.484, 3)
    """
    centre = mean(values)
    sd = stdev(values)
    if sd is None:
        return Interval(centre, None, None, len(values))
    half = (t_975(len(values) - 1) if critical is None else critical) * sd / math.sqrt(len(values))
    return Interval(centre, centre - half, centre + half, len(values))


def ratio_interval(pairs: list[tuple[float, float]]) -> Interval:
    """Return the geometric mean of paired ratios a/b with a 95% t-interval on their logs.

    >>> ratio_interval([(50.0, 100.0), (60.0, 100.0), (55.0, 100.0)]).estimate
    0.5484...
    >>> ratio_interval([(50.0, 100.0)])
    Interval(estimate=0.5, low=None, high=None, n=1, unit='repeat', blocks=1)
    """
    if any(a <= 0 or b <= 0 for a, b in pairs):
        raise ValueError("ratios need positive values")
    logs = [math.log(a / b) for a, b in pairs]
    inner = mean_interval(logs)
    if inner.low is None:
        return Interval(math.exp(inner.estimate), None, None, inner.n)
    return Interval(math.exp(inner.estimate), math.exp(inner.low), math.exp(inner.high), inner.n)


def block_mean_interval(blocks: list[list[float]], design=None) -> Interval:
    """Return the mean of block means with a 95% t-interval over blocks (over values when fewer than 2 blocks); with a
    core.sequential.Design, its repeated interval (none below its first look), as block_ratio_interval.

    >>> found = block_mean_interval([[10.0, 12.0], [11.0], [13.0, 15.0]])
    >>> found.estimate, found.unit, found.blocks, found.n
    (12.0, 'block', 3, 5)
    """
    used = [block for block in blocks if block]
    values = [value for block in used for value in block]
    if len(used) < 2 and not (design is not None and design.sequential and used):
        return replace(mean_interval(values), blocks=len(used))
    return summary_interval([mean(block) for block in used], len(values), design)


def summary_interval(summaries: list[float], n: int, design=None) -> Interval:
    """Return the Student-t interval over block summaries (unit block, n values behind them): 95%, or with a core.sequential.Design
    its repeated interval, none below its first look."""
    sequential = design is not None and design.sequential
    critical = design.critical(len(summaries)) if sequential else None
    if sequential and critical is None:
        return Interval(mean(summaries), None, None, n, BLOCK, len(summaries))
    inner = mean_interval(summaries, critical)
    return Interval(inner.estimate, inner.low, inner.high, n, BLOCK, len(summaries))


def pooled_pair_scale(blocks: list[list[float]]) -> float:
    """Return a robust within-block sd: the median |x_i - x_j| over every pair of values in the same block, scaled to sigma (0.0 without a pair).

    Differences within a block cancel the block's own shift, so the scale sees only the
    round-to-round noise; the median of them ignores a stray round (Shamos's estimator,
    pooled over blocks).

    >>> round(pooled_pair_scale([[0.0, 0.1, 0.2], [1.0, 1.1]]), 4)
    0.1048
    >>> pooled_pair_scale([[1.0], [2.0]])
    0.0
    """
    differences = [abs(a - b) for block in blocks for a, b in itertools.combinations(block, 2)]
    return PAIR_DIFF_TO_SIGMA * median(differences) if differences else 0.0


def huber_location(values: list[float], scale: float, k: float = HUBER_K) -> float:
    """Return Huber's M-estimate of the centre of values at a fixed scale, by iteratively reweighted means.

    Values within k * scale of the centre weigh 1, farther ones k * scale / distance, so
    one stray value moves the centre by at most about k * scale / n. With a scale of 0 or
    fewer than 3 values it is the mean (two values have no stray one).

    >>> round(huber_location([0.0, 0.1, 0.2], 0.1), 4)
    0.1
    >>> round(huber_location([0.0, 0.1, 1.0], 0.1), 5)  # the mean would be 0.3667
    0.11725
    >>> huber_location([0.0, 1.0], 0.1)
    0.5
    """
    if scale <= 0 or len(values) < 3:
        return mean(values)
    centre = median(values)
    bound = k * scale
    for _ in range(100):
        if (exact := huber_root(values, centre, bound)) is not None:
            return exact
        weights = [1.0 if abs(v - centre) <= bound else bound / abs(v - centre) for v in values]
        moved = math.fsum(w * v for w, v in zip(weights, values)) / math.fsum(weights)
        if abs(moved - centre) <= 1e-12 * max(1.0, abs(centre)):
            return moved
        centre = moved
    return centre


def huber_root(values: list[float], centre: float, bound: float) -> float | None:
    """Return the reweighted means' fixed point when the values within bound of centre are the ones within bound of it; else None.

    It solves sum(clip(v - c, -bound, bound)) = 0 for the split at centre; the iteration only nears it, in 20-40 steps.
    >>> round(huber_root([0.0, 0.1, 1.0], 0.1, 0.1345), 5), huber_root([0.0, 0.1, 1.0], 0.5, 0.1345)
    (0.11725, None)
    """
    within, below, above = split(values, centre, bound)
    if not within:
        return None
    root = (math.fsum(within) + bound * (above - below)) / len(within)
    _, below_root, above_root = split(values, root, bound)
    return root if (below_root, above_root) == (below, above) else None


def split(values: list[float], centre: float, bound: float) -> tuple[list[float], int, int]:
    """Return the values within bound of centre, and how many lie below and above that band (one pass: the simulations call it millions of times).

    >>> split([0.0, 0.1, 1.0, -1.0], 0.05, 0.1)
    ([0.0, 0.1], 1, 1)
    """
    low, high = centre - bound, centre + bound
    within, below, above = [], 0, 0
    for v in values:
        if abs(v - centre) <= bound:
            within.append(v)
        if v < low:
            below += 1
        elif v > high:
            above += 1
    return within, below, above


def block_summaries(blocks: list[list[float]]) -> list[float]:
    """Return each non-empty block's summary of its log values: huber_location at the scale pooled over all the blocks.

    >>> [round(v, 4) for v in block_summaries([[-0.5, -0.6, -0.55], [-0.5, -0.6, -1.2]])]
    [-0.55, -0.6205]
    """
    used = [block for block in blocks if block]
    scale = pooled_pair_scale(used)
    return [huber_location(block, scale) for block in used]


def block_ratio_interval(blocks: list[list[tuple[float, float]]], design=None) -> Interval:
    """Return the geometric-mean ratio a/b with a 95% t-interval over blocks (the unit of replication).

    design: a core.sequential.Design, whose repeated interval (valid wherever the run stopped) replaces
    the plain one; below its first look, none (low and high None, unit block).

    Each block is a list of (a, b) pairs, one per round (a setup's round k with go-http's
    round k). The blocks' summaries are block_summaries of their log ratios; the interval is a
    Student-t interval over the summaries, blocks - 1 degrees of freedom, back-transformed.
    With fewer than 2 blocks holding pairs, falls back to ratio_interval over the pairs of
    that one block (unit "repeat": it covers one server start only).

    >>> found = block_ratio_interval([[(60.0, 100.0), (62.0, 100.0)], [(58.0, 100.0)], [(61.0, 100.0), (59.0, 101.0)]])
    >>> round(found.estimate, 4), found.unit, found.blocks, found.n
    (0.5955, 'block', 3, 5)
    >>> block_ratio_interval([[(60.0, 100.0), (62.0, 100.0)], []]).unit
    'repeat'
    """
    used = [block for block in blocks if block]
    if any(a <= 0 or b <= 0 for block in used for a, b in block):
        raise ValueError("ratios need positive values")
    pairs = [pair for block in used for pair in block]
    if len(used) < 2 and not (design is not None and design.sequential and used):
        return replace(ratio_interval(pairs), blocks=len(used))
    inner = summary_interval(block_summaries([[math.log(a / b) for a, b in block] for block in used]), len(pairs), design)
    low, high = (None, None) if inner.low is None else (math.exp(inner.low), math.exp(inner.high))
    return Interval(math.exp(inner.estimate), low, high, len(pairs), BLOCK, len(used))


def block_difference_interval(blocks: list[list[tuple[float, float]]]) -> Interval:
    """Return the mean difference a - b with a 95% t-interval over blocks (the fixed-rate phase's added latency).

    Each block is a list of (a, b) pairs, one per round (a setup's round with go-http's in
    the same block); a block's summary is its mean difference, and the interval is a
    Student-t interval over the summaries, blocks - 1 degrees of freedom: block_ratio_interval
    on differences rather than logs. One block: the estimate without an interval.

    >>> found = block_difference_interval([[(0.30, 0.15)], [(0.31, 0.17)], [(0.29, 0.16)], [(0.33, 0.18)]])
    >>> round(found.estimate, 4), round(found.low, 4), round(found.high, 4), found.blocks
    (0.1425, 0.1273, 0.1577, 4)
    """
    used = [block for block in blocks if block]
    if not used:
        raise ValueError("a difference needs at least one pair")
    inner = mean_interval([mean([a - b for a, b in block]) for block in used])
    n = sum(len(block) for block in used)
    return Interval(inner.estimate, inner.low, inner.high, n, BLOCK if len(used) > 1 else REPEAT, len(used))


def worst_half_width(intervals: list[Interval]) -> float:
    """Return the largest relative half-width among intervals (inf when one has no interval or there are none).

    >>> worst_half_width([Interval(1.0, 0.97, 1.03, 9), Interval(0.5, 0.48, 0.52, 9)])
    0.040...
    >>> worst_half_width([Interval(1.0, None, None, 1)])
    inf
    """
    widths = [interval.half_width_rel for interval in intervals]
    if not widths or any(width is None for width in widths):
        return math.inf
    return max(widths)


def precision_met(intervals: list[Interval], target: float = PRECISION_TARGET, min_blocks: int = MIN_BLOCKS) -> bool:
    """Return True when every interval is over blocks, has at least min_blocks and reaches at most target from its estimate.

    This is the driver's stopping rule, applied after each block; its effect on coverage
    (stopping when an interval happens to be narrow) is part of the coverage simulation.

    >>> precision_met([Interval(1.0, 0.97, 1.03, 21, BLOCK, 7)])
    True
    >>> precision_met([Interval(1.0, 0.97, 1.03, 18, BLOCK, 6)])
    False
    """
    return bool(intervals) and all(i.unit == BLOCK and i.blocks >= min_blocks for i in intervals) and worst_half_width(intervals) <= target


def modified_z(value: float, values: list[float]) -> float | None:
    """Return Iglewicz and Hoaglin's modified z-score of value (None when the MAD is 0).

    Scores above 3.5 mark outliers (Iglewicz & Hoaglin, "How to Detect and Handle Outliers", 1993).

    >>> round(modified_z(100.0, [1.0, 2.0, 3.0, 4.0, 100.0]), 1)
    65.4
    """
    mad = median_abs_dev(values)
    if mad == 0:
        return None
    return 0.6745 * (value - median(values)) / mad
