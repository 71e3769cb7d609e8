"""The HTTP/2 part of the page: its answer, the streams and load generator, what each setup negotiated and changed, one row per h2 cell, as strings."""

from __future__ import annotations

from dataclasses import dataclass

from ..checks.h2 import H2Part, h2_answer
from .fmt import fmt_number

FIXED_RATE_NOTE = (
    "The h2 setups' latency at a fixed load and their capacity (Latency at a fixed load, below) were measured open loop "
    "with vegeta's HTTP/2 client (-http2=true, h2 by ALPN; go-http with HTTP/1.1 keep-alive); h2load measured the "
    "closed-loop throughput here."
)
NO_FIXED_RATE_NOTE = (
    "No fixed-rate latency for the h2 setups in this run (--rates off): its HTTP/2 figures are closed-loop (h2load), "
    "their latencies at saturation, not at a fixed load."
)


@dataclass(frozen=True)
class H2Section:
    """What the template shows of the h2 setups."""

    answer: str
    settings: str
    negotiated: tuple[tuple[str, str, str, str, str], ...]  # setup, protocol, cipher, ALPN, header fields changed from go-h2's
    rows: tuple[
        tuple[str, str, str, str, str, str, str, str], ...
    ]  # group, setup, req/s, ratio, divided by, CPU multiple, CPU per 1k, header B per response
    fixed_rate_note: str = FIXED_RATE_NOTE


def ratio_words(ratio, digits: int = 3) -> str:
    """Return '0.712 (0.660-0.760)', '0.712' without an interval, the reason when excluded, '-' without a ratio."""
    if ratio is None:
        return "-"
    if ratio.ratio is None:
        return f"excluded: {ratio.excluded}" if ratio.excluded else "-"
    text = f"{ratio.ratio:.{digits}f}"
    return text + (
        f" ({ratio.ci_low:.{digits}f}-{ratio.ci_high:.{digits}f})" if ratio.ci_low is not None and ratio.ci_high is not None else ""
    )


def h2_section(part: H2Part | None) -> H2Section | None:
    """Return the HTTP/2 section's strings, or None when the run measured no h2 setup."""
    if part is None:
        return None
    streams = part.streams if part.streams is not None else "?"
    mux = part.streams_mux if part.streams_mux is not None else "?"
    settings = (
        f"Loaded with h2load {part.h2load or '(version not recorded)'} (nghttp2): -m {streams}, {streams} stream(s) in flight per "
        f"connection, and -m {mux} for the -mux setups (the same servers, multiplexed), the same -c connections and -t threads "
        "as the other setups; go-http with h2load --h1 (HTTP/1.1 keep-alive, one request in flight), so go-h2 / go-http compares "
        "the protocols with one tool. With one stream the ratios compare what the protocols cost at equal concurrency; the -mux "
        "setups show what many streams on one connection do (go-h2-mux over go-h2, nginx's -mux over go-h2-mux). nginx speaks HTTP/1.1 with "
        "upstream keep-alive to Go; the TLS settings are the TLS setups' (key, version, resumption), h2 offered by ALPN. Each h2 "
        "setup's answer was checked at every block's start with curl --http2 (200, go-http's body) and its handshake with openssl "
        "s_client -alpn h2; the 141-byte header rule is HTTP/1.1's (HPACK compresses the header block)."
    )
    changed = dict(part.changed)
    negotiated = tuple(
        (
            s,
            p.get("protocol") or "-",
            p.get("cipher") or "-",
            p.get("alpn") or "none",
            "(the divisor)" if s == "go-h2" else ", ".join(changed.get(s, ())) or "none",
        )
        for s, p in part.negotiated
    )
    rows = []
    for r in part.rows:
        rows.append(
            (
                f"GOMAXPROCS={r.gomaxprocs}, c={r.connections}",
                r.setup,
                fmt_number(r.requests_per_sec) if r.requests_per_sec else "-",
                ratio_words(r.ratio),
                r.ratio.baseline if r.ratio is not None else "-",
                ratio_words(r.cpu_ratio, 2),
                f"{r.cpu_server_ms_per_1k:.1f}" if r.cpu_server_ms_per_1k is not None else "-",
                "-"
                if r.header_bytes_per_response is None
                else f"{r.header_bytes_per_response:.1f}"
                + (f" ({r.header_space_savings_pct:.0f}% saved)" if r.header_space_savings_pct is not None else ""),
            )
        )
    return H2Section(h2_answer(part), settings, negotiated, tuple(rows), FIXED_RATE_NOTE if part.fixed_rate else NO_FIXED_RATE_NOTE)
