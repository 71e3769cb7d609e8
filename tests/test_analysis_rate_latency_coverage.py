"""Coverage of wrkreport.analysis.rate_latency's added-latency interval (added_interval: stats.block_difference_interval) in simulated runs: at least 93% at the block counts the run uses.

Each simulated block starts the servers afresh: every setup gets a per-start effect on its
latency (normal), every measurement its own noise with heavy tails (Student t with 3
degrees of freedom, and now and then a stall adding a multiple of the scale); the added
latency is setup - go-http. The interval must cover the true added latency (the
difference of the expected values) in at least 93% of runs at 4 blocks (the default
phase), and at 2 and 8.
"""

from __future__ import annotations

import random

import pytest

from wrkreport.analysis.rate_latency import added_interval
from wrkreport.core.stats import block_difference_interval
from wrkreport.runs.rate_measurements import RateMeasurement

RUNS = 2000
FLOOR = 0.93


def heavy(rng: random.Random, scale: float) -> float:
    """Return noise with heavy tails: Student t(3) times scale, plus a stall (2% of measurements) of 5 x scale, centred."""
    t3 = rng.gauss(0, 1) / ((sum(rng.gauss(0, 1) ** 2 for _ in range(3)) / 3) ** 0.5)
    stall = 5 * scale if rng.random() < 0.02 else 0.0
    return scale * t3 + stall - 0.02 * 5 * scale


def simulate(
    rng: random.Random, blocks: int, added: float, start_sd: float, noise: float, rounds: int = 1
) -> list[list[tuple[float, float]]]:
    """Return one run's (setup, go-http) latency pairs per block (ms)."""
    found = []
    for _ in range(blocks):
        start_setup, start_go = rng.gauss(0, start_sd), rng.gauss(0, start_sd)
        found.append([(0.15 + added + start_setup + heavy(rng, noise), 0.15 + start_go + heavy(rng, noise)) for _ in range(rounds)])
    return found


@pytest.mark.parametrize("blocks", [2, 4, 8])
@pytest.mark.parametrize("start_sd,noise", [(0.02, 0.01), (0.005, 0.05), (0.0, 0.02)])
def test_added_latency_interval_covers_at_least_93_percent(blocks, start_sd, noise):
    rng = random.Random(f"rate-coverage:{blocks}:{start_sd}:{noise}")
    added = 0.15  # ms: setup - go-http in expectation (the stall terms are centred)
    covered = 0
    for _ in range(RUNS):
        interval = block_difference_interval(simulate(rng, blocks, added, start_sd, noise))
        covered += interval.low <= added <= interval.high
    assert covered / RUNS >= FLOOR, f"{covered / RUNS:.3f} at {blocks} blocks"


def test_an_interval_that_ignores_the_blocks_would_fail_the_floor():
    """The test can fail: pooling the rounds as if independent under-covers when the per-start effect dominates."""
    rng = random.Random("rate-coverage:pooled")
    covered = 0
    for _ in range(RUNS):
        blocks = simulate(rng, 4, 0.15, 0.05, 0.005, rounds=3)
        pooled = block_difference_interval([[pair] for block in blocks for pair in block])  # 12 "blocks": the start effect ignored
        covered += pooled.low <= 0.15 <= pooled.high
    assert covered / RUNS < FLOOR


def measurement(setup: str, block: int, latency_ms: float, held: bool = True) -> RateMeasurement:
    """Return a usable fixed-rate measurement whose every request took latency_ms (a real RateResult)."""
    from wrkreport.core.rate_result import RateResult
    from wrkreport.core.records import Check

    n = 100
    result = RateResult(
        "x",
        1000.0,
        n,
        (n - 1) / 1000,
        (n - 1) / 1000 + latency_ms / 1000,
        ((200, n),),
        0,
        0,
        (),
        ((12, n),),
        tuple([int(latency_ms * 1e6)] * n),
    )
    return RateMeasurement(setup, 1, block, 1000, "x", result, (Check("rate-held", "pass" if held else "fail", "x"),))


def test_added_interval_pairs_rounds_in_the_same_block():
    base = [measurement("go-http", b, 0.1 + 0.1 * b) for b in (1, 2, 3)]  # go-http drifts by block
    cell = [measurement("nginx-http", b, 0.3 + 0.1 * b) for b in (1, 2, 3)]  # always 0.2 ms more in its own block
    found = added_interval(cell, base, 50)
    assert found.estimate == pytest.approx(0.2) and found.blocks == 3
    assert found.low == pytest.approx(0.2) and found.high == pytest.approx(0.2)
