#!/usr/bin/env python3
"""Measure how much the fixed-rate added latency moves between runs of the same settings: the run-to-run sd behind compare.rate_changes.RATE_RUN_SD.

Usage: python benchmarks/rate_drift.py RUN_DIR RUN_DIR [...] [--write FILE]

Give two or more run directories made with the same settings and the same --rates (for
example `./run_bench.sh --blocks 2 --rates 4000`, a few minutes apart, on an idle machine).
For each nginx setup, GOMAXPROCS value and percentile (p50, p99) measured at the same rate
in every run, it prints each run's mean added latency over go-http (its blocks' means, as
compare uses them), the pooled within-run sd of the block means, and the DerSimonian-Laird
between-run sd, in ms and as a share of the mean. --write keeps the block means as JSON
(tests/fixtures/rate_drift.json), from which tests/test_compare_rate_changes_calibration.py
recomputes the largest share. Prints figures; asserts nothing (machines are noisy).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from wrkreport.core import between_runs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from wrkreport.analysis.rate_latency import ADDED, BASELINE  # noqa: E402
from wrkreport.compare.rate_changes import block_units  # noqa: E402
from wrkreport.runs.directory import read_manifest  # noqa: E402
from wrkreport.runs.rate_measurements import read_rate_measurements  # noqa: E402


def run_units(run_dir: Path) -> dict[str, list[float]]:
    """Return one run's block means of added latency (ms), keyed 'setup gomaxprocs rate percentile'."""
    problems: list = []
    measurements, _ = read_rate_measurements(run_dir, read_manifest(run_dir, problems))
    found = {}
    for setup, n, rate in sorted({(m.setup, m.gomaxprocs, m.rate) for m in measurements if m.setup != BASELINE}):
        for name, p in ADDED:
            units = block_units(measurements, setup, n, rate, p)
            if units:
                found[f"{setup} {n} {rate} {name}"] = units
    return found


def shares(units_by_run: list[dict[str, list[float]]]) -> dict[str, tuple[float, float, float]]:
    """Return per figure measured in every run: (between-run sd ms, within-run sd ms, between-run sd / |mean|)."""
    found = {}
    for key in sorted(set.intersection(*(set(u) for u in units_by_run))):
        runs = [u[key] for u in units_by_run]
        spread = between_runs.dersimonian_laird(runs)
        between, within = spread.sd, math.sqrt(spread.pooled)
        level = abs(statistics.mean(statistics.mean(r) for r in runs))
        found[key] = (between, within, between / level if level else math.inf)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--write", type=Path, help="keep the runs' block means as JSON")
    args = parser.parse_args()
    if len(args.runs) < 2:
        parser.error("give at least two run directories")
    units = [run_units(run) for run in args.runs]
    for key, (between, within, share) in shares(units).items():
        means = ", ".join(f"{statistics.mean(u[key]):.3f}" for u in units)
        print(f"{key:32} means {means} ms; within-run sd {within:.3f} ms; between-run sd {between:.3f} ms ({share:.0%} of the mean)")
    if args.write:
        args.write.write_text(json.dumps({"runs": [run.name for run in args.runs], "units": units}, indent=1) + "\n")
        print(f"written: {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
