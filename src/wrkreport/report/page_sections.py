"""The page's sections, each built once from the analysed run: the heading, the answer, throughput, latency and capacity, CPU, the checks, the method and the conditions; each builder returns the Page fields it fills (page.SECTIONS is their order), with the rows its tables show."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..analysis import reference
from ..analysis.analyze import CPU_METRIC, NO_BLOCKS_METHOD, RATIO_METHOD, THROUGHPUT, Analysed, Analysis
from ..analysis.design import design_of, precision_of
from ..charts import saturation as charts
from ..core.latency_histogram import SHOWN_PERCENTILES
from ..core.records import worst
from ..core.setups import BASELINE, backend_of, divisor_words, hello_world, other_front_ends, said_over, setup_description
from ..runs.directory import relative_to
from ..runs.record import Parameters, RunRecord, record_of  # noqa: F401 - record_of: the doctests build records with it
from .answer import answer
from .evidence import check_groups, header_rows, link, measurement_rows
from .failures import failure_lines
from .fmt import display, fmt_mean, fmt_ms, fmt_number, fmt_range, fmt_ratio, fmt_share_of, group_name
from .h2page import h2_section
from .machines import environment_rows, machine_tables_of, rtt_lines
from .ratepage import rate_section
from .study import load_generator, load_generator_of, study_reference, study_rows
from .tlspage import tls_section
from .variantpage import variant_section
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


def heading(done: Analysed, out_dir: Path) -> dict:
    """Return the page's top: its title, the run it is of, the checks' status and the header's badge, the failures and warnings that
    question every figure."""
    run, report, analysis = done.run, done.checks, done.analysis
    front = "a front end" if other_front_ends(analysis.setups) else "nginx"  # who is in front, for the titles
    backend, badge = backend_of(run.parameters), precision_badge(run.record)
    return {
        "title": f"wrkreport: {front} in front of {backend}, run {run.run_id}",
        "backend": backend,
        "front": front,
        "run_id": run.run_id,
        "run_path": relative_to(run.path, out_dir),
        "run_link": link(run.path, out_dir),
        "status": report.status,
        "status_counts": f"{len(report.failures)} check{'s' if len(report.failures) != 1 else ''} failed.",
        "headline": headline(analysis),
        "failures": tuple(failure_lines(report, run)),
        "prominent": tuple(w.message + "." for w in analysis.noise if w.kind in PROMINENT and w.setup is None),
        "precision_badge": badge,
        "badge": header_badge(report.status, badge),
    }


def answer_section(done: Analysed, out_dir: Path) -> dict:
    """Return the answer (one sentence, one table: report/answer.py), the precision target met or not, and the non-default settings."""
    run, analysis = done.run, done.analysis
    return {
        "answer": answer(analysis, list(done.rates), list(done.capacities), run.parameters, backend_of(run.parameters)),
        "precision": analysis.precision_note,
        "settings": settings_sentence(run.parameters),
    }


def throughput_section(done: Analysed, out_dir: Path) -> dict:
    """Return the throughput figures: the results table, the ratios (with the 2013 article's beside them), the comparisons in words."""
    analysis, several, refs = done.analysis, done.analysis.several_levels, reference.article_ratios()
    return {
        "results": tuple(result_rows(analysis, done.table, several)),
        "ratios": tuple(ratio_rows(analysis, refs, several, load_generator(done.table))),
        "comparisons": tuple(
            f"{group_name(c.gomaxprocs, c.connections, several)}: {comparison_text(c)} - " + comparison_verdict(c)
            for c in analysis.comparisons
        ),
        "ratio_caption": ratio_caption(analysis, ()),
        "reference_caption": ratio_caption(analysis, refs),
        "divisor": divisor_words(analysis.setups),
    }


def latency_section(done: Analysed, out_dir: Path) -> dict:
    """Return the latency figures: exact percentiles from wrk's histograms, and the fixed-rate phase (latency at a fixed load, capacity)."""
    analysis = done.analysis
    return {
        "latency_rows": tuple(latency_rows(done.latencies, analysis.several_levels)),
        "latency_percentiles": tuple(f"p{p:g}" for p in SHOWN_PERCENTILES),
        "rate": rate_section(list(done.rates), done.run.parameters, analysis, list(done.capacities)),
    }


def cpu_section(done: Analysed, out_dir: Path) -> dict:
    """Return the CPU table (server CPU per request, what the load generator used) and how the load generator and servers shared the CPUs."""
    analysis, tool = done.analysis, load_generator_of(done.run.parameters)
    return {
        "cpu": tuple(cpu_rows(analysis, analysis.several_levels)),
        "cpu_servers": cpu_servers(analysis.setups),
        "app_server": charts.app_server(analysis),
        "client": tool,
        "sharing": sharing_sentence(analysis, tool),
    }


def checks_section(done: Analysed, out_dir: Path) -> dict:
    """Return the evidence: every check by kind, every measurement with its file, the header captures, the noise warnings."""
    run, several = done.run, done.analysis.several_levels
    return {
        "checks": tuple(check_groups(done.checks, run, out_dir)),
        "measurements": tuple(measurement_rows(run, done.table, out_dir, several)),
        "headers": tuple(header_rows(run, out_dir)),
        "noise": tuple(noise_groups(done.analysis)),
    }


def method_section(done: Analysed, out_dir: Path) -> dict:
    """Return how it was measured: the method, the load, the setups, and the published figures the run is set beside (2013, 2012)."""
    analysis, article = done.analysis, reference.article()
    setups, study = analysis.setups, reference.NODE_SETUP in analysis.setups
    environment = article["environment"]
    return {
        "method": said_over(RATIO_METHOD, setups)
        if analysis.method == said_over(NO_BLOCKS_METHOD, setups)
        else analysis.method,  # block runs: theirs
        "saturation_words": saturation_words(analysis, done.run.parameters),
        "setups": tuple((s, setup_description(s)) for s in setups),
        "reference_rows": tuple(
            (f"GOMAXPROCS={r.gomaxprocs}", r.setup, fmt_number(r.requests_per_sec), f"{r.ratio:.3f}") for r in reference.article_ratios()
        ),
        "reference_note": (
            f"{article['title']} ({article['published']}): {article['command']}, {environment['machine']}; nginx {environment['nginx']}, "
            f"Go {environment['go']}, wrk {environment['wrk']}; one run per cell."
        ),
        "study_rows": tuple(study_rows()) if study else (),
        "study_note": reference.study_note() if study else "",
    }


def conditions_section(done: Analysed, out_dir: Path) -> dict:
    """Return the conditions: the machines (and the round trips between them), the run's parameters, sysctl and nginx -V."""
    run = done.run
    record = run.record or RunRecord()
    machines = tuple(machine_tables_of(record))
    sysctl = record.sysctl
    return {
        "environment": tuple(environment_rows(run.record, machines)),
        "machines": machines,
        "network": tuple(rtt_lines(record)),
        "parameters": tuple((k, parameter_value(k, v, record)) for k, v in run.parameters.listed),
        "sysctl": tuple((k, "absent on this kernel" if v is None else display(v)) for k, v in sorted(sysctl.items()))
        if sysctl is not None
        else (),
        "nginx_v": str(record.nginx_v or ""),
    }


def setup_sections(done: Analysed, out_dir: Path) -> dict:
    """Return the sections of the setups beyond the plain four: TLS, HTTP/2, --variant's A/B."""
    return {"tls": tls_section(done.tls), "h2": h2_section(done.h2), "variant": variant_section(done.run.record, done.analysis)}


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
        statuses = table[
            (table["setup"] == cell.setup) & (table["gomaxprocs"] == cell.gomaxprocs) & (table["connections"] == cell.connections)
        ]["check_status"]
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
                reference=study_reference(ratio.setup, ratio.gomaxprocs, tool)
                or ", ".join(f"{r.ratio:.3f} (at {r.gomaxprocs})" for r in ref)
                or "-",
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
    text = said_over(
        "Overhead ratio = setup's req/s / go-http's req/s at the same GOMAXPROCS (geometric mean of the paired repeats), "
        "with its 95% interval where there are repeats. The dashed line is 1.0 (no overhead).",
        analysis.setups,
    )
    ours = sorted({g for g, _ in analysis.groups})
    shown = sorted({r.gomaxprocs for r in refs for g in ours if charts.reference_matches(r.gomaxprocs, g)})
    if reference.NODE_SETUP in analysis.setups:
        text += (
            " On node-http's rows, hollow left and right triangles are the 2012 Go-vs-Node study's Node/Go ratios "
            "(ab and webbench; its 1 CPU figures on our GOMAXPROCS=1 rows, its all-CPUs ones on the others)."
        )
    if not shown:
        return text
    beside = []
    for article in shown:
        matching = [g for g in ours if charts.reference_matches(article, g)]
        marker = "hollow pentagons" if article == 1 else "hollow stars"
        where = "GOMAXPROCS=" + ", ".join(map(str, matching))
        beside.append(
            f"{marker} are its GOMAXPROCS={article} figures ({'all of its laptop' + chr(39) + 's threads, ' if article != 1 else ''}shown on our {where} rows)"
        )
    return text + " The 2013 article's ratios: " + "; ".join(beside) + "."


def parameter_value(key: str, value, record: RunRecord) -> str:
    """Return a run parameter for the page as what ran: `rates` given as shares says the rates they became, `rate_shares` as
    percentages (or that rates were given), `slo` as the objective in words.

    >>> parameter_value("rates", [], record_of({"fixed_rate_plan": [{"gomaxprocs": 1, "rates": [5500], "basis": "25% of nginx-fcgi-unix's 22,000 req/s"}]}))
    "5,500 req/s at GOMAXPROCS=1 (25% of nginx-fcgi-unix's 22,000 req/s)"
    >>> parameter_value("rate_shares", [0.25, 0.5], RunRecord()), parameter_value("rate_shares", [], record_of({"parameters": {"rates": [900]}}))
    ('25%, 50%', 'not used (rates given in req/s)')
    >>> parameter_value("slo", {"percentile": 99, "ms": 10.0}, RunRecord())
    'p99 within 10 ms'
    """
    if key == "rates" and not value and record.rate_plan:
        said = [
            (", ".join(f"{r:,} req/s" for r in p.rates) or "no rate")
            + f" at GOMAXPROCS={p.gomaxprocs}"
            + (f" ({p.basis})" if p.basis is not None else "")
            for p in record.rate_plan
        ]
        return "; ".join(said) if said else display(value, key)
    if key == "rate_shares" and isinstance(value, list):
        if value and all(isinstance(v, (int, float)) for v in value):
            return ", ".join(f"{v:.0%}" for v in value)
        if not value and record.parameters.rates:
            return "not used (rates given in req/s)"
    if (
        key == "slo"
        and isinstance(value, dict)
        and isinstance(value.get("percentile"), (int, float))
        and isinstance(value.get("ms"), (int, float))
    ):
        return f"p{value['percentile']:g} within {value['ms']:g} ms"
    return display(value, key)


def precision_badge(record: RunRecord | None) -> tuple[str, str] | None:
    """Return the header's precision badge: ('pass', 'met (+/-4.2%)') or ('warn', 'NOT met (+/-54%)'); None for a run without a target.

    A green 'checks: pass' must not stand alone above a precision target that was missed.

    >>> precision_badge(record_of({"precision": {"target_pct": 5.0, "met": False, "worst_half_width_pct": 54.2}}))
    ('warn', 'NOT met (+/-54.2%)')
    >>> precision_badge(record_of({"precision": {"target_pct": 5.0, "met": True, "worst_half_width_pct": 4.2}})), precision_badge(record_of({}))
    (('pass', 'met (+/-4.2%)'), None)
    >>> precision_badge(record_of({"parameters": {"smoke_test": True}, "precision": {"target_pct": 5.0, "met": False, "worst_half_width_pct": None}}))
    ('warn', 'not aimed at: a smoke test (--quick), no intervals')
    """
    if design_of(record)["smoke_test"]:  # one measurement per cell: a target it never aimed at is not "missed"
        return "warn", "not aimed at: a smoke test (--quick), no intervals"
    precision = precision_of(record)
    if precision is None:
        return None
    worst = precision["worst_half_width_pct"]
    said = "met" if precision["met"] else "NOT met"
    undecided = [k for k, g in precision["verdicts"].items() if isinstance(g, dict) and not g.get("decided") and not precision["met"]]
    said += f": undecided at GOMAXPROCS={', '.join(undecided)}" if undecided else ""  # the verdict rule: the answer itself is missing
    return ("pass" if precision["met"] else "warn"), said + (f" (+/-{worst:g}%)" if worst is not None else "")


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


def saturation_words(analysis: Analysis, parameters: Parameters) -> str:
    """Return how the throughput phase loaded the servers, in words: 'wrk with 100 connections, 2 threads, 1 s per measurement'."""
    tool = load_generator_of(parameters)
    levels = ", ".join(f"{c:,}" for c in sorted({c for _, c in analysis.groups}))
    threads = parameters.threads
    duration = parameters.duration_s
    said = f"{tool} with {levels} connections"
    said += f", {threads} threads" if isinstance(threads, int) and tool == "wrk" else ""
    return said + (f", {duration:g} s per measurement" if isinstance(duration, (int, float)) else "")
