"""Compare page: two runs -> the comparison's page data (title, headline, chart, badges, links), compare.html and compare.json."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

import jinja2

from .. import __version__
from ..analysis.analyze import load_analysis
from ..analysis.cells import several_levels
from ..charts import changes as change_chart
from ..compare.common_rate import CURVE_METHOD
from ..compare.rate_changes import RATE_METHOD, VARIANT_RATE_METHOD
from ..compare.two_runs import FIGURES, RunComparison, compare
from ..compare.variants import DRIFT_NOTE, variant_comparison
from ..core.errors import NothingToCompare, RefusedFile
from ..parsers.rawfile import MiB, read_bytes
from ..runs.directory import Run, real_path
from .compare_words import (
    CHANGE_KINDS,
    change_amount,
    change_kind,
    change_sentence,
    compare_summary,
    compare_title,
    detectable_sentence,
    detectable_text,
    figure_text,
)
from .evidence import link
from .files import write_texts
from .fmt import display, group_name
from .render import environment
from .words import BAND_TEXT, SAME_HIGH, SAME_LOW

REPORT_JSON_CAP = 64 * MiB  # a sweep's results.json is about 1 MB
MAX_REPORT_DIRS = 200  # subdirectories of a reports/ folder looked into for a run's report


@dataclass(frozen=True)
class ChangeRow:
    """One line of the comparison table."""

    group: str
    setup: str
    what: str
    a: str
    b: str
    change: str
    kind: str  # better | worse | same | inconclusive | no-interval | none: the badge's class
    badge: str  # the badge's word
    verdict: str

    @property
    def flagged(self) -> bool:
        """Return True when the interval excludes 1.0 (better or worse)."""
        return self.kind in ("better", "worse")


@dataclass(frozen=True)
class RunLink:
    """One run as the page links it: its report when one exists, always its raw folder."""

    name: str
    report: str | None  # relative href of its index.html
    raw: str  # relative href of the run directory
    status: str  # worst check status


@dataclass(frozen=True)
class ComparePage:
    """Everything the comparison page shows."""

    title: str  # what differs: 'Upstream keep-alive on vs off'
    generated_at: str
    version: str
    a: RunLink
    b: RunLink
    headline: str
    sentences: tuple[tuple[str, str], ...]  # (kind, sentence) per flagged change, then notes (kind "")
    method: str
    rows: tuple[ChangeRow, ...]
    only: tuple[str, ...]
    differences: tuple[tuple[str, str, str], ...]
    chart_caption: str
    rate_rows: tuple[tuple[str, ...], ...] = ()  # the fixed-rate phase's added latencies, B - A (rate_rows)
    rate_method: str = ""
    curve_rows: tuple[
        tuple[str, ...], ...
    ] = ()  # runs at different rates: added latencies read at a common rate on each run's curve (curve_rows)
    curve_method: str = CURVE_METHOD
    kind: str = "comparison of two runs"  # or, one run with --variant: its in-run A/B
    differences_title: str = "What differs between the runs"
    drift_note: str = ""  # one run: why drift cancels
    drift: str = ""  # two runs: every req/s moved together while the ratios held (compare.two_runs.machine_drift), else ''
    detectable: str = ""  # per kind of figure, the smallest change its intervals could have flagged


def change_rows(result: RunComparison, several: bool) -> list[ChangeRow]:
    """Return the comparison table rows."""
    rows = []
    for c in result.changes:
        fmt = figure_text(c.metric)
        kind = change_kind(c)
        if c.change is None:
            change, verdict = "-", c.note or ""
        elif c.ci_low is None:
            change, verdict = f"{c.change:.3f}", c.note or ""
        else:
            change = f"{c.change:.3f} ({c.ci_low:.3f}-{c.ci_high:.3f})"
            verdict = verdict_of(c, kind)
        rows.append(
            ChangeRow(
                group=group_name(c.gomaxprocs, c.connections, several),
                setup=c.setup,
                what=c.label + (" (geometric mean)" if c.metric != "overhead_ratio" else ""),
                a=f"{fmt(c.a)} (n={c.n_a})",
                b=f"{fmt(c.b)} (n={c.n_b})",
                change=change,
                kind=kind,
                badge=CHANGE_KINDS[kind],
                verdict=verdict,
            )
        )
    return rows


def rate_rows(changes) -> list[tuple[str, ...]]:
    """Return the fixed-rate table's rows: where (GOMAXPROCS, offered load), setup and percentile, A and B's added ms, B - A with its interval, the verdict."""
    rows = []
    for c in changes:
        if c.ci_low is None:
            change, verdict = f"{c.change_ms:+.3f}", c.note or ""
        else:
            change = f"{c.change_ms:+.3f} ({c.ci_low:+.3f} to {c.ci_high:+.3f})"
            verdict = (
                ("WORSE: more added in B" if c.change_ms > 0 else "BETTER: less added in B")
                if c.flagged
                else "no change shown: the interval includes 0"
            )
        rows.append(
            (
                f"GOMAXPROCS={c.gomaxprocs}, {c.offered_rps:,} req/s",
                c.setup,
                f"added {c.percentile}",
                f"{c.a_ms:.3f} (n={c.blocks_a})",
                f"{c.b_ms:.3f} (n={c.blocks_b})",
                change,
                verdict,
            )
        )
    return rows


def curve_rows(changes) -> list[tuple[str, ...]]:
    """Return the interpolated table's rows: where (GOMAXPROCS, common rate), setup and percentile, A and B's added ms with where each comes from, B - A, why no verdict."""
    return [
        (
            f"GOMAXPROCS={c.gomaxprocs}, {c.offered_rps:,} req/s",
            c.setup,
            f"added {c.percentile}",
            f"{c.a_ms:.3f} ({c.a_from})",
            f"{c.b_ms:.3f} ({c.b_from})",
            f"{c.change_ms:+.3f}",
            "interpolated: no interval, not flagged",
        )
        for c in changes
    ]


def verdict_of(c, kind: str) -> str:
    """Return what a change with an interval says, by the rule set of `judge`, and the smallest change it could have flagged."""
    could = detectable_text(c)
    if kind in ("better", "worse"):
        amount, interval, up = change_amount(c.change, c.ci_low, c.ci_high)
        direction = "higher" if up else "lower"
        return f"{kind.upper()}: {amount} {direction} in B ({interval}); {'higher' if FIGURES[c.metric].higher_is_better else 'lower'} is better"
    if kind == "same":
        return f"no change: the whole interval lies within {BAND_TEXT}" + (f"; {could}" if could else "")
    return (
        f"no change detected ({could}): the interval includes 1.0 but reaches outside {BAND_TEXT}"
        if could
        else f"inconclusive: the interval includes 1.0 but reaches outside {BAND_TEXT}"
    )


def change_marks(result: RunComparison, several: bool) -> list[change_chart.ChangeMark]:
    """Return the change chart's rows, one per figure of each cell both runs measured."""
    return [
        change_chart.ChangeMark(
            cell=f"{c.setup}, {group_name(c.gomaxprocs, c.connections, several)}",
            figure=c.label,
            change=c.change,
            low=c.ci_low,
            high=c.ci_high,
            kind=change_kind(c),
            note=c.note or "",
        )
        for c in result.changes
    ]


def chart_desc(result: RunComparison, several: bool) -> str:
    """Return the chart's <desc>: how many figures went which way, and the flagged ones."""
    kinds = [change_kind(c) for c in result.changes]
    counts = ", ".join(f"{kinds.count(k)} {CHANGE_KINDS[k]}" for k in CHANGE_KINDS if kinds.count(k))
    flagged = " ".join(change_sentence(c, several) for c in result.flagged)
    return f"B / A of {len(kinds)} figures on a log axis with 95% intervals; 1.0 = no change: {counts}. {flagged}".strip()


def report_of(run: Run, out_dir: Path) -> Path | None:
    """Return the index.html `wrkreport build` wrote for this run, where build puts it: --out (reports/) or a folder in it, beside raw/ or here.

    A report belongs to the run when its results.json names the same run: the same
    directory, or the same run id and start time (a run copied from another machine).
    """
    run_dir = real_path(run.path)
    bases = dict.fromkeys(real_path(p) for p in (out_dir, run_dir.parent.parent / "reports", run_dir.parent / "reports", Path("reports")))
    for base in bases:
        for folder in candidate_folders(base, run.run_id):
            if belongs(folder, run, run_dir):
                return folder / "index.html"
    return None


def candidate_folders(base: Path, run_id: str) -> list[Path]:
    """Return base, base/<run id> and the other folders directly in base (at most MAX_REPORT_DIRS), where a report may be."""
    try:
        inside = sorted(p for p in base.iterdir() if p.is_dir() and not p.is_symlink()) if base.is_dir() else []
    except OSError:
        inside = []
    return list(dict.fromkeys([base, base / run_id, *inside[:MAX_REPORT_DIRS]]))


def belongs(folder: Path, run: Run, run_dir: Path) -> bool:
    """Return True when folder holds a report (index.html and results.json) of this run."""
    if not (folder / "index.html").is_file():
        return False
    try:
        data = json.loads(read_bytes(folder / "results.json", REPORT_JSON_CAP))
        recorded = data["run"]
        started = (data.get("environment") or {}).get("started_at")
    except (RefusedFile, ValueError, KeyError, TypeError, AttributeError):
        return False
    if not isinstance(recorded, dict):
        return False
    path = recorded.get("path")
    if isinstance(path, str) and Path(path).is_absolute() and real_path(Path(path)) == run_dir:
        return True
    ours = run.record.started_at if run.record else None
    return recorded.get("run_id") == run.run_id and ours is not None and started == ours


def run_link(side, out_dir: Path) -> RunLink:
    """Return one run's links from a page in out_dir."""
    report = report_of(side.run, out_dir)
    return RunLink(side.run.run_id, link(report, out_dir) if report else None, link(side.run.path, out_dir), side.checks.status)


def in_run_words(result: RunComparison) -> dict:
    """Return the page's words for one run's in-run A/B: what it is, its differences' heading, why drift cancels."""
    variant = result.variant
    return {
        "kind": f"in-run A/B of one run: A its nginx setups, B their twins through variant {variant.name} ({variant.options_text})",
        "differences_title": "What the variant changes",
        "drift_note": DRIFT_NOTE,
    }


def drift_record(drift) -> dict | None:
    """Return compare.json's `machine_drift`: the rule's findings and its sentence ('' when not named); None for one run's A/B."""
    return None if drift is None else asdict(drift) | {"sentence": drift.sentence}


def cells_of(cells: tuple[tuple[int, int, str], ...]) -> str:
    """Return cells as 'go-http GOMAXPROCS=1 c100, ...' ('none' when there are none)."""
    return ", ".join(f"{s} GOMAXPROCS={g} c{c}" for g, c, s in cells) or "none"


def build_compare(
    raw_a: str | Path, raw_b: str | Path | None, out_dir: str | Path, generated_at: datetime, expect_header_bytes: int | None = None
):
    """Compare two runs, or one run's nginx setups with its --variant twins (raw_b None), and write compare.html and compare.json into out_dir; return (RunComparison, paths)."""
    out_dir = Path(out_dir)
    a, b, result = compared(raw_a, raw_b, expect_header_bytes)
    several = several_levels(a.analysis.groups + b.analysis.groups)
    page = page_of(a, b, result, several, generated_at, out_dir)
    marks, desc = change_marks(result, several), chart_desc(result, several)
    svgs = {
        layout: jinja2.utils.markupsafe.Markup(change_chart.change_chart(marks, (SAME_LOW, SAME_HIGH), desc, narrow=layout == "narrow"))
        for layout in ("wide", "narrow")
    }  # our own SVG only; CSS shows one of the two
    template = environment().get_template("compare.html")
    data = compare_json(a, b, result, page.title, generated_at)
    texts = {"compare.html": template.render(page=page, charts=svgs), "compare.json": json.dumps(data, indent=2, allow_nan=False) + "\n"}
    return result, write_texts(out_dir, texts, "the comparison")


def compared(raw_a: str | Path, raw_b: str | Path | None, expect_header_bytes: int | None):
    """Return the two analysed runs (the same one twice for a --variant run) and their comparison; NothingToCompare when no cell is in both."""
    if raw_b is None:
        a = b = load_analysis(raw_a, expect_header_bytes)
        result = variant_comparison(a)
        if not result.changes:
            raise NothingToCompare(
                f"{a.run.path}: no nginx setup and its --variant twin were measured at the same GOMAXPROCS and connections"
            )
    else:
        a, b = load_analysis(raw_a, expect_header_bytes), load_analysis(raw_b, expect_header_bytes)
        result = compare(a, b)
    if not result.changes:
        raise NothingToCompare(
            f"{a.run.path} and {b.run.path}: nothing to compare, no setup was measured at the same GOMAXPROCS and "
            f"connections in both runs (A: {cells_of(result.only_in_a)}; B: {cells_of(result.only_in_b)})"
        )
    return a, b, result


def page_of(a, b, result, several: bool, generated_at: datetime, out_dir: Path) -> ComparePage:
    """Return the compare page's data: the title, the summary sentences, the change table, the fixed-rate parts, the settings that differ."""
    summary = compare_summary(result, several)
    flagged_sentences = {change_sentence(c, several): change_kind(c) for c in result.flagged}
    in_run = result.variant is not None
    title = compare_title(result.differing, *result.names)
    return ComparePage(
        title=f"{title} (in-run A/B, variant {result.variant.name})" if in_run else title,
        generated_at=generated_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
        version=__version__,
        a=run_link(a, out_dir),
        b=run_link(b, out_dir),
        headline=summary[0],
        sentences=tuple((flagged_sentences.get(s, ""), s) for s in summary[1:]),
        method=result.method,
        rows=tuple(change_rows(result, several)),
        only=tuple(
            f"only in {side}: {s} at GOMAXPROCS={g}, {c} connections"
            for side, cells in (("A", result.only_in_a), ("B", result.only_in_b))
            for g, c, s in cells
        )
        + result.rate_only,
        differences=tuple((f"{section} {key}", display(va, key), display(vb, key)) for section, key, va, vb in result.differing),
        chart_caption=(
            f"Each row is one figure of one setup: B / A with its 95% interval, on a log scale so that 2x and 0.5x are "
            f"equally far from 1.0. Shaded: {SAME_LOW:.2f}-{SAME_HIGH:.2f}, where a whole interval means no change. "
            "Higher req/s and a higher ratio to go-http are better; lower p99 latency and lower server CPU per request are better."
        ),
        rate_rows=tuple(rate_rows(result.rate_changes)),
        curve_rows=tuple(curve_rows(result.curve_changes)),
        rate_method=VARIANT_RATE_METHOD if in_run else RATE_METHOD,  # one run: paired per block, no drift term
        drift=result.drift.sentence if result.drift else "",
        detectable=detectable_sentence(result.changes),
        **(in_run_words(result) if in_run else {}),
    )


def compare_json(a, b, result, title: str, generated_at: datetime) -> dict:
    """Return compare.json: the two runs, every change with its flags, the cells in one run only, the settings that differ, the fixed-rate changes."""
    in_run = result.variant is not None
    return {
        "schema": 1,
        "generated_at": generated_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "a": {"run_id": a.run.run_id, "path": str(a.run.path), "status": a.checks.status},
        "b": {"run_id": b.run.run_id, "path": str(b.run.path), "status": b.checks.status},
        "title": title,
        "method": result.method,
        "changes": [asdict(c) | {"flagged": c.flagged, "better": c.better, "kind": change_kind(c)} for c in result.changes],
        "only_in_a": [list(k) for k in result.only_in_a],
        "only_in_b": [list(k) for k in result.only_in_b],
        "differences": [list(d) for d in result.differences],
        "fixed_rate": [c.record() for c in result.rate_changes],  # added latency over go-http, B - A in ms (compare/rate_changes.py)
        "fixed_rate_only": list(result.rate_only),  # offered rates measured in one run only: not compared at that rate
        "fixed_rate_interpolated": [c.record() for c in result.curve_changes],  # at a common rate on each run's curve: B - A, no interval
        "machine_drift": drift_record(
            result.drift
        ),  # every req/s moved together while the ratios held (compare.two_runs.machine_drift); null for one run
        "in_run": in_run,  # one run: A its nginx setups, B their --variant twins, paired in the same rounds
        **({"variant": {"name": result.variant.name, "options": list(result.variant.options)}, "drift": DRIFT_NOTE} if in_run else {}),
    }
