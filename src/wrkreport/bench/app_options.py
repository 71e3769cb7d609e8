"""Your app in the plan: --app, --app-path, --app-header, --app-version, --app-b; which headers are secret and how they are redacted.

--app 'CMD' names the user's own HTTP server: a shell command line with `{port}`, the TCP
port on 127.0.0.1 it is to listen on (the `app` port). Its setups (core.setups
APP_SETUP_IDS) become the run's default; the Go ones may be added with --setups. A header
whose name says it is a secret (SECRET_NAME) is sent as given but never written: the
manifest, the commands recorded and the report show `Name: <redacted>`. --app-b 'CMD'
(with --app-b-name NAME, default b) is a second build of the app, measured as twins
(app~NAME, nginx-app~NAME) in the same rounds: bench.variant makes them.
"""

from __future__ import annotations

import argparse
import re
import shlex

from ..core.display import argument
from ..core.errors import UsageError
from ..core.setups import APP_SETUP_IDS, SETUP_BY_ID, VARIANT_NAME

ENV_APP = "BENCH_APP"
ENV_APP_PATH = "BENCH_APP_PATH"
ENV_APP_HEADERS = "BENCH_APP_HEADERS"  # one header per line
ENV_APP_VERSION = "BENCH_APP_VERSION"
ENV_APP_B = "BENCH_APP_B"
ENV_APP_B_NAME = "BENCH_APP_B_NAME"
APP_B_NAME = "b"  # --app-b-name's default: the twins are app~b and nginx-app~b
PORT_FIELD = "{port}"
REDACTED = "<redacted>"
# A header name that says its value is a secret: credentials, cookies, keys, tokens.
SECRET_NAME = re.compile(r"^(?:proxy-)?authorization$|^(?:set-)?cookie$|key|token|secret|password|passwd|session", re.I)
HEADER = re.compile(r"(?P<name>[!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(?P<value>[^\r\n]*)")
APP_PATH = re.compile(r"/[!-~]*")  # absolute, printable, no spaces: what wrk, curl and vegeta take verbatim
MAX_COMMAND = 4000


def app_options(p: argparse.ArgumentParser) -> None:
    """Add --app, --app-path, --app-header (repeatable), --app-version, --app-b and --app-b-name to run_bench.sh's parser."""
    p.add_argument("--app")
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
    if command is None:
        if path is not None or given or version is not None or args.app_b is not None or env.get(ENV_APP_B, "").strip():
            raise UsageError("--app-path, --app-header, --app-version and --app-b describe the app of --app 'CMD', which is not given")
        return {"app": None}
    headers = [parse_header(h, header_source) for h in given]
    check_command(command, source, secret_values(headers))
    if version is not None and (not version.strip() or "\n" in version):
        raise UsageError("--app-version needs one command line printing the app's version")
    path = "/" if path is None else path
    if not APP_PATH.fullmatch(path):
        raise UsageError(f"{path_source} {argument(path)}: expected an absolute path without spaces, e.g. /api/items?id=1")
    return {"app": {"command": command, "path": path, "headers": headers, "version_command": version, "b": app_b_plan(args, env, headers)}}


def check_command(command: str, source: str, secrets: list[str]) -> None:
    """Refuse an app command line (--app's or --app-b's) that is empty, has no {port} or is not one short line."""
    if not command.strip():
        raise UsageError(f"{source} is empty: give the command line that starts your HTTP server, with {PORT_FIELD} for its port")
    if PORT_FIELD not in command:
        raise UsageError(f"{source} {argument(redact(command, secrets))}: no {PORT_FIELD} in it; the app must listen on the port it is given, e.g. "
                         f"--app 'python3 -m http.server {PORT_FIELD} --bind 127.0.0.1'")
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
    check_command(command, source, secret_values(headers))
    name = APP_B_NAME if name is None else name
    if not VARIANT_NAME.fullmatch(name):
        raise UsageError(f"{name_source} {argument(name)}: expected a short lowercase word (a-z then a-z or 0-9, at most 16), e.g. new")
    return {"command": command, "name": name}


def app_setup_list(chosen: list[str], given: bool, app: dict | None) -> list[str]:
    """Return the run's setups with --app taken into account: its setups by default, with app beside any app setup; refused without --app."""
    if app is None:
        wanted = [s for s in chosen if s in APP_SETUP_IDS]
        if wanted:
            raise UsageError(f"setup {wanted[0]} measures your own server: give its command line with --app 'CMD' (with {PORT_FIELD})")
        return chosen
    if not given:
        return list(APP_SETUP_IDS)
    if any(s in APP_SETUP_IDS for s in chosen) and APP_SETUP_IDS[0] not in chosen:
        chosen = [APP_SETUP_IDS[0], *chosen]  # the app alone: what the app setups divide by
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
            "path": app["path"],
            "headers": [shown_header(h) for h in app["headers"]],
            "version_command": redact(app["version_command"], secrets) if app["version_command"] else None,
            **({"b": {"command": redact(app["b"]["command"], secrets), "name": app["b"]["name"]}} if app.get("b") else {}),
        }
    }


def app_lines(plan: dict) -> list[str]:
    """Return the plan's lines for the script: app (0/1), app_command, app_shown (secrets redacted), app_path, app_headers (count), app_header.N, app_version."""
    app = plan.get("app")
    if not app:
        return ["app 0"]
    shown = redact(app["command"], secret_values(app["headers"]))  # for messages, which the manifest keeps
    lines = ["app 1", f"app_command {app['command']}", f"app_shown {shown}", f"app_path {app['path']}", f"app_headers {len(app['headers'])}"]
    lines += [f"app_header.{i} {header}" for i, header in enumerate(app["headers"])]
    if app["version_command"]:
        lines.append(f"app_version {app['version_command']}")
    if app.get("b"):  # --app-b: its command, shown (secrets redacted) and run on its twin's port (app.sh start_app_b)
        lines += [f"app_b_command {app['b']['command']}", f"app_b_shown {redact(app['b']['command'], secret_values(app['headers']))}",
                  f"app_b_name {app['b']['name']}"]
    return lines


def redacted_command_line(command_line: str, plan: dict) -> str:
    """Return the script's command line as the manifest keeps it: each secret header value redacted."""
    app = plan.get("app")
    return redact(command_line, secret_values(app["headers"])) if app else command_line


def app_combinations(plan: dict) -> None:
    """Refuse what --app does not take yet: other machines (--server-host, --client-hosts), ab (--app-b with --variant: bench.variant)."""
    if not plan.get("app"):
        return
    if plan.get("server_host") or plan.get("client_hosts"):
        raise UsageError("--app runs your app on this machine only: --server-host and --client-hosts do not take it yet")
    if plan["load_generator"] != "wrk":
        raise UsageError(f"--app is measured with wrk: --load-generator {plan['load_generator']} (the h2 setups' h2load too) does not take it yet")
