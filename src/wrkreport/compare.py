"""Compare: two analysed runs -> per cell, the change in req/s and in the overhead ratio, with intervals.

The runs are independent (two machines, two nginx versions, pinned or not), so repeats
cannot be paired across them: each run's repeats are resampled on their own (percentile
bootstrap, fixed seed) and a change is flagged only where its 95% interval excludes 1.0
("no change"). Within a run, the overhead ratio keeps its repeat pairing with go-http.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import stats
from .analyze import THROUGHPUT, Analysed, Cell, paired_values
from .model import BASELINE, setup_order

METHOD = (
    "Change = run B / run A. For req/s, the mean over each run's kept repeats; for the "
    "overhead ratio, each run's geometric mean of repeat-paired setup/go-http ratios. The "
    "95% interval is a percentile bootstrap (4,000 resamples, fixed seed) resampling each "
    "run's repeats (or repeat pairs) on its own; a change is flagged only when the "
    "interval excludes 1.0. With one repeat in either run there is no interval. With only 3 to "
    "5 repeats a bootstrap interval tends to be too narrow, so a flag whose interval ends near "
    "1.0 deserves a rerun with more repeats before it is believed."
)
DERIVED_PARAMETERS = ("urls",)  # follow from ports: listing both would say the same twice


@dataclass(frozen=True)
class Change:
    """One figure of one cell in both runs: b / a with its interval."""

    gomaxprocs: int
    connections: int
    setup: str
    metric: str  # requests_per_sec | overhead_ratio
    a: float | None
    b: float | None
    change: float | None
    ci_low: float | None
    ci_high: float | None
    n_a: int
    n_b: int
    note: str | None = None  # why there is no change figure or no interval

    @property
    def flagged(self) -> bool:
        """Return True when the interval excludes 1.0: a change, not noise."""
        return self.ci_low is not None and self.ci_high is not None and not self.ci_low <= 1.0 <= self.ci_high


@dataclass(frozen=True)
class RunComparison:
    """Two runs side by side."""

    a: Analysed
    b: Analysed
    changes: tuple[Change, ...]
    only_in_a: tuple[tuple[int, int, str], ...]
    only_in_b: tuple[tuple[int, int, str], ...]
    differences: tuple[tuple[str, str, str], ...]  # (what, in A, in B) of parameters and environment
    method: str = METHOD

    @property
    def flagged(self) -> tuple[Change, ...]:
        """Return the changes whose interval excludes 1.0."""
        return tuple(c for c in self.changes if c.flagged)


def compare(a: Analysed, b: Analysed) -> RunComparison:
    """Compare every cell both runs measured."""
    cells_a = {(c.gomaxprocs, c.connections, c.setup): c for c in a.analysis.cells}
    cells_b = {(c.gomaxprocs, c.connections, c.setup): c for c in b.analysis.cells}
    common = sorted(set(cells_a) & set(cells_b), key=lambda k: (k[0], k[1], setup_order(k[2]), k[2]))
    changes = []
    for key in common:
        changes.append(throughput_change(cells_a[key], cells_b[key]))
        if key[2] != BASELINE:
            changes.append(ratio_change(cells_a[key], cells_b[key], cells_a.get(key[:2] + (BASELINE,)), cells_b.get(key[:2] + (BASELINE,))))
    return RunComparison(
        a,
        b,
        tuple(changes),
        tuple(sorted(set(cells_a) - set(cells_b))),
        tuple(sorted(set(cells_b) - set(cells_a))),
        tuple(differences(a, b)),
    )


def throughput_change(a: Cell, b: Cell) -> Change:
    """Return the change of mean req/s from run A to run B for one cell."""
    values_a = list(a.metrics[THROUGHPUT].values) if a.metrics.get(THROUGHPUT) else []
    values_b = list(b.metrics[THROUGHPUT].values) if b.metrics.get(THROUGHPUT) else []
    return change_of(a, "requests_per_sec", values_a, values_b, lambda x, y: stats.mean(y) / stats.mean(x), stats.mean)


def ratio_change(a: Cell, b: Cell, base_a: Cell | None, base_b: Cell | None) -> Change:
    """Return the change of the overhead ratio (setup / go-http) from run A to run B for one cell."""
    pairs_a = paired_values(a, base_a, THROUGHPUT) if base_a else []
    pairs_b = paired_values(b, base_b, THROUGHPUT) if base_b else []
    return change_of(a, "overhead_ratio", pairs_a, pairs_b, lambda x, y: geometric_ratio(y) / geometric_ratio(x), geometric_ratio)


def change_of(cell: Cell, metric: str, a: list, b: list, statistic, estimate) -> Change:
    """Return b / a for one figure, its bootstrap interval, or why there is none."""
    where = (cell.gomaxprocs, cell.connections, cell.setup, metric)
    if not a or not b:
        side = "A" if not a else "B"
        if not a and not b:
            side = "either run"
        return Change(*where, estimate(a) if a else None, estimate(b) if b else None, None, None, None, len(a), len(b),
                      f"nothing usable in {side} (excluded or not measured)")
    interval = stats.bootstrap_interval(statistic, (a, b))
    note = None if interval else "one repeat in a run: no interval"
    low, high = interval or (None, None)
    return Change(*where, estimate(a), estimate(b), statistic(a, b), low, high, len(a), len(b), note)


def geometric_ratio(pairs: list[tuple[float, float]]) -> float:
    """Return the geometric mean of x/y over pairs."""
    return math.exp(stats.mean([math.log(x / y) for x, y in pairs]))


def differences(a: Analysed, b: Analysed) -> list[tuple[str, str, str]]:
    """Return the parameters, machine facts and versions that differ between the runs."""
    found = []
    manifest_a, manifest_b = a.run.manifest or {}, b.run.manifest or {}
    keys = [k for k in dict.fromkeys([*a.run.parameters, *b.run.parameters]) if k not in DERIVED_PARAMETERS]
    for key in keys:
        value_a, value_b = a.run.parameters.get(key), b.run.parameters.get(key)
        if value_a != value_b:
            found.append((f"parameter {key}", show(value_a), show(value_b)))
    for section in ("machine", "versions"):
        part_a, part_b = manifest_a.get(section) or {}, manifest_b.get(section) or {}
        for key in sorted(set(part_a) | set(part_b)):
            if part_a.get(key) != part_b.get(key):
                found.append((f"{section} {key}", show(part_a.get(key)), show(part_b.get(key))))
    return found


def show(value) -> str:
    """Return a value for the differences table ('unknown' for None)."""
    if value is None:
        return "unknown"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)
