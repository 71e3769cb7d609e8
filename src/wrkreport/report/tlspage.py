"""The TLS part of the page: its answer, the negotiated parameters, the versions and one row per TLS cell, as strings."""

from __future__ import annotations

from dataclasses import dataclass

from ..checks.tls import TlsPart, answer
from .fmt import fmt_number


@dataclass(frozen=True)
class TlsSection:
    """What the template shows of the TLS setups."""

    answer: str
    settings: str
    versions: str
    negotiated: tuple[tuple[str, str, str, str, str], ...]  # setup, protocol, cipher, group, signature
    rows: tuple[
        tuple[str, str, str, str, str, str, str, str], ...
    ]  # group, setup, connections, req/s (= handshakes/s), ratio, baseline, CPU per 1k, resumed
    rate_label: str
    cpu_label: str
    article_note: str = "The 2013 article did not measure TLS, so no published figure stands beside these."


def tls_section(part: TlsPart | None) -> TlsSection | None:
    """Return the TLS section's strings, or None when the run measured no TLS setup."""
    if part is None:
        return None
    per_request = part.connection_per_request
    resumption = {True: "on (session cache and tickets on both servers)", False: "off (no session cache, no tickets, on both servers)"}.get(
        part.resumption, "unknown"
    )
    settings = (
        f"Key {part.key or 'unknown'} ({part.cert_key or 'certificate not recorded'}, certificate SHA-256 {part.cert_sha256 or 'not recorded'}), "
        f"TLS {part.version or '?'} only, session resumption {resumption}, no ALPN (HTTP/1.1). "
        + (
            "Every request on a new connection (wrk sends Connection: close, --connection-per-request), so every request is a handshake: "
            "requests per second are handshakes per second, CPU per request is CPU per handshake."
            if per_request
            else "Keep-alive connections, where handshakes are a negligible part of the load; the setups ending in -new "
            "(same servers, same ports) open a new connection per request (wrk sends Connection: close), so there every request "
            "is a handshake: requests per second are handshakes per second, CPU per 1,000 requests is CPU per 1,000 handshakes."
        )
    )
    versions = (
        f"nginx's OpenSSL: {part.nginx_openssl or 'not recorded'}; openssl on this machine: {part.openssl or 'not recorded'}; "
        f"Go's crypto/tls: {part.go or 'not recorded'}."
    )
    negotiated = tuple(
        (setup, p.get("protocol") or "-", p.get("cipher") or "-", p.get("group") or "-", p.get("signature") or "-")
        for setup, p in part.negotiated
    )
    rows = []
    for r in part.rows:
        ratio = r.ratio
        ratio_text = (
            "-"
            if ratio is None or ratio.ratio is None
            else f"{ratio.ratio:.3f}"
            + (f" ({ratio.ci_low:.3f}-{ratio.ci_high:.3f})" if ratio.ci_low is not None and ratio.ci_high is not None else "")
        )
        if ratio is not None and ratio.ratio is None:
            ratio_text = f"excluded: {ratio.excluded}"
        resumed = "not counted" if r.resumed is None else f"{r.resumed:,}"
        if r.handshakes is not None:
            resumed += f" of {r.handshakes:,} handshakes"
        rows.append(
            (
                f"GOMAXPROCS={r.gomaxprocs}, c={r.connections}",
                r.setup,
                "new per request (handshakes)" if r.new_connection else "keep-alive",
                fmt_number(r.requests_per_sec) if r.requests_per_sec else "-",
                ratio_text,
                ratio.baseline if ratio is not None else "-",
                f"{r.cpu_server_ms_per_1k:.1f}" if r.cpu_server_ms_per_1k is not None else "-",
                resumed,
            )
        )
    return TlsSection(
        answer(part),
        settings,
        versions,
        negotiated,
        tuple(rows),
        "req/s (new: handshakes/s)",
        "server CPU ms / 1k req (new: / 1k handshakes)",
    )
