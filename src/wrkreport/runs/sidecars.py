"""Run files: a run directory's manifest, .cpu.json, .hist.json and header captures, each read safely and checked, each problem a Check."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import ParseError, RefusedFile
from ..core.latency_histogram import LatencyHistogram
from ..core.records import Check
from ..core.setups import CPU_PROCESSES, SETUP_PATTERN
from ..parsers.histogram import parse_histogram
from ..parsers.rawfile import CAP_BYTES, read_bytes
from ..parsers.schema import CPU_FIELDS, MANIFEST_FIELDS, NOT_A_FILE_NAME, SETUP_KEYED, checked, load_json

WRK_FILE = re.compile(
    rf"(?P<setup>{SETUP_PATTERN})\.gomaxprocs-(?P<gomaxprocs>[0-9]{{1,4}})"
    r"(?:\.c(?P<level>[0-9]{1,7}))?(?:\.block-(?P<block>[1-9][0-9]{0,3}))?\.run-(?P<repeat>[0-9]{1,4})"
    r"(?:\.client-(?P<client>[1-9][0-9]{0,3})\.wrk|\.(?:wrk|ab|h2load))\.txt"
)
HEADERS_FILE = re.compile(rf"(?P<setup>{SETUP_PATTERN})\.gomaxprocs-(?P<gomaxprocs>[0-9]{{1,4}})\.headers\.txt")
MANIFEST = "manifest.json"

MAX_FIELD_PROBLEMS = 20  # manifest values reported one by one; the rest are counted

# Wrong values under these keys fail a check (machines, clients) instead of a warning: they say where
# the run ran and which files make up a measurement.
MACHINE_KEYS = re.compile(r"(?:server_host|client_hosts|network|parameters\.(?:server_host|server_address|client_hosts|ssh_config))\b")

CLIENTS_KEY = re.compile(r"measurements\[([0-9]+)\]\.(?:clients|client|host)\b")

# The file of a measurement entry (or of one of its fixed-rate clients) that rawfile.name_problem
# refused (schema kind "file"): a wrk entry is left out with a failed `file-name` check, a
# fixed-rate entry is marked REFUSED and read as an unusable measurement. A refused
# cpu_file, hist_file or headers_file is left out alone, with a warning: the measurement stands
# without it. A wrk measurement's clients' files go through CLIENTS_KEY.
REFUSED = "refused"  # the key refuse_entries adds to a fixed-rate entry whose file name was refused
ENTRY_FILE_KEY = re.compile(r"(measurements|fixed_rate_measurements)\[([0-9]+)\]\.(?:file|clients\[[0-9]+\]\.file): ")


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
        problems.append(
            Check("manifest", "warn", f"{MANIFEST}: not readable JSON ({where}); setups and repeats come from file names", file=MANIFEST)
        )
        return None
    if data is None:
        return None
    if not isinstance(data, dict):
        problems.append(
            Check("manifest", "warn", f"{MANIFEST}: expected a JSON object, found {type(data).__name__}; ignored", file=MANIFEST)
        )
        return None
    data, wrong = checked(data, MANIFEST_FIELDS, SETUP_KEYED)
    machines = [reason for reason in wrong if MACHINE_KEYS.match(reason)]
    clients = [reason for reason in wrong if CLIENTS_KEY.match(reason)]
    files = [reason for reason in wrong if ENTRY_FILE_KEY.match(reason) and not CLIENTS_KEY.match(reason)]
    wrong = [reason for reason in wrong if not MACHINE_KEYS.match(reason) and not CLIENTS_KEY.match(reason) and reason not in files]
    problems.extend(machine_problems(machines) + client_entry_problems(data, clients, run_dir.name))
    rate_entries = data.get("fixed_rate_measurements")
    for entry in rate_entries if isinstance(rate_entries, list) else []:
        if isinstance(entry, dict):
            entry.pop(REFUSED, None)  # only refuse_entries marks an entry: the file's own value of the key is not taken
    problems.extend(refuse_entries(data, files, run_dir.name))
    for reason in wrong[:MAX_FIELD_PROBLEMS]:
        where = f"{run_dir.name}/{MANIFEST}" if NOT_A_FILE_NAME in reason else MANIFEST  # a refused name says which run it came from
        problems.append(Check("manifest", "warn", f"{where}: {reason}; left out", file=MANIFEST))
    if len(wrong) > MAX_FIELD_PROBLEMS:
        problems.append(Check("manifest", "warn", f"{MANIFEST}: {len(wrong) - MAX_FIELD_PROBLEMS} more values left out", file=MANIFEST))
    return data


def machine_problems(reasons: list[str]) -> list[Check]:
    """Return one failed `machines` check for the wrong values of server_host, client_hosts, network (none when none)."""
    if not reasons:
        return []
    more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return [
        Check(
            "machines", "fail", f"{MANIFEST}: {reasons[0]}{more}; left out, so the page cannot say fully where the run ran", file=MANIFEST
        )
    ]


def refuse_entries(data: dict, reasons: list[str], run: str) -> list[Check]:
    """Refuse every measurement entry whose file (or a client's) is not a plain file name; return the checks of the wrk ones.

    A wrk measurement's entry is left out with a failed `file-name` check (its file, if any, is
    read from the directory's listing). A fixed-rate entry stays, marked REFUSED with the
    reason: the fixed-rate reader makes it an unusable measurement with a failed check.
    """
    found, doomed = [], set()
    for reason in reasons:
        match = ENTRY_FILE_KEY.match(reason)
        key, index = match[1], int(match[2])
        entries = data.get(key) if isinstance(data.get(key), list) else []
        entry = entries[index] if index < len(entries) and isinstance(entries[index], dict) else {}
        if key == "fixed_rate_measurements":
            entry.setdefault(REFUSED, f"{run}/{MANIFEST}: {reason}")  # the first refused field of the entry
            continue
        if (key, index) not in doomed:
            found.append(
                Check("file-name", "fail", f"{run}/{MANIFEST}: {reason}; that measurement's entry is left out", *entry_subject(entry))
            )
        doomed.add((key, index))
    for key, index in sorted(doomed, reverse=True):
        del data[key][index]
    return found


def entry_subject(entry: dict) -> tuple[str | None, int | None, int | None]:
    """Return (setup, gomaxprocs, repeat) of a checked manifest entry, None for what it lacks."""
    return entry.get("setup"), entry.get("gomaxprocs"), entry.get("repeat")


def client_entry_problems(data: dict, reasons: list[str], run: str) -> list[Check]:
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
        found.append(clients_check(name, f"{run}/{MANIFEST}: {reason}: which files make up the measurement is not known; not used"))
    return found


def manifest_measurements(manifest: dict | None) -> dict[str, dict]:
    """Return the manifest's measurement entries by file name ({} when there are none)."""
    entries = (manifest or {}).get("measurements")
    if not isinstance(entries, list):
        return {}
    return {entry["file"]: entry for entry in entries if isinstance(entry, dict) and isinstance(entry.get("file"), str)}


def cpu_file_name(wrk_name: str) -> str:
    """Return the CPU file written beside a wrk, ab or h2load file: same stem, .cpu.json."""
    return wrk_name.removesuffix(".wrk.txt").removesuffix(".ab.txt").removesuffix(".h2load.txt") + ".cpu.json"


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


def clients_check(name: str, message: str, status: str = "fail") -> Check:
    """Return the `clients` check of the measurement whose (first client's) file is name."""
    match = WRK_FILE.fullmatch(name)
    if match is None:
        return Check("clients", status, message, file=name)
    return Check("clients", status, message, match["setup"], int(match["gomaxprocs"]), int(match["repeat"]), name)
