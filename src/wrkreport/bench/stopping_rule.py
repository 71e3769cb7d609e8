"""Precision: the driver's stopping rule (throughput and CPU-cost ratio intervals over blocks so far), its time estimates and the gaps between measurements."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from ..core import stats
from .cpu import read_cpu_record
from .manifest import levels_of
from ..core.setups import BASELINE, SERVER_PROCESSES, baseline_of  # every overhead ratio: a setup's req/s over its baseline's, per GOMAXPROCS and level
from .values import parse_iso



def counted(run_dir: Path, measurement: dict, cache: dict) -> object | None:
    """Return a measurement's wrk totals when it counts (wrk exit 0, all answers 2xx/3xx, a rate above 0); None otherwise. Parsed once per file."""
    from ..core.errors import ParseError
    from .remote_clients.totals import measurement_files, totals

    name = measurement["file"]
    if name not in cache:
        try:
            result = totals([run_dir / f for f in measurement_files(measurement)])  # several clients: added up
        except ParseError:
            cache[name] = None
        else:
            ok = measurement.get("exit_code", 0) == 0 and not result.non_2xx_3xx and (result.requests_per_sec or 0) > 0
            cache[name] = result if ok else None
    return cache[name]


def rate_of(run_dir: Path, measurement: dict, cache: dict) -> float | None:
    """Return a measurement's req/s when it counts; None otherwise."""
    result = counted(run_dir, measurement, cache)
    return None if result is None else result.requests_per_sec


def cpu_per_request_of(run_dir: Path, measurement: dict, cache: dict) -> float | None:
    """Return a measurement's server CPU seconds per request (every server process, as the analysis sums them) when it counts; None otherwise. Read once per file."""
    key = f"{measurement['file']} cpu"
    if key not in cache:
        cache[key] = read_cpu_per_request(run_dir, measurement, cache)
    return cache[key]


def read_cpu_per_request(run_dir: Path, measurement: dict, cache: dict) -> float | None:
    """Return cpu_per_request_of's figure, read from the measurement's .cpu.json."""
    result = counted(run_dir, measurement, cache)
    record = read_cpu_record(run_dir, measurement.get("cpu_file")) if result is not None and result.requests else None
    if record is None or not isinstance(record.get("processes"), dict):
        return None
    try:
        busy = [usage["user_s"] + usage["system_s"] for name, usage in record["processes"].items() if name in SERVER_PROCESSES and usage]
    except (KeyError, TypeError):
        return None
    return sum(busy) / result.requests if busy and sum(busy) > 0 else None


def ratio_blocks(run_dir: Path, manifest: dict, cache: dict, value_of=rate_of) -> dict[tuple[int, int, str], list[list[tuple[float, float]]]]:
    """Return, per (GOMAXPROCS, level, setup), the (setup, go-http) pairs of value_of (req/s by default) of each block, paired on the round."""
    levels = levels_of(manifest["parameters"])
    rates: dict[tuple, float] = {}
    for m in manifest["measurements"]:
        rate = value_of(run_dir, m, cache)
        if rate is not None:
            rates[(m["gomaxprocs"], m.get("connections", levels[0]), m["setup"], m.get("block", 1), m["repeat"])] = rate
    found: dict[tuple[int, int, str], dict[int, list]] = {}
    for (n, c, setup, block, k), rate in sorted(rates.items()):
        base = rates.get((n, c, baseline_of(setup), block, k))  # TLS setups: over go-https
        if setup != baseline_of(setup) and base is not None:  # not a baseline over itself (go-http, app)
            found.setdefault((n, c, setup), {}).setdefault(block, []).append((rate, base))
    return {key: [by_block[b] for b in sorted(by_block)] for key, by_block in found.items()}


def ratio_intervals(run_dir: Path, manifest: dict, cache: dict, value_of=rate_of) -> dict[tuple[int, int, str], stats.Interval]:
    """Return every overhead ratio's interval (block as unit; one block: over its rounds); of CPU per request with value_of=cpu_per_request_of."""
    return {key: stats.block_ratio_interval(blocks) for key, blocks in ratio_blocks(run_dir, manifest, cache, value_of).items()}


def block_durations(entries: list[dict]) -> list[float]:
    """Return the wall seconds of each finished entry of a list, started_at to ended_at: a block's (`passes`, `fixed_rate_passes`: start
    of the servers to their stop) or a measurement's (`fixed_rate_measurements`)."""
    return [(parse_iso(p["ended_at"]) - parse_iso(p["started_at"])).total_seconds() for p in entries if p.get("ended_at")]


def block_seconds(manifest: dict) -> float | None:
    """Return the mean wall time of the finished blocks (start of the servers to their stop), None before one has finished."""
    times = block_durations(manifest["passes"])
    return statistics.mean(times) if times else None


def blocks_per_gomaxprocs(manifest: dict) -> dict[str, int]:
    """Return the finished blocks of each GOMAXPROCS value."""
    counts = {str(n): 0 for n in manifest["parameters"]["gomaxprocs"]}
    for entry in manifest["passes"]:
        if entry.get("ended_at"):
            counts[str(entry["gomaxprocs"])] = counts.get(str(entry["gomaxprocs"]), 0) + 1
    return counts


def more_blocks_needed(blocks: dict[str, int], worst: float, target: float, min_blocks: int) -> int:
    """Return about how many more blocks (all GOMAXPROCS together) would meet the target.

    The half-width is t(b-1) * sd / sqrt(b) over b blocks: the sd per block is worked back
    from the worst half-width, and b grows until t * sd / sqrt(b) is within the target (the
    t quantile shrinks too, so 1/sqrt(b) alone overstates what is left). One block has no
    block-unit interval yet: it needs the minimum.

    >>> more_blocks_needed({"1": 7, "2": 7}, 0.10, 0.05, 7)
    28
    >>> more_blocks_needed({"1": 2, "2": 1}, float("inf"), 0.05, 7)
    11
    """
    short = sum(max(0, min_blocks - b) for b in blocks.values())
    if worst == float("inf"):
        return short
    return max(short, sum(blocks_for(b, worst, target) - b for b in blocks.values() if b >= 2))


MAX_BLOCKS_ESTIMATED = 100_000  # past this the answer is "far more than anyone will run"


def blocks_for(done: int, worst: float, target: float) -> int:
    """Return the blocks (at least done) at which a half-width of worst after done blocks would shrink to target.

    >>> blocks_for(10, 0.0526, 0.05)
    11
    """
    sd = worst * math.sqrt(done) / stats.t_975(done - 1)
    b = done
    while b < MAX_BLOCKS_ESTIMATED and stats.t_975(b - 1) * sd / math.sqrt(b) > target:
        b += 1
    return b


def assess(run_dir: Path, manifest: dict, cache: dict, elapsed_s: float) -> dict:
    """Return the precision record of the run so far: target, met, worst and median half-width, blocks, time per block, more-time estimate."""
    params = manifest["parameters"]
    target = params.get("precision_pct", stats.PRECISION_TARGET * 100) / 100
    throughput = list(ratio_intervals(run_dir, manifest, cache).values())
    cpu = list(ratio_intervals(run_dir, manifest, cache, cpu_per_request_of).values())
    intervals = throughput + cpu  # the target covers the CPU cost ratios too (none without .cpu.json records)
    widths = [i.half_width_rel for i in intervals if i.half_width_rel is not None]
    worst = stats.worst_half_width(intervals)
    blocks = blocks_per_gomaxprocs(manifest)
    min_blocks = stats.MIN_BLOCKS
    met = stats.precision_met(intervals, target, min_blocks) and all(b >= min_blocks for b in blocks.values())
    per_block = block_seconds(manifest)
    more = 0 if met else more_blocks_needed(blocks, worst, target, min_blocks)
    return {
        "target_pct": params.get("precision_pct"),
        "max_time_s": params.get("max_time_s"),
        "met": met,
        "worst_half_width_pct": None if worst == float("inf") else round(100 * worst, 2),
        "median_half_width_pct": round(100 * statistics.median(widths), 2) if widths else None,
        "ratios": len(throughput),
        "cpu_ratios": len(cpu),
        "cpu_worst_half_width_pct": None if not cpu or stats.worst_half_width(cpu) == float("inf") else round(100 * stats.worst_half_width(cpu), 2),
        "blocks": blocks,
        "block_s": None if per_block is None else round(per_block, 2),
        "elapsed_s": round(elapsed_s, 1),
        "stop_reason": None,
        "more_blocks_estimate": more,
        "more_time_estimate_s": None if per_block is None else round(more * per_block),
    }


def decide(record: dict, params: dict) -> str | None:
    """Return why the run stops after this block (None: go on): target met, time limit, or block ceiling."""
    if record["met"]:
        what = "every throughput and CPU-cost ratio" if record.get("cpu_ratios") else "every ratio"
        return f"target met: {what} within +/-{params['precision_pct']:g}% with at least {stats.MIN_BLOCKS} blocks per GOMAXPROCS"
    if record["ratios"] == 0 and all(b >= stats.MIN_BLOCKS for b in record["blocks"].values()):
        return f"no ratio to aim at ({BASELINE} not measured): stopped after {stats.MIN_BLOCKS} blocks per GOMAXPROCS"
    if min(record["blocks"].values()) >= params["max_blocks"]:
        return f"block ceiling: {params['max_blocks']} blocks per GOMAXPROCS"
    limit, per_block = params.get("max_time_s"), record["block_s"]
    if limit is not None:
        limit -= params.get("rate_phase_s") or 0  # the fixed-rate phase's time, after the blocks (bench/rate_options.py)
    if limit is not None and per_block is not None and record["elapsed_s"] + per_block > limit:
        phase = f" less the fixed-rate phase's ~{params['rate_phase_s']}s" if params.get("rate_phase_s") else ""
        return f"time limit: another block (~{per_block:.0f}s) would end after --max-time {params['max_time_s']}s{phase}"
    return None


def gaps(manifest: dict) -> list[float]:
    """Return the seconds between one wrk ending and the next starting, within a block and level (timestamps with ms only)."""
    found = []
    series: dict[tuple, list[tuple]] = {}
    for m in manifest["measurements"]:
        start, end = m.get("started_at", ""), m.get("ended_at", "")
        if "." in start and "." in end:
            series.setdefault((m["gomaxprocs"], m.get("block"), m.get("connections")), []).append((parse_iso(start), parse_iso(end)))
    for items in series.values():
        items.sort()
        found += [(b[0] - a[1]).total_seconds() for a, b in zip(items, items[1:])]
    return found


def gap_record(manifest: dict) -> dict | None:
    """Return {'median', 'max', 'count'} of the gaps in seconds, None without two timed measurements in a row."""
    found = gaps(manifest)
    if not found:
        return None
    return {"median": round(statistics.median(found), 3), "max": round(max(found), 3), "count": len(found)}
