"""Design: a run's measurement design and precision record, read from its manifest, and the sentence that reports them."""

from __future__ import annotations

import math


def number(value, kind=(int, float)) -> float | int | None:
    """Return value when it is a finite number of kind (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, kind):
        return None
    return value if math.isfinite(value) else None


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

    >>> precision_of({"precision": {"target_pct": 5.0, "met": False, "worst_half_width_pct": 6.8, "median_half_width_pct": 3.1, "stop_reason": "time limit", "more_time_estimate_s": 170, "blocks": {"1": 8}}})
    {'target_pct': 5.0, 'met': False, 'worst_half_width_pct': 6.8, 'median_half_width_pct': 3.1, 'stop_reason': 'time limit', 'more_time_estimate_s': 170, 'cpu_ratios': None}
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
    }


def about(seconds: float) -> str:
    """Return a rough duration: 40 -> 'about 40 seconds', 170 -> 'about 3 minutes', 7200 -> 'about 2.0 hours'."""
    if seconds < 90:
        return f"about {round(seconds)} seconds"
    if seconds < 5400:
        return f"about {round(seconds / 60)} minutes"
    return f"about {seconds / 3600:.1f} hours"


def precision_sentence(manifest: dict | None) -> str:
    """Return what the page and the terminal say about the run's precision target ('' for runs without one).

    >>> precision_sentence({"precision": {"target_pct": 5.0, "met": True, "worst_half_width_pct": 4.2}})
    'Precision target: every overhead ratio within +/-5%: met (worst +/-4.2%).'
    >>> precision_sentence({"precision": {"target_pct": 5.0, "met": False, "worst_half_width_pct": 6.8, "stop_reason": "time limit", "more_time_estimate_s": 170}})
    'Precision target: every overhead ratio within +/-5%: NOT met (worst +/-6.8%; stopped: time limit); about 3 minutes more would likely meet it.'
    >>> precision_sentence({"precision": {"target_pct": 5.0, "met": True, "worst_half_width_pct": 4.2, "cpu_ratios": 6}})
    'Precision target: every throughput and CPU-cost ratio within +/-5%: met (worst +/-4.2%).'
    """
    design, record = design_of(manifest), precision_of(manifest)
    if design["smoke_test"]:
        return "This run is a smoke test (--quick): one short measurement per cell, so no interval; run the default profile for figures."
    if record is None:
        return ""
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
