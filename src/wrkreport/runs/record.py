"""Run record: manifest.json (its values already checked by parsers/schema.py) read once into frozen dataclasses.

Every stage after runs/ reads the run's record by attribute: what a missing or odd value
means is decided here, once, and so is the meaning of every older shape of the file
(runs recorded by earlier versions of run_bench.sh, each fixture under tests/fixtures/runs):
no `load_generator` (wrk), no `upstream_keepalive` (on), no `check_tries` (1), passes
without blocks (no block design), no precision record. Free-form facts (a machine's
description, tool versions, sysctl values, a TLS probe's fields) stay read-only mappings of
what was recorded, shown as they are. The driver's helper (bench/) writes the file and keeps
its own dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from types import MappingProxyType

from ..core.sequential import Intervals, intervals_of
from ..core.units import finite

EMPTY: Mapping = MappingProxyType({})


def mapping(value) -> Mapping | None:
    """Return a read-only view of a JSON object, None for anything else."""
    return MappingProxyType(value) if isinstance(value, dict) else None


def picked(cls, value: dict, **given):
    """Return a record of cls with each field read from a manifest object by its own name (None when absent), or as given.

    >>> picked(Rtt, {"from": "a", "to": "b", "samples": 3}, source="a")
    Rtt(source='a', to='b', method=None, samples=3, min_ms=None, median_ms=None, max_ms=None)
    """
    return cls(**{f.name: given[f.name] if f.name in given else value.get(f.name) for f in fields(cls)})


def dicts(value) -> list[dict]:
    """Return the objects of a JSON list (none for anything else)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


@dataclass(frozen=True)
class Parameters:
    """The run's parameters (manifest `parameters`): each one the code reads, as recorded (None: not recorded), and all of them in order."""

    profile: object = None
    threads: object = None
    connections: object = None
    duration_s: object = None
    repeats: object = None
    setups: object = None
    gomaxprocs: object = None
    expect_header_bytes: object = None
    body_bytes: object = None
    handler_delay_ms: object = None
    upstream_keepalive: object = None  # None: recorded as null; a run from before the key: True (on unless --no-upstream-keepalive)
    pin_server: object = None
    app: object = None  # --app: {"command": ..., "b": {...}}
    load_generator: str = "wrk"  # wrk, ab, h2load; runs recorded before the key: wrk
    streams: object = None
    streams_mux: object = None
    connection_per_request: object = None
    slo: object = None  # {"percentile": 99, "ms": 10}
    rates: object = None
    rate_blocks: object = None
    rate_blocks_max: object = None
    capacity_precision_pct: object = None
    capacity_spreads: Mapping = field(default_factory=lambda: EMPTY)  # absent before 2026-11-30
    rate_duration_s: object = None
    rate_max_connections: object = None
    check_duration_s: object = None
    check_tries: object = 1  # runs recorded before the key: one try
    check_share: object = None  # since 2026-12-07: a capacity check judged by its seconds (core/capacity_check.py); None before
    intervals: object = None  # core/sequential.py's design record
    rounds_per_block: object = None
    adaptive: object = None
    smoke_test: object = None
    listed: tuple[tuple[str, object], ...] = ()  # every parameter as recorded, in the file's order (the conditions table, compare)

    @classmethod
    def of(cls, value) -> Parameters:
        """Return the parameters of a manifest's `parameters` object (all unrecorded for anything else).

        >>> p = Parameters.of({"threads": 2, "upstream_keepalive": False}); (p.threads, p.upstream_keepalive, p.load_generator, p.check_tries)
        (2, False, 'wrk', 1)
        """
        given = value if isinstance(value, dict) else {}
        named = {f.name: given[f.name] for f in fields(cls) if f.name in given and f.name != "listed"}
        if "upstream_keepalive" not in given:
            named["upstream_keepalive"] = True
        named["load_generator"] = given.get("load_generator") or "wrk"
        named["capacity_spreads"] = mapping(given.get("capacity_spreads")) or EMPTY
        return cls(**named, listed=tuple(given.items()))

    @property
    def names(self) -> tuple[str, ...]:
        """Return the recorded parameters' names, in order."""
        return tuple(key for key, _ in self.listed)

    def value(self, name: str):
        """Return a recorded parameter's value by its name (None when not recorded): for tables that list every parameter."""
        return next((v for k, v in self.listed if k == name), None)


@dataclass(frozen=True)
class Cell:
    """One setup at one block's start (manifest passes[].cells.SETUP): ready or not, and what it answered."""

    ready: object = None
    error: object = None
    status_line: object = None
    header_bytes: object = None
    response_bytes: object = None  # a front end's whole answer as sent
    body_bytes: object = None
    body_sha256: object = None
    headers_changed: tuple[str, ...] | None = None  # the header fields a front end changed, None when not compared
    tls: Mapping | None = None  # the handshake probe (protocol, cipher, alpn, error, ...)

    @classmethod
    def of(cls, value: dict) -> Cell:
        """Return a cell of its manifest object."""
        changed = value.get("headers_changed")
        return picked(cls, value, headers_changed=tuple(changed) if isinstance(changed, list) else None, tls=mapping(value.get("tls")))


@dataclass(frozen=True)
class Pass:
    """One block (or, in runs before blocks, one GOMAXPROCS pass) of the run: its cells in the order recorded."""

    gomaxprocs: object = None
    block: object = None
    go_reported_gomaxprocs: object = None
    order: object = None
    ended_at: object = None
    cells: tuple[tuple[str, Cell], ...] = ()

    @classmethod
    def of(cls, value: dict) -> Pass:
        """Return a pass of its manifest object (cells that are not objects left out)."""
        cells = value.get("cells") if isinstance(value.get("cells"), dict) else {}
        return picked(cls, value, cells=tuple((s, Cell.of(c)) for s, c in cells.items() if isinstance(c, dict)))

    def cell(self, setup: str) -> Cell | None:
        """Return a setup's cell in this pass, None without one."""
        return next((c for s, c in self.cells if s == setup), None)


@dataclass(frozen=True)
class Listed:
    """One measurement as the manifest lists it (measurements[]): its place in the list, identity, file and the servers' TLS counts."""

    index: int
    file: object = None
    setup: object = None
    gomaxprocs: object = None
    connections: object = None
    repeat: object = None
    block: object = None
    tls: Mapping | None = None  # {"resumed": n, "handshakes": n}

    @classmethod
    def of(cls, index: int, value: dict) -> Listed:
        """Return a listed measurement of its manifest object."""
        return picked(cls, value, index=index, tls=mapping(value.get("tls")))


@dataclass(frozen=True)
class RatePlan:
    """The rates the fixed-rate phase planned at one GOMAXPROCS value (fixed_rate_plan[]) and what they were a share of."""

    gomaxprocs: int
    rates: tuple[int, ...]
    basis: str | None
    listed: bool = True  # its rates were a list (a plan without one is shown, but plans no rate)


@dataclass(frozen=True)
class Host:
    """Another machine of the run (server_host, client_hosts[]): how it was reached and what it is."""

    ssh: object = None
    client: object = None
    address: object = None
    machine: Mapping | None = None
    versions: Mapping | None = None
    ulimit_n: object = None
    sysctl: Mapping | None = None

    @classmethod
    def of(cls, value: dict) -> Host:
        """Return a host of its manifest object."""
        return picked(cls, value, **{part: mapping(value.get(part)) for part in ("machine", "versions", "sysctl")})


@dataclass(frozen=True)
class Rtt:
    """One measured round trip between two machines (network.rtt[])."""

    source: object = None
    to: object = None
    method: object = None
    samples: object = None
    min_ms: object = None
    median_ms: object = None
    max_ms: object = None


@dataclass(frozen=True)
class Tls:
    """The run's TLS settings and probes (manifest `tls`), for its TLS setups."""

    key: object = None
    version: object = None
    resumption: object = None
    cert_sha256: object = None
    cert_key: object = None
    openssl: object = None
    nginx_openssl: object = None
    go: object = None
    setups: Mapping = field(default_factory=lambda: EMPTY)  # setup -> its first handshake probe

    @classmethod
    def of(cls, value: dict) -> Tls:
        """Return the TLS part of its manifest object."""
        return picked(cls, value, setups=mapping(value.get("setups")) or EMPTY)


@dataclass(frozen=True)
class VariantEntry:
    """The run's --variant (manifest `variant`): its name, options, nginx and what it changes."""

    name: str
    options: object = None
    nginx: object = None
    nginx_version: object = None
    upstream_keepalive: object = None
    pin_server: object = None
    app_b: object = None


@dataclass(frozen=True)
class Design:
    """The run's measurement design: rounds per block, blocks per GOMAXPROCS, seconds per measurement, stopping rule, smoke test."""

    rounds_per_block: int | None
    blocks: dict[str, int] | None  # None: a run recorded before blocks
    duration_s: float | None
    stopping_rule: bool
    smoke_test: bool

    def record(self) -> dict:
        """Return the design as results.json keeps it (its fields, in order)."""
        return asdict(self)


@dataclass(frozen=True)
class RunRecord:
    """manifest.json, read once: the run, its parameters, its blocks and cells, its machines, its fixed-rate plan and its precision."""

    status: object = None
    reason: object = None
    started_at: object = None
    ended_at: object = None
    command: object = None
    nginx_v: object = None
    ulimit_n: object = None
    machine: Mapping | None = None
    versions: Mapping | None = None
    sysctl: Mapping | None = None
    parameters: Parameters = field(default_factory=Parameters)
    passes: tuple[Pass, ...] = ()
    measurements: tuple[Listed, ...] = ()
    rate_plan: tuple[RatePlan, ...] = ()
    rate_setups: tuple[object, ...] = ()  # the setup of each fixed-rate measurement listed
    rate_passes_listed: bool = False  # the run reached its fixed-rate phase (a non-empty fixed_rate_passes)
    finished_rate_passes: int = 0
    precision: Mapping | None = None  # the helper's precision record, checked (precision_record)
    tls: Tls | None = None
    variant: VariantEntry | None = None
    server_host: Host | None = None
    client_hosts: tuple[Host, ...] = ()
    rtt: tuple[Rtt, ...] = ()
    environment: Mapping = field(default_factory=lambda: EMPTY)  # results.json's environment: these parts of the manifest as recorded
    empty: bool = False  # the manifest was an empty object: nothing known of the environment

    @property
    def intervals(self) -> Intervals:
        """Return how the run's intervals are read: its design (core/sequential.py) and family of verdict comparisons."""
        return intervals_of(self.parameters.intervals)

    @property
    def finished_passes(self) -> int:
        """Return how many blocks ended (an ended_at recorded)."""
        return len([p for p in self.passes if p.ended_at])

    @property
    def design(self) -> Design:
        """Return the run's design; runs recorded before blocks give blocks and rounds_per_block None."""
        blocked = [p for p in self.passes if finite(p.block, int) and finite(p.gomaxprocs, int)]
        blocks: dict[str, int] | None = None
        if blocked:
            blocks = {}
            for entry in blocked:
                key = str(entry.gomaxprocs)
                blocks[key] = max(blocks.get(key, 0), entry.block)
        params = self.parameters
        return Design(
            finite(params.rounds_per_block, int) if blocked else None,
            blocks,
            finite(params.duration_s),
            params.adaptive is True,
            params.smoke_test is True,
        )

    @property
    def planned_rates(self) -> dict[int, frozenset[int]] | None:
        """Return the rates the run planned per GOMAXPROCS (the light-load points), None when it has no plan; every other rate measured is a search step."""
        found: dict[int, frozenset[int]] = {}
        for plan in (p for p in self.rate_plan if p.listed):
            found[plan.gomaxprocs] = found.get(plan.gomaxprocs, frozenset()) | set(plan.rates)
        return found or None

    def app_cell(self, setup: str) -> Cell | None:
        """Return a setup's first cell with a whole body size recorded (the app's answer at a block's start), None without one."""
        for entry in self.passes:
            cell = entry.cell(setup)
            if cell is not None and finite(cell.body_bytes, int) is not None:
                return cell
        return None


def precision_record(value) -> Mapping | None:
    """Return the helper's precision record checked: target, met, worst/median half-width in %, stop reason, more-time estimate
    in s, the verdict rule's groups and ceiling; None when the run has none (or no target)."""
    if not isinstance(value, dict) or finite(value.get("target_pct")) is None:
        return None
    return MappingProxyType(
        {
            "target_pct": finite(value.get("target_pct")),
            "met": value.get("met") is True,
            "worst_half_width_pct": finite(value.get("worst_half_width_pct")),
            "median_half_width_pct": finite(value.get("median_half_width_pct")),
            "stop_reason": value.get("stop_reason") if isinstance(value.get("stop_reason"), str) else None,
            "more_time_estimate_s": finite(value.get("more_time_estimate_s")),
            "cpu_ratios": finite(value.get("cpu_ratios")),  # CPU-cost ratios the target covered (runs recorded before --variant: None)
            "rule": value.get("rule") if value.get("rule") in ("verdict", "precision") else "precision",  # runs before the verdict rule
            "verdicts": value.get("verdicts") if isinstance(value.get("verdicts"), dict) else {},
            "ceiling": finite(value.get("ceiling"), int),  # the verdict rule's blocks per GOMAXPROCS at most (absent before 2026-12-07)
            "beyond_ceiling": value.get("beyond_ceiling") is True and finite(value.get("ceiling"), int) is not None,
        }
    )


ENVIRONMENT = (
    "machine",
    "versions",
    "ulimit_n",
    "sysctl",
    "nginx_V",
    "parameters",
    "command",
    "started_at",
    "ended_at",
    "passes",
    "server_host",
    "client_hosts",
    "network",
)


def record_of(manifest: dict | None) -> RunRecord | None:
    """Return the run's record of its checked manifest (None without one: a run recorded by hand).

    >>> r = record_of({"status": "complete", "parameters": {"threads": 2}, "passes": [{"gomaxprocs": 1, "block": 1, "cells": {"go-http": {"ready": True}}}]})
    >>> r.status, r.parameters.threads, r.passes[0].cell("go-http").ready, r.design.blocks
    ('complete', 2, True, {'1': 1})
    """
    if not isinstance(manifest, dict):
        return None
    get = manifest.get
    plans = [
        RatePlan(
            p["gomaxprocs"],
            tuple(r for r in p.get("rates") or [] if isinstance(r, int)),
            p["basis"] if isinstance(p.get("basis"), str) else None,
            isinstance(p.get("rates"), list),
        )
        for p in dicts(get("fixed_rate_plan"))
        if isinstance(p.get("gomaxprocs"), int)
    ]
    tls, variant = get("tls"), get("variant")
    network = get("network") if isinstance(get("network"), dict) else {}
    rate_passes = get("fixed_rate_passes")
    return RunRecord(
        status=get("status"),
        reason=get("reason"),
        started_at=get("started_at"),
        ended_at=get("ended_at"),
        command=get("command"),
        nginx_v=get("nginx_V"),
        ulimit_n=get("ulimit_n"),
        machine=mapping(get("machine")),
        versions=mapping(get("versions")),
        sysctl=mapping(get("sysctl")),
        parameters=Parameters.of(get("parameters")),
        passes=tuple(Pass.of(p) for p in dicts(get("passes"))),
        measurements=tuple(Listed.of(i, m) for i, m in enumerate(get("measurements") or []) if isinstance(m, dict)),
        rate_plan=tuple(plans),
        rate_setups=tuple(m.get("setup", "") for m in dicts(get("fixed_rate_measurements"))),
        rate_passes_listed=bool(rate_passes),
        finished_rate_passes=len([p for p in dicts(rate_passes) if p.get("ended_at")]),
        precision=precision_record(get("precision")),
        tls=Tls.of(tls) if isinstance(tls, dict) else None,
        variant=picked(VariantEntry, variant) if isinstance(variant, dict) and isinstance(variant.get("name"), str) else None,
        server_host=Host.of(get("server_host")) if isinstance(get("server_host"), dict) else None,
        client_hosts=tuple(Host.of(c) for c in dicts(get("client_hosts"))),
        rtt=tuple(picked(Rtt, r, source=r.get("from")) for r in dicts(network.get("rtt"))),
        environment=MappingProxyType({k: get(k) for k in ENVIRONMENT}),
        empty=not manifest,
    )
