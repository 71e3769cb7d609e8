"""Real parts for the fixed-rate tests: the pinned vegeta (built once into the user's cache) and gohello on a free loopback port."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers import free_port_block
from wrkreport.bench.vegeta_build import VegetaBuildError, build_vegeta, find_go

ROOT = Path(__file__).resolve().parent.parent


def vegeta_or_skip() -> Path:
    """Return the pinned vegeta, built into ~/.cache/wrkreport on first use (a minute or two; reused after); skip without go."""
    if find_go() is None:
        pytest.skip("needs go to build vegeta")
    try:
        return build_vegeta(say=print)
    except VegetaBuildError as exc:
        pytest.fail(str(exc))


def build_gohello(directory: Path) -> Path:
    """Build src/gohello into directory and return the binary."""
    go = find_go()
    if go is None or not shutil.which("curl"):
        pytest.skip("needs go and curl")
    binary = directory / "gohello"
    subprocess.run([go, "build", "-buildvcs=false", "-o", str(binary), "."], cwd=ROOT / "src" / "gohello", check=True, capture_output=True)
    return binary


@contextmanager
def gohello(binary: Path, *args: str, gomaxprocs: int | None = None):
    """Run gohello on free loopback ports; yield (its URL, its process); stop it after."""
    ports = free_port_block(("http", "fcgi"), 28000, 32000)
    env = {**os.environ, **({"GOMAXPROCS": str(gomaxprocs)} if gomaxprocs else {})}
    proc = subprocess.Popen(
        [str(binary), "-http-port", str(ports["http"]), "-fcgi-port", str(ports["fcgi"]), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    url = f"http://127.0.0.1:{ports['http']}/"
    try:
        deadline = time.monotonic() + 10
        while subprocess.run(["curl", "-s", "-o", "/dev/null", url]).returncode != 0:
            assert time.monotonic() < deadline and proc.poll() is None, "gohello did not start"
            time.sleep(0.1)
        yield url, proc
    finally:
        os.kill(proc.pid, signal.SIGCONT)  # never leave it stopped
        proc.terminate()
        proc.wait(timeout=10)


class Staller:
    """Stop a process with SIGSTOP for stall_s once every period_s (SIGCONT after), from a thread, until stopped."""

    def __init__(self, pid: int, stall_s: float = 0.2, period_s: float = 1.0) -> None:
        self.pid, self.stall_s, self.period_s = pid, stall_s, period_s
        self.done = threading.Event()
        self.stalls: list[float] = []  # each stall's measured length, s
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        """Stall at the end of every period: run period - stall, stopped for stall."""
        while not self.done.wait(self.period_s - self.stall_s):
            began = time.monotonic()
            os.kill(self.pid, signal.SIGSTOP)
            try:
                time.sleep(self.stall_s)
            finally:
                os.kill(self.pid, signal.SIGCONT)
            self.stalls.append(time.monotonic() - began)

    def __enter__(self) -> Staller:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()
        os.kill(self.pid, signal.SIGCONT)
