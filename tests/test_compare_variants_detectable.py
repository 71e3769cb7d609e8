"""Calibration of the in-run A/B's detectable_change (wrkreport.compare.variants.paired_detectable) by simulation.

An in-run A/B pairs each twin's round with its original's in the same block: the two share every
server start and the run's drift, so no run-to-run term enters. Each simulated run is shaped like a
real one (simruns.drifting_run with no run shift and no drift: per measurement heavy-tailed noise,
Student t with 3 df and 2% outliers at -40%, and per block a shift of the pair's ratio), summarised
as the report does (stats.block_ratio_interval: a Huber estimate per block, Student-t over blocks).
A pilot with no true change gives the false-flag rate and the median detectable_change reported; a
true change of that size, up and down, must then be flagged in about 80% of runs.
"""

from __future__ import annotations

import random
import statistics

import pytest

import simruns
from wrkreport.compare.variants import paired_detectable
from wrkreport.core import stats

RUNS_PER_FIGURE = 2000  # a share near 80% has a standard error of 0.9 points
POWER = (0.70, 0.86)  # 80% nominal; with the se's median correction 73-80% (73-74% at 3 blocks, 76-80% from 5)
FALSE_FLAGS = (0.02, 0.08)


def simulated(rng: random.Random, blocks: int, change: float) -> stats.Interval:
    """Return one run's twin / original interval, the true ratio being change."""
    pairs, _ = simruns.drifting_run(rng, blocks, ratio=change, run_sd=0.0, drift_sd=0.0)
    return stats.block_ratio_interval(pairs)


def flagged(found: stats.Interval) -> bool:
    return found.low is not None and not found.low <= 1.0 <= found.high


@pytest.mark.simulation
@pytest.mark.parametrize("blocks", [3, 5, 7, 10])
def test_a_true_change_of_the_reported_size_is_flagged_80_percent_of_the_time_in_one_run(blocks):
    rng = random.Random(f"variant-detectable:{blocks}")
    pilot = [simulated(rng, blocks, 1.0) for _ in range(RUNS_PER_FIGURE)]
    false_flags = sum(map(flagged, pilot)) / RUNS_PER_FIGURE
    reported = statistics.median(paired_detectable(f) for f in pilot)
    up = sum(flagged(simulated(rng, blocks, 1.0 + reported)) for _ in range(RUNS_PER_FIGURE)) / RUNS_PER_FIGURE
    down = sum(flagged(simulated(rng, blocks, 1.0 / (1.0 + reported))) for _ in range(RUNS_PER_FIGURE)) / RUNS_PER_FIGURE
    print(f"{blocks} blocks: false flags {false_flags:.1%}, detectable {reported:.1%}, power up {up:.1%}, down {down:.1%}")
    assert FALSE_FLAGS[0] <= false_flags <= FALSE_FLAGS[1]
    assert POWER[0] <= up <= POWER[1] and POWER[0] <= down <= POWER[1]


def test_no_interval_no_detectable_change():
    assert paired_detectable(stats.Interval(0.9, None, None, 1)) is None
    assert paired_detectable(stats.Interval(0.9, 0.8, 1.01, 1, stats.BLOCK, 1)) is None  # one block: no degrees of freedom
