"""Charts: analysis -> inline SVG strings (matplotlib's Figure API, no pyplot state).

Colours are the Okabe-Ito palette (distinct for the common colour-vision deficiencies)
and every setup also has its own marker and bar hatch, so the charts read in grey print.
Figures are laid out and written as SVG by layout.py, each chart in two layouts
(layout.wide_and_narrow): every *_figure function draws one, narrow or not.
"""

from __future__ import annotations

import math

import matplotlib

from ..analysis.analyze import THROUGHPUT, Analysis
from ..analysis.cells import Spread
from ..analysis.reference import NODE_SETUP, ReferenceRatio, StudyRatio
from ..core import stats
from ..core.display import cut_words
from ..core.setups import BASELINE, SETUP_BY_ID
from .layout import STYLE, figure_width, legend_columns, legend_height, new_figure, panel_grid, setup_legend, wide_and_narrow, wrap
from .styles import fill, setup_style

PERCENTILES = (
    ("latency_p50_ms", "p50"),
    ("latency_p75_ms", "p75"),
    ("latency_p90_ms", "p90"),
    ("latency_p99_ms", "p99"),
    ("latency_max_ms", "max"),
)
NARROW_ROW = 1.6  # a narrow chart's row of a setup and group: its label above, its marker or bar below
NARROW_CHARS = 46  # characters of a 9 pt label per line across a narrow figure (about 5 pt a character)
WIDE_CHARS = 60  # and under a wide figure's panel when long row names beside it leave it 350 pt


def geometric(spread: Spread | None) -> stats.Interval | None:
    """Return the geometric mean of a cell's repeats with its 95% t-interval on their logs, as the analysis computed it (Spread.geometric).

    The same mean-of-logs the paired ratios are built from, so a bar, a table cell and a
    ratio summarise the repeats alike; back-transformed, the interval never goes below zero.
    None without a spread or values, or when a value is not positive (no logarithm).
    """
    return None if spread is None else spread.geometric


def typical(spread: Spread) -> float:
    """Return a spread's geometric mean (the ratios' statistic), or its median when it has none (a value not above zero)."""
    found = geometric(spread)
    return found.estimate if found else spread.median


def plain_log_axis(axis, values, marks: tuple[int, ...] = (1, 2, 5)) -> None:
    """Label a log axis with plain numbers at marks per decade ('2', '50', '1,000'), never '2x10^0'; no minor ticks (cheaper to draw)."""
    positive = [v for v in values if v > 0]
    if not positive:
        return
    low, high = min(positive), max(positive)
    ticks = [m * 10.0**e for e in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1) for m in marks]
    shown = [t for t in ticks if low / 1.5 <= t <= high * 1.5] or ticks
    axis.set_major_locator(matplotlib.ticker.FixedLocator(shown))
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 10 else f"{v:g}"))
    axis.set_minor_locator(matplotlib.ticker.NullLocator())


def group_label(gomaxprocs: int, connections: int, several_levels: bool) -> str:
    """Return the axis label of one (GOMAXPROCS, connections) group."""
    return f"GOMAXPROCS={gomaxprocs}" + (f"\n{connections} conns" if several_levels else "")


def throughput_chart(analysis: Analysis) -> str:
    """Return req/s per setup grouped by GOMAXPROCS: bar = geometric mean, whisker = its 95% interval, dots = repeats."""
    return wide_and_narrow(lambda narrow: throughput_figure(analysis, narrow), "throughput")


def throughput_figure(analysis: Analysis, narrow: bool = False):
    """Return the throughput chart's figure (throughput_chart); narrow: the legend below the bars, the title over three lines."""
    setups = analysis.setups
    several = analysis.several_levels
    with matplotlib.rc_context(STYLE):
        columns = legend_columns(list(setups))
        fig = new_figure(figure_width(narrow), 3.6 + (0.45 + legend_height(len(setups), columns) if narrow else 0))
        ax = fig.add_subplot()
        width = 0.8 / max(len(setups), 1)
        whiskers = False
        for i, setup in enumerate(setups):  # one bar, whisker and dot call per setup: fewer artists, a faster draw
            colour, marker, hatch = setup_style(setup)
            bars_x, bars_y, whisker_x, whisker_y, below, above, dots_x, dots_y = [], [], [], [], [], [], [], []
            for g, (gomaxprocs, connections) in enumerate(analysis.groups):
                x = g + (i - (len(setups) - 1) / 2) * width
                cell = analysis.cell(gomaxprocs, connections, setup)
                spread = cell.metrics.get(THROUGHPUT) if cell else None
                interval = geometric(spread)
                if interval is None:
                    if cell is not None:
                        ax.text(
                            x,
                            0,
                            " excluded" if not cell.not_measured else " not measured",
                            rotation=90,
                            ha="center",
                            va="bottom",
                            fontsize=8,
                            color="#333333",
                        )
                    continue
                bars_x.append(x)
                bars_y.append(interval.estimate)
                if interval.low is not None:
                    whisker_x.append(x)
                    whisker_y.append(interval.estimate)
                    below.append(interval.estimate - interval.low)
                    above.append(interval.high - interval.estimate)
                dots_x.extend([x] * spread.n)
                dots_y.extend(spread.values)
            if bars_x:
                ax.bar(bars_x, bars_y, width * 0.9, color=fill(colour), hatch=hatch, edgecolor="#ffffff", linewidth=0, label=setup)
            if whisker_x:
                whiskers = True
                ax.errorbar(whisker_x, whisker_y, yerr=[below, above], fmt="none", color="#000000", capsize=3, linewidth=1)
            if dots_x:
                ax.plot(
                    dots_x,
                    dots_y,
                    marker=marker,
                    markersize=4,
                    linestyle="none",
                    markerfacecolor="#ffffff",  # scatter's s=16: 4 pt
                    markeredgecolor="#000000",
                    markeredgewidth=0.7,
                    zorder=3,
                )  # a plain line of markers: no PathCollection to build
        crowded = narrow and len(analysis.groups) > 3  # a narrow figure's group names stand on end
        ax.set_xticks(range(len(analysis.groups)), [group_label(g, c, several) for g, c in analysis.groups], rotation=90 if crowded else 0)
        ax.set_ylabel("throughput (requests/s)")
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
        handles, labels = ax.get_legend_handles_labels()
        if handles and narrow:
            fig.legend(handles, labels, loc="outside lower center", ncol=columns, frameon=False, title="setup", fontsize=8)
        elif handles:
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, title="setup")
        title = (
            "Throughput: bar = geometric mean of repeats" + (", whisker = its 95% interval" if whiskers else "") + ", dots = each repeat"
        )
        ax.set_title(wrap(title, NARROW_CHARS - 8) if narrow else title, loc="left", fontsize=9)  # from the panel's left: less room
        return fig


RATIO_XLABEL = "throughput relative to Go standalone at the same GOMAXPROCS (1.0 = no overhead)"


def ratio_chart(
    analysis: Analysis,
    reference: tuple[ReferenceRatio, ...],
    study: tuple[StudyRatio, ...] = (),
    name: str = "ratios",
    xlabel: str = RATIO_XLABEL,
) -> str:
    """Return each setup's throughput / its baseline's (go-http's), with 95% intervals, the 1.0 line, the 2013 ratios and, beside node-http, the 2012 study's."""
    return wide_and_narrow(lambda narrow: ratio_figure(analysis, reference, study, xlabel, narrow), name)


def row_label(ax, y: float, text: str) -> None:
    """Write a row's name above it at the panel's left: a narrow chart's rows have no room for names beside them."""
    ax.text(
        0.01,
        y + 0.5,
        text,
        va="bottom",
        ha="left",
        fontsize=8,
        transform=ax.get_yaxis_transform(),
        zorder=5,
        bbox={"facecolor": "#ffffff", "edgecolor": "none", "pad": 0.5, "alpha": 0.85},
    )


def ratio_figure(
    analysis: Analysis,
    reference: tuple[ReferenceRatio, ...],
    study: tuple[StudyRatio, ...] = (),
    xlabel: str = RATIO_XLABEL,
    narrow: bool = False,
):
    """Return the ratio chart's figure (ratio_chart); narrow: each row's name above it, its value beside its whisker, the legend below."""
    setups = [s for s in analysis.setups if s != BASELINE]
    groups = analysis.groups
    several = analysis.several_levels
    step = NARROW_ROW if narrow else 1.0
    rows = max(len(setups), 1) * max(len(groups), 1)
    with matplotlib.rc_context(STYLE):
        fig = new_figure(figure_width(narrow), max(1.8, 0.9 + 0.32 * step * rows + (0.5 + 0.3 * len(groups) if narrow else 0)))
        ax = fig.add_subplot()
        ticks, labels, y = [], [], 0
        points = {setup: ([], [], [], []) for setup in setups}  # x, y, below, above: one errorbar call per setup, fewer artists
        bare = {setup: ([], []) for setup in setups}  # a ratio without an interval
        studies: dict[int, tuple[list, list]] = {}  # the article's values, one marker call per study
        node_study: dict[str, tuple[list, list]] = {}  # the 2012 study's Node/Go ratios, one marker call per load generator
        for gomaxprocs, connections in groups:
            for setup in setups:
                ratio = analysis.ratio(gomaxprocs, connections, setup)
                ticks.append(y)
                labels.append(f"{setup}  " + group_label(gomaxprocs, connections, several).replace("\n", ", "))
                if narrow:
                    row_label(ax, y, labels[-1])
                if ratio is not None and ratio.ratio is not None:
                    if ratio.ci_low is not None:
                        for values, value in zip(points[setup], (ratio.ratio, y, ratio.ratio - ratio.ci_low, ratio.ci_high - ratio.ratio)):
                            values.append(value)
                    else:
                        bare[setup][0].append(ratio.ratio)
                        bare[setup][1].append(y)
                    ratio_value(ax, ratio, y, narrow)
                elif ratio is not None:
                    excluded_text(ax, y, cut_words("excluded: " + (ratio.excluded or ""), 44 if narrow else 70))
                for ref in reference:
                    if ref.setup == setup and reference_matches(ref.gomaxprocs, gomaxprocs):
                        studies.setdefault(ref.gomaxprocs, ([], []))[0].append(ref.ratio)
                        studies[ref.gomaxprocs][1].append(y)
                for ref in study:
                    if setup == NODE_SETUP and ref.matches(gomaxprocs):
                        node_study.setdefault(ref.load_generator, ([], []))[0].append(ref.ratio)
                        node_study[ref.load_generator][1].append(y)
                y -= step
            y -= 0.6
        for setup in setups:
            colour, marker, _ = setup_style(setup)
            xs, ys, below, above = points[setup]
            if xs:
                ax.errorbar(xs, ys, xerr=[below, above], fmt=marker, color=colour, capsize=3, markersize=6, linestyle="none")
            if bare[setup][0]:
                ax.errorbar(*bare[setup], fmt=marker, color=colour, capsize=3, markersize=6, linestyle="none")
        legend = (lambda text: wrap(text, 52)) if narrow else (lambda text: text)  # 8 pt entries across a narrow figure
        for article_gomaxprocs, (xs, ys) in studies.items():
            hollow_markers(ax, xs, ys, REFERENCE_MARKERS.get(article_gomaxprocs, "h"), legend(reference_label(article_gomaxprocs)))
        for tool, (xs, ys) in node_study.items():
            hollow_markers(ax, xs, ys, STUDY_MARKERS.get(tool, "h"), legend(f"2012 Go-vs-Node study, Node/Go with {tool}"))
        finish_ratio_axes(ax, analysis, ticks, labels, xlabel, narrow)
        if studies or node_study:
            fig.legend(loc="outside lower center", ncol=1, frameon=False, fontsize=8)
        return fig


def ratio_value(ax, ratio, y: float, narrow: bool) -> None:
    """Write a ratio's value on its row: beside its whisker when narrow (above the marker is the row's name), else above the marker."""
    if narrow:
        ax.annotate(
            f"{ratio.ratio:.3f}",
            (ratio.ci_high or ratio.ratio, y),
            xytext=(5, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=8,
        )
    else:
        ax.annotate(f"{ratio.ratio:.3f}", (ratio.ratio, y), xytext=(0, 6), textcoords="offset points", ha="center", fontsize=8)


def excluded_text(ax, y: float, text: str) -> None:
    """Write why a row has no ratio (its cell was excluded) at the left of its row."""
    ax.text(
        0.01,
        y,
        text,
        va="center",
        fontsize=8,
        color="#333333",
        transform=ax.get_yaxis_transform(),
        zorder=5,
        bbox={"facecolor": "#ffffff", "edgecolor": "none", "pad": 1.0},
    )


def hollow_markers(ax, xs: list, ys: list, marker: str, label: str) -> None:
    """Draw published values as hollow markers (the 2013 article's ratios, the 2012 study's), one legend entry."""
    ax.plot(
        xs,
        ys,
        marker=marker,
        markersize=8,
        markerfacecolor="none",
        markeredgecolor="#333333",
        markeredgewidth=1.2,
        linestyle="none",
        label=label,
    )


def finish_ratio_axes(ax, analysis: Analysis, ticks: list, labels: list, xlabel: str, narrow: bool) -> None:
    """Draw the ratio chart's 1.0 line and set its rows, limits and label."""
    ax.axvline(1.0, color="#000000", linewidth=1, linestyle="--")
    ax.text(1.0, 1.0, "1.0 = go-http", transform=ax.get_xaxis_transform(), fontsize=8, va="bottom", ha="center")
    ax.set_yticks(ticks, [] if narrow else labels)
    if ticks:  # the bottom and top rows' markers (and a narrow chart's top name) clear of the axes
        ax.set_ylim(min(ticks) - 0.8, max(ticks) + (1.4 if narrow else 0.8))
    ax.set_xlim(0, max(1.1, max((r.ci_high or r.ratio or 0) for r in analysis.ratios) * 1.05 if analysis.ratios else 1.1))
    ax.set_xlabel(wrap(xlabel, NARROW_CHARS if narrow else WIDE_CHARS))  # layouts count a label 1 px wide: it must fit by itself
    ax.grid(axis="y", visible=False)
    if narrow:
        ax.tick_params(axis="y", length=0)


REFERENCE_MARKERS = {1: "p", 8: "*"}  # hollow pentagon and star: no setup uses either
STUDY_MARKERS = {"ab": "<", "webbench": ">"}  # the 2012 study's, hollow: left and right triangles, no setup's either


def reference_label(article_gomaxprocs: int) -> str:
    """Return the legend label of one of the article's studies."""
    if article_gomaxprocs == 1:
        return "2013 article, GOMAXPROCS=1"
    return f"2013 article, GOMAXPROCS={article_gomaxprocs} (all its laptop's threads; shown beside our GOMAXPROCS > 1)"


def reference_matches(article_gomaxprocs: int, gomaxprocs: int) -> bool:
    """Return True when the article's cell is the one to show beside ours.

    The article measured GOMAXPROCS 1 and 8 (all of its laptop's threads); ours are 1 and
    this machine's count, so 1 sits beside 1 and every higher value beside 8.
    """
    return (gomaxprocs == 1) == (article_gomaxprocs == 1)


def latency_chart(analysis: Analysis) -> str:
    """Return latency percentiles per setup, one panel per group: line = geometric mean over repeats, dots = each repeat."""
    return wide_and_narrow(lambda narrow: latency_figure(analysis, narrow), "latency")


def latency_figure(analysis: Analysis, narrow: bool = False):
    """Return the latency chart's figure (latency_chart); narrow: the panels stacked, the legend below."""
    groups = analysis.groups
    several = analysis.several_levels
    with matplotlib.rc_context(STYLE):
        fig, axes, columns = panel_grid(len(groups), narrow, legend_height(len(analysis.setups), legend_columns(list(analysis.setups))))
        handles = {}
        for ax, (gomaxprocs, connections) in zip(axes, groups):
            for i, setup in enumerate(analysis.setups):
                colour, marker, _ = setup_style(setup)
                cell = analysis.cell(gomaxprocs, connections, setup)
                if cell is None:
                    continue
                xs, medians, dots_x, dots_y = [], [], [], []
                for x, (metric, _) in enumerate(PERCENTILES):
                    spread = cell.metrics.get(metric)
                    if spread is None:
                        continue
                    offset = (i - (len(analysis.setups) - 1) / 2) * 0.06
                    xs.append(x + offset)
                    medians.append(typical(spread))
                    dots_x.extend([x + offset] * spread.n)
                    dots_y.extend(spread.values)
                if dots_x:  # one line of markers per setup and panel (cheaper than a scatter): fewer artists, a faster draw
                    ax.plot(dots_x, dots_y, marker=marker, markersize=10**0.5, linestyle="none", color=colour, alpha=0.6, markeredgewidth=0)
                if xs:
                    (line,) = ax.plot(xs, medians, marker=marker, color=colour, linewidth=1.2, markersize=4)
                    handles.setdefault(setup, line)
            ax.set_xticks(range(len(PERCENTILES)), [label for _, label in PERCENTILES])
            ax.set_title(group_label(gomaxprocs, connections, several).replace("\n", ", "), fontsize=9)
            ax.set_yscale("log")
            plain_log_axis(ax.yaxis, [v for c in analysis.cells for m, _ in PERCENTILES if c.metrics.get(m) for v in c.metrics[m].values])
        for ax in axes[::columns]:
            ax.set_ylabel("latency (ms, log scale)")
        if handles:
            setup_legend(fig, list(handles.values()), list(handles), narrow)
        return fig


def app_server(analysis: Analysis) -> str:
    """Return who stands in Go's place in the CPU figures: 'Go', or 'Go or Node' when the run has node-http; with --app 'your app' (or 'Go or your app')."""
    apps = [getattr(SETUP_BY_ID.get(s), "app", False) for s in analysis.setups]  # --app: its CPU is counted where Go's would be
    if any(apps):
        return "your app" if all(apps) else "Go or your app"
    return "Go or Node" if NODE_SETUP in analysis.setups else "Go"


def cpu_chart(analysis: Analysis) -> str:
    """Return server CPU ms per 1,000 requests per setup and group: Go and nginx stacked, whisker = 95% interval of the total."""
    return wide_and_narrow(lambda narrow: cpu_figure(analysis, narrow), "cpu")


def cpu_figure(analysis: Analysis, narrow: bool = False):
    """Return the CPU chart's figure (cpu_chart); narrow: each row's name above its bar, the axis label over three lines."""
    setups = analysis.setups
    groups = analysis.groups
    several = analysis.several_levels
    step = NARROW_ROW if narrow else 1.0
    with matplotlib.rc_context(STYLE):
        fig = new_figure(
            figure_width(narrow), max(2.0, 0.9 + 0.3 * step * len(setups) * len(groups) + (0.6 + 0.3 * len(groups) if narrow else 0.2))
        )
        ax = fig.add_subplot()
        ticks, labels, y = [], [], 0
        for gomaxprocs, connections in groups:
            for setup in setups:
                cell = analysis.cell(gomaxprocs, connections, setup)
                go = cell.metrics.get("cpu_go_ms_per_1k") if cell else None
                nginx = cell.metrics.get("cpu_nginx_ms_per_1k") if cell else None
                total = cell.metrics.get("cpu_server_ms_per_1k") if cell else None
                ticks.append(y)
                labels.append(f"{setup}  " + group_label(gomaxprocs, connections, several).replace("\n", ", "))
                if narrow:
                    row_label(ax, y, labels[-1])
                go_mean = go.interval.estimate if go else 0.0
                nginx_mean = nginx.interval.estimate if nginx else 0.0
                colour, _, hatch = setup_style(setup)
                ax.barh(y, go_mean, color="#999999", edgecolor="#000000", linewidth=0.5, label=app_server(analysis) if y == 0 else None)
                ax.barh(
                    y,
                    nginx_mean,
                    left=go_mean,
                    color=colour,
                    hatch="//",
                    edgecolor="#000000",
                    linewidth=0.5,
                    label="nginx" if y == 0 else None,
                )
                if total is not None and total.interval.low is not None:
                    ax.errorbar(
                        total.interval.estimate,
                        y,
                        xerr=[[total.interval.estimate - total.interval.low], [total.interval.high - total.interval.estimate]],
                        color="#000000",
                        capsize=3,
                        linewidth=1,
                    )
                if total is None:
                    ax.text(0, y, " no CPU record", va="center", fontsize=8, color="#444444")
                y -= step
            y -= 0.6
        ax.set_yticks(ticks, [] if narrow else labels)
        if narrow:
            ax.tick_params(axis="y", length=0)
            ax.set_ylim(min(ticks) - 0.8, max(ticks) + 1.4)  # the top row's name inside the panel
        key = f"{app_server(analysis)} grey, nginx hatched; whisker = 95% interval of the total"
        ax.set_xlabel("server CPU time per 1,000 requests (ms)\n" + (wrap(key, NARROW_CHARS) if narrow else key))
        ax.grid(axis="y", visible=False)
        ax.set_xlim(left=0)
        return fig
