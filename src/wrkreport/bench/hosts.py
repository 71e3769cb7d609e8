"""Hosts: --server-host, --server-address, --client-hosts and --ssh-config -> validated names for ssh and the URLs.

Only names ssh and a URL can take verbatim reach the script: `[user@]host` with a host
name, an IPv4 address or an IPv6 address, never starting with `-` (ssh would read an
option), and a server address that is a single machine's (never 0.0.0.0 or ::, so the
servers never listen on every interface).
"""

from __future__ import annotations

import ipaddress
import os
import re

from ..core.display import argument
from ..core.errors import UsageError
from ..core.setups import FRONT_ENDS, SETUP_BY_ID
from .values import dedupe, split_list

ENV_SERVER_HOST, ENV_SERVER_ADDRESS, ENV_CLIENT_HOSTS, ENV_SSH_CONFIG = (
    "BENCH_SERVER_HOST",
    "BENCH_SERVER_ADDRESS",
    "BENCH_CLIENT_HOSTS",
    "BENCH_SSH_CONFIG",
)
LOCAL = "local"  # in --client-hosts: this machine
MAX_CLIENTS = 64
USER = re.compile(r"[a-z_][a-z0-9_.-]{0,31}\$?", re.A)
HOSTNAME = re.compile(
    r"(?=.{1,253}\Z)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?", re.A
)


def host_part(text: str, source: str) -> str:
    """Return the host of `host` or an IP address, refusing anything ssh or a URL would misread."""
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    if not HOSTNAME.fullmatch(text) or text.replace(".", "").isdigit():
        raise UsageError(f"{source} {argument(text)}: not a host name or IP address")
    return text


def ssh_target(text: str, source: str) -> str:
    """Return a validated `[user@]host` for ssh: 'root@10.0.0.2', 'bench-box'."""
    user, sep, host = text.rpartition("@")
    if sep and not USER.fullmatch(user):
        raise UsageError(f"{source} {argument(text)}: {argument(user)} is not a user name")
    return f"{user}@{host_part(host, source)}" if sep else host_part(host, source)


def host_of(target: str) -> str:
    """Return the host of `[user@]host`."""
    return target.rpartition("@")[2]


def server_address(text: str, source: str) -> str:
    """Return the address the servers listen on: one machine's IP address, or a host name."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return host_part(text, source)
    if address.is_unspecified or address.is_multicast:
        raise UsageError(f"{source} {text}: the servers listen on one address of the target, not {text}")
    return str(address)


def url_host(address: str) -> str:
    """Return an address as a URL's host: IPv6 in brackets."""
    return f"[{address}]" if ":" in address else address


def client_hosts(text: str, source: str) -> list[str]:
    """Return the --client-hosts list: `local` or `[user@]host` each, distinct, at most MAX_CLIENTS."""
    items = split_list(text)
    if not items:
        raise UsageError(f"{source} needs at least one host (or {LOCAL})")
    hosts = [item if item == LOCAL else ssh_target(item, f"{source} value") for item in items]
    if len(dedupe(hosts)) != len(hosts):
        raise UsageError(f"{source}: a host is named twice; each client is one wrk")
    if len(hosts) > MAX_CLIENTS:
        raise UsageError(f"{source}: at most {MAX_CLIENTS} clients, not {len(hosts)}")
    return hosts


def ssh_config(text: str, source: str) -> str:
    """Return the --ssh-config file as an absolute path; it must be a readable regular file."""
    path = os.path.abspath(text)
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise UsageError(f"{source} {argument(text)}: not a readable file")
    return path


def hosts_plan(args, env: dict[str, str]) -> dict:
    """Return server_host, server_address, client_hosts and ssh_config (None when not given)."""
    plan: dict = {"server_host": None, "server_address": None, "client_hosts": None, "ssh_config": None}
    for key, option, name, read in (
        ("server_host", "--server-host", ENV_SERVER_HOST, ssh_target),
        ("server_address", "--server-address", ENV_SERVER_ADDRESS, server_address),
        ("client_hosts", "--client-hosts", ENV_CLIENT_HOSTS, client_hosts),
        ("ssh_config", "--ssh-config", ENV_SSH_CONFIG, ssh_config),
    ):
        text = getattr(args, key)
        source = option
        if text is None:
            text, source = env.get(name), name
        if text is not None:
            plan[key] = read(text, source)
    if plan["server_address"] is not None and plan["server_host"] is None:
        raise UsageError("--server-address names the target's address: it needs --server-host")
    return plan


def check_combinations(plan: dict) -> None:
    """Refuse options that cannot mean anything with the hosts chosen."""
    remote_clients = [h for h in plan["client_hosts"] or () if h != LOCAL]
    if plan["client_hosts"] and len(plan["client_hosts"]) > 1 and plan["load_generator"] != "wrk":
        raise UsageError(
            f"--load-generator {plan['load_generator']} writes no latency histogram, so several --client-hosts cannot be merged exactly; use wrk"
        )
    if remote_clients and plan["load_generator"] != "wrk":
        raise UsageError(f"--load-generator {plan['load_generator']} runs on this machine only; --client-hosts other than local run wrk")
    if remote_clients and plan["pin_client"]:
        raise UsageError("--pin-client names this machine's CPUs; it cannot pin wrk on --client-hosts")
    if plan["server_host"] and plan["tune"]:
        raise UsageError(
            "--tune sets this machine's sysctl values; with --server-host the servers run elsewhere: tune the target by hand (its values are recorded)"
        )
    if plan["server_host"] and plan["pin_server"]:
        raise UsageError("--pin-server names this machine's CPUs; it cannot pin the servers on --server-host")
    fronts = [s for s in plan["setups"] if SETUP_BY_ID[s].server in FRONT_ENDS]
    if plan["server_host"] and fronts:
        raise UsageError(f"{fronts[0]}: HAProxy, Caddy and Apache httpd run on this machine only; with --server-host choose nginx's setups")
    clients = len(plan["client_hosts"] or ())
    if clients > 1 and min(plan["connections_levels"]) < clients * plan["threads"]:
        raise UsageError(
            f"each connection level is split over the {clients} clients, and each wrk needs at least one connection per thread: "
            f"--connections {min(plan['connections_levels'])} is below {clients} clients x {plan['threads']} threads"
        )
    if plan["client_hosts"] and not plan["server_host"] and remote_clients:
        raise UsageError("--client-hosts other than local need --server-host: the servers listen on 127.0.0.1 otherwise")
