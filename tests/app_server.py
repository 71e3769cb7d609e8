"""A small HTTP/1.1 JSON service in Python's standard library: the app of tests/test_driver_app.py (run_bench.sh --app).

Not part of the project's Go code, and shaped like a real one: keep-alive HTTP/1.1, a JSON
body computed per request, optional worker processes sharing the listening socket (so the
CPU of a process tree is counted), and an API key it checks (401 without it).

    python3 tests/app_server.py PORT [--workers N] [--key-env NAME] [--echo-peer] [--items N]

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
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def handler_class(key: str | None, echo_peer: bool, items: int = 20):
    """Return the request handler: GET /data.json answers a JSON list; any other path 404."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: without it each answer waits for a delayed ACK
        server_version = "app_server/1"
        sys_version = ""

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if key is not None and self.headers.get("Authorization") != f"Bearer {key}":
                return self.answer(401, {"error": "no key"})
            if self.path.split("?")[0] != "/data.json":
                return self.answer(404, {"error": "not found"})
            listed = [{"id": i, "name": f"item {i}", "square": i * i} for i in range(items)]
            body = {"items": listed, "total": sum(item["square"] for item in listed)}
            if echo_peer:
                body["peer"] = self.client_address[1]
            return self.answer(200, body)

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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--key-env")
    parser.add_argument("--echo-peer", action="store_true")
    parser.add_argument("--items", type=int, default=20)
    args = parser.parse_args()
    ThreadingHTTPServer.daemon_threads = True
    key = os.environ[args.key_env] if args.key_env else None
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler_class(key, args.echo_peer, args.items))
    print(f"app_server: port {args.port}, {args.workers} worker process(es), GOMAXPROCS={os.environ.get('GOMAXPROCS')}, sid {os.getsid(0)}", flush=True)
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
