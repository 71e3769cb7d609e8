"""Report: run + checks + analysis -> page data -> index.html, results.csv, results.json, terminal summary.

Numbers are computed in analysis/; here they are only put into words and tables. The
page is one self-contained file: CSS and SVG inline, no script, no network reference.
One module per job, each importing only those before it; importing the package itself loads
none of them (the names below come from their modules when first used), so fmt or words can
be imported without the analysis, pandas or matplotlib:

    fmt           figures and manifest values as short strings
    rate_summary  the fixed-rate phase's terminal lines (the driver's closing summary prints them too)
    words         the generated sentences (headline, verdicts) and the rule set they follow
    compare_words the comparison's title, headline and per-change sentences
    machines      the controller, target and clients of a run on several machines
    page          the plain dataclasses the report template gets
    render        jinja2 over the packaged templates
    files         results.json, results.csv, atomic writes
    compare_page  `wrkreport compare`: its page data, compare.html and compare.json
    answercells   the answer table's cells, one function per column
    answer        the answer box: one sentence, one table, the conditions (the page's and the terminal's)
    terminal      the text the CLI prints
    building      one run -> every output above (what `wrkreport build` calls)
"""

from __future__ import annotations

from importlib import import_module

# Each name the package offers -> the module of report/ that defines it.
EXPORTS = {
    "Built": "building",
    "build": "building",
    "build_compare": "compare_page",
    "build_page": "page",
    "compare_summary": "compare_words",
    "compare_table": "terminal",
    "CSV_COLUMNS": "files",
    "fmt_ms": "fmt",
    "fmt_number": "fmt",
    "fmt_ratio": "fmt",
    "render_html": "render",
    "results_json": "files",
    "answer_lines": "terminal",
    "write_outputs": "files",
}
__all__ = sorted(EXPORTS)


def __getattr__(name: str):
    """Return one of EXPORTS, imported from its module on first use (PEP 562)."""
    if name not in EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{EXPORTS[name]}", __name__), name)
