"""Page data: a checked, analysed run -> the plain dataclasses and strings the report template gets.

The template receives nothing live: every figure is already a string here, every link a
relative, percent-encoded path that no browser can read as a scheme (see `link`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from .. import __version__
from ..analysis import reference
from ..analysis.analyze import THROUGHPUT, Analysed, Analysis
from ..charts import latency_curves, parallel
from ..charts import saturation as charts
from ..charts.rates import rate_chart
from ..core.setups import BASELINE, TLS_SETUP_IDS, baseline_of, hello_world
from .answer import Answer
from .evidence import CheckGroup, HeaderRow, MeasurementRow
from .h2page import H2Section
from .machines import MachineTable
from .page_sections import (
    CpuRow,
    LatencyRow,
    NoiseGroup,
    RatioRow,
    ResultRow,
    answer_section,
    checks_section,
    conditions_section,
    cpu_section,
    heading,
    latency_section,
    method_section,
    setup_sections,
    throughput_section,
)
from .ratepage import RateSection
from .tlspage import TlsSection
from .variantpage import VariantSection

# --- The dataclasses ---------------------------------------------------------------------


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
        jobs["sweep_throughput"] = lambda: latency_curves.sweep_chart(analysis, THROUGHPUT, "throughput (requests/s)", "sweep-throughput")
        jobs["sweep_p99"] = lambda: latency_curves.sweep_chart(analysis, "latency_p99_ms", "p99 latency (ms, log scale)", "sweep-p99")
    if analysis.sharing is not None:
        jobs["cpu"] = lambda: charts.cpu_chart(analysis)
    if latencies:
        jobs["latency_cdf"] = lambda: latency_curves.cdf_chart(latencies, several)
    capacities = list(done.capacities)
    jobs.update({"fixed_rate": lambda: rate_chart(rates, capacities)} if any(c.held for c in rates) else {})
    if tls is not None:  # the TLS ratios alone (go-https / go-http, nginx's / go-https), no published markers
        jobs["tls"] = lambda: charts.ratio_chart(
            replace(analysis, cells=tuple(c for c in analysis.cells if c.setup in TLS_SETUP_IDS)),
            (),
            (),
            "tls",
            "throughput relative to go-https (go-https: to go-http) at the same GOMAXPROCS",
        )
    return jobs


def with_charts(page: Page, svg: dict[str, str]) -> Page:
    """Return the page with the charts of chart_jobs, drawn (building makes the page without them while they are drawn)."""
    return replace(page, charts=svg, article="ratios_2013" in svg)


# The page, section by section: each builder returns the Page fields it fills.
SECTIONS = (
    heading,
    answer_section,
    throughput_section,
    latency_section,
    cpu_section,
    checks_section,
    method_section,
    conditions_section,
    setup_sections,
)


def build_page(done: Analysed, out_dir: Path, generated_at: datetime, svg: dict[str, str] | None = None) -> Page:
    """Return the page data for one analysed run: each section's fields from its builder (SECTIONS); svg: chart_jobs' drawn ({}: none
    yet, see with_charts), else drawn here."""
    svg = parallel.run_all(chart_jobs(done)) if svg is None else svg
    fields = {"generated_at": generated_at.strftime("%Y-%m-%d %H:%M:%S UTC"), "version": __version__, "charts": svg}
    for section in SECTIONS:
        fields.update(section(done, out_dir))
    return with_charts(Page(**fields), svg)


def over_go_http(analysis: Analysis) -> Analysis:
    """Return the analysis without the setups divided by go-https (nginx-https, nginx-https-unix): they have the TLS chart."""
    return replace(analysis, cells=tuple(c for c in analysis.cells if baseline_of(c.setup) == BASELINE))
