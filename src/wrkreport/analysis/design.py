"""Design: a run's measurement design and precision record, read from its manifest, and the sentence that reports them."""

from __future__ import annotations

import math

from ..core.sequential import Intervals, intervals_of


def number(value, kind=(int, float)) -> float | int | None:
    """Return value when it is a finite number of kind (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, kind):
        return None
    return value if math.isfinite(value) else None


def interval_design(manifest) -> Intervals:
    """Return how a run's intervals are read: the manifest's design (core/sequential.py) and its family of verdict comparisons."""
    params = manifest.get("parameters") if isinstance(manifest, dict) else None
    return intervals_of(params.get("intervals") if isinstance(params, dict) else None)


def design_of(manifest: dict | None) -> dict:
    """Return the run's design: rounds per block, blocks per GOMAXPROCS, seconds per measurement, stopping rule, smoke test.

    Runs recorded before blocks give blocks None and rounds_per_block None: they have none.

    >>> design_of({"parameters": {"rounds_per_block": 3, "duration_s": 1, "adaptive": True}, "passes": [{"gomaxprocs": 1, "block": 1}, {"gomaxprocs": 1, "block": 2}]})
    {'rounds_per_block': 3, 'blocks': {'1': 2}, 'duration_s': 1, 'stopping_rule': True, 'smoke_test': False}
    >>> design_of({"parameters": {"duration_s": 6}, "passes": [{"gomaxprocs": 1}]})["blocks"] is None
    True
    """
    manifest = manifest if isinstance(manifest, dict) else {}
    params = manifest.get("parameters") if isinstance(manifest.get("parameters"), dict) else {}
    passes = manifest.get("passes") if isinstance(manifest.get("passes"), list) else []
    blocked = [p for p in passes if isinstance(p, dict) and number(p.get("block"), int) and number(p.get("gomaxprocs"), int)]
    blocks: dict[str, int] | None = None
    if blocked:
        blocks = {}
        for entry in blocked:
            key = str(entry["gomaxprocs"])
            blocks[key] = max(blocks.get(key, 0), entry["block"])
    return {
        "rounds_per_block": number(params.get("rounds_per_block"), int) if blocked else None,
        "blocks": blocks,
        "duration_s": number(params.get("duration_s")),
        "stopping_rule": params.get("adaptive") is True,
        "smoke_test": params.get("smoke_test") is True,
    }


PRECISION_KEYS = ("target_pct", "met", "worst_half_width_pct", "median_half_width_pct", "stop_reason", "more_time_estimate_s")


def precision_of(manifest: dict | None) -> dict | None:
    """Return the run's precision record (target, met, worst/median half-width in %, stop reason, more-time estimate in s); None when the run has none.

    >>> precision_of({"precision": {"target_pct": 5.0, "met": False, "worst_half_width_pct": 6.8, "median_half_width_pct": 3.1, "stop_reason": "time limit", "more_time_estimate_s": 170, "blocks": {"1": 8}}})["stop_reason"]
    'time limit'
    """
    record = (manifest or {}).get("precision") if isinstance(manifest, dict) else None
    if not isinstance(record, dict) or number(record.get("target_pct")) is None:
        return None
    return {
        "target_pct": number(record.get("target_pct")),
        "met": record.get("met") is True,
        "worst_half_width_pct": number(record.get("worst_half_width_pct")),
        "median_half_width_pct": number(record.get("median_half_width_pct")),
        "stop_reason": record.get("stop_reason") if isinstance(record.get("stop_reason"), str) else None,
        "more_time_estimate_s": number(record.get("more_time_estimate_s")),
        "cpu_ratios": number(record.get("cpu_ratios")),  # CPU-cost ratios the target covered (runs recorded before --variant: None)
        "rule": record.get("rule")
        if record.get("rule") in ("verdict", "precision")
        else "precision",  # runs before the verdict rule: precision
        "verdicts": record.get("verdicts") if isinstance(record.get("verdicts"), dict) else {},
        "ceiling": number(record.get("ceiling"), int),  # the verdict rule's blocks per GOMAXPROCS at most (absent before 2026-12-07)
        "beyond_ceiling": record.get("beyond_ceiling") is True and number(record.get("ceiling"), int) is not None,
    }


def about(seconds: float) -> str:
    """Return a rough duration: 40 -> 'about 40 seconds', 170 -> 'about 3 minutes', 7200 -> 'about 2.0 hours'."""
    if seconds < 90:
        return f"about {round(seconds)} seconds"
    if seconds < 5400:
        return f"about {round(seconds / 60)} minutes"
    return f"about {seconds / 3600:.1f} hours"


def precision_sentence(manifest: dict | None) -> str:
    """Return what the page and the terminal say about the run's precision target ('' for runs without one): with the verdict
    rule, whether each GOMAXPROCS value's answer was decided; a run stopped by Ctrl-C says so; a GOMAXPROCS value with fewer
    blocks than the repeated intervals' first look says it has no interval.

    >>> precision_sentence({"precision": {"target_pct": 5.0, "met": True, "worst_half_width_pct": 4.2}})
    'Precision target: every overhead ratio within +/-5%: met (worst +/-4.2%).'
    >>> precision_sentence({"precision": {"target_pct": 5.0, "met": False, "worst_half_width_pct": 6.8, "stop_reason": "time limit", "more_time_estimate_s": 170}})
    'Precision target: every overhead ratio within +/-5%: NOT met (worst +/-6.8%; stopped: time limit); about 3 minutes more would likely meet it.'
    >>> precision_sentence({"precision": {"target_pct": 5.0, "met": True, "worst_half_width_pct": 4.2, "cpu_ratios": 6}})
    'Precision target: every throughput and CPU-cost ratio within +/-5%: met (worst +/-4.2%).'
    >>> precision_sentence({"status": "interrupted", "parameters": {"intervals": {"method": "repeated-t", "alpha": 0.05, "first_look": 4,
    ...                                                                          "last_look": 10, "nominal_alpha": 0.0148}},
    ...     "passes": [{"gomaxprocs": 1, "block": 1, "ended_at": "t"}, {"gomaxprocs": 2, "block": 1, "ended_at": "t"},
    ...                {"gomaxprocs": 1, "block": 2, "ended_at": "t"}, {"gomaxprocs": 2, "block": 2}],
    ...     "measurements": [{"gomaxprocs": 1, "block": 1}, {"gomaxprocs": 2, "block": 1}, {"gomaxprocs": 1, "block": 2}],
    ...     "precision": {"rule": "verdict", "target_pct": 10.0, "met": False, "worst_half_width_pct": None, "blocks": {"1": 2, "2": 1}}})
    'Stopped by you after 3 blocks. GOMAXPROCS=1 has 2 blocks and GOMAXPROCS=2 has 1: intervals start at 4 blocks (repeated intervals), so their figures have none yet.'
    """
    design, record = design_of(manifest), precision_of(manifest)
    if design["smoke_test"]:
        return "This run is a smoke test (--quick): one short measurement per cell, so no interval; run the default profile for figures."
    said = [stopped_by_you(manifest), too_few_blocks(manifest)]
    if record is not None:
        said.append(verdict_sentence(record) if record["rule"] == "verdict" else target_sentence(record))
    return " ".join(part for part in said if part)


def stopped_by_you(manifest: dict | None) -> str:
    """Return 'Stopped by you after 5 blocks.' for a run ended by Ctrl-C (status interrupted), '' otherwise."""
    if not isinstance(manifest, dict) or manifest.get("status") != "interrupted":
        return ""

    def finished(key: str) -> int:
        entries = manifest.get(key) if isinstance(manifest.get(key), list) else []
        return len([p for p in entries if isinstance(p, dict) and p.get("ended_at")])

    done, rate = finished("passes"), finished("fixed_rate_passes")
    if rate or manifest.get("fixed_rate_passes"):  # in the fixed-rate phase: the throughput blocks had all run
        return f"Stopped by you in the fixed-rate phase, after {done} throughput block{'s' if done != 1 else ''} and {rate} fixed-rate."
    return f"Stopped by you after {done} block{'s' if done != 1 else ''}."


def too_few_blocks(manifest: dict | None) -> str:
    """Return which GOMAXPROCS values have fewer blocks than the repeated intervals' first look ('' when none, or for a run without them)."""
    if not isinstance(manifest, dict):  # a run without a manifest (recorded by hand): no design
        return ""
    design = interval_design(manifest).design
    first = design.first if design is not None else None
    measurements = manifest.get("measurements") if isinstance(manifest.get("measurements"), list) else []
    blocks: dict[str, set] = {}  # the blocks each value's figures rest on: those with a measurement (not one stopped before its first)
    for m in measurements:
        if isinstance(m, dict) and number(m.get("gomaxprocs"), int) and number(m.get("block"), int):
            blocks.setdefault(str(m["gomaxprocs"]), set()).add(m["block"])
    if first is None or not blocks:
        return ""
    short = [(n, len(b)) for n, b in sorted(blocks.items(), key=lambda item: int(item[0])) if len(b) < first]
    if not short:
        return ""
    said = [
        f"GOMAXPROCS={n} has {b} block{'s' if b != 1 else ''}" if i == 0 else f"GOMAXPROCS={n} has {b}" for i, (n, b) in enumerate(short)
    ]
    which = "its figures have" if len(short) == 1 else "their figures have"
    return f"{' and '.join(said)}: intervals start at {first} blocks (repeated intervals), so {which} none yet."


def verdict_sentence(record: dict) -> str:
    """Return whether the verdict rule decided each GOMAXPROCS value's answer, with the cheapest connection's precision."""
    groups = record["verdicts"]
    if not groups:
        return ""
    answered = [k for k, g in groups.items() if isinstance(g, dict) and g.get("answered")]
    worst = record["worst_half_width_pct"]
    shown = f" (widest +/-{worst:g}%)" if worst is not None else ""
    aim = f"the cheapest connection's throughput and CPU-cost ratios within +/-{record['target_pct']:g}%"
    if record["met"]:
        return f"The answer was decided at every GOMAXPROCS value, with {aim}{shown}."
    open_ = [f"GOMAXPROCS={k}" for k in groups if k not in answered]
    stopped = f" (stopped: {record['stop_reason']})" if record["stop_reason"] else ""
    more = record["more_time_estimate_s"]
    tail = f"; {about(more)} more would likely decide it" if more else ""
    if tail and record["beyond_ceiling"]:
        tail += f", past the run's ceiling of {record['ceiling']} blocks per GOMAXPROCS (--precision allows 40)"
    return f"The answer is not decided at {' and '.join(open_)}: the run aims at {aim}{shown}{stopped}{tail}."


def target_sentence(record: dict) -> str:
    """Return the precision rule's sentence: every ratio within the target, met or not."""
    worst = record["worst_half_width_pct"]
    shown = f"worst +/-{worst:g}%" if worst is not None else "no interval yet"
    what = "every throughput and CPU-cost ratio" if record["cpu_ratios"] else "every overhead ratio"
    head = f"Precision target: {what} within +/-{record['target_pct']:g}%"
    if record["met"]:
        return f"{head}: met ({shown})."
    stopped = f"; stopped: {record['stop_reason']}" if record["stop_reason"] else ""
    more = record["more_time_estimate_s"]
    tail = f"; {about(more)} more would likely meet it" if more else ""
    return f"{head}: NOT met ({shown}{stopped}){tail}."
