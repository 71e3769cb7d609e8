"""Summary (fixed rate): the terminal lines of the open-loop phase, one per GOMAXPROCS and rate, for `wrkreport build` and the driver's closing summary.

Each line says the load it was measured at ('at 2,000 req/s offered, open loop') and, per
setup other than go-http, the latency it adds over go-http (nginx's TLS setups: over go-https,
each then named) at p50 and p99 with the 95%
interval over blocks; a setup that could not hold the rate is named as such, its figures
left out. Only the planned rates (the light-load points) have a line: the capacity
search's steps are said by the capacity's own line, one per GOMAXPROCS (capacity_lines:
the objective, each setup's capacity with its interval or bound, its ratio to its
baseline's). Standard library only: the driver's helper prints these lines too.
"""

from __future__ import annotations

import textwrap

from ..analysis.capacities import Capacity, CapacityCheck
from ..analysis.rate_latency import BASELINE, RateCell
from ..core.capacity import AT_LEAST, AT_MOST, Estimate, Slo, round_step
from ..core.stats import Interval
from ..core.units import fmt_ms

WIDTH = 80


def fmt_interval(interval: Interval | None) -> str:
    """Return '0.142 ms (0.121 to 0.163)', '0.142 ms (one block: no interval)' or 'no figure' (core.units.fmt_ms: 3 significant digits)."""
    if interval is None:
        return "no figure"
    if interval.low is None or interval.high is None:
        return f"{fmt_ms(interval.estimate)} ms (one block: no interval)"
    return f"{fmt_ms(interval.estimate)} ms ({fmt_ms(interval.low)} to {fmt_ms(interval.high)})"


def added_kind(interval: Interval | None) -> str:
    """Return what an added latency's interval says, the one rule every sentence and table cell follows: 'adds' (wholly above
    0), 'less' (wholly below), 'none' (across 0: no measurable difference), 'one' (one block: no interval) or 'missing'.

    >>> [added_kind(i) for i in (Interval(0.1, 0.05, 0.2, 4), Interval(-0.7, -0.9, -0.5, 4), Interval(0.2, -0.3, 0.7, 4), Interval(0.1, None, None, 1), None)]
    ['adds', 'less', 'none', 'one', 'missing']
    """
    if interval is None:
        return "missing"
    if interval.low is None or interval.high is None:
        return "one"
    return "adds" if interval.low > 0 else "less" if interval.high < 0 else "none"


def added_phrase(interval: Interval | None, percentile: str) -> str:
    """Return what a setup does to latency at one percentile, in words that follow its interval.

    Only an interval wholly above 0 'adds'; one across 0 is 'no measurable difference'; one
    wholly below 0 'takes ... off'. One block has no interval: its sign is said, nothing more.

    >>> added_phrase(Interval(0.142, 0.121, 0.163, 4), "p50")
    'adds 0.142 ms at p50 (0.121 to 0.163)'
    >>> added_phrase(Interval(0.17, -0.35, 0.68, 4), "p99")
    'no measurable difference at p99 (-0.350 to 0.680 ms)'
    >>> added_phrase(Interval(-0.71, -0.9, -0.5, 4), "p99"), added_phrase(Interval(-0.05, None, None, 1), "p50")
    ('takes 0.710 ms off at p99 (0.500 to 0.900)', 'takes 0.0500 ms off at p50 (one block: no interval)')
    """
    kind = added_kind(interval)
    if kind == "missing":
        return f"no figure at {percentile}"
    estimate, low, high = interval.estimate, interval.low, interval.high
    if kind == "one":
        verb = f"adds {fmt_ms(estimate)} ms" if estimate >= 0 else f"takes {fmt_ms(-estimate)} ms off"
        return f"{verb} at {percentile} (one block: no interval)"
    if kind == "adds":
        return f"adds {fmt_ms(estimate)} ms at {percentile} ({fmt_ms(low)} to {fmt_ms(high)})"
    if kind == "less":
        return f"takes {fmt_ms(-estimate)} ms off at {percentile} ({fmt_ms(-high)} to {fmt_ms(-low)})"
    return f"no measurable difference at {percentile} ({fmt_ms(low)} to {fmt_ms(high)} ms)"


def added_words(cell: RateCell) -> str:
    """Return what a held cell does to latency over its baseline at p50 and p99 (added_phrase), as one clause.

    'nginx-http adds 0.142 ms at p50 (0.121 to 0.163) and 0.350 ms at p99 (0.200 to 0.500)' when both add;
    otherwise 'nginx-http: adds 0.142 ms at p50 (...); no measurable difference at p99 (...)'.
    """
    p50, p99 = added_phrase(cell.added_p50, "p50"), added_phrase(cell.added_p99, "p99")
    if p50.startswith("adds ") and p99.startswith("adds "):
        return f"{cell.setup} {p50} and {p99.removeprefix('adds ')}"
    return f"{cell.setup}: {p50}; {p99}"


def baselines_named(cells: list[RateCell]) -> bool:
    """Return True when the added latencies among cells are not all over go-http (nginx's TLS setups are over go-https): then each names its own."""
    return any(c.baseline != BASELINE for c in cells if not c.is_baseline)


def over(cell: RateCell, named: bool) -> str:
    """Return ' over go-https' (the cell's baseline) when baselines are named, else ''."""
    return f" over {cell.baseline}" if named else ""


def added_over(named: bool) -> str:
    """Return what the added latencies of a line are over: 'go-http', or each setup's own baseline."""
    return "each setup's baseline" if named else BASELINE


def not_held_words(cell: RateCell) -> str:
    """Return what a cell that did not hold the rate in every block measured: in how many it held it, and its latencies there.

    'nginx-http held it in 2 of 4 blocks (p50 0.210 ms, p99 4.10 ms there; nothing added)', 'nginx-fcgi-tcp
    held it in none of its 4 blocks', or 'go-http has no usable measurement'.
    """
    if cell.usable and cell.not_held:
        return (
            f"{cell.setup} held it in {cell.held_in} of {cell.measurements} blocks "
            f"(p50 {fmt_ms(cell.p50_ms)} ms, p99 {fmt_ms(cell.p99_ms)} ms there; nothing added)"
        )
    if cell.not_held:
        return f"{cell.setup} held it in none of its {cell.measurements} blocks"
    return f"{cell.setup} has no usable measurement"


def rate_summary_lines(cells: list[RateCell]) -> list[str]:
    """Return one wrapped line per GOMAXPROCS and planned rate: each setup's added p50 and p99 over go-http, or that it did not hold the rate."""
    lines = []
    cells = [c for c in cells if c.planned]  # the search's steps: said by capacity_lines
    for n, rate in dict.fromkeys((c.gomaxprocs, c.offered_rps) for c in cells):
        here = [c for c in cells if (c.gomaxprocs, c.offered_rps) == (n, rate)]
        named = baselines_named(here)
        parts = [added_words(c) + over(c, named) for c in here if not c.is_baseline and c.held and c.added_p50 is not None]
        parts += [not_held_words(c) for c in here if not c.held]
        if not parts:
            parts = [f"{BASELINE} only, nothing to add over"]
        lead = f"GOMAXPROCS={n} at {rate:,} req/s offered, open loop, latency added over {added_over(named)}: "
        lines.append(textwrap.fill(lead + "; ".join(parts), WIDTH, subsequent_indent="  ", break_on_hyphens=False))
    return lines


# --- Capacity at the latency objective ---------------------------------------------------


def fmt_rps(value: float) -> str:
    """Return a rate to three significant figures with thousands separators.

    >>> fmt_rps(18412.7), fmt_rps(27712.8), fmt_rps(987.6), fmt_rps(32000)
    ('18,400', '27,700', '988', '32,000')
    """
    return f"{round_step(value):,}"


def fmt_share_ratio(value: float) -> str:
    """Return a capacity ratio with two decimals (two significant figures below 0.1): '0.84', '0.053'."""
    return f"{value:.2f}" if value >= 0.1 else f"{value:.2g}"


def blocks_said(c: Capacity, bound: str) -> str:
    """Return ' in 1 of 4 blocks' when only some of the blocks' searches met this edge ('' when all did, or with one block)."""
    met = sum(1 for b in c.blocks if b.bound == bound)
    return f" in {met} of {len(c.blocks)} blocks" if 0 < met < len(c.blocks) else ""


def fell_behind_at(c: Capacity) -> int | None:
    """Return the lowest offered rate at which vegeta fell behind its schedule with the answers within the objective (None: it never did)."""
    rates = [b.high for b in c.blocks if b.bound == AT_LEAST and b.high is not None]
    return min(rates) if rates else None


def capacity_words(c: Capacity) -> str:
    """Return a setup's capacity as a clause: '18,400 req/s (17,100-19,800)', or its bound with the edge the search met.

    >>> from wrkreport.core.capacity import BlockCapacity, Slo
    >>> objective = Slo(99.0, 5.0)
    >>> capacity_words(Capacity("go-http", 1, objective, Estimate(32000, None, None, AT_LEAST, 1), (BlockCapacity(1, 32000, AT_LEAST, 32000, None, 4),)))
    'at least 32,000 req/s (the objective held at the highest rate tried)'
    >>> capacity_words(Capacity("go-http", 1, objective, Estimate(24000, None, None, AT_LEAST, 1), (BlockCapacity(1, 24000, AT_LEAST, 24000, 25000, 4, 24600.0),)))
    "at least 24,000 req/s (vegeta's ceiling here: it fell behind at 25,000)"
    >>> capacity_words(Capacity("nginx-fcgi-tcp", 1, objective, Estimate(6200, None, None, AT_MOST, 1), (BlockCapacity(1, 6200, AT_MOST, None, 6200, 1),)))
    'at most 6,200 req/s (missed at the lowest rate tried)'
    """
    found = c.estimate
    if found.bound == AT_MOST:
        return f"at most {fmt_rps(found.value)} req/s (missed at the lowest rate tried{blocks_said(c, AT_MOST)})"
    if found.bound == AT_LEAST:
        behind = fell_behind_at(c)
        why = (
            f"vegeta's ceiling here: it fell behind at {behind:,}" if behind is not None else "the objective held at the highest rate tried"
        )
        return f"at least {fmt_rps(found.value)} req/s ({why}{blocks_said(c, AT_LEAST)})"
    if found.low is None or found.high is None:
        return f"{fmt_rps(found.value)} req/s (one block: no interval)"
    return f"{fmt_rps(found.value)} req/s ({fmt_rps(found.low)}-{fmt_rps(found.high)})"


def check_words(c: Capacity) -> str:
    """Return the capacity checks in words: 'at 3,670 req/s: p99 7.20 ms, within' ('missed', 'not held'), each lower one after a miss
    after it ('; at 3,300: ...'), an attack of 2 s or more with its length ('at 30,100 req/s for 5 s: ...'); '' without one.

    >>> from wrkreport.core.capacity import Slo
    >>> from wrkreport.analysis.capacities import CapacityCheck
    >>> from dataclasses import replace
    >>> found = Capacity("go-http", 1, Slo(99.0, 10.0), Estimate(3672, 3540, 3808, None, 4), ())
    >>> check_words(replace(found, checks=(CapacityCheck(3670, 7.2, True, True),))), check_words(replace(found, checks=(CapacityCheck(3670, 12.5, True, False),)))
    ('at 3,670 req/s: p99 7.20 ms, within', 'at 3,670 req/s: p99 12.5 ms, missed')
    >>> check_words(replace(found, checks=(CapacityCheck(3670, 80.0, False, False),))), check_words(found)
    ('at 3,670 req/s: not held (p99 80.0 ms)', '')
    >>> check_words(replace(found, checks=(CapacityCheck(30100, 41.0, True, False, 5.0), CapacityCheck(27100, 6.2, True, True, 5.0))))
    'at 30,100 req/s for 5 s: p99 41.0 ms, missed; at 27,100: p99 6.20 ms, within'
    """
    return "; ".join(one_check_words(check, c.slo, first=i == 0) for i, check in enumerate(c.checks))


def one_check_words(check: CapacityCheck, slo: Slo, first: bool) -> str:
    """Return one capacity check in words (check_words): the first with 'req/s' and its length when 2 s or more; judged by its
    seconds: 'at 16,300 req/s for 10 s: 9 of 10 seconds within 10 ms (p99 of all 8.10 ms), met'.

    >>> one_check_words(CapacityCheck(16300, 8.1, True, True, 9.9999, 10, 9), Slo(99.0, 10.0), True)
    'at 16,300 req/s for 10 s: 9 of 10 seconds within 10 ms (p99 of all 8.10 ms), met'
    >>> one_check_words(CapacityCheck(18000, 31.0, False, False, 9.9999, 10, 2), Slo(99.0, 10.0), False)
    'at 18,000: not held, 2 of 10 seconds within 10 ms (p99 of all 31.0 ms)'
    """
    figure = None if check.percentile_ms is None else f"{fmt_ms(check.percentile_ms)} ms"
    value = "no record" if figure is None else f"{slo.name} {figure}"
    length = f" for {check.span_s:.0f} s" if first and check.span_s is not None and check.span_s >= 1.5 else ""
    where = f"at {check.offered_rps:,}{' req/s' if first else ''}{length}"
    if check.seconds is not None:  # judged by its seconds: a check with seconds has a record
        counted = f"{check.seconds_met} of {check.seconds} seconds within {slo.ms:g} ms ({slo.name} of all {figure})"
        return f"{where}: not held, {counted}" if not check.held else f"{where}: {counted}, {'met' if check.met else 'missed'}"
    if not check.held:
        return f"{where}: not held ({value})"
    return f"{where}: {value}, {'within' if check.met else 'missed'}"


def ratio_words(c: Capacity, group: list[Capacity] | tuple[Capacity, ...] = ()) -> str:
    """Return a setup's capacity over its baseline's: '0.84 of go-http's (0.80-0.88)', a bound, or why there is none ('' for a baseline).

    group: the capacities at its GOMAXPROCS, to tell a baseline with no capacity from two bounds that say nothing together.
    """
    if c.baseline is None:
        return ""
    ratio: Estimate | None = c.ratio
    if ratio is None:
        base = next((b for b in group if (b.setup, b.gomaxprocs) == (c.baseline, c.gomaxprocs)), None)
        bounds = base is not None and base.estimate.bound is not None and c.estimate.bound is not None
        why = "the two bounds say nothing together" if bounds else f"no block measured both it and {c.baseline}"
        return f", no ratio to {c.baseline}'s ({why})"
    if ratio.bound is not None:
        return f", {'at least' if ratio.bound == AT_LEAST else 'at most'} {fmt_share_ratio(ratio.value)} of {c.baseline}'s"
    if ratio.low is None or ratio.high is None:
        return f", {fmt_share_ratio(ratio.value)} of {c.baseline}'s"
    return f", {fmt_share_ratio(ratio.value)} of {c.baseline}'s ({fmt_share_ratio(ratio.low)}-{fmt_share_ratio(ratio.high)})"


def capacity_clauses(capacities: list[Capacity]) -> list[str]:
    """Return one clause per setup: those with a baseline first, in their order, then the baselines ('go-http carries ...')."""
    ordered = [c for c in capacities if c.baseline is not None] + [c for c in capacities if c.baseline is None]
    return [f"{c.setup} carries {capacity_words(c)}{ratio_words(c, capacities)}{sustained_words(c)}" for c in ordered]


def sustained_words(c: Capacity) -> str:
    """Return what the capacity checks of 2 s or more say of the rate held for their length: ', held for 5 s there', ', held for 5 s
    only at 27,100', ', held for 5 s at none of the 3 rates checked (down to 24,400)'; '' for shorter checks or none.

    >>> from wrkreport.core.capacity import Slo
    >>> from wrkreport.analysis.capacities import CapacityCheck
    >>> from dataclasses import replace
    >>> found = Capacity("go-http", 1, Slo(99.0, 10.0), Estimate(30100, 28000, 32400, None, 6), ())
    >>> miss, hit = CapacityCheck(30100, 41.0, True, False, 5.0), CapacityCheck(27100, 6.2, True, True, 5.0)
    >>> sustained_words(replace(found, checks=(hit,))), sustained_words(replace(found, checks=(miss, hit)))
    (', held for 5 s there', ', held for 5 s only at 27,100')
    >>> sustained_words(replace(found, checks=(miss, replace(miss, offered_rps=27100)))), sustained_words(replace(found, checks=(replace(hit, span_s=1.0),)))
    (', held for 5 s at none of the 2 rates checked (down to 27,100)', '')
    """
    if c.checks and c.checks[0].seconds is not None:
        return seconds_words(c)
    if not c.checks or c.checks[0].span_s is None or c.checks[0].span_s < 1.5:
        return ""
    length = f"held for {c.checks[0].span_s:.0f} s"
    held = c.sustained
    if held is None:
        return (
            f", {length} at none of the {len(c.checks)} rates checked (down to {min(x.offered_rps for x in c.checks):,})"
            if len(c.checks) > 1
            else f", not {length} there"
        )
    return f", {length} there" if held is c.checks[0] else f", {length} only at {held.offered_rps:,}"


def seconds_words(c: Capacity) -> str:
    """Return what checks judged by their seconds say of the rate held: ', 9 of 10 seconds within 10 ms there', ', 8 of 10 seconds within
    10 ms only at 14,700 (4 of 10 at 16,300)', ', at most 6 of 10 seconds within 10 ms at the 3 rates checked (down to 13,200)'.

    >>> from wrkreport.core.capacity import Slo
    >>> from dataclasses import replace
    >>> found = Capacity("go-http", 1, Slo(99.0, 10.0), Estimate(16300, 15000, 17700, None, 6), ())
    >>> hit, miss = CapacityCheck(16300, 8.1, True, True, 9.9, 10, 9), CapacityCheck(16300, 14.0, True, False, 9.9, 10, 4)
    >>> seconds_words(replace(found, checks=(hit,))), seconds_words(replace(found, checks=(miss, replace(hit, offered_rps=14700, seconds_met=8))))
    (', 9 of 10 seconds within 10 ms there', ', 8 of 10 seconds within 10 ms only at 14,700 (4 of 10 at 16,300)')
    >>> seconds_words(replace(found, checks=(miss, replace(miss, offered_rps=14700, seconds_met=6))))
    ', at most 6 of 10 seconds within 10 ms at the 2 rates checked (down to 14,700)'
    """
    first, held, within = c.checks[0], c.sustained, f"within {c.slo.ms:g} ms"
    if held is None:
        best = max(x.seconds_met or 0 for x in c.checks)
        if len(c.checks) == 1:
            return f", {best} of {first.seconds} seconds {within} there: missed"
        return f", at most {best} of {first.seconds} seconds {within} at the {len(c.checks)} rates checked (down to {min(x.offered_rps for x in c.checks):,})"
    if held is first:
        return f", {held.seconds_met} of {held.seconds} seconds {within} there"
    return f", {held.seconds_met} of {held.seconds} seconds {within} only at {held.offered_rps:,} ({first.seconds_met} of {first.seconds} at {first.offered_rps:,})"


def capacity_groups(capacities: list[Capacity]) -> list[tuple[int, list[Capacity]]]:
    """Return the capacities per GOMAXPROCS, in the order they come."""
    groups: dict[int, list[Capacity]] = {}
    for c in capacities:
        groups.setdefault(c.gomaxprocs, []).append(c)
    return list(groups.items())


def capacity_sentences(capacities: list[Capacity], several_gomaxprocs: bool = True) -> list[str]:
    """Return one sentence per GOMAXPROCS: 'With p99 within 5 ms (GOMAXPROCS=1), nginx-http carries 18,400 req/s (17,100-19,800), 0.84 of go-http's (0.80-0.88); ...; go-http carries ...'."""
    found = []
    for n, here in capacity_groups(capacities):
        where = f" (GOMAXPROCS={n})" if several_gomaxprocs else ""
        found.append(floor_warning(here) + f"With {here[0].slo.words}{where}, " + "; ".join(capacity_clauses(here)) + ".")
    return found


def floor_warning(here: list[Capacity]) -> str:
    """Return the machine's floor as a warning sentence before one GOMAXPROCS value's capacities when the objective sits inside it, else ''."""
    floor = here[0].floor if here else None
    if floor is None or not floor.inside:
        return ""
    text = floor.words()
    return f"Warning: {text}. "


def capacity_lines(capacities: list[Capacity]) -> list[str]:
    """Return one wrapped line per GOMAXPROCS: the capacity of each setup at the objective, with its interval or bound, and its ratio to its baseline's."""
    return [
        textwrap.fill(
            floor_warning(here) + f"GOMAXPROCS={n}, capacity with {here[0].slo.words}: " + "; ".join(capacity_clauses(here)),
            WIDTH,
            subsequent_indent="  ",
            break_on_hyphens=False,
        )
        for n, here in capacity_groups(capacities)
    ]
