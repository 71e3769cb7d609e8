"""The helper's subcommands of a block: its start (servers' PIDs, every cell checked), notes, its end, warm-ups, and each measurement."""

from __future__ import annotations

import sys
from pathlib import Path

from ...core.errors import UsageError
from ...core.setups import APP_PROCESSES, BASELINE, FRONT_ENDS, H2_BASELINE, SETUP_BY_ID, SETUP_IDS, split_twin
from .. import server_machine
from ..app_answers import record_app_cell, record_front_end_cell, reference_of
from ..app_options import redact_argv
from ..cpu import child_pids, cpu_record, cpu_snapshot, pids_for, pinning_of, run_measured, server_pids
from ..h2_answers import h2_note, record_h2_cell
from ..handshake import counted, record_probe, remote_counter
from ..handshake import read_counter as read_local_counter
from ..manifest import (
    cell_from_headers,
    find_pass,
    go_reported_gomaxprocs,
    levels_of,
    load_manifest,
    new_pass,
    save_manifest,
    write_json_atomic,
)
from ..nginx import cap_log, nginx_error_logs
from ..profiles import body_text
from ..progress import progress_result, progress_start
from ..remote_clients.agent import HIST_ENV
from ..remote_clients.measuring import ClientRun, client_argv, run_all
from ..remote_clients.state import load_clients
from ..values import iso_ms, now_ms
from .clients import measure_on_clients


def cmd_pass_start(args) -> int:
    """Record a new pass (a block: one start of the servers) and print its setup order, one line per (connection level, round)."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    setups = [s for s in args.setups.split(",") if s] if args.setups else None
    if setups and not set(setups) <= set(manifest["parameters"]["setups"]):
        raise UsageError(f"--setups {args.setups}: not all of them are setups of this run")
    entry = new_pass(manifest, args.gomaxprocs, args.block, args.first_round, args.rounds, setups, args.warmup)
    entry["started_at"] = iso_ms(now_ms())
    save_manifest(run_dir, manifest)
    print("\n".join(" ".join(order) for order in entry["order"]))
    return 0


def cmd_pass_ready(args) -> int:
    """Record the pass's servers and every cell; print nginx's workers, then a verdict per cell."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    entry = find_pass(manifest, args.gomaxprocs)
    shell = server_machine.target_shell(manifest)
    children_of = shell.children if shell else child_pids  # the servers' children, where they run
    if args.go_pid is not None:
        entry["pids"]["go"] = args.go_pid
    if args.go_log:
        entry["go_reported_gomaxprocs"] = go_reported_gomaxprocs(Path(args.go_log).read_text(errors="replace"))
    if args.fasthttp_pid is not None:
        entry["pids"]["fasthttp"] = args.fasthttp_pid
    if args.node_pid is not None:
        entry["pids"]["node"] = args.node_pid
        entry["pids"]["node_workers"] = children_of(args.node_pid)  # the cluster's workers; none for one process
    if args.nginx_pid is not None:
        entry["pids"]["nginx"] = args.nginx_pid
        entry["pids"]["nginx_workers"] = children_of(args.nginx_pid)
    for name, pid in args.app_pid or []:  # --app's, --app-unix's, --app-fcgi's PID, its process group's ID; its CPU: the whole group
        if name not in APP_PROCESSES or not pid.isdigit():
            raise UsageError(f"--app-pid {name} {pid}: expected NAME PID with NAME one of {', '.join(APP_PROCESSES)}")
        entry["pids"][name] = int(pid)
    if args.app_b_pid is not None:  # --app-b: its second build's, likewise
        entry["pids"]["app_b"] = args.app_b_pid
    for name, pid in args.front_end_pid or []:  # HAProxy's, Caddy's, Apache httpd's PID, its process group's ID; its CPU: the whole group
        if name not in FRONT_ENDS or not pid.isdigit():
            raise UsageError(f"--front-end-pid {name} {pid}: expected NAME PID with NAME one of {', '.join(FRONT_ENDS)}")
        entry["pids"][name] = int(pid)
    if args.variant_nginx_pid is not None:  # --variant: its own nginx master
        entry["pids"]["variant_nginx"] = args.variant_nginx_pid
        entry["pids"]["variant_nginx_workers"] = children_of(args.variant_nginx_pid)
    lines = [" ".join(["nginx_workers", *map(str, entry["pids"]["nginx_workers"])])]
    lines.append(" ".join(["node_workers", *map(str, entry["pids"].get("node_workers", []))]))
    if "variant_nginx_workers" in entry["pids"]:  # --variant
        lines.append(" ".join(["variant_nginx_workers", *map(str, entry["pids"]["variant_nginx_workers"])]))
    probes, bodies, alone = dict(args.tls_probe or []), dict(args.app_body or []), {}
    cells = [cell[0] for cell in args.cell or []]
    h2_bodies, h2_headers, go_headers = dict(args.h2_body or []), None, None
    expected_body = body_text(manifest["parameters"].get("body_bytes", 12)).encode()
    for setup, ready, headers, error in args.cell or []:
        cell = record_cell(manifest, entry, setup, ready, headers, error or None, run_dir)
        data = Path(headers).read_bytes() if headers and Path(headers).is_file() else None  # the captured header block
        if setup in SETUP_BY_ID and SETUP_BY_ID[setup].h2:  # status, body, ALPN h2; header fields against go-h2's
            h2_headers = data if setup == H2_BASELINE else h2_headers
            note = record_h2_cell(
                manifest,
                entry,
                setup,
                cell,
                data,
                h2_bodies.get(setup),
                probes.get(setup),
                expected_body,
                None if setup == H2_BASELINE else h2_headers,
            )
            verdict = f"skip {setup} {cell['error']}" if cell["error"] else f"measure {setup} note: {h2_note(setup, cell)}"
            lines.append(verdict + (f"; TLS: {note}" if note and not cell["error"] else ""))
            continue
        go_headers = data if setup == BASELINE else go_headers  # go-http's header block: what another front end's is compared with
        if setup in SETUP_BY_ID and SETUP_BY_ID[setup].server in FRONT_ENDS:  # go-http's status and body; its own header block
            record_front_end_cell(cell, data, bodies.get(setup), expected_body, entry["cells"].get(BASELINE), go_headers)
        if setup in SETUP_BY_ID and SETUP_BY_ID[setup].app:  # --app: the status and body the app alone (or --app-b's build alone) answers
            reference = reference_of(setup, cells)
            alone[setup] = data if reference is None else None  # an app build alone: the header block the others are compared with
            record_app_cell(
                setup, cell, data, bodies.get(setup), entry["cells"].get(reference or setup), alone.get(reference or setup), reference
            )
        verdict = cell_verdict(setup, cell, manifest["parameters"]["expect_header_bytes"])
        if setup in probes and not verdict.startswith("skip"):
            note = record_probe(manifest, entry, setup, probes[setup])
            verdict += f"{' ' if ' note: ' in verdict else ' note: '}TLS: {note}" if note else ""
        lines.append(verdict)
    save_manifest(run_dir, manifest)
    print("\n".join(lines))
    return 0


def record_cell(manifest: dict, entry: dict, setup: str, ready: str, headers: str, error: str | None, run_dir: Path) -> dict:
    """Record one cell of a pass from its readiness, `curl -sI` file (may be empty) and error.

    The file is named in the cell when it is kept in the run directory (the first block of
    each GOMAXPROCS); later blocks check a capture in the work directory.
    """
    if setup not in SETUP_BY_ID or ready not in ("0", "1"):
        raise UsageError(
            f"--cell {setup} {ready} ...: expected SETUP 0|1 HEADERS ERROR with SETUP one of {', '.join(SETUP_IDS)} (or a --variant twin)"
        )
    data = Path(headers).read_bytes() if headers and Path(headers).is_file() else None
    cell = cell_from_headers(
        data, ready == "1", error, SETUP_BY_ID[setup].app, "curl -s -D -" if SETUP_BY_ID[setup].own_answer else "curl -sI"
    )
    cell["url"] = manifest["parameters"]["urls"][setup]
    kept = data and Path(headers).resolve().parent == run_dir.resolve()
    cell["headers_file"] = Path(headers).name if kept else None
    entry["cells"][setup] = cell
    return cell


def cell_verdict(setup: str, cell: dict, expect_header_bytes: int) -> str:
    """Return 'skip SETUP REASON', 'measure SETUP' or 'measure SETUP note: ...' for the script."""
    if cell["error"]:
        return f"skip {setup} {cell['error']}"
    if SETUP_BY_ID[setup].own_answer:  # its own header block: compared with the app's or go-http's (record_*_cell), not with 141 bytes
        changed = cell.get("headers_changed")
        return (
            f"measure {setup} note: {cell['header_bytes']}-byte header block; changed: {', '.join(changed) or 'nothing'}"
            if changed is not None
            else f"measure {setup}"
        )
    if cell["header_bytes"] != expect_header_bytes:
        return f"measure {setup} note: {cell['header_bytes']}-byte header block, expected {expect_header_bytes}"
    return f"measure {setup}"


def cmd_pass_note(args) -> int:
    """Add a note to a pass (e.g. a setup dropped because its server exited)."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    find_pass(manifest, args.gomaxprocs)["notes"].append(args.note)
    save_manifest(run_dir, manifest)
    return 0


def cmd_pass_end(args) -> int:
    """Record the end time of a pass; cap its nginx error log."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    find_pass(manifest, args.gomaxprocs)["ended_at"] = iso_ms(now_ms())
    save_manifest(run_dir, manifest)
    for log in nginx_error_logs(run_dir, args.gomaxprocs):  # and what the warm-ups and header checks wrote
        cap_log(log)
    return 0


def cmd_measure(args) -> int:
    """Run one measurement: the progress line, wrk (the command after --), its .cpu.json, its manifest entry.

    wrk's stdout then stderr go to --file; with --hist-file, wrk's environment names that
    file (WRKREPORT_HIST_FILE) for histogram.lua, run by the command's `-s`, to write the
    latency histogram to (recorded as hist_file when written); the CPU time of the pass's servers is read from
    /proc just before and just after, wrk's own from its rusage. Exits 0 once recorded,
    whatever wrk's status (recorded as exit_code); on SIGINT/SIGTERM (passed on to wrk)
    with 128 + N, its partial files removed and nothing recorded.
    """
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    params = manifest["parameters"]
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise UsageError("measure needs the wrk command after --")
    connections = args.connections or levels_of(params)[0]
    print(
        f"[run_bench] {progress_start(manifest, args.gomaxprocs, connections, args.setup, args.repeat)}",
        end="",
        file=sys.stderr,
        flush=True,
    )
    servers = pids_for(find_pass(manifest, args.gomaxprocs)["pids"], args.setup)  # a twin's nginx: the variant's
    out, cpu_file, stderr = run_dir / args.file, run_dir / args.cpu_file, Path(args.stderr)
    if args.clients:  # --client-hosts: wrk on every client at once
        return measure_on_clients(args, run_dir, manifest, argv, connections, servers)
    hist = run_dir / args.hist_file if args.hist_file else None
    env = {HIST_ENV: str(hist)} if hist else {}
    if hist:
        hist.unlink(missing_ok=True)  # only this wrk's own file may be recorded
    shell = server_machine.target_shell(manifest)  # the servers on --server-host: their /proc over ssh

    def snapshot() -> dict:
        return shell.snapshot(servers) if shell else cpu_snapshot(server_pids(servers))

    counter = args.tls_counter  # KIND:PATH of a TLS setup's server: its handshakes and resumed connections

    def read_counter(spec):  # where the servers run: here, or on the target over the helper's session
        return remote_counter(spec, shell.ask) if shell else read_local_counter(spec)

    tls_before = read_counter(counter)
    before = snapshot()
    started = now_ms()  # from just before wrk starts to just after it ends: the gaps between measurements
    wrk = run_measured(argv, out, stderr, env)
    ended = now_ms()
    after = snapshot()  # nginx's children again: a worker may have been replaced
    tls_counts = counted(tls_before, read_counter(counter)) if counter else None
    with open(out, "ab") as f:
        f.write(stderr.read_bytes())
    for log in nginx_error_logs(run_dir, args.gomaxprocs):
        cap_log(log)
    if wrk.signal is not None:
        out.unlink(missing_ok=True)
        if hist:
            hist.unlink(missing_ok=True)
        return wrk.status
    ids = {"setup": args.setup, "gomaxprocs": args.gomaxprocs, "connections": connections, "repeat": args.repeat}
    if args.block is not None:
        ids.update(block=args.block, round=args.round)
    usage = {"user_s": round(wrk.user_s, 3), "system_s": round(wrk.system_s, 3), "pids": [wrk.pid], "threads": params["threads"]}
    where = (shell.ticks_per_s, manifest["server_host"]["machine"].get("logical_cores")) if shell else None
    variant = manifest.get("variant") if split_twin(args.setup)[1] else None  # a twin's nginx may run on its own CPUs
    write_json_atomic(cpu_file, cpu_record({"file": out.name, **ids}, before, after, usage, wrk.wall_s, pinning_of(params, variant), where))
    manifest["measurements"].append(
        {
            **ids,
            "file": out.name,
            "cpu_file": cpu_file.name,
            **({"hist_file": hist.name} if hist and hist.is_file() else {}),
            "url": params["urls"][args.setup],
            "command": " ".join(redact_argv(argv)),
            "exit_code": wrk.status,
            "started_at": iso_ms(started),
            "ended_at": iso_ms(ended),
            **({"tls": tls_counts} if counter else {}),
        }
    )
    save_manifest(run_dir, manifest)
    print(progress_result(out, wrk.status), file=sys.stderr)
    return 0


def cmd_warm_up(args) -> int:
    """Run the warm-up wrk (the command after --) on every client at once, output not kept; print each client's failure."""
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise UsageError("warm-up needs the wrk command after --")
    state = load_clients(Path(args.clients))
    runs = [ClientRun(c, f"warm-up.{c.label}", client_argv(argv, c), None, Path(f"{args.stderr}.{c.label}"), None) for c in state.clients]
    stopped = run_all(state, runs)
    if stopped is not None:
        return 128 + stopped
    for run in runs:
        if run.status:
            text = " ".join(run.err.read_text(errors="replace").split())[:300]
            print(f"{run.client.label} ({run.client.host}): wrk exit {run.status}: {text}")
    return 0
