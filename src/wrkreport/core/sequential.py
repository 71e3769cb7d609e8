"""Repeated confidence intervals: intervals over blocks that keep their coverage wherever a run stops.

A run looks at its intervals after every block and stops when its question is decided, when
--max-time comes or when the user presses Ctrl-C. A plain 95% t-interval read at every look
covers less than 95% at the look where the run happens to stop. Repeated confidence
intervals (Jennison and Turnbull, "Group Sequential Methods with Applications to Clinical
Trials", 2000, ch. 9) widen every look's interval so that all the looks of a run, from the
first to the planned last, hold together with 95%: then the interval at any look, however
that look was chosen, covers with at least 95%.

The looks here are the block counts FIRST_LOOK to the design's last (the block ceiling per
GOMAXPROCS value). Each look's interval is a Student-t interval over the blocks so far at
one nominal level 1 - nominal, the same at every look (Pocock's shape); nominal is the
largest level at which, for normal block summaries (whose t statistics are pivotal: their
joint law depends on nothing unknown), the probability that any look misses is alpha. It is
found by simulation with a fixed seed, so the driver and `wrkreport build` compute the same
boundary from the design the manifest records (Design.record). The two designs runs use
unless told otherwise (looks 4..10, and 4..40 with --precision) are simulated once, here:
core/level_table.py keeps their levels for every alpha / k, written by `python -m
wrkreport.core.sequential` and checked against a new simulation by the suite, so a run's
plan does not spend 0.8-2.8 s on them. The coverage under the heavy-tailed, per-start noise
real runs have is checked by tests/test_core_sequential_coverage.py.

Standard library only: the driver's helper uses it.
"""

from __future__ import annotations

import math
import random
from array import array
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from .level_table import LEVELS

ALPHA = 0.05  # every interval's stated miss rate, over all its looks
FIRST_LOOK = 4  # the fewest blocks with an interval: t with 3 degrees of freedom (at 3 blocks t(2) alone is 4.3)
DEFAULT_LAST_LOOK = 10  # the block ceiling per GOMAXPROCS value of a run that stops by itself
PRECISION_LAST_LOOK = 40  # with --precision PCT given: a run aiming at a width may need more blocks
SIMULATED_RUNS = 100_000  # nominal's Monte Carlo: the miss rate it gives new runs is within about 0.1 point of alpha (1.3 s)
SEED = 2013
SQRT2 = math.sqrt(2)
PRUNE_MARGIN = 1e-12  # a look whose normal-tail p-value exceeds the least so far by more cannot lower it (t's p-value is larger still)
METHOD = "repeated-t"
FIXED = "fixed-t"  # runs recorded before repeated intervals: a plain 95% t-interval at the blocks there are


def t_two_sided_cdf(t: float, df: int) -> float:
    """Return P(|T| <= t) for Student's t with integer df: exact (Abramowitz and Stegun 26.7.3 and 26.7.4).

    >>> round(t_two_sided_cdf(12.706, 1), 4), round(t_two_sided_cdf(2.776, 4), 4), round(t_two_sided_cdf(2.228, 10), 4)
    (0.95, 0.95, 0.95)
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, not {df}")
    t = abs(t)
    theta = math.atan(t / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2:  # odd
        if df == 1:
            return 2 * theta / math.pi
        term, total = math.cos(theta), math.cos(theta)
        for k in range(3, df, 2):  # cos^(k) terms: 2.4...(k-1) / 1.3...k
            term *= c2 * (k - 1) / k
            total += term
        return min(1.0, 2 / math.pi * (theta + s * total))
    term, total = 1.0, 1.0
    for k in range(2, df, 2):  # cos^k terms: 1.3...(k-1) / 2.4...k
        term *= c2 * (k - 1) / k
        total += term
    return min(1.0, s * total)


@lru_cache(maxsize=4096)  # a run's intervals ask for a few (level, df) pairs again and again: 36 CDF evaluations each
def t_quantile(level: float, df: int) -> float:
    """Return the two-sided critical value c with P(|T| <= c) = level, df degrees of freedom (bisection on the exact CDF).

    >>> round(t_quantile(0.95, 4), 3), round(t_quantile(0.99, 9), 3)
    (2.776, 3.25)
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be within (0, 1), not {level}")
    low, high = 0.0, 1.0
    while t_two_sided_cdf(high, df) < level:
        high *= 2
    for _ in range(100):
        mid = (low + high) / 2
        if t_two_sided_cdf(mid, df) < level:
            low = mid
        else:
            high = mid
        if high - low < 1e-9 * high:
            break
    return (low + high) / 2


@lru_cache(maxsize=64)
def nominal_level(alpha: float, first: int, last: int, runs: int = SIMULATED_RUNS, seed: int = SEED) -> float:
    """Return the per-look miss rate at which looks first..last of normal data miss together with probability alpha.

    Each simulated run is `last` standard normal values; at each look b its t statistic over
    the first b values gives a two-sided p-value; a run's smallest p-value over the looks is
    below the returned level in a share alpha of the runs. The simulation does not depend on
    alpha, so every alpha asked of the same looks reads the one sorted list (smallest_p_values).

    >>> a = nominal_level(0.05, 3, 12, runs=10_000)
    >>> 0.008 < a < 0.02
    True
    >>> nominal_level(0.05, 5, 5, runs=2000) == 0.05  # one look: no widening
    True
    """
    if not 0 < alpha < 1 or first < 2 or last < first:
        raise ValueError(f"no design: alpha {alpha}, looks {first}..{last}")
    if first == last:
        return alpha
    index = min(runs - 1, int(alpha * runs))  # a share alpha of the runs lies below it
    kept = LEVELS.get((first, last, runs, seed), {})
    return kept[index] if index in kept else smallest_p_values(first, last, runs, seed)[index]


def table_indices(runs: int = SIMULATED_RUNS, alpha: float = ALPHA, most: int = 100_000) -> list[int]:
    """Return the sorted list's positions nominal_level reads for alpha / k, k = 1..most (a family of k comparisons).

    >>> table_indices(most=4)
    [1250, 1666, 2500, 5000]
    """
    return sorted({min(runs - 1, int(alpha / k * runs)) for k in range(1, most + 1)})  # as Design.family divides alpha


def table_text(designs: tuple[tuple[int, int], ...] = ((FIRST_LOOK, DEFAULT_LAST_LOOK), (FIRST_LOOK, PRECISION_LAST_LOOK))) -> str:
    """Return core/level_table.py: for each design (first, last), the simulated list's value at every table_indices position."""
    lines = [
        '"""The per-look levels of the designs runs use by default, simulated once (written by `python -m wrkreport.core.sequential`).',
        "",
        "LEVELS[(first, last, runs, seed)][i] is core.sequential.smallest_p_values(first, last, runs, seed)[i] at every position",
        "nominal_level reads for alpha / k (table_indices); tests/test_core_sequential_table.py simulates them again and compares.",
        '"""',
        "",
        "LEVELS: dict[tuple[int, int, int, int], dict[int, float]] = {",
    ]
    for first, last in designs:
        simulated = smallest_p_values(first, last, SIMULATED_RUNS, SEED)
        lines.append(f"    ({first}, {last}, {SIMULATED_RUNS}, {SEED}): {{")
        lines += [f"        {i}: {simulated[i]!r}," for i in table_indices()]
        lines.append("    },")
    return "\n".join([*lines, "}", ""])


@lru_cache(maxsize=8)
def smallest_p_values(first: int, last: int, runs: int = SIMULATED_RUNS, seed: int = SEED) -> array:
    """Return each simulated run's smallest two-sided p-value over looks first..last, sorted (doubles: 0.8 MB for 100,000 runs).

    A run of --precision 2 asks the levels of two alphas (the whole run's and the verdict's family
    share) at looks 4..40: one simulation serves both. A look is judged by t's p-value only when the
    normal p-value of its statistic (a lower bound: t's tails are heavier) could be a new least.
    """
    rng = random.Random(seed)
    smallest = []
    for _ in range(runs):
        total = squares = 0.0
        least = 1.0
        for b in range(1, last + 1):
            x = rng.gauss(0.0, 1.0)
            total += x
            squares += x * x
            if b >= first:
                mean = total / b
                var = max((squares - b * mean * mean) / (b - 1), 1e-300)
                t = mean / math.sqrt(var / b)
                if (
                    math.erfc(abs(t) / SQRT2) < least + PRUNE_MARGIN
                ):  # else its p-value (above the normal one: heavier tails) is no new least
                    least = min(least, 1 - t_two_sided_cdf(t, b - 1))
        smallest.append(least)
    smallest.sort()
    return array("d", smallest)


@dataclass(frozen=True)
class Design:
    """How a run's intervals are read at its looks: the method, the stated miss rate, the looks, the per-look level."""

    method: str = METHOD
    alpha: float = ALPHA
    first: int = FIRST_LOOK
    last: int = DEFAULT_LAST_LOOK
    nominal: float = ALPHA  # the per-look miss rate (alpha itself for FIXED)

    @classmethod
    def repeated(cls, last: int = DEFAULT_LAST_LOOK, alpha: float = ALPHA, first: int = FIRST_LOOK) -> Design:
        """Return the repeated-interval design for looks first..last."""
        return cls(METHOD, alpha, first, last, nominal_level(alpha, first, max(first, last)))

    @classmethod
    def fixed(cls) -> Design:
        """Return the plain design of runs recorded before repeated intervals: a 95% t-interval from 2 blocks."""
        return cls(FIXED, ALPHA, 2, 2, ALPHA)

    @property
    def sequential(self) -> bool:
        return self.method == METHOD

    def family(self, comparisons: int) -> Design:
        """Return the design for one of `comparisons` comparisons whose misses together stay within alpha (Bonferroni)."""
        if comparisons <= 1:
            return self
        if not self.sequential:
            return Design(FIXED, self.alpha / comparisons, self.first, self.last, self.alpha / comparisons)
        return Design.repeated(self.last, self.alpha / comparisons, self.first)

    def critical(self, blocks: int) -> float | None:
        """Return the t multiplier of an interval over `blocks` blocks; None below the first look (no interval yet)."""
        if blocks < self.first or blocks < 2:
            return None
        return t_quantile(1 - self.nominal, blocks - 1)

    def record(self) -> dict:
        """Return the design as the manifest keeps it."""
        return {
            "method": self.method,
            "alpha": self.alpha,
            "first_look": self.first,
            "last_look": self.last,
            "nominal_alpha": round(self.nominal, 8),
        }

    @property
    def words(self) -> str:
        """Return the method in one sentence, for the page."""
        if not self.sequential:
            return "Each interval is a 95% Student-t interval over the blocks."
        return (
            f"Each interval is a repeated 95% confidence interval (Jennison and Turnbull): a Student-t interval over the blocks at "
            f"{1 - self.nominal:.1%} per look, so that all looks from block {self.first} to block {self.last} hold together with 95% "
            f"and the interval stays valid wherever the run stopped."
        )


def design_of(record) -> Design:
    """Return the design a manifest's record gives (Design.record's shape); the plain design for a run recorded without one."""
    if not isinstance(record, dict) or record.get("method") != METHOD:
        return Design.fixed()
    try:
        alpha, first, last = float(record["alpha"]), int(record["first_look"]), int(record["last_look"])
    except (KeyError, TypeError, ValueError):
        return Design.fixed()
    if not (0 < alpha < 1 and 2 <= first <= last <= 100_000):
        return Design.fixed()
    nominal = record.get("nominal_alpha")
    if isinstance(nominal, (int, float)) and 0 < nominal <= alpha:
        return Design(METHOD, alpha, first, last, float(nominal))
    return Design.repeated(last, alpha, first)


def family_of(record) -> Design | None:
    """Return the design of one head-to-head comparison of a run's verdicts (Bonferroni over record['comparisons']), with the per-look
    level the record keeps (family_nominal_alpha) or recomputed; None for a run without repeated intervals."""
    design = design_of(record)
    if not design.sequential:
        return None
    comparisons = record.get("comparisons")
    count = comparisons if isinstance(comparisons, int) and not isinstance(comparisons, bool) and comparisons > 1 else 1
    if count == 1:
        return design
    nominal = record.get("family_nominal_alpha")
    if isinstance(nominal, (int, float)) and 0 < nominal <= design.alpha / count:
        return Design(METHOD, design.alpha / count, design.first, design.last, float(nominal))
    return design.family(count)


class Intervals(NamedTuple):
    """How a run's intervals are read: the repeated interval of every figure, and of one head-to-head comparison of the verdict's
    family; both None for a run recorded without repeated intervals (plain 95% t-intervals)."""

    design: Design | None
    family: Design | None


def intervals_of(record) -> Intervals:
    """Return the designs a manifest's parameters.intervals record gives (Intervals(None, None) without repeated intervals)."""
    design = design_of(record)
    return Intervals(design, family_of(record)) if design.sequential else Intervals(None, None)


if __name__ == "__main__":  # python -m wrkreport.core.sequential > src/wrkreport/core/level_table.py
    print(table_text(), end="")
