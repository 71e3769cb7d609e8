"""One option's value checked and turned into what the plan holds: the option or its environment variable, then --out, --load-generator, --connections, --gomaxprocs, --setups and --port (each bad value a one-line usage error naming the option)."""

from __future__ import annotations

import re

from ..core.display import argument
from ..core.errors import UsageError
from ..core.setups import (
    ALL_SETUPS,
    APP_BACKEND_PORTS,
    BACKEND_PORTS,
    DEFAULT_PORTS,
    DEFAULT_SETUP_IDS,
    FRONT_ENDS_GROUP,
    FRONT_ENDS_GROUP_IDS,
    H2_GROUP,
    H2_SETUP_IDS,
    PLAIN_SETUP_IDS,
    SETUP_BY_ID,
    SETUP_IDS,
    TLS_GROUP,
    TLS_SETUP_IDS,
    braced,
)
from .app_options import app_port_names
from .profiles import ENV_GOMAXPROCS, ENV_LOAD_GENERATOR, ENV_PORTS, ENV_SETUPS, LOAD_GENERATORS, MAX_CONNECTIONS, MAX_GOMAXPROCS, MAX_PORT
from .values import dedupe, parse_int, split_list


def given_or_env(given: str | None, option: str, env: dict[str, str], name: str) -> tuple[str | None, str]:
    """Return (text, where it came from) of a setting: the option if given, else the variable."""
    if given is not None:
        return given, option
    return env.get(name), name


# Characters nginx's command line (-g 'error_log "DIR/..." crit;') or a shell reading the
# path would act on: quotes, escapes, ';', '$', braces, comments, control characters.
OUT_UNSAFE = re.compile(r"[\x00-\x1f\x7f\"'`\\;${}#]")


def safe_out(path: str, source: str) -> str:
    """Return the --out path if nginx and the shell can take it verbatim (spaces are fine); refuse it otherwise."""
    bad = OUT_UNSAFE.search(path)
    if bad:
        raise UsageError(
            f"{source} {argument(path)}: the character {bad.group()!r} would be read by nginx's configuration or the shell; "
            "choose a directory without quotes, backslashes, ; $ { } # or control characters"
        )
    return path


def load_generator(given: str | None, env: dict[str, str]) -> str:
    """Return the load generator: --load-generator, else BENCH_LOAD_GENERATOR, else wrk."""
    text, source = given_or_env(given, "--load-generator", env, ENV_LOAD_GENERATOR)
    if text is None:
        return LOAD_GENERATORS[0]
    if text not in LOAD_GENERATORS:
        raise UsageError(f"{source} {argument(text)}: choose one of {', '.join(LOAD_GENERATORS)}")
    return text


def connections_levels(text: str, source: str) -> list[int]:
    """Return the connection levels of --connections: '100' -> [100], '10,100,1000' -> [10, 100, 1000]."""
    items = split_list(text)
    what = source if len(items) == 1 else f"{source} value"
    levels = dedupe([parse_int(item, what, 1, maximum=MAX_CONNECTIONS) for item in items])
    if not levels:
        raise UsageError(f"{source} needs at least one value, e.g. 100 or 10,100,1000")
    return levels


def gomaxprocs_list(given: str | None, env: dict[str, str], nproc: int) -> list[int]:
    """Return the GOMAXPROCS values: option, BENCH_GOMAXPROCS, else 1 and nproc (deduplicated)."""
    text = given if given is not None else env.get(ENV_GOMAXPROCS)
    if text is None:
        return dedupe([1, nproc])
    values = [parse_int(v, "--gomaxprocs value", 1, maximum=MAX_GOMAXPROCS) for v in split_list(text)]
    if not values:
        raise UsageError("--gomaxprocs needs at least one value, e.g. 1,2")
    return dedupe(values)


def setup_list(given: str | None, env: dict[str, str]) -> list[str]:
    """Return the selected setups in table order (option, BENCH_SETUPS, else the article's four).

    'all' selects every setup but the TLS ones; 'tls' go-http and every TLS setup, 'h2' go-http and every HTTP/2 setup, 'front-ends'
    go-http, nginx-http and the HTTP proxies of HAProxy, Caddy and Apache httpd (with any others named).
    """
    text = given if given is not None else env.get(ENV_SETUPS)
    if text is None:
        return list(DEFAULT_SETUP_IDS)
    chosen = split_list(text)
    if ALL_SETUPS in chosen:
        chosen = [s for s in chosen if s != ALL_SETUPS] + list(PLAIN_SETUP_IDS)
    for group, ids in (
        (TLS_GROUP, ("go-http", *TLS_SETUP_IDS)),
        (H2_GROUP, ("go-http", *H2_SETUP_IDS)),
        (FRONT_ENDS_GROUP, FRONT_ENDS_GROUP_IDS),
    ):
        if group in chosen:
            chosen = [s for s in chosen if s != group] + list(ids)
    unknown = [s for s in chosen if s not in SETUP_IDS]  # a twin (nginx-http~x) comes with --variant only
    if unknown:
        raise UsageError(
            f"unknown setup {argument(unknown[0])}; choose from {braced(PLAIN_SETUP_IDS)} (or {ALL_SETUPS}), "
            f"{TLS_GROUP}, {H2_GROUP} or {FRONT_ENDS_GROUP}"
        )
    if not chosen:
        raise UsageError("--setups needs at least one setup")
    return [s for s in SETUP_IDS if s in chosen]


def port_map(given: list[str], env: dict[str, str], setups: list[str] | None = None) -> dict[str, int]:
    """Return the ports by name: defaults, then BENCH_PORTS, then each --port NAME=PORT.

    Kept: the article's four setups and Go's FastCGI port always, other setups when chosen.
    """
    ports = dict(DEFAULT_PORTS)
    items = [(f"{ENV_PORTS}", item) for item in split_list(env.get(ENV_PORTS, ""))]
    items += [("--port", item) for option in given for item in split_list(option)]
    for source, item in items:
        name, sep, number = item.partition("=")
        if not sep or name not in ports:
            raise UsageError(
                f"{source} {argument(item)}: expected NAME=PORT with NAME one of the setups (--setups), "
                f"{', '.join(BACKEND_PORTS)} or {', '.join(APP_BACKEND_PORTS)}"
            )
        ports[name] = parse_int(number, f"{source} {name}", 1)
        if ports[name] > MAX_PORT:
            raise UsageError(f"{source} {name}: port {ports[name]} is above {MAX_PORT}")
    kept = (
        set(DEFAULT_SETUP_IDS)
        | set(BACKEND_PORTS)
        | {SETUP_BY_ID[s].served_by for s in setups or () if s in SETUP_BY_ID}
        | {*app_port_names(setups or [])}
    )
    return {name: port for name, port in ports.items() if name in kept}


def needed_ports(setups: list[str], ports: dict[str, int]) -> dict[str, int]:
    """Return the ports this run binds: Go's two TCP ports when a setup needs Go, plus each nginx, fasthttp or node setup's."""
    go = ["go-http", *BACKEND_PORTS] if any("go" in SETUP_BY_ID[s].needs for s in setups) else []
    served = dedupe([SETUP_BY_ID[s].served_by for s in setups])  # a new-connection setup binds nothing of its own
    names = [*go, *(s for s in served if SETUP_BY_ID[s].server != "go" or s not in go), *app_port_names(setups)]
    needed = {name: ports[name] for name in names}
    seen: dict[int, str] = {}
    for name, port in needed.items():
        if port in seen:
            raise UsageError(f"{seen[port]} and {name} are both given port {port}")
        seen[port] = name
    return needed
