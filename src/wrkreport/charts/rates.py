"""Chart (fixed rate): p50 and p99 latency against the offered load, per setup, one panel per GOMAXPROCS, with the capacities at the objective; matplotlib Figure API -> SVG.

Planned rates (the light-load points) are joined by lines, filled markers; the capacity
search's steps, each measured once, are hollow markers. A cell with an interval over
blocks has it as a vertical bar. With a latency objective: a horizontal line at it, each
setup's capacity as a vertical line in its colour with its 95% interval shaded (a bound: a
dashed line marked with >= or <=), and vegeta's ceiling (where it fell behind) dotted grey.
"""

from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure

from ..analysis.capacities import Capacity
from ..analysis.rate_latency import RateCell
from ..core.capacity import AT_LEAST
from .layout import STYLE, legend_columns, legend_height, panel_grid, setup_legend, wide_and_narrow
from .saturation import plain_log_axis
from .styles import setup_style

OBJECTIVE_COLOUR = "#444444"
BAND_ALPHA = 0.15
ARROW = 1.15  # a bound's arrow reaches this factor past its line (log axis)
MARGIN = 1.08  # room left and right of the outermost rate drawn, as a factor (log axis)
Y_MARGIN = 2.0  # room below the lowest and above the highest latency drawn, as a factor (log axis)


def draw_cells(ax, cells: list[RateCell], setup: str, shown_rates: list[float], shown_ms: list[float]):
    """Draw one setup's held cells on one panel: planned ones joined, search steps hollow, intervals as bars; return the p99 line (None)."""
    colour, marker, _ = setup_style(setup)
    held = sorted((c for c in cells if c.held and c.p99_ms), key=lambda c: c.offered_rps)
    if not held:
        return None
    shown_rates += [c.offered_rps for c in held]
    shown_ms += [v for c in held for v in (c.p50_ms, c.p99_ms) if v]
    planned = [c for c in held if c.planned]
    line = None
    if planned:
        rates = [c.offered_rps for c in planned]
        ax.plot(rates, [c.p50_ms for c in planned], marker=marker, color=colour, linestyle="--", linewidth=1, markersize=3)
        (line,) = ax.plot(rates, [c.p99_ms for c in planned], marker=marker, color=colour, linewidth=1.4, markersize=4)
    steps = [c for c in held if not c.planned]
    if steps:
        rates = [c.offered_rps for c in steps]
        ax.plot(
            rates,
            [c.p50_ms for c in steps],
            marker=marker,
            color=colour,
            linestyle="none",
            markersize=2.5,
            markerfacecolor="none",
            alpha=0.6,
        )  # p50: smaller and lighter than p99
        (step_line,) = ax.plot(
            rates, [c.p99_ms for c in steps], marker=marker, color=colour, linestyle="none", markersize=4, markerfacecolor="none"
        )
        line = line or step_line
    for name in ("p50", "p99"):
        bars = [(c.offered_rps, i.low, i.high) for c in held if (i := getattr(c, f"{name}_interval")) is not None and i.low is not None]
        if bars:  # they do not set the axis (Y_MARGIN around the points): an interval over 2-3 blocks may span decades
            ax.vlines([b[0] for b in bars], [b[1] for b in bars], [b[2] for b in bars], color=colour, linewidth=1)
    return line


def draw_capacities(ax, capacities: list[Capacity], shown_rates: list[float]) -> None:
    """Draw the objective's line, each setup's capacity (its interval shaded, a bound dashed and marked) and vegeta's ceiling on one panel."""
    if not capacities:
        return
    slo = capacities[0].slo
    ax.axhline(slo.ms, color=OBJECTIVE_COLOUR, linewidth=1, linestyle=(0, (6, 3)))
    ax.text(
        0.01,
        slo.ms,
        f"objective: {slo.words}",
        transform=ax.get_yaxis_transform(),
        fontsize=8,
        va="bottom",
        color=OBJECTIVE_COLOUR,
        bbox={"facecolor": "#ffffff", "edgecolor": "none", "pad": 0.5, "alpha": 0.8},
    )
    for i, c in enumerate(capacities):
        colour = setup_style(c.setup)[0]
        found = c.estimate
        shown_rates.append(found.value)
        if found.bound is None:
            ax.axvline(found.value, color=colour, linewidth=1.2)
            if found.low is not None and found.high is not None:
                ax.axvspan(found.low, found.high, color=colour, alpha=BAND_ALPHA, linewidth=0)
                shown_rates += [found.low, found.high]
            continue
        # A bound: a dashed line, and an arrow from it the way the capacity lies, with >= or <= (staggered so bounds at one rate stay apart).
        ax.axvline(found.value, color=colour, linewidth=1.2, linestyle="--")
        up = found.bound == AT_LEAST
        height = 0.93 - 0.07 * i
        ax.annotate(
            "\u2265" if up else "\u2264",
            xy=(found.value * (ARROW if up else 1 / ARROW), height),
            xytext=(found.value, height),
            xycoords=ax.get_xaxis_transform(),
            textcoords=ax.get_xaxis_transform(),
            ha="right" if up else "left",
            va="center",
            fontsize=8,
            color=colour,
            arrowprops={"arrowstyle": "->", "color": colour, "linewidth": 1},
        )
        shown_rates.append(found.value * (ARROW if up else 1 / ARROW))
    ceiling = capacities[0].generator_rps
    if ceiling:
        ax.axvline(ceiling, color="#777777", linewidth=1, linestyle=":")
        ax.text(
            ceiling, 0.02, " vegeta's ceiling", transform=ax.get_xaxis_transform(), fontsize=8, rotation=90, va="bottom", color="#555555"
        )
        shown_rates.append(ceiling)


def rate_chart(cells: list[RateCell], capacities: list[Capacity] | None = None) -> str:
    """Return p50 (dashed) and p99 (solid) latency against offered req/s per setup (both log scale), with the capacities; rates not held are left out."""
    return wide_and_narrow(lambda narrow: rate_figure(cells, capacities, narrow), "fixed-rate")


def rate_figure(cells: list[RateCell], capacities: list[Capacity] | None = None, narrow: bool = False) -> Figure:
    """Return the chart's figure (rate_chart), its artists there to be read; narrow: the panels stacked, the legend below."""
    groups = sorted({c.gomaxprocs for c in cells})
    setups = list(dict.fromkeys(c.setup for c in cells))
    capacities = list(capacities or [])
    with matplotlib.rc_context(STYLE):
        fig, axes, columns = panel_grid(len(groups), narrow, legend_height(len(setups), legend_columns(setups)))
        handles, all_rates, all_ms = {}, [], []
        for ax, n in zip(axes, groups):
            shown_rates, shown_ms = [], []
            for setup in setups:
                line = draw_cells(ax, [c for c in cells if c.gomaxprocs == n and c.setup == setup], setup, shown_rates, shown_ms)
                if line is not None:
                    handles.setdefault(setup, line)
            ax.set_xscale("log")
            ax.set_yscale("log")
            if not shown_rates:  # every rate at this GOMAXPROCS was not held: nothing to draw, no bare log axes
                ax.text(0.5, 0.5, "no rate held", transform=ax.transAxes, ha="center", va="center", fontsize=9)
                ax.tick_params(
                    which="both", labelbottom=False, labelleft=False, length=0
                )  # not set_*ticks([]): the panels may share an axis
            else:
                here = [c for c in capacities if c.gomaxprocs == n]
                draw_capacities(ax, here, shown_rates)
                shown_ms += [here[0].slo.ms] if here else []
            all_rates += shown_rates
            all_ms += shown_ms
            ax.set_title(f"GOMAXPROCS={n}", fontsize=9)
            ax.set_xlabel("offered load (req/s, log scale)")
        for ax in axes:  # after every panel's set_*scale: panels that share an axis share its ticker, and set_*scale resets it
            plain_log_axis(ax.xaxis, all_rates)
            plain_log_axis(ax.yaxis, all_ms)
            if capacities and all_rates:  # the bounds' arrows and the capacities' bands inside the panel
                ax.set_xlim(min(all_rates) / MARGIN, max(all_rates) * MARGIN)
            if all_ms:  # the points and the objective; an interval bar reaching past them runs off the panel
                ax.set_ylim(min(all_ms) / Y_MARGIN, max(all_ms) * Y_MARGIN)
        for ax in axes[::columns]:
            ax.set_ylabel("latency (ms, log scale)\np99 solid, p50 dashed")
        if handles:
            setup_legend(fig, list(handles.values()), list(handles), narrow)
        return fig
