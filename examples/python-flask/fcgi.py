"""The Flask app of app.py as a FastCGI server (flup's threaded WSGIServer): an example for `run_bench.sh --app-fcgi`.

    python3 fcgi.py 127.0.0.1:PORT   FastCGI on a TCP port ({port}: nginx-app-fcgi-tcp)
    python3 fcgi.py PATH             FastCGI on a Unix socket ({socket}: nginx-app-fcgi-unix)

One process with a thread per connection, unlike gunicorn's worker processes: compare it with
nginx-app-unix or nginx-app knowing that.
"""

from __future__ import annotations

import sys

from flup.server.fcgi import WSGIServer

from app import app


def main() -> int:
    where = sys.argv[1]
    host, _, port = where.rpartition(":")
    address = (host, int(port)) if port.isdigit() and host else where
    print(f"flup FastCGI on {where}", flush=True)
    WSGIServer(app, bindAddress=address, umask=0o077).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
