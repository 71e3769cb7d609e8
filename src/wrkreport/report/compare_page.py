"""Compare page: two runs -> the comparison's page data, compare.html and compare.json."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from .. import __version__
from ..analyze import load_analysis, several_levels
from ..compare import compare
from ..errors import NothingToCompare
from .files import write_texts
from .fmt import fmt_number, group_name
from .page import link
from .render import environment
from .words import compare_summary


@dataclass(frozen=True)
class ChangeRow:
    """One line of the comparison table."""

    group: str
    setup: str
    what: str
    a: str
    b: str
    change: str
    verdict: str
    flagged: bool


@dataclass(frozen=True)
class ComparePage:
    """Everything the comparison page shows."""

    title: str
    generated_at: str
    version: str
    a_name: str
    b_name: str
    a_link: str
    b_link: str
    summary: tuple[str, ...]
    method: str
    rows: tuple[ChangeRow, ...]
    only: tuple[str, ...]
    differences: tuple[tuple[str, str, str], ...]
    statuses: tuple[tuple[str, str], ...]


def change_rows(result, several: bool) -> list[ChangeRow]:
    """Return the comparison table rows."""
    rows = []
    for c in result.changes:
        fmt = (lambda v: fmt_number(v)) if c.metric == "requests_per_sec" else (lambda v: "-" if v is None else f"{v:.3f}")
        if c.change is None:
            change, verdict = "-", c.note or ""
        elif c.ci_low is None:
            change, verdict = f"{c.change:.3f}", c.note or ""
        else:
            change = f"{c.change:.3f} ({c.ci_low:.3f}-{c.ci_high:.3f})"
            verdict = f"{c.change - 1:+.1%} (interval excludes 1.0)" if c.flagged else "no measurable change (interval includes 1.0)"
        rows.append(
            ChangeRow(
                group=group_name(c.gomaxprocs, c.connections, several),
                setup=c.setup,
                what="req/s (mean)" if c.metric == "requests_per_sec" else "ratio to go-http",
                a=f"{fmt(c.a)} (n={c.n_a})",
                b=f"{fmt(c.b)} (n={c.n_b})",
                change=change,
                verdict=verdict,
                flagged=c.flagged,
            )
        )
    return rows


def cells_of(cells: tuple[tuple[int, int, str], ...]) -> str:
    """Return cells as 'go-http GOMAXPROCS=1 c100, ...' ('none' when there are none)."""
    return ", ".join(f"{s} GOMAXPROCS={g} c{c}" for g, c, s in cells) or "none"


def build_compare(raw_a: str | Path, raw_b: str | Path, out_dir: str | Path, generated_at: datetime, expect_header_bytes: int | None = None):
    """Compare two runs and write compare.html and compare.json into out_dir; return (RunComparison, paths)."""
    out_dir = Path(out_dir)
    a, b = load_analysis(raw_a, expect_header_bytes), load_analysis(raw_b, expect_header_bytes)
    result = compare(a, b)
    if not result.changes:
        raise NothingToCompare(
            f"{a.run.path} and {b.run.path}: nothing to compare, no setup was measured at the same GOMAXPROCS and "
            f"connections in both runs (A: {cells_of(result.only_in_a)}; B: {cells_of(result.only_in_b)})"
        )
    several = several_levels(a.analysis.groups + b.analysis.groups)
    page = ComparePage(
        title=f"wrkreport: run {a.run.run_id} against run {b.run.run_id}",
        generated_at=generated_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
        version=__version__,
        a_name=a.run.run_id,
        b_name=b.run.run_id,
        a_link=link(a.run.path, out_dir),
        b_link=link(b.run.path, out_dir),
        summary=compare_summary(result),
        method=result.method,
        rows=tuple(change_rows(result, several)),
        only=tuple(f"only in {side}: {s} at GOMAXPROCS={g}, {c} connections" for side, cells in (("A", result.only_in_a), ("B", result.only_in_b)) for g, c, s in cells),
        differences=result.differences,
        statuses=(("A", a.checks.status), ("B", b.checks.status)),
    )
    template = environment().get_template("compare.html")
    data = {
        "schema": 1,
        "generated_at": generated_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "a": {"run_id": a.run.run_id, "path": str(a.run.path), "status": a.checks.status},
        "b": {"run_id": b.run.run_id, "path": str(b.run.path), "status": b.checks.status},
        "method": result.method,
        "changes": [asdict(c) | {"flagged": c.flagged} for c in result.changes],
        "only_in_a": [list(k) for k in result.only_in_a],
        "only_in_b": [list(k) for k in result.only_in_b],
        "differences": [list(d) for d in result.differences],
    }
    texts = {
        "compare.html": template.render(page=page),
        "compare.json": json.dumps(data, indent=2, allow_nan=False) + "\n",
    }
    return result, write_texts(out_dir, texts, "the comparison")

