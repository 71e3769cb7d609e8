"""Tests of wrkreport.bench.allocation: where the next block goes, rounds per block, the warm-up test, and the coverage of the intervals under it."""

from __future__ import annotations

import doctest
import math
import random
from pathlib import Path
from types import SimpleNamespace

import pytest

import simruns
from wrkreport.bench import allocation
from wrkreport.core import stats

SETUPS = ("nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix")
TRUE_LOG = {"nginx-http": math.log(0.65), "nginx-fcgi-tcp": math.log(0.32), "nginx-fcgi-unix": math.log(0.38)}
# Per-setup noise a side of one 1-second measurement, as measured on default-blocks-2cores (issue 20): the
# FastCGI setups are the noisy ones at GOMAXPROCS=1 (within-block sd of the log ratio 0.11-0.13).
NOISE = {
    1: {"nginx-http": 0.09, "nginx-fcgi-tcp": 0.08, "nginx-fcgi-unix": 0.08},
    2: {"nginx-http": 0.055, "nginx-fcgi-tcp": 0.057, "nginx-fcgi-unix": 0.057},
}
BUDGET_S = 360.0
START_S = 1.5  # starting the servers and the readiness checks
WARMUP_S = 1.0  # per setup
ROUND_GAP_S = 0.06


def test_doctests():
    failures, tried = doctest.testmod(allocation)
    assert failures == 0 and tried >= 10


def test_components_separate_round_noise_from_start_shifts():
    rng = random.Random(3)
    blocks = [[shift + rng.gauss(0, 0.1) for _ in range(3)] for shift in (rng.gauss(0, 0.05) for _ in range(2000))]
    found = allocation.components(blocks)
    assert found.within == pytest.approx(0.01, rel=0.05) and found.between == pytest.approx(0.0025, rel=0.15)
    quiet = allocation.components([[rng.gauss(0, 0.1) for _ in range(3)] for _ in range(2000)])
    assert quiet.between < 0.0005  # no start effect: floored near 0


def test_best_rounds_follow_the_variance_ratio_and_the_costs():
    assert allocation.best_rounds(allocation.Components(0.01, 0.0025, 7), 6.0, 4.0, 3) == 2  # sqrt(1.5 * 4) = 2.4
    assert allocation.best_rounds(allocation.Components(0.01, 0.0004, 7), 6.0, 4.0, 3) == 6  # sqrt(1.5 * 25) = 6.1
    assert allocation.best_rounds(allocation.Components(0.01, 0.001, 7), 6.0, 4.0, 3) == 4  # sqrt(15) = 3.9


def test_the_first_measurement_effect_is_found_and_cleared():
    rng = random.Random(5)

    def block(cold: float) -> list[tuple[str, float]]:
        order = [s for _ in range(3) for s in rng.sample(SETUPS, 3)]
        return [(s, 1000 * math.exp(TRUE_LOG[s] + rng.gauss(0, 0.03) + (math.log(cold) if i == 0 else 0.0))) for i, s in enumerate(order)]

    cold = allocation.first_measurement_effect([block(0.9) for _ in range(8)])
    warm = allocation.first_measurement_effect([block(1.0) for _ in range(8)])
    assert allocation.shows_effect(cold) and cold.estimate == pytest.approx(0.9, abs=0.03)
    assert not allocation.shows_effect(warm)
    assert allocation.warmup_decision(warm, None)[0] is False
    assert allocation.warmup_decision(warm, cold) == (True, allocation.warmup_decision(None, cold)[1])
    assert allocation.warmup_decision(None, None)[0] is True


# --- The coverage of every ratio's interval under the allocation, by simulation -----------------


def simulate_run(rng: random.Random, allocate: bool, shape: dict) -> tuple[dict, float]:
    """Return ({(n, setup): (interval, true ratio)}, seconds) of one simulated default run, blocks chosen as the driver would."""
    blocks: dict[tuple[int, str], list[list[tuple[float, float]]]] = {(n, s): [] for n in (1, 2) for s in SETUPS}
    truths: dict[tuple[int, str], list[float]] = {key: [] for key in blocks}
    shifts = {key: rng.gauss(0, simruns.RUN_SD) for key in blocks}
    done = {1: 0, 2: 0}
    elapsed, rounds = 0.0, simruns.ROUNDS
    known: dict[tuple[int, str], tuple[int, stats.Interval]] = {}  # a key's interval, recomputed only when it gains a block

    def interval(key: tuple[int, str]) -> stats.Interval:
        if known.get(key, (None,))[0] != len(blocks[key]):
            known[key] = (len(blocks[key]), stats.block_ratio_interval(blocks[key]))
        return known[key][1]

    while True:
        intervals = {(n, 100, s, "rps"): interval((n, s)) for (n, s), b in blocks.items() if b}
        if done[1] >= stats.MIN_BLOCKS and done[2] >= stats.MIN_BLOCKS and stats.precision_met(list(intervals.values())):
            break
        if allocate:
            n, chosen, _ = allocation.next_block(intervals, done, [1, 2], "go-http", stats.PRECISION_TARGET, stats.MIN_BLOCKS)
            measured = [s for s in chosen if s != "go-http"] or list(SETUPS)
        else:
            n, measured = min((1, 2), key=lambda v: (done[v], v)), list(SETUPS)
        cost = START_S + WARMUP_S * (len(measured) + 1) + rounds * (len(measured) + 1) * (1 + ROUND_GAP_S)
        if elapsed + cost > BUDGET_S:
            break
        elapsed += cost
        done[n] += 1
        go_shift = rng.gauss(0, simruns.GO_START_SD)
        for s in measured:
            truth = TRUE_LOG[s] + shifts[n, s]
            start = rng.gauss(0, shape["start_sd"])
            sd = NOISE[n][s] * shape["noise_scale"]
            pairs = []
            for _ in range(rounds):
                go = 1000 * math.exp(go_shift + simruns.noise(rng, sd, shape["tail_df"], shape["outlier_rate"]))
                pairs.append(
                    (1000 * math.exp(truth + go_shift + start + simruns.noise(rng, sd, shape["tail_df"], shape["outlier_rate"])), go)
                )
            blocks[n, s].append(pairs)
            truths[n, s].append(truth)
        if allocate and done[1] >= stats.MIN_BLOCKS and done[2] >= stats.MIN_BLOCKS:
            key = max(((n, s) for s in measured), key=lambda k: interval(k).half_width_rel)
            logs = [[math.log(a / b) for a, b in block] for block in blocks[key]]
            round_s = (len(measured) + 1) * (1 + ROUND_GAP_S)
            rounds = allocation.best_rounds(allocation.components(logs), START_S + WARMUP_S * (len(measured) + 1), round_s, simruns.ROUNDS)
    found = {key: (interval(key), math.exp(stats.mean(truths[key]))) for key in blocks}
    return found, elapsed


SHAPES = {
    "measured": {"start_sd": 0.02, "noise_scale": 1.0, "tail_df": None, "outlier_rate": 0.0},
    "heavy tails and outliers": {"start_sd": 0.05, "noise_scale": 1.0, "tail_df": 3, "outlier_rate": 0.02},
}
RUNS = 600


@pytest.mark.simulation
@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_ratio_covers_under_the_allocation(shape):
    rng = random.Random(21)
    held = total = met = 0
    widths = []
    for _ in range(RUNS):
        found, _ = simulate_run(rng, True, SHAPES[shape])
        held += sum(interval.includes(truth) for interval, truth in found.values())
        total += len(found)
        worst = stats.worst_half_width([interval for interval, _ in found.values()])
        met += worst <= stats.PRECISION_TARGET
        widths.append(worst)
    print(
        f"\n{shape}: coverage {held / total:.1%} over {total} ratios; target met in {met / RUNS:.0%} of runs; "
        f"median worst half-width {stats.median(widths):.2%}"
    )
    assert held / total >= 0.93


# 300 runs each way met the target in 42% with the allocation, 7% without, medians +/-5.20% and +/-6.24%: at 120 the shares'
# standard errors are 4.5 and 2.3 points, 35 points apart, and the medians' ~0.1 point, 1 point apart (seeded: 39%, 6%,
# +/-5.29% and +/-6.27%).
COMPARED_RUNS = 120


@pytest.mark.simulation
def test_the_allocation_meets_the_target_more_often_than_measuring_everything():
    shape = SHAPES["measured"]
    rng_a, rng_b = random.Random(22), random.Random(22)
    worst_alloc = [stats.worst_half_width([i for i, _ in simulate_run(rng_a, True, shape)[0].values()]) for _ in range(COMPARED_RUNS)]
    worst_all = [stats.worst_half_width([i for i, _ in simulate_run(rng_b, False, shape)[0].values()]) for _ in range(COMPARED_RUNS)]
    met_alloc = sum(w <= stats.PRECISION_TARGET for w in worst_alloc) / COMPARED_RUNS
    met_all = sum(w <= stats.PRECISION_TARGET for w in worst_all) / COMPARED_RUNS
    print(
        f"\ntarget met in 6 minutes: {met_alloc:.0%} with the allocation, {met_all:.0%} measuring every setup in every block; "
        f"median worst +/-{stats.median(worst_alloc):.2%} against +/-{stats.median(worst_all):.2%}"
    )
    assert met_alloc > met_all and stats.median(worst_alloc) < stats.median(worst_all)


# --- plan_next: the helper's `decide` on a run's manifest ------------------------------------


def manifest_of(
    blocks: int, setups: dict, gomaxprocs=(1, 2), warmup_s: float = 1.0, first_effect: float = 1.0, cold_from: int | None = None
):
    """Return (manifest, cache) of a finished blocked run: per block 3 rounds of every setup (go-http at 1000 req/s, others at setups[s](b, r) x 1000), 1 s each."""
    params = {
        "gomaxprocs": list(gomaxprocs),
        "connections_levels": [100],
        "precision_pct": 5.0,
        "max_time_s": 360,
        "max_blocks": 3333,
        "rounds_per_block": 3,
        "warmup_s": warmup_s,
        "setups": ["go-http", *setups],
    }
    manifest, cache, t = {"parameters": params, "passes": [], "measurements": []}, {}, 0.0
    stamp = lambda s: f"2026-11-25T10:{int(s) // 60:02d}:{s % 60:06.3f}Z"
    for b in range(1, blocks + 1):
        for n in gomaxprocs:
            cold = cold_from is not None and b >= cold_from
            entry = {"gomaxprocs": n, "block": b, "started_at": stamp(t)}
            if cold:
                entry["warmup_s"] = 0
            t += 2.0  # start and checks (a warm-up would add to it)
            first = True
            for r in range(1, 4):
                for setup in ["go-http", *setups]:
                    rate = 1000.0 * (1.0 if setup == "go-http" else setups[setup](b, r))
                    if first:
                        rate *= first_effect if cold else 1.0
                        first = False
                    m = {
                        "setup": setup,
                        "gomaxprocs": n,
                        "connections": 100,
                        "repeat": (b - 1) * 3 + r,
                        "block": b,
                        "file": f"{setup}.{n}.{b}.{r}",
                        "exit_code": 0,
                        "started_at": stamp(t),
                        "ended_at": stamp(t + 1.0),
                    }
                    t += 1.06
                    manifest["measurements"].append(m)
                    cache[m["file"]] = SimpleNamespace(requests_per_sec=rate, requests=int(rate))
            t += 0.5
            entry["ended_at"] = stamp(t)
            manifest["passes"].append(entry)
    return manifest, cache


def test_before_the_minimum_every_value_gets_every_setup_in_turn():
    manifest, cache = manifest_of(3, {"nginx-http": lambda b, r: 0.6})
    manifest["passes"] = manifest["passes"][:-1]  # GOMAXPROCS=2 has a block fewer
    plan = allocation.plan_next(Path("."), manifest, cache)
    assert (plan["gomaxprocs"], plan["setups"], plan["rounds"]) == (2, None, 3)


def test_the_warm_up_is_tested_from_the_second_block_not_after_the_minimum():
    manifest, cache = manifest_of(1, {"nginx-http": round_noise}, gomaxprocs=(1,))
    plan = allocation.plan_next(Path("."), manifest, cache)
    assert plan["warmup_s"] == 1.0 and plan["warmup_why"].startswith("too few blocks")
    manifest, cache = manifest_of(2, {"nginx-http": round_noise}, gomaxprocs=(1,))
    plan = allocation.plan_next(Path("."), manifest, cache)
    assert plan["warmup_s"] == 0 and plan["warmup_why"].startswith("after the warm-up no first-measurement effect")
    assert plan["rounds"] == 3 and plan["rounds_why"].startswith("as planned")
    cold, cache = manifest_of(4, {"nginx-http": round_noise}, gomaxprocs=(1,), first_effect=0.7, cold_from=3)
    plan = allocation.plan_next(Path("."), cold, cache)
    assert plan["warmup_s"] == 1.0 and plan["warmup_why"].startswith("blocks without a warm-up had a first measurement at 70.0%")


def test_after_the_minimum_the_widest_value_and_only_its_unfinished_setups_go_next():
    wobbly = lambda b, r: 0.6 * (1 + 0.15 * ((b % 3) - 1) + 0.01 * r)  # +/-15% from start to start: wide
    steady = lambda b, r: 0.3 * (1 + 0.002 * r)
    manifest, cache = manifest_of(
        stats.MIN_BLOCKS, {"nginx-http": steady, "nginx-fcgi-tcp": wobbly, "nginx-fcgi-unix": steady}, gomaxprocs=(1,)
    )
    plan = allocation.plan_next(Path("."), manifest, cache)
    assert (plan["gomaxprocs"], plan["setups"]) == (1, ["go-http", "nginx-fcgi-tcp"])
    # Starts differ far more than rounds: few rounds per start.
    assert plan["rounds"] == allocation.MIN_ROUNDS and "nginx-fcgi-tcp (rps) decides" in plan["rounds_why"]


def round_noise(b: int, r: int) -> float:
    """Return a ratio with 15% noise from round to round (seeded by block and round) and no start effect."""
    return 0.6 * math.exp(random.Random(1000 * b + r).gauss(0, 0.15))


def test_quiet_starts_get_more_rounds_per_block():
    noisy_rounds = round_noise
    manifest, cache = manifest_of(stats.MIN_BLOCKS, {"nginx-http": noisy_rounds}, gomaxprocs=(1,))
    plan = allocation.plan_next(Path("."), manifest, cache)
    assert (
        plan["setups"] == ["go-http", "nginx-http"] and plan["rounds"] > 3
    )  # more than the default: 5 here (the sample's between-block variance is small, not 0)


def test_the_warm_up_is_dropped_without_a_first_measurement_effect_and_comes_back_with_one():
    noisy = round_noise
    manifest, cache = manifest_of(stats.MIN_BLOCKS, {"nginx-http": noisy}, gomaxprocs=(1,))
    plan = allocation.plan_next(Path("."), manifest, cache)
    assert plan["warmup_s"] == 0 and plan["warmup_why"].startswith("after the warm-up no first-measurement effect")
    cold, cache = manifest_of(
        stats.MIN_BLOCKS + 3, {"nginx-http": noisy}, gomaxprocs=(1,), first_effect=0.7, cold_from=stats.MIN_BLOCKS + 1
    )
    plan = allocation.plan_next(Path("."), cold, cache)
    assert plan["warmup_s"] == 1.0 and plan["warmup_why"].startswith("blocks without a warm-up had a first measurement at 70.0%")
