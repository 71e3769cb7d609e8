"""Intervals across runs: two runs' sets of blocks compared (Welch's t-interval, with a between-run variance added) and the spread between runs (DerSimonian-Laird). Standard library only."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .stats import Z_975, Interval, mean, stdev, t_975


def welch_difference_interval(a: list[float], b: list[float], extra_variance: float = 0.0, extra_df: float = math.inf) -> Interval | None:
    """Return mean(b) - mean(a) with Welch's 95% t-interval; None with fewer than 2 values in a side.

    extra_variance is a variance estimated elsewhere, with extra_df degrees of freedom,
    added to that of the difference (compare's start-to-start variance for runs without
    blocks); it enters the Welch-Satterthwaite degrees of freedom like the two sides'
    variances (inf: known exactly). The degrees of freedom are rounded down (the
    conservative choice). (Welch, Biometrika 34, 1947; Satterthwaite, Biometrics
    Bulletin 2, 1946.)

    >>> found = welch_difference_interval([0.0, 0.1, -0.1], [0.2, 0.3, 0.1, 0.2])
    >>> round(found.estimate, 4), round(found.low, 4), round(found.high, 4)
    (0.2, -0.025, 0.425)
    """
    if len(a) < 2 or len(b) < 2:
        return None
    var_a = stdev(a) ** 2 / len(a)
    var_b = stdev(b) ** 2 / len(b)
    total = var_a + var_b + extra_variance
    diff = mean(b) - mean(a)
    denominator = var_a**2 / (len(a) - 1) + var_b**2 / (len(b) - 1) + extra_variance**2 / extra_df
    df = max(1, math.floor(total**2 / denominator + 1e-9)) if denominator > 0 else None
    half = (Z_975 if df is None else t_975(df)) * math.sqrt(total)
    return Interval(diff, diff - half, diff + half, len(a) + len(b), se=math.sqrt(total), df=df)


def welch_interval(logs_a: list[float], logs_b: list[float], extra_variance: float = 0.0, extra_df: float = math.inf) -> Interval | None:
    """Return exp(mean(logs_b) - mean(logs_a)) with Welch's 95% t-interval (welch_difference_interval on logs); None with fewer than 2 values in a side.

    >>> found = welch_interval([0.0, 0.1, -0.1], [0.2, 0.3, 0.1, 0.2])
    >>> round(found.estimate, 4), round(found.low, 4), round(found.high, 4)
    (1.2214, 0.9753, 1.5296)
    """
    found = welch_difference_interval(logs_a, logs_b, extra_variance, extra_df)
    if found is None:
        return None
    return Interval(math.exp(found.estimate), math.exp(found.low), math.exp(found.high), found.n, se=found.se, df=found.df)


@dataclass(frozen=True)
class BetweenRuns:
    """What DerSimonian-Laird finds in per-run samples: the between-run variance, Cochran's Q, the pooled within-run variance."""

    tau2: float  # the moment estimate, not floored at 0 (a negative value: the runs differ less than their samples predict)
    q: float
    pooled: float  # of one value, pooled over the runs with more than one

    @property
    def sd(self) -> float:
        """The between-run sd, floored at 0."""
        return math.sqrt(max(self.tau2, 0.0))


def dersimonian_laird(runs: list[list[float]]) -> BetweenRuns:
    """Return the between-run variance of per-run samples by DerSimonian & Laird (Controlled Clinical Trials 7, 1986).

    Each run's mean is weighted by its size over the pooled within-run variance; tau^2 is
    (Q - (k - 1)) / (sum w - sum w^2 / sum w). Every run needs a value, and one run more
    than one. With no spread within runs, tau^2 is the variance of the run means.

    >>> found = dersimonian_laird([[0.0, 0.2], [1.0, 1.2], [2.0, 2.2]])
    >>> round(found.tau2, 4), round(found.q, 1), round(found.pooled, 4), round(found.sd, 4)
    (0.99, 200.0, 0.02, 0.995)
    """
    means, sizes = [mean(r) for r in runs], [len(r) for r in runs]
    within = [(stdev(r) ** 2, len(r) - 1) for r in runs if len(r) > 1]
    pooled = math.fsum(v * df for v, df in within) / sum(df for _, df in within)
    if pooled == 0:
        return BetweenRuns(stdev(means) ** 2 if len(means) > 1 else 0.0, math.inf, 0.0)
    weights = [n / pooled for n in sizes]
    centre = math.fsum(w * m for w, m in zip(weights, means)) / math.fsum(weights)
    q = math.fsum(w * (m - centre) ** 2 for w, m in zip(weights, means))
    tau2 = (q - (len(means) - 1)) / (math.fsum(weights) - math.fsum(w * w for w in weights) / math.fsum(weights))
    return BetweenRuns(tau2, q, pooled)
