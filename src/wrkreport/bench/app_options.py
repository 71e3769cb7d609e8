"""Your app in the plan: --app, --app-unix, --app-fcgi, --app-path, --app-header, --app-version, --app-b; which headers are secret and how they are redacted.

--app 'CMD' names the user's own HTTP server: a shell command line with `{port}`, the TCP
port it is to listen on (the `app` port), and optionally `{host}`, the address to listen on:
127.0.0.1, or with --server-host the target's server address (the one the clients reach,
where nginx-app proxies to it too); the command then runs on the target. --app-unix 'CMD'
starts the same app on a Unix socket (`{socket}`: a path in the run's private work dir) for
nginx-app-unix; --app-fcgi 'CMD' a FastCGI server of it on `{port}` (nginx-app-fcgi-tcp) or
`{socket}` (nginx-app-fcgi-unix). Each is a process of its own beside --app's, which stays
the baseline and so is required (and, for now, the only one taken with --server-host). The
setups of the commands given (core.setups APP_SETUP_IDS) become the run's default; the Go
ones may be added with --setups. A header whose name says it is a secret (SECRET_NAME) is
sent as given but never written: the manifest, the commands recorded and the report show
`Name: <redacted>`. --app-b 'CMD' (with --app-b-name NAME, default b) is a second build of
the app, measured as twins (app~NAME, nginx-app~NAME) in the same rounds: bench.variant
makes them.
"""

from __future__ import annotations

import argparse
import re
import shlex

from ..core.display import argument
from ..core.errors import UsageError
from ..core.setups import APP_BASELINE, APP_FCGI_PORT, APP_SETUP_IDS, FCGI_TCP_SETUP, FCGI_UNIX_SETUP, SETUP_BY_ID, VARIANT_NAME

ENV_APP = "BENCH_APP"
ENV_APP_UNIX = "BENCH_APP_UNIX"
ENV_APP_FCGI = "BENCH_APP_FCGI"
ENV_APP_PATH = "BENCH_APP_PATH"
ENV_APP_HEADERS = "BENCH_APP_HEADERS"  # one header per line
ENV_APP_VERSION = "BENCH_APP_VERSION"
ENV_APP_B = "BENCH_APP_B"
ENV_APP_B_NAME = "BENCH_APP_B_NAME"
APP_B_NAME = "b"  # --app-b-name's default: the twins are app~b and nginx-app~b
PORT_FIELD = "{port}"
SOCKET_FIELD = "{socket}"
# The Unix socket of each app process that takes {socket}: its file name in the run's private work dir.
APP_SOCKETS = {"app-unix": "app-http.sock", "app-fcgi": "app-fcgi.sock"}
HOST_FIELD = "{host}"
LOOPBACK = "127.0.0.1"
REDACTED = "<redacted>"
# A header name that says its value is a secret: credentials, cookies, keys, tokens.
SECRET_NAME = re.compile(r"^(?:proxy-)?authorization$|^(?:set-)?cookie$|key|token|secret|password|passwd|session", re.I)
HEADER = re.compile(r"(?P<name>[!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(?P<value>[^\r\n]*)")
APP_PATH = re.compile(r"/[!-~]*")  # absolute, printable, no spaces: what wrk, curl and vegeta take verbatim
MAX_COMMAND = 4000
LOOPBACK_BIND = re.compile(
    r"(?<![\w.])(?:127\.0\.0\.1|localhost|\[::1\]):\{port\}"
)  # the app bound where only the target itself reaches it


def app_options(p: argparse.ArgumentParser) -> None:
    """Add --app, --app-unix, --app-fcgi, --app-path, --app-header (repeatable), --app-version, --app-b and --app-b-name to run_bench.sh's parser."""
    p.add_argument("--app")
    p.add_argument("--app-unix")
    p.add_argument("--app-fcgi")
    p.add_argument("--app-path")
    p.add_argument("--app-header", action="append")
    p.add_argument("--app-version")
    p.add_argument("--app-b")
    p.add_argument("--app-b-name")


def is_secret(name: str) -> bool:
    """Return True when a header's name says its value is a secret: 'Authorization', 'X-API-Key', 'Cookie' -> True; 'Host' -> False."""
    return bool(SECRET_NAME.search(name))


def shown_header(header: str) -> str:
    """Return a header as it may be written: 'Authorization: Bearer x' -> 'Authorization: <redacted>'; 'Host: a' unchanged."""
    match = HEADER.fullmatch(header)
    if match and is_secret(match["name"]):
        return f"{match['name']}: {REDACTED}"
    return header


def secret_values(headers: list[str]) -> list[str]:
    """Return the values of the secret headers, longest first (what redact replaces)."""
    found = [m["value"] for m in map(HEADER.fullmatch, headers) if m and is_secret(m["name"]) and m["value"]]
    return sorted(set(found), key=len, reverse=True)


def bash_quoted(value: str) -> str:
    """Return value as bash's printf %q writes a printable word: 'Bearer a;b' -> 'Bearer\\ a\\;b'."""
    return re.sub(r"([^A-Za-z0-9_./:=+@%~-])", r"\\\1", value)


def redact(text: str, secrets: list[str]) -> str:
    """Return text with every secret value (as given, shell-quoted or as bash's %q writes it) replaced by <redacted>."""
    for value in secrets:
        for form in (shlex.quote(value), bash_quoted(value), value):  # quoted forms first: no quotes left around the mark
            text = text.replace(form, REDACTED)
    return text


def redact_argv(argv: list[str]) -> list[str]:
    """Return a command's words with each secret header shown redacted: ['-H', 'Authorization: x'] -> ['-H', 'Authorization: <redacted>']."""
    return [shown_header(word) for word in argv]


def parse_header(text: str, source: str) -> str:
    """Return a header 'Name: value' as given (surrounding space stripped), refusing anything else."""
    match = HEADER.fullmatch(text.strip())
    if not match:
        raise UsageError(f"{source} {argument(shown_header(text))}: expected 'Name: value' (a header name, a colon, the value on one line)")
    return f"{match['name']}: {match['value']}"


def app_plan(args: argparse.Namespace, env: dict[str, str]) -> dict:
    """Return the plan's `app`: {'command', 'path', 'headers', 'version_command'}, or None without --app (its other options then refused)."""
    command, source = (args.app, "--app") if args.app is not None else (env.get(ENV_APP), ENV_APP)
    path, path_source = (args.app_path, "--app-path") if args.app_path is not None else (env.get(ENV_APP_PATH), ENV_APP_PATH)
    given = args.app_header if args.app_header is not None else [h for h in env.get(ENV_APP_HEADERS, "").splitlines() if h.strip()]
    header_source = "--app-header" if args.app_header is not None else ENV_APP_HEADERS
    version = args.app_version if args.app_version is not None else env.get(ENV_APP_VERSION)
    unix, unix_source = (args.app_unix, "--app-unix") if args.app_unix is not None else (env.get(ENV_APP_UNIX), ENV_APP_UNIX)
    fcgi, fcgi_source = (args.app_fcgi, "--app-fcgi") if args.app_fcgi is not None else (env.get(ENV_APP_FCGI), ENV_APP_FCGI)
    if command is None:
        if unix is not None or fcgi is not None:
            raise UsageError(
                f"{unix_source if unix is not None else fcgi_source} starts your app beside --app 'CMD' ({PORT_FIELD}), "
                "which is not given: the app alone on its TCP port is what the app setups are compared with"
            )
        if path is not None or given or version is not None or args.app_b is not None or env.get(ENV_APP_B, "").strip():
            raise UsageError("--app-path, --app-header, --app-version and --app-b describe the app of --app 'CMD', which is not given")
        return {"app": None}
    headers = [parse_header(h, header_source) for h in given]
    secrets = secret_values(headers)
    app_command(command, source, (PORT_FIELD,), secrets, f"--app 'python3 -m http.server {PORT_FIELD} --bind 127.0.0.1'")
    if unix is not None:
        app_command(unix, unix_source, (SOCKET_FIELD,), secrets, f"--app-unix 'gunicorn --bind unix:{SOCKET_FIELD} app:app'")
    if fcgi is not None:
        app_command(
            fcgi, fcgi_source, (PORT_FIELD, SOCKET_FIELD), secrets, f"--app-fcgi 'php-fpm ...' or --app-fcgi './api -fcgi {SOCKET_FIELD}'"
        )
    if version is not None and (not version.strip() or "\n" in version):
        raise UsageError("--app-version needs one command line printing the app's version")
    path = "/" if path is None else path
    if not APP_PATH.fullmatch(path):
        raise UsageError(f"{path_source} {argument(path)}: expected an absolute path without spaces, e.g. /api/items?id=1")
    return {
        "app": {
            "command": command,
            "path": path,
            "headers": headers,
            "version_command": version,
            "unix_command": unix,
            "fcgi_command": fcgi,
            "b": app_b_plan(args, env, headers),
        }
    }


def app_command(command: str, source: str, fields: tuple[str, ...], secrets: list[str], example: str) -> None:
    """Refuse a command line of --app, --app-unix or --app-fcgi that is empty, too long, or has not exactly one of fields in it."""
    shown = redact(command, secrets)
    where = " or ".join(fields)
    if not command.strip():
        raise UsageError(f"{source} is empty: give the command line that starts your server, with {where} where it is to listen")
    found = [field for field in fields if field in command]
    if not found:
        raise UsageError(f"{source} {argument(shown)}: no {where} in it; the app must listen where it is told, e.g. {example}")
    if len(found) > 1:
        raise UsageError(f"{source} {argument(shown)}: {' and '.join(found)} both in it; give one, where the server is to listen")
    if len(command) > MAX_COMMAND or "\n" in command or "\0" in command:
        raise UsageError(f"{source}: one line of at most {MAX_COMMAND} characters, please (a longer one belongs in a script)")


def app_b_plan(args: argparse.Namespace, env: dict[str, str], headers: list[str]) -> dict | None:
    """Return --app-b's {'command', 'name'} (the app's second build and its twins' name), None without it."""
    command, source = (args.app_b, "--app-b") if args.app_b is not None else (env.get(ENV_APP_B), ENV_APP_B)
    name, name_source = (args.app_b_name, "--app-b-name") if args.app_b_name is not None else (env.get(ENV_APP_B_NAME), ENV_APP_B_NAME)
    if command is None or (source == ENV_APP_B and not command.strip()):
        if name is not None:
            raise UsageError("--app-b-name names the build of --app-b 'CMD', which is not given")
        return None
    app_command(command, source, (PORT_FIELD,), secret_values(headers), f"--app-b './api-new -addr 127.0.0.1:{PORT_FIELD}'")
    name = APP_B_NAME if name is None else name
    if not VARIANT_NAME.fullmatch(name):
        raise UsageError(f"{name_source} {argument(name)}: expected a short lowercase word (a-z then a-z or 0-9, at most 16), e.g. new")
    return {"command": command, "name": name}


def app_processes(app: dict) -> dict[str, str]:
    """Return the app's processes (core.setups APP_PROCESSES) given a command line, by name: {'app': CMD, 'app-unix': CMD, ...}."""
    found = {"app": app["command"], "app-unix": app.get("unix_command"), "app-fcgi": app.get("fcgi_command")}
    return {name: command for name, command in found.items() if command is not None}


def app_endpoint(command: str) -> str:
    """Return where an app process listens: 'port' ({port}: its TCP port) or 'socket' ({socket}: a Unix socket in the work dir)."""
    return "socket" if SOCKET_FIELD in command else "port"


def offered_setups(app: dict) -> list[str]:
    """Return the app setups the given commands can serve: app and nginx-app; nginx-app-unix with --app-unix; nginx-app-fcgi-tcp or -unix with --app-fcgi."""
    processes = app_processes(app)
    fcgi = processes.get("app-fcgi")
    fcgi_setup = None if fcgi is None else FCGI_UNIX_SETUP if app_endpoint(fcgi) == "socket" else FCGI_TCP_SETUP
    return [
        s
        for s in APP_SETUP_IDS
        if SETUP_BY_ID[s].app_process in processes and (SETUP_BY_ID[s].app_process != "app-fcgi" or s == fcgi_setup)
    ]


def app_port_names(setups: list[str]) -> list[str]:
    """Return the port names an app run binds besides its setups': --app-fcgi's ('app-fcgi') when nginx-app-fcgi-tcp is measured."""
    return [APP_FCGI_PORT] if FCGI_TCP_SETUP in setups else []


def app_setup_list(chosen: list[str], given: bool, app: dict | None) -> list[str]:
    """Return the run's setups with --app taken into account: its setups by default, with app beside any app setup; refused without --app."""
    if app is None:
        wanted = [s for s in chosen if s in APP_SETUP_IDS]
        if wanted:
            raise UsageError(f"setup {wanted[0]} measures your own server: give its command line with --app 'CMD' (with {PORT_FIELD})")
        return chosen
    offered = offered_setups(app)
    if not given:
        return offered
    missing = [s for s in chosen if s in APP_SETUP_IDS and s not in offered]
    if missing:
        option = {
            "app-unix": f"--app-unix 'CMD' (with {SOCKET_FIELD})",
            "app-fcgi": f"--app-fcgi 'CMD' (with {PORT_FIELD} for -tcp, {SOCKET_FIELD} for -unix)",
        }
        raise UsageError(
            f"setup {missing[0]} serves your app started by {option[SETUP_BY_ID[missing[0]].app_process]}, which is not given that way"
        )
    if any(s in APP_SETUP_IDS for s in chosen) and APP_BASELINE not in chosen:
        chosen = [APP_BASELINE, *chosen]  # the app alone: what the app setups divide by
    order = list(SETUP_BY_ID)
    return sorted(chosen, key=order.index)


def app_parameters(plan: dict) -> dict:
    """Return the manifest's `app` (None without --app): the command line, path, headers and version command, secrets redacted."""
    app = plan.get("app")
    if not app:
        return {"app": None}
    secrets = secret_values(app["headers"])
    return {
        "app": {
            "command": redact(app["command"], secrets),
            "unix_command": redact(app["unix_command"], secrets) if app.get("unix_command") else None,
            "fcgi_command": redact(app["fcgi_command"], secrets) if app.get("fcgi_command") else None,
            "path": app["path"],
            "headers": [shown_header(h) for h in app["headers"]],
            "version_command": redact(app["version_command"], secrets) if app["version_command"] else None,
            **({"b": {"command": redact(app["b"]["command"], secrets), "name": app["b"]["name"]}} if app.get("b") else {}),
        }
    }


def app_lines(plan: dict) -> list[str]:
    """Return the plan's lines for the script: app (0/1), app_host ({host}), app_path, app_headers (count), app_header.N, app_version; per app
    process NAME started (app_processes: those a chosen setup needs): app_command.NAME, app_shown.NAME (secrets redacted), app_option.NAME,
    app_endpoint.NAME (port or socket), app_socket.NAME (its file in the work dir)."""
    app = plan.get("app")
    if not app:
        return ["app 0"]
    needed = {SETUP_BY_ID[s].app_process for s in plan["setups"] if s in SETUP_BY_ID}
    processes = {name: command for name, command in app_processes(app).items() if name in needed or name == APP_BASELINE}
    host = plan.get("server_address") or LOOPBACK  # {host}: where the clients reach it, here or on the target
    lines = [
        "app 1",
        f"app_processes {' '.join(processes)}",
        f"app_host {host}",
        f"app_path {app['path']}",
        f"app_headers {len(app['headers'])}",
    ]
    for name, command in processes.items():
        lines += [
            f"app_command.{name} {command}",
            f"app_shown.{name} {redact(command, secret_values(app['headers']))}",  # the shown: for messages
            f"app_option.{name} --{name}",
            f"app_endpoint.{name} {app_endpoint(command)}",
        ]
        if app_endpoint(command) == "socket":
            lines.append(f"app_socket.{name} {APP_SOCKETS[name]}")
    lines += [f"app_header.{i} {header}" for i, header in enumerate(app["headers"])]
    if app["version_command"]:
        lines.append(f"app_version {app['version_command']}")
    if app.get("b"):  # --app-b: its command, shown (secrets redacted) and run on its twin's port (app_b.sh start_app_b)
        lines += [
            f"app_b_command {app['b']['command']}",
            f"app_b_shown {redact(app['b']['command'], secret_values(app['headers']))}",
            f"app_b_name {app['b']['name']}",
        ]
    return lines


def redacted_command_line(command_line: str, plan: dict) -> str:
    """Return the script's command line as the manifest keeps it: each secret header value redacted."""
    app = plan.get("app")
    return redact(command_line, secret_values(app["headers"])) if app else command_line


def app_combinations(plan: dict) -> None:
    """Refuse what --app does not take yet: ab; --app-b with --variant (bench.variant); --app-b, --app-unix and --app-fcgi with
    --server-host; --app-unix and --app-fcgi with --variant or --app-b (their twins would be served by the first build's process);
    and, with --server-host, a command binding the loopback ('127.0.0.1:{port}'), which the clients cannot reach."""
    app = plan.get("app")
    if not app:
        return
    if plan.get("server_host") and LOOPBACK_BIND.search(app["command"]):
        raise UsageError(
            f"--app {argument(redact(app['command'], secret_values(app['headers'])))}: with --server-host it runs on the target, where the clients "
            f"reach it at the target's address, not its loopback; write {HOST_FIELD} for the address to listen on, e.g. --bind {HOST_FIELD}"
        )
    if plan.get("server_host") and app.get("b"):
        raise UsageError(
            "--app-b runs on this machine only: with --server-host it does not take it yet (measure each build in its own run there, then wrkreport compare)"
        )
    beside = [name for name in app_processes(app) if name != APP_BASELINE]
    if plan.get("server_host") and beside:
        raise UsageError(
            f"--{beside[0]} runs on this machine only: with --server-host only --app's own process is started on the target yet"
        )
    if plan["load_generator"] != "wrk":
        raise UsageError(
            f"--app is measured with wrk: --load-generator {plan['load_generator']} (the h2 setups' h2load too) does not take it yet"
        )
    if beside and (plan.get("variant") or plan["app"].get("b")):
        raise UsageError(
            f"--{beside[0]} does not go together with {'--app-b' if plan['app'].get('b') else '--variant'} yet: "
            "measure the app over a socket or FastCGI in a run of its own"
        )
