"""Plain helpers shared by the test files: paths of the fixtures, tools and free loopback ports.

No test file imports from another test file: what two of them share is here (fixtures are in
conftest.py; tests/README.md lists the other helper modules).
"""

from __future__ import annotations

import os
import random
import shutil
import socket
from pathlib import Path

# --- Paths: the repository and the fixtures ----------------------------------------------------

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
WRK = FIXTURES / "wrk"
CAPTURED = WRK / "captured"
ARTICLE = WRK / "article-2013"
RUNS = FIXTURES / "runs"


# --- Real servers: tools and free loopback ports ---------------------------------------------


def nginx_path() -> str | None:
    """Return nginx's path (Debian puts it in /usr/sbin, often not on a user's PATH)."""
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)


def missing_tools(*names: str) -> list[str]:
    """Return the names of the commands that are not installed."""
    return [name for name in names if not (nginx_path() if name == "nginx" else shutil.which(name))]


def port_is_free(port: int) -> bool:
    """Return True when nothing listens on 127.0.0.1:port."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port_block(names: tuple[str, ...], low: int, high: int, used: set[int] | None = None) -> dict[str, int]:
    """Return consecutive free ports in [low, high) named by names, avoiding (and adding to) used."""
    used = used if used is not None else set()
    for _ in range(200):
        start = random.randrange(low, high - len(names))
        block = range(start, start + len(names))
        if not used.intersection(block) and all(port_is_free(p) for p in block):
            used.update(block)
            return dict(zip(names, block))
    raise RuntimeError(f"no free block of {len(names)} ports in {low}-{high - 1}")
