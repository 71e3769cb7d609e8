"""The fixed-rate part of the page: the answer's sentences, one row per planned cell, the capacities at the latency objective, and the saturation latencies' Little's-law figure, as strings."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..analysis.capacities import Capacity
from ..analysis.rate_latency import BASELINE, RateCell
from ..core.capacity import DEFAULT_SLO, HEADROOM, JITTER, LADDER, LADDER_STEP, MAX_EDGE, MAX_STEPS, PERCENTILES, RESOLUTION, Slo
from ..core.capacity_check import CHECK_LEVEL, CHECK_STEP, seconds_needed, share_of
from ..core.rate_result import whole_seconds
from ..core.setups import APP_BASELINE, baseline_of, divisor_words, said_over, streams_of
from ..core.stats import Interval
from ..report.rate_summary import (
    added_kind,
    added_over,
    added_words,
    baselines_named,
    capacity_sentences,
    capacity_words,
    check_words,
    not_held_words,
    over,
    ratio_words,
)
from ..runs.record import Parameters
from .fmt import fmt_ms
from .study import load_generator_of
from .words import upper_first

LEAD = (
    "vegeta offers each rate open loop, as a service's users would: requests start on schedule whatever the answers, so "
    "these are the latencies a request sees at that load, and a stall shows in them. Added latency is a setup's minus "
    "go-http's in the same block; how each figure was estimated is in How it was measured."
)


@dataclass(frozen=True)
class RateSection:
    """What the template shows of the fixed-rate phase."""

    sentences: tuple[str, ...]  # one per GOMAXPROCS and rate, for the answer box
    rows: tuple[tuple[str, ...], ...]  # group, setup, offered, achieved, p50, p99, p99.9, added p50, added p99
    settings: str
    saturation: str  # the closed-loop latencies' Little's-law figure: they are queueing at saturation
    added_over: str = BASELINE  # the table's header: what the added latencies are over
    capacity: tuple[str, ...] = ()  # one sentence per GOMAXPROCS for the answer box: each setup's capacity at the objective
    objective: str = ""  # the objective, and why it is what it is (beside the capacity sentences)
    capacity_method: str = ""  # how the capacity was found, in one sentence
    capacity_rows: tuple[tuple[str, ...], ...] = ()  # group, setup, capacity, ratio to its baseline's, blocks, measured again
    lead: str = LEAD  # what the section measures, in plain words (the method is in How it was measured)


def fmt_added(interval: Interval | None) -> str:
    """Return an added latency for the table, in words that follow its interval (as summary.added_phrase does in sentences).

    >>> fmt_added(Interval(0.142, 0.121, 0.163, 4)), fmt_added(Interval(0.17, -0.35, 0.68, 4))
    ('0.142 (0.121 to 0.163)', 'none measurable (-0.350 to 0.680)')
    >>> fmt_added(Interval(-0.71, -0.9, -0.5, 4)), fmt_added(Interval(0.05, None, None, 1)), fmt_added(None)
    ('0.710 less (0.500 to 0.900)', '0.0500 (one block: no interval)', '-')
    """
    kind = added_kind(interval)
    if kind == "missing":
        return "-"
    estimate, low, high = interval.estimate, interval.low, interval.high
    if kind == "one":
        return f"{fmt_ms(estimate)} (one block: no interval)" if estimate >= 0 else f"{fmt_ms(-estimate)} less (one block: no interval)"
    if kind == "adds":
        return f"{fmt_ms(estimate)} ({fmt_ms(low)} to {fmt_ms(high)})"
    if kind == "less":
        return f"{fmt_ms(-estimate)} less ({fmt_ms(-high)} to {fmt_ms(-low)})"
    return f"none measurable ({fmt_ms(low)} to {fmt_ms(high)})"


def sentences(cells: list[RateCell], several_gomaxprocs: bool) -> list[str]:
    """Return one sentence per GOMAXPROCS and rate: what each setup adds to go-http's latency there, or that it did not hold the rate."""
    found = []
    for n, rate in dict.fromkeys((c.gomaxprocs, c.offered_rps) for c in cells):
        where = f"At {rate:,} req/s" + (f" (GOMAXPROCS={n})" if several_gomaxprocs else "")
        parts, here = [], [c for c in cells if (c.gomaxprocs, c.offered_rps) == (n, rate)]
        named = baselines_named(here)
        for c in here:
            if not c.held:
                parts.append(not_held_words(c))
            elif not c.is_baseline and c.added_p50 is not None:
                parts.append(added_words(c) + over(c, named))
        if parts:
            found.append(f"{where}, open loop, over {added_over(named)}: " + "; ".join(parts) + ".")
    return found


def littles_law(analysis, parameters: Parameters | None = None) -> str:
    """Return the sentence labelling the closed loop's latencies: per cell, mean latency / (requests in flight / throughput),
    near 1 when they are queueing. In flight: the connections, times h2load's streams per connection (-m) in an h2load run,
    so a multiplexed setup (-mux, -m 10) keeps ten times the connections busy and is near 1 too."""
    parameters = parameters or Parameters.of(None)
    tool = load_generator_of(parameters)
    figures = []
    for cell in analysis.cells:
        mean, rate = (cell.metrics.get(m) for m in ("latency_avg_ms", "requests_per_sec"))
        if mean and rate and mean.values and rate.values:
            queue_ms = 1000 * cell.connections * in_flight(cell.setup, parameters) / statistics.median(rate.values)
            figures.append(f"{cell.setup} GOMAXPROCS={cell.gomaxprocs} {statistics.median(mean.values) / queue_ms:.2f}")
    said = "; ".join(figures[:12]) or "not known"
    counted = "connections x streams per connection" if tool == "h2load" else "connections"
    return (
        f"Closed-loop latencies ({tool}): at saturation, mostly queueing. By Little's law a closed loop's mean latency is "
        f"requests in flight ({counted}) / throughput; "
        f"mean latency / (in flight / throughput) per cell: {said} (near 1: the latency restates the throughput). "
        "The latency a service sees at its load is in Latency at a fixed load."
    )


def in_flight(setup: str, parameters: Parameters) -> int:
    """Return the requests each connection kept in flight at saturation: h2load's -m for an h2 setup of an h2load run
    (core.setups.streams_of), else 1 (wrk, ab, and h2load --h1 send one request at a time).

    >>> in_flight("nginx-h2-mux", Parameters.of({"load_generator": "h2load", "streams": 1, "streams_mux": 10})), in_flight("go-http", Parameters.of({"streams": 4}))
    (10, 1)
    """
    if load_generator_of(parameters) != "h2load":
        return 1
    count = streams_of(setup, parameters.streams, parameters.streams_mux)
    return count if isinstance(count, int) and count >= 1 else 1


def added_cells(cell: RateCell, named: bool) -> tuple[str, str]:
    """Return the row's added p50 and p99: 'baseline', the figures, or why there are none (the rate not held by the cell or by its baseline)."""
    if cell.is_baseline:
        return "baseline", "baseline"
    if cell.held and cell.added_p50 is None:
        why = f"- ({cell.baseline} did not hold the rate)"
        return why, why
    return fmt_added(cell.added_p50) + over(cell, named), fmt_added(cell.added_p99) + over(cell, named)


def light_load(cells: list[RateCell], slo: Slo) -> str:
    """Return each baseline's figure at the objective's percentile at its lowest planned rate held: '1.36 ms at 12,000 req/s with GOMAXPROCS=1' ('' without one)."""
    figure = {50.0: "p50_ms", 99.0: "p99_ms", 99.9: "p999_ms"}.get(slo.percentile)
    found = []
    for n in sorted({c.gomaxprocs for c in cells}):
        base = [
            c for c in cells if c.gomaxprocs == n and c.is_baseline and c.planned and c.held and figure and getattr(c, figure) is not None
        ]
        if base:
            low = min(base, key=lambda c: c.offered_rps)
            found.append(f"{fmt_ms(getattr(low, figure))} ms at {low.offered_rps:,} req/s with GOMAXPROCS={n}")
    return " and ".join(found)


# Why the default objective is what it is, per default (core.capacity.DEFAULT_SLO; a test checks it has one here).
DEFAULT_REASONS = {
    "p99=5ms": (
        f"at light load {BASELINE} alone answers with p99 about 1-1.5 ms on the 2-core machine it was set on, so 5 ms leaves "
        "room for what a proxy adds and still catches queueing, which takes p99 to tens of ms"
    ),
    "p99=10ms": (
        f"at light load {BASELINE} alone answers with p99 about 1-1.5 ms on the 2-core machine it was set on, and the p99 of one "
        "1-s measurement there, shared with vegeta, wanders up to about 9 ms below the knee and jumps to 33-169 ms past it, where "
        "a queue forms: 10 ms sits between the two, so the capacity is where queueing starts, not where a chance pause fell"
    ),
}


def objective_sentence(slo: Slo, cells: list[RateCell]) -> str:
    """Return the objective, said as the default or the run's own --slo, with the default's reason and this run's light-load figure."""
    measured = light_load(cells, slo)
    here = f"; in this run {divisor_words({c.setup for c in cells})} {slo.name} at light load was {measured}" if measured else ""
    why = DEFAULT_REASONS.get(DEFAULT_SLO, "")
    other = f"--slo PERCENTILE=DURATION ({', '.join(PERCENTILES)}; ms or us), or --slo off"
    if slo.label == DEFAULT_SLO:
        return f"The objective is the default, {slo.words}" + (f": {why}" if why else "") + f"{here}. Another objective: {other}."
    return f"The objective is this run's --slo {slo.label}, {slo.words}{here}. The default is {DEFAULT_SLO}" + (f": {why}." if why else ".")


def floor_sentences(capacities: list[Capacity]) -> str:
    """Return the machine's floor of each GOMAXPROCS value whose objective sits above it (analysis/capacity_floor.py), as sentences after
    the objective's ('' for none; one inside the floor is said as a warning before its capacities instead)."""
    floors = {c.gomaxprocs: c.floor for c in capacities if c.floor is not None and not c.floor.inside}
    several = len({c.gomaxprocs for c in capacities}) > 1
    return "".join(f" {'GOMAXPROCS=' + str(n) + ': ' if several else ''}{upper_first(floor.words())}." for n, floor in floors.items())


def known(value) -> str:
    """Return a recorded setting for a sentence, '?' when it is not recorded."""
    return "?" if value is None else str(value)


def blocks_clause(parameters: Parameters) -> str:
    """Return how many fixed-rate blocks the run took, as its capacity rule decided (bench/capacity_rule.py; a fixed count before 2026-11-29).

    >>> blocks_clause(Parameters.of({"rate_blocks": 4, "rate_blocks_max": 8, "capacity_precision_pct": 15.0}))
    '; the run takes 4 blocks per GOMAXPROCS value, then more (up to 8) while a capacity or capacity ratio there reaches further than +/-15% from its estimate and its --max-time allows'
    >>> blocks_clause(Parameters.of({"rate_blocks": 4}))
    ''
    >>> blocks_clause(Parameters.of({"rate_blocks": 4, "rate_blocks_max": 12, "capacity_precision_pct": 15.0, "capacity_spreads": {"caddy-http": 0.227}})).split("allows")[1]
    '; a setup whose blocks scatter more here (caddy-http 0.227, log sd) is judged by the wider of its interval and the one its usual spread gives at that many blocks'
    """
    least, most, target = parameters.rate_blocks, parameters.rate_blocks_max, parameters.capacity_precision_pct
    if not least or not most or most <= least or target is None:
        return ""
    spreads = parameters.capacity_spreads  # none recorded before 2026-11-30
    known = (
        ""
        if not spreads
        else (
            f"; a setup whose blocks scatter more here ({', '.join(f'{k} {v:g}' for k, v in spreads.items())}, log sd) is "
            "judged by the wider of its interval and the one its usual spread gives at that many blocks"
        )
    )
    return (
        f"; the run takes {least} blocks per GOMAXPROCS value, then more (up to {most}) while a capacity or capacity ratio there "
        f"reaches further than +/-{target:g}% from its estimate and its --max-time allows" + known
    )


def checks_clause(parameters: Parameters) -> str:
    """Return how the run checked each capacity, when its checks were longer than a step or stepped down (profiles: check_duration_s, check_tries).

    >>> checks_clause(Parameters.of({"rate_duration_s": 1, "check_duration_s": 5, "check_tries": 3}))
    ' After the last block, each capacity is measured again for 5 s (a step is 1 s: a backlog that builds over seconds shows there), and while that misses the objective, again at 90% of the rate, 3 checks at most; the highest that met it is the rate held.'
    >>> checks_clause(Parameters.of({"rate_duration_s": 1, "check_duration_s": 1, "check_tries": 1})), checks_clause(Parameters.of({"rate_duration_s": 1}))
    ('', '')
    >>> checks_clause(Parameters.of({"rate_duration_s": 1, "check_duration_s": 10, "check_tries": 3, "check_share": 0.9}))
    ' After the last block, each capacity is measured again for 10 s (a step is 1 s: a backlog that builds over seconds shows there), judged second by second: met when the objective held in at least 8 of its 10 seconds (a rate that holds it in 90% of seconds meets that 90% of the time, with independent seconds), and while that misses, again at 90% of the rate, 3 checks at most; the highest that met it is the rate held.'
    """
    step, length, tries = parameters.rate_duration_s, parameters.check_duration_s, parameters.check_tries
    if length is None or (length == step and tries <= 1):
        return ""
    longer = f" for {length:g} s (a step is {step:g} s: a backlog that builds over seconds shows there)" if length != step else ""
    share = share_of(parameters.check_share)
    seconds = whole_seconds(float(length))
    judged = (
        f", judged second by second: met when the objective held in at least {seconds_needed(seconds, share)} of its {seconds} seconds"
        f" (a rate that holds it in {share:.0%} of seconds meets that {CHECK_LEVEL:.0%} of the time, with independent seconds)"
        if share is not None
        else ""
    )
    lower = (
        f", and while that misses{'' if judged else ' the objective'}, again at {CHECK_STEP:.0%} of the rate, {tries} checks at most; the highest that met it is the rate held"
        if tries > 1
        else ""
    )
    return f" After the last block, each capacity is measured again{longer}{judged}{lower}."


def capacity_method(slo: Slo, parameters: Parameters | None = None) -> str:
    """Return how the capacity was found, in one sentence, from the search's own constants (core/capacity.py) and the run's block rule."""
    low, high = (f"{share:.0%}" for share in JITTER)
    return (
        f"Capacity: in a setup's first block (one start of the servers), after the light-load rate, a bisection on a log scale, "
        f"each cut drawn {low}-{high} of the way, moves vegeta's rate between the highest rate that met the objective (held, every "
        f"answer right, {slo.words}) and the lowest that did not (at first {HEADROOM:g}x the setup's closed-loop req/s) for up to "
        f"{MAX_STEPS} steps or until they are within {RESOLUTION - 1:.0%}; each later block measures {len(LADDER)} rates "
        f"{LADDER_STEP - 1:.0%} apart around the earlier blocks' capacity (its own random offset), and up to {MAX_EDGE} more past an "
        "edge, each step past it twice the last on a log scale; a block's capacity is where its p99 crosses the objective between the highest rate that met it and the next one "
        "above (log-log interpolation), the rate at which a typical second meets it (one second in two misses it there); the "
        f"capacity is the geometric mean over blocks with a Student-t 95% interval (its ratio to {BASELINE}'s pairs the blocks)"
        f"{blocks_clause(parameters or Parameters.of(None))}, "
        "and a bound when at least half the blocks' searches met an edge (missed at the lowest rate tried, held at the highest, or "
        "vegeta behind its schedule)." + checks_clause(parameters or Parameters.of(None))
    )


def capacity_rows(capacities: list[Capacity]) -> tuple[tuple[str, ...], ...]:
    """Return one row per setup and GOMAXPROCS: group, setup, capacity with its interval or bound, ratio to its baseline's, blocks, the check at the capacity."""
    return tuple(
        (
            f"GOMAXPROCS={c.gomaxprocs}",
            c.setup,
            capacity_words(c)
            + (" (inside this machine's floor: it measures the machine)" if c.floor is not None and c.floor.inside else ""),
            ratio_words(c, capacities).removeprefix(", ") or "baseline",
            f"{c.estimate.blocks}",
            check_words(c) or "not measured",
        )
        for c in capacities
    )


def capacity_parts(cells: list[RateCell], capacities: list[Capacity], parameters: Parameters | None = None) -> dict:
    """Return the RateSection fields of the capacities ({} without any: a run without an objective says nothing of it)."""
    if not capacities:
        return {}
    slo = capacities[0].slo
    return {
        "capacity": tuple(capacity_sentences(capacities, len({c.gomaxprocs for c in capacities}) > 1)),
        "objective": objective_sentence(slo, cells) + floor_sentences(capacities),
        "capacity_method": said_over(capacity_method(slo, parameters), {c.setup for c in capacities}),
        "capacity_rows": capacity_rows(capacities),
    }


def rate_section(cells: list[RateCell], parameters: Parameters, analysis, capacities: list[Capacity] | None = None) -> RateSection:
    """Return the fixed-rate section's strings (no rows when the run has no fixed-rate measurement) and the saturation label.

    The table and the answer's per-rate sentences have the planned rates only; the capacity
    search's steps are in the chart, results.json and the capacity sentences.
    """
    extra = capacity_parts(cells, list(capacities or []), parameters)
    cells = [c for c in cells if c.planned]
    if not cells:
        return RateSection((), (), "", littles_law(analysis, parameters), **extra)
    several = len({c.gomaxprocs for c in cells}) > 1
    rows, named = [], baselines_named(cells)
    for c in cells:
        status = "" if c.held else (f" (held in {c.held_in} of {c.measurements})" if c.not_held else " (no usable measurement)")
        rows.append(
            (
                f"GOMAXPROCS={c.gomaxprocs}, {c.offered_rps:,} req/s",
                c.setup + status,
                f"{c.offered_rps:,}",
                "-" if c.achieved_rps is None else f"{c.achieved_rps:,.0f}",
                fmt_ms(c.p50_ms),
                fmt_ms(c.p99_ms),
                fmt_ms(c.p999_ms),
                *added_cells(c, named),
            )
        )
    blocks = max((c.measurements for c in cells), default=0)
    tls_clause = other_baselines_clause({c.setup for c in cells})
    settings = (
        f"vegeta offers each rate open loop (requests start on schedule whatever the answers, so a stall is not under-sampled), "
        f"{known(parameters.rate_duration_s)} s per measurement, at most {known(parameters.rate_max_connections)} connections, "
        f"every setup once per block in a shuffled order, {blocks} block(s); added latency is a setup's minus go-http's in the same block "
        f"{tls_clause}"
        "mean over blocks with a 95% t-interval. A rate is held when vegeta started the requests within 1% of it and no backlog grew over the attack (latency climbing from each tenth of it to the next); a pause shows in the percentiles, and the measurement counts."
    )
    setups = {c.setup for c in cells}
    return RateSection(
        tuple(sentences(cells, several)),
        tuple(rows),
        said_over(settings, setups),
        littles_law(analysis, parameters),
        added_over(named),
        lead=said_over(LEAD, setups),
        **extra,
    )


OTHER_BASELINE_WORDS = {"go-https": "nginx's TLS setups"}  # the others are named by their setups


def other_baselines_clause(setups) -> str:
    """Return the setups of the fixed-rate phase whose added latency is over another setup than go-http (or app), as the
    method sentence's aside: their ratios' baselines, e.g. nginx-h2's over go-h2 (Go's own h2), not over go-http.

    >>> other_baselines_clause({"go-http", "nginx-http"}), other_baselines_clause({"go-http", "go-h2", "nginx-h2", "nginx-https"})
    ('', "(nginx's TLS setups: - go-https; nginx-h2: - go-h2, as their ratios), ")
    """
    bases = sorted({baseline_of(s) for s in setups} - {BASELINE, APP_BASELINE}, key=lambda b: (b not in OTHER_BASELINE_WORDS, b))
    said = [f"{OTHER_BASELINE_WORDS.get(b, ', '.join(sorted(s for s in setups if baseline_of(s) == b)))}: - {b}" for b in bases]
    return f"({'; '.join(said)}, as their ratios), " if said else ""
