#!/usr/bin/env python3
"""Print what estimators of issue 54's capacity (the rate holding the objective in 9 seconds of 10) would give; assert nothing.

Usage: python benchmarks/capacity_share_designs.py [--runs N] [--blocks 6,8] [--seconds 3] [--host last|noisy]

The model is tests/test_core_capacity_coverage.py's (through benchmarks/capacity_designs.py):
a second's p99 with t(3) noise on its log, per-start effects, the knees fitted to the 2-core
machine; every second of a multi-second step judged alone. Two hosts: `last`, the model's own
pauses (4% of seconds at 20-200 ms, independent), and `noisy`, the issue's host (a second
paused in 12% of seconds, in runs of 2 s on average, its p99 4-19 ms, log-uniform: 4.9% of
light-load seconds miss 10 ms). Truth: the marginal 90% rate, at which 90% of all seconds over
starts, noise and pauses meet the objective (Gauss-Hermite over the start effects).

Printed per design, setup and block count: the share of intervals holding the truth, the
median half-width (the issue's "+/-15%"), the estimate's mean log error, and runs without an
estimate (coverage counts the others). Figures of 2026-12-07 (200 runs each, so a coverage
+/-1.5-2 points; `--runs 200 --blocks 6,8`, then `--host noisy --seconds 5 --blocks 8`):

1. `typical second (today's)`: the tool's search and interval (the coverage test's
   simulated_runs, its own host), judged against this truth: 2-19% coverage, the estimate
   14-24% above the 90% rate (the 90% rate is 0.78-0.85 of the typical second's capacity).
2. `pooled share, LINK`: after a first block's bisection (its crossing times GUESS), every
   block measures RUNGS rates STEP apart around its centre for --seconds each; the centre
   moves a step up after a block whose seconds passed at least UP of the time, down at most
   DOWN (an up-and-down rule: it settles where a block's share is near 0.9); one binary
   regression over every second of every block (link: logit, or robit with 3 degrees of
   freedom, whose heavy tails take a second's t(3) noise and pauses), the 90% rate where it
   crosses 0.9, a jackknife over blocks with t(n-1); the ratio the difference of the two log
   rates, the same jackknife. 3-s rungs (12 s per setup and block): at 6 blocks 90-95%
   (capacity) and 91-95% (ratio), +/-14-19% and +/-25-29%; at 8 blocks 89-95% and 93-97%,
   +/-12-16% and +/-20-22%; no estimate in 8-24% of runs (the fit's slope not negative). The
   noisy host, 5-s rungs, 8 blocks: 89-92%, +/-11-17%. The closest to the issue's 93%, not
   there, and at 2-3 times a block's search time today.
3. `share grid`: no model; every block after the first measures one fixed grid of rates
   (GRID times the first crossing); per rate, the mean over blocks of each block's share of
   seconds within; the 0.9 crossing of that (made non-increasing) interpolated on log rate; a
   jackknife over blocks: 63-75%, the estimate 9-16% low, none in 25-40% of runs. The share's
   plateau below the knee is 0.96 (the pauses), so a few paused seconds at a low rate put the
   pooled share under 0.9 there: the nearer a host's floor is to the 10% the share allows,
   the less the rate is determined by the seconds.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import random
import statistics
import sys
from pathlib import Path

import numpy as np
from scipy import optimize, stats

from wrkreport.core.capacity import FAIL, HEADROOM, PASS, Step, block_capacity, next_rate, search_rng, search_steps

HERE = Path(__file__).resolve().parent
SHARE = 0.9
RUNGS, STEP, GUESS, UP, DOWN = 4, 1.1, 0.85, 0.95, 0.8
GRID = (0.65, 0.7, 0.75, 0.8, 0.85, 0.91, 0.97)
NOISY = (0.12, 2.0, 4.0, 19.0)  # share of seconds paused, mean run (s), paused p99 range (ms)
NAMES = ("go-http", "nginx-http", "nginx-fcgi-unix")


def designs_module():
    """Return benchmarks/capacity_designs.py (its M is the coverage test's model)."""
    spec = importlib.util.spec_from_file_location("capacity_designs", HERE / "capacity_designs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


M = designs_module().M
OBJECTIVE = M.SLO.ms


class Host:
    """One run's host: a second's p99 at a rate for a start, with its pauses (None: the rate not held)."""

    def __init__(self, kind: str, rng: random.Random) -> None:
        self.kind, self.rng, self.paused = kind, rng, False

    def second(self, knee, start, rate: float) -> float | None:
        rng = self.rng
        if self.kind == "last" and rng.random() < M.PAUSE:
            return rng.uniform(*M.PAUSE_MS)
        if self.kind == "noisy":
            share, run, low, high = NOISY
            leave = 1 / run
            self.paused = rng.random() >= leave if self.paused else rng.random() < share * leave / (1 - share)
        if rate >= start.saturation:
            return None
        p99 = M.median_p99(knee, start, rate) * math.exp(M.NOISE_SCALE * M.student_t3(rng))
        if self.kind == "noisy" and self.paused:
            p99 = max(p99, math.exp(rng.uniform(math.log(low), math.log(high))))
        return p99

    def within(self, knee, start, rate: float) -> bool:
        value = self.second(knee, start, rate)
        return value is not None and value <= OBJECTIVE


def floor_share(kind: str) -> float:
    """Return the share of seconds the host's pauses leave within the objective."""
    if kind == "last":
        return 1 - M.PAUSE
    share, _, low, high = NOISY
    return 1 - share * max(0.0, math.log(high / OBJECTIVE) / math.log(high / low))


def marginal_share(name: str, rate: float, kind: str) -> float:
    """Return the share of seconds within the objective at rate, over starts, noise and pauses: the coverage test's
    pass_probability (its integral over the start effects), its own pauses' share swapped for the host's."""
    return M.pass_probability(M.SETUPS[name], rate) / (1 - M.PAUSE) * floor_share(kind)


def truth(name: str, kind: str) -> float:
    """Return the marginal 90% rate (bisection on a log scale)."""
    low, high = 100.0, 2 * M.SETUPS[name].saturation
    while high / low > 1.0005:
        middle = math.sqrt(low * high)
        low, high = (middle, high) if marginal_share(name, middle, kind) >= SHARE else (low, middle)
    return math.sqrt(low * high)


def first_crossing(rng: random.Random, host: Host, run: str, name: str, start) -> float:
    """Return a first block's typical-second crossing, searched as the tool searches (1-s steps)."""
    knee, steps = M.SETUPS[name], []
    high = round(knee.closed_loop * HEADROOM)
    steps.append(Step(M.LIGHT, PASS if host.within(knee, start, M.LIGHT) else FAIL, 1.0))
    left = search_steps(M.LIGHT, high)
    while (rate := next_rate(steps, high, left, search_rng(run, 1, 1, name, len(steps)))) is not None:
        left -= 1
        value = host.second(knee, start, rate)
        verdict = PASS if value is not None and value <= OBJECTIVE else FAIL
        steps.append(Step(rate, verdict, value if value is not None else M.BACKLOG_MS))
    return block_capacity(1, steps, high, M.SLO).rps


def pooled_runs(kind: str, blocks: int, seconds: int, runs: int, seed: str) -> list[dict[str, list]]:
    """Return design 2's runs: per setup, each block's (log rate, within) seconds (the first block's rungs included)."""
    rng, found = random.Random(f"{seed}:pooled:{kind}:{blocks}:{seconds}"), []
    for number in range(runs):
        host, rows, centre = Host(kind, rng), {n: [] for n in NAMES}, {}
        for block in range(blocks):
            starts = M.draw_starts(rng, NAMES)
            for name in NAMES:
                knee, start = M.SETUPS[name], starts[name]
                if block == 0:
                    centre[name] = GUESS * first_crossing(rng, host, f"{seed}:{number}", name, start)
                offset = rng.random()
                rates = [centre[name] * STEP ** (k + offset - RUNGS / 2) for k in range(RUNGS)]
                mine = [(math.log(r), host.within(knee, start, r)) for r in rates for _ in range(seconds)]
                rows[name].append(mine)
                share = statistics.mean(ok for _, ok in mine)
                centre[name] *= STEP if share >= UP else 1 / STEP if share <= DOWN else 1.0
        found.append(rows)
    return found


def binary_fit(blocks: list[list[tuple[float, bool]]], link: str) -> float | None:
    """Return the log rate where one binary regression of every second on log rate crosses SHARE; None when it cannot."""
    x = np.array([r for block in blocks for r, _ in block])
    y = np.array([ok for block in blocks for _, ok in block], dtype=float)
    if y.min() == y.max():
        return None
    cdf, quantile = (
        (stats.logistic.cdf, stats.logistic.ppf(SHARE)) if link == "logit" else (lambda z: stats.t.cdf(z, 3), stats.t.ppf(SHARE, 3))
    )
    centre = x.mean()

    def loss(p: np.ndarray) -> float:
        share = np.clip(cdf(p[0] + p[1] * (x - centre)), 1e-12, 1 - 1e-12)
        return -float(np.sum(y * np.log(share) + (1 - y) * np.log(1 - share)))

    a, b = optimize.minimize(loss, [1.0, -10.0], method="Nelder-Mead", options={"xatol": 1e-6, "fatol": 1e-8, "maxiter": 2000}).x
    return centre + (quantile - a) / b if b < -0.1 else None


def grid_runs(kind: str, blocks: int, seconds: int, runs: int, seed: str) -> list[dict[str, tuple[list[float], np.ndarray]]]:
    """Return design 3's runs: per setup, its grid of rates and each later block's share of seconds within at each."""
    rng, found = random.Random(f"{seed}:grid:{kind}:{blocks}:{seconds}"), []
    for number in range(runs):
        host, grid, shares = Host(kind, rng), {}, {n: [] for n in NAMES}
        for block in range(blocks + 1):
            starts = M.draw_starts(rng, NAMES)
            for name in NAMES:
                knee, start = M.SETUPS[name], starts[name]
                if block == 0:
                    grid[name] = [g * first_crossing(rng, host, f"{seed}:{number}", name, start) for g in GRID]
                    continue
                shares[name].append([statistics.mean(host.within(knee, start, r) for _ in range(seconds)) for r in grid[name]])
        found.append({n: (grid[n], np.array(shares[n])) for n in NAMES})
    return found


def grid_crossing(grid: list[float], shares: np.ndarray) -> float | None:
    """Return the log rate where the mean share (made non-increasing) crosses SHARE; None outside the grid."""
    mean = np.minimum.accumulate(shares.mean(axis=0))
    if mean[0] < SHARE or mean[-1] >= SHARE:
        return None
    i = int(np.argmax(mean < SHARE))
    x = np.log(grid)
    return x[i - 1] + (mean[i - 1] - SHARE) / (mean[i - 1] - mean[i]) * (x[i] - x[i - 1])


def jackknife(estimate, blocks: int) -> tuple[float, float] | None:
    """Return (estimate(None), its jackknife standard error over blocks) for estimate(left_out); None when any is None."""
    every = estimate(None)
    left = [estimate(i) for i in range(blocks)]
    if every is None or None in left:
        return None
    mean = statistics.mean(left)
    return every, math.sqrt((blocks - 1) / blocks * sum((v - mean) ** 2 for v in left))


def line(label: str, found: list[tuple[float, float] | None], target: float, blocks: int) -> str:
    """Return one printed line: coverage, median half-width, mean log error, runs without an estimate."""
    t = float(stats.t.ppf(0.975, blocks - 1))
    kept = [f for f in found if f is not None]
    if not kept:
        return f"  {label:<40} no estimate in any run"
    held = statistics.mean(float(abs(v - target) <= t * se) for v, se in kept)
    width = math.exp(statistics.median(t * se for _, se in kept)) - 1
    error = statistics.mean(v - target for v, _ in kept)
    return f"  {label:<40} covers {held:6.1%}   +/-{width:6.1%}   mean log error {error:+.3f}   none in {1 - len(kept) / len(found):.0%}"


def drop(blocks: list, left_out: int | None) -> list:
    """Return the blocks without the one left out (None: every block)."""
    return [b for i, b in enumerate(blocks) if i != left_out]


def pooled_capacity(run: dict[str, list], name: str, link: str, blocks: int) -> tuple[float, float] | None:
    """Return design 2's log capacity of one setup and its jackknife standard error."""
    return jackknife(lambda i: binary_fit(drop(run[name], i), link), blocks)


def pooled_ratio(run: dict[str, list], name: str, link: str, blocks: int) -> tuple[float, float] | None:
    """Return design 2's log ratio of one setup to go-http (paired by block in the jackknife) and its standard error."""

    def ratio(i: int | None) -> float | None:
        mine, base = binary_fit(drop(run[name], i), link), binary_fit(drop(run["go-http"], i), link)
        return None if mine is None or base is None else mine - base

    return jackknife(ratio, blocks)


def grid_capacity(run: dict[str, tuple[list[float], np.ndarray]], name: str, blocks: int) -> tuple[float, float] | None:
    """Return design 3's log capacity of one setup and its jackknife standard error."""
    grid, shares = run[name]
    return jackknife(lambda i: grid_crossing(grid, shares if i is None else np.delete(shares, i, axis=0)), blocks)


def today(estimate, blocks: int) -> tuple[float, float] | None:
    """Return today's interval (core.capacity.combine) as (log estimate, standard error); None for a bound or nothing."""
    if estimate is None or estimate.bound is not None:
        return None
    return math.log(estimate.value), math.log(estimate.high / estimate.value) / stats.t.ppf(0.975, blocks - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=200, help="simulated runs per design (200: a coverage's standard error about 1.6 points)"
    )
    parser.add_argument("--blocks", default="6,8", help="block counts, comma-separated")
    parser.add_argument("--seconds", type=int, default=3, help="seconds per rung (designs 2 and 3)")
    parser.add_argument("--host", choices=("last", "noisy"), default="last")
    parser.add_argument("--seed", default="capacity-share-designs")
    args = parser.parse_args()
    true = {n: math.log(truth(n, args.host)) for n in NAMES}
    print(f"host {args.host}: the 90% rate (req/s) beside the typical second's (the tool's truth today)")
    for name in NAMES:
        print(
            f"  {name:<16} {math.exp(true[name]):>8,.0f}  ({math.exp(true[name]) / M.true_capacity(name):.2f} of {M.true_capacity(name):,.0f})"
        )
    M.RUNS = args.runs
    for blocks in (int(b) for b in args.blocks.split(",")):
        print(f"\n{blocks} blocks, {args.runs} runs, {args.seconds}-s rungs")
        typical = M.simulated_runs(blocks)  # the model's own pauses: today's estimator on the `last` host
        pooled = pooled_runs(args.host, blocks, args.seconds, args.runs, args.seed)
        grids = grid_runs(args.host, blocks, args.seconds, args.runs, args.seed)
        for name in NAMES:
            print(f" {name}")
            print(
                line("typical second (today's, `last` host)", [today(M.combine(run[name]), blocks) for run in typical], true[name], blocks)
            )
            for link in ("logit", "robit"):
                print(line(f"pooled share, {link}", [pooled_capacity(run, name, link, blocks) for run in pooled], true[name], blocks))
            print(line("share grid", [grid_capacity(run, name, blocks) for run in grids], true[name], blocks))
        for name in NAMES[1:]:
            print(f" {name} / go-http")
            for link in ("logit", "robit"):
                found = [pooled_ratio(run, name, link, blocks) for run in pooled]
                print(line(f"pooled share, {link}", found, true[name] - true["go-http"], blocks))


if __name__ == "__main__":
    main()
