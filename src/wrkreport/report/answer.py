"""The answer: what nginx in front costs, as one sentence and one table (a row per setup, GOMAXPROCS as row groups), for the page and the terminal.

The sentence names the cheapest connection and what it costs in absolute units at each
GOMAXPROCS (server CPU per request over Go alone's, or its req/s at saturation without CPU
records), or the one reason it cannot be named. The table's columns are those the run has
data for (COLUMNS): server CPU per request with what nginx adds, the latency added at the
fixed load (p50, p99), the capacity at the objective with its check, and the share of Go's
throughput at saturation. Every figure is one the page shows again in its own table: the CPU
table's means, the fixed-rate table's added latencies, the capacity table's estimates, the
ratios table's shares. Each cell is a Figure: the figure, then its interval or what it is
over (the page sets it in smaller type on a second line, the terminal on the next line).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..analysis.analyze import CPU_METRIC, THROUGHPUT, Analysis
from ..core.setups import APP_BASELINE, BASELINE, NGINX_SETUPS, TWIN_SEPARATOR, baseline_of
from ..checks.app import app_conditions
from ..core import stats
from ..fixedrate.analysis import RateCell
from ..fixedrate.capacities import Capacity
from ..fixedrate.capacity import AT_LEAST, AT_MOST
from ..fixedrate.summary import added_kind, fmt_rps
from .fmt import group_name
from .study import load_generator_of
from .words import MECHANISM, join_names, judge

# Short names for the answer: the connection, not the setup id (the tables below use the ids).
SHORT = {
    "nginx-http": "the HTTP proxy",
    "nginx-fcgi-tcp": "FastCGI over TCP",
    "nginx-fcgi-unix": "FastCGI over a Unix socket",
    "nginx-http-unix": "the HTTP proxy over a Unix socket",
    "nginx-https": "TLS at nginx",
    "nginx-https-unix": "TLS at nginx over a Unix socket",
    "nginx-app": "nginx in front of your app",
    "nginx-h2": "HTTP/2 at nginx",  # over go-h2: Go's own h2
    "nginx-h2-unix": "HTTP/2 at nginx over a Unix socket",
    "nginx-app-unix": "nginx in front of your app over a Unix socket",
    "nginx-app-fcgi-tcp": "nginx FastCGI to your app over TCP",
    "nginx-app-fcgi-unix": "nginx FastCGI to your app over a Unix socket",
}
MAX_SENTENCE_WORDS = 40


@dataclass(frozen=True)
class Figure:
    """One cell of the answer's table: the figure, and below it its interval or what it is over ('' for none)."""

    main: str
    detail: str = ""


NO_FIGURE = Figure("-")


@dataclass(frozen=True)
class Column:
    """One column of the answer's table: its head, the unit or load its figures are at, and its head in the terminal's 80 columns."""

    key: str
    head: str
    unit: str
    short: str  # the terminal's head: 'CPU us/req'
    label: str  # above each figure on a phone, where the table reflows to a block per setup: 'CPU µs/req (+nginx)'


@dataclass(frozen=True)
class AnswerRow:
    """One setup in one group: its figures, one per column of the answer."""

    setup: str
    name: str  # in words: 'Go alone', 'the HTTP proxy'
    figures: tuple[Figure, ...]
    cheapest: bool = False  # the connection the sentence names


@dataclass(frozen=True)
class AnswerGroup:
    """The rows of one GOMAXPROCS value (and connection level, in a sweep), Go alone first."""

    title: str  # 'GOMAXPROCS=1'
    rows: tuple[AnswerRow, ...]
    at: str = ""  # the fixed load and the objective the group's figures are at: 'fixed load 970 req/s; capacity keeping p99 within 10 ms'


@dataclass(frozen=True)
class Answer:
    """The top of the page and of the terminal: one sentence, one table, the conditions in one line."""

    sentence: str
    conditions: str
    columns: tuple[Column, ...]
    groups: tuple[AnswerGroup, ...]

    @property
    def cheapest_rows(self) -> tuple[AnswerRow, ...]:
        """Return the rows of the connection the sentence names, one per group that has it."""
        return tuple(r for g in self.groups for r in g.rows if r.cheapest)


# --- Words ---------------------------------------------------------------------------------


def shown(setup: str) -> bool:
    """Return True for a setup the answer speaks of: not a --variant twin (the A/B part has those)."""
    return TWIN_SEPARATOR not in setup


def fronted(setup: str) -> bool:
    """Return True for a setup with nginx in front (a --variant twin is not: the A/B part has those)."""
    return setup in NGINX_SETUPS or setup in SHORT


def name(setup: str) -> str:
    """Return the connection's name in words ('the HTTP proxy'), the setup id for others."""
    return SHORT.get(setup, MECHANISM.get(setup, setup))


def alone_name(baseline: str) -> str:
    """Return a baseline in words: 'Go alone', 'your app alone', the setup id for others ('go-https')."""
    return {BASELINE: "Go alone", APP_BASELINE: "your app alone"}.get(baseline, baseline)


def row_name(setup: str) -> str:
    """Return a setup's name as a row heading: 'Go alone', 'HTTP proxy', 'FastCGI over TCP', 'go-https'."""
    if setup == baseline_of(setup) and setup in (BASELINE, APP_BASELINE):
        return alone_name(setup)
    said = name(setup).removeprefix("the ")
    return capital(said) if said != setup else setup


def capital(text: str) -> str:
    """Return text with its first letter upper case, but nginx's name as nginx writes it.

    >>> capital("the HTTP proxy"), capital("nginx in front of your app")
    ('The HTTP proxy', 'nginx in front of your app')
    """
    return text if text.startswith("nginx") else text[:1].upper() + text[1:]


def fmt_us(value: float) -> str:
    """Return microseconds to two significant figures, at least whole ones: 16.3 -> '16', 4.27 -> '4.3', 0.81 -> '0.81'.

    >>> fmt_us(16.3), fmt_us(4.27), fmt_us(0.812), fmt_us(123.4)
    ('16', '4.3', '0.81', '123')
    """
    if abs(value) >= 10:
        return f"{value:,.0f}"
    return f"{value:.2g}"


def ms(value: float) -> str:
    """Return milliseconds to two significant figures: '0.088', '1.2', '12'.

    >>> ms(0.0876), ms(1.234), ms(12.4), ms(-0.71)
    ('0.088', '1.2', '12', '-0.71')
    """
    return f"{value:.2g}" if abs(value) < 10 else f"{value:.0f}"


def span(low: float, high: float, fmt: Callable[[float], str]) -> str:
    """Return an interval as 'low-high', or 'low to high' when a bound is negative (a minus sign beside a dash misreads).

    >>> span(0.09, 0.19, ms), span(-0.35, 0.68, ms)
    ('0.09-0.19', '-0.35 to 0.68')
    """
    return f"{fmt(low)} to {fmt(high)}" if low < 0 or high < 0 else f"{fmt(low)}-{fmt(high)}"


# --- Figures: one function per column --------------------------------------------------------


def cpu_us(analysis: Analysis, gomaxprocs: int, connections: int, setup: str) -> float | None:
    """Return a cell's server CPU per request in microseconds: the CPU table's mean of ms per 1,000 requests (the same number)."""
    cell = analysis.cell(gomaxprocs, connections, setup)
    spread = cell.metrics.get(CPU_METRIC) if cell is not None else None
    return spread.interval.estimate if spread is not None and spread.n else None


def cpu_added(analysis: Analysis, gomaxprocs: int, connections: int, setup: str) -> tuple[str, float | None]:
    """Return what a setup adds to its baseline's server CPU per request: ('adds' | 'less' | 'none' | 'one', us), or ('missing', None).

    'none' when the CPU ratio's interval includes 1.0; 'one' without an interval (one repeat).
    """
    mine, base = cpu_us(analysis, gomaxprocs, connections, setup), cpu_us(analysis, gomaxprocs, connections, baseline_of(setup))
    ratio = analysis.ratio(gomaxprocs, connections, setup, CPU_METRIC)
    if mine is None or base is None or ratio is None or ratio.ratio is None:
        return "missing", None
    if not ratio.has_interval:
        return "one", mine - base
    if ratio.includes_one:
        return "none", mine - base
    return ("adds" if mine >= base else "less"), mine - base


def cpu_figure(context: "GroupContext", setup: str) -> Figure:
    """Return the servers' CPU per request in us, with what nginx adds over its baseline: '39 (+24)', its 95% interval below."""
    cell = context.analysis.cell(context.gomaxprocs, context.connections, setup)
    spread = cell.metrics.get(CPU_METRIC) if cell is not None else None
    if spread is None or not spread.n:
        return NO_FIGURE
    interval = spread.interval
    detail = span(max(interval.low, 0.0), interval.high, fmt_us) if interval.low is not None else ""  # one repeat: no interval
    if setup == baseline_of(setup):
        return Figure(fmt_us(interval.estimate), detail)
    kind, extra = cpu_added(context.analysis, context.gomaxprocs, context.connections, setup)
    added = {"adds": f" (+{fmt_us(extra or 0)})", "one": f" ({'+' if (extra or 0) >= 0 else '-'}{fmt_us(abs(extra or 0))})",
             "less": f" (-{fmt_us(-(extra or 0))})", "none": " (+none)", "missing": ""}[kind]
    over = baseline_of(setup)
    said = [detail] if detail else []
    return Figure(fmt_us(interval.estimate) + added, "; ".join(said + ([f"over {over}"] if over not in (BASELINE, APP_BASELINE) and kind != "missing" else [])))


def added_figure(interval: stats.Interval | None) -> Figure:
    """Return an added latency as the table says it, by added_kind's rule: '+0.14' with '0.09-0.19' below, 'none measurable', '0.71 less'.

    >>> added_figure(stats.Interval(0.142, 0.09, 0.19, 4)), added_figure(stats.Interval(0.17, -0.35, 0.68, 4))
    (Figure(main='+0.14', detail='0.09-0.19'), Figure(main='none', detail='-0.35 to 0.68'))
    >>> added_figure(stats.Interval(-0.71, -0.9, -0.5, 4)), added_figure(stats.Interval(0.05, None, None, 1))
    (Figure(main='-0.71', detail='-0.9 to -0.5'), Figure(main='+0.05', detail=''))
    """
    kind = added_kind(interval)
    if kind == "missing":
        return NO_FIGURE
    sign = "+" if interval.estimate >= 0 else ""
    if kind == "one":
        return Figure(f"{sign}{ms(interval.estimate)}")  # one block: no interval (the group's title says 1 start)
    between = span(interval.low, interval.high, ms)
    return Figure("none", between) if kind == "none" else Figure(f"{sign}{ms(interval.estimate)}", between)


def latency_figure(context: "GroupContext", setup: str, percentile: str) -> Figure:
    """Return a setup's latency added at the fixed load (Go alone's row: its own, 'its own' below), or why there is none."""
    cell = next((c for c in context.light if c.setup == setup), None)
    if cell is None:
        return NO_FIGURE
    if not cell.held:
        return Figure("not held", f"held in {cell.held_in} of {cell.measurements}")
    if cell.is_baseline:
        own = getattr(cell, f"{percentile}_ms")
        return Figure(ms(own), "its own") if own is not None else NO_FIGURE
    return added_figure(getattr(cell, f"added_{percentile}"))


def capacity_figure(context: "GroupContext", setup: str) -> Figure:
    """Return a setup's capacity at the objective: '3,280 ✓' (✓ met, ✗ missed when measured again at it) with '3,000-3,580'
    below, or a bound ('≥ 32,000') with the edge the search met."""
    found = next((c for c in context.capacities if c.setup == setup), None)
    if found is None:
        return NO_FIGURE
    value = found.estimate
    bound = {AT_LEAST: "≥ ", AT_MOST: "≤ "}.get(value.bound, "")
    if value.bound is not None:
        detail = {AT_LEAST: "highest rate held", AT_MOST: "lowest rate missed"}[value.bound]  # the edge the search met
    elif value.low is None or value.high is None:
        detail = ""  # one block: no interval
    else:
        detail = span(value.low, value.high, fmt_rps)
    return Figure(bound + fmt_rps(value.value) + check_mark(found), detail)


def check_mark(found: Capacity) -> str:
    """Return the capacity check as a mark after the figure: ' ✓' met when measured again at it, ' ✗' missed or not held, '' without one."""
    check = found.check
    return "" if check is None else " ✓" if check.met else " ✗"


def share_figure(context: "GroupContext", setup: str) -> Figure:
    """Return a setup's throughput at saturation as a share of its baseline's: '55%' with '51-60%' below; Go alone's row: its req/s."""
    analysis = context.analysis
    if setup == baseline_of(setup):
        cell = analysis.cell(context.gomaxprocs, context.connections, setup)
        spread = cell.metrics.get(THROUGHPUT) if cell is not None else None
        found = spread.geometric if spread is not None else None
        return Figure("100%", f"{fmt_rps(found.estimate)} req/s") if found is not None else NO_FIGURE
    cell = analysis.cell(context.gomaxprocs, context.connections, setup)
    if cell is not None and cell.not_measured:
        return Figure("not measured")  # the run has no measurement of it: the failed checks say why
    ratio = analysis.ratio(context.gomaxprocs, context.connections, setup)
    if ratio is None or ratio.ratio is None:
        return Figure("excluded", "a check failed") if ratio is not None and ratio.excluded else NO_FIGURE
    over = "" if ratio.baseline in (BASELINE, APP_BASELINE) else f" of {ratio.baseline}'s"
    if not ratio.has_interval:
        return Figure(f"{ratio.ratio:.0%}", over.strip())  # one repeat: no interval (the conditions say 1 server start)
    return Figure(f"{ratio.ratio:.0%}", f"{ratio.ci_low * 100:.0f}-{ratio.ci_high:.0%}{over}")


# --- The table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupContext:
    """What a group's figures are read from: the analysis at one (GOMAXPROCS, connections), the fixed load's cells and the capacities."""

    analysis: Analysis
    gomaxprocs: int
    connections: int
    light: tuple[RateCell, ...]  # every setup at the light load (the lowest planned rate Go alone held); () in a later group of the same GOMAXPROCS
    capacities: tuple[Capacity, ...]


# One table drives the columns: key -> (does the run have it, its figure). Heads come from column_heads.
COLUMNS: dict[str, tuple[Callable[[Analysis, list, list], bool], Callable[[GroupContext, str], Figure]]] = {
    "cpu": (lambda analysis, rates, caps: analysis.sharing is not None and any(CPU_METRIC in c.metrics for c in analysis.cells), cpu_figure),
    "p50": (lambda analysis, rates, caps: any(c.planned for c in rates), lambda context, setup: latency_figure(context, setup, "p50")),
    "p99": (lambda analysis, rates, caps: any(c.planned for c in rates), lambda context, setup: latency_figure(context, setup, "p99")),
    "capacity": (lambda analysis, rates, caps: bool(caps), capacity_figure),
    "share": (lambda analysis, rates, caps: True, share_figure),
}


def light_rate(rates: list[RateCell], gomaxprocs: int) -> tuple[RateCell, ...]:
    """Return every setup's cell at the lowest planned rate of a GOMAXPROCS value that go-http (or your app) held: the fixed load the answer names."""
    held = sorted({c.offered_rps for c in rates if c.gomaxprocs == gomaxprocs and c.planned and c.is_baseline and c.held})
    if not held:
        return ()
    return tuple(c for c in rates if c.gomaxprocs == gomaxprocs and c.offered_rps == held[0] and c.planned and shown(c.setup))


def column_heads(keys: list[str], loads: set[int], capacities: list[Capacity], backend: str) -> tuple[Column, ...]:
    """Return the columns' heads: the fixed load named when it is one for every GOMAXPROCS (else each group's title names it), the objective."""
    load = f"at {next(iter(loads)):,} req/s" if len(loads) == 1 else "at the fixed load"
    objective = f"{capacities[0].slo.words} (✓ met, ✗ missed when measured again)" if capacities else ""
    heads = {
        "cpu": Column("cpu", "server CPU per request", "µs (+ what nginx measurably adds)", "CPU us/req", "CPU µs/req (+nginx)"),
        "p50": Column("p50", "p50 added", f"ms {load}", "+p50 ms", "p50 added, ms"),
        "p99": Column("p99", "p99 added", f"ms {load}", "+p99 ms", "p99 added, ms"),
        "capacity": Column("capacity", "capacity", f"req/s, {objective}", "capacity", "capacity, req/s"),
        "share": Column("share", f"share of {backend}'s req/s", "at saturation", "share", f"share of {backend}'s"),
    }
    return tuple(heads[k] for k in keys)


def group_at(light: tuple[RateCell, ...], capacities: tuple[Capacity, ...]) -> str:
    """Return the fixed load (open loop, with the starts of the servers behind it) and the objective a group's figures are at:
    'fixed load 970 req/s, 4 starts; objective p99 within 10 ms' ('' without either)."""
    starts = max((c.measurements for c in light), default=0)
    said = [f"fixed load {light[0].offered_rps:,} req/s, {starts} start{'s' if starts != 1 else ''}"] if light else []
    return "; ".join(said + ([f"objective {capacities[0].slo.words}"] if capacities else []))


def ordered(setups, baseline_first: str, best: str | None = None) -> list[str]:
    """Return the setups the answer has a row for: Go alone (or your app alone) first, the cheapest connection next (on a phone's
    first screen), then in the run's order; --variant twins left out."""
    return sorted((s for s in setups if shown(s)), key=lambda s: (s != baseline_first, s != best))


# --- The sentence ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Leader:
    """The connection ahead in one group, and how far the run can tell."""

    setup: str | None
    kind: str  # named | only | one-repeat | inconclusive | uncompared | none


def leader(analysis: Analysis, gomaxprocs: int, connections: int) -> Leader:
    """Return the cheapest connection of a group by the head-to-head comparisons of throughput (words.judge's rule), or why none is.

    The candidates are the nginx setups with a throughput ratio; when those over go-http were compared head to head, the one
    ahead is named if its every comparison excludes 1.0.
    """
    ratios = {r.setup: r for r in analysis.ratios if (r.gomaxprocs, r.connections) == (gomaxprocs, connections) and r.ratio is not None
              and fronted(r.setup) and shown(r.setup)}
    if not ratios:
        return Leader(None, "none")
    plain = {s: r for s, r in ratios.items() if s in NGINX_SETUPS} or ratios
    best = max(plain, key=lambda s: plain[s].ratio)
    if len(ratios) == 1:
        return Leader(best, "only")
    against = [c for c in analysis.comparisons if (c.gomaxprocs, c.connections) == (gomaxprocs, connections) and best in (c.setup_a, c.setup_b)
               and {c.setup_a, c.setup_b} <= set(plain)]
    if not against:
        return Leader(best, "uncompared")
    kinds = [judge(c.ratio, c.ci_low, c.ci_high, c.n).kind for c in against]
    if all(k in ("lower", "higher") for k in kinds):
        return Leader(best, "named")
    if all(k == "no-interval" for k in kinds):
        return Leader(best, "one-repeat")
    return Leader(best, "inconclusive")


def cost_words(analysis: Analysis, gomaxprocs: int, connections: int, setup: str) -> str:
    """Return what a connection costs in one group in absolute units: '24 µs', 'no measurable extra', or its req/s without CPU records."""
    kind, extra = cpu_added(analysis, gomaxprocs, connections, setup)
    if kind in ("adds", "one") and extra is not None and extra >= 0:
        return f"{fmt_us(extra)} µs"
    if kind in ("less", "one") and extra is not None:
        return f"{fmt_us(-extra)} µs less"
    if kind == "none":
        return "no measurable extra"
    cell = analysis.cell(gomaxprocs, connections, setup)
    spread = cell.metrics.get(THROUGHPUT) if cell is not None else None
    return f"{fmt_rps(spread.geometric.estimate)} req/s" if spread is not None and spread.geometric is not None else ""


def costs_clause(analysis: Analysis, setup: str, groups: list[tuple[int, int]], titles: dict) -> str:
    """Return 'it adds 24 µs of server CPU per request over Go alone at GOMAXPROCS=1 and 22 µs at GOMAXPROCS=2' (without CPU
    records: 'it serves 33,245 req/s at saturation at GOMAXPROCS=1 and 35,471 req/s at GOMAXPROCS=2')."""
    costs = [(cost, titles[g]) for g in groups if (cost := cost_words(analysis, *g, setup))]
    if not costs:
        return ""
    if costs[0][0].endswith("req/s"):
        first, *rest = [f"{cost} at {where}" for cost, where in costs]
        return "it serves " + join_names([first.replace(" req/s at ", " req/s at saturation at ", 1), *rest])
    first, *rest = [f"{cost} at {where}" for cost, where in costs]
    unit = f" of server CPU per request over {alone_name(baseline_of(setup))}"
    head = first.replace(" µs at ", f" µs{unit} at ", 1).replace("no measurable extra at ", f"no measurable extra{unit} at ", 1)
    return ("it adds " if "µs" in costs[0][0] and "less" not in costs[0][0] else "it costs ") + join_names([head, *rest])


def sentence(analysis: Analysis, groups: list[tuple[int, int]], titles: dict, leaders: dict) -> str:
    """Return the answer's first sentence: the cheapest connection and its cost at each group, or the one reason it cannot be named."""
    found = [leaders[g] for g in groups]
    if all(f.kind == "none" for f in found):
        failed = any(fronted(r.setup) and r.ratio is None for r in analysis.ratios)
        return ("No connection can be named: every nginx setup failed its checks." if failed
                else "No connection can be named: no nginx setup was measured beside Go.")
    named = {f.setup for f in found if f.setup is not None}
    if len(named) > 1:
        said = [f"{name(leaders[g].setup)} at {titles[g]}" for g in groups if leaders[g].setup is not None]
        return f"No connection is the cheapest at every GOMAXPROCS: {join_names(said)} lead{'s' if len(said) == 1 else ''}."
    best = named.pop()
    costs = costs_clause(analysis, best, [g for g in groups if leaders[g].setup == best], titles)
    kinds = {f.kind for f in found if f.setup is not None}
    if "inconclusive" in kinds:
        where = join_names([titles[g] for g in groups if leaders[g].kind == "inconclusive"])
        return f"No connection is measurably the cheapest yet: {name(best)} leads, but within the noise at {where}."
    lead = {"named": f"The cheapest connection is {name(best)}",
            "only": f"{capital(name(best))}, the only nginx connection measured",
            "one-repeat": f"{capital(name(best))} leads, from one repeat each (no interval)",
            "uncompared": f"{capital(name(best))} leads (not compared head to head)"}
    first = lead["one-repeat" if "one-repeat" in kinds else "uncompared" if "uncompared" in kinds else "only" if "only" in kinds else "named"]
    if not costs:
        return first + "."
    return f"{first}: {costs}."


# --- The conditions and the whole answer ------------------------------------------------------


def conditions_line(analysis: Analysis, parameters: dict) -> str:
    """Return the conditions in one line (one line of the page's box, two of the terminal's 80 columns for a default run): the
    handler's work, who shared the CPUs, the saturating load with the starts of the servers behind each figure (the fixed
    load's are in each group's title: group_at)."""
    body = parameters.get("body_bytes")
    delay = parameters.get("handler_delay_ms")
    handler = "a handler doing no work" if not (isinstance(delay, (int, float)) and delay > 0) else f"a handler sleeping {delay:g} ms"
    handler += f" ({body:,}-byte body)" if isinstance(body, int) else " (12-byte body)"
    if isinstance(parameters.get("app"), dict):  # --app: the user's own server, not the hello world
        handler = app_conditions(parameters["app"])
    sharing, tool = analysis.sharing, load_generator_of(parameters)
    if sharing is None:
        where = "CPU use not recorded"
    elif sharing.apart:
        where = f"{tool} on other machines than the servers"
    elif sharing.shared:
        where = f"{tool} and servers sharing {sharing.cores} CPUs ({tool} used {sharing.wrk_share.median:.0%})"
    else:
        where = f"{tool} on CPUs {sharing.pin_client}, servers on CPUs {sharing.pin_server}"
    levels = sorted({c for _, c in analysis.groups})
    starts = sorted({r.n for r in analysis.ratios if r.unit == stats.BLOCK and r.setup != baseline_of(r.setup)})
    said = f"{starts[0]}{'-' + str(starts[-1]) if starts[-1] != starts[0] else ''}" if starts else "1"
    load = f"saturated at {', '.join(f'{c:,}' for c in levels)} connections, {said} server {'start' if said == '1' else 'starts'}"
    return f"Conditions: {handler}; {where}; {load}."


def answer(analysis: Analysis, rates: list[RateCell], capacities: list[Capacity], parameters: dict, backend: str = "Go") -> Answer:
    """Return the answer: its sentence, one group of rows per GOMAXPROCS (and connection level), the columns the run has data for, the conditions."""
    keys = [key for key, (has, _) in COLUMNS.items() if has(analysis, rates, capacities)]
    several = analysis.several_levels
    titles = {g: group_name(*g, several) for g in analysis.groups}
    leaders = {g: leader(analysis, *g) for g in analysis.groups}
    loads = {light[0].offered_rps for n in {g for g, _ in analysis.groups} if (light := light_rate(rates, n))}
    base = next((s for s in (BASELINE, APP_BASELINE) if s in analysis.setups), BASELINE)
    groups = []
    for gomaxprocs, connections in analysis.groups:
        first = (gomaxprocs, connections) == next(g for g in analysis.groups if g[0] == gomaxprocs)
        light = light_rate(rates, gomaxprocs) if first else ()  # the fixed-rate phase and the capacity are per GOMAXPROCS
        context = GroupContext(analysis, gomaxprocs, connections, light, tuple(c for c in capacities if c.gomaxprocs == gomaxprocs and first))
        best = leaders[(gomaxprocs, connections)].setup
        present = [s for s in ordered(analysis.setups, base, best) if analysis.cell(gomaxprocs, connections, s) is not None]
        rows = tuple(AnswerRow(s, row_name(s), tuple(COLUMNS[k][1](context, s) for k in keys), s == best) for s in present)
        groups.append(AnswerGroup(titles[(gomaxprocs, connections)], rows, group_at(light, context.capacities)))
    return Answer(sentence(analysis, list(analysis.groups), titles, leaders), conditions_line(analysis, parameters),
                  column_heads(keys, loads, capacities, backend), tuple(groups))
