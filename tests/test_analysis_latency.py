"""Tests of wrkreport.analysis.latency (cells pooled from wrk's histograms) and the histogram files of a run:
read beside each wrk file, refused or warned when hostile, shown as the CDF chart, the exact
percentile table and results.json."""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import datetime, timezone

import pytest

from helpers import RUNS
from wrkreport.analysis.analyze import load_analysis
from wrkreport.analysis.latency import cell_latencies
from wrkreport.core.latency_histogram import SHOWN_PERCENTILES, merge_pairs, percentile_us, rank_of
from wrkreport.parsers.histogram import hist_file_name
from wrkreport.report import build
from wrkreport.runs.directory import load_run

pytestmark = pytest.mark.usefixtures(
    "parsed_and_drawn_once"
)  # its builds read the session's analyses and charts of a run; its own load_analysis calls are real

WHEN = datetime(2026, 11, 23, 12, 0, 0, tzinfo=timezone.utc)
QUICK_HIST = RUNS / "quick-hist"
OKABE_ITO = {"go-http": "#000000", "nginx-http": "#0072b2", "nginx-fcgi-tcp": "#d55e00", "nginx-fcgi-unix": "#009e73"}


@pytest.fixture
def hist_run(tmp_path):
    """Return a private copy of the quick-hist run (a run directory with a .hist.json per measurement)."""
    run = tmp_path / "raw" / "quick-hist"
    shutil.copytree(QUICK_HIST, run)
    return run


def test_every_measurement_of_the_run_has_its_histogram():
    run = load_run(QUICK_HIST)
    assert set(run.histograms) == set(run.measurements["file"]) and len(run.histograms) == 8
    for name, histogram in run.histograms.items():
        assert histogram.source == hist_file_name(name)
        assert histogram.requests == run.measurements.set_index("file").loc[name, "requests"]


def test_a_single_repeat_cell_has_exactly_its_measurements_percentiles():
    analysed = load_analysis(QUICK_HIST)
    cells = cell_latencies(analysed.table, analysed.run.histograms)
    assert len(cells) == 8 and all(c.measurements == 1 for c in cells)
    for cell in cells:
        (name,) = analysed.table[(analysed.table["setup"] == cell.setup) & (analysed.table["gomaxprocs"] == cell.gomaxprocs)]["file"]
        own = analysed.run.histograms[name]
        for p in (50.0, 75.0, 90.0, 99.0, 99.9):
            assert cell.histogram.percentile_us(p) == own.wrk_percentiles_us[p]
        row = analysed.table.set_index("file").loc[name]
        assert cell.percentiles_ms()[99.0] == pytest.approx(row["latency_p99_ms"], abs=0.006)  # wrk printed it to 2 decimals


def test_repeats_of_a_cell_merge_and_an_excluded_one_is_left_out():
    analysed = load_analysis(QUICK_HIST)
    table = analysed.table.copy()
    go = table["setup"] == "go-http"
    table.loc[go, "gomaxprocs"] = 1  # pretend both go-http measurements are repeats of one cell
    cells = {(c.setup, c.gomaxprocs): c for c in cell_latencies(table, analysed.run.histograms)}
    pooled = cells[("go-http", 1)]
    names = list(table[go]["file"])
    both = [analysed.run.histograms[n] for n in names]
    assert pooled.measurements == 2 and pooled.histogram.count == sum(h.count for h in both)
    values = sorted(v for h in both for v, c in h.pairs for _ in range(c))
    assert pooled.histogram.percentile_us(99) == values[rank_of(99, len(values)) - 1]
    table.loc[table["file"] == names[0], "excluded"] = "a failed check"
    kept = {(c.setup, c.gomaxprocs): c for c in cell_latencies(table, analysed.run.histograms)}[("go-http", 1)]
    assert kept.measurements == 1 and kept.histogram.pairs == analysed.run.histograms[names[1]].pairs


def test_a_cell_missing_one_histogram_is_not_shown(hist_run):
    (hist_run / "go-http.gomaxprocs-1.block-1.run-1.hist.json").unlink()
    analysed = load_analysis(hist_run)
    cells = cell_latencies(analysed.table, analysed.run.histograms)
    assert ("go-http", 1) not in {(c.setup, c.gomaxprocs) for c in cells} and len(cells) == 7
    assert not [p for p in analysed.run.problems if p.name == "histogram"]  # an absent file is no problem


def test_a_broken_histogram_is_a_warned_check_and_the_measurement_still_counts(hist_run):
    name = "nginx-http.gomaxprocs-2.block-1.run-1.hist.json"
    (hist_run / name).write_text('{"format": "wrkreport-latency-histogram", "version": 1, "unit": "ms"}')
    run = load_run(hist_run)
    (problem,) = [p for p in run.problems if p.name == "histogram"]
    assert (problem.status, problem.file) == ("warn", name)
    assert problem.message == f"{name}: unit is 'ms', expected 'us' (microseconds); exact percentiles left out"
    assert len(run.measurements) == 8 and len(run.histograms) == 7


@pytest.mark.parametrize("kind", ["symlink-out", "fifo", "too-big"])
def test_a_hostile_histogram_file_is_refused_without_reading_it(hist_run, tmp_path, kind):
    name = "go-http.gomaxprocs-2.block-1.run-1.hist.json"
    target = hist_run / name
    target.unlink()
    if kind == "symlink-out":
        outside = tmp_path / "secret.json"
        outside.write_bytes((QUICK_HIST / name).read_bytes())
        target.symlink_to(outside)
        reason = "a symlink to a file outside the run directory; not read"
    elif kind == "fifo":
        os.mkfifo(target)
        reason = "a FIFO, not a regular file; not read"
    else:
        target.write_bytes(b" " * (16 * 1024 * 1024 + 1))
        reason = "larger than the 16 MiB a file of this kind may have; not read"
    run = load_run(hist_run)
    (problem,) = [p for p in run.problems if p.file == name]
    assert (problem.name, problem.status, problem.message) == ("refused", "warn", f"{name}: {reason}")
    assert len(run.histograms) == 7 and len(run.measurements) == 8


def test_the_page_shows_the_cdf_chart_and_the_exact_percentiles(hist_run, tmp_path):
    out = tmp_path / "report"
    build(hist_run, out, WHEN)
    page = (out / "index.html").read_text()
    svg = re.search(r'<svg [^>]*aria-labelledby="latency-cdf-title latency-cdf-desc".*?</svg>', page, re.S)
    assert svg is not None and 'role="img"' in svg[0] and 'style="min-width:' in svg[0]
    assert "Latency distribution per setup" in svg[0] and "latency (ms, log scale)" in svg[0]
    assert "GOMAXPROCS=1" in svg[0] and "GOMAXPROCS=2" in svg[0]
    strokes = {c.lower() for c in re.findall(r"stroke: ?(#[0-9a-fA-F]{6})", svg[0])}
    assert set(OKABE_ITO.values()) <= strokes
    assert '<h3 id="latency">Exact latency percentiles at saturation</h3>' in page  # in How it was measured
    section = page.split('<h3 id="latency">', 1)[1].split("<h3 ", 1)[0]
    assert re.findall(r'<th class="num">(p[0-9.]+) ms</th>', section) == ["p50", "p75", "p90", "p99", "p99.9"]
    assert section.count('<td class="setup">') == 8

    data = json.loads((out / "results.json").read_text())
    records = {(r["setup"], r["gomaxprocs"]): r for r in data["latency_histograms"]}
    assert len(records) == 8
    run = load_run(hist_run)
    go = run.histograms["go-http.gomaxprocs-1.block-1.run-1.wrk.txt"]
    record = records[("go-http", 1)]
    assert record["percentiles_ms"] == {f"{p:g}": go.percentile_us(p) / 1000 for p in SHOWN_PERCENTILES}
    assert (record["measurements"], record["latencies"], record["requests"]) == (1, go.count, go.requests)
    assert f'<td class="num">{record["latencies"]:,}</td>' in page


def test_a_run_without_histograms_has_neither_chart_nor_table(tmp_path):
    run = tmp_path / "raw" / "quick-1-repeat"
    shutil.copytree(RUNS / "quick-1-repeat", run)
    build(run, tmp_path / "report", WHEN)
    page = (tmp_path / "report" / "index.html").read_text()
    assert "latency-cdf" not in page and "Exact latency percentiles" not in page
    assert json.loads((tmp_path / "report" / "results.json").read_text())["latency_histograms"] == []


def test_percentile_of_merged_pairs_matches_merging_in_any_grouping():
    a, b, c = [(1, 3), (5, 1)], [(2, 2), (5, 4)], [(9, 1)]
    assert merge_pairs(merge_pairs(a, b), c) == merge_pairs(a, merge_pairs(b, c)) == ((1, 3), (2, 2), (5, 5), (9, 1))
    assert percentile_us(merge_pairs(a, b, c), 50) == 5
