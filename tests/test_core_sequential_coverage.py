"""Coverage and wrong-verdict rate of the verdict rule by simulation (tests/simverdict.py): repeated intervals under the stopping the run does.

Each figure is over RUNS simulated default runs (two GOMAXPROCS values, three connections,
blocks of three rounds) shaped like real ones: per-measurement noise with heavy tails and
outliers, a per-start effect, and three sizes of noise (this machine's, issue 10's, and a host
as noisy as issue 53's). The run stops by its rule, by --max-time (a block budget that cuts it
short) or by Ctrl-C (after a number of blocks drawn before it starts); coverage counts every
interval the page gives (each connection's throughput ratio, the cheapest's CPU-cost ratio):
an interval not given (fewer blocks than the first look) claims nothing and is not counted.
Today's rule (plain 95% t-intervals, at least 7 blocks, every ratio within the target) runs
beside it under the same stopping, its figures printed, not asserted.

At RUNS = 500 a coverage near 95% has a standard error of about 1 point counting runs alone
(the intervals of one run are correlated; pooled over its 4,000 intervals it is nearer 0.4),
so a true 95% falls below the 93% floor in about 2% of seeds, and the rule's own coverage,
98.3-98.8% in every case here, sits 5 standard errors above it. The wrong-verdict tests run
400 runs: a rate of 5% has a standard error of 1.1 points there, and the ceiling of 6.2% is
passed by a true 2% (the A/A rate found) in no seed. Today's rule runs RUNS // 4 for its
printed figures. About 32 s of one CPU in all on the 2-core machine (21 s on two workers).
"""

from __future__ import annotations

import functools
import random

import pytest

import simverdict as sv

pytestmark = pytest.mark.simulation  # thousands of simulated runs: ./run_tests.sh runs it beside the real runs, plain pytest leaves it out

RUNS = 500
FLOOR = 0.93
WRONG_CEILING = 0.062
CTRL_C_MOST = 20  # Ctrl-C after 1..20 blocks in all, uniformly: before the first look, between looks, at the ceiling
MAX_TIME_BLOCKS = 9  # --max-time that allows 9 blocks in all: the rule's own stop comes later in most runs


@functools.cache
def outcomes(
    rule_name: str,
    shape: str,
    stopping: str,
    truths: tuple[tuple[str, float], ...] = tuple(sv.DEFAULT_TRUTHS.items()),
    runs: int = RUNS,
    seed: int = 53,
) -> tuple[sv.Outcome, ...]:
    """Return `runs` simulated runs' outcomes (cached: several tests read the same runs)."""
    rule = sv.verdict_rule() if rule_name == "verdict" else sv.TODAY
    rng = random.Random(seed)
    found = []
    for _ in range(runs):
        budget = {"rule": None, "max-time": MAX_TIME_BLOCKS, "ctrl-c": rng.randint(1, CTRL_C_MOST)}[stopping]
        found.append(sv.run(rng, rule, sv.SHAPES[shape], dict(truths), budget))
    return tuple(found)


def coverage(found: tuple[sv.Outcome, ...], truths: dict[str, float]) -> tuple[float, int]:
    """Return the share of given intervals that hold their truth (throughput ratios of every contender, the cheapest's CPU ratio) and their count."""
    best = max(truths, key=truths.get)
    held = [sv.covers(i, truths[s]) for o in found for group in o.intervals for s, i in group.items()]
    held += [sv.covers(i, sv.CPU_TRUTHS[best]) for o in found for i in o.cpu]
    given = [h for h in held if h is not None]
    return (sum(given) / len(given) if given else 1.0), len(given)


def wrong_rate(found: tuple[sv.Outcome, ...], truths: dict[str, float]) -> float:
    """Return the share of runs with a wrong verdict at any GOMAXPROCS value (family-wise)."""
    return sum(any(sv.wrong(v, truths) for v in o.verdicts) for o in found) / len(found)


def said(found: tuple[sv.Outcome, ...], truths: dict[str, float]) -> str:
    held, count = coverage(found, truths)
    blocks = sum(o.blocks for o in found) / len(found)
    decided = sum(all(v is not None and v.decided for v in o.verdicts) for o in found) / len(found)
    return f"coverage {held:.1%} of {count} intervals, wrong verdicts {wrong_rate(found, truths):.1%}, decided {decided:.0%}, {blocks:.1f} blocks"


# Every shape stopped by the rule; the cut stops on the two noisier shapes, where an early stop would hurt most.
CASES = [(shape, "rule") for shape in sv.SHAPES] + [
    (shape, stop) for stop in ("max-time", "ctrl-c") for shape in ("heavy tails", "noisy host")
]


@pytest.mark.parametrize(("shape", "stopping"), CASES)
def test_repeated_intervals_cover_wherever_the_run_stops(shape, stopping):
    truths = sv.DEFAULT_TRUTHS
    found = outcomes("verdict", shape, stopping)
    today = outcomes("today", shape, stopping, runs=RUNS // 4)
    print(f"\n{shape}, stopped by {stopping}: verdict rule {said(found, truths)}; today's rule {said(today, truths)}")
    held, count = coverage(found, truths)
    assert count > RUNS  # most runs give intervals
    assert held >= FLOOR
    assert wrong_rate(found, truths) <= WRONG_CEILING


def test_the_rule_decides_this_machine_in_the_blocks_a_default_run_has():
    found = outcomes("verdict", "this machine", "rule")
    decided = sum(all(v.decided for v in o.verdicts) for o in found) / len(found)
    blocks = sorted(o.blocks for o in found)
    print(
        f"\nthis machine: decided in {decided:.1%} of runs; blocks in all: median {blocks[len(blocks) // 2]}, 90th percentile "
        f"{blocks[int(0.9 * len(blocks))]}"
    )
    assert decided >= 0.95 and blocks[len(blocks) // 2] <= 14  # the verdict comes well before the ceiling (20 blocks)


# Two connections of the same true throughput (an A/A pair): naming either the cheapest is wrong; tied or open is right.
A_A = (("nginx-http", 0.58), ("nginx-http-unix", 0.58), ("nginx-fcgi-tcp", 0.27))
# Two 8% apart: a tie (within 5%) is wrong; named or open is right.
APART = (("nginx-http", 0.58), ("nginx-http-unix", 0.58 / 1.08), ("nginx-fcgi-tcp", 0.27))


@pytest.mark.parametrize("shape", ["this machine", "heavy tails"])
@pytest.mark.parametrize("pair", ["A/A", "8% apart"])
def test_a_verdict_is_wrong_in_at_most_five_percent_of_runs(shape, pair):
    truths = A_A if pair == "A/A" else APART
    found = outcomes("verdict", shape, "rule", truths, runs=400)
    today = outcomes("today", shape, "rule", truths, runs=RUNS // 4)
    kinds = [v.kind for o in found for v in o.verdicts]
    share = {k: kinds.count(k) / len(kinds) for k in sorted(set(kinds))}
    print(
        f"\n{pair}, {shape}: verdicts per GOMAXPROCS value {share}; verdict rule {said(found, dict(truths))}; "
        f"today's rule {said(today, dict(truths))}"
    )
    assert wrong_rate(found, dict(truths)) <= WRONG_CEILING
    if pair == "A/A":  # called tied or undecided in at least 95% of runs
        assert sum(all(v.kind in ("tied", "open") for v in o.verdicts) for o in found) / len(found) >= 0.95
