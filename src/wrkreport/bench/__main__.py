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
import os
import sys

from ..core.errors import UsageError
from ..core.setups import SETUP_BY_ID, SETUP_IDS
from . import server_machine
from .commands.blocks import cmd_measure, cmd_pass_end, cmd_pass_note, cmd_pass_ready, cmd_pass_start, cmd_warm_up
from .commands.capacity_search import cmd_capacity_check, cmd_capacity_more, cmd_capacity_next
from .commands.clients import cmd_clients_down, cmd_clients_preflight, cmd_clients_record
from .commands.finish import cmd_decide, cmd_finish, cmd_summary
from .commands.preflight import (
    cmd_check_nginx,
    cmd_check_ports,
    cmd_check_reach,
    cmd_init,
    cmd_plan,
    cmd_render_front_ends,
    cmd_render_nginx,
    cmd_tune,
)
from .commands.rate_phase import (
    cmd_clients_vegeta,
    cmd_measure_rate,
    cmd_rate_pass_start,
    cmd_rate_plan,
    cmd_rate_warm_up,
    cmd_vegeta_record,
)
from .commands.server_host import (
    TARGET_LOST,
    cmd_facts_script,
    cmd_target_facts,
    cmd_target_nginx,
    cmd_target_ports,
    cmd_target_record,
    cmd_target_running,
)
from .handshake import cmd_tls_record
from .manifest import CACHE
from .profiles import PROG
from .remote_clients.session import SESSIONS


def setup_id(text: str) -> str:
    """Return text when it names a setup of the table or a --variant twin of an nginx one ('nginx-http~nokeep'); refuse anything else."""
    if text not in SETUP_BY_ID:
        raise argparse.ArgumentTypeError(f"{text!r} is not a setup: one of {', '.join(SETUP_IDS)}, or an nginx setup's twin ORIGINAL~NAME")
    return text


def main_parser() -> argparse.ArgumentParser:
    """Return the parser of the subcommands run_bench.sh calls."""
    p = argparse.ArgumentParser(prog="python3 -m wrkreport.bench", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    def add(name, func, *arguments):
        s = sub.add_parser(name, help=func.__doc__.replace("%", "%%"))  # argparse formats help with %
        s.set_defaults(func=func)
        for flags, kwargs in arguments:
            s.add_argument(*flags, **kwargs)
        return s

    run = (("--run",), {"required": True})
    n = (("--gomaxprocs",), {"required": True, "type": int})
    setup = (("--setup",), {"required": True, "type": setup_id, "metavar": "SETUP"})
    repeat = (("--repeat",), {"required": True, "type": int})
    connections = (("--connections",), {"type": int})  # the level; default: the run's only one
    add(
        "plan",
        cmd_plan,
        (("--root",), {"required": True}),
        (("--save",), {"required": True}),
        (("options",), {"nargs": argparse.REMAINDER}),
    )
    add("check-ports", cmd_check_ports, (("--plan",), {"required": True}))
    add(
        "check-nginx",
        cmd_check_nginx,
        (("--plan",), {"required": True}),
        (("--nginx",), {"default": ""}),
        (("--nginx-v-file",), {}),
        (("--variant",), {"action": "store_true"}),
    )
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
        (("--variant-nginx",), {}),
        (("--variant-nginx-v-file",), {}),
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
        (("--app-version-output",), {}),
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
        (("--variant",), {"action": "store_true"}),  # the --variant nginx's configuration: its twins' ports and settings
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
        (("--setups",), {}),  # the block measures only these (comma list; decide's allocation); default: all
        (("--warmup",), {"type": float}),  # the block's warm-up when it differs from the run's (decide's)
    )
    add("decide", cmd_decide, run)
    add("serve", cmd_serve, run, (("--ssh-control",), {}), (("--target-dir",), {}))
    add(
        "render-front-ends",
        cmd_render_front_ends,
        run,
        (("--work",), {"required": True}),  # the run's private work dir: each front end's state and pid files
        (("--socket",), {"required": True}),  # Go's FastCGI socket
        (("--cpus",), {"type": int}),  # workers or threads (default: the usable CPUs, as nginx's worker_processes auto)
        (("--rlimit",), {"type": int, "required": True}),
        (("--user",), {}),
        (("--group",), {}),
    )
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
        (("--variant-nginx-pid",), {"type": int}),  # --variant: its nginx master
        (
            ("--app-pid",),
            {"nargs": 2, "action": "append", "metavar": ("NAME", "PID")},
        ),  # an app process (app, app-unix, app-fcgi): its session leader
        (("--app-b-pid",), {"type": int}),  # --app-b: its second build's session leader
        (
            ("--front-end-pid",),
            {"nargs": 2, "action": "append", "metavar": ("NAME", "PID")},
        ),  # haproxy, caddy or apache: its session leader
        (
            ("--app-body",),
            {"nargs": 2, "action": "append", "metavar": ("SETUP", "FILE")},
        ),  # an app's or other front end's setup's captured body
        (("--h2-body",), {"nargs": 2, "action": "append", "metavar": ("SETUP", "FILE")}),  # an h2 setup's body (curl --http2)
        (("--cell",), {"nargs": 4, "action": "append", "metavar": ("SETUP", "READY", "HEADERS", "ERROR")}),
        (("--tls-probe",), {"nargs": 2, "action": "append", "metavar": ("SETUP", "FILE")}),  # openssl s_client -brief's report
    )
    add(
        "tls-record",
        cmd_tls_record,
        run,
        (("--cert",), {"required": True}),
        (("--openssl",), {"default": None}),  # `openssl version`
        (("--counter",), {"nargs": 2, "action": "append", "metavar": ("SETUP", "KIND")}),  # socket (gohello) or size (nginx's log)
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
        (("--tls-counter",), {}),  # KIND:PATH: where the setup's server counts TLS handshakes (handshake.read_counter)
        (("argv",), {"nargs": argparse.REMAINDER}),
    )
    add(
        "warm-up",
        cmd_warm_up,
        run,
        (("--clients",), {"required": True}),
        (("--stderr",), {"required": True}),
        (("argv",), {"nargs": argparse.REMAINDER}),
    )
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
    add("vegeta-record", cmd_vegeta_record, run, (("--vegeta",), {"required": True}))
    add("rate-plan", cmd_rate_plan, run, n)
    add("capacity-next", cmd_capacity_next, run, n, (("--block",), {"required": True, "type": int}), (("--setups",), {"required": True}))
    add("capacity-check", cmd_capacity_check, run, n, (("--block",), {"required": True, "type": int}), (("--setups",), {"required": True}))
    add("capacity-more", cmd_capacity_more, run, n, (("--setups",), {"required": True}), (("--going",), {"required": True, "type": int}))
    add("rate-pass-start", cmd_rate_pass_start, run, n, (("--block",), {"type": int, "required": True}), (("--rates",), {"required": True}))
    add(
        "measure-rate",
        cmd_measure_rate,
        run,
        n,
        setup,
        (("--block",), {"type": int, "required": True}),
        (("--rate",), {"type": int, "required": True}),
        (("--vegeta",), {"required": True}),
        (("--work-dir",), {"required": True}),
        (("--clients",), {}),  # the state file of clients-preflight: vegeta on every client at once, at its share of the rate
        (("--search-high",), {"type": int}),  # a step of the capacity search: its upper end (capacity-next's HIGH)
        (("--capacity-check",), {"action": "store_true"}),  # the measurement at the capacity found (capacity-check's)
        (("--header",), {"action": "append"}),  # --app-header: sent with every request to an app setup
    )
    add(
        "rate-warm-up",
        cmd_rate_warm_up,
        run,
        setup,
        (("--rate",), {"type": int, "required": True}),
        (("--vegeta",), {"required": True}),
        (("--work-dir",), {"required": True}),
        (("--clients",), {}),
        (("--header",), {"action": "append"}),
    )
    add(
        "clients-vegeta",
        cmd_clients_vegeta,
        (("--state",), {"required": True}),
        (("--plan",), {"required": True}),
        (("--vegeta",), {"required": True}),
    )
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
    server_machine.SESSION.update(control=args.ssh_control, dir=args.target_dir)
    SESSIONS.keep = True  # one agent per remote client for the whole run
    try:
        return serve_commands(args.run)
    finally:
        SESSIONS.close_all()
        server_machine.close_target_shell()


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
        if command[:1] in (["measure"], ["warm-up"], ["measure-rate"], ["rate-warm-up"]) and status >= 128:
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
    except server_machine.TargetLost as exc:  # the link dropped: the script names it in the manifest
        print(f"{PROG}: {args.command}: {exc}", file=sys.stderr)
        return TARGET_LOST
    except UsageError as exc:
        print(f"{PROG}: {exc} (see ./{PROG} --help)", file=sys.stderr)
        return 2
    except (ValueError, KeyError, OSError) as exc:  # a broken template, manifest or file
        print(f"{PROG}: {args.command}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    except (TypeError, AttributeError, IndexError) as exc:  # a manifest edited by hand into the wrong shape
        print(
            f"{PROG}: {args.command}: {getattr(args, 'run', 'the run')}/manifest.json has an unexpected shape ({' '.join(str(exc).split())})",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
