"""The subcommands run_bench.sh calls: `python3 -m wrkreport.bench SUBCOMMAND ...` (docs/driver.md).

The shell script orchestrates processes; everything with JSON, arithmetic or text in it
lives in this package. Standard library only (plus `wrkreport.parse`, itself stdlib-only),
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

from .cpu import child_pids, cpu_record, cpu_snapshot, pinning_of, run_measured, server_pids
from .machine import apply_tune, command_output, untraversable, usable_cpus, user_ids
from .manifest import cell_from_headers, create_run_dir, find_pass, go_reported_gomaxprocs, levels_of, load_manifest, new_manifest, new_pass, point_latest, save_manifest, write_json_atomic
from .nginx import nginx_conf_dir, nginx_flags, nginx_missing_modules, nginx_values, render_template
from .plan import build_plan, plan_lines
from .ports import busy_port_messages
from .progress import progress_result, progress_start, summary_lines
from .setups import NO, PROG, SETUP_BY_ID, SETUP_IDS, UsageError
from .values import iso, utc_now


def cmd_plan(args) -> int:
    """Validate the script's options and print the plan; save it as JSON for `init`."""
    options = args.options[1:] if args.options[:1] == ["--"] else args.options
    cpus = usable_cpus()
    plan = build_plan(options, dict(os.environ), Path(args.root), len(cpus), os.geteuid(), cpus)
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
    nginx_V = command_output([args.nginx, "-V"]) or ""
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
    """Apply the article's sysctl values (see ARTICLE_SYSCTL) and save what was done."""
    actions = apply_tune(Path(args.proc_sys), lambda text: print(f"[run_bench] {text}", file=sys.stderr))
    write_json_atomic(Path(args.save), {"sysctl_changes": actions})
    return 0


def cmd_init(args) -> int:
    """Create the run directory and its 'running' manifest, point latest at it, print its path."""
    plan = json.loads(Path(args.plan).read_text())
    tune = json.loads(Path(args.tune_log).read_text())["sysctl_changes"] if args.tune_log else None
    started = utc_now()
    out = Path(plan["out"])
    run_dir = create_run_dir(out, started)
    (run_dir / "logs").mkdir()
    manifest = new_manifest(run_dir.name, started, args.command, plan, args.nginx or None, args.ulimit_n, tune)
    save_manifest(run_dir, manifest)
    warning = point_latest(out, run_dir)
    if warning:
        print(f"[run_bench] warning: {warning}", file=sys.stderr)
    print(run_dir)
    return 0


def cmd_render_nginx(args) -> int:
    """Render the nginx configuration of this run to --out."""
    manifest = load_manifest(Path(args.run))
    values = nginx_values(manifest, args.prefix, args.socket, args.user, args.group, args.rlimit, args.http_socket)
    nginx_setups = [s for s in manifest["parameters"]["setups"] if SETUP_BY_ID[s].server == "nginx"]
    text = render_template(Path(args.template).read_text(), nginx_setups, values, nginx_flags(manifest))
    Path(args.out).write_text(text)
    return 0


def cmd_pass_start(args) -> int:
    """Record a new pass and print its setup order, one line per repeat."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    entry = new_pass(manifest, args.gomaxprocs)
    save_manifest(run_dir, manifest)
    print("\n".join(" ".join(order) for order in entry["order"]))
    return 0


def cmd_pass_update(args) -> int:
    """Record the pass's PIDs, the GOMAXPROCS Go reports, a note, or its end."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    entry = find_pass(manifest, args.gomaxprocs)
    if args.go_log:
        entry["go_reported_gomaxprocs"] = go_reported_gomaxprocs(Path(args.go_log).read_text(errors="replace"))
    if args.go_pid is not None:
        entry["pids"]["go"] = args.go_pid
    if args.fasthttp_pid is not None:
        entry["pids"]["fasthttp"] = args.fasthttp_pid
    if args.nginx_pid is not None:
        entry["pids"]["nginx"] = args.nginx_pid
        entry["pids"]["nginx_workers"] = child_pids(args.nginx_pid)
        print(" ".join(map(str, entry["pids"]["nginx_workers"])))
    if args.note:
        entry["notes"].append(args.note)
    if args.ended:
        entry["ended_at"] = iso(utc_now())
    save_manifest(run_dir, manifest)
    return 0


def cmd_cell(args) -> int:
    """Record one cell's readiness and header capture; exit 3 (reason on stdout) if unusable."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    data = None
    if args.headers and Path(args.headers).is_file():
        data = Path(args.headers).read_bytes()
    cell = cell_from_headers(data, bool(args.ready), args.error)
    cell["url"] = manifest["parameters"]["urls"][args.setup]
    cell["headers_file"] = Path(args.headers).name if data else None
    find_pass(manifest, args.gomaxprocs)["cells"][args.setup] = cell
    save_manifest(run_dir, manifest)
    if cell["error"]:
        print(cell["error"])
        return NO
    expect = manifest["parameters"]["expect_header_bytes"]
    if cell["header_bytes"] != expect:
        print(f"note: {cell['header_bytes']}-byte header block, expected {expect}")
    return 0


def cmd_measure_start(args) -> int:
    """Print the start of this measurement's progress line."""
    manifest = load_manifest(Path(args.run))
    connections = args.connections or levels_of(manifest["parameters"])[0]
    print(progress_start(manifest, args.gomaxprocs, connections, args.setup, args.repeat), end="")
    return 0


def cmd_run_wrk(args) -> int:
    """Run wrk (the command after --) for one measurement and write its .cpu.json.

    Its stdout then stderr go to --out; the CPU time of the pass's servers is read from
    /proc just before and just after, wrk's own from its rusage. Exits with wrk's status;
    on SIGINT/SIGTERM (passed on to wrk) with 128 + N and no .cpu.json.
    """
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    params = manifest["parameters"]
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise UsageError("run-wrk needs the wrk command after --")
    started = find_pass(manifest, args.gomaxprocs)["pids"]
    out, stderr = Path(args.out), Path(args.stderr)
    before = cpu_snapshot(server_pids(started))
    wrk = run_measured(argv, out, stderr)
    after = cpu_snapshot(server_pids(started))  # nginx's children again: a worker may have been replaced
    with open(out, "ab") as f:
        f.write(stderr.read_bytes())
    if wrk.signal is not None:
        return wrk.status
    measurement = {
        "file": out.name,
        "setup": args.setup,
        "gomaxprocs": args.gomaxprocs,
        "connections": args.connections or levels_of(params)[0],
        "repeat": args.repeat,
    }
    usage = {"user_s": round(wrk.user_s, 3), "system_s": round(wrk.system_s, 3), "pids": [wrk.pid], "threads": params["threads"]}
    write_json_atomic(run_dir / args.cpu_file, cpu_record(measurement, before, after, usage, wrk.wall_s, pinning_of(params)))
    return wrk.status


def cmd_measure_end(args) -> int:
    """Record a finished measurement and print the end of its progress line."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    cpu_file = args.cpu_file if args.cpu_file and (run_dir / args.cpu_file).is_file() else None
    manifest["measurements"].append(
        {
            "setup": args.setup,
            "gomaxprocs": args.gomaxprocs,
            "connections": args.connections or levels_of(manifest["parameters"])[0],
            "repeat": args.repeat,
            "file": args.file,
            "cpu_file": cpu_file,
            "url": manifest["parameters"]["urls"][args.setup],
            "command": args.command,
            "exit_code": args.exit_code,
            "started_at": args.started_at,
            "ended_at": iso(utc_now()),
        }
    )
    save_manifest(run_dir, manifest)
    print(progress_result(run_dir / args.file, args.exit_code))
    return 0


def cmd_finish(args) -> int:
    """Set the run's final status, reason and end time."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    manifest["status"] = args.status
    manifest["reason"] = args.reason or None
    manifest["ended_at"] = iso(utc_now())
    save_manifest(run_dir, manifest)
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
    add("check-nginx", cmd_check_nginx, (("--plan",), {"required": True}), (("--nginx",), {"required": True}))
    add("check-reach", cmd_check_reach, (("--path",), {"required": True}), (("--user",), {"required": True}))
    add("tune", cmd_tune, (("--save",), {"required": True}), (("--proc-sys",), {"default": "/proc/sys"}))
    add(
        "init",
        cmd_init,
        (("--plan",), {"required": True}),
        (("--command",), {"required": True}),
        (("--nginx",), {"default": ""}),
        (("--ulimit-n",), {"type": int}),
        (("--tune-log",), {}),
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
        (("--out",), {"required": True}),
    )
    add("pass-start", cmd_pass_start, run, n)
    add(
        "pass-update",
        cmd_pass_update,
        run,
        n,
        (("--go-log",), {}),
        (("--go-pid",), {"type": int}),
        (("--fasthttp-pid",), {"type": int}),
        (("--nginx-pid",), {"type": int}),
        (("--note",), {}),
        (("--ended",), {"action": "store_true"}),
    )
    add(
        "cell",
        cmd_cell,
        run,
        n,
        setup,
        (("--ready",), {"type": int, "choices": (0, 1), "required": True}),
        (("--headers",), {}),
        (("--error",), {}),
    )
    add("measure-start", cmd_measure_start, run, n, setup, repeat, connections)
    add(
        "run-wrk",
        cmd_run_wrk,
        run,
        n,
        setup,
        repeat,
        connections,
        (("--out",), {"required": True}),
        (("--stderr",), {"required": True}),
        (("--cpu-file",), {"required": True}),
        (("argv",), {"nargs": argparse.REMAINDER}),
    )
    add(
        "measure-end",
        cmd_measure_end,
        run,
        n,
        setup,
        repeat,
        connections,
        (("--file",), {"required": True}),
        (("--cpu-file",), {}),
        (("--command",), {"required": True}),
        (("--exit-code",), {"type": int, "required": True}),
        (("--started-at",), {"required": True}),
    )
    add(
        "finish",
        cmd_finish,
        run,
        (("--status",), {"required": True, "choices": ("complete", "interrupted", "failed")}),
        (("--reason",), {}),
    )
    add("summary", cmd_summary, run)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; a UsageError becomes `run_bench.sh: message` and exit status 2."""
    args = main_parser().parse_args(argv)
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"{PROG}: {exc} (see ./{PROG} --help)", file=sys.stderr)
        return 2
    except (ValueError, KeyError, OSError) as exc:  # a broken template, manifest or file
        print(f"wrkreport.bench {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
