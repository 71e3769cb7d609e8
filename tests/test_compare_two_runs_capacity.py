"""Tests of wrkreport.compare.two_runs's capacity changes (capacity_changes): two real runs' capacities compared, and by simulation their false-flag rate and the power at the detectable change they report.

The simulation draws each block's log capacity as a real run's blocks spread: a run's true
log capacity, plus the run's own shift N(0, CAPACITY_RUN_SD) (the sd compare assumes), plus
per block a start effect N(0, START_SD), plus the search's own error SEARCH_SD x Student t
with 3 degrees of freedom (heavy tails), and in PAUSED of blocks a paused ladder step that
caps the block 5-20% low. Their spread within a run, about 0.08 on the log scale, is what
the coverage test's model gives at 4 blocks (tests/test_core_capacity_coverage.py) and
more than the two real runs below show (0.02-0.05).

Measured (`pytest -s`): no change flagged in 1.2%, 0.8%, 1.2% of comparisons at 3, 4, 6
blocks a side; the detectable change reported is 104%, 93%, 93%, and a true change of that
size is flagged in 86.8%, 81.9%, 81.8%. The run-to-run sd borrowed from req/s (13% a side)
is what makes it that large: until same-settings runs measure a capacity's own, a compare
says a capacity moved only when it about doubled.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest

from helpers import CAPACITY_LADDER, SEARCH_RUN, SLO_RUN
from wrkreport.analysis.analyze import load_analysis
from wrkreport.compare import two_runs as compare

COMPARISONS = 2000  # a share near 5% has a standard error of 0.5 points, near 80% of 0.9
START_SD = 0.05
SEARCH_SD = 0.05
PAUSED = 0.05
FALSE_FLAGS = (
    0.0,
    0.065,
)  # at most 5% nominal; measured 0.8-1.2%: the run-to-run term (13%, 5 degrees of freedom) dominates, so it is conservative
POWER = (0.72, 0.90)  # 80% nominal at the reported detectable change


def capacities(analysed) -> dict[tuple[str, int], compare.Change]:
    """Return the capacity changes of a comparison by (setup, GOMAXPROCS)."""
    return {(c.setup, c.gomaxprocs): c for c in analysed.changes if c.metric == compare.CAPACITY}


@pytest.fixture(scope="module")
def runs():
    """Return capacity-delay (3 blocks, a bisection each), capacity-ladder (4 blocks, the ladder) and quick-rates-slo (one block, p99 within 5 ms), analysed."""
    return load_analysis(SEARCH_RUN), load_analysis(CAPACITY_LADDER), load_analysis(SLO_RUN)


def test_two_real_runs_capacities_compare_over_their_blocks(runs):
    delay, ladder, _ = runs
    found = capacities(compare.compare(delay, ladder))
    assert set(found) == {("go-http", 1), ("nginx-http", 1)}
    for (setup, n), change in found.items():
        a = next(c for c in delay.capacities if (c.setup, c.gomaxprocs) == (setup, n))
        b = next(c for c in ladder.capacities if (c.setup, c.gomaxprocs) == (setup, n))
        geo = lambda c: math.exp(statistics.mean(math.log(block.rps) for block in c.blocks))  # noqa: E731
        assert change.change == pytest.approx(geo(b) / geo(a)) and (change.n_a, change.n_b) == (3, 4)
        assert change.a == pytest.approx(a.estimate.value) and change.b == pytest.approx(b.estimate.value)
        assert change.ci_low < change.change < change.ci_high and change.detectable_change > 0 and change.unit == "block"
        assert change.label == "capacity at the latency objective" and change.connections == 10
        assert not change.flagged  # 3-8% apart, well inside a run-to-run sd of 13% a side
    page = compare.compare(delay, ladder)
    assert [c.metric for c in page.changes][-2:] == [compare.CAPACITY, compare.CAPACITY]  # after every cell's figures


def test_another_objective_or_a_bound_gives_no_interval_and_says_why(runs):
    _, ladder, quick = runs
    other = capacities(compare.compare(quick, ladder))
    assert (
        other[("go-http", 1)].ci_low is None
        and other[("go-http", 1)].note == "another objective: p99 within 5 ms in A, p99 within 10 ms in B"
    )
    same = capacities(compare.compare(quick, quick))
    assert same[("go-http", 2)].note == "a bound in one run: the search met an edge, no interval"  # at least 32,000 in both
    assert same[("nginx-http", 1)].ci_low is None and same[("nginx-http", 1)].note == compare.TOO_FEW  # one block a side


def simulated_units(rng: random.Random, blocks: int, log_capacity: float) -> tuple[list[float], bool]:
    """Return one simulated run's units: its blocks' log capacities (see the module's docstring)."""
    run = log_capacity + rng.gauss(0, compare.CAPACITY_RUN_SD)
    units = []
    for _ in range(blocks):
        t3 = rng.gauss(0, 1) / math.sqrt(rng.gammavariate(1.5, 2) / 3) / math.sqrt(3)  # Student t(3) scaled to sd 1
        capped = math.log(rng.uniform(0.80, 0.95)) if rng.random() < PAUSED else 0.0
        units.append(run + rng.gauss(0, START_SD) + SEARCH_SD * t3 + capped)
    return units, True


@pytest.mark.parametrize("blocks", [3, 4, 6])
def test_no_true_change_is_flagged_about_one_time_in_twenty_and_the_detectable_change_four_in_five(blocks):
    rng = random.Random(f"capacity-compare:{blocks}")
    where = (1, 100, "nginx-http")
    null = [
        compare.change_of(where, compare.CAPACITY, simulated_units(rng, blocks, 10.0), simulated_units(rng, blocks, 10.0))
        for _ in range(COMPARISONS)
    ]
    false = sum(c.flagged for c in null) / COMPARISONS
    detectable = statistics.median(c.detectable_change for c in null)
    shifted = [
        compare.change_of(
            where, compare.CAPACITY, simulated_units(rng, blocks, 10.0), simulated_units(rng, blocks, 10.0 + math.log1p(detectable))
        )
        for _ in range(COMPARISONS)
    ]
    power = sum(c.flagged for c in shifted) / COMPARISONS
    print(
        f"\n{blocks} blocks a side: no change flagged in {false:.1%}; detectable change {detectable:.0%}, flagged in {power:.1%} at that change"
    )
    assert FALSE_FLAGS[0] <= false <= FALSE_FLAGS[1]
    assert POWER[0] <= power <= POWER[1]
