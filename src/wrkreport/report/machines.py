"""Machines: a run's controller, target and wrk clients (manifest server_host, client_hosts, network) and its environment -> page tables and a terminal line.

A run on one machine names none of them, and then nothing here shows anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..runs.record import Host, RunRecord, record_of  # noqa: F401 - record_of: the doctest builds a record with it
from .fmt import display


@dataclass(frozen=True)
class MachineTable:
    """One machine of the run (controller, target, a client) with the environment table's fields."""

    title: str  # 'target: root@10.231.0.2'
    roles: str  # what ran there, in words
    rows: tuple[tuple[str, str], ...]


def machine_tables_of(record: RunRecord) -> list[MachineTable]:
    """Return the controller, the target and each client machine (none for a run that names no other machine)."""
    target, clients = record.server_host, record.client_hosts
    if target is None and not clients:
        return []
    local = [f"wrk as {c.client}" for c in clients if c.ssh == "local"] or ([] if clients else ["wrk"])
    roles = ["run_bench.sh", "the servers" if target is None else "", *local]
    here = Host(machine=record.machine, versions=record.versions, ulimit_n=record.ulimit_n, sysctl=record.sysctl)
    tables = [MachineTable("controller: this machine", join_roles(roles), tuple(host_rows(here)))]
    if target is not None:
        where = f"{target.ssh}" + (f" (address {target.address})" if target.address else "")
        tables.append(MachineTable(f"target: {where}", "the servers (Go, nginx, ...), over ssh", tuple(host_rows(target))))
    for client in clients:
        if client.ssh != "local":
            tables.append(MachineTable(f"{client.client}: {client.ssh}", "wrk, over ssh", tuple(host_rows(client))))
    return tables


FIELD_LABELS = {"memory_bytes": "memory", "cpu_model": "CPU model"}  # the value says its unit (23.5 GiB)


def field_label(key: str) -> str:
    """Return a machine field's label: 'memory_bytes' -> 'memory', 'usable_cores' -> 'usable cores'."""
    return FIELD_LABELS.get(key, key.replace("_", " "))


def join_roles(roles: list[str]) -> str:
    """Return the roles of a machine in words: 'run_bench.sh, the servers and wrk as client-1'."""
    roles = [r for r in roles if r]
    return roles[0] if len(roles) == 1 else ", ".join(roles[:-1]) + " and " + roles[-1]


def host_rows(host: Host) -> list[tuple[str, str]]:
    """Return one machine's fields as the environment table shows them: CPU, cores, memory, kernel, OS, versions, limits."""
    rows = []
    if host.machine is not None:
        rows.extend((field_label(k), display(v, k)) for k, v in host.machine.items())
    if host.versions is not None:
        rows.extend((f"version: {k}", display(v)) for k, v in host.versions.items())
    if host.ulimit_n is not None:
        rows.append(("ulimit -n", display(host.ulimit_n)))
    if host.sysctl is not None:
        rows.append(("sysctl", f"{len(host.sysctl)} kernel settings recorded (results.json)"))
    return rows


def rtt_lines(record: RunRecord) -> list[str]:
    """Return one sentence per measured round trip: from, to, median (min-max) over the samples, and how."""
    lines = []
    for rtt in record.rtt:
        figures = ", ".join(
            f"{word} {round(value, 3):g} ms"
            for word, value in (("median", rtt.median_ms), ("min", rtt.min_ms), ("max", rtt.max_ms))
            if value is not None
        )
        samples = f" over {rtt.samples} samples" if rtt.samples is not None else ""
        lines.append(f"{rtt.source} to {rtt.to}: round trip {figures or 'not recorded'}{samples} ({rtt.method})")
    return lines


def machines_line(record: RunRecord | None) -> str:
    """Return where the servers and wrk ran, in one line ('' for a run that names no other machine).

    >>> machines_line(record_of({"server_host": {"ssh": "root@10.0.0.2", "address": "10.0.0.2"}, "client_hosts": [{"client": "client-1", "ssh": "local"}]}))
    'machines: servers on root@10.0.0.2 (10.0.0.2); wrk on client-1 (this machine)'
    """
    record = record or RunRecord()
    target, clients = record.server_host, record.client_hosts
    if target is None and not clients:
        return ""
    servers = "this machine" if target is None else f"{target.ssh}" + (f" ({target.address})" if target.address else "")
    wrk = ", ".join(f"{c.client} ({'this machine' if c.ssh == 'local' else c.ssh})" for c in clients) or "this machine"
    return f"machines: servers on {servers}; wrk on {wrk}"


def environment_rows(record: RunRecord | None, machines: tuple = ()) -> list[tuple[str, str]]:
    """Return the run's environment (machine, versions, limits, times) as label/value pairs; with machines, those are in their tables."""
    if record is None or record.empty:
        return [("environment", "unknown: the run has no manifest.json")]
    rows = [
        ("run status", display(record.status) + (f" ({record.reason})" if record.reason else "")),
        ("started", display(record.started_at)),
        ("ended", display(record.ended_at)),
        ("command", display(record.command)),
    ]
    for section, values in (("machine", record.machine), ("versions", record.versions)) if not machines else ():
        if values is not None:
            rows.extend((f"{section}: {k.replace('_', ' ')}", display(v, k)) for k, v in values.items())
    rows.append(("ulimit -n", display(record.ulimit_n)))
    for entry in record.passes:
        said = entry.go_reported_gomaxprocs  # None: no Go server ran (an --app run)
        go = "" if said is None else f"Go reported runtime.GOMAXPROCS(0) = {display(said)}; "
        rows.append((f"GOMAXPROCS={entry.gomaxprocs}", f"{go}order {order_text(entry.order)}"))
    return rows


def order_text(order) -> str:
    """Return a pass's shuffled order: 'repeat 1: a, b; repeat 2: b, a'."""
    if isinstance(order, list) and all(isinstance(o, list) for o in order):
        return "; ".join(f"repeat {k}: {display(o)}" for k, o in enumerate(order, 1))
    return display(order)
