"""A small HTTP/1.1 JSON service in Python's standard library: the app of tests/test_driver_app.py (run_bench.sh --app).

Not part of the project's Go code, and shaped like a real one: keep-alive HTTP/1.1, a JSON
body computed per request, optional worker processes sharing the listening socket (so the
CPU of a process tree is counted), and an API key it checks (401 without it).

    python3 tests/app_server.py PORT [--host ADDRESS] [--workers N] [--key-env NAME] [--echo-peer] [--items N]
    python3 tests/app_server.py --unix PATH [...]     HTTP on a Unix socket (run_bench.sh --app-unix)
    python3 tests/app_server.py --fcgi PORT|PATH [...] the same answers as a FastCGI (WSGI) server with flup (--app-fcgi)

--host ADDRESS: where it listens (127.0.0.1 by default; run_bench.sh --app's {host}).

--fcgi serves a WSGI version of the handler with flup's threaded FastCGI server (pip package
flup, in the test extra); a number is a TCP port on 127.0.0.1, anything else a socket path.

--key-env NAME: the API key is in that environment variable (not on the command line, which
run_bench.sh records); requests without `Authorization: Bearer KEY` get 401.

--echo-peer puts the client's port into the body: nginx's requests then differ from curl's,
the app answering differently behind nginx.

--items N: the JSON list's length (default 20): another build of the same service, with
another body and another amount of work per request (--app-b's tests).
"""

from __future__ import annotations

import argparse
import json
import os
import socketserver
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def answer_for(path: str, authorization: str | None, key: str | None, peer, items: int = 20) -> tuple[int, dict]:
    """Return (status, body) of a GET of path: /data.json answers a JSON list of items; any other path 404; 401 without the key."""
    if key is not None and authorization != f"Bearer {key}":
        return 401, {"error": "no key"}
    if path.split("?")[0] != "/data.json":
        return 404, {"error": "not found"}
    listed = [{"id": i, "name": f"item {i}", "square": i * i} for i in range(items)]
    body = {"items": listed, "total": sum(item["square"] for item in listed)}
    if peer is not None:
        body["peer"] = peer
    return 200, body


def handler_class(key: str | None, echo_peer: bool, items: int = 20, tcp: bool = True):
    """Return the request handler: GET /data.json answers a JSON list; any other path 404."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = tcp  # headers and body are two writes: without it each answer waits for a delayed ACK (TCP only)
        server_version = "app_server/1"
        sys_version = ""

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            peer = (self.client_address[1] if isinstance(self.client_address, tuple) else str(self.client_address)) if echo_peer else None
            return self.answer(*answer_for(self.path, self.headers.get("Authorization"), key, peer, items))

        def answer(self, status: int, body: dict) -> None:
            data = json.dumps(body, sort_keys=True).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args) -> None:  # noqa: A002 (http.server's name): quiet under load
            return

    return Handler


# Both servers' listen backlog: a real server's (Go's: somaxconn), not socketserver's 5. Past it a Unix socket refuses
# the connection (nginx: 502) and TCP drops the SYN, retried 1 s later: with nginx opening a connection per request (a
# variant without upstream keepalive) on a busy machine, a whole 1-s measurement once completed 0 requests.
BACKLOG = 1024


class TcpHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer with BACKLOG."""

    daemon_threads = True
    request_queue_size = BACKLOG


class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """ThreadingHTTPServer's twin on a Unix socket, with BACKLOG."""

    daemon_threads = True
    request_queue_size = BACKLOG


def wsgi_app(key: str | None, echo_peer: bool, items: int):
    """Return the handler as a WSGI application, for flup's FastCGI server: the same status, headers and body."""

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "") + (f"?{environ['QUERY_STRING']}" if environ.get("QUERY_STRING") else "")
        status, body = answer_for(path, environ.get("HTTP_AUTHORIZATION"), key, environ.get("REMOTE_PORT") if echo_peer else None, items)
        data = json.dumps(body, sort_keys=True).encode()
        start_response(f"{status} {HTTPStatus(status).phrase}", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]

    return app


def serve_fcgi(where: str, key: str | None, echo_peer: bool, items: int) -> int:
    """Serve the WSGI app with flup's threaded FastCGI server on a port of 127.0.0.1 (a number) or a Unix socket (a path)."""
    from flup.server.fcgi import WSGIServer

    address = ("127.0.0.1", int(where)) if where.isdigit() else where
    print(f"app_server: FastCGI on {where}, GOMAXPROCS={os.environ.get('GOMAXPROCS')}, pgid {os.getpgid(0)}", flush=True)
    WSGIServer(wsgi_app(key, echo_peer, items), bindAddress=address, umask=0o077).run()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("port", type=int, nargs="?")
    where.add_argument("--unix")
    where.add_argument("--fcgi")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--key-env")
    parser.add_argument("--echo-peer", action="store_true")
    parser.add_argument("--items", type=int, default=20)
    args = parser.parse_args()
    key = os.environ[args.key_env] if args.key_env else None
    if args.fcgi:
        return serve_fcgi(args.fcgi, key, args.echo_peer, args.items)
    if args.unix:
        server = UnixHTTPServer(args.unix, handler_class(key, args.echo_peer, args.items, tcp=False))
    else:
        server = TcpHTTPServer((args.host, args.port), handler_class(key, args.echo_peer, args.items))
    print(
        f"app_server: {args.unix or f'port {args.port} on {args.host}'}, {args.workers} worker process(es), "
        f"GOMAXPROCS={os.environ.get('GOMAXPROCS')}, pgid {os.getpgid(0)}",
        flush=True,
    )
    children = []
    for _ in range(args.workers):
        pid = os.fork()
        if pid == 0:
            server.serve_forever()
            os._exit(0)
        children.append(pid)
    if not children:
        server.serve_forever()
    for pid in children:
        os.waitpid(pid, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
