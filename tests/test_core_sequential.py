"""Tests of wrkreport.core.sequential: Student's t by its exact integer-df formula, the repeated intervals' per-look level, the design record."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats as scipy_stats

from wrkreport.core import sequential
from wrkreport.core.sequential import (
    ALPHA,
    DEFAULT_LAST_LOOK,
    FIRST_LOOK,
    Design,
    design_of,
    family_of,
    nominal_level,
    t_quantile,
    t_two_sided_cdf,
)
from wrkreport.core.stats import t_975


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 10, 39])
@pytest.mark.parametrize("t", [0.0, 0.3, 1.0, 2.2, 4.5, 12.0])
def test_the_two_sided_cdf_is_scipys(df, t):
    assert t_two_sided_cdf(t, df) == pytest.approx(1 - 2 * scipy_stats.t.sf(t, df), abs=1e-12)


@pytest.mark.parametrize("df", [1, 3, 6, 9, 39])
@pytest.mark.parametrize("level", [0.95, 0.985, 0.999])
def test_the_quantile_is_scipys_and_meets_the_table(df, level):
    assert t_quantile(level, df) == pytest.approx(scipy_stats.t.ppf(1 - (1 - level) / 2, df), rel=1e-7)
    if level == 0.95:
        assert t_quantile(level, df) == pytest.approx(t_975(df), abs=1e-3)


def test_a_degree_of_freedom_below_one_or_a_level_outside_zero_one_is_refused():
    with pytest.raises(ValueError):
        t_two_sided_cdf(1.0, 0)
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)


def all_looks_miss_rate(nominal: float, first: int, last: int, runs: int, seed: int) -> float:
    """Return the share of simulated normal runs in which some look's t-interval at 1 - nominal misses the mean (new draws)."""
    rng = random.Random(seed)
    critical = {b: t_quantile(1 - nominal, b - 1) for b in range(first, last + 1)}
    missed = 0
    for _ in range(runs):
        values = [rng.gauss(3.0, 0.2) for _ in range(last)]
        for b in range(first, last + 1):
            head = values[:b]
            mean = sum(head) / b
            sd = math.sqrt(sum((v - mean) ** 2 for v in head) / (b - 1))
            if abs(mean - 3.0) > critical[b] * sd / math.sqrt(b):
                missed += 1
                break
    return missed / runs


def test_every_look_together_misses_in_alpha_of_runs_with_new_draws():
    """The level is found on one seed's 100,000 runs; 20,000 runs of another seed (and another mean and sd: the t statistics are
    pivotal) miss at some look in 5% +/- 0.5 points (3.2 standard errors of a rate over 20,000 runs, the level's own error 0.1)."""
    design = Design.repeated()
    rate = all_looks_miss_rate(design.nominal, design.first, design.last, 20_000, seed=99)
    print(f"\nlooks {design.first}-{design.last} at {design.nominal:.4f} each: some look missed in {rate:.2%} of runs")
    assert abs(rate - ALPHA) < 0.005
    assert all_looks_miss_rate(ALPHA, design.first, design.last, 4_000, seed=98) > 0.09  # a plain 95% at every look misses far more


def test_the_level_shrinks_with_more_looks_and_one_look_is_alpha_itself():
    assert nominal_level(ALPHA, 4, 4) == ALPHA
    levels = [nominal_level(ALPHA, 4, last) for last in (6, 10, 40)]  # 4..10 and 4..40: core/level_table.py's, simulated alike
    assert ALPHA / 37 < levels[2] < levels[1] < levels[0] < ALPHA  # above Bonferroni's alpha / looks: the looks are correlated
    assert nominal_level(ALPHA, 4, 10) == nominal_level(ALPHA, 4, 10, seed=sequential.SEED)  # seeded: the build recomputes the same


def test_no_interval_below_the_first_look_and_narrower_with_every_block():
    design = Design.repeated()
    assert (design.first, design.last) == (FIRST_LOOK, DEFAULT_LAST_LOOK)
    assert design.critical(FIRST_LOOK - 1) is None and design.critical(1) is None
    found = [design.critical(b) / math.sqrt(b) for b in range(FIRST_LOOK, DEFAULT_LAST_LOOK + 1)]
    assert found == sorted(found, reverse=True)
    assert all(design.critical(b) > t_975(b - 1) for b in range(FIRST_LOOK, DEFAULT_LAST_LOOK + 1))  # wider than a plain 95%


def test_a_family_spreads_alpha_over_its_comparisons():
    design = Design.repeated()
    family = design.family(6)
    record = {**design.record(), "comparisons": 6, "family_nominal_alpha": round(family.nominal, 8)}
    assert family_of(record) == Design(family.method, family.alpha, family.first, family.last, round(family.nominal, 8))
    assert family_of({**record, "family_nominal_alpha": None}) == family and family_of({**record, "comparisons": 1}) == design_of(record)
    assert family_of({"method": "fixed-t"}) is None
    assert family.alpha == pytest.approx(ALPHA / 6) and family.nominal < design.nominal and family.critical(6) > design.critical(6)
    assert design.family(1) is design and Design.fixed().family(2).nominal == pytest.approx(ALPHA / 2)


def test_the_record_gives_the_same_design_back_and_an_odd_one_is_the_plain_design():
    design = Design.repeated(DEFAULT_LAST_LOOK)
    assert design_of(design.record()) == Design(design.method, design.alpha, design.first, design.last, round(design.nominal, 8))
    assert design_of({**design.record(), "nominal_alpha": None}) == design  # recomputed from its looks
    for odd in (
        None,
        "x",
        {},
        {"method": "fixed-t"},
        {**design.record(), "first_look": 1},
        {**design.record(), "alpha": "5%"},
        {**design.record(), "last_look": 2},
    ):
        assert design_of(odd) == Design.fixed()
    assert not Design.fixed().sequential and Design.fixed().critical(3) is not None
    assert "repeated 95% confidence interval" in design.words and "from block 4 to block 10" in design.words


def unpruned_smallest(first: int, last: int, runs: int, seed: int) -> list[float]:
    """Return each run's smallest p-value over the looks as the simulation reads it with t's p-value at every look (no bound)."""
    rng = random.Random(seed)
    found = []
    for _ in range(runs):
        total = squares = 0.0
        least = 1.0
        for b in range(1, last + 1):
            x = rng.gauss(0.0, 1.0)
            total, squares = total + x, squares + x * x
            if b >= first:
                mean = total / b
                least = min(
                    least, 1 - sequential.t_two_sided_cdf(mean / math.sqrt(max((squares - b * mean * mean) / (b - 1), 1e-300) / b), b - 1)
                )
        found.append(least)
    return sorted(found)


@pytest.mark.parametrize(("first", "last"), [(4, 40), (2, 8), (4, 10)])
def test_the_bound_skips_only_looks_that_cannot_lower_a_runs_least_p_value(first, last):
    """The simulation judges a look by t's p-value only when the normal bound says it could be a new least: every value is the same."""
    assert list(sequential.smallest_p_values(first, last, 3000, 7)) == unpruned_smallest(first, last, 3000, 7)
