#!/usr/bin/env python3
"""Where a run's interval width comes from: per-measurement noise, its persistence in time, and the time the precision target needs at that noise.

Usage: python benchmarks/measurement_noise.py RUN_DIR [RUN_DIR ...] [--target PCT]

For each run (blocks with .cpu.json records; any --duration) it prints, per ratio
(setup / go-http, GOMAXPROCS):
- the within-block sd of one round's log ratio (the noise of one measurement pair) and
  the between-block sd (a server start's own shift, by one-way ANOVA);
- the lag correlation of consecutive measurements' residuals within a block, after each
  (setup, block)'s mean is removed: how long a slow spell of the machine lasts;
- the sd of a measurement's log ratio to a go-http measurement 1, 2 and 3 places away;
- the one-second measurements per ratio the target needs at that noise
  (t * sd / sqrt(n) <= target) and the seconds a run would then spend measuring, with
  every round measuring go-http and only the setups still short of it.
Comparing runs made with --duration 1 and 3 tells whether a longer measurement averages
the noise away (sd / sqrt(3)) or carries it whole (a per-measurement effect).
Prints figures; asserts nothing (the machine's noise is what it measures).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from wrkreport.bench import allocation  # noqa: E402
from wrkreport.bench import stopping_rule as precision
from wrkreport.core import stats  # noqa: E402
from wrkreport.core.setups import BASELINE  # noqa: E402


def series(run_dir: Path) -> tuple[dict, list[dict]]:
    """Return the run's parameters and its counted block measurements in time order: setup, GOMAXPROCS, block, round, log req/s."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    cache: dict = {}
    found = []
    for m in manifest["measurements"]:
        rate = precision.rate_of(run_dir, m, cache)
        if rate and m.get("block") is not None and m.get("started_at"):
            found.append(
                {
                    "setup": m["setup"],
                    "g": m["gomaxprocs"],
                    "block": m["block"],
                    "round": m["repeat"],
                    "t": m["started_at"],
                    "log": math.log(rate),
                }
            )
    return manifest["parameters"], sorted(found, key=lambda x: x["t"])


def round_pairs(items: list[dict]) -> dict[tuple[int, str], list[list[float]]]:
    """Return, per (GOMAXPROCS, setup), each block's log ratios to go-http's measurement of the same round."""
    base = {(x["g"], x["block"], x["round"]): x["log"] for x in items if x["setup"] == BASELINE}
    found: dict[tuple[int, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for x in items:
        partner = base.get((x["g"], x["block"], x["round"]))
        if x["setup"] != BASELINE and partner is not None:
            found[(x["g"], x["setup"])][x["block"]].append(x["log"] - partner)
    return {key: list(blocks.values()) for key, blocks in found.items()}


def lag_correlations(items: list[dict], lags=(1, 2, 3, 4)) -> dict[int, float]:
    """Return the correlation of residuals (log minus its setup's mean in that block) k places apart within a block."""
    cells: dict[tuple, list[float]] = defaultdict(list)
    for x in items:
        cells[(x["setup"], x["g"], x["block"])].append(x["log"])
    means = {key: statistics.mean(v) for key, v in cells.items()}
    by_block: dict[tuple, list[float]] = defaultdict(list)
    for x in items:
        by_block[(x["g"], x["block"])].append(x["log"] - means[(x["setup"], x["g"], x["block"])])
    found = {}
    for lag in lags:
        a = [r[i] for r in by_block.values() for i in range(len(r) - lag)]
        b = [r[i + lag] for r in by_block.values() for i in range(len(r) - lag)]
        if len(a) > 2 and statistics.pstdev(a) > 0 and statistics.pstdev(b) > 0:
            found[lag] = statistics.correlation(a, b)
    return found


def distance_sds(items: list[dict]) -> dict[int, tuple[int, float]]:
    """Return, per distance 1-3 in the block's order, (pairs, sd) of a setup's log minus a go-http measurement's that far away, each setup's mean difference removed."""
    by_block: dict[tuple, list[dict]] = defaultdict(list)
    for x in items:
        by_block[(x["g"], x["block"])].append(x)
    diffs: dict[int, dict[tuple, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (g, _), seq in by_block.items():
        for i, x in enumerate(seq):
            if x["setup"] == BASELINE:
                continue
            for d in (1, 2, 3):
                for j in (i - d, i + d):
                    if 0 <= j < len(seq) and seq[j]["setup"] == BASELINE:
                        diffs[d][(g, x["setup"])].append(x["log"] - seq[j]["log"])
    found = {}
    for d, cells in diffs.items():
        squares = [(v - statistics.mean(values)) ** 2 for values in cells.values() for v in values]
        dof = sum(len(values) - 1 for values in cells.values())
        if dof > 0:
            found[d] = (len(squares), math.sqrt(sum(squares) / dof))
    return found


def pairs_needed(sd: float, target: float) -> int:
    """Return the smallest n with t(n-1) * sd / sqrt(n) <= target (one pair per round, no start effect).

    >>> pairs_needed(0.1, 0.05)
    18
    """
    n = 2
    while stats.t_975(n - 1) * sd / math.sqrt(n) > target and n < 100_000:
        n += 1
    return n


def seconds_needed(needed: dict[tuple[int, str], int], duration_s: float) -> float:
    """Return the measuring time when each round measures go-http and every setup of its GOMAXPROCS still short of its pairs.

    >>> seconds_needed({(1, "a"): 3, (1, "b"): 1}, 1.0)  # 1 round of go-http, a, b; 2 of go-http, a
    7.0
    """
    total = 0.0
    for g in {g for g, _ in needed}:
        counts = sorted(n for (h, _), n in needed.items() if h == g)
        done = 0
        for i, n in enumerate(counts):
            total += (n - done) * (1 + len(counts) - i) * duration_s  # go-http and the setups still short
            done = n
    return total


def report(run_dir: Path, target: float) -> list[str]:
    """Return one run's lines."""
    params, items = series(run_dir)
    duration = params.get("duration_s") or 1
    lines = [f"{run_dir.name}: --duration {duration}, {len(items)} measurements in blocks"]
    needed = {}
    for (g, setup), blocks in sorted(round_pairs(items).items()):
        found = allocation.components(blocks)
        if found is None:
            continue
        sd_w, sd_b = math.sqrt(found.within), math.sqrt(found.between)
        needed[(g, setup)] = pairs_needed(sd_w, target)
        lines.append(
            f"  GOMAXPROCS={g} {setup:<16} within-block sd {sd_w:.3f}  between-block sd {sd_b:.3f}  "
            f"blocks {found.blocks}  pairs for +/-{target:.0%}: {needed[(g, setup)]}"
        )
    lags = lag_correlations(items)
    lines.append("  lag correlation of residuals: " + ", ".join(f"{k}: {v:+.2f}" for k, v in lags.items()))
    dist = distance_sds(items)
    lines.append(
        "  sd of log ratio to a go-http measurement d places away: "
        + ", ".join(f"d={d}: {sd:.3f} (n={n})" for d, (n, sd) in sorted(dist.items()))
    )
    if needed:
        lines.append(
            f"  measuring time the target needs at this noise: {seconds_needed(needed, duration):.0f} s "
            f"(block starts and the fixed-rate phase not counted)"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--target", type=float, default=5.0, help="half-width target in %% (default 5)")
    args = parser.parse_args()
    for run_dir in args.runs:
        if not (run_dir / "manifest.json").is_file():
            print(f"{run_dir}: no manifest.json", file=sys.stderr)
            return 2
        print("\n".join(report(run_dir, args.target / 100)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
