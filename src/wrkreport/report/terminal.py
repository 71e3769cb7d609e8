"""Terminal: the aligned text tables that `wrkreport build` and `wrkreport compare` print."""

from __future__ import annotations

import pandas as pd

from ..analyze import Analysis, several_levels
from .compare_page import change_rows
from .page import result_rows


def summary_table(analysis: Analysis, table: pd.DataFrame) -> str:
    """Return the compact terminal table: setup x GOMAXPROCS, req/s, p99, ratio with interval, checks."""
    several = analysis.several_levels
    header = ("group", "setup", "n", "req/s", "p99 ms", "ratio (95% CI)", "checks")
    rows = [(r.group, r.setup, r.n, r.requests_per_sec, r.latency_p99_ms, r.ratio, r.status) for r in result_rows(analysis, table, several)]
    text = text_table(header, rows, right={2, 3, 4})
    return f"{text}\n{analysis.precision_note}" if analysis.precision_note else text  # target met or not (design.py)


def text_table(header: tuple[str, ...], rows: list[tuple[str, ...]], right: set[int] = frozenset()) -> str:
    """Return rows under header as aligned columns (right-aligned where their index is in right)."""
    rows = [header, *rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ("  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows)
    return "\n".join(line.rstrip() for line in lines)


def compare_table(result) -> str:
    """Return the terminal table of a comparison."""
    several = several_levels(result.a.analysis.groups + result.b.analysis.groups)
    header = ("group", "setup", "figure", "A", "B", "B / A (95% CI)", "")
    rows = [(r.group, r.setup, r.what, r.a, r.b, r.change, "CHANGED" if r.flagged else "") for r in change_rows(result, several)]
    return text_table(header, rows)
