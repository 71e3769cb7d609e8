"""The answer: what nginx in front costs, as one sentence and one table (a row per setup, GOMAXPROCS as row groups), for the page and the terminal.

The sentence names the cheapest connection and what it costs in absolute units at each
GOMAXPROCS (server CPU per request over Go alone's, or its req/s at saturation without CPU
records), or the one reason it cannot be named. The table's columns are those the run has
data for (COLUMNS): server CPU per request with what nginx adds, the latency added at the
fixed load (p50, p99), the capacity at the objective with its check, and the share of Go's
throughput at saturation; answercells computes each cell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.analyze import CPU_METRIC, THROUGHPUT, Analysis
from ..analysis.capacities import Capacity
from ..analysis.rate_latency import RateCell
from ..checks.app import app_conditions
from ..core import stats
from ..core import verdict as verdicts
from ..core.setups import APP_BASELINE, BASELINE, FRONTED_SETUPS, TWIN_SEPARATOR, baseline_of, front_end_words, other_front_ends
from ..core.verdict import contenders
from ..report.rate_summary import fmt_rps
from ..runs.record import Parameters
from .answercells import Figure, GroupContext, capacity_figure, cpu_added, cpu_figure, fmt_us, latency_figure, share_figure
from .fmt import group_name
from .study import load_generator_of
from .words import MECHANISM, join_names

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
    """Return True for a setup with a front end (nginx, HAProxy, Caddy, Apache httpd) in front (a --variant twin is not: the A/B part has those)."""
    return setup in FRONTED_SETUPS or setup in SHORT


def name(setup: str, setups=()) -> str:
    """Return the connection's name in words ('the HTTP proxy'; "HAProxy's HTTP proxy", and "nginx's HTTP proxy" in a run with
    another front end than nginx: setups), the setup id for others."""
    return front_end_words(setup, setups) or SHORT.get(setup, MECHANISM.get(setup, setup))


def alone_name(baseline: str) -> str:
    """Return a baseline in words: 'Go alone', 'your app alone', the setup id for others ('go-https')."""
    return {BASELINE: "Go alone", APP_BASELINE: "your app alone"}.get(baseline, baseline)


def row_name(setup: str, setups=()) -> str:
    """Return a setup's name as a row heading: 'Go alone', 'HTTP proxy', 'FastCGI over TCP', "HAProxy's HTTP proxy", 'go-https'."""
    if setup == baseline_of(setup) and setup in (BASELINE, APP_BASELINE):
        return alone_name(setup)
    said = name(setup, setups).removeprefix("the ")
    return capital(said) if said != setup else setup


def capital(text: str) -> str:
    """Return text with its first letter upper case, but nginx's name as nginx writes it.

    >>> capital("the HTTP proxy"), capital("nginx in front of your app")
    ('The HTTP proxy', 'nginx in front of your app')
    """
    return text if text.startswith("nginx") else text[:1].upper() + text[1:]


# --- The table ------------------------------------------------------------------------------


COLUMNS: dict[str, tuple[Callable[[Analysis, list, list], bool], Callable[[GroupContext, str], Figure]]] = {
    "cpu": (
        lambda analysis, rates, caps: analysis.sharing is not None and any(CPU_METRIC in c.metrics for c in analysis.cells),
        cpu_figure,
    ),
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


def column_heads(keys: list[str], loads: set[int], capacities: list[Capacity], backend: str, front: str = "nginx") -> tuple[Column, ...]:
    """Return the columns' heads: the fixed load named when it is one for every GOMAXPROCS (else each group's title names it), the objective,
    and who is in front ('nginx', or 'the front end' in a run with HAProxy, Caddy or Apache httpd)."""
    load = f"at {next(iter(loads)):,} req/s" if len(loads) == 1 else "at the fixed load"
    objective = f"{capacities[0].slo.words} (✓ met, ✗ missed when measured again)" if capacities else ""
    heads = {
        "cpu": Column(
            "cpu",
            "server CPU per request",
            f"µs (+ what {front} measurably adds)",
            "CPU us/req",
            f"CPU µs/req (+{front.removeprefix('the ')})",
        ),
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
    kind: str  # named | tied | only | one-repeat | too-few (blocks below the first look) | inconclusive | uncompared | none
    tied: tuple[str, ...] = ()  # with kind tied: the connections within TIE_MARGIN of the leader's throughput


def leader(analysis: Analysis, gomaxprocs: int, connections: int) -> Leader:
    """Return the cheapest connection of a group by the head-to-head comparisons of throughput (core/verdict.py, the rule the run
    stopped by), or why none is.

    The contenders are the front ends' setups (nginx's, HAProxy's, Caddy's, Apache httpd's) with a throughput ratio, or without any
    the other connections the answer names; the one ahead is named when its every comparison lies above 1.0, and tied with those
    whose comparison lies within TIE_MARGIN of it.
    """
    ratios = {
        r.setup: r
        for r in analysis.ratios
        if (r.gomaxprocs, r.connections) == (gomaxprocs, connections) and r.ratio is not None and fronted(r.setup) and shown(r.setup)
    }
    plain = {s: ratios[s].ratio for s in contenders(ratios)}
    if not plain:
        return Leader(None, "none")
    comparisons = {(c.setup_a, c.setup_b): c for c in analysis.comparisons if (c.gomaxprocs, c.connections) == (gomaxprocs, connections)}

    def against(best: str, other: str) -> tuple[float | None, float | None]:
        found = comparisons.get((best, other)) or comparisons.get((other, best))
        if found is None or found.ci_low is None or found.ci_high is None:
            return None, None
        return (found.ci_low, found.ci_high) if found.setup_a == best else (1 / found.ci_high, 1 / found.ci_low)

    found = verdicts.decide(plain, against)
    if found.kind == verdicts.ONLY:
        return Leader(found.best, "only")
    if found.kind in (verdicts.NAMED, verdicts.TIED):
        return Leader(found.best, found.kind, found.tied)
    mine = [c for key, c in comparisons.items() if found.best in key and set(key) <= set(plain)]
    if not mine:
        return Leader(found.best, "uncompared")
    if all(c.ci_low is None for c in mine):
        few = analysis.first_look is not None and ratios[found.best].blocks < analysis.first_look
        return Leader(found.best, "too-few" if few else "one-repeat")
    return Leader(found.best, "inconclusive")


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
    setups = analysis.setups  # the front end named where the run has another than nginx
    several = other_front_ends(setups)
    if all(f.kind == "none" for f in found):
        failed = any(fronted(r.setup) and r.ratio is None for r in analysis.ratios)
        if failed:
            return "No connection can be named: every nginx setup failed its checks."
        return alternatives_sentence(analysis, groups, titles) or "No connection can be named: no nginx setup was measured beside Go."
    named = {f.setup for f in found if f.setup is not None}
    if len(named) > 1:
        said = [f"{name(leaders[g].setup, setups)} at {titles[g]}" for g in groups if leaders[g].setup is not None]
        return f"No connection is the cheapest at every GOMAXPROCS: {join_names(said)} lead{'s' if len(said) == 1 else ''}."
    best = named.pop()
    costs = costs_clause(analysis, best, [g for g in groups if leaders[g].setup == best], titles)
    kinds = {f.kind for f in found if f.setup is not None}
    if "inconclusive" in kinds:
        where = join_names([titles[g] for g in groups if leaders[g].kind == "inconclusive"])
        return f"No connection is measurably the cheapest yet: {name(best, setups)} leads, but within the noise at {where}."
    if "tied" in kinds:
        together = sorted({t for g in groups for t in leaders[g].tied if leaders[g].setup == best})
        where = join_names([titles[g] for g in groups if leaders[g].kind == "tied"])
        head = (
            f"{capital(join_names([name(s, setups) for s in (best, *together)]))} tie for the cheapest "
            f"{'front end and connection' if several else 'connection'} (throughput within {verdicts.TIE_MARGIN:.0%} of each other at {where})"
        )
        return f"{head}: {costs.replace('it ', f'{name(best, setups)} ', 1)}." if costs else head + "."
    lead = {
        "named": f"The cheapest {'front end and connection' if several else 'connection'} is {name(best, setups)}",
        "only": f"{capital(name(best, setups))}, the only {'front-end' if several else 'nginx'} connection measured",
        "one-repeat": f"{capital(name(best, setups))} leads, from one repeat each (no interval)",
        "too-few": f"{capital(name(best, setups))} leads so far, from too few blocks for an interval (they start at {analysis.first_look})",
        "uncompared": f"{capital(name(best, setups))} leads (not compared head to head)",
    }
    first = lead[next((k for k in ("too-few", "one-repeat", "uncompared", "only") if k in kinds), "named")]
    if not costs:
        return first + "."
    return f"{first}: {costs}."


def alternatives_sentence(analysis: Analysis, groups: list[tuple[int, int]], titles: dict) -> str:
    """Return what a run of Go's alternatives alone answers (node-http, no nginx setup): 'At GOMAXPROCS=1, Node.js's http
    module does 47% of Go's req/s (44-50%), and 61% (58-64%) at GOMAXPROCS=2.'; '' when it measured none."""
    said = []
    for setup in dict.fromkeys(r.setup for r in analysis.ratios if not fronted(r.setup) and r.setup != baseline_of(r.setup)):
        shares = [
            (share, titles[g]) for g in groups if (share := share_figure(GroupContext(analysis, *g, (), ()), setup)).main.endswith("%")
        ]
        if shares:
            (first, where), *rest = shares
            head = f"at {where}, {name(setup)} does {first.main} of Go's req/s" + (f" ({first.detail})" if first.detail else "")
            said.append(join_names([head, *(f"{s.main}{f' ({s.detail})' if s.detail else ''} at {w}" for s, w in rest)]))
    return capital("; ".join(said)) + "." if said else ""


# --- The conditions and the whole answer ------------------------------------------------------


def conditions_line(analysis: Analysis, parameters: Parameters) -> str:
    """Return the conditions in one line (one line of the page's box, two of the terminal's 80 columns for a default run): the
    handler's work, who shared the CPUs, the saturating load with the starts of the servers behind each figure (the fixed
    load's are in each group's title: group_at)."""
    body = parameters.body_bytes
    delay = parameters.handler_delay_ms
    handler = "a handler doing no work" if not (isinstance(delay, (int, float)) and delay > 0) else f"a handler sleeping {delay:g} ms"
    handler += f" ({body:,}-byte body)" if isinstance(body, int) else " (12-byte body)"
    if isinstance(parameters.app, dict):  # --app: the user's own server, not the hello world
        handler = app_conditions(parameters.app)
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
    starts = sorted({r.blocks for r in analysis.ratios if r.unit == stats.BLOCK and r.setup != baseline_of(r.setup)})
    said = f"{starts[0]}{'-' + str(starts[-1]) if starts[-1] != starts[0] else ''}" if starts else "1"
    load = f"saturated at {', '.join(f'{c:,}' for c in levels)} connections, {said} server {'start' if said == '1' else 'starts'}"
    return f"Conditions: {handler}; {where}; {load}."


def answer(analysis: Analysis, rates: list[RateCell], capacities: list[Capacity], parameters: Parameters, backend: str = "Go") -> Answer:
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
        context = GroupContext(
            analysis, gomaxprocs, connections, light, tuple(c for c in capacities if c.gomaxprocs == gomaxprocs and first)
        )
        best = leaders[(gomaxprocs, connections)].setup
        present = [s for s in ordered(analysis.setups, base, best) if analysis.cell(gomaxprocs, connections, s) is not None]
        rows = tuple(AnswerRow(s, row_name(s, analysis.setups), tuple(COLUMNS[k][1](context, s) for k in keys), s == best) for s in present)
        groups.append(AnswerGroup(titles[(gomaxprocs, connections)], rows, group_at(light, context.capacities)))
    return Answer(
        sentence(analysis, list(analysis.groups), titles, leaders),
        conditions_line(analysis, parameters),
        column_heads(keys, loads, capacities, backend, "the front end" if other_front_ends(analysis.setups) else "nginx"),
        tuple(groups),
    )
