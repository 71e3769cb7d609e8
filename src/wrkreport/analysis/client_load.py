"""The load generator's side of each measurement: its CPU per thread and the cores it had, per client machine, for the check that wrk (not the server) was not the limit."""

from __future__ import annotations

import pandas as pd

from .cells import cpu_list


def client_saturation(loads, wall_s: float, server_busy: float) -> dict | None:
    """Return one measurement's load-generator figures from each client's own threads and machine (None without clients).

    wrk_cpu_per_thread is the busiest client's CPU per thread; free_cores_per_thread the
    fewest free cores per wrk thread of any client machine (its usable cores, less the
    servers' busy cores when it is the target, shared by every client on it);
    wrk_cpu_share the clients' CPU time over their machines' cores.
    """
    if not loads or not wall_s or pd.isna(wall_s):
        return None
    busy = [(load.cpu_s / wall_s / load.threads, load) for load in loads if load.cpu_s is not None and load.threads]
    machines: dict[str, list] = {}
    for load in loads:
        machines.setdefault(load.host, []).append(load)
    free = []
    for on_it in machines.values():
        threads, cores = sum(load.threads or 0 for load in on_it), on_it[0].cores
        if threads and cores:
            left = cores - (server_busy if on_it[0].shares_servers and not pd.isna(server_busy) else 0.0)
            free.append((left / threads, min(on_it, key=lambda load: load.client)))
    cpu = [load.cpu_s for load in loads if load.cpu_s is not None]
    cores = sum(on_it[0].cores or 0 for on_it in machines.values())
    top = max(busy, key=lambda pair: pair[0]) if busy else None
    low = min(free, key=lambda pair: pair[0]) if free else None
    return {
        "wrk_cpu_per_thread": top[0] if top else float("nan"),
        "wrk_cpu_share": sum(cpu) / (wall_s * cores) if cpu and len(cpu) == len(loads) and cores else float("nan"),
        "free_cores_per_thread": low[0] if low else float("nan"),
        "busiest": describe_client(top[1], loads) if top else "",
        "shortest": describe_client(low[1], loads) if low else "",
        "apart": not any(load.shares_servers for load in loads),
    }


def describe_client(load, loads) -> str:
    """Return how a warning names a client: 'client-2 (local: 2 cores, 1 wrk thread)'; threads are all its machine's."""
    threads = sum(other.threads or 0 for other in loads if other.host == load.host)
    cores = f"{load.cores} core{'s' if load.cores != 1 else ''}" if load.cores else "cores unknown"
    return f"{load.client} ({load.host}: {cores}, {threads} wrk thread{'s' if threads != 1 else ''})"


def free_cores(table: pd.DataFrame, server_busy: pd.Series) -> pd.Series:
    """Return the cores wrk had: its pinned CPUs, or the machine's cores the servers left idle."""
    pinned = table["pin_client"].map(lambda text: float(len(cpu_list(text))) if isinstance(text, str) else float("nan"))
    return pinned.fillna(table["cpu_cores"].astype(float) - server_busy)
