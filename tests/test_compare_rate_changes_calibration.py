"""Calibration of wrkreport.compare.rate_changes by simulation: false changes of compare's fixed-rate figure (added_change_interval) in runs that only drifted.

Each simulated run is what compare reads: one mean added latency (setup - go-http, ms)
per block. A block's mean carries a per-start effect (normal) and the noise of its
measurements with heavy tails (Student t with 3 degrees of freedom, and now and then a
stall several times the scale); a run carries a shift of its own (runs drift), an sd of
RATE_RUN_SD times the added latency. Two runs with no true change must be flagged in at
most 5% of comparisons at the block counts the phase uses (default 4; 2 and 8), and would
be flagged more often without the run-to-run term. The shapes are those measured on two
same-settings runs at 4,000 req/s (tests/fixtures/rate_drift.json): p50 0.07-0.19 ms with
block means 0.014-0.026 ms apart, p99 0.15-2 ms with block means 0.1-1.1 ms apart.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from wrkreport.compare.rate_changes import RATE_RUN_SD, added_change_interval

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from helpers import RATE_P50, RATE_P99, heavy_noise
from rate_drift import shares  # noqa: E402

COMPARISONS = 2000
CEILING = 0.05
FIXTURE = Path(__file__).parent / "fixtures" / "rate_drift.json"


def run_units(rng: random.Random, blocks: int, added: float, start_sd: float, scale: float, run_sd: float) -> list[float]:
    """Return one simulated run's block means of added latency (ms): its own shift, a start effect and noise per block."""
    shift = rng.gauss(0, run_sd * added)
    return [added + shift + rng.gauss(0, start_sd) + heavy_noise(rng, scale) for _ in range(blocks)]


def flag_rate(
    blocks: int, shape: tuple[float, float, float], seed: str, run_sd: float = RATE_RUN_SD, drift: float = RATE_RUN_SD, change: float = 0.0
) -> float:
    """Return the share of comparisons flagged: runs drifting by `drift`, B's added latency `change` x larger, the interval widened by run_sd."""
    rng = random.Random(seed)
    added, start_sd, scale = shape
    flagged = 0
    for _ in range(COMPARISONS):
        a = run_units(rng, blocks, added, start_sd, scale, drift)
        b = run_units(rng, blocks, added * (1 + change), start_sd, scale, drift)
        found = added_change_interval(a, b, run_sd)
        flagged += not found.low <= 0.0 <= found.high
    return flagged / COMPARISONS


@pytest.mark.parametrize("blocks", [2, 4, 8])
@pytest.mark.parametrize("name,shape", [("p50", RATE_P50), ("p99", RATE_P99)])
def test_runs_that_only_drifted_are_rarely_flagged(blocks, name, shape):
    rate = flag_rate(blocks, shape, f"rate-drift:{name}:{blocks}")
    print(f"\n{name}-like, {blocks} blocks, runs drifting by {RATE_RUN_SD:.0%}: false-change rate {rate:.1%}")
    assert rate <= CEILING


def test_without_the_run_to_run_term_drift_is_flagged_as_change():
    """The test can fail: at 8 blocks the block means pin a run down closer than its own shift moves it."""
    rate = flag_rate(8, RATE_P50, "rate-drift:no-term", run_sd=0.0)
    print(f"\np50-like, 8 blocks, without the run-to-run term: false-change rate {rate:.1%}")
    assert rate > 0.10


def test_what_a_true_change_in_the_added_latency_needs_to_be_flagged():
    # Printed for docs/comparing.md: the price of drift, at the default 4 blocks.
    found = {pct: flag_rate(4, RATE_P50, f"rate-drift:power:{pct}", change=pct / 100) for pct in (25, 50, 100)}
    print("\np50-like, 4 blocks: share of true changes flagged: " + ", ".join(f"+{pct}%: {rate:.0%}" for pct, rate in found.items()))
    assert found[25] <= found[50] <= found[100] and found[100] >= 0.8


def test_the_run_to_run_sd_is_what_the_recorded_runs_show():
    recorded = json.loads(FIXTURE.read_text())
    assert len(recorded["runs"]) >= 2
    found = shares(recorded["units"])
    assert len(found) == 12  # 3 nginx setups x GOMAXPROCS 1, 2 x p50, p99
    largest = max(share for _, _, share in found.values())
    print(f"\nlargest between-run sd of the added latency: {largest:.1%} of its mean")
    assert largest <= RATE_RUN_SD < largest + 0.01
