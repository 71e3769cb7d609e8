"""Checks of the h2 setups (go-h2, nginx-h2, nginx-h2-unix): their answer over HTTP/2, not the hello world's 141-byte header block.

Over HTTP/2 the header block is HPACK-compressed, differently by each server and along a
connection (a field sent once is indexed after), so neither the 141-byte rule nor the
byte total per response can be compared across setups. Instead the driver checks each h2
setup's answer at every block's start (curl --http2: 200, go-http's body, the handshake's
ALPN h2; a difference is the cell's error, failed by the readiness check) and lists the
header fields nginx changed from go-h2's; here every h2load measurement of an h2 setup
must have negotiated h2, and its header bytes per response are said.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.records import CPU_METRIC, THROUGHPUT, Check
from ..core.setups import BASELINE, H2_BASELINE, SETUP_BY_ID, streams_of
from ..runs.directory import table_rows
from ..runs.record import Cell, RunRecord, Tls
from .tls import share_text

H2_ALPN = "h2"


def is_h2(setup: str) -> bool:
    """Return True for an HTTP/2 setup (go-h2, nginx-h2, nginx-h2-unix, their twins)."""
    known = SETUP_BY_ID.get(setup)
    return known is not None and known.h2


def h2_header_check(capture, cell: Cell, where: str) -> Check:
    """Return the header-bytes check of an h2 setup's capture (runs.sidecars.HeaderCapture; cell: its manifest cell): 200 over HTTP/2, and what nginx changed said."""
    fail = lambda text: Check("header-bytes", "fail", f"{where} {text}", capture.setup, capture.gomaxprocs, file=capture.file)  # noqa: E731
    if not (capture.status_line or "").startswith("HTTP/2"):
        return fail(f"answered {capture.status_line!r} over HTTP/1.x: curl --http2 was not given h2 by ALPN")
    if capture.status_code != 200:
        return fail(f"answered {capture.status_line!r}, not 200")
    changed = cell.headers_changed
    said = "" if changed is None else f"; header fields changed from {H2_BASELINE}'s: {', '.join(changed) or 'none'} (Date not compared)"
    body = f", {cell.body_bytes:,}-byte body" if isinstance(cell.body_bytes, int) else ""
    alpn = (cell.tls or {}).get("alpn")
    negotiated = f", ALPN {alpn}" if alpn else ""
    message = f"{where}: {capture.status_line.strip()}{body}{negotiated} (HTTP/2: HPACK, no 141-byte rule){said}"
    return Check("header-bytes", "pass", message, capture.setup, capture.gomaxprocs, file=capture.file)


def h2_response_checks(table) -> list[Check]:
    """Return the same-response check of each h2 measurement (table rows): h2load must have negotiated h2; its header bytes per response are said, not compared (HPACK)."""
    found = []
    for row in table_rows(table):
        where = dict(setup=row.setup, gomaxprocs=row.gomaxprocs, repeat=row.repeat, file=row.file)
        if not row.requests:
            continue  # the zero-requests check fails it
        protocol = getattr(row, "application_protocol", None)
        if protocol != H2_ALPN:
            said = f"negotiated {protocol}" if isinstance(protocol, str) else "printed no application protocol"
            found.append(Check("same-response", "fail", f"h2load {said}, not h2: not an HTTP/2 measurement", **where))
            continue
        headers = getattr(row, "header_bytes", None)
        per = (
            f"{headers / row.requests:.1f} B of HPACK header per response"
            if isinstance(headers, (int, float)) and headers == headers
            else "no header bytes printed"
        )
        found.append(
            Check(
                "same-response",
                "pass",
                f"h2 negotiated; {per} (HPACK: sizes differ by server and along a connection, so not compared)",
                **where,
            )
        )
    return found


# --- The HTTP/2 part of the report --------------------------------------------------------------

H2_ANSWER_SETUPS = (
    "nginx-h2",
    "nginx-h2-mux",
)  # the answer's shares: nginx terminating h2 (TCP to Go) over Go's own h2, at each stream count


@dataclass(frozen=True)
class H2Row:
    """One h2 cell (or go-http, their divisor's divisor) of one group: throughput, ratios, CPU and HPACK's header bytes."""

    gomaxprocs: int
    connections: int
    setup: str
    requests_per_sec: float | None
    ratio: object  # core.records.Ratio of req/s over its baseline, or None
    cpu_ratio: object  # the same of server CPU per request, or None
    cpu_server_ms_per_1k: float | None
    header_bytes_per_response: float | None  # h2load's header bytes / requests, mean over the kept measurements
    header_space_savings_pct: float | None


@dataclass(frozen=True)
class H2Part:
    """The HTTP/2 part of the report: streams, h2load's version, what each setup negotiated, what nginx changed, one row per cell."""

    streams: int | None
    streams_mux: int | None  # the -mux setups' streams per connection
    h2load: str | None
    negotiated: tuple[tuple[str, dict], ...]  # setup -> the handshake probe (protocol, cipher, alpn, ...)
    changed: tuple[tuple[str, tuple[str, ...]], ...]  # setup -> header fields changed from go-h2's (first block)
    rows: tuple[H2Row, ...]
    fixed_rate: bool = False  # the h2 setups were measured at fixed rates too (vegeta -http2=true, open loop)


def h2_part(record: RunRecord | None, analysis, table) -> H2Part | None:
    """Return the HTTP/2 part of a run that measured an h2 setup, else None (analysis: analyze.Analysis; table: the annotated measurements)."""
    if not any(is_h2(s) for s in analysis.setups):
        return None
    record = record or RunRecord()
    probes = (record.tls or Tls()).setups
    changed: dict[str, tuple[str, ...]] = {}
    for entry in record.passes:
        for setup, cell in entry.cells:
            if is_h2(setup) and cell.headers_changed is not None:
                changed.setdefault(setup, cell.headers_changed)
    rows = []
    kept = table[~table["excluded"].astype(bool)] if "excluded" in table else table
    for n, c in analysis.groups:
        for setup in (s for s in analysis.setups if is_h2(s) or s == BASELINE):
            cell = analysis.cell(n, c, setup)
            if cell is None:
                continue
            mine = kept[(kept["setup"] == setup) & (kept["gomaxprocs"] == n) & (kept["connections"] == c)]
            per = (mine["header_bytes"] / mine["requests"]).mean() if "header_bytes" in mine and len(mine) else None
            savings = mine["header_space_savings_pct"].mean() if "header_space_savings_pct" in mine and len(mine) else None
            spread, cpu = cell.metrics.get(THROUGHPUT), cell.metrics.get(CPU_METRIC)
            rows.append(
                H2Row(
                    n,
                    c,
                    setup,
                    geometric(spread),
                    analysis.ratio(n, c, setup),
                    analysis.ratio(n, c, setup, CPU_METRIC),
                    geometric(cpu),
                    number(per),
                    number(savings),
                )
            )
    return H2Part(
        record.parameters.streams,
        record.parameters.streams_mux,
        (record.versions or {}).get("h2load"),
        tuple((s, p) for s, p in probes.items() if is_h2(s) and isinstance(p, dict)),
        tuple(changed.items()),
        tuple(rows),
        any(is_h2(setup) for setup in record.rate_setups),
    )


def geometric(spread) -> float | None:
    """Return a cell metric's geometric mean over its repeats, None without one."""
    return None if spread is None or spread.geometric is None else spread.geometric.estimate


def number(value) -> float | None:
    """Return a float, None for NaN or None."""
    return None if value is None or value != value else float(value)


def streams_words(count: int | None) -> str:
    """Return '1 stream per connection', '10 streams per connection'."""
    return f"{count} stream{'s' if count != 1 else ''} per connection" if count else "streams per connection not recorded"


def h2_answer(part: H2Part) -> str:
    """Return the answer box's HTTP/2 sentence: what nginx terminating h2 keeps of Go's own h2 throughput and costs in CPU per request, at each stream count."""
    said = []
    levels = len({row.connections for row in part.rows}) > 1
    for r in part.rows:
        if r.setup not in H2_ANSWER_SETUPS or r.ratio is None or r.ratio.ratio is None:
            continue
        level = f", {r.connections} connections" if levels else ""
        cpu = (
            f" and costs {r.cpu_ratio.ratio:.1f}x its CPU per request" if r.cpu_ratio is not None and r.cpu_ratio.ratio is not None else ""
        )
        streams = streams_words(streams_of(r.setup, part.streams, part.streams_mux))
        said.append(f"{kept_words(r.ratio)} Go's own h2 throughput at GOMAXPROCS={r.gomaxprocs}{level}{cpu} with {streams}")
    if not said:
        return "No nginx-h2 measurement could be compared with go-h2, so this run does not say what terminating HTTP/2 at nginx keeps."
    return f"nginx terminating h2 {'; '.join(said)} (h2load)."


def kept_words(ratio) -> str:
    """Return what a share of a baseline's throughput is, in words that fit it: 'keeps 71% (66-76%) of', or above 1.0 'serves 1.10x
    (1.02-1.18x)', never 'keeps 110%'."""
    if ratio.ratio <= 1:
        return f"keeps {share_text(ratio)} of"
    interval = f" ({ratio.ci_low:.2f}-{ratio.ci_high:.2f}x)" if ratio.ci_low is not None and ratio.ci_high is not None else ""
    return f"serves {ratio.ratio:.2f}x{interval}"
