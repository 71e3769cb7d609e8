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

Issue 20 measured a second shape on the recorded default-blocks-2cores run (MEASURED): the
1-second log ratio's sd within a block is 0.08-0.13 (0.055-0.09 a side), its standardised
residuals have a kurtosis of 3.25 (normal: 3) and none lies beyond 3 sd, and a start moves
the ratio by 0-3%. And runs drift: two default runs of the same code 9 minutes apart had
every ratio 1.6-5% apart, more than their intervals allowed. drifting_run adds that as a
run's own shift of the ratio (RUN_SD) and a linear drift from its first block to its last
(DRIFT_SD); what a run's interval claims to cover is that run's ratio (the mean of its
blocks' true ratios), while compare has to allow for the shift between two runs.
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


# Shapes for the estimator and allocation simulations (issue 20): (start sd, noise sd a side, tail df or None for normal, outlier rate).
HEAVY = {"start_sd": START_SD, "noise_sd": NOISE_SD, "tail_df": TAIL_DF, "outlier_rate": OUTLIER_RATE}
MEASURED = {"start_sd": 0.02, "noise_sd": 0.07, "tail_df": None, "outlier_rate": 0.0}
RUN_SD = 0.03  # a run's own shift of the log ratio: same code, same machine, minutes apart
DRIFT_SD = 0.02  # the log ratio's linear drift from a run's first block to its last


def noise(rng: random.Random, sd: float = NOISE_SD, tail_df: int | None = TAIL_DF, outlier_rate: float = OUTLIER_RATE) -> float:
    """Return one measurement's noise on log req/s: Student t (tail_df; None: normal) scaled to sd, sometimes an outlier."""
    if tail_df is None:
        value = rng.gauss(0, sd)
    else:
        chi2 = rng.gammavariate(tail_df / 2, 2)
        value = sd * rng.gauss(0, 1) / math.sqrt(chi2 / tail_df) * math.sqrt((tail_df - 2) / tail_df)
    if outlier_rate and rng.random() < outlier_rate:
        value += OUTLIER_LOG
    return value


def drifting_run(
    rng: random.Random,
    blocks: int,
    rounds: int = ROUNDS,
    ratio: float = TRUE_RATIO,
    run_sd: float = RUN_SD,
    drift_sd: float = DRIFT_SD,
    start_sd: float = START_SD,
    noise_sd: float = NOISE_SD,
    tail_df: int | None = TAIL_DF,
    outlier_rate: float = OUTLIER_RATE,
    go_run_sd: float = 0.0,
) -> tuple[list[list[tuple[float, float]]], list[float]]:
    """Return a run's blocks of (setup, go-http) req/s pairs and each block's true log ratio (run shift, drift, start).

    go_run_sd: the run's own shift of go-http's log req/s (both sides of the ratio move with it)."""
    shift, drift, go_run = rng.gauss(0, run_sd), rng.gauss(0, drift_sd), rng.gauss(0, go_run_sd) if go_run_sd else 0.0
    found, truths = [], []
    for i in range(blocks):
        truth = math.log(ratio) + shift + drift * (i / (blocks - 1) - 0.5 if blocks > 1 else 0.0)
        go_shift, ratio_shift = start(rng, start_sd)
        go_shift += go_run
        pairs = []
        for _ in range(rounds):
            go = GO_RPS * math.exp(go_shift + noise(rng, noise_sd, tail_df, outlier_rate))
            pairs.append((GO_RPS * math.exp(truth + go_shift + ratio_shift + noise(rng, noise_sd, tail_df, outlier_rate)), go))
        found.append(pairs)
        truths.append(truth)
    return found, truths


def block(
    rng: random.Random,
    rounds: int = ROUNDS,
    ratio: float = TRUE_RATIO,
    go_rps: float = GO_RPS,
    start_sd: float = START_SD,
    noise_sd: float = NOISE_SD,
    go_start_sd: float = GO_START_SD,
) -> list[tuple[float, float]]:
    """Return one server start's rounds as (setup req/s, go-http req/s) pairs."""
    return rounds_after(rng, start(rng, start_sd, go_start_sd), rounds, ratio, go_rps, noise_sd)


def start(rng: random.Random, start_sd: float = START_SD, go_start_sd: float = GO_START_SD) -> tuple[float, float]:
    """Return one server start's shifts: of go-http's log req/s and of the setup's log ratio."""
    return rng.gauss(0, go_start_sd), rng.gauss(0, start_sd)


def rounds_after(
    rng: random.Random,
    shifts: tuple[float, float],
    rounds: int = ROUNDS,
    ratio: float = TRUE_RATIO,
    go_rps: float = GO_RPS,
    noise_sd: float = NOISE_SD,
) -> list[tuple[float, float]]:
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


# An in-run A/B (issue 20, --variant): nginx and the variant's nginx measured in the same
# rounds. Per block, both see the machine's level (the run's own shift of req/s, a linear
# drift across its blocks, and the block's start: Go and the machine, shared), each its own
# nginx start (START_SD apiece: two masters, two starts), and per measurement its own
# heavy-tailed noise with outliers. THROUGHPUT_RUN_SD is the run-to-run sd of log req/s
# compare measured on the six default runs (compare.two_runs.THROUGHPUT_RUN_SD); THROUGHPUT_DRIFT_SD
# a drift of log req/s across a run of that size.
THROUGHPUT_RUN_SD = 0.13
THROUGHPUT_DRIFT_SD = 0.05


def ab_run(
    rng: random.Random,
    blocks: int,
    change: float = 1.0,
    rounds: int = ROUNDS,
    rps: float = GO_RPS * TRUE_RATIO,
    run_sd: float = THROUGHPUT_RUN_SD,
    drift_sd: float = THROUGHPUT_DRIFT_SD,
    go_start_sd: float = GO_START_SD,
    start_sd: float = START_SD,
    noise_sd: float = NOISE_SD,
    outlier_rate: float = OUTLIER_RATE,
) -> list[list[tuple[float, float]]]:
    """Return one run's blocks of (variant req/s, original req/s) pairs, one per round; the variant's true req/s is change x the original's."""
    shift, drift = rng.gauss(0, run_sd), rng.gauss(0, drift_sd)
    found = []
    for i in range(blocks):
        machine = shift + drift * (i / (blocks - 1) - 0.5 if blocks > 1 else 0.0) + rng.gauss(0, go_start_sd)
        own_a, own_b = rng.gauss(0, start_sd), rng.gauss(0, start_sd)
        found.append(
            [
                (
                    rps * change * math.exp(machine + own_b + noise(rng, noise_sd, outlier_rate=outlier_rate)),
                    rps * math.exp(machine + own_a + noise(rng, noise_sd, outlier_rate=outlier_rate)),
                )
                for _ in range(rounds)
            ]
        )
    return found
