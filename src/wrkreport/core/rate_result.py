"""Fixed-rate record: one open-loop measurement (vegeta's per-request results) as a checked, frozen record; exact percentiles.

Every latency vegeta measured is kept (sorted, in nanoseconds), so each percentile is
exact, by the rule wrk's histograms use (latency_histogram.rank_of: the value at rank
round(p/100 * n + 0.5), at most n), so that a p99 here means what it means on the
saturation pages. The percentiles are over every request, answered or not: a request that
timed out counts with the time it waited (vegeta's own report does the same).

Rates: vegeta starts request i at first + i/rate, so n requests span (n - 1)/rate seconds
from the first start to the last; the achieved rate is (n - 1) / span, which equals the
offered rate when vegeta kept up. (vegeta's own report divides n by the span, which reads
1% high at 100 requests.) Whether the server kept up is read from how latency moved over
the attack: the requests are split by their start into WINDOWS equal stretches of the span
and the median latency of each is kept (`window_p50_ns`); a backlog that grows makes them
climb window after window, a pause lifts one or two and passes (rate_checks.rate_held_check).
Each whole second of the attack (requests by their start, from the first one's) keeps its
own SHOWN_PERCENTILES (`second_percentiles_ns`): a capacity check is judged by how many of
its seconds met the objective, never by an average of percentiles.

Several clients (--client-hosts): each runs vegeta at its share of the rate (rate_shares)
and keeps its own results; merge_results makes one record of them, the latencies of every
request of every client merged exactly (never an average of percentiles). Its achieved
rate is the sum of each client's own (n - 1) / span, and its wait the longest client's:
each client's timestamps are on its own clock, so no span is taken across clients.
Standard library only.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field

from ..core.latency_histogram import rank_of

SHOWN_PERCENTILES = (50.0, 90.0, 99.0, 99.9)  # what the fixed-rate phase reports, with the max
NS_PER_MS = 1_000_000
WINDOWS = 10  # stretches of the attack's span whose median latencies show a backlog's growth
MIN_WINDOW_REQUESTS = 8  # fewer windows when there are fewer requests than this per window


@dataclass(frozen=True)
class RateResult:
    """One vegeta attack's per-request results, summarised; latencies in ns, times in s; None = unknown."""

    source: str
    offered_rps: float | None  # the -rate asked for (from the file name or the caller)
    requests: int  # every request vegeta started (answered or not)
    span_s: float  # first request's start to the last request's start
    duration_s: float  # first request's start to the last response's end
    statuses: tuple[tuple[int, int], ...]  # (HTTP status, count) of the answered requests, by status
    errors: int  # requests with no HTTP status: no connection, a reset, a timeout
    timeouts: int  # those of the errors that timed out (vegeta -timeout)
    error_messages: tuple[tuple[str, int], ...]  # the most frequent distinct error texts (shortened) and their counts
    body_bytes: tuple[tuple[int, int], ...]  # (response body bytes, count) of the answered requests
    latencies_ns: tuple[int, ...] = field(repr=False)  # every request's latency, sorted
    parts: tuple[RateResult, ...] = field(default=(), repr=False)  # each client's own record, when several clients made this one
    # the median latency of the requests started in each of up to WINDOWS equal stretches of the span, in order ((): not known)
    window_p50_ns: tuple[int, ...] = ()
    # each whole second's SHOWN_PERCENTILES of the requests started in it, in order (second k: k s to k + 1 s after the first start;
    # the last holds the rest of the span); with clients, each second's largest over the clients' own; (): not known
    second_percentiles_ns: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        if self.requests < 0 or self.requests != len(self.latencies_ns):
            raise ValueError(f"requests is {self.requests!r} but {len(self.latencies_ns)} latencies were kept")
        answered = sum(count for _, count in self.statuses)
        if answered + self.errors != self.requests:
            raise ValueError(f"{answered} answered + {self.errors} errors is not the {self.requests} requests")
        if not 0 <= self.timeouts <= self.errors:
            raise ValueError(f"timeouts must be between 0 and the errors ({self.errors}), not {self.timeouts!r}")
        if sum(count for _, count in self.body_bytes) != answered:
            raise ValueError(f"body sizes of {sum(c for _, c in self.body_bytes)} responses, but {answered} were answered")
        if not 0 <= self.span_s <= self.duration_s:
            raise ValueError(f"span {self.span_s!r} s must be between 0 and the duration {self.duration_s!r} s")
        if self.offered_rps is not None and not self.offered_rps > 0:
            raise ValueError(f"offered_rps must be > 0 or None, not {self.offered_rps!r}")
        if any(b < a for a, b in zip(self.latencies_ns, self.latencies_ns[1:])):
            raise ValueError("latencies_ns must be sorted")
        if self.parts and sum(part.requests for part in self.parts) != self.requests:
            raise ValueError(f"the clients' {sum(part.requests for part in self.parts)} requests are not the {self.requests} requests")

    @property
    def achieved_rps(self) -> float | None:
        """Return the rate requests were started at: (requests - 1) / span (None under 2 requests or a zero span); with clients, the sum of theirs."""
        if self.parts:
            rates = [part.achieved_rps for part in self.parts]
            return None if None in rates else sum(rates)
        if self.requests < 2 or self.span_s <= 0:
            return None
        return (self.requests - 1) / self.span_s

    @property
    def wait_s(self) -> float:
        """Return how long after the last request's start the last response came (vegeta's `wait`): long when requests queued; with clients, the longest."""
        if self.parts:
            return max(part.wait_s for part in self.parts)
        return self.duration_s - self.span_s

    @property
    def achieved_share(self) -> float | None:
        """Return the achieved rate as a share of the offered one (1.0 = held exactly; None when either is unknown)."""
        achieved = self.achieved_rps
        return None if achieved is None or self.offered_rps is None else achieved / self.offered_rps

    @property
    def window_p50_ms(self) -> tuple[float, ...]:
        """Return the median latency of each window of the attack, in start order, ms (() when not known)."""
        return tuple(value / NS_PER_MS for value in self.window_p50_ns)

    def seconds_within(self, p: float, ms: float) -> tuple[int, int] | None:
        """Return (the attack's whole seconds, those whose percentile p was within ms), None when not known (or p not shown)."""
        if not self.second_percentiles_ns or p not in SHOWN_PERCENTILES:
            return None
        column = SHOWN_PERCENTILES.index(p)
        return len(self.second_percentiles_ns), sum(values[column] <= ms * NS_PER_MS for values in self.second_percentiles_ns)

    def percentile_ns(self, p: float) -> int | None:
        """Return the exact latency at percentile p by wrk's rule (None when there were no requests)."""
        if not 0 <= p <= 100:
            raise ValueError(f"percentile {p} outside 0-100")
        if not self.latencies_ns:
            return None
        return self.latencies_ns[rank_of(p, len(self.latencies_ns)) - 1]

    def percentile_ms(self, p: float) -> float | None:
        """Return the latency at percentile p in milliseconds."""
        value = self.percentile_ns(p)
        return None if value is None else value / NS_PER_MS

    @property
    def p50_ms(self) -> float | None:
        """Return the median latency, ms."""
        return self.percentile_ms(50)

    @property
    def p90_ms(self) -> float | None:
        """Return the 90th percentile latency, ms."""
        return self.percentile_ms(90)

    @property
    def p99_ms(self) -> float | None:
        """Return the 99th percentile latency, ms."""
        return self.percentile_ms(99)

    @property
    def p999_ms(self) -> float | None:
        """Return the 99.9th percentile latency, ms."""
        return self.percentile_ms(99.9)

    @property
    def max_ms(self) -> float | None:
        """Return the largest latency, ms."""
        return self.latencies_ns[-1] / NS_PER_MS if self.latencies_ns else None

    @property
    def answered(self) -> int:
        """Return the requests that got an HTTP status."""
        return self.requests - self.errors

    def status_count(self, status: int) -> int:
        """Return how many requests were answered with status."""
        return dict(self.statuses).get(status, 0)

    def to_dict(self) -> dict:
        """Return the record's figures for JSON (`wrkreport parse --json`, results.json), latencies summarised."""
        return {
            "source": self.source,
            "format": "vegeta",
            "offered_rps": self.offered_rps,
            "achieved_rps": self.achieved_rps,
            "requests": self.requests,
            "span_s": self.span_s,
            "duration_s": self.duration_s,
            "statuses": {str(status): count for status, count in self.statuses},
            "errors": self.errors,
            "timeouts": self.timeouts,
            "error_messages": dict(self.error_messages),
            "body_bytes": {str(size): count for size, count in self.body_bytes},
            "p50_ms": self.p50_ms,
            "p90_ms": self.p90_ms,
            "p99_ms": self.p99_ms,
            "p999_ms": self.p999_ms,
            "max_ms": self.max_ms,
            "window_p50_ms": list(self.window_p50_ms),
            "clients": len(self.parts) or 1,
        }


def whole_seconds(span_s: float) -> int:
    """Return the whole seconds an attack of this span counts (a 10-s attack spans 9.9999 s: 10; at least 1).

    >>> whole_seconds(9.9999), whole_seconds(0.9999), whole_seconds(0.0), whole_seconds(4.4)
    (10, 1, 1, 4)
    """
    return max(1, round(span_s))


def second_percentiles(starts_ns: list[int], latencies_ns: list[int]) -> tuple[tuple[int, ...], ...]:
    """Return each whole second's SHOWN_PERCENTILES (by rank_of) of the requests started in it (whole_seconds of the span; the last
    second takes the rest); () without requests.

    >>> second_percentiles([0, 10**8, 10**9, 19 * 10**8], [1, 3, 5, 7])
    ((3, 3, 3, 3), (7, 7, 7, 7))
    """
    if not starts_ns:
        return ()
    first = min(starts_ns)
    count = whole_seconds((max(starts_ns) - first) / 1e9)
    groups: list[list[int]] = [[] for _ in range(count)]
    for start, latency in zip(starts_ns, latencies_ns):
        groups[min(count - 1, (start - first) // 1_000_000_000)].append(latency)
    return tuple(ranked(sorted(g)) for g in groups if g)


def ranked(values) -> tuple[int, ...]:
    """Return SHOWN_PERCENTILES of sorted values, by rank_of."""
    return tuple(int(values[rank_of(p, len(values)) - 1]) for p in SHOWN_PERCENTILES)


def window_medians(starts_ns: list[int], latencies_ns: list[int], windows: int = WINDOWS) -> tuple[int, ...]:
    """Return the median latency (by rank_of) of the requests started in each of `windows` equal stretches from the first start to the last.

    Fewer windows when there are under MIN_WINDOW_REQUESTS requests per window; () under two
    windows or a zero span.

    >>> window_medians([0, 1, 2, 3, 4, 5, 6, 7], [5, 5, 5, 5, 9, 9, 9, 9], windows=2)
    ()
    >>> window_medians(list(range(16)), [1] * 8 + [3] * 8, windows=2)
    (1, 3)
    """
    count = min(windows, len(starts_ns) // MIN_WINDOW_REQUESTS)
    first, last = (min(starts_ns), max(starts_ns)) if starts_ns else (0, 0)
    if count < 2 or last <= first:
        return ()
    groups: list[list[int]] = [[] for _ in range(count)]
    for start, latency in zip(starts_ns, latencies_ns):
        groups[min(count - 1, (start - first) * count // (last - first))].append(latency)
    return tuple(sorted(g)[rank_of(50, len(g)) - 1] if g else 0 for g in groups)


def rate_shares(rate: int, count: int) -> list[int]:
    """Return each of count clients' share of a rate, the remainder to the first ones, so they add up to it exactly.

    >>> rate_shares(1000, 3)
    [334, 333, 333]
    """
    if count < 1 or rate < count:
        raise ValueError(f"{rate} req/s cannot be split over {count} clients (each needs at least 1 req/s)")
    return [rate // count + (1 if index < rate % count else 0) for index in range(count)]


def merge_results(parts: list[RateResult], offered_rps: float | None, source: str) -> RateResult:
    """Return one record of several clients' records of one measurement: counts added, every latency kept (exact percentiles)."""
    if not parts:
        raise ValueError("no client results to merge")
    added = lambda name: sorted(sum((Counter(dict(getattr(p, name))) for p in parts), Counter()).items())  # noqa: E731
    messages = sum((Counter(dict(p.error_messages)) for p in parts), Counter())
    return RateResult(
        source=source,
        offered_rps=offered_rps,
        requests=sum(p.requests for p in parts),
        span_s=max(p.span_s for p in parts),
        duration_s=max(p.duration_s for p in parts),
        statuses=tuple(added("statuses")),
        errors=sum(p.errors for p in parts),
        timeouts=sum(p.timeouts for p in parts),
        error_messages=tuple(messages.most_common(max(len(p.error_messages) for p in parts))),
        body_bytes=tuple(added("body_bytes")),
        latencies_ns=tuple(heapq.merge(*(p.latencies_ns for p in parts))),
        parts=tuple(parts),
        second_percentiles_ns=worst_seconds([p.second_percentiles_ns for p in parts]),
    )


def worst_seconds(parts: list[tuple[tuple[int, ...], ...]]) -> tuple[tuple[int, ...], ...]:
    """Return each second's largest percentiles over the clients' (their clocks differ: a second is within only when every client's
    was); () when a client's are not known.

    >>> worst_seconds([((1, 2, 3, 4), (5, 6, 7, 8)), ((2, 2, 2, 2),)])
    ((2, 2, 3, 4), (5, 6, 7, 8))
    """
    if not parts or not all(parts):
        return ()
    length = max(map(len, parts))
    return tuple(tuple(max(column) for column in zip(*(p[k] for p in parts if k < len(p)))) for k in range(length))
