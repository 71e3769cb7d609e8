"""The capacity's stopping rule: after a fixed-rate block at one GOMAXPROCS value, whether that value takes another block.

The phase runs its least blocks (rate_blocks) at every GOMAXPROCS value; with the stopping
rule (the default profile) a value takes another block while any of its capacities or
capacity ratios (core/capacity.py: combine, combine_ratio) has a 95% interval reaching
further than --capacity-precision from its estimate (a bound has no interval: another block
cannot narrow it, so it does not ask for one), up to rate_blocks_max, and only when the block
and the values still taking blocks fit before --max-time. A setup known here to scatter more
than the default four (profiles.CAPACITY_SPREAD, kept in the run's parameters as
capacity_spreads) is judged by the wider of its interval and
the one its usual spread gives at that many blocks: its run does not stop because a few blocks
happened to agree. Without that, a setup whose blocks scatter as the front ends' FastCGI did
(log sd 0.2-0.3) had 95% intervals covering 91-92%: an optional stop picks the runs whose
sample spread is low. The search's time is bounded the other way too: after the least blocks,
a value whose widest interval would still be more than REACH times the target at the block
ceiling (its spread so far, or its usual spread, carried to rate_blocks_max blocks: ceiling_width)
stops there and says so ("out of reach"), instead of running to the ceiling for an interval
that cannot meet it (a host whose own pauses scatter the blocks by 0.4, log sd, would leave
+/-29% at 12 blocks). The capacity check (the measurement at the capacity found) follows the
search of a value's last block. The optional stopping's effect on coverage is simulated in
tests/test_core_capacity_coverage.py. Pure functions; the helper's `capacity-more` reads
the run and prints the verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.capacity import Estimate
from ..core.stats import Interval, t_975


@dataclass(frozen=True)
class Width:
    """One capacity (or a ratio of two, named 'setup/baseline') and how far its interval reaches from its estimate (None: a bound or one
    block); usual: how far the setup's usual spread would reach at these blocks (usual_width), None for a setup not known to scatter more."""

    name: str
    half_width: float | None
    usual: float | None = None

    @property
    def judged(self) -> float | None:
        """Return the width the rule judges: the interval's, or the usual one where that reaches further (None: no interval).

        >>> Width("caddy-http", 0.08, 0.19).judged, Width("caddy-http", 0.25, 0.19).judged, Width("caddy-http", None, 0.19).judged
        (0.19, 0.25, None)
        """
        return None if self.half_width is None else max(self.half_width, self.usual or 0.0)


def spread_half_width(spread: float, blocks: int) -> float:
    """Return how far a 95% Student-t interval over `blocks` block values whose logs scatter by `spread` (sd) reaches above the estimate.

    >>> round(spread_half_width(0.115, 6), 3), round(spread_half_width(0.31, 12), 3)
    (0.128, 0.218)
    """
    return math.expm1(t_975(blocks - 1) * spread / math.sqrt(blocks))


def usual_width(setup: str, blocks: int, spreads: dict[str, float]) -> float | None:
    """Return the half-width setup's usual block-to-block spread (spreads: the run's parameters' capacity_spreads, from
    profiles.CAPACITY_SPREAD) gives at `blocks` blocks; None for a setup not in it (the default four: their own intervals judge
    them) or fewer than two blocks. A ratio's is its setup's."""
    spread = spreads.get(setup)
    return None if spread is None or blocks < 2 else spread_half_width(spread, blocks)


def half_width(estimate: Estimate | None) -> float | None:
    """Return how far an estimate's interval reaches above it, relative (0.15: +/-15% on the log scale); None for a bound, one block or nothing.

    >>> round(half_width(Estimate(20000.0, 17391.3, 23000.0, None, 4)), 4), half_width(Estimate(20000.0, None, None, "at_least", 4))
    (0.15, None)
    """
    if estimate is None or estimate.value <= 0:
        return None
    return Interval(estimate.value, estimate.low, estimate.high, estimate.blocks).half_width_rel  # the throughput rule's measure


REACH = 1.5  # "out of reach": the interval carried to the ceiling would still be more than half as wide again as the target


def carried(half: float, blocks: int, ceiling: int) -> float:
    """Return the half-width a 95% t-interval of `half` after `blocks` blocks would have after `ceiling`, its blocks' spread the same.

    >>> round(carried(0.41, 4, 12), 3), round(carried(0.2, 12, 12), 3)
    (0.147, 0.2)
    """
    return math.expm1(math.log1p(half) * (t_975(ceiling - 1) / math.sqrt(ceiling)) / (t_975(blocks - 1) / math.sqrt(blocks)))


def ceiling_width(width: Width, blocks: int, ceiling: int) -> float | None:
    """Return the half-width the rule would judge at the block ceiling, each spread (the interval's, the usual one) as it is now.

    >>> round(ceiling_width(Width("go-http", 0.41), 4, 12), 3), round(ceiling_width(Width("x", 0.1, 0.64), 4, 12), 3)
    (0.147, 0.218)
    """
    if width.judged is None or blocks < 2:
        return None
    return max(carried(width.half_width, blocks, ceiling), carried(width.usual, blocks, ceiling) if width.usual else 0.0)


def widest(widths: list[Width]) -> Width | None:
    """Return the width reaching furthest (None when none has an interval)."""
    found = [w for w in widths if w.judged is not None]
    return max(found, key=lambda w: w.judged) if found else None


def decide(
    widths: list[Width], blocks: int, params: dict, elapsed_s: float, block_s: float | None, going: int, reserve_s: float = 0.0
) -> str | None:
    """Return why a GOMAXPROCS value takes no more fixed-rate blocks after `blocks` of them (None: it takes another).

    params: the manifest's (rate_blocks, rate_blocks_max, capacity_precision_pct, max_time_s);
    block_s: the mean seconds of a fixed-rate block so far; going: the blocks that must fit before
    --max-time if this value takes another (this round's still to run at the other values, and the
    next round's of every value still taking blocks, this one's among them); reserve_s: what must
    fit after them (the capacity checks still to run).

    >>> params = {"rate_blocks": 4, "rate_blocks_max": 8, "capacity_precision_pct": 15.0, "max_time_s": 900}
    >>> wide = [Width("go-http", 0.12), Width("nginx-http/go-http", 0.21)]
    >>> decide(wide, 3, params, 400.0, 30.0, 2) is None, decide(wide, 4, params, 400.0, 30.0, 2) is None
    (True, True)
    >>> decide([Width("go-http", 0.12)], 4, params, 400.0, 30.0, 2)
    'target met: every capacity and capacity ratio within +/-15% after 4 blocks'
    >>> decide(wide, 4, params, 850.0, 30.0, 2)
    'time limit: 2 more fixed-rate blocks (~30s each) would end after --max-time 900s (nginx-http/go-http at +/-21%)'
    >>> decide([Width("go-http", None)], 1, {**params, "rate_blocks": 1}, 60.0, 30.0, 1)
    'no capacity interval to narrow after 1 block (one block, or bounds only)'
    >>> decide(wide, 8, params, 400.0, 30.0, 2)
    'block ceiling: 8 fixed-rate blocks (nginx-http/go-http at +/-21%)'
    >>> agreed = [Width("go-http", 0.06), Width("caddy-http", 0.09, usual_width("caddy-http", 8, {"caddy-http": 0.227}))]
    >>> decide(agreed, 8, params, 400.0, 30.0, 2)
    'block ceiling: 8 fixed-rate blocks (caddy-http at +/-9%, +/-21% at its usual spread)'
    >>> decide([Width("go-http", 0.12), Width("nginx-http/go-http", 0.95)], 4, params, 400.0, 30.0, 2)
    'out of reach: nginx-http/go-http at +/-95% after 4 blocks would still be at +/-42% after the ceiling of 8 (target +/-15%)'
    """
    if blocks < params["rate_blocks"]:
        return None
    worst = widest(widths)
    target = params.get("capacity_precision_pct", 15.0) / 100
    if worst is None:
        return f"no capacity interval to narrow after {blocks} block{'s' if blocks > 1 else ''} (one block, or bounds only)"
    if worst.judged <= target:
        return f"target met: every capacity and capacity ratio within +/-{100 * target:g}% after {blocks} blocks"
    left = f"{worst.name} at +/-{100 * worst.half_width:.0f}%"
    if worst.judged > worst.half_width:
        left += f", +/-{100 * worst.judged:.0f}% at its usual spread"
    ceiling = params.get("rate_blocks_max", params["rate_blocks"])
    if blocks >= ceiling:
        return f"block ceiling: {blocks} fixed-rate blocks ({left})"
    reach = ceiling_width(worst, blocks, ceiling)
    if reach is not None and reach > REACH * target:
        return (
            f"out of reach: {left} after {blocks} blocks would still be at +/-{100 * reach:.0f}% after the ceiling of {ceiling}"
            f" (target +/-{100 * target:g}%)"
        )
    limit = params.get("max_time_s")
    if limit is not None and block_s is not None and elapsed_s + going * block_s + reserve_s > limit:
        return f"time limit: {going} more fixed-rate block{'s' if going > 1 else ''} (~{block_s:.0f}s each) would end after --max-time {limit}s ({left})"
    return None
