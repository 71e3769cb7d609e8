"""Variant: --variant NAME:OPT[,OPT...] -> a second nginx whose twin setups are measured in the same rounds as the originals.

A run compares two nginx builds or configurations best inside itself: the variant's
nginx runs beside the original one, each nginx setup gets a twin (ORIGINAL~NAME, on the
setup's port + VARIANT_PORT_OFFSET, served by the variant's own configuration rendered
from the same template), and the twins are shuffled into the same rounds of the same
blocks as every other setup, so whatever drifts during the run hits both alike and
cancels in twin / original, paired per block (docs/comparing.md).

--app-b is the same machinery for the app's second build: its twins are app~NAME (the B
build alone, on the app's port + VARIANT_PORT_OFFSET) and nginx-app~NAME (the variant's
nginx, with the run's own settings, in front of the B build); the variant then changes no
nginx setting. A run has one A/B: --app-b and --variant are refused together.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..core.display import argument
from ..core.errors import UsageError
from ..core.setups import (
    APP_B_SERVER,
    APP_SETUP_IDS,
    SETUP_BY_ID,
    SETUPS,
    VARIANT_NAME,
    VARIANT_PORT_OFFSET,
    VARIANT_SERVER,
    split_twin,
    twin_id,
)
from .machine import command_output, tool_versions
from .profiles import MAX_PORT
from .values import format_cpu_list, pin_list

ENV_VARIANT = "BENCH_VARIANT"
USAGE = (
    "expected NAME:OPT[,OPT...], NAME a short lowercase word (a-z then a-z or 0-9, at most 16) and each OPT one of "
    "nginx=PATH, no-upstream-keepalive, pin-server=CPUS"
)
OPTIONS = ("nginx", "no-upstream-keepalive", "pin-server")


def variant_options(p: argparse.ArgumentParser) -> None:
    """Add --variant to run_bench.sh's option parser."""
    p.add_argument("--variant")


def parse_variant(text: str, source: str, available: frozenset[int], remote: bool = False) -> dict:
    """Return the variant of a --variant SPEC: {'name', 'options', 'nginx', 'upstream_keepalive', 'pin_server'} (None: as the run).

    'nokeep:no-upstream-keepalive' -> name 'nokeep', upstream_keepalive False;
    'new:nginx=/opt/nginx/sbin/nginx,pin-server=1' -> that binary (an executable file,
    made absolute), its nginx pinned to CPU 1. Anything else is a UsageError naming it.
    With --server-host (remote) nginx=PATH names a binary on the target, checked there
    (variant.sh), so it must be absolute; pin-server names this machine's CPUs and is refused,
    as --pin-server is.
    """

    def bad(reason: str) -> UsageError:
        return UsageError(f"{source} {argument(text)}: {reason}; {USAGE}")

    name, sep, rest = text.strip().partition(":")
    if not sep or not VARIANT_NAME.fullmatch(name):
        raise bad("no variant name" if not sep else f"bad name {argument(name)}")
    variant: dict = {"name": name, "options": [], "nginx": None, "upstream_keepalive": None, "pin_server": None}
    items = [item.strip() for item in rest.split(",")]
    if not rest.strip() or not all(items):
        raise bad("an empty option")
    for item in items:
        key, has_value, value = item.partition("=")
        if key not in OPTIONS or bool(has_value) != (key != "no-upstream-keepalive"):
            raise bad(f"unknown option {argument(item)}")
        if any(option.partition("=")[0] == key for option in variant["options"]):
            raise bad(f"{key} given twice")
        if key == "nginx":
            variant["nginx"] = target_path(value, bad) if remote else executable(value, bad)
            variant["options"].append(f"nginx={variant['nginx']}")
        elif key == "pin-server":
            if remote:
                raise bad("pin-server names this machine's CPUs; it cannot pin the variant's nginx on --server-host")
            try:
                cpus = pin_list(value, f"{source} pin-server", available)
            except UsageError as exc:
                raise bad("pin-server=" + str(exc).removeprefix(f"{source} pin-server ")) from None
            if not cpus:
                raise bad("pin-server needs a CPU list")
            variant["pin_server"] = format_cpu_list(cpus)
            variant["options"].append(f"pin-server={variant['pin_server']}")
        else:
            variant["upstream_keepalive"] = False
            variant["options"].append(key)
    return variant


def executable(value: str, bad) -> str:
    """Return the absolute path of an nginx binary named by nginx=PATH; refuse one that is not an executable regular file."""
    if not value or any(ord(c) < 32 or c == "\x7f" for c in value):
        raise bad("nginx= needs the path of an nginx binary")
    path = Path(os.path.abspath(os.path.expanduser(value)))
    if not path.is_file() or not os.access(path, os.X_OK):
        raise bad(f"nginx={argument(value)} is not an executable file")
    return str(path)


def target_path(value: str, bad) -> str:
    """Return nginx=PATH as the path of a binary on the --server-host: absolute, printable; whether it runs is checked there."""
    if not value or any(ord(c) < 32 or c == "\x7f" for c in value) or not value.startswith("/"):
        raise bad("with --server-host, nginx= needs the absolute path of an nginx binary on that host")
    return os.path.normpath(value)


def variant_plan(args: argparse.Namespace, env: dict[str, str], plan: dict, available: frozenset[int]) -> dict:
    """Return the plan's variant part: {'variant': None} without --variant, else the variant, its twins among the setups and their ports.

    Each nginx setup (and its new-connection siblings) is followed by its twin in
    plan['setups']; each nginx server's port + VARIANT_PORT_OFFSET is the twin's, which
    check-ports then finds free or not like the others.
    """
    text, source = (args.variant, "--variant") if args.variant is not None else (env.get(ENV_VARIANT), ENV_VARIANT)
    app_b = (plan.get("app") or {}).get("b")
    if text is None or (source == ENV_VARIANT and not text.strip()):
        return app_b_variant(app_b, plan) if app_b else {"variant": None}
    if app_b:
        raise UsageError(
            f"--app-b and {source} do not go together: each is the run's one A/B (twins paired with their originals in the "
            "same rounds); measure the nginx variant and your app's second build in two runs"
        )
    variant = parse_variant(text, source, available, remote=plan.get("server_host") is not None)
    originals = [s for s in plan["setups"] if SETUP_BY_ID[s].server == "nginx"]
    if not originals:
        raise UsageError(f"{source} {argument(text)}: the run has no nginx setup to measure a variant of (--setups)")
    if not differs(variant, plan):
        raise UsageError(f"{source} {argument(text)}: the variant is the run's own nginx with its own settings; nothing would differ")
    return with_twins(variant, originals, plan, source)


def app_b_variant(app_b: dict, plan: dict) -> dict:
    """Return the plan's variant part for --app-b: a variant changing no nginx setting, whose twins are the app setups' (app~NAME, nginx-app~NAME)."""
    variant = {"name": app_b["name"], "options": [], "nginx": None, "upstream_keepalive": None, "pin_server": None, "app_b": True}
    originals = [s for s in plan["setups"] if s in APP_SETUP_IDS]
    if not originals:
        raise UsageError("--app-b: the run has no app setup to measure your app's second build in (--setups)")
    return with_twins(variant, originals, plan, "--app-b")


def with_twins(variant: dict, originals: list[str], plan: dict, source: str) -> dict:
    """Return {'variant', 'setups', 'ports'}: each original followed by its twin, each twin's port its original's + VARIANT_PORT_OFFSET."""
    setups = []
    for setup in plan["setups"]:
        setups.append(setup)
        if setup in originals:
            setups.append(twin_id(setup, variant["name"]))
    ports = dict(plan["ports"])
    for setup in dict.fromkeys(SETUP_BY_ID[s].served_by for s in originals):
        port = ports[setup] + VARIANT_PORT_OFFSET
        if port > MAX_PORT:
            raise UsageError(
                f"{source}: {setup}'s port {ports[setup]} + {VARIANT_PORT_OFFSET} for its twin is above {MAX_PORT}; choose a lower --port"
            )
        ports[twin_id(setup, variant["name"])] = port
    return {"variant": variant, "setups": setups, "ports": ports}


def run_needs(setup: str, plan: dict) -> tuple[str, ...]:
    """Return the processes a setup of this run needs: its row's, except that with --app-b an nginx twin's app is the B build."""
    needs = SETUP_BY_ID[setup].needs
    if (plan.get("variant") or {}).get("app_b") and split_twin(setup)[1]:
        return tuple(APP_B_SERVER if need == "app" else need for need in needs)
    return needs


def differs(variant: dict, plan: dict) -> bool:
    """Return True when the variant changes something: another binary, keep-alive off where the run has it on, or other CPUs."""
    keepalive = variant["upstream_keepalive"] is False and plan["upstream_keepalive"]
    return bool(variant["nginx"]) or keepalive or (variant["pin_server"] is not None and variant["pin_server"] != plan["pin_server"])


def variant_lines(plan: dict) -> list[str]:
    """Return the plan's variant lines for the script (none without --variant)."""
    variant = plan.get("variant")
    if not variant:
        return []
    lines = [f"variant_name {variant['name']}"]
    if variant["nginx"]:
        lines.append(f"variant_nginx {variant['nginx']}")
    pin = variant["pin_server"] or plan.get("pin_server")
    if pin:
        lines.append(f"variant_pin_server {pin}")
    return lines


def variant_record(plan: dict, nginx: str | None) -> dict | None:
    """Return the manifest's `variant`: its name, options, the settings it runs with and its nginx's binary, version and `nginx -V`."""
    variant = plan.get("variant")
    if not variant:
        return None
    binary = variant["nginx"] or nginx
    if plan.get("server_host") is not None:  # the target's binary: target-record fills its version and -V from there
        binary = variant["nginx"]
    versions, _ = tool_versions(binary) if plan.get("server_host") is None else ({}, {})
    keepalive = plan["upstream_keepalive"] if variant["upstream_keepalive"] is None else variant["upstream_keepalive"]
    return {
        "name": variant["name"],
        "options": list(variant["options"]),
        "nginx": binary,
        "nginx_version": versions.get("nginx"),
        "nginx_V": command_output([binary, "-V"]) if binary and plan.get("server_host") is None else None,
        "upstream_keepalive": keepalive,
        "pin_server": variant["pin_server"] or plan.get("pin_server"),
        "port_offset": VARIANT_PORT_OFFSET,
        "setups": {
            original: twin_id(original, variant["name"])
            for original in plan["setups"]
            if twin_id(original, variant["name"]) in plan["setups"]
        },
        **({"app_b": True} if variant.get("app_b") else {}),
    }


def variant_nginx_values(values: dict[str, str], parameters: dict, name: str) -> dict[str, str]:
    """Return the template values of the variant's nginx.conf: the run's, with each nginx server's port replaced by its twin's."""
    found = dict(values)
    for setup in SETUPS:
        twin = twin_id(setup.id, name)
        if twin in parameters["ports"]:
            found["port_" + setup.id.replace("-", "_")] = str(parameters["ports"][twin])
    return found


__all__ = [
    "ENV_VARIANT",
    "VARIANT_SERVER",
    "parse_variant",
    "run_needs",
    "variant_lines",
    "variant_nginx_values",
    "variant_options",
    "variant_plan",
    "variant_record",
]
