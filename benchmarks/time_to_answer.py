#!/usr/bin/env python3
"""Time the README's first command from fresh clones: `./run_bench.sh && wrkreport build`; print figures, assert nothing.

Usage: python benchmarks/time_to_answer.py [--runs N] [--reinstall] [--keep DIR] [-- RUN_BENCH_OPTIONS...]

Each run clones this checkout's HEAD into a new temporary directory and runs the command there
as a new user would (with --reinstall, `pip uninstall wrkreport` first, so the script installs
it from the clone, as on a fresh machine), timing it from start to the build's last line. Then
one line per run: the wall time, the blocks per GOMAXPROCS, each value's verdict, the widest
deciding ratio, the cheapest connection's throughput and CPU-cost ratios with their intervals,
and why the run stopped; the CPU model first. Run with nothing else on the machine: the
figures are the machine's as much as the tool's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def cpu_model() -> str:
    """Return the CPU's model name and the CPUs this process may use."""
    names = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")]
    return f"{names[0] if names else 'unknown CPU'}, {len(names)} CPUs"


def ratio_text(ratio: dict) -> str:
    """Return '0.58 (0.55-0.61)'."""
    if ratio.get("ratio") is None:
        return "-"
    if ratio.get("ci_low") is None:
        return f"{ratio['ratio']:.3g} (no interval)"
    return f"{ratio['ratio']:.3g} ({ratio['ci_low']:.3g}-{ratio['ci_high']:.3g})"


def summary(clone: Path, wall: float) -> str:
    """Return one run's line from its manifest and results.json."""
    run = (clone / "raw" / "latest").resolve()
    manifest = json.loads((run / "manifest.json").read_text())
    results = json.loads((clone / "reports" / "results.json").read_text())
    record = manifest.get("precision") or {}
    said = [f"{wall // 60:.0f}m{wall % 60:02.0f}s", "blocks " + ", ".join(f"G{n}: {b}" for n, b in (record.get("blocks") or {}).items())]
    for key, group in (record.get("verdicts") or {}).items():
        best = group.get("best")
        figures = [r for r in results["ratios"] + results.get("cpu_ratios", []) if r["setup"] == best and str(r["gomaxprocs"]) == key]
        shown = "; ".join(f"{r['metric']} {ratio_text(r)}" for r in figures)
        said.append(f"G{key}: {group['kind']} {best} [{shown}]")
    said.append(f"widest deciding +/-{record.get('worst_half_width_pct')}%")
    said.append(f"stopped: {record.get('stop_reason')}")
    return " | ".join(said)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--reinstall", action="store_true", help="pip uninstall wrkreport before each run: the script installs it from the clone"
    )
    parser.add_argument("--keep", type=Path, help="copy each run's raw/<run-id>/ into this directory")
    parser.add_argument("options", nargs="*", help="run_bench.sh options after --")
    args = parser.parse_args()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    print(f"{cpu_model()}; {head}; ./run_bench.sh {' '.join(args.options)} && wrkreport build", flush=True)
    for i in range(1, args.runs + 1):
        top = Path(tempfile.mkdtemp(prefix="wrkreport-clone."))
        try:
            clone = top / "wrkreport"
            subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
            if args.reinstall:
                subprocess.run([sys.executable, "-m", "pip", "uninstall", "--quiet", "--yes", "wrkreport"], check=False)
            options = " ".join(f"'{o}'" for o in args.options)
            start = time.monotonic()
            done = subprocess.run(f"./run_bench.sh {options} && wrkreport build", shell=True, cwd=clone, capture_output=True, text=True)
            wall = time.monotonic() - start
            if done.returncode != 0:
                print(f"run {i}: exit {done.returncode} after {wall:.0f} s\n{done.stderr[-2000:]}", flush=True)
                continue
            print(f"run {i}: {summary(clone, wall)}", flush=True)
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                shutil.copytree((clone / "raw" / "latest").resolve(), args.keep / f"run-{i}", symlinks=True)
        finally:
            shutil.rmtree(top, ignore_errors=True)
    if args.reinstall:  # leave this checkout's install as it was
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "-e", str(REPO)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
