"""The capacity check: after the search, each setup measured again at the capacity found (Nighthawk's testing stage), judged second by second.

A check is a longer attack than a search step (profiles: check_duration_s, 10 s by default).
Since 2026-12-07 (a run's check_share) it is judged by its seconds: each whole second's
percentile of the requests started in it (RateResult.second_percentiles_ns) against the
objective, and it is met when the rate was held, every answer right, none lost and at
least seconds_needed of its seconds were within: 8 of 10 for a share of 0.9, the most that a
rate holding the objective in 9 seconds of 10 reaches at least CHECK_LEVEL (90%) of the time
with independent seconds (93.0%). Seconds are not independent on a real host: pauses and a
slowly growing backlog come in runs of seconds, which spreads the count: with misses in runs
of 2-3 s on average (still 1 second in 10) a rate at the share meets the check 84-86% of the
time (tests/test_core_capacity_check.py). Runs before it judged the whole attack's percentile.
A check that missed is measured again at CHECK_STEP of its rate, up to the run's
check_tries: the highest that met it is the rate the run saw held in 9 seconds of 10.
Standard library only: the driver's helper judges the checks.
"""

from __future__ import annotations

import math

from ..core.rate_result import RateResult
from ..core.records import Check
from .capacity import PASS, Estimate, Slo, Step, result_step, round_step

CHECK_STEP = 0.9  # a capacity check that missed the objective is measured again at this share of its rate (profiles: check_tries)
CHECK_SHARE = 0.9  # the share of a check's seconds the objective is to hold in
CHECK_LEVEL = 0.9  # how often a rate holding the objective in that share of seconds meets the check (independent seconds)


def share_of(value: object) -> float | None:
    """Return a run's check_share when it is one (a number between 0 and 1), else None: its checks judged by the whole attack.

    >>> share_of(0.9), share_of(None), share_of("0.9"), share_of(1.5), share_of(True)
    (0.9, None, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        return None
    return float(value)


def seconds_needed(seconds: int, share: float = CHECK_SHARE, level: float = CHECK_LEVEL) -> int:
    """Return how many of a check's seconds must meet the objective: the most k that a rate whose seconds meet it with probability
    `share` reaches at least `level` of the time (k of n, binomial).

    >>> seconds_needed(10), seconds_needed(5), seconds_needed(1), seconds_needed(10, 0.95), seconds_needed(20)
    (8, 4, 1, 9, 16)
    """
    reach = lambda k: sum(math.comb(seconds, j) * share**j * (1 - share) ** (seconds - j) for j in range(k, seconds + 1))  # noqa: E731
    return max([k for k in range(1, seconds + 1) if reach(k) >= level - 1e-12] or [1])


def check_step(rate: int, result: RateResult | None, checks: list[Check] | tuple[Check, ...], slo: Slo, share: object) -> Step:
    """Return a capacity check as a step: judged by its seconds when the run gives a share (seconds and seconds_met kept), else as a
    step of the search (the whole attack's percentile, runs before 2026-12-07).

    A check is met (PASS) when the rate was held, every answer right, none lost and seconds_needed of its seconds within.
    """
    share = share_of(share)
    counted = result.seconds_within(slo.percentile, slo.ms) if share is not None and result is not None else None
    if counted is None:
        return result_step(rate, result, checks, slo)
    return result_step(rate, result, checks, slo, counted, seconds_needed(counted[0], share))


def check_rate(estimate: Estimate | None, taken: set[int] | frozenset[int] = frozenset()) -> int | None:
    """Return the rate of the capacity check after the search: the capacity found, to three figures, and a new rate (a new file name) when taken; None for a bound or nothing.

    >>> check_rate(Estimate(3672.4, 3540.0, 3808.0, None, 4)), check_rate(Estimate(3672.4, 3540.0, 3808.0, None, 4), {3670, 3671})
    (3670, 3672)
    >>> check_rate(Estimate(6200, None, None, "at_most", 4)) is None
    True
    """
    if estimate is None or estimate.bound is not None:
        return None
    rate = round_step(estimate.value)
    while rate in taken:
        rate += 1
    return rate


def next_check_rate(
    estimate: Estimate | None, checks: list[Step], tries: int, taken: set[int] | frozenset[int] = frozenset()
) -> int | None:
    """Return the rate of a setup's next capacity check, None when its checks are over.

    The first at the capacity (check_rate; none for a bound); after a check that missed the
    objective (or was not held), one more at CHECK_STEP of its rate, up to `tries` in all;
    none after one that met it. A new rate (a new file name) when taken.

    >>> estimate = Estimate(30100, 28000, 32400, None, 6)
    >>> next_check_rate(estimate, [], 3), next_check_rate(estimate, [Step(30100, "fail", 41.0)], 3)
    (30100, 27100)
    >>> next_check_rate(estimate, [Step(30100, PASS, 6.0)], 3), next_check_rate(estimate, [Step(30100, "fail"), Step(27100, "fail")], 2)
    (None, None)
    """
    if not checks:
        return check_rate(estimate, taken)
    last = checks[-1]
    if last.verdict == PASS or len(checks) >= tries:
        return None
    rate = round_step(last.rate * CHECK_STEP)
    while rate in taken:
        rate -= 1
    return rate if rate > 0 else None
