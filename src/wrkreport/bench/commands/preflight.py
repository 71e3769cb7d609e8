"""The helper's subcommands before the first block: the plan, ports, nginx's modules, reachability, --tune, the run directory, nginx.conf."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ...core.cpus import usable_cpus
from ...core.errors import UsageError
from ...core.setups import split_twin
from ..front_ends import CONFIG_FILES, render_front_ends
from ..machine import apply_tune, command_output, read_sysctl, untraversable, user_ids
from ..manifest import create_run_dir, load_manifest, new_manifest, out_problem, point_latest, save_manifest, write_json_atomic
from ..nginx import nginx_conf_dir, nginx_flags, nginx_missing_modules, nginx_sections, nginx_values, render_template
from ..parameters import build_plan, plan_lines
from ..ports import busy_port_messages
from ..profiles import NO
from ..values import utc_now
from ..variant import variant_nginx_values


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
    twins = getattr(args, "variant", False)  # --variant: the variant's nginx=PATH, for the twins; else the run's, for the originals
    problems = nginx_missing_modules(nginx_V, [s for s in plan["setups"] if (split_twin(s)[1] is not None) == twins])
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
        print(
            f"nginx workers (user {args.user}) cannot reach {args.path}: {blocked} is not searchable; set TMPDIR to a directory they can traverse, e.g. /tmp"
        )
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
    app_version = (
        Path(args.app_version_output).read_text(errors="replace") if args.app_version_output else None
    )  # --app-version, run on the target
    manifest = new_manifest(run_dir.name, started, args.command_line, plan, args.nginx or None, args.ulimit_n, app_version)
    save_manifest(run_dir, manifest)
    warning = point_latest(out, run_dir)
    if warning:
        print(f"[run_bench] warning: {warning}", file=sys.stderr)
    print(run_dir)
    return 0


def cmd_render_front_ends(args) -> int:
    """Render the configuration of each front end in nginx's place the run needs (HAProxy, Caddy, Apache httpd) into the run
    directory; record their files in the manifest (front_ends) and print each front end's name."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    fronts = render_front_ends(
        manifest, run_dir, args.work, args.socket, args.cpus or len(usable_cpus()), args.rlimit, args.user, args.group
    )
    manifest["front_ends"] = {front: {"config": CONFIG_FILES[front]} for front in fronts}
    save_manifest(run_dir, manifest)
    print("\n".join(fronts))
    return 0


def cmd_render_nginx(args) -> int:
    """Render the nginx configuration of this run to --out."""
    manifest = load_manifest(Path(args.run))
    values = nginx_values(
        manifest, args.prefix, args.socket, args.user, args.group, args.rlimit, args.http_socket, args.listen_address, args.fastcgi_params
    )
    flags = nginx_flags(manifest)
    if args.variant:  # the same template and sections, the twins' ports, the variant's settings
        variant = manifest.get("variant")
        if not variant:
            raise UsageError("render-nginx --variant: this run has no variant")
        values = variant_nginx_values(values, manifest["parameters"], variant["name"])
        flags["upstream_keepalive"] = bool(variant["upstream_keepalive"])
    originals = [s for s in manifest["parameters"]["setups"] if split_twin(s)[1] is None]
    text = render_template(Path(args.template).read_text(), nginx_sections(originals), values, flags)
    Path(args.out).write_text(text)
    return 0
