"""Statistics: small pure functions on lists of floats, for the analysis step.

Intervals are Student-t intervals, which stay honest at the 3-10 repeats a load test can
afford (a bootstrap needs far more samples to cover at its nominal rate). Ratios are
intervals on the mean of log ratios, back-transformed: a ratio of 0.5 and one of 2 are
symmetric on that scale, and the result is the geometric mean of the paired ratios.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

# Two-sided 95% critical values of Student's t, t(0.975, df), from the standard table
# (e.g. NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2). Between entries,
# interpolated linearly in 1/df, which is within 0.001 of the exact value over this range.
T_975 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
    10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
    18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060,
    26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980,
}
Z_975 = 1.960
MAD_TO_SIGMA = 1.4826  # MAD * 1.4826 estimates sigma for normal data


@dataclass(frozen=True)
class Interval:
    """A point estimate with its 95% interval (low/high None when n < 2)."""

    estimate: float
    low: float | None
    high: float | None
    n: int

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
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, not {df}")
    if df in T_975:
        return T_975[df]
    keys = sorted(T_975)
    if df > keys[-1]:
        lo_df, lo_t, hi_inv, hi_t = keys[-1], T_975[keys[-1]], 0.0, Z_975
    else:
        lo_df = max(k for k in keys if k < df)
        hi_df = min(k for k in keys if k > df)
        lo_t, hi_inv, hi_t = T_975[lo_df], 1 / hi_df, T_975[hi_df]
    share = (1 / lo_df - 1 / df) / (1 / lo_df - hi_inv)
    return lo_t + share * (hi_t - lo_t)


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


def mean_interval(values: list[float]) -> Interval:
    """Return the mean with its 95% t-interval.

    >>> found = mean_interval([10.0, 12.0, 11.0])
    >>> found.estimate, round(found.low, 3), round(found.high, 3), found.n
    (11.0, 8.516, 13.484, 3)
    """
    centre = mean(values)
    sd = stdev(values)
    if sd is None:
        return Interval(centre, None, None, len(values))
    half = t_975(len(values) - 1) * sd / math.sqrt(len(values))
    return Interval(centre, centre - half, centre + half, len(values))


def ratio_interval(pairs: list[tuple[float, float]]) -> Interval:
    """Return the geometric mean of paired ratios a/b with a 95% t-interval on their logs.

    >>> ratio_interval([(50.0, 100.0), (60.0, 100.0), (55.0, 100.0)]).estimate
    0.5484...
    >>> ratio_interval([(50.0, 100.0)])
    Interval(estimate=0.5, low=None, high=None, n=1)
    """
    if any(a <= 0 or b <= 0 for a, b in pairs):
        raise ValueError("ratios need positive values")
    logs = [math.log(a / b) for a, b in pairs]
    inner = mean_interval(logs)
    if inner.low is None:
        return Interval(math.exp(inner.estimate), None, None, inner.n)
    return Interval(math.exp(inner.estimate), math.exp(inner.low), math.exp(inner.high), inner.n)


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


def bootstrap_interval(statistic, samples: tuple[list, ...], resamples: int = 4000, seed: int = 2013) -> tuple[float, float] | None:
    """Return the 95% percentile-bootstrap interval of statistic(*samples), None when a sample has < 2 items.

    Each sample is resampled with replacement on its own (independent groups, e.g. the
    repeats of two runs); the seed makes the interval the same for the same input.
    (Efron & Tibshirani, "An Introduction to the Bootstrap", 1993, ch. 13.)

    >>> low, high = bootstrap_interval(lambda a, b: mean(b) / mean(a), ([10.0, 11.0, 9.0], [20.0, 22.0, 18.0]))
    >>> round(low, 2), round(high, 2)
    (1.75, 2.29)
    """
    if any(len(sample) < 2 for sample in samples):
        return None
    rng = random.Random(seed)
    found = sorted(statistic(*([rng.choice(sample) for _ in sample] for sample in samples)) for _ in range(resamples))
    return found[int(0.025 * resamples)], found[int(0.975 * resamples) - 1]
