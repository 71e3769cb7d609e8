"""Terminal: the aligned text tables that `wrkreport build` and `wrkreport compare` print."""

from __future__ import annotations

import textwrap

import pandas as pd

from ..analysis.analyze import Analysis
from ..analysis.cells import several_levels
from ..core.setups import baseline_of, main_divisor
from ..fixedrate.common_rate import curve_change_lines
from ..fixedrate.comparison import rate_change_lines
from .compare_page import change_rows
from .fmt import fmt_times, group_name
from .compare_words import compare_summary, detectable_sentence, fixed_rate_sentence
from .page import result_rows
from .verdict import Verdict


WIDTH = 80


def summary_table(analysis: Analysis, table: pd.DataFrame) -> str:
    """Return the compact terminal table: setup x GOMAXPROCS, req/s and p99 (geometric means), ratio with interval, checks."""
    several = analysis.several_levels
    header = ("GOMAXPROCS", "setup", "n", "req/s", "p99 ms", "ratio (95% CI)", "checks")
    rows = [
        (short_group(r.group), r.setup, r.n.replace(" excluded", " excl."), r.requests_per_sec, r.latency_p99_ms, terse(r.ratio) + divisor(analysis, cell), r.status)
        for r, cell in zip(result_rows(analysis, table, several), analysis.cells)
    ]
    text = text_table(header, rows, right={2, 3, 4})
    main = main_divisor(analysis.setups)
    if any(baseline_of(s) != main for s in analysis.setups):
        text += f"\nRatios divide by {main} at the same GOMAXPROCS, or by the setup after '/'."
    cpu = cpu_lines(analysis)
    if cpu:
        text += "\n" + cpu
    note = textwrap.fill(analysis.precision_note, WIDTH, break_on_hyphens=False) if analysis.precision_note else ""
    return f"{text}\n{note}" if note else text  # target met or not (design.py)


def terse(ratio: str) -> str:
    """Return a ratio as the terminal table shows it: '0.936 (n=1)' for the page's '0.936 (n=1, no interval)', so a quick run's table fits 80 columns when go-http passes 100,000 req/s."""
    return ratio.replace(", no interval)", ")")


def divisor(analysis: Analysis, cell) -> str:
    """Return ' / go-https' after a ratio that does not divide by go-http ('' otherwise, and for a setup that is its own baseline)."""
    ratio = analysis.ratio(cell.gomaxprocs, cell.connections, cell.setup)
    if ratio is None or ratio.ratio is None or ratio.baseline in (main_divisor(analysis.setups), cell.setup):
        return ""
    return f" / {ratio.baseline}"


def cpu_lines(analysis: Analysis) -> str:
    """Return the server CPU per request of each setup as a multiple of go-http's, one wrapped line per group ('' without CPU records)."""
    lines, main = [], main_divisor(analysis.setups)
    for gomaxprocs, connections in analysis.groups:
        parts = [
            f"{r.setup} {fmt_times(r).replace(chr(0x2011), '-').replace(chr(0xd7), 'x')}" + (f" of {r.baseline}'s" if r.baseline != main else "")
            for r in analysis.cpu_ratios
            if (r.gomaxprocs, r.connections) == (gomaxprocs, connections) and r.setup != baseline_of(r.setup) and r.ratio is not None
        ]
        if parts:
            where = short_group(group_name(gomaxprocs, connections, analysis.several_levels))
            lead = f"CPU per request vs {main} at {where}" + (" (or the setup named)" if any(" of " in p for p in parts) else "")
            lines.append(textwrap.fill(f"{lead}: " + "; ".join(parts), WIDTH, subsequent_indent="  ", break_on_hyphens=False))
    return "\n".join(lines)


def short_group(group: str) -> str:
    """Return a group name for the terminal: 'GOMAXPROCS=2, 100 connections' -> '2 c=100'."""
    return group.replace("GOMAXPROCS=", "").replace(" connections", "").replace(", ", " c=")


def closing_lines(verdict: str, warnings: int, failures: int, absolute: Verdict | None = None) -> str:
    """Return the warning count, the page's verdict in absolute units (one paragraph per group, then the conditions) and the
    relative verdict line, wrapped at 80 columns."""
    counts = f"{warnings} warning{'s' if warnings != 1 else ''}"
    counts += f", {failures} failed check{'s' if failures != 1 else ''}" if failures else ""
    lines = [counts + " (details in the report)"]
    if absolute is not None and absolute.paragraphs:
        several = len(absolute.paragraphs) > 1
        lines += [textwrap.fill(ascii_terminal((f"{title}: " if several else "") + text), WIDTH, subsequent_indent="  ", break_on_hyphens=False)
                  for title, text in absolute.paragraphs]
        lines.append(textwrap.fill(ascii_terminal(absolute.conditions), WIDTH, subsequent_indent="  ", break_on_hyphens=False))
    return "\n".join(lines + [textwrap.fill(verdict, WIDTH, break_on_hyphens=False)])


def ascii_terminal(text: str) -> str:
    """Return a page sentence for a terminal that may not show every character: 'µs' as 'us', '×' as 'x'."""
    return text.replace("µs", "us").replace(chr(0xd7), "x")


def text_table(header: tuple[str, ...], rows: list[tuple[str, ...]], right: set[int] = frozenset()) -> str:
    """Return rows under header as aligned columns (right-aligned where their index is in right)."""
    rows = [header, *rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ("  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows)
    return "\n".join(line.rstrip() for line in lines)


SHORT_FIGURES = {
    "req/s (geometric mean)": "req/s",
    "ratio to go-http": "ratio",
    "p99 latency at saturation (geometric mean)": "p99 ms",
    "server CPU ms per 1,000 requests (geometric mean)": "CPU ms/1k req",
    "server CPU ms per 1,000 requests": "CPU ms/1k req",
}
SATURATION_NOTE = "p99 ms: wrk's at saturation (closed loop, mostly queueing), not at a fixed load."


def compare_table(result) -> str:
    """Return the terminal table of a comparison, a heading per group: BETTER / WORSE where the interval excludes 1.0, else the smallest change it could have flagged; then its headline."""
    several = several_levels(result.a.analysis.groups + result.b.analysis.groups)
    header = ("setup", "figure", "A", "B", "B / A (95% CI)", "verdict")
    found = change_rows(result, several)
    rows = [
        (r.setup, SHORT_FIGURES.get(r.what, r.what.replace("ratio to ", "ratio / ")), plain(r.a.split(" (n=")[0]), plain(r.b.split(" (n=")[0]), r.change,
         r.kind.upper() if r.flagged else could_flag(c.detectable_change))
        for r, c in zip(found, result.changes)
    ]
    lines = text_table(header, rows, right={2, 3}).splitlines()
    table, group = [lines[0]], None
    for r, line in zip(found, lines[1:]):
        if r.group != group:
            table.append(f"{r.group}:")
            group = r.group
        table.append(line)
    headline = compare_summary(result, several)[0]
    rates = "".join(f"\n{line}" for line in [*rate_change_lines(list(result.rate_changes)), *curve_change_lines(result.curve_changes),
                                               *result.rate_only])  # open loop, one line per figure
    notes = [SATURATION_NOTE] if any(r[1] == "p99 ms" for r in rows) else []
    notes += [COULD_FLAG_NOTE] if any(r[5].startswith("+-") for r in rows) else []
    drift = [result.drift.sentence] if result.drift and result.drift.named else []
    words = [headline, *drift, detectable_sentence(result.changes), *fixed_rate_sentence(result.rate_changes)]  # wrk's figures, then a fixed load
    return "\n".join(table + notes) + rates + "".join("\n" + textwrap.fill(w, WIDTH, break_on_hyphens=False) for w in words if w)


COULD_FLAG_NOTE = "+-N%: nothing flagged; a change of N% or more would have been, 80% of the time."


def could_flag(detectable: float | None) -> str:
    """Return the verdict column of a figure not flagged: '+-12%', the smallest change it could have flagged ('' without an interval)."""
    return "" if detectable is None else f"+-{detectable:.0%}"


def plain(text: str) -> str:
    """Return a level for the terminal: CPU per request without its unit (the figure's name says ms/1k req, the same number as µs/req)."""
    return text.replace(" µs/req", "")
