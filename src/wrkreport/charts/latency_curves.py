"""Charts of latency as a curve: the latency distribution of each setup at saturation (the CDF from wrk's full histogram) and latency over the connection levels of a sweep; inline SVG as saturation.py's charts."""

from __future__ import annotations

import math

import matplotlib

from ..analysis.analyze import THROUGHPUT, Analysis
from ..analysis.latency import CellLatency
from ..core.latency_histogram import cdf_points
from .layout import STYLE, figure_width, legend_columns, legend_height, new_figure, panel_grid, setup_legend, wide_and_narrow
from .saturation import group_label, plain_log_axis, typical
from .styles import setup_style

CDF_POINTS = 240  # latencies sampled per line, log-spaced: the exact share at each, a small SVG


def sweep_chart(analysis: Analysis, metric: str, label: str, name: str) -> str:
    """Return metric against connections (log x), one panel per GOMAXPROCS, one line per setup (geometric mean, dots = repeats)."""
    return wide_and_narrow(lambda narrow: sweep_figure(analysis, metric, label, narrow), name)


def sweep_figure(analysis: Analysis, metric: str, label: str, narrow: bool = False):
    """Return a sweep chart's figure (sweep_chart); narrow: the panels stacked, the legend below."""
    levels = sorted({c for _, c in analysis.groups})
    gomaxprocs_values = sorted({g for g, _ in analysis.groups})
    with matplotlib.rc_context(STYLE):
        count = len(gomaxprocs_values)
        legend = legend_height(len(analysis.setups), legend_columns(list(analysis.setups)))
        fig = new_figure(figure_width(narrow), 2.5 * count + legend if narrow else 3.2)
        axes = fig.subplots(count, 1, sharey=True, squeeze=False)[:, 0] if narrow else fig.subplots(1, count, sharey=True, squeeze=False)[0]
        handles = {}
        for ax, gomaxprocs in zip(axes, gomaxprocs_values):
            for setup in analysis.setups:
                colour, marker, _ = setup_style(setup)
                xs, ys = [], []
                for level in levels:
                    cell = analysis.cell(gomaxprocs, level, setup)
                    spread = cell.metrics.get(metric) if cell else None
                    if spread is None:
                        continue
                    xs.append(level)
                    ys.append(typical(spread))
                    ax.scatter([level] * spread.n, spread.values, marker=marker, s=10, color=colour, alpha=0.5, linewidths=0)
                if xs:
                    (line,) = ax.plot(xs, ys, marker=marker, color=colour, linewidth=1.2, markersize=4)
                    handles.setdefault(setup, line)
            ax.set_xscale("log")
            ax.set_xticks(levels, [f"{level:,}" for level in levels])
            ax.minorticks_off()
            ax.set_xlabel("wrk connections (log scale)")
            ax.set_title(f"GOMAXPROCS={gomaxprocs}", fontsize=9)
            ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 10 else f"{v:g}"))
        for ax in axes if narrow else axes[:1]:
            ax.set_ylabel(label)
        if metric != THROUGHPUT:
            axes[0].set_yscale("log")
            plain_log_axis(axes[0].yaxis, [v for c in analysis.cells if c.metrics.get(metric) for v in c.metrics[metric].values])
        if handles:
            setup_legend(fig, list(handles.values()), list(handles), narrow)
        return fig


def sampled_cdf(cell: CellLatency) -> tuple[list[float], list[float]]:
    """Return (latency ms, % of requests at or below it) at CDF_POINTS log-spaced latencies, plus the first and last value."""
    import bisect

    xs, ys = cdf_points(cell.histogram.pairs)
    low, high = xs[0], xs[-1]
    if high <= low or low <= 0:
        return xs, [100 * y for y in ys]
    step = (math.log(high) - math.log(low)) / (CDF_POINTS - 1)
    grid = [low * math.exp(step * i) for i in range(CDF_POINTS - 1)] + [high]
    return grid, [100 * ys[bisect.bisect_right(xs, x) - 1] for x in grid]


def cdf_chart(latencies: tuple[CellLatency, ...], several_levels: bool) -> str:
    """Return the latency CDF: one panel per (GOMAXPROCS, connections) group, one step line per setup, log latency axis."""
    return wide_and_narrow(lambda narrow: cdf_figure(latencies, several_levels, narrow), "latency-cdf")


def cdf_figure(latencies: tuple[CellLatency, ...], several_levels: bool, narrow: bool = False):
    """Return the latency CDF's figure (cdf_chart); narrow: the panels stacked, the legend below."""
    groups = sorted({(c.gomaxprocs, c.connections) for c in latencies})
    setups = list(dict.fromkeys(c.setup for c in latencies))
    with matplotlib.rc_context(STYLE):
        fig, axes, columns = panel_grid(len(groups), narrow, legend_height(len(setups), legend_columns(setups)))
        handles, every_x = {}, []
        for ax, (gomaxprocs, connections) in zip(axes, groups):
            for cell in (c for c in latencies if (c.gomaxprocs, c.connections) == (gomaxprocs, connections)):
                colour, marker, _ = setup_style(cell.setup)
                xs, ys = sampled_cdf(cell)
                every_x.extend((xs[0], xs[-1]))
                (line,) = ax.step(xs, ys, where="post", color=colour, linewidth=1.2)
                ax.plot(
                    [xs[-1]], [ys[-1]], marker=marker, color=colour, markersize=4
                )  # the largest latency, and the setup's marker for grey print
                handles.setdefault(cell.setup, line)
            ax.set_title(group_label(gomaxprocs, connections, several_levels).replace("\n", ", "), fontsize=9)
            ax.set_xscale("log")
            ax.set_ylim(0, 101)
            ax.set_xlabel("latency (ms, log scale)")
        decades = math.log10(max(every_x) / min(every_x)) if every_x and min(every_x) > 0 else 0
        for ax in axes[: len(groups)]:
            plain_log_axis(ax.xaxis, every_x, (1, 2, 5) if decades <= 2 else (1,))  # narrow panels: one label per decade
        for ax in axes[::columns]:
            ax.set_ylabel("requests within (%)")
        if handles:
            setup_legend(fig, list(handles.values()), list(handles), narrow)
        return fig
