"""The verdict: what nginx in front costs in the units a deployer decides in, one short paragraph per GOMAXPROCS value.

Absolute figures first (server CPU per request in microseconds and cores per 10,000 req/s, the
latency added at a named light load, the capacity at the latency objective), the cheapest
connection, and the conditions in one line; the relative figures (shares, multiples) follow
in the headline. Every number here is one the page shows again in its own table: the CPU
figures are the CPU table's means, the added latencies the fixed-rate table's, the capacities
the capacity table's, so a reader who looks further finds the same figure.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.analyze import CPU_METRIC, THROUGHPUT, Analysis
from ..core.setups import APP_BASELINE, BASELINE, NGINX_SETUPS, TWIN_SEPARATOR, baseline_of
from ..checks.app import app_conditions
from ..core import stats
from ..fixedrate.analysis import RateCell
from ..fixedrate.capacities import Capacity
from ..fixedrate.capacity import AT_LEAST, AT_MOST
from ..fixedrate.summary import added_kind, fmt_rps, fmt_share_ratio
from .fmt import group_name
from .study import load_generator_of
from .words import MECHANISM, join_names, judge

# Short names for the verdict: the connection, not the setup id (the tables use the ids).
SHORT = {
    "nginx-http": "the HTTP proxy",
    "nginx-fcgi-tcp": "FastCGI over TCP",
    "nginx-fcgi-unix": "FastCGI over a Unix socket",
    "nginx-http-unix": "the HTTP proxy over a Unix socket",
    "nginx-https": "TLS at nginx",
    "nginx-https-unix": "TLS at nginx over a Unix socket",
    "nginx-app": "nginx in front of your app",
    "nginx-h2": "HTTP/2 at nginx",  # over go-h2: Go's own h2 (the -mux setups are in the HTTP/2 sentence)
    "nginx-h2-unix": "HTTP/2 at nginx over a Unix socket",
    "nginx-app-unix": "nginx in front of your app over a Unix socket",
    "nginx-app-fcgi-tcp": "nginx FastCGI to your app over TCP",
    "nginx-app-fcgi-unix": "nginx FastCGI to your app over a Unix socket",
}
CORES_PER = 10_000  # "cores per 10,000 req/s": a load a reader can scale


@dataclass(frozen=True)
class Verdict:
    """The top of the page: the conditions in one line, then one short paragraph per group."""

    conditions: str
    paragraphs: tuple[tuple[str, str], ...]  # (group title, paragraph)


def shown(setup: str) -> bool:
    """Return True for a setup the verdict speaks of: not a --variant twin (the A/B part has those)."""
    return TWIN_SEPARATOR not in setup


def fronted(setup: str) -> bool:
    """Return True for a setup with nginx in front whose cost the verdict says: an nginx setup of the table (a --variant twin is
    neither: the A/B part has those)."""
    return setup in NGINX_SETUPS or setup in SHORT


def name(setup: str) -> str:
    """Return the connection's name in words ('the HTTP proxy'), the setup id for others."""
    return SHORT.get(setup, MECHANISM.get(setup, setup))


def alone_name(baseline: str) -> str:
    """Return a baseline in words: 'Go alone', 'your app alone', the setup id for others ('go-https')."""
    return {BASELINE: "Go alone", APP_BASELINE: "your app alone"}.get(baseline, baseline)


def fmt_us(value: float) -> str:
    """Return microseconds to two significant figures, at least whole ones: 16.3 -> '16', 4.27 -> '4.3', 0.81 -> '0.81'.

    >>> fmt_us(16.3), fmt_us(4.27), fmt_us(0.812), fmt_us(123.4)
    ('16', '4.3', '0.81', '123')
    """
    if abs(value) >= 10:
        return f"{value:,.0f}"
    return f"{value:.2g}"


def fmt_cores(us_per_request: float) -> str:
    """Return the cores a cost per request takes at CORES_PER req/s: 16 us -> '0.16'.

    >>> fmt_cores(16.3), fmt_cores(4.0), fmt_cores(150)
    ('0.16', '0.04', '1.5')
    """
    cores = us_per_request * CORES_PER / 1e6
    return f"{cores:.2g}" if cores < 1 else f"{cores:.1f}"


def cpu_us(analysis: Analysis, gomaxprocs: int, connections: int, setup: str) -> float | None:
    """Return a cell's server CPU per request in microseconds: the CPU table's mean of ms per 1,000 requests (the same number)."""
    cell = analysis.cell(gomaxprocs, connections, setup)
    spread = cell.metrics.get(CPU_METRIC) if cell is not None else None
    return spread.interval.estimate if spread is not None and spread.n else None


def cpu_sentence(analysis: Analysis, gomaxprocs: int, connections: int) -> str:
    """Return what each nginx connection costs in server CPU per request over its baseline, in us, and what its baseline uses.

    A setup whose CPU ratio's interval includes 1.0 costs 'no measurable extra CPU'.
    """
    clauses, bases, cores_said = [], [], False
    for setup in analysis.setups:
        base_setup = baseline_of(setup)
        if not fronted(setup):
            continue
        mine, base = cpu_us(analysis, gomaxprocs, connections, setup), cpu_us(analysis, gomaxprocs, connections, base_setup)
        ratio = analysis.ratio(gomaxprocs, connections, setup, CPU_METRIC)
        if mine is None or base is None or ratio is None or ratio.ratio is None:
            continue
        if base_setup not in bases:
            bases.append(base_setup)
        if ratio.has_interval and ratio.ci_low <= 1.0 <= ratio.ci_high:
            clauses.append((f"{name(setup)} no measurable extra CPU", base_setup))
            continue
        extra = mine - base
        said = f"{fmt_us(extra)} µs" if extra >= 0 else f"{fmt_us(-extra)} µs less"
        if extra > 0 and not cores_said:  # once: the reader scales the others
            said += f" ({fmt_cores(extra)} core per {CORES_PER:,} req/s)"
            cores_said = True
        clauses.append((f"{name(setup)} {said}", base_setup))
    if not clauses:
        return ""
    alone = "; ".join(f"{alone_name(b)} uses {fmt_us(cpu_us(analysis, gomaxprocs, connections, b))} µs" for b in bases)
    if len(bases) == 1 and bases[0] != BASELINE:  # one baseline (your app alone): said once, not after every connection
        return f"Added server CPU per request over {alone_name(bases[0])}: {join_names([c for c, _ in clauses])}; {alone}."
    said = [c if base == BASELINE else f"{c} over {alone_name(base)}" for c, base in clauses]
    return f"Added server CPU per request: {join_names(said)}; {alone}."


def throughput_sentence(analysis: Analysis, gomaxprocs: int, connections: int) -> str:
    """Return each setup's req/s at saturation, Go alone first (the results table's geometric means): the absolute figure of a run
    without CPU records. 'At saturation Go alone serves 41,200 req/s, the HTTP proxy 22,800, FastCGI over TCP 17,100.'"""
    parts = []
    for setup in sorted(analysis.setups, key=lambda s: s != BASELINE):
        cell = analysis.cell(gomaxprocs, connections, setup)
        spread = cell.metrics.get(THROUGHPUT) if cell is not None else None
        found = spread.geometric if spread is not None else None
        if found is None or (setup != BASELINE and not fronted(setup)):
            continue
        parts.append(f"{'Go alone' if setup == BASELINE else name(setup)} {'serves ' if not parts else ''}{fmt_rps(found.estimate)}"
                     + (" req/s" if not parts else ""))
    return f"At saturation {', '.join(parts)}." if len(parts) > 1 else ""


def light_rate(rates: list[RateCell], gomaxprocs: int) -> list[RateCell]:
    """Return the nginx cells at the lowest planned rate of a GOMAXPROCS value that go-http held (the light load the verdict names)."""
    held = sorted({c.offered_rps for c in rates if c.gomaxprocs == gomaxprocs and c.planned and c.is_baseline and c.held})
    if not held:
        return []
    return [c for c in rates if c.gomaxprocs == gomaxprocs and c.offered_rps == held[0] and c.planned and not c.is_baseline and fronted(c.setup)]


def ms(value: float) -> str:
    """Return milliseconds to two significant figures ('0.088', '1.2', '12')."""
    return f"{value:.2g}" if abs(value) < 10 else f"{value:.0f}"


def percentile_phrase(cells: list[RateCell], attribute: str, label: str) -> str:
    """Return what the nginx connections add at one percentile, in as few words as the figures allow.

    All adding: 'adds 0.06-0.09 ms at p50' (the range of their estimates); none measurable: 'nothing measurable at p99';
    otherwise each connection's own clause: 'at p50 adds 0.1 ms through the HTTP proxy and 0.71 ms less through FastCGI over TCP'.
    """
    found = [(c, getattr(c, attribute)) for c in cells if c.held and getattr(c, attribute) is not None]
    if not found:
        return ""
    kinds = {added_kind(i) for _, i in found}
    values = sorted(i.estimate for _, i in found)
    span = ms(values[0]) if ms(values[0]) == ms(values[-1]) else f"{ms(values[0])}-{ms(values[-1])}"
    if kinds == {"adds"}:
        return f"adds {span} ms at {label}"
    if kinds == {"none"}:
        return f"adds nothing measurable at {label}"
    if kinds == {"one"}:
        return f"adds {span} ms at {label}" if values[0] >= 0 else f"changes {label} by {ms(values[0])} to {ms(values[-1])} ms"
    parts = []
    for c, i in found:
        kind = added_kind(i)
        said = {"adds": f"{ms(i.estimate)} ms", "less": f"{ms(-i.estimate)} ms less", "none": "nothing measurable",
                "one": f"{ms(i.estimate)} ms (one block)"}[kind]
        parts.append(f"{said} through {name(c.setup)}")
    return f"at {label} adds " + join_names(parts)


def latency_sentence(rates: list[RateCell], gomaxprocs: int) -> str:
    """Return what nginx adds to latency at the light load: 'At 960 req/s (open loop), nginx adds 0.06-0.09 ms at p50 and nothing measurable at p99.'"""
    cells = light_rate(rates, gomaxprocs)
    if not cells:
        return ""
    not_held = [c for c in cells if not c.held]
    phrases = [p for p in (percentile_phrase(cells, "added_p50", "p50"), percentile_phrase(cells, "added_p99", "p99")) if p]
    if len(phrases) == 2 and all(p.startswith("adds nothing measurable") for p in phrases):
        phrases = ["adds nothing measurable at p50 or p99"]
    elif len(phrases) == 2 and all(p.startswith("adds ") for p in phrases):
        phrases[1] = phrases[1].removeprefix("adds ")
    joined = ", and " if any(p.startswith("at ") for p in phrases) else " and "  # a clause per connection already has its own 'and'
    text = f"At {cells[0].offered_rps:,} req/s (a fixed load), nginx " + joined.join(phrases) if phrases else ""
    if text and all(added_kind(c.added_p50) == "one" for c in cells if c.held and c.added_p50 is not None):
        text += " (one block: no interval)"
    if not_held:
        text += ("; " if text else f"At {cells[0].offered_rps:,} req/s, ") + join_names([name(c.setup) for c in not_held]) + " did not hold the rate"
    return text + "." if text else ""


def capacity_sentence(capacities: list[Capacity], gomaxprocs: int) -> str:
    """Return each setup's capacity at the objective with its 95% interval, go-http's first, and its share of its baseline's only
    where that ratio's interval excludes 1.0: 'Keeping p99 within 10 ms, Go alone carries 3,810 req/s (3,400-4,270), the HTTP
    proxy 3,260 (2,840-3,750; 0.86 of Go's).'"""
    here = [c for c in capacities if c.gomaxprocs == gomaxprocs and shown(c.setup)]
    if not here:
        return ""
    parts, single = [], all(c.estimate.low is None for c in here)
    for c in sorted(here, key=lambda c: c.baseline is not None):
        value, ratio = c.estimate, c.ratio
        bound = {AT_LEAST: "at least ", AT_MOST: "at most "}.get(value.bound, "")
        notes = [f"{fmt_rps(value.low)}-{fmt_rps(value.high)}"] if value.bound is None and value.low is not None and value.high is not None else []
        if ratio is not None and ratio.bound is None and ratio.value is not None and (single or (ratio.low is not None and not ratio.low <= 1.0 <= ratio.high)):
            notes.append(f"{fmt_share_ratio(ratio.value)} of {'Go' if c.baseline == BASELINE else c.baseline}'s")
        said = f"{bound}{fmt_rps(value.value)}" + (" req/s" if not parts else "") + (f" ({'; '.join(notes)})" if notes else "")
        parts.append(f"{'Go alone' if c.setup == BASELINE else name(c.setup)} {'carries ' if not parts else ''}{said}")
    return f"Keeping {here[0].slo.words}, " + ", ".join(parts) + (" (one block: no interval)." if single else ".")


def cheapest_sentence(analysis: Analysis, gomaxprocs: int, connections: int) -> str:
    """Return which nginx connection is cheapest by the head-to-head comparisons (words.judge's rule), or that none is yet."""
    ratios = {r.setup: r for r in analysis.ratios if (r.gomaxprocs, r.connections) == (gomaxprocs, connections) and r.ratio is not None
              and r.setup in NGINX_SETUPS}
    if len(ratios) < 2:
        return ""
    best = max(ratios, key=lambda s: ratios[s].ratio)
    against = [c for c in analysis.comparisons if (c.gomaxprocs, c.connections) == (gomaxprocs, connections) and best in (c.setup_a, c.setup_b)
               and {c.setup_a, c.setup_b} <= set(ratios)]
    if not against:
        return ""
    kinds = [judge(c.ratio, c.ci_low, c.ci_high, c.n).kind for c in against]
    if all(k in ("lower", "higher") for k in kinds):
        return f"The cheapest connection is {name(best)}."
    if all(k == "no-interval" for k in kinds):
        return f"{name(best)[:1].upper() + name(best)[1:]} leads, from one repeat each (no interval)."
    return f"No connection is measurably the cheapest yet ({name(best)} leads)."


def conditions_line(analysis: Analysis, parameters: dict, rate_blocks: int) -> str:
    """Return the conditions in one line: the handler's work, who shared the CPUs, saturation and the fixed load."""
    body = parameters.get("body_bytes")
    delay = parameters.get("handler_delay_ms")
    handler = "a handler that does no work" if not (isinstance(delay, (int, float)) and delay > 0) else f"a handler that sleeps {delay:g} ms"
    handler += f" ({body:,}-byte body)" if isinstance(body, int) and body != 12 else " (a 12-byte Hello World)"
    if isinstance(parameters.get("app"), dict):  # --app: the user's own server, not the hello world
        handler = app_conditions(parameters["app"])
    sharing, tool = analysis.sharing, load_generator_of(parameters)
    if sharing is None:
        where = "CPU use not recorded"
    elif sharing.apart:
        where = f"{tool} on other machines than the servers"
    elif sharing.shared:
        where = f"{tool} and the servers sharing this machine's {sharing.cores} CPUs ({tool} used {sharing.wrk_share.median:.0%} of them)"
    else:
        where = f"{tool} on CPUs {sharing.pin_client}, the servers on CPUs {sharing.pin_server}"
    levels = sorted({c for _, c in analysis.groups})
    load = f"{'CPU and throughput' if sharing is not None else 'throughput'} at saturation ({', '.join(f'{c:,}' for c in levels)} connections)"
    starts = sorted({r.n for r in analysis.ratios if r.unit == stats.BLOCK and r.setup != baseline_of(r.setup)})
    said = f"{starts[0]}{'-' + str(starts[-1]) if starts[-1] != starts[0] else ''}" if starts else "1"
    load = load[:-1] + f", {said} {'start' if said == '1' else 'starts'} of the servers per GOMAXPROCS)"
    rates = f"; latency at a fixed load, open loop (vegeta, {rate_blocks} {'start' if rate_blocks == 1 else 'starts'})" if rate_blocks else ""
    return f"Conditions: {handler}; {where}; {load}{rates}."


def verdict(analysis: Analysis, rates: list[RateCell], capacities: list[Capacity], parameters: dict) -> Verdict:
    """Return the verdict: one paragraph per group, absolute figures first, and the conditions line."""
    several = analysis.several_levels
    paragraphs = []
    for gomaxprocs, connections in analysis.groups:
        first = (gomaxprocs, connections) == next(g for g in analysis.groups if g[0] == gomaxprocs)
        parts = [cpu_sentence(analysis, gomaxprocs, connections) or throughput_sentence(analysis, gomaxprocs, connections)]
        if first:  # the fixed-rate phase and the capacity are per GOMAXPROCS, not per connection level
            parts += [latency_sentence(rates, gomaxprocs), capacity_sentence(capacities, gomaxprocs)]
        parts.append(cheapest_sentence(analysis, gomaxprocs, connections))
        text = " ".join(p for p in parts if p)
        if text:
            paragraphs.append((group_name(gomaxprocs, connections, several), text))
    rate_blocks = max((c.measurements for c in rates if c.planned), default=0)
    return Verdict(conditions_line(analysis, parameters, rate_blocks), tuple(paragraphs))
