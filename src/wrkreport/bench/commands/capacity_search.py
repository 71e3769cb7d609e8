"""The helper's subcommands of the capacity search at --slo: each block's next rate of a setup, the capacity checks after a GOMAXPROCS value's last block, and whether the value takes another block (the capacity rule), with the time the checks still need."""

from __future__ import annotations

import math
import random
import statistics
import sys
from pathlib import Path

from ...core.capacity import (
    HEADROOM,
    MAX_STEPS,
    block_capacity,
    combine,
    combine_ratio,
    ladder_centre,
    ladder_next,
    next_rate,
    search_rng,
    search_steps,
    slo_of,
)
from ...core.capacity_check import next_check_rate
from ...core.setups import baseline_of
from ..capacity_rule import Width, decide, half_width, usual_width, widest
from ..manifest import load_manifest, save_manifest
from ..progress import elapsed_of
from ..rate_options import check_seconds, rate_setups
from ..stopping_rule import block_durations
from ..values import parse_iso, utc_now
from .rate_phase import WRK_RATES, measured_step, setup_rate


def cmd_capacity_next(args) -> int:
    """Print the capacity search's next measurements in a fixed-rate block: one line 'SETUP RATE HIGH' (HIGH: the search's upper end, capacity.HEADROOM x the setup's closed-loop req/s) per setup still searching, in a shuffled order; none when done.

    A setup's first block bisects (capacity.next_rate); a later one measures the ladder
    around the earlier blocks' capacities at this GOMAXPROCS (capacity.ladder_next).
    """
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    params = manifest["parameters"]
    passes = [p for p in manifest.get("fixed_rate_passes") or [] if (p["gomaxprocs"], p["block"]) == (args.gomaxprocs, args.block)]
    slo = slo_of(params.get("slo"))
    if slo is None or not passes:
        return 0
    planned = passes[-1]["rates"]
    lines = []
    for setup in sorted(args.setups.split(",")):  # the shuffle below decides the order, whatever LIST's
        measured = searched_entries(manifest, setup, args.gomaxprocs)
        entries = [e for e in measured if e["block"] == args.block]
        closed = setup_rate(run_dir, manifest, setup, args.gomaxprocs, WRK_RATES)
        if not entries or not planned or closed is None or closed * HEADROOM <= min(planned):
            continue
        high = closed * HEADROOM
        steps = [measured_step(run_dir, e, manifest) for e in entries]
        taken = sum(1 for e in entries if e["rate"] not in planned)
        centre = ladder_centre(earlier_capacities(run_dir, manifest, measured, args.block, slo))
        if centre is None:
            allowed = min(search_steps(min(planned), high), params.get("search_steps", MAX_STEPS))  # runs before 2026-11-29 had no cap
            rate = next_rate(steps, round(high), allowed - taken, search_rng(params["seed"], args.gomaxprocs, args.block, setup, taken + 1))
        else:
            offset = search_rng(params["seed"], args.gomaxprocs, args.block, setup, 0).random()
            rate = ladder_next(steps, planned, centre, round(high), offset)
        if rate is not None:
            lines.append(f"{setup} {rate} {round(high)}")
    random.Random(
        f"{params['seed']}:capacity-order:{args.gomaxprocs}:{args.block}:{len(manifest.get('fixed_rate_measurements') or [])}"
    ).shuffle(lines)
    print("\n".join(lines), end="\n" if lines else "")
    return 0


def cmd_capacity_check(args) -> int:
    """Print the next capacity checks of a fixed-rate block: one line 'SETUP RATE' per setup still checking (capacity_check.next_check_rate:
    the first at its capacity over the blocks so far, none for a bound; after a miss, CHECK_STEP lower, up to the run's check_tries), in a shuffled order."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    params = manifest["parameters"]
    slo = slo_of(params.get("slo"))
    if slo is None:
        return 0
    lines, made = [], 0
    for setup in sorted(args.setups.split(",")):
        searched = searched_entries(manifest, setup, args.gomaxprocs)
        checks = [
            e
            for e in manifest.get("fixed_rate_measurements") or []
            if (e["setup"], e["gomaxprocs"], e["block"]) == (setup, args.gomaxprocs, args.block) and e.get("capacity_check")
        ]
        rate = next_check_rate(
            combine(earlier_capacities(run_dir, manifest, searched, args.block + 1, slo)),
            [measured_step(run_dir, e, manifest) for e in checks],
            params.get("check_tries", 1),
            {e["rate"] for e in searched + checks if e["block"] == args.block},
        )
        made += len(checks)
        if rate is not None:
            lines.append(f"{setup} {rate}")
    reason = checks_cut_by_time(manifest, len(lines)) if lines and made else None
    if reason is not None:
        names = sorted(line.split()[0] for line in lines)
        print(f"[run_bench] capacity check GOMAXPROCS={args.gomaxprocs}: no lower check of {', '.join(names)}: {reason}", file=sys.stderr)
        manifest.setdefault("capacity_checks_cut", []).append({"gomaxprocs": args.gomaxprocs, "setups": names, "reason": reason})
        save_manifest(run_dir, manifest)
        lines = []
    again = f":{made}" if made else ""  # a later round's own order (the first's is what runs before 2026-11-29 drew)
    random.Random(f"{params['seed']}:capacity-check:{args.gomaxprocs}:{args.block}{again}").shuffle(lines)
    print("\n".join(lines), end="\n" if lines else "")
    return 0


def checks_cut_by_time(manifest: dict, count: int) -> str | None:
    """Return why a round of `count` lower capacity checks (after misses) does not start: it, the fixed-rate blocks the capacity
    rule has granted that have not started (promised_blocks) and the first checks of the GOMAXPROCS values not yet checked would
    end after --max-time; None when they fit or no --max-time is set. The blocks' plan counts on CHECKS_EXPECTED checks per setup
    (checks_left_seconds); a lower check beyond them takes only the time left, so --max-time stays a cap (a run given 585 s took
    615 s: its 8 setups took 17 checks, where the blocks' plan counted on 12; a front-ends run given 1,121 s took 1,145 s: 14
    checks at GOMAXPROCS=1 ran into the time of GOMAXPROCS=2's last block, granted before them)."""
    params = manifest["parameters"]
    limit = params.get("max_time_s")
    if limit is None:
        return None
    one = check_seconds(params, tries=1)
    promised = promised_blocks(manifest)
    end = (
        elapsed_of(manifest)
        + count * one
        + promised * (rate_block_seconds(manifest) or 0.0)
        + checks_left_seconds(manifest, first_only=True)
    )
    if end <= limit:
        return None
    still = f" (after the {promised} fixed-rate block{'s' if promised > 1 else ''} still to run)" if promised else ""
    return f"{count} more check{'s' if count > 1 else ''} of {one:.0f}s would end after --max-time {limit}s{still}"


def promised_blocks(manifest: dict) -> int:
    """Return the fixed-rate blocks the capacity rule has granted that have not started: one per GOMAXPROCS value whose last
    `capacity-more` verdict (capacity_precision) was more after as many blocks as that value has run."""
    passes = manifest.get("fixed_rate_passes") or []
    return sum(
        1
        for n, record in (manifest.get("capacity_precision") or {}).items()
        if record.get("stop_reason") is None and record.get("blocks") == sum(p["gomaxprocs"] == int(n) for p in passes)
    )


def cmd_capacity_more(args) -> int:
    """After a fixed-rate block's search at GOMAXPROCS: print `more` when that value takes another block, else `stop REASON` (bench/capacity_rule.py); the verdict is kept in the manifest's capacity_precision."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    params = manifest["parameters"]
    slo = slo_of(params.get("slo"))
    widths = capacity_widths(run_dir, manifest, args.setups.split(","), args.gomaxprocs, slo) if slo is not None else []
    passes = [p for p in manifest.get("fixed_rate_passes") or [] if p["gomaxprocs"] == args.gomaxprocs]
    if slo is not None:
        reason = decide(
            widths, len(passes), params, elapsed_of(manifest), rate_block_seconds(manifest), args.going, checks_left_seconds(manifest)
        )
    else:  # no search: the planned blocks
        reason = None if len(passes) < params.get("rate_blocks", 1) else f"no objective: the planned {len(passes)} block(s) ran"
    worst = widest(widths)
    manifest.setdefault("capacity_precision", {})[str(args.gomaxprocs)] = {
        "target_pct": params.get("capacity_precision_pct"),
        "blocks": len(passes),
        "worst": None if worst is None else worst.name,
        "worst_half_width_pct": None if worst is None else round(100 * worst.half_width, 2),
        "stop_reason": reason,
    }
    save_manifest(run_dir, manifest)
    print("more" if reason is None else f"stop {reason}")
    return 0


def capacity_widths(run_dir: Path, manifest: dict, setups: list[str], gomaxprocs: int, slo) -> list[Width]:
    """Return the half-width of every capacity and capacity ratio at GOMAXPROCS over the blocks so far, as `wrkreport build` finds them."""
    blocks = {
        s: earlier_capacities(run_dir, manifest, searched_entries(manifest, s, gomaxprocs), math.inf, slo) for s in sorted(setups)
    }  # every block so far
    spreads = manifest["parameters"].get("capacity_spreads") or {}  # absent before 2026-11-30: intervals alone
    widths = [Width(s, half_width(combine(found)), usual_width(s, len(found), spreads)) for s, found in blocks.items() if found]
    widths += [
        Width(f"{s}/{baseline_of(s)}", half_width(combine_ratio(found, blocks[baseline_of(s)])), usual_width(s, len(found), spreads))
        for s, found in blocks.items()
        if found and baseline_of(s) != s and blocks.get(baseline_of(s))
    ]
    return widths


def checks_left_seconds(manifest: dict, first_only: bool = False) -> float:
    """Return the seconds the capacity checks not yet run are expected to take: per GOMAXPROCS value without one, each setup of the
    phase its expected checks (rate_options.check_seconds), or with first_only its first check alone."""
    params = manifest["parameters"]
    checked = {e["gomaxprocs"] for e in manifest.get("fixed_rate_measurements") or [] if e.get("capacity_check")}
    values = [n for n in params["gomaxprocs"] if n not in checked]
    return len(values) * len(rate_setups(params["setups"])) * check_seconds(params, tries=1 if first_only else None)


def rate_block_seconds(manifest: dict) -> float | None:
    """Return the mean wall time of the finished fixed-rate blocks (any GOMAXPROCS) less their capacity checks' (checks_left_seconds
    counts those apart), else the running one's so far; None before any."""
    blocks = manifest.get("fixed_rate_passes") or []
    made = [
        e for e in manifest.get("fixed_rate_measurements") or [] if e.get("capacity_check") and e.get("started_at") and e.get("ended_at")
    ]
    checks: dict[tuple[int, int], float] = {}
    for e, seconds in zip(made, block_durations(made)):  # a check's start to its end, as a block's
        checks[(e["gomaxprocs"], e["block"])] = checks.get((e["gomaxprocs"], e["block"]), 0.0) + seconds
    finished = [p for p in blocks if p.get("ended_at")]
    done = [d - checks.get((p["gomaxprocs"], p["block"]), 0.0) for p, d in zip(finished, block_durations(finished))]
    if done:
        return statistics.mean(done)
    return (utc_now() - parse_iso(blocks[-1]["started_at"])).total_seconds() if blocks else None


def searched_entries(manifest: dict, setup: str, gomaxprocs: int) -> list[dict]:
    """Return a setup's fixed-rate measurements at GOMAXPROCS that the capacity search reads: its planned rates and steps, not its checks."""
    return [
        e
        for e in manifest.get("fixed_rate_measurements") or []
        if (e["setup"], e["gomaxprocs"]) == (setup, gomaxprocs) and not e.get("capacity_check")
    ]


def earlier_capacities(run_dir: Path, manifest: dict, measured: list[dict], block: float, slo) -> list:
    """Return the capacities of one setup's blocks before `block` (at one GOMAXPROCS value), as `wrkreport build` finds them."""
    by_block: dict[int, list[dict]] = {}
    for e in measured:
        if e["block"] < block:
            by_block.setdefault(e["block"], []).append(e)
    found = []
    for b, entries in sorted(by_block.items()):
        highs = [e["search_high"] for e in entries if e.get("search_high")]
        capacity = block_capacity(b, [measured_step(run_dir, e, manifest) for e in entries], max(highs) if highs else None, slo)
        if capacity is not None and highs:  # a block that searched
            found.append(capacity)
    return found
