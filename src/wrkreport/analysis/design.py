"""Design: a run's measurement design and precision record, read from its manifest, and the sentence that reports them."""

from __future__ import annotations

from ..core.sequential import Intervals, intervals_of
from ..core.units import finite
from ..runs.record import RunRecord, record_of  # noqa: F401 - record_of: the doctests build records with it


def interval_design(record: RunRecord | None) -> Intervals:
    """Return how a run's intervals are read: the manifest's design (core/sequential.py) and its family of verdict comparisons."""
    return record.intervals if record is not None else intervals_of(None)


def design_of(record: RunRecord | None) -> dict:
    """Return the run's design as results.json keeps it: rounds per block, blocks per GOMAXPROCS, seconds per measurement,
    stopping rule, smoke test (runs/record.py's Design; runs recorded before blocks give blocks and rounds_per_block None).

    >>> design_of(record_of({"parameters": {"rounds_per_block": 3, "duration_s": 1, "adaptive": True},
    ...                      "passes": [{"gomaxprocs": 1, "block": 1}, {"gomaxprocs": 1, "block": 2}]}))
    {'rounds_per_block': 3, 'blocks': {'1': 2}, 'duration_s': 1, 'stopping_rule': True, 'smoke_test': False}
    >>> design_of(record_of({"parameters": {"duration_s": 6}, "passes": [{"gomaxprocs": 1}]}))["blocks"] is None
    True
    """
    return (record or RunRecord()).design.record()


def precision_of(record: RunRecord | None) -> dict | None:
    """Return the run's precision record (target, met, worst/median half-width in %, stop reason, more-time estimate in s); None when the run has none.

    >>> precision_of(record_of({"precision": {"target_pct": 5.0, "met": False, "worst_half_width_pct": 6.8, "median_half_width_pct": 3.1,
    ...                                       "stop_reason": "time limit", "more_time_estimate_s": 170, "blocks": {"1": 8}}}))["stop_reason"]
    'time limit'
    """
    return None if record is None or record.precision is None else dict(record.precision)


def about(seconds: float) -> str:
    """Return a rough duration: 40 -> 'about 40 seconds', 170 -> 'about 3 minutes', 7200 -> 'about 2.0 hours'."""
    if seconds < 90:
        return f"about {round(seconds)} seconds"
    if seconds < 5400:
        return f"about {round(seconds / 60)} minutes"
    return f"about {seconds / 3600:.1f} hours"


def precision_sentence(record: RunRecord | None) -> str:
    """Return what the page and the terminal say about the run's precision target ('' for runs without one): with the verdict
    rule, whether each GOMAXPROCS value's answer was decided; a run stopped by Ctrl-C says so; a GOMAXPROCS value with fewer
    blocks than the repeated intervals' first look says it has no interval.

    >>> precision_sentence(record_of({"precision": {"target_pct": 5.0, "met": True, "worst_half_width_pct": 4.2}}))
    'Precision target: every overhead ratio within +/-5%: met (worst +/-4.2%).'
    >>> precision_sentence(record_of({"precision": {"target_pct": 5.0, "met": False, "worst_half_width_pct": 6.8, "stop_reason": "time limit", "more_time_estimate_s": 170}}))
    'Precision target: every overhead ratio within +/-5%: NOT met (worst +/-6.8%; stopped: time limit); about 3 minutes more would likely meet it.'
    >>> precision_sentence(record_of({"precision": {"target_pct": 5.0, "met": True, "worst_half_width_pct": 4.2, "cpu_ratios": 6}}))
    'Precision target: every throughput and CPU-cost ratio within +/-5%: met (worst +/-4.2%).'
    >>> precision_sentence(record_of({"status": "interrupted", "parameters": {"intervals": {"method": "repeated-t", "alpha": 0.05, "first_look": 4,
    ...                                                                          "last_look": 10, "nominal_alpha": 0.0148}},
    ...     "passes": [{"gomaxprocs": 1, "block": 1, "ended_at": "t"}, {"gomaxprocs": 2, "block": 1, "ended_at": "t"},
    ...                {"gomaxprocs": 1, "block": 2, "ended_at": "t"}, {"gomaxprocs": 2, "block": 2}],
    ...     "measurements": [{"gomaxprocs": 1, "block": 1}, {"gomaxprocs": 2, "block": 1}, {"gomaxprocs": 1, "block": 2}],
    ...     "precision": {"rule": "verdict", "target_pct": 10.0, "met": False, "worst_half_width_pct": None, "blocks": {"1": 2, "2": 1}}}))
    'Stopped by you after 3 blocks. GOMAXPROCS=1 has 2 blocks and GOMAXPROCS=2 has 1: intervals start at 4 blocks (repeated intervals), so their figures have none yet.'
    """
    design, said_record = design_of(record), precision_of(record)
    if design["smoke_test"]:
        return "This run is a smoke test (--quick): one short measurement per cell, so no interval; run the default profile for figures."
    said = [stopped_by_you(record), too_few_blocks(record)]
    if said_record is not None:
        said.append(verdict_sentence(said_record) if said_record["rule"] == "verdict" else target_sentence(said_record))
    return " ".join(part for part in said if part)


def stopped_by_you(record: RunRecord | None) -> str:
    """Return 'Stopped by you after 5 blocks.' for a run ended by Ctrl-C (status interrupted), '' otherwise."""
    if record is None or record.status != "interrupted":
        return ""
    done, rate = record.finished_passes, record.finished_rate_passes
    if rate or record.rate_passes_listed:  # in the fixed-rate phase: the throughput blocks had all run
        return f"Stopped by you in the fixed-rate phase, after {done} throughput block{'s' if done != 1 else ''} and {rate} fixed-rate."
    return f"Stopped by you after {done} block{'s' if done != 1 else ''}."


def too_few_blocks(record: RunRecord | None) -> str:
    """Return which GOMAXPROCS values have fewer blocks than the repeated intervals' first look ('' when none, or for a run without them)."""
    if record is None:  # a run without a manifest (recorded by hand): no design
        return ""
    design = record.intervals.design
    first = design.first if design is not None else None
    blocks: dict[str, set] = {}  # the blocks each value's figures rest on: those with a measurement (not one stopped before its first)
    for m in record.measurements:
        if finite(m.gomaxprocs, int) and finite(m.block, int):
            blocks.setdefault(str(m.gomaxprocs), set()).add(m.block)
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
