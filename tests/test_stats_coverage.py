"""Coverage of the ratio intervals, by simulation: block-unit intervals under the stopping rule, and the old repeat-level one."""

from __future__ import annotations

import random

import pytest

import simruns
from wrkreport import stats

RUNS = 2000  # simulated runs per figure: the coverage's standard error is about 0.5 points
FLOOR = 0.93
# (start sd, noise sd): the shape issue 10 measured, and a quieter machine on which the
# stopping rule stops early (where stopping on a lucky narrow interval would hurt most).
SHAPES = {"measured": (0.05, 0.10), "quiet": (0.02, 0.04)}


def run_until_precise(rng: random.Random, start_sd: float, noise_sd: float) -> stats.Interval:
    """Return the interval a run ends with: blocks added until the stopping rule holds, or MAX_BLOCKS."""
    blocks = []
    for _ in range(simruns.MAX_BLOCKS):
        blocks.append(simruns.block(rng, start_sd=start_sd, noise_sd=noise_sd))
        found = stats.block_ratio_interval(blocks)
        if stats.precision_met([found]):
            return found
    return found


def one_start_until_precise(rng: random.Random, start_sd: float, noise_sd: float) -> stats.Interval:
    """Return today's repeat-level interval with the same rounds and stopping rule, all after one start."""
    shifts, pairs = simruns.start(rng, start_sd), []
    for count in range(1, simruns.MAX_BLOCKS + 1):
        pairs += simruns.rounds_after(rng, shifts, noise_sd=noise_sd)
        found = stats.ratio_interval(pairs)
        if count >= stats.MIN_BLOCKS and found.half_width_rel <= stats.PRECISION_TARGET:
            return found
    return found


def coverage(draw, shape: str, seed: int) -> tuple[float, float, float]:
    """Return (share of intervals holding the true ratio, mean blocks, median half-width) over RUNS runs."""
    rng = random.Random(seed)
    intervals = [draw(rng, *SHAPES[shape]) for _ in range(RUNS)]
    held = sum(i.includes(simruns.TRUE_RATIO) for i in intervals) / RUNS
    blocks = sum(i.blocks for i in intervals) / RUNS
    return held, blocks, stats.median([i.half_width_rel for i in intervals])


@pytest.mark.parametrize("shape", list(SHAPES))
def test_block_intervals_cover_the_true_ratio_under_the_stopping_rule(shape):
    held, blocks, width = coverage(run_until_precise, shape, seed=10)
    print(f"\n{shape}: block-unit coverage {held:.1%} at {blocks:.1f} blocks on average "
          f"(min {stats.MIN_BLOCKS}, max {simruns.MAX_BLOCKS}), median half-width {width:.1%}")
    assert held >= FLOOR


def test_the_stopping_rule_stops_early_on_a_quiet_machine():
    # Otherwise the quiet case would not test the rule at all.
    _, blocks, width = coverage(run_until_precise, "quiet", seed=11)
    assert stats.MIN_BLOCKS <= blocks < simruns.MAX_BLOCKS - 1 and width <= stats.PRECISION_TARGET


def test_repeat_intervals_after_one_start_do_not_cover():
    # Today's method on the same measurements, all after one server start: the start's
    # shift is in every repeat, so more repeats only narrow the interval around it.
    held, blocks, width = coverage(one_start_until_precise, "measured", seed=12)
    print(f"\nrepeat-level (one start) coverage {held:.1%}, median half-width {width:.1%}")
    assert blocks == 1 and held < 0.85
