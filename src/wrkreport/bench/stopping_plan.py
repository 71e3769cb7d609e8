"""The stopping rule's plan: the interval design a run records and the sentence that opens it (what it sets out to do, how long that takes)."""

from __future__ import annotations

from ..core import verdict as verdicts
from ..core.sequential import Design
from .profiles import DEFAULT_MAX_TIME_FACTOR, MEASUREMENT_OVERHEAD_S, PASS_OVERHEAD_S, VERDICT_BLOCKS_EXPECTED
from .values import format_duration

VERDICT, PRECISION = "verdict", "precision"  # the stopping rules: the answer decided; every ratio within --precision


def interval_plan(plan: dict) -> dict | None:
    """Return the run's interval design as the manifest keeps it (core/sequential.py, core/verdict.py), None for a fixed design.

    A run that stops by itself reads its intervals as repeated intervals at every block from
    the first look to its block ceiling. Without --precision it stops when each GOMAXPROCS
    value's answer is decided (rule 'verdict'): the head-to-head comparisons are one family
    (Bonferroni over every pair of contenders in every group: 'comparisons'); with it, when
    every ratio is within PCT (rule 'precision').
    """
    if not plan["adaptive"]:
        return None
    design = Design.repeated(plan["max_blocks"], first=plan["min_blocks"])
    comparisons = verdicts.family_size(plan["setups"], len(plan["gomaxprocs"]) * len(plan["connections_levels"]))
    family = design.family(max(1, comparisons))
    return {
        **design.record(),
        "rule": PRECISION if plan["precision_given"] else VERDICT,
        "comparisons": comparisons,
        "family_nominal_alpha": round(family.nominal, 8),
        "tie_margin": verdicts.TIE_MARGIN,
    }


def rule_of(params: dict) -> str:
    """Return a run's stopping rule from its parameters: VERDICT (stop when the answer is decided), else PRECISION (every ratio
    within --precision; also runs recorded before the verdict rule)."""
    record = params.get("intervals")
    return VERDICT if isinstance(record, dict) and record.get("rule") == VERDICT else PRECISION


def plan_words(plan: dict) -> str:
    """Return what a run with a stopping rule sets out to do and how long that is expected to take here, for its first line.

    >>> plan = {"intervals": {"rule": "verdict", "first_look": 4, "last_look": 10}, "precision_pct": 10.0, "targets_s": 195,
    ...         "max_time_s": 244, "max_time_given": False, "rate_blocks_expected": 4, "rate_phase": True}
    >>> plan_words(plan).split(": about ")[1]
    "3m 15s expected here (5 blocks per GOMAXPROCS, the last ones of the cheapest alone, then the fixed-rate phase's 4 blocks), at most 4m 04s (--max-time, the default: 1.25 x that)"
    """
    intervals = plan["intervals"]
    if intervals["rule"] == VERDICT:
        goal = (
            f"blocks until each GOMAXPROCS value's answer is decided (which connection is cheapest, its throughput and CPU ratios "
            f"within +/-{plan['precision_pct']:g}%)"
        )
        expected = f"{max(VERDICT_BLOCKS_EXPECTED, intervals['first_look'])} blocks per GOMAXPROCS, the last ones of the cheapest alone"
    else:
        goal = f"blocks until every ratio is within +/-{plan['precision_pct']:g}% (--precision)"
        expected = f"at least {intervals['first_look']} blocks per GOMAXPROCS"
    phase = f", then the fixed-rate phase's {plan['rate_blocks_expected']} blocks" if plan.get("rate_phase") else ""
    cap = "given" if plan["max_time_given"] else f"the default: {DEFAULT_MAX_TIME_FACTOR:g} x that"
    limit = f"at most {format_duration(plan['max_time_s'])} (--max-time, {cap})" if plan["max_time_s"] is not None else "no time limit"
    return (
        f"{goal}, {intervals['first_look']} to {intervals['last_look']} blocks per GOMAXPROCS: about {format_duration(plan['targets_s'])} "
        f"expected here ({expected}{phase}), {limit}"
    )


def verdict_seconds(plan: dict) -> float:
    """Return the throughput blocks' expected seconds under the verdict rule: per GOMAXPROCS value, the first look's blocks of every
    setup (the warm-up in the first only: later blocks drop it while no first-measurement effect shows), then the expected blocks
    after it of go-http and the cheapest connection alone (the others settled), VERDICT_BLOCKS_EXPECTED in all.

    >>> plan = {"duration_s": 1, "rounds_per_block": 3, "connections_levels": [100], "gomaxprocs": [1, 2], "warmup_s": 1,
    ...         "setups": ["go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix"], "min_blocks": 4}
    >>> round(verdict_seconds(plan))  # 2 x ((4 x 12 + 1 x 6) x 1.1 s + 5 x 2 s + 4 x 1.1 s)
    148
    """
    setups, levels = len(plan["setups"]), len(plan["connections_levels"])
    deciding = 2 if verdicts.contenders(plan["setups"]) else setups
    first, expected = plan["min_blocks"], max(plan["min_blocks"], VERDICT_BLOCKS_EXPECTED)
    measurements = (first * setups + (expected - first) * deciding) * plan["rounds_per_block"] * levels
    warm_up = setups * levels * (plan["warmup_s"] + MEASUREMENT_OVERHEAD_S)
    return len(plan["gomaxprocs"]) * (measurements * (plan["duration_s"] + MEASUREMENT_OVERHEAD_S) + expected * PASS_OVERHEAD_S + warm_up)


def stopping_lines(plan: dict) -> list[str]:
    """Return the stopping rule's `key value` lines for the script: its rule and the sentence that opens the run (none for a fixed design)."""
    return [f"rule {plan['intervals']['rule']}", f"plan_words {plan_words(plan)}"] if plan["adaptive"] else []
