"""Report: run + checks + analysis -> page data -> index.html, results.csv, results.json, terminal summary.

Numbers are computed in analyze.py; here they are only put into words and tables. The
page data are plain dataclasses and strings, so the template receives nothing live. The
page is one self-contained file: CSS and SVG inline, no script, no network reference.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import jinja2
import pandas as pd

from . import __version__, charts, reference
from .analyze import RATIO_METHOD, THROUGHPUT, Analysis, Comparison, load_analysis, several_levels
from .checks import CheckReport
from .errors import OutputError
from .model import BASELINE, NGINX_SETUPS, SETUP_DESCRIPTIONS, STATUSES, Check, Ratio, worst
from .run import COLUMNS, Run, relative_to

TEMPLATE = "report.html"
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
CHECK_TITLES = {
    "run-status": "Run completed",
    "readiness": "Setup became ready",
    "header-bytes": "Header block size (curl -sI)",
    "parse": "wrk output readable",
    "zero-requests": "Requests completed",
    "non-2xx": "Non-2xx/3xx responses",
    "same-response": "Same bytes per response everywhere",
    "socket-errors": "Socket errors",
    "wrk-exit": "wrk exit status",
    "cpu": "CPU records readable",
    "manifest": "manifest.json readable",
    "missing-file": "Files listed in the manifest present",
    "file-name": "File names understood",
}


# --- Page data ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ResultRow:
    """One cell of the results table, every figure formatted."""

    group: str
    setup: str
    n: str
    requests_per_sec: str
    requests_per_sec_range: str
    latency_avg_ms: str
    latency_p50_ms: str
    latency_p99_ms: str
    latency_max_ms: str
    socket_errors: str
    ratio: str
    status: str


@dataclass(frozen=True)
class RatioRow:
    """One ratio line: throughput and latency ratios of one setup in one group, and what they say."""

    group: str
    setup: str
    throughput: str
    p50: str
    p99: str
    n: str
    verdict: str
    reference: str
    status: str  # pass | warn | fail, for the row's colour


@dataclass(frozen=True)
class NoiseGroup:
    """The noise warnings of one kind."""

    title: str
    messages: tuple[str, ...]


@dataclass(frozen=True)
class CpuRow:
    """Server CPU per 1,000 requests of one cell, and what wrk used."""

    group: str
    setup: str
    go: str
    nginx: str
    total: str
    wrk_per_thread: str
    wrk_share: str
    ceiling: str


@dataclass(frozen=True)
class CheckRow:
    """One check on one subject."""

    status: str
    subject: str
    message: str
    link: str | None


@dataclass(frozen=True)
class CheckGroup:
    """All results of one check kind."""

    name: str
    title: str
    status: str
    counts: str
    rows: tuple[CheckRow, ...]


@dataclass(frozen=True)
class MeasurementRow:
    """One wrk run, traceable to its raw file."""

    anchor: str
    group: str
    setup: str
    repeat: int
    requests_per_sec: str
    latency_p99_ms: str
    bytes_per_response: str
    status: str
    excluded: str | None
    file: str
    link: str
    command: str
    raw_text: str


@dataclass(frozen=True)
class HeaderRow:
    """One header capture, as captured."""

    group: str
    setup: str
    size: str
    status_line: str
    link: str
    text: str


@dataclass(frozen=True)
class Page:
    """Everything the template shows, as strings and plain rows."""

    title: str
    generated_at: str
    version: str
    run_id: str
    run_path: str
    status: str
    headline: tuple[str, ...]
    failures: tuple[str, ...]
    method: str
    charts: dict[str, str]
    results: tuple[ResultRow, ...]
    ratios: tuple[RatioRow, ...]
    comparisons: tuple[str, ...]
    noise: tuple[NoiseGroup, ...]
    checks: tuple[CheckGroup, ...]
    measurements: tuple[MeasurementRow, ...]
    headers: tuple[HeaderRow, ...]
    environment: tuple[tuple[str, str], ...]
    parameters: tuple[tuple[str, str], ...]
    sysctl: tuple[tuple[str, str], ...]
    nginx_v: str
    reference_rows: tuple[tuple[str, str, str, str], ...]
    reference_note: str
    setups: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    settings: str = ""  # non-default knobs, in words ("" when none)
    sharing: str = ""  # how wrk and the servers shared the CPUs ("" without CPU records)
    cpu: tuple[CpuRow, ...] = ()


# --- Formatting --------------------------------------------------------------------------


def fmt_number(value: float | None, digits: int = 0) -> str:
    """Return a number with thousands separators, '-' when absent.

    >>> fmt_number(14812.345)
    '14,812'
    >>> fmt_number(None)
    '-'
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.{digits}f}"


def fmt_ms(value: float | None) -> str:
    """Return a latency in ms with 3 significant digits ('-' when absent).

    >>> fmt_ms(0.81495), fmt_ms(12.345), fmt_ms(1210.0)
    ('0.815', '12.3', '1,210')
    """
    if value is None or math.isnan(value):
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.{max(0, 2 - math.floor(math.log10(value)))}f}" if value > 0 else "0"


def fmt_ratio(ratio: Ratio | None) -> str:
    """Return '0.936 (0.921-0.950)', '0.936 (n=1, no interval)', or the exclusion.

    >>> fmt_ratio(Ratio("requests_per_sec", 1, "nginx-http", 0.9356, 0.921, 0.95, 5))
    '0.936 (0.921-0.950)'
    """
    if ratio is None:
        return "-"
    if ratio.ratio is None:
        return "-" if ratio.excluded and ratio.excluded.startswith("no ") and ratio.metric != THROUGHPUT else "excluded"
    if ratio.setup == ratio.baseline and ratio.metric == THROUGHPUT:
        return "1 (baseline)" if ratio.baseline == BASELINE else "1 (the ceiling)"
    if ratio.ci_low is None:
        return f"{ratio.ratio:.3f} (n={ratio.n}, no interval)"
    return f"{ratio.ratio:.3f} ({ratio.ci_low:.3f}-{ratio.ci_high:.3f})"


def fmt_share(ratio: Ratio) -> str:
    """Return a throughput ratio as a share of Go's: '94% (91-96%)', the range unbreakable."""
    if ratio.ci_low is None:
        return f"{ratio.ratio:.0%} (one repeat, no interval)" if ratio.n == 1 else f"{ratio.ratio:.0%}"
    return f"{ratio.ratio:.0%} ({ratio.ci_low * 100:.0f}\u2011{ratio.ci_high:.0%})"  # non-breaking hyphen


def group_name(gomaxprocs: int, connections: int, several_levels: bool) -> str:
    """Return how a group is named in the page."""
    return f"GOMAXPROCS={gomaxprocs}" + (f", {connections} connections" if several_levels else "")


# --- Words from numbers ------------------------------------------------------------------------


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


# --- Page ------------------------------------------------------------------------------------


def build_page(run: Run, report: CheckReport, table: pd.DataFrame, analysis: Analysis, out_dir: Path, generated_at: datetime) -> Page:
    """Return the page data for one run."""
    several = analysis.several_levels
    refs = reference.article_ratios()
    svg = {
        "throughput": charts.throughput_chart(analysis),
        "ratios": charts.ratio_chart(analysis, refs),
        "latency": charts.latency_chart(analysis),
    }
    if several:
        svg["sweep_throughput"] = charts.sweep_chart(analysis, THROUGHPUT, "throughput (requests/s)", "sweep-throughput")
        svg["sweep_p99"] = charts.sweep_chart(analysis, "latency_p99_ms", "p99 latency (ms, log scale)", "sweep-p99")
    if analysis.sharing is not None:
        svg["cpu"] = charts.cpu_chart(analysis)
    manifest = run.manifest or {}
    return Page(
        title=f"wrkreport: nginx in front of Go, run {run.run_id}",
        generated_at=generated_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
        version=__version__,
        run_id=run.run_id,
        run_path=relative_to(run.path, out_dir),
        status=report.status,
        headline=headline(analysis),
        failures=tuple(f"{c.name}: {c.message}" for c in report.failures),
        method=RATIO_METHOD,
        charts=svg,
        results=tuple(result_rows(analysis, table, several)),
        ratios=tuple(ratio_rows(analysis, refs, several)),
        comparisons=tuple(f"{group_name(c.gomaxprocs, c.connections, several)}: {comparison_text(c)} - " + comparison_verdict(c) for c in analysis.comparisons),
        noise=tuple(noise_groups(analysis)),
        checks=tuple(check_groups(report, run, out_dir)),
        measurements=tuple(measurement_rows(run, table, out_dir, several)),
        headers=tuple(header_rows(run, out_dir)),
        environment=tuple(environment_rows(manifest)),
        parameters=tuple((k, display(v)) for k, v in run.parameters.items()),
        sysctl=tuple((k, display(v)) for k, v in sorted((manifest.get("sysctl") or {}).items())) if isinstance(manifest.get("sysctl"), dict) else (),
        nginx_v=str(manifest.get("nginx_V") or ""),
        reference_rows=tuple(
            (f"GOMAXPROCS={r.gomaxprocs}", r.setup, fmt_number(r.requests_per_sec, 2), f"{r.ratio:.3f}") for r in refs
        ),
        reference_note=(
            f"{reference.article()['title']} ({reference.article()['published']}): {reference.article()['command']}, "
            f"{reference.article()['environment']['machine']}; nginx {reference.article()['environment']['nginx']}, "
            f"Go {reference.article()['environment']['go']}, wrk {reference.article()['environment']['wrk']}; one run per cell."
        ),
        setups=tuple((s, SETUP_DESCRIPTIONS.get(s, "")) for s in analysis.setups),
        settings=settings_sentence(run.parameters),
        sharing=sharing_sentence(analysis),
        cpu=tuple(cpu_rows(analysis, several)),
    )


NOISE_TITLES = {
    "few-repeats": "Too few repeats",
    "outlier": "Repeats far from their cell's median",
    "cold-start": "First repeat slower than the rest (warm-up too short?)",
    "spread": "Cells whose req/s spread over more than 10%",
    "wide-interval": "Ratios whose interval is wider than +/-5%",
    "client-saturated": "Load generator busy (90% or more of a CPU per wrk thread)",
    "client-cores": "Load generator short of cores",
    "near-ceiling": "go-http near the ceiling (nginx-static)",
}


def noise_groups(analysis: Analysis) -> list[NoiseGroup]:
    """Return the noise warnings grouped by kind, in the order of NOISE_TITLES."""
    kinds = sorted({w.kind for w in analysis.noise}, key=lambda k: list(NOISE_TITLES).index(k) if k in NOISE_TITLES else len(NOISE_TITLES))
    return [NoiseGroup(NOISE_TITLES.get(k, k), tuple(w.message for w in analysis.noise if w.kind == k)) for k in kinds]


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


def cpu_rows(analysis: Analysis, several: bool) -> list[CpuRow]:
    """Return CPU per 1,000 requests per cell, with 95% intervals of the mean over repeats."""
    if analysis.sharing is None:
        return []
    rows = []
    for cell in analysis.cells:
        ceiling = analysis.ceiling_ratio(cell.gomaxprocs, cell.connections, cell.setup)
        rows.append(
            CpuRow(
                group=group_name(cell.gomaxprocs, cell.connections, several),
                setup=cell.setup,
                go=fmt_mean(cell.metrics.get("cpu_go_ms_per_1k")),
                nginx=fmt_mean(cell.metrics.get("cpu_nginx_ms_per_1k")),
                total=fmt_mean(cell.metrics.get("cpu_server_ms_per_1k")),
                wrk_per_thread=fmt_share_of(cell.metrics.get("wrk_cpu_per_thread")),
                wrk_share=fmt_share_of(cell.metrics.get("wrk_cpu_share")),
                ceiling=fmt_ratio(ceiling) if ceiling else "-",
            )
        )
    return rows


def fmt_mean(spread) -> str:
    """Return 'mean (low-high)' of a spread in ms, '-' when absent."""
    if spread is None:
        return "-"
    interval = spread.interval
    if interval.low is None:
        return f"{fmt_ms(interval.estimate)} (n=1)"
    return f"{fmt_ms(interval.estimate)} ({fmt_ms(max(interval.low, 0.0))}-{fmt_ms(interval.high)})"


def fmt_share_of(spread) -> str:
    """Return a median fraction as a percentage, '-' when absent."""
    return "-" if spread is None else f"{spread.median:.0%}"


def comparison_verdict(c: Comparison) -> str:
    """Return what a head-to-head comparison says."""
    if c.distinguishable is None:
        return "one repeat, no interval"
    if c.distinguishable:
        return f"{c.setup_a} is faster (interval excludes 1.0)"
    return "cannot be told apart (interval includes 1.0)"


def result_rows(analysis: Analysis, table: pd.DataFrame, several: bool) -> list[ResultRow]:
    """Return one row per cell: medians over the repeats kept, with the req/s range."""
    rows = []
    for cell in analysis.cells:
        statuses = table[(table["setup"] == cell.setup) & (table["gomaxprocs"] == cell.gomaxprocs) & (table["connections"] == cell.connections)]["check_status"]
        req = cell.metrics.get(THROUGHPUT)
        rows.append(
            ResultRow(
                group=group_name(cell.gomaxprocs, cell.connections, several),
                setup=cell.setup,
                n="not measured" if cell.not_measured else f"{cell.n}" + (f" (+{len(cell.excluded)} excluded)" if cell.excluded else ""),
                requests_per_sec=fmt_number(cell.median(THROUGHPUT)),
                requests_per_sec_range=f"{fmt_number(req.minimum)}-{fmt_number(req.maximum)}" if req and req.n > 1 else "-",
                latency_avg_ms=fmt_ms(cell.median("latency_avg_ms")),
                latency_p50_ms=fmt_ms(cell.median("latency_p50_ms")),
                latency_p99_ms=fmt_ms(cell.median("latency_p99_ms")),
                latency_max_ms=fmt_ms(cell.median("latency_max_ms")),
                socket_errors=fmt_number(cell.median("socket_errors")),
                ratio=fmt_ratio(analysis.ratio(cell.gomaxprocs, cell.connections, cell.setup)),
                status="fail" if cell.not_measured else worst(statuses),
            )
        )
    return rows


def ratio_rows(analysis: Analysis, refs, several: bool) -> list[RatioRow]:
    """Return one row per setup and group: throughput, p50 and p99 ratios, verdict, the 2013 figure."""
    rows = []
    for ratio in analysis.ratios:
        if ratio.setup == BASELINE:
            continue
        ref = [r for r in refs if r.setup == ratio.setup and charts.reference_matches(r.gomaxprocs, ratio.gomaxprocs)]
        rows.append(
            RatioRow(
                group=group_name(ratio.gomaxprocs, ratio.connections, several),
                setup=ratio.setup,
                throughput=fmt_ratio(ratio),
                p50=fmt_ratio(analysis.ratio(ratio.gomaxprocs, ratio.connections, ratio.setup, "latency_p50_ms")),
                p99=fmt_ratio(analysis.ratio(ratio.gomaxprocs, ratio.connections, ratio.setup, "latency_p99_ms")),
                n=str(ratio.n),
                verdict=ratio_verdict(ratio),
                reference=", ".join(f"{r.ratio:.3f} (at {r.gomaxprocs})" for r in ref) or "-",
                status="fail" if ratio.ratio is None else "pass",
            )
        )
    return rows


def check_groups(report: CheckReport, run: Run, out_dir: Path) -> list[CheckGroup]:
    """Return the checks grouped by kind, worst first within each."""
    groups: dict[str, list[Check]] = {}
    for check in report.checks:
        groups.setdefault(check.name, []).append(check)
    found = []
    for name, checks in groups.items():
        checks = sorted(checks, key=lambda c: -STATUSES.index(c.status))  # fail, warn, pass
        counts = ", ".join(f"{sum(c.status == s for c in checks)} {s}" for s in ("pass", "warn", "fail") if any(c.status == s for c in checks))
        rows = tuple(
            CheckRow(c.status, subject(c), c.message, relative_to(run.path / c.file, out_dir) if c.file else None) for c in checks
        )
        found.append(CheckGroup(name, CHECK_TITLES.get(name, name), worst(c.status for c in checks), counts, rows))
    return found


def subject(check: Check) -> str:
    """Return what a check is about: 'nginx-http GOMAXPROCS=2 run 3', or 'the run'."""
    if check.setup is None:
        return "the run" if check.file is None else check.file
    text = f"{check.setup} GOMAXPROCS={check.gomaxprocs}"
    return text + (f" run {check.repeat}" if check.repeat is not None else "")


def measurement_rows(run: Run, table: pd.DataFrame, out_dir: Path, several: bool) -> list[MeasurementRow]:
    """Return every measurement with its raw text and a link to its file."""
    return [
        MeasurementRow(
            anchor="m-" + row.file.replace(".", "-"),
            group=group_name(row.gomaxprocs, row.connections, several),
            setup=row.setup,
            repeat=int(row.repeat),
            requests_per_sec=fmt_number(row.requests_per_sec, 2),
            latency_p99_ms=fmt_ms(none_if_nan(row.latency_p99_ms)),
            bytes_per_response=fmt_number(none_if_nan(row.bytes_per_response), 2),
            status=row.check_status,
            excluded=none_if_nan(row.excluded),
            file=row.file,
            link=relative_to(run.path / row.file, out_dir),
            command=row.command or "unknown (not in a manifest)",
            raw_text=run.texts.get(row.file, ""),
        )
        for row in table.itertuples(index=False)
    ]


def header_rows(run: Run, out_dir: Path) -> list[HeaderRow]:
    """Return every header capture, verbatim (CRLFs shown as they are)."""
    return [
        HeaderRow(
            group=f"GOMAXPROCS={h.gomaxprocs}",
            setup=h.setup,
            size=f"{h.size_bytes} bytes",
            status_line=h.status_line,
            link=relative_to(run.path / h.file, out_dir),
            text=h.text,
        )
        for h in sorted(run.headers, key=lambda h: (h.gomaxprocs, h.setup))
    ]


def environment_rows(manifest: dict) -> list[tuple[str, str]]:
    """Return the run's environment (machine, versions, limits, times) as label/value pairs."""
    if not manifest:
        return [("environment", "unknown: the run has no manifest.json")]
    rows = [
        ("run status", display(manifest.get("status")) + (f" ({manifest['reason']})" if manifest.get("reason") else "")),
        ("started", display(manifest.get("started_at"))),
        ("ended", display(manifest.get("ended_at"))),
        ("command", display(manifest.get("command"))),
    ]
    for section in ("machine", "versions"):
        values = manifest.get(section)
        if isinstance(values, dict):
            rows.extend((f"{section}: {k}", display(v)) for k, v in values.items())
    rows.append(("ulimit -n", display(manifest.get("ulimit_n"))))
    passes = manifest.get("passes")
    if isinstance(passes, list):
        for entry in passes:
            if isinstance(entry, dict):
                rows.append(
                    (f"GOMAXPROCS={entry.get('gomaxprocs')}", f"Go reported runtime.GOMAXPROCS(0) = {display(entry.get('go_reported_gomaxprocs'))}; order {display(entry.get('order'))}")
                )
    return rows


def display(value) -> str:
    """Return a manifest value for display (None as 'unknown', lists and dicts as JSON)."""
    if value is None:
        return "unknown"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(", ", ": "))
    return str(value)


def none_if_nan(value):
    """Return None for NaN/None, else value."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


# --- Rendering and files -------------------------------------------------------------------------


def environment() -> jinja2.Environment:
    """Return the jinja2 environment over the packaged templates (autoescaping always on)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("wrkreport.templates", "."),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["setup_description"] = lambda s: SETUP_DESCRIPTIONS.get(s, "")
    return env


def render_html(page: Page) -> str:
    """Return the page as one self-contained HTML document."""
    template = environment().get_template(TEMPLATE)
    charts_html = {name: jinja2.utils.markupsafe.Markup(svg) for name, svg in page.charts.items()}  # our own SVG only
    return template.render(page=page, charts=charts_html)


def results_json(run: Run, report: CheckReport, table: pd.DataFrame, analysis: Analysis, generated_at: datetime) -> dict:
    """Return results.json: measurements, ratios, checks, environment, reference."""
    return {
        "schema": 1,
        "generated_at": generated_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "wrkreport_version": __version__,
        "run": {"run_id": run.run_id, "status": run.status, "path": str(run.path)},
        "status": report.status,
        "measurements": measurement_records(table),
        "ratios": [ratio_record(r) for r in analysis.ratios],
        "latency_ratios": [ratio_record(r) for r in analysis.latency_ratios],
        "comparisons": [asdict(c) | {"distinguishable": c.distinguishable} for c in analysis.comparisons],
        "cells": [cell_record(c) for c in analysis.cells],
        "checks": [asdict(c) for c in report.checks],
        "expected_header_bytes": report.expected_header_bytes,
        "response_bytes_agreed": report.response_bytes,
        "noise": [asdict(w) for w in analysis.noise],
        "method": analysis.method,
        "environment": {k: (run.manifest or {}).get(k) for k in ("machine", "versions", "ulimit_n", "sysctl", "nginx_V", "parameters", "command", "started_at", "ended_at", "passes")},
        "reference": {"article_2013": [asdict(r) for r in reference.article_ratios()]},
    }


def ratio_record(ratio: Ratio) -> dict:
    """Return a ratio as results.json has it (the documented keys first)."""
    return {
        "gomaxprocs": ratio.gomaxprocs,
        "setup": ratio.setup,
        "ratio": ratio.ratio,
        "ci_low": ratio.ci_low,
        "ci_high": ratio.ci_high,
        "n": ratio.n,
        "excluded": ratio.excluded,
        "metric": ratio.metric,
        "connections": ratio.connections,
        "includes_one": ratio.includes_one,
    }


def cell_record(cell) -> dict:
    """Return one cell's spreads as plain numbers."""
    metrics = {}
    for name, spread in cell.metrics.items():
        if spread is None:
            metrics[name] = None
            continue
        metrics[name] = {
            "n": spread.n,
            "median": spread.median,
            "min": spread.minimum,
            "max": spread.maximum,
            "mad": spread.mad,
            "mean": spread.interval.estimate,
            "mean_ci_low": spread.interval.low,
            "mean_ci_high": spread.interval.high,
            "values": list(spread.values),
        }
    return {
        "gomaxprocs": cell.gomaxprocs,
        "connections": cell.connections,
        "setup": cell.setup,
        "repeats": list(cell.repeats),
        "excluded": [{"repeat": r, "reason": why} for r, why in cell.excluded],
        "metrics": metrics,
    }


CSV_COLUMNS = (*COLUMNS, "check_status", "excluded")


def measurement_records(table: pd.DataFrame) -> list[dict]:
    """Return the measurement rows as JSON-ready dicts (NaN as None)."""
    records = []
    for row in table[list(CSV_COLUMNS)].to_dict(orient="records"):
        records.append({k: none_if_nan(v) if not isinstance(v, (int, str)) else v for k, v in row.items()})
    for record in records:
        for key in ("exit_code",):
            if record[key] is not None:
                record[key] = int(record[key])
    return records


def write_outputs(out_dir: Path, html: str, table: pd.DataFrame, data: dict) -> dict[str, Path]:
    """Write index.html, results.csv and results.json into out_dir (each via a temporary file)."""
    texts = {
        "index.html": html,
        "results.csv": table[list(CSV_COLUMNS)].to_csv(index=False, lineterminator="\n"),
        "results.json": json.dumps(data, indent=2, allow_nan=False, default=json_default) + "\n",
    }
    return write_texts(out_dir, texts, "the report")


def write_texts(out_dir: Path, texts: dict[str, str], what: str) -> dict[str, Path]:
    """Write each named text into out_dir (each via a temporary file); return name -> path."""
    paths = {name: out_dir / name for name in texts}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            write_atomic(paths[name], text)
    except OSError as exc:
        raise OutputError(f"cannot write {what} to {out_dir}: {exc.strerror or exc}") from None
    return paths


def json_default(value):
    """Convert numpy scalars for json.dumps."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serialisable: {value!r}")


def write_atomic(path: Path, text: str) -> None:
    """Write text to path through a temporary file in the same directory."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


# --- Terminal --------------------------------------------------------------------------------------


def summary_table(analysis: Analysis, table: pd.DataFrame) -> str:
    """Return the compact terminal table: setup x GOMAXPROCS, req/s, p99, ratio with interval, checks."""
    several = analysis.several_levels
    header = ("group", "setup", "n", "req/s", "p99 ms", "ratio (95% CI)", "checks")
    rows = [(r.group, r.setup, r.n, r.requests_per_sec, r.latency_p99_ms, r.ratio, r.status) for r in result_rows(analysis, table, several)]
    return text_table(header, rows, right={2, 3, 4})


def text_table(header: tuple[str, ...], rows: list[tuple[str, ...]], right: set[int] = frozenset()) -> str:
    """Return rows under header as aligned columns (right-aligned where their index is in right)."""
    rows = [header, *rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ("  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows)
    return "\n".join(line.rstrip() for line in lines)


# --- The whole step: raw run -> report files ------------------------------------------------------


@dataclass(frozen=True)
class Built:
    """What `build` produced, for the CLI to print."""

    run_path: Path
    paths: dict[str, Path]
    status: str  # worst check status
    failures: tuple[Check, ...]
    summary: str

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
    return Built(run.path, paths, checked.status, checked.failures, summary_table(analysis, table))


# --- wrkreport compare: two runs, one page ---------------------------------------------------------


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


def compare_summary(result) -> tuple[str, ...]:
    """Return the comparison's answer in sentences."""
    flagged = result.flagged
    total = sum(1 for c in result.changes if c.change is not None)
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


def build_compare(raw_a: str | Path, raw_b: str | Path, out_dir: str | Path, generated_at: datetime, expect_header_bytes: int | None = None):
    """Compare two runs and write compare.html and compare.json into out_dir; return (RunComparison, paths)."""
    from .compare import compare

    out_dir = Path(out_dir)
    a, b = load_analysis(raw_a, expect_header_bytes), load_analysis(raw_b, expect_header_bytes)
    result = compare(a, b)
    several = several_levels(a.analysis.groups + b.analysis.groups)
    page = ComparePage(
        title=f"wrkreport: run {a.run.run_id} against run {b.run.run_id}",
        generated_at=generated_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
        version=__version__,
        a_name=a.run.run_id,
        b_name=b.run.run_id,
        a_link=relative_to(a.run.path, out_dir),
        b_link=relative_to(b.run.path, out_dir),
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


def compare_table(result) -> str:
    """Return the terminal table of a comparison."""
    several = several_levels(result.a.analysis.groups + result.b.analysis.groups)
    header = ("group", "setup", "figure", "A", "B", "B / A (95% CI)", "")
    rows = [(r.group, r.setup, r.what, r.a, r.b, r.change, "CHANGED" if r.flagged else "") for r in change_rows(result, several)]
    return text_table(header, rows)
