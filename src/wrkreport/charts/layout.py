"""Chart layout: the report's figure style, panels laid out in the figure's one draw, and the SVG a page inlines (ids prefixed, accessible name).

Output is reproducible: no date in the metadata, a fixed hash salt, and ids prefixed per
chart so several SVGs can live in one page.

A report chart comes in two layouts (wide_and_narrow): WIDE_IN for a desktop's column and
NARROW_IN for a phone (panels stacked, legend below, labels above the rows); the page's
CSS shows the one that fits the chart's box. Each SVG carries the width it may shrink to
with its text still MIN_TEXT_PX on screen (min-width); below that its box scrolls.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
import warnings
from collections.abc import Callable

import matplotlib
import matplotlib.artist
from matplotlib.backends.backend_svg import FigureCanvasSVG  # here, not in to_svg: imported once before the drawers fork, not in each
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
WIDE_IN = 8.0  # a desktop's chart: 768 px at natural size
NARROW_IN = 3.7  # a phone's chart: 8 pt text stays >= 10 px down to a 333 px box (a 390 px phone's is 366 px)
MIN_TEXT_PX = 10  # no chart text smaller on screen: an SVG shrinks no further (min-width)
PAD_IN = 3 / 72  # space around each panel's decorations and each outside legend: constrained layout's default pad
PANELS_PER_ROW = 3
# Panels placed twice, as constrained layout does: the second pass measures them where the first put them (a label
# centred under a panel wider than it overhangs by what the panel's new width leaves; tick labels change with the width).
LAYOUT_PASSES = 2
SVG_PREAMBLE = re.compile(r"\A.*?(?=<svg)", re.S)
SVG_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
SVG_ID = re.compile(r'(id="|url\(#|href="#)')
SVG_OPEN = re.compile(r'<svg ([^>]*?)width="([0-9.]+)pt"')
SVG_FONT_SIZE = re.compile(r"font-size: ?([0-9.]+)px")
TITLES = {
    "throughput": (
        "Throughput per setup and GOMAXPROCS",
        "Bars: geometric mean of requests per second over the repeats kept, with their 95% interval; dots: each repeat.",
    ),
    "ratios": (
        "Overhead ratio of each setup against Go standalone",
        "Each setup's throughput divided by go-http's at the same GOMAXPROCS, with its 95% interval; 1.0 means no overhead.",
    ),
    "ratios-2013": (
        "This run's overhead ratios beside the 2013 article's",
        "Each setup's throughput divided by go-http's at the same GOMAXPROCS, with its 95% interval, and hollow markers at the ratios the 2013 article (and for node-http the 2012 study) published.",
    ),
    "tls": (
        "TLS setups' throughput ratios",
        "go-https over go-http, and nginx's TLS setups over go-https at the same GOMAXPROCS, each with its 95% interval; 1.0 means no overhead.",
    ),
    "fixed-rate": (
        "Latency against the offered load, open loop",
        "p99 (solid) and p50 (dashed) latency in ms on a log scale against the offered req/s per setup, one panel per GOMAXPROCS.",
    ),
    "latency": (
        "Latency percentiles per setup",
        "p50 to max latency in ms on a log scale, one panel per group: lines join the medians over repeats, dots are single repeats.",
    ),
    "cpu": (
        "Server CPU time per request",
        "Go and nginx CPU microseconds per request (milliseconds per 1,000 requests) per setup, stacked, with the 95% interval of the total.",
    ),
    "sweep-throughput": (
        "Throughput against wrk connections",
        "Requests per second against the number of connections, one line per setup.",
    ),
    "sweep-p99": ("p99 latency against wrk connections", "p99 latency in ms against the number of connections, one line per setup."),
    "changes": (
        "Change from run A to run B, per setup and figure",
        "Each figure's B / A with its 95% interval on a log axis; 1.0 (dashed line) = no change.",
    ),
    "changes-narrow": (
        "Change from run A to run B, per setup and figure",
        "Each figure's B / A with its 95% interval on a log axis; 1.0 (dashed line) = no change.",
    ),
    "latency-cdf": (
        "Latency distribution per setup (from wrk's full histograms)",
        "Share of requests answered within each latency, in ms on a log scale, one panel per group and one line per setup; each cell's kept repeats merged.",
    ),
}


def to_svg(fig: Figure, name: str, desc: str | None = None, layout: str | None = None) -> str:
    """Return the figure as an inline <svg> element with ids prefixed by name (desc: a <desc> other than TITLES').

    layout: "wide" or "narrow", one of a chart's two layouts (wide_and_narrow): the SVG's
    class, and a narrow one's ids prefixed name-narrow. The figure's background is left
    transparent: the page's shows through, and so does the scroll cue of the chart's box.
    """
    buffer = io.StringIO()
    with matplotlib.rc_context(STYLE), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a layout hint, not the user's concern
        FigureCanvasSVG(fig)
        fig.add_artist(PanelPlacer())  # drawn first: lays the panels out with the renderer that then draws them
        fig.savefig(
            buffer, format="svg", metadata={"Date": None, "Creator": None}, facecolor="none"
        )  # one draw: no layout engine, no "tight" bbox
    prefix = f"{name}-narrow" if layout == "narrow" else name
    svg = SVG_METADATA.sub("", SVG_PREAMBLE.sub("", buffer.getvalue(), count=1), count=1)
    svg = SVG_ID.sub(lambda m: f"{m[1]}{prefix}-", svg).strip()
    return accessible(svg, name, desc, layout)


def wide_and_narrow(draw: Callable[[bool], Figure], name: str, desc: str | None = None) -> str:
    """Return a chart in its two layouts, the wide SVG then the narrow one: draw(narrow) returns each figure; the page's CSS shows one."""
    with matplotlib.rc_context(STYLE):
        return to_svg(draw(False), name, desc, "wide") + "\n" + to_svg(draw(True), name, desc, "narrow")


class PanelPlacer(matplotlib.artist.Artist):
    """An invisible artist drawn before everything else in its figure: it places the panels (fit_panels).

    Inside the figure's one draw, the text measured to lay the panels out is measured by
    the renderer that then writes it, so matplotlib's per-renderer cache serves the draw.
    """

    zorder = -math.inf

    def draw(self, renderer) -> None:
        """Place the figure's panels; draw nothing."""
        for _ in range(LAYOUT_PASSES):
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
    extras = [
        a for a in ax.get_children() if isinstance(a, (Text, Legend, Spine)) and a not in titles and a.get_visible() and a.get_in_layout()
    ]
    return ax.get_tightbbox(renderer, for_layout_only=True, bbox_extra_artists=extras)


def accessible(svg: str, name: str, desc: str | None = None, layout: str | None = None) -> str:
    """Return the SVG with role="img", a <title> and a <desc> (TITLES', or desc), its layout as class, and as min-width the width its text stays >= MIN_TEXT_PX at."""
    from html import escape

    title, desc = TITLES.get(name, (name, ""))[0], desc or TITLES.get(name, (name, ""))[1]
    ids = f"{name}-narrow" if layout == "narrow" else name
    kind = f'class="layout-{layout}" ' if layout else ""

    def opening(m: re.Match) -> str:
        return f'<svg {m[1]}{kind}role="img" aria-labelledby="{ids}-title {ids}-desc" style="min-width:{min_width_px(svg, float(m[2])):.0f}px" width="{m[2]}pt"'

    svg = SVG_OPEN.sub(opening, svg, count=1)
    head = f'<title id="{ids}-title">{escape(title)}</title><desc id="{ids}-desc">{escape(desc)}</desc>'
    return re.sub(r"(<svg[^>]*>)", lambda m: m[1] + "\n" + head, svg, count=1)


def min_width_px(svg: str, width_pt: float) -> float:
    """Return the narrowest the SVG may be drawn, in CSS px: where its smallest text is MIN_TEXT_PX (its natural width when it has no text).

    >>> min_width_px('<text style="font-size: 8px">a</text><text style="font-size: 9px">b</text>', 288.0)
    360.0
    """
    sizes = [float(size) for size in SVG_FONT_SIZE.findall(svg)]
    return width_pt * MIN_TEXT_PX / min(sizes) if sizes else width_pt * 96 / 72


def figure_width(narrow: bool) -> float:
    """Return a chart's width in inches in its layout."""
    return NARROW_IN if narrow else WIDE_IN


def wrap(text: str, chars: int) -> str:
    """Return a label broken into lines of at most chars characters (at word boundaries), so it stays inside a narrow figure.

    >>> wrap("server CPU time per 1,000 requests (ms)", 20)
    'server CPU time per\\n1,000 requests (ms)'
    """
    return "\n".join(textwrap.wrap(text, chars, break_on_hyphens=False)) or text


def legend_height(count: int, columns: int, title: bool = True) -> float:
    """Return the height in inches a legend of count entries in columns takes below a narrow chart (8 pt entries)."""
    if not count:
        return 0.0
    return 0.1 + (0.22 if title else 0) + 0.19 * -(-count // columns)


def legend_columns(labels: list[str]) -> int:
    """Return how many legend columns fit a narrow chart's width: two when every label is short."""
    return 2 if all(len(label) <= 20 for label in labels) else 1


def setup_legend(fig: Figure, handles: list, labels: list[str], narrow: bool) -> None:
    """Add the setups' legend: beside the panels (wide), or below them in one or two columns (narrow)."""
    if narrow:
        fig.legend(handles, labels, loc="outside lower center", ncol=legend_columns(labels), frameon=False, title="setup", fontsize=8)
    else:
        fig.legend(handles, labels, loc="outside right upper", frameon=False, title="setup")


def new_figure(width: float, height: float) -> Figure:
    """Return an empty figure with the report's style."""
    with matplotlib.rc_context(STYLE):
        return Figure(figsize=(width, height))  # no layout engine: to_svg places the panels once (fit_panels)


def panel_grid(count: int, narrow: bool = False, legend: float = 0.0):
    """Return (figure, its panels flat, panels per row): one panel per group, PANELS_PER_ROW to a row, 3 in tall, a shared y axis, spare panels hidden.

    narrow: one panel to a row, 2.5 in tall, legend inches more below them for the legend.
    """
    columns = 1 if narrow else min(PANELS_PER_ROW, max(count, 1))
    rows = -(-max(count, 1) // columns)
    fig = new_figure(figure_width(narrow), (2.5 if narrow else 3.0) * rows + legend)
    axes = fig.subplots(rows, columns, sharey=True, squeeze=False).ravel()
    for ax in axes[count:]:
        ax.set_visible(False)
    return fig, axes, columns
