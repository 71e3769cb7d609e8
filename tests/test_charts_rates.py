"""Tests of wrkreport.charts.rates: the latency-vs-load chart draws the objective, each capacity with its interval or as a bound, the search's steps as points and the points' intervals (matplotlib's artists read back, and the SVG's text)."""

from __future__ import annotations

import json
from dataclasses import replace

import matplotlib.colors
import pytest
from matplotlib.collections import LineCollection
from matplotlib.patches import Rectangle

from helpers import read_rate_run, slo_variant
from wrkreport.analysis.capacities import capacities
from wrkreport.analysis.rate_latency import rate_cells
from wrkreport.charts.rates import rate_chart, rate_figure
from wrkreport.charts.styles import setup_style
from wrkreport.core.capacity import slo_of
from wrkreport.runs.rate_measurements import planned_rates


@pytest.fixture(scope="module")
def searched(tmp_path_factory, vegeta_parsed_once):
    """Return (cells, capacities) of quick-rates-slo arranged as two blocks at GOMAXPROCS=1, 12,000 req/s planned, the rest search steps."""
    run = slo_variant(tmp_path_factory.mktemp("chart") / "run", plan=[12000], two_blocks=True)
    manifest = json.loads((run / "manifest.json").read_text())
    measurements, _ = read_rate_run(run)
    return rate_cells(measurements, None, planned_rates(manifest)), capacities(measurements, slo_of(manifest["parameters"]["slo"]))


def same_colour(a, b) -> bool:
    """Return True when two matplotlib colours are the same."""
    return matplotlib.colors.to_hex(a) == matplotlib.colors.to_hex(b)


def test_the_objective_is_a_labelled_horizontal_line(searched):
    cells, found = searched
    (ax,) = rate_figure(cells, found).axes
    flat = [line for line in ax.lines if list(line.get_ydata()) == [5.0, 5.0]]
    assert len(flat) == 1 and flat[0].get_linestyle() == "--"
    assert "objective: p99 within 5 ms" in [t.get_text() for t in ax.texts]
    assert "objective: p99 within 5 ms" in rate_chart(cells, found)  # the SVG keeps its text as text


def test_a_capacity_is_a_vertical_line_with_its_interval_shaded_and_a_bound_a_dashed_line_with_an_arrow(searched):
    cells, found = searched
    (ax,) = rate_figure(cells, found).axes
    nginx = next(c for c in found if c.setup == "nginx-http")
    go = next(c for c in found if c.setup == "go-http")
    colour = setup_style("nginx-http")[0]
    vertical = [line for line in ax.lines if len(set(line.get_xdata())) == 1 and list(line.get_ydata()) == [0, 1]]
    assert any(
        line.get_xdata()[0] == nginx.estimate.value and same_colour(line.get_color(), colour) and line.get_linestyle() == "-"
        for line in vertical
    )
    spans = [(p.get_x(), p.get_x() + p.get_width()) if isinstance(p, Rectangle) else p.get_xy()[:, 0] for p in ax.patches]  # axvspan's
    assert any(min(xs) == pytest.approx(nginx.estimate.low) and max(xs) == pytest.approx(nginx.estimate.high) for xs in spans)
    assert go.estimate.bound == "at_least"
    assert any(line.get_xdata()[0] == go.estimate.value and line.get_linestyle() == "--" for line in vertical)
    assert "\u2265" in [t.get_text() for t in ax.texts] and "\u2264" in [
        t.get_text() for t in ax.texts
    ]  # go-http at least; nginx-fcgi-* at most
    left, right = ax.get_xlim()
    assert left < 12000 and right > go.estimate.value  # the arrows inside the panel


def test_points_with_two_blocks_have_their_interval_and_the_search_steps_are_hollow(searched):
    cells, found = searched
    (ax,) = rate_figure(cells, found).axes
    bars = [
        tuple(map(tuple, segment))
        for collection in ax.collections
        if isinstance(collection, LineCollection)
        for segment in collection.get_segments()
    ]
    for cell in cells:
        for interval in (cell.p50_interval, cell.p99_interval):
            if cell.held and interval is not None and interval.low is not None:
                assert ((cell.offered_rps, interval.low), (cell.offered_rps, interval.high)) in bars
    assert len(bars) >= 16
    hollow = {x for line in ax.lines if line.get_markerfacecolor() == "none" for x in line.get_xdata()}
    assert hollow == {c.offered_rps for c in cells if not c.planned and c.held}
    joined = [
        line
        for line in ax.lines
        if line.get_linestyle() in ("-", "--") and len(line.get_xdata()) > 0 and line.get_marker() not in ("None", "")
    ]
    assert {x for line in joined for x in line.get_xdata()} == {12000}  # only the planned rate is on the lines


def test_without_an_objective_nothing_of_it_is_drawn(searched):
    cells, _ = searched
    (ax,) = rate_figure(cells).axes
    assert not any(list(line.get_ydata()) == [5.0, 5.0] for line in ax.lines)
    assert not [t for t in ax.texts if t.get_text().startswith("objective")] and "objective" not in rate_chart(cells)


def test_vegetas_ceiling_when_known_is_a_dotted_line_named_as_such(searched):
    cells, found = searched
    ceiling = 30500.0
    (ax,) = rate_figure(cells, [replace(c, generator_rps=ceiling) for c in found]).axes
    assert any(list(line.get_xdata()) == [ceiling, ceiling] and line.get_linestyle() == ":" for line in ax.lines)
    assert " vegeta's ceiling" in [t.get_text() for t in ax.texts]
    (ax,) = rate_figure(cells, found).axes
    assert not any(line.get_linestyle() == ":" for line in ax.lines)  # not met: not drawn
