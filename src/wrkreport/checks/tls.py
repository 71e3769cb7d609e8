"""TLS termination: the negotiated-parameters and resumption checks, and the figures of the TLS part of the page."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.records import Check
from ..core.setups import NEW_CONNECTION_SETUPS, TLS_BASELINE, TLS_SETUP_IDS
from ..runs.record import RunRecord, Tls

COMPARED = ("protocol", "cipher", "group", "signature")  # what every TLS setup must have negotiated alike


def negotiated_checks(record: RunRecord | None) -> list[Check]:
    """Return one `tls` check per TLS setup and GOMAXPROCS: fail when its handshake negotiated other values than go-https's (both named).

    Each block's handshake (passes[].cells.SETUP.tls) is compared with go-https's in the
    same block, else with the run's first go-https handshake (tls.setups), else with the
    first TLS setup's; a handshake that failed fails too.
    """
    if record is None or record.tls is None:
        return []
    recorded = record.tls.setups
    found: dict[tuple[str, int], Check] = {}
    for entry in record.passes:
        n = entry.gomaxprocs
        cells = {s: c.tls for s, c in entry.cells if c.tls is not None}
        for setup, probe in cells.items():
            reference_setup, reference = reference_for(setup, cells, recorded)
            check = negotiated_check(setup, n, probe, reference_setup, reference)
            previous = found.get((setup, n))
            if previous is None or (previous.status == "pass" and check.status != "pass"):
                found[(setup, n)] = check
    return list(found.values())


def reference_for(setup: str, cells: dict, recorded: dict) -> tuple[str | None, dict | None]:
    """Return the setup and handshake a TLS setup's handshake is compared with: go-https's (None for go-https itself), else the first other TLS setup's."""
    if setup == TLS_BASELINE:
        return None, None
    for pool in (cells, recorded):
        if setup != TLS_BASELINE and isinstance(pool.get(TLS_BASELINE), dict):
            return TLS_BASELINE, pool[TLS_BASELINE]
    others = [s for s in (*cells, *recorded) if s != setup and s in TLS_SETUP_IDS]
    if others:
        first = others[0]
        return first, cells.get(first) or recorded.get(first)
    return None, None


def negotiated_check(setup: str, gomaxprocs, probe: dict, reference_setup: str | None, reference: dict | None) -> Check:
    """Return the `tls` check of one handshake against its reference."""
    said = ", ".join(f"{key} {probe.get(key)}" for key in COMPARED)
    if probe.get("error"):
        return Check("tls", "fail", f"{setup}: the handshake probe failed: {probe['error']}", setup, gomaxprocs)
    if not reference or reference.get("error"):
        return Check("tls", "pass", f"{setup} negotiated {said}", setup, gomaxprocs)
    differ = [
        f"{key} {probe.get(key)} where {reference_setup} negotiated {reference.get(key)}"
        for key in COMPARED
        if probe.get(key) != reference.get(key)
    ]
    if differ:
        return Check("tls", "fail", f"{setup} negotiated {'; '.join(differ)}: not the same TLS, so not compared", setup, gomaxprocs)
    return Check("tls", "pass", f"{setup} negotiated the same TLS as {reference_setup}: {said}", setup, gomaxprocs)


def resumed_checks(record: RunRecord | None) -> list[Check]:
    """Return a failed `tls-resumed` check per measurement whose servers counted resumed connections with resumption off, or one passing check."""
    if record is None or record.tls is None or record.tls.resumption is not False:
        return []
    failed, counted = [], 0
    for m in record.measurements:
        counts = m.tls
        if counts is None or not isinstance(counts.get("resumed"), int):
            continue
        counted += 1
        if counts["resumed"] > 0:
            failed.append(
                Check(
                    "tls-resumed",
                    "fail",
                    f"{counts['resumed']:,} resumed TLS connections counted by the server with resumption off",
                    m.setup,
                    m.gomaxprocs,
                    m.repeat,
                    m.file,
                )
            )
    if failed or not counted:
        return failed
    return [Check("tls-resumed", "pass", f"resumption off: 0 resumed connections counted by the servers in all {counted} TLS measurements")]


@dataclass(frozen=True)
class TlsRow:
    """One TLS setup at one GOMAXPROCS and level: throughput, its share of go-https's, CPU and the servers' counts."""

    gomaxprocs: int
    connections: int
    setup: str
    requests_per_sec: float | None
    ratio: object  # Ratio over its baseline (go-https; go-http for go-https)
    cpu_server_ms_per_1k: float | None
    resumed: int | None  # connections resumed in the measurements, summed (None: not counted)
    handshakes: int | None  # handshakes the server counted (Go only)
    new_connection: bool = False  # a new connection per request: requests are handshakes

    @property
    def handshakes_per_sec(self) -> float | None:
        """Return the handshakes per second: the requests per second of a new-connection row, else None."""
        return self.requests_per_sec if self.new_connection else None


@dataclass(frozen=True)
class TlsPart:
    """The TLS part of the report: settings, what each setup negotiated, versions and rows."""

    key: str | None
    version: str | None
    resumption: bool | None
    connection_per_request: bool
    cert_sha256: str | None
    cert_key: str | None
    openssl: str | None
    nginx_openssl: str | None
    go: str | None
    negotiated: tuple[tuple[str, dict], ...]
    rows: tuple[TlsRow, ...]


def tls_part(record: RunRecord | None, analysis) -> TlsPart | None:
    """Return the TLS part of a run that measured a TLS setup, else None."""
    if not any(s in TLS_SETUP_IDS for s in analysis.setups):
        return None
    record = record or RunRecord()
    tls, per_request = record.tls or Tls(), bool(record.parameters.connection_per_request)
    counts: dict[tuple, list] = {}
    for m in record.measurements:
        if m.tls is not None:
            counts.setdefault((m.gomaxprocs, m.connections, m.setup), []).append(m.tls)
    rows = []
    for n, c in analysis.groups:
        for setup in TLS_SETUP_IDS:
            cell = analysis.cell(n, c, setup)
            if cell is None:
                continue
            spread = cell.metrics.get("requests_per_sec")
            cpu = cell.metrics.get("cpu_server_ms_per_1k")
            found = counts.get((n, c, setup)) or counts.get((n, None, setup)) or []
            rows.append(
                TlsRow(
                    n,
                    c,
                    setup,
                    geometric_mean(spread),
                    analysis.ratio(n, c, setup),
                    geometric_mean(cpu),
                    total(found, "resumed"),
                    total(found, "handshakes"),
                    setup in NEW_CONNECTION_SETUPS or per_request,
                )
            )
    return TlsPart(
        tls.key,
        tls.version,
        tls.resumption,
        per_request,
        tls.cert_sha256,
        tls.cert_key,
        tls.openssl,
        tls.nginx_openssl,
        tls.go,
        tuple((s, p) for s, p in tls.setups.items() if isinstance(p, dict)),
        tuple(rows),
    )


def geometric_mean(spread) -> float | None:
    """Return the geometric mean of a cell's repeats as the analysis computed it (Spread.geometric, as the results table and the ratios summarise them), None without positive values."""
    return None if spread is None or spread.geometric is None else spread.geometric.estimate


def total(counts: list[dict], key: str) -> int | None:
    """Return the sum of one count over measurements, None when any of them lacks it."""
    values = [c.get(key) for c in counts]
    return sum(values) if values and all(isinstance(v, int) for v in values) else None


# The answer's two shares: nginx's TLS over Go's with keep-alive, and with a new connection per request.
KEEPALIVE_SHARE, HANDSHAKE_SHARE = "nginx-https", "nginx-https-new"


def shares(part: TlsPart) -> dict[str, list[TlsRow]]:
    """Return the rows behind the answer: 'keep-alive' (nginx-https over go-https) and 'handshakes' (nginx-https-new over go-https-new, or nginx-https in a --connection-per-request run)."""
    found: dict[str, list[TlsRow]] = {"keep-alive": [], "handshakes": []}
    for r in part.rows:
        if r.ratio is None or r.ratio.ratio is None or r.setup not in (KEEPALIVE_SHARE, HANDSHAKE_SHARE):
            continue
        found["handshakes" if r.new_connection else "keep-alive"].append(r)
    return found


def answer(part: TlsPart) -> str:
    """Return the TLS part's first sentence: what terminating at nginx keeps of Go crypto/tls's throughput with keep-alive and of its handshakes per second."""
    found = shares(part)
    if not found["keep-alive"] and not found["handshakes"]:
        return "No nginx-https measurement could be compared with go-https, so this run does not say what terminating TLS at nginx keeps."
    said = []
    for mode, what in (("keep-alive", "Go crypto/tls's throughput with keep-alive"), ("handshakes", "handshakes per second")):
        if found[mode]:
            owner = "its " if said else "Go crypto/tls's "
            what = what if mode == "keep-alive" else owner + what + " (a new connection per request)"
            said.append(f"{' and '.join(f'{share_text(r.ratio)} at GOMAXPROCS={r.gomaxprocs}' for r in found[mode])} of {what}")
    text = f"Terminating TLS at nginx keeps {', and '.join(said)}."
    if not found["handshakes"]:
        text += " Handshakes were not measured: add nginx-https-new and go-https-new (as --setups tls does) for them."
    elif not found["keep-alive"]:
        text += (
            " Keep-alive was not measured: add nginx-https and go-https, without --connection-per-request (as --setups tls does), for it."
        )
    return text


def share_text(ratio) -> str:
    """Return '56% (52-60%)' or '56%' without an interval."""
    text = f"{ratio.ratio:.0%}"
    if ratio.ci_low is not None and ratio.ci_high is not None:
        text += f" ({ratio.ci_low:.0%}-{ratio.ci_high:.0%})"
    return text
