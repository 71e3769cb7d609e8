"""Manifest: the run directory, manifest.json (written atomically), passes and their cells."""

from __future__ import annotations

import json
import os
import random
import re
import tempfile
from datetime import datetime
from pathlib import Path

from .app_options import app_parameters, redact, redacted_command_line, secret_values
from .front_ends import front_ends_of
from .machine import command_output, machine_info, read_sysctl, tool_versions
from .profiles import PARAMS, RUN_ID_FORMAT, SCHEMA
from .rate_options import rate_parameters
from .remote import local_boot_id
from .tls_options import tls_parameters
from .values import iso, utc_now
from .variant import variant_record


def write_json_atomic(path: Path, data: dict) -> None:
    """Write JSON to path via a temp file and rename, so readers never see half a file.

    Only a regular file (or nothing) is replaced: renaming over /dev/null or a FIFO would
    swap a device for our file.
    """
    if (path.exists() or path.is_symlink()) and not (path.is_file() and not path.is_symlink()):
        raise ValueError(f"{path} exists and is not a regular file; not replaced")
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class ManifestCache:
    """The manifests of a long-lived helper (`serve`): read once, then kept in memory and written through."""

    def __init__(self) -> None:
        self.enabled = False
        self.manifests: dict[str, dict] = {}

    def enable(self) -> None:
        """Keep manifests in memory from now on (only `serve` does: it is their only writer)."""
        self.enabled = True


CACHE = ManifestCache()


def load_manifest(run_dir: Path) -> dict:
    """Return the run's manifest (the one in memory under `serve`)."""
    key = str(run_dir)
    if CACHE.enabled and key in CACHE.manifests:
        return CACHE.manifests[key]
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    if CACHE.enabled:
        CACHE.manifests[key] = manifest
    return manifest


def save_manifest(run_dir: Path, manifest: dict) -> None:
    """Replace the run's manifest atomically."""
    write_json_atomic(run_dir / "manifest.json", manifest)
    if CACHE.enabled:
        CACHE.manifests[str(run_dir)] = manifest


def create_run_dir(out: Path, started: datetime) -> Path:
    """Create out/<UTC id>, or <id>-2, <id>-3, ... when taken; never reuse a directory."""
    out.mkdir(parents=True, exist_ok=True)
    base = started.strftime(RUN_ID_FORMAT)
    for n in range(1, 1000):
        candidate = out / (base if n == 1 else f"{base}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise RuntimeError(f"{out}: 999 runs named {base}-*, refusing to go on")


def out_problem(out: Path) -> str | None:
    """Return why run directories cannot be created under out, or None when they can.

    Tried for real (a directory made and removed in the nearest existing ancestor), so
    read-only mounts, /proc and missing permissions all count, even for root.
    """
    existing = out
    while not existing.exists() and not existing.is_symlink() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is not a directory"
    try:
        probe = tempfile.mkdtemp(prefix=".wrkreport-probe-", dir=existing)
    except OSError as exc:
        return f"cannot create a directory in {existing} ({exc.strerror or exc})"
    os.rmdir(probe)
    return None


def point_latest(out: Path, run_dir: Path) -> str | None:
    """Point out/latest at run_dir (relative symlink, replaced atomically); return a warning or None."""
    latest = out / "latest"
    if latest.exists() and not latest.is_symlink():
        return f"{latest} exists and is not a symlink; left alone"
    tmp = out / f".latest.tmp-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(run_dir.name)
    os.replace(tmp, latest)
    return None


def new_manifest(
    run_id: str, started: datetime, command: str, plan: dict, nginx: str | None, ulimit_n: int | None, app_version: str | None = None
) -> dict:
    """Return the manifest of a run that is starting (status 'running'); app_version: --app-version's output, run on the target, else run here."""
    extra = ((plan["load_generator"],) if plan["load_generator"] != "wrk" else ()) + (
        ("node",) if any(s == "node-http" for s in plan["setups"]) else ()
    )
    extra += tuple(front_ends_of(plan["setups"]))  # HAProxy's, Caddy's, Apache httpd's: each one's version line
    versions, version_lines = tool_versions(nginx, extra)
    parameters = {key: plan[key] for key in ("profile", *(p.key for p in PARAMS))}
    parameters.update(
        load_generator=plan["load_generator"],
        streams=plan["streams"],  # h2load -m: streams in flight per HTTP/2 connection
        streams_mux=plan["streams_mux"],  # the same of the -mux setups (go-h2-mux & co.)
        connections_levels=plan["connections_levels"],
        gomaxprocs=plan["gomaxprocs"],
        setups=plan["setups"],
        ports=plan["ports"],
        urls=plan["urls"],
        expect_header_bytes=plan["expect_header_bytes"],
        body_bytes=plan["body_bytes"],
        handler_delay_ms=plan["handler_delay_ms"],
        upstream_keepalive=plan["upstream_keepalive"],
        pin_client=plan["pin_client"],
        pin_server=plan["pin_server"],
        tune=plan["tune"],
        seed=plan["seed"],
        rounds_per_block=plan["rounds_per_block"],
        blocks=plan["blocks"],
        adaptive=plan["adaptive"],
        smoke_test=plan["smoke_test"],
        min_blocks=plan["min_blocks"],
        max_blocks=plan["max_blocks"],
        precision_pct=plan["precision_pct"],
        precision_given=plan["precision_given"],
        intervals=plan["intervals"],  # the interval design (core/sequential.py) and the stopping rule; None for a fixed design
        max_time_s=plan["max_time_s"],
        server_host=plan.get("server_host"),
        server_address=plan.get("server_address"),
        client_hosts=plan.get("client_hosts"),
        ssh_config=plan.get("ssh_config"),
        **tls_parameters(plan),
        **rate_parameters(plan),
        **app_parameters(plan),
    )
    if plan.get("app") and plan["app"]["version_command"]:  # --app-version: its output, secrets redacted
        output = app_version.strip() if app_version is not None else command_output(["sh", "-c", plan["app"]["version_command"]])
        parameters["app"]["version"] = None if output is None else redact(output, secret_values(plan["app"]["headers"]))[:2000]
    return {
        "schema": SCHEMA,
        "run_id": run_id,
        "status": "running",
        "reason": None,
        "started_at": iso(started),
        "ended_at": None,
        "command": redacted_command_line(command, plan),
        "parameters": parameters,
        "machine": machine_info(),
        "boot_id": local_boot_id(),  # this kernel's: a target or client with the same one is this machine
        "versions": versions,
        "version_lines": version_lines,
        "nginx_V": command_output([nginx, "-V"]) if nginx else None,
        "ulimit_n": ulimit_n,
        "sysctl": read_sysctl(),
        "sysctl_changes": None,  # with --tune: written by `tune` once the run directory exists
        **({"variant": variant_record(plan, nginx)} if plan.get("variant") else {}),
        "passes": [],
        "measurements": [],
    }


def shuffled_orders(setups: list[str], repeats: int, seed: int, gomaxprocs: int, block: int = 1) -> list[list[str]]:
    """Return one shuffled setup order per round, reproducible from (seed, GOMAXPROCS, block)."""
    rng = random.Random(f"{seed}:gomaxprocs-{gomaxprocs}" if block == 1 else f"{seed}:gomaxprocs-{gomaxprocs}:block-{block}")
    orders = []
    for _ in range(repeats):
        order = list(setups)
        rng.shuffle(order)
        orders.append(order)
    return orders


def find_pass(manifest: dict, gomaxprocs: int) -> dict:
    """Return the latest pass (block) entry for a GOMAXPROCS value: the one running (a fixed-rate block's while it runs)."""
    for entry in reversed(manifest.get("fixed_rate_passes") or []):
        if entry["gomaxprocs"] == gomaxprocs and not entry.get("ended_at"):
            return entry
    for entry in reversed(manifest["passes"]):
        if entry["gomaxprocs"] == gomaxprocs:
            return entry
    raise KeyError(f"no pass for GOMAXPROCS={gomaxprocs} in the manifest")


def levels_of(parameters: dict) -> list[int]:
    """Return a manifest's connection levels (a manifest from before the sweep has one)."""
    return parameters.get("connections_levels") or [parameters["connections"]]


def new_pass(
    manifest: dict,
    gomaxprocs: int,
    block: int = 1,
    first_round: int = 1,
    rounds: int | None = None,
    setups: list[str] | None = None,
    warmup_s: float | None = None,
) -> dict:
    """Append and return the pass (block) entry for a GOMAXPROCS value, with its shuffled orders.

    A block is one start of the servers; it runs each connection level in turn and,
    within it, its rounds first_round .. first_round + rounds - 1 (the cells' global round
    numbers): `order` holds one shuffled setup order per (level, round) in that sequence,
    `order_connections` the level of each, `rounds` the round numbers. rounds defaults to
    the run's repeats (one block per GOMAXPROCS, as before blocks). setups: the block
    measures only these (the stopping rule's allocation, go-http among them; None: every
    setup of the run); warmup_s: its warm-up when it differs from the run's.
    """
    params = manifest["parameters"]
    levels = levels_of(params)
    rounds = (params.get("repeats") or params.get("rounds_per_block") or 1) if rounds is None else rounds
    entry = {
        "gomaxprocs": gomaxprocs,
        "block": block,
        "rounds": list(range(first_round, first_round + rounds)),
        "go_reported_gomaxprocs": None,
        "order": shuffled_orders(setups or params["setups"], rounds * len(levels), params["seed"], gomaxprocs, block),
        "order_connections": [c for c in levels for _ in range(rounds)],
        "cells": {},
        "pids": {"go": None, "nginx": None, "nginx_workers": [], "fasthttp": None, "node": None, "node_workers": []},
        "notes": [],
        "started_at": iso(utc_now()),
        "ended_at": None,
    }
    if manifest.get("variant"):  # the variant's nginx master and workers (pass-ready)
        entry["pids"].update(variant_nginx=None, variant_nginx_workers=[])
    if setups:
        entry["setups"] = list(setups)
    if warmup_s is not None:
        entry["warmup_s"] = warmup_s
    manifest["passes"].append(entry)
    return entry


GO_READY_LINE = re.compile(r"^gohello: GOMAXPROCS=(?P<n>[0-9]+) .* ready$", re.M)


def go_reported_gomaxprocs(log_text: str) -> int | None:
    """Return the GOMAXPROCS the Go server logged at start ('gohello: GOMAXPROCS=2 ... ready')."""
    match = GO_READY_LINE.search(log_text)
    return int(match.group("n")) if match else None


STATUS_LINE = re.compile(r"HTTP/\S+ (?P<code>[0-9]{3})\b.*")


def cell_from_headers(data: bytes | None, ready: bool, error: str | None, any_2xx: bool = False, capture: str = "curl -sI") -> dict:
    """Return a cell record from its readiness and captured header bytes (None: not captured; capture: how, for the message);
    any_2xx: an app's, any 2xx status is fine."""
    cell = {"ready": ready, "headers_captured": bool(data), "status_line": None, "header_bytes": None, "error": error}
    if not data:
        if ready and error is None:
            cell["error"] = f"no response to {capture}"
        return cell
    first = data.split(b"\n", 1)[0].rstrip(b"\r").decode("latin-1")
    cell["status_line"] = first
    cell["header_bytes"] = len(data)
    match = STATUS_LINE.fullmatch(first)
    fine = match is not None and (match.group("code").startswith("2") if any_2xx else match.group("code") == "200")
    if cell["error"] is None and not fine:
        cell["error"] = f"answered {first!r}, not {'2xx' if any_2xx else 200}"  # the readers add "not measured"
    return cell
