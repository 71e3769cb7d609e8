"""The helper's subcommands of the fixed-rate phase: vegeta's version and copies on the clients, the rates per GOMAXPROCS, a phase block's start, warm-ups on the clients and one measurement."""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from ...core.capacity import FAIL, Step, slo_of
from ...core.capacity_check import check_step
from ...core.rate_checks import rate_checks, rate_held_check
from ...core.rate_result import RateResult
from ...core.setups import SETUP_BY_ID
from ...parsers.vegeta import read_client_files, read_vegeta_file
from ...runs.rate_measurements import expected_answer
from .. import server_machine
from ..cpu import cpu_snapshot, pids_for, pinning_of, server_pids
from ..fixed_rate import Attack, measure_rate, rate_stem, warm_up
from ..fixed_rate_clients import install_vegeta, measure_rate_on_clients, warm_up_on_clients
from ..manifest import find_pass, levels_of, load_manifest, save_manifest, shuffled_orders
from ..profiles import MAX_RATE, PROG
from ..rate_options import rate_setups, round_rate
from ..remote_clients.state import ClientError, load_clients
from ..stopping_rule import rate_of
from ..values import iso, utc_now
from ..vegeta_build import record_vegeta_version


def cmd_vegeta_record(args) -> int:
    """Record vegeta's version and version line in the manifest (as wrk's)."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    record_vegeta_version(manifest, args.vegeta)
    save_manifest(run_dir, manifest)
    return 0


def cmd_rate_plan(args) -> int:
    """Print the phase's rates at a GOMAXPROCS value (one line, ascending; empty: none), then where they come from; record them."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    rates, said = rates_for(run_dir, manifest, args.gomaxprocs, {})
    manifest.setdefault("fixed_rate_plan", []).append({"gomaxprocs": args.gomaxprocs, "rates": rates, "basis": said})
    save_manifest(run_dir, manifest)
    print(" ".join(map(str, rates)))
    print(said)
    return 0


def cmd_rate_pass_start(args) -> int:
    """Record a block of the fixed-rate phase (one start of the servers, one round) and print one line per rate: the rate, then the setups in shuffled order."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    params = manifest["parameters"]
    rates = [int(r) for r in args.rates.split(",") if r]
    # Its own seed stream: not the throughput block's orders again.
    orders = shuffled_orders(rate_setups(params["setups"]), len(rates), f"{params['seed']}:fixed-rate", args.gomaxprocs, args.block)
    entry = {
        "gomaxprocs": args.gomaxprocs,
        "block": args.block,
        "rates": rates,
        "order": orders,
        "go_reported_gomaxprocs": None,
        "cells": {},
        "pids": {"go": None, "nginx": None, "nginx_workers": [], "fasthttp": None, "node": None, "node_workers": []},
        "notes": [],
        "started_at": iso(utc_now()),
        "ended_at": None,
    }
    manifest.setdefault("fixed_rate_passes", []).append(entry)
    save_manifest(run_dir, manifest)
    print("\n".join(f"{rate} {' '.join(order)}" for rate, order in zip(rates, orders)))
    return 0


def run_attack(params: dict, setup: str, rate: int, headers: list[str] | None = None, check: bool = False) -> Attack:
    """Return the attack of one fixed-rate measurement (or warm-up) of a setup at a rate, from the run's parameters (headers: --app-header's;
    check: a capacity check, check_duration_s long, a run before 2026-11-29 having none: rate_duration_s)."""
    app = SETUP_BY_ID[setup].app if setup in SETUP_BY_ID else False
    return Attack(
        params["urls"][setup],
        rate,
        float(params.get("check_duration_s", params["rate_duration_s"]) if check else params["rate_duration_s"]),
        max_connections=params["rate_max_connections"],
        timeout_s=float(params["wrk_timeout_s"]),
        expect_body_bytes=None if app else params["body_bytes"],  # an app's body: its own (kept whole)
        client_pin=params.get("pin_client"),
        headers=tuple(headers or ()) if app else (),
        http2=SETUP_BY_ID[setup].h2 if setup in SETUP_BY_ID else False,
    )


def cmd_measure_rate(args) -> int:
    """Run one fixed-rate measurement (bench/fixed_rate.py; with --clients, fixed_rate_clients.py): its progress line, files and entry in fixed_rate_measurements.

    Exits 0 once recorded, whatever vegeta's status (a failed attack is recorded with its
    problem); on SIGINT/SIGTERM with 128 + N, nothing recorded. The servers' CPU time is
    read where they run: here, or on the --server-host target over the helper's session.
    """
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    params = manifest["parameters"]
    attack = run_attack(params, args.setup, args.rate, args.header, check=bool(args.capacity_check))
    done = len(manifest.get("fixed_rate_measurements") or [])
    print(
        f"[run_bench] [rate {done + 1}] {args.setup} GOMAXPROCS={args.gomaxprocs} block {args.block} at {args.rate:,} req/s ... ",
        end="",
        file=sys.stderr,
        flush=True,
    )
    ids = {"setup": args.setup, "gomaxprocs": args.gomaxprocs, "block": args.block, "round": 1, "repeat": args.block}
    stem = rate_stem(args.setup, args.gomaxprocs, args.block, args.block, args.rate)
    servers = pids_for(find_pass(manifest, args.gomaxprocs)["pids"], args.setup)  # a --variant twin's nginx: the variant's
    shell = server_machine.target_shell(manifest)  # the servers on --server-host: their /proc over ssh, as for wrk
    snapshot = (lambda: shell.snapshot(servers)) if shell else (lambda: cpu_snapshot(server_pids(servers)))
    where = (shell.ticks_per_s, manifest["server_host"]["machine"].get("logical_cores")) if shell else None
    if args.clients:
        ran = measure_rate_on_clients(
            load_clients(Path(args.clients)),
            Path(args.vegeta),
            attack,
            args.setup,
            run_dir,
            Path(args.work_dir),
            stem,
            ids,
            snapshot,
            where,
            pinning_of(params),
        )
        if ran.signal is not None:
            print("interrupted", file=sys.stderr)
            return 128 + ran.signal
        entry, tail = ran.entry, ran.progress
    else:
        run = measure_rate(args.vegeta, attack, run_dir, Path(args.work_dir), stem, ids, servers, pinning_of(params), snapshot, where)
        if run.signal is not None:
            print("interrupted", file=sys.stderr)
            return 128 + run.signal
        entry, tail = run.entry(ids, attack), ""
    if args.search_high:
        entry["search_high"] = args.search_high  # a step of the capacity search, below this untested upper end
    if args.capacity_check:
        entry["capacity_check"] = True  # the measurement at the capacity found, after the search
    manifest.setdefault("fixed_rate_measurements", []).append(entry)
    save_manifest(run_dir, manifest)
    print((rate_progress(run_dir, entry, manifest) if entry["file"] else f"no result: {entry['problem']}") + tail, file=sys.stderr)
    return 0


def cmd_rate_warm_up(args) -> int:
    """Run the fixed-rate warm-up of a setup here, or with --clients on every client at once (results discarded); print each failure."""
    manifest = load_manifest(Path(args.run))
    attack = replace(
        run_attack(manifest["parameters"], args.setup, args.rate, args.header), duration_s=float(manifest["parameters"]["rate_warmup_s"])
    )
    if args.clients:
        stopped, failed = warm_up_on_clients(load_clients(Path(args.clients)), Path(args.vegeta), attack, args.setup, Path(args.work_dir))
    else:  # the measurement's own command (-insecure for https, -laddr on loopback), pinned as it is
        stopped, problem = warm_up(args.vegeta, attack, Path(args.work_dir))
        failed = [f"vegeta failed: {problem}"] if problem else []
    if stopped is not None:
        return 128 + stopped
    print("\n".join(failed), end="\n" if failed else "")
    return 0


def cmd_clients_vegeta(args) -> int:
    """Copy vegeta into every remote client's work dir (sha256 checked there) with a targets file per setup (exit 2 with one line when a client cannot take it)."""
    plan = json.loads(Path(args.plan).read_text())
    try:
        app_headers = (plan.get("app") or {}).get("headers") or []  # --app-header: with every request to the app setups, as here
        headers = {s: app_headers for s in plan["urls"] if s in SETUP_BY_ID and SETUP_BY_ID[s].app}
        install_vegeta(
            load_clients(Path(args.state)),
            Path(args.vegeta),
            plan["urls"],
            lambda text: print(f"[run_bench] {text}", file=sys.stderr),
            headers,
        )
    except ClientError as exc:
        print(f"{PROG}: --client-hosts: {exc}; nothing was started", file=sys.stderr)
        return 2
    return 0


def entry_result(run_dir: Path, entry: dict) -> RateResult:
    """Return a recorded fixed-rate measurement's results: its file, or its clients' files merged (a parse error raises)."""
    clients = entry.get("clients")
    return (
        read_client_files([run_dir / c["file"] for c in clients]) if clients else read_vegeta_file(run_dir / entry["file"], entry["rate"])
    )


def rate_progress(run_dir: Path, entry: dict, manifest: dict) -> str:
    """Return the end of a fixed-rate progress line: 'held, p50 0.15 ms, p99 0.41 ms' or why the rate was not held.

    With an objective, the measurement's step of the capacity search is kept (STEPS): the
    search reads it there instead of parsing the file again.
    """
    try:
        result = entry_result(run_dir, entry)
    except Exception as exc:  # noqa: BLE001 - a progress line only; `wrkreport build` reports the file
        return f"unreadable results: {' '.join(str(exc).split())[:200]}"
    slo = slo_of(manifest["parameters"].get("slo"))
    if slo is not None:  # an --app setup's answers held to the app's own body, as `wrkreport build` holds them
        STEPS[step_key(run_dir, entry)] = judged_step(entry, result, manifest, slo)
    held = rate_held_check(result)
    shown = f"p50 {result.p50_ms:.3f} ms, p99 {result.p99_ms:.3f} ms, {result.errors:,} errors"
    return f"held, {shown}" if held.status == "pass" else f"NOT HELD ({held.message.split(';')[0]}), {shown}"


STEPS: dict[str, Step] = {}  # each measurement's step, by its file: the long-lived helper reads a file once
WRK_RATES: dict = {}  # each wrk file's req/s (stopping_rule.rate_of's cache), for the same reason


def step_key(run_dir: Path, entry: dict) -> str:
    """Return where a measurement's step is kept in STEPS: its file in its run."""
    return f"{run_dir}/{entry.get('file')}"


def measured_step(run_dir: Path, entry: dict, manifest: dict) -> Step:
    """Return a fixed-rate measurement as a step of the capacity search (core/capacity.py), judged as `wrkreport build` judges it.

    Kept by rate_progress as it was measured; read from its file here only when this helper did not measure it.
    """
    key = step_key(run_dir, entry)
    if entry.get("file") and key in STEPS:
        return STEPS[key]
    try:
        result = entry_result(run_dir, entry)
    except Exception:  # noqa: BLE001 - no usable results: a failed step (`wrkreport build` reports the file)
        return Step(entry["rate"], FAIL)
    step = judged_step(entry, result, manifest, slo_of(manifest["parameters"].get("slo")))
    STEPS[key] = step
    return step


def judged_step(entry: dict, result, manifest: dict, slo) -> Step:
    """Return a measurement as `wrkreport build` judges it: a search step, or a capacity check by its seconds (the run's check_share)."""
    share = manifest["parameters"].get("check_share") if entry.get("capacity_check") else None
    return check_step(entry["rate"], result, rate_checks(result, expected_answer(manifest, entry["setup"])), slo, share)


def setup_rate(run_dir: Path, manifest: dict, setup: str, gomaxprocs: int, cache: dict) -> float | None:
    """Return a setup's median closed-loop req/s at GOMAXPROCS (first connection level): the capacity search's upper end; None when not measured."""
    level = levels_of(manifest["parameters"])[0]
    rates = [
        r
        for m in manifest["measurements"]
        if (m["setup"], m["gomaxprocs"], m.get("connections", level)) == (setup, gomaxprocs, level)
        and (r := rate_of(run_dir, m, cache)) is not None
    ]
    return statistics.median(rates) if rates else None


def slowest_rate(run_dir: Path, manifest: dict, gomaxprocs: int, cache: dict) -> tuple[str, float] | None:
    """Return the setup with the lowest median req/s at GOMAXPROCS (first connection level) and that median; None when none counted."""
    medians = {
        setup: rate
        for setup in rate_setups(manifest["parameters"]["setups"])
        if (rate := setup_rate(run_dir, manifest, setup, gomaxprocs, cache)) is not None
    }
    return min(medians.items(), key=lambda item: item[1]) if medians else None


def rates_for(run_dir: Path, manifest: dict, gomaxprocs: int, cache: dict) -> tuple[list[int], str]:
    """Return the rates of the phase at GOMAXPROCS (ascending) and a sentence of where they come from."""
    params = manifest["parameters"]
    rates, shares = list(params.get("rates") or []), params.get("rate_shares") or []
    said = [f"{', '.join(f'{r:,}' for r in rates)} req/s as asked"] if rates else []
    if shares:
        slowest = slowest_rate(run_dir, manifest, gomaxprocs, cache)
        if slowest is None:
            said.append("no throughput measured to take shares of")
        else:
            setup, value = slowest
            least = max(1, len(params.get("client_hosts") or []))  # every client at 1 req/s at least
            shared = [max(least, min(round_rate(share * value), MAX_RATE)) for share in shares]
            rates += shared
            said.append(
                f"{', '.join(f'{share:.0%}' for share in shares)} of the slowest setup's {value:,.0f} req/s ({setup}): "
                f"{', '.join(f'{r:,}' for r in shared)} req/s"
            )
    return sorted(set(rates)), "; ".join(said)
