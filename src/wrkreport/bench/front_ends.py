"""The front ends in nginx's place (HAProxy, Caddy, Apache httpd): each one's configuration, rendered into the run directory.

Each is Debian's package run as a private process (run_bench.sh starts it in a session of its
own, from this configuration, and stops the session): it listens on 127.0.0.1 only, on its
setups' ports, and writes nothing outside the run's private work directory (pid files,
state) and its log in the run directory. The settings are nginx's in the article's spirit,
each said where it is set: as many workers or threads as nginx's `worker_processes auto`
(every CPU), no access log, keep-alive to the client with nginx's limits (300 s, 10,000
requests), connections to Go kept where the front end can keep them. docs/run_bench.md
has the reasons.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from ..core.errors import UsageError
from ..core.setups import FRONT_ENDS, SETUP_BY_ID

KEEPALIVE_S = 300  # nginx's keepalive_timeout in the article
KEEPALIVE_REQUESTS = 10000  # nginx's keepalive_requests
MIN_THREADS = 64  # Apache httpd's threads per process at least (its default ThreadsPerChild is 25)
CONFIG_FILES = {"haproxy": "haproxy.cfg", "caddy": "caddy.json", "apache": "apache2.conf"}  # in the run directory
SAFE_PATH = re.compile(r"[A-Za-z0-9_./+-]+")  # a path each configuration takes unquoted (the run's work dir is made so)
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")  # a user or group name


def front_ends_of(setups) -> list[str]:
    """Return the front ends a run's setups need, in FRONT_ENDS order: ['haproxy-http', 'go-http'] -> ['haproxy']."""
    servers = {SETUP_BY_ID[s].server for s in setups if s in SETUP_BY_ID}
    return [front for front in FRONT_ENDS if front in servers]


def safe_path(path: str, what: str) -> str:
    """Return path when every configuration can take it as it is; refuse one with a space, quote or other special character."""
    if not SAFE_PATH.fullmatch(path):
        raise UsageError(f"{what} {path!r}: a front end's configuration needs a path of letters, digits and _ . / + - only")
    return path


def safe_name(name: str | None, what: str) -> str | None:
    """Return a user or group name as it is (None stays None); refuse one a configuration could misread."""
    if name is not None and not SAFE_NAME.fullmatch(name):
        raise UsageError(f"{what} {name!r}: not a plain user or group name")
    return name


def chosen(setups, front: str) -> dict[str, str]:
    """Return which of a front end's setups (http, fcgi-tcp, fcgi-unix) the run measures: {'http': 'haproxy-http', ...}."""
    return {kind: f"{front}-{kind}" for kind in ("http", "fcgi-tcp", "fcgi-unix") if f"{front}-{kind}" in setups}


def apache_threads(connections_max: int, cpus: int) -> int:
    """Return Apache httpd's threads per process: enough for every connection the load generator keeps busy at once, spread over
    its processes (nginx's 10,000 worker_connections never limit the article's loads), and at least MIN_THREADS.

    >>> apache_threads(100, 2), apache_threads(5000, 2)
    (66, 2516)
    """
    return max(MIN_THREADS, math.ceil(connections_max / cpus) + 16)


def haproxy_config(setups, ports: dict[str, int], socket: str, cpus: int, rlimit: int, user: str | None, group: str | None) -> str:
    """Return haproxy.cfg for the run's HAProxy setups: one frontend per setup on 127.0.0.1, HTTP to go-http, FastCGI to Go's port and socket."""
    wanted = chosen(setups, "haproxy")
    maxconn = max(256, (rlimit - 64) // 2)  # HAProxy needs about 2 descriptors per connection and refuses to start beyond its limit
    lines = [
        "# HAProxy configuration of a wrkreport run (run_bench.sh renders it into the run directory; docs/run_bench.md).",
        "global",
        f"    nbthread {cpus}  # every CPU, as nginx's worker_processes auto",
        f"    maxconn {maxconn}  # from the run's open-file limit ({rlimit})",
        "    # no log, stats socket or master CLI: nothing but the setups' ports is opened",
    ]
    if user:
        lines.append(f"    user {user}")
        lines.append(f"    group {group or user}")
    lines += [
        "",
        "defaults",
        "    mode http",
        "    timeout connect 5s",
        f"    timeout client {KEEPALIVE_S}s",
        f"    timeout server {KEEPALIVE_S}s",
        f"    timeout http-keep-alive {KEEPALIVE_S}s  # nginx's keepalive_timeout",
        "    option http-keep-alive",
        "    http-reuse always  # connections to Go kept and shared, as nginx's upstream keepalive",
        "",
    ]
    if "fcgi-tcp" in wanted or "fcgi-unix" in wanted:
        lines += ["fcgi-app go", "    docroot /", ""]
    backends = {
        "http": f"    server go 127.0.0.1:{ports['go-http']}",
        "fcgi-tcp": f"    server go 127.0.0.1:{ports['go-fcgi-tcp']} proto fcgi",
        "fcgi-unix": f"    server go {safe_path(socket, '--socket')} proto fcgi",
    }
    for kind, setup in wanted.items():
        name = setup.replace("-", "_")
        lines += [f"frontend {name}", f"    bind 127.0.0.1:{ports[setup]}", f"    default_backend {name}_go", ""]
        lines += [f"backend {name}_go"] + (["    use-fcgi-app go"] if kind != "http" else []) + [backends[kind], ""]
    return "\n".join(lines)


def caddy_config(setups, ports: dict[str, int], socket: str, storage: str) -> dict:
    """Return Caddy's JSON configuration for the run's Caddy setups: its admin endpoint and automatic HTTPS off, one server per setup."""
    wanted = chosen(setups, "caddy")
    upstream = {
        "http": {
            "handler": "reverse_proxy",
            "upstreams": [{"dial": f"127.0.0.1:{ports['go-http']}"}],
            # connections to Go kept: as many idle ones as the load can use (Go's net/http transport keeps 2 per host by default)
            "transport": {"protocol": "http", "keep_alive": {"max_idle_conns_per_host": 1024}},
        },
        "fcgi-tcp": {
            "handler": "reverse_proxy",
            "upstreams": [{"dial": f"127.0.0.1:{ports['go-fcgi-tcp']}"}],
            "transport": {"protocol": "fastcgi", "root": "/"},
        },
        "fcgi-unix": {
            "handler": "reverse_proxy",
            "upstreams": [{"dial": f"unix/{safe_path(socket, '--socket')}"}],
            "transport": {"protocol": "fastcgi", "root": "/"},
        },
    }
    servers = {
        setup.replace("-", "_"): {
            "listen": [f"127.0.0.1:{ports[setup]}"],
            "automatic_https": {"disable": True},
            "idle_timeout": f"{KEEPALIVE_S}s",
            "routes": [{"handle": [upstream[kind]]}],
        }
        for kind, setup in wanted.items()
    }
    return {
        "admin": {"disabled": True},  # no admin endpoint (by default 127.0.0.1:2019)
        "storage": {"module": "file_system", "root": safe_path(storage, "--work")},  # nothing in the user's home
        "logging": {"logs": {"default": {"level": "ERROR"}}},  # errors only; no access log (Caddy writes none unless asked)
        "apps": {"http": {"servers": servers}},
    }


def apache_config(
    setups,
    ports: dict[str, int],
    socket: str,
    prefix: str,
    error_log: str,
    cpus: int,
    connections_max: int,
    user: str | None,
    group: str | None,
    modules: str = "/usr/lib/apache2/modules",
) -> str:
    """Return apache2.conf for the run's Apache httpd setups: the event MPM, one virtual host per setup, mod_proxy_http and mod_proxy_fcgi."""
    wanted = chosen(setups, "apache")
    threads = apache_threads(connections_max, cpus)
    loaded = ["mpm_event", "authz_core", "proxy", "proxy_http", "proxy_fcgi"]
    lines = [
        "# Apache httpd configuration of a wrkreport run (run_bench.sh renders it into the run directory; docs/run_bench.md).",
        f"ServerRoot {safe_path(prefix, '--prefix')}",
        "ServerName 127.0.0.1",
        f"PidFile {prefix}/apache2.pid",
        f"DefaultRuntimeDir {prefix}",
        f"ErrorLog {safe_path(error_log, '--error-log')}",
        "LogLevel warn",
        "# no CustomLog: no access log",
        *(f"LoadModule {name}_module {safe_path(modules, '--modules')}/mod_{name}.so" for name in loaded),
        *([f"User {user}", f"Group {group or user}"] if user else []),
        f"# the event MPM with one process per CPU, as nginx's worker_processes auto, and {threads} threads each",
        f"StartServers {cpus}",
        f"ServerLimit {cpus}",
        f"ThreadLimit {threads}",
        f"ThreadsPerChild {threads}",
        f"MaxRequestWorkers {cpus * threads}",
        "# no process stopped or started while measured (Apache httpd takes no comment after a directive)",
        "MinSpareThreads 1",
        f"MaxSpareThreads {cpus * threads}",
        "MaxConnectionsPerChild 0",
        "KeepAlive On",
        f"MaxKeepAliveRequests {KEEPALIVE_REQUESTS}",
        f"KeepAliveTimeout {KEEPALIVE_S}",
        f"Timeout {KEEPALIVE_S}",
        "ServerTokens Prod",
        "ServerSignature Off",
    ]
    targets = {
        "http": f"http://127.0.0.1:{ports['go-http']}/",  # mod_proxy keeps its connections to Go in a pool (reuse is its default)
        "fcgi-tcp": f"fcgi://127.0.0.1:{ports['go-fcgi-tcp']}/ enablereuse=on",
        "fcgi-unix": f"unix:{safe_path(socket, '--socket')}|fcgi://localhost/ enablereuse=on",
    }
    for kind, setup in wanted.items():
        lines += [
            f"Listen 127.0.0.1:{ports[setup]}",
            f"<VirtualHost 127.0.0.1:{ports[setup]}>",
            f"    ProxyPass / {targets[kind]}",
            "</VirtualHost>",
        ]
    return "\n".join(lines) + "\n"


def render_front_ends(
    manifest: dict, run_dir: Path, work: str, socket: str, cpus: int, rlimit: int, user: str | None, group: str | None
) -> list[str]:
    """Write each front end's configuration the run needs into run_dir; return the front ends, in FRONT_ENDS order."""
    params = manifest["parameters"]
    setups, ports = params["setups"], params["ports"]
    user, group = safe_name(user, "--user"), safe_name(group, "--group")
    work = safe_path(work, "--work")
    fronts = front_ends_of(setups)
    for front in fronts:
        if front == "haproxy":
            text = haproxy_config(setups, ports, socket, cpus, rlimit, user, group)
        elif front == "caddy":
            text = json.dumps(caddy_config(setups, ports, socket, f"{work}/caddy/storage"), indent=2) + "\n"
        else:
            connections = max(params.get("connections_levels") or [params.get("connections") or 1])
            # The error log is a link in the work dir that run_bench.sh points at each pass's log in the run directory (any path).
            text = apache_config(setups, ports, socket, f"{work}/apache", f"{work}/apache/error.log", cpus, connections, user, group)
        (run_dir / CONFIG_FILES[front]).write_text(text)
    return fronts
