"""Calibration of wrkreport.compare.two_runs's detectable_change by simulation: a true change of the size a comparison reports as the smallest it could flag is flagged in 80% of comparisons.

Each simulated run is shaped like a real default run (simruns.drifting_run): per measurement
heavy-tailed noise (Student t, 3 df, with 2% outliers at -40%), per server start (block) a
shift of go-http's req/s and of the ratio, and per run a shift of its own with the sd compare
assumes (THROUGHPUT_RUN_SD for req/s, RUN_SD for the ratio). At 2, 4, 7 and 10 blocks a pilot
of comparisons with no true change gives the false-flag rate and the median detectable_change
reported; a second set with that true change gives the share flagged (the power). At 2 blocks
(one degree of freedom a side, heavy tails) the figure is approximate: a looser band, said so
in docs/comparing.md.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest

import simruns
from helpers import RUNS
from wrkreport.analysis.analyze import load_analysis
from wrkreport.compare import two_runs as compare
from wrkreport.core import stats

pytestmark = pytest.mark.simulation  # thousands of simulated runs: ./run_tests.sh runs it beside the real runs, plain pytest leaves it out

COMPARISONS = 2000  # a share near 80% has a standard error of 0.9 points: 76-84% is 4.5 of them
POWER = (0.76, 0.84)
POWER_AT_2_BLOCKS = (0.65, 0.95)
FALSE_FLAGS = (0.01, 0.065)  # 5% nominal; the run-to-run term's 5 degrees of freedom make it a little conservative
SHAPE = {
    "start_sd": simruns.START_SD,
    "noise_sd": simruns.NOISE_SD,
    "tail_df": simruns.TAIL_DF,
    "outlier_rate": simruns.OUTLIER_RATE,
    "run_sd": compare.RUN_SD,
    "drift_sd": 0.0,
    "go_run_sd": compare.THROUGHPUT_RUN_SD,
}


def run_units(rng: random.Random, blocks: int, figure: str, change: float) -> tuple[list[float], bool]:
    """Return one simulated run's units of a figure (go-http's log req/s, or nginx's log ratio), its true value times change."""
    ratio = simruns.TRUE_RATIO * (change if figure == "overhead_ratio" else 1.0)
    pairs, _ = simruns.drifting_run(rng, blocks, ratio=ratio, **SHAPE)
    if figure == "overhead_ratio":
        return compare.units_of([[math.log(x / y) for x, y in b] for b in pairs], [])
    return compare.units_of([[math.log(y * (change if figure == compare.THROUGHPUT else 1.0)) for _, y in b] for b in pairs], [])


def comparisons(blocks: int, figure: str, change: float, seed: str) -> list[compare.Change]:
    """Return COMPARISONS simulated comparisons of one figure, B's true value change x A's."""
    rng = random.Random(seed)
    cell = type("Cell", (), {"gomaxprocs": 2, "connections": 100, "setup": "nginx-http"})()
    return [
        compare.change_of(cell, figure, run_units(rng, blocks, figure, 1.0), run_units(rng, blocks, figure, change))
        for _ in range(COMPARISONS)
    ]


@pytest.mark.parametrize("figure", [compare.THROUGHPUT, "overhead_ratio"])
@pytest.mark.parametrize("blocks", [2, 4, 7, 10])
def test_a_true_change_of_the_reported_size_is_flagged_80_percent_of_the_time(blocks, figure):
    pilot = comparisons(blocks, figure, 1.0, f"detectable:{figure}:{blocks}:pilot")
    false_flags = sum(c.flagged for c in pilot) / COMPARISONS
    reported = statistics.median(c.detectable_change for c in pilot)
    up = comparisons(blocks, figure, 1.0 + reported, f"detectable:{figure}:{blocks}:up")
    down = comparisons(blocks, figure, 1.0 / (1.0 + reported), f"detectable:{figure}:{blocks}:down")  # the same size on the log scale
    power_up, power_down = (sum(c.flagged for c in found) / COMPARISONS for found in (up, down))
    print(
        f"\n{figure}, {blocks} blocks: reports {reported:.1%} (median); flagged {power_up:.1%} of +{reported:.1%}, "
        f"{power_down:.1%} of -{1 - 1 / (1 + reported):.1%}; {false_flags:.1%} with no change"
    )
    band = POWER_AT_2_BLOCKS if blocks == 2 else POWER
    assert band[0] <= power_up <= band[1] and band[0] <= power_down <= band[1]
    assert FALSE_FLAGS[0] <= false_flags <= FALSE_FLAGS[1]


def test_t_80_is_within_a_thousandth_of_scipy():
    from scipy.stats import t

    worst = max(abs(stats.t_80(df) - t.ppf(0.80, df)) for df in range(1, 2001))
    assert worst <= 0.001, worst


def test_every_interval_of_a_real_pair_says_what_it_could_have_flagged():
    """default-run-1 against default-run-4: the same code an hour apart. The figure follows from the interval's own half-width."""
    result = compare.compare(load_analysis(RUNS / "default-run-1"), load_analysis(RUNS / "default-run-4"))
    with_interval = [c for c in result.changes if c.ci_low is not None]
    assert with_interval and all(c.detectable_change is not None for c in with_interval)
    assert all(c.detectable_change is None for c in result.changes if c.ci_low is None)
    lowest, highest = (stats.t_975(1) + stats.t_80(1)) / stats.t_975(1), (stats.Z_975 + stats.Z_80) / stats.Z_975
    for c in with_interval:
        # the half-width on the log scale is t_.975 x se and the detectable shift (t_.975 + t_.80) x se, at one df:
        # their quotient is 1 + t_.80 / t_.975, between 1.11 (1 df) and 1.43 (normal)
        half = math.log(c.ci_high / c.ci_low) / 2
        assert lowest - 1e-9 <= math.log1p(c.detectable_change) / half <= highest + 1e-9, c
    by_metric = {}
    for c in with_interval:
        by_metric.setdefault(c.metric, []).append(c.detectable_change)
    print(
        "\ndefault-run-1 vs default-run-4, detectable change: " + ", ".join(f"{m} {min(v):.0%}-{max(v):.0%}" for m, v in by_metric.items())
    )
    assert set(by_metric) == {compare.THROUGHPUT, "overhead_ratio", compare.P99, compare.CPU_METRIC}
