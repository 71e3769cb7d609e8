#!/usr/bin/env python3
"""Print how much a fixed-rate measurement's p99 moves within one attack, from real runs' vegeta files; assert nothing.

Usage: python benchmarks/second_noise.py RUN_DIR [RUN_DIR ...] [--windows 4] [--objective-ms 10]

Why: the capacity's meaning. The search judges each 1-s measurement by its p99, and the
capacity it finds is the rate at which one measurement meets the objective half the time.
Whether that is close to what an SLO means (the objective held in most seconds) depends on
how far a p99 moves from one stretch of time to the next at the same rate, with the same
start of the servers: tests/test_core_capacity_coverage.py models it as a t(3) noise
of log-sd 0.52 per measurement. Here every kept attack of a run (one setup, one rate, one
block) is split by its requests' start times into WINDOWS equal stretches; the spread of
log p99 over the stretches of one attack is that noise with the start and the rate held
fixed. Printed: the spread's quartiles over attacks whose whole p99 lies below 30 ms (held,
near or below the knee), and, by the whole attack's p99, the share of its stretches within
the objective.
"""

from __future__ import annotations

import argparse
import gzip
import math
import re
import statistics
from pathlib import Path

import numpy as np

NAME = re.compile(r"^(?P<setup>[a-z0-9~-]+)\.gomaxprocs-(?P<g>\d+)\.block-(?P<block>\d+)\.run-\d+\.rate-(?P<rate>\d+)\.vegeta\.csv\.gz$")
MIN_REQUESTS = 400  # a stretch's p99 from fewer requests rests on its 4 slowest: left out


def stretches_p99(path: Path, windows: int) -> tuple[float, list[float]] | None:
    """Return an attack's p99 (ms) and each of its `windows` stretches' (by start time), None when too few requests."""
    with gzip.open(path, "rt") as text:
        data = np.loadtxt(text, delimiter=",", usecols=(0, 2), dtype=np.int64, ndmin=2)
    if len(data) < windows * MIN_REQUESTS:
        return None
    starts, latency = data[:, 0], data[:, 1]
    cut = np.linspace(starts.min(), starts.max() + 1, windows + 1)
    found = [
        np.percentile(latency[(starts >= a) & (starts < b)], 99) / 1e6
        for a, b in zip(cut, cut[1:])
        if ((starts >= a) & (starts < b)).sum() >= MIN_REQUESTS
    ]
    return float(np.percentile(latency, 99) / 1e6), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories (a run_bench.sh --out directory or one run in it)")
    parser.add_argument(
        "--windows", type=int, default=4, help="stretches per attack (4: a quarter second each, ~5,000 requests at 20,000 req/s)"
    )
    parser.add_argument("--objective-ms", type=float, default=10.0)
    args = parser.parse_args()
    files = sorted({f.resolve() for run in args.runs for f in run.rglob("*.vegeta.csv.gz") if NAME.match(f.name)})
    attacks = [found for f in files if (found := stretches_p99(f, args.windows)) is not None]
    near = [(whole, parts) for whole, parts in attacks if whole < 30 and len(parts) == args.windows]
    spread = sorted(statistics.stdev(math.log(p) for p in parts) for _, parts in near)
    print(f"{len(files)} vegeta files, {len(near)} attacks held below 30 ms split in {args.windows} stretches")
    print(
        f"sd of log p99 within one attack: quartiles {spread[len(spread) // 4]:.2f} / {spread[len(spread) // 2]:.2f} / "
        f"{spread[3 * len(spread) // 4]:.2f} (the coverage model's per-measurement log-sd: 0.52)"
    )
    for low, high in ((0, 5), (5, 10), (10, 20), (20, 30)):
        group = [parts for whole, parts in near if low <= whole < high]
        if group:
            share = statistics.mean(sum(p <= args.objective_ms for p in parts) / len(parts) for parts in group)
            print(f"attacks with p99 {low}-{high} ms: {len(group):4d}; their stretches within {args.objective_ms:g} ms: {share:.0%}")


if __name__ == "__main__":
    main()
