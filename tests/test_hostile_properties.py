"""Property test for hostile run directories (issue 14): a real fixture run, mutated as an attacker or a
careless copy would (bad manifest and cpu.json values, broken wrk lines, symlinks out, FIFOs, odd
names), still builds without hanging, with exit 0, 1 or 2, no traceback, and shows nothing from outside."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from helpers import FIXTURES
from properties import examples
from wrkreport.cli import cli
from wrkreport.core.errors import WrkreportError

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # builds a copy of one fixture run per example

SOURCE = FIXTURES / "runs" / "pinned-quick"  # the smallest real run: 2 setups, CPU records, manifest
SECRET = "SECRET-b41d-never-in-any-output"
HUGE_INT = "9" * 5000
ODD_VALUES = [
    float("nan"),
    float("inf"),
    -float("inf"),
    1e308,
    -1,
    0,
    2**70,
    HUGE_INT,
    "x",
    "\x1b[31m\x00\r\n",
    "",
    [],
    {},
    ["x"],
    {"a": {"b": None}},
    None,
    True,
    "$\\frac{$",
    "0-100000000",
    "javascript:alert(1)",
    "../../etc/passwd",
    "\udcff",
    "a\ud800b",
    "x" * 300,
    "/etc/passwd",
    ".",
]
MANIFEST_PATHS = [
    ("ulimit_n",),
    ("machine",),
    ("versions",),
    ("status",),
    ("reason",),
    ("command",),
    ("parameters",),
    ("passes",),
    ("measurements",),
    ("sysctl",),
    ("nginx_V",),
    ("parameters", "handler_delay_ms"),
    ("parameters", "expect_header_bytes"),
    ("parameters", "body_bytes"),
    ("parameters", "setups"),
    ("parameters", "gomaxprocs"),
    ("parameters", "pin_client"),
    ("parameters", "connections_levels"),
    ("parameters", "upstream_keepalive"),
    ("machine", "cpu_model"),
    ("machine", "logical_cores"),
    ("versions", "nginx"),
    ("passes", 0),
    ("passes", 0, "gomaxprocs"),
    ("passes", 0, "cells"),
    ("passes", 0, "cells", "go-http"),
    ("passes", 0, "cells", "go-http", "ready"),
    ("passes", 0, "cells", "go-http", "error"),
    ("measurements", 0),
    ("measurements", 0, "file"),
    ("measurements", 0, "repeat"),
    ("measurements", 0, "setup"),
    ("measurements", 0, "exit_code"),
    ("measurements", 0, "command"),
]
CPU_PATHS = [
    ("wall_s",),
    ("logical_cores",),
    ("processes",),
    ("pinning",),
    ("pinning", "client"),
    ("pinning", "server"),
    ("processes", "go"),
    ("processes", "go", "user_s"),
    ("processes", "wrk", "system_s"),
    ("processes", "nginx"),
]
WRK_LINES = [
    "  0 threads and 100 connections",
    "  -13.93MB read",
    "  186109 requests in 3.10s, -13.93MB read",
    "Requests/sec: -72748.10",
    "Requests/sec: nan",
    "Requests/sec: inf",
    "  Socket errors: connect 0, read -5, write 0, timeout 0",
    "  Non-2xx or 3xx responses: -7",
    "    Latency   -1.00ms  117.48us   4.33ms   98.47%",
    "     50%  -326.00us",
    "\u200b",
    "",
    "\x00",
    "Running 1s test @ http://127.0.0.1:1/",
    "  99999999999999999999 threads and 1 connections",
]
ODD_NAMES = [
    "go-http.gomaxprocs-1.run-01.wrk.txt",
    "nginx-http.gomaxprocs-1.run-1.wrk.txt.wrk.txt",
    "javascript:alert(document.domain);x.wrk.txt",
    "go-http.gomaxprocs-9999.c9999999.run-9999.wrk.txt",
    "$\\frac{$.gomaxprocs-1.run-1.wrk.txt",
    "a\nb.wrk.txt",
    "go-http.gomaxprocs-1.run-1.cpu.json.wrk.txt",
    "go-http.gomaxprocs-2.headers.txt",
    "-rf.wrk.txt",
    " .wrk.txt",
]
FILES = [
    "manifest.json",
    "go-http.gomaxprocs-1.run-1.wrk.txt",
    "go-http.gomaxprocs-1.run-1.cpu.json",
    "go-http.gomaxprocs-1.headers.txt",
    "nginx-http.gomaxprocs-1.run-1.wrk.txt",
    "nginx-http.gomaxprocs-1.run-1.cpu.json",
]

MUTATION = st.one_of(
    st.tuples(st.just("manifest"), st.sampled_from(MANIFEST_PATHS), st.sampled_from(range(len(ODD_VALUES)))),
    st.tuples(st.just("cpu"), st.sampled_from(CPU_PATHS), st.sampled_from(range(len(ODD_VALUES)))),
    st.tuples(st.just("wrk-line"), st.integers(0, 30), st.sampled_from(WRK_LINES)),
    st.tuples(st.just("wrk-text"), st.integers(0, 30), st.text(max_size=40)),
    st.tuples(st.just("truncate"), st.sampled_from(FILES), st.integers(0, 2000)),
    st.tuples(st.just("kind"), st.sampled_from(FILES), st.sampled_from(["secret", "fifo", "dir", "dangling", "loop", "secret-dir"])),
    st.tuples(st.just("name"), st.sampled_from(ODD_NAMES), st.sampled_from(FILES[1:])),
)


def set_path(data, path: tuple, value) -> None:
    """Set data[path...] = value where the path exists (a missing step leaves data as it is)."""
    for step in path[:-1]:
        try:
            data = data[step]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(data, dict) or (isinstance(data, list) and isinstance(path[-1], int) and path[-1] < len(data)):
        data[path[-1]] = value


def write_json_with(path: Path, key_path: tuple, value) -> None:
    """Rewrite a JSON file with one value replaced (a raw 5,000-digit integer when value is HUGE_INT)."""
    if not path.is_file() or path.is_symlink():
        return
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return
    set_path(data, key_path, "@@odd@@" if value == HUGE_INT else value)
    path.write_text(json.dumps(data).replace('"@@odd@@"', HUGE_INT))


def replace_file(target: Path, kind: str, secret: Path, outside: Path) -> None:
    """Replace target by a symlink out, a FIFO, a directory, a dangling or looping symlink."""
    if target.is_dir() and not target.is_symlink():
        return
    if os.path.lexists(target):
        target.unlink()
    if kind == "secret":
        target.symlink_to(secret)
    elif kind == "secret-dir":
        target.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "dir":
        target.mkdir()
    elif kind == "dangling":
        target.symlink_to(target.parent / "no-such-file")
    else:
        target.symlink_to(target.name)


def mutate(run: Path, mutation: tuple, secret: Path, outside: Path) -> None:
    """Apply one mutation to the run directory."""
    kind, where, what = mutation
    wrk = run / "go-http.gomaxprocs-1.run-1.wrk.txt"
    if kind == "manifest":
        write_json_with(run / "manifest.json", where, ODD_VALUES[what])
    elif kind == "cpu":
        write_json_with(run / "go-http.gomaxprocs-1.run-1.cpu.json", where, ODD_VALUES[what])
    elif kind in ("wrk-line", "wrk-text") and wrk.is_file() and not wrk.is_symlink():
        lines = wrk.read_text(errors="replace").splitlines()
        if lines:
            lines[where % len(lines)] = what
            wrk.write_text("\n".join(lines) + "\n")
    elif kind == "truncate" and (run / where).is_file() and not (run / where).is_symlink():
        data = (run / where).read_bytes()
        (run / where).write_bytes(data[: what % (len(data) + 1)])
    elif kind == "kind":
        replace_file(run / where, what, secret, outside)
    elif kind == "name" and (run / what).is_file() and not (run / what).is_symlink():
        shutil.copyfile(run / what, run / where)


def on_alarm(signum, frame):
    """Fail an example that runs past its alarm."""
    raise TimeoutError("wrkreport build took more than 60 s on a mutated run: it hangs")


@settings(max_examples=examples(16), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MUTATION, min_size=1, max_size=4))
@example([("manifest", ("measurements", 0, "file"), 9)])  # a NUL in a file name: ValueError from realpath (issue 29)
@example([("manifest", ("measurements", 0, "file"), ODD_VALUES.index("\udcff"))])  # a lone surrogate: UnicodeEncodeError
@example([("manifest", ("command",), ODD_VALUES.index("a\ud800b"))])  # a lone surrogate shown on the page
def test_mutated_run_builds_safely(mutations):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        secret = tmp / "secret.txt"
        secret.write_text(f"HTTP/1.1 200 OK\r\nX: {SECRET}\r\n\r\n")
        outside = tmp / "outside"
        outside.mkdir()
        (outside / "x.wrk.txt").write_text(SECRET)
        run = Path(shutil.copytree(SOURCE, tmp / "raw" / "20261123T001934Z"))
        for mutation in mutations:
            mutate(run, mutation, secret, outside)
        out = tmp / "out"
        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(60)  # a hang guard (a FIFO read blocking, a CPU list expanded), not a timing
        try:
            result = CliRunner().invoke(cli, ["build", str(run), "--out", str(out)], standalone_mode=False)
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        if result.exception is not None:
            assert isinstance(result.exception, WrkreportError), f"{mutations}: {result.exception!r}"
            status = result.exception.exit_code
            texts = result.stdout + result.stderr + result.exception.message()
        else:
            status = result.return_value
            texts = result.stdout + result.stderr
        assert status in (0, 1, 2), mutations
        if out.is_dir():
            texts += "".join(p.read_text(errors="replace") for p in out.iterdir() if p.is_file())
        assert SECRET not in texts, mutations
        assert "Traceback" not in texts
