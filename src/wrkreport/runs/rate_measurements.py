"""Run (fixed rate): a run directory's manifest `fixed_rate_measurements` -> checked records of its open-loop measurements.

The run directory is untrusted input, as for the wrk files (runs/directory.py): each entry was
checked by schema.py; its file must be named as the entry says (setup, GOMAXPROCS, block,
repeat, rate: bench/fixed_rate.rate_stem), is read through rawfile (a regular file inside
the directory, size-capped) and parsed by parsers/vegeta.py; its .cpu.json is checked by
schema.CPU_FIELDS. What cannot be used becomes a one-line problem Check, never an
exception. Every usable file gets the fixed-rate checks (core/rate_checks.py); a measurement
vegeta could not make (the entry's `problem`) is a failed `rate-run` check. A measurement
of several clients (its `clients`: each one's file and share of the rate) is read file by
file and merged exactly (core.rate_result.merge_results); a client without a usable file fails
the whole measurement: it is never read from fewer clients.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import ParseError
from ..core.rate_checks import Expected, answer_of, rate_checks
from ..core.rate_result import RateResult, merge_results
from ..core.records import Check
from ..core.setups import APP_BASELINE, SETUP_PATTERN
from ..parsers.schema import CPU_FIELDS, checked
from ..parsers.vegeta import MAX_TEXT_BYTES
from .record import Cell, RunRecord, record_of
from .sidecars import CPU_PROCESSES, REFUSED, cpu_seconds, read_json, read_raw

RATE_FILE = re.compile(
    rf"(?P<setup>{SETUP_PATTERN})\.gomaxprocs-(?P<n>[1-9][0-9]{{0,3}})\.block-(?P<block>[1-9][0-9]{{0,3}})\.run-(?P<repeat>[1-9][0-9]{{0,3}})"
    r"\.rate-(?P<rate>[1-9][0-9]{0,8})(?:\.(?P<client>client-[1-9][0-9]{0,3}))?\.vegeta\.csv\.gz",
    re.A,
)
LIST = "fixed_rate_measurements"


@dataclass(frozen=True)
class RateMeasurement:
    """One fixed-rate measurement as read: its identity, its record (None when unusable) and its checks."""

    setup: str
    gomaxprocs: int
    block: int
    rate: int
    file: str | None
    result: RateResult | None
    checks: tuple[Check, ...]
    search_high: int | None = None  # a step of the capacity search: its untested upper end (None: a planned rate)
    cpu: dict | None = None  # its .cpu.json as schema.CPU_FIELDS checked it (None: none, or unusable)
    capacity_check: bool = False  # the measurement at the capacity found, after the search (not a step of it)

    @property
    def held(self) -> bool:
        """Return True when the rate was held (rate-held passed)."""
        return any(c.name == "rate-held" and c.status == "pass" for c in self.checks)

    @property
    def failed(self) -> tuple[Check, ...]:
        """Return the failed checks."""
        return tuple(c for c in self.checks if c.status == "fail")

    @property
    def server_cpu_s(self) -> float | None:
        """Return the servers' CPU seconds over the attack (Go, fasthttp or Node, and nginx: every process but the load generator); None without a record."""
        processes = (self.cpu or {}).get("processes") or {}
        seconds = [s for p in CPU_PROCESSES if p != "wrk" and (s := cpu_seconds(processes.get(p))) is not None]
        return sum(seconds) if seconds else None

    @property
    def cpu_wall_s(self) -> float | None:
        """Return the wall-clock seconds the CPU record spans (None without a record)."""
        return (self.cpu or {}).get("wall_s")

    @property
    def usable(self) -> bool:
        """Return True when the latencies may be read as latencies at the rate: a record and no failed check."""
        return self.result is not None and not self.failed


def entry_label(entry: dict) -> str:
    """Return how a fixed-rate entry is named in a message."""
    return f"{entry.get('setup')} GOMAXPROCS={entry.get('gomaxprocs')} block {entry.get('block')} at {entry.get('rate')} req/s"


def read_rate_measurements(run_dir: Path, manifest: dict | None) -> tuple[list[RateMeasurement], list[Check]]:
    """Return the run's fixed-rate measurements and the problems met reading them (one line each)."""
    entries = (manifest or {}).get(LIST)
    if not isinstance(entries, list):
        return [], []
    cores, record = client_cores(manifest), record_of(manifest) or RunRecord()
    found, problems = [], []
    for entry in entries:
        if (
            not isinstance(entry, dict)
            or not all(isinstance(entry.get(k), int) for k in ("gomaxprocs", "block", "rate"))
            or not entry.get("setup")
        ):
            problems.append(Check("rate-run", "warn", f"manifest.json: a {LIST} entry without setup, gomaxprocs, block and rate; left out"))
            continue
        found.append(read_one(run_dir, entry, answer_in(record, entry["setup"]), problems, cores))
    return found, problems


def expected_answer(manifest: dict | None, setup: str) -> Expected:
    """Return the answer every fixed-rate request of a setup must get (core.rate_checks.answer_of), from the manifest's
    --body-bytes and the app alone's first answered cell.

    >>> expected_answer({"parameters": {"body_bytes": 12}}, "go-http")
    Expected(status=200, body_bytes=12)
    >>> expected_answer({"passes": [{"cells": {"app": {"status_line": "HTTP/1.1 201 Created", "body_bytes": 40}}}]}, "nginx-app")
    Expected(status=201, body_bytes=40)
    """
    return answer_in(record_of(manifest) or RunRecord(), setup)


def answer_in(record: RunRecord, setup: str) -> Expected:
    """Return the answer every fixed-rate request of a setup must get, from the run's record."""
    cell = record.app_cell(APP_BASELINE) or Cell()
    return answer_of(setup, record.parameters.body_bytes, cell.status_line, cell.body_bytes)


def planned_rates(manifest: dict | None) -> dict[int, frozenset[int]] | None:
    """Return the rates the run planned per GOMAXPROCS (its `fixed_rate_plan`: the light-load points), None when it has no plan.

    Every other rate measured is a step of the capacity search (core/capacity.py).

    >>> planned_rates({"fixed_rate_plan": [{"gomaxprocs": 1, "rates": [5500], "basis": "25% of ..."}]}), planned_rates({})
    ({1: frozenset({5500})}, None)
    """
    record = record_of(manifest)
    return record.planned_rates if record else None


def client_cores(manifest: dict | None) -> dict[str, int]:
    """Return each --client-hosts client's logical cores as the manifest recorded them ({} without clients; a malformed entry is left out).

    >>> client_cores({"client_hosts": [{"client": "client-1", "machine": {"logical_cores": 2}}, {"client": "client-2"}]})
    {'client-1': 2}
    """
    hosts = (manifest or {}).get("client_hosts")
    found = {}
    for host in hosts if isinstance(hosts, list) else []:
        machine = host.get("machine") if isinstance(host, dict) else None
        cores = machine.get("logical_cores") if isinstance(machine, dict) else None
        if (
            isinstance(host.get("client") if isinstance(host, dict) else None, str)
            and isinstance(cores, int)
            and not isinstance(cores, bool)
            and cores > 0
        ):
            found[host["client"]] = cores
    return found


def parse_results(source: str, data: bytes, rate: float | None, max_text_bytes: int = MAX_TEXT_BYTES) -> RateResult:
    """Return one vegeta file's record, read in bulk when it is plain (parsers/vegeta_bulk.py: numpy, so imported here, on the build's side only)."""
    from ..parsers.vegeta_bulk import parse_vegeta_bulk

    return parse_vegeta_bulk(source, data, rate, max_text_bytes)


def parts_of(entry: dict, name: str) -> tuple[list[tuple], str | None]:
    """Return an entry's (file, rate, client) parts (one without --client-hosts, client None), or why its clients cannot be read."""
    clients = entry.get("clients")
    if clients is not None and not (isinstance(clients, list) and len(clients) > 1 and all(isinstance(c, dict) for c in clients)):
        return [], "its list of clients is not a list of two or more clients"
    if clients and name != clients[0].get("file"):
        return [], f"its file {name[:120]!r} is not its first client's"
    if not clients:
        return [(name, entry["rate"], None)], None
    parts = [(c.get("file"), c.get("rate"), f"client-{i}") for i, c in enumerate(clients, 1)]
    if not all(isinstance(rate, int) and rate > 0 for _, rate, _ in parts) or sum(rate for _, rate, _ in parts) != entry["rate"]:
        return [], f"its clients' rates do not add up to {entry['rate']} req/s"
    return parts, None


def names_it(file: str, entry: dict, client: str | None) -> bool:
    """Return True when a results file's name says the entry's setup, GOMAXPROCS, block, run, rate (and client)."""
    match = RATE_FILE.fullmatch(file)
    said = (entry["setup"], entry["gomaxprocs"], entry["block"], entry.get("repeat", entry["block"]), entry["rate"], client)
    return (
        match is not None
        and (match["setup"], int(match["n"]), int(match["block"]), int(match["repeat"]), int(match["rate"]), match["client"]) == said
    )


def entry_cpu(run_dir: Path, entry: dict, problems: list[Check]) -> dict | None:
    """Return the entry's checked .cpu.json, None without one or when it is unreadable or has a wrong value (problems say why)."""
    if not isinstance(entry.get("cpu_file"), str):
        return None
    try:
        raw = read_json(run_dir, entry["cpu_file"], "cpu", problems)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    cpu, wrong = checked(raw, CPU_FIELDS)
    return None if wrong else cpu


def read_one(run_dir: Path, entry: dict, expected: Expected, problems: list[Check], cores: dict[str, int] | None = None) -> RateMeasurement:
    """Return one entry's measurement; problems reading it go to problems and leave it without a record."""
    where = {"setup": entry["setup"], "gomaxprocs": entry["gomaxprocs"], "repeat": entry.get("repeat")}
    name = entry.get("file")

    def unusable(message: str, check: str = "rate-run") -> RateMeasurement:
        failed = Check(check, "fail", f"{entry_label(entry)}: {message}", file=name, **where)
        problems.append(failed)
        return RateMeasurement(
            entry["setup"],
            entry["gomaxprocs"],
            entry["block"],
            entry["rate"],
            name,
            None,
            (failed,),
            entry.get("search_high"),
            capacity_check=entry.get("capacity_check") is True,
        )

    if isinstance(entry.get(REFUSED), str):
        return unusable(entry[REFUSED], "file-name")  # in the run's checks too: a refused name is the run's problem
    if not name:
        return unusable(f"not measured: {entry.get('problem') or 'no results file'}")
    clients = entry.get("clients")
    parts, why = parts_of(entry, name)
    if why:
        return unusable(why)
    results = []
    for file, rate, client in parts:
        if client is not None and (not isinstance(file, str) or clients[int(client[7:]) - 1].get("client") != client):
            why = clients[int(client[7:]) - 1].get("problem") or "no results file"
            return unusable(
                (why if why.startswith(f"{client} ") else f"{client}: {why}")
                if not isinstance(file, str)
                else f"its clients are not listed as client-1 to client-{len(clients)} in order"
            )
        if not names_it(file, entry, client):
            return unusable(
                f"the file name {file[:120]!r} does not say this measurement's setup, GOMAXPROCS, block, run, rate{' and client' if client else ''}"
            )
        data = read_raw(run_dir, file, "vegeta", problems)
        if data is None:
            return unusable(f"its results file {file[:120]!r} could not be read")
        try:
            results.append(parse_results(file, data, rate))
        except ParseError as exc:
            return unusable(exc.message(), "parse")
    result = results[0] if not clients else merge_results(results, entry["rate"], name)
    cpu = entry_cpu(run_dir, entry, problems)
    checks = tuple(rate_checks(result, expected, cpu, {"file": name, **where}, cores))
    return RateMeasurement(
        entry["setup"],
        entry["gomaxprocs"],
        entry["block"],
        entry["rate"],
        name,
        result,
        checks,
        entry.get("search_high"),
        cpu,
        entry.get("capacity_check") is True,
    )
