"""Calibration of wrkreport.analysis.variant_ratio's in-run A/B figure (issue 20, --variant) by simulation: coverage, false changes, and what two runs would say of the same machine.

Runs are shaped like real ones (simruns.ab_run): per-measurement heavy-tailed noise with
outliers, a start effect per block shared by both nginx setups (the machine, Go) and one of
each nginx's own, a drift across the blocks and a shift of the whole run. The in-run
figure is what analyze computes for a twin over its original (stats.block_ratio_interval of
round pairs within blocks); the between-run one is what compare computes for two runs, one
with each variant (compare.change_interval of the block summaries of log req/s).
"""

from __future__ import annotations

import functools
import math
import random

import pytest

import simruns
from wrkreport.compare import two_runs as compare
from wrkreport.core import stats

pytestmark = pytest.mark.simulation  # thousands of simulated runs: ./run_tests.sh runs it beside the real runs, plain pytest leaves it out

RUNS = 2000  # simulated runs per figure: a rate near 5% has a standard error of about 0.5 points
FLOOR = 0.93
# A 95% interval excludes a true 1.0 in 5% of runs by construction; the simulated rates are
# 4.5-5.5%, so the ceiling is 5% plus 2.4 standard errors of a rate over RUNS runs, as
# test_compare_two_runs_calibration's.
FALSE_CEILING = 0.05 + 2.4 * math.sqrt(0.05 * 0.95 / RUNS)
BLOCK_COUNTS = (3, 5, 7, 10)  # --blocks 3 and 5, the stopping rule's minimum (stats.MIN_BLOCKS) and about what 7 minutes allow


def in_run(blocks: list[list[tuple[float, float]]]) -> stats.Interval:
    """Return the A/B figure of one run: variant / original, paired by round within a block, the block interval."""
    return stats.block_ratio_interval(blocks)


def between_runs(run_a: list[list[tuple[float, float]]], run_b: list[list[tuple[float, float]]], run_sd: float) -> stats.Interval:
    """Return compare's B / A of req/s for two runs, the original measured in the first and the variant in the second (widened by run_sd a run)."""
    units_a = compare.units_of([[math.log(a) for _, a in block] for block in run_a], [])
    units_b = compare.units_of([[math.log(b) for b, _ in block] for block in run_b], [])
    return compare.change_interval(units_a, units_b, compare.THROUGHPUT_START_SD, run_sd)


@functools.cache
def rates(blocks: int, change: float, seed: int) -> dict[str, float]:
    """Return over RUNS simulated sessions of two runs: the in-run figure's coverage and flag rate, and two-run compare's flag rates without and with its run-to-run sd."""
    rng = random.Random(seed)
    held = flagged = welch = widened = 0
    for _ in range(RUNS):
        first, second = simruns.ab_run(rng, blocks, change), simruns.ab_run(rng, blocks, change)
        found = in_run(first)
        held += found.includes(change)
        flagged += not found.includes(1.0)
        welch += not between_runs(first, second, 0.0).includes(1.0)
        widened += not between_runs(first, second, compare.THROUGHPUT_RUN_SD).includes(1.0)
    return {"coverage": held / RUNS, "in-run": flagged / RUNS, "two runs": welch / RUNS, "two runs, widened": widened / RUNS}


@pytest.mark.parametrize("blocks", BLOCK_COUNTS)
def test_the_in_run_interval_covers_and_flags_no_change_at_about_its_nominal_rate(blocks):
    found = rates(blocks, 1.0, seed=2000 + blocks)
    print(
        f"\n{blocks} blocks, no true change: in-run coverage {found['coverage']:.1%}, flagged {found['in-run']:.1%}; "
        f"two runs (Welch on block summaries) flagged {found['two runs']:.1%}, widened by compare's run sd {found['two runs, widened']:.1%}"
    )
    assert found["coverage"] >= FLOOR and found["in-run"] <= FALSE_CEILING


@pytest.mark.parametrize("blocks", BLOCK_COUNTS)
def test_the_in_run_interval_covers_a_true_change(blocks):
    found = rates(blocks, 0.9, seed=3000 + blocks)
    print(
        f"\n{blocks} blocks, a true 10% drop: in-run coverage {found['coverage']:.1%}, flagged {found['in-run']:.1%}; "
        f"two runs widened flagged {found['two runs, widened']:.1%}"
    )
    assert found["coverage"] >= FLOOR


@pytest.mark.parametrize("blocks", (5, 10))
def test_the_same_data_compared_as_two_runs_without_pairing_flags_drift(blocks):
    # The original measured in one run, the variant in the next: the machine's run-to-run
    # shift is in the difference, and Welch on the blocks alone reads it as a change.
    found = rates(blocks, 1.0, seed=2000 + blocks)
    assert found["two runs"] > 0.2


def test_pairing_finds_a_10_percent_change_that_two_runs_cannot_tell_from_drift():
    found = rates(stats.MIN_BLOCKS, 0.9, seed=3000 + stats.MIN_BLOCKS)
    print(
        f"\n{stats.MIN_BLOCKS} blocks, a true 10% drop: flagged in-run {found['in-run']:.1%}, between two runs (compare, widened) {found['two runs, widened']:.1%}"
    )
    assert found["in-run"] >= 0.5 and found["two runs, widened"] <= 0.1


def test_the_simulated_pairs_are_shaped_as_described():
    # The shape the claims rest on: the machine's shift moves both sides of a pair; the ratio sees only the nginx starts and the noise.
    rng = random.Random(5)
    run = simruns.ab_run(rng, 200, run_sd=0.5, drift_sd=0.0, go_start_sd=0.0, start_sd=0.0, noise_sd=0.0, outlier_rate=0.0)
    assert all(b / a == pytest.approx(1.0) for block in run for b, a in block)
    assert len({round(a) for block in run for _, a in block}) == 1  # one run's shift, the same in every block
