"""Noise: analysed cells and ratios -> every reason to distrust a figure (few repeats, outliers,
cold starts, spread, wide intervals, a load generator short of cores, a baseline near the ceiling).

The warnings never change a figure; the page lists them beside the figures they question.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import stats
from ..core.records import THROUGHPUT, NoiseWarning, Ratio
from ..core.setups import BASELINE

if TYPE_CHECKING:  # analyze imports this module; the cell types are for annotations only
    from .cells import Cell, Spread

CEILING = "nginx-static"  # nginx answering by itself: the most any setup can do here
CEILING_NEAR = 0.90  # go-http at 90% of the ceiling or more: the client may be the limit
CLIENT_BUSY = 0.90  # wrk using 90% of a CPU per thread or more: the client may be the limit

MIN_REPEATS = 3
OUTLIER_Z = 3.5  # modified z-score (Iglewicz & Hoaglin)
OUTLIER_MIN_N = 5  # below this the MAD is too coarse for a z-score: the message says "n too small" instead
OUTLIER_MIN_REL = 0.03  # and at least 3% from the median, so a very tight cell does not cry wolf
COLD_START_REL = 0.05  # first repeat slower than every other and > 5% below their median
SPREAD_REL = 0.10  # (max - min) / median of req/s
WIDE_INTERVAL_REL = 0.05  # +/- 5% around the ratio


def noise_warnings(cells: list[Cell], ratios: list[Ratio]) -> list[NoiseWarning]:
    """Return every reason to distrust a figure: few repeats, outliers, cold starts, spread, wide intervals."""
    found = few_repeats(cells)
    for cell in cells:
        throughput = cell.metrics.get(THROUGHPUT)
        if throughput is None or throughput.n < MIN_REPEATS:
            continue
        found.extend(outliers(cell, throughput))
        found.extend(cold_start(cell, throughput))
        found.extend(wide_spread(cell, throughput))
    for ratio in ratios:
        width = ratio_half_width(ratio)
        if ratio.setup != BASELINE and width is not None and width > WIDE_INTERVAL_REL:
            found.append(
                NoiseWarning(
                    "wide-interval",
                    f"{ratio.setup} at GOMAXPROCS={ratio.gomaxprocs}: the throughput ratio's interval "
                    f"{ratio.ci_low:.3f}-{ratio.ci_high:.3f} reaches {width:.1%} from {ratio.ratio:.3f} "
                    f"(more than {WIDE_INTERVAL_REL:.0%}): more repeats or a quieter machine would narrow it",
                    ratio.setup,
                    ratio.gomaxprocs,
                    connections=ratio.connections,
                )
            )
    return found


def collapse(warnings: list[NoiseWarning], cells: list[Cell], kind: str, summary) -> list[NoiseWarning]:
    """Replace the warnings of one kind by one run-wide warning when every measured cell has one."""
    measured = [c for c in cells if not c.not_measured]
    of_kind = [w for w in warnings if w.kind == kind]
    if len(measured) < 2 or len(of_kind) < len(measured):
        return warnings
    return [w for w in warnings if w.kind != kind] + [NoiseWarning(kind, summary(measured))]


def few_repeats(cells: list[Cell]) -> list[NoiseWarning]:
    """Warn about cells with fewer than 3 included repeats (once for the run when it is all of them)."""
    measured = [c for c in cells if not c.not_measured]
    short = [c for c in measured if 0 < c.n < MIN_REPEATS]  # a cell with every repeat excluded has a failed check instead
    if not short:
        return []
    if len(short) == sum(1 for c in measured if c.n) and len({c.n for c in short}) == 1:
        n = short[0].n
        return [
            NoiseWarning(
                "few-repeats",
                f"every cell has {n} repeat{'s' if n != 1 else ''} (fewer than {MIN_REPEATS}): "
                + ("no interval and no spread can be given" if n < 2 else "intervals are very wide and outliers cannot be seen"),
            )
        ]
    return [
        NoiseWarning(
            "few-repeats",
            f"{c.setup} at GOMAXPROCS={c.gomaxprocs} has {c.n} usable repeat{'s' if c.n != 1 else ''} (fewer than {MIN_REPEATS})",
            c.setup,
            c.gomaxprocs,
            connections=c.connections,
        )
        for c in short
    ]


def outliers(cell: Cell, throughput: Spread) -> list[NoiseWarning]:
    """Warn about repeats far from the cell's median (modified z-score over 3.5 and > 3% off)."""
    found = []
    for repeat, value in throughput.by_repeat:
        z = stats.modified_z(value, list(throughput.values))
        off = abs(value / throughput.median - 1) if throughput.median else 0
        if z is not None and abs(z) > OUTLIER_Z and off > OUTLIER_MIN_REL:
            score = f"modified z-score {z:+.1f}" if throughput.n >= OUTLIER_MIN_N else f"n={throughput.n} too small for a z-score"
            found.append(
                NoiseWarning(
                    "outlier",
                    f"{cell.setup} at GOMAXPROCS={cell.gomaxprocs}, repeat {repeat}: {value:,.0f} req/s is "
                    f"{off:.1%} from the cell's median {throughput.median:,.0f} ({score})",
                    cell.setup,
                    cell.gomaxprocs,
                    repeat,
                    cell.connections,
                )
            )
    return found


def cold_start(cell: Cell, throughput: Spread) -> list[NoiseWarning]:
    """Warn when the first repeat is the slowest by more than 5% below the rest's median."""
    (repeat, first), rest = throughput.by_repeat[0], [value for _, value in throughput.by_repeat[1:]]
    rest_median = stats.median(rest)
    if first >= min(rest) or rest_median == 0:
        return []
    slower = 1 - first / rest_median
    if slower <= COLD_START_REL:
        return []
    return [
        NoiseWarning(
            "cold-start",
            f"{cell.setup} at GOMAXPROCS={cell.gomaxprocs}: repeat {repeat} ran {slower:.1%} slower than the "
            f"median of the others ({first:,.0f} vs {rest_median:,.0f} req/s): the warm-up may be missing or too short",
            cell.setup,
            cell.gomaxprocs,
            repeat,
            cell.connections,
        )
    ]


def wide_spread(cell: Cell, throughput: Spread) -> list[NoiseWarning]:
    """Warn when req/s ranges over more than 10% of the cell's median."""
    spread_rel = throughput.relative_range
    if spread_rel is None or spread_rel <= SPREAD_REL:
        return []
    return [
        NoiseWarning(
            "spread",
            f"{cell.setup} at GOMAXPROCS={cell.gomaxprocs}: req/s ranges over {spread_rel:.1%} of its median "
            f"({throughput.minimum:,.0f}-{throughput.maximum:,.0f}), more than {SPREAD_REL:.0%}",
            cell.setup,
            cell.gomaxprocs,
            connections=cell.connections,
        )
    ]


def client_warnings(cells: list[Cell], ceiling: list[Ratio]) -> list[NoiseWarning]:
    """Warn where the load generator, not the setup, may have set the pace (per client machine when the run names them)."""
    found = []
    for cell in cells:
        busy = cell.metrics.get("wrk_cpu_per_thread")
        if busy is not None and busy.median >= CLIENT_BUSY:
            who = f"{cell.client} on {cell.busiest}" if cell.busiest else cell.client
            found.append(
                NoiseWarning(
                    "client-saturated",
                    f"{cell.setup} at GOMAXPROCS={cell.gomaxprocs}: {who} used {busy.median:.0%} of a CPU per thread "
                    f"(median): the load generator may have been the limit, not the setup",
                    cell.setup,
                    cell.gomaxprocs,
                    connections=cell.connections,
                )
            )
        free = cell.metrics.get("free_cores_per_thread")
        if free is not None and free.median < 1:
            found.append(
                NoiseWarning("client-cores", short_of_cores(cell, free.median), cell.setup, cell.gomaxprocs, connections=cell.connections)
            )
    apart = all(c.apart for c in cells if not c.not_measured)
    found = collapse(found, cells, "client-cores", lambda measured: every_cell_short(measured, apart))
    for ratio in ceiling:
        if ratio.setup == BASELINE and ratio.ratio is not None and ratio.ratio >= CEILING_NEAR:
            found.append(
                NoiseWarning(
                    "near-ceiling",
                    f"go-http at GOMAXPROCS={ratio.gomaxprocs} reaches {ratio.ratio:.0%} of {CEILING}'s throughput, the most "
                    f"this machine and load generator can do: the client, not Go, may be the limit there",
                    BASELINE,
                    ratio.gomaxprocs,
                    connections=ratio.connections,
                )
            )
    return found


def every_cell_short(measured: list[Cell], apart: bool) -> str:
    """Return the one client-cores warning of a run short of cores in every cell, naming its load generators (wrk, h2load)."""
    tool = " and ".join(sorted({c.client for c in measured}))
    if not apart:
        return (
            f"In every one of the {len(measured)} cells {tool} ran more threads than there were cores free of the servers "
            f"({span(measured, 'free_cores_per_thread')} free cores per {tool} thread, medians): client and servers "
            "competed for the CPUs throughout, so every figure includes that competition"
        )
    return (
        f"In every one of the {len(measured)} cells a {tool} client machine had fewer cores than {tool} threads "
        f"({span(measured, 'free_cores_per_thread')} cores per {tool} thread, medians): the load generators were short of CPUs throughout"
    )


def short_of_cores(cell: Cell, free: float) -> str:
    """Return the client-cores warning of one cell: the machine's cores free of the servers, or a client machine's own."""
    where = f"{cell.setup} at GOMAXPROCS={cell.gomaxprocs}"
    if not cell.shortest:
        return (
            f"{where}: {cell.client} ran more threads than there were cores free of the servers "
            f"({free:.2f} free cores per {cell.client} thread, median): client and servers competed for CPUs"
        )
    if cell.apart:
        return (
            f"{where}: {cell.client} on {cell.shortest} ran more threads than its machine has cores "
            f"({free:.2f} cores per thread, median): the load generator was short of CPUs"
        )
    return (
        f"{where}: {cell.client} on {cell.shortest} ran more threads than there were cores free of the servers "
        f"({free:.2f} free cores per {cell.client} thread, median): client and servers competed for CPUs"
    )


def span(cells: list[Cell], metric: str) -> str:
    """Return 'low-high' of a metric's cell medians, 2 decimals."""
    medians = [c.median(metric) for c in cells if c.median(metric) is not None]
    low, high = f"{min(medians):.2f}", f"{max(medians):.2f}"
    return low if low == high else f"{low}-{high}"


def ratio_half_width(ratio: Ratio) -> float | None:
    """Return how far the interval reaches from the ratio, relative to it (None without one)."""
    if ratio.ratio is None or ratio.ci_low is None or ratio.ci_high is None or ratio.ratio == 0:
        return None
    return max(ratio.ci_high / ratio.ratio - 1, 1 - ratio.ci_low / ratio.ratio)
