"""Cells: the analysis step's records: one metric's spread over a cell's repeats, the cell, a head-to-head, how the CPUs were shared."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core import stats


@dataclass(frozen=True)
class Spread:
    """One metric over a cell's included repeats, with every summary the outputs show of it, computed when the analysis builds it."""

    by_repeat: tuple[tuple[int, float], ...]  # (repeat, value), in repeat order
    median: float
    minimum: float
    maximum: float
    mad: float
    interval: stats.Interval  # mean with its 95% t-interval
    # The geometric mean with its 95% t-interval on the logs: the statistic the ratios use, so the results table,
    # the bars and the TLS rows summarise a cell alike. None without values or with one not above zero (no logarithm).
    geometric: stats.Interval | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        values = self.values
        found = stats.ratio_interval([(value, 1.0) for value in values]) if values and min(values) > 0 else None
        object.__setattr__(self, "geometric", found)

    @property
    def values(self) -> tuple[float, ...]:
        """Return the values in repeat order."""
        return tuple(value for _, value in self.by_repeat)

    @property
    def n(self) -> int:
        """Return the number of values."""
        return len(self.by_repeat)

    @property
    def relative_range(self) -> float | None:
        """Return (max - min) / median, None when the median is 0."""
        return (self.maximum - self.minimum) / self.median if self.median else None


@dataclass(frozen=True)
class Cell:
    """One setup at one GOMAXPROCS and connection count, over its included repeats."""

    gomaxprocs: int
    connections: int
    setup: str
    repeats: tuple[int, ...]  # included repeats, in order
    excluded: tuple[tuple[int, str], ...]  # (repeat, reason) of excluded ones
    metrics: dict[str, Spread | None]
    not_measured: str | None = None  # why the run has no measurement of this cell at all
    block_of: tuple[tuple[int, int], ...] = ()  # (repeat, block) of included repeats; () for runs without blocks
    client: str = "wrk"  # the load generator that measured it: "wrk" (wrk or wrk2) or "ab" (one thread)
    # With named client machines (run.client_loads): the client busiest per thread and the one with the
    # fewest free cores per thread, e.g. "client-2 (local: 2 cores, 1 thread)"; "" otherwise.
    busiest: str = ""
    shortest: str = ""
    apart: bool = False  # every kept measurement's clients ran on machines other than the servers'

    @property
    def blocked(self) -> bool:
        """Return True when every included repeat has a block (a run measured in blocks)."""
        return bool(self.repeats) and len(self.block_of) == len(self.repeats)

    @property
    def blocks(self) -> int:
        """Return the server starts behind the cell: its distinct blocks, 1 without blocks, 0 with nothing included."""
        if not self.repeats:
            return 0
        return len({block for _, block in self.block_of}) if self.blocked else 1

    def by_block(self, items: list[tuple[int, object]]) -> list[list] | None:
        """Group (repeat, item) by the block of the repeat, blocks in order; None when the cell has no blocks."""
        if not self.blocked:
            return None
        block_of = dict(self.block_of)
        groups: dict[int, list] = {}
        for repeat, item in items:
            if repeat in block_of:
                groups.setdefault(block_of[repeat], []).append(item)
        return [groups[block] for block in sorted(groups)]

    @property
    def n(self) -> int:
        """Return the number of included repeats."""
        return len(self.repeats)

    def median(self, metric: str) -> float | None:
        """Return the median of metric (None when the cell has none)."""
        spread = self.metrics.get(metric)
        return spread.median if spread else None


@dataclass(frozen=True)
class Comparison:
    """Two nginx mechanisms head to head: setup_a req/s / setup_b req/s, paired by repeat."""

    gomaxprocs: int
    connections: int
    setup_a: str
    setup_b: str
    ratio: float
    ci_low: float | None
    ci_high: float | None
    n: int

    @property
    def distinguishable(self) -> bool | None:
        """Return True when the interval excludes 1.0, False when it includes it, None without one."""
        if self.ci_low is None or self.ci_high is None:
            return None
        return not self.ci_low <= 1.0 <= self.ci_high


@dataclass(frozen=True)
class CpuSharing:
    """Whether wrk had CPUs of its own, and how much of the machine it used."""

    pinned: bool  # every measurement ran with --pin-client and --pin-server
    pin_client: str | None
    pin_server: str | None
    cores: int
    wrk_share: Spread  # wrk's CPU time / (wall time x cores), over every measurement
    apart: bool = False  # wrk ran on machines other than the servers' (--server-host): no CPUs shared

    @property
    def shared(self) -> bool:
        """Return True when client and servers could run on the same CPUs."""
        if not self.pinned or self.pin_client is None or self.pin_server is None:
            return True
        return bool(cpu_list(self.pin_client) & cpu_list(self.pin_server))


def several_levels(groups) -> bool:
    """Return True when (gomaxprocs, connections) groups span more than one connection count."""
    return len({connections for _, connections in groups}) > 1


def cpu_list(text: str) -> set[int]:
    """Return the CPUs of a taskset list.

    >>> sorted(cpu_list("0,2-4"))
    [0, 2, 3, 4]
    """
    found = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        found.update(range(int(low), int(high or low) + 1))
    return found
