"""Chart layout: the report's figure style, panels laid out in the figure's one draw, and the SVG a page inlines (ids prefixed, accessible name).

Output is reproducible: no date in the metadata, a fixed hash salt, and ids prefixed per
chart so several SVGs can live in one page.
"""

from __future__ import annotations

import io
import math
import re
import warnings

import matplotlib
import matplotlib.artist
from matplotlib.figure import Figure


STYLE = {
    "svg.hashsalt": "wrkreport",
    "svg.fonttype": "none",  # text stays text: smaller, selectable, scales with the page
    "text.parse_math": False,  # a `$` in a setup name or reason from a run directory is text, not mathtext
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
PAD_IN = 3 / 72  # space around each panel's decorations and each outside legend: constrained layout's default pad
PANELS_PER_ROW = 3
SVG_PREAMBLE = re.compile(r"\A.*?(?=<svg)", re.S)
SVG_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
SVG_ID = re.compile(r'(id="|url\(#|href="#)')
SVG_OPEN = re.compile(r'<svg ([^>]*?)width="([0-9.]+)pt"')
TITLES = {
    "throughput": ("Throughput per setup and GOMAXPROCS", "Bars: geometric mean of requests per second over the repeats kept, with their 95% interval; dots: each repeat."),
    "ratios": ("Overhead ratio of each setup against Go standalone", "Each setup's throughput divided by go-http's at the same GOMAXPROCS, with its 95% interval; 1.0 means no overhead; diamonds are the 2013 article's ratios."),
    "latency": ("Latency percentiles per setup", "p50 to max latency in ms on a log scale, one panel per group: lines join the medians over repeats, dots are single repeats."),
    "cpu": ("Server CPU time per 1,000 requests", "Go and nginx CPU milliseconds per 1,000 requests per setup, stacked, with the 95% interval of the total."),
    "sweep-throughput": ("Throughput against wrk connections", "Requests per second against the number of connections, one line per setup."),
    "sweep-p99": ("p99 latency against wrk connections", "p99 latency in ms against the number of connections, one line per setup."),
    "changes": ("Change from run A to run B, per setup and figure", "Each figure's B / A with its 95% interval on a log axis; 1.0 (dashed line) = no change."),
    "changes-narrow": ("Change from run A to run B, per setup and figure", "Each figure's B / A with its 95% interval on a log axis; 1.0 (dashed line) = no change."),
    "latency-cdf": (
        "Latency distribution per setup (from wrk's full histograms)",
        "Share of requests answered within each latency, in ms on a log scale, one panel per group and one line per setup; each cell's kept repeats merged.",
    ),
}


def to_svg(fig: Figure, name: str, desc: str | None = None) -> str:
    """Return the figure as an inline <svg> element with ids prefixed by name (desc: a <desc> other than TITLES')."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buffer = io.StringIO()
    with matplotlib.rc_context(STYLE), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a layout hint, not the user's concern
        FigureCanvasSVG(fig)
        fig.add_artist(PanelPlacer())  # drawn first: lays the panels out with the renderer that then draws them
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})  # one draw: no layout engine, no "tight" bbox
    svg = SVG_METADATA.sub("", SVG_PREAMBLE.sub("", buffer.getvalue(), count=1), count=1)
    svg = SVG_ID.sub(lambda m: f"{m[1]}{name}-", svg).strip()
    return accessible(svg, name, desc)


class PanelPlacer(matplotlib.artist.Artist):
    """An invisible artist drawn before everything else in its figure: it places the panels (fit_panels).

    Inside the figure's one draw, the text measured to lay the panels out is measured by
    the renderer that then writes it, so matplotlib's per-renderer cache serves the draw.
    """

    zorder = -math.inf

    def draw(self, renderer) -> None:
        """Place the figure's panels; draw nothing."""
        fit_panels(self.get_figure(root=True), renderer)


def fit_panels(fig: Figure, renderer) -> None:
    """Place every panel once so its labels, titles, texts and legends fit, as matplotlib's constrained layout would.

    Constrained layout measures every panel twice and savefig then draws the figure twice
    (once to lay out, once to write); here the panels are measured once and the figure is
    drawn once. Same rules: PAD_IN around each panel's decorations and each figure legend
    placed "outside", equal panel sizes in a grid, each grid column and row as wide as its
    widest decorations.
    """
    panels = [ax for ax in fig.axes if ax.get_subplotspec() is not None]
    if not panels:
        return
    inverse = fig.transFigure.inverted()
    width_in, height_in = fig.get_size_inches()
    w_pad, h_pad = PAD_IN / width_in, PAD_IN / height_in
    nrows, ncols = panels[0].get_subplotspec().get_gridspec().get_geometry()
    left, right, top, bottom = [w_pad] * ncols, [w_pad] * ncols, [h_pad] * nrows, [h_pad] * nrows
    for ax in panels:
        spec = ax.get_subplotspec()
        row, col = spec.rowspan.start, spec.colspan.start
        box = ax.get_position(original=True)
        tight = panel_tightbbox(ax, renderer)
        if tight is None:
            continue
        tight = tight.transformed(inverse)
        left[col] = max(left[col], box.x0 - tight.x0 + w_pad)
        right[col] = max(right[col], tight.x1 - box.x1 + w_pad)
        top[row] = max(top[row], tight.y1 - box.y1 + h_pad)
        bottom[row] = max(bottom[row], box.y0 - tight.y0 + h_pad)
    outer = {"left": 0.0, "right": 0.0, "upper": 0.0, "lower": 0.0}
    for legend in fig.legends:
        side = getattr(legend, "_outside_loc", None)  # set by loc="outside ...": the legend sits beside the panels
        if side in outer:
            size = legend.get_tightbbox(renderer).transformed(inverse)
            outer[side] = max(outer[side], size.width + 2 * w_pad if side in ("left", "right") else size.height + 2 * h_pad)
    panel_w = (1 - outer["left"] - outer["right"] - sum(left) - sum(right)) / ncols
    panel_h = (1 - outer["lower"] - outer["upper"] - sum(top) - sum(bottom)) / nrows
    if panel_w <= 0 or panel_h <= 0:
        return  # labels wider than the figure: leave matplotlib's default places
    for ax in panels:
        spec = ax.get_subplotspec()
        row, col = spec.rowspan.start, spec.colspan.start
        x0 = outer["left"] + sum(left[:col]) + sum(right[:col]) + col * panel_w + left[col]
        y1 = 1 - outer["upper"] - sum(top[:row]) - sum(bottom[:row]) - row * panel_h - top[row]
        ax.set_position([x0, y1 - panel_h, panel_w, panel_h])


def panel_tightbbox(ax, renderer):
    """Return the display box of an Axes with its tick labels, axis labels, titles (1 px wide, as layouts count them), texts, legend and spines (with their tick marks); None when hidden.

    Lines, bars and markers are clipped to the Axes, so they are not measured.
    """
    from matplotlib.legend import Legend
    from matplotlib.spines import Spine
    from matplotlib.text import Text

    titles = {ax.title, ax._left_title, ax._right_title}
    extras = [a for a in ax.get_children() if isinstance(a, (Text, Legend, Spine)) and a not in titles and a.get_visible() and a.get_in_layout()]
    return ax.get_tightbbox(renderer, for_layout_only=True, bbox_extra_artists=extras)


def accessible(svg: str, name: str, desc: str | None = None) -> str:
    """Return the SVG with role="img", a <title> and a <desc> (TITLES', or desc), and its natural width as min-width (text stays >= 10 px when scaled)."""
    from html import escape

    title, desc = TITLES.get(name, (name, ""))[0], desc or TITLES.get(name, (name, ""))[1]
    svg = SVG_OPEN.sub(lambda m: f'<svg {m[1]}role="img" aria-labelledby="{name}-title {name}-desc" style="min-width:{m[2]}pt" width="{m[2]}pt"', svg, count=1)
    head = f'<title id="{name}-title">{escape(title)}</title><desc id="{name}-desc">{escape(desc)}</desc>'
    return re.sub(r"(<svg[^>]*>)", lambda m: m[1] + "\n" + head, svg, count=1)


def new_figure(width: float, height: float) -> Figure:
    """Return an empty figure with the report's style."""
    with matplotlib.rc_context(STYLE):
        return Figure(figsize=(width, height))  # no layout engine: to_svg places the panels once (fit_panels)


def panel_grid(count: int):
    """Return (figure, its panels flat, panels per row): one panel per group, PANELS_PER_ROW to a row, 3 in tall, a shared y axis, spare panels hidden."""
    columns = min(PANELS_PER_ROW, max(count, 1))
    rows = -(-max(count, 1) // columns)
    fig = new_figure(8, 3.0 * rows)
    axes = fig.subplots(rows, columns, sharey=True, squeeze=False).ravel()
    for ax in axes[count:]:
        ax.set_visible(False)
    return fig, axes, columns
