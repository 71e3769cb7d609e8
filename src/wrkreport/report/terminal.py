"""Terminal: what `wrkreport build` prints (the page's answer: its sentence, its table, the conditions; the report's path) and `wrkreport compare`'s table."""

from __future__ import annotations

import re
import textwrap

from ..analysis.cells import several_levels
from .answer import Answer

WIDTH = 80


def answer_lines(answer: Answer) -> str:
    """Return the page's answer as the terminal prints it: the sentence wrapped at 80 columns, the table (a heading per group with
    the load and objective its figures are at, each row's intervals on the line below it), the conditions."""
    header = ("setup", *(c.short for c in answer.columns))
    rows: list[tuple[str, ...]] = []
    groups: list[tuple[int, str]] = []  # (index of the group's first row, its heading)
    for group in answer.groups:
        groups.append((len(rows), group.title + (f": {group.at}" if group.at else "")))
        for row in group.rows:
            rows.append((row.setup, *(f.main for f in row.figures)))
            if any(f.detail for f in row.figures):
                rows.append(("", *(f.detail for f in row.figures)))
    table = text_table(header, [tuple(terminal_cell(c) for c in r) for r in rows], right=set(range(1, len(header)))).splitlines()
    lines, headings = [table[0]], dict(groups)
    for i, line in enumerate(table[1:]):
        if i in headings:
            lines.append(textwrap.shorten(ascii_terminal(headings[i]), WIDTH, placeholder="..."))
        lines.append(line)
    wrap = lambda text: textwrap.fill(ascii_terminal(text), WIDTH, subsequent_indent="  ", break_on_hyphens=False)  # noqa: E731
    return "\n".join([wrap(answer.sentence), *lines, wrap(answer.conditions)])


def closing_line(path: str, warnings: int, failures: int, precision: tuple[str, str] | None = None) -> str:
    """Return the last line: the report's path and what to read there, warnings and failed checks counted, a missed precision target said.

    >>> closing_line("reports/index.html", 24, 0, ("warn", "NOT met (+/-8.21%)"))
    'report: reports/index.html (24 warnings, precision target NOT met)'
    >>> closing_line("reports/index.html", 2, 0, ("warn", "not aimed at: a smoke test (--quick), no intervals"))
    'report: reports/index.html (2 warnings, precision target not aimed at: a smoke test)'
    >>> closing_line("reports/index.html", 1, 2)
    'report: reports/index.html (1 warning, 2 failed checks)'
    """
    counts = f"{warnings} warning{'s' if warnings != 1 else ''}"
    counts += f", {failures} failed check{'s' if failures != 1 else ''}" if failures else ""
    counts += (
        f", precision target {precision[1].split(' (')[0]}" if precision is not None and precision[0] != "pass" else ""
    )  # NOT met; not aimed at: a smoke test
    return f"report: {path} ({counts})"


TERMINAL_WORDS = (
    (re.compile(r"^held in (\d+) of (\d+)$"), r"held \1/\2"),
    (re.compile(r"^highest rate held$"), "highest held"),
    (re.compile(r"^lowest rate missed$"), "lowest missed"),
    (re.compile(r"^([\d,.]+) req/s$"), r"\1/s"),
)


def terminal_cell(text: str) -> str:
    """Return a table cell for the terminal: ascii_terminal's characters, and the page's longer words below a figure in fewer
    columns, so that a default run's widest row (the fixed load not held, a capacity at the search's edge) fits 80, and a
    run of five setups with front ends' names (go-http's req/s below its share) does too.

    >>> terminal_cell("held in 0 of 1"), terminal_cell("highest rate held"), terminal_cell("≥ 32,000 ✗"), terminal_cell("117,000 req/s")
    ('held 0/1', 'highest held', '>= 32,000 X', '117,000/s')
    """
    for pattern, short in TERMINAL_WORDS:
        text = pattern.sub(short, text)
    return ascii_terminal(text)


def ascii_terminal(text: str) -> str:
    """Return a page figure or sentence for a terminal that may not show every character: 'µs' as 'us', '×' as 'x', '≥' as '>=',
    the capacity check's '✓' and '✗' as 'ok' and 'X'."""
    for page, terminal in (("µs", "us"), (chr(0xD7), "x"), ("≥", ">="), ("≤", "<="), ("✓", "ok"), ("✗", "X"), ("\u2011", "-")):
        text = text.replace(page, terminal)
    return text


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
    from ..compare.common_rate import curve_change_lines  # compare's modules: not imported by a build (about 10 ms)
    from ..compare.rate_changes import rate_change_lines
    from .compare_page import change_rows
    from .compare_words import compare_summary, detectable_sentence, fixed_rate_sentence

    several = several_levels(result.a.analysis.groups + result.b.analysis.groups)
    header = ("setup", "figure", "A", "B", "B / A (95% CI)", "verdict")
    found = change_rows(result, several)
    rows = [
        (
            r.setup,
            SHORT_FIGURES.get(r.what, r.what.replace("ratio to ", "ratio / ")),
            plain(r.a.split(" (n=")[0]),
            plain(r.b.split(" (n=")[0]),
            r.change,
            r.kind.upper() if r.flagged else could_flag(c.detectable_change),
        )
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
    rates = "".join(
        f"\n{line}"
        for line in [*rate_change_lines(list(result.rate_changes)), *curve_change_lines(result.curve_changes), *result.rate_only]
    )  # open loop, one line per figure
    notes = [SATURATION_NOTE] if any(r[1] == "p99 ms" for r in rows) else []
    notes += [COULD_FLAG_NOTE] if any(r[5].startswith("+-") for r in rows) else []
    drift = [result.drift.sentence] if result.drift and result.drift.named else []
    words = [
        headline,
        *drift,
        detectable_sentence(result.changes),
        *fixed_rate_sentence(result.rate_changes),
    ]  # wrk's figures, then a fixed load
    return "\n".join(table + notes) + rates + "".join("\n" + textwrap.fill(w, WIDTH, break_on_hyphens=False) for w in words if w)


COULD_FLAG_NOTE = "+-N%: nothing flagged; a change of N% or more would have been, 80% of the time."


def could_flag(detectable: float | None) -> str:
    """Return the verdict column of a figure not flagged: '+-12%', the smallest change it could have flagged ('' without an interval)."""
    return "" if detectable is None else f"+-{detectable:.0%}"


def plain(text: str) -> str:
    """Return a level for the terminal: CPU per request without its unit (the figure's name says ms/1k req, the same number as µs/req)."""
    return text.replace(" µs/req", "")
