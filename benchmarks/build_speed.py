#!/usr/bin/env python3
"""Time `wrkreport build` on a synthetic run of many measurements; print figures, assert nothing.

Usage: python benchmarks/build_speed.py [--measurements 1000] [--tries 3] [--keep DIR] [--floor-only]

First it prints `wrkreport build` of tests/fixtures/runs/default-2cores against the import
floor (`python -c 'import wrkreport.report, matplotlib, pandas, jinja2'`), best of --tries
each, in wall and CPU time, and their ratios (the goal: at most 1.5x).

Then it writes a raw run directory of wrk 4.x outputs in wrk's exact layout (4 setups, 5
GOMAXPROCS values, as many repeats as needed), with header captures, prints `wrkreport
build` of it against the same floor (the goal: at most 2x for 1,000 measurements), and
times the steps of a build separately, in this process: reading, checks and analysis,
the charts alone, the page (charts and answer), rendering and writing. Run by hand on a
quiet machine; machines are noisy, so the test suite never asserts on these numbers
(`--tries 1 --measurements 40` only checks that it runs).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from wrkreport.analysis import reference
from wrkreport.analysis.analyze import load_analysis
from wrkreport.charts import saturation as charts
from wrkreport.report import build_page, render_html, results_json, write_outputs

SETUPS = {"go-http": 1.0, "nginx-http": 0.62, "nginx-fcgi-tcp": 0.24, "nginx-fcgi-unix": 0.29}
GOMAXPROCS = (1, 2, 4, 8, 16)
RESPONSE_BYTES = 153
HEAD = (
    b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n"
    b"Server: gophr\r\nDate: Sun, 22 Nov 2026 12:00:00 GMT\r\n\r\n"
)


def time_us(us: float) -> str:
    """Format microseconds as wrk's format_time_us does (us, ms, s)."""
    if us < 850:
        return f"{us:.2f}us"
    if us < 850_000:
        return f"{us / 1000:.2f}ms"
    return f"{us / 1e6:.2f}s"


def metric(n: float) -> str:
    """Format a count as wrk's format_metric does."""
    for unit in ("", "k", "M"):
        if n < 850:
            return f"{n:.2f}{unit}"
        n /= 1000
    return f"{n:.2f}G"


def binary(n: float) -> str:
    """Format bytes as wrk's format_binary does."""
    for unit in ("", "K", "M", "G"):
        if n < 870.4:
            return f"{n:.2f}{unit}"
        n /= 1024
    return f"{n:.2f}T"


def cell(value: str, width: int) -> str:
    """Pad one Thread Stats value as wrk's print_units does."""
    pad = 2 - value[-1:].isalpha() - value[-2:-1].isalpha()
    return f"{value:>{width - pad}}" + " " * pad


def wrk_output(rps: float, seconds: float = 6.0, threads: int = 2, connections: int = 100) -> str:
    """Return one plausible wrk 4.x --latency output with req/s rps."""
    requests = int(rps * seconds)
    latency_us = connections / rps * 1e6
    lines = [
        f"Running {seconds:.0f}s test @ http://127.0.0.1:8080/",
        f"  {threads} threads and {connections} connections",
        "  Thread Stats   Avg      Stdev     Max   +/- Stdev",
        "    Latency   "
        + cell(time_us(latency_us), 8)
        + cell(time_us(latency_us / 4), 10)
        + cell(time_us(latency_us * 8), 9)
        + f"{88.5:8.2f}%",
        "    Req/Sec   "
        + cell(metric(rps / threads), 8)
        + cell(metric(rps / 40), 10)
        + cell(metric(rps / threads * 1.2), 9)
        + f"{70.0:8.2f}%",
        "  Latency Distribution",
        *(f"{p:>6}%" + f"{time_us(latency_us * f):>10}" for p, f in ((50, 0.9), (75, 1.1), (90, 1.4), (99, 3.0))),
        f"  {requests} requests in {seconds:.2f}s, {binary(requests * RESPONSE_BYTES)}B read",
        f"Requests/sec: {rps:9.2f}",
        f"Transfer/sec: {binary(rps * RESPONSE_BYTES):>10}B",
    ]
    return "\n".join(lines) + "\n"


def make_run(root: Path, measurements: int, seed: int = 1) -> Path:
    """Write a synthetic run directory with about `measurements` wrk files."""
    rng = random.Random(seed)
    run = root / "20261122T120000Z"
    run.mkdir(parents=True)
    repeats = max(1, measurements // (len(SETUPS) * len(GOMAXPROCS)))
    for gomaxprocs in GOMAXPROCS:
        base = 40_000 * gomaxprocs**0.5
        for setup, share in SETUPS.items():
            (run / f"{setup}.gomaxprocs-{gomaxprocs}.headers.txt").write_bytes(HEAD)
            for k in range(1, repeats + 1):
                rps = base * share * rng.uniform(0.97, 1.03)
                (run / f"{setup}.gomaxprocs-{gomaxprocs}.run-{k}.wrk.txt").write_text(wrk_output(rps))
    return run


DEFAULT_RUN = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "runs" / "default-2cores"
FLOOR = "import wrkreport.report, matplotlib, pandas, jinja2"


def best_of(command: list[str], tries: int) -> tuple[float, float]:
    """Return the shortest wall time and the smallest CPU time (user + system) of a command over some tries, in seconds."""
    walls, cpus = [], []
    for _ in range(tries):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(walls), min(cpus)


def against_floor(run: Path, tries: int, what: str, goal: float) -> None:
    """Print `wrkreport build` of a run against the bare import of its libraries (the floor), best of tries.

    Wall time is the figure the goal is about; CPU time (user + system) is printed beside
    it because it moves less when other programs share the machine.
    """
    with tempfile.TemporaryDirectory(prefix="wrkreport-floor-") as out:
        floor = best_of([sys.executable, "-c", FLOOR], tries)
        build = best_of([sys.executable, "-m", "wrkreport", "build", str(run), "--out", out], tries)
    load = os.getloadavg()[0]
    print(f"import floor ({FLOOR}): {floor[0]:.2f} s wall, {floor[1]:.2f} s CPU")
    print(f"wrkreport build of {what}:  {build[0]:.2f} s wall, {build[1]:.2f} s CPU")
    print(
        f"ratio: {build[0] / floor[0]:.2f}x the floor in wall time, {build[1] / floor[1]:.2f}x in CPU time (goal: at most {goal:g}x); "
        f"best of {tries}, load average {load:.1f} on {os.cpu_count()} CPUs"
    )
    if sys.flags.dont_write_bytecode:
        print(
            "  (PYTHONDONTWRITEBYTECODE is set: unless its bytecode is already cached, every build compiles wrkreport's own modules, "
            "which the floor barely imports: about 0.1 s of CPU time on the 2-core machine)"
        )


def steps(run_dir: Path, out: Path) -> None:
    """Print the time of each step of one build, in this process."""
    when = datetime(2026, 11, 22, 12, tzinfo=timezone.utc)
    times = {}
    start = time.perf_counter()
    done = load_analysis(run_dir)
    times["read + checks + analysis"] = time.perf_counter() - start
    start = time.perf_counter()
    charts.throughput_chart(done.analysis)
    charts.ratio_chart(done.analysis, reference.article_ratios())
    charts.latency_chart(done.analysis)
    times["charts (alone, three of them)"] = time.perf_counter() - start
    start = time.perf_counter()
    page = build_page(done, out, when)
    times["page (every chart, the answer)"] = time.perf_counter() - start
    start = time.perf_counter()
    paths = write_outputs(out, render_html(page), done.table, results_json(done, when))
    times["render + write"] = time.perf_counter() - start
    print(f"{len(done.run.measurements)} measurements, {len(done.analysis.cells)} cells, status {done.checks.status}")
    for step, seconds in times.items():
        print(f"  {step:34s} {seconds * 1000:8.0f} ms")
    total = sum(seconds for step, seconds in times.items() if not step.startswith("charts (alone"))
    print(f"  {'total (excluding charts alone)':34s} {total * 1000:8.0f} ms")
    print(f"  index.html {paths['index.html'].stat().st_size / 1024:.0f} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measurements", type=int, default=1000)
    parser.add_argument("--tries", type=int, default=3, help="best of how many builds (and floors) each ratio takes")
    parser.add_argument("--keep", type=Path, help="write the synthetic run and report here and keep them")
    parser.add_argument("--floor-only", action="store_true", help="only compare the default run's build with the import floor")
    args = parser.parse_args()
    against_floor(DEFAULT_RUN, args.tries, "the default run", 1.5)
    if args.floor_only:
        return
    root = args.keep or Path(tempfile.mkdtemp(prefix="wrkreport-bench-"))
    try:
        run_dir = make_run(root / "raw", args.measurements)
        against_floor(run_dir, args.tries, f"{args.measurements:,} measurements", 2.0)
        steps(run_dir, root / "reports")
    finally:
        if args.keep is None:
            shutil.rmtree(root)


if __name__ == "__main__":
    main()
