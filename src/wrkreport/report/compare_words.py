"""Comparison words: two runs' changes -> the compare page's title, headline and one sentence per flagged change, by `judge`'s rule set."""

from __future__ import annotations

import math

from ..core.setups import BASELINE
from .fmt import display, fmt_ms, fmt_number, group_name
from .words import BAND_TEXT, join_names, judge, upper_first

# What each kind of change is called, on the page's badges and in the chart's legend.
CHANGE_KINDS = {
    "better": "better",
    "worse": "worse",
    "same": "no change",
    "inconclusive": "inconclusive",
    "no-interval": "no interval",
    "none": "not compared",
}
# How a change of each figure is said: (what changed, word when B is higher, word when B is lower, unit after B's value).
CHANGE_WORDS = {
    "requests_per_sec": ("", "faster", "slower", " req/s"),
    "overhead_ratio": ("ratio to go-http ", "higher", "lower", ""),
    "latency_p99_ms": ("p99 latency at saturation ", "higher", "lower", " ms"),  # wrk's, closed loop: not the latency at a service's load
    "cpu_server_ms_per_1k": ("server CPU per request ", "higher", "lower", " ms per 1,000 requests"),  # the in-run A/B's
    "capacity_rps": ("capacity at the latency objective ", "higher", "lower", " req/s"),
}
# Settings named in a comparison's title, most telling first: (label, how a value reads).
TITLE_SETTINGS = {
    ("parameter", "upstream_keepalive"): ("upstream keep-alive", lambda v: "on" if v else "off"),
    ("parameter", "handler_delay_ms"): ("handler delay", lambda v: f"{v:g} ms" if isinstance(v, (int, float)) else str(v)),
    ("parameter", "body_bytes"): ("response body", lambda v: f"{v:,} bytes" if isinstance(v, int) else str(v)),
    ("parameter", "pin_client"): ("wrk CPUs", lambda v: "not pinned" if v is None else str(v)),
    ("parameter", "pin_server"): ("server CPUs", lambda v: "not pinned" if v is None else str(v)),
    ("parameter", "tune"): ("sysctl tuning", lambda v: "on" if v else "off"),
    ("versions", "nginx"): ("nginx", str),
    ("versions", "go"): ("Go", str),
    ("versions", "wrk"): ("wrk", str),
    ("machine", "cpu_model"): ("CPU", str),
    ("machine", "cores"): ("cores", str),
    ("machine", "kernel"): ("kernel", str),
    ("parameter", "gomaxprocs"): ("GOMAXPROCS", lambda v: display(v)),
    ("parameter", "connections"): ("connections", lambda v: display(v)),
    ("parameter", "connections_levels"): ("connections", lambda v: display(v)),
    ("parameter", "threads"): ("wrk threads", str),
    ("parameter", "profile"): ("profile", str),
    ("parameter", "repeats"): ("repeats", str),
    ("parameter", "duration_s"): ("duration", lambda v: f"{v} s"),
}
NOT_A_SETTING = {("parameter", "seed"), ("parameter", "ports"), ("parameter", "urls")}  # differ without changing what is measured
TITLE_PARTS = 2


def change_kind(change) -> str:
    """Return what one compared figure says, by the one rule set of `judge`: better | worse | same | inconclusive | no-interval | none.

    better / worse: the interval excludes 1.0, in the direction that is better for the figure
    (higher req/s and ratio, lower latency); same: the whole interval lies within
    SAME_LOW-SAME_HIGH; inconclusive: it includes 1.0 but reaches outside that band.
    """
    if change.change is None:
        return "none"
    if change.flagged:
        return "better" if change.better else "worse"
    found = judge(change.change, change.ci_low, change.ci_high, max(2, min(change.n_a, change.n_b)))
    return found.kind


def change_amount(change: float, low: float, high: float) -> tuple[str, str, bool]:
    """Return (amount, its interval, B higher) of a flagged change: '3.0x', '2.4-3.7x' from 1.5-fold on, else in percent.

    >>> change_amount(0.336, 0.273, 0.414), change_amount(1.08, 1.03, 1.13), change_amount(0.97, 0.955, 0.985)
    (('3.0x', '2.4-3.7x', False), ('8%', '3-13%', True), ('3.0%', '1.5-4.5%', False))
    >>> change_amount(1.4, 1.1, 1.8)
    ('40%', '10-80%', True)
    """
    up = change >= 1.0
    factor, lowest, highest = (change, low, high) if up else (1 / change, 1 / high, 1 / low)
    if factor >= 1.5:
        return f"{factor:.1f}x", f"{lowest:.1f}-{highest:.1f}x", up
    share, least, most = (change - 1, low - 1, high - 1) if up else (1 - change, 1 - high, 1 - low)
    digits = 0 if share >= 0.05 else 1
    return f"{share * 100:.{digits}f}%", f"{least * 100:.{digits}f}-{most * 100:.{digits}f}%", up


def change_clause(change, several: bool, joint: str = ": ", tail: str = " in B") -> str:
    """Return 'nginx-http at GOMAXPROCS=2: 3.0x slower (2.4-3.7x) in B' for a flagged change."""
    what, higher, lower, _ = CHANGE_WORDS[change.metric]
    what = f"{change.label} " if change.metric == "overhead_ratio" else what
    amount, interval, up = change_amount(change.change, change.ci_low, change.ci_high)
    where = group_name(change.gomaxprocs, change.connections, several)
    return f"{change.setup} at {where}{joint}{what}{amount} {higher if up else lower} ({interval}){tail}"


def change_sentence(change, several: bool) -> str:
    """Return the sentence of one flagged change, with both runs' values."""
    _, _, _, unit = CHANGE_WORDS[change.metric]
    number = figure_text(change.metric)
    return f"{change_clause(change, several)}: {number(change.a)}{unit} in A, {number(change.b)} in B."


def figure_text(metric: str):
    """Return the formatter of a compared figure's level: req/s with separators, ratios to 3 decimals, ms to 3 digits, CPU in µs per request.

    Server CPU ms per 1,000 requests is numerically µs per request:

    >>> figure_text("cpu_server_ms_per_1k")(38.71)
    '38.7 µs/req'
    """
    if metric in ("requests_per_sec", "capacity_rps"):
        return fmt_number
    if metric == "overhead_ratio":
        return lambda v: "-" if v is None else f"{v:.3f}"
    if metric == "cpu_server_ms_per_1k":
        return lambda v: "-" if v is None else f"{v:.1f} µs/req"
    return fmt_ms


def detectable_text(change) -> str:
    """Return the smallest change a figure's interval could have flagged, in words ('' without an interval).

    >>> from types import SimpleNamespace
    >>> detectable_text(SimpleNamespace(detectable_change=0.1249)), detectable_text(SimpleNamespace(detectable_change=None))
    ('could have flagged a change of 12% or more', '')
    """
    if change.detectable_change is None:
        return ""
    return f"could have flagged a change of {change.detectable_change:.0%} or more"


# The figures in the order the detectable-change sentence names them, each with its short name.
DETECTABLE_NAMES = {
    "requests_per_sec": "req/s",
    "overhead_ratio": "ratios",
    "latency_p99_ms": "p99 latency",
    "cpu_server_ms_per_1k": "CPU per request",
}


def detectable_sentence(changes) -> str:
    """Return, per kind of figure, the range of the smallest changes their intervals could have flagged ('' when none has an interval).

    Each is the true change flagged in 80% of comparisons (compare.detectable_change): a
    change below it may be there and not show.
    """
    parts = []
    for metric, name in DETECTABLE_NAMES.items():
        found = sorted(c.detectable_change for c in changes if c.metric == metric and c.detectable_change is not None)
        if found:
            low, high = round(found[0] * 100), round(found[-1] * 100)
            parts.append(f"{name} {low}%" if low == high else f"{name} {low}-{high}%")
    if not parts:
        return ""
    return (
        "Smallest change each figure could have flagged (found in 80% of comparisons; smaller ones may be there unseen): "
        + ", ".join(parts)
        + "."
    )


def compare_title(differing, a_name: str, b_name: str) -> str:
    """Return what differs between the runs as a title ('Upstream keep-alive on vs off'), else the run names."""
    settings = [d for d in differing if (d[0], d[1]) not in NOT_A_SETTING and d[2] is not None and d[3] is not None]
    known = [d for d in settings if (d[0], d[1]) in TITLE_SETTINGS]
    known.sort(key=lambda d: list(TITLE_SETTINGS).index((d[0], d[1])))
    parts = []
    for section, key, value_a, value_b in known[:TITLE_PARTS]:
        label, read = TITLE_SETTINGS[(section, key)]
        parts.append(f"{label} {read(value_a)} vs {read(value_b)}")
    if not parts and settings:
        section, key, value_a, value_b = settings[0]
        parts.append(f"{key} {display(value_a)} vs {display(value_b)}")
    if not parts:
        return f"{a_name} vs {b_name}: the same settings"
    more = len(settings) - len(parts)
    title = upper_first("; ".join(parts))
    return title + (f" (and {more} more difference{'s' if more != 1 else ''})" if more > 0 else "")


def compare_summary(result, several: bool = False) -> tuple[str, ...]:
    """Return the comparison's answer: a headline sentence with numbers, then one sentence per flagged change."""
    compared = [c for c in result.changes if c.change is not None]
    total = len(compared)
    name_a, name_b = result.names
    names = f"A ({name_a}) and B ({name_b})"
    if not total:
        return ("No figure could be compared: every cell both runs measured was excluded or not measured in one of them.",)
    flagged = result.flagged
    fixed_rate = fixed_rate_sentence(result.rate_changes)
    if not flagged:
        headline = unchanged_headline(compared, names, several)
        if fixed_rate and " changed in B: " in fixed_rate[0]:  # wrk's figures did not move, what nginx adds at a fixed load did
            headline = headline.replace("No figure changed measurably", "No figure at saturation changed measurably", 1)
        return (headline, *fixed_rate)
    better = [c for c in flagged if c.better]
    worse = [c for c in flagged if not c.better]
    largest = max(flagged, key=lambda c: abs(math.log(c.change)))
    runs = f"B ({name_b}) measured"
    if better and worse:
        counts = f"{runs} better than A ({name_a}) on {len(better)} and worse on {len(worse)} of the {total} figures compared"
    else:
        counts = f"{runs} {'better' if better else 'worse'} than A ({name_a}) on {len(flagged)} of the {total} figures compared and {'worse' if better else 'better'} on none"
    lines = [f"{counts}; the largest change: {change_clause(largest, several, ', ', '')}."]
    lines.extend(change_sentence(c, several) for c in flagged)
    baseline_moved = any(c.setup == BASELINE and c.metric == "requests_per_sec" for c in flagged)
    if baseline_moved and not any(c.metric == "overhead_ratio" for c in flagged):
        lines.append(
            "go-http's own req/s moved while no overhead ratio did: the machine as a whole ran faster or slower "
            "between the runs, not one setup against Go. The ratios, paired within each run, are the figures to compare."
        )
    return (*lines, *fixed_rate)


def fixed_rate_sentence(changes) -> tuple[str, ...]:
    """Return the sentence on the fixed-rate phase's added latencies (none without any): how many changed, and which.

    The headline counts wrk's figures at saturation; a change in what nginx adds at a
    service's load is said apart, so "no figure changed" never hides it.
    """
    compared = [c for c in changes if c.ci_low is not None]
    if not compared:
        return ()
    flagged = [c for c in compared if c.flagged]
    if not flagged:
        return (f"At a fixed load (open loop), none of the {len(compared)} added latencies with an interval changed measurably.",)
    said = "; ".join(
        f"{c.setup} at GOMAXPROCS={c.gomaxprocs}, {c.offered_rps:,} req/s: added {c.percentile} "
        f"{c.change_ms:+.3f} ms ({c.ci_low:+.3f} to {c.ci_high:+.3f})"
        for c in flagged
    )
    return (f"At a fixed load (open loop), {len(flagged)} of the {len(compared)} added latencies with an interval changed in B: {said}.",)


def unchanged_headline(compared, names: str, several: bool) -> str:
    """Return the headline when no interval excludes 1.0: no change only where the interval fits the band, else inconclusive."""
    kinds = {id(c): change_kind(c) for c in compared}
    same = [c for c in compared if kinds[id(c)] == "same"]
    unsure = [c for c in compared if kinds[id(c)] == "inconclusive"]
    bare = [c for c in compared if kinds[id(c)] == "no-interval"]
    total = len(compared)
    parts = [f"No figure changed measurably between {names}: of the {total} figures compared"]
    clauses = []
    if same:
        clauses.append(f"{len(same)} lie{'s' if len(same) == 1 else ''} within {BAND_TEXT} (no change)")
    if unsure:
        widest = max(unsure, key=lambda c: math.log(c.ci_high) - math.log(c.ci_low))
        what = CHANGE_WORDS[widest.metric][0].strip() or "req/s"
        clauses.append(
            f"{len(unsure)} {'is' if len(unsure) == 1 else 'are'} inconclusive, the interval including 1.0 but reaching outside {BAND_TEXT} "
            f"(the widest, {widest.setup}'s {what} at {group_name(widest.gomaxprocs, widest.connections, several)}: "
            f"{widest.change:.2f}, {widest.ci_low:.2f}-{widest.ci_high:.2f})"
        )
    if bare:
        clauses.append(f"{len(bare)} {'has' if len(bare) == 1 else 'have'} no interval (fewer than 2 blocks or repeats in a run)")
    return parts[0] + ", " + join_names(clauses) + "."
