"""Report: run + checks + analysis -> page data -> index.html, results.csv, results.json, terminal summary.

Numbers are computed in analyze.py; here they are only put into words and tables. The
page is one self-contained file: CSS and SVG inline, no script, no network reference.
One module per job, each importing only those before it:

    fmt           figures and manifest values as short strings
    words         the generated sentences (headline, verdicts) and the rule set they follow
    compare_words the comparison's title, headline and per-change sentences
    machines      the controller, target and clients of a run on several machines
    page          the plain dataclasses the report template gets
    render        jinja2 over the packaged templates
    files         results.json, results.csv, atomic writes
    compare_page  `wrkreport compare`: its page data, compare.html and compare.json
    terminal      the text tables the CLI prints
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..analyze import load_analysis
from ..model import Check
from ..rate_summary import rate_summary
from .compare_page import build_compare
from .files import CSV_COLUMNS, results_json, write_outputs
from .fmt import fmt_ms, fmt_number, fmt_ratio
from .page import build_page
from .render import render_html
from .machines import machines_line
from .terminal import closing_lines, compare_table, summary_table
from .compare_words import compare_summary
from .variantpage import variant_lines
from .words import verdict_line

__all__ = [
    "CSV_COLUMNS",
    "Built",
    "build",
    "build_compare",
    "build_page",
    "compare_summary",
    "compare_table",
    "fmt_ms",
    "fmt_number",
    "fmt_ratio",
    "render_html",
    "results_json",
    "summary_table",
    "write_outputs",
]


@dataclass(frozen=True)
class Built:
    """What `build` produced, for the CLI to print."""

    run_path: Path
    paths: dict[str, Path]
    status: str  # worst check status
    failures: tuple[Check, ...]
    summary: str
    closing: str = ""  # warning count and the verdict line, printed last

    @property
    def exit_code(self) -> int:
        """Return 0 when every check passed or warned, 1 when one failed."""
        return 1 if self.failures else 0


def build(raw: str | Path, out_dir: str | Path, generated_at: datetime, expect_header_bytes: int | None = None) -> Built:
    """Read a run, check it, analyse it and write index.html, results.csv and results.json."""
    out_dir = Path(out_dir)
    done = load_analysis(raw, expect_header_bytes)
    run, checked, table, analysis = done.run, done.checks, done.table, done.analysis
    page = build_page(run, checked, table, analysis, out_dir, generated_at)
    paths = write_outputs(out_dir, render_html(page), table, results_json(run, checked, table, analysis, generated_at))
    warnings = len(analysis.noise) + sum(c.status == "warn" for c in checked.checks)
    closing = closing_lines(verdict_line(analysis), warnings, len(checked.failures))
    fixed_rate = rate_summary(run.rates, list(analysis.setups))  # open loop, one line per rate
    variant = variant_lines(run.manifest, analysis)  # --variant: the A/B figures
    summary = "\n".join(filter(None, [machines_line(run.manifest), summary_table(analysis, table), fixed_rate, variant]))
    return Built(run.path, paths, checked.status, checked.failures, summary, closing)

