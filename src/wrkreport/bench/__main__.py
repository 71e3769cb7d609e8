"""The subcommands run_bench.sh calls: `python3 -m wrkreport.bench SUBCOMMAND ...` (docs/driver.md).

The shell script orchestrates processes; everything with JSON, arithmetic or text in it
lives in this package. Standard library only (plus `wrkreport.parsers`, itself stdlib-only),
so that `PYTHONPATH=src python3 -m wrkreport.bench ...` works before the package is
installed. The raw/ layout and the manifest fields written here: docs/raw-format.md.

Exit statuses: 0 ok; 2 usage error (message on stderr, for the user); 3 "no" answer to a
question the script asked (a busy port, an unusable cell), explained on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from . import clients as hosts_clients
from .cpu import child_pids, cpu_record, cpu_snapshot, pinning_of, run_measured, server_pids
from .machine import apply_tune, command_output, read_sysctl, untraversable, usable_cpus, user_ids
from .manifest import CACHE, cell_from_headers, create_run_dir, out_problem, find_pass, go_reported_gomaxprocs, levels_of, load_manifest, new_manifest, new_pass, point_latest, save_manifest, write_json_atomic
from .nginx import cap_log, nginx_conf_dir, nginx_error_log, nginx_flags, nginx_missing_modules, nginx_values, render_template
from .plan import build_plan, plan_lines
from .ports import busy_port_messages
from .progress import progress_result, progress_start, summary_lines
from .setups import NO, PROG, SETUP_BY_ID, SETUP_IDS, UsageError
from .precision import assess, decide, gap_record
from .values import format_duration, format_rate, iso, iso_ms, now_ms, parse_iso, utc_now
from . import target as target_mod
from .remote import FACTS_SCRIPT, parse_facts


def cmd_plan(args) -> int:
    """Validate the script's options and print the plan; save it as JSON for `init`."""
    options = args.options[1:] if args.options[:1] == ["--"] else args.options
    cpus = usable_cpus()
    plan = build_plan(options, dict(os.environ), Path(args.root), len(cpus), os.geteuid(), cpus)
    problem = out_problem(Path(plan["out"]))
    if problem:  # found now, before anything is built, started or changed
        raise UsageError(f"--out {plan['out']}: {problem}")
    for warning in plan["warnings"]:
        print(f"[run_bench] warning: {warning}", file=sys.stderr)
    write_json_atomic(Path(args.save), plan)
    print("\n".join(plan_lines(plan)))
    return 0


def cmd_check_ports(args) -> int:
    """Print a message per needed port that is busy; exit 3 if any."""
    plan = json.loads(Path(args.plan).read_text())
    messages = busy_port_messages(plan["needed_ports"])
    for message in messages:
        print(message)
    return NO if messages else 0


def cmd_check_nginx(args) -> int:
    """Print which selected setups this nginx cannot serve; exit 3 if any."""
    plan = json.loads(Path(args.plan).read_text())
    nginx_V = Path(args.nginx_v_file).read_text(errors="replace") if args.nginx_v_file else command_output([args.nginx, "-V"]) or ""
    problems = nginx_missing_modules(nginx_V, plan["setups"])
    if nginx_conf_dir(nginx_V) is None:
        problems.append(f"cannot read --conf-path from `{args.nginx} -V`")
    for problem in problems:
        print(problem)
    return NO if problems else 0


def cmd_check_reach(args) -> int:
    """Print why a user cannot reach a directory (nginx workers -> work dir); exit 3 if so."""
    try:
        uid, gids = user_ids(args.user)
    except KeyError:
        print(f"no user {args.user!r} on this system")
        return NO
    blocked = untraversable(Path(args.path), uid, gids)
    if blocked:
        print(f"nginx workers (user {args.user}) cannot reach {args.path}: {blocked} is not searchable; set TMPDIR to a directory they can traverse, e.g. /tmp")
        return NO
    return 0


def cmd_tune(args) -> int:
    """Apply the article's sysctl values (see ARTICLE_SYSCTL), recorded in the run's manifest before and after.

    The record lives in the run directory, which no cleanup removes: sysctl_changes lists
    every planned write before the first one, then what each did; sysctl is re-read after.
    """
    run_dir, root = Path(args.run), Path(args.proc_sys)
    manifest = load_manifest(run_dir)

    def record(actions: list[dict]) -> None:
        manifest["sysctl_changes"] = actions
        save_manifest(run_dir, manifest)

    actions = apply_tune(root, lambda text: print(f"[run_bench] {text}", file=sys.stderr), record)
    manifest["sysctl"] = read_sysctl(root)  # the values the run measures with
    record(actions)
    return 0


def cmd_init(args) -> int:
    """Create the run directory and its 'running' manifest, point latest at it, print its path."""
    plan = json.loads(Path(args.plan).read_text())
    started = utc_now()
    out = Path(plan["out"])
    run_dir = create_run_dir(out, started)
    (run_dir / "logs").mkdir()
    manifest = new_manifest(run_dir.name, started, args.command_line, plan, args.nginx or None, args.ulimit_n)
    save_manifest(run_dir, manifest)
    warning = point_latest(out, run_dir)
    if warning:
        print(f"[run_bench] warning: {warning}", file=sys.stderr)
    print(run_dir)
    return 0


def cmd_render_nginx(args) -> int:
    """Render the nginx configuration of this run to --out."""
    manifest = load_manifest(Path(args.run))
    values = nginx_values(
        manifest, args.prefix, args.socket, args.user, args.group, args.rlimit, args.http_socket, args.listen_address, args.fastcgi_params
    )
    nginx_setups = [s for s in manifest["parameters"]["setups"] if SETUP_BY_ID[s].server == "nginx"]
    text = render_template(Path(args.template).read_text(), nginx_setups, values, nginx_flags(manifest))
    Path(args.out).write_text(text)
    return 0


def cmd_pass_start(args) -> int:
    """Record a new pass (a block: one start of the servers) and print its setup order, one line per (connection level, round)."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    entry = new_pass(manifest, args.gomaxprocs, args.block, args.first_round, args.rounds)
    entry["started_at"] = iso_ms(now_ms())
    save_manifest(run_dir, manifest)
    print("\n".join(" ".join(order) for order in entry["order"]))
    return 0


def cmd_pass_ready(args) -> int:
    """Record the pass's servers and every cell; print nginx's workers, then a verdict per cell."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    entry = find_pass(manifest, args.gomaxprocs)
    shell = target_mod.target_shell(manifest)
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
    lines = [" ".join(["nginx_workers", *map(str, entry["pids"]["nginx_workers"])])]
    lines.append(" ".join(["node_workers", *map(str, entry["pids"].get("node_workers", []))]))
    for setup, ready, headers, error in args.cell or []:
        cell = record_cell(manifest, entry, setup, ready, headers, error or None, run_dir)
        lines.append(cell_verdict(setup, cell, manifest["parameters"]["expect_header_bytes"]))
    save_manifest(run_dir, manifest)
    print("\n".join(lines))
    return 0


def record_cell(manifest: dict, entry: dict, setup: str, ready: str, headers: str, error: str | None, run_dir: Path) -> dict:
    """Record one cell of a pass from its readiness, `curl -sI` file (may be empty) and error.

    The file is named in the cell when it is kept in the run directory (the first block of
    each GOMAXPROCS); later blocks check a capture in the work directory.
    """
    if setup not in SETUP_BY_ID or ready not in ("0", "1"):
        raise UsageError(f"--cell {setup} {ready} ...: expected SETUP 0|1 HEADERS ERROR with SETUP one of {', '.join(SETUP_IDS)}")
    data = Path(headers).read_bytes() if headers and Path(headers).is_file() else None
    cell = cell_from_headers(data, ready == "1", error)
    cell["url"] = manifest["parameters"]["urls"][setup]
    kept = data and Path(headers).resolve().parent == run_dir.resolve()
    cell["headers_file"] = Path(headers).name if kept else None
    entry["cells"][setup] = cell
    return cell


def cell_verdict(setup: str, cell: dict, expect_header_bytes: int) -> str:
    """Return 'skip SETUP REASON', 'measure SETUP' or 'measure SETUP note: ...' for the script."""
    if cell["error"]:
        return f"skip {setup} {cell['error']}"
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
    cap_log(nginx_error_log(run_dir, args.gomaxprocs))  # and what the warm-ups and header checks wrote
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
    print(f"[run_bench] {progress_start(manifest, args.gomaxprocs, connections, args.setup, args.repeat)}", end="", file=sys.stderr, flush=True)
    servers = find_pass(manifest, args.gomaxprocs)["pids"]
    out, cpu_file, stderr = run_dir / args.file, run_dir / args.cpu_file, Path(args.stderr)
    if args.clients:  # --client-hosts: wrk on every client at once
        return measure_on_clients(args, run_dir, manifest, argv, connections, servers)
    hist = run_dir / args.hist_file if args.hist_file else None
    env = {HIST_ENV: str(hist)} if hist else {}
    if hist:
        hist.unlink(missing_ok=True)  # only this wrk's own file may be recorded
    shell = target_mod.target_shell(manifest)  # the servers on --server-host: their /proc over ssh

    def snapshot() -> dict:
        return shell.snapshot(servers) if shell else cpu_snapshot(server_pids(servers))

    before = snapshot()
    started = now_ms()  # from just before wrk starts to just after it ends: the gaps between measurements
    wrk = run_measured(argv, out, stderr, env)
    ended = now_ms()
    after = snapshot()  # nginx's children again: a worker may have been replaced
    with open(out, "ab") as f:
        f.write(stderr.read_bytes())
    cap_log(nginx_error_log(run_dir, args.gomaxprocs))
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
    write_json_atomic(cpu_file, cpu_record({"file": out.name, **ids}, before, after, usage, wrk.wall_s, pinning_of(params), where))
    manifest["measurements"].append(
        {
            **ids,
            "file": out.name,
            "cpu_file": cpu_file.name,
            **({"hist_file": hist.name} if hist and hist.is_file() else {}),
            "url": params["urls"][args.setup],
            "command": " ".join(argv),
            "exit_code": wrk.status,
            "started_at": iso_ms(started),
            "ended_at": iso_ms(ended),
        }
    )
    save_manifest(run_dir, manifest)
    print(progress_result(out, wrk.status), file=sys.stderr)
    return 0


TARGET_LOST = 4  # measure's exit status when the ssh connection to the target is gone


def cmd_facts_script(args) -> int:
    """Print remote.FACTS_SCRIPT, the sh script run_bench.sh runs on another machine over ssh."""
    print(FACTS_SCRIPT)
    return 0


def cmd_target_facts(args) -> int:
    """Print what the driver needs of the target (FACTS_SCRIPT's output in --facts): GOARCH, uid, tool paths, missing tools."""
    plan = json.loads(Path(args.plan).read_text())
    facts = parse_facts(Path(args.facts).read_text(errors="replace"))
    arch, env = target_mod.goarch(facts["arch"])
    needs = {"nginx": "nginx", "node": "node"}
    missing = [tool for server, tool in needs.items() if any(server in SETUP_BY_ID[s].needs for s in plan["setups"]) and not facts["paths"][tool]]
    lines = [f"goarch {arch}", f"goenv {' '.join(f'{k}={v}' for k, v in env.items())}".rstrip(), f"uid {facts['uid']}"]
    lines += [f"path.{tool} {facts['paths'][tool]}" for tool in needs if facts["paths"][tool]]
    if missing:
        lines.append(f"missing {' '.join(missing)}")
    print("\n".join(line for line in lines if " " in line))
    return 0


def cmd_target_ports(args) -> int:
    """Print a message per needed port already listened on at the target (its /proc/net/tcp text in --tcp); exit 3 if any."""
    plan = json.loads(Path(args.plan).read_text())
    messages = target_mod.busy_port_lines(Path(args.tcp).read_text(errors="replace"), plan["needed_ports"], plan["server_host"])
    for message in messages:
        print(message)
    return NO if messages else 0


def cmd_target_nginx(args) -> int:
    """Print the path of the stock fastcgi_params beside the target nginx's conf-path (from its nginx -V text)."""
    conf_dir = nginx_conf_dir(Path(args.nginx_v_file).read_text(errors="replace"))
    if conf_dir is None:
        print("cannot read --conf-path from the target's nginx -V")
        return NO
    print(conf_dir / "fastcgi_params")
    return 0


def cmd_target_running(args) -> int:
    """Exit 0 when every PID runs on the target, 3 when one does not (asked through `serve`'s ssh session: no new connection)."""
    shell = target_mod.target_shell(load_manifest(Path(args.run)))
    if shell is None:
        raise UsageError("target-running: this run has no --server-host")
    return 0 if shell.running(args.pids) else NO


def cmd_target_record(args) -> int:
    """Record the target in the manifest (server_host, its nginx -V) and the RTT to it, measured now; print the RTT line."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    facts = parse_facts(Path(args.facts).read_text(errors="replace"))
    ulimit = int(args.ulimit_n) if args.ulimit_n and args.ulimit_n.isdigit() else args.ulimit_n
    manifest["server_host"] = target_mod.server_host_record(
        facts, manifest["parameters"]["server_host"], args.address, ulimit, target_mod.target_tools(manifest["parameters"]["setups"])
    )
    if args.nginx_v_file:
        manifest["nginx_V"] = Path(args.nginx_v_file).read_text(errors="replace")
    try:
        times = target_mod.rtt_samples(args.ssh_address, args.ssh_port)
    except OSError as exc:
        print(f"[run_bench] warning: could not time the link to {args.ssh_address}:{args.ssh_port} ({exc}); no RTT recorded", file=sys.stderr)
    else:
        rtt = target_mod.rtt_record(times, "local", args.ssh_address)
        manifest.setdefault("network", {}).setdefault("rtt", []).append(rtt)  # the clients' RTT may be there too
        print(f"RTT to {args.ssh_address}: median {rtt['median_ms']} ms (min {rtt['min_ms']}, max {rtt['max_ms']}; {rtt['samples']} TCP connects)")
    save_manifest(run_dir, manifest)
    return 0


HIST_ENV = "WRKREPORT_HIST_FILE"  # read by histogram.lua's done()


def measure_on_clients(args, run_dir: Path, manifest: dict, argv: list[str], connections: int, servers: dict) -> int:
    """Run one measurement on every --client-hosts client at once (`measure --clients F`); record it as docs/driver.md says.

    One client keeps the single-client names (with `client` and `host` in its entry); with
    several each has its `.client-<i>` wrk file and histogram, the entry lists them under
    `clients`, `file` is the first's and `exit_code` the first non-zero.
    """
    params = manifest["parameters"]
    state = hosts_clients.load_clients(Path(args.clients))
    several = len(state.clients) > 1
    runs = []
    for index, client in enumerate(state.clients):
        name = hosts_clients.client_file(args.file, client.label) if several else args.file
        hist = (hosts_clients.client_file(args.hist_file, client.label) if several else args.hist_file) if args.hist_file else None
        stem = hosts_clients.CLIENT_FILE.match(name)["stem"]
        runs.append(
            hosts_clients.ClientRun(
                client, f"{stem}.{client.label}" if not several else stem,
                hosts_clients.client_argv(argv, client, index, len(state.clients)), run_dir / name, Path(f"{args.stderr}.{client.label}"), run_dir / hist if hist else None,
            )
        )
    cpu_file = run_dir / args.cpu_file
    shell = target_mod.target_shell(manifest)  # the servers on --server-host: their /proc over ssh

    def snapshot() -> dict:
        return shell.snapshot(servers) if shell else cpu_snapshot(server_pids(servers))

    before = snapshot()
    stopped = hosts_clients.run_all(state, runs)
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
        usage = hosts_clients.wrk_usage(runs, params["threads"])
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
        "command": " ".join(argv),
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
    from ..errors import ParseError

    try:
        total = hosts_clients.totals([run.out for run in runs])
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
    skew = hosts_clients.start_skew_ms(runs)
    return f"{rate} ({len(runs)} clients, start skew {skew} ms{tail})"


def cmd_warm_up(args) -> int:
    """Run the warm-up wrk (the command after --) on every client at once, output not kept; print each client's failure."""
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise UsageError("warm-up needs the wrk command after --")
    state = hosts_clients.load_clients(Path(args.clients))
    runs = [
        hosts_clients.ClientRun(c, f"warm-up.{c.label}", hosts_clients.client_argv(argv, c), None, Path(f"{args.stderr}.{c.label}"), None)
        for c in state.clients
    ]
    stopped = hosts_clients.run_all(state, runs)
    if stopped is not None:
        return 128 + stopped
    for run in runs:
        if run.status:
            text = " ".join(run.err.read_text(errors="replace").split())[:300]
            print(f"{run.client.label} ({run.client.host}): wrk exit {run.status}: {text}")
    return 0


def cmd_clients_preflight(args) -> int:
    """Check every --client-hosts client (wrk there, installed as root), make its work dir, time its RTT to the target; save the state."""
    plan = json.loads(Path(args.plan).read_text())
    state = hosts_clients.Clients(args.control_path, plan.get("ssh_config"), hosts_clients.labelled(plan["client_hosts"]))
    hosts_clients.save_clients(Path(args.save), state)
    try:
        hosts_clients.preflight(state, Path(args.save), Path(args.hist_script), args.target or None, lambda text: print(f"[run_bench] {text}", file=sys.stderr))
    except hosts_clients.ClientError as exc:
        print(f"{PROG}: --client-hosts: {exc}; nothing was started", file=sys.stderr)
        return 2
    for client in state.clients:
        facts = state.facts[client.label]
        print(f"{client.label} {client.host} wrk {facts['versions']['wrk'] or '?'} cores {facts['machine']['usable_cores'] or '?'} net_ns {facts['net_ns'] or '?'}")
    for entry in state.rtt:
        shown = f"median {entry['median_ms']} ms ({entry['samples']} samples)" if entry["samples"] else entry["method"]
        print(f"rtt {entry['from']} -> {entry['to']}: {shown}")
    return 0


def cmd_clients_record(args) -> int:
    """Record the clients (client_hosts) and their RTT to the target (network.rtt) in the manifest."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    state = hosts_clients.load_clients(Path(args.state))
    manifest["client_hosts"] = hosts_clients.manifest_hosts(state)
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
    for problem in hosts_clients.down(hosts_clients.load_clients(path)):
        print(problem)
    return 0
PARSED: dict[str, float | None] = {}  # wrk file -> counted req/s, kept while `serve` runs


def elapsed_s(manifest: dict) -> float:
    """Return the seconds since the run started."""
    return (now_ms() - parse_iso(manifest["started_at"])).total_seconds()


def cmd_decide(args) -> int:
    """After a block: record the precision so far and print `continue WORST` or `stop WORST REASON` (WORST: worst half-width in %, or -)."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    record = assess(run_dir, manifest, PARSED, elapsed_s(manifest))
    reason = decide(record, manifest["parameters"])
    record["stop_reason"] = reason
    manifest["precision"] = record
    save_manifest(run_dir, manifest)
    worst = "-" if record["worst_half_width_pct"] is None else f"{record['worst_half_width_pct']:g}"
    print(f"stop {worst} {reason}" if reason else f"continue {worst}")
    return 0


def precision_lines(manifest: dict) -> list[str]:
    """Return the end-of-run lines on precision and gaps."""
    params, record, gap = manifest["parameters"], manifest.get("precision") or {}, manifest.get("gaps_s")
    lines = []
    if params.get("smoke_test"):
        lines.append("smoke test (--quick): one short measurement per cell, no interval claims; for figures run the default profile")
    if record:
        worst, median = record.get("worst_half_width_pct"), record.get("median_half_width_pct")
        shown = "no interval yet" if worst is None else f"worst ratio half-width +/-{worst:g}%, median +/-{median:g}%"
        blocks = ", ".join(f"GOMAXPROCS={n}: {b}" for n, b in record["blocks"].items())
        if record["met"]:
            lines.append(f"precision target +/-{record['target_pct']:g}% met: {shown} ({blocks} blocks)")
        else:
            more = record.get("more_time_estimate_s")
            extra = f"; about {format_duration(more)} more would meet it" if more else ""
            lines.append(f"precision target +/-{record['target_pct']:g}% NOT met: {shown} ({blocks} blocks){extra}")
        if record.get("stop_reason"):
            lines.append(f"stopped: {record['stop_reason']}")
    if gap:
        lines.append(f"gap between measurements: median {gap['median']:.3f}s, max {gap['max']:.3f}s ({gap['count']} gaps)")
    return lines


def cmd_finish(args) -> int:
    """Set the run's final status, reason and end time, its gaps and precision; when complete, print the summary."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    manifest["status"] = args.status
    manifest["reason"] = args.reason or None
    manifest["ended_at"] = iso(utc_now())
    manifest["gaps_s"] = gap_record(manifest)
    if manifest["measurements"] and not manifest.get("precision"):  # a fixed design: no stopping rule ran
        record = assess(run_dir, manifest, PARSED, elapsed_s(manifest))
        record["stop_reason"] = "fixed design: the planned blocks ran" if args.status == "complete" else f"run {args.status}"
        manifest["precision"] = record
    save_manifest(run_dir, manifest)
    if args.status == "complete":
        print("\n".join(summary_lines(run_dir, manifest) + precision_lines(manifest)))
    return 0


def cmd_summary(args) -> int:
    """Print the median req/s of each cell."""
    run_dir = Path(args.run)
    print("\n".join(summary_lines(run_dir, load_manifest(run_dir))))
    return 0


def main_parser() -> argparse.ArgumentParser:
    """Return the parser of the subcommands run_bench.sh calls."""
    p = argparse.ArgumentParser(prog="python3 -m wrkreport.bench", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    def add(name, func, *arguments):
        s = sub.add_parser(name, help=func.__doc__)
        s.set_defaults(func=func)
        for flags, kwargs in arguments:
            s.add_argument(*flags, **kwargs)
        return s

    run = (("--run",), {"required": True})
    n = (("--gomaxprocs",), {"required": True, "type": int})
    setup = (("--setup",), {"required": True, "choices": SETUP_IDS})
    repeat = (("--repeat",), {"required": True, "type": int})
    connections = (("--connections",), {"type": int})  # the level; default: the run's only one
    add("plan", cmd_plan, (("--root",), {"required": True}), (("--save",), {"required": True}), (("options",), {"nargs": argparse.REMAINDER}))
    add("check-ports", cmd_check_ports, (("--plan",), {"required": True}))
    add("check-nginx", cmd_check_nginx, (("--plan",), {"required": True}), (("--nginx",), {"default": ""}), (("--nginx-v-file",), {}))
    add("facts-script", cmd_facts_script)
    add("target-facts", cmd_target_facts, (("--plan",), {"required": True}), (("--facts",), {"required": True}))
    add("target-ports", cmd_target_ports, (("--plan",), {"required": True}), (("--tcp",), {"required": True}))
    add("target-running", cmd_target_running, run, (("pids",), {"nargs": "+", "type": int}))
    add("target-nginx", cmd_target_nginx, (("--nginx-v-file",), {"required": True}))
    add(
        "target-record",
        cmd_target_record,
        run,
        (("--facts",), {"required": True}),
        (("--address",), {"required": True}),
        (("--ulimit-n",), {}),
        (("--nginx-v-file",), {}),
        (("--ssh-address",), {"required": True}),
        (("--ssh-port",), {"type": int, "default": 22}),
    )
    add("check-reach", cmd_check_reach, (("--path",), {"required": True}), (("--user",), {"required": True}))
    add("tune", cmd_tune, run, (("--proc-sys",), {"default": "/proc/sys"}))
    add(
        "init",
        cmd_init,
        (("--plan",), {"required": True}),
        (("--command-line",), {"required": True}),  # not --command: `command` is the subcommand's dest
        (("--nginx",), {"default": ""}),
        (("--ulimit-n",), {"type": int}),
    )
    add(
        "render-nginx",
        cmd_render_nginx,
        run,
        (("--template",), {"required": True}),
        (("--prefix",), {"required": True}),
        (("--socket",), {"required": True}),
        (("--http-socket",), {"default": ""}),
        (("--user",), {}),
        (("--group",), {}),
        (("--rlimit",), {"type": int, "required": True}),
        (("--listen-address",), {"default": "127.0.0.1"}),  # the target's address with --server-host
        (("--fastcgi-params",), {}),  # found by the driver on the target
        (("--out",), {"required": True}),
    )
    add(
        "pass-start",
        cmd_pass_start,
        run,
        n,
        (("--block",), {"type": int, "default": 1}),
        (("--first-round",), {"type": int, "default": 1}),
        (("--rounds",), {"type": int}),  # default: the run's repeats
    )
    add("decide", cmd_decide, run)
    add("serve", cmd_serve, run, (("--ssh-control",), {}), (("--target-dir",), {}))
    add(
        "pass-ready",
        cmd_pass_ready,
        run,
        n,
        (("--go-pid",), {"type": int}),
        (("--go-log",), {}),
        (("--fasthttp-pid",), {"type": int}),
        (("--node-pid",), {"type": int}),
        (("--nginx-pid",), {"type": int}),
        (("--cell",), {"nargs": 4, "action": "append", "metavar": ("SETUP", "READY", "HEADERS", "ERROR")}),
    )
    add("pass-note", cmd_pass_note, run, n, (("--note",), {"required": True}))
    add("pass-end", cmd_pass_end, run, n)
    add(
        "measure",
        cmd_measure,
        run,
        n,
        setup,
        repeat,
        connections,
        (("--block",), {"type": int}),
        (("--round",), {"type": int}),
        (("--file",), {"required": True}),
        (("--cpu-file",), {"required": True}),
        (("--hist-file",), {}),  # where histogram.lua writes (WRKREPORT_HIST_FILE); none: no histogram
        (("--stderr",), {"required": True}),
        (("--clients",), {}),  # the state file of clients-preflight: run wrk on every client at once
        (("argv",), {"nargs": argparse.REMAINDER}),
    )
    add("warm-up", cmd_warm_up, run, (("--clients",), {"required": True}), (("--stderr",), {"required": True}), (("argv",), {"nargs": argparse.REMAINDER}))
    add(
        "clients-preflight",
        cmd_clients_preflight,
        (("--plan",), {"required": True}),
        (("--control-path",), {"required": True}),  # ssh's ControlPath of the masters (run_bench.sh's ssh_cmd)
        (("--hist-script",), {"required": True}),
        (("--target",), {"default": ""}),  # the servers' address: RTT from each remote client to it
        (("--save",), {"required": True}),
    )
    add("clients-record", cmd_clients_record, run, (("--state",), {"required": True}))
    add("clients-down", cmd_clients_down, (("--state",), {"required": True}))
    add(
        "finish",
        cmd_finish,
        run,
        (("--status",), {"required": True, "choices": ("complete", "interrupted", "failed")}),
        (("--reason",), {}),
    )
    add("summary", cmd_summary, run)
    return p


END = b"\x1e"  # the argument that ends a command sent to `serve`
DONE = "@@done"  # the line that ends an answer of `serve`: "@@done STATUS"


def read_commands(fd: int):
    """Yield each command sent to `serve`: arguments ending in NUL, a lone END argument after the last."""
    buffer, args = b"", []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        buffer += chunk
        *tokens, buffer = buffer.split(b"\0")
        for token in tokens:
            if token == END:
                yield [a.decode("utf-8", "surrogateescape") for a in args]
                args = []
            else:
                args.append(token)


def cmd_serve(args) -> int:
    """Answer commands on stdin until it closes: one long-lived helper for a whole run (docs/driver.md).

    Each command is a subcommand's arguments without --run; the answer is its stdout, then
    the line `@@done STATUS`. The manifest stays in memory between commands (written
    atomically by each that changes it) and wrk files are parsed once, so one measurement's
    bookkeeping takes milliseconds, not a Python start. SIGINT is ignored between commands
    (the script stops the helper); a `measure` stopped by a signal ends the loop with 128+N.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    CACHE.enable()
    target_mod.SESSION.update(control=args.ssh_control, dir=args.target_dir)
    hosts_clients.SESSIONS.keep = True  # one agent per remote client for the whole run
    try:
        return serve_commands(args.run)
    finally:
        hosts_clients.SESSIONS.close_all()
        target_mod.close_target_shell()


def serve_commands(run: str) -> int:
    """Answer `serve`'s commands until its input closes or a measurement is stopped by a signal."""
    import contextlib
    import io

    for command in read_commands(sys.stdin.fileno()):
        if command[:1] in (["serve"], []):
            status, text = 2, ""
        else:
            with contextlib.redirect_stdout(io.StringIO()) as out:
                status = main([*command[:1], "--run", run, *command[1:]])
            text = out.getvalue()
        sys.stdout.write(text if not text or text.endswith("\n") else text + "\n")
        sys.stdout.write(f"{DONE} {status}\n")
        sys.stdout.flush()
        if command[:1] in (["measure"], ["warm-up"]) and status >= 128:
            return status
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; a UsageError becomes `run_bench.sh: message` and exit status 2."""
    try:
        args = main_parser().parse_args(argv)
    except SystemExit as exc:  # argparse's usage error, already printed
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return args.func(args)
    except target_mod.TargetLost as exc:  # the link dropped: the script names it in the manifest
        print(f"{PROG}: {args.command}: {exc}", file=sys.stderr)
        return TARGET_LOST
    except UsageError as exc:
        print(f"{PROG}: {exc} (see ./{PROG} --help)", file=sys.stderr)
        return 2
    except (ValueError, KeyError, OSError) as exc:  # a broken template, manifest or file
        print(f"{PROG}: {args.command}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    except (TypeError, AttributeError, IndexError) as exc:  # a manifest edited by hand into the wrong shape
        print(f"{PROG}: {args.command}: {getattr(args, 'run', 'the run')}/manifest.json has an unexpected shape ({' '.join(str(exc).split())})", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
