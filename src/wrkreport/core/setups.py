"""The setup table: every setup the driver measures and the report reads, in one place.

Each row says what a setup is (its id and description), who answers the load generator
(the server, its default port, the nginx modules and processes it needs), its kind (plain,
TLS, a new connection per request) and what its ratios divide by. A --variant twin
(ORIGINAL~NAME: an nginx setup served by the variant's own nginx) is made from its
original's row; so is --app-b's twin of the app alone (app~NAME: the app's second build,
APP_B_SERVER), whose nginx-app~NAME is nginx in front of that build. The driver's helper (bench/), the readers (parsers/schema, runs/sidecars, the fixed-rate
reader) and the report all read these rules from here; tests/test_layout.py fails when one
is defined anywhere else. A new setup is a row here, a block in templates/nginx.conf.tmpl
(for nginx setups) and, for a new backend, a flag of the Go server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BASELINE = "go-http"  # Go standalone: what every ratio divides by unless its row says otherwise
TLS_BASELINE = "go-https"  # what the TLS setups divide by (itself divided by go-http)
H2_BASELINE = "go-h2"  # what nginx's HTTP/2 setups divide by (itself divided by go-http)
APP_BASELINE = "app"  # --app: the user's own server alone, what the app setups divide by
# The user's own server processes, each in a session of its own: --app's (HTTP on a TCP port:
# the baseline), --app-unix's (HTTP on a Unix socket) and --app-fcgi's (FastCGI on a port or socket).
APP_PROCESSES = ("app", "app-unix", "app-fcgi")
APP_B_SERVER = "appb"  # --app-b: the app's second build, serving app~NAME (and, through the variant's nginx, nginx-app~NAME)
# The front ends in nginx's place, each a Debian package run as a private process
# from a configuration rendered into the run directory, in a session of its own (its CPU: the
# whole session), answering with its own header block (what it changed from go-http's listed).
FRONT_ENDS = ("haproxy", "caddy", "apache")
# Processes whose CPU time a measurement's .cpu.json records (docs/raw-format.md): the servers, then "wrk", the load generator
# (wrk, ab or h2load). The app's and the front ends' are there only when the run has them.
SERVER_PROCESSES = ("go", "fasthttp", "node", "app", "nginx", *FRONT_ENDS)
CPU_PROCESSES = (*SERVER_PROCESSES, "wrk")
BACKEND_PROCESSES = (
    "go",
    "fasthttp",
    "node",
    "app",
)  # the server in Go's place: the CPU the page counts as Go's; the others the front end's
FRONT_END_NAMES = {"nginx": "nginx", "haproxy": "HAProxy", "caddy": "Caddy", "apache": "Apache httpd"}  # as the page writes them


@dataclass(frozen=True)
class Setup:
    """One measured setup: who answers the load generator, on which default port, what it depends on and divides by."""

    id: str
    server: str  # the process the load generator talks to: "go" (gohello), "nginx", "fasthttp" (gofasthttp), "node" (nodehello), "app" (--app), VARIANT_SERVER, APP_B_SERVER
    default_port: int
    description: str
    nginx_modules: tuple[str, ...] = ()  # modules this setup's server block uses
    needs: tuple[str, ...] = ("go",)  # processes that must run for it to answer
    default: bool = True  # measured without --setups (the article's four)
    tls: bool = (
        False  # speaks TLS (https): the run's key, version and resumption; selected by --setups tls, with go-http (h2 ones: --setups h2)
    )
    h2: bool = False  # speaks HTTP/2 over TLS (ALPN h2), loaded with h2load: selected by --setups h2, with go-http
    multiplexed: bool = False  # an h2 setup loaded with the second --streams value (h2load -m, default 10): the same server as `serves`
    # A new connection per request (wrk sends "Connection: close"): the same server, port and
    # nginx server block as `serves`, loaded otherwise. The TLS ones measure handshakes.
    new_connection: bool = False
    serves: str | None = None  # the setup whose server answers it (its port, its nginx block); None: itself
    divides_by: str = BASELINE  # the setup its ratios divide by

    @property
    def served_by(self) -> str:
        """Return the setup whose server, port and nginx server block this one uses: 'nginx-https-new' -> 'nginx-https'."""
        return self.serves or self.id

    @property
    def baseline(self) -> str:
        """Return the setup this one's ratios divide by (a twin: its original's)."""
        return baseline_of(self.id)

    @property
    def variant(self) -> str | None:
        """Return the variant this setup is a twin for ('nginx-http~nokeep' -> 'nokeep'), None for a setup of the table."""
        return split_twin(self.id)[1]

    @property
    def kind(self) -> str:
        """Return the setup's kind: 'variant twin', 'new connection' (a TLS handshake per request), 'multiplexed h2', 'h2', 'tls' or 'plain'."""
        if self.variant:
            return "variant twin"
        if self.new_connection:
            return "new connection"
        return "multiplexed h2" if self.multiplexed else "h2" if self.h2 else "tls" if self.tls else "plain"

    @property
    def app(self) -> bool:
        """Return True for a setup serving the user's own server (--app, --app-unix, --app-fcgi; app~NAME: its --app-b build): it needs an app process."""
        return self.app_process is not None or APP_B_SERVER in self.needs

    @property
    def app_process(self) -> str | None:
        """Return the process of --app, --app-unix or --app-fcgi this setup serves ('nginx-app-unix' -> 'app-unix'), None for the others (--app-b's build too)."""
        return next((need for need in self.needs if need in APP_PROCESSES), None)

    @property
    def cpu_processes(self) -> tuple[str, ...]:
        """Return the names its .cpu.json counts it by (bench/cpu.py pids_for): a twin's nginx as "nginx", any app process (--app-b's build too) as "app"."""
        return tuple(
            "nginx" if need == VARIANT_SERVER else "app" if need in (*APP_PROCESSES, APP_B_SERVER) else need for need in self.needs
        )

    @property
    def own_answer(self) -> bool:
        """Return True for a setup whose header block is its own (an --app setup, another front end than nginx): held to its own
        size and compared with its reference's (the app alone's, go-http's), not with the hello world's 141 bytes."""
        return self.app or self.server in FRONT_ENDS

    @property
    def nginx_to_go(self) -> bool:
        """Return True for an nginx-to-Go connection over plain HTTP: the setups whose share of Go's throughput the answer states."""
        return self.server == "nginx" and "go" in self.needs and not self.tls


PROXY = ("http_proxy", "http_upstream_keepalive")
FASTCGI = ("http_fastcgi", "http_upstream_keepalive")
TLS_PROXY = ("+http_ssl", *PROXY)  # "+http_ssl": a module nginx is only built with on request
H2_PROXY = ("+http_v2", *TLS_PROXY)  # nginx terminating TLS and HTTP/2 (nginx-light here has it)
NGINX_AND_GO = ("nginx", "go")


def front_end_setups(front: str, name: str, port: int) -> tuple[Setup, ...]:
    """Return a front end's three setups in nginx's place: its HTTP proxy to go-http and its FastCGI to Go over TCP and a Unix socket."""
    return (
        Setup(
            f"{front}-http",
            front,
            port,
            f"{name} reverse proxy to Go net/http over TCP (HTTP/1.1, keep-alive to Go)",
            (),
            (front, "go"),
            default=False,
        ),
        Setup(f"{front}-fcgi-tcp", front, port + 1, f"{name} FastCGI to Go over TCP", (), (front, "go"), default=False),
        Setup(f"{front}-fcgi-unix", front, port + 2, f"{name} FastCGI to Go over a Unix socket", (), (front, "go"), default=False),
    )


# Order = display order. The first four are the article's; the others are off by default.
# (a table: one setup per entry, as written, not as the formatter would spread it)
# fmt: off
SETUPS: tuple[Setup, ...] = (
    Setup("go-http", "go", 8080, "Go net/http standalone (the control group)"),
    Setup("nginx-http", "nginx", 8081, "nginx reverse proxy to Go net/http over TCP", PROXY, NGINX_AND_GO),
    Setup("nginx-fcgi-tcp", "nginx", 8082, "nginx FastCGI to Go over TCP", FASTCGI, NGINX_AND_GO),
    Setup("nginx-fcgi-unix", "nginx", 8083, "nginx FastCGI to Go over a Unix socket", FASTCGI, NGINX_AND_GO),
    Setup("nginx-http-unix", "nginx", 8084, "nginx reverse proxy to Go net/http over a Unix socket", PROXY, NGINX_AND_GO, default=False),
    Setup("go-fasthttp", "fasthttp", 8085, "Go fasthttp standalone", (), ("fasthttp",), default=False),
    # `return` is the rewrite module's; a body too long for one nginx token also needs map.
    Setup("nginx-static", "nginx", 8086, "nginx answering by itself (return 200): the ceiling", ("http_rewrite", "http_map"), ("nginx",), default=False),
    Setup("node-http", "node", 8087,
          "Node.js http module standalone (src/nodehello): one process at GOMAXPROCS=1, a cluster of N workers at GOMAXPROCS=N",
          (), ("node",), default=False),
    # TLS termination: Go's crypto/tls alone (over go-http: what TLS costs Go), and nginx's
    # OpenSSL in front of Go net/http on TCP and on a Unix socket (over Go's crypto/tls).
    Setup("go-https", "go", 8443, "Go net/http over crypto/tls standalone (the control group of the TLS setups)", default=False, tls=True),
    Setup("nginx-https", "nginx", 8444, "nginx terminating TLS, reverse proxy to Go net/http over TCP", TLS_PROXY, NGINX_AND_GO,
          default=False, tls=True, divides_by=TLS_BASELINE),
    Setup("nginx-https-unix", "nginx", 8445, "nginx terminating TLS, reverse proxy to Go net/http over a Unix socket", TLS_PROXY, NGINX_AND_GO,
          default=False, tls=True, divides_by=TLS_BASELINE),
    # The same three with a new connection per request: every request a TLS handshake; Go's over
    # go-https (what a handshake per request costs Go), nginx's over Go's in the same mode.
    Setup("go-https-new", "go", 8443, "go-https with a new connection per request (Connection: close): every request a TLS handshake",
          default=False, tls=True, new_connection=True, serves="go-https", divides_by=TLS_BASELINE),
    Setup("nginx-https-new", "nginx", 8444, "nginx-https with a new connection per request: every request a TLS handshake at nginx", TLS_PROXY,
          NGINX_AND_GO, default=False, tls=True, new_connection=True, serves="nginx-https", divides_by="go-https-new"),
    Setup("nginx-https-unix-new", "nginx", 8445, "nginx-https-unix with a new connection per request: every request a TLS handshake at nginx",
          TLS_PROXY, NGINX_AND_GO, default=False, tls=True, new_connection=True, serves="nginx-https-unix", divides_by="go-https-new"),
    # HTTP/2 over TLS (ALPN h2), loaded with h2load: Go's own h2 (net/http's, over go-http: what
    # h2 and TLS cost Go), and nginx terminating TLS and h2 in front of Go net/http over
    # HTTP/1.1 with upstream keep-alive, on TCP and on a Unix socket (over Go's own h2).
    Setup("go-h2", "go", 8446, "Go net/http over crypto/tls serving HTTP/2 itself (ALPN h2), standalone: the control group of the h2 setups",
          default=False, tls=True, h2=True),
    Setup("nginx-h2", "nginx", 8447, "nginx terminating TLS and HTTP/2, reverse proxy to Go net/http over TCP (HTTP/1.1, upstream keep-alive)",
          H2_PROXY, NGINX_AND_GO, default=False, tls=True, h2=True, divides_by=H2_BASELINE),
    Setup("nginx-h2-unix", "nginx", 8448, "nginx terminating TLS and HTTP/2, reverse proxy to Go net/http over a Unix socket (HTTP/1.1, upstream keep-alive)",
          H2_PROXY, NGINX_AND_GO, default=False, tls=True, h2=True, divides_by=H2_BASELINE),
    # The same three with several streams in flight per connection (the second --streams
    # value): Go's over go-h2 (what multiplexing does for Go), nginx's over Go's in the same mode.
    Setup("go-h2-mux", "go", 8446, "go-h2 with several streams in flight per connection (the second --streams value): multiplexing",
          default=False, tls=True, h2=True, multiplexed=True, serves="go-h2", divides_by=H2_BASELINE),
    Setup("nginx-h2-mux", "nginx", 8447, "nginx-h2 with several streams in flight per connection: multiplexing at nginx", H2_PROXY, NGINX_AND_GO,
          default=False, tls=True, h2=True, multiplexed=True, serves="nginx-h2", divides_by="go-h2-mux"),
    Setup("nginx-h2-unix-mux", "nginx", 8448, "nginx-h2-unix with several streams in flight per connection: multiplexing at nginx", H2_PROXY,
          NGINX_AND_GO, default=False, tls=True, h2=True, multiplexed=True, serves="nginx-h2-unix", divides_by="go-h2-mux"),
    # --app: the user's own HTTP server (its command line) alone, and behind nginx's HTTP proxy
    # (as nginx-http's configuration); chosen by default with --app, refused without it.
    Setup("app", "app", 8088, "your app alone (--app): the control group of the app setups", (), ("app",), default=False,
          divides_by=APP_BASELINE),
    Setup("nginx-app", "nginx", 8089, "nginx reverse proxy to your app over TCP (upstream keep-alive)", PROXY, ("nginx", "app"),
          default=False, divides_by=APP_BASELINE),
    # --app-unix and --app-fcgi: the same app started otherwise (its own process beside --app's),
    # behind nginx's HTTP proxy on a Unix socket and behind nginx's FastCGI on a port or a socket.
    Setup("nginx-app-unix", "nginx", 8090, "nginx reverse proxy to your app over a Unix socket (--app-unix, upstream keep-alive)", PROXY,
          ("nginx", "app-unix"), default=False, divides_by=APP_BASELINE),
    Setup("nginx-app-fcgi-tcp", "nginx", 8091, "nginx FastCGI to your app over TCP (--app-fcgi with {port}, fastcgi_keep_conn)", FASTCGI,
          ("nginx", "app-fcgi"), default=False, divides_by=APP_BASELINE),
    Setup("nginx-app-fcgi-unix", "nginx", 8092, "nginx FastCGI to your app over a Unix socket (--app-fcgi with {socket}, fastcgi_keep_conn)", FASTCGI,
          ("nginx", "app-fcgi"), default=False, divides_by=APP_BASELINE),
    # Other front ends in nginx's place, off by default: --setups front-ends selects
    # go-http, nginx-http and their three HTTP proxies; each divides by go-http as nginx's do.
    *front_end_setups("haproxy", "HAProxy", 8093),
    *front_end_setups("caddy", "Caddy", 8096),
    *front_end_setups("apache", "Apache httpd", 8099),
)
# fmt: on

SETUP_IDS = tuple(s.id for s in SETUPS)
DEFAULT_SETUP_IDS = tuple(s.id for s in SETUPS if s.default)
TLS_SETUP_IDS = tuple(s.id for s in SETUPS if s.tls and not s.h2)  # the HTTP/1.1 TLS setups: --setups tls, the page's TLS section
H2_SETUP_IDS = tuple(s.id for s in SETUPS if s.h2)  # go-h2, nginx-h2, nginx-h2-unix and their -mux: --setups h2, loaded with h2load
PLAIN_SETUP_IDS = tuple(s.id for s in SETUPS if not s.tls and not s.app)  # what --setups all selects
APP_SETUP_IDS = tuple(s.id for s in SETUPS if s.app)  # --app's setups: app, nginx-app and those of --app-unix and --app-fcgi
NGINX_SETUPS = tuple(s.id for s in SETUPS if s.nginx_to_go)  # nginx-http, -fcgi-tcp, -fcgi-unix, -http-unix
# Every front end's plain HTTP or FastCGI connection to Go: the candidates for the cheapest, compared head to head.
FRONTED_SETUPS = (*NGINX_SETUPS, *(s.id for s in SETUPS if s.server in FRONT_ENDS))
NEW_CONNECTION_SETUPS = tuple(s.id for s in SETUPS if s.new_connection)  # a TLS handshake per request
BASELINES = {s.id: s.divides_by for s in SETUPS if s.divides_by != BASELINE}  # every setup not divided by go-http
FRONT_END_SETUP_IDS = tuple(s.id for s in SETUPS if s.server in FRONT_ENDS)  # haproxy-http ... apache-fcgi-unix
CONNECTION_WORDS = {
    "http": "HTTP proxy",
    "fcgi-tcp": "FastCGI over TCP",
    "fcgi-unix": "FastCGI over a Unix socket",
    "http-unix": "HTTP proxy over a Unix socket",
}
FRONT_ENDS_GROUP_IDS = ("go-http", "nginx-http", *(f"{front}-http" for front in FRONT_ENDS))  # --setups front-ends
ALL_SETUPS = "all"  # --setups all: every setup in the table but the TLS ones (those need openssl: --setups all,tls)
TLS_GROUP = "tls"  # --setups tls: go-http and every TLS setup
H2_GROUP = "h2"  # --setups h2: go-http and every HTTP/2 setup
FRONT_ENDS_GROUP = "front-ends"  # --setups front-ends: go-http, nginx-http and the HTTP proxies of HAProxy, Caddy and Apache httpd

# Ports the Go server always binds besides go-http's (which nginx-http proxies to).
BACKEND_PORTS = {"go-fcgi-tcp": 9001}
APP_FCGI_PORT = "app-fcgi"  # --app-fcgi with {port}: the port its FastCGI server listens on (nginx-app-fcgi-tcp's upstream)
FCGI_TCP_SETUP, FCGI_UNIX_SETUP = "nginx-app-fcgi-tcp", "nginx-app-fcgi-unix"  # --app-fcgi's setup: with {port}, with {socket}
APP_BACKEND_PORTS = {APP_FCGI_PORT: 9002}
DEFAULT_PORTS = {
    **{s.id: s.default_port for s in SETUPS if s.serves is None},
    **BACKEND_PORTS,
    **APP_BACKEND_PORTS,
}  # a new-connection setup has its server's

# --- Names and --variant twins ----------------------------------------------------------
# A setup name as the readers take it (a file name's first part, a manifest key): letters,
# digits, '-' and '_'. A --variant twin is ORIGINAL~NAME ('nginx-http~nokeep'): '~' is in no
# setup id, is unreserved in URLs and plain in file names and shell words, and NAME is a
# short lowercase word. The variant's nginx listens on each setup's port + VARIANT_PORT_OFFSET.
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}"
VARIANT_PATTERN = r"[a-z][a-z0-9]{0,15}"
TWIN_SEPARATOR = "~"
SETUP_PATTERN = rf"{NAME_PATTERN}(?:{TWIN_SEPARATOR}{VARIANT_PATTERN})?"  # any setup name, a twin's too
SETUP_NAME = re.compile(SETUP_PATTERN)
VARIANT_NAME = re.compile(VARIANT_PATTERN)
TWIN = re.compile(rf"(?P<original>{NAME_PATTERN}){TWIN_SEPARATOR}(?P<variant>{VARIANT_PATTERN})")
VARIANT_PORT_OFFSET = 100
VARIANT_SERVER = "vnginx"  # the variant's nginx among the servers a pass starts (SERVERS)

# The servers a pass may start, in start order (each started only when a chosen setup needs it).
SERVERS = ("go", "nginx", "fasthttp", "node", *APP_PROCESSES, APP_B_SERVER, VARIANT_SERVER, *FRONT_ENDS)


def braced(ids) -> str:
    """Return setup ids as a shell's braces write them, those of one prefix together and prefixes of the same suffixes merged.

    >>> braced(["go-http", "go-fasthttp", "node-http", "haproxy-http", "haproxy-fcgi-tcp", "caddy-http", "caddy-fcgi-tcp"])
    'go-{http,fasthttp}, node-http, {haproxy,caddy}-{http,fcgi-tcp}'
    """
    suffixes: dict[str, list[str]] = {}
    for setup in ids:
        prefix, _, rest = setup.partition("-")
        suffixes.setdefault(prefix, []).append(rest)
    merged: dict[tuple[str, ...], list[str]] = {}
    for prefix, rests in suffixes.items():
        merged.setdefault(tuple(rests), []).append(prefix)

    def one(prefixes: list[str], rests: tuple[str, ...]) -> str:
        left = prefixes[0] if len(prefixes) == 1 else f"{{{','.join(prefixes)}}}"
        return f"{left}-{rests[0]}" if len(rests) == 1 else f"{left}-{{{','.join(rests)}}}"

    return ", ".join(one(prefixes, rests) for rests, prefixes in merged.items())


def backend_of(parameters) -> str:
    """Return what the front end is in front of, for the page's titles (parameters: runs.record.Parameters): 'your app' in an --app run without go-http, else 'Go'."""
    return "your app" if parameters.app and BASELINE not in (parameters.setups or ()) else "Go"


def other_front_ends(setups) -> bool:
    """Return True for a run with another front end than nginx (HAProxy, Caddy, Apache httpd): its words name each front end."""
    return any(s in FRONT_END_SETUP_IDS for s in setups)


def front_end_words(setup: str, setups=()) -> str | None:
    """Return a front end's connection in words, its front end named: 'HAProxy's HTTP proxy', 'Apache httpd's FastCGI over TCP';
    nginx's too ("nginx's HTTP proxy") in a run with another front end (setups); None for any other setup.

    >>> front_end_words("caddy-fcgi-unix"), front_end_words("nginx-http", ["nginx-http", "haproxy-http"]), front_end_words("nginx-http")
    ("Caddy's FastCGI over a Unix socket", "nginx's HTTP proxy", None)
    """
    known = SETUP_BY_ID.get(setup)
    if known is None or (known.server == "nginx" and not other_front_ends(setups)):
        return None
    if known.server in FRONT_ENDS or setup in NGINX_SETUPS:
        return f"{FRONT_END_NAMES[known.server]}'s {CONNECTION_WORDS[setup.split('-', 1)[1]]}"
    return None


def split_twin(setup: str) -> tuple[str, str | None]:
    """Return (original, variant) of a twin id, (setup, None) for any other: 'nginx-http~nokeep' -> ('nginx-http', 'nokeep')."""
    match = TWIN.fullmatch(setup)
    return (match["original"], match["variant"]) if match else (setup, None)


def twin_id(setup: str, variant: str) -> str:
    """Return the id of a setup's twin for a variant: ('nginx-http', 'nokeep') -> 'nginx-http~nokeep'."""
    return f"{setup}{TWIN_SEPARATOR}{variant}"


def baseline_of(setup: str) -> str:
    """Return the setup a setup's ratios divide by: 'nginx-https' -> 'go-https', 'nginx-https-new' -> 'go-https-new'; others (go-https too, unknown ones) -> 'go-http'; a twin: its original's."""
    return BASELINES.get(split_twin(setup)[0], BASELINE)


def baseline_in(setup: str, measured) -> str:
    """Return what a setup's ratios divide by in a run that measured `measured`: baseline_of, except that a twin divides by its
    baseline's own twin when the run has it: with --app-b, nginx-app~b (nginx in front of build B) by app~b (build B alone), not
    by build A; a --variant twin (nginx-http~nokeep, nginx-app~nokeep: another nginx, the same backend) by its original's baseline.

    >>> baseline_in("nginx-app~b", {"app", "nginx-app", "app~b", "nginx-app~b"}), baseline_in("nginx-app~nokeep", {"app", "nginx-app", "nginx-app~nokeep"})
    ('app~b', 'app')
    """
    base = baseline_of(setup)
    variant = split_twin(setup)[1]
    twin = twin_id(base, variant) if variant else None
    return twin if twin and twin != setup and twin in measured else base


def streams_of(setup: str, streams, streams_mux):
    """Return the requests a setup keeps in flight per connection under h2load (-m): `streams_mux` for a multiplexed h2
    setup (go-h2-mux & co.), `streams` for the other h2 ones, 1 for the HTTP/1.1 setups (--h1: one request at a time).

    >>> streams_of("nginx-h2-mux", 1, 10), streams_of("go-h2", 1, 10), streams_of("go-http", 4, 10)
    (10, 1, 1)
    """
    known = SETUP_BY_ID.get(split_twin(setup)[0])  # a --variant twin is loaded as its original
    if known is None or not known.h2:
        return 1
    return streams_mux if known.multiplexed else streams


def is_app(setup: str) -> bool:
    """Return True for a setup of --app (app, nginx-app, ...): judged against the app's own answer, not the hello world's.

    >>> is_app("nginx-app"), is_app("nginx-http"), is_app("unknown")
    (True, False, False)
    """
    return setup in APP_SETUP_IDS


def hello_world(setup: str) -> bool:
    """Return True for a setup serving the project's own handler (the 2013 article's hello world), False for an --app one."""
    known = SETUP_BY_ID.get(split_twin(setup)[0])
    return known is None or not known.app


def divisor_words(setups) -> str:
    """Return whose figures a run's plain ratios divide by, possessive, for its method sentences (written for go-http):
    "go-http's", "app's" (an --app run), or "go-http's (app's for your app's setups)" when it has both.

    >>> divisor_words(["go-http", "nginx-http"]), divisor_words(["app", "nginx-app"]), divisor_words(["go-http", "app"])
    ("go-http's", "app's", "go-http's (app's for your app's setups)")
    """
    if main_divisor(setups) == APP_BASELINE:
        return f"{APP_BASELINE}'s"
    return f"{BASELINE}'s ({APP_BASELINE}'s for your app's setups)" if APP_BASELINE in plain_baselines(setups) else f"{BASELINE}'s"


def plain_baselines(setups) -> set[str]:
    """Return which of go-http and app the run's plain ratios divide by ({'go-http'}, {'app'} or both)."""
    return {baseline_of(s) for s in setups} & {BASELINE, APP_BASELINE}


def main_divisor(setups) -> str:
    """Return the setup most of a run's ratios divide by: go-http, or app for a run of --app setups only."""
    return APP_BASELINE if plain_baselines(setups) == {APP_BASELINE} else BASELINE


def said_over(text: str, setups) -> str:
    """Return a method sentence written for go-http with the run's own divisor in its place (divisor_words): unchanged for a hello world run."""
    return text.replace(f"{BASELINE}'s", divisor_words(setups))


def setup_description(setup: str) -> str:
    """Return what a setup is ('' when unknown); a twin: 'nginx-http served by the --variant nokeep nginx'."""
    original, variant = split_twin(setup)
    if variant and original == APP_BASELINE:
        return f"your app's build {variant} alone (--app-b; the twin of app, measured in the same rounds)"
    if variant and original in APP_SETUP_IDS:  # nginx-app~NAME: the id alone does not say whether --variant or --app-b made it
        return (
            f"{original}'s twin, measured in the same rounds: the --variant {variant} nginx in front of your app, or with --app-b "
            f"nginx configured as {original} in front of your app's build {variant}"
        )
    if variant:
        return f"{original} served by the --variant {variant} nginx (its twin, measured in the same rounds)"
    known = SETUP_BY_ID.get(setup)
    return known.description if known else ""


def setup_order(setup: str) -> float:
    """Return a setup's position for display: known setups in their order, a twin just after its original, others after."""
    original, variant = split_twin(setup)
    place = SETUP_IDS.index(original) if original in SETUP_IDS else len(SETUP_IDS)
    return place + 0.5 if variant else place


def twin_of(original: Setup, variant: str) -> Setup:
    """Return the twin of a setup for a variant on port + offset: an nginx setup's is the same server block served by the variant's
    nginx (in front of the --app-b build in a run with one: bench.variant.run_needs), the app's is its --app-b build alone."""
    if original.id == APP_BASELINE:
        return Setup(
            twin_id(original.id, variant),
            APP_B_SERVER,
            original.default_port + VARIANT_PORT_OFFSET,
            setup_description(twin_id(original.id, variant)),
            needs=(APP_B_SERVER,),
            default=False,
            divides_by=original.divides_by,
        )
    return Setup(
        twin_id(original.id, variant),
        VARIANT_SERVER,
        original.default_port + VARIANT_PORT_OFFSET,
        setup_description(twin_id(original.id, variant)),
        original.nginx_modules,
        tuple(VARIANT_SERVER if need == "nginx" else need for need in original.needs),
        default=False,
        tls=original.tls,
        h2=original.h2,
        multiplexed=original.multiplexed,
        new_connection=original.new_connection,
        serves=twin_id(original.serves, variant) if original.serves else None,
        divides_by=original.divides_by,
    )


class SetupTable(dict):
    """The setups by id: those of SETUPS, and the twin of any nginx setup (or of the app alone) for any well-formed variant name, made on demand."""

    def twin(self, key) -> Setup | None:
        """Return the twin key names, None when key is not a twin of an nginx setup or of the app alone."""
        original, variant = split_twin(key) if isinstance(key, str) else (key, None)
        known = dict.get(self, original)
        return twin_of(known, variant) if variant and known is not None and (known.server == "nginx" or known.id == APP_BASELINE) else None

    def __missing__(self, key):
        found = self.twin(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or self.twin(key) is not None

    def get(self, key, default=None):
        """Return the setup of key (a twin too), default when there is none."""
        return self[key] if key in self else default


SETUP_BY_ID = SetupTable((s.id, s) for s in SETUPS)
