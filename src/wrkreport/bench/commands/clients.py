"""The helper's subcommands for --client-hosts: preflight, record, cleanup, and one measurement on every client at once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import server_machine
from ..app_options import redact_argv
from ..cpu import cpu_record, cpu_snapshot, pinning_of, server_pids
from ..manifest import load_manifest, save_manifest, write_json_atomic
from ..nginx import cap_log, nginx_error_log
from ..profiles import PROG
from ..progress import progress_result
from ..remote_clients.measuring import ClientRun, client_argv, run_all, start_skew_ms, wrk_usage
from ..remote_clients.state import ClientError, Clients, client_file, down, labelled, load_clients, manifest_hosts, preflight, save_clients
from ..remote_clients.totals import CLIENT_FILE, totals
from ..values import format_rate, iso_ms


def measure_on_clients(args, run_dir: Path, manifest: dict, argv: list[str], connections: int, servers: dict) -> int:
    """Run one measurement on every --client-hosts client at once (`measure --clients F`); record it as docs/driver.md says.

    One client keeps the single-client names (with `client` and `host` in its entry); with
    several each has its `.client-<i>` wrk file and histogram, the entry lists them under
    `clients`, `file` is the first's and `exit_code` the first non-zero.
    """
    params = manifest["parameters"]
    state = load_clients(Path(args.clients))
    several = len(state.clients) > 1
    runs = []
    for index, client in enumerate(state.clients):
        name = client_file(args.file, client.label) if several else args.file
        hist = (client_file(args.hist_file, client.label) if several else args.hist_file) if args.hist_file else None
        stem = CLIENT_FILE.match(name)["stem"]
        runs.append(
            ClientRun(
                client,
                f"{stem}.{client.label}" if not several else stem,
                client_argv(argv, client, index, len(state.clients)),
                run_dir / name,
                Path(f"{args.stderr}.{client.label}"),
                run_dir / hist if hist else None,
            )
        )
    cpu_file = run_dir / args.cpu_file
    shell = server_machine.target_shell(manifest)  # the servers on --server-host: their /proc over ssh

    def snapshot() -> dict:
        return shell.snapshot(servers) if shell else cpu_snapshot(server_pids(servers))

    before = snapshot()
    stopped = run_all(state, runs)
    after = snapshot()
    cap_log(nginx_error_log(run_dir, args.gomaxprocs))
    if stopped is not None:
        for run in runs:
            for path in (run.out, run.hist):
                if path is not None:
                    path.unlink(missing_ok=True)
        return 128 + stopped
    ids = {"setup": args.setup, "gomaxprocs": args.gomaxprocs, "connections": connections, "repeat": args.repeat}
    if args.block is not None:
        ids.update(block=args.block, round=args.round)
    if any(run.client.remote for run in runs):
        usage = wrk_usage(runs, params["threads"])
    else:  # `--client-hosts local`: the local wrk, as without the option
        usage = {"user_s": runs[0].user_s, "system_s": runs[0].system_s, "pids": [runs[0].pid], "threads": params["threads"]}
    # wrk's own span, first start to last end (the clients' clocks): what gaps_s and wall_s mean without clients.
    started, ended = ms_time(min(run.started_ms for run in runs)), ms_time(max(run.ended_ms for run in runs))
    wall_s = (ended - started).total_seconds()
    where = (shell.ticks_per_s, manifest["server_host"]["machine"].get("logical_cores")) if shell else None
    write_json_atomic(cpu_file, cpu_record({"file": runs[0].out.name, **ids}, before, after, usage, wall_s, pinning_of(params), where))
    first = runs[0]
    entry = {
        **ids,
        "file": first.out.name,
        "cpu_file": cpu_file.name,
        **({"hist_file": first.hist.name} if not several and first.hist and first.hist.is_file() else {}),
        "url": params["urls"][args.setup],
        "command": " ".join(redact_argv(argv)),  # an --app-header secret redacted
        "exit_code": next((run.status for run in runs if run.status), 0),
        "started_at": iso_ms(started),
        "ended_at": iso_ms(ended),
    }
    if several:
        entry["clients"] = [
            {
                "client": run.client.label,
                "host": run.client.host,
                "file": run.out.name,
                "hist_file": run.hist.name if run.hist and run.hist.is_file() else None,
                "exit_code": run.status,
                "command": run.command,
                "started_at": iso_ms(ms_time(run.started_ms)),
                "ended_at": iso_ms(ms_time(run.ended_ms)),
            }
            for run in runs
        ]
    else:
        entry.update(client=first.client.label, host=first.client.host)
    manifest["measurements"].append(entry)
    save_manifest(run_dir, manifest)
    print(clients_progress(runs), file=sys.stderr)
    return 0


def ms_time(ms: int):
    """Return a UTC datetime from epoch milliseconds."""
    import datetime

    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)


def clients_progress(runs) -> str:
    """Return the end of the progress line of a measurement on clients: the summed req/s, or the first client's problem."""
    if len(runs) == 1:
        return progress_result(runs[0].out, runs[0].status)
    from ...core.errors import ParseError

    try:
        total = totals([run.out for run in runs])
    except ParseError as exc:  # the first client without a result says why
        bad = next((run for run in runs if str(run.out) == exc.path), runs[0])
        return f"{bad.client.label}: {progress_result(bad.out, bad.status)}"
    notes = [f"{run.client.label} wrk exit {run.status}" for run in runs if run.status]
    if total.non_2xx_3xx:
        notes.append(f"{total.non_2xx_3xx:,} non-2xx/3xx")
    if total.socket_errors:
        notes.append(f"{total.socket_errors:,} socket errors")
    tail = f", {', '.join(notes)}" if notes else ""
    rate = "no req/s" if total.requests_per_sec is None else f"{format_rate(total.requests_per_sec)} req/s"
    skew = start_skew_ms(runs)
    return f"{rate} ({len(runs)} clients, start skew {skew} ms{tail})"


def cmd_clients_preflight(args) -> int:
    """Check every --client-hosts client (wrk there, installed as root), make its work dir, time its RTT to the target; save the state."""
    plan = json.loads(Path(args.plan).read_text())
    state = Clients(args.control_path, plan.get("ssh_config"), labelled(plan["client_hosts"]))
    save_clients(Path(args.save), state)
    try:
        preflight(
            state, Path(args.save), Path(args.hist_script), args.target or None, lambda text: print(f"[run_bench] {text}", file=sys.stderr)
        )
    except ClientError as exc:
        print(f"{PROG}: --client-hosts: {exc}; nothing was started", file=sys.stderr)
        return 2
    for client in state.clients:
        facts = state.facts[client.label]
        print(
            f"{client.label} {client.host} wrk {facts['versions']['wrk'] or '?'} cores {facts['machine']['usable_cores'] or '?'} net_ns {facts['net_ns'] or '?'}"
        )
    for entry in state.rtt:
        shown = f"median {entry['median_ms']} ms ({entry['samples']} samples)" if entry["samples"] else entry["method"]
        print(f"rtt {entry['from']} -> {entry['to']}: {shown}")
    return 0


def cmd_clients_record(args) -> int:
    """Record the clients (client_hosts) and their RTT to the target (network.rtt) in the manifest."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    state = load_clients(Path(args.state))
    manifest["client_hosts"] = manifest_hosts(state)
    if state.rtt:
        rtt = manifest.setdefault("network", {}).setdefault("rtt", [])
        rtt[:] = [e for e in rtt if e.get("from") not in {r["from"] for r in state.rtt}] + state.rtt
    save_manifest(run_dir, manifest)
    return 0


def cmd_clients_down(args) -> int:
    """Stop any wrk left on the remote clients and remove their work dirs (the cleanup); print what failed."""
    path = Path(args.state)
    if not path.is_file():
        return 0
    for problem in down(load_clients(path)):
        print(problem)
    return 0
