"""The compare page's chart: B / A per figure with its interval on a log axis, a marker per kind of change, tick labels that never overlap."""

from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib
import matplotlib.ticker

from ..core.display import cut_words
from .layout import STYLE, new_figure, to_svg
from .styles import CHANGE_STYLES


@dataclass(frozen=True)
class ChangeMark:
    """One row of the change chart: a figure of one cell, B / A with its interval and what it says."""

    cell: str  # 'nginx-http, GOMAXPROCS=2': rows of one cell sit together
    figure: str  # 'req/s', 'ratio to go-http', 'p99 latency'
    change: float | None
    low: float | None
    high: float | None
    kind: str  # better | worse | same | inconclusive | no-interval | none (CHANGE_STYLES)
    note: str = ""  # why there is no change, for kind none


def change_chart(marks: list[ChangeMark], band: tuple[float, float], desc: str, narrow: bool = False) -> str:
    """Return B / A per figure on a log axis: 95% whiskers, the 1.0 line, the no-change band shaded, a marker per kind.

    narrow: a phone layout, 3.7 in wide (about 355 px, so 8 pt text stays above 10 px with
    no sideways scroll at 390 px): each row's label sits above its whisker instead of beside it.
    """
    with matplotlib.rc_context(STYLE):
        cells = list(dict.fromkeys(m.cell for m in marks))
        step = 1.6 if narrow else 1.0  # room for the label above each row
        fig = new_figure(3.7 if narrow else 8, 1.6 + (0.3 * step) * len(marks) + 0.25 * len(cells) + (0.5 if narrow else 0))
        ax = fig.add_subplot()
        ticks, labels, y, shown = [], [], 0.0, set()
        values = [1.0, *band]
        for cell in cells:
            for mark in (m for m in marks if m.cell == cell):
                ticks.append(y)
                labels.append(f"{cell}: {mark.figure}")
                if narrow:
                    ax.text(
                        0.01,
                        y + 0.55,
                        labels[-1],
                        va="bottom",
                        ha="left",
                        fontsize=8,
                        transform=ax.get_yaxis_transform(),
                        bbox={"facecolor": "#ffffff", "edgecolor": "none", "pad": 0.5, "alpha": 0.85},
                    )
                if mark.change is None:
                    ax.text(
                        0.01,
                        y,
                        cut_words(mark.note or "not compared", 45 if narrow else 60),
                        va="center",
                        fontsize=8,
                        color="#333333",
                        transform=ax.get_yaxis_transform(),
                    )
                else:
                    draw_change(ax, mark, y, band, shown)
                    values.extend(v for v in (mark.change, mark.low, mark.high) if v is not None)
                y -= step
            y -= 0.5
        finish_change_axes(ax, band, values, ticks, labels, narrow)
        if shown:
            fig.legend(loc="outside lower center", ncol=1 if narrow else 2, frameon=False, fontsize=8)
        return to_svg(fig, "changes-narrow" if narrow else "changes", desc)


def draw_change(ax, mark: ChangeMark, y: float, band: tuple[float, float], shown: set) -> None:
    """Draw one figure's B / A with its whisker, in its kind's style (its legend entry the first time the kind is drawn), and its value."""
    colour, marker, filled, label = CHANGE_STYLES[mark.kind]
    label = "no interval (see the table)" if mark.kind == "no-interval" else label  # too few blocks, or no start sd for the figure
    err = None if mark.low is None else [[mark.change - mark.low], [mark.high - mark.change]]
    legend = label.format(band=f"{band[0]:.2f}-{band[1]:.2f}")
    ax.errorbar(
        mark.change,
        y,
        xerr=err,
        fmt=marker,
        color=colour,
        capsize=3,
        markersize=7,
        markerfacecolor=colour if filled else "#ffffff",
        markeredgewidth=1.2,
        label=None if mark.kind in shown else legend,
    )
    shown.add(mark.kind)
    ax.annotate(
        f"{mark.change:.2f}", (mark.high or mark.change, y), xytext=(6, 0), textcoords="offset points", ha="left", va="center", fontsize=8
    )


def finish_change_axes(ax, band: tuple[float, float], values: list[float], ticks: list, labels: list, narrow: bool) -> None:
    """Shade the no-change band, draw the 1.0 line and set the log axis (its limits from every value drawn), the rows and the label."""
    ax.axvspan(*band, color="#dddddd", zorder=0, linewidth=0)
    ax.axvline(1.0, color="#000000", linewidth=1, linestyle="--")
    ax.text(1.0, 1.0, "1.0 = no change", transform=ax.get_xaxis_transform(), fontsize=8, va="bottom", ha="center")
    ax.set_xscale("log")
    low, high = min(values), max(values)
    ax.set_xlim(low / 1.15, high * 1.6)  # room for the value right of the highest whisker
    ax.xaxis.set_major_locator(SpacedTicks())  # as many of change_ticks' as fit side by side at the axis's drawn width
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_yticks([] if narrow else ticks, [] if narrow else labels)
    if ticks:
        ax.set_ylim(min(ticks) - 0.8, max(ticks) + (1.4 if narrow else 0.8))
    ax.set_xlabel("B / A (log scale; above 1.0: higher in B)")
    ax.grid(axis="y", visible=False)


def change_ticks(low: float, high: float) -> list[float]:
    """Return the ticks a B / A axis may show, most wanted first: 1.0, then 1, 2, 5 per decade nearest 1.0 first, then 0.9, 1.1, 0.8, 1.25.

    >>> change_ticks(0.85, 1.2), change_ticks(0.2, 6)
    ([1.0, 0.9, 1.1], [1.0, 2.0, 0.5, 0.2, 5.0, 0.9, 1.1, 0.8, 1.25])
    >>> min(change_ticks(3e-9, 40))  # a very wide interval: ticks down to its end, none rounded to 0
    5e-09
    """
    decades = range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1)
    # 6 significant digits, not 6 decimals: a tick of a very wide interval (1e-9) stays itself instead of rounding to 0
    coarse = sorted(
        (float(f"{m * 10.0**e:.6g}") for e in decades for m in (1, 2, 5) if low <= m * 10.0**e <= high),
        key=lambda t: (t != 1.0, round(abs(math.log(t)), 6), round(t / 10.0 ** math.floor(math.log10(t) + 1e-9))),
    )
    fine = [t for t in (0.9, 1.1, 0.8, 1.25) if low <= t <= high and t not in coarse]
    return coarse + fine


TICK_EM = 0.65  # a digit or a point is at most 0.64 em wide in the common sans-serif fonts (DejaVu Sans' digits: 0.636)
TICK_GAP_EM = 1.0  # room between two tick labels


def spaced(ticks: list[float], low: float, high: float, width_pt: float, size_pt: float) -> list[float]:
    """Return the ticks, in the order given, that fit a log axis width_pt wide without any two labels closer than TICK_GAP_EM, sorted.

    Each label ('1.25') is taken as TICK_EM x its characters wide, centred on its tick.

    >>> spaced([1.0, 0.9, 1.1, 0.8, 1.25], 0.7, 1.6, 150, 9)
    [0.8, 1.0, 1.25]
    >>> spaced([1.0, 0.9, 1.1, 0.8, 1.25], 0.7, 1.6, 600, 9)
    [0.8, 0.9, 1.0, 1.1, 1.25]
    """
    scale = width_pt / (math.log(high) - math.log(low))
    kept: list[tuple[float, float, float]] = []  # (tick, centre in points, half width)
    for tick in ticks:
        centre, half = (math.log(tick) - math.log(low)) * scale, TICK_EM * size_pt * len(f"{tick:g}") / 2
        if all(abs(centre - c) >= half + h + TICK_GAP_EM * size_pt for _, c, h in kept):
            kept.append((tick, centre, half))
    return sorted(t for t, _, _ in kept)


class SpacedTicks(matplotlib.ticker.Locator):
    """Tick B / A where the labels fit: change_ticks' ticks, most wanted first, spaced at the axis's width when drawn."""

    def __call__(self) -> list[float]:
        low, high = sorted(self.axis.get_view_interval())
        fig = self.axis.axes.get_figure(root=True)
        width_pt = self.axis.axes.get_window_extent().width * 72 / fig.dpi
        size_pt = self.axis.majorTicks[0].label1.get_fontsize()  # the first tick's label, made without asking this locator
        return spaced(change_ticks(low, high), low, high, width_pt, size_pt)
