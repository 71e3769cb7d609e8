"""Precision: the driver's stopping rule (throughput and CPU-cost ratio intervals over blocks so far), its time estimates and the gaps between measurements."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from ..core import stats
from ..core import verdict as verdicts
from ..core.sequential import Intervals, intervals_of
from ..core.setups import (  # every overhead ratio: a setup's req/s over its baseline's, per GOMAXPROCS and level
    BASELINE,
    SERVER_PROCESSES,
    baseline_of,
)
from .cpu import read_cpu_record
from .manifest import levels_of
from .stopping_plan import VERDICT, rule_of
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


def values_by_round(run_dir: Path, manifest: dict, cache: dict, value_of=rate_of) -> dict[tuple, float]:
    """Return value_of (req/s by default) of every measurement that counts, keyed (GOMAXPROCS, level, setup, block, repeat)."""
    levels = levels_of(manifest["parameters"])
    found: dict[tuple, float] = {}
    for m in manifest["measurements"]:
        value = value_of(run_dir, m, cache)
        if value is not None:
            found[(m["gomaxprocs"], m.get("connections", levels[0]), m["setup"], m.get("block", 1), m["repeat"])] = value
    return found


def paired(values: dict[tuple, float], gomaxprocs: int, level: int, a: str, b: str) -> list[list[tuple[float, float]]]:
    """Return the (a, b) pairs of one group, round k with round k, grouped by block (blocks where both were measured)."""
    by_block: dict[int, list] = {}
    for (n, c, setup, block, k), value in values.items():
        other = values.get((n, c, b, block, k))
        if (n, c, setup) == (gomaxprocs, level, a) and other is not None:
            by_block.setdefault(block, []).append((k, value, other))
    return [[(x, y) for _, x, y in sorted(by_block[block])] for block in sorted(by_block)]


def ratio_blocks(
    run_dir: Path, manifest: dict, cache: dict, value_of=rate_of
) -> dict[tuple[int, int, str], list[list[tuple[float, float]]]]:
    """Return, per (GOMAXPROCS, level, setup), the (setup, go-http) pairs of value_of (req/s by default) of each block, paired on the round."""
    rates = values_by_round(run_dir, manifest, cache, value_of)
    groups = sorted(
        {(n, c, setup) for n, c, setup, _, _ in rates if setup != baseline_of(setup)}
    )  # not a baseline over itself (go-http, app)
    found = {(n, c, setup): paired(rates, n, c, setup, baseline_of(setup)) for n, c, setup in groups}  # TLS setups: over go-https
    return {key: blocks for key, blocks in found.items() if blocks}


def ratio_intervals(run_dir: Path, manifest: dict, cache: dict, value_of=rate_of) -> dict[tuple[int, int, str], stats.Interval]:
    """Return every overhead ratio's interval (block as unit; one block: over its rounds); of CPU per request with value_of=cpu_per_request_of.

    A run with repeated intervals (core/sequential.py) gets them: none below the first look."""
    design = designs(manifest["parameters"]).design
    return {key: stats.block_ratio_interval(blocks, design) for key, blocks in ratio_blocks(run_dir, manifest, cache, value_of).items()}


def designs(params: dict) -> Intervals:
    """Return the run's repeated-interval designs (parameters.intervals): every ratio's, and one verdict comparison's; both None
    for a run recorded before them."""
    return intervals_of(params.get("intervals"))


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


def more_blocks_needed(blocks: dict[str, int], worst: float, target: float, min_blocks: int, critical=None) -> int:
    """Return about how many more blocks (all GOMAXPROCS together) would meet the target.

    The half-width is t(b-1) * sd / sqrt(b) over b blocks: the sd per block is worked back
    from the worst half-width, and b grows until t * sd / sqrt(b) is within the target (the
    t quantile shrinks too, so 1/sqrt(b) alone overstates what is left). One block has no
    block-unit interval yet: it needs the minimum. critical(b): the multiplier at b blocks
    (a repeated interval's, core/sequential.py); the plain 95% t by default.

    >>> more_blocks_needed({"1": 7, "2": 7}, 0.10, 0.05, 7)
    28
    >>> more_blocks_needed({"1": 2, "2": 1}, float("inf"), 0.05, 7)
    11
    """
    short = sum(max(0, min_blocks - b) for b in blocks.values())
    if worst == float("inf"):
        return short
    return max(short, sum(blocks_for(b, worst, target, critical) - b for b in blocks.values() if b >= max(2, min_blocks)))


MAX_BLOCKS_ESTIMATED = 100_000  # past this the answer is "far more than anyone will run"


def blocks_for(done: int, worst: float, target: float, critical=None) -> int:
    """Return the blocks (at least done) at which a half-width of worst after done blocks would shrink to target.

    >>> blocks_for(10, 0.0526, 0.05)
    11
    """
    multiplier = critical or (lambda b: stats.t_975(b - 1))
    sd = worst * math.sqrt(done) / multiplier(done)
    b = done
    while b < MAX_BLOCKS_ESTIMATED and multiplier(b) * sd / math.sqrt(b) > target:
        b += 1
    return b


def group_verdicts(run_dir: Path, manifest: dict, cache: dict) -> dict[tuple[int, int], tuple[verdicts.Verdict, dict[str, stats.Interval]]]:
    """Return each group's verdict so far (core/verdict.py) from the contenders' throughput ratios and the leader's head-to-head
    intervals, with those intervals (leader / other, keyed by the other)."""
    params = manifest["parameters"]
    family = designs(params).family
    rates = values_by_round(run_dir, manifest, cache)
    found = {}
    for n in params["gomaxprocs"]:
        for c in levels_of(params):
            ratios = {}
            for setup in verdicts.contenders(params["setups"]):
                blocks = paired(rates, n, c, setup, baseline_of(setup))
                if blocks:
                    ratios[setup] = stats.block_ratio_interval(blocks).estimate
            compared: dict[str, stats.Interval] = {}

            def against(best: str, other: str, n=n, c=c, compared=compared) -> tuple[float | None, float | None]:
                blocks = paired(rates, n, c, best, other) if verdicts.comparable(best, other) else []
                if not blocks:
                    return None, None
                compared[other] = stats.block_ratio_interval(blocks, family)
                return compared[other].low, compared[other].high

            found[(n, c)] = (verdicts.decide(ratios, against), compared)
    return found


def blocks_to_decide(found: stats.Interval, critical, margin: float = verdicts.TIE_MARGIN) -> int | None:
    """Return about how many blocks would settle an open comparison (its interval clear of 1.0 on the side of its estimate, or
    within the tie margin), from the sd per block its width implies; None without an interval.

    >>> blocks_to_decide(stats.Interval(1.06, 0.97, 1.16, 12, "block", 4), lambda b: 3.0)
    10
    """
    if found.low is None or found.high is None or found.blocks < 2:
        return None
    sd = (math.log(found.high) - math.log(found.low)) / 2 * math.sqrt(found.blocks) / critical(found.blocks)
    distance = abs(math.log(found.estimate))
    room = max(distance, math.log(1 + margin) - distance)  # to exclude 1.0, or to fit the margin: whichever needs fewer
    b = found.blocks
    while b < MAX_BLOCKS_ESTIMATED and critical(b) * sd / math.sqrt(b) >= room:
        b += 1
    return b


def deciding_setups(found: verdicts.Verdict, setups: list[str]) -> list[str]:
    """Return the setups whose ratios must reach the target for a group's verdict: the leader and those tied with it, or without
    a contender every setup with a ratio (Go's alternatives alone: node-http, go-fasthttp).

    >>> deciding_setups(verdicts.Verdict("named", "nginx-http", beaten=("nginx-fcgi-tcp",)), ["go-http", "nginx-http", "nginx-fcgi-tcp"])
    ['nginx-http']
    >>> deciding_setups(verdicts.Verdict("none"), ["go-http", "node-http"])
    ['node-http']
    """
    twins = [s for s in setups if verdicts.TWIN_SEPARATOR in s]  # --variant: the A/B figure is what that run asks
    pairs = [*twins, *(s.split(verdicts.TWIN_SEPARATOR)[0] for s in twins)]
    if found.kind == verdicts.NONE:
        return [s for s in setups if s != baseline_of(s) and verdicts.TWIN_SEPARATOR not in s] + twins
    return list(dict.fromkeys([*found.leaders, *pairs]))


def group_key(n: int, c: int, levels: list[int]) -> str:
    """Return a group's key in the precision record: '1' for GOMAXPROCS=1, '1/100' in a sweep of connection levels."""
    return str(n) if len(levels) == 1 else f"{n}/{c}"


def verdict_records(
    run_dir: Path, manifest: dict, cache: dict, intervals: dict[tuple, stats.Interval], target: float, last: int
) -> dict[str, dict]:
    """Return each group's verdict record: kind, leader, tied, beaten, open, the deciding setups' widest half-width, and done
    (decided with every deciding ratio within the target, or at the block ceiling)."""
    params = manifest["parameters"]
    levels = levels_of(params)
    blocks = blocks_per_gomaxprocs(manifest)
    records = {}
    family = designs(params).family
    for (n, c), (found, compared) in group_verdicts(run_dir, manifest, cache).items():
        deciding = deciding_setups(found, params["setups"])
        needed = [blocks_to_decide(compared[o], family.critical) for o in found.open if o in compared] if family is not None else []
        widths = [i.half_width_rel for (g, lvl, setup, _), i in intervals.items() if (g, lvl) == (n, c) and setup in deciding]
        precise = bool(widths) and all(w is not None and w <= target for w in widths)
        worst = None if not widths or any(w is None for w in widths) else max(widths)
        decided = found.decided or found.kind == verdicts.NONE
        records[group_key(n, c, levels)] = {
            "gomaxprocs": n,
            "connections": c,
            "kind": found.kind,
            "best": found.best,
            "tied": list(found.tied),
            "beaten": list(found.beaten),
            "open": list(found.open),
            "deciding": deciding,
            "worst_half_width_pct": None if worst is None else round(100 * worst, 2),
            "precise": precise,
            "decided": found.decided,
            "answered": decided and precise,
            "done": (decided and precise) or blocks.get(str(n), 0) >= last,  # answered, or at the block ceiling
            "blocks_to_decide": max((b for b in needed if b is not None), default=None),  # an open verdict: about how many would settle it
        }
    return records


def all_intervals(run_dir: Path, manifest: dict, cache: dict) -> dict[tuple, stats.Interval]:
    """Return every throughput and CPU-cost ratio's interval, keyed (GOMAXPROCS, level, setup, 'rps' or 'cpu')."""
    found = {}
    for kind, value_of in (("rps", rate_of), ("cpu", cpu_per_request_of)):
        for (n, c, setup), interval in ratio_intervals(run_dir, manifest, cache, value_of).items():
            found[n, c, setup, kind] = interval
    return found


def assess(run_dir: Path, manifest: dict, cache: dict, elapsed_s: float) -> dict:
    """Return the precision record of the run so far: target, met, worst and median half-width, blocks, time per block, more-time estimate;
    with the verdict rule, each group's verdict too (met: every group done)."""
    params = manifest["parameters"]
    target = params.get("precision_pct", stats.PRECISION_TARGET * 100) / 100
    keyed = all_intervals(run_dir, manifest, cache)
    throughput = [i for k, i in keyed.items() if k[3] == "rps"]
    cpu = [i for k, i in keyed.items() if k[3] == "cpu"]
    intervals = throughput + cpu  # the target covers the CPU cost ratios too (none without .cpu.json records)
    design = designs(params).design
    min_blocks = design.first if design is not None else stats.MIN_BLOCKS
    critical = design.critical if design is not None else None
    blocks = blocks_per_gomaxprocs(manifest)
    rule = rule_of(params)
    records = None
    if rule == VERDICT:
        records = verdict_records(run_dir, manifest, cache, keyed, target, design.last)
        deciding = [i for (n, c, setup, _), i in keyed.items() if setup in records[group_key(n, c, levels_of(params))]["deciding"]]
        met = bool(records) and all(r["answered"] for r in records.values())
        counted = deciding or intervals
    else:
        met = stats.precision_met(intervals, target, min_blocks) and all(b >= min_blocks for b in blocks.values())
        counted = intervals
    widths = [i.half_width_rel for i in counted if i.half_width_rel is not None]
    worst = stats.worst_half_width(counted)
    per_block = block_seconds(manifest)
    if rule == VERDICT:
        going = {
            n: b for n, b in blocks.items() if not any(r["done"] and r["answered"] for r in records.values() if str(r["gomaxprocs"]) == n)
        }
        to_decide = sum(
            max(0, r["blocks_to_decide"] - blocks.get(str(r["gomaxprocs"]), 0))
            for r in records.values()
            if not r["answered"] and r["blocks_to_decide"] is not None
        )
        more = 0 if met else max(more_blocks_needed(going or blocks, worst, target, min_blocks, critical), to_decide)
    else:
        more = 0 if met else more_blocks_needed(blocks, worst, target, min_blocks, critical)
    record = {
        "rule": rule,
        "target_pct": params.get("precision_pct"),
        "max_time_s": params.get("max_time_s"),
        "met": met,
        "worst_half_width_pct": None if worst == float("inf") else round(100 * worst, 2),
        "median_half_width_pct": round(100 * statistics.median(widths), 2) if widths else None,
        "ratios": len(throughput),
        "cpu_ratios": len(cpu),
        "cpu_worst_half_width_pct": None
        if not cpu or stats.worst_half_width(cpu) == float("inf")
        else round(100 * stats.worst_half_width(cpu), 2),
        "blocks": blocks,
        "block_s": None if per_block is None else round(per_block, 2),
        "elapsed_s": round(elapsed_s, 1),
        "stop_reason": None,
        "more_blocks_estimate": more,
        "more_time_estimate_s": None if per_block is None else round(more * per_block),
    }
    if records is not None:
        record["verdicts"] = records
        record["ceiling"] = design.last  # blocks per GOMAXPROCS; an open verdict that needs more says so (beyond_ceiling)
        record["beyond_ceiling"] = any(not r["answered"] and (r["blocks_to_decide"] or 0) > design.last for r in records.values())
    return record


def verdict_words(record: dict) -> str:
    """Return each group's verdict in a few words: 'GOMAXPROCS=1: nginx-http named; GOMAXPROCS=2: nginx-http leads, open against nginx-fcgi-unix'."""
    said = []
    for key, group in (record.get("verdicts") or {}).items():
        where = f"GOMAXPROCS={key}"
        if group["kind"] == verdicts.NAMED:
            said.append(f"{where}: {group['best']} cheapest")
        elif group["kind"] == verdicts.TIED:
            said.append(f"{where}: {', '.join([group['best'], *group['tied']])} tied")
        elif group["kind"] == verdicts.OPEN:
            said.append(f"{where}: {group['best']} leads, open against {', '.join(group['open'])}")
        elif group["kind"] == verdicts.ONLY:
            said.append(f"{where}: {group['best']} alone")
    return "; ".join(said)


def decide(record: dict, params: dict) -> str | None:
    """Return why the run stops after this block (None: go on): target met (the verdict rule: every group's answer decided
    and its deciding ratios within the target), time limit, or block ceiling."""
    verdict_rule = record.get("rule") == VERDICT
    if record["met"]:
        if verdict_rule:
            return f"answer decided: {verdict_words(record)}, their ratios within +/-{params['precision_pct']:g}%"
        what = "every throughput and CPU-cost ratio" if record.get("cpu_ratios") else "every ratio"
        return f"target met: {what} within +/-{params['precision_pct']:g}% with at least {params.get('min_blocks', stats.MIN_BLOCKS)} blocks per GOMAXPROCS"
    minimum = params.get("min_blocks", stats.MIN_BLOCKS)
    if record["ratios"] == 0 and all(b >= minimum for b in record["blocks"].values()):
        return f"no ratio to aim at ({BASELINE} not measured): stopped after {minimum} blocks per GOMAXPROCS"
    if verdict_rule and all(r["done"] for r in record["verdicts"].values()):
        return f"block ceiling: {params['max_blocks']} blocks per GOMAXPROCS ({verdict_words(record)})"
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
