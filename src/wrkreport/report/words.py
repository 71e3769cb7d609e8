"""Words: analysed numbers -> the page's sentences (headline, verdicts, settings, CPU sharing, the comparison's answer)."""

from __future__ import annotations

from ..analyze import Analysis, Comparison
from ..model import BASELINE, NGINX_SETUPS, Ratio
from .fmt import fmt_share, group_name

MECHANISM = {
    "go-http": "Go standalone",
    "nginx-http": "the HTTP proxy",
    "nginx-fcgi-tcp": "FastCGI over TCP",
    "nginx-fcgi-unix": "FastCGI over a Unix socket",
    "nginx-http-unix": "the HTTP proxy over a Unix socket",
    "go-fasthttp": "fasthttp standalone",
    "nginx-static": "nginx answering by itself (the ceiling here)",
}
STANDALONE_SETUPS = ("go-fasthttp", "nginx-static")  # no nginx in front of net/http: shown apart


def headline(analysis: Analysis) -> tuple[str, ...]:
    """Return the answer, one paragraph per group: what each nginx mechanism keeps of Go's throughput."""
    several = analysis.several_levels
    paragraphs = []
    for gomaxprocs, connections in analysis.groups:
        where = group_name(gomaxprocs, connections, several)
        baseline = analysis.ratio(gomaxprocs, connections, BASELINE)
        if baseline is None or baseline.ratio is None:
            why = baseline.excluded if baseline is not None else "not measured"
            paragraphs.append(f"At {where} there is no usable go-http measurement, so no ratio ({why}).")
            continue
        shares, excluded = share_clauses(analysis, gomaxprocs, connections, NGINX_SETUPS, "keeps")
        extras, extras_excluded = share_clauses(analysis, gomaxprocs, connections, STANDALONE_SETUPS, "does")
        sentences = []
        if shares:
            sentences.append(f"At {where} with nginx in front, " + join_clauses(shares) + " of Go's throughput.")
        elif not excluded:
            sentences.append(f"At {where} no nginx setup was measured beside go-http.")
        if excluded:
            sentences.append(("At " + where + ", " if not shares else "") + "; ".join(excluded) + ".")
        sentences.extend(mechanism_sentence(analysis, gomaxprocs, connections))
        if extras or extras_excluded:
            sentences.append("For scale, " + join_clauses(extras) + (" of Go net/http's throughput" if extras else "") + "; ".join(extras_excluded) + ".")
        paragraphs.append(" ".join(sentences))
    return tuple(paragraphs)


def share_clauses(analysis: Analysis, gomaxprocs: int, connections: int, setups: tuple[str, ...], verb: str) -> tuple[list[str], list[str]]:
    """Return 'X keeps 55% (48-63%)' for each measured setup of some kind, and 'X was excluded (...)' for the others."""
    shares, excluded = [], []
    for setup in analysis.setups:
        ratio = analysis.ratio(gomaxprocs, connections, setup)
        if setup not in setups or ratio is None:
            continue
        if ratio.ratio is None:
            excluded.append(f"{setup} was excluded ({ratio.excluded})")
            continue
        phrase = f"{MECHANISM.get(setup, setup)} {verb} {fmt_share(ratio)}"
        if ratio.includes_one:
            phrase += ", no measurable overhead"
        shares.append(phrase)
    return shares, excluded


def join_clauses(parts: list[str]) -> str:
    """Join clauses with semicolons and a final 'and'."""
    if len(parts) <= 1:
        return "".join(parts)
    return "; ".join(parts[:-1]) + "; and " + parts[-1]


def mechanism_sentence(analysis: Analysis, gomaxprocs: int, connections: int) -> list[str]:
    """Return which nginx mechanism is cheapest in a group, or which cannot be told apart."""
    group = [c for c in analysis.comparisons if (c.gomaxprocs, c.connections) == (gomaxprocs, connections)]
    ratios = {
        r.setup: r.ratio
        for r in analysis.ratios
        if (r.gomaxprocs, r.connections) == (gomaxprocs, connections) and r.ratio is not None and r.setup in NGINX_SETUPS
    }
    if not group or not ratios:
        return []
    best = max(ratios, key=ratios.get)
    ties = [c for c in group if best in (c.setup_a, c.setup_b) and c.distinguishable is False]
    others = [c for c in group if c not in ties and c.distinguishable is False]
    sentences = []
    if ties:
        names = " and ".join(MECHANISM.get(s, s) for s in (best, *[c.setup_b if c.setup_a == best else c.setup_a for c in ties]))
        sentences.append(f"The cheapest nginx connection here cannot be named: {names} cannot be told apart ({comparison_text(ties[0])}).")
    elif all(c.distinguishable is None for c in group):
        sentences.append(f"The cheapest nginx connection here is {MECHANISM.get(best, best)}, from one repeat each: no interval says how sure.")
    else:
        sentences.append(f"The cheapest nginx connection here is {MECHANISM.get(best, best)}.")
    for c in others:
        sentences.append(f"{upper_first(MECHANISM.get(c.setup_a, c.setup_a))} and {MECHANISM.get(c.setup_b, c.setup_b)} cannot be told apart ({comparison_text(c)}).")
    return sentences


def upper_first(text: str) -> str:
    """Return text with its first letter in upper case."""
    return text[:1].upper() + text[1:]


def comparison_text(c: Comparison) -> str:
    """Return 'nginx-fcgi-unix / nginx-fcgi-tcp = 1.02 (0.97-1.07)'."""
    interval = f" ({c.ci_low:.3f}-{c.ci_high:.3f})" if c.ci_low is not None else " (no interval)"
    return f"{c.setup_a} / {c.setup_b} = {c.ratio:.3f}{interval}"


def ratio_verdict(ratio: Ratio) -> str:
    """Return what one throughput ratio says, in words."""
    if ratio.ratio is None:
        return f"excluded: {ratio.excluded}"
    if ratio.setup == BASELINE:
        return "the baseline"
    if ratio.ci_low is None:
        return "one repeat: no interval, so no way to tell how sure this is"
    if ratio.includes_one:
        return "the interval includes 1.0: no measurable overhead"
    if ratio.ratio < 1:
        return f"costs {1 - ratio.ratio:.0%} of Go's throughput"
    return f"{ratio.ratio - 1:.0%} faster than Go standalone"


def comparison_verdict(c: Comparison) -> str:
    """Return what a head-to-head comparison says."""
    if c.distinguishable is None:
        return "one repeat, no interval"
    if c.distinguishable:
        return f"{c.setup_a} is faster (interval excludes 1.0)"
    return "cannot be told apart (interval includes 1.0)"


def settings_sentence(parameters: dict) -> str:
    """Return the non-default settings of a run that change what was measured, in words."""
    parts = []
    if parameters.get("upstream_keepalive") is False:
        parts.append("upstream keep-alive off (nginx opens a new connection to Go per request)")
    delay = parameters.get("handler_delay_ms")
    if isinstance(delay, (int, float)) and delay > 0:
        parts.append(f"a handler delay of {delay:g} ms per request")
    body = parameters.get("body_bytes")
    if isinstance(body, int) and body != 12:
        parts.append(f"a {body:,}-byte response body (header check expects {parameters.get('expect_header_bytes')} bytes)")
    if not parts:
        return ""
    return "Measured with " + "; ".join(parts) + "."


def sharing_sentence(analysis: Analysis) -> str:
    """Return how wrk and the servers shared the CPUs, with the share wrk itself used."""
    sharing = analysis.sharing
    if sharing is None:
        return ""
    share = sharing.wrk_share
    used = f"wrk itself used {share.median:.0%} of the machine's CPU time during the measurements (median; {share.minimum:.0%}-{share.maximum:.0%})"
    if not sharing.shared:
        return f"wrk ran on CPUs {sharing.pin_client} and the servers on CPUs {sharing.pin_server} (pinned, no overlap); {used}."
    where = "the same CPUs (not pinned)" if not sharing.pinned else f"overlapping CPUs (client {sharing.pin_client}, servers {sharing.pin_server})"
    return (
        f"Client and servers shared {where} of this {sharing.cores}-CPU machine: {used}. The figures measure the machine "
        "with its load generator, not the servers alone; --pin-client and --pin-server separate them."
    )


def compare_summary(result) -> tuple[str, ...]:
    """Return the comparison's answer in sentences."""
    flagged = result.flagged
    total = sum(1 for c in result.changes if c.change is not None)
    if not total:
        return ("No figure could be compared: every cell both runs measured was excluded or not measured in one of them.",)
    if not flagged:
        return (f"No measurable change: for all {total} figures compared, the 95% interval of B / A includes 1.0.",)
    lines = [f"{len(flagged)} of {total} figures changed measurably (the 95% interval of B / A excludes 1.0):"]
    for c in flagged:
        what = "req/s" if c.metric == "requests_per_sec" else "overhead ratio"
        lines.append(f"{c.setup} at GOMAXPROCS={c.gomaxprocs}, {c.connections} connections: {what} x{c.change:.3f} ({c.ci_low:.3f}-{c.ci_high:.3f}).")
    baseline_moved = any(c.setup == BASELINE and c.metric == "requests_per_sec" for c in flagged)
    if baseline_moved and not any(c.metric == "overhead_ratio" for c in flagged):
        lines.append(
            "go-http's own req/s moved while no overhead ratio did: the machine as a whole ran faster or slower "
            "between the runs, not one setup against Go. The ratios, paired within each run, are the figures to compare."
        )
    return tuple(lines)

