"""Tests of wrkreport.report's figures (and charts): one statistic everywhere a cell is summarised (the ratios' geometric mean), every figure computed once by the analysis, fills at 3:1, and a readable environment table."""

from __future__ import annotations

import json
import math
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from helpers import FIXTURES, RUNS
from wrkreport.analysis.analyze import THROUGHPUT, load_analysis
from wrkreport.charts import latency_curves
from wrkreport.charts import saturation as charts
from wrkreport.charts import styles as chart_styles
from wrkreport.core.display import cut_words
from wrkreport.report.building import build
from wrkreport.report.compare_page import build_compare
from wrkreport.report.fmt import display, fmt_number
from wrkreport.report.machines import environment_rows
from wrkreport.report.page_sections import result_rows
from wrkreport.runs.record import record_of


@pytest.mark.parametrize("name", ["default-2cores", "sweep-all-setups", "fcgi-unix-502"])
def test_tables_show_the_geometric_mean_the_ratios_use(name):
    done = load_analysis(RUNS / name)
    rows = {(r.group, r.setup): r for r in result_rows(done.analysis, done.table, done.analysis.several_levels)}
    checked = 0
    for cell in done.analysis.cells:
        spread = cell.metrics.get(THROUGHPUT)
        if spread is None:
            continue
        expected = math.exp(sum(math.log(v) for v in spread.values) / spread.n)
        row = next(
            r
            for (g, s), r in rows.items()
            if s == cell.setup and g.startswith(f"GOMAXPROCS={cell.gomaxprocs}") and (str(cell.connections) in g or "connections" not in g)
        )
        assert row.requests_per_sec == fmt_number(expected)
        checked += 1
    assert checked


# What load_analysis computes once for every output: the fixed-rate cells, the merged latencies, the TLS part.
ANALYSIS_STEPS = ("rate_cells", "cell_latencies", "tls_part")


@pytest.mark.parametrize(
    "name, steps",
    [
        ("variant-nokeep", ["cell_latencies", "rate_cells", "tls_part"]),  # a fixed-rate phase and --variant twins
        ("tls-quick", ["cell_latencies", "rate_cells", "tls_part"]),
        ("quick-hist", ["cell_latencies", "rate_cells", "tls_part"]),  # wrk's histograms
    ],
)
def test_every_output_reads_the_one_analysis_and_computes_none_of_its_own(name, steps, tmp_path, monkeypatch):
    from wrkreport.analysis import analyze

    calls = []
    for step in ANALYSIS_STEPS:  # the analysis step's own calls, counted
        real = getattr(analyze, step)
        monkeypatch.setattr(analyze, step, lambda *a, _real=real, _step=step, **k: calls.append(_step) or _real(*a, **k))

    def again(*_, **__):
        raise AssertionError("an output computed a figure of the analysis again")

    for module in [m for n, m in sys.modules.items() if n.startswith("wrkreport") and m is not analyze]:
        for step in ANALYSIS_STEPS:  # every other binding, the defining modules' included: page, files, summary, compare ...
            if hasattr(module, step):
                monkeypatch.setattr(module, step, again)
    when = datetime(2026, 11, 22, 12, tzinfo=timezone.utc)
    build(RUNS / name, tmp_path / "report", when)  # the page, results.json and the terminal summary
    assert sorted(calls) == steps
    build_compare(RUNS / name, RUNS / name, tmp_path / "compare", when)  # two runs: one analysis each
    assert sorted(calls) == sorted(steps * 3)
    if name == "variant-nokeep":
        build_compare(RUNS / name, None, tmp_path / "ab", when)  # the in-run A/B
        assert sorted(calls) == sorted(steps * 4)


def test_the_throughput_whisker_never_goes_below_zero():
    from wrkreport.analysis.cells import Spread
    from wrkreport.core.stats import mean_interval

    values = (1_000.0, 30_000.0, 60_000.0)  # the arithmetic t interval of these reaches below zero
    spread = Spread(tuple(enumerate(values, 1)), 30_000.0, 1_000.0, 60_000.0, 29_000.0, mean_interval(list(values)))
    assert spread.interval.low < 0
    assert 0 < charts.geometric(spread).low < charts.geometric(spread).estimate


def test_every_bar_fill_has_3_to_1_contrast_against_the_page():
    for setup, (colour, _, _) in chart_styles.SETUP_STYLES.items():
        assert chart_styles.contrast(chart_styles.fill(colour)) >= 3.0, setup


def test_every_setup_has_a_look_of_its_own_and_a_twin_its_originals():
    from wrkreport.core.setups import SETUP_IDS

    assert set(SETUP_IDS) <= set(
        chart_styles.SETUP_STYLES
    )  # the TLS setups were all OTHER_STYLE's grey star: one legend swatch for six bars
    assert len({(marker, hatch) for _, marker, hatch in chart_styles.SETUP_STYLES.values()}) == len(chart_styles.SETUP_STYLES)
    assert len({hatch for _, _, hatch in chart_styles.SETUP_STYLES.values()}) == len(
        chart_styles.SETUP_STYLES
    )  # bars read apart in grey print
    colour, marker, hatch = chart_styles.setup_style("nginx-http~nokeep")
    assert (colour, marker) == chart_styles.SETUP_STYLES["nginx-http"][:2] and hatch == chart_styles.SETUP_STYLES["nginx-http"][
        2
    ] + chart_styles.VARIANT_HATCH
    assert chart_styles.setup_style("not-a-setup") == chart_styles.setup_style("x~y") == chart_styles.OTHER_STYLE


def test_environment_values_are_for_people():
    rows = dict(environment_rows(record_of(__import__("json").loads((RUNS / "default-2cores" / "manifest.json").read_text()))))
    assert rows["machine: memory bytes"] == "23.5 GiB"
    assert "25276502016" not in " ".join(rows.values()) and "unknown" not in " ".join(rows.values())
    assert display(False) == "no" and display(["go-http", "nginx-http"]) == "go-http, nginx-http" and display(None) == "not recorded"


def test_the_502_box_names_setup_gomaxprocs_502_and_the_socket_cause():
    from wrkreport.report.failures import failure_lines

    done = load_analysis(RUNS / "fcgi-unix-502")
    lines = failure_lines(done.checks, done.run)
    assert len(lines) == 2  # non-2xx and same-response, each over 6 measurements of one setup
    assert lines[0].startswith("nginx-fcgi-unix at GOMAXPROCS=1, 2: check 'Non-2xx/3xx responses' failed in 6 measurements.")
    assert "502 Bad Gateway" in lines[0] and "(13: Permission denied)" in lines[0] and "README, Pitfalls" in lines[0]
    assert "502" not in lines[1]  # the cause is given once per setup


def test_an_unmeasured_502_points_to_the_socket_too():
    from wrkreport.report.failures import failure_lines

    done = load_analysis(RUNS / "fcgi-unix-502-unmeasured")
    text = " ".join(failure_lines(done.checks, done.run))
    assert "nginx-fcgi-unix at GOMAXPROCS=1" in text and "'Unix socket permissions'" in text


def test_a_healthy_run_has_no_failure_lines():
    from wrkreport.report.failures import failure_lines

    done = load_analysis(RUNS / "default-2cores")
    assert failure_lines(done.checks, done.run) == []


def test_ratio_chart_marks_each_study_apart_and_the_caption_names_only_our_values():
    from wrkreport.analysis import reference
    from wrkreport.report.page_sections import ratio_caption

    sweep = load_analysis(RUNS / "sweep-all-setups").analysis  # GOMAXPROCS=2 only
    caption = ratio_caption(sweep, reference.article_ratios())
    assert "GOMAXPROCS=1" not in caption and "GOMAXPROCS=8 figures" in caption and "our GOMAXPROCS=2 rows" in caption
    assert charts.REFERENCE_MARKERS[1] != charts.REFERENCE_MARKERS[8]
    assert not set(charts.REFERENCE_MARKERS.values()) & {m for _, m, _ in chart_styles.SETUP_STYLES.values()}
    svg = charts.ratio_chart(load_analysis(RUNS / "default-2cores").analysis, reference.article_ratios())
    assert 'role="img"' in svg and "<title" in svg and "<desc" in svg
    assert "GOMAXPROCS=8 (all its laptop" in svg


def test_the_2012_study_sits_beside_node_http_only_with_markers_of_its_own():
    from wrkreport.analysis import reference
    from wrkreport.report.page_sections import ratio_caption

    node = load_analysis(FIXTURES / "ab" / "runs" / "go-node-gomaxprocs-1").analysis  # real ab run, GOMAXPROCS=1
    study = reference.study_ratios()
    assert not set(charts.STUDY_MARKERS.values()) & (
        {m for _, m, _ in chart_styles.SETUP_STYLES.values()} | set(charts.REFERENCE_MARKERS.values())
    )
    svg = charts.ratio_chart(node, reference.article_ratios(), study)
    assert "2012 Go-vs-Node study, Node/Go with ab" in svg and "2012 Go-vs-Node study, Node/Go with webbench" in svg
    assert "2012 Go-vs-Node" not in charts.ratio_chart(node, reference.article_ratios())
    assert "2012 Go-vs-Node" not in charts.ratio_chart(load_analysis(RUNS / "default-2cores").analysis, reference.article_ratios(), study)
    assert "hollow left and right triangles" in ratio_caption(node, reference.article_ratios())
    assert "2012" not in ratio_caption(load_analysis(RUNS / "default-2cores").analysis, reference.article_ratios())


def test_the_cpu_figures_name_node_only_in_runs_that_have_it():
    sweep = load_analysis(RUNS / "sweep-all-setups").analysis
    assert charts.app_server(sweep) == "Go"
    assert "Go grey, nginx hatched" in charts.cpu_chart(sweep)
    assert charts.app_server(load_analysis(FIXTURES / "ab" / "runs" / "go-node-gomaxprocs-1").analysis) == "Go or Node"


def test_each_chart_comes_in_a_wide_and_a_narrow_layout_that_never_shrinks_its_text_below_10_px():
    """A phone's layout 3.7 in wide beside the desktop's 8 in; each SVG's min-width is where its smallest text is 10 px on screen."""
    import re

    from wrkreport.charts.layout import MIN_TEXT_PX

    sweep = load_analysis(RUNS / "sweep-all-setups").analysis
    drawn = {
        "throughput": charts.throughput_chart(sweep),
        "cpu": charts.cpu_chart(sweep),
        "latency": charts.latency_chart(sweep),
        "sweep-p99": latency_curves.sweep_chart(sweep, "latency_p99_ms", "p99 latency (ms, log scale)", "sweep-p99"),
    }
    for name, svg in drawn.items():
        opened = re.findall(
            r'<svg [^>]*class="layout-(wide|narrow)"[^>]*aria-labelledby="([^ "]+)[^>]*style="min-width:(\d+)px" width="([0-9.]+)pt"', svg
        )
        assert [(layout, ids, float(width)) for layout, ids, _, width in opened] == [
            ("wide", f"{name}-title", 576.0),
            ("narrow", f"{name}-narrow-title", 266.4),
        ], name
        ids = re.findall(r'id="([^"]+)"', svg)
        assert len(ids) == len(set(ids)), f"{name}: an id used twice"
        for part, (_, _, min_width, width) in zip(svg.split("\n<svg ")[:2], opened):
            smallest = min(float(size) for size in re.findall(r"font-size: ([0-9.]+)px", part))
            assert smallest >= 8 and int(min_width) == round(float(width) * MIN_TEXT_PX / smallest), name
    assert (
        "server CPU time per 1,000 requests (ms)" in drawn["cpu"]
        and "Go grey, nginx hatched; whisker = 95% interval of the total" in drawn["cpu"]
    )


def test_log_axes_are_labelled_with_plain_numbers():
    import re

    svg = charts.latency_chart(load_analysis(RUNS / "default-2cores").analysis)
    labels = set(re.findall(r"<text[^>]*>([^<]*)</text>", svg))
    assert {"1", "2", "5", "10", "20"} <= labels  # 1-2-5 per decade, as plain numbers
    assert not any("10^" in label or "\u00d7" in label or "mathdefault" in label for label in labels)


def test_excluded_labels_are_cut_at_a_word():
    assert cut_words("excluded: every repeat was excluded (non-2xx: 118,554 of 118,554 responses)", 50).endswith("\u2026")
    assert not cut_words("excluded: every repeat was excluded (non-2xx: 118,554 of 118,554 responses)", 50)[:-1].endswith(("ex", "exclu"))


def test_noise_warnings_stay_sane():
    sweep = load_analysis(RUNS / "sweep-all-setups").analysis  # 3 repeats per cell
    outliers = [w.message for w in sweep.noise if w.kind == "outlier"]
    assert outliers and all("n=3 too small for a z-score" in m and "modified z-score" not in m for m in outliers)
    broken = load_analysis(RUNS / "fcgi-unix-502").analysis  # nginx-fcgi-unix: every repeat excluded
    assert not [w for w in broken.noise if w.kind == "few-repeats" and w.setup == "nginx-fcgi-unix"]
    assert not [w for w in sweep.noise + broken.noise if __import__("re").search(r"(\d\.\d\d)-\1\b", w.message)]


def test_the_run_wide_load_generator_warning_is_shown_once_at_the_top(tmp_path):
    from datetime import datetime, timezone

    from wrkreport.report import build

    build(RUNS / "sweep-all-setups", tmp_path, datetime(2026, 11, 22, tzinfo=timezone.utc))
    html = (tmp_path / "index.html").read_text()
    assert html.count("wrk ran more threads than there were cores free") == 1
    assert html.index('class="caution"') < html.index("<h2 id=")  # above every section


@pytest.mark.parametrize("kind", ["fifo", "symlink-out", "large"])
def test_the_failure_box_reads_the_nginx_log_safely(kind, tmp_path):
    """A copied-in run's nginx log may be a FIFO (would hang), a symlink out of the run, or huge: the box still comes."""
    import os
    import shutil

    from wrkreport.report.failures import failure_lines

    run_dir = tmp_path / "fcgi-unix-502"
    shutil.copytree(RUNS / "fcgi-unix-502", run_dir, symlinks=True)
    logs = sorted((run_dir / "logs").glob("nginx-error.gomaxprocs-*.log"))
    assert logs
    outside = tmp_path / "outside.log"
    outside.write_text("connect() to unix:/x failed (13: Permission denied)\n")
    for log in logs:
        log.unlink()
        if kind == "fifo":
            os.mkfifo(log)
        elif kind == "symlink-out":
            log.symlink_to(outside)
        else:
            log.write_bytes(b"x" * (8 << 20) + b"(13: Permission denied)")
    done = load_analysis(run_dir)
    lines = failure_lines(done.checks, done.run)
    assert lines[0].startswith("nginx-fcgi-unix at GOMAXPROCS=1, 2:")
    assert "(13: Permission denied)" not in lines[0]  # nothing read: not regular, outside the run, or past the first 64 KiB
    assert "'Unix socket permissions'" in lines[0]  # the generic cause instead


def test_the_rates_parameter_says_the_rates_measured_when_they_were_shares():
    import doctest

    from wrkreport.report import page
    from wrkreport.report.page_sections import parameter_value

    assert doctest.testmod(page).failed == 0
    plan = {
        "fixed_rate_plan": [
            {"gomaxprocs": 1, "rates": [5500], "basis": "25% of nginx-fcgi-unix's 22,000 req/s"},
            {"gomaxprocs": 2, "rates": [6200, 12400]},
        ]
    }
    assert parameter_value("rates", [], record_of(plan)) == (
        "5,500 req/s at GOMAXPROCS=1 (25% of nginx-fcgi-unix's 22,000 req/s); " "6,200 req/s, 12,400 req/s at GOMAXPROCS=2"
    )  # was 'none' for a run whose phase ran
    assert parameter_value("rates", [], record_of({})) == "none" and parameter_value("rates", [2000, 5000], record_of(plan)) == "2000, 5000"
    assert parameter_value("rates", [], record_of({"fixed_rate_plan": [{"gomaxprocs": "x"}]})) == "none"


def test_a_missed_precision_target_has_a_badge_beside_the_checks(tmp_path):
    run = Path(shutil.copytree(RUNS / "default-run-6", tmp_path / "raw" / "r"))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["precision"].update(met=False, worst_half_width_pct=54.2)
    (run / "manifest.json").write_text(json.dumps(manifest))
    build(run, tmp_path / "out", datetime(2026, 11, 26, tzinfo=timezone.utc))
    header = (tmp_path / "out" / "index.html").read_text().split("</header>")[0]
    assert (
        '<span class="status status-warn">checks pass; precision target NOT met (+/-54.2%)</span>' in header
    )  # one badge, never a green 'pass'


def test_a_smoke_test_says_so_in_its_badge_instead_of_a_missed_target(parsed_and_drawn_once_here, tmp_path):
    run = RUNS / "quick-hist"  # read in place: the session's analysis and charts of it
    assert json.loads((run / "manifest.json").read_text())["parameters"]["smoke_test"] is True
    build(run, tmp_path / "out", datetime(2026, 11, 27, tzinfo=timezone.utc))
    header = (tmp_path / "out" / "index.html").read_text().split("</header>")[0]
    assert "precision target not aimed at: a smoke test (--quick), no intervals" in header and "NOT met" not in header
