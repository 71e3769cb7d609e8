"""Tests of wrkreport.compare.two_runs's machine-drift rule (machine_drift): simulated false alarms and power, and what it says on real same-code runs.

A simulated run is shaped like a default run: four setups at GOMAXPROCS 1 and 2 (8 req/s
figures, 6 ratios), in blocks of 3 rounds; per block a shift of the whole machine that every
setup of the block shares (simruns.GO_START_SD) and one of each nginx setup's own
(simruns.START_SD); per run a shift of each nginx setup's ratio (compare.RUN_SD); per
measurement heavy-tailed noise with outliers (simruns.noise). Drift is a shift of the whole
machine in run B: every setup's req/s times `machine`, the ratios untouched. With no drift
nothing is shared: each setup gets a block shift of the same size of its own, so the req/s
figures move as much as in a real run, each its own way.
"""

from __future__ import annotations

import math
import random
import subprocess
import sys
from dataclasses import replace

import pytest

import simruns
from helpers import RUNS
from wrkreport.analysis.analyze import load_analysis
from wrkreport.compare import two_runs as compare

pytestmark = pytest.mark.simulation  # thousands of simulated runs: ./run_tests.sh runs it beside the real runs, plain pytest leaves it out

COMPARISONS = 1000  # a rate near 50% (a 15% slower machine at 4 blocks: 49.6%) has a standard error of 1.6 points
# No drift: 1,000 comparisons named it in 0.5%, 0.7% and 0.4% (4, 7, 10 blocks); at 400 a rate near 0.6% has a standard
# error of 0.4 points, so 5% stays more than 10 of them away. A 5% slower machine: 1,000 named it in 16.5-18.5%; at 400
# its standard error is 1.9 points, and the 15% slower machine's rate it must stay below is 30 points above.
NO_DRIFT_COMPARISONS = 400
SETUPS = {"go-http": 1.0, "nginx-http": 0.6, "nginx-fcgi-tcp": 0.25, "nginx-fcgi-unix": 0.33}  # true req/s over go-http's
CELL = type("Cell", (), {"gomaxprocs": 2, "connections": 100, "setup": "nginx-http"})()


def simulated_run(rng: random.Random, blocks: int, machine: float = 1.0, shared: bool = True) -> dict[tuple[int, str], list[list[float]]]:
    """Return {(GOMAXPROCS, setup): per block the log req/s of its rounds} of one run, the machine's speed times `machine` (shared: each block's shift too)."""
    found: dict[tuple[int, str], list[list[float]]] = {}
    for n in (1, 2):
        own = {s: rng.gauss(0, compare.RUN_SD) if s != "go-http" else 0.0 for s in SETUPS}  # each ratio's own run shift
        for _ in range(blocks):
            block = rng.gauss(0, simruns.GO_START_SD)
            for setup, share in SETUPS.items():
                start = rng.gauss(0, simruns.START_SD) if setup != "go-http" else 0.0
                level = (
                    math.log(simruns.GO_RPS * share)
                    + math.log(machine)
                    + (block if shared else rng.gauss(0, simruns.GO_START_SD))
                    + own[setup]
                    + start
                )
                found.setdefault((n, setup), []).append([level + simruns.noise(rng) for _ in range(simruns.ROUNDS)])
    return found


def drift_of(a: dict, b: dict) -> compare.Drift:
    """Return the rule's finding on two simulated runs, built as compare builds its units."""
    throughput, ratios = [], []
    for n, setup in a:
        throughput.append(tuple(compare.units_of(run[n, setup], []) for run in (a, b)))
        if setup != "go-http":
            units = [
                compare.units_of([[x - y for x, y in zip(s, g)] for s, g in zip(run[n, setup], run[n, "go-http"])], []) for run in (a, b)
            ]
            ratios.append(compare.change_of(CELL, "overhead_ratio", *units))
    return compare.machine_drift(throughput, ratios)


def named_rate(blocks: int, machine: float, seed: str, shared: bool = True, comparisons: int = COMPARISONS) -> float:
    """Return the share of simulated comparisons in which drift is named, B's machine `machine` x A's."""
    rng = random.Random(seed)
    return (
        sum(
            drift_of(simulated_run(rng, blocks, shared=shared), simulated_run(rng, blocks, machine, shared)).named
            for _ in range(comparisons)
        )
        / comparisons
    )


@pytest.mark.parametrize("blocks", [4, 7, 10])
def test_runs_on_an_unchanged_machine_are_rarely_said_to_have_drifted(blocks):
    rate = named_rate(blocks, 1.0, f"drift:none:{blocks}", shared=False, comparisons=NO_DRIFT_COMPARISONS)
    # With each block's machine shift shared instead (only the blocks' luck: sometimes a real shift), 1,000 comparisons
    # named drift in 12.4%, 8.8% and 6.7% at 4, 7 and 10 blocks: printed only, never checked, so no longer simulated.
    print(f"\n{blocks} blocks, no drift: named in {rate:.1%}")
    assert rate < 0.05


@pytest.mark.parametrize("blocks", [4, 7, 10])
def test_a_shared_shift_of_the_size_runs_show_is_named(blocks):
    # default-run-3 against -4 moved every req/s 10-19% (0.845 on average); a 15% slower machine:
    slower = named_rate(blocks, 0.85, f"drift:slower:{blocks}")
    smaller = named_rate(blocks, 0.95, f"drift:small:{blocks}", comparisons=NO_DRIFT_COMPARISONS)  # ~17% against ~50%+: 400 tell them apart
    print(f"\n{blocks} blocks: a 15% slower machine named in {slower:.1%}, a 5% slower one in {smaller:.1%}")
    # measured: 50-68% at 4-10 blocks (each block's shared luck can cancel part of the shift, one setup's own run shift
    # can cross 1.0); 17-19% at 5% (1,000 comparisons; 13-19% at 400)
    assert slower >= 0.45 and smaller < slower


def test_a_real_run_against_itself_shifted_is_named_and_unshifted_is_not():
    """default-run-1's own units: B is A with every req/s 12% lower (the ratios unchanged)."""
    a = load_analysis(RUNS / "default-run-1")
    same = compare.compare(a, a)
    assert not same.drift.named and same.drift.figures == 8 and same.drift.ratios == 6
    throughput = [(compare.throughput_units(c), compare.throughput_units(c)) for c in a.analysis.cells]
    shifted = [(ua, ([u + math.log(0.88) for u in ub[0]], ub[1])) for ua, ub in throughput]
    ratios = [c for c in same.changes if c.metric == "overhead_ratio"]
    found = compare.machine_drift(shifted, ratios)
    assert found.named and found.shift == pytest.approx(0.88)
    assert found.sentence.startswith("Every req/s moved down 12% together (8 of 8 figures, 12% on average")
    assert "the machine was slower during B (drift), not nginx" in found.sentence
    flagged = [replace(ratios[0], ci_low=0.5, ci_high=0.9)]  # a ratio that changed: not the machine alone
    assert not compare.machine_drift(shifted, flagged + ratios[1:]).named
    mixed = shifted[:-1] + [(throughput[-1][0], ([u - math.log(0.88) for u in throughput[-1][1][0]], True))]  # one moved the other way
    assert compare.machine_drift(mixed, ratios).reason == "the req/s figures moved both ways"
    # all one way, but one figure far more than the rest: their mean shift is within their scatter (the rule's step 2;
    # until 400 no-drift comparisons replaced 1,000 the simulations above reached it too)
    scattered = [(ua, ([u + math.log(0.5 if i == 0 else 0.999) for u in ub[0]], ub[1])) for i, (ua, ub) in enumerate(throughput)]
    assert compare.machine_drift(scattered, ratios).reason == "the req/s figures' shared shift is within their scatter"


@pytest.mark.parametrize(("a", "b"), [("default-run-1", "default-run-4"), ("default-run-3", "default-run-4")])
def test_same_code_runs_say_per_figure_what_they_could_flag_and_name_drift_when_req_s_moved_together(tmp_path, a, b):
    done = subprocess.run(
        [sys.executable, "-m", "wrkreport", "compare", str(RUNS / a), str(RUNS / b), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    result = compare.compare(load_analysis(RUNS / a), load_analysis(RUNS / b))
    table = [line for line in done.stdout.splitlines() if line.startswith("nginx-") or line.startswith("go-http")]
    assert len(table) == len(result.changes) and all(line.split()[-1].startswith("+-") for line in table)  # nothing flagged
    assert any(" CPU ms/1k req " in line for line in table)
    said = " ".join(done.stdout.split())
    assert "Smallest change each figure could have flagged" in said
    page = (tmp_path / "compare.html").read_text()
    assert ("Machine drift:" in page) == result.drift.named and ("the machine was" in said) == result.drift.named
    print(
        f"\n{a} vs {b}: drift {'named' if result.drift.named else 'not named'} ({result.drift.reason}); req/s B / A "
        f"{result.drift.low:.3f}-{result.drift.high:.3f}"
    )
