"""The helper's subcommands for --server-host: the target's facts, ports, nginx.conf, liveness and record."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from ...core.errors import UsageError
from ...core.setups import SETUP_BY_ID
from .. import server_machine
from ..manifest import load_manifest, save_manifest
from ..nginx import nginx_conf_dir
from ..profiles import NO
from ..remote import FACTS_SCRIPT, parse_facts

TARGET_LOST = 4  # measure's exit status when the ssh connection to the target is gone


def cmd_facts_script(args) -> int:
    """Print remote.FACTS_SCRIPT, the sh script run_bench.sh runs on another machine over ssh."""
    print(FACTS_SCRIPT)
    return 0


def cmd_target_facts(args) -> int:
    """Print what the driver needs of the target (FACTS_SCRIPT's output in --facts): GOARCH, uid, tool paths, missing tools."""
    plan = json.loads(Path(args.plan).read_text())
    facts = parse_facts(Path(args.facts).read_text(errors="replace"))
    arch, env = server_machine.goarch(facts["arch"])
    needs = {"nginx": "nginx", "node": "node"}
    missing = [
        tool for server, tool in needs.items() if any(server in SETUP_BY_ID[s].needs for s in plan["setups"]) and not facts["paths"][tool]
    ]
    lines = [f"goarch {arch}", f"goenv {' '.join(f'{k}={v}' for k, v in env.items())}".rstrip(), f"uid {facts['uid']}"]
    lines += [f"path.{tool} {facts['paths'][tool]}" for tool in needs if facts["paths"][tool]]
    if missing:
        lines.append(f"missing {' '.join(missing)}")
    print("\n".join(line for line in lines if " " in line))
    return 0


def cmd_target_ports(args) -> int:
    """Print a message per needed port already listened on at the target (its /proc/net/tcp text in --tcp); exit 3 if any."""
    plan = json.loads(Path(args.plan).read_text())
    messages = server_machine.busy_port_lines(Path(args.tcp).read_text(errors="replace"), plan["needed_ports"], plan["server_host"])
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
    shell = server_machine.target_shell(load_manifest(Path(args.run)))
    if shell is None:
        raise UsageError("target-running: this run has no --server-host")
    return 0 if shell.running(args.pids) else NO


def cmd_target_record(args) -> int:
    """Record the target in the manifest (server_host, its nginx -V) and the RTT to it, measured now; print the RTT line."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    facts = parse_facts(Path(args.facts).read_text(errors="replace"))
    ulimit = int(args.ulimit_n) if args.ulimit_n and args.ulimit_n.isdigit() else args.ulimit_n
    manifest["server_host"] = server_machine.server_host_record(
        facts, manifest["parameters"]["server_host"], args.address, ulimit, server_machine.target_tools(manifest["parameters"]["setups"])
    )
    if args.nginx_v_file:
        manifest["nginx_V"] = Path(args.nginx_v_file).read_text(errors="replace")
    if args.variant_nginx_v_file and isinstance(manifest.get("variant"), dict):  # --variant: its nginx is the target's too
        text = Path(args.variant_nginx_v_file).read_text(errors="replace")
        found = re.search(r"nginx version: nginx/(\S+)", text)
        manifest["variant"].update(nginx=args.variant_nginx, nginx_V=text, nginx_version=found.group(1) if found else None)
    try:
        times = server_machine.rtt_samples(args.ssh_address, args.ssh_port)
    except OSError as exc:
        print(
            f"[run_bench] warning: could not time the link to {args.ssh_address}:{args.ssh_port} ({exc}); no RTT recorded", file=sys.stderr
        )
    else:
        rtt = server_machine.rtt_record(times, "local", args.ssh_address)
        manifest.setdefault("network", {}).setdefault("rtt", []).append(rtt)  # the clients' RTT may be there too
        print(
            f"RTT to {args.ssh_address}: median {rtt['median_ms']} ms (min {rtt['min_ms']}, max {rtt['max_ms']}; {rtt['samples']} TCP connects)"
        )
    save_manifest(run_dir, manifest)
    return 0
