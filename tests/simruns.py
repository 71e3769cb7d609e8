"""Simulated runs shaped like real ones, for the coverage and false-change tests of stats and compare.

The shape follows what issue 10 measured on a 2-core machine:
- each server start (a block) shifts go-http's log req/s by N(0, GO_START_SD) and the
  setup's log ratio by another N(0, START_SD): about 14% and 5%, the between-run spreads of
  log req/s (the largest setup's) and of nginx-http's log ratio at GOMAXPROCS=2 across the
  five recorded runs in tests/fixtures/runs (the ratio moves less: both sides of it move
  together);
- each measurement adds noise of NOISE_SD (10%) on log req/s, with heavy tails (Student t
  with 3 degrees of freedom, scaled to that sd);
- 2% of measurements are outliers at -40% (a measurement that lost the CPU race).
The outliers hit the setup and go-http alike, so they do not move the true ratio.
"""

from __future__ import annotations

import math
import random

TRUE_RATIO = 0.6  # nginx-http keeps about 60% of Go's throughput on 2 cores
GO_RPS = 80_000.0
START_SD = 0.05
GO_START_SD = 0.14
NOISE_SD = 0.10
TAIL_DF = 3
OUTLIER_RATE = 0.02
OUTLIER_LOG = math.log(0.6)  # -40%
ROUNDS = 3  # rounds per block in the default design
MAX_BLOCKS = 10  # about what 6 minutes allow per GOMAXPROCS value on 2 cores


def noise(rng: random.Random, sd: float = NOISE_SD) -> float:
    """Return one measurement's noise on log req/s: Student t (3 df) scaled to sd, sometimes an outlier."""
    chi2 = rng.gammavariate(TAIL_DF / 2, 2)
    value = sd * rng.gauss(0, 1) / math.sqrt(chi2 / TAIL_DF) * math.sqrt((TAIL_DF - 2) / TAIL_DF)
    if rng.random() < OUTLIER_RATE:
        value += OUTLIER_LOG
    return value


def block(rng: random.Random, rounds: int = ROUNDS, ratio: float = TRUE_RATIO, go_rps: float = GO_RPS,
          start_sd: float = START_SD, noise_sd: float = NOISE_SD, go_start_sd: float = GO_START_SD) -> list[tuple[float, float]]:
    """Return one server start's rounds as (setup req/s, go-http req/s) pairs."""
    return rounds_after(rng, start(rng, start_sd, go_start_sd), rounds, ratio, go_rps, noise_sd)


def start(rng: random.Random, start_sd: float = START_SD, go_start_sd: float = GO_START_SD) -> tuple[float, float]:
    """Return one server start's shifts: of go-http's log req/s and of the setup's log ratio."""
    return rng.gauss(0, go_start_sd), rng.gauss(0, start_sd)


def rounds_after(rng: random.Random, shifts: tuple[float, float], rounds: int = ROUNDS, ratio: float = TRUE_RATIO,
                 go_rps: float = GO_RPS, noise_sd: float = NOISE_SD) -> list[tuple[float, float]]:
    """Return rounds measured after a start with the given shifts, as (setup req/s, go-http req/s) pairs."""
    go_shift, ratio_shift = shifts
    pairs = []
    for _ in range(rounds):
        go = go_rps * math.exp(go_shift + noise(rng, noise_sd))
        setup = go_rps * ratio * math.exp(go_shift + ratio_shift + noise(rng, noise_sd))
        pairs.append((setup, go))
    return pairs


def blocked_run(rng: random.Random, blocks: int, **shape) -> list[list[tuple[float, float]]]:
    """Return a run measured in blocks: one list of round pairs per server start."""
    return [block(rng, **shape) for _ in range(blocks)]


def one_start_run(rng: random.Random, repeats: int, **shape) -> list[tuple[float, float]]:
    """Return a run recorded before blocks: every repeat after one server start."""
    return block(rng, rounds=repeats, **shape)
