"""Plan of the fixed-rate phase: --rates, the phase's blocks and time, and the rates a GOMAXPROCS value is measured at.

After the throughput blocks, the phase runs `rate_blocks` blocks per GOMAXPROCS value, and with
the stopping rule more up to `rate_blocks_max` while a capacity is wider than --capacity-precision
(bench/capacity_rule.py; each block a start of the servers, one round: every setup once per rate, in a shuffled order),
vegeta offering each rate for `rate_duration_s`. --rates LIST (BENCH_RATES) names the
rates: whole req/s (`2000,5000`), shares of the slowest setup's measured req/s at that
GOMAXPROCS (`25%,50%,75%`), or `off`. Without it, the profile's shares (default: a quarter of
the slowest setup's throughput), so every setup is offered the same load. With the stopping
rule, the phase's expected time comes out of --max-time: the throughput blocks stop early
enough for the whole run to fit. With --server-host vegeta runs here against the target
(as wrk does); with --client-hosts on every client at once, each at its share of the rate
(bench/fixed_rate_clients.py).

--slo PCT=DURATION (BENCH_SLO; none by default, `off`: none; p99=10ms is the one suggested) is the latency objective of
the capacity search, which runs only when one is given: after the planned rates, each block searches every setup's highest
rate held with that percentile within the objective (core/capacity.py), in at most
capacity.search_steps(lowest planned rate, the setup's closed-loop req/s) further
measurements. Standard library only.
"""

from __future__ import annotations

import argparse

from ..core.capacity import Slo, parse_slo
from ..core.errors import UsageError
from ..core.setups import SETUP_BY_ID
from ..core.units import round_figures
from .capacity_rule import spread_half_width
from .profiles import (
    CAPACITY_PRECISION_PCT,
    CAPACITY_SPREAD,
    CHECKS_EXPECTED,
    DEFAULT_CAPACITY_SPREAD,
    DEFAULT_MAX_TIME_FACTOR,
    ENV_CAPACITY_PRECISION,
    ENV_RATES,
    ENV_SLO,
    MAX_RATE,
    MEASUREMENT_OVERHEAD_S,
    PASS_OVERHEAD_S,
    RATE_OVERHEAD_S,
    RATE_PHASE,
    SEARCH_STEPS_EXPECTED,
)
from .values import parse_int, parse_percent, split_list

OFF = "off"


def rate_options(parser: argparse.ArgumentParser) -> None:
    """Add the fixed-rate phase's options to run_bench.sh's parser."""
    parser.add_argument("--rates")
    parser.add_argument("--slo")
    parser.add_argument("--capacity-precision")


def parse_rates(text: str, source: str) -> tuple[list[int], list[float]]:
    """Return (rates in req/s, shares of the slowest setup's req/s) of a --rates list.

    >>> parse_rates("5000,2000,5000", "--rates")
    ([2000, 5000], [])
    >>> parse_rates("25%,50%", "--rates")
    ([], [0.25, 0.5])
    """
    rates, shares = set(), set()
    for item in split_list(text):
        if item.endswith("%"):
            shares.add(parse_percent(item, f"{source} value") / 100)
        else:
            rates.add(parse_int(item, f"{source} value", 1, maximum=MAX_RATE))
    if not rates and not shares:
        raise UsageError(f"{source} needs at least one rate, e.g. 2000,5000 (req/s), 50% (of the slowest setup's req/s) or {OFF}")
    return sorted(rates), sorted(shares)


def rate_plan(args: argparse.Namespace, env: dict[str, str], plan: dict) -> dict:
    """Return the phase's plan: rates, rate_shares, rate_blocks, rate_duration_s, rate_warmup_s, rate_max_connections, rate_phase."""
    profile = dict(RATE_PHASE[plan["profile"]])
    text = args.rates if args.rates is not None else env.get(ENV_RATES)
    source = "--rates" if args.rates is not None else ENV_RATES
    rates: list[int] = []
    shares: list[float] = profile.pop("rate_shares")
    if text is not None and text.strip() == OFF:
        profile["rate_blocks"], shares = 0, []
    elif text is not None:
        rates, shares = parse_rates(text, source)
        profile["rate_blocks"] = profile["rate_blocks"] or 1  # a profile without the phase runs it once when asked
    clients = len(plan.get("client_hosts") or [])
    if rates and rates[0] < clients:  # each client offers its share: at least 1 req/s
        raise UsageError(f"{source} {rates[0]}: below 1 req/s per client over the {clients} --client-hosts")
    if plan["load_generator"] == "ab" or plan.get("connection_per_request"):
        profile["rate_blocks"] = 0  # vegeta keeps connections alive; the phase compares with wrk's (h2load's) keep-alive runs only
    if not profile["rate_blocks"]:
        rates, shares = [], []
    text = args.capacity_precision if args.capacity_precision is not None else env.get(ENV_CAPACITY_PRECISION)
    source = "--capacity-precision" if args.capacity_precision is not None else ENV_CAPACITY_PRECISION
    precision = CAPACITY_PRECISION_PCT if text is None else parse_percent(text, source)
    spreads = {}
    slo_text = args.slo if args.slo is not None else env.get(ENV_SLO, OFF)  # the capacity search only on request
    slo = parse_slo(slo_text.strip(), "--slo" if args.slo is not None else ENV_SLO)
    if not plan["adaptive"] or not profile["rate_blocks"] or slo is None:  # more blocks only for the capacity (capacity_rule.py)
        profile["rate_blocks_max"] = profile["rate_blocks_expected"] = profile["rate_blocks"]
    else:
        profile["rate_blocks_expected"] = expected_rate_blocks(rate_setups(plan["setups"]), profile, precision)
        spreads = {s: CAPACITY_SPREAD[s] for s in rate_setups(plan["setups"]) if s in CAPACITY_SPREAD}  # the rule's usual spreads
    return {
        **profile,
        "rates": rates,
        "rate_shares": shares,
        # vegeta -max-connections: the run's connection level. Unlimited, vegeta opens a
        # connection per request in flight past the server's ceiling and collapses;
        # capped, a rate the server cannot hold shows as vegeta falling behind (rate-held).
        "rate_max_connections": max(plan["connections_levels"]),
        "rate_phase": bool(profile["rate_blocks"]),
        "slo": slo.record() if slo is not None and profile["rate_blocks"] else None,  # no phase: no search
        "capacity_precision_pct": precision,
        "capacity_spreads": spreads,
    }


def rate_setups(setups: list[str]) -> list[str]:
    """Return the setups the phase measures: all but the new-connection ones (go-https-new & co.) and the -mux h2 ones, in order.

    vegeta keeps its connections alive, as the phase compares keep-alive latencies (so
    --connection-per-request runs have no phase); a -new setup's figure is its handshakes
    per second, and its few hundred would set the share of the slowest setup for all. A -mux
    setup is its server loaded with more h2load streams; vegeta has no such count.

    >>> rate_setups(["go-http", "go-https", "go-https-new", "nginx-https-new"])
    ['go-http', 'go-https']
    """
    return [s for s in setups if not (s in SETUP_BY_ID and (SETUP_BY_ID[s].new_connection or SETUP_BY_ID[s].multiplexed))]


def blocks_for_spread(spread: float, precision_pct: float, least: int, most: int) -> int:
    """Return the blocks (least to most) at which a capacity whose block values scatter by `spread` (sd of their logs) is expected
    within +/-precision_pct: the Student-t interval's upper end, exp(t(b-1) * spread / sqrt(b)) - 1, as the capacity rule measures it.

    >>> blocks_for_spread(0.115, 15, 4, 12), blocks_for_spread(0.197, 15, 4, 12), blocks_for_spread(0.5, 15, 4, 12), blocks_for_spread(0.01, 15, 4, 12)
    (6, 11, 12, 4)
    """
    b = least
    while b < most and spread_half_width(spread, b) > precision_pct / 100:
        b += 1
    return b


def expected_rate_blocks(setups: list[str], profile: dict, precision_pct: float) -> int:
    """Return the fixed-rate blocks per GOMAXPROCS a plan counts on: those its most scattered setup (profiles.CAPACITY_SPREAD) needs
    for --capacity-precision, never fewer than the profile's rate_blocks_expected nor more than its rate_blocks_max.

    >>> profile = {"rate_blocks": 4, "rate_blocks_expected": 6, "rate_blocks_max": 12}
    >>> expected_rate_blocks(["go-http", "nginx-http"], profile, 15), expected_rate_blocks(["go-http", "caddy-fcgi-tcp"], profile, 15)
    (6, 11)
    >>> expected_rate_blocks(["go-http", "haproxy-fcgi-unix"], profile, 15)  # 22 for +/-15%: the ceiling
    12
    """
    spread = max([CAPACITY_SPREAD.get(s, DEFAULT_CAPACITY_SPREAD) for s in setups], default=DEFAULT_CAPACITY_SPREAD)
    found = blocks_for_spread(spread, precision_pct, max(2, profile["rate_blocks"]), profile["rate_blocks_max"])
    return min(profile["rate_blocks_max"], max(profile["rate_blocks_expected"], found))


def rate_phase_seconds(plan: dict, blocks: int | None = None) -> float:
    """Return the fixed-rate phase's expected seconds at `blocks` blocks per GOMAXPROCS (its least, rate_blocks, by default): per block a server start, per setup a warm-up, a measurement per rate and the capacity search's; the capacity checks."""
    if not plan["rate_phase"]:
        return 0.0
    measured = len(plan["rates"] + plan["rate_shares"]) + (min(SEARCH_STEPS_EXPECTED, plan["search_steps"]) if plan.get("slo") else 0)
    per_setup = plan["rate_warmup_s"] + MEASUREMENT_OVERHEAD_S + measured * (plan["rate_duration_s"] + RATE_OVERHEAD_S)
    per_block = PASS_OVERHEAD_S + len(rate_setups(plan["setups"])) * per_setup
    checks = len(rate_setups(plan["setups"])) * check_seconds(plan) if plan.get("slo") else 0
    return len(plan["gomaxprocs"]) * ((plan["rate_blocks"] if blocks is None else blocks) * per_block + checks)


def check_seconds(plan: dict, tries: int | None = None) -> float:
    """Return the seconds one setup's capacity checks at one GOMAXPROCS value are expected to take (a plan's, or a manifest's
    parameters): at the capacity after the last block's search, then lower while missed, CHECKS_EXPECTED of them at most
    check_tries (or `tries` of them), each check_duration_s (rate_duration_s before 2026-11-29) and vegeta's overhead.

    >>> plan = {"rate_duration_s": 1, "check_duration_s": 10, "check_tries": 3}
    >>> round(check_seconds(plan), 3), round(check_seconds(plan, tries=1), 3), check_seconds({"rate_duration_s": 1})
    (20.8, 10.4, 1.4)
    """
    count = min(CHECKS_EXPECTED, plan.get("check_tries", 1)) if tries is None else tries
    return count * (plan.get("check_duration_s", plan["rate_duration_s"]) + RATE_OVERHEAD_S)


def time_plan(plan: dict, throughput_s: int) -> dict:
    """Return the run's times: targets_s, max_time_s, rate_phase_s and estimate_s, from the least throughput blocks' expected seconds.

    targets_s: the least throughput blocks the stopping rule asks for and the fixed-rate
    phase's expected blocks (uncapped); max_time_s: the one given, else default_max_time;
    rate_phase_s: what the throughput blocks leave the phase (its expected blocks when
    --max-time covers the targets, else its least: a shorter --max-time given, the
    throughput blocks get the rest); estimate_s: the least blocks within --max-time.
    """
    targets = throughput_s + round(rate_phase_seconds(plan, plan["rate_blocks_expected"]))
    max_time = default_max_time({**plan, "targets_s": targets})
    phase = round(rate_phase_seconds(plan, plan["rate_blocks_expected"] if max_time is None or max_time >= targets else None))
    estimate = throughput_s if max_time is None else min(throughput_s, max_time - phase)
    return {"targets_s": targets, "max_time_s": max_time, "rate_phase_s": phase, "estimate_s": estimate + phase}


def default_max_time(plan: dict) -> int | None:
    """Return the run's --max-time in seconds: the one given; else, with the stopping rule, what the targets are expected to need
    times DEFAULT_MAX_TIME_FACTOR; None without a limit.

    >>> default_max_time({"max_time_s": None, "max_time_given": False, "adaptive": True, "profile": "default", "targets_s": 600})
    750
    >>> default_max_time({"max_time_s": None, "max_time_given": False, "adaptive": True, "profile": "default", "targets_s": 200}), default_max_time({"max_time_s": 90, "max_time_given": True, "adaptive": True, "profile": "default", "targets_s": 600})
    (250, 90)
    """
    if plan["max_time_given"] or not plan["adaptive"]:
        return plan["max_time_s"]
    return round(DEFAULT_MAX_TIME_FACTOR * plan["targets_s"])


def capacity_slo(plan: dict) -> Slo:
    """Return the plan's objective (its record, {'percentile': 99, 'ms': 5}) as an Slo."""
    return Slo(float(plan["slo"]["percentile"]), float(plan["slo"]["ms"]))


def rate_lines(plan: dict) -> list[str]:
    """Return the phase's `key value` lines for the script."""
    lines = [
        f"rate_phase {int(plan['rate_phase'])}",
        f"rate_blocks {plan['rate_blocks']}",
        f"rate_blocks_max {plan['rate_blocks_max']}",
        f"capacity_precision {plan['capacity_precision_pct']:g}",
    ]
    lines += [
        f"rate_duration_s {plan['rate_duration_s']:g}",
        f"rate_warmup_s {plan['rate_warmup_s']:g}",
        f"check_duration_s {plan['check_duration_s']:g}",
        f"check_tries {plan['check_tries']}",
    ]
    return lines + [
        f"rate_max_connections {plan['rate_max_connections']}",
        f"capacity_search {int(bool(plan.get('slo')))}",
        f"slo {capacity_slo(plan).words if plan.get('slo') else 'off'}",
    ]


RATE_PARAMETERS = (
    "rates",
    "rate_shares",
    "rate_blocks",
    "rate_blocks_max",
    "rate_duration_s",
    "rate_warmup_s",
    "rate_max_connections",
    "rate_phase_s",
    "slo",
    "search_steps",
    "capacity_precision_pct",
    "capacity_spreads",
    "check_duration_s",
    "check_tries",
    "check_share",
)


def rate_parameters(plan: dict) -> dict:
    """Return the phase's entries of the manifest's parameters (docs/raw-format.md)."""
    return {key: plan[key] for key in RATE_PARAMETERS}


def round_rate(rate: float) -> int:
    """Return a rate rounded to two significant figures (at least 1 req/s), so a phase's rates read plainly.

    >>> round_rate(6234.5), round_rate(87.2), round_rate(0.3)
    (6200, 87, 1)
    """
    return round_figures(rate, 2)
