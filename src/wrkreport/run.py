"""Run: one raw/<run-id>/ directory -> a tidy table of measurements, header captures and problems.

A run directory holds `<setup>.gomaxprocs-<N>[.c<C>][.block-<b>].run-<k>.wrk.txt` (one wrk
output per measurement; `.ab.txt` for an ApacheBench one, read the same way; `.block-<b>`
names the server start it was measured in, absent in runs recorded before blocks),
`<setup>.gomaxprocs-<N>.headers.txt` (the `curl -sI` capture per cell), beside a wrk file
its `.cpu.json` and `.hist.json` (wrk's latency histogram, histogram.py) and,
when `run_bench.sh` wrote it, `manifest.json` (docs/raw-format.md). Without a manifest the
file names alone say setup, GOMAXPROCS and repeat, so wrk files dropped in by hand work.
Nothing here fails on one bad file: a file that does not parse, a name that does not fit
or a manifest that cannot be read becomes a problem (a failed or warned Check) and the
rest is still read. The directory is untrusted input: every file is read through
rawfile.read_bytes (regular files inside the directory, size-capped) and every JSON value
is checked by schema.py here, so later steps never see a bad one.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .errors import NoUsableData, ParseError, RefusedFile
from .clients import (
    ClientFile,
    ClientLoad,
    ClientsProblem,
    by_names,
    client_hist_name,
    client_loads,
    client_stem,
    from_entry,
    manifest_machines,
    merge_results,
    numbering_problem,
)
from .latency_histogram import LatencyHistogram, merge
from .parsers.histogram import hist_file_name, parse_histogram
from .model import FIELDS, Check, setup_order
from .parsers import parse_file
from .rawfile import CAP_BYTES, read_bytes
from .schema import CPU_FIELDS, MANIFEST_FIELDS, SETUP_KEYED, checked, load_json

WRK_FILE = re.compile(
    r"(?P<setup>[A-Za-z0-9][A-Za-z0-9_-]*)\.gomaxprocs-(?P<gomaxprocs>[0-9]{1,4})"
    r"(?:\.c(?P<level>[0-9]{1,7}))?(?:\.block-(?P<block>[1-9][0-9]{0,3}))?\.run-(?P<repeat>[0-9]{1,4})"
    r"(?:\.client-(?P<client>[1-9][0-9]{0,3})\.wrk|\.(?:wrk|ab))\.txt"
)
HEADERS_FILE = re.compile(r"(?P<setup>[A-Za-z0-9][A-Za-z0-9_-]*)\.gomaxprocs-(?P<gomaxprocs>[0-9]{1,4})\.headers\.txt")
RUN_ID = re.compile(r"[0-9]{8}T[0-9]{6}Z(?:-[0-9]+)?")
MANIFEST = "manifest.json"
LATEST = "latest"
RAW_SUFFIXES = (".wrk.txt", ".ab.txt")  # one measurement's load generator output: wrk (or wrk2), or ab
MAX_FIELD_PROBLEMS = 20  # manifest values reported one by one; the rest are counted
# Wrong values under these keys fail a check (machines, clients) instead of a warning: they say where
# the run ran and which files make up a measurement (issue 12's keys).
MACHINE_KEYS = re.compile(r"(?:server_host|client_hosts|network|parameters\.(?:server_host|server_address|client_hosts|ssh_config))\b")
CLIENTS_KEY = re.compile(r"measurements\[([0-9]+)\]\.(?:clients|client|host)\b")

# Columns of the measurements table, in order: identity, provenance, every parsed field, then
# the CPU seconds the driver measured around the run (<stem>.cpu.json; NaN when absent), then
# the block (server start) of the measurement: NaN for runs recorded before blocks, and the
# number of wrk clients merged into it (1 but for --client-hosts). Appended last so
# results.csv keeps its earlier column order.
ID_COLUMNS = ("setup", "gomaxprocs", "connections", "repeat", "file", "command", "exit_code")
CPU_PROCESSES = ("go", "fasthttp", "node", "nginx", "wrk")  # "wrk": the load generator (wrk or ab)
CPU_COLUMNS = tuple(f"cpu_{name}_s" for name in CPU_PROCESSES) + ("cpu_wall_s", "cpu_cores", "pin_client", "pin_server")
COLUMNS = ID_COLUMNS + tuple(name for name in FIELDS if name != "connections") + CPU_COLUMNS + ("block", "clients")


@dataclass(frozen=True)
class HeaderCapture:
    """The verbatim `curl -sI` header block of one setup at one GOMAXPROCS."""

    setup: str
    gomaxprocs: int
    file: str  # relative to the run directory
    text: str  # decoded as Latin-1, so every byte is kept and len(text) is the byte count
    size_bytes: int

    @property
    def status_line(self) -> str:
        """Return the first line without its CRLF ('' when the capture is empty)."""
        return self.text.split("\n", 1)[0].rstrip("\r")

    @property
    def status_code(self) -> int | None:
        """Return the HTTP status code of the status line, or None if it has none."""
        match = re.match(r"HTTP/[0-9.]+ ([0-9]{3})\b", self.status_line)
        return int(match[1]) if match else None


@dataclass(frozen=True)
class Run:
    """Everything read from one run directory."""

    path: Path
    run_id: str
    manifest: dict | None
    measurements: pd.DataFrame  # one row per parsed wrk file, COLUMNS in order
    headers: tuple[HeaderCapture, ...]
    problems: tuple[Check, ...]  # files that could not be used, with why
    texts: dict[str, str] = field(default_factory=dict)  # wrk file name -> its text (provenance)
    histograms: dict[str, LatencyHistogram] = field(default_factory=dict)  # wrk file name -> its .hist.json, when there is one
    # wrk file name -> its clients' threads, CPU and machine cores: every measurement of a run whose
    # manifest names machines (server_host, client_hosts), and every several-client one; else empty.
    client_loads: dict[str, tuple[ClientLoad, ...]] = field(default_factory=dict)

    @property
    def status(self) -> str | None:
        """Return the manifest's status (complete, running, interrupted, failed), None without one."""
        return self.manifest.get("status") if self.manifest else None

    @property
    def parameters(self) -> dict:
        """Return the manifest's parameters ({} without a manifest)."""
        value = (self.manifest or {}).get("parameters")
        return value if isinstance(value, dict) else {}


# --- Which directory ---------------------------------------------------------------------


def resolve_run_dir(path: str | Path) -> Path:
    """Return the run directory path names: itself, or for raw/ its newest run (raw/latest, else newest id)."""
    path = Path(path)
    if not path.exists():
        raise NoUsableData(f"{path}: no such directory (run ./run_bench.sh first, or name a run directory)")
    if not path.is_dir():
        raise NoUsableData(f"{path}: not a directory; expected raw/ or raw/<run-id>/")
    if is_run_dir(path):
        return path
    latest = path / LATEST
    if latest.is_dir() and is_run_dir(latest):
        return latest.resolve()
    runs = [p for p in path.iterdir() if p.is_dir() and p.name != LATEST and is_run_dir(p)]
    if not runs:
        raise NoUsableData(f"{path}: no run found (no manifest.json or *.wrk.txt here or in a run directory); run ./run_bench.sh first")
    stamped = sorted((p for p in runs if RUN_ID.fullmatch(p.name)), key=run_sort_key)
    # Timestamped ids order themselves; directories named by hand go by modification time.
    return stamped[-1] if stamped else max(runs, key=lambda p: (p.stat().st_mtime, p.name))


def is_run_dir(path: Path) -> bool:
    """Return True when path holds a manifest or at least one wrk output."""
    return (path / MANIFEST).is_file() or any(path.glob("*.wrk.txt")) or any(path.glob("*.ab.txt"))


def run_sort_key(path: Path) -> tuple[str, int]:
    """Order run ids by time, then by their -2, -3 suffix."""
    stamp, _, suffix = path.name.partition("-")
    return stamp, int(suffix or 1)


# --- Reading -------------------------------------------------------------------------------


def load_run(path: str | Path) -> Run:
    """Read a run directory (or raw/, meaning its newest run) into a Run."""
    run_dir = resolve_run_dir(path)
    problems: list[Check] = []
    manifest = read_manifest(run_dir, problems)
    listed = manifest_measurements(manifest)
    names = {p.name for p in run_dir.iterdir()}  # every kind of entry: read_raw refuses what is not a regular file
    wrk_names = sorted(name for name in names if name.endswith(RAW_SUFFIXES))
    for name in sorted(set(listed) - names):
        if "clients" not in listed[name]:  # a missing client's file fails the `clients` check instead
            problems.append(Check("missing-file", "warn", f"{name} is listed in manifest.json but not in the run directory", file=name))

    rows, texts, histograms = [], {}, {}
    for name in wrk_names:
        match = WRK_FILE.fullmatch(name)
        if match is None:
            problems.append(
                Check(
                    "file-name",
                    "warn",
                    f"{name}: name does not follow <setup>.gomaxprocs-<N>.run-<k>{raw_suffix(name)}; ignored",
                    file=name,
                )
            )
            continue
        if match["client"] is not None:
            continue  # one client's part of a measurement: read with the others below
        twin = name.removesuffix(".ab.txt") + ".wrk.txt"
        if name.endswith(".ab.txt") and twin in names:
            problems.append(Check("file-name", "warn", f"{name}: the same measurement as {twin}; the ab output is ignored", file=name))
            continue
        data = read_raw(run_dir, name, "wrk", problems)
        if data is None:
            continue
        try:
            result = parse_file(run_dir / name, data)
        except ParseError as exc:
            problems.append(problem_check(match, name, exc.message()))
            continue
        texts[name] = data.decode("utf-8", errors="replace")
        row = measurement_row(match, name, result, listed.get(name, {}))
        row.update(read_cpu(run_dir, cpu_file_name(name), problems))
        rows.append(row)
        histogram = read_histogram(run_dir, hist_file_name(name), problems)
        if histogram is not None:
            histograms[name] = histogram

    loads = {}
    for stem, group in client_groups(listed, wrk_names, problems).items():
        found = read_clients(run_dir, stem, group, listed.get(group[0].file, {}), problems)
        if found is None:
            continue
        row, text, histogram, cpu_parts, threads = found
        rows.append(row)
        texts[row["file"]] = text
        if histogram is not None:
            histograms[row["file"]] = histogram
        loads[row["file"]] = client_loads(group, row, cpu_parts, threads, manifest)
    if manifest_machines(manifest):
        for row in rows:  # single-client measurements of a run with a named target or client
            if row["file"] not in loads:
                loads[row["file"]] = client_loads(None, row, None, {}, manifest)

    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table = sort_measurements(table)
    problems.extend(mixed_tools(table))
    headers = tuple(read_headers(run_dir, sorted(names), problems))
    if table.empty and not problems and not headers:
        raise NoUsableData(f"{run_dir}: no wrk output (*.wrk.txt) in this run directory")
    return Run(run_dir, run_dir.name, manifest, table, headers, tuple(problems), texts, histograms, {k: v for k, v in loads.items() if v})


# --- Several clients per measurement (clients.py merges) -------------------------------------


def clients_check(name: str, message: str, status: str = "fail") -> Check:
    """Return the `clients` check of the measurement whose (first client's) file is name."""
    match = WRK_FILE.fullmatch(name)
    if match is None:
        return Check("clients", status, message, file=name)
    return Check("clients", status, message, match["setup"], int(match["gomaxprocs"]), int(match["repeat"]), name)


def client_groups(listed: dict[str, dict], wrk_names: list[str], problems: list[Check]) -> dict[str, tuple[ClientFile, ...]]:
    """Return the client files of each several-client measurement by stem: the manifest's `clients` lists, else the names.

    A list that does not name the measurement's own files, a client numbering with a gap,
    or an entry schema.py refused fails the measurement's `clients` check; it is not read.
    """
    refused = {c.file for c in problems if c.name == "clients" and c.file}
    groups: dict[str, tuple[ClientFile, ...]] = {}
    blocked = {client_stem(name) for name in refused} - {None}
    for name, entry in listed.items():
        if "clients" not in entry:
            continue
        stem = client_stem(name)
        if stem is None:
            problems.append(clients_check(name, f"{MANIFEST}: the entry of {name} lists clients, but its file is not a <stem>.client-1.wrk.txt name; not used"))
            continue
        blocked.add(stem)
        if name in refused:
            continue
        try:
            groups[stem] = from_entry(stem, entry["clients"] if isinstance(entry["clients"], list) else [])
        except ClientsProblem as exc:
            problems.append(clients_check(name, f"{MANIFEST}: the entry of {name}: {exc}; not used"))
    for stem, group in by_names(wrk_names).items():
        if stem in groups:
            listed_files = {c.file for c in groups[stem]}
            for extra in (c.file for c in group if c.file not in listed_files):
                problems.append(Check("file-name", "warn", f"{extra}: not among the clients {MANIFEST} lists for {stem}; ignored", file=extra))
            continue
        if stem in blocked or WRK_FILE.fullmatch(group[0].file) is None:
            continue
        gap = numbering_problem(group)
        if gap:
            problems.append(clients_check(group[0].file, f"{stem}: {gap}: a measurement is not summed from fewer clients; not used"))
            continue
        groups[stem] = group
    return dict(sorted(groups.items()))


def read_clients(run_dir: Path, stem: str, group: tuple[ClientFile, ...], entry: dict, problems: list[Check]):
    """Return (row, raw text, merged histogram or None, wrk CPU s and threads of each client) of one several-client measurement; None when it fails `clients`."""
    first = group[0].file
    match = WRK_FILE.fullmatch(first)
    results, texts, hists, without = [], [], [], []
    for part in group:
        if not os.path.lexists(run_dir / part.file):
            problems.append(clients_check(first, f"{part.client}'s output {part.file} is missing: {stem} is not summed from fewer clients; not used"))
            return None
        data = read_raw(run_dir, part.file, "wrk", problems)
        if data is None:
            problems.append(clients_check(first, f"{part.client}'s output {part.file} could not be read safely: {stem} is not used"))
            return None
        try:
            results.append(parse_file(run_dir / part.file, data))
        except ParseError as exc:
            problems.append(clients_check(first, f"{part.client}'s output is not usable ({exc.message()}): {stem} is not used"))
            return None
        texts.append(f"==> {part.client}" + (f" ({part.host})" if part.host else "") + f": {part.file} <==\n" + data.decode("utf-8", errors="replace"))
        histogram = read_histogram(run_dir, client_hist_name(part.file), problems)
        if histogram is None:
            without.append(part.client)
        else:
            hists.append(histogram)
    if without:
        problems.append(
            clients_check(
                first,
                f"{stem}: no usable latency histogram from {', '.join(without)}: the merged measurement has no percentiles "
                "(an average of the clients' percentiles would not be one)",
                "warn",
            )
        )
    try:
        merged = merge_results(results, None if without else hists, stem)
    except ClientsProblem as exc:
        problems.append(clients_check(first, f"{stem}: {exc}; not used"))
        return None
    row = measurement_row(match, first, merged, entry)
    row["clients"] = len(group)
    cpu = read_cpu(run_dir, stem + ".cpu.json", problems, keep_clients=True)
    parts = cpu.pop("wrk_clients", None)
    row.update(cpu)
    threads = {part.client: result.threads for part, result in zip(group, results)}
    return row, "\n".join(texts), None if without else merge(hists, source=stem), parts, threads


def raw_suffix(name: str) -> str:
    """Return the load generator suffix a raw file name ends with (.wrk.txt or .ab.txt)."""
    return next(suffix for suffix in RAW_SUFFIXES if name.endswith(suffix))


def mixed_tools(table: pd.DataFrame) -> list[Check]:
    """Warn when a run holds both wrk and ab measurements: its ratios would pair two load generators."""
    tools = set(table["tool"].replace("wrk2", "wrk"))
    if len(tools) < 2:
        return []
    count = int((table["tool"] == "ab").sum())
    return [Check("file-name", "warn", f"this run mixes wrk and ab outputs ({count} of {len(table)} by ab): ratios may pair two load generators")]


def read_raw(run_dir: Path, name: str, kind: str, problems: list[Check]) -> bytes | None:
    """Return the bytes of one file of the run (rawfile.read_bytes); a refused file is a warned check, None."""
    try:
        return read_bytes(run_dir / name, CAP_BYTES[kind], root=run_dir)
    except RefusedFile as exc:
        problems.append(Check("refused", "warn", f"{name}: {exc.reason}", file=name))
        return None


def read_json(run_dir: Path, name: str, kind: str, problems: list[Check]):
    """Return the JSON value of one file of the run, None when absent or refused; raise ValueError when not JSON."""
    if not os.path.lexists(run_dir / name):
        return None
    data = read_raw(run_dir, name, kind, problems)
    if data is None:
        return None
    try:
        return load_json(data)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def read_manifest(run_dir: Path, problems: list[Check]) -> dict | None:
    """Return manifest.json as a dict with every value checked (schema.py), None if absent; what is wrong becomes problems."""
    try:
        data = read_json(run_dir, MANIFEST, "manifest", problems)
    except ValueError as exc:
        where = f"line {exc.lineno}: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        problems.append(Check("manifest", "warn", f"{MANIFEST}: not readable JSON ({where}); setups and repeats come from file names", file=MANIFEST))
        return None
    if data is None:
        return None
    if not isinstance(data, dict):
        problems.append(Check("manifest", "warn", f"{MANIFEST}: expected a JSON object, found {type(data).__name__}; ignored", file=MANIFEST))
        return None
    data, wrong = checked(data, MANIFEST_FIELDS, SETUP_KEYED)
    machines = [reason for reason in wrong if MACHINE_KEYS.match(reason)]
    clients = [reason for reason in wrong if CLIENTS_KEY.match(reason)]
    wrong = [reason for reason in wrong if not MACHINE_KEYS.match(reason) and not CLIENTS_KEY.match(reason)]
    problems.extend(machine_problems(machines) + client_entry_problems(data, clients))
    for reason in wrong[:MAX_FIELD_PROBLEMS]:
        problems.append(Check("manifest", "warn", f"{MANIFEST}: {reason}; left out", file=MANIFEST))
    if len(wrong) > MAX_FIELD_PROBLEMS:
        problems.append(Check("manifest", "warn", f"{MANIFEST}: {len(wrong) - MAX_FIELD_PROBLEMS} more values left out", file=MANIFEST))
    return data


def machine_problems(reasons: list[str]) -> list[Check]:
    """Return one failed `machines` check for the wrong values of server_host, client_hosts, network (none when none)."""
    if not reasons:
        return []
    more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return [Check("machines", "fail", f"{MANIFEST}: {reasons[0]}{more}; left out, so the page cannot say fully where the run ran", file=MANIFEST)]


def client_entry_problems(data: dict, reasons: list[str]) -> list[Check]:
    """Return a failed `clients` check per measurement entry whose `clients` list had a wrong value: it is not read."""
    entries = data.get("measurements") if isinstance(data.get("measurements"), list) else []
    found, seen = [], set()
    for reason in reasons:
        index = int(CLIENTS_KEY.match(reason)[1])
        entry = entries[index] if index < len(entries) and isinstance(entries[index], dict) else {}
        name = entry.get("file") if isinstance(entry.get("file"), str) else None
        if name is None or name in seen:
            continue
        seen.add(name)
        found.append(clients_check(name, f"{MANIFEST}: {reason}: which files make up the measurement is not known; not used"))
    return found


def manifest_measurements(manifest: dict | None) -> dict[str, dict]:
    """Return the manifest's measurement entries by file name ({} when there are none)."""
    entries = (manifest or {}).get("measurements")
    if not isinstance(entries, list):
        return {}
    return {entry["file"]: entry for entry in entries if isinstance(entry, dict) and isinstance(entry.get("file"), str)}


def measurement_row(match: re.Match, name: str, result, entry: dict) -> dict:
    """Return one table row: identity from the file name, provenance from the manifest, the parsed fields."""
    row = result.to_dict()
    row.update(
        setup=match["setup"],
        gomaxprocs=int(match["gomaxprocs"]),
        repeat=int(match["repeat"]),
        file=name,
        source=name,
        command=entry.get("command") if isinstance(entry.get("command"), str) else None,
        exit_code=entry.get("exit_code") if isinstance(entry.get("exit_code"), int) else None,
        block=block_of(match, entry),
        clients=1,
    )
    return row


def block_of(match: re.Match, entry: dict) -> int | None:
    """Return the measurement's block: from the file name, else the manifest entry, else None (no blocks)."""
    if match["block"] is not None:
        return int(match["block"])
    block = entry.get("block")
    return block if isinstance(block, int) and not isinstance(block, bool) and block >= 1 else None


def cpu_file_name(wrk_name: str) -> str:
    """Return the CPU file written beside a wrk or ab file: same stem, .cpu.json."""
    return wrk_name.removesuffix(".wrk.txt").removesuffix(".ab.txt") + ".cpu.json"


def read_cpu(run_dir: Path, name: str, problems: list[Check], keep_clients: bool = False) -> dict:
    """Return the CPU columns of one measurement from its .cpu.json ({} when there is none or it is unusable).

    With keep_clients, `wrk_clients` is added: each remote wrk client's CPU seconds
    ({"client-1": 1.2, ...}; None where the driver could not read it).
    """
    try:
        data = read_json(run_dir, name, "cpu", problems)
    except ValueError as exc:
        problems.append(Check("cpu", "warn", f"{name}: not a usable CPU record (not JSON: {exc}); CPU figures left out", file=name))
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        wrong = [f"expected a JSON object, found {type(data).__name__}"]
    else:
        data, wrong = checked(data, CPU_FIELDS)
    if wrong:
        problems.append(Check("cpu", "warn", f"{name}: not a usable CPU record ({'; '.join(wrong[:3])}); CPU figures left out", file=name))
        return {}
    processes = data["processes"]
    found = {f"cpu_{p}_s": cpu_seconds(processes.get(p)) for p in CPU_PROCESSES}
    pinning = data.get("pinning") or {}
    if keep_clients:
        parts = (processes.get("wrk") or {}).get("clients") or []
        found["wrk_clients"] = {part["client"]: cpu_seconds(part) for part in parts if isinstance(part.get("client"), str)}
    return found | {
        "cpu_wall_s": float(data["wall_s"]),
        "cpu_cores": data["logical_cores"],
        "pin_client": pinning.get("client"),
        "pin_server": pinning.get("server"),
    }


def read_histogram(run_dir: Path, name: str, problems: list[Check]) -> LatencyHistogram | None:
    """Return one measurement's latency histogram (None when there is none); an unusable file is a warned `histogram` check."""
    if not os.path.lexists(run_dir / name):
        return None
    data = read_raw(run_dir, name, "hist", problems)
    if data is None:
        return None
    try:
        return parse_histogram(name, data)
    except ParseError as exc:
        problems.append(Check("histogram", "warn", f"{exc.message()}; exact percentiles left out", file=name))
        return None


def cpu_seconds(process: dict | None) -> float | None:
    """Return user + system seconds of one process group (None when it did not run)."""
    if process is None or process.get("user_s") is None or process.get("system_s") is None:
        return None
    return float(process["user_s"]) + float(process["system_s"])


def problem_check(match: re.Match, name: str, message: str) -> Check:
    """Return the failed `parse` check of a wrk file that could not be read."""
    return Check(
        "parse",
        "fail",
        message,
        setup=match["setup"],
        gomaxprocs=int(match["gomaxprocs"]),
        repeat=int(match["repeat"]),
        file=name,
    )


def sort_measurements(table: pd.DataFrame) -> pd.DataFrame:
    """Order rows by GOMAXPROCS, connections, known setup order, repeat."""
    if table.empty:
        return table.astype({"gomaxprocs": "int64", "repeat": "int64"})
    order = table["setup"].map(setup_order)
    table = table.assign(_order=order).sort_values(["gomaxprocs", "connections", "_order", "setup", "repeat"])
    return table.drop(columns="_order").reset_index(drop=True)


def read_headers(run_dir: Path, names: list[str], problems: list[Check]) -> list[HeaderCapture]:
    """Return every header capture in the directory."""
    captures = []
    for name in names:
        match = HEADERS_FILE.fullmatch(name)
        if match is None:
            continue
        data = read_raw(run_dir, name, "headers", problems)
        if data is None:
            continue
        captures.append(HeaderCapture(match["setup"], int(match["gomaxprocs"]), name, data.decode("latin-1"), len(data)))
    return captures


def relative_to(target: Path, start: Path) -> str:
    """Return target relative to start with forward slashes (for links in the page)."""
    return Path(os.path.relpath(real_path(target), real_path(start))).as_posix()


def real_path(path: Path) -> Path:
    """Return path with symlinks resolved, or made absolute when it is a symlink loop (a hostile run's file)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # Python < 3.13 raises RuntimeError on a loop
        return path.absolute()


def require_measurements(run: Run) -> None:
    """Raise NoUsableData when not one wrk file of the run could be parsed."""
    if run.measurements.empty:
        first = next((p.message for p in run.problems if p.name == "parse"), "no wrk output files")
        raise NoUsableData(f"{run.path}: nothing could be measured, no wrk output parsed ({first})")
