"""Plan: run_bench.sh's options + environment + profile -> the validated parameters of a run."""

from __future__ import annotations

import argparse
import os
import secrets
from pathlib import Path

from ..core.display import argument
from ..core.errors import UsageError
from ..core.sequential import DEFAULT_LAST_LOOK, FIRST_LOOK, PRECISION_LAST_LOOK
from ..core.setups import FRONT_END_NAMES, SERVERS, SETUP_BY_ID
from .app_options import app_combinations, app_lines, app_options, app_plan, app_setup_list
from .front_ends import CONFIG_FILES, front_ends_of
from .h2_options import h2_lines, h2_options, h2_plan
from .hosts import LOCAL, check_combinations, hosts_plan, url_host
from .option_values import connections_levels, given_or_env, gomaxprocs_list, load_generator, needed_ports, port_map, safe_out, setup_list
from .profiles import (
    AB_MAX_CONCURRENCY,
    AB_MAX_REQUESTS_PER_S,
    DEFAULT_MAX_TIME_FACTOR,
    ENV_BODY_BYTES,
    ENV_HANDLER_DELAY,
    ENV_MAX_TIME,
    ENV_OUT,
    ENV_PIN_CLIENT,
    ENV_PIN_SERVER,
    ENV_PRECISION,
    ENV_PROFILE,
    ENV_READY_TIMEOUT,
    ENV_SEED,
    ENV_SETUPS,
    ENV_UPSTREAM_KEEPALIVE,
    HELLO_LINE,
    MAX_BODY_BYTES,
    MAX_READY_TIMEOUT_S,
    MAX_REPEATS,
    MAX_SEED,
    MEASUREMENT_OVERHEAD_S,
    PARAMS,
    PASS_OVERHEAD_S,
    PROFILES,
    PROG,
    RAW_SUFFIX,
    READY_TIMEOUT_S,
    VERDICT_BLOCKS_EXPECTED,
    VERDICT_PRECISION_PCT,
    expect_header_bytes,
    url_for,
)
from .rate_options import rate_lines, rate_options, rate_plan, time_plan
from .stopping_plan import VERDICT, interval_plan, rule_of, stopping_lines, verdict_seconds
from .tls_options import tls_options, tls_plan
from .values import format_cpu_list, format_duration, parse_duration_ns, parse_int, parse_max_time, parse_percent, parse_switch, pin_list
from .variant import run_needs, variant_lines, variant_options, variant_plan


def plan_parser() -> argparse.ArgumentParser:
    """Return the parser of run_bench.sh's options (the script's --help documents them)."""
    p = argparse.ArgumentParser(prog=PROG, add_help=False)
    p.add_argument("--profile", choices=sorted(PROFILES))
    p.add_argument("--quick", action="store_true")
    for param in PARAMS:
        p.add_argument(param.option, dest=param.key)
    p.add_argument("--gomaxprocs")
    p.add_argument("--setups")
    p.add_argument("--port", action="append", default=[])
    p.add_argument("--out")
    p.add_argument("--seed")
    p.add_argument("--ready-timeout")
    p.add_argument("--tune", action="store_true")
    p.add_argument("--pin-client")
    p.add_argument("--pin-server")
    p.add_argument("--no-upstream-keepalive", action="store_true")
    p.add_argument("--handler-delay")
    p.add_argument("--body-bytes")
    p.add_argument("--precision")
    p.add_argument("--max-time")
    p.add_argument("--load-generator")
    p.add_argument("--server-host")
    p.add_argument("--server-address")
    p.add_argument("--client-hosts")
    p.add_argument("--ssh-config")
    tls_options(p)
    h2_options(p)
    rate_options(p)
    variant_options(p)
    app_options(p)
    return p


def build_plan(argv: list[str], env: dict[str, str], root: Path, nproc: int, euid: int, cpus: frozenset[int] | None = None) -> dict:
    """Return the run's parameters from options (first), environment, then profile.

    cpus: the CPUs pinning may name (default: 0 .. nproc-1).
    """
    args = parse_options(argv)
    if args.quick and args.profile not in (None, "quick"):
        raise UsageError(f"--quick and --profile {args.profile} contradict each other")
    profile = "quick" if args.quick else args.profile or env.get(ENV_PROFILE) or "default"
    if profile not in PROFILES:
        raise UsageError(f"{ENV_PROFILE}={argument(profile)}: choose one of {', '.join(PROFILES)}")
    plan: dict = {"profile": profile, "warnings": []}
    given = set()
    for param in PARAMS:
        text, source = given_or_env(getattr(args, param.key), param.option, env, param.env)
        if text is not None:
            given.add(param.key)
        if text is None:
            plan[param.key] = PROFILES[profile][param.key]
        elif param.key == "connections":
            plan["connections_levels"] = connections_levels(text, source)
        else:
            plan[param.key] = parse_int(text, source, param.minimum, param.seconds, param.maximum)
    plan["load_generator"] = load_generator(args.load_generator, env)
    if plan["load_generator"] == "ab":
        if "threads" in given:
            plan["warnings"].append(f"--load-generator ab runs one thread: --threads {plan['threads']} is not used")
        plan["threads"] = 1  # ab is single-threaded: recorded as 1 thread, so the client-saturation warning sees one
    levels = plan.setdefault("connections_levels", [plan.get("connections")])
    # One level: the int, as before the sweep; several: no single value.
    plan["connections"] = levels[0] if len(levels) == 1 else None
    if plan["load_generator"] == "ab" and max(levels) > AB_MAX_CONCURRENCY:
        raise UsageError(f"--load-generator ab takes at most {AB_MAX_CONCURRENCY} connections (ab -c), not {max(levels)}")
    if min(levels) < plan["threads"]:
        raise UsageError(f"connections ({min(levels)}) must be >= threads ({plan['threads']}), as wrk requires")
    plan.update(design(plan, given, args, env))
    plan["gomaxprocs"] = gomaxprocs_list(args.gomaxprocs, env, nproc)
    plan["setups"] = setup_list(args.setups, env)
    plan.update(h2_plan(args, env, plan))  # h2load for the h2 setups (wrk and ab speak no HTTP/2), --streams
    plan.update(app_plan(args, env))  # --app: its setups by default, refused without it
    plan["setups"] = app_setup_list(plan["setups"], args.setups is not None or ENV_SETUPS in env, plan["app"])
    plan["ports"] = port_map(args.port, env, plan["setups"])
    plan.update(hosts_plan(args, env))
    plan.update(knobs(args, env))
    plan.update(tls_plan(args, env, plan))
    plan["expect_header_bytes"] = expect_header_bytes(plan["body_bytes"])
    available = cpus if cpus is not None else frozenset(range(nproc))
    pinned = {}
    for key, option, name in (("pin_client", "--pin-client", ENV_PIN_CLIENT), ("pin_server", "--pin-server", ENV_PIN_SERVER)):
        text, source = given_or_env(getattr(args, key), option, env, name)
        pinned[key] = pin_list(text, source, available)
        plan[key] = format_cpu_list(pinned[key]) or None  # normalised: '1,0' -> '0-1'
    shared = set(pinned["pin_client"]) & set(pinned["pin_server"])
    if shared:
        plan["warnings"].append(
            f"--pin-client {plan['pin_client']} and --pin-server {plan['pin_server']} share CPU "
            f"{format_cpu_list(sorted(shared))}: wrk and the servers compete there"
        )
    plan.update(variant_plan(args, env, plan, available))  # its twins among the setups, their ports
    plan["needed_ports"] = needed_ports(plan["setups"], plan["ports"])
    plan["urls"] = setup_urls(plan)
    plan["seed"] = parse_int(args.seed or env.get(ENV_SEED) or str(secrets.randbits(32)), "--seed", 0, maximum=MAX_SEED)
    text, source = given_or_env(args.ready_timeout, "--ready-timeout", env, ENV_READY_TIMEOUT)
    plan["ready_timeout_s"] = parse_int(text, source, 1, seconds=True, maximum=MAX_READY_TIMEOUT_S) if text is not None else READY_TIMEOUT_S
    if args.tune and euid != 0:
        raise UsageError("--tune writes kernel settings (sysctl) and needs root")
    plan["tune"] = bool(args.tune)
    check_combinations(plan)
    app_combinations(plan)
    out, source = given_or_env(args.out, "--out", env, ENV_OUT)
    plan["out"] = safe_out(os.path.abspath(out or str(root / "raw")), source if out else "--out (default)")
    plan["intervals"] = interval_plan(plan)
    plan["measurements"] = measurement_count(plan)
    plan.update(rate_plan(args, env, plan))
    throughput = (
        verdict_seconds(plan) if rule_of(plan) == VERDICT else estimate_seconds(plan, 0, len(plan["gomaxprocs"]) * block_count(plan))
    )
    plan.update(time_plan(plan, round(throughput)))
    # wrk holds one descriptor per connection; nginx one towards the client and one towards
    # Go; the Go server one per connection it serves. Plus room for logs, listeners, epoll.
    plan["needed_fds"] = 2 * max(levels) + 256
    return plan


def setup_urls(plan: dict) -> dict[str, str]:
    """Return each setup's URL: its server's port (a new-connection setup's is its server's) on 127.0.0.1, or on --server-address; an app setup's with --app-path."""
    port_of = {s: plan["ports"][SETUP_BY_ID[s].served_by] for s in plan["setups"]}
    path_of = {s: plan["app"]["path"][1:] if SETUP_BY_ID[s].app else "" for s in plan["setups"]}
    if plan["server_address"] is None:  # without it (and with --server-host) the driver asks the target, then plans again
        return {s: url_for(port_of[s], SETUP_BY_ID[s].tls) + path_of[s] for s in plan["setups"]}
    return {
        s: f"{'https' if SETUP_BY_ID[s].tls else 'http'}://{url_host(plan['server_address'])}:{port_of[s]}/{path_of[s]}"
        for s in plan["setups"]
    }


def design(plan: dict, given: set[str], args: argparse.Namespace, env: dict[str, str]) -> dict:
    """Return the block design: repeats (rounds per cell in all; None with the stopping rule), blocks, rounds_per_block, adaptive, min_blocks, precision_pct, max_time_s.

    --blocks N fixes the blocks (N x --rounds-per-block rounds); --repeats N the rounds in
    all (in blocks of --rounds-per-block, the last one shorter when they do not divide);
    neither: the profile's blocks, or, for the default profile, the stopping rule (stopping_plan.interval_plan).
    """
    if {"blocks", "repeats"} <= given:
        raise UsageError("give --blocks or --repeats, not both (--repeats N: N rounds in all, in blocks of --rounds-per-block)")
    rounds = plan["rounds_per_block"]
    blocks, repeats = plan["blocks"], plan["repeats"]
    if "repeats" in given:
        blocks = -(-repeats // rounds)
    elif blocks is not None:
        repeats = blocks * rounds
    if repeats is not None and repeats > MAX_REPEATS:
        raise UsageError(f"--blocks x --rounds-per-block must be at most {MAX_REPEATS} rounds, not {repeats}")
    text, source = given_or_env(args.precision, "--precision", env, ENV_PRECISION)
    precision_given, precision = text is not None, (VERDICT_PRECISION_PCT if text is None else parse_percent(text, source))
    text, source = given_or_env(args.max_time, "--max-time", env, ENV_MAX_TIME)
    max_time = None if text is None else parse_max_time(text, source)  # None: the plan's own (default_max_time)
    if blocks is not None and (args.precision is not None or args.max_time is not None):
        plan["warnings"].append(
            f"--precision and --max-time steer the stopping rule, which a fixed design ({blocks} block(s) per GOMAXPROCS) does not use"
        )
    return {
        "smoke_test": plan["profile"] == "quick" and repeats == 1,  # one measurement per cell: no interval claims
        "repeats": repeats,
        "blocks": blocks,
        "adaptive": blocks is None,
        "min_blocks": FIRST_LOOK if blocks is None else blocks,
        "max_blocks": (PRECISION_LAST_LOOK if precision_given else DEFAULT_LAST_LOOK) if blocks is None else blocks,
        "precision_pct": precision,
        "precision_given": precision_given,
        "max_time_s": max_time if blocks is None else None,
        "max_time_given": text is not None,
    }


def knobs(args: argparse.Namespace, env: dict[str, str]) -> dict:
    """Return upstream_keepalive, handler_delay_ns, handler_delay_ms and body_bytes."""
    if args.no_upstream_keepalive:
        keepalive = False
    else:
        text = env.get(ENV_UPSTREAM_KEEPALIVE)
        keepalive = True if text is None else parse_switch(text, ENV_UPSTREAM_KEEPALIVE)
    text, source = given_or_env(args.handler_delay, "--handler-delay", env, ENV_HANDLER_DELAY)
    delay_ns = 0 if text is None else parse_duration_ns(text, source)
    text, source = given_or_env(args.body_bytes, "--body-bytes", env, ENV_BODY_BYTES)
    body_bytes = len(HELLO_LINE) if text is None else parse_int(text, source, 1)
    if body_bytes > MAX_BODY_BYTES:
        raise UsageError(f"{source} must be at most {MAX_BODY_BYTES} (1 MiB), not {body_bytes}")
    return {
        "upstream_keepalive": keepalive,
        "handler_delay_ns": delay_ns,
        "handler_delay_ms": delay_ns // 10**6 if delay_ns % 10**6 == 0 else delay_ns / 10**6,
        "body_bytes": body_bytes,
    }


def planned_rounds(parameters: dict) -> int:
    """Return the rounds per cell the run plans: its repeats, or the stopping rule's expected blocks (verdict) or least (precision) times their rounds."""
    if parameters.get("repeats") is not None:
        return parameters["repeats"]
    verdict = rule_of(parameters) == VERDICT
    return (max(parameters["min_blocks"], VERDICT_BLOCKS_EXPECTED) if verdict else parameters["min_blocks"]) * parameters[
        "rounds_per_block"
    ]


def block_count(parameters: dict) -> int:
    """Return the blocks per GOMAXPROCS the run plans (with the stopping rule: the minimum)."""
    return -(-planned_rounds(parameters) // parameters.get("rounds_per_block", planned_rounds(parameters)))


def measurement_count(parameters: dict) -> int:
    """Return how many measurements a run makes (at least, with the stopping rule): GOMAXPROCS x levels x setups x rounds."""
    return len(parameters["gomaxprocs"]) * len(parameters["connections_levels"]) * len(parameters["setups"]) * planned_rounds(parameters)


def parse_options(argv: list[str]) -> argparse.Namespace:
    """Parse the options, turning argparse's complaints into UsageError."""
    parser = plan_parser()
    parser.error = lambda message: (_ for _ in ()).throw(UsageError(message))  # type: ignore[method-assign]
    args, extra = parser.parse_known_args(attach_values(argv, parser))
    if extra:
        raise UsageError(f"unknown option or argument {argument(extra[0])}")
    return args


def attach_values(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """Join each value option with the word after it unless that is an option: ['--handler-delay', '-1ms'] -> ['--handler-delay=-1ms'].

    Without this argparse takes '-1ms' for an unknown option, and the value's own check
    (with its clear message) never sees it.
    """
    options = {o for action in parser._actions for o in action.option_strings}
    takes_value = {o for action in parser._actions if action.nargs is None for o in action.option_strings}
    joined, i = [], 0
    while i < len(argv):
        if argv[i] in takes_value and i + 1 < len(argv) and argv[i + 1] not in options:
            joined.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            joined.append(argv[i])
            i += 1
    return joined


def estimate_seconds(parameters: dict, measurements_done: int, passes_left: int, levels_left: int = 0) -> float:
    """Return the expected time left: remaining measurements, plus the warm-ups not started.

    Warm-ups come before each connection level of a block (a pass): those of the
    passes_left blocks not started, and of the levels_left levels still to come in the
    current one.
    """
    per_measurement = parameters["duration_s"] + MEASUREMENT_OVERHEAD_S
    per_level = len(parameters["setups"]) * (parameters["warmup_s"] + MEASUREMENT_OVERHEAD_S)
    per_pass = PASS_OVERHEAD_S + len(parameters["connections_levels"]) * per_level
    return (measurement_count(parameters) - measurements_done) * per_measurement + passes_left * per_pass + levels_left * per_level


def plan_lines(plan: dict) -> list[str]:
    """Return the plan as `key value` lines for the script (lists space-separated; unset keys left out)."""
    lines = []
    keys = (
        "profile",
        "threads",
        "duration_s",
        "repeats",
        "warmup_s",
        "wrk_timeout_s",
        "seed",
        "measurements",
        "needed_fds",
        "body_bytes",
        "ready_timeout_s",
    )
    for key in keys:
        lines.append(f"{key} {plan[key] if plan[key] is not None else 0}")
    lines.append(f"load_generator {plan['load_generator']}")
    lines.append(f"raw_suffix {RAW_SUFFIX[plan['load_generator']]}")
    lines.append(f"ab_requests_per_s {AB_MAX_REQUESTS_PER_S}")  # ab -n per second of -t: the time limit always comes first
    lines.append(f"rounds_per_block {plan['rounds_per_block']}")
    lines.append(f"blocks {plan['blocks'] or 0}")  # 0: until the precision target (adaptive)
    lines.append(f"adaptive {int(plan['adaptive'])}")
    lines.append(f"smoke_test {int(plan['smoke_test'])}")
    lines.append(f"min_blocks {plan['min_blocks']}")
    lines.append(f"max_blocks {plan['max_blocks']}")
    lines.append(f"precision_pct {plan['precision_pct']:g}")
    if plan["max_time_s"] is not None:
        lines.append(f"max_time_s {plan['max_time_s']}")
        lines.append(f"max_time {format_duration(plan['max_time_s'])}")
    lines.append(f"connections {' '.join(map(str, plan['connections_levels']))}")
    lines.append(f"connections_max {max(plan['connections_levels'])}")
    lines.append(f"sweep {int(len(plan['connections_levels']) > 1)}")
    lines.append(f"tune {int(plan['tune'])}")
    lines.append(f"handler_delay {plan['handler_delay_ns']}ns")
    lines.append(f"gomaxprocs {' '.join(map(str, plan['gomaxprocs']))}")
    lines.append(f"setups {' '.join(plan['setups'])}")
    for server in SERVERS:  # the processes a pass starts: those a chosen setup needs
        chosen = [s for s in plan["setups"] if server in run_needs(s, plan)]
        if chosen:
            lines.append(f"{server}_setups {' '.join(chosen)}")
    fronts = front_ends_of(plan["setups"])
    if fronts:  # HAProxy, Caddy, Apache httpd: each one's first setup (its readiness URL), name in messages and configuration file
        lines.append(f"front_ends {' '.join(fronts)}")
        for front in fronts:
            lines.append(f"first_setup.{front} {next(s for s in plan['setups'] if SETUP_BY_ID[s].server == front)}")
            lines += [f"front_end_name.{front} {FRONT_END_NAMES[front]}", f"front_end_config.{front} {CONFIG_FILES[front]}"]
    for setup in plan["setups"]:
        lines.append(f"server.{setup} {SETUP_BY_ID[setup].server}")
        lines.append(f"needs.{setup} {' '.join(run_needs(setup, plan))}")
        lines.append(f"serves.{setup} {SETUP_BY_ID[setup].served_by}")
        lines.append(f"new_connection.{setup} {int(SETUP_BY_ID[setup].new_connection)}")
    for key in ("pin_client", "pin_server"):
        if plan[key]:
            lines.append(f"{key} {plan[key]}")
    lines.append(f"connection_per_request {int(plan['connection_per_request'])}")
    tls = [s for s in plan["setups"] if SETUP_BY_ID[s].tls]
    lines.append(f"tls {int(bool(tls))}")
    if tls:
        lines.append(f"tls_setups {' '.join(tls)}")
        lines.append(f"tls_key {plan['tls_key']}")
        lines.append(f"tls_key_args {' '.join(plan['tls_key_args'])}")
        lines.append(f"tls_version {plan['tls_version']}")
        lines.append(f"tls_resumption {int(plan['tls_resumption'])}")
    lines += [f"port.{name} {port}" for name, port in plan["ports"].items()]
    lines += [f"url.{name} {url}" for name, url in plan["urls"].items()]
    remote = plan["server_host"] is not None or any(h != LOCAL for h in plan["client_hosts"] or ())
    lines.append(f"remote {int(remote)}")  # 1: some process runs over ssh
    for key in ("server_host", "server_address", "ssh_config"):
        if plan[key] is not None:
            lines.append(f"{key} {plan[key]}")
    if plan["client_hosts"]:
        lines.append(f"client_hosts {' '.join(plan['client_hosts'])}")
    lines += h2_lines(plan)
    lines += rate_lines(plan)
    lines += variant_lines(plan)
    lines += app_lines(plan)
    lines.append(f"estimate {format_duration(plan['estimate_s'])}")
    lines.append(f"targets {format_duration(plan['targets_s'])}")
    lines.append(f"max_time_note {'given' if plan['max_time_given'] else f'the default: {DEFAULT_MAX_TIME_FACTOR:g} x that'}")
    lines += stopping_lines(plan)
    lines.append(f"rate_blocks_expected {plan['rate_blocks_expected']}")
    lines.append(f"out {plan['out']}")
    return lines
