#!/usr/bin/env python3
"""The spread of each setup's block capacities in finished runs, beside profiles.CAPACITY_SPREAD; print figures, assert nothing.

Usage: python benchmarks/capacity_spread.py RUN_DIR...

A plan counts on the fixed-rate blocks its most scattered setup needs for --capacity-precision
(rate_options.expected_rate_blocks), from profiles.CAPACITY_SPREAD: per setup, the standard
deviation over blocks of the log of its capacity, or of its capacity ratio to its baseline
(paired by block) where that is larger, the larger over GOMAXPROCS values. This prints those
figures per run (blocks whose capacity is a bound left out, as the estimate leaves them), pooled
over the runs, the table's value and the blocks each would need for +/-15%, so the table can be
kept to what runs show. Run by hand on finished runs (raw/<run-id>/).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from wrkreport.analysis.capacities import capacities
from wrkreport.bench.profiles import CAPACITY_PRECISION_PCT, CAPACITY_SPREAD, DEFAULT_CAPACITY_SPREAD, RATE_PHASE
from wrkreport.bench.rate_options import blocks_for_spread
from wrkreport.core.capacity import slo_of
from wrkreport.core.stats import stdev
from wrkreport.runs.rate_measurements import read_rate_measurements


def log_sd(values: list[float]) -> float | None:
    """Return the standard deviation of the logs of values (None below two)."""
    return stdev([math.log(v) for v in values])


def spreads(run_dir: Path) -> dict[str, tuple[float, int]]:
    """Return {setup: (its spread, the blocks it rests on)}: the larger of the capacity's and the ratio's log-sd, over GOMAXPROCS values."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    measurements, _ = read_rate_measurements(run_dir, manifest)
    found = capacities([m for m in measurements if not m.capacity_check], slo_of(manifest["parameters"].get("slo")))
    point = {(c.setup, c.gomaxprocs): {b.block: b.rps for b in c.blocks if b.bound is None} for c in found}
    out: dict[str, tuple[float, int]] = {}
    for c in found:
        own = point[(c.setup, c.gomaxprocs)]
        base = point.get((c.baseline, c.gomaxprocs), {}) if c.baseline else {}
        paired = [own[b] / base[b] for b in own if b in base]
        figures = [s for s in (log_sd(list(own.values())), log_sd(paired)) if s is not None]
        if figures and max(figures) > out.get(c.setup, (-1.0, 0))[0]:
            out[c.setup] = (max(figures), len(own))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args()
    profile = RATE_PHASE["default"]
    per_setup: dict[str, list[tuple[float, int]]] = {}
    for run_dir in args.runs:
        for setup, figure in spreads(run_dir).items():
            per_setup.setdefault(setup, []).append(figure)
    print(f"setup | log-sd each run (blocks) | pooled | table | blocks for +/-{CAPACITY_PRECISION_PCT:.0f}% at the pooled, at the table's")
    for setup, figures in sorted(per_setup.items()):
        table = CAPACITY_SPREAD.get(setup, DEFAULT_CAPACITY_SPREAD)
        pooled = pooled_sd(figures)
        need = [blocks_for_spread(s, CAPACITY_PRECISION_PCT, 2, 99) for s in (pooled, table)]
        shown = ", ".join(f"{s:.3f} ({b})" for s, b in figures)
        print(
            f"{setup} | {shown} | {pooled:.3f} | {table:.3f}{'' if setup in CAPACITY_SPREAD else ' (default)'} | {need[0]}, {need[1]}"
            f" (ceiling {profile['rate_blocks_max']})"
        )


def pooled_sd(figures: list[tuple[float, int]]) -> float:
    """Return the runs' spreads pooled: the root of their variances weighted by degrees of freedom (blocks - 1), as a table entry should be
    (one run's sd over 6 blocks is itself uncertain by about +/-30%; the largest of several overstates the spread)."""
    return math.sqrt(sum((b - 1) * s * s for s, b in figures) / sum(b - 1 for _, b in figures))


if __name__ == "__main__":
    main()
