#!/usr/bin/env python3
"""Run ./run_bench.sh (default profile, or the options given) into a temporary --out; print what precision it reached and how fast; assert nothing.

Usage: python benchmarks/precision.py [--keep DIR] [-- RUN_BENCH_OPTIONS...]
       e.g. python benchmarks/precision.py -- --precision 2 --max-time 30m

Prints the wall time, the blocks per GOMAXPROCS, the worst and median half-width of the
overhead ratios' 95% intervals, whether the target was met (and the more-time estimate
when not), the stop reason, the median and largest gap between measurements, and the
machine's load average before and after (the figures depend on what else runs). Run by
hand: a default run takes up to 6 minutes, and machines are noisy, so the test suite
never asserts on these numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def load() -> str:
    """Return the 1, 5 and 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def report_lines(manifest: dict, wall_s: float) -> list[str]:
    """Return the figures of a finished run."""
    record, gaps = manifest.get("precision") or {}, manifest.get("gaps_s") or {}
    worst, median = record.get("worst_half_width_pct"), record.get("median_half_width_pct")
    lines = [
        f"status            {manifest.get('status')}",
        f"wall time         {wall_s:.0f} s",
        f"blocks            {', '.join(f'GOMAXPROCS={n}: {b}' for n, b in (record.get('blocks') or {}).items())}",
        f"measurements      {len(manifest.get('measurements', []))}",
        f"worst half-width  {'-' if worst is None else f'+/-{worst:g}%'}",
        f"median half-width {'-' if median is None else f'+/-{median:g}%'}",
        f"target            +/-{record.get('target_pct')}%: {'met' if record.get('met') else 'NOT met'}",
        f"stop reason       {record.get('stop_reason')}",
    ]
    if not record.get("met") and record.get("more_time_estimate_s"):
        lines.append(f"more time needed  about {record['more_time_estimate_s'] / 60:.1f} min (estimate)")
    if gaps:
        lines.append(f"gap median / max  {gaps['median']:.3f} s / {gaps['max']:.3f} s ({gaps['count']} gaps)")
    return lines


def main() -> int:
    """Run the benchmark once and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="put the run here instead of a temporary directory")
    parser.add_argument("options", nargs=argparse.REMAINDER, help="run_bench.sh options after --")
    args = parser.parse_args()
    options = args.options[1:] if args.options[:1] == ["--"] else args.options
    with tempfile.TemporaryDirectory(prefix="wrkreport-precision-") as tmp:
        out = Path(args.keep) if args.keep else Path(tmp)
        before = load()
        started = time.monotonic()
        done = subprocess.run([str(REPO / "run_bench.sh"), *options, "--out", str(out)], check=False)
        wall_s = time.monotonic() - started
        after = load()
        manifest_path = out / "latest" / "manifest.json"
        if not manifest_path.exists():
            print(f"precision.py: run_bench.sh exited {done.returncode} without a run", file=sys.stderr)
            return 1
        manifest = json.loads(manifest_path.read_text())
        print(f"run_bench.sh {' '.join(options) or '(default profile)'}: exit {done.returncode}")
        print("\n".join(report_lines(manifest, wall_s)))
        print(f"load average      {before} before, {after} after ({os.cpu_count()} CPUs)")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
