"""The verdict of one group (a GOMAXPROCS value): which connection is cheapest, from head-to-head throughput comparisons.

The connection with the highest throughput ratio over its baseline leads. Against each other
connection its comparison (leader's req/s over the other's, paired within blocks) is one of:
- beaten: the interval lies wholly above 1, the other is measurably slower;
- tied: the interval lies wholly within 1/(1 + TIE_MARGIN) .. 1 + TIE_MARGIN, the two are
  equivalent (two one-sided tests read off one interval);
- open: neither yet.
The verdict is `named` when every other connection is beaten, `tied` when none is open and
some are tied, `open` while any comparison is open. The intervals are the repeated intervals
of core/sequential.py at the family's level (Bonferroni over every pair of connections in
every group), so a named or tied verdict is wrong in at most 5% of runs, wherever they stop.

TIE_MARGIN is 5%: the band within which the page already calls a setup's throughput "no
measurable overhead" (0.95-1.05), and half the +/-10% the cheapest connection's own figures
are measured to: a difference smaller than that changes no choice of connection.

Standard library only: the driver's helper decides with it, and the page says what it says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .setups import FRONTED_SETUPS, TWIN_SEPARATOR, baseline_of

TIE_MARGIN = 0.05
# The connections the answer names in words besides the front ends' plain ones (report/answer.py's SHORT): TLS, HTTP/2 and
# your app behind nginx. Contenders among themselves when no plain front-end connection was measured.
NAMED_CONNECTIONS = (
    "nginx-https",
    "nginx-https-unix",
    "nginx-app",
    "nginx-h2",
    "nginx-h2-unix",
    "nginx-app-unix",
    "nginx-app-fcgi-tcp",
    "nginx-app-fcgi-unix",
)
NAMED, TIED, OPEN, ONLY, NONE = "named", "tied", "open", "only", "none"


@dataclass(frozen=True)
class Verdict:
    """One group's verdict: its kind, the leader, and how each other connection stands against it."""

    kind: str  # named | tied | open | only | none
    best: str | None = None
    tied: tuple[str, ...] = ()  # within the margin of the leader
    beaten: tuple[str, ...] = ()  # measurably slower than the leader: settled, no longer measured
    open: tuple[str, ...] = ()  # neither yet

    @property
    def decided(self) -> bool:
        """Return True when the verdict will not change with more blocks (named, tied, or the only connection)."""
        return self.kind in (NAMED, TIED, ONLY)

    @property
    def leaders(self) -> tuple[str, ...]:
        """Return the leader and the connections tied with it."""
        return ((self.best,) if self.best else ()) + self.tied


def standing(low: float | None, high: float | None, margin: float = TIE_MARGIN) -> str:
    """Return how the leader stands against one other connection from the interval of leader/other: beaten, tied or open.

    >>> standing(1.08, 1.30), standing(0.97, 1.04), standing(0.99, 1.20), standing(None, None)
    ('beaten', 'tied', 'open', 'open')
    """
    if low is None or high is None:
        return "open"
    if low > 1:
        return "beaten"
    if low >= 1 / (1 + margin) and high <= 1 + margin:
        return "tied"
    return "open"


def decide(
    ratios: dict[str, float], against: Callable[[str, str], tuple[float | None, float | None]], margin: float = TIE_MARGIN
) -> Verdict:
    """Return the verdict from each contender's throughput ratio over its baseline and the comparison intervals.

    against(best, other) gives the (low, high) of best's req/s over other's, (None, None) without an interval.

    >>> table = {("a", "b"): (1.2, 1.6), ("a", "c"): (1.5, 2.4)}
    >>> decide({"a": 0.6, "b": 0.4}, lambda x, y: table[x, y])
    Verdict(kind='named', best='a', tied=(), beaten=('b',), open=())
    >>> decide({"a": 0.6, "b": 0.59, "c": 0.3}, lambda x, y: {("a", "b"): (0.98, 1.03)}.get((x, y), table.get((x, y)))).kind
    'tied'
    >>> decide({"a": 0.6, "b": 0.5}, lambda x, y: (0.9, 1.5)).kind, decide({"a": 0.6}, None).kind, decide({}, None).kind
    ('open', 'only', 'none')
    """
    if not ratios:
        return Verdict(NONE)
    best = max(ratios, key=lambda s: (ratios[s], s))
    if len(ratios) == 1:
        return Verdict(ONLY, best)
    found: dict[str, list[str]] = {"beaten": [], "tied": [], "open": []}
    for other in sorted(s for s in ratios if s != best):
        low, high = against(best, other)
        found[standing(low, high, margin)].append(other)
    kind = OPEN if found["open"] else TIED if found["tied"] else NAMED
    return Verdict(kind, best, tuple(found["tied"]), tuple(found["beaten"]), tuple(found["open"]))


def contenders(setups: Iterable[str]) -> list[str]:
    """Return the setups a group's verdict chooses among: the front ends' plain connections to Go (nginx's, HAProxy's, Caddy's,
    Apache httpd's), or without any, the other connections the answer names (TLS, HTTP/2, your app behind nginx); never a --variant twin.

    >>> contenders(["go-http", "nginx-http", "nginx-fcgi-unix", "nginx-static", "nginx-http~b"])
    ['nginx-http', 'nginx-fcgi-unix']
    >>> contenders(["go-http", "go-https", "nginx-https", "nginx-https-unix"])
    ['nginx-https', 'nginx-https-unix']
    """
    shown = [s for s in setups if TWIN_SEPARATOR not in s and (s in FRONTED_SETUPS or s in NAMED_CONNECTIONS)]
    return [s for s in shown if s in FRONTED_SETUPS] or shown


def comparable(a: str, b: str) -> bool:
    """Return True when two contenders are compared head to head: over the same baseline (go-http, go-https, go-h2, app).

    >>> comparable("nginx-http", "nginx-fcgi-tcp"), comparable("nginx-https", "nginx-app")
    (True, False)
    """
    return baseline_of(a) == baseline_of(b)


def family_size(setups: Iterable[str], groups: int) -> int:
    """Return how many head-to-head comparisons a run's verdicts rest on: every comparable pair of its contenders in each of its groups.

    >>> family_size(["go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix"], 2), family_size(["go-http", "nginx-http"], 2)
    (6, 0)
    """
    found = contenders(setups)
    return groups * sum(comparable(a, b) for i, a in enumerate(found) for b in found[i + 1 :])
