"""Client outputs: the wrk outputs of one measurement's several load-generating machines -> one merged WrkResult.

With `--client-hosts` of two or more machines, each wrk writes its own
`<stem>.client-<i>.wrk.txt` and `<stem>.client-<i>.hist.json` (docs/raw-format.md, "Two
machines and several clients"). One measurement is all of them together: requests, bytes, each socket error
and non-2xx add; req/s and transfer/s are the sums of the clients' rates; mean latency
is weighted by each client's requests; percentiles come only from the clients'
histograms merged (latency_histogram.merge), exact, and are absent when any histogram is
missing -- never an average of percentiles. Which files belong together comes from the
manifest entry's `clients` list, else from the file names (same stem). Each client's
threads, wrk CPU and machine (ClientLoad, from the manifest's client_hosts and
server_host) feed the load-generator warnings. Standard library only; reading the run's
files is directory.py's job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.latency_histogram import LatencyHistogram, merge
from ..core.records import WrkResult

CLIENT_PART = re.compile(r"\.client-(?P<index>[1-9][0-9]{0,3})\.wrk\.txt$")
CLIENT_LABEL = re.compile(r"client-[1-9][0-9]{0,3}")
PERCENTILE_FIELDS = {
    50.0: "latency_p50_ms",
    75.0: "latency_p75_ms",
    90.0: "latency_p90_ms",
    99.0: "latency_p99_ms",
    99.9: "latency_p999_ms",
}


class ClientsProblem(ValueError):
    """The files of a several-client measurement cannot be merged (why is the message)."""


@dataclass(frozen=True)
class ClientFile:
    """One client's part of a measurement: its label, where it ran, its wrk text and histogram file names."""

    client: str  # client-1, client-2, ...
    file: str
    hist_file: str | None
    host: str | None = None  # ssh name, or "local"; None when no manifest says
    exit_code: int | None = None
    command: str | None = None


def client_stem(name: str) -> str | None:
    """Return the measurement stem of a client's wrk file name, None for a single-client name.

    >>> client_stem("go-http.gomaxprocs-1.block-1.run-2.client-2.wrk.txt")
    'go-http.gomaxprocs-1.block-1.run-2'
    >>> client_stem("go-http.gomaxprocs-1.run-1.wrk.txt") is None
    True
    """
    match = CLIENT_PART.search(name)
    return name[: match.start()] if match else None


def client_index(name: str) -> int:
    """Return i of a `<stem>.client-<i>.wrk.txt` name (0 when it is not one)."""
    match = CLIENT_PART.search(name)
    return int(match["index"]) if match else 0


def client_hist_name(name: str) -> str:
    """Return the histogram file written beside a client's wrk file.

    >>> client_hist_name("a.gomaxprocs-1.run-1.client-2.wrk.txt")
    'a.gomaxprocs-1.run-1.client-2.hist.json'
    """
    return name.removesuffix(".wrk.txt") + ".hist.json"


def by_names(names) -> dict[str, tuple[ClientFile, ...]]:
    """Return the client files among names grouped by stem, each group in client order (no manifest: names alone)."""
    groups: dict[str, list[str]] = {}
    for name in names:
        stem = client_stem(name)
        if stem is not None:
            groups.setdefault(stem, []).append(name)
    return {
        stem: tuple(ClientFile(f"client-{client_index(n)}", n, client_hist_name(n)) for n in sorted(files, key=client_index))
        for stem, files in sorted(groups.items())
    }


def numbering_problem(group: tuple[ClientFile, ...]) -> str | None:
    """Return why a name-grouped measurement is incomplete (clients not numbered 1..n), None when it is whole."""
    found = [client_index(c.file) for c in group]
    missing = sorted(set(range(1, max(found) + 1)) - set(found))
    if missing:
        return f"client {', '.join(map(str, missing))} of {max(found)} has no wrk file"
    return None


def from_entry(stem: str, entries: list) -> tuple[ClientFile, ...]:
    """Return a manifest entry's `clients` list as ClientFiles; raise ClientsProblem when it does not name this measurement's files."""
    found, seen = [], set()
    for i, entry in enumerate(entries):
        name = entry.get("file") if isinstance(entry, dict) else None
        if not isinstance(name, str) or client_stem(name) != stem:
            raise ClientsProblem(f"clients[{i}] does not name a {stem}.client-<i>.wrk.txt file")
        if name in seen:
            raise ClientsProblem(f"clients[{i}] names {name} a second time")
        seen.add(name)
        label = entry.get("client")
        hist = entry.get("hist_file")
        if hist is not None and hist != client_hist_name(name):
            raise ClientsProblem(f"clients[{i}].hist_file {hist!r} is not {client_hist_name(name)}")
        exit_code = entry.get("exit_code")
        found.append(
            ClientFile(
                label if isinstance(label, str) and CLIENT_LABEL.fullmatch(label) else f"client-{client_index(name)}",
                name,
                hist,
                entry.get("host") if isinstance(entry.get("host"), str) else None,
                exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None,
                entry.get("command") if isinstance(entry.get("command"), str) else None,
            )
        )
    if not found:
        raise ClientsProblem("its clients list is empty")
    return tuple(found)


# --- Merging ------------------------------------------------------------------------------------


def merge_results(results: list[WrkResult], histograms: list[LatencyHistogram] | None, source: str) -> WrkResult:
    """Return one measurement from its clients' parsed outputs; percentiles from the merged histograms, or None without them.

    Counts and rates add; latency_avg_ms is weighted by requests; latency_max_ms is the
    largest; figures that do not add across clients (stdev, per-thread req/s) are None.
    threads and connections are the totals the server saw.
    """
    if not results:
        raise ClientsProblem("no client output to merge")
    tools = {r.tool for r in results}
    if tools != {"wrk"}:
        raise ClientsProblem(f"clients must all be wrk outputs, found {', '.join(sorted(tools))}")
    urls = {r.url for r in results}
    if len(urls) > 1:
        raise ClientsProblem(f"the clients loaded different URLs ({', '.join(sorted(urls))})")
    merged = merge(histograms) if histograms else None
    percentiles = {name: merged.percentile_ms(p) if merged and merged.count else None for p, name in PERCENTILE_FIELDS.items()}
    requests = sum(r.requests for r in results)
    return WrkResult(
        source=source,
        tool="wrk",
        url=results[0].url,
        duration_s=max(r.duration_s for r in results),
        threads=sum(r.threads for r in results),
        connections=sum(r.connections for r in results),
        latency_avg_ms=weighted_mean([(r.latency_avg_ms, r.requests) for r in results]) if requests else None,
        latency_stdev_ms=None,
        latency_max_ms=max_or_none(r.latency_max_ms for r in results),
        latency_within_stdev_pct=None,
        req_per_thread_avg=None,
        req_per_thread_stdev=None,
        req_per_thread_max=None,
        **percentiles,
        requests=requests,
        elapsed_s=max(r.elapsed_s for r in results),
        bytes_read=sum(r.bytes_read for r in results),
        errors_connect=sum(r.errors_connect for r in results),
        errors_read=sum(r.errors_read for r in results),
        errors_write=sum(r.errors_write for r in results),
        errors_timeout=sum(r.errors_timeout for r in results),
        non_2xx_3xx=sum(r.non_2xx_3xx for r in results),
        requests_per_sec=sum_or_none(r.requests_per_sec for r in results),
        transfer_bytes_per_sec=sum_or_none(r.transfer_bytes_per_sec for r in results),
        version=results[0].version,
    )


def weighted_mean(pairs) -> float | None:
    """Return the mean of values weighted by counts (None when a value is missing or nothing counted).

    >>> weighted_mean([(1.0, 1), (4.0, 3)])
    3.25
    """
    pairs = list(pairs)
    total = sum(count for _, count in pairs)
    if total == 0 or any(value is None for value, count in pairs if count):
        return None
    return sum(value * count for value, count in pairs if count) / total


def sum_or_none(values) -> float | None:
    """Return the sum, None when any value is missing."""
    values = list(values)
    return None if any(v is None for v in values) else float(sum(values))


def max_or_none(values) -> float | None:
    """Return the largest value present, None when none is."""
    present = [v for v in values if v is not None]
    return max(present) if present else None


@dataclass(frozen=True)
class ClientLoad:
    """One wrk client of a measurement as the saturation warnings see it: its threads, CPU, machine and cores."""

    client: str  # client-1, ...
    host: str  # ssh name, or "local" (the controller)
    threads: int | None  # its wrk -t
    cpu_s: float | None  # its wrk's user + system seconds during the measurement (None: not read)
    cores: int | None  # usable cores of its machine (None: not recorded)
    shares_servers: bool  # it ran on the target, so the servers' CPU time came out of its cores


# --- Who ran where (the saturation warnings) ------------------------------------------------


def manifest_machines(manifest: dict | None) -> bool:
    """Return True when the manifest names a target or client machines."""
    return bool(manifest) and any(isinstance(manifest.get(key), (dict, list)) for key in ("server_host", "client_hosts"))


def client_loads(
    group: tuple[ClientFile, ...] | None, row: dict, cpu_parts: dict | None, threads_of: dict, manifest: dict | None
) -> tuple[ClientLoad, ...]:
    """Return each client of one measurement with its threads, wrk CPU seconds and its machine's cores (for the saturation warnings).

    Without client_hosts the only client is the controller ("local"). A client shares
    its CPUs with the servers when it is the target: "local" without server_host, or
    the target's own ssh name.
    """
    manifest = manifest or {}
    hosts = {h["client"]: h for h in manifest.get("client_hosts") or [] if isinstance(h, dict) and isinstance(h.get("client"), str)}
    target = manifest.get("server_host") if isinstance(manifest.get("server_host"), dict) else None
    controller = manifest.get("machine") if isinstance(manifest.get("machine"), dict) else {}
    parts = group or (ClientFile("client-1", row["file"], None, None),)
    found = []
    for part in parts:
        host = hosts.get(part.client) or (next(iter(hosts.values())) if len(hosts) == 1 and group is None else {})
        ssh = host.get("ssh") if isinstance(host.get("ssh"), str) else (part.host or "local")
        machine = host.get("machine") if isinstance(host.get("machine"), dict) else (controller if ssh == "local" else {})
        cores = machine.get("usable_cores") or machine.get("logical_cores")
        shares = (
            (ssh == "local" and target is None) or (target is not None and ssh == target.get("ssh")) or one_kernel(host, target, manifest)
        )
        if group is None:
            threads, cpu = row.get("threads"), row.get("cpu_wrk_s")
        else:
            threads, cpu = threads_of.get(part.client), (cpu_parts or {}).get(part.client)
        found.append(ClientLoad(part.client, ssh, threads if isinstance(threads, int) else None, none_if_missing(cpu), cores, shares))
    return tuple(found)


def one_kernel(host: dict, target: dict | None, manifest: dict) -> bool:
    """Return True when a client and the target report the same kernel boot id: one machine (namespaces, containers), so shared CPUs."""
    if target is None:
        return False
    mine = host.get("boot_id") if host.get("ssh", "local") != "local" else manifest.get("boot_id")
    return isinstance(mine, str) and mine == target.get("boot_id")


def none_if_missing(value) -> float | None:
    """Return value as a float, None when absent or NaN."""
    if value is None:
        return None
    value = float(value)
    return None if value != value else value


# --- Files named on a command line (`wrkreport parse`) ----------------------------------------


def group_paths(paths: list[str]) -> list[list[str]]:
    """Return the paths in argument order, the `<stem>.client-<i>.wrk.txt` of one stem (same directory) together, by i.

    >>> group_paths(["a.run-1.client-2.wrk.txt", "b.wrk.txt", "a.run-1.client-1.wrk.txt"])
    [['a.run-1.client-1.wrk.txt', 'a.run-1.client-2.wrk.txt'], ['b.wrk.txt']]
    """
    from ..parsers.vegeta import client_part  # a fixed-rate measurement's `<stem>.client-<i>.vegeta.csv.gz` group the same way

    groups: dict[object, list[str]] = {}
    for i, path in enumerate(paths):
        vegeta = client_part(path)
        stem = client_stem(path) or (("vegeta", vegeta[0]) if vegeta else None)
        groups.setdefault(i if stem is None else stem, []).append(path)
    index = lambda path: client_index(path) or (client_part(path) or ("", 0))[1]  # noqa: E731
    return [sorted(group, key=index) if len(group) > 1 else group for group in groups.values()]


def merge_files(paths: list[str]) -> tuple[WrkResult, list[str]]:
    """Return one measurement from its clients' wrk files (each one's .hist.json beside it when present), and the clients without one.

    A file that is not a usable wrk output raises ParseError naming it: a measurement is
    never summed from fewer clients.
    """
    from pathlib import Path

    from ..core.errors import ParseError
    from ..parsers import parse_file
    from ..parsers.histogram import read_histogram_file

    results, histograms, without = [], [], []
    for path in paths:
        results.append(parse_file(path))
        hist = client_hist_name(path)
        if Path(hist).exists():
            histograms.append(read_histogram_file(hist))
        else:
            without.append(f"client-{client_index(path)}")
    try:
        merged = merge_results(results, None if without else histograms, client_stem(paths[0]) or paths[0])
    except ClientsProblem as exc:
        raise ParseError(client_stem(paths[0]) or paths[0], None, str(exc)) from None
    return merged, without
