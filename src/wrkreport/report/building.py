"""Build: one run -> checks, analysis, page -> index.html, results.csv, results.json and the terminal summary."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..analysis.analyze import load_analysis
from ..charts import parallel
from ..core.records import Check
from .files import csv_text, json_text, results_json, write_texts
from .machines import machines_line
from .page import build_page, chart_jobs, with_charts
from .render import render_html
from .terminal import answer_lines, closing_line
from .variantpage import variant_lines


@dataclass(frozen=True)
class Built:
    """What `build` produced, for the CLI to print."""

    run_path: Path
    paths: dict[str, Path]
    status: str  # worst check status
    failures: tuple[Check, ...]
    summary: str  # the page's answer (the sentence, the table, the conditions), the machines line and the A/B lines before and after it
    closing: str = ""  # the report's path with the warnings and failed checks counted, printed last

    @property
    def exit_code(self) -> int:
        """Return 0 when every check passed or warned, 1 when one failed."""
        return 1 if self.failures else 0


def build(raw: str | Path, out_dir: str | Path, generated_at: datetime, expect_header_bytes: int | None = None) -> Built:
    """Read a run, check it, analyse it and write index.html, results.csv and results.json."""
    out_dir = Path(out_dir)
    done = load_analysis(raw, expect_header_bytes)
    run, checked, table, analysis = done.run, done.checks, done.table, done.analysis
    # While forked children draw the charts, this process (the first job's) makes the rest of the page, results.csv and results.json.
    charts = chart_jobs(done)
    texts = parallel.run_all(
        {
            "here": lambda: (build_page(done, out_dir, generated_at, {}), csv_text(table), json_text(results_json(done, generated_at))),
            **charts,
        }
    )
    page, csv, data = texts["here"]
    page = with_charts(page, {name: texts[name] for name in charts})
    paths = write_texts(out_dir, {"index.html": render_html(page), "results.csv": csv, "results.json": data}, "the report")
    warnings = len(analysis.noise) + sum(c.status == "warn" for c in checked.checks)
    closing = closing_line(str(paths["index.html"]), warnings, len(checked.failures), page.precision_badge)
    answered = answer_lines(page.answer) if page.answer is not None else ""
    # where the servers and wrk ran (a run on several machines), then the answer, then --variant's A/B figures
    summary = "\n".join(filter(None, [machines_line(run.record), answered, variant_lines(run.record, analysis)]))
    return Built(run.path, paths, checked.status, checked.failures, summary, closing)
