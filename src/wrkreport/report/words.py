"""Words: analysed numbers -> the page's sentences (headline, verdicts, settings, CPU sharing); the one rule set `judge`."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..analysis.analyze import CPU_METRIC, Analysis
from ..analysis.cells import Comparison
from ..core import stats
from ..core.records import Ratio
from ..core.setups import (
    APP_BASELINE,
    APP_SETUP_IDS,
    BASELINE,
    FRONTED_SETUPS,
    H2_SETUP_IDS,
    NEW_CONNECTION_SETUPS,
    SETUP_BY_ID,
    TLS_SETUP_IDS,
    front_end_words,
    other_front_ends,
)
from ..runs.record import Parameters
from .fmt import fmt_share, fmt_times, group_name

MECHANISM = {
    "go-http": "Go standalone",
    "nginx-http": "the HTTP proxy",
    "nginx-fcgi-tcp": "FastCGI over TCP",
    "nginx-fcgi-unix": "FastCGI over a Unix socket",
    "nginx-http-unix": "the HTTP proxy over a Unix socket",
    "go-fasthttp": "fasthttp standalone",
    "nginx-static": "nginx answering by itself (the ceiling here)",
    "node-http": "Node.js's http module",
    "app": "your app alone",
    "nginx-app": "nginx in front of your app",
    "nginx-app-unix": "nginx in front of your app over a Unix socket",
    "nginx-app-fcgi-tcp": "nginx FastCGI to your app over TCP",
    "nginx-app-fcgi-unix": "nginx FastCGI to your app over a Unix socket",
}


def mechanism(setup: str, setups=()) -> str:
    """Return a setup's connection in words: MECHANISM's, a front end named where the run has another than nginx (setups):
    "HAProxy's HTTP proxy", "nginx's HTTP proxy"."""
    return front_end_words(setup, setups) or MECHANISM.get(setup, setup)


STANDALONE_SETUPS = ("go-fasthttp", "node-http", "nginx-static")  # no nginx in front of net/http: shown apart
NGINX_TLS_SETUPS = tuple(s for s in TLS_SETUP_IDS if s.startswith("nginx-"))  # nginx terminating TLS: divided by Go crypto/tls

# --- The one rule set every sentence about a ratio follows -------------------------------------
# "No measurable difference" needs the WHOLE interval inside this band around 1.0; an
# interval that includes 1.0 but reaches outside it is inconclusive, never "the same".
SAME_LOW, SAME_HIGH = 0.95, 1.05
BAND_TEXT = f"{SAME_LOW:.2f}-{SAME_HIGH:.2f}"
MAX_REPEATS_SAID = 1000


# The check names (checks/measurements.py) as the page and the failure box title them.
CHECK_TITLES = {
    "run-status": "Run completed",
    "readiness": "Setup became ready",
    "header-bytes": "Header block size (curl -sI)",
    "parse": "wrk output readable",
    "zero-requests": "Requests completed",
    "non-2xx": "Non-2xx/3xx responses",
    "same-response": "Same bytes per response everywhere",
    "socket-errors": "Socket errors",
    "wrk-exit": "wrk exit status",
    "cpu": "CPU records readable",
    "histogram": "Latency histograms readable",
    "manifest": "manifest.json readable",
    "missing-file": "Files listed in the manifest present",
    "file-name": "File names understood",
    "refused": "Files read safely (regular, inside the run, within size caps)",
    "duplicate": "One file per measurement",
    "clients": "Every wrk client's output present and merged",
    "machines": "Machines and network described (manifest.json)",
}


@dataclass(frozen=True)
class Judgement:
    """What an interval around a ratio says: one of KINDS, with the repeats that would settle it."""

    kind: str  # no-interval | same | inconclusive | lower | higher
    more_repeats: int | None = None  # for inconclusive: about how many more repeats would settle it

    @property
    def settle_text(self) -> str:
        """Return 'about 12 more repeats would settle it' (or why more repeats may not)."""
        if self.more_repeats is None:
            return ""
        if self.more_repeats > MAX_REPEATS_SAID:
            return f"more than {MAX_REPEATS_SAID:,} more repeats would be needed: a quieter machine, not more repeats, would settle it"
        return f"about {self.more_repeats} more repeat{'s' if self.more_repeats != 1 else ''} would settle it"


def judge(estimate: float, low: float | None, high: float | None, n: int) -> Judgement:
    """Return what a ratio with its 95% interval says, by the one rule set.

    lower / higher: the interval excludes 1.0 (however small the difference, it was
    measured); same: it includes 1.0 and lies wholly within SAME_LOW-SAME_HIGH;
    inconclusive: it includes 1.0 but reaches outside the band. The repeats
    that would settle it: the interval's half-width on the log scale is t(n-1) * s / sqrt(n),
    so n_needed ~ n * (half-width / needed half-width)^2 (with t shrinking as n grows), where
    the needed half-width is the larger of |log ratio| (to exclude 1.0) and
    log(SAME_HIGH) - |log ratio| (to fit the band), the spread s and the ratio assumed to stay.

    >>> judge(0.99, 0.97, 1.02, 5).kind, judge(0.55, 0.48, 0.63, 5).kind, judge(1.3, 1.1, 1.5, 5).kind
    ('same', 'lower', 'higher')
    >>> judge(0.62, 0.36, 1.07, 3)
    Judgement(kind='inconclusive', more_repeats=1)
    >>> judge(1.0, 0.90, 1.11, 5)
    Judgement(kind='inconclusive', more_repeats=9)
    """
    if low is None or high is None:
        return Judgement("no-interval")
    if high < 1.0:
        return Judgement("lower")
    if low > 1.0:
        return Judgement("higher")
    if SAME_LOW <= low and high <= SAME_HIGH:
        return Judgement("same")
    half = (math.log(high) - math.log(low)) / 2
    off = abs(math.log(estimate))
    needed = max(off, math.log(SAME_HIGH) - off)
    spread = half * math.sqrt(n) / stats.t_975(n - 1)
    for total in range(n + 1, n + MAX_REPEATS_SAID + 1):
        if stats.t_975(total - 1) * spread / math.sqrt(total) < needed:
            return Judgement("inconclusive", total - n)
    return Judgement("inconclusive", MAX_REPEATS_SAID + 1)


def h2_fronted(analysis: Analysis, gomaxprocs: int, connections: int) -> bool:
    """Return True when the group measured nginx in front of Go's h2 (nginx-h2 & co.): their answer is the HTTP/2 sentence, over go-h2."""
    return any(
        r.setup in H2_SETUP_IDS and SETUP_BY_ID[r.setup].server == "nginx" and (r.gomaxprocs, r.connections) == (gomaxprocs, connections)
        for r in analysis.ratios
    )


def headline(analysis: Analysis) -> tuple[str, ...]:
    """Return the answer, one paragraph per group: what each nginx mechanism keeps of Go's throughput."""
    several = analysis.several_levels
    paragraphs = []
    for gomaxprocs, connections in analysis.groups:
        where = group_name(gomaxprocs, connections, several)
        baseline = analysis.ratio(gomaxprocs, connections, BASELINE)
        app = app_sentences(analysis, gomaxprocs, connections, where)  # --app: what nginx keeps of your app's throughput
        if (baseline is None or baseline.ratio is None) and app:
            paragraphs.append(" ".join(app))
            continue
        if baseline is None or baseline.ratio is None:
            why = baseline.excluded if baseline is not None else "not measured"
            paragraphs.append(f"At {where} there is no usable go-http measurement, so no ratio ({why}).")
            continue
        shares, excluded = share_clauses(analysis, gomaxprocs, connections, FRONTED_SETUPS, "keeps")
        extras, extras_excluded = share_clauses(analysis, gomaxprocs, connections, STANDALONE_SETUPS, "does")
        sentences = []
        tls = tls_clauses(analysis, gomaxprocs, connections)
        if shares:
            front = "a front end" if other_front_ends(analysis.setups) else "nginx"
            sentences.append(f"At {where} with {front} in front, " + join_clauses(shares) + " of Go's throughput.")
        elif not excluded and not extras and not tls:
            sentences.append(
                f"At {where} nginx was measured only in front of Go's own HTTP/2 (go-h2): what it keeps is in the HTTP/2 sentence below."
                if h2_fronted(analysis, gomaxprocs, connections)
                else f"At {where} no nginx setup was measured beside go-http."
            )
        if tls:
            sentences.append(f"{'With TLS' if shares else f'At {where} with TLS'} terminated by nginx, " + join_clauses(tls) + ".")
        if excluded:
            sentences.append(upper_first(("at " + where + ", " if not shares else "") + "; ".join(excluded) + "."))
        sentences.extend(mechanism_sentence(analysis, gomaxprocs, connections))
        if extras:
            lead = "For scale, " if shares or excluded else f"At {where}, "
            sentences.append(lead + join_clauses(extras) + " of Go net/http's throughput.")
        if extras_excluded:
            sentences.append(upper_first("; ".join(extras_excluded) + "."))
        sentences.extend(cpu_sentence(analysis, gomaxprocs, connections))
        paragraphs.append(" ".join(sentences + app))
    return tuple(paragraphs)


def app_sentences(analysis: Analysis, gomaxprocs: int, connections: int, where: str) -> list[str]:
    """Return, for an --app run, 'At GOMAXPROCS=1, nginx in front of your app keeps 63% (...) of your app's throughput.' and why a figure is missing; [] otherwise."""
    nginx_app = tuple(s for s in APP_SETUP_IDS if s != APP_BASELINE)
    if not any(s in analysis.setups for s in nginx_app):
        return []
    shares, notes = share_clauses(analysis, gomaxprocs, connections, nginx_app, "keeps")
    said = [f"At {where}, " + join_clauses(shares) + " of your app's throughput alone."] if shares else []
    return said + ([upper_first("; ".join(notes) + ".")] if notes else [])


def share_clauses(analysis: Analysis, gomaxprocs: int, connections: int, setups: tuple[str, ...], verb: str) -> tuple[list[str], list[str]]:
    """Return 'X keeps 55% (48-63%)' for each measured setup of some kind, and what the others' figures say or why they are missing."""
    shares, notes = [], []
    for setup in analysis.setups:
        ratio = analysis.ratio(gomaxprocs, connections, setup)
        if setup not in setups or ratio is None:
            continue
        if ratio.ratio is None:
            notes.append(f"no ratio for {setup}: {ratio.excluded}")
            continue
        name = mechanism(setup, analysis.setups)
        shares.append(f"{name} {verb} {fmt_share(ratio)}")
        found = judge(ratio.ratio, ratio.ci_low, ratio.ci_high, ratio.n)
        if found.kind == "same":
            notes.append(f"{name}: no measurable overhead (the whole interval lies within {BAND_TEXT})")
        elif found.kind == "inconclusive":
            notes.append(f"{name}: inconclusive, the interval includes 1.0 but reaches outside {BAND_TEXT} ({found.settle_text})")
    return shares, notes


def tls_clauses(analysis: Analysis, gomaxprocs: int, connections: int) -> list[str]:
    """Return 'nginx-https keeps 58% (55-61%) of go-https's throughput' for each nginx TLS setup with a ratio (its divisor named)."""
    clauses = []
    for setup in analysis.setups:
        ratio = analysis.ratio(gomaxprocs, connections, setup)
        if setup not in NGINX_TLS_SETUPS or ratio is None or ratio.ratio is None:
            continue
        what = "handshakes per second" if setup in NEW_CONNECTION_SETUPS else "throughput"
        clauses.append(f"{setup} keeps {fmt_share(ratio)} of {ratio.baseline}'s {what}")
    return clauses


def cpu_sentence(analysis: Analysis, gomaxprocs: int, connections: int) -> list[str]:
    """Return what each setup costs in server CPU per request against Go alone, with intervals (nothing without CPU records)."""
    parts = []
    for setup in analysis.setups:
        ratio = analysis.ratio(gomaxprocs, connections, setup, CPU_METRIC)
        if setup != BASELINE and ratio is not None and ratio.ratio is not None:
            parts.append(
                f"{mechanism(setup, analysis.setups)} {fmt_times(ratio)}"
                + (f" of {ratio.baseline}'s" if ratio.baseline != BASELINE else "")
            )
    if not parts:
        return []
    front = "the front end's" if other_front_ends(analysis.setups) else "nginx's"
    return [
        f"Server CPU per request (Go's and {front} CPU time per request, the figure for capacity planning), as a multiple of Go "
        "standalone's: " + join_clauses(parts) + "."
    ]


def join_clauses(parts: list[str]) -> str:
    """Join clauses with semicolons and a final 'and'."""
    if len(parts) <= 1:
        return "".join(parts)
    return "; ".join(parts[:-1]) + "; and " + parts[-1]


def mechanism_sentence(analysis: Analysis, gomaxprocs: int, connections: int) -> list[str]:
    """Return which nginx mechanism is cheapest in a group, or why it cannot be named yet."""
    group = [c for c in analysis.comparisons if (c.gomaxprocs, c.connections) == (gomaxprocs, connections)]
    ratios = {
        r.setup: r.ratio
        for r in analysis.ratios
        if (r.gomaxprocs, r.connections) == (gomaxprocs, connections) and r.ratio is not None and r.setup in FRONTED_SETUPS
    }
    if not group or not ratios:
        return []
    best = max(ratios, key=ratios.get)
    against = [c for c in group if best in (c.setup_a, c.setup_b)]
    kinds = {id(c): judge(c.ratio, c.ci_low, c.ci_high, c.n) for c in against}
    unsure = [c for c in against if kinds[id(c)].kind == "inconclusive"]
    same = [c for c in against if kinds[id(c)].kind == "same"]
    name = mechanism(best, analysis.setups)
    which = "front end and connection" if other_front_ends(analysis.setups) else "nginx connection"
    if all(kinds[id(c)].kind == "no-interval" for c in against):
        return [f"The cheapest {which} here is {name}, from one repeat each: no interval says how sure."]
    sentences = []
    if unsure:
        rivals = join_names([mechanism(other(c, best), analysis.setups) for c in unsure])
        most = max(kinds[id(c)].more_repeats or 0 for c in unsure)
        settle = Judgement("inconclusive", most).settle_text
        sentences.append(
            f"The cheapest {which} here cannot be named yet: {name} is ahead, but against {rivals} the head-to-head "
            f"is inconclusive ({'; '.join(comparison_text(c) for c in unsure)}); {settle}."
        )
    elif same:
        rivals = join_names([mechanism(other(c, best), analysis.setups) for c in same])
        sentences.append(
            f"{upper_first(name)} and {rivals} cost the same within {BAND_TEXT} ({'; '.join(comparison_text(c) for c in same)})."
        )
    else:
        sentences.append(f"The cheapest {which} here is {name}.")
    return sentences


def other(c: Comparison, setup: str) -> str:
    """Return the setup of a comparison that is not setup."""
    return c.setup_b if c.setup_a == setup else c.setup_a


def join_names(names: list[str]) -> str:
    """Join names as 'a', 'a and b' or 'a, b and c'."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def upper_first(text: str) -> str:
    """Return text with its first letter in upper case."""
    return text[:1].upper() + text[1:]


def comparison_text(c: Comparison) -> str:
    """Return 'nginx-fcgi-unix / nginx-fcgi-tcp = 1.02 (0.97-1.07)'."""
    interval = f" ({c.ci_low:.3f}-{c.ci_high:.3f})" if c.ci_low is not None else " (no interval)"
    return f"{c.setup_a} / {c.setup_b} = {c.ratio:.3f}{interval}"


def ratio_verdict(ratio: Ratio) -> str:
    """Return what one throughput ratio says, in words, by the rule set of `judge`."""
    if ratio.ratio is None:
        return f"excluded: {ratio.excluded}"
    if ratio.setup == BASELINE:
        return "the baseline"
    found = judge(ratio.ratio, ratio.ci_low, ratio.ci_high, ratio.n)
    if found.kind == "no-interval":
        return "one repeat: no interval, so no way to tell how sure this is"
    if found.kind == "same":
        return f"no measurable overhead: the whole interval lies within {BAND_TEXT}"
    if found.kind == "inconclusive":
        return f"inconclusive: the interval includes 1.0 but reaches outside {BAND_TEXT}; {found.settle_text}"
    against = ("Go's", "Go standalone") if ratio.baseline == BASELINE else (f"{ratio.baseline}'s", ratio.baseline)
    if found.kind == "lower":
        return f"costs {1 - ratio.ratio:.0%} of {against[0]} throughput"
    return f"{ratio.ratio - 1:.0%} faster than {against[1]}"


def comparison_verdict(c: Comparison) -> str:
    """Return what a head-to-head comparison says, by the rule set of `judge`."""
    found = judge(c.ratio, c.ci_low, c.ci_high, c.n)
    if found.kind == "no-interval":
        return "one repeat, no interval"
    if found.kind == "same":
        return f"no measurable difference: the whole interval lies within {BAND_TEXT}"
    if found.kind == "inconclusive":
        return f"inconclusive: the interval includes 1.0 but reaches outside {BAND_TEXT}; {found.settle_text}"
    return f"{c.setup_a} is faster (the interval excludes 1.0)"


def settings_sentence(parameters: Parameters) -> str:
    """Return the non-default settings of a run that change what was measured, in words."""
    parts = []
    if parameters.upstream_keepalive is False:
        parts.append("upstream keep-alive off (nginx opens a new connection to Go per request)")
    delay = parameters.handler_delay_ms
    if isinstance(delay, (int, float)) and delay > 0:
        parts.append(f"a handler delay of {delay:g} ms per request")
    body = parameters.body_bytes
    if isinstance(body, int) and body != 12:
        parts.append(f"a {body:,}-byte response body (header check expects {parameters.expect_header_bytes} bytes)")
    if not parts:
        return ""
    return "Measured with " + "; ".join(parts) + "."


def sharing_sentence(analysis: Analysis, tool: str = "wrk") -> str:
    """Return how the load generator (tool: wrk, ab, h2load) and the servers shared the CPUs, with the share it itself used."""
    sharing = analysis.sharing
    if sharing is None:
        return ""
    share = sharing.wrk_share
    if sharing.apart:
        return (
            f"{tool} ran on other machines than the servers, so they shared no CPUs; {tool} used {share.median:.0%} of its "
            f"machines' CPU time during the measurements (median; {share.minimum:.0%}-{share.maximum:.0%})."
        )
    used = f"{tool} itself used {share.median:.0%} of the machine's CPU time during the measurements (median; {share.minimum:.0%}-{share.maximum:.0%})"
    if not sharing.shared:
        return f"{tool} ran on CPUs {sharing.pin_client} and the servers on CPUs {sharing.pin_server} (pinned, no overlap); {used}."
    where = (
        "the same CPUs (not pinned)"
        if not sharing.pinned
        else f"overlapping CPUs (client {sharing.pin_client}, servers {sharing.pin_server})"
    )
    return (
        f"Client and servers shared {where} of this {sharing.cores}-CPU machine: {used}. The figures measure the machine "
        "with its load generator, not the servers alone; --pin-client and --pin-server separate them."
    )
