#!/usr/bin/env python3
"""Half-widths against run length, read from finished runs cut short; print figures, assert nothing.

Usage: python benchmarks/precision_frontier.py RUN_DIR... [--throughput 4,7,10,14] [--rate 2,4,6,8]

Issue 42's frontier: what a run of each length would have reached. Each run is read as if
it had stopped after its first k throughput blocks per GOMAXPROCS value (the worst
throughput or CPU-cost ratio half-width, as the stopping rule judges it) and after its
first j fixed-rate blocks (the worst capacity and the worst capacity-ratio half-width, as
`wrkreport build` computes them), with the seconds those blocks took (server start to
stop, as the manifest timed them). A cut run is not quite a shorter run: the stopping
rule's allocation chose the later blocks' setups from the earlier ones, and a run given
less time would have spent the same blocks the same way; the figures are per run, so
the spread between runs shows too. Run by hand on finished runs (raw/<run-id>/).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from wrkreport.analysis.capacities import capacities
from wrkreport.bench.capacity_rule import half_width
from wrkreport.bench.stopping_rule import block_durations, cpu_per_request_of, ratio_intervals
from wrkreport.core import stats
from wrkreport.core.capacity import slo_of
from wrkreport.runs.rate_measurements import read_rate_measurements


def seconds(entries: list[dict]) -> float:
    """Return the seconds the finished blocks took, start to stop of their servers."""
    return sum(block_durations(entries))


def throughput_cut(run_dir: Path, manifest: dict, blocks: int) -> tuple[float, float | None]:
    """Return (seconds, worst throughput or CPU-cost ratio half-width) of the run's first `blocks` blocks per GOMAXPROCS value."""
    cut = {**manifest, "measurements": [m for m in manifest["measurements"] if m.get("block", 1) <= blocks]}
    cache: dict = {}
    intervals = list(ratio_intervals(run_dir, cut, cache).values()) + list(
        ratio_intervals(run_dir, cut, cache, cpu_per_request_of).values()
    )
    worst = stats.worst_half_width(intervals)
    return seconds([p for p in manifest["passes"] if p.get("block", 1) <= blocks]), None if worst == float("inf") else worst


def rate_cut(manifest: dict, measurements: list, blocks: int) -> tuple[float, float | None, float | None]:
    """Return (seconds, worst capacity half-width, worst capacity-ratio half-width) of the first `blocks` fixed-rate blocks (checks left out)."""
    kept = [m for m in measurements if m.block <= blocks and not m.capacity_check]
    found = capacities(kept, slo_of(manifest["parameters"].get("slo")))
    caps = [w for c in found if (w := half_width(c.estimate)) is not None]
    ratios = [w for c in found if c.baseline is not None and (w := half_width(c.ratio)) is not None]
    unbounded = sum(1 for c in found if half_width(c.estimate) is None)
    spent = seconds([p for p in manifest.get("fixed_rate_passes") or [] if p["block"] <= blocks])
    if unbounded and blocks > 1:
        print(f"  ({unbounded} capacities a bound at {blocks} fixed-rate blocks)", file=sys.stderr)
    return spent, max(caps) if caps else None, max(ratios) if ratios else None


def pct(value: float | None) -> str:
    """Return a half-width as '+/-6.2%', or '-' without one."""
    return "-" if value is None else f"+/-{100 * value:.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--throughput", default="4,7,10,14", help="throughput blocks per GOMAXPROCS to cut at")
    parser.add_argument("--rate", default="2,3,4,5,6,7,8", help="fixed-rate blocks per GOMAXPROCS to cut at")
    args = parser.parse_args()
    by_k: dict[int, list] = {}
    by_j: dict[int, list] = {}
    for run_dir in args.runs:
        manifest = json.loads((run_dir / "manifest.json").read_text())
        print(
            f"{run_dir}: {manifest.get('status')}, {len(manifest['passes'])} throughput and {len(manifest.get('fixed_rate_passes') or [])} fixed-rate blocks"
        )
        for k in map(int, args.throughput.split(",")):
            if max((p.get("block", 1) for p in manifest["passes"]), default=0) >= k:
                spent, worst = throughput_cut(run_dir, manifest, k)
                by_k.setdefault(k, []).append((spent, worst))
                print(f"  {k:2d} throughput blocks: {spent:5.0f} s, worst ratio {pct(worst)}")
        measurements, _ = read_rate_measurements(run_dir, manifest)
        for j in map(int, args.rate.split(",")):
            if max((p["block"] for p in manifest.get("fixed_rate_passes") or []), default=0) >= j:
                spent, cap, ratio = rate_cut(manifest, measurements, j)
                by_j.setdefault(j, []).append((spent, cap, ratio))
                print(f"  {j:2d} fixed-rate blocks: {spent:5.0f} s, worst capacity {pct(cap)}, worst capacity ratio {pct(ratio)}")
    print("\nthroughput blocks | runs | seconds (median) | worst throughput/CPU ratio half-width, each run")
    for k, rows in sorted(by_k.items()):
        print(f"{k:17d} | {len(rows):4d} | {statistics.median(r[0] for r in rows):16.0f} | {', '.join(pct(r[1]) for r in rows)}")
    print("\nfixed-rate blocks | runs | seconds (median) | worst capacity, worst capacity ratio, each run")
    for j, rows in sorted(by_j.items()):
        print(
            f"{j:17d} | {len(rows):4d} | {statistics.median(r[0] for r in rows):16.0f} | {'; '.join(f'{pct(r[1])}, {pct(r[2])}' for r in rows)}"
        )


if __name__ == "__main__":
    main()
