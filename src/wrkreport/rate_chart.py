"""Chart (fixed rate): p50 and p99 latency against the offered load, per setup, one panel per GOMAXPROCS; matplotlib Figure API -> SVG."""

from __future__ import annotations

import matplotlib

from .chart_layout import STYLE, panel_grid, to_svg
from .charts import setup_style, plain_log_axis
from .fixedrate.analysis import RateCell


def rate_chart(cells: list[RateCell]) -> str:
    """Return p50 (dashed) and p99 (solid) latency against offered req/s per setup (both log scale); rates not held are left out."""
    groups = sorted({c.gomaxprocs for c in cells})
    setups = list(dict.fromkeys(c.setup for c in cells))
    with matplotlib.rc_context(STYLE):
        fig, axes, columns = panel_grid(len(groups))
        handles, all_rates, all_ms = {}, [], []
        for ax, n in zip(axes, groups):
            shown_rates, shown_ms = [], []
            for setup in setups:
                colour, marker, _ = setup_style(setup)
                held = sorted((c.offered_rps, c.p50_ms, c.p99_ms) for c in cells if c.gomaxprocs == n and c.setup == setup and c.held and c.p99_ms)
                if not held:
                    continue
                rates = [h[0] for h in held]
                shown_rates += rates
                shown_ms += [v for h in held for v in h[1:] if v]
                ax.plot(rates, [h[1] for h in held], marker=marker, color=colour, linestyle="--", linewidth=1, markersize=3)
                (line,) = ax.plot(rates, [h[2] for h in held], marker=marker, color=colour, linewidth=1.4, markersize=4)
                handles.setdefault(setup, line)
            ax.set_xscale("log")
            ax.set_yscale("log")
            if not shown_rates:  # every rate at this GOMAXPROCS was not held: nothing to draw, no bare log axes
                ax.text(0.5, 0.5, "no rate held", transform=ax.transAxes, ha="center", va="center", fontsize=9)
                ax.tick_params(which="both", labelbottom=False, labelleft=False, length=0)  # not set_*ticks([]): the panels may share an axis
            all_rates += shown_rates
            all_ms += shown_ms
            ax.set_title(f"GOMAXPROCS={n}", fontsize=9)
            ax.set_xlabel("offered load (req/s, log scale)")
        for ax in axes:  # after every panel's set_*scale: panels that share an axis share its ticker, and set_*scale resets it
            plain_log_axis(ax.xaxis, all_rates)
            plain_log_axis(ax.yaxis, all_ms)
        for ax in axes[::columns]:
            ax.set_ylabel("latency (ms, log scale)\np99 solid, p50 dashed")
        if handles:
            fig.legend(list(handles.values()), list(handles), loc="outside right upper", frameon=False, title="setup")
        return to_svg(fig, "fixed-rate")
