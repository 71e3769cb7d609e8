"""Schema: the type and range of every value read from manifest.json and <stem>.cpu.json.

A run directory is untrusted input (docs/pitfalls.md, "What a run directory may contain"), so its
JSON is checked here, at the edge, against one table per file: a value of the wrong type,
not finite (NaN, Infinity, 1e999, an integer of thousands of digits) or out of range is
left out with a reason naming the field, and later steps never see it. CPU lists
(`taskset -c` syntax) are bounded before anything expands them.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from ..core.display import show
from ..core.setups import SETUP_NAME, VARIANT_NAME
from .rawfile import name_problem

CLIENT_LABEL = re.compile(r"client-[1-9][0-9]{0,3}")  # as runs/client_outputs.py and runs.sidecars.WRK_FILE name them
CPU_LIST = re.compile(r"[0-9]{1,10}(?:-[0-9]{1,10})?(?:,[0-9]{1,10}(?:-[0-9]{1,10})?)*")
MAX_CPU = 65535  # above Linux's largest NR_CPUS (8192)
MAX_INT = 2**63 - 1
MAX_DIGITS = 30  # longer JSON integers are read as infinite, then left out (Python refuses > 4,300)
MAX_DEPTH = 32  # nesting deeper than this is left out (the driver writes 5 levels)
MAX_SECONDS = 1e7  # ~115 days: longer than any run
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
NOT_A_FILE_NAME = "is not a plain file name in the run"  # a kind "file" value's reason (rawfile.name_problem)
SLO_PERCENTILES = (50, 90, 99, 99.9)  # an objective's percentiles (--slo): core.capacity.PERCENTILES, checked equal by its tests


@dataclass(frozen=True)
class Spec:
    """What one field may hold: a kind, an inclusive range for numbers, a pattern for keys or text."""

    kind: str  # int | number | positive | percentile | str | bool | list | dict | cpus | setup | variant | client | scalar | file
    low: float | None = None
    high: float | None = None
    required: bool = False

    def problem(self, value) -> str | None:
        """Return why value does not fit (None when it does; null fits every optional field)."""
        if value is None:
            return "missing (null)" if self.required else None
        expected = KIND_WORDS[self.kind]
        if not fits_kind(self.kind, value):
            return f"expected {expected}, found {show(value)}"
        if self.kind == "cpus":
            return cpu_list_problem(value)
        if self.kind == "file":
            reason = name_problem(value)
            return f"{show(value)} {NOT_A_FILE_NAME}: {reason}" if reason else None
        if self.low is not None and value < self.low or self.high is not None and value > self.high:
            span = f"from {self.low:g} to {self.high:g}" if self.low is not None else f"up to {self.high:g}"
            return f"expected {expected} {span}, found {show(value)}"
        return None


KIND_WORDS = {
    "int": "an integer",
    "number": "a number",
    "positive": "a number above 0",
    "percentile": "one of " + ", ".join(f"{p:g}" for p in SLO_PERCENTILES),
    "str": "a string",
    "bool": "true or false",
    "list": "a list",
    "dict": "an object",
    "cpus": "a CPU list such as '0-3,6'",
    "setup": "a setup name (letters, digits, '-' and '_', a twin's ~name after it)",
    "variant": "a variant name (a lowercase word of at most 16 letters and digits)",
    "scalar": "a string, number or true/false",
    "client": "a client label (client-1, client-2, ...)",
    "file": "a file name",
}


def fits_kind(kind: str, value) -> bool:
    """Return True when value has the JSON type kind names."""
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "positive":
        return fits_kind("number", value) and value > 0
    if kind == "percentile":
        return fits_kind("number", value) and value in SLO_PERCENTILES
    if kind in ("str", "cpus", "file"):
        return isinstance(value, str)
    if kind == "setup":
        return isinstance(value, str) and SETUP_NAME.fullmatch(value) is not None
    if kind == "variant":
        return isinstance(value, str) and VARIANT_NAME.fullmatch(value) is not None
    if kind == "client":
        return isinstance(value, str) and CLIENT_LABEL.fullmatch(value) is not None
    if kind == "scalar":
        return isinstance(value, (str, int, float, bool))
    return isinstance(value, {"bool": bool, "list": list, "dict": dict}[kind])


def cpu_list_problem(text: str) -> str | None:
    """Return why text is not a bounded taskset CPU list, without expanding it.

    >>> cpu_list_problem("0-3,6") is None
    True
    >>> cpu_list_problem("0-100000000")
    "CPU list '0-100000000' names CPUs above 65535"
    >>> cpu_list_problem("abc")
    "expected a CPU list such as '0-3,6', found 'abc'"
    """
    if len(text) > 1000 or not CPU_LIST.fullmatch(text):
        return f"expected {KIND_WORDS['cpus']}, found {show(text)}"
    for part in text.split(","):
        low, _, high = part.partition("-")
        if max(int(low), int(high or low)) > MAX_CPU:
            return f"CPU list {show(text)} names CPUs above {MAX_CPU}"
        if int(high or low) < int(low):
            return f"CPU list {show(text)} has a range that runs backwards ({part})"
    return None


# --- The tables: dotted paths; `[]` is every element of a list, `*` every key of an object ----

SECONDS = Spec("number", 0, MAX_SECONDS)
# One machine of a run (server_host, each of client_hosts): what the page's Machines part shows.
# A machine's description and tool versions, as this machine's own (manifest top level) or a host's.
MACHINE_FIELDS: dict[str, Spec] = {
    "machine": Spec("dict"),
    "machine.logical_cores": Spec("int", 1, MAX_CPU + 1),
    "machine.usable_cores": Spec("int", 1, MAX_CPU + 1),
    "machine.memory_bytes": Spec("int", 0, MAX_INT),
    "machine.*": Spec("scalar"),
    "versions": Spec("dict"),
    "versions.*": Spec("str"),
}
HOST_FIELDS: dict[str, Spec] = {"ssh": Spec("str", required=True), **MACHINE_FIELDS, "net_ns": Spec("str"), "boot_id": Spec("str")}
MANIFEST_FIELDS: dict[str, Spec] = {
    "schema": Spec("int", 0, 1000),
    "run_id": Spec("str"),
    "status": Spec("str"),
    "reason": Spec("str"),
    "started_at": Spec("str"),
    "ended_at": Spec("str"),
    "command": Spec("str"),
    "nginx_V": Spec("str"),
    "boot_id": Spec("str"),
    "ulimit_n": Spec("int", 0, MAX_INT),
    "parameters": Spec("dict"),
    "parameters.profile": Spec("str"),
    "parameters.threads": Spec("int", 1, 10**6),
    "parameters.connections": Spec("int", 1, 10**8),
    "parameters.duration_s": SECONDS,
    "parameters.repeats": Spec("int", 1, 10**6),
    "parameters.warmup_s": SECONDS,
    "parameters.wrk_timeout_s": SECONDS,
    "parameters.connections_levels": Spec("list"),
    "parameters.connections_levels[]": Spec("int", 1, 10**8, required=True),
    "parameters.gomaxprocs": Spec("list"),
    "parameters.gomaxprocs[]": Spec("int", 1, 10**6, required=True),
    "parameters.setups": Spec("list"),
    "parameters.setups[]": Spec("setup", required=True),
    "parameters.ports": Spec("dict"),
    "parameters.ports.*": Spec("int", 0, 65535),
    "parameters.urls": Spec("dict"),
    "parameters.urls.*": Spec("str"),
    "parameters.expect_header_bytes": Spec("int", 1, 10**6),
    "parameters.body_bytes": Spec("int", 0, 2**40),
    "parameters.handler_delay_ms": Spec("number", 0, MAX_SECONDS * 1000),
    "parameters.upstream_keepalive": Spec("bool"),
    "parameters.pin_client": Spec("cpus"),
    "parameters.pin_server": Spec("cpus"),
    "parameters.tune": Spec("bool"),
    "parameters.seed": Spec("int", 0, MAX_INT),
    **MACHINE_FIELDS,
    "version_lines": Spec("dict"),
    "version_lines.*": Spec("str"),
    "sysctl": Spec("dict"),
    "sysctl.*": Spec("scalar"),
    "sysctl_changes": Spec("list"),
    "passes": Spec("list"),
    "passes[]": Spec("dict", required=True),
    "passes[].gomaxprocs": Spec("int", 1, 10**6),
    "passes[].go_reported_gomaxprocs": Spec("int", 0, 10**6),
    "passes[].order": Spec("list"),
    "passes[].notes": Spec("list"),
    "passes[].cells": Spec("dict"),
    "passes[].cells.*": Spec("dict"),
    "passes[].cells.*.ready": Spec("bool"),
    "passes[].cells.*.error": Spec("str"),
    "passes[].cells.*.status_line": Spec("str"),
    "passes[].cells.*.header_bytes": Spec("int", 0, MAX_INT),
    "passes[].cells.*.response_bytes": Spec("int", 0, MAX_INT),  # a front end's whole answer as sent (its own header block, its body)
    "passes[].cells.*.headers_file": Spec("file"),
    "measurements": Spec("list"),
    "measurements[]": Spec("dict", required=True),
    "measurements[].file": Spec("file"),
    "measurements[].setup": Spec("setup"),
    "measurements[].gomaxprocs": Spec("int", 1, 10**6),
    "measurements[].connections": Spec("int", 1, 10**8),
    "measurements[].repeat": Spec("int", 1, 10**6),
    "measurements[].cpu_file": Spec("file"),
    "measurements[].hist_file": Spec("file"),
    "measurements[].command": Spec("str"),
    "measurements[].exit_code": Spec("int", -(2**31), 2**31),
    # Several wrk clients per measurement (docs/raw-format.md "Two machines and several clients").
    "measurements[].client": Spec("client"),  # a single-client measurement on a remote client
    "measurements[].host": Spec("str"),
    "measurements[].clients": Spec("list"),
    "measurements[].clients[]": Spec("dict", required=True),
    "measurements[].clients[].client": Spec("client", required=True),
    "measurements[].clients[].host": Spec("str"),
    "measurements[].clients[].file": Spec("file", required=True),
    "measurements[].clients[].hist_file": Spec("file"),
    "measurements[].clients[].exit_code": Spec("int", -(2**31), 2**31),
    "measurements[].clients[].command": Spec("str"),
    "measurements[].clients[].started_at": Spec("str"),
    "measurements[].clients[].ended_at": Spec("str"),
    # The fixed-rate phase: its parameters, blocks and measurements (docs/raw-format.md).
    "parameters.rates": Spec("list"),
    "parameters.rates[]": Spec("int", 1, 10**9),
    "parameters.rate_shares": Spec("list"),
    "parameters.rate_shares[]": Spec("number", 0, 10),
    "parameters.rate_blocks": Spec("int", 0, 10**6),
    "parameters.rate_duration_s": Spec("number", 0, MAX_SECONDS),
    "parameters.rate_max_connections": Spec("int", 1, 10**8),
    # The latency objective the capacity search met (--slo p99=5ms: {"percentile": 99, "ms": 5}); null with --slo off.
    "parameters.slo": Spec("dict"),
    "parameters.slo.percentile": Spec("percentile", required=True),
    "parameters.slo.ms": Spec("positive", None, MAX_SECONDS * 1000, required=True),
    "fixed_rate_plan": Spec("list"),
    "fixed_rate_plan[]": Spec("dict", required=True),
    "fixed_rate_plan[].gomaxprocs": Spec("int", 1, 10**6),
    "fixed_rate_plan[].rates": Spec("list"),
    "fixed_rate_plan[].rates[]": Spec("int", 1, 10**9, required=True),
    "fixed_rate_plan[].basis": Spec("str"),
    "fixed_rate_measurements": Spec("list"),
    "fixed_rate_measurements[]": Spec("dict", required=True),
    "fixed_rate_measurements[].setup": Spec("setup", required=True),
    "fixed_rate_measurements[].gomaxprocs": Spec("int", 1, 10**6, required=True),
    "fixed_rate_measurements[].block": Spec("int", 1, 10**6, required=True),
    "fixed_rate_measurements[].repeat": Spec("int", 1, 10**6),
    "fixed_rate_measurements[].rate": Spec("int", 1, 10**9, required=True),
    "fixed_rate_measurements[].file": Spec("file"),
    "fixed_rate_measurements[].cpu_file": Spec("file"),
    "fixed_rate_measurements[].problem": Spec("str"),
    "fixed_rate_measurements[].search_high": Spec("int", 1, 10**9),  # a capacity search step: the search's untested upper end
    "fixed_rate_measurements[].capacity_check": Spec("bool"),  # the measurement at the capacity found, after the search
    "fixed_rate_measurements[].exit_code": Spec("int", -(2**31), 2**31),
    "fixed_rate_measurements[].clients": Spec("list"),  # several --client-hosts: each one's share of the rate and its file
    "fixed_rate_measurements[].clients[]": Spec("dict", required=True),
    "fixed_rate_measurements[].clients[].client": Spec("client", required=True),
    "fixed_rate_measurements[].clients[].host": Spec("str"),
    "fixed_rate_measurements[].clients[].rate": Spec("int", 1, 10**9, required=True),
    "fixed_rate_measurements[].clients[].file": Spec("file"),
    "fixed_rate_measurements[].clients[].exit_code": Spec("int", -(2**31), 2**31),
    "fixed_rate_measurements[].clients[].command": Spec("str"),
    "fixed_rate_measurements[].clients[].problem": Spec("str"),
    "fixed_rate_measurements[].clients[].started_at": Spec("str"),
    "fixed_rate_measurements[].clients[].ended_at": Spec("str"),
    # The front ends in nginx's place the run started (HAProxy, Caddy, Apache httpd): each one's configuration file in the run.
    "front_ends": Spec("dict"),
    "front_ends.*": Spec("dict"),
    "front_ends.*.config": Spec("file"),
    # --variant: its name, options and nginx; its twins are setups ORIGINAL~NAME.
    "variant": Spec("dict"),
    "variant.name": Spec("variant", required=True),
    "variant.options": Spec("list"),
    "variant.options[]": Spec("str", required=True),
    "variant.nginx": Spec("str"),
    "variant.nginx_version": Spec("str"),
    "variant.nginx_V": Spec("str"),
    "variant.upstream_keepalive": Spec("bool"),
    "variant.pin_server": Spec("cpus"),
    "variant.app_b": Spec("bool"),  # --app-b: the twins are the app's second build (parameters.app.b), not another nginx
    "variant.port_offset": Spec("int", 0, 65535),
    "variant.setups": Spec("dict"),
    "variant.setups.*": Spec("setup"),
    "parameters.server_host": Spec("str"),
    "parameters.server_address": Spec("str"),
    "parameters.client_hosts": Spec("list"),
    "parameters.client_hosts[]": Spec("str", required=True),
    "parameters.ssh_config": Spec("str"),
    "server_host": Spec("dict"),
    **{f"server_host.{key}": spec for key, spec in HOST_FIELDS.items()},
    "server_host.address": Spec("str"),
    "server_host.sysctl": Spec("dict"),
    "server_host.sysctl.*": Spec("scalar"),
    "server_host.ulimit_n": Spec("int", 0, MAX_INT),
    "client_hosts": Spec("list"),
    "client_hosts[]": Spec("dict", required=True),
    "client_hosts[].client": Spec("client", required=True),
    **{f"client_hosts[].{key}": spec for key, spec in HOST_FIELDS.items()},
    "network": Spec("dict"),
    "network.rtt": Spec("list"),
    "network.rtt[]": Spec("dict", required=True),
    "network.rtt[].from": Spec("str", required=True),
    "network.rtt[].to": Spec("str", required=True),
    "network.rtt[].method": Spec("str", required=True),
    "network.rtt[].samples": Spec("int", 0, 10**6),
    "network.rtt[].min_ms": Spec("number", 0, MAX_SECONDS * 1000),
    "network.rtt[].median_ms": Spec("number", 0, MAX_SECONDS * 1000),
    "network.rtt[].max_ms": Spec("number", 0, MAX_SECONDS * 1000),
}
# Keys of these objects are setup names: a key that is not one is left out with its value.
SETUP_KEYED = ("passes[].cells", "parameters.urls", "variant.setups")

CPU_FIELDS: dict[str, Spec] = {
    "wall_s": Spec("number", 1e-6, MAX_SECONDS, required=True),
    "logical_cores": Spec("int", 1, MAX_CPU + 1, required=True),
    "processes": Spec("dict", required=True),
    "processes.*": Spec("dict"),
    "processes.*.user_s": Spec("number", 0, MAX_SECONDS, required=True),
    "processes.*.system_s": Spec("number", 0, MAX_SECONDS, required=True),
    "pinning": Spec("dict"),
    "pinning.client": Spec("cpus"),
    "pinning.server": Spec("cpus"),
    "host": Spec("str"),  # where the servers' /proc was read: "target" or "local"
    "processes.wrk.user_s": Spec("number", 0, MAX_SECONDS),  # null when a remote client's CPU could not be read
    "processes.wrk.system_s": Spec("number", 0, MAX_SECONDS),
    "processes.wrk.clients": Spec("list"),
    "processes.wrk.clients[]": Spec("dict", required=True),
    "processes.wrk.clients[].client": Spec("client", required=True),
    "processes.wrk.clients[].user_s": Spec("number", 0, MAX_SECONDS),
    "processes.wrk.clients[].system_s": Spec("number", 0, MAX_SECONDS),
}


# --- Reading and checking -----------------------------------------------------------------


def load_json(data: bytes):
    """Return the JSON value of data; non-finite numbers and integers over 30 digits come back as inf/nan.

    Raises ValueError (UnicodeDecodeError and JSONDecodeError are ValueErrors) or
    RecursionError, which the caller turns into a message.
    """
    return json.loads(data.decode("utf-8"), parse_int=bounded_int)


def bounded_int(text: str) -> int | float:
    """Return a JSON integer, or inf when it has more than MAX_DIGITS digits (never int() of 5,000 digits)."""
    return int(text) if len(text.lstrip("-")) <= MAX_DIGITS else math.inf


def finite_only(value, label: str, problems: list[str], depth: int = 0):
    """Return value with every non-finite or out-of-range number and every too-deep part left out."""
    if depth > MAX_DEPTH:
        problems.append(f"{label}: nested deeper than {MAX_DEPTH} levels")
        return None
    if isinstance(value, float) and not math.isfinite(value) or isinstance(value, int) and abs(value) > MAX_INT:
        problems.append(f"{label}: {show(value)} is not a finite number of sensible size (NaN, Infinity, over {MAX_DIGITS} digits)")
        return None
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            item = finite_only(item, join(label, key), problems, depth + 1)
            if item is not None or value[key] is None:
                kept[key] = item
        return kept
    if isinstance(value, list):
        return [finite_only(item, f"{label}[{i}]", problems, depth + 1) for i, item in enumerate(value)]
    return value


def join(label: str, key: str) -> str:
    """Return the dotted label of key inside label."""
    return f"{label}.{key}" if label else key


def checked(data: dict, table: dict[str, Spec], keyed: tuple[str, ...] = ()) -> tuple[dict, list[str]]:
    """Return data with every value finite and as table says, and why each part left out was (`field: reason`)."""
    problems: list[str] = []
    data = finite_only(data, "", problems)
    for path in keyed:
        for _, _, value, label in lookup(data, path):
            for name in [name for name in value if not SETUP_NAME.fullmatch(name)] if isinstance(value, dict) else []:
                problems.append(f"{label}: key {show(name)} is not a setup name")
                del value[name]
    for path, spec in table.items():
        doomed = []
        for parent, key, value, label in lookup(data, path):
            if path.endswith("*") and f"{path[:-1]}{key}" in table or "*" in path and label != path and label in table:
                continue  # a key with an entry of its own
            if isinstance(parent, dict) and key not in parent:
                if spec.required and not any(p.startswith(f"{label}: ") for p in problems):
                    problems.append(f"{label}: missing")
                continue
            reason = spec.problem(value)
            if reason:
                problems.append(f"{label}: {reason}")
                doomed.append((parent, key))
        for parent, key in reversed(doomed):
            del parent[key]
    return scrubbed(data), problems


def scrubbed(value):
    """Return value with every lone surrogate in its strings and keys (JSON's "\\udcff") replaced by U+FFFD.

    A file field holding one was refused above (kind "file"); anywhere else the string is
    only shown, and a page, results.json or a terminal cannot encode a lone surrogate.

    >>> scrubbed({"a\\udcff": ["x\\ud800", 1]})
    {'a\ufffd': ['x\ufffd', 1]}
    """
    if isinstance(value, str):
        return LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {scrubbed(key): scrubbed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [scrubbed(item) for item in value]
    return value


def lookup(data, path: str):
    """Yield (parent, key, value, label) for every place path names in data (`[]`: each element, `*`: each key).

    A named key absent from an object that exists is yielded too (value None), so a
    required field can be missed.
    """
    places = [(None, None, data, "")]
    for part in path.split("."):
        name, each = part.removesuffix("[]"), part.endswith("[]")
        found = []
        for _, _, value, label in places:
            if not isinstance(value, dict):
                continue
            for key in list(value) if name == "*" else [name]:
                item = value.get(key)
                if each and isinstance(item, list):
                    found.extend((item, i, element, f"{join(label, key)}[{i}]") for i, element in enumerate(item))
                elif not each:
                    found.append((value, key, item, join(label, key)))
        places = found
    yield from places
