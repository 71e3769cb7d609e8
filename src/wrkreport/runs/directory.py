"""Run: one raw/<run-id>/ directory -> a tidy table of measurements, header captures and problems.

A run directory holds `<setup>.gomaxprocs-<N>[.c<C>][.block-<b>].run-<k>.wrk.txt` (one wrk
output per measurement; `.ab.txt` for an ApacheBench one, read the same way; `.block-<b>`
names the server start it was measured in, absent in runs recorded before blocks),
`<setup>.gomaxprocs-<N>.headers.txt` (the `curl -sI` capture per cell), beside a wrk file
its `.cpu.json` and `.hist.json` (wrk's latency histogram, parsers/histogram.py) and,
when `run_bench.sh` wrote it, `manifest.json` (docs/raw-format.md). Without a manifest the
file names alone say setup, GOMAXPROCS and repeat, so wrk files dropped in by hand work.
Nothing here fails on one bad file: a file that does not parse, a name that does not fit
or a manifest that cannot be read becomes a problem (a failed or warned Check) and the
rest is still read. The directory is untrusted input: every file is read through
rawfile.read_bytes (regular files inside the directory, size-capped) and every JSON value
is checked by schema.py here, so later steps never see a bad one.
"""

from __future__ import annotations

import os
import re
from collections import namedtuple
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..core.display import show
from ..core.errors import NoUsableData, ParseError
from ..core.latency_histogram import LatencyHistogram, merge
from ..core.records import FIELDS, Check
from ..core.setups import setup_order
from ..parsers import parse_file
from ..parsers.histogram import hist_file_name
from ..parsers.rawfile import name_problem
from .client_outputs import (
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
from .rate_measurements import RateMeasurement, read_rate_measurements
from .record import Parameters, RunRecord, record_of
from .sidecars import (
    CPU_PROCESSES,
    MANIFEST,
    WRK_FILE,
    HeaderCapture,
    clients_check,
    cpu_file_name,
    manifest_measurements,
    read_cpu,
    read_headers,
    read_histogram,
    read_manifest,
    read_raw,
)

RUN_ID = re.compile(r"[0-9]{8}T[0-9]{6}Z(?:-[0-9]+)?")
LATEST = "latest"
RAW_SUFFIXES = (".wrk.txt", ".ab.txt", ".h2load.txt")  # one measurement's load generator output: wrk (or wrk2), ab, or h2load

# Columns of the measurements table, in order: identity, provenance, every parsed field, then
# the CPU seconds the driver measured around the run (<stem>.cpu.json; NaN when absent), then
# the block (server start) of the measurement: NaN for runs recorded before blocks, and the
# number of wrk clients merged into it (1 but for --client-hosts). Appended last so
# results.csv keeps its earlier column order.
ID_COLUMNS = ("setup", "gomaxprocs", "connections", "repeat", "file", "command", "exit_code")
CPU_COLUMNS = tuple(f"cpu_{name}_s" for name in CPU_PROCESSES) + ("cpu_wall_s", "cpu_cores", "pin_client", "pin_server")
COLUMNS = ID_COLUMNS + tuple(name for name in FIELDS if name != "connections") + CPU_COLUMNS + ("block", "clients")


@dataclass(frozen=True)
class Run:
    """Everything read from one run directory."""

    path: Path
    run_id: str
    record: RunRecord | None  # manifest.json read once (runs/record.py); None without one
    measurements: pd.DataFrame  # one row per parsed wrk file, COLUMNS in order
    headers: tuple[HeaderCapture, ...]
    problems: tuple[Check, ...]  # files that could not be used, with why
    texts: dict[str, str] = field(default_factory=dict)  # wrk file name -> its text (provenance)
    histograms: dict[str, LatencyHistogram] = field(default_factory=dict)  # wrk file name -> its .hist.json, when there is one
    # wrk file name -> its clients' threads, CPU and machine cores: every measurement of a run whose
    # manifest names machines (server_host, client_hosts), and every several-client one; else empty.
    client_loads: dict[str, tuple[ClientLoad, ...]] = field(default_factory=dict)
    # the fixed-rate phase's measurements (manifest fixed_rate_measurements, runs/rate_measurements.py), each with its checks
    rates: tuple[RateMeasurement, ...] = ()

    @property
    def status(self) -> str | None:
        """Return the manifest's status (complete, running, interrupted, failed), None without one."""
        return self.record.status if self.record else None

    @property
    def parameters(self) -> Parameters:
        """Return the manifest's parameters (none recorded without a manifest)."""
        return self.record.parameters if self.record else Parameters.of(None)


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


def listed_names(run_dir: Path, problems: list[Check]) -> set[str]:
    """Return the names in the run directory that are plain file names (rawfile.name_problem); each other one is a problem.

    Every kind of entry is listed: read_raw refuses what is not a regular file. A name the
    gate refuses (a control character, bytes that are not UTF-8) is never opened or linked:
    a failed `file-name` check when it looks like a measurement, a warning otherwise.
    """
    names = set()
    for path in run_dir.iterdir():
        reason = name_problem(path.name)
        if reason is None:
            names.add(path.name)
            continue
        status = "fail" if path.name.endswith(RAW_SUFFIXES) else "warn"
        problems.append(
            Check("file-name", status, f"{run_dir.name}: the file {show(path.name, 60)} is not a plain file name ({reason}); not read")
        )
    return names


def is_run_dir(path: Path) -> bool:
    """Return True when path holds a manifest or at least one wrk output."""
    return (path / MANIFEST).is_file() or any(any(path.glob(f"*{suffix}")) for suffix in RAW_SUFFIXES)


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
    names = listed_names(run_dir, problems)
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
    rates, rate_problems = read_rate_measurements(run_dir, manifest)
    problems += [
        p for p in rate_problems if p.name not in ("rate-run", "parse") or p.status != "fail"
    ]  # a failed one stays with its measurement
    loads = {k: v for k, v in loads.items() if v}
    return Run(run_dir, run_dir.name, record_of(manifest), table, headers, tuple(problems), texts, histograms, loads, tuple(rates))


# --- Several clients per measurement (clients.py merges) -------------------------------------


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
            problems.append(
                clients_check(
                    name, f"{MANIFEST}: the entry of {name} lists clients, but its file is not a <stem>.client-1.wrk.txt name; not used"
                )
            )
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
                problems.append(
                    Check("file-name", "warn", f"{extra}: not among the clients {MANIFEST} lists for {stem}; ignored", file=extra)
                )
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
            problems.append(
                clients_check(first, f"{part.client}'s output {part.file} is missing: {stem} is not summed from fewer clients; not used")
            )
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
        texts.append(
            f"==> {part.client}"
            + (f" ({part.host})" if part.host else "")
            + f": {part.file} <==\n"
            + data.decode("utf-8", errors="replace")
        )
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
    """Return the load generator suffix a raw file name ends with (.wrk.txt, .ab.txt or .h2load.txt)."""
    return next(suffix for suffix in RAW_SUFFIXES if name.endswith(suffix))


def mixed_tools(table: pd.DataFrame) -> list[Check]:
    """Warn when a run holds both wrk and ab measurements: its ratios would pair two load generators."""
    tools = set(table["tool"].replace("wrk2", "wrk"))
    if len(tools) < 2:
        return []
    count = int((table["tool"] == "ab").sum())
    return [
        Check(
            "file-name", "warn", f"this run mixes wrk and ab outputs ({count} of {len(table)} by ab): ratios may pair two load generators"
        )
    ]


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


def problem_check(match: re.Match, name: str, message: str) -> Check:
    """Return the failed `parse` check of a wrk file that could not be read."""
    return Check(
        "parse", "fail", message, setup=match["setup"], gomaxprocs=int(match["gomaxprocs"]), repeat=int(match["repeat"]), file=name
    )


def table_rows(table: pd.DataFrame) -> list:
    """Return the table's rows as table.itertuples(index=False) gives them (named tuples of Python values), read a column at a
    time: twice as fast on the measurements table's 75 columns, which the checks and the page each walk."""
    if not len(table.columns) or not table.columns.is_unique:
        return list(table.itertuples(index=False))
    row = namedtuple("Pandas", table.columns, rename=True)
    return list(map(row._make, zip(*(table[column].tolist() for column in table.columns))))


def sort_measurements(table: pd.DataFrame) -> pd.DataFrame:
    """Order rows by GOMAXPROCS, connections, known setup order, repeat."""
    if table.empty:
        return table.astype({"gomaxprocs": "int64", "repeat": "int64"})
    order = table["setup"].map(setup_order)
    table = table.assign(_order=order).sort_values(["gomaxprocs", "connections", "_order", "setup", "repeat"])
    return table.drop(columns="_order").reset_index(drop=True)


def relative_to(target: Path, start: Path) -> str:
    """Return target relative to start with forward slashes (for links in the page)."""
    return relative_to_real(target, real_path(start))


def relative_to_real(target: Path, start: Path) -> str:
    """Return relative_to(target, start) for a start already resolved (real_path): for many targets, start resolved once."""
    return Path(os.path.relpath(real_path(target), start)).as_posix()


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
