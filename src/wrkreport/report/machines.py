"""Machines: a run's controller, target and wrk clients (manifest server_host, client_hosts, network) and its environment -> page tables and a terminal line.

A run on one machine names none of them, and then nothing here shows anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from .fmt import display


@dataclass(frozen=True)
class MachineTable:
    """One machine of the run (controller, target, a client) with the environment table's fields."""

    title: str  # 'target: root@10.231.0.2'
    roles: str  # what ran there, in words
    rows: tuple[tuple[str, str], ...]


def machine_tables_of(manifest: dict) -> list[MachineTable]:
    """Return the controller, the target and each client machine (none for a run that names no other machine)."""
    target = manifest.get("server_host") if isinstance(manifest.get("server_host"), dict) else None
    clients = [c for c in manifest.get("client_hosts") or [] if isinstance(c, dict)]
    if target is None and not clients:
        return []
    local = [f"wrk as {c['client']}" for c in clients if c.get("ssh") == "local"] or ([] if clients else ["wrk"])
    roles = ["run_bench.sh", "the servers" if target is None else "", *local]
    tables = [MachineTable("controller: this machine", join_roles(roles), tuple(host_rows(manifest)))]
    if target is not None:
        where = f"{target.get('ssh')}" + (f" (address {target['address']})" if target.get("address") else "")
        tables.append(MachineTable(f"target: {where}", "the servers (Go, nginx, ...), over ssh", tuple(host_rows(target))))
    for client in clients:
        if client.get("ssh") != "local":
            tables.append(MachineTable(f"{client['client']}: {client.get('ssh')}", "wrk, over ssh", tuple(host_rows(client))))
    return tables


FIELD_LABELS = {"memory_bytes": "memory", "cpu_model": "CPU model"}  # the value says its unit (23.5 GiB)


def field_label(key: str) -> str:
    """Return a machine field's label: 'memory_bytes' -> 'memory', 'usable_cores' -> 'usable cores'."""
    return FIELD_LABELS.get(key, key.replace("_", " "))


def join_roles(roles: list[str]) -> str:
    """Return the roles of a machine in words: 'run_bench.sh, the servers and wrk as client-1'."""
    roles = [r for r in roles if r]
    return roles[0] if len(roles) == 1 else ", ".join(roles[:-1]) + " and " + roles[-1]


def host_rows(host: dict) -> list[tuple[str, str]]:
    """Return one machine's fields as the environment table shows them: CPU, cores, memory, kernel, OS, versions, limits."""
    rows = []
    machine = host.get("machine")
    if isinstance(machine, dict):
        rows.extend((field_label(k), display(v, k)) for k, v in machine.items())
    versions = host.get("versions")
    if isinstance(versions, dict):
        rows.extend((f"version: {k}", display(v)) for k, v in versions.items())
    if host.get("ulimit_n") is not None:
        rows.append(("ulimit -n", display(host.get("ulimit_n"))))
    if isinstance(host.get("sysctl"), dict):
        rows.append(("sysctl", f"{len(host['sysctl'])} kernel settings recorded (results.json)"))
    return rows


def rtt_lines(manifest: dict) -> list[str]:
    """Return one sentence per measured round trip: from, to, median (min-max) over the samples, and how."""
    network = manifest.get("network") if isinstance(manifest.get("network"), dict) else {}
    lines = []
    for rtt in network.get("rtt") or []:
        if not isinstance(rtt, dict):
            continue
        figures = ", ".join(
            f"{word} {round(rtt[key], 3):g} ms"
            for word, key in (("median", "median_ms"), ("min", "min_ms"), ("max", "max_ms"))
            if rtt.get(key) is not None
        )
        samples = f" over {rtt['samples']} samples" if rtt.get("samples") is not None else ""
        lines.append(f"{rtt.get('from')} to {rtt.get('to')}: round trip {figures or 'not recorded'}{samples} ({rtt.get('method')})")
    return lines


def machines_line(manifest: dict | None) -> str:
    """Return where the servers and wrk ran, in one line ('' for a run that names no other machine).

    >>> machines_line({"server_host": {"ssh": "root@10.0.0.2", "address": "10.0.0.2"}, "client_hosts": [{"client": "client-1", "ssh": "local"}]})
    'machines: servers on root@10.0.0.2 (10.0.0.2); wrk on client-1 (this machine)'
    """
    manifest = manifest or {}
    target = manifest.get("server_host") if isinstance(manifest.get("server_host"), dict) else None
    clients = [c for c in manifest.get("client_hosts") or [] if isinstance(c, dict)]
    if target is None and not clients:
        return ""
    servers = "this machine" if target is None else f"{target.get('ssh')}" + (f" ({target['address']})" if target.get("address") else "")
    wrk = ", ".join(f"{c.get('client')} ({'this machine' if c.get('ssh') == 'local' else c.get('ssh')})" for c in clients) or "this machine"
    return f"machines: servers on {servers}; wrk on {wrk}"


def environment_rows(manifest: dict, machines: tuple = ()) -> list[tuple[str, str]]:
    """Return the run's environment (machine, versions, limits, times) as label/value pairs; with machines, those are in their tables."""
    if not manifest:
        return [("environment", "unknown: the run has no manifest.json")]
    rows = [
        ("run status", display(manifest.get("status")) + (f" ({manifest['reason']})" if manifest.get("reason") else "")),
        ("started", display(manifest.get("started_at"))),
        ("ended", display(manifest.get("ended_at"))),
        ("command", display(manifest.get("command"))),
    ]
    for section in ("machine", "versions") if not machines else ():
        values = manifest.get(section)
        if isinstance(values, dict):
            rows.extend((f"{section}: {k.replace('_', ' ')}", display(v, k)) for k, v in values.items())
    rows.append(("ulimit -n", display(manifest.get("ulimit_n"))))
    passes = manifest.get("passes")
    if isinstance(passes, list):
        for entry in passes:
            if isinstance(entry, dict):
                said = entry.get("go_reported_gomaxprocs")  # None: no Go server ran (an --app run)
                go = "" if said is None else f"Go reported runtime.GOMAXPROCS(0) = {display(said)}; "
                rows.append((f"GOMAXPROCS={entry.get('gomaxprocs')}", f"{go}order {order_text(entry.get('order'))}"))
    return rows


def order_text(order) -> str:
    """Return a pass's shuffled order: 'repeat 1: a, b; repeat 2: b, a'."""
    if isinstance(order, list) and all(isinstance(o, list) for o in order):
        return "; ".join(f"repeat {k}: {display(o)}" for k, o in enumerate(order, 1))
    return display(order)
