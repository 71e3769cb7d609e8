"""Calibration of wrkreport.compare.rate_changes's in-run A/B (variant_rate_changes) by simulation: coverage and false changes of its fixed-rate figure.

A run with --variant measures, in each block of its fixed-rate phase, an nginx setup (A)
and its twin (B) after the same server start of Go, one round each. What variant_rate_changes
gives is B's latency minus A's per block (added_pairs of the twin over the original: go-http's
part cancels) with a Student-t interval over the blocks (stats.block_difference_interval).
Each simulated block carries: a shift of the whole block (Go's start, the machine at that
moment) and the run's own drift from its first block to its last, both hitting A and B
alike; each nginx's own start effect (normal); and each measurement's noise with heavy
tails (Student t with 3 degrees of freedom, and now and then a stall several times the
scale), the shapes of tests/test_compare_rate_changes_calibration.py (helpers.RATE_P50,
RATE_P99 and heavy_noise, measured on two same-settings runs at 4,000 req/s). At the phase's block count (4; 3 when a block's cell
failed) the
interval must cover the true B - A in at least 93% of runs and flag a change that is not
there in at most 5%; with the normal quantile instead of Student's t it would not.
"""

from __future__ import annotations

import random
from statistics import NormalDist

import pytest

from helpers import RATE_P50, RATE_P99, heavy_noise
from wrkreport.core import stats

RUNS = 2000
FLOOR = 0.93
CEILING = 0.05
RUN_SHIFT_SD = 0.13  # of the added latency: what a whole run moves (compare.rate_changes.RATE_RUN_SD), shared by A and B here
DRIFT_SD = 0.10  # of the added latency: a linear drift from the first block to the last, shared by A and B


def one_run(rng: random.Random, blocks: int, shape: tuple[float, float, float], change: float) -> list[list[tuple[float, float]]]:
    """Return one run's blocks as variant_rate_changes pairs them: [(B's latency, A's latency)] per block, in ms."""
    added, start_sd, scale = shape
    base = 0.5 + rng.gauss(0, RUN_SHIFT_SD * added)  # go-http's own latency and the run's shift: cancel in B - A
    slope = rng.gauss(0, DRIFT_SD * added)
    found = []
    for k in range(blocks):
        shared = base + slope * k / max(1, blocks - 1) + rng.gauss(0, start_sd)  # Go's start, the machine then
        a = shared + added + rng.gauss(0, start_sd) + heavy_noise(rng, scale)
        b = shared + added * (1 + change) + rng.gauss(0, start_sd) + heavy_noise(rng, scale)
        found.append([(b, a)])
    return found


def rates(blocks: int, shape: tuple[float, float, float], change: float, seed: str, quantile=None) -> tuple[float, float]:
    """Return (coverage of the true B - A, share of runs flagged) over RUNS simulated runs."""
    rng = random.Random(seed)
    truth = shape[0] * change
    covered = flagged = 0
    for _ in range(RUNS):
        found = stats.block_difference_interval(one_run(rng, blocks, shape, change))
        low, high = found.low, found.high
        if quantile is not None:  # the same centre and spread with another quantile
            half = (found.high - found.low) / 2 / stats.t_975(blocks - 1) * quantile
            low, high = found.estimate - half, found.estimate + half
        covered += low <= truth <= high
        flagged += not low <= 0.0 <= high
    return covered / RUNS, flagged / RUNS


@pytest.mark.parametrize("blocks", [3, 4])  # the phase's 4 blocks (quick: 1, no interval), 3 when one failed
@pytest.mark.parametrize("name,shape", [("p50", RATE_P50), ("p99", RATE_P99)])
def test_the_in_run_interval_covers_and_rarely_flags_no_change(blocks, name, shape):
    coverage, false_flags = rates(blocks, shape, 0.0, f"variant-rate:{name}:{blocks}")
    moved, _ = rates(blocks, shape, 0.25, f"variant-rate:{name}:{blocks}:moved")
    print(
        f"\n{name}-like, {blocks} blocks: coverage {coverage:.1%} (no change), {moved:.1%} (B adds 25% more); false changes {false_flags:.1%}"
    )
    assert coverage >= FLOOR and moved >= FLOOR and false_flags <= CEILING


def test_the_normal_quantile_would_not_cover():
    """The test can fail: with 4 blocks, z = 1.96 in place of t(3) = 3.18 is too narrow."""
    coverage, false_flags = rates(4, RATE_P99, 0.0, "variant-rate:z", quantile=NormalDist().inv_cdf(0.975))
    print(f"\np99-like, 4 blocks, normal quantile: coverage {coverage:.1%}, false changes {false_flags:.1%}")
    assert coverage < FLOOR and false_flags > CEILING


def test_a_doubled_added_latency_is_found_at_the_default_blocks():
    # Printed for docs/comparing.md: what the phase's default 4 blocks find in one run.
    found = {pct: rates(4, RATE_P50, pct / 100, f"variant-rate:power:{pct}")[1] for pct in (25, 50, 100)}
    print(
        "\np50-like, 4 blocks, in one run: share of true changes flagged: "
        + ", ".join(f"+{pct}%: {rate:.0%}" for pct, rate in found.items())
    )
    assert found[25] <= found[50] <= found[100] and found[100] >= 0.8
