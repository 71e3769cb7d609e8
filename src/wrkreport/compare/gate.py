"""The comparison as a CI gate (wrkreport compare --fail-on): the flagged changes that fail it, worse ones or any."""

from __future__ import annotations

from ..analysis.analyze import THROUGHPUT
from .two_runs import RunComparison

FAIL_ON = ("never", "worse", "change")  # `wrkreport compare --fail-on`: what makes the comparison fail a CI job


def gate(result: RunComparison, fail_on: str) -> list[str]:
    """Return the figures that fail the gate `fail_on`: every flagged change that is worse (worse) or any (change); none for never.

    Counted: the flagged changes of req/s, ratios, p99 and CPU per request, and the fixed-rate
    added latencies (worse: more added in B). When machine drift is named (the ratios held
    while every req/s moved together), req/s figures are left out: the machine moved, not nginx.
    """
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    if fail_on == "never":
        return []
    drifted = result.drift is not None and result.drift.named
    found = [
        f"{c.setup} GOMAXPROCS={c.gomaxprocs} c{c.connections} {c.label} {c.change:.3f} ({c.ci_low:.3f}-{c.ci_high:.3f})"
        for c in result.flagged
        if (fail_on == "change" or not c.better) and not (drifted and c.metric == THROUGHPUT)
    ]
    found += [
        f"{c.setup} GOMAXPROCS={c.gomaxprocs} at {c.offered_rps:,} req/s added {c.percentile} {c.change_ms:+.3f} ms"
        for c in result.rate_changes
        if c.flagged and (fail_on == "change" or c.change_ms > 0)
    ]
    return found
