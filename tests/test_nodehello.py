"""Tests for src/nodehello: a real node process on a free loopback port answers byte for byte
what a real gohello answers (Date value masked), alone and as a cluster, for every kind of
request the load generators send."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from helpers import free_port_block, missing_tools

ROOT = Path(__file__).resolve().parents[1]
SERVER_JS = ROOT / "src" / "nodehello" / "server.js"
DATE_LINE = re.compile(rb"\r\nDate: [A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT\r\n")

pytestmark = pytest.mark.slow

# What curl, wrk, ab -k and ab send, and the two ways a client asks to close.
REQUESTS = {
    "get-1.1": b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n",
    "head-1.1": b"HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n",
    "two-gets-pipelined": b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /other HTTP/1.1\r\nHost: x\r\n\r\n",
    "ab-k-1.0-keep-alive": b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: 127.0.0.1\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n",
    "ab-1.0-close": b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n",
    "head-1.0": b"HEAD / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
    "get-1.1-close": b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
}


def need(*tools: str) -> None:
    """Skip (a failure under CI) when a tool is missing."""
    missing = missing_tools(*tools)
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


@pytest.fixture(scope="module")
def gohello_binary(tmp_path_factory) -> Path:
    """Build the real gohello once; return its path."""
    need("go")
    binary = tmp_path_factory.mktemp("gohello") / "gohello"
    subprocess.run(["go", "build", "-o", str(binary), "."], cwd=ROOT / "src" / "gohello", check=True)
    return binary


def start_go(binary: Path, *args: str) -> tuple[subprocess.Popen, int]:
    """Start gohello with args on free loopback ports; return the process and its HTTP port."""
    ports = free_port_block(("http", "fcgi"), 20000, 25000)
    command = [str(binary), "-http-port", str(ports["http"]), "-fcgi-port", str(ports["fcgi"]), *args]
    return subprocess.Popen(command, stderr=subprocess.PIPE), ports["http"]


@pytest.fixture(scope="module")
def gohello(gohello_binary):
    """Start a real gohello on free loopback ports; yield its HTTP port."""
    yield from serving(*start_go(gohello_binary), b"gohello: ")


def start_node(*args: str) -> tuple[subprocess.Popen, int]:
    """Start nodehello with args on a free loopback port; return the process and the port."""
    need("node")
    address = args[args.index("--address") + 1] if "--address" in args else "127.0.0.1"
    port = free_port_block(("node",), 25000, 30000, address=address)["node"]
    proc = subprocess.Popen(["node", str(SERVER_JS), "--port", str(port), *args], stderr=subprocess.PIPE)
    return proc, port


def serving(proc: subprocess.Popen, port: int, banner: bytes):
    """Yield port once proc's ready line is on stderr; stop proc by its PID afterwards."""
    try:
        line = proc.stderr.readline()
        assert line.startswith(banner) and line.rstrip().endswith(b"ready"), line
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module", params=["single", "cluster-2"])
def nodehello(request):
    """Start a real nodehello, one process or a cluster of 2 workers; yield its port."""
    args = ("--workers", "2") if request.param == "cluster-2" else ()
    proc, port = start_node(*args)
    yield from serving(proc, port, b"nodehello: ")


def exchange(port: int, request: bytes, quiet_s: float = 0.5) -> bytes:
    """Send request on a new connection; return every byte answered, then <closed> or <open>."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        sock.settimeout(quiet_s)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
            return data + b"<closed>"
        except TimeoutError:
            return data + b"<open>"


def masked(response: bytes) -> bytes:
    """Return response with each Date value replaced by one of the same length."""
    found = DATE_LINE.findall(response)
    assert found, f"no Date line in {response!r}"
    return DATE_LINE.sub(b"\r\nDate: Mon, 01 Jan 2000 00:00:00 GMT\r\n", response)


@pytest.mark.parametrize("kind", REQUESTS)
def test_same_bytes_as_gohello(gohello, nodehello, kind):
    go = masked(exchange(gohello, REQUESTS[kind]))
    node = masked(exchange(nodehello, REQUESTS[kind]))
    assert node == go


def test_the_article_sizes(nodehello):
    head = exchange(nodehello, REQUESTS["head-1.1"]).removesuffix(b"<open>")
    get = exchange(nodehello, REQUESTS["get-1.1"]).removesuffix(b"<open>")
    assert len(head) == 141 and len(get) == 153
    assert get.endswith(b"\r\n\r\nHello World\n")
    assert b"Keep-Alive" not in get and b"Transfer-Encoding" not in get


def test_curl_head_block_is_141_bytes(nodehello):
    need("curl")
    out = subprocess.run(["curl", "-sI", f"http://127.0.0.1:{nodehello}/"], capture_output=True, check=True).stdout
    assert len(out) == 141
    assert [line.split(b":")[0] for line in out.split(b"\r\n")[1:-2]] == [
        b"Connection",
        b"Content-Length",
        b"Content-Type",
        b"Server",
        b"Date",
    ]


@pytest.mark.parametrize("body_bytes", ["1", "12", "13", "4096"])
def test_body_bytes_matches_gohello(gohello_binary, body_bytes):
    go_serving = serving(*start_go(gohello_binary, "-body-bytes", body_bytes), b"gohello: ")
    node_serving = serving(*start_node("-body-bytes", body_bytes), b"nodehello: ")
    try:
        go_port, node_port = next(go_serving), next(node_serving)
        for kind in ("get-1.1", "head-1.1"):
            assert masked(exchange(node_port, REQUESTS[kind])) == masked(exchange(go_port, REQUESTS[kind]))
        assert f"Content-Length: {body_bytes}\r\n".encode() in exchange(node_port, REQUESTS["get-1.1"])
    finally:
        go_serving.close()
        node_serving.close()


def test_handler_delay_is_waited():
    proc, port = start_node("-handler-delay", "300ms")
    with_delay = serving(proc, port, b"nodehello: ")
    try:
        next(with_delay)
        started = time.monotonic()
        response = exchange(port, REQUESTS["get-1.1"], quiet_s=2)
        waited = time.monotonic() - started
        assert response.endswith(b"Hello World\n<open>")
        assert waited >= 0.3  # a lower bound only: the sleep happened
    finally:
        with_delay.close()


def test_cluster_runs_n_workers_and_stops_them():
    proc, port = start_node("--workers", "3")
    running = serving(proc, port, b"nodehello: ")
    next(running)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    assert len(children) == 3
    running.close()
    assert proc.returncode == 0
    for pid in children:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "70000"], b'nodehello: -port "70000" out of range 0-65535\n'),
        (["--workers", "0"], b'nodehello: -workers "0" out of range 1-9999\n'),
        (["-body-bytes", "0"], b'nodehello: -body-bytes "0" out of range 1-1048576\n'),
        (["-handler-delay", "1 ms"], b'nodehello: -handler-delay "1 ms" is not a duration like 1ms or 500us\n'),
        (["--listen", "0.0.0.0"], b'nodehello: unexpected argument "--listen"\n'),
        (["--address", "0.0.0.0"], b'nodehello: -address "0.0.0.0" is not one IP address (never 0.0.0.0 or ::)\n'),
        (["--address", "::"], b'nodehello: -address "::" is not one IP address (never 0.0.0.0 or ::)\n'),
        (["--address", "localhost"], b'nodehello: -address "localhost" is not one IP address (never 0.0.0.0 or ::)\n'),
    ],
)
def test_bad_arguments_exit_2(args, message):
    need("node")
    done = subprocess.run(["node", str(SERVER_JS), *args], capture_output=True, timeout=30)
    assert (done.returncode, done.stderr) == (2, message)


def test_help_and_syntax():
    need("node")
    assert subprocess.run(["node", "--check", str(SERVER_JS)], capture_output=True).returncode == 0
    done = subprocess.run(["node", str(SERVER_JS), "--help"], capture_output=True, timeout=30)
    assert done.returncode == 0 and done.stdout.startswith(b"Usage: node server.js")


@pytest.mark.parametrize(("args", "address"), [((), "0100007F"), (("--address", "127.0.0.2"), "0200007F")])
def test_binds_loopback_only_or_the_one_address_given(args, address):
    proc, port = start_node(*args)
    running = serving(proc, port, b"nodehello: ")
    try:
        next(running)
        listening = [line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:]]
        local = [row[1] for row in listening if row[3] == "0A" and int(row[1].split(":")[1], 16) == port]
        assert local == [f"{address}:{port:04X}"]
    finally:
        running.close()


def test_no_npm_dependencies():
    import json

    package = json.loads((SERVER_JS.parent / "package.json").read_text())
    assert not package.get("dependencies") and not package.get("devDependencies")
    requires = set(re.findall(r"require\('([^']+)'\)", SERVER_JS.read_text()))
    assert requires == {"node:cluster", "node:http", "node:net"}  # Node's own modules only (net: --address is an IP)


def test_a_worker_dying_stops_the_cluster_with_exit_1():
    proc, port = start_node("--workers", "2")
    running = serving(proc, port, b"nodehello: ")
    try:
        next(running)
        first, second = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        subprocess.run(["kill", "-9", first], check=True)
        assert proc.wait(timeout=20) == 1
        assert b"exited (SIGKILL); stopping" in proc.stderr.read()
        assert not Path(f"/proc/{second}").exists() or "Z" in Path(f"/proc/{second}/stat").read_text().split()[2]
    finally:
        running.close()
