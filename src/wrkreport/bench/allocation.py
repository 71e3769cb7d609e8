"""Allocation: after the minimum blocks, where the driver spends the next block (GOMAXPROCS, setups, rounds, warm-up).

The stopping rule waits for every throughput and CPU-cost ratio to be within the target.
Once every GOMAXPROCS value has the minimum blocks, a block that measures ratios already
within target spends time on figures that are done, so the next block goes to the
GOMAXPROCS value with the widest interval (relative to the target) and measures go-http
(every ratio's partner) and only the setups with a ratio still outside it.

Rounds per block follow the two variance components of the deciding ratio's log: within a
block (one round's noise, sigma_w^2) and between blocks (a start's own shift, sigma_b^2),
by the one-way analysis of variance (method of moments; Snedecor & Cochran, "Statistical
Methods", 8th ed., 1989, sec. 13.8). With B blocks of r rounds the estimate's variance is
(sigma_b^2 + sigma_w^2 / r) / B, and a block costs c0 + r c1 seconds (c0: starting the
servers, the readiness checks and the warm-up; c1: one round), so for a fixed time the
best r is sqrt((c0 / c1) (sigma_w^2 / sigma_b^2)) (the optimum of two-stage sampling,
Cochran, "Sampling Techniques", 3rd ed., 1977, sec. 10.6), kept within MIN_ROUNDS to
MAX_ROUNDS: more rounds per start when starts differ little.

The warm-up is there for a first-measurement effect: a block's first measurement, right
after the servers start, slower than the same setup's later rounds. first_measurement_effect
measures it per run, over blocks, from the second block on (not only after the minimum
blocks: a default block's 1 s warm-up per setup is a quarter of its time, so the minimum
blocks alone spent about 50 s of a 6-minute run warming up); while the blocks that had a
warm-up show none, later blocks go without one, and if the blocks without one show an
effect, it comes back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..core import stats
from ..core.setups import baseline_of, split_twin
from . import stopping_rule as precision
from .values import parse_iso

MIN_ROUNDS = 2  # a block needs 2 rounds for its own within-block noise
MAX_ROUNDS = 6  # more rounds per start than this leave too few starts in a 6-minute run
EFFECT_FLOOR = 0.01  # a first-measurement effect smaller than 1% is not worth a warm-up


@dataclass(frozen=True)
class Components:
    """The two variance components of a log ratio: one round within a block, and a block's own shift."""

    within: float  # sigma_w^2
    between: float  # sigma_b^2 (0 when the blocks differ no more than their rounds predict)
    blocks: int


@dataclass(frozen=True)
class NextBlock:
    """What the next block measures, and why."""

    gomaxprocs: int
    setups: tuple[str, ...]  # go-http first; () means every setup
    rounds: int
    warmup: bool  # False: no warm-up before this block's first round
    why: str


def components(blocks: list[list[float]]) -> Components | None:
    """Return the within- and between-block variance of log values by one-way ANOVA (unbalanced; between floored at 0), None without 2 blocks and a block of 2.

    >>> c = components([[0.0, 0.2], [1.0, 1.2], [2.0, 2.2]])
    >>> round(c.within, 4), round(c.between, 4)
    (0.02, 0.99)
    >>> components([[0.0], [1.0]]) is None
    True
    """
    used = [block for block in blocks if block]
    sizes = [len(block) for block in used]
    total = sum(sizes)
    if len(used) < 2 or total == len(used):
        return None
    means = [stats.mean(block) for block in used]
    grand = math.fsum(x for block in used for x in block) / total
    within = math.fsum((x - m) ** 2 for block, m in zip(used, means) for x in block) / (total - len(used))
    between_ms = math.fsum(n * (m - grand) ** 2 for n, m in zip(sizes, means)) / (len(used) - 1)
    n0 = (total - math.fsum(n * n for n in sizes) / total) / (len(used) - 1)  # the rounds per block, for unequal blocks
    return Components(within, max(0.0, (between_ms - within) / n0), len(used))


def best_rounds(found: Components | None, overhead_s: float | None, round_s: float | None, default: int) -> int:
    """Return the rounds per block that make the estimate's variance smallest for the time: sqrt((c0 / c1) (within / between)), within MIN..MAX_ROUNDS.

    >>> best_rounds(Components(0.01, 0.0, 7), 5.0, 4.0, 3)  # starts do not differ: as many rounds as allowed
    6
    >>> best_rounds(Components(0.01, 0.01, 7), 4.0, 4.0, 3)  # starts differ as much as rounds: few rounds, many starts
    2
    >>> best_rounds(None, 5.0, 4.0, 3)
    3
    """
    if found is None or not overhead_s or not round_s or overhead_s <= 0 or round_s <= 0:
        return default
    if found.between <= 0:
        return MAX_ROUNDS
    best = math.sqrt(overhead_s / round_s * found.within / found.between)
    return max(MIN_ROUNDS, min(MAX_ROUNDS, round(best)))


def first_measurement_effect(blocks: list[list[tuple[str, float]]]) -> stats.Interval | None:
    """Return how a block's first measurement compares with the same setup's later ones, as a ratio with a t-interval over blocks.

    Each block is its measurements in the order they ran, as (setup, req/s). The block's
    value is log(first) - mean(log of that setup's later measurements in the block); None
    with fewer than 2 blocks that have one.

    >>> found = first_measurement_effect([[("a", 90.0), ("b", 50.0), ("a", 100.0)], [("b", 45.0), ("a", 80.0), ("b", 50.0)]])
    >>> round(found.estimate, 4), found.n
    (0.9, 2)
    """
    values = []
    for block in blocks:
        if not block:
            continue
        setup, first = block[0]
        later = [rate for name, rate in block[1:] if name == setup and rate > 0]
        if later and first > 0:
            values.append(math.log(first) - stats.mean([math.log(rate) for rate in later]))
    if len(values) < 2:
        return None
    inner = stats.mean_interval(values)
    return stats.Interval(math.exp(inner.estimate), math.exp(inner.low), math.exp(inner.high), inner.n, stats.BLOCK, inner.n)


def shows_effect(found: stats.Interval | None) -> bool:
    """Return True when a first-measurement effect is there: the interval lies wholly below 1 - EFFECT_FLOOR or above 1 + EFFECT_FLOOR.

    >>> shows_effect(stats.Interval(0.9, 0.85, 0.95, 5))
    True
    >>> shows_effect(stats.Interval(0.995, 0.98, 1.01, 5)) or shows_effect(None)
    False
    """
    return found is not None and (found.high < 1 - EFFECT_FLOOR or found.low > 1 + EFFECT_FLOOR)


def warmup_decision(warmed: stats.Interval | None, cold: stats.Interval | None) -> tuple[bool, str]:
    """Return whether the next block gets a warm-up, and why, from the effect in blocks with one (warmed) and without (cold)."""
    if shows_effect(cold):
        return True, f"blocks without a warm-up had a first measurement at {effect_text(cold)} of later ones: the warm-up is back"
    if cold is not None:
        return False, f"blocks without a warm-up show no first-measurement effect ({effect_text(cold)}): no warm-up"
    if warmed is None:
        return True, "too few blocks to test for a first-measurement effect: warm-up kept"
    if shows_effect(warmed):
        return True, f"even after the warm-up the first measurement ran at {effect_text(warmed)} of later ones: warm-up kept"
    return False, f"after the warm-up no first-measurement effect ({effect_text(warmed)}): trying blocks without one"


def effect_text(found: stats.Interval) -> str:
    """Return '97.1% (95.0-99.2%)'."""
    return f"{found.estimate:.1%} ({found.low:.1%}-{found.high:.1%})"


def widest(intervals: dict[tuple, stats.Interval]) -> dict[int, float]:
    """Return each GOMAXPROCS value's widest relative half-width (inf without an interval), over every ratio kind."""
    found: dict[int, float] = {}
    for key, interval in intervals.items():
        width = interval.half_width_rel if interval.unit == stats.BLOCK else None
        n = key[0]
        found[n] = max(found.get(n, 0.0), math.inf if width is None else width)
    return found


def next_block(
    intervals: dict[tuple, stats.Interval],
    blocks_done: dict[int, int],
    gomaxprocs: list[int],
    baseline: str,
    target: float,
    min_blocks: int,
) -> tuple[int, tuple[str, ...], str]:
    """Return the next block's GOMAXPROCS, its setups (() for all) and why.

    intervals: per (GOMAXPROCS, level, setup, kind) the ratio intervals so far. Before every
    value has min_blocks blocks, the value with the fewest goes next (ties in list order),
    with every setup; after, the value with the widest interval, with the baseline and
    the setups that still have a ratio outside the target there.

    >>> wide, narrow = stats.Interval(1.0, 0.9, 1.1, 9, "block", 7), stats.Interval(1.0, 0.99, 1.01, 9, "block", 7)
    >>> found = {(1, 100, "a", "rps"): narrow, (2, 100, "a", "rps"): narrow, (2, 100, "b", "cpu"): wide}
    >>> next_block(found, {1: 7, 2: 7}, [1, 2], "go-http", 0.05, 7)[:2]
    (2, ('go-http', 'b'))
    >>> next_block(found, {1: 7, 2: 6}, [1, 2], "go-http", 0.05, 7)[:2]
    (2, ())
    """
    short = [n for n in gomaxprocs if blocks_done.get(n, 0) < min_blocks]
    if short:
        n = min(short, key=lambda v: (blocks_done.get(v, 0), gomaxprocs.index(v)))
        return n, (), f"every GOMAXPROCS value gets {min_blocks} blocks of every setup first"
    widths = widest(intervals)
    n = max(gomaxprocs, key=lambda v: (widths.get(v, 0.0), -gomaxprocs.index(v)))
    outside = sorted({key[2] for key, interval in intervals.items() if key[0] == n and not within(interval, target)})
    outside = with_partners(outside, {key[2] for key in intervals})
    if not outside:
        return n, (), f"GOMAXPROCS={n} has the widest interval"
    bases = sorted({baseline_of(s) for s in outside} - {baseline} - set(outside))  # go-https beside the TLS setups
    return (
        n,
        (baseline, *bases, *outside),
        f"GOMAXPROCS={n} has the widest interval (+/-{widths[n]:.1%}); measuring {', '.join(outside)} beside {baseline}",
    )


def next_verdict_block(
    records: dict[str, dict], blocks_done: dict[int, int], gomaxprocs: list[int], setups: list[str], baseline: str, first_look: int
) -> tuple[int, tuple[str, ...], str]:
    """Return the next block's GOMAXPROCS, setups (() for all) and why, under the verdict rule (bench/stopping_rule.py).

    records: each group's verdict record. The GOMAXPROCS value not yet done with the fewest
    blocks goes next (ties in list order); until it has the first look's blocks it measures
    every setup; after, its baseline and the setups still deciding something: the leader,
    those tied with it and those still open against it. A connection measurably slower than
    the leader is settled and measured no more; its figures keep the precision they reached.

    >>> records = {"1": {"gomaxprocs": 1, "done": False, "deciding": ["nginx-http"], "open": ["nginx-fcgi-unix"], "beaten": ["nginx-fcgi-tcp"]},
    ...            "2": {"gomaxprocs": 2, "done": True, "deciding": ["nginx-http"], "open": [], "beaten": []}}
    >>> next_verdict_block(records, {1: 5, 2: 4}, [1, 2], ["go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix"], "go-http", 4)[:2]
    (1, ('go-http', 'nginx-fcgi-unix', 'nginx-http'))
    >>> next_verdict_block(records, {1: 3, 2: 4}, [1, 2], ["go-http", "nginx-http"], "go-http", 4)[:2]
    (1, ())
    """
    going = [n for n in gomaxprocs if not all(r["done"] for r in records.values() if r["gomaxprocs"] == n)] or list(gomaxprocs)
    n = min(going, key=lambda v: (blocks_done.get(v, 0), gomaxprocs.index(v)))
    if blocks_done.get(n, 0) < first_look:
        return n, (), f"every GOMAXPROCS value gets {first_look} blocks of every setup first (the first look)"
    wanted: set[str] = set()
    settled: set[str] = set()
    for record in records.values():
        if record["gomaxprocs"] == n and not record["done"]:
            wanted |= set(record["deciding"]) | set(record["open"])
        if record["gomaxprocs"] == n:
            settled |= set(record["beaten"])
    chosen = with_partners(sorted(wanted), set(setups))
    bases = sorted({baseline_of(s) for s in chosen} - {baseline} - set(chosen))  # go-https beside the TLS setups
    measured = [baseline, *bases, *chosen]
    if set(setups) <= set(measured):
        return n, (), f"GOMAXPROCS={n}: every setup still decides something"
    left = f"; settled: {', '.join(sorted(settled))}" if settled else ""
    return n, tuple(measured), f"GOMAXPROCS={n}: measuring {', '.join(chosen) or 'nothing'} beside {baseline}{left}"


def with_partners(setups: list[str], known: set[str]) -> list[str]:
    """Return setups with each --variant twin's original and each original's twin: the A/B figure pairs them within a block.

    >>> with_partners(["nginx-http~nokeep"], {"nginx-http", "nginx-http~nokeep", "nginx-fcgi-tcp"})
    ['nginx-http', 'nginx-http~nokeep']
    >>> with_partners(["nginx-fcgi-tcp"], {"nginx-fcgi-tcp", "nginx-fcgi-tcp~new"})
    ['nginx-fcgi-tcp', 'nginx-fcgi-tcp~new']
    """
    chosen = set(setups)
    chosen |= {split_twin(s)[0] for s in setups if split_twin(s)[1]}
    chosen |= {s for s in known if split_twin(s)[1] and split_twin(s)[0] in setups}
    return sorted(chosen)


def within(interval: stats.Interval, target: float) -> bool:
    """Return True when an interval is over blocks and within the target."""
    width = interval.half_width_rel
    return interval.unit == stats.BLOCK and width is not None and width <= target


# --- The next block, from the run so far (the helper's `decide`) ------------------------------


def ratio_intervals_and_blocks(run_dir: Path, manifest: dict, cache: dict) -> tuple[dict, dict]:
    """Return every throughput ("rps") and CPU-cost ("cpu") ratio's interval and its blocks of pairs, keyed (GOMAXPROCS, level, setup, kind)."""
    intervals, blocks = {}, {}
    for kind, value_of in (("rps", precision.rate_of), ("cpu", precision.cpu_per_request_of)):
        for (n, c, setup), found in precision.ratio_blocks(run_dir, manifest, cache, value_of).items():
            intervals[n, c, setup, kind] = stats.block_ratio_interval(found, precision.designs(manifest["parameters"]).design)
            blocks[n, c, setup, kind] = found
    return intervals, blocks


def block_costs(manifest: dict, gomaxprocs: int) -> tuple[float | None, float | None]:
    """Return a block's fixed seconds (start, checks, warm-up, stop) and one measurement's seconds (with its gap), from the finished blocks at gomaxprocs."""
    overheads, per_measurement = [], []
    for entry in manifest["passes"]:
        if entry["gomaxprocs"] != gomaxprocs or not entry.get("ended_at"):
            continue
        times = [
            (parse_iso(m["started_at"]), parse_iso(m["ended_at"]))
            for m in manifest["measurements"]
            if m["gomaxprocs"] == gomaxprocs and m.get("block", 1) == entry["block"] and m.get("started_at") and m.get("ended_at")
        ]
        if not times:
            continue
        measuring = (max(end for _, end in times) - min(start for start, _ in times)).total_seconds()
        wall = (parse_iso(entry["ended_at"]) - parse_iso(entry["started_at"])).total_seconds()
        overheads.append(max(0.0, wall - measuring))
        per_measurement.append(measuring / len(times))
    if not overheads:
        return None, None
    return stats.mean(overheads), stats.mean(per_measurement)


def block_sequences(run_dir: Path, manifest: dict, cache: dict, warmed: bool, default_warmup_s: float) -> list[list[tuple[str, float]]]:
    """Return each finished block's measurements in the order they ran, as (setup, req/s), for the blocks with (warmed) or without a warm-up."""
    found = []
    for entry in manifest["passes"]:
        if not entry.get("ended_at") or (entry.get("warmup_s", default_warmup_s) > 0) != warmed:
            continue
        ran = sorted(
            (m for m in manifest["measurements"] if m["gomaxprocs"] == entry["gomaxprocs"] and m.get("block", 1) == entry["block"]),
            key=lambda m: m.get("started_at", ""),
        )
        rates = [(m["setup"], precision.rate_of(run_dir, m, cache)) for m in ran]
        found.append([(setup, rate) for setup, rate in rates if rate is not None])
    return found


def plan_next(run_dir: Path, manifest: dict, cache: dict, record: dict | None = None) -> dict:
    """Return the next block's plan: GOMAXPROCS, setups (None: all), rounds, warm-up seconds, and why each.

    record: the stopping rule's record after the last block (stopping_rule.assess); with the verdict rule its groups' verdicts
    choose the next block (next_verdict_block), else the widest interval does (next_block)."""
    params = manifest["parameters"]
    target = params.get("precision_pct", stats.PRECISION_TARGET * 100) / 100
    default_rounds, default_warmup = params.get("rounds_per_block") or 3, params.get("warmup_s", 0)
    intervals, blocks = ratio_intervals_and_blocks(run_dir, manifest, cache)
    done = {int(n): b for n, b in precision.blocks_per_gomaxprocs(manifest).items()}
    gomaxprocs = [int(n) for n in params["gomaxprocs"]]
    # go-http, or in a run without it (--app alone) its first setup's divisor: the app
    baseline = precision.BASELINE if precision.BASELINE in params["setups"] else baseline_of(params["setups"][0])
    verdicts = (record or {}).get("verdicts")
    minimum = params.get("min_blocks", stats.MIN_BLOCKS)
    if verdicts:
        n, setups, why = next_verdict_block(verdicts, done, gomaxprocs, params["setups"], baseline, minimum)
    else:
        n, setups, why = next_block(intervals, done, gomaxprocs, baseline, target, minimum)
    plan = {"gomaxprocs": n, "setups": list(setups) or None, "rounds": default_rounds, "warmup_s": default_warmup, "why": why}
    if default_warmup > 0:
        warmed = first_measurement_effect(block_sequences(run_dir, manifest, cache, True, default_warmup))
        cold = first_measurement_effect(block_sequences(run_dir, manifest, cache, False, default_warmup))
        keep, plan["warmup_why"] = warmup_decision(warmed, cold)
        plan["warmup_s"] = default_warmup if keep else 0
    if any(b < minimum for b in done.values()) or len(done) < len(gomaxprocs):
        plan["rounds_why"] = "as planned until every GOMAXPROCS value has the minimum blocks"
        return plan
    deciding = set(setups) if setups else {key[2] for key in intervals}
    outside = [key for key, interval in intervals.items() if key[0] == n and key[2] in deciding and not within(interval, target)]
    if outside:
        key = max(outside, key=lambda k: intervals[k].half_width_rel or math.inf)
        found = components([[math.log(a / b) for a, b in block] for block in blocks[key]])
        overhead_s, measurement_s = block_costs(manifest, n)
        measured = len(setups) if setups else len(params["setups"])
        round_s = None if measurement_s is None else measurement_s * measured
        plan["rounds"] = best_rounds(found, overhead_s, round_s, default_rounds)
        if found is not None:
            plan["rounds_why"] = (
                f"{key[2]} ({key[3]}) decides: sd within a block {math.sqrt(found.within):.3f}, between blocks "
                f"{math.sqrt(found.between):.3f} (log ratio); a block's fixed part {overhead_s or 0:.1f}s, a round {round_s or 0:.1f}s"
            )
    return plan
