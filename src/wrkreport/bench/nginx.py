"""nginx: the modules a setup needs and the configuration rendered from templates/nginx.conf.tmpl."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..core.errors import UsageError
from ..core.setups import SETUP_BY_ID
from .app_options import APP_SOCKETS
from .hosts import url_host
from .profiles import HELLO_LINE, LOOPBACK, body_text
from .tls_options import nginx_tls_values


def nginx_conf_dir(nginx_V: str) -> Path | None:
    """Return the directory of nginx's compiled-in configuration (where fastcgi_params is)."""
    match = re.search(r"--conf-path=(\S+)", nginx_V)
    return Path(match.group(1)).parent if match else None


def nginx_missing_modules(nginx_V: str, setups: list[str]) -> list[str]:
    """Return 'setup needs module' messages for modules this nginx was built without."""
    missing = []
    for setup in setups:
        for module in SETUP_BY_ID[setup].nginx_modules:
            if module.startswith("+"):  # built only on request: --with-..._module must be there
                module = module[1:]
                if f"--with-{module}_module" not in nginx_V:
                    missing.append(f"{setup} needs nginx's {module} module, which this nginx was built without")
            elif f"--without-{module}_module" in nginx_V:
                missing.append(f"{setup} needs nginx's {module} module, which this nginx was built without")
    return missing


SECTION_START = re.compile(r"^#@setup (?P<setup>\S+)\s*$")


SECTION_END = re.compile(r"^#@end\s*$")


IF_START = re.compile(r"^\s*#@if (?P<flag>[a-z_]+)\s*$")


IF_ELSE = re.compile(r"^\s*#@else\s*$")


IF_END = re.compile(r"^\s*#@endif\s*$")


TEMPLATE_COMMENT = re.compile(r"^#@(?:\s.*)?$")  # "#@ ..." or "#@": dropped from the output


PLACEHOLDER = re.compile(r"\{\{(?P<name>[a-z][a-z0-9_]*)\}\}")


NGINX_UNSAFE = re.compile(r"[\s\"'\\;{}$#]")


def nginx_value(value: str) -> str:
    """Return a path or name fit for an nginx config; refuse characters needing quoting."""
    if not value or NGINX_UNSAFE.search(value):
        raise UsageError(f"{value!r} cannot be written into the nginx configuration unquoted")
    return value


def render_template(template: str, setups: list[str], values: dict[str, str], flags: dict[str, bool] | None = None) -> str:
    """Keep the sections of the selected setups and the `#@if` branches of the flags, drop
    `#@` comments, fill every {{name}}."""
    flags = flags or {}
    kept, current = [], None
    branch: tuple[str, bool] | None = None  # (flag, keep lines) inside #@if .. #@endif
    for number, line in enumerate(template.splitlines(), 1):
        if_start, if_else, if_end = IF_START.match(line), IF_ELSE.match(line), IF_END.match(line)
        if if_start:
            if branch is not None:
                raise ValueError(f"template line {number}: #@if inside #@if {branch[0]}")
            if if_start["flag"] not in flags:
                raise ValueError(f"template line {number}: unknown flag {if_start['flag']!r}")
            branch = (if_start["flag"], flags[if_start["flag"]])
            continue
        if if_else or if_end:
            if branch is None:
                raise ValueError(f"template line {number}: {line.strip()} without #@if")
            branch = (branch[0], not branch[1]) if if_else else None
            continue
        if branch is not None and not branch[1]:
            continue
        start = SECTION_START.match(line)
        if start:
            if current is not None:
                raise ValueError(f"template line {number}: section {start['setup']} inside {current}")
            if start["setup"] not in SETUP_BY_ID:
                raise ValueError(f"template line {number}: unknown setup {start['setup']!r}")
            current = start["setup"]
            continue
        if SECTION_END.match(line):
            if current is None:
                raise ValueError(f"template line {number}: #@end without #@setup")
            current = None
            continue
        if TEMPLATE_COMMENT.match(line):
            continue
        if current is None or current in setups:
            kept.append(line)
    if current is not None:
        raise ValueError(f"template: section {current} not closed with #@end")
    if branch is not None:
        raise ValueError(f"template: #@if {branch[0]} not closed with #@endif")

    def fill(match: re.Match) -> str:
        name = match["name"]
        if name not in values:
            raise ValueError(f"template: no value for {{{{{name}}}}}")
        return values[name]

    return PLACEHOLDER.sub(fill, "\n".join(kept) + "\n")


def nginx_values(
    manifest: dict,
    prefix: str,
    socket: str,
    user: str | None,
    group: str | None,
    rlimit: int,
    http_socket: str = "",
    listen_address: str = LOOPBACK,
    fastcgi_params: str | None = None,
) -> dict[str, str]:
    """Return the template values for this run (ports, listen address, private paths, worker user, static body).

    fastcgi_params: the stock file's path when the driver found it itself (on the target,
    over ssh); by default it is looked up beside nginx -V's conf-path on this machine.
    """
    nginx_V = manifest.get("nginx_V") or ""
    conf_dir = nginx_conf_dir(nginx_V)
    if fastcgi_params is None:
        if conf_dir is None or not (conf_dir / "fastcgi_params").is_file():
            raise UsageError(f"cannot find nginx's stock fastcgi_params (nginx -V conf-path: {conf_dir})")
        fastcgi_params = str(conf_dir / "fastcgi_params")
    if user:
        # Workers must connect to the Unix socket; the script makes it reachable to this
        # group only (socket 0660 and work dir 0710, group-owned), so name both explicitly.
        user_directive = f"user {nginx_value(user)} {nginx_value(group or user)};"
    else:
        user_directive = "# Not started as root: the workers run as the invoking user (no user directive)."
    optional = [
        f"    {module}_temp_path {prefix}/temp/{module};"
        for module in ("uwsgi", "scgi")
        if f"--without-http_{module}_module" not in nginx_V
    ]
    values = {
        "user_directive": user_directive,
        "worker_rlimit_nofile": str(rlimit),
        "prefix": nginx_value(prefix),
        "socket": nginx_value(socket),
        "http_socket": nginx_value(http_socket) if http_socket else "",
        "fastcgi_params": nginx_value(fastcgi_params),
        "listen_address": nginx_value(url_host(listen_address)),
        "optional_temp_paths": "\n".join(optional),
    }
    for name, file_name in APP_SOCKETS.items():  # --app-unix's and --app-fcgi's sockets, beside Go's in the work dir
        values[f"{name.replace('-', '_')}_socket"] = nginx_value(str(Path(prefix).parent / file_name))
    values.update(static_body_values(manifest["parameters"].get("body_bytes", len(HELLO_LINE))))
    # The run's key and certificate: made by run_bench.sh in the private work dir, beside nginx's prefix.
    values.update(nginx_tls_values(manifest["parameters"], nginx_value(str(Path(prefix).parent / "tls"))))
    for name, port in manifest["parameters"]["ports"].items():
        values["port_" + name.replace("-", "_")] = str(port)
    return values


def nginx_sections(setups: list[str]) -> list[str]:
    """Return the template sections (nginx server blocks) the setups need: 'nginx-https-new' needs 'nginx-https's."""
    served = dict.fromkeys(SETUP_BY_ID[s].served_by for s in setups)
    return [s for s in served if SETUP_BY_ID[s].server == "nginx"]


def nginx_flags(manifest: dict) -> dict[str, bool]:
    """Return the template's #@if flags for this run."""
    setups = manifest["parameters"].get("setups", [])
    return {
        "upstream_keepalive": manifest["parameters"].get("upstream_keepalive", True),
        "tls": any(SETUP_BY_ID[s].tls and SETUP_BY_ID[s].server == "nginx" for s in setups if s in SETUP_BY_ID),
    }


# nginx reads its configuration through a 4096-byte buffer and refuses a longer token
# ("too long parameter"). A static body whose quoted text would be longer than
# STATIC_TOKEN_CHARS comes from map variables of STATIC_CHUNK_BYTES each instead.
STATIC_TOKEN_CHARS = 2000


STATIC_CHUNK_BYTES = 1800


def nginx_quote(text: str) -> str:
    """Return a body as the inside of an nginx double-quoted string: 'Hello World\\n' -> 'Hello World\\\\n'.

    Bodies are made of 'Hello World\\n' only, so a newline is the one character to escape.
    """
    return text.replace("\n", "\\n")


def static_body_values(body_bytes: int) -> dict[str, str]:
    """Return nginx-static's `return` text and the map blocks it needs for a body of that size.

    12 bytes: return 200 "Hello World\\n"; a body too long for one token comes from map
    variables with constant values ($static_body_0 ...), concatenated per request.
    """
    body = body_text(body_bytes)
    if len(nginx_quote(body)) <= STATIC_TOKEN_CHARS:
        return {"static_body_maps": "    # The body fits in one token: no map needed.", "static_return": f'"{nginx_quote(body)}"'}
    maps, names = [], []
    for i in range(0, len(body), STATIC_CHUNK_BYTES):
        name = f"static_body_{len(names)}"
        names.append(f"${name}")
        maps.append(f'    map $server_port ${name} {{ default "{nginx_quote(body[i : i + STATIC_CHUNK_BYTES])}"; }}')
    return {"static_body_maps": "\n".join(maps), "static_return": f'"{"".join(names)}"'}


# The error log is at the article's level, crit, which logs every failed upstream connect
# ("Permission denied" on the socket): a setup answering 502 for a whole measurement would
# write hundreds of MB. The driver keeps the first ERROR_LOG_CAP_BYTES of each pass's log
# (the first errors say what went wrong) and drops the rest after each measurement.
ERROR_LOG_CAP_BYTES = 1 << 20
CAP_NOTE = b"[wrkreport] "
CAP_NOTE_LINE = re.compile(rb"\[wrkreport\] log capped at [0-9]+ bytes: (?P<dropped>[0-9]+) bytes of later lines dropped\n")


def nginx_error_log(run_dir: Path, gomaxprocs: int) -> Path:
    """Return the pass's nginx error log (run_bench.sh gives nginx this path with -e and -g)."""
    return run_dir / "logs" / f"nginx-error.gomaxprocs-{gomaxprocs}.log"


def nginx_error_logs(run_dir: Path, gomaxprocs: int) -> list[Path]:
    """Return the pass's logs capped as nginx's error log: the run's nginx's, with --variant its nginx's (variant.sh), with --app the app's (app.sh; appended with O_APPEND too)."""
    # app.gomaxprocs-N.log, app.gomaxprocs-N.block-B.log; --app-unix's app-unix..., --app-fcgi's app-fcgi..., --app-b's app-NAME...
    apps = sorted((run_dir / "logs").glob(f"app*.gomaxprocs-{gomaxprocs}.*log"))
    return [nginx_error_log(run_dir, gomaxprocs), run_dir / "logs" / f"nginx-variant-error.gomaxprocs-{gomaxprocs}.log", *apps]


def cap_log(path: Path, cap_bytes: int = ERROR_LOG_CAP_BYTES) -> int:
    """Cut a log nginx appends to back to its first cap_bytes (whole lines) plus one note of the cut; return the bytes dropped so far.

    nginx opens the log with O_APPEND, so its next lines land after the note; a later cut
    replaces the note with one counting every byte dropped from this log.
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size <= cap_bytes:
        return 0
    with open(path, "rb") as f:
        head = f.read(cap_bytes + 200)  # room for a note that starts just before the cap
    note = CAP_NOTE_LINE.search(head, 0)
    if note is not None and note.start() <= cap_bytes:
        keep, earlier = note.start(), int(note["dropped"]) - note.end() + note.start()
    else:
        keep, earlier = head.rfind(b"\n", 0, cap_bytes) + 1, 0
    dropped = earlier + size - keep
    os.truncate(path, keep)
    with open(path, "ab") as f:
        f.write(CAP_NOTE + f"log capped at {cap_bytes} bytes: {dropped} bytes of later lines dropped\n".encode())
    return dropped
