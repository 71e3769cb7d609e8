"""Page data: a checked, analysed run -> the plain dataclasses and strings the report template gets.

The template receives nothing live: every figure is already a string here, every link a
relative, percent-encoded path that no browser can read as a scheme (see `link`).
"""

from __future__ import annotations

from dataclasses import replace, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

import pandas as pd

from .. import __version__
from ..charts import saturation as charts
from ..charts import parallel
from ..analysis import reference
from ..analysis.analyze import CPU_METRIC, NO_BLOCKS_METHOD, RATIO_METHOD, THROUGHPUT, Analysed, Analysis
from ..core.latency_histogram import SHOWN_PERCENTILES
from ..core.setups import BASELINE, TLS_SETUP_IDS, baseline_of, divisor_words, backend_of, hello_world, other_front_ends, said_over, setup_description
from ..core.records import worst
from ..analysis.design import design_of, precision_of
from ..runs.directory import relative_to
from .evidence import CheckGroup, HeaderRow, MeasurementRow, check_groups, header_rows, link, measurement_rows
from .failures import failure_lines
from .machines import MachineTable, environment_rows, machine_tables_of, rtt_lines
from .study import load_generator, load_generator_of, study_reference, study_rows
from ..charts.rates import rate_chart
from .ratepage import RateSection, rate_section
from .variantpage import VariantSection, variant_section
from .answer import Answer, answer
from .tlspage import TlsSection, tls_section
from .h2page import H2Section, h2_section
from .fmt import display, fmt_mean, fmt_ms, fmt_number, fmt_range, fmt_ratio, fmt_share_of, group_name
from .words import comparison_text, comparison_verdict, headline, ratio_verdict, settings_sentence, sharing_sentence

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


# --- The dataclasses ---------------------------------------------------------------------


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
    cpu_ratio: str  # server CPU per request / go-http's, with its interval
    wrk_per_thread: str
    wrk_share: str
    ceiling: str


@dataclass(frozen=True)
class LatencyRow:
    """Exact latency percentiles of one cell, from its kept repeats' histograms merged."""

    group: str
    setup: str
    measurements: str
    latencies: str  # how many latencies the histograms recorded (wrk's corrected count)
    percentiles: tuple[str, ...]  # one per histogram.SHOWN_PERCENTILES, in ms
    max_ms: str


@dataclass(frozen=True)
class Page:
    """Everything the template shows, as strings and plain rows."""

    title: str
    generated_at: str
    version: str
    run_id: str
    run_path: str
    run_link: str
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
    precision: str = ""  # the precision target met or not, for blocked runs: part of the answer
    precision_badge: tuple[str, str] | None = None  # (pass | warn, 'met (+/-4.2%)'): beside the checks' badge; None without a target
    sharing: str = ""  # how wrk and the servers shared the CPUs ("" without CPU records)
    app_server: str = "Go"  # the server in Go's place in the CPU table: "Go", or "Go or Node" with node-http
    cpu_servers: str = "the Go server (or, for node-http, the Node process and its cluster workers)"  # whose CPU the CPU note counts
    divisor: str = "go-http's"  # whose figures the plain ratios divide by (core.setups.divisor_words)
    article: bool = True  # the 2013 article's section: False for a run of --app setups only (nothing of its hello world to compare)
    cpu: tuple[CpuRow, ...] = ()
    status_counts: str = ""  # '12 checks failed.'
    ratio_caption: str = ""
    prominent: tuple[str, ...] = ()  # warnings that question every figure, shown once at the top
    study_rows: tuple[tuple[str, str, str, str, str, str], ...] = ()  # the 2012 Go-vs-Node study, when node-http was measured
    study_note: str = ""
    latency_rows: tuple[LatencyRow, ...] = ()  # exact percentiles, when the run has wrk's histograms
    latency_percentiles: tuple[str, ...] = ()  # their column heads ('p50', ..., 'p99.9')
    machines: tuple[MachineTable, ...] = ()  # with --server-host / --client-hosts: every machine of the run
    network: tuple[str, ...] = ()  # the measured round trips between them, with their method
    tls: TlsSection | None = None  # the TLS setups, when measured
    h2: H2Section | None = None  # the HTTP/2 setups, when measured (report/h2page.py)
    rate: RateSection | None = None  # the fixed-rate phase (report/ratepage.py)
    variant: VariantSection | None = None  # --variant's A/B figures (report/variantpage.py)
    reference_caption: str = ""  # the ratio chart with the published ratios beside ours, in How it was measured
    saturation_words: str = ""  # how the throughput phase loaded the servers: 'wrk, 2 threads, 100 connections, 1 s per measurement'
    answer: Answer | None = None  # the top: one sentence, one table, the conditions (report/answer.py)
    badge: tuple[str, str] = ("pass", "checks: pass")  # the header's one status: the checks' and the precision target's (header_badge)
    backend: str = "Go"  # what nginx is in front of: "your app" in an --app run without go-http
    front: str = "nginx"  # who is in front: "a front end" in a run with HAProxy, Caddy or Apache httpd
    client: str = "wrk"  # the load generator named in the CPU table's heads: wrk, ab or h2load


# --- Run -> page data -----------------------------------------------------------------------


def chart_jobs(done: Analysed) -> dict[str, Callable[[], str]]:
    """Return the page's charts as independent drawings, name -> a job returning its SVG (parallel.run_all spreads them over the usable CPUs)."""
    analysis, latencies, rates, tls = done.analysis, done.latencies, list(done.rates), done.tls
    several, refs = analysis.several_levels, reference.article_ratios()
    study = reference.study_ratios() if reference.NODE_SETUP in analysis.setups else ()
    jobs = {
        "throughput": lambda: charts.throughput_chart(analysis),
        "ratios": lambda: charts.ratio_chart(over_go_http(analysis), (), ()),
        "latency": lambda: charts.latency_chart(analysis),
    }
    if any(map(hello_world, analysis.setups)):  # the 2013 article measured a hello world: nothing of it to set beside an app
        jobs["ratios_2013"] = lambda: charts.ratio_chart(over_go_http(analysis), refs, study, "ratios-2013")
    if several:
        jobs["sweep_throughput"] = lambda: charts.sweep_chart(analysis, THROUGHPUT, "throughput (requests/s)", "sweep-throughput")
        jobs["sweep_p99"] = lambda: charts.sweep_chart(analysis, "latency_p99_ms", "p99 latency (ms, log scale)", "sweep-p99")
    if analysis.sharing is not None:
        jobs["cpu"] = lambda: charts.cpu_chart(analysis)
    if latencies:
        jobs["latency_cdf"] = lambda: charts.cdf_chart(latencies, several)
    capacities = list(done.capacities)
    jobs.update({"fixed_rate": lambda: rate_chart(rates, capacities)} if any(c.held for c in rates) else {})
    if tls is not None:  # the TLS ratios alone (go-https / go-http, nginx's / go-https), no published markers
        jobs["tls"] = lambda: charts.ratio_chart(replace(analysis, cells=tuple(c for c in analysis.cells if c.setup in TLS_SETUP_IDS)), (), (), "tls",
                                                  "throughput relative to go-https (go-https: to go-http) at the same GOMAXPROCS")
    return jobs


def with_charts(page: Page, svg: dict[str, str]) -> Page:
    """Return the page with the charts of chart_jobs, drawn (building makes the page without them while they are drawn)."""
    return replace(page, charts=svg, article="ratios_2013" in svg)


def build_page(done: Analysed, out_dir: Path, generated_at: datetime, svg: dict[str, str] | None = None) -> Page:
    """Return the page data for one analysed run, its figures as load_analysis computed them put into strings and rows; svg: chart_jobs' drawn ({}: none yet, see with_charts), else drawn here."""
    run, report, table, analysis = done.run, done.checks, done.table, done.analysis
    latencies, rates, tls = done.latencies, list(done.rates), done.tls
    several, tool = analysis.several_levels, load_generator_of(run.parameters)
    refs, capacities = reference.article_ratios(), list(done.capacities)
    svg = parallel.run_all(chart_jobs(done)) if svg is None else svg
    manifest = run.manifest or {}
    front = "a front end" if other_front_ends(analysis.setups) else "nginx"  # who is in front, for the titles
    return with_charts(Page(
        title=f"wrkreport: {front} in front of {backend_of(run.parameters)}, run {run.run_id}",
        backend=backend_of(run.parameters),
        front=front,
        generated_at=generated_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
        version=__version__,
        run_id=run.run_id,
        run_path=relative_to(run.path, out_dir),
        run_link=link(run.path, out_dir),
        status=report.status,
        headline=headline(analysis),
        failures=tuple(failure_lines(report, run)),
        method=said_over(RATIO_METHOD, analysis.setups) if analysis.method == said_over(NO_BLOCKS_METHOD, analysis.setups) else analysis.method,  # block runs: their method and precision target
        charts=svg,
        results=tuple(result_rows(analysis, table, several)),
        ratios=tuple(ratio_rows(analysis, refs, several, load_generator(table))),
        comparisons=tuple(f"{group_name(c.gomaxprocs, c.connections, several)}: {comparison_text(c)} - " + comparison_verdict(c) for c in analysis.comparisons),
        noise=tuple(noise_groups(analysis)),
        prominent=tuple(w.message + "." for w in analysis.noise if w.kind in PROMINENT and w.setup is None),
        checks=tuple(check_groups(report, run, out_dir)),
        measurements=tuple(measurement_rows(run, table, out_dir, several)),
        headers=tuple(header_rows(run, out_dir)),
        environment=tuple(environment_rows(manifest, machine_tables := tuple(machine_tables_of(manifest)))),
        machines=machine_tables,
        network=tuple(rtt_lines(manifest)),
        parameters=tuple((k, parameter_value(k, v, run.manifest or {})) for k, v in run.parameters.items()),
        sysctl=tuple((k, "absent on this kernel" if v is None else display(v)) for k, v in sorted((manifest.get("sysctl") or {}).items())) if isinstance(manifest.get("sysctl"), dict) else (),
        nginx_v=str(manifest.get("nginx_V") or ""),
        reference_rows=tuple(
            (f"GOMAXPROCS={r.gomaxprocs}", r.setup, fmt_number(r.requests_per_sec), f"{r.ratio:.3f}") for r in refs
        ),
        reference_note=(
            f"{reference.article()['title']} ({reference.article()['published']}): {reference.article()['command']}, "
            f"{reference.article()['environment']['machine']}; nginx {reference.article()['environment']['nginx']}, "
            f"Go {reference.article()['environment']['go']}, wrk {reference.article()['environment']['wrk']}; one run per cell."
        ),
        setups=tuple((s, setup_description(s)) for s in analysis.setups),
        settings=settings_sentence(run.parameters),
        precision=analysis.precision_note,
        precision_badge=precision_badge(run.manifest),
        sharing=sharing_sentence(analysis, tool),
        app_server=charts.app_server(analysis),
        client=tool,
        divisor=divisor_words(analysis.setups),
        cpu_servers=cpu_servers(analysis.setups),
        cpu=tuple(cpu_rows(analysis, several)),
        ratio_caption=ratio_caption(analysis, ()),
        reference_caption=ratio_caption(analysis, refs),
        saturation_words=saturation_words(analysis, run.parameters),
        status_counts=f"{len(report.failures)} check{'s' if len(report.failures) != 1 else ''} failed.",
        study_rows=tuple(study_rows()) if reference.NODE_SETUP in analysis.setups else (),
        study_note=reference.study_note() if reference.NODE_SETUP in analysis.setups else "",
        latency_rows=tuple(latency_rows(latencies, several)),
        latency_percentiles=tuple(f"p{p:g}" for p in SHOWN_PERCENTILES),
        tls=tls_section(tls),
        h2=h2_section(done.h2),
        rate=rate_section(rates, run.parameters, analysis, capacities),
        variant=variant_section(run.manifest, analysis),
        answer=answer(analysis, rates, capacities, run.parameters, backend_of(run.parameters)),
        badge=header_badge(report.status, precision_badge(run.manifest)),
    ), svg)


def over_go_http(analysis: Analysis) -> Analysis:
    """Return the analysis without the setups divided by go-https (nginx-https, nginx-https-unix): they have the TLS chart."""
    return replace(analysis, cells=tuple(c for c in analysis.cells if baseline_of(c.setup) == BASELINE))


def latency_rows(latencies, several: bool) -> list[LatencyRow]:
    """Return one row of exact percentiles per cell with histograms."""
    return [
        LatencyRow(
            group=group_name(c.gomaxprocs, c.connections, several),
            setup=c.setup,
            measurements=str(c.measurements),
            latencies=fmt_number(c.histogram.count),
            percentiles=tuple(fmt_ms(v) for _, v in c.percentiles),
            max_ms=fmt_ms(c.max_ms),
        )
        for c in latencies
    ]


PROMINENT = ("client-cores",)  # run-wide, they question every figure: shown at the top, not in the list


def noise_groups(analysis: Analysis) -> list[NoiseGroup]:
    """Return the noise warnings grouped by kind, in the order of NOISE_TITLES (the run-wide prominent ones left to the top)."""
    shown = [w for w in analysis.noise if not (w.kind in PROMINENT and w.setup is None)]
    kinds = sorted({w.kind for w in shown}, key=lambda k: list(NOISE_TITLES).index(k) if k in NOISE_TITLES else len(NOISE_TITLES))
    return [NoiseGroup(NOISE_TITLES.get(k, k), tuple(w.message for w in shown if w.kind == k)) for k in kinds]


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
                total=fmt_mean(cell.metrics.get(CPU_METRIC)),
                cpu_ratio=fmt_ratio(analysis.ratio(cell.gomaxprocs, cell.connections, cell.setup, CPU_METRIC)),
                wrk_per_thread=fmt_share_of(cell.metrics.get("wrk_cpu_per_thread")),
                wrk_share=fmt_share_of(cell.metrics.get("wrk_cpu_share")),
                ceiling=fmt_ratio(ceiling) if ceiling else "-",
            )
        )
    return rows


def cell_figure(cell, metric: str) -> float | None:
    """Return the figure a cell is summarised by: the geometric mean over its repeats, as the ratios use (Spread.geometric, from the analysis)."""
    found = charts.geometric(cell.metrics.get(metric))
    return found.estimate if found else None


def result_rows(analysis: Analysis, table: pd.DataFrame, several: bool) -> list[ResultRow]:
    """Return one row per cell: geometric means over the repeats kept (as the ratios use), with the req/s range."""
    rows = []
    for cell in analysis.cells:
        statuses = table[(table["setup"] == cell.setup) & (table["gomaxprocs"] == cell.gomaxprocs) & (table["connections"] == cell.connections)]["check_status"]
        req = cell.metrics.get(THROUGHPUT)
        rows.append(
            ResultRow(
                group=group_name(cell.gomaxprocs, cell.connections, several),
                setup=cell.setup,
                n="not measured" if cell.not_measured else f"{cell.n}" + (f" (+{len(cell.excluded)} excluded)" if cell.excluded else ""),
                requests_per_sec=fmt_number(cell_figure(cell, THROUGHPUT)),
                requests_per_sec_range=fmt_range(req.minimum, req.maximum) if req and req.n > 1 else "-",
                latency_avg_ms=fmt_ms(cell_figure(cell, "latency_avg_ms")),
                latency_p50_ms=fmt_ms(cell_figure(cell, "latency_p50_ms")),
                latency_p99_ms=fmt_ms(cell_figure(cell, "latency_p99_ms")),
                latency_max_ms=fmt_ms(cell_figure(cell, "latency_max_ms")),
                socket_errors=fmt_number(cell.median("socket_errors")),
                ratio=fmt_ratio(analysis.ratio(cell.gomaxprocs, cell.connections, cell.setup)),
                status="not measured" if cell.not_measured else worst(statuses),
            )
        )
    return rows


def ratio_rows(analysis: Analysis, refs, several: bool, tool: str | None = None) -> list[RatioRow]:
    """Return one row per setup and group: throughput, p50 and p99 ratios, verdict, the 2013 figure (node-http: the 2012 study's)."""
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
                reference=study_reference(ratio.setup, ratio.gomaxprocs, tool) or ", ".join(f"{r.ratio:.3f} (at {r.gomaxprocs})" for r in ref) or "-",
                status="fail" if ratio.ratio is None else "pass",
            )
        )
    return rows


def cpu_servers(setups) -> str:
    """Return whose CPU the CPU note counts besides nginx's: the Go server (Node's processes for node-http), your app's whole session, or both."""
    go = "the Go server (or, for node-http, the Node process and its cluster workers)"
    app = "your app's whole session (its command and every process it started)"
    apps = [not hello_world(s) for s in setups]
    return app if apps and all(apps) else f"{go}, or {app} for its setups" if any(apps) else go


def ratio_caption(analysis: Analysis, refs) -> str:
    """Return the ratio chart's caption, naming only the GOMAXPROCS values this run has and where the article's sit."""
    text = said_over("Overhead ratio = setup's req/s / go-http's req/s at the same GOMAXPROCS (geometric mean of the paired repeats), "
                     "with its 95% interval where there are repeats. The dashed line is 1.0 (no overhead).", analysis.setups)
    ours = sorted({g for g, _ in analysis.groups})
    shown = sorted({r.gomaxprocs for r in refs for g in ours if charts.reference_matches(r.gomaxprocs, g)})
    if reference.NODE_SETUP in analysis.setups:
        text += (" On node-http's rows, hollow left and right triangles are the 2012 Go-vs-Node study's Node/Go ratios "
                 "(ab and webbench; its 1 CPU figures on our GOMAXPROCS=1 rows, its all-CPUs ones on the others).")
    if not shown:
        return text
    beside = []
    for article in shown:
        matching = [g for g in ours if charts.reference_matches(article, g)]
        marker = "hollow pentagons" if article == 1 else "hollow stars"
        where = "GOMAXPROCS=" + ", ".join(map(str, matching))
        beside.append(f"{marker} are its GOMAXPROCS={article} figures ({'all of its laptop' + chr(39) + 's threads, ' if article != 1 else ''}shown on our {where} rows)")
    return text + " The 2013 article's ratios: " + "; ".join(beside) + "."


def parameter_value(key: str, value, manifest: dict) -> str:
    """Return a run parameter for the page as what ran: `rates` given as shares says the rates they became, `rate_shares` as
    percentages (or that rates were given), `slo` as the objective in words.

    >>> parameter_value("rates", [], {"fixed_rate_plan": [{"gomaxprocs": 1, "rates": [5500], "basis": "25% of nginx-fcgi-unix's 22,000 req/s"}]})
    "5,500 req/s at GOMAXPROCS=1 (25% of nginx-fcgi-unix's 22,000 req/s)"
    >>> parameter_value("rate_shares", [0.25, 0.5], {}), parameter_value("rate_shares", [], {"parameters": {"rates": [900]}})
    ('25%, 50%', 'not used (rates given in req/s)')
    >>> parameter_value("slo", {"percentile": 99, "ms": 10.0}, {})
    'p99 within 10 ms'
    """
    plans = manifest.get("fixed_rate_plan")
    if key == "rates" and not value and isinstance(plans, list) and plans:
        said = [(", ".join(f"{r:,} req/s" for r in p.get("rates") or [] if isinstance(r, int)) or "no rate") + f" at GOMAXPROCS={p.get('gomaxprocs')}"
                + (f" ({p['basis']})" if isinstance(p.get("basis"), str) else "") for p in plans if isinstance(p, dict) and isinstance(p.get("gomaxprocs"), int)]
        return "; ".join(said) if said else display(value, key)
    if key == "rate_shares" and isinstance(value, list):
        if value and all(isinstance(v, (int, float)) for v in value):
            return ", ".join(f"{v:.0%}" for v in value)
        if not value and ((manifest.get("parameters") or {}).get("rates")):
            return "not used (rates given in req/s)"
    if key == "slo" and isinstance(value, dict) and isinstance(value.get("percentile"), (int, float)) and isinstance(value.get("ms"), (int, float)):
        return f"p{value['percentile']:g} within {value['ms']:g} ms"
    return display(value, key)


def precision_badge(manifest: dict | None) -> tuple[str, str] | None:
    """Return the header's precision badge: ('pass', 'met (+/-4.2%)') or ('warn', 'NOT met (+/-54%)'); None for a run without a target.

    A green 'checks: pass' must not stand alone above a precision target that was missed.

    >>> precision_badge({"precision": {"target_pct": 5.0, "met": False, "worst_half_width_pct": 54.2}})
    ('warn', 'NOT met (+/-54.2%)')
    >>> precision_badge({"precision": {"target_pct": 5.0, "met": True, "worst_half_width_pct": 4.2}}), precision_badge({})
    (('pass', 'met (+/-4.2%)'), None)
    >>> precision_badge({"parameters": {"smoke_test": True}, "precision": {"target_pct": 5.0, "met": False, "worst_half_width_pct": None}})
    ('warn', 'not aimed at: a smoke test (--quick), no intervals')
    """
    if design_of(manifest)["smoke_test"]:  # one measurement per cell: a target it never aimed at is not "missed"
        return "warn", "not aimed at: a smoke test (--quick), no intervals"
    record = precision_of(manifest)
    if record is None:
        return None
    worst = record["worst_half_width_pct"]
    said = "met" if record["met"] else "NOT met"
    undecided = [k for k, g in record["verdicts"].items() if isinstance(g, dict) and not g.get("decided") and not record["met"]]
    said += f": undecided at GOMAXPROCS={', '.join(undecided)}" if undecided else ""  # the verdict rule: the answer itself is missing
    return ("pass" if record["met"] else "warn"), said + (f" (+/-{worst:g}%)" if worst is not None else "")



def header_badge(checks: str, precision: tuple[str, str] | None) -> tuple[str, str]:
    """Return the header's one status badge: the checks' status, made 'warn' by a missed precision target, and both in words.

    A green badge must not stand above a precision target that was missed.

    >>> header_badge("pass", ("warn", "NOT met (+/-54%)"))
    ('warn', 'checks pass; precision target NOT met (+/-54%)')
    >>> header_badge("pass", ("pass", "met (+/-4.2%)")), header_badge("fail", None)
    (('pass', 'checks pass; precision target met (+/-4.2%)'), ('fail', 'checks fail'))
    """
    said = f"checks {checks}"
    if precision is None:
        return checks, said
    status = checks if checks == "fail" or precision[0] == "pass" else "warn"
    return status, f"{said}; precision target {precision[1]}"


def saturation_words(analysis: Analysis, parameters: dict) -> str:
    """Return how the throughput phase loaded the servers, in words: 'wrk with 100 connections, 2 threads, 1 s per measurement'."""
    tool = load_generator_of(parameters)
    levels = ", ".join(f"{c:,}" for c in sorted({c for _, c in analysis.groups}))
    threads = parameters.get("threads")
    duration = parameters.get("duration_s")
    said = f"{tool} with {levels} connections"
    said += f", {threads} threads" if isinstance(threads, int) and tool == "wrk" else ""
    return said + (f", {duration:g} s per measurement" if isinstance(duration, (int, float)) else "")
