"""Fixed-rate checks: may one open-loop measurement's latencies be read as latencies at its rate? Each verdict is a Check.

A fixed-rate latency means something only if the rate was sustained (`rate-held`): when
vegeta falls behind, fewer requests are started than offered (the achieved rate is more
than RATE_TOLERANCE below the offered one) and the latencies are those of a lower load;
when the server falls behind, the requests are started at the rate but a backlog builds up
and grows to the end: latency climbs from one stretch of the attack to the next
(`backlog_growth`: the median latency of the last third of the attack's windows at least
GROWTH_FACTOR times the first third's and GROWTH_FLOOR_MS above it, and the window medians
rising in order, Kendall's tau at least TREND_TAU), and the latencies are those of a
growing queue, not of that rate. A pause (a GC, a stopped process, a noisy neighbour)
lifts the windows it falls in and passes: the rate was sustained, the pause shows in the
percentiles, and the measurement counts; how long the last answer came after the last
request no longer decides anything (a pause near the end made it long). The article's
fairness rule holds here as for wrk: every response must be 200 with the same body
(an app's: its own status and body size; `rate-response`, from each request's body bytes). Requests that got no answer at all
(refused, reset, timed out) are counted (`rate-errors`). The load generator's CPU time is
reported, with a warning when it and the servers together kept the machine's cores busy
(`rate-generator`). A failed check excludes the measurement, with the sentence as reason.
Pure functions; pandas is not needed.
"""

from __future__ import annotations

from statistics import median
from typing import NamedTuple

from ..core.cpucost import ms_per_1k_requests
from ..core.rate_result import RateResult
from ..core.records import Check
from ..core.setups import is_app
from ..core.units import finite

OK = 200  # the hello world's status


class Expected(NamedTuple):
    """The answer every request of a measurement must get: its status code and body size in bytes (-1: unknown, never matched)."""

    status: int
    body_bytes: int


def answer_of(setup: str, body_bytes, app_status_line, app_body_bytes) -> Expected:
    """Return the answer every fixed-rate request of a setup must get: the app's own status and body size for an --app setup
    (app, nginx-app: its answer captured at a block's start), else 200 with the run's --body-bytes (-1: unknown).

    >>> answer_of("go-http", 12, None, None), answer_of("nginx-app", 12, "HTTP/1.1 201 Created", 40), answer_of("app", None, None, None)
    (Expected(status=200, body_bytes=12), Expected(status=201, body_bytes=40), Expected(status=200, body_bytes=-1))
    """
    if not is_app(setup):
        return Expected(OK, whole(body_bytes))
    code = (str(app_status_line or "").split() + ["", ""])[1]
    return Expected(int(code) if code.isdigit() else OK, whole(app_body_bytes))


def whole(value) -> int:
    """Return value when it is an integer (not a bool), else -1 (unknown)."""
    return -1 if finite(value, int) is None else value


RATE_TOLERANCE = 0.01  # the achieved rate must be within 1% of the offered one
GROWTH_FACTOR = 2.0  # a backlog: the last third's median latency at least this many times the first third's ...
GROWTH_FLOOR_MS = 1.0  # ... and at least this much above it (0.1 -> 0.2 ms is noise, not a queue) ...
TREND_TAU = 0.6  # ... and the window medians rising in order (Kendall's tau-a; a pause of 1-2 windows of 10 gives at most ~0.4)
BUSY_SHARE = 0.9  # generator and servers busier than this share of the cores: they competed for the CPUs
CHECK_NAMES = ("rate-held", "rate-response", "rate-errors", "rate-generator")


def rate_held_check(result: RateResult, where: dict | None = None, tolerance: float = RATE_TOLERANCE) -> Check:
    """Fail a measurement whose achieved rate is not within tolerance of the offered one (or cannot be known)."""
    where = where or {}
    offered, achieved = result.offered_rps, result.achieved_rps
    if offered is None:
        return Check(
            "rate-held",
            "fail",
            "the offered rate is unknown (not in the file name or the manifest), so whether it was held cannot be said",
            **where,
        )
    if achieved is None:
        return Check(
            "rate-held", "fail", f"{result.requests} request(s) at {offered:,.0f} req/s offered: too few to measure a rate", **where
        )
    share = achieved / offered
    said = f"{achieved:,.1f} req/s of the {offered:,.0f} offered ({share:.1%}, {result.requests:,} requests over {result.span_s:.3f} s)"
    if result.parts:  # several clients: the sum of each one's own rate (their clocks differ: no span across them)
        each = " + ".join(f"{part.achieved_rps or 0:,.1f}" for part in result.parts)
        said = f"{achieved:,.1f} req/s of the {offered:,.0f} offered ({share:.1%}; {len(result.parts)} clients: {each}; {result.requests:,} requests)"
    if abs(share - 1) > tolerance:
        why = "vegeta fell behind" if share < 1 else "requests were started faster than asked"
        return Check("rate-held", "fail", f"rate not held: {said}; {why}, so these are not latencies at {offered:,.0f} req/s", **where)
    growth = next(filter(None, (backlog_growth(part.window_p50_ms) for part in result.parts or (result,))), None)  # any client's
    if growth is not None:
        first, last, tau = growth
        return Check(
            "rate-held",
            "fail",
            f"rate not held by the server: the requests were started at {achieved:,.1f} req/s, but a backlog grew over the "
            f"attack (median latency {first:,.2f} ms in its first third, {last:,.2f} ms in its last; rising window after "
            f"window, tau {tau:.2f}): these are latencies of a growing queue, not at {offered:,.0f} req/s",
            **where,
        )
    return Check(
        "rate-held",
        "pass",
        f"rate held: {said}; no backlog grew over the attack (the last answer " f"{1000 * result.wait_s:,.1f} ms after the last request)",
        **where,
    )


def backlog_growth(windows: tuple[float, ...]) -> tuple[float, float, float] | None:
    """Return (first third's, last third's median latency ms, Kendall's tau-a) when the window medians show a growing backlog, else None.

    Under three windows nothing can be said (None).

    >>> backlog_growth((0.2, 0.2, 0.3, 0.2, 0.2, 0.3, 0.2, 0.2, 0.2, 0.2)) is None  # flat
    True
    >>> backlog_growth((0.2, 0.2, 0.2, 0.2, 150.0, 0.2, 0.2, 0.2, 0.2, 150.0)) is None  # two pauses
    True
    >>> backlog_growth((0.2, 5.0, 20.0, 40.0, 60.0, 80.0, 100.0, 120.0, 140.0, 160.0))  # a queue growing to the end
    (5.0, 140.0, 1.0)
    """
    if len(windows) < 3:
        return None
    third = max(1, len(windows) // 3)
    first, last = median(windows[:third]), median(windows[-third:])
    pairs = [(a, b) for i, a in enumerate(windows) for b in windows[i + 1 :]]
    tau = (sum(b > a for a, b in pairs) - sum(b < a for a, b in pairs)) / len(pairs)
    if last >= GROWTH_FACTOR * first and last - first >= GROWTH_FLOOR_MS and tau >= TREND_TAU:
        return first, last, tau
    return None


def response_check(result: RateResult, expected: Expected, where: dict | None = None) -> Check:
    """Fail a measurement in which an answered request had another status or body size than expected (200 and the hello
    world's size; an app's own status and size)."""
    expect_status, expect_body_bytes = expected
    where = where or {}
    if result.answered == 0:
        return Check("rate-response", "fail", f"none of the {result.requests:,} requests was answered", **where)
    other_status = result.answered - result.status_count(expect_status)
    other_size = result.answered - dict(result.body_bytes).get(expect_body_bytes, 0)
    if other_status or other_size:
        statuses = ", ".join(f"{count:,} x {status}" for status, count in result.statuses)
        sizes = ", ".join(f"{count:,} x {size} bytes" for size, count in result.body_bytes)
        return Check(
            "rate-response",
            "fail",
            f"not the same response every time: {other_status:,} of {result.answered:,} answers not {expect_status} ({statuses}), "
            f"{other_size:,} with a body other than {expect_body_bytes} bytes ({sizes})",
            **where,
        )
    return Check("rate-response", "pass", f"all {result.answered:,} answers {expect_status} with a {expect_body_bytes}-byte body", **where)


def errors_check(result: RateResult, where: dict | None = None) -> Check:
    """Fail a measurement in which a request got no answer; count the timeouts among them."""
    where = where or {}
    if result.errors == 0:
        return Check("rate-errors", "pass", f"every one of the {result.requests:,} requests was answered (no errors, no timeouts)", **where)
    texts = "; ".join(f"{count:,} x {text!r}" for text, count in result.error_messages)
    return Check(
        "rate-errors",
        "fail",
        f"{result.errors:,} of {result.requests:,} requests got no answer, {result.timeouts:,} of them timeouts: {texts}",
        **where,
    )


def generator_cpu_check(
    cpu: dict | None, requests: int, where: dict | None = None, busy_share: float = BUSY_SHARE, client_cores: dict[str, int] | None = None
) -> Check:
    """Report the load generator's CPU per 1,000 requests from a .cpu.json record; warn when it and the servers kept the cores busy.

    With --client-hosts (vegeta on each client) client_cores gives each client's cores
    (the manifest's client_hosts): a client whose vegeta kept them busy is warned about.
    """
    where = where or {}
    processes = (cpu or {}).get("processes") or {}
    generator, wall, cores = processes.get("wrk"), (cpu or {}).get("wall_s"), (cpu or {}).get("logical_cores")
    if not generator or not wall or not cores or requests <= 0:
        return Check("rate-generator", "warn", "the load generator's CPU time was not recorded", **where)
    if generator.get("clients"):  # vegeta on --client-hosts: its CPU on each client, not competing here
        return clients_cpu_check(generator, wall, requests, where, client_cores or {}, busy_share)
    spent = generator["user_s"] + generator["system_s"]
    servers = sum(p["user_s"] + p["system_s"] for name, p in processes.items() if name != "wrk" and p)
    said = (
        f"vegeta used {spent / wall:.2f} cores ({ms_per_1k_requests(spent, requests):.1f} ms of CPU per 1,000 requests) "
        f"and the servers {servers / wall:.2f}, of {cores} cores"
    )
    if (spent + servers) / wall >= busy_share * cores:
        return Check("rate-generator", "warn", f"{said}: the load generator competed with the servers for the CPUs", **where)
    return Check("rate-generator", "pass", said, **where)


def clients_cpu_check(
    generator: dict, wall: float, requests: int, where: dict, client_cores: dict[str, int] | None = None, busy_share: float = BUSY_SHARE
) -> Check:
    """Report vegeta's CPU summed over its clients; warn when one client's vegeta kept that client's cores busy (its own timing then lags).

    The servers' cores are not the clients', so there is no competition with them to judge;
    a client saturated by its own vegeta sends late and times its answers late, which the
    added latency would wrongly count as the servers'.
    """
    if generator.get("user_s") is None or generator.get("system_s") is None:
        return Check(
            "rate-generator", "warn", f"vegeta's CPU time was not read on every one of its {len(generator['clients'])} clients", **where
        )
    spent = generator["user_s"] + generator["system_s"]
    said = (
        f"vegeta used {spent / wall:.2f} cores in all on {len(generator['clients'])} clients "
        f"({ms_per_1k_requests(spent, requests):.1f} ms of CPU per 1,000 requests)"
    )
    busy = []
    for client in generator["clients"]:
        cores = (client_cores or {}).get(client.get("client"))
        used = (client.get("user_s") or 0) + (client.get("system_s") or 0)
        if isinstance(cores, int) and cores > 0 and used / wall >= busy_share * cores:
            busy.append(f"{client['client']} {used / wall:.2f} of its {cores}")
    if busy:
        return Check(
            "rate-generator",
            "warn",
            f"{said}; vegeta kept its client's cores busy ({', '.join(busy)}): "
            "that client may have sent and timed late, so part of the latency may be its own",
            **where,
        )
    return Check("rate-generator", "pass", said, **where)


def rate_checks(
    result: RateResult, expected: Expected, cpu: dict | None = None, where: dict | None = None, client_cores: dict[str, int] | None = None
) -> list[Check]:
    """Return every fixed-rate check of one measurement, in CHECK_NAMES order (client_cores: each --client-hosts client's cores)."""
    return [
        rate_held_check(result, where),
        response_check(result, expected, where),
        errors_check(result, where),
        generator_cpu_check(cpu, result.requests, where, client_cores=client_cores),
    ]
